/*
 * A CUDA driver-API application of CUDA graphs for the shim's graph
 * slicing tests, run natively and under the shim on the simulated driver:
 * each phase prints one line of results (checksums, counters), which must
 * be the same in both runs whatever the shim split the graphs into, and,
 * under the shim, one "split PHASE n..." line: the commands each launch of
 * the phase became (cu_test_graph_split), which the test checks apart.
 * Phases: captured chains (also on the legacy stream), a DAG built from
 * nodes of every sliceable kind (memset, kernel, copy, host, child graph,
 * empty), every executable update, graphs that must launch whole (memory
 * nodes, device launch, stream memory operations) and event pairs that
 * must share a slice, and orderings: an update behind a buffered launch,
 * launches of one executable on two streams, destruction while buffered.
 *
 * Usage: cu_graph_prog [PHASE...]   (no argument: every phase)
 */
#include "vendor/cuda/cu_api.h"
#include "cu_check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static CUfunction f_fill, f_inc, f_scale, f_add, f_sum, f_spin;
static CUcontext ctx;
static CUdeviceptr d_sum;
static int (*split_of)(CUgraphExec);
static char splits[256];

/* Notes how the shim split @e's last launch. */
static void note(CUgraphExec e)
{
	size_t len = strlen(splits);

	if (split_of)
		snprintf(splits + len, sizeof(splits) - len, " %d", split_of(e));
}

static void launch(CUgraphExec e, CUstream s)
{
	CK(cuGraphLaunch(e, s));
	note(e);
}

static void end_phase(const char *name)
{
	if (split_of)
		printf("split %s%s\n", name, splits);
	splits[0] = '\0';
}

static void k_launch(CUfunction f, CUstream s, void **args)
{
	CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
}

static void k_fill(CUstream s, CUdeviceptr p, unsigned v)
{
	uint64_t n = N;
	void *a[] = { &p, &v, &n };

	k_launch(f_fill, s, a);
}

static void k_inc(CUstream s, CUdeviceptr p)
{
	uint64_t n = N;
	void *a[] = { &p, &n };

	k_launch(f_inc, s, a);
}

static void k_scale(CUstream s, CUdeviceptr p, unsigned k)
{
	uint64_t n = N;
	void *a[] = { &p, &k, &n };

	k_launch(f_scale, s, a);
}

static void k_spin(CUstream s, uint64_t ns)
{
	void *a[] = { &ns };

	k_launch(f_spin, s, a);
}

/* Checksum of @p (N words), computed on the device, after the legacy stream. */
static unsigned long long checksum(CUdeviceptr p)
{
	uint64_t n = N * 4, out[2] = { 0, 0 };
	void *a[] = { &p, &n, &d_sum };

	k_launch(f_sum, NULL, a);
	CK(cuMemcpyDtoH_v2(out, d_sum, sizeof(out)));
	return (unsigned long long)out[0];
}

/* The first word of @p, read at once (the legacy stream waits for no non-blocking one). */
static unsigned first(CUdeviceptr p)
{
	unsigned v = 0;

	CK(cuMemcpyDtoH_v2(&v, p, sizeof(v)));
	return v;
}

static CUDA_KERNEL_NODE_PARAMS kp(CUfunction f, void **args)
{
	CUDA_KERNEL_NODE_PARAMS p = { .func = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
				      .kernelParams = args };

	return p;
}

static CUDA_MEMCPY3D copy_1d(CUmemorytype dt, void *dh, CUdeviceptr dd, CUdeviceptr src)
{
	CUDA_MEMCPY3D c = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = src,
			    .dstMemoryType = dt, .dstHost = dh, .dstDevice = dd,
			    .WidthInBytes = N * 4, .Height = 1, .Depth = 1 };

	return c;
}

static CUDA_MEMSET_NODE_PARAMS memset_1d(CUdeviceptr p, unsigned v)
{
	CUDA_MEMSET_NODE_PARAMS m = { .dst = p, .value = v, .elementSize = 4, .width = N,
				      .height = 1 };

	return m;
}

static void count_fn(void *arg)
{
	(*(int *)arg)++;
}

