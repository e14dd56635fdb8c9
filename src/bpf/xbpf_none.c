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

int xbpf_rqlat_open(struct xbpf_rqlat **out, char *err, size_t errlen)
{
	(void)out;
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
