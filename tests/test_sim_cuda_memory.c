/*
 * The simulated CUDA driver's device memory: one capacity for every
 * process attached to the device (XSCHED_SIM_DEVICE_MEMORY), what counts
 * against it (device, pitched, array and VMM physical allocations; not
 * pinned host or managed memory), its sharing between processes and its
 * return when a holder is killed, and the virtual memory management calls
 * (reserve, create, map, access, unmap), where an access to a range that
 * is not mapped or not yet accessible is CUDA_ERROR_ILLEGAL_ADDRESS.
 */
#include "test_sim_cuda_util.h"
#include "err_capture.h"

#include <signal.h>
#include <sys/prctl.h>

#define MIB (1ull << 20)


/* Allocations up to the capacity succeed, one more fails, a free gives it back. */
static void mem_capacity(void **state)
{
	CUdeviceptr p[17], q;
	size_t f, t, total;
	void *h;
	int i;

	(void)state;
	init_mem("64M");
	up();
	CK(cuDeviceTotalMem_v2(&total, 0));
	assert_true(total == 64 * MIB);
	CK(cuMemGetInfo_v2(&f, &t));
	assert_true(t == 64 * MIB);
	assert_true(f == 64 * MIB);
	for (i = 0; i < 16; i++)
		CK(cuMemAlloc_v2(&p[i], 4 * MIB));
	assert_true(free_bytes() == 0);
	assert_int_equal(cuMemAlloc_v2(&p[16], 4 * MIB), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(cuMemAllocAsync(&q, 256, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	/* Pinned host and managed memory are not the device's. */
	CK(cuMemAllocHost_v2(&h, 32 * MIB));
	CK(cuMemAllocManaged(&q, 32 * MIB, CU_MEM_ATTACH_GLOBAL));
	assert_true(free_bytes() == 0);
	CK(cuMemFree_v2(p[3]));
	assert_true(free_bytes() == 4 * MIB);
	CK(cuMemAlloc_v2(&p[3], 4 * MIB));
	assert_int_equal(cuMemAlloc_v2(&p[16], 1), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemFree_v2(q));
	CK(cuMemFreeHost(h));
	for (i = 0; i < 16; i++)
		CK(cuMemFree_v2(p[i]));
	assert_true(free_bytes() == 64 * MIB);
	down();
}

/* Pitched, array and mipmapped allocations count what they take. */
static void mem_pitch_arrays(void **state)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 64, .Height = 64, .Depth = 64,
				       .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1 };
	CUDA_ARRAY3D_DESCRIPTOR mip = { .Width = 256, .Height = 256,
					.Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1 };
	CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 256, .Height = 256, .Format = CU_AD_FORMAT_FLOAT,
				     .NumChannels = 4 };
	CUDA_ARRAY_DESCRIPTOR big = { .Width = 8192, .Height = 8192, .Format = CU_AD_FORMAT_FLOAT,
				      .NumChannels = 1 };
	CUDA_ARRAY_DESCRIPTOR bad = d2;
	CUmipmappedArray m;
	CUarray a2, a3, a;
	CUdeviceptr p;
	size_t pitch, f0;

	(void)state;
	init_mem("64M");
	up();
	f0 = free_bytes();
	CK(cuMemAllocPitch_v2(&p, &pitch, 1000, 100, 4));
	assert_int_equal(pitch, 1024);
	assert_true(f0 - free_bytes() == 1024 * 100);
	assert_int_equal(cuMemAllocPitch_v2(&p, &pitch, 1000, 100, 3), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree_v2(p));
	assert_true(free_bytes() == f0);

	CK(cuArrayCreate_v2(&a2, &d2));                      /* 256 x 256 x 16 bytes */
	assert_true(f0 - free_bytes() == MIB);
	CK(cuArray3DCreate_v2(&a3, &d3));                    /* 64^3 bytes */
	assert_true(f0 - free_bytes() == MIB + 256 * 1024);
	CK(cuMipmappedArrayCreate(&m, &mip, 9));             /* 256^2 + 128^2 + ... + 1 */
	assert_true(f0 - free_bytes() == MIB + 256 * 1024 + 87381);
	assert_int_equal(cuMipmappedArrayCreate(&m, &mip, 10), CUDA_ERROR_INVALID_VALUE);
	bad.NumChannels = 3;
	assert_int_equal(cuArrayCreate_v2(&a, &bad), CUDA_ERROR_INVALID_VALUE);
	bad = d2;
	bad.Format = 0x42;
	assert_int_equal(cuArrayCreate_v2(&a, &bad), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuArrayCreate_v2(&a, &big), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMipmappedArrayDestroy(m));
	CK(cuArrayDestroy(a3));
	CK(cuArrayDestroy(a2));
	assert_int_equal(cuArrayDestroy(a2), CUDA_ERROR_INVALID_HANDLE);
	assert_true(free_bytes() == f0);
	/* An array left alive goes with its context. */
	CK(cuArrayCreate_v2(&a2, &d2));
	down();
	up();
	assert_true(free_bytes() == f0);
	down();
}

