/*
 * Preemption latency and Lv1 runtime overhead of the XQueue on the
 * simulated XPU.
 *
 * Latency: one XQueue is kept saturated with commands of T; at a random
 * moment the benchmark suspends it and times how long until the device has
 * stopped executing its work, watching the device itself (Lv1: every
 * launched command done; Lv2/Lv3: no command of the queue running). This
 * is the preemption latency a higher-priority queue would see.
 *
 * Overhead: the same N commands through a Lv1 XQueue (default window) and
 * launched directly on the hardware queue ("native"), alternating runs,
 * reporting the median time ratio.
 *
 * Usage: bench_preempt [--samples N] [--reps N] [--quick]
 */
#include "xsched/sim.h"
#include "base/clock.h"
#include "sim/sim.h"
#include "xal/xal_sim.h"
#include "bench_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define US 1000ull
#define MS (1000 * US)

struct feeder {
	xs_queue *q;
	uint64_t t_ns;
	_Atomic bool stop;
	pthread_t thread;
};

/* Keeps the queue's buffer non-empty so the window is always full. */
static void *feeder_main(void *arg)
{
	struct feeder *f = arg;

	while (!atomic_load(&f->stop)) {
		xs_queue_stats st;
		xs_cmd *c;

		xs_queue_stats_get(f->q, &st);
		if (st.pending >= 256) {
			clock_sleep_until(clock_now_ns() + 5 * NSEC_PER_MSEC);
			continue;
		}
		if (xs_sim_kernel(f->t_ns, &c) == 0)
			xs_submit(f->q, c, NULL);
	}
	return NULL;
}

/*
 * Blocks until the device stopped executing the queue's work: at Lv1 every
 * launched command done, at Lv2/Lv3 no command running. Sleeping (after a
 * short spin) keeps this thread from pushing the device's spinning thread
 * off a CPU on small machines; the wakeup it adds makes the figure an upper
 * bound.
 */
static void device_wait_quiet(struct sim_hwq *hq, int level, uint64_t t_ns)
{
	uint64_t spin_ns = level == 3 ? 500 * US : t_ns < 150 * US ? 2 * t_ns : 0;
	uint64_t spin_end = clock_now_ns() + spin_ns;
	struct sim_hwq_info info;

	/* Where quiet comes fast (short commands, Lv3), poll, so the figure is
	 * not the wakeup latency of this thread. */
	while (clock_now_ns() < spin_end) {
		sim_hwq_info_get(hq, &info);
		if (!info.running && (level > 1 || info.done == info.submitted))
			return;
		cpu_relax();
	}
	if (level == 1)
		sim_hwq_wait_all(hq, 0);
	sim_hwq_wait_quiet(hq);
}

struct lat_result {
	uint64_t p50, p99, max, xq_p50, xq_p99, inflight_max;
};

static int measure_latency(const char *dev, int level, uint64_t t_ns, int threshold,
			   int64_t budget, int samples, struct lat_result *r)
{
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;
	struct feeder f = { .t_ns = t_ns };
	uint64_t *lat = calloc((size_t)samples, sizeof(*lat));
	struct sim_hwq *hq;
	xs_hwq *hwq;
	xs_queue_stats st;
	int i, rc;

	if (!lat)
		return -1;
	rc = xs_sim_hwq_create(dev, &hwq);
	if (rc < 0) {
		fprintf(stderr, "sim hwq: %s\n", xs_strerror(rc));
		free(lat);
		return rc;
	}
	hq = xal_sim_hwq_sim((struct xal_hwq *)hwq);
	cfg.level = level;
	cfg.threshold = threshold;
	/* As in the paper's setting: a sync point every half window. */
	cfg.batch = threshold ? (threshold + 1) / 2 : 0;
	cfg.budget_ns = budget;
	rc = xs_queue_create(hwq, &cfg, &f.q);
	if (rc < 0) {
		fprintf(stderr, "queue: %s\n", xs_strerror(rc));
		xs_hwq_destroy(hwq);
		free(lat);
		return rc;
	}
	pthread_create(&f.thread, NULL, feeder_main, &f);
	memset(r, 0, sizeof(*r));
	/* Warm-up: learn durations. */
	clock_sleep_until(clock_now_ns() + 20 * t_ns + 5 * MS);
	for (i = 0; i < samples; i++) {
		uint64_t t0, wait = 3 * t_ns + (uint64_t)(drand48() * 3.0 * (double)t_ns) + 2 * MS;
		struct sim_hwq_info info;

		clock_sleep_until(clock_now_ns() + wait);
		sim_hwq_info_get(hq, &info);
		if (info.submitted - info.done > r->inflight_max)
			r->inflight_max = info.submitted - info.done;
		t0 = clock_now_ns();
		xs_suspend(f.q, 0);
		device_wait_quiet(hq, level, t_ns);
		lat[i] = clock_now_ns() - t0;
		xs_resume(f.q);
	}
	atomic_store(&f.stop, true);
	pthread_join(f.thread, NULL);
	xs_queue_stats_get(f.q, &st);
	r->xq_p50 = st.preempt_p50_ns;
	r->xq_p99 = st.preempt_p99_ns;
	xs_queue_destroy(f.q, XS_DESTROY_DISCARD);
	xs_hwq_destroy(hwq);
	r->max = bench_pct(lat, (size_t)samples, 100);
	r->p50 = bench_pct(lat, (size_t)samples, 50);
	r->p99 = bench_pct(lat, (size_t)samples, 99);
	free(lat);
	return 0;
}

