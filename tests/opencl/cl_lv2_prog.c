/*
 * A corpus of real-world-shaped kernels for the guardian (Lv2) test
 * (tests/test_opencl_lv2.sh), run natively and under the OpenCL shim:
 * a guarded vector update with an early return, a local-memory reduction
 * with barriers, a global-atomics histogram (wrong if any work-group ran
 * twice or not at all), a 2D tiled transpose with a global offset, a
 * compute loop long enough to be cut many times, and a helper kernel
 * another kernel calls (not instrumented: it keeps its signature).
 * Each kernel runs ROUNDS times; every output is checked against a host
 * reference computed in integers (exact), and its FNV-1a hash printed, so
 * that the test compares the runs bit for bit.
 *
 * Under the shim, with "preempt", a second thread suspends and resumes
 * the queue (cl_test_preempt(), as a scheduler would) every ~PERIOD µs
 * while the kernels run; at the end the program prints the queue's level
 * and how many launches were cut and launched again. The map phase then
 * suspends the queue itself under a running kernel and maps the buffer
 * without blocking: the map, a call the shim hands to the driver at once,
 * must see the whole kernel, and should not wait for the queue to resume
 * (it may, when the kernel was found cut before the map: the preempter
 * then resumes the queue after 200 ms, and the count is printed). The
 * order phase (order()) then stages, step by step, a resume while a
 * launch issued behind a cut one is still held on the device.
 *
 * Usage: cl_lv2_prog [preempt]. Exit 0, or 1 on an error or a wrong result.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 65536
#define LOCAL 64
#define BINS 256
#define TW 16                   /* transpose tile */
#define TN 256                  /* transpose matrix side */
#define ROUNDS 40
#define PERIOD_US 300
#define MAPS 6

static const char *src =
	"/* A corpus: comments, macros, both spellings, attributes. */\n"
	"#define STEPS 300\n"
	"#define LCG(x) ((x) * 1103515245u + 12345u)\n"
	"__kernel void update(__global uint *a, __global const uint *b, uint n)\n"
	"{\n"
	"\tuint i = get_global_id(0);\n"
	"\tif (i >= n)\n"
	"\t\treturn; // early return\n"
	"\ta[i] = a[i] * 3u + b[i];\n"
	"}\n"
	"kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
	"void reduce(global const uint *in, global uint *out)\n"
	"{\n"
	"\t__local uint part[64];\n"
	"\tuint l = get_local_id(0);\n"
	"\tpart[l] = in[get_global_id(0)];\n"
	"\tbarrier(CLK_LOCAL_MEM_FENCE);\n"
	"\tfor (uint s = 32; s > 0; s >>= 1) {\n"
	"\t\tif (l < s)\n"
	"\t\t\tpart[l] += part[l + s];\n"
	"\t\tbarrier(CLK_LOCAL_MEM_FENCE);\n"
	"\t}\n"
	"\tif (l == 0)\n"
	"\t\tout[get_group_id(0)] = part[0];\n"
	"}\n"
	"__kernel void histogram(__global const uint *in, __global uint *bins)\n"
	"{\n"
	"\tatomic_inc(&bins[in[get_global_id(0)] % 256u]);\n"
	"}\n"
	"__kernel void transpose(__global const uint *in, __global uint *out, uint n)\n"
	"{\n"
	"\t__local uint tile[16][17];\n"
	"\tuint x = get_global_id(0) - get_global_offset(0), y = get_global_id(1) - get_global_offset(1);\n"
	"\ttile[get_local_id(1)][get_local_id(0)] = in[y * n + x];\n"
	"\tbarrier(CLK_LOCAL_MEM_FENCE);\n"
	"\tuint tx = get_group_id(1) * 16 + get_local_id(0), ty = get_group_id(0) * 16 + get_local_id(1);\n"
	"\tout[ty * n + tx] = tile[get_local_id(0)][get_local_id(1)];\n"
	"}\n"
	"uint mix(uint x) { for (int k = 0; k < STEPS; k++) x = LCG(x); return x; }\n"
	"__kernel void helper(__global uint *a) { a[get_global_id(0)] ^= 0x5au; }\n"
	"__kernel void compute(__global uint *a, uint salt)\n"
	"{\n"
	"\tuint i = get_global_id(0);\n"
	"\tif (i % 7u == 3u) return;\n"
	"\ta[i] = mix(a[i] ^ salt);\n"
	"\tif (salt == 0xffffffffu) helper(a);\n"
	"}\n";

