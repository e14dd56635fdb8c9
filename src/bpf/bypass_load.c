/*
 * Loader of the bypass detector (bypass.bpf.c) through its libbpf
 * skeleton. Device-node opens are seen by fexit on vfs_open() where the
 * kernel lets tracing programs attach (BPF trampolines), which costs only
 * the opens; elsewhere (kernels without trampolines, such as those built
 * without function tracing for BPF) by the exit of every system call,
 * filtered in a few instructions to the open calls: the loader tries the
 * first and falls back to the second, and says which it got.
 *
 * Uprobes go on each library's context-creating functions, one attach per
 * function with a cookie naming the library and function, so one program
 * serves them all.
 */
#include "bpf/xbpf.h"
#include "bypass.skel.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct xbpf_use_event) == 88, "xbpf ABI");

#define XBPF_MAX_PROBES 32

struct xbpf_probe {
	struct bpf_link *link;
	char what[64];                     /* "libcuda.so.1:cuCtxCreate_v2" */
};

struct xbpf_bypass {
	struct bypass_bpf *skel;
	struct ring_buffer *rb;
	xbpf_use_fn fn;
	void *arg;
	const char *hook;
	struct bpf_link *open_link, *exit_link;
	struct xbpf_probe probe[XBPF_MAX_PROBES];
	unsigned nprobes;
};

/* The context-creating functions of each API's library. */
static const struct xbpf_api {
	const char *prefix;                /* of the file name */
	unsigned bit;                      /* enum xbpf_use bit number */
	const char *const *funcs;
} xbpf_apis[] = {
	{ "libcuda.so", 8, (const char *const[]){ "cuInit", "cuCtxCreate_v2", "cuCtxCreate_v3",
		"cuCtxCreate_v4", "cuDevicePrimaryCtxRetain", NULL } },
	{ "libOpenCL.so", 9, (const char *const[]){ "clCreateContext",
		"clCreateContextFromType", NULL } },
	{ "libze_loader.so", 10, (const char *const[]){ "zeInit", "zeContextCreate", NULL } },
};

_Static_assert(XBPF_USE_CUDA == 1u << 8 && XBPF_USE_OPENCL == 1u << 9 &&
	       XBPF_USE_LEVELZERO == 1u << 10, "xbpf_apis bits");

static void (*xbpf_log)(const char *fmt, va_list ap);
static int xbpf_log_debug;
bool xbpf_quiet;                           /* xbpf.h */

static int xbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!xbpf_log || xbpf_quiet || (level == LIBBPF_DEBUG && !xbpf_log_debug))
		return 0;
	xbpf_log(fmt, ap);
	return 0;
}

void xbpf_set_log(void (*fn)(const char *fmt, va_list ap), int debug)
{
	xbpf_log = fn;
	xbpf_log_debug = debug;
	libbpf_set_print(xbpf_print);
}

static int xbpf_on_event(void *ctx, void *data, size_t len)
{
	struct xbpf_bypass *b = ctx;
	const struct xbpf_use_event *e = data;
	char what[64];

	if (len < sizeof(*e))
		return 0;
	what[0] = '\0';
	if (e->type == XBPF_EV_USE && (e->use & XBPF_USE_DEVICES))
		snprintf(what, sizeof(what), "%.*s", (int)sizeof(e->name), e->name);
	else if (e->type == XBPF_EV_USE && e->attach < b->nprobes)
		snprintf(what, sizeof(what), "%s", b->probe[e->attach].what);
	b->fn(b->arg, e, what);
	return 0;
}

/* Opens and loads the skeleton with one of the two open hooks. */
static struct bypass_bpf *xbpf_load(bool fexit, int *rc)
{
	struct bypass_bpf *s = bypass_bpf__open();

	if (!s) {
		*rc = -errno;
		return NULL;
	}
	bpf_program__set_autoload(fexit ? s->progs.xbpf_sys_exit : s->progs.xbpf_vfs_open, false);
	*rc = bypass_bpf__load(s);
	if (*rc) {
		bypass_bpf__destroy(s);
		return NULL;
	}
	return s;
}

