/*
 * Command lists of the simulated Level Zero driver: regular lists, which
 * record commands for later executions, and immediate lists, which launch
 * each command as it is appended; and every append.
 *
 * Design: an append checks its arguments and builds one struct sz_cmd by
 * value, capturing what the API says is captured at append (kernel
 * arguments and group size, the fill pattern, copy descriptors); pointers
 * to memory stay pointers, used when the command runs. A regular list
 * stores the command until it is reset or destroyed; an immediate list
 * launches it at once on its own device queue, with a copy for the
 * executor (sz_submit.c), and in synchronous mode waits for it. A copy
 * side or fill target in memory the driver allocated is checked at append
 * (it must lie inside one allocation) and again when it runs; other host
 * memory is the application's to keep valid until then.
 */
#include "sim/ze/sz_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Frees every recorded command of regular list @l. */
static void sz_list_clear(struct sz_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		sz_cmd_fini(&l->cmds[i]);
	free(l->cmds);
	l->cmds = NULL;
	l->n = l->cap = 0;
}

ze_result_t zeCommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
				const ze_command_list_desc_t *desc,
				ze_command_list_handle_t *phCommandList)
{
	ze_result_t r;
	struct sz_context *ctx = sz_get(hContext, SZ_M_CONTEXT, &r);
	struct sz_list *l;

	if (!ctx)
		return r;
	if (!sz_obj(hDevice, SZ_M_DEVICE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phCommandList)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags > 0x7)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->commandQueueGroupOrdinal != 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->magic = SZ_M_LIST;
	l->ctx = ctx;
	*phCommandList = (ze_command_list_handle_t)(void *)l;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListCreateImmediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					 const ze_command_queue_desc_t *altdesc,
					 ze_command_list_handle_t *phCommandList)
{
	struct sz_queue *q;
	struct sz_list *l;
	ze_result_t r = sz_queue_new(hContext, hDevice, altdesc, phCommandList, &q);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l) {
		sz_queue_free(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	l->magic = SZ_M_LIST;
	l->ctx = q->ctx;
	l->immediate = true;
	l->iq = q;
	*phCommandList = (ze_command_list_handle_t)(void *)l;
	return ZE_RESULT_SUCCESS;
}

/* An immediate list waits for its work first. */
ze_result_t zeCommandListDestroy(ze_command_list_handle_t hCommandList)
{
	ze_result_t r;
	struct sz_list *l = sz_get(hCommandList, SZ_M_LIST, &r);

	if (!l)
		return r;
	l->magic = 0;
	if (l->immediate) {
		sz_queue_free(l->iq);
	} else {
		sz_list_clear(l);
	}
	free(l);
	return ZE_RESULT_SUCCESS;
}

/* Closing an immediate list does nothing. */
ze_result_t zeCommandListClose(ze_command_list_handle_t hCommandList)
{
	ze_result_t r;
	struct sz_list *l = sz_get(hCommandList, SZ_M_LIST, &r);

	if (!l)
		return r;
	if (!l->immediate)
		l->closed = true;
	return ZE_RESULT_SUCCESS;
}

/* A regular list forgets its commands; an immediate one waits for them. */
ze_result_t zeCommandListReset(ze_command_list_handle_t hCommandList)
{
	ze_result_t r;
	struct sz_list *l = sz_get(hCommandList, SZ_M_LIST, &r);

	if (!l)
		return r;
	if (l->immediate) {
		sf_hwq_wait(l->iq->q, l->iq->q->launched);
		return ZE_RESULT_SUCCESS;
	}
	sz_list_clear(l);
	l->closed = false;
	return ZE_RESULT_SUCCESS;
}

/*
 * Checks and takes the events of an append into @c: the optional event
 * it signals and the @nwait it waits for (copied).
 */
static ze_result_t sz_cmd_events(struct sz_cmd *c, ze_event_handle_t hSignalEvent,
				 uint32_t nwait, ze_event_handle_t *phWaitEvents)
{
	uint32_t i;

	if (nwait && !phWaitEvents)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (hSignalEvent) {
		c->signal = sz_obj(hSignalEvent, SZ_M_EVENT);
		if (!c->signal)
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	}
	for (i = 0; i < nwait; i++)
		if (!sz_obj(phWaitEvents[i], SZ_M_EVENT))
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	if (!nwait)
		return ZE_RESULT_SUCCESS;
	c->wait = malloc(nwait * sizeof(*c->wait));
	if (!c->wait)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (i = 0; i < nwait; i++)
		c->wait[i] = sz_obj(phWaitEvents[i], SZ_M_EVENT);
	c->nwait = nwait;
	return ZE_RESULT_SUCCESS;
}

/* Launches @c on immediate list @l, waiting for it in synchronous mode. */
static int sz_append_now(struct sz_list *l, const struct sz_cmd *c)
{
	struct sz_queue *q = l->iq;
	uint64_t last;
	int rc = atomic_load(&l->ctx->fault);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&q->lock);
	rc = sz_cmd_launch(q, c, true);
	last = q->q->launched;
	pthread_mutex_unlock(&q->lock);
	if (rc == 0 && q->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) {
		sf_hwq_wait(q->q, last);
		rc = atomic_load(&l->ctx->fault);
	}
	return rc;
}

