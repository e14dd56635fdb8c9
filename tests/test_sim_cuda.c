/*
 * Tests of the simulated CUDA driver (libcuda.so.1 over the simulated
 * XPU), through the driver API only: data of every kernel and copy kind,
 * orderings (within a stream, across streams through events, the legacy
 * default stream against blocking and non-blocking streams, per-thread
 * default streams), events, host functions, stream capture and graphs,
 * sticky faults, green contexts (resources, streams, context-wide event
 * records and waits), the errors of bad input, cuGetProcAddress, a loader
 * that finds the driver the way cudart does, and fork.
 *
 * Orderings are shown without timing: a "gate" (cuStreamWaitValue32 on a
 * pinned word the test writes) holds a stream's work back without holding
 * the device, so a missing dependency shows as work that completes (or a
 * different result) while the gate is closed.
 */
#include "test_util.h"
#include "vendor/cuda/cu_api.h"
#include "sim/cuda/sc_private.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#define N 4096
#define CK(call) assert_int_equal((int)(call), CUDA_SUCCESS)
#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

static bool inited;
static CUcontext pctx;
static CUmodule mod;
static CUfunction f_spin, f_fill, f_add, f_inc, f_scale, f_sum, f_fail;
static uint32_t *gates;   /* pinned words, one per gate */

static void init_driver(void)
{
	if (inited)
		return;
	setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	CK(cuInit(0));
	inited = true;
}

static void up(void)
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
static void down(void)
{
	CK(cuCtxSetCurrent(NULL));
	CK(cuDevicePrimaryCtxRelease_v2(0));
}

static void gate_close(CUstream s, int i)
{
	CK(cuStreamWaitValue32_v2(s, DP(&gates[i]), 1, CU_STREAM_WAIT_VALUE_GEQ));
}

static void gate_open(int i)
{
	__atomic_store_n(&gates[i], 1, __ATOMIC_RELEASE);
}

static CUresult l_fill(CUstream s, CUdeviceptr p, uint32_t v, uint64_t n)
{
	void *a[] = { &p, &v, &n };

	return cuLaunchKernel(f_fill, 1, 1, 1, 32, 1, 1, 0, s, a, NULL);
}

static CUresult l_inc(CUstream s, CUdeviceptr p, uint64_t n)
{
	void *a[] = { &p, &n };

	return cuLaunchKernel(f_inc, 1, 1, 1, 32, 1, 1, 0, s, a, NULL);
}

static CUresult l_scale(CUstream s, CUdeviceptr p, uint32_t k, uint64_t n)
{
	void *a[] = { &p, &k, &n };

	return cuLaunchKernel(f_scale, 1, 1, 1, 32, 1, 1, 0, s, a, NULL);
}

/* The same on the test's main thread, asserting success. */
#define k_fill(s, p, v, n) CK(l_fill(s, p, v, n))
#define k_inc(s, p, n) CK(l_inc(s, p, n))
#define k_scale(s, p, k, n) CK(l_scale(s, p, k, n))

static void k_spin(CUstream s, uint64_t ns)
{
	void *a[] = { &ns };

	CK(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, s, a, NULL));
}

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Checksum of @bytes at @p computed by the device, read back. */
static uint64_t dev_sum(CUstream s, CUdeviceptr p, uint64_t bytes, CUdeviceptr out)
{
	void *a[] = { &p, &bytes, &out };
	uint64_t h = 0;

	CK(cuLaunchKernel(f_sum, 1, 1, 1, 1, 1, 1, 0, s, a, NULL));
	CK(cuStreamSynchronize(s));
	CK(cuMemcpyDtoH_v2(&h, out, sizeof(h)));
	return h;
}

static void expect_all(CUdeviceptr p, uint32_t v, size_t n)
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
static CUresult settle(CUstream s)
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

static CUstream mkstream(unsigned flags)
{
	CUstream s;

	CK(cuStreamCreate(&s, flags));
	return s;
}

