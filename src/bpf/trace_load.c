/*
 * Loader of `xschedctl trace` (trace.bpf.c): finds the objects of a
 * process that carry the xsched USDT probes and attaches every probe
 * program to each. Candidates are the process's executable (a program
 * linking the XQueue statically, such as xs_load) and every mapped file
 * whose name holds "xsched" (libxsched.so, the shims); an object without
 * the probes is skipped. Paths are those /proc/PID/maps names (libbpf
 * reads each object's notes and attaches by inode for that process only).
 */
#include "bpf/xbpf.h"
#include "trace.skel.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(struct xbpf_trace_event) == 40, "xbpf ABI");

#define XBPF_TRACE_LINKS 96

struct xbpf_trace {
	struct trace_bpf *skel;
	struct ring_buffer *rb;
	xbpf_trace_fn fn;
	void *arg;
	struct bpf_link *link[XBPF_TRACE_LINKS];
	unsigned nlinks;
	char objects[1024];
};

static int xbpf_trace_event(void *ctx, void *data, size_t len)
{
	struct xbpf_trace *t = ctx;

	if (len >= sizeof(struct xbpf_trace_event))
		t->fn(t->arg, data);
	return 0;
}

/* Attaches every probe to @path in @pid; how many attached. */
static unsigned xbpf_attach_object(struct xbpf_trace *t, int32_t pid, const char *path)
{
	const struct { struct bpf_program *prog; const char *name; } probes[] = {
		{ t->skel->progs.xbpf_submit, "submit" },
		{ t->skel->progs.xbpf_launch, "launch" },
		{ t->skel->progs.xbpf_complete, "complete" },
		{ t->skel->progs.xbpf_suspend, "suspend" },
		{ t->skel->progs.xbpf_resume, "resume" },
		{ t->skel->progs.xbpf_preempt_done, "preempt_done" },
	};
	unsigned i, n = 0;

	for (i = 0; i < sizeof(probes) / sizeof(probes[0]) && t->nlinks < XBPF_TRACE_LINKS; i++) {
		struct bpf_link *l = bpf_program__attach_usdt(probes[i].prog, pid, path, "xsched",
							       probes[i].name, NULL);

		if (!l)
			continue;
		t->link[t->nlinks++] = l;
		n++;
	}
	if (n) {
		size_t used = strlen(t->objects);

		snprintf(t->objects + used, sizeof(t->objects) - used, "%s%s", used ? "\n" : "",
			 path);
	}
	return n;
}

/* True if @path starts like an ELF file (mapped files include shared memory). */
static bool xbpf_is_elf(const char *path)
{
	char magic[4] = { 0 };
	FILE *f = fopen(path, "re");
	bool elf;

	if (!f)
		return false;
	elf = fread(magic, 1, 4, f) == 4 && !memcmp(magic, "\177ELF", 4);
	fclose(f);
	return elf;
}

/* The candidate objects of @pid: its executable, then mapped files named *xsched*. */
static int xbpf_attach_process(struct xbpf_trace *t, int32_t pid)
{
	char path[64], line[PATH_MAX + 128], exe[PATH_MAX], seen[8][PATH_MAX];
	unsigned nseen = 0, n = 0, i;
	ssize_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	exe[len] = '\0';
	n += xbpf_attach_object(t, pid, exe);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		const char *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/') + 1;
		if (!strstr(base, "xsched") || !strcmp(file, exe) || !xbpf_is_elf(file))
			continue;
		for (i = 0; i < nseen && strcmp(seen[i], file); i++)
			;
		if (i < nseen || nseen == 8)
			continue;
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", file);
		n += xbpf_attach_object(t, pid, file);
	}
	fclose(f);
	return (int)n;
}

int xbpf_trace_open(int32_t pid, uint32_t queue, xbpf_trace_fn fn, void *arg,
		    struct xbpf_trace **out, char *err, size_t errlen)
{
	struct xbpf_trace *t = calloc(1, sizeof(*t));
	int rc;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->fn = fn;
	t->arg = arg;
	t->skel = trace_bpf__open();
	if (!t->skel) {
		rc = -errno;
		snprintf(err, errlen, "cannot open the eBPF programs: %s", strerror(-rc));
		goto fail;
	}
	t->skel->rodata->only_queue = queue;
	rc = trace_bpf__load(t->skel);
	if (rc) {
		snprintf(err, errlen, "cannot load the eBPF programs: %s%s", strerror(-rc),
			 rc == -EPERM ? " (needs root, or CAP_BPF, CAP_PERFMON and "
			 "CAP_SYS_ADMIN)" : "");
		goto fail;
	}
	rc = xbpf_attach_process(t, pid);
	if (rc == 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "process %d has no xsched USDT probes (not an xsched "
			 "process, or built without them)", (int)pid);
		goto fail;
	}
	if (rc < 0) {
		snprintf(err, errlen, "process %d: %s", (int)pid,
			 rc == -ESRCH ? "no such process" : strerror(-rc));
		goto fail;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), xbpf_trace_event, t, NULL);
	if (!t->rb) {
		rc = -errno;
		snprintf(err, errlen, "cannot map the ring buffer: %s", strerror(-rc));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	xbpf_trace_close(t);
	return rc < 0 ? rc : -EINVAL;
}

int xbpf_trace_fd(const struct xbpf_trace *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

int xbpf_trace_poll(struct xbpf_trace *t, int timeout_ms)
{
	return ring_buffer__poll(t->rb, timeout_ms);
}

uint64_t xbpf_trace_lost(const struct xbpf_trace *t)
{
	return t->skel->bss->lost;
}

const char *xbpf_trace_objects(const struct xbpf_trace *t)
{
	return t->objects;
}

void xbpf_trace_close(struct xbpf_trace *t)
{
	unsigned i;

	if (!t)
		return;
	ring_buffer__free(t->rb);
	for (i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->link[i]);
	trace_bpf__destroy(t->skel);
	free(t);
}