/* Stores @c (its events taken) at the end of regular list @l. */
static ze_result_t sz_append_record(struct sz_list *l, const struct sz_cmd *c)
{
	if (l->closed)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct sz_cmd *v = realloc(l->cmds, cap * sizeof(*v));

		if (!v)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		l->cmds = v;
		l->cap = cap;
	}
	l->cmds[l->n++] = *c;
	return ZE_RESULT_SUCCESS;
}

/*
 * Every append ends here: @checked is the result of the append's own
 * argument checks (made while building @c), reported after the list's.
 * Takes the events, then records @c on a regular list or launches it on an
 * immediate one. @c's wait list is the list's or freed, whatever happens.
 */
static ze_result_t sz_append(ze_command_list_handle_t h, ze_result_t checked, struct sz_cmd *c,
			     ze_event_handle_t hSignal, uint32_t nwait, ze_event_handle_t *phWait)
{
	ze_result_t r;
	struct sz_list *l = sz_get(h, SZ_M_LIST, &r);

	if (l && checked != ZE_RESULT_SUCCESS)
		r = checked;
	if (r == ZE_RESULT_SUCCESS)
		r = sz_cmd_events(c, hSignal, nwait, phWait);
	if (r == ZE_RESULT_SUCCESS) {
		c->ctx = l->ctx;
		if (l->immediate)
			r = sz_result(sz_append_now(l, c));
		else
			r = sz_append_record(l, c);
		if (r == ZE_RESULT_SUCCESS && !l->immediate)
			return r;
	}
	sz_cmd_fini(c);
	return r;
}

static ze_result_t sz_launch(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
			     const ze_group_count_t *args, ze_event_handle_t hSignalEvent,
			     uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_KERNEL };
	struct sz_kernel *k = sz_obj(hKernel, SZ_M_KERNEL);
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (!k) {
		r = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else if (!args) {
		r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	} else {
		c.u.kernel.def = k->def;
		memcpy(c.u.kernel.params, k->params, sizeof(c.u.kernel.params));
		memcpy(c.u.kernel.group, k->group, sizeof(c.u.kernel.group));
		c.u.kernel.count = *args;
	}
	return sz_append(hCommandList, r, &c, hSignalEvent, numWaitEvents, phWaitEvents);
}

/* The kernel's arguments and group size are captured now. */
ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
					    ze_kernel_handle_t hKernel,
					    const ze_group_count_t *pLaunchFuncArgs,
					    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
					    ze_event_handle_t *phWaitEvents)
{
	return sz_launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents,
			 phWaitEvents);
}

/* Every launch is cooperative on a device that runs one command at a time. */
ze_result_t zeCommandListAppendLaunchCooperativeKernel(ze_command_list_handle_t hCommandList,
						       ze_kernel_handle_t hKernel,
						       const ze_group_count_t *pLaunchFuncArgs,
						       ze_event_handle_t hSignalEvent,
						       uint32_t numWaitEvents,
						       ze_event_handle_t *phWaitEvents)
{
	return sz_launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents,
			 phWaitEvents);
}

/*
 * Classifies [@p, @p + @len): *@reg tells whether it lies in driver memory
 * (checked again when the command runs). -EINVAL if it runs into or out of
 * an allocation.
 */
