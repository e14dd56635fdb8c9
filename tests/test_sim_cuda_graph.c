/*
 * Graphs of the simulated CUDA driver, through the driver API: building a
 * graph from nodes of every kind it implements, the structure queries
 * (nodes, types, dependencies and dependents, roots), node parameters
 * back as they were given, cloning and removing nodes, instantiation and
 * launches checked by data, the updates of an executable graph (per node,
 * whole graph, enabling), memory nodes, device-launch instantiation, and
 * the order of launches of one executable on two streams.
 */
#include "test_util.h"
#include "vendor/cuda/cu_api.h"

#include <pthread.h>

#define N 1024
#define CK(call) assert_int_equal((int)(call), CUDA_SUCCESS)
#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

static bool inited;
static CUcontext pctx;
static CUfunction f_fill, f_inc, f_scale, f_spin;
static uint32_t *gates;

static void up(void)
{
	CUmodule mod;
	CUdevice d;

	if (!inited) {
		setenv("XSCHED_SIM_DEVICE", test_dev("cudagraph"), 1);
		CK(cuInit(0));
		inited = true;
	}
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&pctx, d));
	CK(cuCtxSetCurrent(pctx));
	CK(cuModuleLoadData(&mod, "any image"));
	CK(cuModuleGetFunction(&f_fill, mod, "sf_fill"));
	CK(cuModuleGetFunction(&f_inc, mod, "sf_inc"));
	CK(cuModuleGetFunction(&f_scale, mod, "sf_scale"));
	CK(cuModuleGetFunction(&f_spin, mod, "sf_spin"));
	CK(cuMemAllocHost_v2((void **)&gates, 4 * sizeof(*gates)));
	memset(gates, 0, 4 * sizeof(*gates));
}

static void down(void)
{
	CK(cuCtxSetCurrent(NULL));
	CK(cuDevicePrimaryCtxRelease_v2(0));
}

static void expect_all(CUdeviceptr p, uint32_t v, size_t n)
{
	uint32_t *h = malloc(n * 4);

	assert_non_null(h);
	CK(cuMemcpyDtoH_v2(h, p, n * 4));
	for (size_t i = 0; i < n; i++)
		if (h[i] != v)
			fail_msg("element %zu is %u, expected %u", i, h[i], v);
	free(h);
}

/* Kernel node parameters of @f with @args (kept by the caller). */
static CUDA_KERNEL_NODE_PARAMS kp(CUfunction f, void **args)
{
	CUDA_KERNEL_NODE_PARAMS p = { .func = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
				      .kernelParams = args };

	return p;
}

static CUDA_MEMCPY3D copy_1d(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	CUDA_MEMCPY3D c = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = src,
			    .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = dst,
			    .WidthInBytes = bytes, .Height = 1, .Depth = 1 };

	return c;
}

static void order_fn(void *arg)
{
	int *v = arg;

	v[1 + v[0]] = v[0] + 100;
	v[0]++;
}

struct built {
	CUgraph g, child;
	CUgraphNode ms, k_inc, cp, host, kid, ev_rec, ev_wait;
	CUdeviceptr a, b;
	CUevent ev;
	void *inc_args[2], *scale_args[3];
	uint64_t n;
	uint32_t k;
	int order[4];
};

/*
 * memset a = 2 -> inc a -> copy a to b -> { host, child (scale b by k) }
 * -> event record -> event wait; the child hangs off the copy beside the
 * host node. Result: b = 3k.
 */