static uint64_t run_native(const char *dev, uint64_t t_ns, int n)
{
	struct sim_cmd k = { .kind = SIM_CMD_KERNEL, .duration_ns = t_ns };
	struct sim_dev *d;
	struct sim_hwq *hq;
	uint64_t t0, seq = 0, el;
	int i;

	if (sim_dev_open(dev, NULL, &d) || sim_hwq_create(d, &hq))
		return 0;
	t0 = clock_now_ns();
	for (i = 0; i < n; i++)
		sim_hwq_launch(hq, &k, &seq);
	sim_hwq_wait(hq, seq, 0);
	el = clock_now_ns() - t0;
	sim_hwq_destroy(hq);
	sim_dev_close(d);
	return el;
}

/* Lv1, as the table says: the level whose window (and budget) costs most. */
static uint64_t run_xsched(const char *dev, uint64_t t_ns, int n)
{
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;
	xs_hwq *hwq;
	xs_queue *q;
	uint64_t t0, el;
	int i;

	cfg.level = XS_LEVEL_1;
	if (xs_sim_hwq_create(dev, &hwq))
		return 0;
	if (xs_queue_create(hwq, &cfg, &q)) {
		xs_hwq_destroy(hwq);
		return 0;
	}
	t0 = clock_now_ns();
	for (i = 0; i < n; i++) {
		xs_cmd *c;

		if (xs_sim_kernel(t_ns, &c) == 0)
			xs_submit(q, c, NULL);
	}
	xs_wait_all(q);
	el = clock_now_ns() - t0;
	xs_queue_destroy(q, 0);
	xs_hwq_destroy(hwq);
	return el;
}

static const char *fmt_us(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f", (double)ns / 1000.0);
	return buf;
}

int main(int argc, char **argv)
{
	static const uint64_t lat_t[] = { 50 * US, 500 * US, 2 * MS };
	static const uint64_t ovh_t[] = { 10 * US, 100 * US, 1 * MS };
	int samples = 300, reps = 9, i, j;
	char dev[64], a[32], b[32], c[32], d[32], e[32];
	struct sim_dev *keep;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick")) {
			samples = 20;
			reps = 1;
		} else {
			fprintf(stderr, "usage: %s [--samples N] [--reps N] [--quick]\n", argv[0]);
			return 2;
		}
	}
	if (samples < 1 || reps < 1) {
		fprintf(stderr, "samples and reps must be positive\n");
		return 2;
	}
	if (bench_private_device("xsbench", dev, sizeof(dev), &keep))
		return 1;
	srand48(42);
	bench_print_machine(stdout);
	printf("\nPreemption latency on the sim XPU, suspend to device quiet, %d samples each (us)\n",
	       samples);
	printf("| level | window | T | P50 | P99 | max | XQueue P99 | max in flight |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < 3; i++) {
		struct {
			int level, threshold;
			int64_t budget;
			const char *name;
		} cfgs[] = {
			{ 1, 8, XS_BUDGET_NONE, "threshold 8" },
			{ 1, 0, 0, "default (16, 1 ms budget)" },
			{ 2, 0, 0, "default (16, no budget)" },
			{ 3, 0, 0, "default (16, no budget)" },
		};

		for (j = 0; j < 4; j++) {
			struct lat_result r;

			if (measure_latency(dev, cfgs[j].level, lat_t[i], cfgs[j].threshold,
					    cfgs[j].budget, samples, &r))
				return 1;
			printf("| Lv%d | %s | %s | %s | %s | %s | %s | %llu |\n",
			       cfgs[j].level, cfgs[j].name, fmt_us(lat_t[i], a, sizeof(a)),
			       fmt_us(r.p50, b, sizeof(b)), fmt_us(r.p99, c, sizeof(c)),
			       fmt_us(r.max, d, sizeof(d)),
			       fmt_us(r.xq_p99, e, sizeof(e)),
			       (unsigned long long)r.inflight_max);
			fflush(stdout);
		}
	}
	printf("\nLv1 runtime overhead, default settings, median of %d runs (each 0.5 s of work)\n",
	       reps);
	printf("| T | native ms | xsched ms | overhead |\n|---|---|---|---|\n");
	for (i = 0; i < 3; i++) {
		int n = (int)(500 * MS / ovh_t[i]);
		uint64_t *nat = calloc((size_t)reps, sizeof(*nat));
		uint64_t *xs = calloc((size_t)reps, sizeof(*xs));
		uint64_t mn, mx;

		if (!nat || !xs)
			return 1;
		/* Alternate which runs first, so drift favours neither. */
		for (j = 0; j < reps; j++) {
			if (j % 2) {
				xs[j] = run_xsched(dev, ovh_t[i], n);
				nat[j] = run_native(dev, ovh_t[i], n);
			} else {
				nat[j] = run_native(dev, ovh_t[i], n);
				xs[j] = run_xsched(dev, ovh_t[i], n);
			}
		}
		mn = bench_pct(nat, (size_t)reps, 50);
		mx = bench_pct(xs, (size_t)reps, 50);
		printf("| %s us | %.2f | %.2f | %+.2f%% |\n", fmt_us(ovh_t[i], a, sizeof(a)),
		       (double)mn / 1e6, (double)mx / 1e6,
		       100.0 * ((double)mx / (double)mn - 1.0));
		fflush(stdout);
		free(nat);
		free(xs);
	}
	bench_close_device(dev, keep);
	return 0;
}