static cl_int err;
#define CK(x)                                                                   \
	do {                                                                    \
		if ((err = (x)) != CL_SUCCESS) {                                \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #x, err); \
			exit(1);                                                \
		}                                                               \
	} while (0)

static uint32_t lcg(uint32_t x)
{
	return x * 1103515245u + 12345u;
}

static uint32_t mix(uint32_t x)
{
	for (int k = 0; k < 300; k++)
		x = lcg(x);
	return x;
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static cl_command_queue queue;
static _Atomic bool done;
static _Atomic long toggles;
static _Atomic bool paused;     /* the preempter leaves the queue running */
static _Atomic uint64_t held_since; /* ns: the map phase suspended the queue */
static _Atomic long rescued;    /* ... and the preempter had to resume it */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static int (*preempt)(cl_command_queue, int);

static void *preempter(void *arg)
{
	struct timespec ts = { 0, PERIOD_US * 1000L };

	(void)arg;
	while (!atomic_load(&done)) {
		if (atomic_load(&paused)) {
			uint64_t since = atomic_load(&held_since);

			/* A map that waited for the resume would wait for good:
			 * resume after 200 ms, and say so. */
			if (since && now_ns() - since > 200000000ull &&
			    atomic_compare_exchange_strong(&held_since, &since, 0)) {
				preempt(queue, 0);
				atomic_fetch_add(&rescued, 1);
			}
			nanosleep(&ts, NULL);
			continue;
		}
		preempt(queue, 1);
		nanosleep(&ts, NULL);
		preempt(queue, 0);
		atomic_fetch_add(&toggles, 1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int bad;

/* Checks @got against @want; returns how many elements differ. */
static size_t check(const char *what, const uint32_t *got, const uint32_t *want, size_t n)
{
	size_t wrong = 0;

	for (size_t i = 0; i < n; i++)
		wrong += got[i] != want[i];
	if (wrong) {
		fprintf(stderr, "%s: %zu of %zu elements wrong\n", what, wrong, n);
		bad = 1;
	}
	printf("%s %016llx\n", what, (unsigned long long)fnv(got, n * sizeof(*got)));
	return wrong;
}

/*
 * Applies compute rounds @order[0..@n) (round numbers) to @x, as the
 * kernel does to an element it writes.
 */
static uint32_t compute_rounds(uint32_t x, const int *order, int n)
{
	for (int k = 0; k < n; k++)
		x = mix(x ^ lcg((uint32_t)order[k]));
	return x;
}

/*
 * After @rounds (at most ROUNDS) compute rounds from @from went wrong:
 * what happened to each wrong work-group, as far as one round lost, run
 * twice, or run after a later one explains its first element (a cut
 * launch's groups never run again, run in two attempts, or run by a
 * kernel behind it first). For the failure's report only.
 */
static void explain_compute(const uint32_t *from, const uint32_t *got, int rounds)
{
	for (uint32_t g = 0; g < N / LOCAL; g++) {
		int order[ROUNDS + 1], n, lost = -1, twice = -1, late = -1, ahead = -1;
		uint32_t i = g * LOCAL;

		/* The group's first element that the kernel writes. */
		while (i % 7u == 3u)
			i++;
		for (n = 0; n < rounds; n++)
			order[n] = n;
		if (got[i] == compute_rounds(from[i], order, rounds))
			continue;
		for (int m = 0; m < rounds && lost < 0 && twice < 0 && late < 0; m++) {
			/* m lost, m twice */
			n = 0;
			for (int r = 0; r < rounds; r++)
				if (r != m)
					order[n++] = r;
			if (got[i] == compute_rounds(from[i], order, n))
				lost = m;
			for (int r = n = 0; r < rounds; r++) {
				order[n++] = r;
				if (r == m)
					order[n++] = r;
			}
			if (got[i] == compute_rounds(from[i], order, n))
				twice = m;
			/* m after a later round w */
			for (int w = m + 1; w < rounds && late < 0; w++) {
				for (int r = n = 0; r < rounds; r++) {
					if (r != m)
						order[n++] = r;
					if (r == w)
						order[n++] = m;
				}
				if (got[i] == compute_rounds(from[i], order, n)) {
					late = m;
					ahead = w;
				}
			}
		}
		if (lost >= 0)
			fprintf(stderr, "compute: group %u: round %d lost\n", g, lost);
		else if (twice >= 0)
			fprintf(stderr, "compute: group %u: round %d ran twice\n", g, twice);
		else if (late >= 0)
			fprintf(stderr, "compute: group %u: round %d ran after round %d\n", g, late,
				ahead);
		else
			fprintf(stderr, "compute: group %u: not one round lost, twice or late\n", g);
	}
}

/* Enqueues the compute kernel over the whole buffer @m with @salt, and
 * applies it to the host reference @ref. */
static void compute(cl_kernel k, cl_mem m, cl_uint salt, uint32_t *ref)
{
	size_t g = N, l = LOCAL;

	for (uint32_t i = 0; i < N; i++)
		if (i % 7u != 3u)
			ref[i] = mix(ref[i] ^ salt);
	CK(clSetKernelArg(k, 0, sizeof(m), &m));
	CK(clSetKernelArg(k, 1, sizeof(salt), &salt));
	CK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL));
}

/*
 * order: two compute launches, each waiting on a user event of its own.
 * Under "preempt" the queue is suspended once both reached the driver,
 * then the first is let run (every group skips: cut), its event queried
 * until the shim found it cut (and the second, issued behind it, with
 * it), the queue resumed while the second is still held on the device,
 * and only then the second let run: it must not run ahead of the first
 * one's relaunch. Natively and without "preempt", the same two rounds.
 */
static void order(cl_context ctx, cl_kernel k, cl_mem m, uint32_t *ref, bool with_preempt)
{
	long (*in_flight)(cl_command_queue) =
		(long (*)(cl_command_queue))dlsym(RTLD_DEFAULT, "cl_test_in_flight");
	long (*cut_waiting)(cl_command_queue) =
		(long (*)(cl_command_queue))dlsym(RTLD_DEFAULT, "cl_test_cut_waiting");
	static uint32_t from[N], out[N];
	struct timespec ms = { 0, 1000000 };
	size_t g = N, l = LOCAL;
	cl_event u[2], ev[2];
	int i;

	memcpy(from, ref, sizeof(from));
	for (int r = 0; r < 2; r++) {
		cl_uint salt = lcg((uint32_t)r);

		u[r] = clCreateUserEvent(ctx, &err);
		CK(err);
		for (uint32_t e = 0; e < N; e++)
			if (e % 7u != 3u)
				ref[e] = mix(ref[e] ^ salt);
		CK(clSetKernelArg(k, 0, sizeof(m), &m));
		CK(clSetKernelArg(k, 1, sizeof(salt), &salt));
		CK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 1, &u[r], &ev[r]));
	}
	CK(clFlush(queue));
	if (with_preempt && (!in_flight || !cut_waiting)) {
		fprintf(stderr, "order: the shim has no cl_test_in_flight or cl_test_cut_waiting\n");
		exit(1);
	}
	if (with_preempt) {
		for (i = 0; i < 10000 && in_flight(queue) < 2; i++)
			nanosleep(&ms, NULL);
		if (i == 10000) {
			fprintf(stderr, "order: %ld of 2 launches reached the driver\n",
				in_flight(queue));
			bad = 1;
		}
		preempt(queue, 1);
	}
	CK(clSetUserEventStatus(u[0], CL_COMPLETE));
	if (with_preempt) {
		for (i = 0; i < 10000 && cut_waiting(queue) < 2; i++) {
			cl_int st;

			CK(clGetEventInfo(ev[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
					  NULL));
			nanosleep(&ms, NULL);
		}
		if (i == 10000) {
			fprintf(stderr, "order: %ld of 2 launches found cut\n", cut_waiting(queue));
			bad = 1;
		}
		preempt(queue, 0);
	}
	CK(clSetUserEventStatus(u[1], CL_COMPLETE));
	CK(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL));
	if (check("order", out, ref, N))
		explain_compute(from, out, 2);
	for (int r = 0; r < 2; r++) {
		CK(clReleaseEvent(ev[r]));
		CK(clReleaseEvent(u[r]));
	}
}

