/*
 * The enqueue hooks (see cl_shim.h): each scheduled enqueue becomes a
 * command (cl_cmds.h) carrying the call's arguments, submitted to the
 * queue's XQueue. Calls that go to the driver at once (maps, native
 * kernels ...) are cl_hooks_sync.c's.
 */
#include "shim/opencl/cl_cmds.h"
#include "shim/opencl/guard/cl_guard.h"

#include <string.h>

#define CLC_NEW_OR_FAIL(k, q, op, type, kind, key)                                 \
	do {                                                                       \
		(k) = cl_cmd_new((q), (op), (type), (kind), (key));                   \
		if (!(k))                                                          \
			return CL_OUT_OF_HOST_MEMORY;                              \
	} while (0)

static void copy3(size_t *dst, const size_t *src)
{
	if (src)
		memcpy(dst, src, 3 * sizeof(*dst));
}

/* --- kernels -------------------------------------------------------------------- */

/*
 * A launch that goes straight to the driver (an unscheduled queue, a
 * forked child) runs an instrumented kernel with its guardian off.
 */
static void clc_guard_off(cl_kernel kernel)
{
	if (cl_load() == 0)
		cl_guard_set_args(kernel, cl_kernel_hidden(kernel, NULL), NULL);
}

/*
 * Whether launch @k may be cut (Lv2): an instrumented kernel on a queue
 * with the guardian, of a known NDRange. A launch without a local size
 * lets the driver choose the groups, which a relaunch would have to find
 * the same: it cannot be cut, and its queue goes to level 1 (as with an
 * uninstrumented kernel). A launch that may be cut keeps its arguments
 * from the enqueue on (a relaunch replays them).
 */
static void clc_guard(struct cl_cmd *k)
{
	uint64_t groups = 1, items = 1;

	for (cl_uint d = 0; k->op == OP_NDRANGE && d < k->dim; d++) {
		items *= k->gsize[d];
		if (k->has_local && k->lsize[d])
			groups *= (k->gsize[d] + k->lsize[d] - 1) / k->lsize[d];
		if (groups > UINT32_MAX || items > UINT64_MAX / 4)
			groups = 0;
	}
	/* One work-item is one group whatever the driver chooses. */
	if (k->op == OP_NDRANGE && !k->has_local && items != 1) {
		cl_q_note_kernel(k->q, k->kernel, k->hidden,
				 "launched without a local size (it cannot be cut)");
		return;
	}
	cl_q_note_kernel(k->q, k->kernel, k->hidden, NULL);
	if (k->hidden < 0 || !(k->q->hwq->caps & XAL_CAP_LV2) || !groups || !items ||
	    cl_kernel_snapshot(k->kernel, &k->snap) != CL_SUCCESS)
		return;
	k->c.g.on = true;
	k->c.g.groups = groups;
	atomic_fetch_add_explicit(&cl_stat_guarded, 1, memory_order_relaxed);
}

XS_CL_HOOK cl_int clEnqueueNDRangeKernel(cl_command_queue cq, cl_kernel kernel, cl_uint dim,
					 const size_t *goff, const size_t *gsize,
					 const size_t *lsize, cl_uint nwait,
					 const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !kernel || dim < 1 || dim > 3 || !gsize) {
		clc_guard_off(kernel);
		return CLC_REAL(clEnqueueNDRangeKernel(cq, kernel, dim, goff, gsize, lsize,
						       nwait, wait, event));
	}
	CLC_NEW_OR_FAIL(k, q, OP_NDRANGE, CL_COMMAND_NDRANGE_KERNEL, XAL_CMD_KERNEL,
			(uint64_t)(uintptr_t)kernel);
	k->kernel = kernel;
	k->hidden = cl_kernel_hidden(kernel, NULL);
	k->dim = dim;
	memcpy(k->gsize, gsize, dim * sizeof(size_t));
	if ((k->has_offset = goff != NULL))
		memcpy(k->goff, goff, dim * sizeof(size_t));
	if ((k->has_local = lsize != NULL))
		memcpy(k->lsize, lsize, dim * sizeof(size_t));
	clc_guard(k);
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueTask(cl_command_queue cq, cl_kernel kernel, cl_uint nwait,
				const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !kernel) {
		clc_guard_off(kernel);
		return CLC_REAL(clEnqueueTask(cq, kernel, nwait, wait, event));
	}
	CLC_NEW_OR_FAIL(k, q, OP_TASK, CL_COMMAND_TASK, XAL_CMD_KERNEL,
			(uint64_t)(uintptr_t)kernel);
	k->kernel = kernel;
	k->hidden = cl_kernel_hidden(kernel, NULL);
	clc_guard(k);
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

