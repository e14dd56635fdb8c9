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
