/*
 * An OpenCL program for the scheduling test (test_opencl_sched.c), run as
 * two processes at once, natively and under the OpenCL shim with a
 * private xschedd: a high-priority one that keeps the device busy for a
 * while, and a low-priority one that floods it, or enqueues a burst while
 * the high one is busy. Each prints CLOCK_MONOTONIC times (comparable
 * across processes) so that the test can tell what ran when; the kernels
 * are one work-item loops of a fixed number of steps (PoCL runs a kernel
 * on a CPU thread; POCL_MAX_PTHREAD_COUNT=1 gives each process one).
 *
 * Usage:
 *   cl_sched_prog high MS   prints "ready" once set up, waits for SIG, then
 *                           keeps HIGH_DEPTH kernels of about 0.5 ms in
 *                           flight for MS ms; prints "start T" when it
 *                           begins and "end T kernels N" once every kernel
 *                           of the window completed
 *   cl_sched_prog flood     keeps LOW_DEPTH kernels of about 1 ms in flight
 *                           (after printing "flooding kernel_us U", U its
 *                           kernel's duration alone) until SIG, then
 *                           prints "low kernels N" and the time each
 *                           kernel was seen complete ("c T")
 *   cl_sched_prog burst N   prints "ready" once set up, waits for SIG, then
 *                           enqueues N non-blocking kernels of about 1 ms
 *                           with events and different arguments (no
 *                           command before them), prints how long that
 *                           took and the events' statuses right after it
 *                           and LATER_MS later, and, after clFinish, the
 *                           result's checksum
 *   cl_sched_prog levels    three queues: one runs an instrumentable kernel,
 *                           one a kernel the guardian leaves alone (it is
 *                           called by another kernel), one an instrumented
 *                           kernel launched without a local size; prints
 *                           "ready" once all ran, then waits for SIG and
 *                           exits
 * SIG is SIGRTMIN+3: the test's "go" and "stop" (a real-time signal, which
 * neither the sanitizers nor the LLVM inside PoCL take over, unlike
 * SIGUSR1/2). Every mode first prints "shim active" or "shim absent".
 * Times are in nanoseconds. Exit status: 0, or 1 on an OpenCL error or a
 * wrong result.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Kernels in flight. The high process keeps 8 ms of work queued so that a
 * late wakeup of its thread never lets its queue run dry: an idle queue
 * rightly lets a lower one run for a moment (measured with 4 in flight on
 * a loaded machine: a 1 ms kernel of the low process now and then).
 */
#define HIGH_DEPTH 16
#define LOW_DEPTH 4
#define HIGH_ITERS 500000u      /* about 0.5 ms (one work-item) */
#define LOW_ITERS 1000000u      /* about 1 ms */
#define BURST_ELEMS 64          /* elements the burst's kernels update */
#define BURST_MAX 4096
#define LATER_MS 500            /* when the burst's statuses are read again */
#define SIG (SIGRTMIN + 3)

