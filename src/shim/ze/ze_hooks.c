/*
 * The Level Zero entry points the shim schedules: command queues and
 * their executions, command lists, and every append. On an immediate list
 * an append becomes a command of the list's XQueue; on a regular list it
 * goes to the driver at once and the shim notes its events (ze_lists.h);
 * an execution of regular lists becomes one command (or one per slice).
 *
 * A call the shim does not turn into a command (pass-through mode, a
 * handle it does not know, arguments the driver will refuse at the call,
 * kernel state it cannot reproduce) goes straight to the driver, behind
 * the queue's buffered work: nothing that takes a queue or an immediate
 * list goes around its XQueue. The HOOK rows of src/vendor/ze/
 * ze_functions.def are defined here, in ze_hooks_sync.c, ze_kernels.c,
 * ze_memory.c and ze_queues.c; every other row is a trampoline.
 */
#include "shim/ze/ze_lists.h"

#include <string.h>

/* Calls @name on @list behind its XQueue's buffered work (see zc_pass_begin). */
#define ZH_PASS(list, name, ...)                                                   \
	({                                                                         \
		struct zs_queue *q_ = zc_pass_begin(list);                         \
		ze_result_t r_ = ZE_CALL(name, __VA_ARGS__);                       \
		zc_pass_end(q_);                                                   \
		r_;                                                                \
	})

/* An append the shim never describes: passed, and noted on a regular list. */
#define ZH_RAW(list, signal, nwait, waits, name, ...)                              \
	({                                                                         \
		ze_result_t raw_ = ZH_PASS(list, name, __VA_ARGS__);               \
		struct zr_list *rl_ = raw_ == ZE_RESULT_SUCCESS && ze_scheduling() ? \
					      zr_of(list) : NULL;                  \
		if (rl_)                                                           \
			zr_appended_raw(rl_, signal, nwait, waits);                \
		raw_;                                                              \
	})

/* --- command queues ------------------------------------------------------------ */

/* After a creation (@rc) of the queue or immediate list @h: scheduled. */
static ze_result_t zh_made(ze_result_t rc, const void *h, bool is_list,
			   ze_context_handle_t ctx, ze_device_handle_t dev,
			   const ze_command_queue_desc_t *desc)
{
	if (rc == ZE_RESULT_SUCCESS && ze_scheduling())
		zs_queue_created(h, is_list, ctx, dev, desc);
	return rc;
}

XS_ZE_HOOK ze_result_t zeCommandQueueCreate(ze_context_handle_t ctx, ze_device_handle_t dev,
					    const ze_command_queue_desc_t *desc,
					    ze_command_queue_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeCommandQueueCreate, ctx, dev, desc, out);

	return zh_made(rc, rc == ZE_RESULT_SUCCESS ? *out : NULL, false, ctx, dev, desc);
}

XS_ZE_HOOK ze_result_t zeCommandQueueDestroy(ze_command_queue_handle_t h)
{
	/* Buffered work reaches the driver and completes before its queue goes. */
	if (h && ze_scheduling())
		zs_queue_destroyed(h);
	return ZE_CALL(zeCommandQueueDestroy, h);
}

XS_ZE_HOOK ze_result_t zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t h,
							 uint32_t n,
							 ze_command_list_handle_t *lists,
							 ze_fence_handle_t fence)
{
	struct zs_queue *q = h && ze_scheduling() ? zs_queue_of(h) : NULL;

	/* What the driver refuses at the call goes to it (behind the queue's
	 * buffered work), to be refused there: unclosed or unknown lists, a
	 * fence of another queue. */
	if (q && !q->is_list && n && lists && zr_executable(n, lists) &&
	    (!fence || zt_fence_on(fence, h)))
		return zr_execute(q, n, lists, fence);
	if (q)
		zs_flush(q);
	return ZE_CALL(zeCommandQueueExecuteCommandLists, h, n, lists, fence);
}

XS_ZE_HOOK ze_result_t zeFenceCreate(ze_command_queue_handle_t h, const ze_fence_desc_t *desc,
				     ze_fence_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeFenceCreate, h, desc, out);

	if (rc == ZE_RESULT_SUCCESS && ze_scheduling())
		zt_fence_created(*out, h);
	return rc;
}

/* --- command lists ---------------------------------------------------------------- */

XS_ZE_HOOK ze_result_t zeCommandListCreate(ze_context_handle_t ctx, ze_device_handle_t dev,
					   const ze_command_list_desc_t *desc,
					   ze_command_list_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeCommandListCreate, ctx, dev, desc, out);

	if (rc == ZE_RESULT_SUCCESS && ze_scheduling())
		zr_created(*out, ctx, dev, desc);
	return rc;
}

