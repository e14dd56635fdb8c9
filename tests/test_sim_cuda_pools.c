/*
 * Memory pools of the simulated CUDA driver (src/sim/cuda/sc_pool.c): a
 * pool reserves the device's memory in 2 MiB chunks, keeps it after
 * frees, gives back what is above its release threshold at a
 * synchronization, and down to a size at cuMemPoolTrimTo; it cannot
 * reserve more than the device has; explicit pools do the same apart.
 */
#include "test_sim_cuda_util.h"

#define MIB (1ull << 20)


static cuuint64_t attr(CUmemoryPool pool, CUmemPool_attribute a)
{
	cuuint64_t v = 0;

	CK(cuMemPoolGetAttribute(pool, a, &v));
	return v;
}

#define RESERVED(pool) attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
#define USED(pool) attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)

/* The default pool: reserve grows in chunks, stays after the free, goes at a sync. */
static void pool_default_reserve(void **state)
{
	CUmemoryPool pool, cur;
	CUdeviceptr a, b, c;
	CUstream s;
	cuuint64_t v = 1;

	(void)state;
	init_mem("64M");
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuDeviceGetDefaultMemPool(&pool, 0));
	CK(cuDeviceGetMemPool(&cur, 0));
	assert_ptr_equal(pool, cur);
	assert_int_equal(attr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 0);
	assert_true(RESERVED(pool) == 0);
	CK(cuMemAllocAsync(&a, 3 * MIB, s));
	assert_true(RESERVED(pool) == 4 * MIB);
	assert_true(USED(pool) == 3 * MIB);
	assert_true(free_bytes() == 60 * MIB);
	/* 1 MiB of free reserve holds this one: nothing more from the device. */
	CK(cuMemAllocAsync(&b, 1 * MIB, s));
	assert_true(RESERVED(pool) == 4 * MIB);
	CK(cuMemAllocAsync(&c, 256, s));
	assert_true(RESERVED(pool) == 6 * MIB);
	assert_true(attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 4 * MIB + 256);
	k_fill(s, a, 7, 1024);
	CK(cuMemFreeAsync(a, s));
	CK(cuMemFreeAsync(b, s));
	CK(cuMemFreeAsync(c, s));
	/* Before a synchronization the pool keeps it all. */
	assert_true(RESERVED(pool) == 6 * MIB);
	assert_true(free_bytes() == 58 * MIB);
	CK(cuStreamSynchronize(s));
	assert_true(USED(pool) == 0);
	assert_true(RESERVED(pool) == 0);
	assert_true(attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 6 * MIB);
	assert_true(free_bytes() == 64 * MIB);
	/* The high marks reset to the current figure; only to 0. */
	assert_int_equal(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &v),
			 CUDA_ERROR_INVALID_VALUE);
	v = 0;
	CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &v));
	assert_true(attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 0);
	assert_int_equal(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
	down();
}

/* A release threshold keeps reserve over synchronizations; trimming gives it back. */
static void pool_threshold_trim(void **state)
{
	cuuint64_t thr = 8 * MIB;
	CUmemoryPool pool;
	CUdeviceptr a, b;
	CUstream s;
	CUevent e;

	(void)state;
	init_mem("64M");
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuEventCreate(&e, 0));
	CK(cuDeviceGetDefaultMemPool(&pool, 0));
	CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
	assert_true(attr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 8 * MIB);
	CK(cuMemAllocAsync(&a, 12 * MIB, s));
	CK(cuMemAllocAsync(&b, 4 * MIB, s));
	assert_true(RESERVED(pool) == 16 * MIB);
	CK(cuMemFreeAsync(a, s));
	CK(cuEventRecord(e, s));
	CK(cuEventSynchronize(e));
	/* 4 MiB used, 8 MiB kept by the threshold. */
	assert_true(USED(pool) == 4 * MIB);
	assert_true(RESERVED(pool) == 8 * MIB);
	assert_true(free_bytes() == 56 * MIB);
	/* Trimming keeps what is used (and at least its argument). */
	CK(cuMemPoolTrimTo(pool, 0));
	assert_true(RESERVED(pool) == 4 * MIB);
	CK(cuMemFreeAsync(b, s));
	CK(cuCtxSynchronize());
	assert_true(RESERVED(pool) == 4 * MIB);    /* under the threshold: kept */
	CK(cuMemPoolTrimTo(pool, 3 * MIB));        /* whole chunks: 4 MiB stay */
	assert_true(RESERVED(pool) == 4 * MIB);
	CK(cuMemPoolTrimTo(pool, 0));
	assert_true(RESERVED(pool) == 0);
	assert_true(free_bytes() == 64 * MIB);
	down();
}

