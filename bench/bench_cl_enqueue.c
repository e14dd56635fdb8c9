/*
 * CPU cost of clEnqueueNDRangeKernel on the application's thread, on PoCL:
 * straight into the ICD loader ("native") against the same calls through
 * the OpenCL shim (LD_PRELOAD, in-process scheduler), in the same run.
 *
 * The benchmark re-runs itself as a child per measurement, alternating
 * native and shim children so that drifts of a noisy machine hit both.
 * Each child enqueues an empty kernel (one work-item) on an in-order queue
 * in batches, finishing the queue between batches (not timed), and reports
 * per batch the thread CPU time (CLOCK_THREAD_CPUTIME_ID) and the wall time
 * per enqueue, and the process CPU per enqueue including the finish (under
 * the shim the XQueue's worker may launch part of the work off the
 * application's thread). Three workloads: tasks of one XQueue launch
 * window (16 enqueues: the shim launches each from the application's
 * thread and pays the queue's idle->busy transition), tasks far beyond it
 * (256: later commands are buffered for the worker), and 16-enqueue tasks
 * that ask for an event per command (the shim must hand back an event for
 * a command it may not have launched yet) and release it at once.
 * The parent prints medians and P99 and the shim's extra CPU per enqueue
 * (median shim minus median native). Without a shim only native runs.
 *
 * Usage: bench_cl_enqueue [--batches N] [--rounds N] [--quick] [--shim PATH]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "xsched/xsched.h"
#include "bench_launch.h"

#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>

struct opts {
	int batches, batch, rounds;
	bool events;
	const char *shim;
};

#define CK(call)                                                                  \
	do {                                                                      \
		cl_int rc_ = (call);                                              \
		if (rc_ != CL_SUCCESS) {                                          \
			fprintf(stderr, "bench_cl_enqueue: %s = %d\n", #call, rc_); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

/* The first device of the first platform that has one; exits without. */
static void first_device(cl_platform_id *plat, cl_device_id *dev)
{
	cl_platform_id ps[8];
	cl_uint np = 0;

	CK(clGetPlatformIDs(8, ps, &np));
	for (cl_uint i = 0; i < np && i < 8; i++)
		if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, dev, NULL) == CL_SUCCESS) {
			*plat = ps[i];
			return;
		}
	fprintf(stderr, "bench_cl_enqueue: no OpenCL device\n");
	exit(1);
}

/*
 * The child: one line per batch on stdout, "thread_ns wall_ns process_ns"
 * per enqueue in tenths of ns, after a warm-up batch.
 */
static int child(int batches, int batch, bool events)
{
	static const char *src = "__kernel void empty(void) { }\n";
	size_t one = 1;
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel k;
	cl_int err;

	first_device(&plat, &dev);
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CK(err);
	q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	CK(err);
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
	k = clCreateKernel(prog, "empty", &err);
	CK(err);
	for (int b = -1; b < batches; b++) {
		/* Innermost: the thread clock, so that reading the others is
		 * not counted in the enqueues' CPU. */
		struct bench_clocks c0 = bench_clocks_now(), c1;

		for (int i = 0; i < batch; i++) {
			cl_event ev;

			if (!events) {
				CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL,
							  NULL));
				continue;
			}
			CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, &ev));
			CK(clReleaseEvent(ev));
		}
		c1.thread = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		c1.wall = bench_clock_ns(CLOCK_MONOTONIC);
		CK(clFinish(q));
		c1.proc = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		if (b >= 0)
			bench_batch_print(&c0, &c1, batch);
	}
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	return 0;
}

/* Runs one child with the shim or natively; appends its batches to @out. */
static int run_child(const struct opts *o, bool shim, struct bench_samples *out)
{
	char pre[4096], nb[32], bs[32];
	char *argv[] = { "bench_cl_enqueue", "--child", nb, bs,
			 o->events ? "events" : "none", NULL };
	char *native[] = { NULL };
	char *shimmed[] = { pre, "XSCHED_SCHEDULER=local", NULL };

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", o->shim);
	snprintf(nb, sizeof(nb), "%d", o->batches);
	snprintf(bs, sizeof(bs), "%d", o->batch);
	return bench_run_child(argv, shim ? shimmed : native,
			       shim ? "bench_cl_enqueue: shim" : "bench_cl_enqueue: native", out);
}

/* Median of the per-enqueue thread CPU, in ns. */
/*
 * Alternating native and shim children with batches of @batch enqueues;
 * *@extra gets the shim's extra thread CPU per enqueue (median), 0 without
 * a shim.
 */
static int measure(const struct opts *o, int batch, bool events, const char *what,
		   double *extra)
{
	struct bench_samples nat = { 0 }, shim = { 0 };
	bool with_shim = o->shim[0] != '\0';
	struct opts c = *o;
	int rc = 0;

	c.batch = batch;
	c.events = events;
	for (int r = 0; r < o->rounds && rc == 0; r++)
		if (run_child(&c, false, &nat) < 0 ||
		    (with_shim && run_child(&c, true, &shim) < 0))
			rc = -1;
	*extra = 0;
	if (rc == 0)
		*extra = bench_samples_table(what, "enqueue", o->rounds, o->batches, batch, &nat,
					     with_shim ? &shim : NULL);
	bench_samples_free(&nat);
	bench_samples_free(&shim);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_cl_enqueue [--batches N] [--rounds N] [--quick] "
			"[--shim PATH]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .batches = 200, .rounds = 4, .shim = XS_SHIM_PATH };
	double direct = 0, buffered = 0, evented = 0;

	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child(atoi(argv[2]), atoi(argv[3]), !strcmp(argv[4], "events"));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			o.batches = 40;
			o.rounds = 2;
		} else if (!strcmp(a, "--batches") && v) {
			o.batches = atoi(v), i++;
		} else if (!strcmp(a, "--rounds") && v) {
			o.rounds = atoi(v), i++;
		} else if (!strcmp(a, "--shim") && v) {
			o.shim = v, i++;
		} else {
			usage();
		}
	}
	if (o.batches < 1 || o.rounds < 1)
		usage();
	if (o.shim[0] && access(o.shim, R_OK) != 0) {
		fprintf(stderr, "bench_cl_enqueue: shim %s not found\n", o.shim);
		return 1;
	}
	bench_print_machine(stdout);
	printf("clEnqueueNDRangeKernel of an empty kernel (1 work-item) on an in-order queue, "
	       "finished between batches; shim: %s\n", o.shim[0] ? o.shim : "none (native only)");
	if (measure(&o, XS_DEFAULT_THRESHOLD, false,
		    "tasks of 16 enqueues (one launch window each)", &direct) < 0 ||
	    measure(&o, 16 * XS_DEFAULT_THRESHOLD, false, "tasks of 256 enqueues",
		    &buffered) < 0 ||
	    measure(&o, XS_DEFAULT_THRESHOLD, true,
		    "tasks of 16 enqueues, each asking for an event (released at once)",
		    &evented) < 0)
		return 1;
	if (o.shim[0])
		printf("\nsummary: extra app-thread CPU per enqueue %.1f ns in 16-enqueue tasks, "
		       "%.1f ns in 256-enqueue tasks, %.1f ns with events (goal <= 250 ns)\n",
		       direct, buffered, evented);
	return 0;
}
