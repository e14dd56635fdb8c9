/*
 * Command descriptions and their issue (see ze_cmds.h).
 */
#include "shim/ze/ze_cmds.h"
#include "shim/ze/ze_lists.h"

#include <stdlib.h>
#include <string.h>

#define ZC_ALIGN(n) (((n) + 7) & ~(size_t)7)

static ze_result_t zc_issue_image(struct zc_append *a, ze_command_list_handle_t l)
{
	const struct xal_ze_fns *ze = &ze_real;
	ze_image_handle_t dst = a->u.img.dst, src = a->u.img.src;
	const ze_image_region_t *dr = a->u.img.dst_region, *sr = a->u.img.src_region;
	ze_event_handle_t sig = a->signal, *w = a->waits;
	uint32_t n = a->nwait;

	switch (a->what) {
	case ZC_IMAGE_COPY:
		return ze->zeCommandListAppendImageCopy(l, dst, src, sig, n, w);
	case ZC_IMAGE_REGION:
		return ze->zeCommandListAppendImageCopyRegion(l, dst, src, dr, sr, sig, n, w);
	case ZC_IMAGE_TO_MEMORY:
		return ze->zeCommandListAppendImageCopyToMemory(l, a->u.img.dst_ptr, src, sr, sig, n,
								w);
	case ZC_IMAGE_FROM_MEMORY:
		return ze->zeCommandListAppendImageCopyFromMemory(l, dst, a->u.img.src_ptr, dr, sig,
								  n, w);
	case ZC_IMAGE_TO_MEMORY_EXT:
		return ZE_CALL(zeCommandListAppendImageCopyToMemoryExt, l, a->u.img.dst_ptr, src, sr,
			       a->u.img.row_pitch, a->u.img.slice_pitch, sig, n, w);
	default:
		return ZE_CALL(zeCommandListAppendImageCopyFromMemoryExt, l, dst, a->u.img.src_ptr,
			       dr, a->u.img.row_pitch, a->u.img.slice_pitch, sig, n, w);
	}
}

static ze_result_t zc_issue_kernel(struct zc_append *a, ze_command_list_handle_t l)
{
	const struct xal_ze_fns *ze = &ze_real;
	ze_kernel_handle_t k = a->u.k.kernel;
	ze_result_t err = ZE_RESULT_SUCCESS;

	/* Buffered: a private kernel in the state of the call. */
	if (a->u.k.snap) {
		k = zk_bind(a->u.k.snap, a->now || zs_issue_is_direct(&a->c), &err);
		if (!k)
			return err;
	}
	switch (a->what) {
	case ZC_KERNEL:
		return ze->zeCommandListAppendLaunchKernel(l, k, &a->u.k.count, a->signal, a->nwait,
							   a->waits);
	case ZC_KERNEL_COOPERATIVE:
		return ze->zeCommandListAppendLaunchCooperativeKernel(l, k, &a->u.k.count,
								      a->signal, a->nwait,
								      a->waits);
	default:
		return ze->zeCommandListAppendLaunchKernelIndirect(l, k, a->u.k.indirect, a->signal,
								   a->nwait, a->waits);
	}
}

