/*
 * The synchronous hooks (see cl_shim.h): calls that go to the driver at
 * once on a scheduled queue, because the application needs their result
 * at once (maps) or because they are rare (native kernels, SVM free and
 * migration, memory migration, GL/EGL acquire/release), after the queue's
 * earlier work (cl_q_settle(): launched now, whatever the scheduler says,
 * never waiting for a command or a resume); and the calls that wait for
 * or flush a whole queue.
 */
#include "shim/opencl/cl_cmds.h"

XS_CL_HOOK cl_int clFinish(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);

	if (q)
		xq_wait_all(q->xq);
	return cl_load() < 0 ? CL_INVALID_COMMAND_QUEUE : cl_real.clFinish(queue);
}

XS_CL_HOOK cl_int clFlush(cl_command_queue queue)
{
	/* Buffered commands launch on their own; the driver gets the flush. */
	return cl_load() < 0 ? CL_INVALID_COMMAND_QUEUE : cl_real.clFlush(queue);
}

/* cl_q_settle() for a queue the shim may not schedule. */
static cl_int clc_drain(cl_command_queue cq)
{
	struct cl_q *q = cl_q_scheduled(cq);

	return q ? cl_q_settle(q) : CL_SUCCESS;
}

/* A call that goes to the driver at once on @cq, once drained. */
#define CLC_DRAINED(cq, call)                                   \
	({                                                      \
		cl_int drained_ = clc_drain(cq);                \
		drained_ != CL_SUCCESS ? drained_ : CLC_REAL(call); \
	})

XS_CL_HOOK void *clEnqueueMapBuffer(cl_command_queue cq, cl_mem buf, cl_bool blocking,
				    cl_map_flags flags, size_t off, size_t size, cl_uint nwait,
				    const cl_event *wait, cl_event *event, cl_int *err)
{
	struct cl_q *q;
	cl_int rc;
	void *p;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_COMMAND_QUEUE;
		return NULL;
	}
	q = cl_q_scheduled(cq);
	if (q && (rc = cl_q_settle(q)) != CL_SUCCESS) {
		if (err)
			*err = rc;
		return NULL;
	}
	p = cl_real.clEnqueueMapBuffer(cq, buf, blocking, flags, off, size, nwait, wait, event,
				       err);
	if (p && q)
		cl_map_note(buf, p);
	return p;
}

XS_CL_HOOK void *clEnqueueMapImage(cl_command_queue cq, cl_mem image, cl_bool blocking,
				   cl_map_flags flags, const size_t *origin,
				   const size_t *region, size_t *row, size_t *slice,
				   cl_uint nwait, const cl_event *wait, cl_event *event,
				   cl_int *err)
{
	struct cl_q *q;
	cl_int rc;
	void *p;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_COMMAND_QUEUE;
		return NULL;
	}
	q = cl_q_scheduled(cq);
	if (q && (rc = cl_q_settle(q)) != CL_SUCCESS) {
		if (err)
			*err = rc;
		return NULL;
	}
	p = cl_real.clEnqueueMapImage(cq, image, blocking, flags, origin, region, row, slice,
				      nwait, wait, event, err);
	if (p && q)
		cl_map_note(image, p);
	return p;
}

XS_CL_HOOK cl_int clEnqueueSVMMap(cl_command_queue cq, cl_bool blocking, cl_map_flags flags,
				  void *ptr, size_t size, cl_uint nwait, const cl_event *wait,
				  cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueSVMMap(cq, blocking, flags, ptr, size, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueNativeKernel(cl_command_queue cq, void(CL_CALLBACK *fn)(void *),
					void *args, size_t cb_args, cl_uint nmem,
					const cl_mem *mem_list, const void **args_mem_loc,
					cl_uint nwait, const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueNativeKernel(cq, fn, args, cb_args, nmem, mem_list,
					      args_mem_loc, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueMigrateMemObjects(cl_command_queue cq, cl_uint n, const cl_mem *mems,
					     cl_mem_migration_flags flags, cl_uint nwait,
					     const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueMigrateMemObjects(cq, n, mems, flags, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueSVMFree(cl_command_queue cq, cl_uint n, void *ptrs[],
				   void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[],
							 void *),
				   void *data, cl_uint nwait, const cl_event *wait,
				   cl_event *event)
{
	cl_int rc = clc_drain(cq);

	if (rc != CL_SUCCESS || cl_load() < 0)
		return rc != CL_SUCCESS ? rc : CL_INVALID_COMMAND_QUEUE;
	return cl_mem_svm_free_enqueue(cq, n, ptrs, fn, data, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueSVMMigrateMem(cl_command_queue cq, cl_uint n, const void **ptrs,
					 const size_t *sizes, cl_mem_migration_flags flags,
					 cl_uint nwait, const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueSVMMigrateMem(cq, n, ptrs, sizes, flags, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueAcquireGLObjects(cl_command_queue cq, cl_uint n, const cl_mem *mems,
					    cl_uint nwait, const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueAcquireGLObjects(cq, n, mems, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueReleaseGLObjects(cl_command_queue cq, cl_uint n, const cl_mem *mems,
					    cl_uint nwait, const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueReleaseGLObjects(cq, n, mems, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueAcquireEGLObjectsKHR(cl_command_queue cq, cl_uint n,
						const cl_mem *mems, cl_uint nwait,
						const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueAcquireEGLObjectsKHR(cq, n, mems, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueReleaseEGLObjectsKHR(cl_command_queue cq, cl_uint n,
						const cl_mem *mems, cl_uint nwait,
						const cl_event *wait, cl_event *event)
{
	return CLC_DRAINED(cq, clEnqueueReleaseEGLObjectsKHR(cq, n, mems, nwait, wait, event));
}