/* ---- initialisation, fork, device, contexts ---- */

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
	assert_true(mem == 16ull << 30);
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

/* ---- data ---- */

static void sc_kernels_data(void **state)
{
	uint32_t *h = malloc(N * 4), *r = malloc(N * 4);
	CUdeviceptr a, b, c, out;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuMemAlloc_v2(&b, N * 4));
	CK(cuMemAlloc_v2(&c, N * 4));
	CK(cuMemAlloc_v2(&out, 8));
	for (int i = 0; i < N; i++)
		h[i] = (uint32_t)i * 2654435761u;
	CK(cuMemcpyHtoD_v2(a, h, N * 4));
	k_fill(s, b, 5, N);
	{
		uint64_t n = N;
		void *args[] = { &a, &b, &c, &n };

		CK(cuLaunchKernel(f_add, 4, 1, 1, 256, 1, 1, 0, s, args, NULL));
	}
	k_inc(s, c, N);
	k_scale(s, c, 3, N);
	k_spin(s, 100000);
	CK(cuStreamSynchronize(s));
	CK(cuMemcpyDtoH_v2(r, c, N * 4));
	for (int i = 0; i < N; i++)
		assert_int_equal(r[i], (h[i] + 5 + 1) * 3);
	assert_true(dev_sum(s, c, N * 4, out) == fnv(r, N * 4));
	assert_true(dev_sum(s, a, 10, out) == fnv(h, 10));
	free(h);
	free(r);
	down();
}

static void sc_copies_1d(void **state)
{
	uint32_t *src = malloc(N * 4), *dst = malloc(N * 4), *pin;
	CUdeviceptr a, b, out;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuMemAlloc_v2(&b, N * 4));
	CK(cuMemAlloc_v2(&out, 8));
	CK(cuMemHostAlloc((void **)&pin, N * 4, CU_MEMHOSTALLOC_PORTABLE));
	for (int i = 0; i < N; i++)
		src[i] = (uint32_t)i ^ 0x5a5a5a5au;
	CK(cuMemcpyHtoD_v2(a, src, N * 4));
	CK(cuMemcpyDtoD_v2(b, a, N * 4));
	CK(cuMemcpyDtoH_v2(dst, b, N * 4));
	assert_memory_equal(src, dst, N * 4);
	assert_true(dev_sum(s, b, N * 4, out) == fnv(src, N * 4));
	/* Pinned memory is read when the stream gets there, not at the call. */
	memset(pin, 0, N * 4);
	CK(cuMemsetD8Async(a, 0, N * 4, s));
	gate_close(s, 0);
	CK(cuMemcpyHtoDAsync_v2(a, pin, N * 4, s));
	memcpy(pin, src, N * 4);
	gate_open(0);
	CK(cuStreamSynchronize(s));
	memset(pin, 0, N * 4);
	CK(cuMemsetD8Async(b, 0, N * 4, s));
	CK(cuMemcpyDtoDAsync_v2(b, a, N * 4, s));
	CK(cuMemcpyDtoHAsync_v2(pin, b, N * 4, s));
	CK(cuStreamSynchronize(s));
	assert_memory_equal(src, pin, N * 4);
	memset(dst, 0, N * 4);
	CK(cuMemcpy(b, DP(src), N * 4));
	CK(cuMemcpy(a, b, N * 4));
	CK(cuMemcpy(DP(dst), a, N * 4));
	assert_memory_equal(src, dst, N * 4);
	memset(dst, 0, N * 4);
	CK(cuMemcpyAsync(DP(dst), DP(src), N * 4, s));    /* host to host */
	CK(cuStreamSynchronize(s));
	assert_memory_equal(src, dst, N * 4);
	/* Ranges past an allocation, and NULL. */
	assert_int_equal(cuMemcpyHtoD_v2(a + 4, src, N * 4), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemcpyDtoH_v2(dst, a, N * 4 + 256), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemcpyHtoD_v2(a, NULL, 4), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemcpyDtoD_v2(a, DP(src), 4), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFreeHost(pin));
	free(src);
	free(dst);
	down();
}

