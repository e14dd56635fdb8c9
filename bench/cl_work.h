/*
 * The OpenCL workload shared by the OpenCL benchmarks (bench_cl_priority,
 * cl_load): a loop kernel whose duration is set by its iteration count
 * (calibrated against the clock on the device at hand, a CPU under PoCL),
 * a periodic foreground loop of tasks with +-50% jitter finished by
 * clFinish, and a flooding background that keeps a fixed number of kernels
 * in flight. One piece of code, so that the programs' numbers measure the
 * same thing.
 *
 * These are benchmark helpers: an OpenCL error prints the failing call
 * (prefixed with the program's name) and exits the process.
 */
#ifndef XS_BENCH_CL_WORK_H
#define XS_BENCH_CL_WORK_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* One program's OpenCL state: the first device found, an in-order queue,
 * the loop kernel set to @iters steps on @width work-items in work-groups
 * of @local (1 unless clw_set_local() says otherwise). */
struct clw {
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel k;
	cl_mem junk;
	size_t width, local;
	unsigned iters;
};

/* Sets up @w (exits on failure: no device, build error). */
void clw_open(struct clw *w, unsigned iters, size_t width);
void clw_close(struct clw *w);
void clw_set_iters(struct clw *w, unsigned iters);

/*
 * Work-items per work-group of the next enqueues (exits unless it divides
 * the width). The local size is always given explicitly: PoCL then keeps
 * it, and at Lv2 the shim's guardian can cut the kernel between groups
 * (a launch without one runs whole).
 */
void clw_set_local(struct clw *w, size_t local);

/* The device's compute units: PoCL's threads, the work-groups that run at
 * once. */
unsigned clw_compute_units(const struct clw *w);

/* Enqueues one kernel (by default one work-item per work-group, so that
 * PoCL spreads the work-items over its threads); @ev may be NULL. */
void clw_enqueue(struct clw *w, cl_event *ev);

/*
 * Iterations for a kernel of about @target_ns on @w's device and width,
 * from the median of a few timed enqueue+finish round trips (run this on
 * an otherwise idle machine). Leaves @w set to the result.
 */
unsigned clw_calibrate(struct clw *w, uint64_t target_ns);

/*
 * Periodic tasks of @cmds kernels, each finished by clFinish. Task i is
 * released @period_ns after task i-1 with +-@jitter (a fraction, 0..1)
 * uniform jitter drawn with erand48 from @seed, so every run and every
 * configuration sees the same release pattern; @period_ns 0 runs the
 * tasks back to back.
 */
struct clw_periodic {
	int tasks, cmds, warmup;
	uint64_t period_ns;
	double jitter;
	unsigned seed;
	/* true: latency from the release, and a task released while the
	 * previous one ran starts late (no burst to catch up) but counts from
	 * its release; false: latency from the first enqueue (timer overshoot
	 * not counted) on a fixed schedule. */
	bool from_release;
};

/*
 * Runs @p->warmup unmeasured tasks then up to @p->tasks measured ones,
 * latencies (ns) into @lat. Returns the number measured; *@t0 and *@t1 get
 * the measured window (first measured release, last completion) in
 * CLOCK_REALTIME ns (bench_wall_ns(), comparable between processes). @stop,
 * if not NULL, ends the loop early once non-zero (set by a signal handler).
 */
int clw_run_periodic(struct clw *w, const struct clw_periodic *p, uint64_t *lat,
		     uint64_t *t0, uint64_t *t1, const volatile sig_atomic_t *stop);

/*
 * The flood: groups of @group kernels, each closed by an event on its last
 * kernel, @depth groups in flight (the oldest group's event is waited on
 * before the next group is enqueued), until @more returns false (asked
 * before each group; NULL: forever). @done, if not NULL, is called after
 * each group completes with the time (bench_wall_ns()) and the kernels
 * completed so far.
 * Returns the kernels completed; what is in flight is drained first.
 */
uint64_t clw_flood(struct clw *w, int group, int depth, bool (*more)(void *arg),
		   void (*done)(void *arg, uint64_t t_ns, uint64_t count), void *arg);

#endif
