/*
 * The simulated CUDA driver before and around initialisation: what answers
 * before cuInit, initialising in a forked child (and not using the parent's
 * driver there), the device's properties and error strings, and contexts
 * (current, pushed and popped, created and destroyed, the primary one).
 */
#include "test_sim_cuda_util.h"

#include <sys/wait.h>

static void sc_before_init(void **state)
{
	const char *str;
	int v, n;
	void *fn;

	(void)state;
	if (inited)
		skip();
	assert_int_equal(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	assert_int_equal(cuCtxGetCurrent(&pctx), CUDA_ERROR_NOT_INITIALIZED);
	assert_int_equal(cuMemAlloc_v2(&(CUdeviceptr){ 0 }, 4), CUDA_ERROR_NOT_INITIALIZED);
	assert_int_equal(cuStreamSynchronize(NULL), CUDA_ERROR_NOT_INITIALIZED);
	CK(cuDriverGetVersion(&v));
	assert_int_equal(v, 13000);
	CK(cuGetErrorName(CUDA_ERROR_NOT_READY, &str));
	assert_string_equal(str, "CUDA_ERROR_NOT_READY");
	CK(cuGetProcAddress_v2("cuInit", &fn, 2000, 0, NULL));
	assert_ptr_equal(fn, (void *)cuInit);
	assert_int_equal(cuInit(1), CUDA_ERROR_INVALID_VALUE);
}

static int child_status(pid_t pid)
{
	int st = 0;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static void sc_fork(void **state)
{
	CUstream s;
	CUdeviceptr p;
	pid_t pid;

	(void)state;
	if (!inited) {
		/* The parent never initialised: the child can. */
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			CUdeviceptr q;
			uint32_t h[4];
			CUcontext c;
			bool ok;

			/* No cmocka assertions in the child. */
			setenv("XSCHED_SIM_DEVICE", test_dev("cudachild"), 1);
			ok = cuInit(0) == CUDA_SUCCESS &&
			     cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS &&
			     cuCtxSetCurrent(c) == CUDA_SUCCESS &&
			     cuModuleLoadData(&mod, "image") == CUDA_SUCCESS &&
			     cuModuleGetFunction(&f_fill, mod, "sf_fill") == CUDA_SUCCESS &&
			     cuMemAlloc_v2(&q, 16) == CUDA_SUCCESS &&
			     l_fill(NULL, q, 7, 4) == CUDA_SUCCESS &&
			     cuMemcpyDtoH_v2(h, q, 16) == CUDA_SUCCESS && h[3] == 7;
			test_dev_cleanup();
			_exit(ok ? 0 : 1);
		}
		assert_int_equal(child_status(pid), 0);
		/* A device that cannot be opened: no device, and it stays so. */
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			int n;

			setenv("XSCHED_SIM_DEVICE", "no/such device", 1);
			_exit(cuInit(0) == CUDA_ERROR_NO_DEVICE && cuInit(0) == CUDA_ERROR_NO_DEVICE &&
			      cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
		}
		assert_int_equal(child_status(pid), 0);
	}
	/* The parent initialised: as with a real driver, the child cannot use it. */
	up();
	CK(cuMemAlloc_v2(&p, 16));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int n;

		_exit(cuInit(0) == CUDA_ERROR_NOT_INITIALIZED &&
		      cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED &&
		      cuCtxSynchronize() == CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
	}
	assert_int_equal(child_status(pid), 0);
	s = mkstream(CU_STREAM_NON_BLOCKING);
	k_fill(s, p, 3, 4);
	CK(cuStreamSynchronize(s));
	expect_all(p, 3, 4);
	down();
}

static void sc_device(void **state)
{
	const char *str;
	char name[64];
	size_t mem;
	int v, major, minor;
	CUdevice d;

	(void)state;
	init_driver();
	CK(cuDeviceGetCount(&v));
	assert_int_equal(v, 1);
	CK(cuDeviceGet(&d, 0));
	assert_int_equal(cuDeviceGet(&d, 1), CUDA_ERROR_INVALID_DEVICE);
	CK(cuDeviceGetName(name, sizeof(name), 0));
	assert_string_equal(name, "xsched simulated XPU");
	CK(cuDeviceGetName(name, 7, 0));
	assert_string_equal(name, "xsched");
	CK(cuDeviceTotalMem_v2(&mem, 0));
	assert_true(mem == 1ull << 30);   /* the default of XSCHED_SIM_DEVICE_MEMORY */
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
	assert_int_equal(v, 1024);
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
	assert_int_equal(v, 132);
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
	assert_int_equal(v, 9);
	CK(cuDeviceGetAttribute(&v, 100, 0));
	assert_int_equal(v, 0);
	assert_int_equal(cuDeviceGetAttribute(&v, 0, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuDeviceGetAttribute(&v, 1, 3), CUDA_ERROR_INVALID_DEVICE);
	CK(cuDeviceComputeCapability(&major, &minor, 0));
	assert_int_equal(major * 10 + minor, 90);
	CK(cuGetErrorString(CUDA_ERROR_LAUNCH_FAILED, &str));
	assert_non_null(str);
	str = "x";
	assert_int_equal(cuGetErrorString(12345, &str), CUDA_ERROR_INVALID_VALUE);
	assert_null(str);
	str = "x";
	assert_int_equal(cuGetErrorName(-1, &str), CUDA_ERROR_INVALID_VALUE);
	assert_null(str);
}

static void sc_contexts(void **state)
{
	CUcontext c, c2, cur;
	CUdeviceptr p;
	CUstream s;
	unsigned flags;
	int active, least, greatest;
	CUdevice d;

	(void)state;
	init_driver();
	CK(cuCtxGetCurrent(&cur));
	assert_null(cur);
	assert_int_equal(cuMemAlloc_v2(&p, 4), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxPopCurrent_v2(&cur), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	assert_int_equal(active, 0);
	up();
	CK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	assert_int_equal(active, 1);
	CK(cuCtxGetDevice(&d));
	assert_int_equal(d, 0);
	CK(cuCtxGetStreamPriorityRange(&least, &greatest));
	assert_int_equal(least, 0);
	assert_int_equal(greatest, -5);
	CK(cuCtxCreate_v2(&c, 0, 0));
	CK(cuCtxGetCurrent(&cur));
	assert_ptr_equal(cur, c);
	CK(cuCtxCreate_v4(&c2, NULL, 0, 0));
	CK(cuCtxPopCurrent_v2(&cur));
	assert_ptr_equal(cur, c2);
	CK(cuCtxPopCurrent_v2(&cur));
	assert_ptr_equal(cur, c);
	CK(cuCtxGetCurrent(&cur));
	assert_ptr_equal(cur, pctx);
	CK(cuCtxPushCurrent_v2(c2));
	CK(cuMemAlloc_v2(&p, 64));
	CK(cuCtxSynchronize_v2(c));
	CK(cuCtxGetDevice_v2(&d, c));
	CK(cuCtxDestroy_v2(c2));     /* current: popped, its memory freed */
	CK(cuCtxGetCurrent(&cur));
	assert_ptr_equal(cur, pctx);
	assert_int_equal(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuCtxPushCurrent_v2(c2), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxSetCurrent(c2), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxDestroy_v2(c2), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxDestroy_v2(pctx), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxDestroy_v2(NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuCtxCreate_v2(&c, 0, 1), CUDA_ERROR_INVALID_DEVICE);
	assert_int_equal(cuCtxCreate_v2(&c, 0x100, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxDestroy_v2(c));
	down();
	assert_int_equal(cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_before_init),
	cmocka_unit_test(sc_fork),
	cmocka_unit_test(sc_device),
	cmocka_unit_test(sc_contexts),
};

TU_MAIN(tests)