#define CK(call)                                                                   \
	do {                                                                       \
		cl_int rc_ = (call);                                               \
		if (rc_ != CL_SUCCESS) {                                           \
			printf("error %s = %d at line %d\n", #call, rc_, __LINE__); \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

/*
 * spin: a pseudo-random walk of @iters steps, kept alive in @junk.
 * walk_axpb: the same walk from x[n] (so that the kernels' order shows
 * in the result), then x[i] = x[i] * a + b over the first @n elements.
 */
static const char src[] =
	"__kernel void spin(__global uint *junk, uint iters)\n"
	"{\n"
	"	uint v = (uint)get_global_id(0);\n"
	"	for (uint k = 0; k < iters; k++)\n"
	"		v = v * 1664525u + 1013904223u;\n"
	"	junk[get_global_id(0)] = v;\n"
	"}\n"
	"__kernel void walk_axpb(__global uint *x, uint n, uint iters, uint a, uint b)\n"
	"{\n"
	"	uint v = x[n];\n"
	"	for (uint k = 0; k < iters; k++)\n"
	"		v = v * 1664525u + 1013904223u;\n"
	"	x[n] = v;\n"
	"	for (uint i = 0; i < n; i++)\n"
	"		x[i] = x[i] * a + b;\n"
	"}\n";

static struct {
	cl_context ctx;
	cl_device_id dev;
	cl_command_queue q;
	cl_program prog;
} g;

static volatile sig_atomic_t stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * SIG is blocked from the start of main(), so in every thread the OpenCL
 * implementation or the shim start: it is taken by sigwait() here, or by
 * flood's handler once its thread unblocks it.
 */
static sigset_t sig_set;

/* Says "ready" and waits for SIG. */
static void wait_go(void)
{
	int sig;

	printf("ready\n");
	while (sigwait(&sig_set, &sig) != 0 || sig != SIG)
		;
}

static void setup(void)
{
	cl_platform_id plat;
	cl_int err;
	const char *s = src;
	int (*queues)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cl_test_queues");

	printf("shim %s\n", queues ? "active" : "absent");
	CK(clGetPlatformIDs(1, &plat, NULL));
	CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &g.dev, NULL));
	g.ctx = clCreateContext(NULL, 1, &g.dev, NULL, NULL, &err);
	CK(err);
	g.q = clCreateCommandQueueWithProperties(g.ctx, g.dev, NULL, &err);
	CK(err);
	g.prog = clCreateProgramWithSource(g.ctx, 1, &s, NULL, &err);
	CK(err);
	CK(clBuildProgram(g.prog, 1, &g.dev, "", NULL, NULL));
}

static void teardown(void)
{
	CK(clReleaseCommandQueue(g.q));
	CK(clReleaseProgram(g.prog));
	CK(clReleaseContext(g.ctx));
}

static cl_kernel kernel(const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(g.prog, name, &err);

	CK(err);
	return k;
}

static cl_mem buffer(cl_mem_flags flags, size_t size, void *host)
{
	cl_int err;
	cl_mem m = clCreateBuffer(g.ctx, flags, size, host, &err);

	CK(err);
	return m;
}

/* Enqueues @k on one work-item. */
static void one_item(cl_kernel k, cl_event *ev)
{
	size_t one = 1;

	CK(clEnqueueNDRangeKernel(g.q, k, 1, NULL, &one, &one, 0, NULL, ev));
}

/* A spin kernel of @iters steps, its junk in a buffer of its own. */
static cl_kernel spin_kernel(cl_uint iters, cl_mem *junk)
{
	cl_kernel k = kernel("spin");

	*junk = buffer(CL_MEM_READ_WRITE, sizeof(cl_uint), NULL);
	CK(clSetKernelArg(k, 0, sizeof(*junk), junk));
	CK(clSetKernelArg(k, 1, sizeof(iters), &iters));
	return k;
}

/* Waits for @ev and releases it. */
static void wait_release(cl_event ev)
{
	CK(clWaitForEvents(1, &ev));
	CK(clReleaseEvent(ev));
}

/* The median duration of @k alone, from enqueue to clFinish's return. */
static uint64_t alone_ns(cl_kernel k)
{
	uint64_t d[9], t0, tmp;
	size_t a, b;

	/* Its code is loaded (or compiled) first. */
	one_item(k, NULL);
	CK(clFinish(g.q));
	for (a = 0; a < 9; a++) {
		t0 = now_ns();
		one_item(k, NULL);
		CK(clFinish(g.q));
		d[a] = now_ns() - t0;
	}
	for (a = 0; a < 9; a++) {
		for (b = a + 1; b < 9; b++) {
			if (d[b] < d[a]) {
				tmp = d[a];
				d[a] = d[b];
				d[b] = tmp;
			}
		}
	}
	return d[4];
}

static int mode_high(unsigned ms)
{
	cl_event ring[HIGH_DEPTH];
	cl_mem junk;
	cl_kernel k;
	uint64_t start, until;
	unsigned head = 0, n = 0, kernels = 0, i;

	setup();
	k = spin_kernel(HIGH_ITERS, &junk);
	/* The kernel's code is loaded (or compiled) outside the window. */
	one_item(k, NULL);
	CK(clFinish(g.q));
	wait_go();
	start = now_ns();
	until = start + (uint64_t)ms * 1000000u;
	for (i = 0; i < HIGH_DEPTH; i++, n++, kernels++)
		one_item(k, &ring[i]);
	printf("start %llu\n", (unsigned long long)start);
	while (n > 0) {
		wait_release(ring[head]);
		n--;
		if (now_ns() < until) {
			one_item(k, &ring[head]);
			n++;
			kernels++;
		}
		head = (head + 1) % HIGH_DEPTH;
	}
	CK(clFinish(g.q));
	printf("end %llu kernels %u\n", (unsigned long long)now_ns(), kernels);
	CK(clReleaseKernel(k));
	CK(clReleaseMemObject(junk));
	teardown();
	return 0;
}

static int mode_flood(void)
{
	struct sigaction sa = { .sa_handler = on_stop };
	size_t cap = 8192, done = 0, i;
	uint64_t *seen = malloc(cap * sizeof(*seen)), alone;
	cl_event ring[LOW_DEPTH];
	unsigned head = 0, n = 0;
	cl_mem junk;
	cl_kernel k;

	if (!seen)
		return 1;
	sigaction(SIG, &sa, NULL);
	setup();
	k = spin_kernel(LOW_ITERS, &junk);
	alone = alone_ns(k);
	for (i = 0; i < LOW_DEPTH; i++, n++)
		one_item(k, &ring[i]);
	printf("flooding kernel_us %llu\n", (unsigned long long)(alone / 1000));
	pthread_sigmask(SIG_UNBLOCK, &sig_set, NULL);
	while (n > 0) {
		wait_release(ring[head]);
		n--;
		if (done == cap) {
			uint64_t *p = realloc(seen, (cap *= 2) * sizeof(*seen));

			if (!p)
				return 1;
			seen = p;
		}
		seen[done++] = now_ns();
		if (!stop) {
			one_item(k, &ring[head]);
			n++;
		}
		head = (head + 1) % LOW_DEPTH;
	}
	CK(clFinish(g.q));
	printf("low kernels %zu\n", done);
	for (i = 0; i < done; i++)
		printf("c %llu\n", (unsigned long long)seen[i]);
	free(seen);
	CK(clReleaseKernel(k));
	CK(clReleaseMemObject(junk));
	teardown();
	return 0;
}

/* How many of @n events are in each state: [0] complete ... [3] queued. */
static void statuses(const cl_event *ev, int n, int count[4])
{
	memset(count, 0, 4 * sizeof(*count));
	for (int i = 0; i < n; i++) {
		cl_int st;

		CK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
				  NULL));
		if (st < CL_COMPLETE || st > CL_QUEUED) {
			printf("error: event %d has status %d\n", i, st);
			exit(1);
		}
		count[st]++;
	}
}