int main(int argc, char **argv)
{
	static uint32_t a[N], b[N], ref[N], out[N], before[N], bins[BINS], rbins[BINS];
	bool with_preempt = argc > 1 && !strcmp(argv[1], "preempt");
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_program prog;
	cl_kernel kupd, kred, khist, ktr, kcomp;
	cl_mem ma, mb, mo, mbins;
	pthread_t th;
	size_t g = N, l = LOCAL;

	CK(clGetPlatformIDs(1, &plat, NULL));
	CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CK(err);
	queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	CK(err);
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(prog, 1, &dev, "-DUNUSED=1", NULL, NULL));
	kupd = clCreateKernel(prog, "update", &err);
	CK(err);
	kred = clCreateKernel(prog, "reduce", &err);
	CK(err);
	khist = clCreateKernel(prog, "histogram", &err);
	CK(err);
	ktr = clCreateKernel(prog, "transpose", &err);
	CK(err);
	kcomp = clCreateKernel(prog, "compute", &err);
	CK(err);
	{
		cl_uint na = 0;

		CK(clGetKernelInfo(kupd, CL_KERNEL_NUM_ARGS, sizeof(na), &na, NULL));
		if (na != 3) {
			fprintf(stderr, "update has %u arguments\n", na);
			return 1;
		}
	}
	for (uint32_t i = 0; i < N; i++) {
		a[i] = lcg(i);
		b[i] = lcg(i ^ 0xabcdu);
	}
	ma = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(a), a, &err);
	CK(err);
	mb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(b), b, &err);
	CK(err);
	mo = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(out), NULL, &err);
	CK(err);
	mbins = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(bins), NULL, &err);
	CK(err);

	preempt = (int (*)(cl_command_queue, int))dlsym(RTLD_DEFAULT, "cl_test_preempt");
	if (with_preempt && !preempt) {
		fprintf(stderr, "preempt: not under the shim\n");
		return 1;
	}
	if (with_preempt)
		pthread_create(&th, NULL, preempter, NULL);

	/*
	 * update, ROUNDS times, in place (each launch depends on the last),
	 * each launch also waiting on the event of the one before it, as
	 * array libraries do (pyopencl): under the shim that event is a
	 * guarded launch's proxy, final only once the shim resolved it.
	 */
	memcpy(ref, a, sizeof(ref));
	{
		cl_event prev = NULL, ev;

		for (int r = 0; r < ROUNDS; r++) {
			cl_uint m = N - 5;

			for (uint32_t i = 0; i < m; i++)
				ref[i] = ref[i] * 3u + b[i];
			CK(clSetKernelArg(kupd, 0, sizeof(ma), &ma));
			CK(clSetKernelArg(kupd, 1, sizeof(mb), &mb));
			CK(clSetKernelArg(kupd, 2, sizeof(m), &m));
			CK(clEnqueueNDRangeKernel(queue, kupd, 1, NULL, &g, &l, prev ? 1 : 0,
						  prev ? &prev : NULL, &ev));
			if (prev)
				CK(clReleaseEvent(prev));
			prev = ev;
		}
		CK(clReleaseEvent(prev));
	}
	CK(clEnqueueReadBuffer(queue, ma, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL));
	check("update", out, ref, N);

	/* compute: long, cut often; salts differ per round. */
	memcpy(before, ref, sizeof(before));
	for (int r = 0; r < ROUNDS / 4; r++)
		compute(kcomp, ma, lcg((uint32_t)r), ref);
	CK(clEnqueueReadBuffer(queue, ma, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL));
	if (check("compute", out, ref, N))
		explain_compute(before, out, ROUNDS / 4);

	/*
	 * map: a long kernel, the queue suspended under it (preempt), then a
	 * non-blocking map of its output with an event, waited for while the
	 * queue stays suspended: the mapped data must be the whole kernel's.
	 */
	atomic_store(&paused, true);
	for (int r = 0; r < MAPS; r++) {
		struct timespec under = { 0, (300 + 400 * r) * 1000L };
		cl_event mev;
		uint32_t *p;

		compute(kcomp, ma, lcg(0x1000u + (uint32_t)r), ref);
		if (with_preempt) {
			nanosleep(&under, NULL);
			preempt(queue, 1);
			atomic_store(&held_since, now_ns());
		}
		p = clEnqueueMapBuffer(queue, ma, CL_FALSE, CL_MAP_READ, 0, sizeof(out), 0, NULL,
				       &mev, &err);
		CK(err);
		CK(clWaitForEvents(1, &mev));
		CK(clReleaseEvent(mev));
		memcpy(out, p, sizeof(out));
		if (with_preempt && atomic_exchange(&held_since, 0))
			preempt(queue, 0);
		CK(clEnqueueUnmapMemObject(queue, ma, p, 0, NULL, NULL));
		check("map", out, ref, N);
	}
	CK(clFinish(queue));
	order(ctx, kcomp, ma, ref, with_preempt);
	atomic_store(&paused, false);

	/* reduce: one sum per group. */
	{
		static uint32_t sums[N / LOCAL], rs[N / LOCAL];

		for (uint32_t gi = 0; gi < N / LOCAL; gi++) {
			rs[gi] = 0;
			for (uint32_t k = 0; k < LOCAL; k++)
				rs[gi] += ref[gi * LOCAL + k];
		}
		for (int r = 0; r < ROUNDS; r++) {
			CK(clSetKernelArg(kred, 0, sizeof(ma), &ma));
			CK(clSetKernelArg(kred, 1, sizeof(mo), &mo));
			CK(clEnqueueNDRangeKernel(queue, kred, 1, NULL, &g, &l, 0, NULL, NULL));
		}
		CK(clEnqueueReadBuffer(queue, mo, CL_TRUE, 0, sizeof(sums), sums, 0, NULL, NULL));
		check("reduce", sums, rs, N / LOCAL);
	}

	/* histogram: atomics accumulate over ROUNDS launches; exact counts. */
	memset(rbins, 0, sizeof(rbins));
	for (int r = 0; r < ROUNDS; r++)
		for (uint32_t i = 0; i < N; i++)
			rbins[ref[i] % 256u]++;
	{
		cl_uint zero = 0;

		CK(clEnqueueFillBuffer(queue, mbins, &zero, sizeof(zero), 0, sizeof(bins), 0, NULL,
				       NULL));
	}
	for (int r = 0; r < ROUNDS; r++) {
		cl_event ev;

		CK(clSetKernelArg(khist, 0, sizeof(ma), &ma));
		CK(clSetKernelArg(khist, 1, sizeof(mbins), &mbins));
		CK(clEnqueueNDRangeKernel(queue, khist, 1, NULL, &g, &l, 0, NULL, &ev));
		if (r % 8 == 7) {
			cl_int st;

			/* The event completes with the last launch of a cut kernel. */
			CK(clWaitForEvents(1, &ev));
			CK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
					  NULL));
			if (st != CL_COMPLETE) {
				fprintf(stderr, "histogram event status %d\n", st);
				bad = 1;
			}
		}
		CK(clReleaseEvent(ev));
	}
	CK(clEnqueueReadBuffer(queue, mbins, CL_TRUE, 0, sizeof(bins), bins, 0, NULL, NULL));
	check("histogram", bins, rbins, BINS);

	/* transpose: 2D groups, a global offset. */
	{
		size_t g2[2] = { TN, TN }, l2[2] = { TW, TW }, off[2] = { 32, 16 };
		cl_uint tn = TN;

		for (uint32_t y = 0; y < TN; y++)
			for (uint32_t x = 0; x < TN; x++)
				ref[x * TN + y] = out[0] ^ (y * TN + x); /* in: filled below */
		for (uint32_t i = 0; i < TN * TN; i++)
			a[i] = out[0] ^ i;
		CK(clEnqueueWriteBuffer(queue, mb, CL_TRUE, 0, TN * TN * sizeof(uint32_t), a, 0, NULL,
					NULL));
		for (int r = 0; r < ROUNDS; r++) {
			CK(clSetKernelArg(ktr, 0, sizeof(mb), &mb));
			CK(clSetKernelArg(ktr, 1, sizeof(mo), &mo));
			CK(clSetKernelArg(ktr, 2, sizeof(tn), &tn));
			CK(clEnqueueNDRangeKernel(queue, ktr, 2, off, g2, l2, 0, NULL, NULL));
		}
		CK(clFinish(queue));
		CK(clEnqueueReadBuffer(queue, mo, CL_TRUE, 0, TN * TN * sizeof(uint32_t), out, 0,
				       NULL, NULL));
		check("transpose", out, ref, TN * TN);
	}

	if (with_preempt) {
		int (*level)(cl_command_queue) =
			(int (*)(cl_command_queue))dlsym(RTLD_DEFAULT, "cl_test_level");
		long (*relaunches)(cl_command_queue) =
			(long (*)(cl_command_queue))dlsym(RTLD_DEFAULT, "cl_test_relaunches");
		const char *(*ctl_kind)(cl_command_queue) =
			(const char *(*)(cl_command_queue))dlsym(RTLD_DEFAULT, "cl_test_ctl_kind");

		atomic_store(&done, true);
		pthread_join(th, NULL);
		fprintf(stderr, "level %d toggles %ld relaunches %ld maps-waited-for-resume %ld "
			"control-word %s\n", level ? level(queue) : -1, atomic_load(&toggles),
			relaunches ? relaunches(queue) : -1, atomic_load(&rescued),
			ctl_kind ? ctl_kind(queue) : "?");
	}
	clReleaseMemObject(ma);
	clReleaseMemObject(mb);
	clReleaseMemObject(mo);
	clReleaseMemObject(mbins);
	clReleaseKernel(kupd);
	clReleaseKernel(kred);
	clReleaseKernel(khist);
	clReleaseKernel(ktr);
	clReleaseKernel(kcomp);
	clReleaseProgram(prog);
	clReleaseCommandQueue(queue);
	clReleaseContext(ctx);
	return bad;
}
