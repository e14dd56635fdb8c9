/*
 * Preemption latency of the OpenCL shim on a real device (PoCL), at Lv1
 * and at Lv2 (the guardian), measured in one run.
 *
 * A background kernel of about 5 ms and one of about 50 ms (--kernels-ms),
 * each split into --groups work-groups of --local work-items (default 512
 * groups of one item, so that PoCL's threads take the groups one by one
 * and the guardian has many points at which to cut), is launched again
 * and again; after a random delay, uniform over the kernel's duration (its
 * median in that configuration, measured just before), the program
 * suspends the queue synchronously through the test build of the shim
 * (cl_test_preempt(queue, 2): XS_SUSPEND_SYNC, which returns once the
 * device is quiet) and times that call. At Lv2 the queue's running launch
 * stops between work-groups (the groups not started skip); at Lv1 the call
 * waits for the kernel to end. The queue is then resumed and the kernel
 * finished (clFinish: at Lv2 its skipped groups run in the relaunch)
 * before the next sample.
 *
 * Each configuration is a child process of this program (so that the shim
 * reads its XSCHED_OPENCL_LV2): Lv1 (XSCHED_OPENCL_LV2=0) and Lv2 (the
 * default), both under the test shim with the in-process scheduler, which
 * leaves a lone queue alone. They alternate in --rounds rounds and draw
 * the same random fractions of the duration in a round, so that a noisy
 * machine's drift hits both and the percentiles are pooled over the
 * rounds. The kernels' iteration counts are calibrated once, natively, by
 * this process (run it on an idle machine). Before that, under the
 * machine line, "CPU gaps": the time the CPUs lose to interrupts and the
 * hypervisor (probe_cpu_gaps(), again for 300 ms after each round), which
 * sets the floor of the tail here: after the table, per Lv2 kernel, what an
 * ideal guardian would take with only those gaps in its way (gap_floor()).
 *
 * Reported per level and kernel: the samples, suspensions that found the
 * kernel still running (a delay near the kernel's end can find it done:
 * those are counted apart and drawn again, up to three tries a sample),
 * the launches cut (Lv2), the kernel's own duration in that configuration
 * (median of uninterrupted runs), the time of one work-group (duration /
 * groups x the groups that run at once, PoCL's threads = the device's
 * compute units) and P50/P99/max of the preemption latency. The goals
 * checked (issue 17): Lv2 P99 <= two work-groups' time, and <= 1 ms for a
 * 50 ms kernel.
 *
 * --buffers runs Lv2 with XSCHED_OPENCL_LV2=buffer: the control word is a
 * buffer written on a second queue, as on devices without fine-grain SVM.
 *
 * --depth N enqueues N kernels back to back per sample (the delay still
 * within the first): the device is quiet only once all of them ran or,
 * at Lv2, skipped every group, as with a background that keeps several
 * kernels in flight.
 *
 * --out DIR writes summary.tsv (the table), lat_lv<L>-<K>ms.txt (the
 * latencies in us, one per line, for CDFs: tools/plots.sh) and
 * samples_lv<L>-<K>ms.tsv (each latency with its delay as a fraction of
 * the duration: at Lv2 an early suspension leaves more groups to skip;
 * and whether the kernel had started on the device at the request). After
 * the table, per Lv2 kernel, the device side of the suspensions that found
 * the kernel running on the device (a kernel still being started is the
 * device's start-up, not the guardian). Without the test shim or an
 * OpenCL device it prints "bench_cl_preempt: skipped: why" and exits 0.
 *
 * Usage: bench_cl_preempt [--kernels-ms MS[,MS...]] [--samples N[,N...]]
 *          [--rounds N] [--groups N] [--local N] [--depth N] [--seed S]
 *          [--buffers] [--quick] [--shim PATH] [--out DIR]
 */
#include "cl_work.h"
#include "bench_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define US 1000ull
#define MS (1000 * US)
#define MAX_KERNELS 4

struct opts {
	int nk, rounds, groups, local, depth;
	long long dev_offset;           /* device profiling clock - host raw clock */
	bool buffers;                   /* Lv2 with XSCHED_OPENCL_LV2=buffer */
	unsigned kernel_ms[MAX_KERNELS];
	int samples[MAX_KERNELS];       /* over all rounds */
	unsigned seed;
	const char *shim, *out;
};