/* A captured chain (13 kernels), launched on a stream and on the legacy stream. */
static void phase_chain(void)
{
	CUdeviceptr a;
	CUgraphExec e;
	CUstream s;
	CUgraph g;

	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	k_fill(s, a, 1);
	for (int i = 0; i < 6; i++) {
		k_inc(s, a);
		k_scale(s, a, 3);
	}
	CK(cuStreamEndCapture(s, &g));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	CK(cuGraphDestroy(g));    /* the executable stands alone */
	launch(e, s);
	launch(e, s);
	CK(cuStreamSynchronize(s));
	launch(e, s);
	k_inc(s, a);
	CK(cuStreamSynchronize(s));
	printf("chain %llx", checksum(a));
	launch(e, NULL);
	CK(cuCtxSynchronize());
	printf(" %llx\n", checksum(a));
	end_phase("chain");
	CK(cuGraphExecDestroy(e));
	CK(cuStreamDestroy_v2(s));
	CK(cuMemFree_v2(a));
}

/*
 * memset a = 2, memset b = 5 (roots); inc a; scale b by 3; c = a + b;
 * host; child { scale c by 2; inc c }; copy c to pinned h; an empty end.
 */
static void phase_dag(void)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUDA_MEMSET_NODE_PARAMS m;
	CUDA_HOST_NODE_PARAMS hp;
	CUDA_MEMCPY3D cp;
	CUgraphNode ma, mb, ia, sb, add, host, kid, cpy, end, dep[2], x;
	CUdeviceptr a, b, c;
	uint64_t n = N;
	unsigned three = 3, two = 2;
	void *ia_args[] = { &a, &n }, *sb_args[] = { &b, &three, &n };
	void *add_args[] = { &a, &b, &c, &n }, *sc_args[] = { &c, &two, &n };
	void *ic_args[] = { &c, &n };
	unsigned long long sum = 0;
	unsigned *h;
	int count = 0;
	CUgraph g, child;
	CUgraphExec e;
	CUstream s;

	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuMemAlloc_v2(&b, N * 4));
	CK(cuMemAlloc_v2(&c, N * 4));
	CK(cuMemAllocHost_v2((void **)&h, N * 4));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuGraphCreate(&g, 0));
	m = memset_1d(a, 2);
	CK(cuGraphAddMemsetNode(&ma, g, NULL, 0, &m, ctx));
	m = memset_1d(b, 5);
	CK(cuGraphAddMemsetNode(&mb, g, NULL, 0, &m, ctx));
	p = kp(f_inc, ia_args);
	CK(cuGraphAddKernelNode_v2(&ia, g, &ma, 1, &p));
	p = kp(f_scale, sb_args);
	CK(cuGraphAddKernelNode_v2(&sb, g, &mb, 1, &p));
	dep[0] = ia;
	dep[1] = sb;
	p = kp(f_add, add_args);
	CK(cuGraphAddKernelNode_v2(&add, g, dep, 2, &p));
	hp = (CUDA_HOST_NODE_PARAMS){ count_fn, &count };
	CK(cuGraphAddHostNode(&host, g, &add, 1, &hp));
	CK(cuGraphCreate(&child, 0));
	p = kp(f_scale, sc_args);
	CK(cuGraphAddKernelNode_v2(&x, child, NULL, 0, &p));
	p = kp(f_inc, ic_args);
	CK(cuGraphAddKernelNode_v2(&x, child, &x, 1, &p));
	CK(cuGraphAddChildGraphNode(&kid, g, &host, 1, child));
	cp = copy_1d(CU_MEMORYTYPE_HOST, h, 0, c);
	CK(cuGraphAddMemcpyNode(&cpy, g, &kid, 1, &cp, ctx));
	CK(cuGraphAddEmptyNode(&end, g, &cpy, 1));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	launch(e, s);
	launch(e, s);
	CK(cuStreamSynchronize(s));
	for (int i = 0; i < N; i++)
		sum += h[i];
	printf("dag %llu count %d\n", sum, count);
	end_phase("dag");
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	CK(cuGraphDestroy(child));
	CK(cuStreamDestroy_v2(s));
	CK(cuMemFreeHost(h));
}

struct upd {
	CUgraph g, child;
	CUgraphNode ms, sc, host, kid, cpy;
	CUdeviceptr a, b;
	uint64_t n;
	unsigned k;
	void *sc_args[3], *inc_args[2];
};

