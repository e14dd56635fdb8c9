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
XS_CL_HOOK int cl_test_queues(void);

int cl_test_queues(void)
{
	return cl_q_count();
}

/*
 * Suspend or resume the XQueue of @queue as a scheduler would: @on 0
 * resumes, 1 suspends (xq_suspend(), returns at once), 2 suspends
 * synchronously (XS_SUSPEND_SYNC: returns once the device is quiet; at
 * Lv2 once the launch in flight ran or skipped all its work-groups, at
 * Lv1 once the commands in flight completed; bench/bench_cl_preempt.c
 * times this call). Returns 0, or a negative errno (-ENOENT for a queue
 * the shim does not schedule). Also the queue's level, how many
 * commands its device cut short and it launched again
 * (tests/test_opencl_lv2.sh), how many it launched and has not seen
 * complete, how many it found cut and has not launched again yet
 * (cl_lv2_prog's order phase), how its control word reaches the device,
 * and when the device went quiet at the last synchronous suspension
 * (bench_cl_preempt's device-side latency).
 */
XS_CL_HOOK int cl_test_preempt(cl_command_queue queue, int on);
XS_CL_HOOK unsigned long long cl_test_quiet_end(cl_command_queue queue);
XS_CL_HOOK unsigned long long cl_test_quiet_start(cl_command_queue queue);
XS_CL_HOOK const char *cl_test_ctl_kind(cl_command_queue queue);
XS_CL_HOOK int cl_test_level(cl_command_queue queue);
XS_CL_HOOK long cl_test_relaunches(cl_command_queue queue);
XS_CL_HOOK long cl_test_in_flight(cl_command_queue queue);
XS_CL_HOOK long cl_test_cut_waiting(cl_command_queue queue);

int cl_test_preempt(cl_command_queue queue, int on)
{
	struct cl_q *q = cl_q_of(queue);

	if (!q)
		return -ENOENT;
	if (!on)
		return xq_resume(q->xq);
	return xq_suspend(q->xq, on == 2 ? XS_SUSPEND_SYNC : 0);
}

/*
 * After a synchronous suspension of a profiled Lv2 queue: when the device
 * went quiet, in its profiling clock (xal_cl_hwq_quiet_end(); 0 unknown).
 */
unsigned long long cl_test_quiet_end(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);

	return q && q->hwq ? xal_cl_hwq_quiet_end(q->hwq) : 0;
}

/* When that last command started, in the same clock (xal_cl_hwq_quiet_start()). */
unsigned long long cl_test_quiet_start(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);

	return q && q->hwq ? xal_cl_hwq_quiet_start(q->hwq) : 0;
}

/* How the guardian's control word reaches the device ("svm", "write"), or
 * "none" (not at Lv2, or a queue the shim does not schedule). */
const char *cl_test_ctl_kind(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);
	const char *kind = q && q->hwq ? xal_cl_hwq_ctl_kind(q->hwq) : NULL;

	return kind ? kind : "none";
}

int cl_test_level(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);
	xs_queue_info info;

	if (!q)
		return -ENOENT;
	xq_info(q->xq, &info);
	return info.level;
}

/* The XQueue statistics of @queue in @st; -ENOENT for a queue the shim
 * does not schedule. */
static int clt_stats(cl_command_queue queue, xs_queue_stats *st)
{
	struct cl_q *q = cl_q_of(queue);

	memset(st, 0, sizeof(*st));
	if (!q)
		return -ENOENT;
	xq_stats(q->xq, st);
	return 0;
}

long cl_test_relaunches(cl_command_queue queue)
{
	xs_queue_stats st;

	return clt_stats(queue, &st) < 0 ? -ENOENT : (long)st.relaunches;
}

long cl_test_in_flight(cl_command_queue queue)
{
	xs_queue_stats st;

	return clt_stats(queue, &st) < 0 ? -ENOENT : (long)st.in_flight;
}

long cl_test_cut_waiting(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);

	if (!q)
		return -ENOENT;
	return q->hwq ? (long)xal_cl_hwq_cut_waiting(q->hwq) : 0;
}