/* What the parent hands a child for one kernel. */
struct kspec {
	unsigned iters;
	uint64_t nominal_ns;            /* calibrated natively */
	int n;                          /* samples in this round */
	unsigned seed;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The clock PoCL stamps profiling events with; dev_clock_offset() checks. */
static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define MAX_GAPS 65536             /* recorded per CPU (a few thousand in a second here) */

/* One CPU's share of probe_cpu_gaps(), and each gap (over 5 us) it saw. */
struct cpu_gaps {
	int cpu;
	unsigned ms;
	uint64_t span_ns, lost_ns, max_ns;
	uint64_t n20;                   /* gaps of 20 us or more */
	uint64_t *at, *len;             /* each gap: its start (ns from the first read), length */
	size_t n;
};

static void *cpu_gaps_run(void *arg)
{
	struct cpu_gaps *g = arg;
	uint64_t t0, prev, now;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(g->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		return NULL;
	t0 = prev = raw_ns();
	do {
		uint64_t d;

		now = raw_ns();
		d = now - prev;
		prev = now;
		if (d > 5 * US) {
			if (g->n < MAX_GAPS) {
				g->at[g->n] = g->span_ns + (now - d - t0);
				g->len[g->n++] = d;
			}
			g->lost_ns += d;
			g->n20 += d >= 20 * US;
			g->max_ns = d > g->max_ns ? d : g->max_ns;
		}
	} while (now - t0 < (uint64_t)g->ms * MS);
	g->span_ns += now - t0;
	return NULL;
}

/*
 * The time the CPUs of this process's mask (the first 64) lose to what
 * runs instead of it (interrupts, the timer tick, a hypervisor): one
 * thread per CPU reads the clock for @ms, and a gap of over 5 us between
 * two reads is time lost. PoCL's groups run on these CPUs: a gap inside a
 * suspension's window lengthens it, so this sets the floor of the tail
 * (gap_floor()). The first call (*@n == 0) sets up @g, one per CPU; each
 * later one adds @ms more to each CPU's trace, as if run on from its end.
 */
static void probe_cpu_gaps(unsigned ms, struct cpu_gaps g[64], int *n)
{
	pthread_t t[64];
	bool started[64];
	cpu_set_t set;

	if (*n == 0 && sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && *n < 64; c++)
			if (CPU_ISSET(c, &set))
				g[(*n)++] = (struct cpu_gaps){
					.cpu = c, .at = calloc(MAX_GAPS, sizeof(uint64_t)),
					.len = calloc(MAX_GAPS, sizeof(uint64_t)) };
	for (int i = 0; i < *n; i++) {
		g[i].ms = ms;
		started[i] = g[i].at && g[i].len &&
			     !pthread_create(&t[i], NULL, cpu_gaps_run, &g[i]);
	}
	for (int i = 0; i < *n; i++)
		if (started[i])
			pthread_join(t[i], NULL);
}

static void print_cpu_gaps(const struct cpu_gaps *g, int n)
{
	uint64_t span = 0, lost = 0, n20 = 0, max = 0;

	for (int i = 0; i < n; i++) {
		span += g[i].span_ns;
		lost += g[i].lost_ns;
		n20 += g[i].n20;
		max = g[i].max_ns > max ? g[i].max_ns : max;
	}
	if (!span)
		return;
	printf("CPU gaps: %.2f%% of the CPUs' time lost in gaps over 5 us (interrupts, the "
	       "hypervisor); %.0f gaps of 20 us or more per second per CPU; the longest %.0f us "
	       "(%d CPUs, %.0f ms each)\n", 100.0 * (double)lost / (double)span,
	       (double)n20 * 1e9 / (double)span, (double)max / 1e3, n, (double)span / n / 1e6);
}

/*
 * Wall time from @t (ns into @g's trace) until @work ns of CPU time have
 * run on that CPU, the gaps recorded there taking their share.
 */
static uint64_t gap_walk(const struct cpu_gaps *g, uint64_t t, uint64_t work)
{
	size_t lo = 0, hi = g->n;
	uint64_t pos = t;

	/* The first gap that ends after @t. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->at[mid] + g->len[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < g->n && g->at[i] < pos + work; i++) {
		if (g->at[i] > pos)
			work -= g->at[i] - pos;
		pos = g->at[i] + g->len[i];
	}
	return pos + work - t;
}

/*
 * The floor that the CPU gaps of @g (@n CPUs) set on a suspension of a
 * kernel whose groups take @group_ns on @busy threads, one per CPU: the
 * latency of an ideal guardian that stopped each running group the moment
 * it ended, with nothing of the host's in the way. A request at a random
 * time finds, on each busy CPU, a group with a uniform share of its work
 * left, and waits for the last of them; the work of a group is its
 * measured time less that CPU's average loss to gaps. P50 / P90 / P99 of
 * 20000 such requests into @pct (ns); false when no trace is long enough.
 */
static bool gap_floor(const struct cpu_gaps *g, int n, unsigned busy, double group_ns,
		      unsigned seed, double pct[3])
{
	enum { TRIALS = 20000 };
	unsigned short xs[3] = { 0x330e, (unsigned short)seed, (unsigned short)(seed >> 16) };
	uint64_t *lat = calloc(TRIALS, sizeof(*lat));
	int use = (int)busy < n ? (int)busy : n;
	double room[64], work[64];

	if (!lat || use < 1)
		goto fail;
	for (int c = 0; c < use; c++) {
		if (g[c].span_ns < (uint64_t)(20 * group_ns) + 10 * MS)
			goto fail;
		/* Where a request may fall, and a group's work there. */
		room[c] = (double)(g[c].span_ns - (uint64_t)(20 * group_ns) - 10 * MS);
		work[c] = group_ns * (1.0 - (double)g[c].lost_ns / (double)g[c].span_ns);
	}
	for (int i = 0; i < TRIALS; i++) {
		uint64_t worst = 0;

		for (int c = 0; c < use; c++) {
			uint64_t t = (uint64_t)(erand48(xs) * room[c]);
			uint64_t d = gap_walk(&g[c], t, (uint64_t)(erand48(xs) * work[c]));

			worst = d > worst ? d : worst;
		}
		lat[i] = worst;
	}
	qsort(lat, TRIALS, sizeof(*lat), bench_cmp_u64);
	pct[0] = (double)bench_pct(lat, TRIALS, 50);
	pct[1] = (double)bench_pct(lat, TRIALS, 90);
	pct[2] = (double)bench_pct(lat, TRIALS, 99);
	free(lat);
	return true;
fail:
	free(lat);
	return false;
}

/* @w's queue again, with profiling (before anything was enqueued on it). */
static void profile_queue(struct clw *w)
{
	cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
	cl_int err;

	clReleaseCommandQueue(w->q);
	w->q = clCreateCommandQueueWithProperties(w->ctx, w->dev, props, &err);
	if (!w->q) {
		fprintf(stderr, "bench_cl_preempt: a profiled queue: error %d\n", err);
		exit(1);
	}
}

/*
 * The device's profiling clock minus the host's CLOCK_MONOTONIC_RAW (ns),
 * from the queued stamps of a few launches against the host time around
 * their enqueue calls (the narrowest bracket wins; its width, the
 * uncertainty, into *@bracket). @w's queue is profiled.
 */
static long long dev_clock_offset(struct clw *w, uint64_t *bracket)
{
	long long best = 0;

	*bracket = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		cl_ulong queued = 0;
		uint64_t r0, r1;
		cl_event ev;

		r0 = raw_ns();
		clw_enqueue(w, &ev);
		r1 = raw_ns();
		clWaitForEvents(1, &ev);
		if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof(queued),
					    &queued, NULL) == CL_SUCCESS &&
		    r1 - r0 < *bracket) {
			*bracket = r1 - r0;
			best = (long long)queued - (long long)(r0 + (r1 - r0) / 2);
		}
		clReleaseEvent(ev);
	}
	return best;
}