static uint64_t fnv1a(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int mode_burst(int n)
{
	static cl_event ev[BURST_MAX];
	cl_uint x[BURST_ELEMS + 1], want[BURST_ELEMS + 1], elems = BURST_ELEMS;
	cl_uint iters = LOW_ITERS;
	int now[4], later[4], after[4], i, j, ok;
	uint64_t t0, t1, t2;
	cl_kernel k;
	cl_mem m;

	for (j = 0; j <= BURST_ELEMS; j++)
		x[j] = want[j] = (cl_uint)j * 2654435761u + 17u;
	setup();
	/* No command before the burst: the buffer is initialized at creation. */
	m = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(x), x);
	k = kernel("walk_axpb");
	CK(clSetKernelArg(k, 0, sizeof(m), &m));
	CK(clSetKernelArg(k, 1, sizeof(elems), &elems));
	CK(clSetKernelArg(k, 2, sizeof(iters), &iters));
	wait_go();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		cl_uint a = 2u * (cl_uint)i + 3u, b = 7u * (cl_uint)i + 1u;

		CK(clSetKernelArg(k, 3, sizeof(a), &a));
		CK(clSetKernelArg(k, 4, sizeof(b), &b));
		one_item(k, &ev[i]);
	}
	t1 = now_ns();
	statuses(ev, n, now);
	nap_ms(LATER_MS);
	t2 = now_ns();
	statuses(ev, n, later);
	CK(clFinish(g.q));
	statuses(ev, n, after);
	CK(clEnqueueReadBuffer(g.q, m, CL_TRUE, 0, sizeof(x), x, 0, NULL, NULL));
	for (i = 0; i < n; i++) {
		for (j = 0; j < BURST_ELEMS; j++)
			want[j] = want[j] * (2u * (cl_uint)i + 3u) + 7u * (cl_uint)i + 1u;
		CK(clReleaseEvent(ev[i]));
	}
	ok = after[CL_COMPLETE] == n && !memcmp(x, want, BURST_ELEMS * sizeof(*x));
	printf("burst begin %llu end %llu queued %d submitted %d running %d complete %d "
	       "later %llu later_complete %d\n",
	       (unsigned long long)t0, (unsigned long long)t1, now[CL_QUEUED],
	       now[CL_SUBMITTED], now[CL_RUNNING], now[CL_COMPLETE], (unsigned long long)t2,
	       later[CL_COMPLETE]);
	printf("result %s checksum %016llx\n", ok ? "ok" : "MISMATCH",
	       (unsigned long long)fnv1a(x, sizeof(x)));
	CK(clReleaseKernel(k));
	CK(clReleaseMemObject(m));
	teardown();
	return ok ? 0 : 1;
}