static void build(struct built *t)
{
	CUDA_MEMSET_NODE_PARAMS ms = { .value = 2, .elementSize = 4, .width = N, .height = 1 };
	CUDA_KERNEL_NODE_PARAMS inc, scale;
	CUDA_HOST_NODE_PARAMS hp = { order_fn, t->order };
	CUDA_MEMCPY3D cp;
	CUgraphNode sc, deps[2];

	CK(cuMemAlloc_v2(&t->a, N * 4));
	CK(cuMemAlloc_v2(&t->b, N * 4));
	CK(cuEventCreate(&t->ev, CU_EVENT_DISABLE_TIMING));
	t->n = N;
	t->k = 7;
	t->inc_args[0] = &t->a;
	t->inc_args[1] = &t->n;
	t->scale_args[0] = &t->b;
	t->scale_args[1] = &t->k;
	t->scale_args[2] = &t->n;
	memset(t->order, 0, sizeof(t->order));
	CK(cuGraphCreate(&t->g, 0));
	ms.dst = t->a;
	CK(cuGraphAddMemsetNode(&t->ms, t->g, NULL, 0, &ms, pctx));
	inc = kp(f_inc, t->inc_args);
	CK(cuGraphAddKernelNode_v2(&t->k_inc, t->g, &t->ms, 1, &inc));
	cp = copy_1d(t->b, t->a, N * 4);
	CK(cuGraphAddMemcpyNode(&t->cp, t->g, &t->k_inc, 1, &cp, pctx));
	CK(cuGraphAddHostNode(&t->host, t->g, &t->cp, 1, &hp));
	CK(cuGraphCreate(&t->child, 0));
	scale = kp(f_scale, t->scale_args);
	CK(cuGraphAddKernelNode_v2(&sc, t->child, NULL, 0, &scale));
	CK(cuGraphAddChildGraphNode(&t->kid, t->g, &t->cp, 1, t->child));
	deps[0] = t->host;
	deps[1] = t->kid;
	CK(cuGraphAddEventRecordNode(&t->ev_rec, t->g, deps, 2, t->ev));
	CK(cuGraphAddEventWaitNode(&t->ev_wait, t->g, &t->ev_rec, 1, t->ev));
}