static void sleep_until_mono(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Median of @n uninterrupted enqueue+finish round trips of @w. */
static uint64_t kernel_median_ns(struct clw *w, int n)
{
	uint64_t t[9];

	if (n > 9)
		n = 9;
	for (int i = 0; i < n; i++) {
		uint64_t t0 = mono_ns();

		clw_enqueue(w, NULL);
		clFinish(w->q);
		t[i] = mono_ns() - t0;
	}
	qsort(t, (size_t)n, sizeof(*t), bench_cmp_u64);
	return t[n / 2];
}

/* --- the child: one configuration under the test shim --------------------- */

typedef int (*preempt_fn)(cl_command_queue, int);
typedef int (*level_fn)(cl_command_queue);
typedef long (*relaunch_fn)(cl_command_queue);
typedef unsigned long long (*dev_time_fn)(cl_command_queue);

/*
 * The device-side latency of a sample: from the host's request to the end
 * of the last command the device ran for the queue, in the device's
 * profiling clock (@offset from the host's): at Lv2 what the shim read
 * when the device went quiet (cl_test_quiet_end(), @qend), at Lv1 the end
 * of the kernel in flight (one per sample only). Negative when it ended
 * before the request; INT64_MIN when not known.
 */
static long long dev_latency(int lv, int depth, cl_event ev, unsigned long long qend,
			     unsigned long long prev_qend, long long offset, uint64_t t0raw)
{
	cl_ulong end = 0;

	if (lv == 2 && qend && qend != prev_qend)
		end = qend;
	else if (lv == 1 && depth == 1 &&
		 clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end,
					 NULL) != CL_SUCCESS)
		end = 0;
	if (!end)
		return INT64_MIN;
	return (long long)end - offset - (long long)t0raw;
}

/*
 * Whether the kernel of a sample had started on the device before the
 * request: its start in the device's clock (@start: at Lv2 the shim's
 * cl_test_quiet_start(), at Lv1 the event's own) against the request's
 * time; 1, 0, or -1 when not known.
 */
static int dev_started(int lv, int depth, cl_event ev, unsigned long long start,
		       long long offset, uint64_t t0raw)
{
	cl_ulong s = lv == 2 ? start : 0;

	if (lv == 1 && depth == 1 &&
	    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(s), &s, NULL) !=
		    CL_SUCCESS)
		s = 0;
	if (!s)
		return -1;
	return (long long)s - offset <= (long long)t0raw;
}

/*
 * Prints, per kernel k: "K k duration_ns level", one "S k latency_ns
 * in_flight delay_permille device_latency_ns started" per sample (the
 * delay in thousandths of the duration; the device-side latency,
 * dev_latency(), or "-"; whether the kernel had started, dev_started(), or
 * -1), then "R k relaunches".
 */
