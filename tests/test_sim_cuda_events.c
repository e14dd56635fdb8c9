/*
 * Events and host functions of the simulated CUDA driver: an event orders
 * one stream after another; queries, synchronisation, elapsed times and
 * destroyed events; host functions and callbacks run in stream order and
 * see the data of the work before them.
 */
#include "test_sim_cuda_util.h"

static void sc_event_cross_stream(void **state)
{
	CUstream s1, s2;
	CUdeviceptr p;
	CUevent e;

	(void)state;
	up();
	s1 = mkstream(CU_STREAM_NON_BLOCKING);
	s2 = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	gate_close(s1, 0);
	k_inc(s1, p, N);
	CK(cuEventRecord(e, s1));
	CK(cuStreamWaitEvent(s2, e, 0));
	k_scale(s2, p, 3, N);
	assert_int_equal(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuStreamSynchronize(s2));
	CK(cuEventQuery(e));
	expect_all(p, 6, N);     /* (1 + 1) * 3, not 1 * 3 + 1 */
	down();
}

static void sc_events(void **state)
{
	CUevent e0, e1, e2, nt, never;
	float ms1 = 0, ms2 = 0;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&e1, CU_EVENT_BLOCKING_SYNC));
	CK(cuEventCreate(&e2, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&never, CU_EVENT_DEFAULT));
	assert_int_equal(cuEventCreate(&never, 0x40), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuEventCreate(&never, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
	CK(cuEventQuery(never));
	CK(cuEventSynchronize(never));
	gate_close(s, 0);
	CK(cuEventRecord(e0, s));
	k_spin(s, 2000000);
	CK(cuEventRecordWithFlags(e1, s, 0));
	k_spin(s, 2000000);
	CK(cuEventRecord(e2, s));
	CK(cuEventRecord(nt, s));
	assert_int_equal(cuEventQuery(e2), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuEventElapsedTime_v2(&ms1, e0, e2), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuEventSynchronize(e2));
	CK(cuEventQuery(e2));
	CK(cuEventElapsedTime_v2(&ms1, e0, e1));
	CK(cuEventElapsedTime(&ms2, e0, e2));
	assert_true(ms1 > 0.0f);
	assert_true(ms2 > ms1);
	assert_int_equal(cuEventElapsedTime_v2(&ms1, e0, nt), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventElapsedTime_v2(&ms1, e0, never), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventElapsedTime_v2(NULL, e0, e1), CUDA_ERROR_INVALID_VALUE);
	CK(cuEventDestroy_v2(e1));
	assert_int_equal(cuEventQuery(e1), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventSynchronize(e1), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventRecord(e1, s), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamWaitEvent(s, e1, 0), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventDestroy_v2(e1), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventElapsedTime_v2(&ms1, e0, e1), CUDA_ERROR_INVALID_HANDLE);
	down();
}

struct host_log {
	int n;
	int order[8];
	uint32_t seen;
	uint32_t *pinned;
	CUresult status;
};

static void host_fn(void *arg)
{
	struct host_log *l = arg;

	l->order[l->n] = l->n + 1;
	if (l->n == 1)
		l->seen = l->pinned[0];
	l->n++;
}

static void host_cb(CUstream s, CUresult status, void *arg)
{
	struct host_log *l = arg;

	(void)s;
	l->status = status;
	host_fn(arg);
}

static void sc_host_functions(void **state)
{
	struct host_log l = { .status = -1 };
	CUdeviceptr p;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAllocHost_v2((void **)&l.pinned, N * 4));
	l.pinned[0] = 0;
	gate_close(s, 0);
	CK(cuLaunchHostFunc(s, host_fn, &l));
	k_fill(s, p, 77, N);
	CK(cuMemcpyDtoHAsync_v2(l.pinned, p, N * 4, s));
	CK(cuLaunchHostFunc(s, host_fn, &l));     /* sees the copy's data */
	k_spin(s, 100000);
	CK(cuStreamAddCallback(s, host_cb, &l, 0));
	assert_int_equal(l.n, 0);
	gate_open(0);
	CK(cuStreamSynchronize(s));
	assert_int_equal(l.n, 3);
	assert_int_equal(l.order[0], 1);
	assert_int_equal(l.order[1], 2);
	assert_int_equal(l.order[2], 3);
	assert_int_equal(l.seen, 77);
	assert_int_equal(l.status, CUDA_SUCCESS);
	assert_int_equal(cuLaunchHostFunc(s, NULL, &l), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuStreamAddCallback(s, host_cb, &l, 1), CUDA_ERROR_INVALID_VALUE);
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_event_cross_stream),
	cmocka_unit_test(sc_events),
	cmocka_unit_test(sc_host_functions),
};

TU_MAIN(tests)
