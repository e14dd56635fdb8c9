/*
 * cu_llm: the LLM-serving workload of bench/scenarios/llm.sh (see
 * llm_work.h: an online server of Poisson requests, prefill then decode
 * steps, or an offline flood of long kernels) as a plain CUDA driver-API
 * application. Like cu_load it knows nothing of xsched: it runs natively
 * on the simulated driver (libcuda.so.1 through LD_LIBRARY_PATH) or,
 * unchanged, under the CUDA shim (LD_PRELOAD), which takes its hints from
 * the XSCHED_* environment.
 *
 * Each decode step is one cuGraphLaunch of a graph of --step-kernels
 * kernels captured once from the stream (cuStreamBeginCapture ..
 * cuStreamEndCapture, cuGraphInstantiateWithFlags), as inference engines
 * replay their decode step; the step is waited for with
 * cuStreamSynchronize. Prefill and offline kernels are launched one by
 * one; --offline --graphs launches one captured graph of --graph-kernels
 * kernels per submission instead. Every kernel is the simulated driver's
 * sf_spin of module "xs" (a busy spin on the simulated XPU) on one
 * non-blocking stream; the offline flood's marks are events.
 */
#define BENCH_PROG "cu_llm"
#include "bench_cuda.h"
#include "llm_work.h"

#include <getopt.h>
#include <string.h>

struct cu_dev {
	struct llm_dev base;
	CUfunction spin;
	CUstream s;
	CUgraphExec step, group;        /* NULL when the role does not use it */
	CUevent ev[LLM_MAX_INFLIGHT];
};

static void cu_kernel(struct llm_dev *d, uint64_t ns)
{
	struct cu_dev *c = (struct cu_dev *)d;
	void *args[1] = { &ns };

	/* The driver copies the parameters at the launch. */
	CK(cuLaunchKernel(c->spin, 1, 1, 1, 1, 1, 1, 0, c->s, args, NULL));
}

static void cu_step(struct llm_dev *d)
{
	struct cu_dev *c = (struct cu_dev *)d;

	CK(cuGraphLaunch(c->step, c->s));
}

static void cu_group(struct llm_dev *d)
{
	struct cu_dev *c = (struct cu_dev *)d;

	CK(cuGraphLaunch(c->group, c->s));
}

static void cu_mark(struct llm_dev *d, int slot)
{
	struct cu_dev *c = (struct cu_dev *)d;

	CK(cuEventRecord(c->ev[slot], c->s));
}

static void cu_wait(struct llm_dev *d, int slot)
{
	CK(cuEventSynchronize(((struct cu_dev *)d)->ev[slot]));
}

static void cu_sync(struct llm_dev *d)
{
	CK(cuStreamSynchronize(((struct cu_dev *)d)->s));
}

static const struct llm_dev_ops cu_ops = {
	.kernel = cu_kernel,
	.step = cu_step,
	.group = cu_group,
	.mark = cu_mark,
	.wait = cu_wait,
	.sync = cu_sync,
};

/* A graph of @n kernels of @ns, captured from the stream, instantiated. */
static CUgraphExec capture(struct cu_dev *c, int n, uint64_t ns)
{
	CUgraphExec e;
	CUgraph g;

	CK(cuStreamBeginCapture_v2(c->s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	for (int i = 0; i < n; i++)
		cu_kernel(&c->base, ns);
	CK(cuStreamEndCapture(c->s, &g));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	CK(cuGraphDestroy(g));
	return e;
}

static void dev_open(struct cu_dev *c, const struct llm_opts *o)
{
	CUmodule m;

	memset(c, 0, sizeof(*c));
	c->base.ops = &cu_ops;
	bench_cu_init();
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&c->spin, m, "sf_spin"));
	CK(cuStreamCreate(&c->s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < LLM_MAX_INFLIGHT; i++)
		CK(cuEventCreate(&c->ev[i], CU_EVENT_DISABLE_TIMING));
	if (o->role == LLM_SERVER)
		c->step = capture(c, o->step_kernels, o->step_kernel_ns);
	if (o->role == LLM_OFFLINE && o->graphs)
		c->group = capture(c, o->graph_kernels, o->graph_kernel_ns);
}

static void dev_close(struct cu_dev *c)
{
	for (int i = 0; i < LLM_MAX_INFLIGHT; i++)
		cuEventDestroy_v2(c->ev[i]);
	if (c->step)
		cuGraphExecDestroy(c->step);
	if (c->group)
		cuGraphExecDestroy(c->group);
	cuStreamDestroy_v2(c->s);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: cu_llm --server|--offline [options]\n" LLM_USAGE);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		LLM_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct llm_opts o;
	struct cu_dev c;
	int ch, rc;

	llm_defaults(&o);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return 0;
		}
		if (!llm_option(&o, ch, optarg)) {
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !llm_valid(&o)) {
		usage(stderr);
		return 2;
	}
	llm_handle_signals();
	dev_open(&c, &o);
	rc = llm_run(&c.base, &o, BENCH_PROG);
	dev_close(&c);
	return rc < 0 ? 1 : 0;
}