static int child(int groups, int local, int depth, int nk, long long offset,
		 const struct kspec *ks)
{
	preempt_fn preempt = (preempt_fn)dlsym(RTLD_DEFAULT, "cl_test_preempt");
	level_fn level = (level_fn)dlsym(RTLD_DEFAULT, "cl_test_level");
	relaunch_fn relaunches = (relaunch_fn)dlsym(RTLD_DEFAULT, "cl_test_relaunches");
	dev_time_fn quiet_end = (dev_time_fn)dlsym(RTLD_DEFAULT, "cl_test_quiet_end");
	dev_time_fn quiet_start = (dev_time_fn)dlsym(RTLD_DEFAULT, "cl_test_quiet_start");
	unsigned long long prev_qend = 0;
	struct clw w;

	if (!preempt || !level || !relaunches || !quiet_end || !quiet_start) {
		fprintf(stderr, "bench_cl_preempt: not under the test build of the OpenCL shim "
			"(no cl_test_preempt)\n");
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1);
	clw_open(&w, ks[0].iters, (size_t)groups * (size_t)local);
	profile_queue(&w);
	clw_set_local(&w, (size_t)local);
	for (int k = 0; k < nk; k++) {
		unsigned short xs[3] = { 0x330e, (unsigned short)ks[k].seed,
					 (unsigned short)(ks[k].seed >> 16) };
		int lv;
		long r0;
		uint64_t dur;

		clw_set_iters(&w, ks[k].iters);
		kernel_median_ns(&w, 2); /* warm-up */
		dur = kernel_median_ns(&w, ks[k].nominal_ns > 20 * MS ? 5 : 9);
		lv = level(w.q);
		printf("K %d %llu %d\n", k, (unsigned long long)dur, lv);
		r0 = relaunches(w.q);
		/* Until @n suspensions found the kernel running (at most 3n tries). */
		for (int i = 0, got = 0; got < ks[k].n && i < 3 * ks[k].n; i++) {
			uint64_t delay = (uint64_t)(erand48(xs) * (double)dur);
			cl_int st = CL_COMPLETE;
			uint64_t t0, t1, t0raw;
			unsigned long long qend, qstart;
			long long dl;
			cl_event ev;
			int rc;

			t0 = mono_ns();
			clw_enqueue(&w, &ev);
			for (int d = 1; d < depth; d++)
				clw_enqueue(&w, NULL);
			clFlush(w.q);
			sleep_until_mono(t0 + delay);
			clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
				       NULL);
			t0raw = raw_ns();
			t0 = mono_ns();
			rc = preempt(w.q, 2);
			t1 = mono_ns();
			qend = quiet_end(w.q);
			qstart = quiet_start(w.q);
			if (rc) {
				fprintf(stderr, "bench_cl_preempt: cl_test_preempt: %s\n",
					strerror(-rc));
				return 1;
			}
			preempt(w.q, 0);
			if (clFinish(w.q) != CL_SUCCESS) {
				fprintf(stderr, "bench_cl_preempt: clFinish failed\n");
				return 1;
			}
			dl = dev_latency(lv, depth, ev, qend, prev_qend, offset, t0raw);
			prev_qend = qend;
			got += st != CL_COMPLETE;
			printf("S %d %llu %d %u ", k, (unsigned long long)(t1 - t0),
			       st != CL_COMPLETE, (unsigned)(delay * 1000 / (dur ? dur : 1)));
			if (dl == INT64_MIN)
				printf("- ");
			else
				printf("%lld ", dl);
			printf("%d\n", dev_started(lv, depth, ev, dl == INT64_MIN ? 0 : qstart,
						    offset, t0raw));
			clReleaseEvent(ev);
		}
		printf("R %d %ld\n", k, relaunches(w.q) - r0);
	}
	clw_close(&w);
	return 0;
}

/* --- the parent ----------------------------------------------------------- */

/* One level's results for one kernel, pooled over rounds. */
#define DLAT_UNKNOWN UINT64_MAX

struct cell {
	uint64_t *lat;                  /* samples whose kernel was in flight */
	uint64_t *dlat;                 /* their device-side latencies, DLAT_UNKNOWN */
	int dn, dearly;                 /* known; of those, ended before the request */
	unsigned *at;                   /* their delays, thousandths of the duration */
	signed char *started;           /* their kernels had started: 1, 0, -1 unknown */
	int run_n, wait_n;              /* known device latencies with it started, not */
	double run_pct[3];              /* P50, P90, P99 of those with it started (ns) */
	int n, cap, done_before, level_seen;
	long cut;
	double dur_sum;
	int dur_n;
};

/* Runs one child (@lv2: the guardian on) and adds its output to @cells. */
static int run_child(const struct opts *o, bool lv2, const struct kspec *ks,
		     struct cell *cells)
{
	char args[MAX_KERNELS * 4 + 8][24], pre[4200], dev[32];
	char *argv[MAX_KERNELS * 4 + 10];
	int na = 0, st = 0, k, in_flight, lvl, got = 0, want = 0, started;
	unsigned at;
	unsigned long long v;
	long r;
	FILE *in;
	pid_t pid;
	char tag;