/* A pool cannot reserve more than the device has left. */
static void pool_oom(void **state)
{
	CUmemoryPool pool;
	CUdeviceptr a, b, big;
	CUstream s;

	(void)state;
	init_mem("16M");
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuDeviceGetDefaultMemPool(&pool, 0));
	CK(cuMemAlloc_v2(&big, 8 * MIB));
	CK(cuMemAllocAsync(&a, 6 * MIB, s));
	assert_int_equal(cuMemAllocAsync(&b, 4 * MIB, s), CUDA_ERROR_OUT_OF_MEMORY);
	assert_true(RESERVED(pool) == 6 * MIB);
	/* The free reserve holds what fits in it. */
	CK(cuMemFreeAsync(a, s));
	CK(cuMemAllocAsync(&b, 4 * MIB, s));
	assert_true(RESERVED(pool) == 6 * MIB);
	CK(cuMemFreeAsync(b, s));
	CK(cuStreamSynchronize(s));
	assert_true(RESERVED(pool) == 0);
	CK(cuMemFree_v2(big));
	down();
}

/* An explicit pool: its own figures, made current or named, destroyed. */
static void pool_explicit(void **state)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemoryPool pool, def, cur;
	CUdeviceptr a, b, c;
	CUstream s;

	(void)state;
	init_mem("64M");
	up();
	s = mkstream(CU_STREAM_NON_BLOCKING);
	CK(cuDeviceGetDefaultMemPool(&def, 0));
	CK(cuMemPoolCreate(&pool, &props));
	assert_ptr_not_equal(pool, def);
	CK(cuMemAllocFromPoolAsync(&a, 5 * MIB, pool, s));
	assert_true(RESERVED(pool) == 6 * MIB);
	assert_true(RESERVED(def) == 0);
	assert_true(free_bytes() == 58 * MIB);
	k_fill(s, a, 3, 1024);
	CK(cuStreamSynchronize(s));
	expect_all(a, 3, 1024);
	/* Current: cuMemAllocAsync takes from it. */
	CK(cuDeviceSetMemPool(0, pool));
	CK(cuDeviceGetMemPool(&cur, 0));
	assert_ptr_equal(cur, pool);
	CK(cuMemAllocAsync(&b, 1 * MIB, s));
	assert_true(RESERVED(pool) == 6 * MIB);
	assert_true(USED(pool) == 6 * MIB);
	/* cuMemFree_v2 of pool memory returns it to the pool. */
	CK(cuMemFree_v2(b));
	assert_true(USED(pool) == 5 * MIB);
	/* Destroyed with a block out: keeps only that, then nothing. */
	CK(cuMemPoolDestroy(pool));
	CK(cuDeviceGetMemPool(&cur, 0));
	assert_ptr_equal(cur, def);
	assert_int_equal(cuMemAllocFromPoolAsync(&c, 1 * MIB, pool, s), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAllocFromPoolAsync(&c, 1 * MIB, NULL, s), CUDA_ERROR_INVALID_VALUE);
	assert_true(free_bytes() == 64 * MIB - 5 * MIB);
	CK(cuMemFreeAsync(a, s));
	CK(cuStreamSynchronize(s));
	assert_true(free_bytes() == 64 * MIB);
	props.location.id = 1;
	assert_int_equal(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_DEVICE);
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(pool_default_reserve),
	cmocka_unit_test(pool_threshold_trim),
	cmocka_unit_test(pool_oom),
	cmocka_unit_test(pool_explicit),
};

TU_MAIN(tests)
