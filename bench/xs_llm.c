/*
 * xs_llm: cu_llm's workload (llm_work.h) through the public xsched API on
 * the simulated XPU, one XQueue over one hardware queue, so that
 * bench/scenarios/llm.sh can measure the levels the CUDA shim does not
 * offer (it has Lv1 only): --level 2 or 3 under xschedd, which schedules
 * it like any application (hints from the options below or the usual
 * XSCHED_* environment).
 *
 * The API has no graphs: a decode step is --step-kernels commands of
 * --step-us submitted back to back, then an xs_wait() for the last, and
 * --offline --graphs submits --graph-kernels commands per submission. On
 * the simulated XPU that is what a graph launch does too (the simulated
 * driver submits a graph's nodes as commands), so the device sees the
 * same commands; only the host's submission cost differs. The offline
 * flood's marks are sequence numbers.
 */
#include "xsched/sim.h"
#include "agent/agent.h"
#include "llm_work.h"
#include "bench_util.h"

#include <getopt.h>

#define PROG "xs_llm"

struct api_dev {
	struct llm_dev base;
	xs_queue *q;
	const struct llm_opts *o;
	uint64_t last;                  /* sequence number of the last submission */
	uint64_t mark[LLM_MAX_INFLIGHT];
};

/* Ends the program unless @rc is 0 (a failed call voids the measurement). */
static void xk(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: %s\n", what, xs_strerror(rc));
		exit(1);
	}
}

static void api_kernel(struct llm_dev *d, uint64_t ns)
{
	struct api_dev *x = (struct api_dev *)d;
	xs_cmd *c;

	xk(xs_sim_kernel(ns, &c), "xs_sim_kernel");
	xk(xs_submit(x->q, c, &x->last), "xs_submit");
}

static void api_step(struct llm_dev *d)
{
	struct api_dev *x = (struct api_dev *)d;

	for (int i = 0; i < x->o->step_kernels; i++)
		api_kernel(d, x->o->step_kernel_ns);
}

static void api_group(struct llm_dev *d)
{
	struct api_dev *x = (struct api_dev *)d;

	for (int i = 0; i < x->o->graph_kernels; i++)
		api_kernel(d, x->o->graph_kernel_ns);
}

static void api_mark(struct llm_dev *d, int slot)
{
	struct api_dev *x = (struct api_dev *)d;

	x->mark[slot] = x->last;
}

static void api_wait(struct llm_dev *d, int slot)
{
	struct api_dev *x = (struct api_dev *)d;

	if (x->mark[slot])
		xk(xs_wait(x->q, x->mark[slot]), "xs_wait");
}

static void api_sync(struct llm_dev *d)
{
	xk(xs_wait_all(((struct api_dev *)d)->q), "xs_wait_all");
}

static const struct llm_dev_ops api_ops = {
	.kernel = api_kernel,
	.step = api_step,
	.group = api_group,
	.mark = api_mark,
	.wait = api_wait,
	.sync = api_sync,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: xs_llm --server|--offline [--device NAME] [--level L]\n"
		"              [--priority N] [--wait-connected-ms MS] [options]\n" LLM_USAGE);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		LLM_LONGOPTS,
		{ "device", required_argument, NULL, 'd' },
		{ "level", required_argument, NULL, 'l' },
		{ "priority", required_argument, NULL, 'P' },
		{ "wait-connected-ms", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;
	const char *device = NULL;
	struct api_dev x = { .base.ops = &api_ops };
	bool prio_set = false;
	int64_t prio = 0;
	uint64_t wait_ns = 0, until;
	struct llm_opts o;
	xs_hwq *hwq;
	int ch, rc;

	llm_defaults(&o);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'd': device = optarg; continue;
		case 'l': cfg.level = atoi(optarg); continue;
		case 'P': prio = atoll(optarg); prio_set = true; continue;
		case 'w': wait_ns = (uint64_t)atoll(optarg) * 1000000ull; continue;
		case 'h': usage(stdout); return 0;
		}
		if (!llm_option(&o, ch, optarg)) {
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !llm_valid(&o) || cfg.level < 0 || cfg.level > 3) {
		usage(stderr);
		return 2;
	}
	llm_handle_signals();
	x.o = &o;
	xk(xs_sim_hwq_create(device, &hwq), "hardware queue");
	xk(xs_queue_create(hwq, &cfg, &x.q), "queue");
	if (prio_set)
		xk(xs_queue_set_hint(x.q, XS_HINT_PRIORITY, prio), "priority hint");
	for (until = bench_wall_ns() + wait_ns; wait_ns && !agent_connected();) {
		if (bench_wall_ns() > until) {
			fprintf(stderr, PROG ": no connection to the daemon\n");
			return 3;
		}
		bench_sleep_until_wall(bench_wall_ns() + 1000000);
	}
	rc = llm_run(&x.base, &o, PROG);
	xs_queue_destroy(x.q, XS_DESTROY_DISCARD);
	xs_hwq_destroy(hwq);
	return rc < 0 ? 1 : 0;
}
