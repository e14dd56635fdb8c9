/*
 * Faults and bad input in the simulated CUDA driver: a kernel's fault is
 * sticky for its context (and only its context) and surfaces at the next
 * synchronisation; destroyed and made-up handles, bad launch shapes and
 * parameters, modules that cannot be loaded.
 */
#include "test_sim_cuda_util.h"

static void sc_sticky_fault(void **state)
{
	CUcontext c;
	CUstream s;
	CUevent e;
	CUdeviceptr p, bad;

	(void)state;
	up();
	CK(cuMemAlloc_v2(&bad, 64));
	CK(cuCtxCreate_v2(&c, 0, 0));
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuEventCreate(&e, 0));
	CK(cuMemAlloc_v2(&p, N * 4));
	gate_close(s, 0);          /* the fault happens after the record call */
	CK(cuLaunchKernel(f_fail, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
	CK(cuEventRecord(e, s));
	gate_open(0);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuStreamQuery(s), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuEventQuery(e), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL,
					(void *[]){ &p, &(uint64_t){ 1 } }, NULL),
			 CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuMemcpyHtoD_v2(p, &p, 8), CUDA_ERROR_LAUNCH_FAILED);
	CK(cuCtxDestroy_v2(c));
	/* Other contexts are unaffected; a bad address is a fault of its own. */
	s = mkstream(CU_STREAM_NON_BLOCKING);
	k_fill(s, bad, 1, 16);
	CK(cuStreamSynchronize(s));
	CK(cuCtxCreate_v2(&c, 0, 0));
	s = mkstream(CU_STREAM_NON_BLOCKING);
	k_fill(s, bad, 1, 17);     /* one element past the allocation's 64 bytes */
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
	CK(cuCtxDestroy_v2(c));
	expect_all(bad, 1, 16);
	down();
}

static void sc_bad_handles(void **state)
{
	CUstream s, never = (CUstream)&never;
	CUfunction f = (CUfunction)&f;
	CUdeviceptr p;
	CUmodule m;
	size_t off, size;
	uint64_t n = 4;
	void *args[] = { &p, &n };
	size_t bufsize = 16;
	struct {
		CUdeviceptr p;
		uint64_t n;
	} buf;
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
			  &bufsize, CU_LAUNCH_PARAM_END };

	(void)state;
	up();
	CK(cuMemAlloc_v2(&p, 64));
	CK(cuMemsetD32_v2(p, 0, 16));
	s = mkstream(0);
	CK(cuStreamDestroy_v2(s));
	assert_int_equal(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, s, args, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamQuery(never), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamDestroy_v2(NULL), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuMemcpyHtoDAsync_v2(p, &n, 8, never), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuModuleGetFunction(&f, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(cuModuleGetFunction(&f, (CUmodule)&m, "sf_inc"),
			 CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuLaunchKernel((CUfunction)&m, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, args, extra),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f_inc, 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f_inc, 1, 1, 1, 1024, 2, 1, 0, NULL, args, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuModuleLoadData(&m, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuModuleLoad(&m, "/nonexistent/kernels.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
	CK(cuModuleLoad(&m, XS_SIM_CUDA_PATH));
	CK(cuModuleUnload(m));
	assert_int_equal(cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
	CK(cuFuncGetParamInfo(f_scale, 1, &off, &size));
	assert_int_equal(off, 8);
	assert_int_equal(size, 4);
	CK(cuFuncGetParamInfo(f_scale, 2, &off, &size));
	assert_int_equal(off, 16);
	assert_int_equal(cuFuncGetParamInfo(f_scale, 3, &off, &size), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuFuncGetParamInfo(f_fail, 0, &off, &size), CUDA_ERROR_INVALID_VALUE);
	/* The extra[] buffer form, read at the call. */
	buf.p = p;
	buf.n = 16;
	CK(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	buf.n = 0;
	expect_all(p, 1, 16);
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_sticky_fault),
	cmocka_unit_test(sc_bad_handles),
};

TU_MAIN(tests)
