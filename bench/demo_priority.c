/*
 * Fixed-priority demo on the simulated XPU: a latency-critical foreground
 * task and a flooding background task share one device.
 *
 * The foreground issues tasks of N commands of T at a given load with
 * +-50% uniform jitter and waits for each; its latency is measured from the
 * release time. Modes, all in one run: the foreground alone (standalone),
 * both launching straight to the device (native: the device's round-robin
 * arbitration interleaves them), and both as XQueues under a fixed-priority
 * rule at Lv1 and Lv3 (the background is suspended while the foreground
 * has work). The rule runs in-process on a policy thread fed by the XQueue
 * Ready/Idle events, as the agent's local mode does; across processes the
 * daemon plays that role.
 *
 * Usage: demo_priority [--tasks N] [--cmds N] [--cmd-us T] [--load PCT]
 */
#include "xsched/sim.h"
#include "base/clock.h"
#include "base/futex.h"
#include "sim/sim.h"
#include "xqueue/xqueue.h"
#include "bench_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define US 1000ull
#define MS (1000 * US)

struct opts {
	int tasks, cmds;
	uint64_t cmd_ns;
	double load;
};

enum mode { STANDALONE, NATIVE, XSCHED_LV1, XSCHED_LV3 };

struct run {
	enum mode mode;
	const struct opts *o;
	const char *dev;
	/* native */
	struct sim_dev *sdev;
	struct sim_hwq *fg_hw, *bg_hw;
	/* xsched */
	xs_hwq *fg_hwq, *bg_hwq;
	xs_queue *fg, *bg;
	_Atomic uint32_t fg_busy;    /* written by the fg observer */
	_Atomic uint32_t event;      /* futex word for the policy thread */
	_Atomic bool stop;
	uint64_t *lat;
	_Atomic uint64_t bg_done;
};

static void fg_observer(struct xq *q, enum xq_event ev, void *ctx)
{
	struct run *r = ctx;

	(void)q;
	if (ev != XQ_EVENT_READY && ev != XQ_EVENT_IDLE)
		return;
	atomic_store(&r->fg_busy, ev == XQ_EVENT_READY);
	atomic_fetch_add(&r->event, 1);
	futex_wake(&r->event, 1, false);
}

/* The fixed-priority rule: background runs only while the foreground idles. */
static void *policy_main(void *arg)
{
	struct run *r = arg;
	bool suspended = false;

	while (!atomic_load(&r->stop)) {
		uint32_t seen = atomic_load(&r->event);
		bool busy = atomic_load(&r->fg_busy);

		if (busy && !suspended)
			xs_suspend(r->bg, 0);
		else if (!busy && suspended)
			xs_resume(r->bg);
		suspended = busy;
		futex_wait(&r->event, seen, 10 * MS, false);
	}
	xs_resume(r->bg);
	return NULL;
}

static void *bg_main(void *arg)
{
	struct run *r = arg;
	struct sim_cmd k = { .kind = SIM_CMD_KERNEL, .duration_ns = r->o->cmd_ns };

	while (!atomic_load(&r->stop)) {
		if (r->mode == NATIVE) {
			uint64_t seq;

			/* Blocks while the device's queue is full, like a driver. */
			sim_hwq_launch(r->bg_hw, &k, &seq);
		} else {
			xs_queue_stats st;
			xs_cmd *c;

			xs_queue_stats_get(r->bg, &st);
			if (st.pending + st.in_flight >= 64) {
				clock_sleep_until(clock_now_ns() + MS);
				continue;
			}
			if (xs_sim_kernel(r->o->cmd_ns, &c) == 0)
				xs_submit(r->bg, c, NULL);
		}
	}
	return NULL;
}