ze_result_t zc_issue_on(struct zc_append *a, ze_command_list_handle_t l)
{
	const struct xal_ze_fns *ze = &ze_real;
	ze_event_handle_t sig = a->signal, *w = a->waits;
	uint32_t n = a->nwait;

	switch (a->what) {
	case ZC_KERNEL:
	case ZC_KERNEL_COOPERATIVE:
	case ZC_KERNEL_INDIRECT:
		return zc_issue_kernel(a, l);
	case ZC_COPY:
		return ze->zeCommandListAppendMemoryCopy(l, a->u.copy.dst, a->u.copy.src,
							 a->u.copy.size, sig, n, w);
	case ZC_COPY_CONTEXT:
		return ze->zeCommandListAppendMemoryCopyFromContext(l, a->u.copy.dst, a->u.copy.ctx,
								    a->u.copy.src, a->u.copy.size,
								    sig, n, w);
	case ZC_COPY_REGION:
		return ze->zeCommandListAppendMemoryCopyRegion(
			l, a->u.region.dst, &a->u.region.dst_region, a->u.region.dst_pitch,
			a->u.region.dst_slice, a->u.region.src, &a->u.region.src_region,
			a->u.region.src_pitch, a->u.region.src_slice, sig, n, w);
	case ZC_FILL:
		return ze->zeCommandListAppendMemoryFill(l, a->u.fill.ptr, a->u.fill.pattern,
							 a->u.fill.pattern_size, a->u.fill.size,
							 sig, n, w);
	case ZC_BARRIER:
		return ze->zeCommandListAppendBarrier(l, sig, n, w);
	case ZC_RANGES_BARRIER:
		return ze->zeCommandListAppendMemoryRangesBarrier(l, a->u.ranges.n,
								  a->u.ranges.sizes,
								  a->u.ranges.ranges, sig, n, w);
	case ZC_SIGNAL:
		return ze->zeCommandListAppendSignalEvent(l, sig);
	case ZC_WAIT:
		return ze->zeCommandListAppendWaitOnEvents(l, n, w);
	case ZC_RESET:
		return ze->zeCommandListAppendEventReset(l, a->u.reset.ev);
	case ZC_TIMESTAMP:
		return ze->zeCommandListAppendWriteGlobalTimestamp(l, a->u.ts.dst, sig, n, w);
	case ZC_QUERY_TIMESTAMPS:
		return ze->zeCommandListAppendQueryKernelTimestamps(l, a->u.qts.n, a->u.qts.events,
								    a->u.qts.dst,
								    a->u.qts.offsets, sig, n, w);
	case ZC_PREFETCH:
		return ze->zeCommandListAppendMemoryPrefetch(l, a->u.mem.ptr, a->u.mem.size);
	case ZC_ADVISE:
		return ze->zeCommandListAppendMemAdvise(l, a->u.mem.dev, a->u.mem.ptr,
							a->u.mem.size, a->u.mem.advice);
	default:
		return zc_issue_image(a, l);
	}
}

static ze_result_t zc_append_issue(struct xal_ze_cmd *c, const struct xal_ze_target *t)
{
	ze_result_t rc = zc_issue_on((struct zc_append *)c, t->list);

	zs_issued(c, rc);
	return rc;
}

static void zc_append_fini(struct xal_ze_cmd *c)
{
	struct zc_append *a = (struct zc_append *)c;

	if (a->what <= ZC_KERNEL_INDIRECT)
		zk_snap_free(a->u.k.snap);
	zt_deps_fini(&a->deps);
}

static void *zc_blocked_on(struct xal_ze_cmd *c)
{
	return zt_deps_blocked(&((struct zc_append *)c)->deps);
}

static const struct xal_ze_cmd_ops zc_append_ops = {
	.issue = zc_append_issue,
	.fini = zc_append_fini,
	.blocked_on = zc_blocked_on,
};

static uint32_t zc_kind(enum zc_what what)
{
	switch (what) {
	case ZC_KERNEL:
	case ZC_KERNEL_COOPERATIVE:
	case ZC_KERNEL_INDIRECT:
		return XAL_CMD_KERNEL;
	case ZC_FILL:
		return XAL_CMD_MEMSET;
	case ZC_COPY:
	case ZC_COPY_CONTEXT:
	case ZC_COPY_REGION:
	case ZC_IMAGE_COPY:
	case ZC_IMAGE_REGION:
	case ZC_IMAGE_TO_MEMORY:
	case ZC_IMAGE_FROM_MEMORY:
	case ZC_IMAGE_TO_MEMORY_EXT:
	case ZC_IMAGE_FROM_MEMORY_EXT:
		return XAL_CMD_COPY;
	case ZC_SIGNAL:
	case ZC_WAIT:
	case ZC_RESET:
		return XAL_CMD_EVENT;
	default:
		return XAL_CMD_OTHER;
	}
}

