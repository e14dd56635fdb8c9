/*
 * The eBPF tools in a build without them (XSCHED_WITH_BPF off): every
 * open says so with -EOPNOTSUPP, so that the daemon and xschedctl build
 * and run the same everywhere and report it at run time.
 */
#include "bpf/xbpf.h"

#include <errno.h>
#include <stdio.h>

#define XBPF_NONE "xsched was built without eBPF support (XSCHED_WITH_BPF: clang, bpftool, " \
	"libbpf-dev)"

void xbpf_set_log(void (*fn)(const char *fmt, va_list ap), int debug)
{
	(void)fn;
	(void)debug;
}

int xbpf_bypass_open(const char *const *libs, size_t nlibs, xbpf_use_fn fn, void *arg,
		     struct xbpf_bypass **out, char *err, size_t errlen,
		     char *note, size_t notelen)
{
	(void)libs, (void)nlibs, (void)fn, (void)arg, (void)out;
	if (notelen)
		note[0] = '\0';
	snprintf(err, errlen, "%s", XBPF_NONE);
	return -EOPNOTSUPP;
}

int xbpf_bypass_fd(const struct xbpf_bypass *b)
{
	(void)b;
	return -1;
}

int xbpf_bypass_poll(struct xbpf_bypass *b)
{
	(void)b;
	return 0;
}

uint64_t xbpf_bypass_lost(const struct xbpf_bypass *b)
{
	(void)b;
	return 0;
}

const char *xbpf_bypass_hook(const struct xbpf_bypass *b)
{
	(void)b;
	return "";
}

unsigned xbpf_bypass_uprobes(const struct xbpf_bypass *b)
{
	(void)b;
	return 0;
}

void xbpf_bypass_close(struct xbpf_bypass *b)
{
	(void)b;
}

int xbpf_rqlat_open(struct xbpf_rqlat **out, const struct xbpf_rqlat_opts *o, char *err,
		    size_t errlen)
{
	(void)out, (void)o;
	snprintf(err, errlen, "%s", XBPF_NONE);
	return -EOPNOTSUPP;
}

int xbpf_rqlat_watch(struct xbpf_rqlat *r, int32_t pid)
{
	(void)r, (void)pid;
	return -EOPNOTSUPP;
}

void xbpf_rqlat_unwatch(struct xbpf_rqlat *r, int32_t pid)
{
	(void)r, (void)pid;
}

int xbpf_rqlat_read(const struct xbpf_rqlat *r, int32_t pid, struct xbpf_rq_hist *out)
{
	(void)r, (void)pid, (void)out;
	return -EOPNOTSUPP;
}

const struct xbpf_heat_win *xbpf_rqlat_heat(const struct xbpf_rqlat *r, unsigned *ncpus)
{
	(void)r;
	*ncpus = 0;
	return NULL;
}

void xbpf_rqlat_drain(struct xbpf_rqlat *r, uint64_t before,
		      void (*fn)(void *arg, const struct xbpf_heat_pkey *k,
				 const struct xbpf_heat_pwin *w),
		      void *arg)
{
	(void)r, (void)before, (void)fn, (void)arg;
}

void xbpf_rqlat_close(struct xbpf_rqlat *r)
{
	(void)r;
}

int xbpf_trace_open(int32_t pid, uint32_t queue, xbpf_trace_fn fn, void *arg,
		    struct xbpf_trace **out, char *err, size_t errlen)
{
	(void)pid, (void)queue, (void)fn, (void)arg, (void)out;
	snprintf(err, errlen, "%s", XBPF_NONE);
	return -EOPNOTSUPP;
}

int xbpf_trace_fd(const struct xbpf_trace *t)
{
	(void)t;
	return -1;
}

int xbpf_trace_poll(struct xbpf_trace *t, int timeout_ms)
{
	(void)t, (void)timeout_ms;
	return 0;
}

uint64_t xbpf_trace_lost(const struct xbpf_trace *t)
{
	(void)t;
	return 0;
}

const char *xbpf_trace_objects(const struct xbpf_trace *t)
{
	(void)t;
	return "";
}

void xbpf_trace_close(struct xbpf_trace *t)
{
	(void)t;
}

bool xbpf_quiet;

int xbpf_gate_open(const char *pin_dir, bool pin_gate, const char *cgroup_root,
		   xbpf_gate_fn fn, void *arg, struct xbpf_gate **out, char *err, size_t errlen)
{
	(void)pin_dir, (void)pin_gate, (void)cgroup_root, (void)fn, (void)arg, (void)out;
	snprintf(err, errlen, "%s", XBPF_NONE);
	return -EOPNOTSUPP;
}

/* Nothing below is reached without a gate: xbpf_gate_open() never made one. */
int xbpf_gate_set_pinned(struct xbpf_gate *g, bool pin_gate)
{
	(void)g, (void)pin_gate;
	return -EOPNOTSUPP;
}

const char *xbpf_gate_hook(const struct xbpf_gate *g)
{
	(void)g;
	return "";
}

int xbpf_gate_lsm_error(const struct xbpf_gate *g)
{
	(void)g;
	return -EOPNOTSUPP;
}

int xbpf_gate_fd(const struct xbpf_gate *g)
{
	(void)g;
	return -1;
}

int xbpf_gate_poll(struct xbpf_gate *g)
{
	(void)g;
	return 0;
}

uint64_t xbpf_gate_lost(const struct xbpf_gate *g)
{
	(void)g;
	return 0;
}

int xbpf_gate_set_conf(struct xbpf_gate *g, const struct xbpf_gate_conf *c)
{
	(void)g, (void)c;
	return -EOPNOTSUPP;
}

int xbpf_gate_set_devices(struct xbpf_gate *g, const uint64_t *keys, size_t n)
{
	(void)g, (void)keys, (void)n;
	return -EOPNOTSUPP;
}

int xbpf_gate_set_cgroups(struct xbpf_gate *g, const uint64_t *ids, const uint32_t *kinds,
			  size_t n)
{
	(void)g, (void)ids, (void)kinds, (void)n;
	return -EOPNOTSUPP;
}

int xbpf_gate_set_exes(struct xbpf_gate *g, const struct xbpf_gate_exe *exes, size_t n)
{
	(void)g, (void)exes, (void)n;
	return -EOPNOTSUPP;
}

int xbpf_gate_allow(struct xbpf_gate *g, uint32_t tgid, uint64_t ticks)
{
	(void)g, (void)tgid, (void)ticks;
	return -EOPNOTSUPP;
}

bool xbpf_gate_allowed(const struct xbpf_gate *g, uint32_t tgid, uint64_t ticks)
{
	(void)g, (void)tgid, (void)ticks;
	return false;
}

size_t xbpf_gate_sweep(struct xbpf_gate *g, bool (*alive)(uint32_t tgid, uint64_t ticks),
		       size_t *left)
{
	(void)g, (void)alive;
	if (left)
		*left = 0;
	return 0;
}

int xbpf_gate_counts(const struct xbpf_gate *g, xbpf_gate_count_fn fn, void *arg)
{
	(void)g, (void)fn, (void)arg;
	return 0;
}

void xbpf_gate_close(struct xbpf_gate *g)
{
	(void)g;
}

int xbpf_gate_remove(const char *pin_dir)
{
	(void)pin_dir;
	return 0;
}
