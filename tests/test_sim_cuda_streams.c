/*
 * Streams of the simulated CUDA driver and their orderings: within a
 * stream, the legacy default stream against blocking and non-blocking
 * streams, per-thread default streams (and the _ptsz/_ptds entry points),
 * priorities, flags and destruction, stream memory operations, and threads
 * sharing the context's legacy stream through events.
 */
#include "test_sim_cuda_util.h"

#include <dlfcn.h>
#include <pthread.h>

static void sc_stream_order(void **state)
{
	CUdeviceptr p;
	CUstream s;
	uint32_t v = 1;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	k_fill(s, p, 1, N);
	for (int i = 0; i < 10; i++) {
		k_inc(s, p, N);
		k_scale(s, p, i % 3 + 2, N);
		v = (v + 1) * (uint32_t)(i % 3 + 2);
	}
	CK(cuStreamSynchronize(s));
	expect_all(p, v, N);
	down();
}

static void sc_legacy_then_blocking(void **state)
{
	CUstream b;
	CUdeviceptr p;

	(void)state;
	up();
	b = mkstream(CU_STREAM_DEFAULT);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	gate_close(NULL, 0);
	k_inc(NULL, p, N);
	k_scale(b, p, 3, N);       /* waits for the legacy work */
	assert_int_equal(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuStreamSynchronize(b));
	expect_all(p, 6, N);
	down();
}

static void sc_blocking_then_legacy(void **state)
{
	CUstream b;
	CUdeviceptr p;

	(void)state;
	up();
	b = mkstream(CU_STREAM_DEFAULT);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	gate_close(b, 0);
	k_inc(b, p, N);
	k_scale(NULL, p, 3, N);    /* waits for the blocking stream's work */
	assert_int_equal(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuStreamSynchronize(NULL));
	expect_all(p, 6, N);
	down();
}