static void sg_structure(void **state)
{
	CUgraphNode nodes[8], deps[4], out;
	CUgraphEdgeData edges[4];
	CUDA_KERNEL_NODE_PARAMS k;
	CUDA_MEMSET_NODE_PARAMS m;
	CUDA_HOST_NODE_PARAMS h;
	CUDA_MEMCPY3D c;
	CUgraphNodeType type;
	struct built t;
	CUgraph child;
	CUevent ev;
	size_t n;

	(void)state;
	up();
	build(&t);
	n = 0;
	CK(cuGraphGetNodes(t.g, NULL, &n));
	assert_int_equal(n, 7);
	n = 8;
	CK(cuGraphGetNodes(t.g, nodes, &n));
	assert_int_equal(n, 7);
	assert_ptr_equal(nodes[0], t.ms);         /* creation order */
	assert_ptr_equal(nodes[6], t.ev_wait);
	assert_null(nodes[7]);
	n = 4;
	CK(cuGraphGetRootNodes(t.g, deps, &n));
	assert_int_equal(n, 1);
	assert_ptr_equal(deps[0], t.ms);
	CK(cuGraphNodeGetType(t.k_inc, &type));
	assert_int_equal(type, CU_GRAPH_NODE_TYPE_KERNEL);
	CK(cuGraphNodeGetType(t.kid, &type));
	assert_int_equal(type, CU_GRAPH_NODE_TYPE_GRAPH);
	CK(cuGraphNodeGetType(t.ev_wait, &type));
	assert_int_equal(type, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
	n = 4;
	CK(cuGraphNodeGetDependencies(t.ev_rec, deps, &n));
	assert_int_equal(n, 2);
	assert_ptr_equal(deps[0], t.host);
	assert_ptr_equal(deps[1], t.kid);
	n = 4;
	memset(edges, 0xff, sizeof(edges));
	CK(cuGraphNodeGetDependencies_v2(t.ev_rec, deps, edges, &n));
	assert_int_equal(n, 2);
	assert_int_equal(edges[0].type, CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
	assert_int_equal(edges[2].from_port, 0);  /* beyond the count: zeroed */
	n = 4;
	CK(cuGraphNodeGetDependentNodes(t.cp, deps, &n));
	assert_int_equal(n, 2);
	assert_ptr_equal(deps[0], t.host);
	assert_ptr_equal(deps[1], t.kid);
	/* Parameters come back as given. */
	CK(cuGraphKernelNodeGetParams_v2(t.k_inc, &k));
	assert_ptr_equal(k.func, f_inc);
	assert_int_equal(k.blockDimX, 32);
	assert_int_equal(*(CUdeviceptr *)k.kernelParams[0], t.a);
	assert_int_equal(*(uint64_t *)k.kernelParams[1], N);
	CK(cuGraphMemsetNodeGetParams(t.ms, &m));
	assert_int_equal(m.dst, t.a);
	assert_int_equal(m.value, 2);
	assert_int_equal(m.width, N);
	CK(cuGraphMemcpyNodeGetParams(t.cp, &c));
	assert_int_equal(c.dstDevice, t.b);
	assert_int_equal(c.WidthInBytes, N * 4);
	CK(cuGraphHostNodeGetParams(t.host, &h));
	assert_ptr_equal(h.fn, order_fn);
	assert_ptr_equal(h.userData, t.order);
	CK(cuGraphEventRecordNodeGetEvent(t.ev_rec, &ev));
	assert_ptr_equal(ev, t.ev);
	/* The child node holds a copy of the child graph. */
	CK(cuGraphChildGraphNodeGetGraph(t.kid, &child));
	assert_ptr_not_equal(child, t.child);
	n = 0;
	CK(cuGraphGetNodes(child, NULL, &n));
	assert_int_equal(n, 1);
	assert_int_equal(cuGraphDestroy(child), CUDA_ERROR_INVALID_VALUE);  /* the node's */
	/* Wrong types and bad handles. */
	assert_int_equal(cuGraphKernelNodeGetParams_v2(t.ms, &k), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGraphNodeGetType((CUgraphNode)&n, &type), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphAddEmptyNode(&out, t.g, &t.ms, 1));
	deps[0] = deps[1] = t.ms;
	assert_int_equal(cuGraphAddEmptyNode(&out, t.g, deps, 2), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphDestroy(t.g));
	assert_int_equal(cuGraphNodeGetType(t.ms, &type), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphDestroy(t.child));
	down();
}

static void sg_launch_and_clone(void **state)
{
	CUgraphNode cn, nodes[8];
	CUgraphExec e, pe;
	struct built t;
	CUgraph c;
	CUstream s;
	size_t n;

	(void)state;
	up();
	build(&t);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuGraphInstantiateWithFlags(&e, t.g, 0));
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(t.b, 21, N);
	assert_int_equal(t.order[0], 1);
	/* A clone without the memset and the increment: copy a (3) to b, scale. */
	CK(cuGraphClone(&c, t.g));
	CK(cuGraphNodeFindInClone(&cn, t.ms, c));
	assert_ptr_not_equal(cn, t.ms);
	CK(cuGraphDestroyNode(cn));
	CK(cuGraphNodeFindInClone(&cn, t.k_inc, c));
	CK(cuGraphDestroyNode(cn));
	assert_int_equal(cuGraphNodeFindInClone(&cn, t.k_inc, c), CUDA_ERROR_INVALID_VALUE);
	n = 8;
	CK(cuGraphGetNodes(c, nodes, &n));
	assert_int_equal(n, 5);
	n = 8;
	CK(cuGraphGetRootNodes(c, nodes, &n));
	assert_int_equal(n, 1);   /* the copy, its dependency gone */
	CK(cuMemsetD32_v2(t.a, 3, N));
	CK(cuGraphInstantiateWithFlags(&pe, c, 0));
	CK(cuGraphLaunch(pe, s));
	CK(cuStreamSynchronize(s));
	expect_all(t.b, 21, N);
	expect_all(t.a, 3, N);
	assert_int_equal(t.order[0], 2);
	/* The original graph is unchanged by the clone's edits. */
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(t.a, 3, N);
	CK(cuGraphExecDestroy(pe));
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(c));
	CK(cuGraphDestroy(t.g));
	CK(cuGraphDestroy(t.child));
	down();
}