/* Two queues at the levels their kernels give them; see the file comment. */
static int mode_levels(void)
{
	static const char leaf_src[] =
		"__kernel void leaf(__global uint *a) { a[get_global_id(0)] += 1u; }\n"
		"__kernel void trunk(__global uint *a) { leaf(a); }\n"
		"__kernel void wide(__global uint *a) { atomic_inc(a); }\n";
	const char *s = leaf_src;
	cl_command_queue q2, q3;
	cl_program p2;
	cl_kernel k, leaf, wide;
	cl_mem junk, m;
	cl_int err;
	size_t one = 1, four = 4;
	int sig;

	setup();
	k = spin_kernel(1000, &junk);
	one_item(k, NULL);
	q2 = clCreateCommandQueueWithProperties(g.ctx, g.dev, NULL, &err);
	CK(err);
	p2 = clCreateProgramWithSource(g.ctx, 1, &s, NULL, &err);
	CK(err);
	CK(clBuildProgram(p2, 1, &g.dev, "", NULL, NULL));
	leaf = clCreateKernel(p2, "leaf", &err);
	CK(err);
	m = buffer(CL_MEM_READ_WRITE, sizeof(cl_uint), NULL);
	CK(clSetKernelArg(leaf, 0, sizeof(m), &m));
	CK(clEnqueueNDRangeKernel(q2, leaf, 1, NULL, &one, &one, 0, NULL, NULL));
	q3 = clCreateCommandQueueWithProperties(g.ctx, g.dev, NULL, &err);
	CK(err);
	wide = clCreateKernel(p2, "wide", &err);
	CK(err);
	CK(clSetKernelArg(wide, 0, sizeof(m), &m));
	CK(clEnqueueNDRangeKernel(q3, wide, 1, NULL, &four, NULL, 0, NULL, NULL));
	CK(clFinish(g.q));
	CK(clFinish(q2));
	CK(clFinish(q3));
	printf("ready\n");
	while (sigwait(&sig_set, &sig) != 0 || sig != SIG)
		;
	CK(clReleaseKernel(leaf));
	CK(clReleaseKernel(wide));
	CK(clReleaseKernel(k));
	CK(clReleaseMemObject(m));
	CK(clReleaseMemObject(junk));
	CK(clReleaseProgram(p2));
	CK(clReleaseCommandQueue(q2));
	CK(clReleaseCommandQueue(q3));
	teardown();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&sig_set);
	sigaddset(&sig_set, SIG);
	pthread_sigmask(SIG_BLOCK, &sig_set, NULL);
	if (argc == 3 && !strcmp(argv[1], "high") && atoi(argv[2]) > 0)
		return mode_high((unsigned)atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "flood"))
		return mode_flood();
	if (argc == 3 && !strcmp(argv[1], "burst") && atoi(argv[2]) > 0 &&
	    atoi(argv[2]) <= BURST_MAX)
		return mode_burst(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "levels"))
		return mode_levels();
	fprintf(stderr, "usage: %s high MS | flood | burst N | levels\n", argv[0]);
	return 2;
}
