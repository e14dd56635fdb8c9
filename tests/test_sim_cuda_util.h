/*
 * What the test_sim_cuda_<theme>.c programs share: the simulated CUDA
 * driver initialised on a device of the process's own, its primary context
 * made current with the kernels of a module, launch wrappers, and checks of
 * device memory. Each program is one theme of the driver's tests; CTest runs
 * each case in a process of its own, so the state here is per case.
 *
 * Orderings are shown without timing: a "gate" (cuStreamWaitValue32 on a
 * pinned word the test writes) holds a stream's work back without holding
 * the device, so a missing dependency shows as work that completes (or a
 * different result) while the gate is closed.
 */
#ifndef XS_TEST_SIM_CUDA_UTIL_H
#define XS_TEST_SIM_CUDA_UTIL_H

#include "test_util.h"
#include "vendor/cuda/cu_api.h"

#include <time.h>

#define N 4096
#define CK(call) assert_int_equal((int)(call), CUDA_SUCCESS)
#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

/* One copy per program: each case runs in a process of its own. */
static bool inited;       /* cuInit succeeded in this process */
static CUcontext pctx;    /* the primary context, current after up() */
static CUmodule mod;
static CUfunction f_spin, f_fill, f_add, f_inc, f_scale, f_sum, f_fail;
static uint32_t *gates;   /* pinned words, one per gate */

/* cuInit on a device of this process's own, once. */
static inline void init_driver(void)
{
	if (inited)
		return;
	setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	CK(cuInit(0));
	inited = true;
}

/* cuInit on a device of this case's own with @capacity ("64M"), once. */
static inline void init_mem(const char *capacity)
{
	setenv("XSCHED_SIM_DEVICE_MEMORY", capacity, 1);
	init_driver();
}

/* The device's free memory, as cuMemGetInfo_v2 says. */
static inline size_t free_bytes(void)
{
	size_t f, t;

	CK(cuMemGetInfo_v2(&f, &t));
	return f;
}

/* The primary context made current, the module's kernels and 16 closed gates. */
static inline void up(void)
{
	CUdevice d;

	init_driver();
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&pctx, d));
	CK(cuCtxSetCurrent(pctx));
	CK(cuModuleLoadData(&mod, "any image"));
	CK(cuModuleGetFunction(&f_spin, mod, "sf_spin"));
	CK(cuModuleGetFunction(&f_fill, mod, "sf_fill"));
	CK(cuModuleGetFunction(&f_add, mod, "sf_add"));
	CK(cuModuleGetFunction(&f_inc, mod, "sf_inc"));
	CK(cuModuleGetFunction(&f_scale, mod, "sf_scale"));
	CK(cuModuleGetFunction(&f_sum, mod, "sf_checksum"));
	CK(cuModuleGetFunction(&f_fail, mod, "sf_fail"));
	CK(cuMemAllocHost_v2((void **)&gates, 16 * sizeof(*gates)));
	memset(gates, 0, 16 * sizeof(*gates));
}

/* Releasing the primary context frees everything the test made in it. */
static inline void down(void)
{
	CK(cuCtxSetCurrent(NULL));
	CK(cuDevicePrimaryCtxRelease_v2(0));
}

/* Holds what @s receives after this until gate @i opens. */
static inline void gate_close(CUstream s, int i)
{
	CK(cuStreamWaitValue32_v2(s, DP(&gates[i]), 1, CU_STREAM_WAIT_VALUE_GEQ));
}

static inline void gate_open(int i)
{
	__atomic_store_n(&gates[i], 1, __ATOMIC_RELEASE);
}

/* Launches of fill, inc and scale over @n words at @p, for any thread. */
static inline CUresult l_fill(CUstream s, CUdeviceptr p, uint32_t v, uint64_t n)
{
	void *a[] = { &p, &v, &n };

	return cuLaunchKernel(f_fill, 1, 1, 1, 32, 1, 1, 0, s, a, NULL);
}

static inline CUresult l_inc(CUstream s, CUdeviceptr p, uint64_t n)
{
	void *a[] = { &p, &n };

	return cuLaunchKernel(f_inc, 1, 1, 1, 32, 1, 1, 0, s, a, NULL);
}

static inline CUresult l_scale(CUstream s, CUdeviceptr p, uint32_t k, uint64_t n)
{
	void *a[] = { &p, &k, &n };

	return cuLaunchKernel(f_scale, 1, 1, 1, 32, 1, 1, 0, s, a, NULL);
}

/* The same on the test's main thread, asserting success. */
#define k_fill(s, p, v, n) CK(l_fill(s, p, v, n))
#define k_inc(s, p, n) CK(l_inc(s, p, n))
#define k_scale(s, p, k, n) CK(l_scale(s, p, k, n))

/* A kernel that keeps the device busy for @ns. */
static inline void k_spin(CUstream s, uint64_t ns)
{
	void *a[] = { &ns };

	CK(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, s, a, NULL));
}

/* Fails the case unless all @n words at @p are @v. */
static inline void expect_all(CUdeviceptr p, uint32_t v, size_t n)
{
	uint32_t *h = malloc(n * 4);

	assert_non_null(h);
	CK(cuMemcpyDtoH_v2(h, p, n * 4));
	for (size_t i = 0; i < n; i++)
		if (h[i] != v)
			fail_msg("element %zu is %u, expected %u", i, h[i], v);
	free(h);
}

/* Polls @s until it is no longer NOT_READY (10 s at most). */
static inline CUresult settle(CUstream s)
{
	struct timespec ts = { 0, 200000 };
	CUresult r = CUDA_ERROR_NOT_READY;

	for (int i = 0; i < 50000 && r == CUDA_ERROR_NOT_READY; i++) {
		r = cuStreamQuery(s);
		if (r == CUDA_ERROR_NOT_READY)
			nanosleep(&ts, NULL);
	}
	return r;
}

static inline CUstream mkstream(unsigned flags)
{
	CUstream s;

	CK(cuStreamCreate(&s, flags));
	return s;
}

#endif