static int sz_side(const void *p, size_t len, bool *reg)
{
	enum sf_mem_kind kind;

	if (!len) {
		*reg = false;
		return 0;
	}
	if (sf_mem_classify(p, len, &kind) < 0)
		return -EINVAL;
	*reg = kind != SF_MEM_PAGEABLE;
	return 0;
}

static bool sz_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return alen && blen && x < y + blen && y < x + alen;
}

/* Fills @rg's sides from its pointers and spans, checking them. */
static ze_result_t sz_region_sides(struct sf_region *rg, size_t dspan, size_t sspan)
{
	if (sz_overlap(rg->dst, dspan, rg->src, sspan))
		return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
	if (sz_side(rg->dst, dspan, &rg->dst_reg) < 0 || sz_side(rg->src, sspan, &rg->src_reg) < 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList, void *dstptr,
					  const void *srcptr, size_t size,
					  ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
					  ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_COPY };
	struct sf_region *rg = &c.u.copy;
	ze_result_t r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;

	rg->dst = dstptr;
	rg->src = srcptr;
	rg->dpitch = rg->spitch = size;
	rg->width = size;
	rg->height = rg->depth = 1;
	if (dstptr && srcptr)
		r = sz_region_sides(rg, size, size);
	return sz_append(hCommandList, r, &c, hSignalEvent, numWaitEvents, phWaitEvents);
}

/* Bytes a region of @r's shape with pitches @pitch and @slice spans. */
static size_t sz_span(const ze_copy_region_t *r, size_t pitch, size_t slice)
{
	if (!r->width || !r->height || !r->depth)
		return 0;
	return sf_span(r->width, r->height, r->depth, pitch, slice);
}

/* The region copy's checks and descriptor, pitches in bytes. */
static ze_result_t sz_region(struct sf_region *rg, void *dstptr, const ze_copy_region_t *d,
			     uint32_t dpitch, uint32_t dslice, const void *srcptr,
			     const ze_copy_region_t *s, uint32_t spitch, uint32_t sslice)
{
	if (!dstptr || !d || !srcptr || !s)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (d->width != s->width || d->height != s->height || d->depth != s->depth ||
	    (d->height > 1 && (dpitch < d->width || spitch < s->width)) ||
	    (d->depth > 1 && ((uint64_t)dslice < (uint64_t)dpitch * d->height ||
			      (uint64_t)sslice < (uint64_t)spitch * s->height)))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	rg->dst = (uint8_t *)dstptr + (size_t)d->originZ * dslice + (size_t)d->originY * dpitch +
		  d->originX;
	rg->src = (const uint8_t *)srcptr + (size_t)s->originZ * sslice +
		  (size_t)s->originY * spitch + s->originX;
	rg->dpitch = dpitch;
	rg->dslice = dslice;
	rg->spitch = spitch;
	rg->sslice = sslice;
	rg->width = d->width;
	rg->height = d->height;
	rg->depth = d->depth;
	return sz_region_sides(rg, sz_span(d, dpitch, dslice), sz_span(s, spitch, sslice));
}

/* Widths are in bytes; a 2D copy (depth 1) may pass slice pitches of 0. */
ze_result_t zeCommandListAppendMemoryCopyRegion(ze_command_list_handle_t hCommandList,
						void *dstptr, const ze_copy_region_t *dstRegion,
						uint32_t dstPitch, uint32_t dstSlicePitch,
						const void *srcptr,
						const ze_copy_region_t *srcRegion,
						uint32_t srcPitch, uint32_t srcSlicePitch,
						ze_event_handle_t hSignalEvent,
						uint32_t numWaitEvents,
						ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_COPY };
	ze_result_t r = sz_region(&c.u.copy, dstptr, dstRegion, dstPitch, dstSlicePitch, srcptr,
				  srcRegion, srcPitch, srcSlicePitch);

	return sz_append(hCommandList, r, &c, hSignalEvent, numWaitEvents, phWaitEvents);
}

/*
 * The pattern (a power of two up to SZ_PATTERN_MAX bytes) is copied now;
 * a size that is not a multiple of it ends with a partial pattern.
 */
ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t hCommandList, void *ptr,
					  const void *pattern, size_t pattern_size, size_t size,
					  ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
					  ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_FILL };
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (!ptr || !pattern)
		r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	else if (!pattern_size || pattern_size > SZ_PATTERN_MAX ||
		 (pattern_size & (pattern_size - 1)))
		r = ZE_RESULT_ERROR_INVALID_SIZE;
	else if (sz_side(ptr, size, &c.u.fill.reg) < 0)
		r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
	else
		memcpy(c.u.fill.pattern, pattern, pattern_size);
	c.u.fill.dst = ptr;
	c.u.fill.size = size;
	c.u.fill.psize = pattern_size;
	return sz_append(hCommandList, r, &c, hSignalEvent, numWaitEvents, phWaitEvents);
}

