/*
 * What counting device memory costs an application per allocation: pairs
 * of cuMemAlloc_v2 + cuMemFree_v2 on the simulated CUDA driver, natively
 * and through the CUDA shim, which counts each allocation before the
 * driver sees it, checks it against the limit, records the pointer
 * (shim_map) and publishes the figures into the shared memory the daemon
 * reads (src/shim/cuda/cu_mem.c, src/shim/common/shim_mem.c,
 * src/agent/agent_mem.c). Also cuMemGetInfo_v2, which the shim answers
 * with a device of the limit's size.
 *
 * Five configurations, measured in the same run: native (the simulated
 * driver alone); the shim passing every call through
 * (XSCHED_SCHEDULER=none: nothing counted, the cost of the interposition
 * alone); the shim counting with no limit (XSCHED_SCHEDULER=local); the
 * shim with XSCHED_MEMORY_LIMIT=8G; and the shim connected to a private
 * xschedd whose uid ceiling (8G) is the limit, so that every allocation
 * also stores its figures into the daemon's shared memory. What counting
 * costs is the difference between "shim" and "shim-none". The program
 * re-runs itself as one child per measurement, rotating the
 * configurations' order each round so that drifts of a noisy machine hit
 * them all. Each child times every pair with clock_gettime (the allocation
 * and the free apart too) after a warm-up; the parent pools the samples of
 * every round and prints medians, P99, the shim's extra cost against
 * native, and the lowest and highest median of a single child (a child
 * that ran slow throughout moves the pooled median; the lowest is the
 * steadier figure on a busy machine).
 *
 * The simulated driver's allocation is host memory (aligned_alloc) and an
 * entry in its registry, far cheaper than a real driver's, which goes to
 * the kernel driver: the ratios here are upper bounds of what the shim
 * adds, the extra nanoseconds are the figure to carry over to a real GPU.
 *
 * Children use a private simulated device (XSCHED_SIM_DIR in a temporary
 * directory, 16 GiB) so that tests running at the same time neither
 * share its memory nor see ours.
 *
 * Usage: bench_cuda_mem [--pairs N] [--rounds N] [--info-batches N] [--quick]
 *                       [--driver-dir DIR] [--shim PATH] [--daemon PATH]
 *                       [--no-daemon]
 */
#define BENCH_PROG "bench_cuda_mem"
#include "bench_cuda.h"
#include "bench_launch.h"

#define BM_GIB (1ull << 30)
#define BM_SIM_DEVICE "bench-cuda-mem"  /* the private simulated device, */
#define BM_DEVICE_MEMORY "16G"          /* its memory */
#define BM_DEVICE_BYTES (16 * BM_GIB)
#define BM_LIMIT "8G"                   /* XSCHED_MEMORY_LIMIT, the daemon's ceiling */
#define BM_LIMIT_BYTES (8 * BM_GIB)
#define BM_WARMUP 1000                  /* untimed pairs first */
#define BM_INFO_BATCH 100               /* cuMemGetInfo_v2 calls per timed batch */
#define BM_WAIT_MS 10000                /* for the limit to be in effect */
#define BM_MS 1000000ull

/* M_DAEMON last: left out without xschedd. */
enum mode { M_NATIVE, M_PASS, M_SHIM, M_LIMIT, M_DAEMON, M_COUNT };

static const char *const mode_name[M_COUNT] = { "native", "shim-none", "shim", "shim+limit",
						"shim+xschedd" };

struct opts {
	int pairs, rounds, info_batches;
	const char *driver_dir, *shim, *daemon;
	bool no_daemon;
};

/*
 * The samples of one configuration, pooled over its children, and the
 * lowest and highest median of a single child (of the pair, or the call):
 * how far apart processes of the same configuration land.
 */
struct result {
	struct bench_samples s;
	double lo, hi;
};

/* The temporary directory: simulated device, daemon sockets and log. */
struct run {
	struct opts o;
	char dir[256];
	struct bench_daemon xsd;
	bool with_daemon;
};

/* --- the child ------------------------------------------------------------ */

/*
 * A context on device 0, then waits until cuMemGetInfo_v2's total is
 * @want: the device's size, or the limit once it is in effect. Under
 * xschedd the limit arrives when the agent thread has connected, which
 * the application has no event to wait on: it polls, a millisecond apart,
 * for at most BM_WAIT_MS.
 */
