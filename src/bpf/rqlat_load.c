/*
 * Loader of the run-queue latency programs (rqlat.bpf.c) and the reading
 * of their per-process histograms and node-wide windows. The watched set
 * is a map the programs consult, so watching a process costs one map
 * update and nothing is re-attached. The CPU windows are an mmap()able
 * array mapped read-only here: the daemon reads them without a system
 * call.
 */
#include "bpf/xbpf.h"
#include "bpf/xbpf_map.h"
#include "rqlat.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct xbpf_rqlat {
	struct rqlat_bpf *skel;
	struct xbpf_heat_win *heat;        /* mapped heat_cpu; NULL: not node-wide */
	size_t heat_len;
	unsigned ncpus;
};

/* Opens the skeleton sized and set for @o; NULL with errno. */
static struct rqlat_bpf *xbpf_rqlat_load(const struct xbpf_rqlat_opts *o, unsigned ncpus)
{
	struct rqlat_bpf *skel = rqlat_bpf__open();
	int rc;

	if (!skel)
		return NULL;
	skel->rodata->node_wide = o->node_wide;
	skel->rodata->window_ns = o->window_ns ? o->window_ns : 10000000;
	rc = bpf_map__set_max_entries(skel->maps.heat_cpu, ncpus * XBPF_HEAT_SLOTS);
	if (!rc)
		rc = rqlat_bpf__load(skel);
	if (rc) {
		rqlat_bpf__destroy(skel);
		errno = rc < 0 ? -rc : rc;
		return NULL;
	}
	return skel;
}

/* Maps the CPU windows read-only (array values are 8-byte aligned). */
static int xbpf_rqlat_map_heat(struct xbpf_rqlat *r)
{
	_Static_assert(sizeof(struct xbpf_heat_win) % 8 == 0, "array stride");
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	r->heat_len = (r->ncpus * XBPF_HEAT_SLOTS * sizeof(*r->heat) + page - 1) / page * page;
	m = mmap(NULL, r->heat_len, PROT_READ, MAP_SHARED, bpf_map__fd(r->skel->maps.heat_cpu),
		 0);
	if (m == MAP_FAILED)
		return -errno;
	r->heat = m;
	return 0;
}

int xbpf_rqlat_open(struct xbpf_rqlat **out, const struct xbpf_rqlat_opts *o, char *err,
		    size_t errlen)
{
	struct xbpf_rqlat *r = calloc(1, sizeof(*r));
	int rc, n = libbpf_num_possible_cpus();

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->ncpus = n > 0 ? (unsigned)n : 1;
	r->skel = xbpf_rqlat_load(o, r->ncpus);
	if (!r->skel) {
		rc = -errno;
		snprintf(err, errlen, "cannot load the eBPF programs: %s%s", strerror(-rc),
			 rc == -EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON, and a "
			 "kernel with BTF)" : "");
		free(r);
		return rc;
	}
	rc = o->node_wide ? xbpf_rqlat_map_heat(r) : 0;
	if (rc) {
		snprintf(err, errlen, "cannot map the CPU windows: %s", strerror(-rc));
		goto fail;
	}
	rc = rqlat_bpf__attach(r->skel);
	if (rc) {
		snprintf(err, errlen, "cannot attach the sched tracepoints: %s", strerror(-rc));
		goto fail;
	}
	*out = r;
	return 0;
fail:
	xbpf_rqlat_close(r);
	return rc;
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

const struct xbpf_heat_win *xbpf_rqlat_heat(const struct xbpf_rqlat *r, unsigned *ncpus)
{
	*ncpus = r->heat ? r->ncpus : 0;
	return r->heat;
}

struct xbpf_drain {
	int fd;
	uint64_t before;
	void (*fn)(void *arg, const struct xbpf_heat_pkey *k, const struct xbpf_heat_pwin *w);
	void *arg;
};

/* A window that has ended goes to the daemon and out of the map. */
static bool xbpf_drain_one(void *arg, const void *key)
{
	const struct xbpf_drain *d = arg;
	const struct xbpf_heat_pkey *k = key;
	struct xbpf_heat_pwin w;

	if (k->win >= d->before || bpf_map_lookup_elem(d->fd, k, &w))
		return false;
	d->fn(d->arg, k, &w);
	return true;
}

void xbpf_rqlat_drain(struct xbpf_rqlat *r, uint64_t before,
		      void (*fn)(void *arg, const struct xbpf_heat_pkey *k,
				 const struct xbpf_heat_pwin *w),
		      void *arg)
{
	struct xbpf_drain d = { bpf_map__fd(r->skel->maps.heat_proc), before, fn, arg };

	xbpf_map_walk(d.fd, sizeof(struct xbpf_heat_pkey), xbpf_drain_one, &d);
}

void xbpf_rqlat_close(struct xbpf_rqlat *r)
{
	if (!r)
		return;
	if (r->heat)
		munmap(r->heat, r->heat_len);
	rqlat_bpf__destroy(r->skel);
	free(r);
}
