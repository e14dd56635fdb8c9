/*
 * Device memory through the CUDA driver API, for the shim's memory tests
 * (test_cuda_shim.c): what the application is told of the device's memory,
 * and which allocations succeed, one line each, so that a run under a
 * limit (XSCHED_MEMORY_LIMIT=64M) can be checked against what the limit
 * means: a 64 MiB device, 48 + 16 MiB fit, one more byte does not until
 * something is freed, and the process goes on working after a refusal.
 *
 * Usage: cu_mem_prog
 *        cu_mem_prog apis
 *        cu_mem_prog pools
 *        cu_mem_prog serve FIFO
 *
 * evict: memory preemption (XSCHED_MEMORY_PREEMPTION=1, the test build of
 * the shim): allocations with patterned contents and work queued on them
 * are evicted (the device's free memory grows by what was freed), then
 * touched by a synchronous copy, a kernel, a free: each brings them back
 * (or, the free, forgets them), contents identical byte for byte; then a
 * thread copies in a loop while the main thread evicts 40 times.
 * apis: each other allocation call of the driver API, with what the
 * process holds after it (total - free of cuMemGetInfo_v2: under a limit,
 * what the shim counts), then after each free.
 * pools: stream-ordered allocations from the default pool (its release
 * threshold raised to 64 MiB) and from a pool of its own, with what the
 * process holds after each allocation, free, synchronization and trim.
 *
 * serve: commands, one per line, read from FIFO, each answered with a line
 * on stdout: "alloc SIZE" (bytes, or with M: MiB) -> "alloc SIZE: RESULT";
 * "work" (a kernel on a stream of its own, on a word of its own: the
 * process gets a queue) -> "work ok"; "pattern SEED" (every allocation
 * filled with pattern SEED) -> "pattern SEED"; "check SEED" -> "check ok",
 * or "check WRONG"; "info" -> "info total=... free=..."; "free"
 * (everything allocated) -> "freed N"; "quit". For the tests that watch a
 * process holding memory through the daemon.
 */
#include "vendor/cuda/cu_api.h"
#include "cu_check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024 * 1024)
#define N 1024

static void info(const char *what)
{
	size_t free = 0, total = 0;

	CK(cuMemGetInfo_v2(&free, &total));
	printf("%s total=%zu free=%zu\n", what, total, free);
}

/* What the process holds, as a limit shows it: total - free. */
static size_t held(void)
{
	size_t free = 0, total = 0;

	CK(cuMemGetInfo_v2(&free, &total));
	return total - free;
}

static int apis(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 256, .Height = 256, .Depth = 16,
				       .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
	CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 1024, .Height = 1024,
				     .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 4 };
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemGenericAllocationHandle h;
	CUmipmappedArray mm;
	CUdeviceptr p, m;
	CUarray a2, a3;
	CUcontext ctx;
	CUdevice dev;
	size_t pitch = 0, gran = 0;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	printf("start held=%zu\n", held());
	printf("pitch: %d\n", cuMemAllocPitch_v2(&p, &pitch, 1000, 4096, 4));
	printf("pitch held=%zu (pitch x height %zu)\n", held(), pitch * 4096);
	printf("managed 100M: %d\n", cuMemAllocManaged(&m, 100 * MIB, 1));
	printf("managed held=%zu\n", held());
	printf("array 2D: %d\n", cuArrayCreate_v2(&a2, &d2));
	printf("array 2D held=%zu\n", held());
	printf("array 3D: %d\n", cuArray3DCreate_v2(&a3, &d3));
	printf("array 3D held=%zu\n", held());
	printf("mipmapped: %d\n", cuMipmappedArrayCreate(&mm, &d3, 3));
	printf("mipmapped held=%zu\n", held());
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	printf("create: %d\n", cuMemCreate(&h, 4 * gran, &prop, 0));
	printf("create held=%zu\n", held());
	printf("create over: %d\n", cuMemCreate(&h, 64 * MIB, &prop, 0));
	CK(cuMemRelease(h));
	printf("released held=%zu\n", held());
	CK(cuMipmappedArrayDestroy(mm));
	CK(cuArrayDestroy(a3));
	CK(cuArrayDestroy(a2));
	printf("arrays destroyed held=%zu\n", held());
	CK(cuMemFree_v2(p));
	CK(cuMemFree_v2(m));
	printf("end held=%zu\n", held());
	return 0;
}

