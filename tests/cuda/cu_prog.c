/*
 * A CUDA driver-API application for the shim's tests, run natively and
 * under the shim on the simulated driver: each phase prints one line, and
 * the test compares the two runs line by line. The phases exercise the
 * orderings the shim must keep (within a stream, across streams through
 * events, the legacy default stream against blocking streams, per-thread
 * default streams), the asynchronous-copy semantics of pageable memory,
 * events, host functions, graphs from stream capture, errors and bad input,
 * streams the shim did not see created, green contexts, and a context's
 * synchronisation while other threads destroy their streams.
 * The data kernels of the simulated driver (sf_fill, sf_inc, sf_scale,
 * sf_checksum) make any reordering visible as a different checksum.
 *
 * Usage: cu_prog [PHASE...]   (no argument: every phase)
 */
#include "vendor/cuda/cu_api.h"
#include "cu_check.h"
#include "sim/cuda/sc_private.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096

static CUfunction f_fill, f_inc, f_scale, f_sum, f_spin;
static CUdeviceptr d_a, d_b, d_sum;
static CUcontext ctx_main;

static void fill(CUstream s, CUdeviceptr p, unsigned v)
{
	uint64_t n = N;
	void *args[] = { &p, &v, &n };

	CK(cuLaunchKernel(f_fill, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static void inc(CUstream s, CUdeviceptr p)
{
	uint64_t n = N;
	void *args[] = { &p, &n };

	CK(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static void scale(CUstream s, CUdeviceptr p, unsigned k)
{
	uint64_t n = N;
	void *args[] = { &p, &k, &n };

	CK(cuLaunchKernel(f_scale, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static void spin(CUstream s, uint64_t ns)
{
	void *args[] = { &ns };

	CK(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

/* Checksum of @p, computed on the device, after the legacy stream. */
static unsigned long long checksum(CUdeviceptr p)
{
	uint64_t n = N * 4, out[2] = { 0, 0 };
	void *args[] = { &p, &n, &d_sum };

	CK(cuLaunchKernel(f_sum, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CK(cuMemcpyDtoH_v2(out, d_sum, sizeof(out)));
	return (unsigned long long)out[0];
}

/* Within one stream: fill, inc, scale, inc must apply in order. */
static void phase_order(void)
{
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	fill(s, d_a, 5);
	for (int i = 0; i < 20; i++) {
		inc(s, d_a);
		scale(s, d_a, 3);
	}
	CK(cuStreamSynchronize(s));
	printf("order %llx\n", checksum(d_a));
	CK(cuStreamDestroy_v2(s));
}

/* Across non-blocking streams, an event orders work; a long spin on the
 * first stream makes a missing wait visible. */
static void phase_events(void)
{
	CUstream s1, s2;
	CUevent e;

	CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	fill(s1, d_a, 2);
	spin(s1, 2000000);
	inc(s1, d_a);
	CK(cuEventRecord(e, s1));
	CK(cuStreamWaitEvent(s2, e, 0));
	scale(s2, d_a, 7);
	CK(cuStreamSynchronize(s2));
	printf("events %llx\n", checksum(d_a));
	CK(cuEventDestroy_v2(e));
	CK(cuStreamDestroy_v2(s1));
	CK(cuStreamDestroy_v2(s2));
}

/* The legacy default stream waits for blocking streams and back. */
static void phase_legacy(void)
{
	CUstream b;

	CK(cuStreamCreate(&b, CU_STREAM_DEFAULT));
	fill(NULL, d_a, 3);
	spin(NULL, 2000000);
	inc(b, d_a);          /* after the legacy work */
	spin(b, 2000000);
	scale(NULL, d_a, 5);  /* after the blocking stream's work */
	CK(cuCtxSynchronize());
	printf("legacy %llx\n", checksum(d_a));
	CK(cuStreamDestroy_v2(b));
}

/* Per-thread default stream through the entry points cudart fetches with
 * cuGetProcAddress(flags=2), and the CU_STREAM_PER_THREAD handle. */
static void phase_ptsz(void)
{
	__typeof__(&cuLaunchKernel) launch;
	__typeof__(&cuStreamSynchronize) ssync;
	CUdriverProcAddressQueryResult st;
	CUdeviceptr p = d_b;
	unsigned v = 9;
	uint64_t n = N;
	void *args[] = { &p, &v, &n }, *args2[] = { &p, &n };

	CK(cuGetProcAddress_v2("cuLaunchKernel", (void **)&launch, 12000,
			       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CK(cuGetProcAddress_v2("cuStreamSynchronize", (void **)&ssync, 12000,
			       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CK(launch(f_fill, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CK(launch(f_inc, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD, args2, NULL));
	CK(ssync(NULL));
	printf("ptsz %llx status %d\n", checksum(d_b), st);
}

/* Pageable memory: an async H2D source is reusable on return; an async
 * D2H destination is complete on return. */
static void phase_pageable(void)
{
	unsigned *h = malloc(N * 4), *back = malloc(N * 4);
	CUstream s;
	unsigned long long sum = 0;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < N; i++)
		h[i] = (unsigned)i;
	spin(s, 2000000);
	CK(cuMemcpyHtoDAsync_v2(d_b, h, N * 4, s));
	memset(h, 0xff, N * 4);
	inc(s, d_b);
	CK(cuMemcpyDtoHAsync_v2(back, d_b, N * 4, s));
	for (int i = 0; i < N; i++)
		sum += back[i];
	printf("pageable %llu\n", sum);
	CK(cuStreamDestroy_v2(s));
	free(h);
	free(back);
}

static void host_fn(void *arg)
{
	unsigned *order = arg;

	order[order[0] + 1] = order[0] + 100;
	order[0]++;
}

/* Host functions run in stream order with the kernels. */
static void phase_host(void)
{
	static unsigned order[8];
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	spin(s, 1000000);
	CK(cuLaunchHostFunc(s, host_fn, order));
	spin(s, 1000000);
	CK(cuLaunchHostFunc(s, host_fn, order));
	CK(cuStreamSynchronize(s));
	printf("host %u %u %u\n", order[0], order[1], order[2]);
	CK(cuStreamDestroy_v2(s));
}

/* Event timing, and queries that see unfinished work. */
static void phase_timing(void)
{
	CUevent a, b;
	CUstream s;
	float ms = 0;
	CUresult q;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&a, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&b, CU_EVENT_DEFAULT));
	CK(cuEventRecord(a, s));
	spin(s, 5000000);
	CK(cuEventRecord(b, s));
	q = cuEventQuery(b);
	CK(cuEventSynchronize(b));
	CK(cuEventElapsedTime_v2(&ms, a, b));
	printf("timing query=%d after=%d elapsed_ge_5ms=%d\n", q, cuEventQuery(b), ms >= 4.9f);
	CK(cuEventDestroy_v2(a));
	CK(cuEventDestroy_v2(b));
	CK(cuStreamDestroy_v2(s));
}

/* A captured sequence, instantiated and launched twice. */
static void phase_graph(void)
{
	CUgraphExec exec;
	CUgraph g;
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	fill(s, d_a, 4);
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	inc(s, d_a);
	scale(s, d_a, 2);
	CK(cuStreamEndCapture(s, &g));
	CK(cuGraphInstantiateWithFlags(&exec, g, 0));
	CK(cuGraphLaunch(exec, s));
	CK(cuGraphLaunch(exec, s));
	CK(cuStreamSynchronize(s));
	printf("graph %llx\n", checksum(d_a));
	CK(cuGraphExecDestroy(exec));
	CK(cuGraphDestroy(g));
	CK(cuStreamDestroy_v2(s));
}

/* Bad input gives the driver's error codes. */
static void phase_errors(void)
{
	CUstream s;
	CUevent e;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamDestroy_v2(s));
	CK(cuEventCreate(&e, 0));
	CK(cuEventDestroy_v2(e));
	printf("errors launch_bad_stream=%d sync_bad_stream=%d record_dead_event=%d "
	       "query_dead_event=%d null_params=%d free_bad=%d\n",
	       cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
	       cuStreamSynchronize(s), cuEventRecord(e, NULL), cuEventQuery(e),
	       cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
	       cuMemFree_v2((CUdeviceptr)0x10));
}

/* Enough work on @s that an XQueue still buffers some of it (more than
 * its launch window), behind a spin. */
static void backlog(CUstream s, CUdeviceptr p, unsigned v)
{
	fill(s, p, v);
	spin(s, 2000000);
	for (int i = 0; i < 40; i++)
		inc(s, p);
}

/*
 * Calls the shim passes to the driver rather than buffering (generic
 * hooks): each must land behind the stream's earlier work. A memset with
 * the stream in a register, one 2D memset with it as the sixth argument,
 * a batch copy with it on the stack, the per-thread variant, and a
 * synchronous memset of the legacy stream.
 */
static void phase_generic(void)
{
	__typeof__(&cuLaunchKernel) launch_pt;
	__typeof__(&cuMemsetD16Async) memset16_pt;
	__typeof__(&cuStreamSynchronize) sync_pt;
	CUdriverProcAddressQueryResult st;
	CUdeviceptr dst[2] = { d_b, d_b + N * 2 }, src[2] = { d_a, d_a + N * 2 };
	size_t sizes[2] = { N * 2, N * 2 }, idx = 0;
	CUdeviceptr p = d_b;
	unsigned v = 4;
	uint64_t n = N;
	void *fill_args[] = { &p, &v, &n }, *inc_args[] = { &p, &n };
	unsigned long long a, b, c, d;
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	backlog(s, d_a, 1);
	CK(cuMemsetD16Async(d_a, 0x0102, N, s));
	inc(s, d_a);
	CK(cuStreamSynchronize(s));
	a = checksum(d_a);

	backlog(s, d_a, 2);
	CK(cuMemsetD2D8Async(d_a, 64, 7, 16, N * 4 / 64, s));
	inc(s, d_a);
	CK(cuStreamSynchronize(s));
	b = checksum(d_a);

	backlog(s, d_a, 3);
	CK(cuMemcpyBatchAsync_v2(dst, src, sizes, 2, NULL, &idx, 1, s));
	inc(s, d_a);
	CK(cuStreamSynchronize(s));
	c = checksum(d_b);

	CK(cuGetProcAddress_v2("cuLaunchKernel", (void **)&launch_pt, 12000,
			       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CK(cuGetProcAddress_v2("cuMemsetD16Async", (void **)&memset16_pt, 12000,
			       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CK(cuGetProcAddress_v2("cuStreamSynchronize", (void **)&sync_pt, 12000,
			       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CK(launch_pt(f_fill, 1, 1, 1, 1, 1, 1, 0, NULL, fill_args, NULL));
	for (int i = 0; i < 40; i++)
		CK(launch_pt(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, inc_args, NULL));
	CK(memset16_pt(d_b, 0x0304, N / 2, NULL));
	CK(launch_pt(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, inc_args, NULL));
	CK(sync_pt(NULL));
	d = checksum(d_b);

	backlog(NULL, d_a, 5);
	CK(cuMemsetD16_v2(d_a, 0x0506, N / 2));
	printf("generic %llx %llx %llx %llx %llx\n", a, b, c, d, checksum(d_a));
	CK(cuStreamDestroy_v2(s));
}

/*
 * A high-priority stream waits for an event of a low-priority one whose
 * record is still buffered behind a backlog: a priority scheduler that
 * suspends the low stream for the high one must let it run (the dependency
 * is exposed to the scheduler), or this never finishes.
 */
static void phase_deps(void)
{
	int least, greatest;
	CUstream lo, hi;
	CUevent e;

	CK(cuCtxGetStreamPriorityRange(&least, &greatest));
	CK(cuStreamCreateWithPriority(&lo, CU_STREAM_NON_BLOCKING, least));
	CK(cuStreamCreateWithPriority(&hi, CU_STREAM_NON_BLOCKING, greatest));
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	fill(lo, d_a, 6);
	for (int i = 0; i < 40; i++) {
		spin(lo, 250000);
		inc(lo, d_a);
	}
	CK(cuEventRecord(e, lo));
	CK(cuStreamWaitEvent(hi, e, 0));
	scale(hi, d_a, 3);
	CK(cuStreamSynchronize(hi));
	printf("deps %llx priorities %d\n", checksum(d_a), least != greatest);
	CK(cuEventDestroy_v2(e));
	CK(cuStreamDestroy_v2(lo));
	CK(cuStreamDestroy_v2(hi));
}

/*
 * 2D and 3D copies behind buffered work: pinned host to device (2D),
 * device to device (3D), and device to pageable host memory (2D, complete
 * on return).
 */
static void phase_copy2d(void)
{
	CUDA_MEMCPY2D p = { 0 }, back = { 0 };
	CUDA_MEMCPY3D q = { 0 };
	unsigned *h, *page = malloc(N * 4);
	unsigned long long sum = 0;
	CUstream s;

	if (!page)
		exit(1);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAllocHost_v2((void **)&h, N * 4));
	for (unsigned i = 0; i < N; i++)
		h[i] = i * 7;
	backlog(s, d_b, 1);
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = h;
	p.srcPitch = 256;
	p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p.dstDevice = d_a;
	p.dstPitch = 256;
	p.WidthInBytes = 256;
	p.Height = N * 4 / 256;
	CK(cuMemcpy2DAsync_v2(&p, s));
	inc(s, d_a);
	q.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	q.srcDevice = d_a;
	q.srcPitch = 1024;
	q.srcHeight = 4;
	q.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	q.dstDevice = d_b;
	q.dstPitch = 1024;
	q.dstHeight = 4;
	q.WidthInBytes = 1024;
	q.Height = 4;
	q.Depth = N * 4 / 4096;
	CK(cuMemcpy3DAsync_v2(&q, s));
	scale(s, d_b, 3);
	back = p;
	back.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	back.srcHost = NULL;
	back.srcDevice = d_b;
	back.dstMemoryType = CU_MEMORYTYPE_HOST;
	back.dstDevice = 0;
	back.dstHost = page;
	CK(cuMemcpy2DAsync_v2(&back, s));
	for (unsigned i = 0; i < N; i++)
		sum = sum * 31 + page[i];
	CK(cuStreamSynchronize(s));
	printf("copy2d %llx %llx %llx\n", checksum(d_a), checksum(d_b), sum);
	CK(cuMemFreeHost(h));
	CK(cuStreamDestroy_v2(s));
	free(page);
}

struct capturer {
	pthread_barrier_t *bar;
	CUgraphExec exec;
	CUresult rc;
};

/* Captures inc, scale on its own stream while the main thread computes. */
static void *capture_main(void *arg)
{
	struct capturer *c = arg;
	CUresult rc = CUDA_SUCCESS;
	CUstream s;
	CUgraph g;

	if (cuCtxSetCurrent(ctx_main) || cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
		c->rc = CUDA_ERROR_UNKNOWN;
		pthread_barrier_wait(c->bar);
		pthread_barrier_wait(c->bar);
		return NULL;
	}
	rc = cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
	if (rc == CUDA_SUCCESS) {
		inc(s, d_b);
		scale(s, d_b, 5);
	}
	pthread_barrier_wait(c->bar);   /* capturing: the main thread works */
	pthread_barrier_wait(c->bar);   /* the main thread is done */
	if (rc == CUDA_SUCCESS && (rc = cuStreamEndCapture(s, &g)) == CUDA_SUCCESS) {
		rc = cuGraphInstantiateWithFlags(&c->exec, g, 0);
		cuGraphDestroy(g);
	}
	cuStreamDestroy_v2(s);
	c->rc = rc;
	return NULL;
}

/*
 * A capture on one thread (thread-local mode) while another thread's
 * stream does scheduled work: that work is not captured and computes as
 * usual; the captured graph then runs as recorded.
 */
static void phase_capture_mt(void)
{
	pthread_barrier_t bar;
	struct capturer c = { .bar = &bar };
	unsigned long long a;
	pthread_t t;
	CUstream s;

	pthread_barrier_init(&bar, NULL, 2);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	if (pthread_create(&t, NULL, capture_main, &c)) {
		printf("capture_mt no thread\n");
		exit(1);
	}
	pthread_barrier_wait(&bar);
	backlog(s, d_a, 8);
	CK(cuStreamSynchronize(s));
	a = checksum(d_a);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	CK(c.rc);
	fill(s, d_b, 2);
	CK(cuGraphLaunch(c.exec, s));
	CK(cuGraphLaunch(c.exec, s));
	CK(cuStreamSynchronize(s));
	printf("capture_mt %llx %llx\n", a, checksum(d_b));
	CK(cuGraphExecDestroy(c.exec));
	CK(cuStreamDestroy_v2(s));
	pthread_barrier_destroy(&bar);
}

/*
 * cuCtxSynchronize on one thread while others create a stream, use it and
 * destroy it, over and over: the shim's context synchronisation waits on
 * the queues of the context's streams, and a queue that another thread's
 * destroy freed meanwhile was used after free (ASan; a crash). Each
 * thread's data must come back.
 */
enum { RACE_THREADS = 2, RACE_ROUNDS = 200 };

static _Atomic int race_done;

static void *race_stream_main(void *arg)
{
	CUdeviceptr p = *(CUdeviceptr *)arg;
	CUstream s;

	CK(cuCtxSetCurrent(ctx_main));
	for (int i = 0; i < RACE_ROUNDS; i++) {
		/* One fill per stream, the same value: what the streams of
		 * different rounds, unordered, leave does not depend on their
		 * order. The destroy finds it pending. */
		CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
		fill(s, p, 7);
		CK(cuStreamDestroy_v2(s));
	}
	CK(cuCtxSynchronize());
	atomic_fetch_add(&race_done, 1);
	return NULL;
}

static void phase_sync_race(void)
{
	CUdeviceptr p[RACE_THREADS];
	pthread_t t[RACE_THREADS];
	unsigned long long sum[RACE_THREADS];

	for (int i = 0; i < RACE_THREADS; i++) {
		CK(cuMemAlloc_v2(&p[i], N * 4));
		if (pthread_create(&t[i], NULL, race_stream_main, &p[i])) {
			printf("sync_race no thread\n");
			exit(1);
		}
	}
	while (atomic_load(&race_done) < RACE_THREADS)
		CK(cuCtxSynchronize());
	for (int i = 0; i < RACE_THREADS; i++) {
		pthread_join(t[i], NULL);
		sum[i] = checksum(p[i]);
		CK(cuMemFree_v2(p[i]));
	}
	printf("sync_race %llx %llx\n", sum[0], sum[1]);
}

/*
 * fork() while a stream has buffered work: the child sees the driver as
 * natively (the shim steps aside in it) and the parent's work completes.
 */
static void phase_fork(void)
{
	int st = 0, v = 0;
	CUstream s;
	pid_t pid;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	backlog(s, d_a, 9);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(cuDriverGetVersion(&v) == CUDA_SUCCESS && v > 0 ? 0 : 3);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	CK(cuStreamSynchronize(s));
	printf("fork %llx child %d\n", checksum(d_a), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	CK(cuStreamDestroy_v2(s));
}

/* Queues the shim made so far (-1 without the shim), and what phases saw. */
static int (*shim_queues)(void);
static int adopted_queues = -1, green_queues = -1;

static int queues_now(void)
{
	return shim_queues ? shim_queues() : -1;
}

/* The simulated driver's private table: streams the shim never sees made. */
static const struct sc_private_table *private_table(void)
{
	static const CUuuid id = SC_PRIVATE_TABLE_ID;
	const void *t = NULL;

	CK(cuGetExportTable(&t, &id));
	return t;
}

/*
 * A stream and an event the shim did not see created, first met in a
 * launch and in a record: adopted, they order through events with a
 * scheduled stream both ways, buffered records included (the scheduled
 * stream's record still buffered behind its backlog when the other waits).
 */
static void phase_adopt(void)
{
	const struct sc_private_table *t = private_table();
	unsigned long long a, b, c;
	CUstream h, s;
	CUevent e, f;
	int q0;

	CK(t->stream_create(&h, CU_STREAM_NON_BLOCKING, 0));
	CK(t->event_create(&f, CU_EVENT_DISABLE_TIMING));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	q0 = queues_now();
	fill(h, d_a, 2);
	adopted_queues = queues_now() - q0;
	spin(h, 2000000);
	inc(h, d_a);
	CK(cuEventRecord(e, h));
	CK(cuStreamWaitEvent(s, e, 0));
	scale(s, d_a, 7);
	CK(cuStreamSynchronize(s));
	a = checksum(d_a);

	backlog(s, d_b, 3);
	CK(cuEventRecord(f, s));
	CK(cuStreamWaitEvent(h, f, 0));
	scale(h, d_b, 5);
	CK(cuStreamSynchronize(h));
	b = checksum(d_b);

	/* Both directions with backlogs: the hidden stream's record buffered. */
	backlog(h, d_a, 4);
	CK(cuEventRecord(f, h));
	CK(cuStreamWaitEvent(s, f, 0));
	scale(s, d_a, 3);
	CK(cuStreamSynchronize(s));
	c = checksum(d_a);
	printf("adopt %llx %llx %llx\n", a, b, c);
	CK(cuEventDestroy_v2(e));
	CK(cuEventDestroy_v2(f));
	CK(cuStreamDestroy_v2(h));
	CK(cuStreamDestroy_v2(s));
}

static CUgreenCtx make_green(void)
{
	CUdevResource all, group;
	CUdevResourceDesc desc;
	unsigned n = 1;
	CUgreenCtx g;

	CK(cuDeviceGetDevResource(0, &all, CU_DEV_RESOURCE_TYPE_SM));
	CK(cuDevSmResourceSplitByCount(&group, &n, &all, NULL, 0, 16));
	CK(cuDevResourceGenerateDesc(&desc, &group, 1));
	CK(cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
	return g;
}

/*
 * A green context's streams against a scheduled stream with a backlog:
 * a green stream waits for a buffered record; the green context's record
 * covers both its streams' buffered work, and so does the primary
 * context's; the green context's wait holds back its later work until a
 * buffered record; its own context, made current, computes on its legacy
 * stream.
 */
static void phase_green(void)
{
	unsigned long long r[6];
	CUstream a, b, s;
	CUcontext gctx;
	CUgreenCtx g = make_green();
	CUevent e;
	int q0;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	backlog(s, d_a, 1);
	CK(cuEventRecord(e, s));
	/* The green context's queue and a's, made by its first use. */
	q0 = queues_now();
	CK(cuGreenCtxStreamCreate(&a, g, CU_STREAM_NON_BLOCKING, 0));
	CK(cuStreamWaitEvent(a, e, 0));
	green_queues = queues_now() - q0;
	CK(cuGreenCtxStreamCreate(&b, g, CU_STREAM_NON_BLOCKING, -1));
	scale(a, d_a, 3);
	CK(cuStreamSynchronize(a));
	r[0] = checksum(d_a);

	backlog(a, d_a, 2);
	backlog(b, d_b, 3);
	CK(cuGreenCtxRecordEvent(g, e));
	CK(cuStreamWaitEvent(s, e, 0));
	scale(s, d_a, 5);
	scale(s, d_b, 7);
	CK(cuStreamSynchronize(s));
	r[1] = checksum(d_a);
	r[2] = checksum(d_b);

	backlog(b, d_b, 4);
	CK(cuCtxRecordEvent(ctx_main, e));
	CK(cuStreamWaitEvent(s, e, 0));
	scale(s, d_b, 9);
	CK(cuStreamSynchronize(s));
	r[3] = checksum(d_b);

	backlog(s, d_a, 5);
	CK(cuEventRecord(e, s));
	CK(cuGreenCtxWaitEvent(g, e));
	scale(a, d_a, 3);
	CK(cuStreamSynchronize(a));
	r[4] = checksum(d_a);

	CK(cuCtxFromGreenCtx(&gctx, g));
	CK(cuCtxSetCurrent(gctx));
	fill(NULL, d_b, 6);
	for (int i = 0; i < 40; i++)
		inc(NULL, d_b);
	CK(cuCtxSynchronize());
	CK(cuCtxSetCurrent(ctx_main));
	r[5] = checksum(d_b);
	printf("green %llx %llx %llx %llx %llx %llx\n", r[0], r[1], r[2], r[3], r[4], r[5]);
	CK(cuEventDestroy_v2(e));
	CK(cuStreamDestroy_v2(a));
	CK(cuStreamDestroy_v2(b));
	CK(cuStreamDestroy_v2(s));
	CK(cuGreenCtxDestroy(g));
}

/*
 * Whether this process runs under the shim (its own marker symbol), and
 * the queues the shim made for the first use of the adopted stream and of
 * the first green stream (-1 where not run or without the shim).
 */
static void phase_shim(void)
{
	printf("shim %s adopted=%d green=%d\n", shim_queues ? "active" : "absent",
	       shim_queues ? adopted_queues : -1, shim_queues ? green_queues : -1);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} phases[] = {
		{ "order", phase_order }, { "events", phase_events },
		{ "legacy", phase_legacy }, { "ptsz", phase_ptsz },
		{ "pageable", phase_pageable }, { "host", phase_host },
		{ "timing", phase_timing }, { "graph", phase_graph },
		{ "errors", phase_errors }, { "generic", phase_generic },
		{ "deps", phase_deps }, { "copy2d", phase_copy2d },
		{ "capture_mt", phase_capture_mt },
		{ "adopt", phase_adopt }, { "green", phase_green },
		{ "fork", phase_fork }, { "sync_race", phase_sync_race },
		{ "shim", phase_shim },
	};
	CUmodule m;
	CUcontext ctx;
	CUdevice dev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	shim_queues = (int (*)(void))dlsym(RTLD_DEFAULT, "cu_test_queues");
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	ctx_main = ctx;
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&f_fill, m, "sf_fill"));
	CK(cuModuleGetFunction(&f_inc, m, "sf_inc"));
	CK(cuModuleGetFunction(&f_scale, m, "sf_scale"));
	CK(cuModuleGetFunction(&f_sum, m, "sf_checksum"));
	CK(cuModuleGetFunction(&f_spin, m, "sf_spin"));
	CK(cuMemAlloc_v2(&d_a, N * 4));
	CK(cuMemAlloc_v2(&d_b, N * 4));
	CK(cuMemAlloc_v2(&d_sum, 16));
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		int run = argc == 1;

		for (int j = 1; j < argc; j++)
			run |= !strcmp(argv[j], phases[i].name);
		if (run)
			phases[i].fn();
	}
	CK(cuCtxSynchronize());
	return 0;
}