	argv[na++] = "bench_cl_preempt";
	argv[na++] = "--child";
	snprintf(args[0], 24, "%d", o->groups);
	snprintf(args[1], 24, "%d", o->local);
	snprintf(args[2], 24, "%d", o->depth);
	snprintf(args[3], 24, "%d", o->nk);
	snprintf(args[4], 24, "%lld", o->dev_offset);
	for (int i = 0; i < 5; i++)
		argv[na++] = args[i];
	for (k = 0; k < o->nk; k++) {
		snprintf(args[5 + 4 * k], 24, "%u", ks[k].iters);
		snprintf(args[6 + 4 * k], 24, "%llu", (unsigned long long)ks[k].nominal_ns);
		snprintf(args[7 + 4 * k], 24, "%d", ks[k].n);
		snprintf(args[8 + 4 * k], 24, "%u", ks[k].seed);
		for (int i = 5 + 4 * k; i < 9 + 4 * k; i++)
			argv[na++] = args[i];
		want += ks[k].n;
	}
	argv[na] = NULL;
	pid = bench_fork_piped(&in);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", o->shim);
		putenv(pre);
		putenv("XSCHED_SCHEDULER=local");
		putenv(!lv2 ? "XSCHED_OPENCL_LV2=0" :
		       o->buffers ? "XSCHED_OPENCL_LV2=buffer" : "XSCHED_OPENCL_LV2=1");
		unsetenv("XSCHED_DISABLE");
		unsetenv("XSCHED_PRIORITY");
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (fscanf(in, " %c %d", &tag, &k) == 2 && k >= 0 && k < o->nk) {
		struct cell *c = &cells[k];

		if (tag == 'K' && fscanf(in, "%llu %d", &v, &lvl) == 2) {
			c->dur_sum += (double)v;
			c->dur_n++;
			c->level_seen = lvl;
		} else if (tag == 'S' && fscanf(in, "%llu %d %u %31s %d", &v, &in_flight, &at, dev,
						&started) == 5) {
			if (in_flight && got < want && c->n < c->cap) {
				long long d = strcmp(dev, "-") ? atoll(dev) : 0;

				c->dlat[c->n] = strcmp(dev, "-") ? (d < 0 ? 0 : (uint64_t)d)
								 : DLAT_UNKNOWN;
				c->dn += c->dlat[c->n] != DLAT_UNKNOWN;
				c->dearly += d < 0;
				c->at[c->n] = at;
				c->started[c->n] = (signed char)started;
				c->lat[c->n++] = v;
				got++;
			} else if (!in_flight) {
				c->done_before++;
			}
		} else if (tag == 'R' && fscanf(in, "%ld", &r) == 1) {
			c->cut += r;
		} else {
			break;
		}
	}
	fclose(in);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || got != want) {
		fprintf(stderr, "bench_cl_preempt: the Lv%d child failed (status 0x%x, %d of %d "
			"samples with the kernel running)\n", lv2 ? 2 : 1, st, got, want);
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_cl_preempt [--kernels-ms MS[,MS...]] [--samples N[,N...]]\n"
		"         [--rounds N] [--groups N] [--local N] [--depth N] [--seed S]\n"
		"         [--buffers] [--quick] [--shim PATH] [--out DIR]\n");
	exit(2);
}

