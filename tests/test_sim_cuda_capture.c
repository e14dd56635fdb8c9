/*
 * Stream capture in the simulated CUDA driver: a captured stream runs
 * nothing until its graph is launched, captures fork and join across
 * streams through events, what invalidates a capture or is refused during
 * one, and another thread's work while a thread-local capture goes on.
 * (Graphs built node by node are test_sim_cuda_graph.c's.)
 */
#include "test_sim_cuda_util.h"

#include <pthread.h>

static void count_fn(void *arg)
{
	(*(int *)arg)++;
}

static void sc_capture_graph(void **state)
{
	CUstreamCaptureStatus cs;
	CUgraphExec exec, empty_exec;
	CUgraph g, empty;
	CUdeviceptr p;
	CUstream s, s2;
	int count = 0;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	s2 = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuStreamIsCapturing(s, &cs));
	assert_int_equal(cs, CU_STREAM_CAPTURE_STATUS_ACTIVE);
	k_inc(s, p, N);
	k_scale(s, p, 2, N);
	CK(cuLaunchHostFunc(s, count_fn, &count));
	CK(cuMemsetD8Async(p, 0, 0, s));
	CK(cuStreamEndCapture(s, &g));
	CK(cuStreamIsCapturing(s, &cs));
	assert_int_equal(cs, CU_STREAM_CAPTURE_STATUS_NONE);
	CK(cuStreamSynchronize(s));
	expect_all(p, 1, N);       /* nothing ran while capturing */
	assert_int_equal(count, 0);
	CK(cuGraphInstantiateWithFlags(&exec, g, 0));
	CK(cuGraphDestroy(g));     /* the executable graph is a copy */
	CK(cuGraphUpload(exec, s2));
	CK(cuGraphLaunch(exec, s2));
	CK(cuGraphLaunch(exec, s2));
	CK(cuStreamSynchronize(s2));
	expect_all(p, 10, N);      /* ((1 + 1) * 2 + 1) * 2 */
	assert_int_equal(count, 2);
	CK(cuGraphCreate(&empty, 0));
	CK(cuGraphInstantiateWithFlags(&empty_exec, empty, 0));
	CK(cuGraphLaunch(empty_exec, s));
	CK(cuStreamSynchronize(s));
	CK(cuGraphExecDestroy(empty_exec));
	CK(cuGraphExecDestroy(exec));
	CK(cuGraphDestroy(empty));
	assert_int_equal(cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGraphCreate(&empty, 1), CUDA_ERROR_INVALID_VALUE);
	down();
}