static void sc_copies_2d_3d(void **state)
{
	enum { W = 40, H = 8, D = 3, SP = 64, DPITCH = 128 };
	uint8_t *src = malloc(SP * H * D), *back = calloc(1, W * H * D);
	CUDA_MEMCPY2D c2 = { 0 };
	CUDA_MEMCPY3D c3 = { 0 };
	CUdeviceptr dev, dev2;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&dev, DPITCH * H * D));
	CK(cuMemAlloc_v2(&dev2, DPITCH * H * D));
	for (int i = 0; i < SP * H * D; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	/* 2D: pitched host rows to pitched device rows and back, packed. */
	c2.srcMemoryType = CU_MEMORYTYPE_HOST;
	c2.srcHost = src;
	c2.srcPitch = SP;
	c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c2.dstDevice = dev;
	c2.dstPitch = DPITCH;
	c2.WidthInBytes = W;
	c2.Height = H;
	CK(cuMemcpy2D_v2(&c2));
	c2 = (CUDA_MEMCPY2D){ .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = dev,
			      .srcPitch = DPITCH, .srcXInBytes = 2, .srcY = 1,
			      .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = back,
			      .dstPitch = W - 2, .WidthInBytes = W - 2, .Height = H - 1 };
	CK(cuMemcpy2DAsync_v2(&c2, s));   /* pageable destination: done on return */
	for (int y = 0; y < H - 1; y++)
		assert_memory_equal(back + y * (W - 2), src + (y + 1) * SP + 2, W - 2);
	/* 3D: host slices to device, device to device, device to host. */
	c3.srcMemoryType = CU_MEMORYTYPE_HOST;
	c3.srcHost = src;
	c3.srcPitch = SP;
	c3.srcHeight = H;
	c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c3.dstDevice = dev;
	c3.dstPitch = DPITCH;
	c3.dstHeight = H;
	c3.WidthInBytes = W;
	c3.Height = H;
	c3.Depth = D;
	CK(cuMemcpy3D_v2(&c3));
	c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c3.srcDevice = dev;
	c3.srcPitch = DPITCH;
	c3.dstDevice = dev2;
	CK(cuMemcpy3DAsync_v2(&c3, s));
	CK(cuStreamSynchronize(s));
	c3.srcDevice = dev2;
	c3.dstMemoryType = CU_MEMORYTYPE_HOST;
	c3.dstHost = back;
	c3.dstPitch = W;
	CK(cuMemcpy3D_v2(&c3));
	for (int z = 0; z < D; z++)
		for (int y = 0; y < H; y++)
			assert_memory_equal(back + (z * H + y) * W, src + (z * H + y) * SP, W);
	/* No arrays; pitches narrower than a row; reserved fields. */
	c3.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	assert_int_equal(cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);
	c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c3.srcPitch = W - 1;
	assert_int_equal(cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);
	c3.srcPitch = DPITCH;
	c3.reserved0 = back;
	assert_int_equal(cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemcpy2D_v2(NULL), CUDA_ERROR_INVALID_VALUE);
	free(src);
	free(back);
	down();
}

static void sc_memsets(void **state)
{
	uint8_t b[64];
	CUdeviceptr p;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuMemsetD32_v2(p, 0xdeadbeef, N));
	expect_all(p, 0xdeadbeef, N);
	CK(cuMemsetD8_v2(p + 1, 0x11, 3));
	CK(cuMemcpyDtoH_v2(b, p, 8));
	assert_int_equal(b[0], 0xef);
	assert_int_equal(b[1], 0x11);
	assert_int_equal(b[3], 0x11);
	assert_int_equal(b[4], 0xef);
	CK(cuMemsetD32Async(p, 7, N, s));
	CK(cuMemsetD8Async(p, 0, 4, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemcpyDtoH_v2(b, p, 8));
	assert_int_equal(b[0], 0);
	assert_int_equal(b[4], 7);
	assert_int_equal(cuMemsetD32_v2(p + 2, 1, 1), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemsetD32_v2(p, 1, N + 64), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemsetD8_v2(DP(b), 1, 4), CUDA_ERROR_INVALID_VALUE);
	down();
}