static void child_init(uint64_t want)
{
	size_t free_b = 0, total = 0;
	uint64_t end = bench_clock_ns(CLOCK_MONOTONIC) + BM_WAIT_MS * BM_MS;
	struct timespec ms = { 0, 1000000 };

	bench_cu_init();
	for (;;) {
		CK(cuMemGetInfo_v2(&free_b, &total));
		if ((uint64_t)total == want)
			return;
		if (bench_clock_ns(CLOCK_MONOTONIC) >= end)
			break;
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "bench_cuda_mem: cuMemGetInfo_v2 total %zu, expected %llu\n", total,
		(unsigned long long)want);
	exit(1);
}

/*
 * @n pairs of @size bytes, each timed: one line per pair on stdout,
 * "alloc free pair" in ns, printed after the loop.
 */
static int child_pairs(size_t size, int n, uint64_t want)
{
	uint64_t *t = malloc((size_t)n * 3 * sizeof(*t));
	CUdeviceptr p;

	if (!t)
		return 1;
	child_init(want);
	for (int i = 0; i < BM_WARMUP; i++) {
		CK(cuMemAlloc_v2(&p, size));
		CK(cuMemFree_v2(p));
	}
	for (int i = 0; i < n; i++) {
		uint64_t t0, t1, t2;

		t0 = bench_clock_ns(CLOCK_MONOTONIC);
		CK(cuMemAlloc_v2(&p, size));
		t1 = bench_clock_ns(CLOCK_MONOTONIC);
		CK(cuMemFree_v2(p));
		t2 = bench_clock_ns(CLOCK_MONOTONIC);
		t[3 * i] = t1 - t0;
		t[3 * i + 1] = t2 - t1;
		t[3 * i + 2] = t2 - t0;
	}
	for (int i = 0; i < n; i++)
		printf("%llu %llu %llu\n", (unsigned long long)t[3 * i],
		       (unsigned long long)t[3 * i + 1], (unsigned long long)t[3 * i + 2]);
	free(t);
	return 0;
}

/*
 * @batches batches of BM_INFO_BATCH cuMemGetInfo_v2 calls (one call is
 * too short to time alone): one line per batch, "ns-per-call-in-tenths 0 0".
 */
static int child_info(int batches, uint64_t want)
{
	uint64_t *t = malloc((size_t)batches * sizeof(*t));
	size_t f, total;

	if (!t)
		return 1;
	child_init(want);
	for (int b = -1; b < batches; b++) {
		uint64_t t0 = bench_clock_ns(CLOCK_MONOTONIC);

		for (int i = 0; i < BM_INFO_BATCH; i++)
			CK(cuMemGetInfo_v2(&f, &total));
		if (b >= 0)
			t[b] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) * 10 / BM_INFO_BATCH;
	}
	for (int b = 0; b < batches; b++)
		printf("%llu 0 0\n", (unsigned long long)t[b]);
	free(t);
	return 0;
}

/* --- the parent ----------------------------------------------------------- */

/* What cuMemGetInfo_v2 answers as total in @m once the child is set up. */
static uint64_t mode_total(enum mode m)
{
	return m == M_LIMIT || m == M_DAEMON ? BM_LIMIT_BYTES : BM_DEVICE_BYTES;
}

/*
 * Runs one child in @m with @what ("pairs" SIZE N, or "info" BATCHES) and
 * appends its lines to @out; the three columns of bench_samples carry
 * alloc, free and pair here (info: the call, in tenths of ns, then zeros).
 * Returns 0 or -1.
 */