static void fg_task(struct run *r)
{
	struct sim_cmd k = { .kind = SIM_CMD_KERNEL, .duration_ns = r->o->cmd_ns };
	uint64_t seq = 0;
	int i;

	if (r->mode == NATIVE || r->mode == STANDALONE) {
		for (i = 0; i < r->o->cmds; i++)
			sim_hwq_launch(r->fg_hw, &k, &seq);
		sim_hwq_wait(r->fg_hw, seq, 0);
		return;
	}
	for (i = 0; i < r->o->cmds; i++) {
		xs_cmd *c;

		if (xs_sim_kernel(r->o->cmd_ns, &c) == 0)
			xs_submit(r->fg, c, &seq);
	}
	xs_wait(r->fg, seq);
}

static uint64_t bg_completed(struct run *r)
{
	struct sim_hwq_info info;
	xs_queue_stats st;

	if (r->mode == NATIVE) {
		sim_hwq_info_get(r->bg_hw, &info);
		return info.executed;
	}
	xs_queue_stats_get(r->bg, &st);
	return st.completed;
}

/* Runs one mode; fills r->lat; returns background commands per second. */
static double run_mode(struct run *r)
{
	const struct opts *o = r->o;
	double task_ns = (double)o->cmds * (double)o->cmd_ns;
	double period = task_ns / o->load;
	pthread_t bg, pol;
	uint64_t next, t0, bg0;
	bool with_bg = r->mode != STANDALONE;
	int i;

	sim_dev_open(r->dev, NULL, &r->sdev);
	sim_hwq_create(r->sdev, &r->fg_hw);
	sim_hwq_create(r->sdev, &r->bg_hw);
	if (r->mode >= XSCHED_LV1) {
		xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;

		cfg.level = r->mode == XSCHED_LV1 ? 1 : 3;
		xs_sim_hwq_create(r->dev, &r->fg_hwq);
		xs_sim_hwq_create(r->dev, &r->bg_hwq);
		xs_queue_create(r->fg_hwq, &cfg, &r->fg);
		xs_queue_create(r->bg_hwq, &cfg, &r->bg);
		xq_set_observer((struct xq *)r->fg, fg_observer, r);
		pthread_create(&pol, NULL, policy_main, r);
	}
	if (with_bg)
		pthread_create(&bg, NULL, bg_main, r);
	/* Warm-up: let the queues learn and the background fill the device. */
	clock_sleep_until(clock_now_ns() + 200 * MS);
	for (i = 0; i < 5; i++)
		fg_task(r);
	bg0 = bg_completed(r);
	t0 = next = clock_now_ns();
	for (i = 0; i < o->tasks; i++) {
		uint64_t release;

		next += (uint64_t)(period * (0.5 + drand48()));
		release = next;
		clock_sleep_until(release);
		fg_task(r);
		r->lat[i] = clock_now_ns() - release;
		if (clock_now_ns() > next)
			next = clock_now_ns();
	}
	{
		double secs = (double)(clock_now_ns() - t0) / 1e9;
		double bg_rate = (double)(bg_completed(r) - bg0) / secs;

		atomic_store(&r->stop, true);
		if (with_bg)
			pthread_join(bg, NULL);
		if (r->mode >= XSCHED_LV1) {
			atomic_fetch_add(&r->event, 1);
			futex_wake(&r->event, 1, false);
			pthread_join(pol, NULL);
			xs_queue_destroy(r->fg, XS_DESTROY_DISCARD);
			xs_queue_destroy(r->bg, XS_DESTROY_DISCARD);
			xs_hwq_destroy(r->fg_hwq);
			xs_hwq_destroy(r->bg_hwq);
		}
		sim_hwq_destroy(r->fg_hw);
		sim_hwq_destroy(r->bg_hw);
		sim_dev_close(r->sdev);
		return bg_rate;
	}
}