static void sc_nonblocking_does_not_wait(void **state)
{
	CUstream nb, b;
	CUdeviceptr p, q, r;

	(void)state;
	up();
	nb = mkstream(CU_STREAM_NON_BLOCKING);
	b = mkstream(CU_STREAM_DEFAULT);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAlloc_v2(&q, N * 4));
	CK(cuMemAlloc_v2(&r, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	gate_close(NULL, 0);
	k_inc(NULL, p, N);
	k_fill(nb, q, 9, N);       /* runs while the legacy stream is held */
	k_fill(b, r, 9, N);        /* does not */
	assert_int_equal(settle(nb), CUDA_SUCCESS);
	assert_int_equal(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuCtxSynchronize());
	expect_all(p, 2, N);
	expect_all(q, 9, N);
	expect_all(r, 9, N);
	down();
}

struct pt_arg {
	CUcontext ctx;
	CUdeviceptr p;
	CUresult rc;
};

/* Another thread's per-thread stream is its own: it runs while ours is held. */
static void *pt_other(void *arg)
{
	struct pt_arg *a = arg;
	uint32_t v = 0;

	a->rc = cuCtxSetCurrent(a->ctx);
	if (a->rc == CUDA_SUCCESS)
		a->rc = l_fill(CU_STREAM_PER_THREAD, a->p, 4, N);
	if (a->rc == CUDA_SUCCESS)
		a->rc = cuStreamSynchronize(CU_STREAM_PER_THREAD);
	if (a->rc == CUDA_SUCCESS)
		a->rc = cuMemcpyDtoHAsync_v2(&v, a->p, 4, CU_STREAM_PER_THREAD);
	if (a->rc == CUDA_SUCCESS && v != 4)
		a->rc = CUDA_ERROR_UNKNOWN;
	return NULL;
}

static void sc_per_thread_stream(void **state)
{
	struct pt_arg a = { 0 };
	CUdeviceptr p;
	pthread_t t;
	unsigned flags = 99;

	(void)state;
	up();
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAlloc_v2(&a.p, N * 4));
	a.ctx = pctx;
	CK(cuMemsetD32_v2(p, 1, N));
	gate_close(CU_STREAM_PER_THREAD, 0);
	k_inc(CU_STREAM_PER_THREAD, p, N);
	assert_int_equal(pthread_create(&t, NULL, pt_other, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	CK(a.rc);
	assert_int_equal(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY);
	/* Per-thread streams are blocking: the legacy stream waits for ours. */
	k_scale(NULL, p, 5, N);
	assert_int_equal(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	CK(cuStreamGetFlags(CU_STREAM_PER_THREAD, &flags));
	assert_int_equal(flags, 0);
	gate_open(0);
	CK(cuStreamSynchronize(NULL));
	expect_all(p, 10, N);
	down();
}

static void sc_ptsz_symbols(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW);
	__typeof__(&cuLaunchKernel) launch;
	__typeof__(&cuStreamSynchronize) ssync;
	__typeof__(&cuStreamQuery) squery;
	__typeof__(&cuMemcpyDtoH_v2) d2h;
	CUdriverProcAddressQueryResult st;
	CUdeviceptr p;
	uint64_t n = N;
	uint32_t v = 0;
	void *args[2] = { &p, &n };

	(void)state;
	assert_non_null(h);
	up();
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	CK(cuGetProcAddress_v2("cuLaunchKernel", (void **)&launch, 12000, 2, &st));
	assert_ptr_equal((void *)launch, dlsym(h, "cuLaunchKernel_ptsz"));
	CK(cuGetProcAddress_v2("cuStreamSynchronize", (void **)&ssync, 12000, 2, &st));
	assert_ptr_equal((void *)ssync, dlsym(h, "cuStreamSynchronize_ptsz"));
	CK(cuGetProcAddress_v2("cuStreamQuery", (void **)&squery, 12000, 2, &st));
	CK(cuGetProcAddress_v2("cuMemcpyDtoH", (void **)&d2h, 12000, 2, &st));
	assert_ptr_equal((void *)d2h, dlsym(h, "cuMemcpyDtoH_v2_ptds"));
	/* NULL in the variants is this thread's per-thread stream. */
	gate_close(CU_STREAM_PER_THREAD, 0);
	CK(launch(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	assert_int_equal(squery(NULL), CUDA_ERROR_NOT_READY);
	CK(cuStreamQuery(NULL));             /* the legacy stream has nothing */
	gate_open(0);
	CK(ssync(NULL));
	CK(d2h(&v, p, 4));
	assert_int_equal(v, 2);
	dlclose(h);
	down();
}

static void sc_stream_misc(void **state)
{
	CUstream s, nb;
	CUcontext c;
	CUgreenCtx g = (CUgreenCtx)&g;
	CUdeviceptr p;
	unsigned flags;
	int prio;

	(void)state;
	up();
	CK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -100));
	CK(cuStreamGetPriority(s, &prio));
	assert_int_equal(prio, -5);
	CK(cuStreamGetFlags(s, &flags));
	assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
	CK(cuStreamGetCtx(s, &c));
	assert_ptr_equal(c, pctx);
	CK(cuStreamGetCtx_v2(NULL, &c, &g));
	assert_ptr_equal(c, pctx);
	assert_null(g);
	assert_int_equal(cuStreamCreate(&nb, 4), CUDA_ERROR_INVALID_VALUE);
	/* Destroying a stream does not wait; its work still completes. */
	nb = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 1, N));
	gate_close(s, 0);
	k_inc(s, p, N);
	CK(cuStreamDestroy_v2(s));
	assert_int_equal(cuStreamGetFlags(s, &flags), CUDA_ERROR_INVALID_HANDLE);
	CK(cuStreamWriteValue32_v2(nb, DP(&gates[0]), 1, 0));
	CK(cuCtxSynchronize());
	expect_all(p, 2, N);
	down();
}