/* A captured stream becomes a chain of typed nodes with their parameters. */
static void sg_capture_nodes(void **state)
{
	CUgraphNode nodes[4], dep;
	CUDA_KERNEL_NODE_PARAMS k;
	CUDA_MEMSET_NODE_PARAMS m;
	CUDA_MEMCPY3D c;
	CUgraphNodeType type;
	CUdeviceptr a, b;
	uint64_t n64 = N;
	uint32_t v = 9;
	void *args[] = { &a, &v, &n64 };
	CUgraphExec e;
	CUstream s;
	CUgraph g;
	size_t n;

	(void)state;
	up();
	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuMemAlloc_v2(&b, N * 4));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuLaunchKernel(f_fill, 2, 1, 1, 64, 1, 1, 0, s, args, NULL));
	CK(cuMemcpyDtoDAsync_v2(b, a, N * 4, s));
	CK(cuMemsetD32Async(a, 1, N, s));
	CK(cuStreamEndCapture(s, &g));
	n = 4;
	CK(cuGraphGetNodes(g, nodes, &n));
	assert_int_equal(n, 3);
	CK(cuGraphNodeGetType(nodes[1], &type));
	assert_int_equal(type, CU_GRAPH_NODE_TYPE_MEMCPY);
	n = 1;
	CK(cuGraphNodeGetDependencies(nodes[2], &dep, &n));
	assert_int_equal(n, 1);
	assert_ptr_equal(dep, nodes[1]);
	CK(cuGraphKernelNodeGetParams_v2(nodes[0], &k));
	assert_ptr_equal(k.func, f_fill);
	assert_int_equal(k.gridDimX, 2);
	assert_int_equal(k.blockDimX, 64);
	assert_int_equal(*(uint32_t *)k.kernelParams[1], 9);
	CK(cuGraphMemcpyNodeGetParams(nodes[1], &c));
	assert_int_equal(c.WidthInBytes, N * 4);
	assert_int_equal(c.dstDevice, b);
	CK(cuGraphMemsetNodeGetParams(nodes[2], &m));
	assert_int_equal(m.width, N);
	assert_int_equal(m.elementSize, 4);
	/* Re-adding a node from the parameters read back runs the same. */
	CK(cuGraphAddKernelNode_v2(&dep, g, &nodes[2], 1, &k));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(b, 9, N);
	expect_all(a, 9, N);
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	down();
}

