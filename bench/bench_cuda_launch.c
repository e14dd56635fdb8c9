/*
 * CPU cost of a kernel launch on the application's thread: direct calls to
 * the simulated CUDA driver ("native") against the same calls through the
 * CUDA shim (LD_PRELOAD, local scheduler), in the same run.
 *
 * The benchmark re-runs itself as a child per measurement, alternating
 * native and shim children so that drifts of a noisy machine hit both.
 * Each child launches a zero-length kernel (sf_spin 0) on a non-blocking
 * stream in batches, synchronising between batches (not timed), and
 * reports per batch the thread CPU time (CLOCK_THREAD_CPUTIME_ID) and the
 * wall time per launch. Two task sizes: one XQueue launch window (every
 * launch goes to the driver from the application's thread, as natively,
 * and each task pays the queue's idle->busy transition: the worst case)
 * and far beyond it (launches are buffered and the XQueue's worker makes
 * the driver calls). The parent prints medians and P99 of the
 * per-launch figures and the shim's extra CPU per launch (median shim minus
 * median native). Process CPU per launch is reported too: under the shim
 * the XQueue's worker thread launches part of the work, off the
 * application's thread.
 *
 * --scheduler global measures the shim as scheduled by the xschedd at
 * XSCHED_SOCKET (the queue alone on its device: quiet, never suspended),
 * so that what its launch gate reads (run word, run floors) is counted.
 *
 * Usage: bench_cuda_launch [--batches N] [--rounds N] [--quick]
 *                          [--driver-dir DIR] [--shim PATH]
 *                          [--scheduler local|global]
 */
#include "xsched/xsched.h"
#define BENCH_PROG "bench_cuda_launch"
#include "bench_cuda.h"
#include "bench_launch.h"

#include <errno.h>
#include <sys/wait.h>
#include <time.h>

struct opts {
	int batches, batch, rounds;
	const char *driver_dir, *shim, *scheduler;
};

/*
 * The child: one line per batch on stdout, "thread_ns wall_ns process_ns"
 * per launch in tenths of ns, after a warm-up batch.
 */
static int child(int batches, int batch)
{
	CUfunction spin;
	CUmodule m;
	CUstream s;
	uint64_t ns = 0;
	void *args[] = { &ns };

	bench_cu_init();
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&spin, m, "sf_spin"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int b = -1; b < batches; b++) {
		/* Innermost: the thread clock, so that reading the others is
		 * not counted in the launches' CPU. */
		struct bench_clocks c0 = bench_clocks_now(), c1;

		for (int i = 0; i < batch; i++)
			CK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
		c1.thread = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		c1.wall = bench_clock_ns(CLOCK_MONOTONIC);
		CK(cuStreamSynchronize(s));
		c1.proc = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		if (b >= 0)
			bench_batch_print(&c0, &c1, batch);
	}
	CK(cuStreamDestroy_v2(s));
	return 0;
}

/* Runs one child with @shim or natively; appends its batches to @out. */
static int run_child(const char *self, const struct opts *o, bool shim,
		     struct bench_samples *out)
{
	char lib[4096], pre[4096], path[4096], nb[32], bs[32], sched[64];
	char *argv[] = { (char *)self, "--child", nb, bs, NULL };
	char *native[] = { path, NULL };
	char *shimmed[] = { path, lib, pre, sched, NULL };

	snprintf(sched, sizeof(sched), "XSCHED_SCHEDULER=%s", o->scheduler);
	snprintf(lib, sizeof(lib), "XSCHED_CUDA_LIB=%s/libcuda.so.1", o->driver_dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", o->shim);
	snprintf(path, sizeof(path), "LD_LIBRARY_PATH=%s", o->driver_dir);
	snprintf(nb, sizeof(nb), "%d", o->batches);
	snprintf(bs, sizeof(bs), "%d", o->batch);
	return bench_run_child(argv, shim ? shimmed : native,
			       shim ? "bench_cuda_launch: shim" : "bench_cuda_launch: native", out);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_cuda_launch [--batches N] [--rounds N] [--quick] "
			"[--driver-dir DIR] [--shim PATH] [--scheduler local|global]\n");
	exit(2);
}

/* Alternating native and shim children with batches of @batch launches. */
static int measure(const struct opts *o, int batch, const char *what, double *extra)
{
	struct bench_samples nat = { 0 }, shim = { 0 };
	struct opts c = *o;
	int rc = 0;

	c.batch = batch;
	for (int r = 0; r < o->rounds && rc == 0; r++)
		if (run_child("/proc/self/exe", &c, false, &nat) < 0 ||
		    run_child("/proc/self/exe", &c, true, &shim) < 0)
			rc = -1;
	if (rc == 0)
		*extra = bench_samples_table(what, "launch", o->rounds, o->batches, batch, &nat,
					     &shim);
	bench_samples_free(&nat);
	bench_samples_free(&shim);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { .batches = 200, .batch = 0, .rounds = 4,
			  .driver_dir = XS_SIM_CUDA_DIR, .shim = XS_SHIM_PATH,
			  .scheduler = "local" };
	double direct = 0, buffered = 0;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child(atoi(argv[2]), atoi(argv[3]));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			o.batches = 40;
			o.rounds = 2;
		} else if (!strcmp(a, "--batches") && v) {
			o.batches = atoi(v), i++;
		} else if (!strcmp(a, "--rounds") && v) {
			o.rounds = atoi(v), i++;
		} else if (!strcmp(a, "--driver-dir") && v) {
			o.driver_dir = v, i++;
		} else if (!strcmp(a, "--shim") && v) {
			o.shim = v, i++;
		} else if (!strcmp(a, "--scheduler") && v &&
			   (!strcmp(v, "local") || !strcmp(v, "global"))) {
			o.scheduler = v, i++;
		} else {
			usage();
		}
	}
	if (o.batches < 1 || o.rounds < 1 || !o.driver_dir[0] || !o.shim[0])
		usage();
	bench_print_machine(stdout);
	printf("kernel launches (sf_spin, 0 ns) on a non-blocking stream, synchronised "
	       "between batches\n");
	/*
	 * Tasks of one window: every launch reaches the driver from the
	 * application's thread, as natively, and each task also pays the
	 * queue's idle->busy transition (scheduler notification, worker
	 * wakeup): the worst case per launch.
	 */
	if (measure(&o, XS_DEFAULT_THRESHOLD, "tasks of 16 launches (one launch window each)",
		    &direct) < 0)
		return 1;
	/* Long tasks: beyond the window, launches are buffered and the
	 * XQueue's worker thread makes the driver calls. */
	if (measure(&o, 16 * XS_DEFAULT_THRESHOLD, "tasks of 256 launches", &buffered) < 0)
		return 1;
	printf("\nsummary: extra app-thread CPU per launch %.1f ns in 16-launch tasks "
	       "(%.1f us per task), %.1f ns in 256-launch tasks (goal <= 250 ns)\n", direct,
	       direct * XS_DEFAULT_THRESHOLD / 1000.0, buffered);
	return 0;
}
