/*
 * The OpenCL shim's diagnostics for the tests, which look them up with
 * dlsym: linked only into the test build of the shim (build tree,
 * src/shim/opencl/test/libxsched-opencl.so, cmake/XschedShim.cmake), never
 * into the installed one, whose exports are the loader's API and the dl
 * hooks.
 */
#include "shim/opencl/cl_shim.h"

#include <errno.h>
#include <string.h>

/* How many XQueues the shim created. */
XS_CL_HOOK int xs_opencl_queues(void);

int xs_opencl_queues(void)
{
	return cl_q_count();
}

/*
 * Suspend (@on) or resume the XQueue of @queue as a scheduler would (0,
 * or a negative errno; -ENOENT for a queue the shim does not schedule);
 * the queue's level; how many commands its device cut short and it
 * launched again (tests/test_opencl_lv2.sh).
 */
XS_CL_HOOK int xs_opencl_preempt(cl_command_queue queue, int on);
XS_CL_HOOK int xs_opencl_level(cl_command_queue queue);
XS_CL_HOOK long xs_opencl_relaunches(cl_command_queue queue);

int xs_opencl_preempt(cl_command_queue queue, int on)
{
	struct cl_q *q = cl_q_of(queue);

	if (!q)
		return -ENOENT;
	return on ? xq_suspend(q->xq, 0) : xq_resume(q->xq);
}

int xs_opencl_level(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);
	xs_queue_info info;

	if (!q)
		return -ENOENT;
	xq_info(q->xq, &info);
	return info.level;
}

long xs_opencl_relaunches(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);
	xs_queue_stats st;

	if (!q)
		return -ENOENT;
	memset(&st, 0, sizeof(st));
	xq_stats(q->xq, &st);
	return (long)st.relaunches;
}
