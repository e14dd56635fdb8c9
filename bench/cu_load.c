/*
 * cu_load: the workload process of the evaluation scenarios
 * (bench/scenarios/), written as a plain CUDA driver-API application. It
 * knows nothing of xsched: it includes only our declarations of the driver
 * API (through bench_cuda.h) and runs natively on the simulated driver
 * (libcuda.so.1 found through LD_LIBRARY_PATH) or, unchanged, under the
 * CUDA shim (LD_PRELOAD), which takes its hints from the XSCHED_*
 * environment. That is the point of the scenarios: the same binary,
 * native and scheduled.
 *
 * Every command is the simulated driver's sf_spin kernel of module "xs"
 * (a busy-spin of --cmd-us on the simulated XPU) on one non-blocking stream.
 *
 * Modes:
 *  - periodic (default): --warmup W then --tasks N tasks of --cmds kernels,
 *    each task = launches + cuStreamSynchronize; task i is released
 *    --period-us after the release of task i-1 with +-(--jitter-pct)%
 *    uniform jitter from a fixed --seed (so every configuration sees the
 *    same release pattern); when task i-1 is still running at that time,
 *    task i is released at its completion instead (no burst to catch up).
 *    The first task is released at once. --period-us 0 runs the tasks
 *    back to back (standalone task time).
 *  - --flood: keeps the stream full: groups of --cmds kernels, each closed
 *    by an event, two groups in flight (the older one's event is waited on
 *    before the next group is launched), until SIGTERM/SIGINT or
 *    --duration-s.
 *  - --graph (with either): a group (a task, or a flood's group) is one
 *    cuGraphLaunch of a CUDA graph of the --cmds kernels, captured once
 *    from the stream: the shape of CUDA-graph inference steps.
 *  - --gap-us LO,HI (periodic): inside a task, after each kernel but the
 *    last, the host waits for it (cuStreamSynchronize) and then works for
 *    a time drawn uniformly from LO..HI us (a busy loop, from a stream of
 *    --seed of its own) before launching the next: the device idles
 *    between the kernels of a task, as under an inference framework that
 *    prepares each kernel on the host. The gaps are part of the latency.
 *
 * Output (stdout, one line; all times from release to completion):
 *   tasks=N p50_us=X p90_us=X p99_us=X max_us=X commands=N device_ms=X
 *   missed=N elapsed_ms=X t0_ns=T t1_ns=T
 * commands = kernels completed in the measured part (after warm-up),
 * device_ms = commands x --cmd-us (nominal device time), missed = tasks
 * over --deadline-us (0 without one), elapsed_ms = t1 - t0, the measured
 * window, in CLOCK_REALTIME ns (comparable between processes). A flood
 * reports tasks=0, its groups being no tasks.
 *
 * --lat-file F: every measured task latency in us, one per line, in
 * release order. --trace-file F (flood): one line per completed group,
 * "end_ns commands", CLOCK_REALTIME, so that a driver script can count the
 * commands completed inside another process's window. --start-at-ms T:
 * start at CLOCK_REALTIME T ms (several processes starting together).
 */
#define BENCH_PROG "cu_load"
#include "bench_cuda.h"
#include "bench_util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Group completions of a flood, for --trace-file. */
struct trace {
	uint64_t *end_ns;
	size_t n, cap;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: cu_load [--cmd-us T] [--cmds N] [--tasks N] [--warmup W]\n"
		"               [--period-us P] [--jitter-pct J] [--seed S] [--deadline-us D]\n"
		"               [--flood] [--duration-s S] [--start-at-ms T]\n"
		"               [--lat-file F] [--trace-file F] [--graph] [--gap-us LO,HI]\n");
}

static bool use_graph;
static uint64_t gap_lo_ns, gap_hi_ns;   /* --gap-us; hi 0: no gaps */

/* Parses LO,HI microseconds (LO <= HI, HI > 0). */
static int parse_gap(const char *arg)
{
	char *end;
	double lo = strtod(arg, &end), hi;

	if (*end != ',')
		return -1;
	hi = strtod(end + 1, &end);
	if (*end || lo < 0 || hi < lo || hi <= 0 || hi > 1e6)
		return -1;
	gap_lo_ns = (uint64_t)(lo * 1e3);
	gap_hi_ns = (uint64_t)(hi * 1e3);
	return 0;
}