static void sc_capture_fork_join(void **state)
{
	CUstream s1, s2, s3;
	CUdeviceptr p, q;
	CUgraphExec exec;
	CUevent fork_ev, join_ev;
	CUgraph g;

	(void)state;
	up();
	s1 = mkstream(CU_STREAM_NON_BLOCKING);
	s2 = mkstream(CU_STREAM_NON_BLOCKING);
	s3 = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuEventCreate(&fork_ev, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&join_ev, CU_EVENT_DISABLE_TIMING));
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAlloc_v2(&q, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	CK(cuMemsetD32_v2(q, 1, N));
	CK(cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	k_inc(s1, p, N);
	CK(cuEventRecord(fork_ev, s1));
	assert_int_equal(cuEventQuery(fork_ev), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CK(cuStreamWaitEvent(s2, fork_ev, 0));    /* s2 joins the capture */
	k_scale(s2, q, 3, N);
	CK(cuEventRecord(join_ev, s2));
	CK(cuStreamWaitEvent(s1, join_ev, 0));
	k_scale(s1, p, 5, N);
	assert_int_equal(cuStreamEndCapture(s2, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	CK(cuStreamEndCapture(s1, &g));
	k_inc(s2, q, N);           /* s2 left the capture with it */
	CK(cuStreamSynchronize(s2));
	expect_all(q, 2, N);
	CK(cuGraphInstantiateWithFlags(&exec, g, 0));
	CK(cuGraphLaunch(exec, s3));
	CK(cuStreamSynchronize(s3));
	expect_all(p, 10, N);
	expect_all(q, 6, N);
	down();
}

static void sc_capture_errors(void **state)
{
	CUstreamCaptureStatus cs;
	CUstream s, b;
	CUdeviceptr p;
	CUevent e;
	CUgraph g = (CUgraph)&g;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	b = mkstream(CU_STREAM_DEFAULT);
	CK(cuEventCreate(&e, 0));
	CK(cuEventRecord(e, s));
	assert_int_equal(cuStreamBeginCapture_v2(NULL, 0), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);
	assert_int_equal(cuStreamBeginCapture_v2(s, 7), CUDA_ERROR_INVALID_VALUE);
	/* A synchronising call invalidates the capture. */
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	assert_int_equal(cuStreamBeginCapture_v2(s, 0), CUDA_ERROR_ILLEGAL_STATE);
	assert_int_equal(cuMemAlloc_v2(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CK(cuStreamIsCapturing(s, &cs));
	assert_int_equal(cs, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_null(g);
	CK(cuMemAlloc_v2(&p, 64));
	/* Waiting for uncaptured work crosses the capture boundary. */
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	CK(cuMemFree_v2(p));    /* allowed in relaxed mode */
	assert_int_equal(cuStreamWaitEvent(s, e, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* The legacy stream cannot depend on a capturing blocking stream. */
	CK(cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED));
	assert_int_equal(cuStreamAddCallback(b, NULL, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	k_spin(b, 1000);
	assert_int_equal(cuStreamIsCapturing(NULL, &cs), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	assert_int_equal(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, NULL,
					(void *[]){ &(uint64_t){ 1000 } }, NULL),
			 CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	assert_int_equal(cuStreamEndCapture(b, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	k_spin(NULL, 1000);
	CK(cuCtxSynchronize());
	down();
}

struct cap_arg {
	CUcontext ctx;
	pthread_barrier_t *bar;
	CUresult rc;
};

/* Work of another thread while the main thread captures. */
static void *cap_other(void *arg)
{
	struct cap_arg *a = arg;
	CUdeviceptr p = 0;
	CUstream s = NULL;
	uint32_t v = 0;

	a->rc = cuCtxSetCurrent(a->ctx);
	pthread_barrier_wait(a->bar);    /* the capture has begun */
	if (a->rc == CUDA_SUCCESS)
		a->rc = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	if (a->rc == CUDA_SUCCESS)
		a->rc = cuMemAlloc_v2(&p, N * 4);   /* fine: thread-local mode */
	if (a->rc == CUDA_SUCCESS)
		a->rc = l_fill(s, p, 8, N);
	if (a->rc == CUDA_SUCCESS)
		a->rc = l_inc(s, p, N);
	if (a->rc == CUDA_SUCCESS)
		a->rc = cuStreamSynchronize(s);
	if (a->rc == CUDA_SUCCESS)
		a->rc = cuMemcpyDtoHAsync_v2(&v, p + 40, 4, s);
	if (a->rc == CUDA_SUCCESS && v != 9)
		a->rc = CUDA_ERROR_UNKNOWN;
	pthread_barrier_wait(a->bar);
	return NULL;
}

static void sc_capture_other_thread(void **state)
{
	pthread_barrier_t bar;
	struct cap_arg a = { .bar = &bar };
	CUgraph g;
	CUstream s;
	CUdeviceptr p;
	pthread_t t;

	(void)state;
	up();
	a.ctx = pctx;
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	pthread_barrier_init(&bar, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, cap_other, &a), 0);
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	pthread_barrier_wait(&bar);
	k_inc(s, p, N);
	pthread_barrier_wait(&bar);       /* the other thread is done */
	assert_int_equal(pthread_join(t, NULL), 0);
	CK(a.rc);
	CK(cuStreamEndCapture(s, &g));
	pthread_barrier_destroy(&bar);
	expect_all(p, 1, N);
	CK(cuGraphDestroy(g));
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_capture_graph),
	cmocka_unit_test(sc_capture_fork_join),
	cmocka_unit_test(sc_capture_errors),
	cmocka_unit_test(sc_capture_other_thread),
};

TU_MAIN(tests)