XS_ZE_HOOK ze_result_t zeCommandListCreateImmediate(ze_context_handle_t ctx,
						    ze_device_handle_t dev,
						    const ze_command_queue_desc_t *desc,
						    ze_command_list_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeCommandListCreateImmediate, ctx, dev, desc, out);

	return zh_made(rc, rc == ZE_RESULT_SUCCESS ? *out : NULL, true, ctx, dev, desc);
}

XS_ZE_HOOK ze_result_t zeCommandListDestroy(ze_command_list_handle_t h)
{
	if (h && ze_scheduling()) {
		if (zs_queue_of(h))
			zs_queue_destroyed(h);
		else
			zr_destroyed(h);
	}
	return ZE_CALL(zeCommandListDestroy, h);
}

XS_ZE_HOOK ze_result_t zeCommandListClose(ze_command_list_handle_t h)
{
	ze_result_t rc = ZE_CALL(zeCommandListClose, h);

	if (rc == ZE_RESULT_SUCCESS && h && ze_scheduling())
		zr_closed(h);
	return rc;
}

XS_ZE_HOOK ze_result_t zeCommandListReset(ze_command_list_handle_t h)
{
	struct zs_queue *q = h && ze_scheduling() ? zs_queue_of(h) : NULL;

	/* The device must be done with what the list holds. */
	if (q)
		zs_wait(q, 0, UINT64_MAX, false);
	else if (h && ze_scheduling())
		zr_reset(h);
	return ZH_PASS(h, zeCommandListReset, h);
}

/* --- kernel launches ------------------------------------------------------------- */

/*
 * Describes a launch of @k; on an immediate list with a snapshot of its
 * state. NULL: the launch goes to the driver directly.
 */
static struct zc_append *zh_launch(enum zc_what what, ze_command_list_handle_t l,
				   ze_kernel_handle_t k, const ze_group_count_t *args,
				   ze_event_handle_t sig, uint32_t n, ze_event_handle_t *w)
{
	struct zc_append *a = k && args ? zc_begin(l, what, sig, n, w, 0) : NULL;

	if (!a)
		return NULL;
	a->u.k.kernel = k;
	if (what == ZC_KERNEL_INDIRECT)
		a->u.k.indirect = args;
	else
		a->u.k.count = *args;
	a->c.base.est_key = (uint64_t)(uintptr_t)k;
	if (a->q && !(a->u.k.snap = zk_snapshot(k))) {
		zc_abort(a);
		return NULL;
	}
	return a;
}

/* The three launches of one kernel share a signature. */
#define ZH_LAUNCH(name, what)                                                      \
	XS_ZE_HOOK ze_result_t name(ze_command_list_handle_t l, ze_kernel_handle_t k,  \
				    const ze_group_count_t *args, ze_event_handle_t sig, \
				    uint32_t n, ze_event_handle_t *w)                    \
	{                                                                          \
		struct zc_append *a = zh_launch(what, l, k, args, sig, n, w);      \
                                                                                   \
		return a ? zc_end(a) : ZH_PASS(l, name, l, k, args, sig, n, w);    \
	}

ZH_LAUNCH(zeCommandListAppendLaunchKernel, ZC_KERNEL)
ZH_LAUNCH(zeCommandListAppendLaunchCooperativeKernel, ZC_KERNEL_COOPERATIVE)
ZH_LAUNCH(zeCommandListAppendLaunchKernelIndirect, ZC_KERNEL_INDIRECT)

/* Several kernels, counts in device memory: not buffered (one snapshot each). */
XS_ZE_HOOK ze_result_t zeCommandListAppendLaunchMultipleKernelsIndirect(
	ze_command_list_handle_t l, uint32_t nk, ze_kernel_handle_t *k, const uint32_t *count,
	const ze_group_count_t *args, ze_event_handle_t sig, uint32_t n, ze_event_handle_t *w)
{
	return ZH_RAW(l, sig, n, w, zeCommandListAppendLaunchMultipleKernelsIndirect, l, nk, k,
		      count, args, sig, n, w);
}

/* --- memory ------------------------------------------------------------------------ */

