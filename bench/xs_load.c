/*
 * xs_load: a workload process for integration tests and benchmarks. It
 * drives one XQueue on the simulated XPU through the public API, so it is
 * scheduled by the agent like any application (hints from the usual
 * XSCHED_* environment or the options below), and prints one result line.
 *
 * Modes: periodic tasks of --cmds commands of --cmd-us each, released every
 * --period-us with +-50% uniform jitter (latency measured from release to
 * completion), or --flood: keep the queue busy for --duration-s.
 *
 * --warmup W runs W tasks first that no figure counts; --lat-file F writes
 * every counted task's latency (us, one per line).
 *
 * Output (stdout, one line):
 *   tasks=N p50_us=X p90_us=X p99_us=X max_us=X commands=N device_ms=X
 *   missed=N elapsed_ms=X
 * where missed counts tasks that did not complete within --deadline-us.
 */
#include "xsched/sim.h"
#include "agent/agent.h"
#include "base/clock.h"
#include "bench_util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>

/* Atomic, not sig_atomic_t: the handler may run on the agent's thread. */
static _Atomic bool stop;

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

struct opts {
	const char *device;
	int level, cmds, tasks, priority_set;
	int64_t priority, share, deadline_us;
	uint64_t cmd_ns, period_ns, duration_ns, start_at_ns, wait_conn_ns;
	bool flood;
	int warmup;             /* first tasks left out of the figures */
	const char *lat_file;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xs_load [--device NAME] [--level L] [--cmd-us T] [--cmds N]\n"
		"               [--tasks N | --flood] [--period-us P] [--duration-s S]\n"
		"               [--priority N] [--share N] [--deadline-us D]\n"
		"               [--wait-connected-ms MS] [--start-at-ns T]\n"
		"               [--warmup W] [--lat-file F]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "level", required_argument, NULL, 'l' },
		{ "cmd-us", required_argument, NULL, 't' },
		{ "cmds", required_argument, NULL, 'n' },
		{ "tasks", required_argument, NULL, 'k' },
		{ "flood", no_argument, NULL, 'f' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "duration-s", required_argument, NULL, 's' },
		{ "priority", required_argument, NULL, 'P' },
		{ "share", required_argument, NULL, 'S' },
		{ "deadline-us", required_argument, NULL, 'D' },
		{ "wait-connected-ms", required_argument, NULL, 'w' },
		{ "start-at-ns", required_argument, NULL, 'a' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "lat-file", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .cmds = 1, .tasks = 100, .cmd_ns = 500000 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->device = optarg; break;
		case 'l': o->level = atoi(optarg); break;
		case 't': o->cmd_ns = (uint64_t)atoll(optarg) * 1000; break;
		case 'n': o->cmds = atoi(optarg); break;
		case 'k': o->tasks = atoi(optarg); break;
		case 'f': o->flood = true; break;
		case 'p': o->period_ns = (uint64_t)atoll(optarg) * 1000; break;
		case 's': o->duration_ns = (uint64_t)(atof(optarg) * 1e9); break;
		case 'P': o->priority = atoll(optarg); o->priority_set = 1; break;
		case 'S': o->share = atoll(optarg); break;
		case 'D': o->deadline_us = atoll(optarg); break;
		case 'w': o->wait_conn_ns = (uint64_t)atoll(optarg) * 1000000; break;
		case 'a': o->start_at_ns = (uint64_t)atoll(optarg); break;
		case 'W': o->warmup = atoi(optarg); break;
		case 'L': o->lat_file = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (o->cmds < 1 || o->tasks < 1 || o->cmd_ns == 0 || o->warmup < 0 ||
	    (o->flood && o->duration_ns == 0)) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Keeps up to 2 x threshold commands queued until stopped or the deadline. */
static uint64_t flood(xs_queue *q, const struct opts *o, uint64_t end)
{
	uint64_t n = 0;

	while (!atomic_load(&stop) && clock_now_ns() < end) {
		xs_queue_stats st;
		xs_cmd *c;

		xs_queue_stats_get(q, &st);
		if (st.pending + st.in_flight >= 32) {
			clock_sleep_until(clock_now_ns() + 200 * NSEC_PER_USEC);
			continue;
		}
		if (xs_sim_kernel(o->cmd_ns, &c) == 0 && xs_submit(q, c, NULL) == 0)
			n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;
	uint64_t *lat = NULL, t0, next, end, missed = 0;
	struct opts o;
	xs_queue_stats st;
	xs_hwq *hwq;
	xs_queue *q;
	int i, done = 0, rc;

	if (parse(argc, argv, &o) < 0)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	rc = xs_sim_hwq_create(o.device, &hwq);
	if (rc < 0) {
		fprintf(stderr, "xs_load: hardware queue: %s\n", xs_strerror(rc));
		return 1;
	}
	cfg.level = o.level;
	rc = xs_queue_create(hwq, &cfg, &q);
	if (rc < 0) {
		fprintf(stderr, "xs_load: queue: %s\n", xs_strerror(rc));
		return 1;
	}
	if (o.priority_set)
		xs_queue_set_hint(q, XS_HINT_PRIORITY, o.priority);
	if (o.share)
		xs_queue_set_hint(q, XS_HINT_SHARE, o.share);
	if (o.deadline_us)
		xs_queue_set_hint(q, XS_HINT_DEADLINE_US, o.deadline_us);
	for (end = clock_now_ns() + o.wait_conn_ns; o.wait_conn_ns && !agent_connected();) {
		if (clock_now_ns() > end) {
			fprintf(stderr, "xs_load: no connection to the daemon\n");
			return 3;
		}
		clock_sleep_until(clock_now_ns() + NSEC_PER_MSEC);
	}
	if (o.start_at_ns > clock_now_ns())
		clock_sleep_until(o.start_at_ns);
	srand48(getpid());
	t0 = next = clock_now_ns();
	end = o.duration_ns ? t0 + o.duration_ns : UINT64_MAX;
	if (o.flood) {
		flood(q, &o, end);
	} else {
		lat = calloc((size_t)(o.warmup + o.tasks), sizeof(*lat));
		if (!lat)
			return 1;
		for (i = 0; i < o.warmup + o.tasks && !atomic_load(&stop) && clock_now_ns() < end;
		     i++) {
			uint64_t release = next, seq = 0;
			int k;

			if (o.period_ns) {
				next += (uint64_t)((double)o.period_ns * (0.5 + drand48()));
				release = next;
				clock_sleep_until(release);
			} else {
				release = clock_now_ns();
			}
			for (k = 0; k < o.cmds; k++) {
				xs_cmd *c;

				if (xs_sim_kernel(o.cmd_ns, &c) == 0)
					xs_submit(q, c, &seq);
			}
			xs_wait(q, seq);
			if (i >= o.warmup) {
				lat[done] = clock_now_ns() - release;
				if (o.deadline_us && lat[done] > (uint64_t)o.deadline_us * 1000)
					missed++;
				done++;
			}
			if (clock_now_ns() > next)
				next = clock_now_ns();
		}
	}
	xs_wait_all(q);
	xs_queue_stats_get(q, &st);
	printf("tasks=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f commands=%llu "
	       "device_ms=%.3f missed=%llu elapsed_ms=%.3f\n",
	       done, done ? bench_pct(lat, (size_t)done, 50) / 1e3 : 0.0,
	       done ? bench_pct(lat, (size_t)done, 90) / 1e3 : 0.0,
	       done ? bench_pct(lat, (size_t)done, 99) / 1e3 : 0.0,
	       done ? bench_pct(lat, (size_t)done, 100) / 1e3 : 0.0,
	       (unsigned long long)st.completed, (double)st.exec_ns / 1e6,
	       (unsigned long long)missed, (double)(clock_now_ns() - t0) / 1e6);
	if (o.lat_file && bench_write_lat(o.lat_file, lat, done) < 0)
		fprintf(stderr, "xs_load: %s: %s\n", o.lat_file, strerror(errno));
	free(lat);
	xs_queue_destroy(q, XS_DESTROY_DISCARD);
	xs_hwq_destroy(hwq);
	return 0;
}