static int run_child(const struct run *r, enum mode m, const char *what, const char *a1,
		     const char *a2, struct result *out)
{
	char lib[4096], pre[4096], path[4096], sock[400], want[32], who[64];
	char *argv[] = { "bench_cuda_mem", "--child", (char *)what, want, (char *)a1,
			 (char *)a2, NULL };
	char *vars[8] = { path };
	uint64_t *col;
	size_t n0;
	double med;
	int n = 1;

	snprintf(path, sizeof(path), "LD_LIBRARY_PATH=%s", r->o.driver_dir);
	snprintf(lib, sizeof(lib), "XSCHED_CUDA_LIB=%s/libcuda.so.1", r->o.driver_dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", r->o.shim);
	snprintf(sock, sizeof(sock), "XSCHED_SOCKET=%s", r->xsd.sock);
	snprintf(want, sizeof(want), "%llu", (unsigned long long)mode_total(m));
	snprintf(who, sizeof(who), "bench_cuda_mem: %s %s", mode_name[m], what);
	if (m != M_NATIVE) {
		vars[n++] = lib;
		vars[n++] = pre;
	}
	if (m == M_PASS)
		vars[n++] = "XSCHED_SCHEDULER=none";
	if (m == M_SHIM || m == M_LIMIT)
		vars[n++] = "XSCHED_SCHEDULER=local";
	if (m == M_LIMIT)
		vars[n++] = "XSCHED_MEMORY_LIMIT=" BM_LIMIT;
	if (m == M_DAEMON) {
		vars[n++] = "XSCHED_SCHEDULER=global";
		vars[n++] = sock;
	}
	vars[n] = NULL;
	n0 = out->s.n;
	if (bench_run_child(argv, vars, who, &out->s) < 0)
		return -1;
	/* This child's median (sorts its part of the column). */
	col = strcmp(what, "info") ? out->s.proc : out->s.thread;
	med = (double)bench_pct(col + n0, out->s.n - n0, 50);
	if (!n0 || med < out->lo)
		out->lo = med;
	if (!n0 || med > out->hi)
		out->hi = med;
	return 0;
}

/*
 * The private daemon's configuration: the ceiling of our uid is the limit.
 * 0, or prints why not and returns -1.
 */
static int write_config(const struct run *r)
{
	FILE *f = fopen(r->xsd.conf, "w");

	if (f) {
		fprintf(f, "[limits]\nuid.%u.memory_limit = %s\n", (unsigned)getuid(), BM_LIMIT);
		if (fclose(f) == 0)
			return 0;
	}
	fprintf(stderr, "bench_cuda_mem: cannot set up %s for xschedd\n", r->dir);
	return -1;
}

/* Removes what the run left in its directory, then the directory. */
static void cleanup(struct run *r, bool keep_log)
{
	char path[400];
	const char *const left[] = { "c.sock", "c.sock.lock", "ctl.sock", "ctl.sock.lock",
				     "xschedd.conf", "notify", BM_SIM_DEVICE };

	for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", r->dir, left[i]);
		unlink(path);
	}
	if (!keep_log)
		unlink(r->xsd.log);
	else if (access(r->xsd.log, F_OK) == 0)
		fprintf(stderr, "bench_cuda_mem: daemon log kept in %s\n", r->xsd.log);
	if (rmdir(r->dir) < 0 && !keep_log)
		fprintf(stderr, "bench_cuda_mem: %s left behind: %s\n", r->dir, strerror(errno));
}

/* The cost of the timing itself: median of back-to-back clock_gettime. */
static uint64_t timer_cost(void)
{
	enum { N = 100000 };
	static uint64_t d[N];

	for (int i = 0; i < N; i++) {
		uint64_t a = bench_clock_ns(CLOCK_MONOTONIC);

		d[i] = bench_clock_ns(CLOCK_MONOTONIC) - a;
	}
	return bench_pct(d, N, 50);
}

static double pct(uint64_t *v, size_t n, double rank)
{
	return (double)bench_pct(v, n, rank);
}

/* The table of one allocation size: a row per configuration measured. */
static void table_pairs(const char *size, const struct opts *o, struct result *res,
			int nmodes)
{
	double n50 = pct(res[M_NATIVE].s.proc, res[M_NATIVE].s.n, 50);
	double n99 = pct(res[M_NATIVE].s.proc, res[M_NATIVE].s.n, 99);

	printf("\n%s: cuMemAlloc_v2 + cuMemFree_v2, %d rounds x %d pairs per configuration, "
	       "ns per pair\n", size, o->rounds, o->pairs);
	printf("%-13s %7s %9s %9s %11s %9s %9s %10s %8s %8s\n", "config", "pairs", "pair-p50",
	       "pair-p99", "child-p50s", "alloc-p50", "free-p50", "extra-p50", "x-p50", "x-p99");
	for (int m = 0; m < nmodes; m++) {
		struct bench_samples *x = &res[m].s;
		double p50 = pct(x->proc, x->n, 50), p99 = pct(x->proc, x->n, 99);
		char range[32];

		snprintf(range, sizeof(range), "%.0f-%.0f", res[m].lo, res[m].hi);
		printf("%-13s %7zu %9.0f %9.0f %11s %9.0f %9.0f", mode_name[m], x->n, p50, p99,
		       range, pct(x->thread, x->n, 50), pct(x->wall, x->n, 50));
		if (m == M_NATIVE)
			printf(" %10s %8s %8s\n", "-", "1.00", "1.00");
		else
			printf(" %+10.0f %8.2f %8.2f\n", p50 - n50, p50 / (n50 > 0 ? n50 : 1),
			       p99 / (n99 > 0 ? n99 : 1));
	}
}

