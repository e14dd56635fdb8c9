/*
 * Green contexts of the simulated CUDA driver: SM resources split into
 * groups and made into descriptors, green contexts and their streams, and
 * how they order with the primary context's streams, by stream events and
 * by context-wide event records and waits.
 */
#include "test_sim_cuda_util.h"

/* A green context of @sm SMs (a multiple of 8) of the device. */
static CUgreenCtx mkgreen(unsigned sm)
{
	CUdevResource all, group;
	CUdevResourceDesc d;
	unsigned n = 1;
	CUgreenCtx g;

	CK(cuDeviceGetDevResource(0, &all, CU_DEV_RESOURCE_TYPE_SM));
	CK(cuDevSmResourceSplitByCount(&group, &n, &all, NULL, 0, sm));
	assert_int_equal(n, 1);
	CK(cuDevResourceGenerateDesc(&d, &group, 1));
	CK(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
	return g;
}

static CUstream mkgreen_stream(CUgreenCtx g, int prio)
{
	CUstream s;

	CK(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, prio));
	return s;
}

static void sc_green_resources(void **state)
{
	CUdevResource all, groups[4], rest, r, other;
	CUdevResourceDesc d, d2;
	CUcontext c, c2;
	CUgreenCtx g;
	unsigned n;
	int sm;

	(void)state;
	up();
	CK(cuDeviceGetAttribute(&sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
	CK(cuDeviceGetDevResource(0, &all, CU_DEV_RESOURCE_TYPE_SM));
	assert_int_equal(all.type, CU_DEV_RESOURCE_TYPE_SM);
	assert_int_equal(all.sm.smCount, sm);
	assert_int_equal(all.sm.minSmPartitionSize, 8);
	assert_int_equal(all.sm.smCoscheduledAlignment, 8);
	assert_int_equal(cuDeviceGetDevResource(0, &r, 2), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	assert_int_equal(cuDeviceGetDevResource(1, &r, CU_DEV_RESOURCE_TYPE_SM),
			 CUDA_ERROR_INVALID_DEVICE);
	/* Groups of 16 SMs: how many fit; then two of 20, rounded up to 24. */
	CK(cuDevSmResourceSplitByCount(NULL, &n, &all, NULL, 0, 16));
	assert_int_equal(n, (unsigned)sm / 16);
	n = 2;
	CK(cuDevSmResourceSplitByCount(groups, &n, &all, &rest, 0, 20));
	assert_int_equal(n, 2);
	assert_int_equal(groups[0].sm.smCount, 24);
	assert_int_equal(groups[1].sm.smCount, 24);
	assert_int_equal(rest.sm.smCount, (unsigned)sm - 48);
	n = 2;
	CK(cuDevSmResourceSplitByCount(groups + 2, &n, &all, NULL,
				       CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 3));
	assert_int_equal(n, 2);
	assert_int_equal(groups[2].sm.smCount, 4);
	n = 1;
	assert_int_equal(cuDevSmResourceSplitByCount(&r, &n, &all, NULL, 0, (unsigned)sm + 1),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuDevSmResourceSplitByCount(&r, &n, &groups[0], NULL, 0, 8),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuDevSmResourceSplitByCount(&r, &n, &all, NULL, 0x100, 8),
			 CUDA_ERROR_INVALID_VALUE);
	memset(&other, 0, sizeof(other));
	other.type = CU_DEV_RESOURCE_TYPE_SM;
	other.sm.smCount = 8;
	assert_int_equal(cuDevSmResourceSplitByCount(&r, &n, &other, NULL, 0, 8),
			 CUDA_ERROR_INVALID_VALUE);
	/* One descriptor from one split's results; not from two splits. */
	CK(cuDevResourceGenerateDesc(&d, groups, 2));
	CK(cuDevResourceGenerateDesc(&d2, &rest, 1));
	assert_int_equal(cuDevResourceGenerateDesc(&d2, groups + 1, 2),
			 CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
	assert_int_equal(cuDevResourceGenerateDesc(&d2, groups, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGreenCtxCreate(&g, d, 0, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGreenCtxCreate(&g, (CUdevResourceDesc)&g, 0,
					  CU_GREEN_CTX_DEFAULT_STREAM), CUDA_ERROR_INVALID_VALUE);
	CK(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
	CK(cuCtxFromGreenCtx(&c, g));
	CK(cuCtxFromGreenCtx(&c2, g));
	assert_ptr_equal(c, c2);
	assert_ptr_not_equal(c, pctx);
	CK(cuGreenCtxGetDevResource(g, &r, CU_DEV_RESOURCE_TYPE_SM));
	assert_int_equal(r.sm.smCount, 48);
	/* The green context's own context is not the application's to destroy. */
	assert_int_equal(cuCtxDestroy_v2(c), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuGreenCtxDestroy(g));
	assert_int_equal(cuGreenCtxDestroy(g), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxFromGreenCtx(&c, g), CUDA_ERROR_INVALID_CONTEXT);
	down();
}

/*
 * A green context's streams compute, and order with the primary context's
 * streams through the primary's events, both ways; its context can be made
 * current, and its legacy stream used.
 */
static void sc_green_streams(void **state)
{
	CUstream gs, s, bad;
	CUgreenCtx g, g2 = (CUgreenCtx)&g2;
	CUcontext c, c2;
	CUdeviceptr p, q;
	CUevent e, f;
	unsigned flags;
	int prio;

	(void)state;
	up();
	g = mkgreen(16);
	CK(cuCtxFromGreenCtx(&c, g));
	assert_int_equal(cuGreenCtxStreamCreate(&bad, g, CU_STREAM_DEFAULT, 0),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGreenCtxStreamCreate(&bad, (CUgreenCtx)&bad, CU_STREAM_NON_BLOCKING, 0),
			 CUDA_ERROR_INVALID_CONTEXT);
	gs = mkgreen_stream(g, -3);
	CK(cuStreamGetPriority(gs, &prio));
	assert_int_equal(prio, -3);
	CK(cuStreamGetFlags(gs, &flags));
	assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
	CK(cuStreamGetCtx(gs, &c2));
	assert_ptr_equal(c2, c);
	CK(cuStreamGetCtx_v2(gs, &c2, &g2));
	assert_ptr_equal(c2, pctx);
	assert_ptr_equal(g2, g);
	CK(cuStreamGetGreenCtx(gs, &g2));
	assert_ptr_equal(g2, g);
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuStreamGetGreenCtx(s, &g2));
	assert_null(g2);

	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAlloc_v2(&q, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	CK(cuMemsetD32_v2(q, 1, N));
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&f, CU_EVENT_DISABLE_TIMING));
	/* Green stream, then the primary's stream. */
	gate_close(gs, 0);
	k_inc(gs, p, N);
	CK(cuEventRecord(e, gs));
	CK(cuStreamWaitEvent(s, e, 0));
	k_scale(s, p, 3, N);
	assert_int_equal(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuStreamSynchronize(s));
	expect_all(p, 6, N);
	/* The primary's stream, then the green stream. */
	gate_close(s, 1);
	k_inc(s, q, N);
	CK(cuEventRecord(f, s));
	CK(cuStreamWaitEvent(gs, f, 0));
	k_scale(gs, q, 5, N);
	assert_int_equal(cuStreamQuery(gs), CUDA_ERROR_NOT_READY);
	gate_open(1);
	CK(cuStreamSynchronize(gs));
	expect_all(q, 10, N);
	/* Current, with its legacy stream. */
	CK(cuCtxSetCurrent(c));
	k_fill(NULL, p, 4, N);
	k_inc(NULL, p, N);
	CK(cuCtxSynchronize());
	CK(cuCtxSetCurrent(pctx));
	expect_all(p, 5, N);
	CK(cuEventDestroy_v2(e));
	CK(cuEventDestroy_v2(f));
	CK(cuStreamDestroy_v2(gs));
	CK(cuGreenCtxDestroy(g));
	down();
}

/*
 * A green context's record covers all its streams; its wait holds back
 * what its streams receive afterwards, on streams made later too, and
 * not what they received before. A primary context's record and wait
 * cover its green contexts.
 */
static void sc_green_record_wait(void **state)
{
	CUstream a, b, c, s, cap;
	CUdeviceptr p, q, r;
	CUevent e, e2, e3;
	CUcontext gctx;
	CUgreenCtx g;
	CUgraph graph;

	(void)state;
	up();
	g = mkgreen(16);
	CK(cuCtxFromGreenCtx(&gctx, g));
	a = mkgreen_stream(g, 0);
	b = mkgreen_stream(g, 0);
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAlloc_v2(&q, N * 4));
	CK(cuMemAlloc_v2(&r, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	CK(cuMemsetD32_v2(q, 1, N));
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&e3, CU_EVENT_DISABLE_TIMING));

	/* Record: both green streams. */
	gate_close(a, 0);
	k_inc(a, p, N);
	gate_close(b, 1);
	k_inc(b, q, N);
	CK(cuGreenCtxRecordEvent(g, e));
	CK(cuStreamWaitEvent(s, e, 0));
	k_scale(s, p, 3, N);
	k_scale(s, q, 5, N);
	gate_open(0);
	assert_int_equal(settle(a), CUDA_SUCCESS);
	assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	gate_open(1);
	CK(cuStreamSynchronize(s));
	CK(cuEventQuery(e));
	expect_all(p, 6, N);
	expect_all(q, 10, N);

	/* Wait: b's earlier work runs, a's later work and a new stream's wait. */
	gate_close(s, 2);
	k_inc(s, p, N);
	CK(cuEventRecord(e2, s));
	gate_close(b, 3);                 /* b holds back only its own later work */
	k_fill(b, r, 7, N);
	gate_open(3);
	CK(cuGreenCtxWaitEvent(g, e2));
	c = mkgreen_stream(g, 0);
	k_scale(a, p, 3, N);
	k_scale(c, q, 5, N);
	assert_int_equal(settle(b), CUDA_SUCCESS);
	expect_all(r, 7, N);
	assert_int_equal(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuStreamQuery(c), CUDA_ERROR_NOT_READY);
	gate_open(2);
	CK(cuStreamSynchronize(a));
	CK(cuStreamSynchronize(c));
	expect_all(p, 21, N);             /* (6 + 1) * 3 */
	expect_all(q, 50, N);

	/* The primary's record covers the green streams; the green one's does not
	 * cover the primary's. */
	gate_close(a, 4);
	k_inc(a, p, N);
	CK(cuCtxRecordEvent(pctx, e));
	CK(cuCtxRecordEvent(gctx, e3));
	assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuEventQuery(e3), CUDA_ERROR_NOT_READY);
	gate_close(s, 5);
	CK(cuGreenCtxRecordEvent(g, e2));
	gate_open(4);
	CK(cuEventSynchronize(e));
	CK(cuEventSynchronize(e2));
	assert_int_equal(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	/* The primary's wait holds back its green streams too. */
	k_inc(s, q, N);
	CK(cuEventRecord(e3, s));
	CK(cuCtxWaitEvent(pctx, e3));
	k_scale(b, q, 2, N);
	assert_int_equal(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
	gate_open(5);
	CK(cuStreamSynchronize(b));
	expect_all(q, 102, N);            /* (50 + 1) * 2 */

	/* Errors: a capturing stream, an event of another primary, bad handles. */
	cap = mkgreen_stream(g, 0);
	CK(cuStreamBeginCapture_v2(cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	assert_int_equal(cuGreenCtxRecordEvent(g, e), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(cap, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_int_equal(cuGreenCtxRecordEvent((CUgreenCtx)&cap, e), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuGreenCtxWaitEvent(g, (CUevent)&cap), CUDA_ERROR_INVALID_HANDLE);
	CK(cuStreamDestroy_v2(cap));
	CK(cuCtxSynchronize());
	CK(cuEventDestroy_v2(e));
	CK(cuEventDestroy_v2(e2));
	CK(cuEventDestroy_v2(e3));
	CK(cuStreamDestroy_v2(a));
	CK(cuStreamDestroy_v2(b));
	CK(cuStreamDestroy_v2(c));
	CK(cuGreenCtxDestroy(g));
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_green_resources),
	cmocka_unit_test(sc_green_streams),
	cmocka_unit_test(sc_green_record_wait),
};

TU_MAIN(tests)