static double bg_standalone(const struct opts *o, const char *dev)
{
	struct sim_cmd k = { .kind = SIM_CMD_KERNEL, .duration_ns = o->cmd_ns };
	struct sim_dev *d;
	struct sim_hwq *hq;
	uint64_t t0, seq = 0, n = (uint64_t)(MS * 1000 / o->cmd_ns);

	sim_dev_open(dev, NULL, &d);
	sim_hwq_create(d, &hq);
	t0 = clock_now_ns();
	for (uint64_t i = 0; i < n; i++)
		sim_hwq_launch(hq, &k, &seq);
	sim_hwq_wait(hq, seq, 0);
	t0 = clock_now_ns() - t0;
	sim_hwq_destroy(hq);
	sim_dev_close(d);
	return (double)n / ((double)t0 / 1e9);
}

int main(int argc, char **argv)
{
	static const char *names[] = { "standalone", "native", "xsched Lv1", "xsched Lv3" };
	struct opts o = { .tasks = 200, .cmds = 10, .cmd_ns = 500 * US, .load = 0.2 };
	uint64_t p50[4], p99[4];
	double bg_rate[4], bg_alone;
	struct sim_dev *keep;
	char dev[64];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
			o.tasks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cmds") && i + 1 < argc)
			o.cmds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cmd-us") && i + 1 < argc)
			o.cmd_ns = (uint64_t)atoll(argv[++i]) * US;
		else if (!strcmp(argv[i], "--load") && i + 1 < argc)
			o.load = atof(argv[++i]) / 100.0;
		else {
			fprintf(stderr, "usage: %s [--tasks N] [--cmds N] [--cmd-us T] [--load PCT]\n",
				argv[0]);
			return 2;
		}
	}
	if (o.tasks < 1 || o.cmds < 1 || o.cmd_ns == 0 || o.load <= 0 || o.load > 1) {
		fprintf(stderr, "demo_priority: tasks, cmds and cmd-us must be positive, load in (0,100]\n");
		return 2;
	}
	if (bench_private_device("xsdemo", dev, sizeof(dev), &keep))
		return 1;
	srand48(7);
	bench_print_machine(stdout);
	printf("fixed priority on the sim XPU: foreground tasks of %d x %.0f us commands at %.0f%% load "
	       "(+-50%% jitter), %d tasks per mode; background floods the same device\n",
	       o.cmds, (double)o.cmd_ns / 1e3, o.load * 100, o.tasks);
	fflush(stdout);
	bg_alone = bg_standalone(&o, dev);
	for (i = STANDALONE; i <= XSCHED_LV3; i++) {
		struct run r = { .mode = (enum mode)i, .o = &o, .dev = dev };

		r.lat = calloc((size_t)o.tasks, sizeof(*r.lat));
		if (!r.lat)
			return 1;
		bg_rate[i] = run_mode(&r);
		p50[i] = bench_pct(r.lat, (size_t)o.tasks, 50);
		p99[i] = bench_pct(r.lat, (size_t)o.tasks, 99);
		free(r.lat);
	}
	printf("\n| mode | fg P50 ms | fg P99 ms | P99 / standalone | bg throughput / standalone |\n");
	printf("|---|---|---|---|---|\n");
	for (i = STANDALONE; i <= XSCHED_LV3; i++) {
		char bg[32] = "-";

		if (i != STANDALONE)
			snprintf(bg, sizeof(bg), "%.2f", bg_rate[i] / bg_alone);
		printf("| %s | %.2f | %.2f | %.2fx | %s |\n", names[i], (double)p50[i] / 1e6,
		       (double)p99[i] / 1e6, (double)p99[i] / (double)p99[0], bg);
	}
	printf("\nforeground P99: standalone %.2f ms, native %.2f ms (%.2fx), "
	       "xsched Lv1 %.2f ms (%.2fx), xsched Lv3 %.2f ms (%.2fx)\n",
	       (double)p99[0] / 1e6, (double)p99[1] / 1e6, (double)p99[1] / (double)p99[0],
	       (double)p99[2] / 1e6, (double)p99[2] / (double)p99[0],
	       (double)p99[3] / 1e6, (double)p99[3] / (double)p99[0]);
	bench_close_device(dev, keep);
	return 0;
}