/* memset a = 1; scale a by k; host (count); child { inc a }; copy a to b. */
static void upd_build(struct upd *u, int *count, unsigned k)
{
	CUDA_MEMSET_NODE_PARAMS m;
	CUDA_KERNEL_NODE_PARAMS p;
	CUDA_HOST_NODE_PARAMS hp = { count_fn, count };
	CUDA_MEMCPY3D cp;
	CUgraphNode x;

	u->n = N;
	u->k = k;
	u->sc_args[0] = &u->a;
	u->sc_args[1] = &u->k;
	u->sc_args[2] = &u->n;
	u->inc_args[0] = &u->a;
	u->inc_args[1] = &u->n;
	CK(cuGraphCreate(&u->g, 0));
	m = memset_1d(u->a, 1);
	CK(cuGraphAddMemsetNode(&u->ms, u->g, NULL, 0, &m, ctx));
	p = kp(f_scale, u->sc_args);
	CK(cuGraphAddKernelNode_v2(&u->sc, u->g, &u->ms, 1, &p));
	CK(cuGraphAddHostNode(&u->host, u->g, &u->sc, 1, &hp));
	CK(cuGraphCreate(&u->child, 0));
	p = kp(f_inc, u->inc_args);
	CK(cuGraphAddKernelNode_v2(&x, u->child, NULL, 0, &p));
	CK(cuGraphAddChildGraphNode(&u->kid, u->g, &u->host, 1, u->child));
	cp = copy_1d(CU_MEMORYTYPE_DEVICE, NULL, u->b, u->a);
	CK(cuGraphAddMemcpyNode(&u->cpy, u->g, &u->kid, 1, &cp, ctx));
}

/* Every update of an executable, each followed by a launch. */
static void phase_update(void)
{
	CUgraphExecUpdateResultInfo info;
	CUDA_KERNEL_NODE_PARAMS p;
	CUDA_MEMSET_NODE_PARAMS m;
	CUDA_HOST_NODE_PARAMS hp;
	CUDA_MEMCPY3D cp;
	struct upd u, v;
	CUdeviceptr c;
	CUgraph child2, eg;
	CUgraphNode x, rec, k1, k2;
	CUgraphExec e, ee;
	CUevent ev1, ev2;
	unsigned three = 3;
	void *sc3_args[] = { &u.a, &three, &u.n };
	int count = 0, count2 = 0;
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc_v2(&u.a, N * 4));
	CK(cuMemAlloc_v2(&u.b, N * 4));
	CK(cuMemAlloc_v2(&c, N * 4));
	upd_build(&u, &count, 2);
	CK(cuGraphInstantiateWithFlags(&e, u.g, 0));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf("update %u", first(u.b));                        /* 1*2+1 */
	u.k = 5;
	p = kp(f_scale, u.sc_args);
	CK(cuGraphExecKernelNodeSetParams_v2(e, u.sc, &p));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(u.b));                              /* 6 */
	m = memset_1d(u.a, 2);
	CK(cuGraphExecMemsetNodeSetParams(e, u.ms, &m, ctx));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(u.b));                              /* 11 */
	CK(cuMemsetD32_v2(c, 0, N));
	cp = copy_1d(CU_MEMORYTYPE_DEVICE, NULL, c, u.a);
	CK(cuGraphExecMemcpyNodeSetParams(e, u.cpy, &cp, ctx));
	hp = (CUDA_HOST_NODE_PARAMS){ count_fn, &count2 };
	CK(cuGraphExecHostNodeSetParams(e, u.host, &hp));
	CK(cuMemsetD32_v2(u.b, 0, N));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u %u count %d %d", first(c), first(u.b), count, count2);   /* 11 0 */
	/* A child graph of the same shape: scale a by 3 instead of inc. */
	CK(cuGraphCreate(&child2, 0));
	p = kp(f_scale, sc3_args);
	CK(cuGraphAddKernelNode_v2(&x, child2, NULL, 0, &p));
	CK(cuGraphExecChildGraphNodeSetParams(e, u.kid, child2));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(c));                                /* 2*5*3 = 30 */
	CK(cuGraphNodeSetEnabled(e, u.sc, 0));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(c));                                /* 2*3 = 6 */
	CK(cuGraphNodeSetEnabled(e, u.sc, 1));
	/* The whole executable from a graph of the same shape (k 7, copy to b). */
	v.a = u.a;
	v.b = u.b;
	upd_build(&v, &count, 7);
	CK(cuGraphExecUpdate_v2(e, v.g, &info));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(u.b));                              /* 1*7+1 = 8 */
	/* A node of the instantiated graph after that update. */
	u.k = 4;
	p = kp(f_scale, u.sc_args);
	CK(cuGraphExecKernelNodeSetParams_v2(e, u.sc, &p));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u count %d\n", first(u.b), count);          /* 1*4+1 = 5 */
	end_phase("update");
	/* An update the slices do not take (an event node's event). */
	CK(cuEventCreate(&ev1, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&ev2, CU_EVENT_DISABLE_TIMING));
	CK(cuGraphCreate(&eg, 0));
	p = kp(f_scale, sc3_args);
	CK(cuGraphAddKernelNode_v2(&k1, eg, NULL, 0, &p));
	CK(cuGraphAddEventRecordNode(&rec, eg, &k1, 1, ev1));
	p = kp(f_inc, u.inc_args);
	CK(cuGraphAddKernelNode_v2(&k2, eg, &rec, 1, &p));
	CK(cuGraphInstantiateWithFlags(&ee, eg, 0));
	CK(cuMemsetD32_v2(u.a, 1, N));
	launch(ee, s);
	CK(cuGraphExecEventRecordNodeSetEvent(ee, rec, ev2));
	launch(ee, s);
	CK(cuStreamSynchronize(s));
	CK(cuEventSynchronize(ev2));
	printf("update_event %u %d\n", first(u.a), cuEventQuery(ev2));   /* (1*3+1)*3+1 = 13 */
	end_phase("update_event");
	CK(cuGraphExecDestroy(ee));
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(child2));
	CK(cuGraphDestroy(u.g));
	CK(cuGraphDestroy(u.child));
	CK(cuGraphDestroy(v.g));
	CK(cuGraphDestroy(v.child));
	CK(cuGraphDestroy(eg));
	CK(cuEventDestroy_v2(ev1));
	CK(cuEventDestroy_v2(ev2));
	CK(cuStreamDestroy_v2(s));
}