/* Stream-ordered memory: what the pools reserve, as the process holds it. */
static int pools(void)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	cuuint64_t keep = 64 * MIB;
	CUmemoryPool def, pool;
	CUdeviceptr a, b, c, x;
	CUcontext ctx;
	CUdevice dev;
	CUstream s;
	CUresult rc;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuDeviceGetDefaultMemPool(&def, dev));
	CK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
	printf("start held=%zu\n", held());
	printf("async 20M: %d\n", cuMemAllocAsync(&a, 20 * MIB, s));
	printf("async held=%zu\n", held());
	CK(cuMemFreeAsync(a, s));
	printf("freed held=%zu\n", held());
	CK(cuStreamSynchronize(s));
	printf("synced held=%zu\n", held());
	printf("alloc 40M: %d\n", cuMemAlloc_v2(&x, 40 * MIB));
	/* The pool's free reserve holds it, over the limit or not. */
	printf("async 10M: %d\n", cuMemAllocAsync(&b, 10 * MIB, s));
	printf("reused held=%zu\n", held());
	rc = cuMemAllocAsync(&c, 16 * MIB, s);
	printf("async 16M: %d\n", rc);
	if (rc == CUDA_SUCCESS)
		CK(cuMemFreeAsync(c, s));
	CK(cuMemFreeAsync(b, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemPoolTrimTo(def, 0));
	printf("trimmed held=%zu\n", held());
	CK(cuMemPoolCreate(&pool, &props));
	printf("pool 8M: %d\n", cuMemAllocFromPoolAsync(&a, 8 * MIB, pool, s));
	printf("pool held=%zu\n", held());
	rc = cuMemAllocFromPoolAsync(&b, 24 * MIB, pool, s);
	printf("pool 24M: %d\n", rc);
	if (rc == CUDA_SUCCESS)
		CK(cuMemFreeAsync(b, s));
	CK(cuMemFreeAsync(a, s));
	CK(cuStreamSynchronize(s));
	printf("pool synced held=%zu\n", held());
	CK(cuMemPoolDestroy(pool));
	CK(cuMemFree_v2(x));
	printf("end held=%zu\n", held());
	return 0;
}

static long long (*t_evict)(void);
static unsigned long long (*t_evicted)(void);

static size_t dev_free(void)
{
	size_t free = 0, total = 0;

	CK(cuMemGetInfo_v2(&free, &total));
	return free;
}

/* Byte i of the pattern of allocation @seed. */
static uint8_t pat(unsigned seed, size_t i)
{
	return (uint8_t)(i * 7 + seed * 13 + (i >> 12));
}

/* Whether @n bytes at @p hold pattern @seed, each whole 32-bit word plus
 * @plus (what sf_inc did to them; the tail of bytes untouched). */
static int check(CUdeviceptr p, size_t n, unsigned seed, unsigned plus)
{
	uint8_t *h = malloc(n), *want = malloc(n);
	int ok;

	for (size_t i = 0; i < n; i++)
		want[i] = pat(seed, i);
	for (size_t i = 0; i + 4 <= n && plus; i += 4) {
		uint32_t w;

		memcpy(&w, want + i, 4);
		w += plus;
		memcpy(want + i, &w, 4);
	}
	CK(cuMemcpyDtoH_v2(h, p, n));
	ok = !memcmp(h, want, n);
	free(h);
	free(want);
	return ok;
}

static void fill_pattern(CUdeviceptr p, size_t n, unsigned seed)
{
	uint8_t *h = malloc(n);

	for (size_t i = 0; i < n; i++)
		h[i] = pat(seed, i);
	CK(cuMemcpyHtoD_v2(p, h, n));
	free(h);
}