/* ---- orderings ---- */

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

/* ---- events, host functions ---- */

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

/* ---- capture and graphs ---- */

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

/* ---- faults and bad input ---- */

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

static void sc_memory(void **state)
{
	size_t free0, free1, total;
	CUdeviceptr p, q;
	CUmemorytype t;
	CUcontext owner;
	void *h;
	char pageable[16];

	(void)state;
	up();
	CK(cuMemGetInfo_v2(&free0, &total));
	assert_true(total == 16ull << 30);
	CK(cuMemAlloc_v2(&p, 1 << 20));
	assert_int_equal(p % 256, 0);
	CK(cuMemGetInfo_v2(&free1, &total));
	assert_true(free0 - free1 >= 1 << 20);
	CK(cuMemAllocHost_v2(&h, 100));
	CK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 1000));
	assert_int_equal(t, CU_MEMORYTYPE_DEVICE);
	CK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, DP(h) + 99));
	assert_int_equal(t, CU_MEMORYTYPE_HOST);
	CK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
	assert_ptr_equal(owner, pctx);
	assert_int_equal(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, DP(pageable)),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAlloc_v2(&q, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAlloc_v2(&q, 17ull << 30), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(cuMemHostAlloc(&h, 16, 0x80), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemFree_v2(p + 8), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemFree_v2(DP(h)), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemFreeHost((void *)(uintptr_t)p), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree_v2(0));
	CK(cuMemFree_v2(p));
	assert_int_equal(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFreeHost(h));
	assert_int_equal(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemGetInfo_v2(&free1, &total));
	assert_true(free1 == free0);
	down();
}

static void sc_pageable_async(void **state)
{
	uint32_t *h = malloc(N * 4), *back = malloc(N * 4);
	CUdeviceptr p;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	for (int i = 0; i < N; i++)
		h[i] = 1000 + (uint32_t)i;
	gate_close(s, 0);
	CK(cuMemcpyHtoDAsync_v2(p, h, N * 4, s));
	memset(h, 0xff, N * 4);   /* reusable on return: the copy was staged */
	k_inc(s, p, N);
	gate_open(0);
	/* A pageable destination is complete on return, after earlier work. */
	k_spin(s, 2000000);
	CK(cuMemcpyDtoHAsync_v2(back, p, N * 4, s));
	for (int i = 0; i < N; i++)
		assert_int_equal(back[i], 1001 + (uint32_t)i);
	free(h);
	free(back);
	down();
}

static void sc_async_alloc_free(void **state)
{
	size_t free0, free1, total;
	CUdeviceptr p;
	CUstream s;

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemGetInfo_v2(&free0, &total));
	CK(cuMemAllocAsync(&p, N * 4, s));
	gate_close(s, 0);
	k_fill(s, p, 3, N);
	CK(cuMemFreeAsync(p, s));
	assert_int_equal(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemGetInfo_v2(&free1, &total));
	assert_true(free1 < free0);    /* not freed before the stream gets there */
	gate_open(0);
	CK(cuStreamSynchronize(s));    /* the fill ran on live memory: no fault */
	CK(cuMemGetInfo_v2(&free1, &total));
	assert_true(free1 == free0);
	CK(cuMemAlloc_v2(&p, 64));
	CK(cuMemPrefetchAsync_v2(p, 64, (CUmemLocation){ 1, 0 }, 0, s));
	assert_int_equal(cuMemPrefetchAsync_v2(DP(&p), 8, (CUmemLocation){ 1, 0 }, 0, s),
			 CUDA_ERROR_INVALID_VALUE);
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