/*
 * The capacity is the node's: a child holds 40 of 64 MiB, so 40 more do
 * not fit here; killed, it gives them back. The child created the device,
 * so its capacity is the one in effect (the first creator's).
 */
static void mem_two_processes(void **state)
{
	int ready[2];
	CUdeviceptr p;
	char c = 0;
	pid_t pid;

	(void)state;
	setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	setenv("XSCHED_SIM_DEVICE_MEMORY", "64M", 1);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CUcontext ctx;
		CUdeviceptr hold;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		c = cuInit(0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS &&
		    cuCtxSetCurrent(ctx) == CUDA_SUCCESS &&
		    cuMemAlloc_v2(&hold, 40 * MIB) == CUDA_SUCCESS ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	close(ready[0]);
	/* Not the creator: this value is not the device's. */
	setenv("XSCHED_SIM_DEVICE_MEMORY", "128M", 1);
	CK(cuInit(0));
	inited = true;
	up();
	assert_true(free_bytes() == 24 * MIB);
	assert_int_equal(cuMemAlloc_v2(&p, 40 * MIB), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemAlloc_v2(&p, 16 * MIB));
	CK(cuMemFree_v2(p));
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	CK(cuMemAlloc_v2(&p, 40 * MIB));
	assert_true(free_bytes() == 24 * MIB);
	CK(cuMemFree_v2(p));
	assert_true(free_bytes() == 64 * MIB);
	down();
}

/* A malformed or zero capacity is refused, and said. */
static void mem_env_bad(void **state)
{
	char *text;

	(void)state;
	setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	setenv("XSCHED_SIM_DEVICE_MEMORY", "64Q", 1);
	err_capture();
	assert_int_equal(cuInit(0), CUDA_ERROR_NO_DEVICE);
	text = err_captured();
	err_release();
	assert_non_null(strstr(text, "XSCHED_SIM_DEVICE_MEMORY=64Q"));
	free(text);
}

static void mem_env_zero(void **state)
{
	(void)state;
	setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	setenv("XSCHED_SIM_DEVICE_MEMORY", "0", 1);
	err_capture();
	assert_int_equal(cuInit(0), CUDA_ERROR_NO_DEVICE);
	err_release();
}

static const CUmemAllocationProp vmm_prop = {
	.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static void vmm_access(CUdeviceptr p, size_t n, CUmemAccess_flags flags)
{
	CUmemAccessDesc a = { .location = vmm_prop.location, .flags = flags };

	CK(cuMemSetAccess(p, n, &a, 1));
}

static void pattern(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed + (i >> 12));
}

/*
 * Reserve, create, map, grant access, write; unmapped, the range is an
 * illegal address for copies either way and the context stays usable;
 * mapped again at the same address, the contents are back. Physical memory
 * counts from its creation until it is both released and unmapped.
 */
static void mem_vmm_map_unmap(void **state)
{
	const size_t G = 2 * MIB;
	CUmemGenericAllocationHandle h, h2;
	uint8_t *in = malloc(2 * G), *out = malloc(2 * G);
	CUdeviceptr va, va2, p;
	size_t gran, f0;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	init_mem("64M");
	up();
	CK(cuMemGetAllocationGranularity(&gran, &vmm_prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	assert_int_equal(gran, G);
	CK(cuMemGetAllocationGranularity(&gran, &vmm_prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	assert_int_equal(gran, G);
	f0 = free_bytes();
	CK(cuMemAddressReserve(&va, 4 * G, 0, 0, 0));
	assert_int_equal(va % G, 0);
	assert_true(free_bytes() == f0);               /* address space only */
	assert_int_equal(cuMemCreate(&h, G + 1, &vmm_prop, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemCreate(&h, G, &vmm_prop, 0));
	assert_true(f0 - free_bytes() == G);
	assert_int_equal(cuMemCreate(&h2, 32 * G, &vmm_prop, 0), CUDA_ERROR_OUT_OF_MEMORY);

	/* Reserved, not mapped; then mapped, not accessible: both illegal. */
	pattern(in, G, 1);
	assert_int_equal(cuMemcpyHtoD_v2(va, in, G), CUDA_ERROR_ILLEGAL_ADDRESS);
	CK(cuMemMap(va, G, 0, h, 0));
	assert_int_equal(cuMemMap(va, G, 0, h, 0), CUDA_ERROR_INVALID_VALUE);  /* mapped */
	assert_int_equal(cuMemcpyHtoD_v2(va, in, G), CUDA_ERROR_ILLEGAL_ADDRESS);
	vmm_access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	CK(cuMemcpyHtoD_v2(va, in, G));
	CK(cuMemcpyDtoH_v2(out, va, G));
	assert_memory_equal(in, out, G);
	assert_int_equal(cuMemUnmap(va, G / 2), CUDA_ERROR_INVALID_VALUE);    /* part of it */

	CK(cuMemUnmap(va, G));
	assert_int_equal(cuMemcpyDtoH_v2(out, va, G), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(cuMemcpyDtoH_v2(out, va + 4096, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(cuMemcpy(DP(out), va, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(cuMemsetD8_v2(va, 0, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
	CK(cuCtxSynchronize());                        /* not sticky: the device never saw it */
	CK(cuMemAlloc_v2(&p, 64));
	CK(cuMemsetD8_v2(p, 1, 64));
	CK(cuMemFree_v2(p));

	/* The same memory at the same address: the same contents. */
	CK(cuMemMap(va, G, 0, h, 0));
	vmm_access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	memset(out, 0, G);
	CK(cuMemcpyDtoH_v2(out, va, G));
	assert_memory_equal(in, out, G);

	/* Two mappings side by side are one range to copies. */
	CK(cuMemCreate(&h2, G, &vmm_prop, 0));
	CK(cuMemMap(va + G, G, 0, h2, 0));
	vmm_access(va + G, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	pattern(in, 2 * G, 9);
	CK(cuMemcpyHtoD_v2(va, in, 2 * G));
	CK(cuMemcpyDtoH_v2(out, va, 2 * G));
	assert_memory_equal(in, out, 2 * G);
	assert_int_equal(cuMemcpyDtoH_v2(out, va, 2 * G + 1), CUDA_ERROR_ILLEGAL_ADDRESS);

	/* Released while mapped: the memory stays until unmapped. */
	assert_int_equal(cuMemAddressFree(va, 4 * G), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemRelease(h));
	CK(cuMemRelease(h2));
	assert_int_equal(cuMemRelease(h2), CUDA_ERROR_INVALID_VALUE);
	assert_true(f0 - free_bytes() == 2 * G);
	CK(cuMemcpyDtoH_v2(out, va, G));
	assert_memory_equal(in, out, G);
	CK(cuMemUnmap(va, 2 * G));
	assert_true(free_bytes() == f0);
	CK(cuMemAddressFree(va, 4 * G));

	/* A hint is taken when the range is free. */
	CK(cuMemAddressReserve(&va2, G, 0, va, 0));
	assert_true(va2 == va);
	CK(cuMemAddressFree(va2, G));
	free(in);
	free(out);
	down();
}

/*
 * Work that runs on an unmapped range faults on the device: the context's
 * sticky error, ILLEGAL_ADDRESS, at its next synchronisation.
 */
static void mem_vmm_kernel_fault(void **state)
{
	const size_t G = 2 * MIB;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	CUstream s;

	(void)state;
	init_mem("64M");
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAddressReserve(&va, G, 0, 0, 0));
	CK(cuMemCreate(&h, G, &vmm_prop, 0));
	CK(cuMemMap(va, G, 0, h, 0));
	vmm_access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	k_fill(s, va, 5, G / 4);
	CK(cuStreamSynchronize(s));
	expect_all(va, 5, G / 4);
	CK(cuMemUnmap(va, G));
	k_fill(s, va, 6, 16);                          /* launches: checked when it runs */
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
	CK(cuMemRelease(h));
	CK(cuMemAddressFree(va, G));
	down();
}

/* The same for an asynchronous copy into a range mapped but never made accessible. */
static void mem_vmm_async_fault(void **state)
{
	const size_t G = 2 * MIB;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	CUstream s;
	uint32_t *pinned;

	(void)state;
	init_mem("64M");
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuMemAllocHost_v2((void **)&pinned, 4096));
	CK(cuMemAddressReserve(&va, G, 0, 0, 0));
	CK(cuMemCreate(&h, G, &vmm_prop, 0));
	CK(cuMemMap(va, G, 0, h, 0));
	CK(cuMemcpyHtoDAsync_v2(va, pinned, 4096, s));
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
	CK(cuMemUnmap(va, G));
	CK(cuMemRelease(h));
	CK(cuMemAddressFree(va, G));
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(mem_capacity),
	cmocka_unit_test(mem_pitch_arrays),
	cmocka_unit_test(mem_two_processes),
	cmocka_unit_test(mem_env_bad),
	cmocka_unit_test(mem_env_zero),
	cmocka_unit_test(mem_vmm_map_unmap),
	cmocka_unit_test(mem_vmm_kernel_fault),
	cmocka_unit_test(mem_vmm_async_fault),
};

TU_MAIN(tests)