struct racer {
	CUcontext ctx;
	CUdeviceptr p;
	size_t n;
	_Atomic int stop;
	int bad, rounds;
};

static void *race_copies(void *arg)
{
	struct racer *r = arg;

	CK(cuCtxSetCurrent(r->ctx));
	while (!atomic_load(&r->stop)) {
		r->bad += !check(r->p, r->n, 3, 0);
		r->rounds++;
	}
	return NULL;
}

static int evict(void)
{
	const size_t na = 3 * MIB, nb = 5 * MIB + 7;
	CUdeviceptr a, b;
	CUfunction inc;
	CUcontext ctx;
	CUmodule m;
	CUstream s;
	CUdevice dev;
	struct racer r = { 0 };
	pthread_t t;
	uint64_t cnt = na / 4;
	void *args[] = { &a, &cnt };
	size_t before;
	long long freed;
	int i, took = 0;

	t_evict = (long long (*)(void))dlsym(RTLD_DEFAULT, "cu_test_evict");
	t_evicted = (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "cu_test_evicted");
	if (!t_evict || !t_evicted) {
		printf("no test build of the shim\n");
		return 1;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&inc, m, "sf_inc"));
	CK(cuStreamCreate(&s, 0));
	CK(cuMemAlloc_v2(&a, na));
	CK(cuMemAlloc_v2(&b, nb));
	fill_pattern(a, na, 1);
	fill_pattern(b, nb, 2);
	/* Work queued on a: it completes before the memory goes. */
	CK(cuLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	before = dev_free();
	freed = t_evict();
	printf("evicted %lld, device free grew by %zu, away %llu\n", freed, dev_free() - before,
	       t_evicted());
	/* A synchronous copy brings everything back. */
	printf("copy after eviction: a %s", check(a, na, 1, 1) ? "intact" : "WRONG");
	printf(", away %llu\n", t_evicted());
	printf("b %s\n", check(b, nb, 2, 0) ? "intact" : "WRONG");
	/* A kernel (through the queue) brings it back. */
	freed = t_evict();
	CK(cuLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	CK(cuStreamSynchronize(s));
	printf("kernel after eviction: away %llu, a %s\n", t_evicted(),
	       check(a, na, 1, 2) ? "intact" : "WRONG");
	/* A free of evicted memory only forgets it. */
	freed = t_evict();
	CK(cuMemFree_v2(b));
	printf("free while evicted: away %llu\n", t_evicted());
	CK(cuMemFree_v2(a));
	printf("all freed: away %llu\n", t_evicted());
	/* Evictions while another thread copies. */
	CK(cuMemAlloc_v2(&r.p, r.n = 2 * MIB + 100));
	fill_pattern(r.p, r.n, 3);
	r.ctx = ctx;
	pthread_create(&t, NULL, race_copies, &r);
	for (i = 0; i < 40; i++) {
		freed = t_evict();
		if (freed < 0)
			printf("eviction %d failed\n", i);
		took += freed > 0;
		usleep(1000);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	printf("race: %s (%d wrong of %d copies; %d evictions took memory)\n",
	       r.bad ? "WRONG" : "intact", r.bad, r.rounds, took);
	printf("race took memory: %s\n", took > 0 ? "yes" : "no");
	CK(cuMemFree_v2(r.p));
	CK(cuStreamDestroy_v2(s));
	return 0;
}

static int serve(const char *fifo)
{
	CUdeviceptr held[64];
	size_t held_n[64];
	unsigned nheld = 0;
	CUcontext ctx;
	CUdevice dev;
	char line[128];
	FILE *in;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	printf("serving\n");
	in = fopen(fifo, "r");
	if (!in)
		return 1;
	while (fgets(line, sizeof(line), in)) {
		unsigned long long n;
		char unit = 0;

		if (sscanf(line, "alloc %llu%c", &n, &unit) >= 1) {
			CUdeviceptr p;
			CUresult rc = cuMemAlloc_v2(&p, unit == 'M' ? n * MIB : n);

			if (rc == CUDA_SUCCESS && nheld < 64) {
				held_n[nheld] = unit == 'M' ? n * MIB : n;
				held[nheld++] = p;
			}
			printf("alloc %llu%s: %d\n", n, unit == 'M' ? "M" : "", rc);
		} else if (!strncmp(line, "work", 4)) {
			static CUdeviceptr word;
			static CUfunction fill;
			static CUstream s;
			CUmodule m;
			uint32_t v = 1;
			uint64_t cnt = 1;
			void *args[] = { &word, &v, &cnt };

			if (!word) {
				CK(cuModuleLoadData(&m, "xs"));
				CK(cuModuleGetFunction(&fill, m, "sf_fill"));
				CK(cuStreamCreate(&s, 0));
				CK(cuMemAlloc_v2(&word, 4));
			}
			CK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
			CK(cuStreamSynchronize(s));
			printf("work ok\n");
		} else if (sscanf(line, "pattern %llu", &n) == 1) {
			for (unsigned i = 0; i < nheld; i++)
				fill_pattern(held[i], held_n[i], (unsigned)n + i);
			printf("pattern %llu\n", n);
		} else if (sscanf(line, "check %llu", &n) == 1) {
			int ok = 1;

			for (unsigned i = 0; i < nheld; i++)
				ok &= check(held[i], held_n[i], (unsigned)n + i, 0);
			printf("check %s\n", ok ? "ok" : "WRONG");
		} else if (!strncmp(line, "info", 4)) {
			info("info");
		} else if (!strncmp(line, "free", 4)) {
			for (unsigned i = 0; i < nheld; i++)
				CK(cuMemFree_v2(held[i]));
			printf("freed %u\n", nheld);
			nheld = 0;
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	fclose(in);
	return 0;
}

int main(int argc, char **argv)
{
	CUdeviceptr a, b, c, d, e;
	CUfunction fill;
	CUcontext ctx;
	CUstream s;
	CUmodule m;
	CUdevice dev;
	size_t total;
	uint32_t host[N], v = 7;
	uint64_t n = N;
	void *args[] = { &a, &v, &n };
	int ok = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "apis"))
		return apis();
	if (argc == 2 && !strcmp(argv[1], "evict"))
		return evict();
	if (argc == 2 && !strcmp(argv[1], "pools"))
		return pools();
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuDeviceTotalMem_v2(&total, dev));
	printf("device total=%zu\n", total);
	info("start");
	printf("alloc 48M: %d\n", cuMemAlloc_v2(&a, 48 * MIB));
	printf("alloc 16M: %d\n", cuMemAlloc_v2(&b, 16 * MIB));
	printf("alloc 1: %d\n", cuMemAlloc_v2(&c, 1));
	info("full");
	printf("free 16M: %d\n", cuMemFree_v2(b));
	CK(cuStreamCreate(&s, 0));
	printf("async 16M: %d\n", cuMemAllocAsync(&d, 16 * MIB, s));
	printf("async 1: %d\n", cuMemAllocAsync(&e, 1, s));
	printf("free async 16M: %d\n", cuMemFreeAsync(d, s));
	CK(cuStreamSynchronize(s));
	printf("alloc 16M again: %d\n", cuMemAlloc_v2(&b, 16 * MIB));
	/* After the refusals the process works as before. */
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&fill, m, "sf_fill"));
	CK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	CK(cuMemcpyDtoHAsync_v2(host, a, sizeof(host), s));
	CK(cuStreamSynchronize(s));
	for (int i = 0; i < N; i++)
		ok &= host[i] == v;
	printf("work %s\n", ok ? "ok" : "WRONG");
	CK(cuMemFree_v2(a));
	CK(cuMemFree_v2(b));
	info("end");
	CK(cuStreamDestroy_v2(s));
	return 0;
}