XS_ZE_HOOK ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t l, void *dst,
						     const void *src, size_t size,
						     ze_event_handle_t sig, uint32_t n,
						     ze_event_handle_t *w)
{
	struct zc_append *a = dst && src ? zc_begin(l, ZC_COPY, sig, n, w, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemoryCopy, l, dst, src, size, sig, n, w);
	a->u.copy.dst = dst;
	a->u.copy.src = src;
	a->u.copy.size = size;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendMemoryCopyFromContext(ze_command_list_handle_t l,
								void *dst,
								ze_context_handle_t ctx,
								const void *src, size_t size,
								ze_event_handle_t sig,
								uint32_t n, ze_event_handle_t *w)
{
	struct zc_append *a = dst && src && ctx ? zc_begin(l, ZC_COPY_CONTEXT, sig, n, w, 0) :
						  NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemoryCopyFromContext, l, dst, ctx, src, size,
			       sig, n, w);
	a->u.copy.dst = dst;
	a->u.copy.ctx = ctx;
	a->u.copy.src = src;
	a->u.copy.size = size;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendMemoryCopyRegion(
	ze_command_list_handle_t l, void *dst, const ze_copy_region_t *dr, uint32_t dp,
	uint32_t dsp, const void *src, const ze_copy_region_t *sr, uint32_t sp, uint32_t ssp,
	ze_event_handle_t sig, uint32_t n, ze_event_handle_t *w)
{
	struct zc_append *a = dst && src && dr && sr ? zc_begin(l, ZC_COPY_REGION, sig, n, w, 0) :
						       NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemoryCopyRegion, l, dst, dr, dp, dsp, src, sr,
			       sp, ssp, sig, n, w);
	a->u.region.dst = dst;
	a->u.region.dst_region = *dr;
	a->u.region.dst_pitch = dp;
	a->u.region.dst_slice = dsp;
	a->u.region.src = src;
	a->u.region.src_region = *sr;
	a->u.region.src_pitch = sp;
	a->u.region.src_slice = ssp;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t l, void *ptr,
						     const void *pattern, size_t psize,
						     size_t size, ze_event_handle_t sig, uint32_t n,
						     ze_event_handle_t *w)
{
	struct zc_append *a = ptr && pattern && psize ? zc_begin(l, ZC_FILL, sig, n, w, psize) :
							NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemoryFill, l, ptr, pattern, psize, size, sig,
			       n, w);
	a->u.fill.ptr = ptr;
	a->u.fill.pattern = memcpy(zc_extra(a), pattern, psize);
	a->u.fill.pattern_size = psize;
	a->u.fill.size = size;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendMemoryPrefetch(ze_command_list_handle_t l,
							 const void *ptr, size_t size)
{
	struct zc_append *a = ptr ? zc_begin(l, ZC_PREFETCH, NULL, 0, NULL, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemoryPrefetch, l, ptr, size);
	a->u.mem.ptr = ptr;
	a->u.mem.size = size;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendMemAdvise(ze_command_list_handle_t l,
						    ze_device_handle_t dev, const void *ptr,
						    size_t size, ze_memory_advice_t advice)
{
	struct zc_append *a = ptr && dev ? zc_begin(l, ZC_ADVISE, NULL, 0, NULL, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemAdvise, l, dev, ptr, size, advice);
	a->u.mem.dev = dev;
	a->u.mem.ptr = ptr;
	a->u.mem.size = size;
	a->u.mem.advice = advice;
	return zc_end(a);
}

/* --- barriers, events, timestamps --------------------------------------------------- */

XS_ZE_HOOK ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t l,
						  ze_event_handle_t sig, uint32_t n,
						  ze_event_handle_t *w)
{
	struct zc_append *a = zc_begin(l, ZC_BARRIER, sig, n, w, 0);

	if (!a)
		return ZH_PASS(l, zeCommandListAppendBarrier, l, sig, n, w);
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendMemoryRangesBarrier(ze_command_list_handle_t l,
							      uint32_t nr, const size_t *sizes,
							      const void **ranges,
							      ze_event_handle_t sig, uint32_t n,
							      ze_event_handle_t *w)
{
	size_t bytes = (size_t)nr * (sizeof(*sizes) + sizeof(*ranges));
	struct zc_append *a = !nr || (sizes && ranges) ?
				      zc_begin(l, ZC_RANGES_BARRIER, sig, n, w, bytes) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendMemoryRangesBarrier, l, nr, sizes, ranges, sig,
			       n, w);
	a->u.ranges.n = nr;
	if (nr) {
		char *extra = zc_extra(a);

		a->u.ranges.ranges = memcpy(extra, ranges, nr * sizeof(*ranges));
		a->u.ranges.sizes = memcpy(extra + nr * sizeof(*ranges), sizes,
					   nr * sizeof(*sizes));
	}
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendSignalEvent(ze_command_list_handle_t l,
						      ze_event_handle_t ev)
{
	struct zc_append *a = ev ? zc_begin(l, ZC_SIGNAL, ev, 0, NULL, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendSignalEvent, l, ev);
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t l, uint32_t n,
						       ze_event_handle_t *evs)
{
	struct zc_append *a = n && evs ? zc_begin(l, ZC_WAIT, NULL, n, evs, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendWaitOnEvents, l, n, evs);
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendEventReset(ze_command_list_handle_t l,
						     ze_event_handle_t ev)
{
	struct zc_append *a = ev ? zc_begin(l, ZC_RESET, NULL, 0, NULL, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendEventReset, l, ev);
	a->u.reset.ev = ev;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t l,
							       uint64_t *dst,
							       ze_event_handle_t sig, uint32_t n,
							       ze_event_handle_t *w)
{
	struct zc_append *a = dst ? zc_begin(l, ZC_TIMESTAMP, sig, n, w, 0) : NULL;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendWriteGlobalTimestamp, l, dst, sig, n, w);
	a->u.ts.dst = dst;
	return zc_end(a);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendQueryKernelTimestamps(
	ze_command_list_handle_t l, uint32_t ne, ze_event_handle_t *evs, void *dst,
	const size_t *offsets, ze_event_handle_t sig, uint32_t n, ze_event_handle_t *w)
{
	size_t bytes = (size_t)ne * (sizeof(*evs) + (offsets ? sizeof(*offsets) : 0));
	struct zc_append *a = ne && evs && dst ?
				      zc_begin(l, ZC_QUERY_TIMESTAMPS, sig, n, w, bytes) : NULL;
	char *extra;

	if (!a)
		return ZH_PASS(l, zeCommandListAppendQueryKernelTimestamps, l, ne, evs, dst, offsets,
			       sig, n, w);
	extra = zc_extra(a);
	a->u.qts.n = ne;
	a->u.qts.events = memcpy(extra, evs, ne * sizeof(*evs));
	a->u.qts.dst = dst;
	if (offsets)
		a->u.qts.offsets = memcpy(extra + ne * sizeof(*evs), offsets,
					  ne * sizeof(*offsets));
	return zc_end(a);
}

/* --- images ---------------------------------------------------------------------------- */

/* What the image copies take; a NULL region means the whole image. */
struct zh_img {
	ze_image_handle_t dst, src;
	void *dst_ptr;
	const void *src_ptr;
	const ze_image_region_t *dr, *sr;
	uint32_t row, slice;
};

/* Describes an image copy (regions copied), or NULL to pass it. */
static struct zc_append *zh_image(enum zc_what what, ze_command_list_handle_t l,
				  const struct zh_img *i, ze_event_handle_t sig, uint32_t n,
				  ze_event_handle_t *w)
{
	ze_image_region_t *copies;
	struct zc_append *a;

	if ((!i->dst && !i->dst_ptr) || (!i->src && !i->src_ptr))
		return NULL;
	a = zc_begin(l, what, sig, n, w, 2 * sizeof(ze_image_region_t));
	if (!a)
		return NULL;
	copies = zc_extra(a);
	a->u.img.dst = i->dst;
	a->u.img.src = i->src;
	a->u.img.dst_ptr = i->dst_ptr;
	a->u.img.src_ptr = i->src_ptr;
	a->u.img.row_pitch = i->row;
	a->u.img.slice_pitch = i->slice;
	if (i->dr)
		a->u.img.dst_region = memcpy(&copies[0], i->dr, sizeof(*i->dr));
	if (i->sr)
		a->u.img.src_region = memcpy(&copies[1], i->sr, sizeof(*i->sr));
	return a;
}

XS_ZE_HOOK ze_result_t zeCommandListAppendImageCopy(ze_command_list_handle_t l,
						    ze_image_handle_t dst, ze_image_handle_t src,
						    ze_event_handle_t sig, uint32_t n,
						    ze_event_handle_t *w)
{
	const struct zh_img i = { .dst = dst, .src = src };
	struct zc_append *a = zh_image(ZC_IMAGE_COPY, l, &i, sig, n, w);

	return a ? zc_end(a) : ZH_PASS(l, zeCommandListAppendImageCopy, l, dst, src, sig, n, w);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendImageCopyRegion(ze_command_list_handle_t l,
							  ze_image_handle_t dst,
							  ze_image_handle_t src,
							  const ze_image_region_t *dr,
							  const ze_image_region_t *sr,
							  ze_event_handle_t sig, uint32_t n,
							  ze_event_handle_t *w)
{
	const struct zh_img i = { .dst = dst, .src = src, .dr = dr, .sr = sr };
	struct zc_append *a = zh_image(ZC_IMAGE_REGION, l, &i, sig, n, w);

	return a ? zc_end(a) :
		   ZH_PASS(l, zeCommandListAppendImageCopyRegion, l, dst, src, dr, sr, sig, n, w);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendImageCopyToMemory(ze_command_list_handle_t l,
							    void *dst, ze_image_handle_t src,
							    const ze_image_region_t *sr,
							    ze_event_handle_t sig, uint32_t n,
							    ze_event_handle_t *w)
{
	const struct zh_img i = { .dst_ptr = dst, .src = src, .sr = sr };
	struct zc_append *a = zh_image(ZC_IMAGE_TO_MEMORY, l, &i, sig, n, w);

	return a ? zc_end(a) :
		   ZH_PASS(l, zeCommandListAppendImageCopyToMemory, l, dst, src, sr, sig, n, w);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendImageCopyFromMemory(ze_command_list_handle_t l,
							      ze_image_handle_t dst,
							      const void *src,
							      const ze_image_region_t *dr,
							      ze_event_handle_t sig, uint32_t n,
							      ze_event_handle_t *w)
{
	const struct zh_img i = { .dst = dst, .src_ptr = src, .dr = dr };
	struct zc_append *a = zh_image(ZC_IMAGE_FROM_MEMORY, l, &i, sig, n, w);

	return a ? zc_end(a) :
		   ZH_PASS(l, zeCommandListAppendImageCopyFromMemory, l, dst, src, dr, sig, n, w);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendImageCopyToMemoryExt(
	ze_command_list_handle_t l, void *dst, ze_image_handle_t src, const ze_image_region_t *sr,
	uint32_t row, uint32_t slice, ze_event_handle_t sig, uint32_t n, ze_event_handle_t *w)
{
	const struct zh_img i = { .dst_ptr = dst, .src = src, .sr = sr, .row = row,
				  .slice = slice };
	struct zc_append *a = zh_image(ZC_IMAGE_TO_MEMORY_EXT, l, &i, sig, n, w);

	return a ? zc_end(a) :
		   ZH_PASS(l, zeCommandListAppendImageCopyToMemoryExt, l, dst, src, sr, row, slice,
			   sig, n, w);
}

XS_ZE_HOOK ze_result_t zeCommandListAppendImageCopyFromMemoryExt(
	ze_command_list_handle_t l, ze_image_handle_t dst, const void *src,
	const ze_image_region_t *dr, uint32_t row, uint32_t slice, ze_event_handle_t sig,
	uint32_t n, ze_event_handle_t *w)
{
	const struct zh_img i = { .dst = dst, .src_ptr = src, .dr = dr, .row = row,
				  .slice = slice };
	struct zc_append *a = zh_image(ZC_IMAGE_FROM_MEMORY_EXT, l, &i, sig, n, w);

	return a ? zc_end(a) :
		   ZH_PASS(l, zeCommandListAppendImageCopyFromMemoryExt, l, dst, src, dr, row,
			   slice, sig, n, w);
}

/* --- metrics (zet): passed behind the list's buffered work ------------------------ */

XS_ZE_HOOK ze_result_t zetCommandListAppendMetricStreamerMarker(zet_command_list_handle_t l,
								zet_metric_streamer_handle_t s,
								uint32_t value)
{
	return ZH_RAW(l, NULL, 0, NULL, zetCommandListAppendMetricStreamerMarker, l, s, value);
}

XS_ZE_HOOK ze_result_t zetCommandListAppendMetricQueryBegin(zet_command_list_handle_t l,
							    zet_metric_query_handle_t mq)
{
	return ZH_RAW(l, NULL, 0, NULL, zetCommandListAppendMetricQueryBegin, l, mq);
}

XS_ZE_HOOK ze_result_t zetCommandListAppendMetricQueryEnd(zet_command_list_handle_t l,
							  zet_metric_query_handle_t mq,
							  ze_event_handle_t sig, uint32_t n,
							  ze_event_handle_t *w)
{
	return ZH_RAW(l, sig, n, w, zetCommandListAppendMetricQueryEnd, l, mq, sig, n, w);
}

XS_ZE_HOOK ze_result_t zetCommandListAppendMetricMemoryBarrier(zet_command_list_handle_t l)
{
	return ZH_RAW(l, NULL, 0, NULL, zetCommandListAppendMetricMemoryBarrier, l);
}