/* cuMemGetInfo_v2: per call, batches of BM_INFO_BATCH. */
static void table_info(const struct opts *o, struct result *res, int nmodes)
{
	double n50 = pct(res[M_NATIVE].s.thread, res[M_NATIVE].s.n, 50) / 10.0;

	printf("\ncuMemGetInfo_v2: %d rounds x %d batches of %d calls per configuration, "
	       "ns per call (batch means)\n", o->rounds, o->info_batches, BM_INFO_BATCH);
	printf("%-13s %7s %9s %9s %11s %10s %8s\n", "config", "batches", "call-p50", "call-p99",
	       "child-p50s", "extra-p50", "x-p50");
	for (int m = 0; m < nmodes; m++) {
		struct bench_samples *x = &res[m].s;
		double p50 = pct(x->thread, x->n, 50) / 10.0;
		char range[32];

		snprintf(range, sizeof(range), "%.0f-%.0f", res[m].lo / 10.0, res[m].hi / 10.0);
		printf("%-13s %7zu %9.1f %9.1f %11s", mode_name[m], x->n, p50,
		       pct(x->thread, x->n, 99) / 10.0, range);
		if (m == M_NATIVE)
			printf(" %10s %8s\n", "-", "1.00");
		else
			printf(" %+10.1f %8.2f\n", p50 - n50, p50 / (n50 > 0 ? n50 : 1));
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_cuda_mem [--pairs N] [--rounds N] [--info-batches N] "
			"[--quick]\n                      [--driver-dir DIR] [--shim PATH] "
			"[--daemon PATH] [--no-daemon]\n");
	exit(2);
}

static const struct {
	size_t bytes;
	const char *name;
} sizes[] = { { 4096, "4 KiB" }, { 1 << 20, "1 MiB" } };

#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

