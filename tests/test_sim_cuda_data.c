/*
 * Data in the simulated CUDA driver: what kernels (from a module and from a
 * library) and copies of every kind (1D, 2D, 3D, pinned, pageable, async)
 * and memsets leave in memory, checked element by element or by a device
 * checksum; allocation, pointer attributes, and stream-ordered allocation.
 */
#include "test_sim_cuda_util.h"

/* FNV-1a 64 of @n bytes at @p, what the sf_checksum kernel computes. */
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
	assert_true(total == 1ull << 30);   /* the default of XSCHED_SIM_DEVICE_MEMORY */
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

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_kernels_data),
	cmocka_unit_test(sc_library_kernels),
	cmocka_unit_test(sc_copies_1d),
	cmocka_unit_test(sc_copies_2d_3d),
	cmocka_unit_test(sc_memsets),
	cmocka_unit_test(sc_memory),
	cmocka_unit_test(sc_pageable_async),
	cmocka_unit_test(sc_async_alloc_free),
};

TU_MAIN(tests)