/* ---- green contexts ---- */

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

/* The private table makes streams and events like the API's. */
static void sc_private_table(void **state)
{
	static const CUuuid id = SC_PRIVATE_TABLE_ID;
	const struct sc_private_table *t = NULL;
	CUdeviceptr p;
	CUstream s;
	CUevent e;
	int prio;

	(void)state;
	up();
	CK(cuGetExportTable((const void **)&t, &id));
	assert_true(t->size >= sizeof(*t));
	CK(t->stream_create(&s, CU_STREAM_NON_BLOCKING, -2));
	CK(t->event_create(&e, CU_EVENT_DISABLE_TIMING));
	CK(cuStreamGetPriority(s, &prio));
	assert_int_equal(prio, -2);
	CK(cuMemAlloc_v2(&p, N * 4));
	k_fill(s, p, 3, N);
	CK(cuEventRecord(e, s));
	CK(cuEventSynchronize(e));
	expect_all(p, 3, N);
	CK(cuEventDestroy_v2(e));
	CK(cuStreamDestroy_v2(s));
	down();
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

static void sc_library_kernels(void **state)
{
	CUlaunchConfig cfg = { 1, 1, 1, 64, 1, 1, 0, NULL, NULL, 0 };
	CUlibrary lib;
	CUkernel k;
	CUfunction f;
	CUdeviceptr p;
	CUstream s;
	uint64_t n = N;
	uint32_t v = 6;
	size_t off, size;
	void *args[] = { &p, &v, &n };

	(void)state;
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAlloc_v2(&p, N * 4));
	CK(cuLibraryLoadData(&lib, "fatbin", NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&k, lib, "sf_fill"));
	assert_int_equal(cuLibraryGetKernel(&k, lib, "nope"), CUDA_ERROR_NOT_FOUND);
	CK(cuLibraryGetKernel(&k, lib, "sf_fill"));
	/* A CUkernel where a CUfunction is expected, as cudart's <<<>>> passes it. */
	CK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	v = 0;
	CK(cuStreamSynchronize(s));
	expect_all(p, 6, N);
	CK(cuFuncGetParamInfo((CUfunction)k, 2, &off, &size));
	assert_int_equal(off, 16);
	CK(cuKernelGetFunction(&f, k));
	cfg.hStream = s;
	v = 2;
	CK(cuLaunchKernelEx(&cfg, f, args, NULL));
	CK(cuLaunchCooperativeKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){ &p, &n }));
	CK(cuStreamSynchronize(s));
	expect_all(p, 3, N);
	CK(cuLibraryUnload(lib));
	assert_int_equal(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, s, args, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
	down();
}

/* ---- entry points ---- */