int main(int argc, char **argv)
{
	struct run r = { .o = { .pairs = 20000, .rounds = 10, .info_batches = 200,
				.driver_dir = XS_SIM_CUDA_DIR, .shim = XS_SHIM_PATH,
				.daemon = XSD_BIN } };
	struct result pairs[NSIZES][M_COUNT], info[M_COUNT];
	char a1[32], a2[32];
	int nmodes = M_COUNT, rc = 1;

	if (argc == 6 && !strcmp(argv[1], "--child") && !strcmp(argv[2], "pairs"))
		return child_pairs((size_t)strtoull(argv[4], NULL, 10), atoi(argv[5]),
				   strtoull(argv[3], NULL, 10));
	if (argc == 6 && !strcmp(argv[1], "--child") && !strcmp(argv[2], "info"))
		return child_info(atoi(argv[4]), strtoull(argv[3], NULL, 10));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			r.o.pairs = 5000;
			r.o.rounds = 2;
			r.o.info_batches = 50;
		} else if (!strcmp(a, "--pairs") && v) {
			r.o.pairs = atoi(v), i++;
		} else if (!strcmp(a, "--rounds") && v) {
			r.o.rounds = atoi(v), i++;
		} else if (!strcmp(a, "--info-batches") && v) {
			r.o.info_batches = atoi(v), i++;
		} else if (!strcmp(a, "--driver-dir") && v) {
			r.o.driver_dir = v, i++;
		} else if (!strcmp(a, "--shim") && v) {
			r.o.shim = v, i++;
		} else if (!strcmp(a, "--daemon") && v) {
			r.o.daemon = v, i++;
		} else if (!strcmp(a, "--no-daemon")) {
			r.o.no_daemon = true;
		} else {
			usage();
		}
	}
	if (r.o.pairs < 1 || r.o.rounds < 1 || r.o.info_batches < 1 || !r.o.driver_dir[0] ||
	    !r.o.shim[0])
		usage();
	memset(pairs, 0, sizeof(pairs));
	memset(info, 0, sizeof(info));

	if (bench_mkdtemp(r.dir, sizeof(r.dir), "bench_cuda_mem") < 0)
		return 1;
	bench_daemon_paths(&r.xsd, r.dir);
	/* Every child (and the daemon) inherits the private device and none
	 * of the caller's xsched settings. */
	setenv("XSCHED_SIM_DIR", r.dir, 1);
	setenv("XSCHED_SIM_DEVICE", BM_SIM_DEVICE, 1);
	setenv("XSCHED_SIM_DEVICE_MEMORY", BM_DEVICE_MEMORY, 1);
	unsetenv("XSCHED_MEMORY_LIMIT");
	unsetenv("XSCHED_SCHEDULER");
	unsetenv("XSCHED_SOCKET");

	bench_print_machine(stdout);
	printf("simulated CUDA driver %s/libcuda.so.1, shim %s\n", r.o.driver_dir, r.o.shim);
	printf("note: the simulated driver's allocation is host memory (aligned_alloc) and an "
	       "entry in its\n      registry, far cheaper than a real GPU driver's: read the "
	       "extra ns, the ratios are upper bounds\n");
	printf("every figure includes the timing itself: back-to-back clock_gettime costs "
	       "%llu ns here\n", (unsigned long long)timer_cost());
	r.with_daemon = !r.o.no_daemon && r.o.daemon[0] && access(r.o.daemon, X_OK) == 0;
	if (!r.with_daemon) {
		nmodes = M_DAEMON;
		printf("shim+xschedd: left out (%s)\n",
		       r.o.no_daemon ? "--no-daemon" : "no xschedd: build it, or --daemon PATH");
	} else {
		printf("shim+xschedd: a private xschedd, the limit its uid ceiling of %s\n",
		       BM_LIMIT);
	}
	printf("shim+limit: XSCHED_MEMORY_LIMIT=%s; shim: counted, no limit (both "
	       "XSCHED_SCHEDULER=local);\nshim-none: XSCHED_SCHEDULER=none, every call passed "
	       "through, nothing counted\n", BM_LIMIT);
	fflush(stdout);
	if (r.with_daemon && (write_config(&r) < 0 ||
			      bench_daemon_start(&r.xsd, r.o.daemon, "bench_cuda_mem") < 0))
		goto out;
	for (int round = 0; round < r.o.rounds; round++) {
		for (size_t z = 0; z < NSIZES; z++) {
			snprintf(a1, sizeof(a1), "%zu", sizes[z].bytes);
			snprintf(a2, sizeof(a2), "%d", r.o.pairs);
			for (int k = 0; k < nmodes; k++) {
				enum mode m = (enum mode)((round + k) % nmodes);

				if (run_child(&r, m, "pairs", a1, a2, &pairs[z][m]) < 0)
					goto out;
			}
		}
		snprintf(a1, sizeof(a1), "%d", r.o.info_batches);
		for (int k = 0; k < nmodes; k++) {
			enum mode m = (enum mode)((round + k) % nmodes);

			if (run_child(&r, m, "info", a1, "-", &info[m]) < 0)
				goto out;
		}
	}
	for (size_t z = 0; z < NSIZES; z++)
		table_pairs(sizes[z].name, &r.o, pairs[z], nmodes);
	table_info(&r.o, info, nmodes);
	printf("\nchild-p50s: lowest-highest median of one child process; extra: median of "
	       "the configuration\nminus native's; x: ratio to native (p50, p99)\n");
	rc = 0;
out:
	bench_daemon_stop(&r.xsd);
	cleanup(&r, rc != 0);
	for (size_t z = 0; z < NSIZES; z++)
		for (int m = 0; m < M_COUNT; m++)
			bench_samples_free(&pairs[z][m].s);
	for (int m = 0; m < M_COUNT; m++)
		bench_samples_free(&info[m].s);
	return rc;
}