static void sg_exec_updates(void **state)
{
	CUDA_MEMSET_NODE_PARAMS ms = { .value = 4, .elementSize = 4, .width = N, .height = 1 };
	CUDA_KERNEL_NODE_PARAMS scale;
	CUDA_HOST_NODE_PARAMS hp;
	CUgraphExecUpdateResultInfo info;
	CUDA_GRAPH_INSTANTIATE_PARAMS ip = { 0 };
	CUgraph child2, other;
	CUgraphNode kn, x;
	CUDA_MEMCPY3D cp;
	CUdeviceptr c3;
	struct built t, u;
	unsigned en = 7;
	cuuint64_t flags;
	uint32_t k2 = 10;
	int order2[4] = { 0 };
	CUgraphExec e;
	CUstream s;

	(void)state;
	up();
	build(&t);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	ip.hUploadStream = s;
	CK(cuGraphInstantiateWithParams(&e, t.g, &ip));
	assert_int_equal(ip.result_out, CUDA_GRAPH_INSTANTIATE_SUCCESS);
	CK(cuGraphExecGetFlags(e, &flags));
	assert_int_equal(flags, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
	/* memset value 4, host function to another array, copy into c3. */
	ms.dst = t.a;
	CK(cuGraphExecMemsetNodeSetParams(e, t.ms, &ms, pctx));
	hp = (CUDA_HOST_NODE_PARAMS){ order_fn, order2 };
	CK(cuGraphExecHostNodeSetParams(e, t.host, &hp));
	CK(cuMemAlloc_v2(&c3, N * 4));
	cp = copy_1d(c3, t.a, N * 4);
	CK(cuGraphExecMemcpyNodeSetParams(e, t.cp, &cp, pctx));
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(c3, 5, N);
	assert_int_equal(order2[0], 1);
	assert_int_equal(t.order[0], 0);
	/* Child graph with another factor; the kernel node disabled. */
	CK(cuGraphCreate(&child2, 0));
	t.scale_args[0] = &c3;
	t.scale_args[1] = &k2;
	scale = kp(f_scale, t.scale_args);
	CK(cuGraphAddKernelNode_v2(&kn, child2, NULL, 0, &scale));
	CK(cuGraphExecChildGraphNodeSetParams(e, t.kid, child2));
	CK(cuGraphNodeSetEnabled(e, t.k_inc, 0));
	CK(cuGraphNodeGetEnabled(e, t.k_inc, &en));
	assert_int_equal(en, 0);
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(c3, 40, N);
	CK(cuGraphNodeSetEnabled(e, t.k_inc, 1));
	/* A kernel node's new parameters. */
	t.inc_args[0] = &c3;
	scale = kp(f_inc, t.inc_args);
	CK(cuGraphExecKernelNodeSetParams_v2(e, t.k_inc, &scale));
	CK(cuMemsetD32_v2(c3, 0, N));
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(t.a, 4, N);
	expect_all(c3, 40, N);    /* copy of a (4) over c3 after its increment, x10 */
	/* Whole-graph update from a graph of the same shape. */
	build(&u);
	CK(cuGraphExecUpdate_v2(e, u.g, &info));
	assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(u.b, 21, N);
	assert_int_equal(u.order[0], 1);
	/* ...and not from one of another shape. */
	CK(cuGraphCreate(&other, 0));
	CK(cuGraphAddEmptyNode(&x, other, NULL, 0));
	assert_int_equal(cuGraphExecUpdate_v2(e, other, &info),
			 CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
	/* Updates of the wrong node type, or of a node the graph lacks. */
	assert_int_equal(cuGraphExecHostNodeSetParams(e, t.ms, &hp), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGraphExecHostNodeSetParams(e, u.host, &hp), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGraphNodeSetEnabled(e, t.host, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(other));
	CK(cuGraphDestroy(child2));
	CK(cuGraphDestroy(t.g));
	CK(cuGraphDestroy(t.child));
	CK(cuGraphDestroy(u.g));
	CK(cuGraphDestroy(u.child));
	down();
}

/* Allocation nodes: the memory exists from the node on; no clone. */
static void sg_memory_nodes(void **state)
{
	CUDA_MEM_ALLOC_NODE_PARAMS ap = { 0 };
	CUDA_KERNEL_NODE_PARAMS fill;
	CUgraphNode an, kn, cn, fn;
	CUDA_MEMCPY3D cp;
	CUdeviceptr out;
	uint64_t n = N;
	uint32_t v = 6;
	void *args[3] = { &ap.dptr, &v, &n };
	CUgraphExec e;
	CUstream s;
	CUgraph g, c;

	(void)state;
	up();
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc_v2(&out, N * 4));
	CK(cuGraphCreate(&g, 0));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.bytesize = N * 4;
	CK(cuGraphAddMemAllocNode(&an, g, NULL, 0, &ap));
	assert_true(ap.dptr != 0);
	fill = kp(f_fill, args);
	CK(cuGraphAddKernelNode_v2(&kn, g, &an, 1, &fill));
	cp = copy_1d(out, ap.dptr, N * 4);
	CK(cuGraphAddMemcpyNode(&cn, g, &kn, 1, &cp, pctx));
	CK(cuGraphAddMemFreeNode(&fn, g, &cn, 1, ap.dptr));
	assert_int_equal(cuGraphClone(&c, g), CUDA_ERROR_NOT_SUPPORTED);
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	expect_all(out, 6, N);
	/* Device launch: kernel, copy and memset nodes only. */
	assert_int_equal(cuGraphInstantiateWithFlags(&e, g,
						     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphDestroyNode(fn));
	CK(cuGraphDestroyNode(an));
	CK(cuGraphInstantiateWithFlags(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH));
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	down();
}

/* A launch of an executable follows its previous launch, on any stream. */
static void sg_launch_order_across_streams(void **state)
{
	CUDA_KERNEL_NODE_PARAMS inc;
	CUgraphNode kn;
	CUdeviceptr a;
	uint64_t n = N;
	void *args[2] = { &a, &n };
	CUgraphExec e;
	CUstream s1, s2;
	CUgraph g;

	(void)state;
	up();
	CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc_v2(&a, N * 4));
	CK(cuMemsetD32_v2(a, 0, N));
	CK(cuGraphCreate(&g, 0));
	inc = kp(f_inc, args);
	CK(cuGraphAddKernelNode_v2(&kn, g, NULL, 0, &inc));
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	CK(cuStreamWaitValue32_v2(s1, DP(&gates[0]), 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuGraphLaunch(e, s1));
	CK(cuGraphLaunch(e, s2));
	assert_int_equal(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
	expect_all(a, 0, N);
	__atomic_store_n(&gates[0], 1, __ATOMIC_RELEASE);
	CK(cuStreamSynchronize(s2));
	expect_all(a, 2, N);
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sg_structure),
	cmocka_unit_test(sg_launch_and_clone),
	cmocka_unit_test(sg_capture_nodes),
	cmocka_unit_test(sg_exec_updates),
	cmocka_unit_test(sg_memory_nodes),
	cmocka_unit_test(sg_launch_order_across_streams),
};

TU_MAIN(tests)