static void sc_stream_values(void **state)
{
	CUstream s1, s2;
	CUdeviceptr p, w;

	(void)state;
	up();
	s1 = mkstream(CU_STREAM_NON_BLOCKING);
	s2 = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemAlloc_v2(&w, 256));
	CK(cuMemsetD32_v2(w, 0, 64));
	CK(cuMemsetD32_v2(p, 1, N));
	CK(cuStreamWaitValue32_v2(s2, w, 5, CU_STREAM_WAIT_VALUE_EQ));
	CK(cuStreamWaitValue32_v2(s2, w + 4, 0x4, CU_STREAM_WAIT_VALUE_AND));
	k_scale(s2, p, 3, N);
	gate_close(s1, 0);
	k_inc(s1, p, N);
	CK(cuStreamWriteValue32_v2(s1, w, 5, 0));
	CK(cuStreamWriteValue32_v2(s1, w + 4, 0x6, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
	assert_int_equal(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
	gate_open(0);
	CK(cuStreamSynchronize(s2));
	expect_all(p, 6, N);
	assert_int_equal(cuStreamWaitValue32_v2(s1, w + 2, 1, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuStreamWaitValue32_v2(s1, w, 1, 0x10), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuStreamWriteValue32_v2(s1, DP(&p), 1, 0), CUDA_ERROR_INVALID_VALUE);
	down();
}

struct stress_arg {
	CUcontext ctx;
	CUresult rc;
	uint32_t seed;
};

/*
 * Threads working on their own streams and, through events both ways,
 * on the context's shared legacy stream.
 */
static void *stress_main(void *arg)
{
	struct stress_arg *a = arg;
	CUdeviceptr p = 0;
	CUstream s = NULL;
	CUevent e = NULL, e2 = NULL;
	uint32_t v = a->seed, got[16];
	CUresult rc;

	rc = cuCtxSetCurrent(a->ctx);
	if (rc == CUDA_SUCCESS)
		rc = cuStreamCreate(&s, a->seed % 2 ? CU_STREAM_NON_BLOCKING : 0);
	if (rc == CUDA_SUCCESS)
		rc = cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
	if (rc == CUDA_SUCCESS)
		rc = cuEventCreate(&e2, 0);
	if (rc == CUDA_SUCCESS)
		rc = cuMemAlloc_v2(&p, sizeof(got));
	if (rc == CUDA_SUCCESS)
		rc = l_fill(s, p, v, 16);
	for (int i = 0; rc == CUDA_SUCCESS && i < 50; i++) {
		if (i % 5 == 0) {
			rc = cuEventRecord(e, s);
			if (rc == CUDA_SUCCESS)
				rc = cuStreamWaitEvent(NULL, e, 0);
			if (rc == CUDA_SUCCESS)
				rc = l_inc(NULL, p, 16);
			if (rc == CUDA_SUCCESS)
				rc = cuEventRecord(e2, NULL);
			if (rc == CUDA_SUCCESS)
				rc = cuStreamWaitEvent(s, e2, 0);
		} else {
			rc = l_inc(s, p, 16);
		}
		if (rc == CUDA_SUCCESS)
			rc = l_scale(s, p, 3, 16);
		v = (v + 1) * 3;
	}
	if (rc == CUDA_SUCCESS)
		rc = cuStreamSynchronize(s);
	if (rc == CUDA_SUCCESS)
		rc = cuMemcpyDtoHAsync_v2(got, p, sizeof(got), s);
	for (int i = 0; rc == CUDA_SUCCESS && i < 16; i++)
		if (got[i] != v)
			rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS)
		rc = cuStreamDestroy_v2(s);
	a->rc = rc;
	return NULL;
}

static void sc_threads(void **state)
{
	struct stress_arg a[4];
	pthread_t t[4];

	(void)state;
	up();
	for (int i = 0; i < 4; i++) {
		a[i] = (struct stress_arg){ .ctx = pctx, .seed = (uint32_t)i + 1 };
		assert_int_equal(pthread_create(&t[i], NULL, stress_main, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		CK(a[i].rc);
	}
	CK(cuCtxSynchronize());
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_stream_order),
	cmocka_unit_test(sc_legacy_then_blocking),
	cmocka_unit_test(sc_blocking_then_legacy),
	cmocka_unit_test(sc_nonblocking_does_not_wait),
	cmocka_unit_test(sc_per_thread_stream),
	cmocka_unit_test(sc_ptsz_symbols),
	cmocka_unit_test(sc_stream_misc),
	cmocka_unit_test(sc_stream_values),
	cmocka_unit_test(sc_threads),
};

TU_MAIN(tests)