static int parse(int argc, char **argv, struct bench_load_opts *o)
{
	static const struct option lo[] = {
		BENCH_LOAD_LONGOPTS,
		{ "graph", no_argument, NULL, 'g' },
		{ "gap-us", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	bench_load_defaults(o);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (bench_load_option(o, c, optarg))
			continue;
		if (c == 'g') {
			use_graph = true;
			continue;
		}
		if (c == 'G' && parse_gap(optarg) == 0)
			continue;
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		usage(stderr);
		return -1;
	}
	if (optind < argc || !bench_load_valid(o) || (gap_hi_ns && (o->flood || use_graph))) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* CUDA context, the spin kernel and one non-blocking stream. */
struct dev {
	CUfunction spin;
	CUstream s;
	uint64_t cmd_ns;
	void *args[1];
	CUgraphExec graph;      /* --graph: the group as one graph, else NULL */
};

static void launch_kernels(struct dev *d, int n)
{
	for (int i = 0; i < n; i++)
		CK(cuLaunchKernel(d->spin, 1, 1, 1, 1, 1, 1, 0, d->s, d->args, NULL));
}

static void dev_open(struct dev *d, uint64_t cmd_ns, int graph_cmds)
{
	CUmodule m;

	bench_cu_init();
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&d->spin, m, "sf_spin"));
	CK(cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING));
	d->cmd_ns = cmd_ns;
	d->args[0] = &d->cmd_ns;
	d->graph = NULL;
	if (graph_cmds > 0) {
		CUgraph g;

		CK(cuStreamBeginCapture_v2(d->s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		launch_kernels(d, graph_cmds);
		CK(cuStreamEndCapture(d->s, &g));
		CK(cuGraphInstantiateWithFlags(&d->graph, g, 0));
		CK(cuGraphDestroy(g));
	}
}

/* A group of @n kernels: the graph (of that many) or the kernels themselves. */
static void launch(struct dev *d, int n)
{
	if (d->graph)
		CK(cuGraphLaunch(d->graph, d->s));
	else
		launch_kernels(d, n);
}

static void trace_add(struct trace *t, uint64_t ns)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4096;
		uint64_t *a = realloc(t->end_ns, cap * sizeof(*a));

		if (!a)
			return; /* the trace stops growing; the counts stay right */
		t->end_ns = a;
		t->cap = cap;
	}
	t->end_ns[t->n++] = ns;
}

/*
 * The flood: groups of o->cmds kernels, two in flight. Returns the
 * commands completed; *t1 is the last completion (t0 set by the caller).
 */
static uint64_t flood(struct dev *d, const struct bench_load_opts *o, uint64_t t0, uint64_t *t1,
		      struct trace *tr)
{
	uint64_t end = o->duration_ns ? t0 + o->duration_ns : UINT64_MAX, done = 0;
	CUevent ev[2];
	int inflight = 0, head = 0;

	CK(cuEventCreate(&ev[0], CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&ev[1], CU_EVENT_DISABLE_TIMING));
	*t1 = t0;
	for (;;) {
		bool more = !stop && bench_wall_ns() < end;

		if (more && inflight < 2) {
			launch(d, o->cmds);
			CK(cuEventRecord(ev[(head + inflight) % 2], d->s));
			inflight++;
			continue;
		}
		if (!inflight)
			break;
		CK(cuEventSynchronize(ev[head]));
		head = (head + 1) % 2;
		inflight--;
		done += (uint64_t)o->cmds;
		*t1 = bench_wall_ns();
		if (o->trace_file)
			trace_add(tr, *t1);
	}
	cuEventDestroy_v2(ev[0]);
	cuEventDestroy_v2(ev[1]);
	return done;
}

/* Busy until CLOCK_REALTIME @until (sleeping overshoots by tens of us). */
static void host_work_until(uint64_t until)
{
	while (bench_wall_ns() < until)
		;
}