/* Graphs that launch whole, and event pairs kept in one slice. */
static void phase_unsplit(void)
{
	CUDA_MEM_ALLOC_NODE_PARAMS ap = { 0 };
	CUDA_KERNEL_NODE_PARAMS p;
	CUDA_MEMCPY3D cp;
	CUgraphNode an, kn, cn, fn, k[4], rec, wt;
	CUdeviceptr out, a;
	uint64_t n = N;
	unsigned six = 6;
	void *fill_args[] = { &ap.dptr, &six, &n }, *inc_args[] = { &a, &n };
	unsigned *word;
	CUgraphExec e;
	CUstream s;
	CUevent ev;
	CUgraph g;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc_v2(&out, N * 4));
	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuMemAllocHost_v2((void **)&word, sizeof(*word)));
	*word = 0;
	/* Memory nodes. */
	CK(cuGraphCreate(&g, 0));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.bytesize = N * 4;
	CK(cuGraphAddMemAllocNode(&an, g, NULL, 0, &ap));
	p = kp(f_fill, fill_args);
	CK(cuGraphAddKernelNode_v2(&kn, g, &an, 1, &p));
	cp = copy_1d(CU_MEMORYTYPE_DEVICE, NULL, out, ap.dptr);
	CK(cuGraphAddMemcpyNode(&cn, g, &kn, 1, &cp, ctx));
	CK(cuGraphAddMemFreeNode(&fn, g, &cn, 1, ap.dptr));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf("unsplit %u", first(out));
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	/* Instantiated for device launch. */
	CK(cuGraphCreate(&g, 0));
	p = kp(f_inc, inc_args);
	CK(cuGraphAddKernelNode_v2(&k[0], g, NULL, 0, &p));
	CK(cuGraphAddKernelNode_v2(&k[1], g, &k[0], 1, &p));
	CK(cuGraphInstantiateWithFlags(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH));
	CK(cuMemsetD32_v2(a, 0, N));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(a));
	CK(cuGraphExecDestroy(e));
	/* The same graph with an event pair around a kernel: k0 | rec k1 wait | k2 | k3. */
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	CK(cuGraphAddEventRecordNode(&rec, g, &k[1], 1, ev));
	CK(cuGraphAddKernelNode_v2(&k[2], g, &rec, 1, &p));
	CK(cuGraphAddEventWaitNode(&wt, g, &k[2], 1, ev));
	CK(cuGraphAddKernelNode_v2(&k[3], g, &wt, 1, &p));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u", first(a));
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	/* Stream memory operations captured (batch memop nodes). */
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	k_inc(s, a);
	CK(cuStreamWriteValue32_v2(s, (CUdeviceptr)(uintptr_t)word, 5, 0));
	k_inc(s, a);
	CK(cuStreamEndCapture(s, &g));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	launch(e, s);
	CK(cuStreamSynchronize(s));
	printf(" %u %u\n", first(a), *word);
	end_phase("unsplit");
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	CK(cuStreamDestroy_v2(s));
	CK(cuMemFreeHost(word));
}