struct zc_append *zc_begin(ze_command_list_handle_t list, enum zc_what what,
			   ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *waits,
			   size_t extra)
{
	size_t wbytes = ZC_ALIGN((size_t)nwait * sizeof(*waits));
	struct zs_queue *q = NULL;
	struct zr_list *rl = NULL;
	struct zc_append *a;

	if (!list || (nwait && !waits) || !ze_scheduling())
		return NULL;
	q = zs_queue_of(list);
	if (q && !q->is_list)
		return NULL;
	if (!q && !(rl = zr_of(list)))
		return NULL;
	a = calloc(1, sizeof(*a) + wbytes + extra);
	if (!a)
		return NULL;
	xal_ze_cmd_init(&a->c, &zc_append_ops, zc_kind(what), (uint64_t)what);
	a->what = what;
	a->q = q;
	a->rl = rl;
	a->list = list;
	a->signal = signal;
	a->nwait = nwait;
	if (nwait) {
		a->waits = (ze_event_handle_t *)(void *)a->extra;
		memcpy(a->waits, waits, (size_t)nwait * sizeof(*waits));
	}
	if (q)
		zt_deps_add(&a->deps, q, nwait, a->waits);
	return a;
}

void *zc_extra(struct zc_append *a)
{
	return a->extra + ZC_ALIGN((size_t)a->nwait * sizeof(*a->waits));
}

void zc_abort(struct zc_append *a)
{
	if (a)
		xal_cmd_destroy(&a->c.base);
}

ze_result_t zc_end(struct zc_append *a)
{
	ze_event_handle_t signal = a->signal;
	struct zs_queue *q = a->q;
	uint64_t seq = 0;
	ze_result_t rc;

	if (q) {
		rc = zs_submit(q, &a->c, &seq);
		if (seq)
			zt_note(ZT_EVENT, signal, q, seq);
		return rc;
	}
	a->now = true;
	rc = zc_issue_on(a, a->list);
	if (rc == ZE_RESULT_SUCCESS)
		zr_appended(a->rl, a);
	zc_abort(a);
	return rc;
}

struct zs_queue *zc_pass_begin(ze_command_list_handle_t list)
{
	struct zs_queue *q;

	if (!ze_scheduling())
		return NULL;
	q = zs_queue_of(list);
	if (!q || !q->is_list)
		return NULL;
	zs_flush(q);
	zs_lock(q);
	return q;
}

void zc_pass_end(struct zs_queue *q)
{
	if (q)
		zs_unlock(q);
}

/* --- executions ------------------------------------------------------------- */

struct zc_exec {
	struct xal_ze_cmd c;
	struct zt_deps deps;
	uint32_t n;
	ze_command_list_handle_t lists[];
};

static ze_result_t zc_exec_issue(struct xal_ze_cmd *c, const struct xal_ze_target *t)
{
	struct zc_exec *e = (struct zc_exec *)c;
	ze_result_t rc = ze_real.zeCommandQueueExecuteCommandLists(t->queue, e->n, e->lists,
								   t->fence);

	zs_issued(c, rc);
	return rc;
}

static void zc_exec_fini(struct xal_ze_cmd *c)
{
	zt_deps_fini(&((struct zc_exec *)c)->deps);
}

static void *zc_exec_blocked_on(struct xal_ze_cmd *c)
{
	return zt_deps_blocked(&((struct zc_exec *)c)->deps);
}

static const struct xal_ze_cmd_ops zc_exec_ops = {
	.issue = zc_exec_issue,
	.fini = zc_exec_fini,
	.blocked_on = zc_exec_blocked_on,
};

struct xal_ze_cmd *zc_exec(uint32_t n, ze_command_list_handle_t *lists, ze_fence_handle_t fence,
			   struct zt_deps *deps)
{
	struct zc_exec *e = calloc(1, sizeof(*e) + (size_t)n * sizeof(*lists));

	if (!e) {
		zt_deps_fini(deps);
		return NULL;
	}
	/* Equal executions (the same first list) take equal time. */
	xal_ze_cmd_init(&e->c, &zc_exec_ops, XAL_CMD_KERNEL, (uint64_t)(uintptr_t)lists[0]);
	e->n = n;
	memcpy(e->lists, lists, (size_t)n * sizeof(*lists));
	e->deps = *deps;
	*deps = (struct zt_deps){ 0 };
	if (fence && !(e->c.app_fence = zt_fence_guard(fence))) {
		xal_cmd_destroy(&e->c.base);
		return NULL;
	}
	return &e->c;
}
