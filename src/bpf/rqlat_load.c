/*
 * Loader of the run-queue latency programs (rqlat.bpf.c) and the reading
 * of their per-process histograms. The watched set is a map the programs
 * consult, so watching a process costs one map update and nothing is
 * re-attached. xbpf_rq_quantile() is here rather than in the daemon so
 * that tools and benchmarks read the histograms the same way.
 */
#include "bpf/xbpf.h"
#include "rqlat.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xbpf_rqlat {
	struct rqlat_bpf *skel;
};

int xbpf_rqlat_open(struct xbpf_rqlat **out, char *err, size_t errlen)
{
	struct xbpf_rqlat *r = calloc(1, sizeof(*r));
	int rc;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->skel = rqlat_bpf__open_and_load();
	if (!r->skel) {
		rc = -errno;
		snprintf(err, errlen, "cannot load the eBPF programs: %s%s", strerror(-rc),
			 rc == -EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON, and a "
			 "kernel with BTF)" : "");
		free(r);
		return rc;
	}
	rc = rqlat_bpf__attach(r->skel);
	if (rc) {
		snprintf(err, errlen, "cannot attach the sched tracepoints: %s", strerror(-rc));
		rqlat_bpf__destroy(r->skel);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int xbpf_rqlat_watch(struct xbpf_rqlat *r, int32_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	bpf_map_delete_elem(bpf_map__fd(r->skel->maps.hists), &key);
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.watch), &key, &one, BPF_ANY) < 0)
		return errno == ENOSPC ? -E2BIG : -errno;
	return 0;
}

void xbpf_rqlat_unwatch(struct xbpf_rqlat *r, int32_t pid)
{
	__u32 key = (__u32)pid;

	bpf_map_delete_elem(bpf_map__fd(r->skel->maps.watch), &key);
	bpf_map_delete_elem(bpf_map__fd(r->skel->maps.hists), &key);
}

int xbpf_rqlat_read(const struct xbpf_rqlat *r, int32_t pid, struct xbpf_rq_hist *out)
{
	__u32 key = (__u32)pid;

	if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.hists), &key, out) < 0)
		return -errno;
	return 0;
}

void xbpf_rqlat_close(struct xbpf_rqlat *r)
{
	if (!r)
		return;
	rqlat_bpf__destroy(r->skel);
	free(r);
}