/* The device is in order: a barrier is only its waits and its signal. */
ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList,
				       ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
				       ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_BARRIER };

	return sz_append(hCommandList, ZE_RESULT_SUCCESS, &c, hSignalEvent, numWaitEvents,
			 phWaitEvents);
}

ze_result_t zeCommandListAppendMemoryRangesBarrier(ze_command_list_handle_t hCommandList,
						   uint32_t numRanges, const size_t *pRangeSizes,
						   const void **pRanges,
						   ze_event_handle_t hSignalEvent,
						   uint32_t numWaitEvents,
						   ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_BARRIER };
	ze_result_t r = ZE_RESULT_SUCCESS;

	(void)numRanges;
	if (!pRangeSizes || !pRanges)
		r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return sz_append(hCommandList, r, &c, hSignalEvent, numWaitEvents, phWaitEvents);
}

/* A NULL event is INVALID_NULL_HANDLE here (it is the command, not an option). */
static ze_result_t sz_event_arg(ze_event_handle_t hEvent)
{
	return sz_obj(hEvent, SZ_M_EVENT) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

ze_result_t zeCommandListAppendSignalEvent(ze_command_list_handle_t hCommandList,
					   ze_event_handle_t hEvent)
{
	struct sz_cmd c = { .kind = SZ_C_SIGNAL };
	ze_result_t r = sz_event_arg(hEvent);

	return sz_append(hCommandList, r, &c, r == ZE_RESULT_SUCCESS ? hEvent : NULL, 0, NULL);
}

ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t hCommandList,
					    uint32_t numEvents, ze_event_handle_t *phEvents)
{
	struct sz_cmd c = { .kind = SZ_C_WAIT };
	ze_result_t r = phEvents ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER;

	return sz_append(hCommandList, r, &c, NULL, numEvents, phEvents);
}

ze_result_t zeCommandListAppendEventReset(ze_command_list_handle_t hCommandList,
					  ze_event_handle_t hEvent)
{
	struct sz_cmd c = { .kind = SZ_C_RESET };
	ze_result_t r = sz_event_arg(hEvent);

	c.u.reset = sz_obj(hEvent, SZ_M_EVENT);
	return sz_append(hCommandList, r, &c, NULL, 0, NULL);
}

/* Writes the device time (ns) when the queue gets there. */
ze_result_t zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t hCommandList,
						    uint64_t *dstptr,
						    ze_event_handle_t hSignalEvent,
						    uint32_t numWaitEvents,
						    ze_event_handle_t *phWaitEvents)
{
	struct sz_cmd c = { .kind = SZ_C_TIMESTAMP };
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (!dstptr)
		r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	else if (sz_side(dstptr, sizeof(*dstptr), &c.u.ts.reg) < 0)
		r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
	c.u.ts.dst = dstptr;
	return sz_append(hCommandList, r, &c, hSignalEvent, numWaitEvents, phWaitEvents);
}

/* Memory is host memory: prefetching has nothing to move. */
ze_result_t zeCommandListAppendMemoryPrefetch(ze_command_list_handle_t hCommandList,
					      const void *ptr, size_t size)
{
	ze_result_t r;

	(void)size;
	if (!sz_get(hCommandList, SZ_M_LIST, &r))
		return r;
	return ptr ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
}

/* Advice is accepted and has no effect. */
ze_result_t zeCommandListAppendMemAdvise(ze_command_list_handle_t hCommandList,
					 ze_device_handle_t hDevice, const void *ptr, size_t size,
					 ze_memory_advice_t advice)
{
	ze_result_t r;

	(void)size;
	if (!sz_get(hCommandList, SZ_M_LIST, &r))
		return r;
	if (!sz_obj(hDevice, SZ_M_DEVICE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!ptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (advice > ZE_MEMORY_ADVICE_BIAS_UNCACHED)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	return ZE_RESULT_SUCCESS;
}