/* One task of --gap-us: kernel, wait, host work, kernel, ... */
static void launch_with_gaps(struct dev *d, int n, unsigned short *xsubi)
{
	for (int k = 0; k < n; k++) {
		launch_kernels(d, 1);
		if (k == n - 1)
			break;
		CK(cuStreamSynchronize(d->s));
		host_work_until(bench_wall_ns() + gap_lo_ns +
				(uint64_t)((double)(gap_hi_ns - gap_lo_ns) * erand48(xsubi)));
	}
}

/*
 * The periodic tasks: fills lat[0..tasks) (ns); returns the tasks measured
 * and sets *t0/*t1 to the measured window (the first measured release, the
 * last completion).
 */
static int periodic(struct dev *d, const struct bench_load_opts *o, uint64_t *lat, uint64_t *t0,
		    uint64_t *t1)
{
	unsigned short xsubi[3] = { 0x330e, (unsigned short)o->seed,
				    (unsigned short)(o->seed >> 16) };
	unsigned short gsubi[3] = { 0x1234, (unsigned short)o->seed,
				    (unsigned short)(o->seed >> 16) };
	uint64_t release = bench_wall_ns();
	int i, n = 0;

	*t0 = *t1 = release;
	for (i = 0; i < o->warmup + o->tasks && !stop; i++) {
		uint64_t now;

		if (o->period_ns)
			bench_sleep_until_wall(release);
		else
			release = bench_wall_ns();
		if (i == o->warmup)
			*t0 = release;
		if (gap_hi_ns)
			launch_with_gaps(d, o->cmds, gsubi);
		else
			launch(d, o->cmds);
		CK(cuStreamSynchronize(d->s));
		now = bench_wall_ns();
		if (i >= o->warmup) {
			lat[n++] = now - release;
			*t1 = now;
		}
		if (o->period_ns) {
			double f = 1.0 + o->jitter * (2.0 * erand48(xsubi) - 1.0);

			/* Release to release; a task still running at its
			 * successor's release pushes it (no burst to catch up). */
			release += (uint64_t)((double)o->period_ns * f);
			if (now > release)
				release = now;
		}
	}
	return n;
}

static int write_trace(const char *path, const struct trace *t, int cmds)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%llu %d\n", (unsigned long long)t->end_ns[i], cmds);
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct trace tr = { 0 };
	struct bench_result r = { 0 };
	uint64_t *lat = NULL, *sorted = NULL;
	struct bench_load_opts o;
	struct dev d;
	int n = 0;

	if (parse(argc, argv, &o) < 0)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	dev_open(&d, o.cmd_ns, use_graph ? o.cmds : 0);
	if (o.start_at_ms)
		bench_sleep_until_wall(o.start_at_ms * 1000000ull);
	if (o.flood) {
		r.t0_ns = bench_wall_ns();
		r.commands = flood(&d, &o, r.t0_ns, &r.t1_ns, &tr);
	} else {
		lat = calloc((size_t)o.tasks, sizeof(*lat));
		sorted = calloc((size_t)o.tasks, sizeof(*sorted));
		if (!lat || !sorted) {
			fprintf(stderr, "cu_load: out of memory\n");
			return 1;
		}
		n = periodic(&d, &o, lat, &r.t0_ns, &r.t1_ns);
		memcpy(sorted, lat, (size_t)n * sizeof(*lat));
		r.tasks = n;
		r.lat = sorted;
		r.commands = (uint64_t)n * (uint64_t)o.cmds;
		for (int i = 0; i < n; i++)
			if (o.deadline_ns && lat[i] > o.deadline_ns)
				r.missed++;
	}
	r.device_ns = r.commands * o.cmd_ns;
	CK(cuStreamSynchronize(d.s));
	bench_result_print(stdout, &r);
	if (o.lat_file && bench_write_lat(o.lat_file, lat, n) < 0)
		fprintf(stderr, "cu_load: %s: %s\n", o.lat_file, strerror(errno));
	if (o.trace_file && write_trace(o.trace_file, &tr, o.cmds) < 0)
		fprintf(stderr, "cu_load: %s: %s\n", o.trace_file, strerror(errno));
	free(lat);
	free(sorted);
	free(tr.end_ns);
	return 0;
}