/* "a,b,c" into up to MAX_KERNELS unsigned values; their count, or -1. */
static int parse_list(const char *s, unsigned *v)
{
	int n = 0;
	char *end;

	while (*s && n < MAX_KERNELS) {
		unsigned long x = strtoul(s, &end, 10);

		if (end == s || x == 0 || x > 100000)
			return -1;
		v[n++] = (unsigned)x;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return *s ? -1 : n;
}

static int parse_child(int argc, char **argv, int *groups, int *local, int *depth, int *nk,
		       long long *offset, struct kspec *ks)
{
	if (argc < 7)
		return -1;
	*groups = atoi(argv[2]);
	*local = atoi(argv[3]);
	*depth = atoi(argv[4]);
	*nk = atoi(argv[5]);
	*offset = atoll(argv[6]);
	if (*groups < 1 || *local < 1 || *depth < 1 || *nk < 1 || *nk > MAX_KERNELS ||
	    argc != 7 + 4 * *nk)
		return -1;
	for (int k = 0; k < *nk; k++) {
		ks[k].iters = (unsigned)strtoul(argv[7 + 4 * k], NULL, 10);
		ks[k].nominal_ns = strtoull(argv[8 + 4 * k], NULL, 10);
		ks[k].n = atoi(argv[9 + 4 * k]);
		ks[k].seed = (unsigned)strtoul(argv[10 + 4 * k], NULL, 10);
	}
	return 0;
}

/* Why this machine cannot run the benchmark ("" if it can). */
static const char *why_skip(const struct opts *o)
{
	cl_platform_id p;
	cl_device_id d;
	cl_uint n = 0;

	if (!o->shim[0] || access(o->shim, R_OK))
		return "the test build of the OpenCL shim is missing (BUILD_TESTING; or --shim)";
	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || !n ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
		return "no OpenCL device (install pocl-opencl-icd)";
	return "";
}

static FILE *out_file(const struct opts *o, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", o->out, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "bench_cl_preempt: %s: %s\n", path, strerror(errno));
	return f;
}

/*
 * --out: @c's latencies (us, one per line; host-side in lat_lv<L>-<K>ms.txt,
 * the known device-side ones in dlat_lv<L>-<K>ms.txt) and, in
 * samples_lv<L>-<K>ms.tsv, each with its delay (the fraction of the
 * duration at which the suspension came: how many work-groups were left
 * to skip), its device-side latency and whether its kernel had started
 * ("-": unknown). 0 or -1.
 */
static int write_samples(const struct opts *o, int k, int lv, const struct cell *c)
{
	char name[3][64];
	FILE *f[3];
	int rc = 0;

	snprintf(name[0], sizeof(name[0]), "lat_lv%d-%ums.txt", lv, o->kernel_ms[k]);
	snprintf(name[1], sizeof(name[1]), "samples_lv%d-%ums.tsv", lv, o->kernel_ms[k]);
	snprintf(name[2], sizeof(name[2]), "dlat_lv%d-%ums.txt", lv, o->kernel_ms[k]);
	for (int i = 0; i < 3; i++) {
		if (!(f[i] = out_file(o, name[i]))) {
			while (i--)
				fclose(f[i]);
			return -1;
		}
	}
	fprintf(f[1], "delay_fraction\tlatency_us\tdevice_latency_us\tstarted\n");
	for (int i = 0; i < c->n; i++) {
		fprintf(f[0], "%.1f\n", (double)c->lat[i] / 1e3);
		fprintf(f[1], "%.3f\t%.1f\t", c->at[i] / 1e3, (double)c->lat[i] / 1e3);
		if (c->dlat[i] == DLAT_UNKNOWN) {
			fprintf(f[1], "-\t");
		} else {
			fprintf(f[1], "%.1f\t", (double)c->dlat[i] / 1e3);
			fprintf(f[2], "%.1f\n", (double)c->dlat[i] / 1e3);
		}
		if (c->started[i] < 0)
			fprintf(f[1], "-\n");
		else
			fprintf(f[1], "%d\n", c->started[i]);
	}
	for (int i = 0; i < 3; i++) {
		if (fclose(f[i])) {
			fprintf(stderr, "bench_cl_preempt: %s: write error\n", name[i]);
			rc = -1;
		}
	}
	return rc;
}

/*
 * Splits @c's known device-side latencies by whether the kernel had
 * started when the request came: the percentiles of those it had (a
 * running kernel stopped), the count of those it had not (the device
 * still starting a kernel it was told to skip). Before report() sorts.
 */
static void split_started(struct cell *c)
{
	uint64_t *run = calloc((size_t)c->n + 1, sizeof(*run));
	static const int pct[3] = { 50, 90, 99 };

	c->run_n = c->wait_n = 0;
	if (!run)
		return;
	for (int i = 0; i < c->n; i++) {
		if (c->dlat[i] == DLAT_UNKNOWN || c->started[i] < 0)
			continue;
		if (c->started[i])
			run[c->run_n++] = c->dlat[i];
		else
			c->wait_n++;
	}
	qsort(run, (size_t)c->run_n, sizeof(*run), bench_cmp_u64);
	for (int i = 0; i < 3; i++)
		c->run_pct[i] = c->run_n ? (double)bench_pct(run, (size_t)c->run_n, pct[i]) : 0;
	free(run);
}

/* "met" or "**missed**": whether @v <= @limit. */
static const char *verdict(double v, double limit)
{
	return v <= limit ? "met" : "**missed**";
}

/*
 * The table row of level @lv for kernel @k (and its summary.tsv row, and
 * its samples' files with --out). Sorts @c's latencies. 0, or -1 when a
 * file cannot be written.
 */
static int report(const struct opts *o, int k, int lv, struct cell *c, unsigned cu, FILE *tsv)
{
	double dur = c->dur_n ? c->dur_sum / c->dur_n : 0, group = dur / o->groups * cu;
	double p50, p99, mx, d50 = 0, d99 = 0, dmx = 0;
	char goal[160] = "-", dev[96] = "- | - | -";
	size_t n;

	if (o->out && write_samples(o, k, lv, c) < 0)
		return -1;
	split_started(c);
	p50 = (double)bench_pct(c->lat, (size_t)c->n, 50);
	p99 = (double)bench_pct(c->lat, (size_t)c->n, 99);
	mx = (double)bench_pct(c->lat, (size_t)c->n, 100);
	/* The known device-side latencies first (DLAT_UNKNOWN sorts last). */
	qsort(c->dlat, (size_t)c->n, sizeof(*c->dlat), bench_cmp_u64);
	if (c->dn) {
		d50 = (double)bench_pct(c->dlat, (size_t)c->dn, 50);
		d99 = (double)bench_pct(c->dlat, (size_t)c->dn, 99);
		dmx = (double)bench_pct(c->dlat, (size_t)c->dn, 100);
		snprintf(dev, sizeof(dev), "%.1f | %.1f | %.1f", d50 / 1e3, d99 / 1e3, dmx / 1e3);
	}
	if (lv == 2 && group > 0) {
		n = (size_t)snprintf(goal, sizeof(goal), "<= 2 groups: device %s, host %s",
				     c->dn ? verdict(d99, 2 * group) : "unknown",
				     verdict(p99, 2 * group));
		if (o->kernel_ms[k] >= 50)
			snprintf(goal + n, sizeof(goal) - n, "; <= 1 ms: device %s, host %s",
				 c->dn ? verdict(d99, 1e6) : "unknown", verdict(p99, 1e6));
	}
	printf("| Lv%d%s | %u ms | %d (%d) | %ld | %.2f | %.1f | %.1f | %.1f | %.1f | %s | "
	       "%.2f | %.2f | %s |\n", lv,
	       lv == 2 && c->level_seen != 2 ? " (queue NOT at level 2)" : "", o->kernel_ms[k],
	       c->n, c->done_before, c->cut, dur / 1e6, group / 1e3, p50 / 1e3, p99 / 1e3,
	       mx / 1e3, dev, group > 0 ? d99 / group : 0, group > 0 ? p99 / group : 0, goal);
	if (tsv)
		fprintf(tsv, "Lv%d\t%u\t%d\t%d\t%d\t%d\t%d\t%ld\t%.3f\t%.1f\t%.1f\t%.1f\t"
			"%.1f\t%d\t%.1f\t%.1f\t%.1f\n", lv, o->kernel_ms[k], o->groups, o->local,
			o->depth, c->n, c->done_before, c->cut, dur / 1e6, group / 1e3, p50 / 1e3,
			p99 / 1e3, mx / 1e3, c->dn, d50 / 1e3, d99 / 1e3, dmx / 1e3);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .nk = 2, .rounds = 3, .groups = 512, .local = 1, .depth = 1,
			  .kernel_ms = { 5, 50 },
			  .samples = { 300, 90 }, .seed = 1, .shim = XS_TEST_SHIM_PATH };
	struct cell cells[2][MAX_KERNELS];
	struct kspec ks[MAX_KERNELS];
	struct cpu_gaps gaps[64];
	uint64_t nominal[MAX_KERNELS];
	unsigned iters[MAX_KERNELS], cu, v[MAX_KERNELS];
	uint64_t bracket;
	bool samples_set = false;
	FILE *tsv = NULL;
	const char *why;
	struct clw w;
	int rc = 1, n, ngaps = 0;

	if (argc > 1 && !strcmp(argv[1], "--child")) {
		int groups, local, depth, nk;
		long long offset;

		if (parse_child(argc, argv, &groups, &local, &depth, &nk, &offset, ks) < 0)
			usage();
		return child(groups, local, depth, nk, offset, ks);
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			o.rounds = 1;
			if (!samples_set) {
				o.samples[0] = 20;
				o.samples[1] = 6;
			}
		} else if (!strcmp(a, "--kernels-ms") && val) {
			if ((n = parse_list(val, o.kernel_ms)) < 1)
				usage();
			o.nk = n, i++;
		} else if (!strcmp(a, "--samples") && val) {
			if ((n = parse_list(val, v)) < 1)
				usage();
			for (int k = 0; k < MAX_KERNELS; k++)
				o.samples[k] = (int)v[k < n ? k : n - 1];
			samples_set = true, i++;
		} else if (!strcmp(a, "--rounds") && val) {
			o.rounds = atoi(val), i++;
		} else if (!strcmp(a, "--groups") && val) {
			o.groups = atoi(val), i++;
		} else if (!strcmp(a, "--local") && val) {
			o.local = atoi(val), i++;
		} else if (!strcmp(a, "--depth") && val) {
			o.depth = atoi(val), i++;
		} else if (!strcmp(a, "--seed") && val) {
			o.seed = (unsigned)strtoul(val, NULL, 10), i++;
		} else if (!strcmp(a, "--shim") && val) {
			o.shim = val, i++;
		} else if (!strcmp(a, "--buffers")) {
			o.buffers = true;
		} else if (!strcmp(a, "--out") && val) {
			o.out = val, i++;
		} else {
			usage();
		}
	}
	if (o.rounds < 1 || o.groups < 1 || o.local < 1 || o.depth < 1)
		usage();
	why = why_skip(&o);
	if (why[0]) {
		printf("bench_cl_preempt: skipped: %s\n", why);
		return 0;
	}
	if (o.out && mkdir(o.out, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "bench_cl_preempt: %s: %s\n", o.out, strerror(errno));
		return 1;
	}
	memset(cells, 0, sizeof(cells));
	for (int l = 0; l < 2; l++)
		for (int k = 0; k < o.nk; k++)
			if (!(cells[l][k].lat = calloc((size_t)o.samples[k], sizeof(uint64_t))) ||
			    !(cells[l][k].dlat = calloc((size_t)o.samples[k], sizeof(uint64_t))) ||
			    !(cells[l][k].at = calloc((size_t)o.samples[k], sizeof(unsigned))) ||
			    !(cells[l][k].started = calloc((size_t)o.samples[k], 1))) {
				perror("bench_cl_preempt");
				goto out;
			} else {
				cells[l][k].cap = o.samples[k];
			}

	bench_print_machine(stdout);
	probe_cpu_gaps(1000, gaps, &ngaps);
	print_cpu_gaps(gaps, ngaps);
	/* Calibrated natively, by this process, on the machine as it is. */
	clw_open(&w, 1, (size_t)o.groups * (size_t)o.local);
	profile_queue(&w);
	clw_set_local(&w, (size_t)o.local);
	cu = clw_compute_units(&w);
	o.dev_offset = dev_clock_offset(&w, &bracket);
	for (int k = 0; k < o.nk; k++) {
		iters[k] = clw_calibrate(&w, (uint64_t)o.kernel_ms[k] * MS);
		nominal[k] = kernel_median_ns(&w, 5);
	}
	clw_close(&w);
	printf("kernels: %d work-groups of %d work-item(s) (local size %d), %u compute units "
	       "(PoCL threads); calibrated natively:", o.groups, o.local, o.local, cu);
	for (int k = 0; k < o.nk; k++)
		printf(" %u ms = %u iterations (%.2f ms)", o.kernel_ms[k], iters[k],
		       (double)nominal[k] / 1e6);
	printf("\ndevice clock: host CLOCK_MONOTONIC_RAW %+.1f us (+-%.1f us)", o.dev_offset / 1e3,
	       (double)bracket / 2e3);
	printf("\nshim: %s (XSCHED_SCHEDULER=local); Lv1 = XSCHED_OPENCL_LV2=0, Lv2 = the "
	       "guardian%s; %d kernel(s) enqueued per sample; %d round(s), the same delays for "
	       "both levels in a round\n", o.shim,
	       o.buffers ? " with its control word in a buffer (XSCHED_OPENCL_LV2=buffer)" : "",
	       o.depth, o.rounds);
	fflush(stdout);

	for (int r = 0; r < o.rounds; r++) {
		for (int k = 0; k < o.nk; k++) {
			unsigned seed = o.seed * 7919u + (unsigned)(r * MAX_KERNELS + k);

			ks[k] = (struct kspec){ .iters = iters[k], .nominal_ns = nominal[k],
						.n = (o.samples[k] + o.rounds - 1) / o.rounds,
						.seed = seed };
			/* The last round takes what is left. */
			if (r == o.rounds - 1)
				ks[k].n = o.samples[k] - ks[k].n * (o.rounds - 1);
		}
		/* Levels in alternating order, so neither always runs first. */
		for (int j = 0; j < 2; j++) {
			int l = (r + j) % 2;

			if (run_child(&o, l == 1, ks, cells[l]) < 0)
				goto out;
		}
		/* More of the gaps, spread over the run like the samples. */
		probe_cpu_gaps(300, gaps, &ngaps);
		printf("  round %d/%d done\n", r + 1, o.rounds);
		fflush(stdout);
	}

	if (o.out && !(tsv = out_file(&o, "summary.tsv")))
		goto out;
	if (tsv)
		fprintf(tsv, "level\tkernel_ms\tgroups\tlocal\tdepth\tsamples\tdone_before\tcut\t"
			"duration_ms\tgroup_us\tp50_us\tp99_us\tmax_us\tdevice_samples\t"
			"device_p50_us\tdevice_p99_us\tdevice_max_us\n");
	bench_print_machine(stdout);
	printf("\n| level | kernel | samples (done before) | cut | duration ms | group us | "
	       "host P50 us | host P99 us | host max us | device P50 us | device P99 us | "
	       "device max us | device P99 / group | host P99 / group | goal (Lv2) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int k = 0; k < o.nk; k++)
		for (int l = 0; l < 2; l++)
			if (report(&o, k, l + 1, &cells[l][k], cu, tsv) < 0)
				goto out;
	printf("(samples: suspensions that found the kernel running; done before: the delay "
	       "reached past its end; cut: launches the guardian stopped and the shim "
	       "launched again; group: duration / %d groups x %u threads; host: until the "
	       "synchronous suspension returned; device: until the last command the device "
	       "ran for the queue ended, by its profiling clock)\n", o.groups, cu);
	if (ngaps) {
		printf("(over the whole run, between its rounds too) ");
		print_cpu_gaps(gaps, ngaps);
	}
	/* Per Lv2 kernel: its device side, and the floor the gaps set. */
	for (int k = 0; k < o.nk; k++) {
		const struct cell *c = &cells[1][k];
		double dur = c->dur_n ? c->dur_sum / c->dur_n : 0, group = dur / o.groups * cu;
		double f[3];

		if (group <= 0)
			continue;
		if (c->run_n)
			printf("(Lv2 %u ms, device side: the kernel had started at the request in "
			       "%d samples: P50 / P90 / P99 %.1f / %.1f / %.1f us = %.2f / %.2f / "
			       "%.2f groups; it had not yet in %d)\n", o.kernel_ms[k], c->run_n,
			       c->run_pct[0] / 1e3, c->run_pct[1] / 1e3, c->run_pct[2] / 1e3,
			       c->run_pct[0] / group, c->run_pct[1] / group,
			       c->run_pct[2] / group, c->wait_n);
		if (gap_floor(gaps, ngaps, cu, group, o.seed, f))
			printf("(Lv2 %u ms, the floor the CPU gaps above set: a guardian that "
			       "stopped each running group the moment it ended, with only those "
			       "gaps in its way, would take P50 / P90 / P99 %.1f / %.1f / %.1f us "
			       "= %.2f / %.2f / %.2f groups)\n", o.kernel_ms[k], f[0] / 1e3,
			       f[1] / 1e3, f[2] / 1e3, f[0] / group, f[1] / group, f[2] / group);
	}
	for (int k = 0; k < o.nk; k++)
		for (int l = 0; l < 2; l++)
			if (cells[l][k].dn < cells[l][k].n || cells[l][k].dearly)
				printf("(Lv%d %u ms: device-side latency known for %d of %d samples; "
				       "%d ended before the request, counted as 0)\n", l + 1,
				       o.kernel_ms[k], cells[l][k].dn, cells[l][k].n,
				       cells[l][k].dearly);
	rc = 0;
out:
	if (tsv && fclose(tsv)) {
		fprintf(stderr, "bench_cl_preempt: summary.tsv: write error\n");
		rc = 1;
	}
	for (int i = 0; i < ngaps; i++) {
		free(gaps[i].at);
		free(gaps[i].len);
	}
	for (int l = 0; l < 2; l++)
		for (int k = 0; k < MAX_KERNELS; k++) {
			free(cells[l][k].lat);
			free(cells[l][k].dlat);
			free(cells[l][k].at);
			free(cells[l][k].started);
		}
	return rc;
}