/* inc a; scale a by *k: two kernels, so a sliced launch is two commands. */
static CUgraphExec two_kernels(CUdeviceptr *a, unsigned *k, CUgraphNode *sc, CUgraph *pg)
{
	static uint64_t n = N;
	void *inc_args[] = { a, &n }, *sc_args[] = { a, k, &n };
	CUDA_KERNEL_NODE_PARAMS p;
	CUgraphNode kn;
	CUgraphExec e;
	CUgraph g;

	CK(cuGraphCreate(&g, 0));
	p = kp(f_inc, inc_args);
	CK(cuGraphAddKernelNode_v2(&kn, g, NULL, 0, &p));
	p = kp(f_scale, sc_args);
	CK(cuGraphAddKernelNode_v2(sc, g, &kn, 1, &p));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	*pg = g;
	return e;
}

/*
 * Orderings around buffered launches (behind a 30 ms spin the queue runs
 * alone): an update after a launch does not change that launch; a launch
 * on another stream follows the previous one; an executable destroyed
 * with a launch buffered still runs it.
 */
static void phase_order(void)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUdeviceptr a;
	uint64_t n = N;
	unsigned k = 2, k3 = 3;
	void *sc_args[] = { &a, &k3, &n };
	CUgraphNode sc;
	CUgraphExec e;
	CUstream s1, s2;
	CUgraph g;

	CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc_v2(&a, N * 4));
	e = two_kernels(&a, &k, &sc, &g);
	CK(cuMemsetD32_v2(a, 1, N));
	k_spin(s1, 30000000);
	launch(e, s1);                       /* (1+1)*2 */
	p = kp(f_scale, sc_args);
	CK(cuGraphExecKernelNodeSetParams_v2(e, sc, &p));
	launch(e, s1);                       /* (4+1)*3 */
	CK(cuStreamSynchronize(s1));
	printf("order %u", first(a));
	/* Stream 1 busy: the launch on stream 2 waits for its launch. */
	CK(cuMemsetD32_v2(a, 1, N));
	k_spin(s1, 30000000);
	launch(e, s1);
	launch(e, s2);
	CK(cuStreamSynchronize(s2));
	printf(" %u", first(a));             /* ((1+1)*3+1)*3 */
	CK(cuStreamSynchronize(s1));
	/* Destroyed while a launch is buffered. */
	CK(cuMemsetD32_v2(a, 1, N));
	k_spin(s1, 30000000);
	launch(e, s1);
	CK(cuGraphExecDestroy(e));
	CK(cuStreamSynchronize(s1));
	printf(" %u\n", first(a));           /* (1+1)*3 */
	end_phase("order");
	CK(cuGraphDestroy(g));
	CK(cuStreamDestroy_v2(s1));
	CK(cuStreamDestroy_v2(s2));
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} phases[] = {
		{ "chain", phase_chain }, { "dag", phase_dag }, { "update", phase_update },
		{ "unsplit", phase_unsplit }, { "order", phase_order },
	};
	CUmodule m;
	CUdevice dev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	split_of = (int (*)(CUgraphExec))dlsym(RTLD_DEFAULT, "cu_test_graph_split");
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&f_fill, m, "sf_fill"));
	CK(cuModuleGetFunction(&f_inc, m, "sf_inc"));
	CK(cuModuleGetFunction(&f_scale, m, "sf_scale"));
	CK(cuModuleGetFunction(&f_add, m, "sf_add"));
	CK(cuModuleGetFunction(&f_sum, m, "sf_checksum"));
	CK(cuModuleGetFunction(&f_spin, m, "sf_spin"));
	CK(cuMemAlloc_v2(&d_sum, 16));
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		int run = argc == 1;

		for (int j = 1; j < argc; j++)
			run |= !strcmp(argv[j], phases[i].name);
		if (run)
			phases[i].fn();
	}
	CK(cuCtxSynchronize());
	printf("shim %s\n", split_of ? "active" : "absent");
	return 0;
}
