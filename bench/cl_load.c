/*
 * cl_load: the OpenCL workload process of the evaluation scenarios
 * (bench/scenarios/), the counterpart of cu_load on a real OpenCL device
 * (PoCL, a CPU). It is a plain OpenCL program linked against the ICD
 * loader and knows nothing of xsched: the scenarios run it natively and,
 * unchanged, under the OpenCL shim (LD_PRELOAD), which takes its hints from
 * the XSCHED_* environment. Options, modes and the result line are
 * cu_load's, so a scenario drives both the same way; the workload itself
 * (loop kernel, periodic loop, flood) is cl_work.c, shared with
 * bench_cl_priority.
 *
 * Every command is a loop kernel on --width work-items in work-groups of
 * --local items (default 1: one group per item; many groups let the
 * OpenCL shim's guardian cut a kernel at Lv2) whose iteration count makes
 * one enqueue+clFinish round trip
 * last about --cmd-us on this device, calibrated at start-up on the machine
 * as it is (so calibrate once on an idle machine with --calibrate and pass
 * the result with --iters to every process of a scenario).
 *
 * Modes:
 *  - periodic (default): --warmup W then --tasks N tasks of --cmds kernels,
 *    each task = enqueues + clFinish; task i is released --period-us after
 *    task i-1 with +-(--jitter-pct)% uniform jitter from --seed; a task
 *    released while the previous one runs starts late and counts from its
 *    release. --period-us 0 runs the tasks back to back.
 *  - --flood: groups of --cmds kernels, each closed by an event, --depth
 *    groups in flight (default 2), until SIGTERM/SIGINT or --duration-s.
 *  - --calibrate: prints "iters=N cmd_us=T" and exits.
 *
 * Output (stdout, one line, bench_result_print()):
 *   tasks=N p50_us=X p90_us=X p99_us=X max_us=X commands=N device_ms=X
 *   missed=N elapsed_ms=X t0_ns=T t1_ns=T
 * with cu_load's meanings: device_ms = commands x --cmd-us (nominal), t0/t1
 * the measured window in CLOCK_REALTIME ns. --lat-file F: the measured
 * latencies in us, one per line, in release order; --trace-file F (flood):
 * "end_ns commands" per completed group; --start-at-ms T: start at
 * CLOCK_REALTIME T ms.
 */
#include "cl_work.h"
#include "bench_util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/prctl.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

struct opts {
	struct bench_load_opts l;       /* first: shared with cu_load */
	int width, local, depth;
	unsigned iters;
	bool calibrate;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: cl_load [--cmd-us T] [--iters N] [--width N] [--local N] [--cmds N]\n"
		"               [--tasks N] [--warmup W] [--period-us P] [--jitter-pct J]\n"
		"               [--seed S] [--deadline-us D] [--flood] [--depth N]\n"
		"               [--duration-s S] [--start-at-ms T] [--lat-file F]\n"
		"               [--trace-file F] [--calibrate]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		BENCH_LOAD_LONGOPTS,
		{ "iters", required_argument, NULL, 'i' },
		{ "width", required_argument, NULL, 'W' },
		{ "local", required_argument, NULL, 'l' },
		{ "depth", required_argument, NULL, 'q' },
		{ "calibrate", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .width = 1, .local = 1, .depth = 2 };
	bench_load_defaults(&o->l);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (bench_load_option(&o->l, c, optarg))
			continue;
		switch (c) {
		case 'i': o->iters = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'W': o->width = atoi(optarg); break;
		case 'l': o->local = atoi(optarg); break;
		case 'q': o->depth = atoi(optarg); break;
		case 'c': o->calibrate = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc || !bench_load_valid(&o->l) || o->width < 1 || o->local < 1 ||
	    o->width % o->local || o->depth < 1) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Group completions of a flood, for --trace-file; and when to stop. */
struct flood_state {
	uint64_t end_ns;
	FILE *trace;
	int cmds;
};

static bool flood_more(void *arg)
{
	const struct flood_state *f = arg;

	return !stop && bench_wall_ns() < f->end_ns;
}

static void flood_done(void *arg, uint64_t t_ns, uint64_t count)
{
	const struct flood_state *f = arg;

	(void)count;
	if (f->trace)
		fprintf(f->trace, "%llu %d\n", (unsigned long long)t_ns, f->cmds);
}

int main(int argc, char **argv)
{
	struct bench_result r = { 0 };
	uint64_t *lat = NULL;
	struct opts o;
	struct clw w;
	int rc = 0;

	if (parse(argc, argv, &o) < 0)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	prctl(PR_SET_TIMERSLACK, 1);
	clw_open(&w, o.iters ? o.iters : 1, (size_t)o.width);
	clw_set_local(&w, (size_t)o.local);
	if (!o.iters || o.calibrate)
		clw_calibrate(&w, o.l.cmd_ns);
	if (o.calibrate) {
		printf("iters=%u cmd_us=%.1f\n", w.iters, (double)o.l.cmd_ns / 1e3);
		clw_close(&w);
		return 0;
	}
	if (!o.l.flood) {
		lat = calloc((size_t)o.l.tasks, sizeof(*lat));
		r.lat = calloc((size_t)o.l.tasks, sizeof(*lat));
		if (!lat || !r.lat) {
			fprintf(stderr, "cl_load: out of memory\n");
			return 1;
		}
	}
	if (o.l.start_at_ms)
		bench_sleep_until_wall(o.l.start_at_ms * 1000000ull);
	if (o.l.flood) {
		struct flood_state f = { .cmds = o.l.cmds, .end_ns = UINT64_MAX };

		if (o.l.trace_file && !(f.trace = fopen(o.l.trace_file, "w"))) {
			fprintf(stderr, "cl_load: %s: %s\n", o.l.trace_file, strerror(errno));
			return 1;
		}
		r.t0_ns = bench_wall_ns();
		if (o.l.duration_ns)
			f.end_ns = r.t0_ns + o.l.duration_ns;
		r.commands = clw_flood(&w, o.l.cmds, o.depth, flood_more, flood_done, &f);
		r.t1_ns = bench_wall_ns();
		if (f.trace && fclose(f.trace)) {
			fprintf(stderr, "cl_load: %s: %s\n", o.l.trace_file, strerror(errno));
			rc = 1;
		}
	} else {
		struct clw_periodic p = { .tasks = o.l.tasks, .cmds = o.l.cmds, .warmup = o.l.warmup,
					  .period_ns = o.l.period_ns, .jitter = o.l.jitter,
					  .seed = o.l.seed, .from_release = true };

		r.tasks = clw_run_periodic(&w, &p, lat, &r.t0_ns, &r.t1_ns, &stop);
		memcpy(r.lat, lat, (size_t)r.tasks * sizeof(*lat));
		r.commands = (uint64_t)r.tasks * (uint64_t)o.l.cmds;
		for (int i = 0; i < r.tasks; i++)
			if (o.l.deadline_ns && lat[i] > o.l.deadline_ns)
				r.missed++;
	}
	r.device_ns = r.commands * o.l.cmd_ns;
	bench_result_print(stdout, &r);
	if (o.l.lat_file && bench_write_lat(o.l.lat_file, lat, r.tasks) < 0) {
		fprintf(stderr, "cl_load: %s: %s\n", o.l.lat_file, strerror(errno));
		rc = 1;
	}
	clw_close(&w);
	free(lat);
	free(r.lat);
	return rc;
}