/* --- buffers ---------------------------------------------------------------------- */

static cl_int clc_buffer(struct cl_q *q, enum cl_op op, cl_command_type type,
			 uint32_t kind, cl_mem m0, cl_mem m1, size_t off0, size_t off1,
			 size_t size, void *ptr, const void *cptr, cl_bool blocking,
			 cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_cmd *k;

	CLC_NEW_OR_FAIL(k, q, op, type, kind, 0);
	k->mem[0] = m0;
	k->mem[1] = m1;
	k->off[0] = off0;
	k->off[1] = off1;
	k->size = size;
	k->ptr = ptr;
	k->cptr = cptr;
	return cl_cmd_submit(k, nwait, wait, event, blocking);
}

XS_CL_HOOK cl_int clEnqueueReadBuffer(cl_command_queue cq, cl_mem buf, cl_bool blocking,
				      size_t off, size_t size, void *ptr, cl_uint nwait,
				      const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !ptr || !size)
		return CLC_REAL(clEnqueueReadBuffer(cq, buf, blocking, off, size, ptr, nwait,
						    wait, event));
	return clc_buffer(q, OP_READ, CL_COMMAND_READ_BUFFER, XAL_CMD_COPY, buf, NULL, off, 0,
			  size, ptr, NULL, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueWriteBuffer(cl_command_queue cq, cl_mem buf, cl_bool blocking,
				       size_t off, size_t size, const void *ptr, cl_uint nwait,
				       const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !ptr || !size)
		return CLC_REAL(clEnqueueWriteBuffer(cq, buf, blocking, off, size, ptr, nwait,
						     wait, event));
	return clc_buffer(q, OP_WRITE, CL_COMMAND_WRITE_BUFFER, XAL_CMD_COPY, buf, NULL, off, 0,
			  size, NULL, ptr, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyBuffer(cl_command_queue cq, cl_mem src, cl_mem dst,
				      size_t src_off, size_t dst_off, size_t size,
				      cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !size)
		return CLC_REAL(clEnqueueCopyBuffer(cq, src, dst, src_off, dst_off, size, nwait,
						    wait, event));
	return clc_buffer(q, OP_COPY, CL_COMMAND_COPY_BUFFER, XAL_CMD_COPY, src, dst, src_off,
			  dst_off, size, NULL, NULL, CL_FALSE, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueFillBuffer(cl_command_queue cq, cl_mem buf, const void *pattern,
				      size_t pattern_size, size_t off, size_t size,
				      cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !pattern || !pattern_size || pattern_size > 128 ||
	    (pattern_size & (pattern_size - 1)))
		return CLC_REAL(clEnqueueFillBuffer(cq, buf, pattern, pattern_size, off, size,
						    nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_FILL, CL_COMMAND_FILL_BUFFER, XAL_CMD_MEMSET, 0);
	k->mem[0] = buf;
	k->off[0] = off;
	k->size = size;
	memcpy(k->pattern, pattern, pattern_size);
	k->pattern_size = pattern_size;
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

/* Rectangular transfers: origins, region and pitches copied. */
static cl_int clc_rect(struct cl_q *q, enum cl_op op, cl_command_type type, cl_mem m0,
		       cl_mem m1, const size_t *o1, const size_t *o2, const size_t *region,
		       const size_t pitch[4], void *ptr, const void *cptr, cl_bool blocking,
		       cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_cmd *k;

	CLC_NEW_OR_FAIL(k, q, op, type, XAL_CMD_COPY, 0);
	k->mem[0] = m0;
	k->mem[1] = m1;
	copy3(k->o1, o1);
	copy3(k->o2, o2);
	copy3(k->region, region);
	memcpy(k->pitch, pitch, sizeof(k->pitch));
	k->ptr = ptr;
	k->cptr = cptr;
	return cl_cmd_submit(k, nwait, wait, event, blocking);
}

XS_CL_HOOK cl_int clEnqueueReadBufferRect(cl_command_queue cq, cl_mem buf, cl_bool blocking,
					  const size_t *buf_origin, const size_t *host_origin,
					  const size_t *region, size_t buf_row, size_t buf_slice,
					  size_t host_row, size_t host_slice, void *ptr,
					  cl_uint nwait, const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { buf_row, buf_slice, host_row, host_slice };
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !buf_origin || !host_origin || !region || !ptr)
		return CLC_REAL(clEnqueueReadBufferRect(cq, buf, blocking, buf_origin,
							host_origin, region, buf_row, buf_slice,
							host_row, host_slice, ptr, nwait, wait,
							event));
	return clc_rect(q, OP_READ_RECT, CL_COMMAND_READ_BUFFER_RECT, buf, NULL, buf_origin,
			host_origin, region, pitch, ptr, NULL, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueWriteBufferRect(cl_command_queue cq, cl_mem buf, cl_bool blocking,
					   const size_t *buf_origin, const size_t *host_origin,
					   const size_t *region, size_t buf_row,
					   size_t buf_slice, size_t host_row, size_t host_slice,
					   const void *ptr, cl_uint nwait, const cl_event *wait,
					   cl_event *event)
{
	const size_t pitch[4] = { buf_row, buf_slice, host_row, host_slice };
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !buf_origin || !host_origin || !region || !ptr)
		return CLC_REAL(clEnqueueWriteBufferRect(cq, buf, blocking, buf_origin,
							 host_origin, region, buf_row, buf_slice,
							 host_row, host_slice, ptr, nwait, wait,
							 event));
	return clc_rect(q, OP_WRITE_RECT, CL_COMMAND_WRITE_BUFFER_RECT, buf, NULL, buf_origin,
			host_origin, region, pitch, NULL, ptr, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyBufferRect(cl_command_queue cq, cl_mem src, cl_mem dst,
					  const size_t *src_origin, const size_t *dst_origin,
					  const size_t *region, size_t src_row, size_t src_slice,
					  size_t dst_row, size_t dst_slice, cl_uint nwait,
					  const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { src_row, src_slice, dst_row, dst_slice };
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !src_origin || !dst_origin || !region)
		return CLC_REAL(clEnqueueCopyBufferRect(cq, src, dst, src_origin, dst_origin,
							region, src_row, src_slice, dst_row,
							dst_slice, nwait, wait, event));
	return clc_rect(q, OP_COPY_RECT, CL_COMMAND_COPY_BUFFER_RECT, src, dst, src_origin,
			dst_origin, region, pitch, NULL, NULL, CL_FALSE, nwait, wait, event);
}

/* --- images -------------------------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueReadImage(cl_command_queue cq, cl_mem image, cl_bool blocking,
				     const size_t *origin, const size_t *region, size_t row,
				     size_t slice, void *ptr, cl_uint nwait,
				     const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { row, slice, 0, 0 };
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !origin || !region || !ptr)
		return CLC_REAL(clEnqueueReadImage(cq, image, blocking, origin, region, row,
						   slice, ptr, nwait, wait, event));
	return clc_rect(q, OP_READ_IMAGE, CL_COMMAND_READ_IMAGE, image, NULL, origin, NULL,
			region, pitch, ptr, NULL, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueWriteImage(cl_command_queue cq, cl_mem image, cl_bool blocking,
				      const size_t *origin, const size_t *region, size_t row,
				      size_t slice, const void *ptr, cl_uint nwait,
				      const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { row, slice, 0, 0 };
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !origin || !region || !ptr)
		return CLC_REAL(clEnqueueWriteImage(cq, image, blocking, origin, region, row,
						    slice, ptr, nwait, wait, event));
	return clc_rect(q, OP_WRITE_IMAGE, CL_COMMAND_WRITE_IMAGE, image, NULL, origin, NULL,
			region, pitch, NULL, ptr, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyImage(cl_command_queue cq, cl_mem src, cl_mem dst,
				     const size_t *src_origin, const size_t *dst_origin,
				     const size_t *region, cl_uint nwait, const cl_event *wait,
				     cl_event *event)
{
	static const size_t pitch[4];
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !src_origin || !dst_origin || !region)
		return CLC_REAL(clEnqueueCopyImage(cq, src, dst, src_origin, dst_origin, region,
						   nwait, wait, event));
	return clc_rect(q, OP_COPY_IMAGE, CL_COMMAND_COPY_IMAGE, src, dst, src_origin,
			dst_origin, region, pitch, NULL, NULL, CL_FALSE, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyImageToBuffer(cl_command_queue cq, cl_mem src, cl_mem dst,
					     const size_t *src_origin, const size_t *region,
					     size_t dst_off, cl_uint nwait, const cl_event *wait,
					     cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !src_origin || !region)
		return CLC_REAL(clEnqueueCopyImageToBuffer(cq, src, dst, src_origin, region,
							   dst_off, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_IMAGE_TO_BUFFER, CL_COMMAND_COPY_IMAGE_TO_BUFFER, XAL_CMD_COPY,
			0);
	k->mem[0] = src;
	k->mem[1] = dst;
	copy3(k->o1, src_origin);
	copy3(k->region, region);
	k->off[1] = dst_off;
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueCopyBufferToImage(cl_command_queue cq, cl_mem src, cl_mem dst,
					     size_t src_off, const size_t *dst_origin,
					     const size_t *region, cl_uint nwait,
					     const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !dst_origin || !region)
		return CLC_REAL(clEnqueueCopyBufferToImage(cq, src, dst, src_off, dst_origin,
							   region, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_BUFFER_TO_IMAGE, CL_COMMAND_COPY_BUFFER_TO_IMAGE, XAL_CMD_COPY,
			0);
	k->mem[0] = src;
	k->mem[1] = dst;
	k->off[0] = src_off;
	copy3(k->o2, dst_origin);
	copy3(k->region, region);
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueFillImage(cl_command_queue cq, cl_mem image, const void *color,
				     const size_t *origin, const size_t *region, cl_uint nwait,
				     const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !color || !origin || !region)
		return CLC_REAL(clEnqueueFillImage(cq, image, color, origin, region, nwait, wait,
						   event));
	CLC_NEW_OR_FAIL(k, q, OP_FILL_IMAGE, CL_COMMAND_FILL_IMAGE, XAL_CMD_MEMSET, 0);
	k->mem[0] = image;
	/* A fill color is four 32-bit components at most. */
	memcpy(k->pattern, color, 16);
	copy3(k->o1, origin);
	copy3(k->region, region);
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

/* --- unmap, markers, barriers ---------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueUnmapMemObject(cl_command_queue cq, cl_mem mem, void *ptr,
					  cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;
	cl_int rc;

	if (!q || !ptr)
		return CLC_REAL(clEnqueueUnmapMemObject(cq, mem, ptr, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_UNMAP, CL_COMMAND_UNMAP_MEM_OBJECT, XAL_CMD_OTHER, 0);
	k->mem[0] = mem;
	k->ptr = ptr;
	rc = cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
	if (rc == CL_SUCCESS)
		cl_map_find(mem, ptr, true);
	return rc;
}

static cl_int clc_sync_cmd(struct cl_q *q, enum cl_op op, cl_command_type type,
			   cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_cmd *k;

	CLC_NEW_OR_FAIL(k, q, op, type, XAL_CMD_EVENT, 0);
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueMarkerWithWaitList(cl_command_queue cq, cl_uint nwait,
					      const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q)
		return CLC_REAL(clEnqueueMarkerWithWaitList(cq, nwait, wait, event));
	return clc_sync_cmd(q, OP_MARKER, CL_COMMAND_MARKER, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueBarrierWithWaitList(cl_command_queue cq, cl_uint nwait,
					       const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q)
		return CLC_REAL(clEnqueueBarrierWithWaitList(cq, nwait, wait, event));
	return clc_sync_cmd(q, OP_BARRIER, CL_COMMAND_BARRIER, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueMarker(cl_command_queue cq, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !event)
		return CLC_REAL(clEnqueueMarker(cq, event));
	return clc_sync_cmd(q, OP_MARKER, CL_COMMAND_MARKER, 0, NULL, event);
}

XS_CL_HOOK cl_int clEnqueueBarrier(cl_command_queue cq)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q)
		return CLC_REAL(clEnqueueBarrier(cq));
	return clc_sync_cmd(q, OP_BARRIER, CL_COMMAND_BARRIER, 0, NULL, NULL);
}

XS_CL_HOOK cl_int clEnqueueWaitForEvents(cl_command_queue cq, cl_uint n, const cl_event *list)
{
	struct cl_q *q = cl_q_scheduled(cq);

	if (!q || !n || !list)
		return CLC_REAL(clEnqueueWaitForEvents(cq, n, list));
	/* A barrier on the events: later commands wait for them. */
	return clc_sync_cmd(q, OP_BARRIER, CL_COMMAND_BARRIER, n, list, NULL);
}

/* --- shared virtual memory -------------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueSVMMemcpy(cl_command_queue cq, cl_bool blocking, void *dst,
				     const void *src, size_t size, cl_uint nwait,
				     const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !dst || !src || !size)
		return CLC_REAL(clEnqueueSVMMemcpy(cq, blocking, dst, src, size, nwait, wait,
						   event));
	CLC_NEW_OR_FAIL(k, q, OP_SVM_MEMCPY, CL_COMMAND_SVM_MEMCPY, XAL_CMD_COPY, 0);
	k->ptr = dst;
	k->cptr = src;
	k->size = size;
	return cl_cmd_submit(k, nwait, wait, event, blocking);
}

XS_CL_HOOK cl_int clEnqueueSVMMemFill(cl_command_queue cq, void *ptr, const void *pattern,
				      size_t pattern_size, size_t size, cl_uint nwait,
				      const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !ptr || !pattern || !pattern_size || pattern_size > 128 ||
	    (pattern_size & (pattern_size - 1)) || size % pattern_size)
		return CLC_REAL(clEnqueueSVMMemFill(cq, ptr, pattern, pattern_size, size, nwait,
						    wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_SVM_FILL, CL_COMMAND_SVM_MEMFILL, XAL_CMD_MEMSET, 0);
	k->ptr = ptr;
	memcpy(k->pattern, pattern, pattern_size);
	k->pattern_size = pattern_size;
	k->size = size;
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueSVMUnmap(cl_command_queue cq, void *ptr, cl_uint nwait,
				    const cl_event *wait, cl_event *event)
{
	struct cl_q *q = cl_q_scheduled(cq);
	struct cl_cmd *k;

	if (!q || !ptr)
		return CLC_REAL(clEnqueueSVMUnmap(cq, ptr, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_SVM_UNMAP, CL_COMMAND_SVM_UNMAP, XAL_CMD_OTHER, 0);
	k->ptr = ptr;
	return cl_cmd_submit(k, nwait, wait, event, CL_FALSE);
}