static void sc_procaddr(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW), *fn = (void *)1;
	CUdriverProcAddressQueryResult st;
	const void *table = (void *)1;
	CUuuid id = { { 0 } };

	(void)state;
	assert_non_null(h);
	init_driver();
	CK(cuGetProcAddress_v2("cuMemAlloc", &fn, 3020, 0, &st));
	assert_ptr_equal(fn, dlsym(h, "cuMemAlloc_v2"));
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
	assert_int_equal(cuGetProcAddress_v2("cuMemAlloc", &fn, 3000, 0, &st), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	assert_null(fn);
	CK(cuGetProcAddress_v2("cuEventElapsedTime", &fn, 12000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuEventElapsedTime"));
	CK(cuGetProcAddress_v2("cuEventElapsedTime", &fn, 12080, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuEventElapsedTime_v2"));
	CK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 11030, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuGetProcAddress"));
	CK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 12000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuGetProcAddress_v2"));
	CK(cuGetProcAddress_v2("cuStreamDestroy", &fn, 4000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuStreamDestroy_v2"));
	CK(cuGetProcAddress_v2("cuCtxCreate", &fn, 13000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuCtxCreate_v4"));
	CK(cuGetProcAddress_v2("cuMemcpyHtoDAsync", &fn, 13000, 2, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuMemcpyHtoDAsync_v2_ptsz"));
	CK(cuGetProcAddress_v2("cuMemcpyHtoDAsync", &fn, 13000, 1, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuMemcpyHtoDAsync_v2"));
	CK(cuGetProcAddress_v2("cuInit", &fn, 13000, 2, NULL));   /* no variant */
	assert_ptr_equal(fn, dlsym(h, "cuInit"));
	CK(cuGetProcAddress("cuMemsetD32", &fn, 12000, 2));
	assert_ptr_equal(fn, dlsym(h, "cuMemsetD32_v2_ptds"));
	assert_int_equal(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st),
			 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_null(fn);
	assert_int_equal(cuGetProcAddress_v2("", &fn, 0, 0, &st), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_int_equal(cuGetProcAddress_v2("cuMemAlloc_v2", &fn, 13000, 0, &st),
			 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(cuGetProcAddress_v2("cuInit", &fn, 13000, 4, &st),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGetProcAddress_v2(NULL, &fn, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
	assert_null(table);
	/*
	 * Each row answers with its export from its version on, and with the
	 * per-thread flag with its _PT variant, at the variant's version too.
	 */
#define XS_CU_FN(name, how, arg, symbol, version, params)                             \
	CK(cuGetProcAddress_v2(#symbol, &fn, version, 0, NULL));                   \
	assert_ptr_equal(fn, dlsym(h, #name));
#define XS_CU_FN_PT(name, how, arg, symbol, version, pt, base)                        \
	CK(cuGetProcAddress_v2(#symbol, &fn, version, 2, NULL));                   \
	assert_ptr_equal(fn, dlsym(h, #name));
#define XS_CU_ALIAS(symbol, version, name)                                            \
	CK(cuGetProcAddress_v2(#symbol, &fn, version, 0, NULL));                   \
	assert_ptr_equal(fn, dlsym(h, #name));
#include "vendor/cuda/cu_functions.def"
	dlclose(h);
}

static void sc_exports(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);

	(void)state;
	assert_non_null(h);
#define CHECK_EXPORT(name)                                                         \
	if (!dlsym(h, #name))                                                      \
		fail_msg("%s is not exported", #name);
#define XS_CU_FN(name, ...) CHECK_EXPORT(name)
#define XS_CU_FN_PT(name, ...) CHECK_EXPORT(name)
#include "vendor/cuda/cu_functions.def"
#undef CHECK_EXPORT
	assert_null(dlsym(h, "sim_dev_open"));
	assert_null(dlsym(h, "sc_result"));
	assert_null(dlsym(h, "clock_now_ns"));
	dlclose(h);
}

/* Finds every entry point the way cudart does (FACTS.md): dlopen, then cuGetProcAddress_v2. */
static void sc_cudart_style_loader(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW | RTLD_LOCAL), *probe;
	__typeof__(&cuGetProcAddress_v2) gpa;
	__typeof__(&cuInit) init;
	__typeof__(&cuDevicePrimaryCtxRetain) retain;
	__typeof__(&cuDevicePrimaryCtxRelease_v2) release;
	__typeof__(&cuCtxSetCurrent) setcur;
	__typeof__(&cuModuleLoadData) load;
	__typeof__(&cuModuleGetFunction) getfn;
	__typeof__(&cuMemAlloc_v2) alloc;
	__typeof__(&cuLaunchKernel) launch;
	__typeof__(&cuStreamSynchronize) ssync;
	__typeof__(&cuMemcpyDtoH_v2) d2h;
	CUdriverProcAddressQueryResult st;
	CUcontext c;
	CUmodule m;
	CUfunction f;
	CUdeviceptr p;
	uint32_t v = 12, out[4] = { 0 };
	uint64_t n = 4;
	void *args[] = { &p, &v, &n };

	(void)state;
	assert_non_null(h);
	gpa = (__typeof__(gpa))dlsym(h, "cuGetProcAddress_v2");
	assert_non_null(gpa);
	assert_int_equal(gpa("", &probe, 0, 0, &st), CUDA_ERROR_NOT_FOUND);
	CK(gpa("cuInit", (void **)&init, 2000, 0, &st));
	if (!inited)
		setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	CK(init(0));
	inited = true;
	CK(gpa("cuGetProcAddress", (void **)&gpa, 12000, 0, &st));
	CK(gpa("cuDevicePrimaryCtxRetain", (void **)&retain, 7000, 0, &st));
	CK(gpa("cuDevicePrimaryCtxRelease", (void **)&release, 11000, 0, &st));
	CK(gpa("cuCtxSetCurrent", (void **)&setcur, 4000, 0, &st));
	CK(gpa("cuModuleLoadData", (void **)&load, 2000, 0, &st));
	CK(gpa("cuModuleGetFunction", (void **)&getfn, 2000, 0, &st));
	CK(gpa("cuMemAlloc", (void **)&alloc, 3020, 0, &st));
	CK(gpa("cuLaunchKernel", (void **)&launch, 4000, 2, &st));
	CK(gpa("cuStreamSynchronize", (void **)&ssync, 2000, 2, &st));
	CK(gpa("cuMemcpyDtoH", (void **)&d2h, 3020, 2, &st));
	CK(retain(&c, 0));
	CK(setcur(c));
	CK(load(&m, "image"));
	CK(getfn(&f, m, "sf_fill"));
	CK(alloc(&p, 16));
	CK(launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CK(ssync(NULL));
	CK(d2h(out, p, sizeof(out)));
	assert_int_equal(out[0], 12);
	assert_int_equal(out[3], 12);
	CK(setcur(NULL));
	CK(release(0));
	dlclose(h);
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
	cmocka_unit_test(sc_before_init),
	cmocka_unit_test(sc_fork),
	cmocka_unit_test(sc_device),
	cmocka_unit_test(sc_contexts),
	cmocka_unit_test(sc_kernels_data),
	cmocka_unit_test(sc_copies_1d),
	cmocka_unit_test(sc_copies_2d_3d),
	cmocka_unit_test(sc_memsets),
	cmocka_unit_test(sc_stream_order),
	cmocka_unit_test(sc_event_cross_stream),
	cmocka_unit_test(sc_legacy_then_blocking),
	cmocka_unit_test(sc_blocking_then_legacy),
	cmocka_unit_test(sc_nonblocking_does_not_wait),
	cmocka_unit_test(sc_per_thread_stream),
	cmocka_unit_test(sc_ptsz_symbols),
	cmocka_unit_test(sc_events),
	cmocka_unit_test(sc_host_functions),
	cmocka_unit_test(sc_capture_graph),
	cmocka_unit_test(sc_capture_fork_join),
	cmocka_unit_test(sc_capture_errors),
	cmocka_unit_test(sc_capture_other_thread),
	cmocka_unit_test(sc_sticky_fault),
	cmocka_unit_test(sc_bad_handles),
	cmocka_unit_test(sc_memory),
	cmocka_unit_test(sc_pageable_async),
	cmocka_unit_test(sc_async_alloc_free),
	cmocka_unit_test(sc_stream_misc),
	cmocka_unit_test(sc_stream_values),
	cmocka_unit_test(sc_private_table),
	cmocka_unit_test(sc_green_resources),
	cmocka_unit_test(sc_green_streams),
	cmocka_unit_test(sc_green_record_wait),
	cmocka_unit_test(sc_library_kernels),
	cmocka_unit_test(sc_procaddr),
	cmocka_unit_test(sc_exports),
	cmocka_unit_test(sc_cudart_style_loader),
	cmocka_unit_test(sc_threads),
};

TU_MAIN(tests)