static void xbpf_note(char *note, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void xbpf_note(char *note, size_t len, const char *fmt, ...)
{
	size_t used = strlen(note);
	va_list ap;

	if (used + 2 >= len)
		return;
	if (used)
		note[used++] = '\n';
	va_start(ap, fmt);
	vsnprintf(note + used, len - used, fmt, ap);
	va_end(ap);
}

/* Attaches the uprobes of one library; how many attached. */
static unsigned xbpf_attach_lib(struct xbpf_bypass *b, const char *path, char *note,
				size_t notelen)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const struct xbpf_api *api = NULL;
	unsigned i, n = 0;

	for (i = 0; i < sizeof(xbpf_apis) / sizeof(xbpf_apis[0]); i++)
		if (!strncmp(base, xbpf_apis[i].prefix, strlen(xbpf_apis[i].prefix)))
			api = &xbpf_apis[i];
	if (!api) {
		xbpf_note(note, notelen, "%s: not a library of a known API (libcuda.so*, "
			  "libOpenCL.so*, libze_loader.so*)", path);
		return 0;
	}
	for (i = 0; api->funcs[i] && b->nprobes < XBPF_MAX_PROBES; i++) {
		struct xbpf_probe *p = &b->probe[b->nprobes];
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = api->funcs[i],
			    .bpf_cookie = XBPF_COOKIE(api->bit, b->nprobes));

		p->link = bpf_program__attach_uprobe_opts(b->skel->progs.xbpf_ctx_create, -1,
							  path, 0, &o);
		if (!p->link)
			continue;          /* this version lacks the function */
		snprintf(p->what, sizeof(p->what), "%s:%s", base, api->funcs[i]);
		b->nprobes++;
		n++;
	}
	if (!n)
		xbpf_note(note, notelen, "%s: none of its context functions could be probed",
			  path);
	return n;
}

int xbpf_bypass_open(const char *const *libs, size_t nlibs, xbpf_use_fn fn, void *arg,
		     struct xbpf_bypass **out, char *err, size_t errlen,
		     char *note, size_t notelen)
{
	struct xbpf_bypass *b = calloc(1, sizeof(*b));
	struct bpf_program *open_prog;
	size_t i;
	int rc;

	if (notelen)
		note[0] = '\0';
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->fn = fn;
	b->arg = arg;
	b->hook = "fexit/vfs_open";
	/* Kernels without BPF trampolines refuse fexit: not worth a warning. */
	xbpf_quiet = true;
	b->skel = xbpf_load(true, &rc);
	xbpf_quiet = false;
	if (!b->skel) {
		b->hook = "tp_btf/sys_exit";
		b->skel = xbpf_load(false, &rc);
	}
	if (!b->skel) {
		snprintf(err, errlen, "cannot load the eBPF programs: %s%s", strerror(-rc),
			 rc == -EPERM ? " (needs root, or CAP_BPF, CAP_PERFMON and "
			 "CAP_SYS_ADMIN, and a kernel with BTF)" : "");
		goto fail;
	}
	open_prog = b->hook[0] == 'f' ? b->skel->progs.xbpf_vfs_open : b->skel->progs.xbpf_sys_exit;
	b->open_link = bpf_program__attach(open_prog);
	if (!b->open_link) {
		rc = -errno;
		snprintf(err, errlen, "cannot attach %s: %s", b->hook, strerror(-rc));
		goto fail;
	}
	b->exit_link = bpf_program__attach(b->skel->progs.xbpf_exit);
	if (!b->exit_link) {
		rc = -errno;
		snprintf(err, errlen, "cannot attach tp_btf/sched_process_exit: %s",
			 strerror(-rc));
		goto fail;
	}
	for (i = 0; i < nlibs; i++)
		xbpf_attach_lib(b, libs[i], note, notelen);
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), xbpf_on_event, b, NULL);
	if (!b->rb) {
		rc = -errno;
		snprintf(err, errlen, "cannot map the ring buffer: %s", strerror(-rc));
		goto fail;
	}
	*out = b;
	return 0;
fail:
	xbpf_bypass_close(b);
	return rc < 0 ? rc : -EINVAL;
}

int xbpf_bypass_fd(const struct xbpf_bypass *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int xbpf_bypass_poll(struct xbpf_bypass *b)
{
	return ring_buffer__consume(b->rb);
}

uint64_t xbpf_bypass_lost(const struct xbpf_bypass *b)
{
	return b->skel->bss->lost;
}

const char *xbpf_bypass_hook(const struct xbpf_bypass *b)
{
	return b->hook;
}

unsigned xbpf_bypass_uprobes(const struct xbpf_bypass *b)
{
	return b->nprobes;
}

void xbpf_bypass_close(struct xbpf_bypass *b)
{
	unsigned i;

	if (!b)
		return;
	ring_buffer__free(b->rb);
	for (i = 0; i < b->nprobes; i++)
		bpf_link__destroy(b->probe[i].link);
	bpf_link__destroy(b->open_link);
	bpf_link__destroy(b->exit_link);
	bypass_bpf__destroy(b->skel);
	free(b);
}
