/*
 * Graph nodes of the simulated CUDA driver by type: kernel, memcpy,
 * memset, host, child graph, event record and wait, memory allocation and
 * free nodes; their add, get and set calls, and what each becomes in an
 * executable graph (sc_node_ops).
 *
 * Design: a node holds the operation it runs, in the form a stream runs
 * it (struct sc_op), built and validated when the node is added or set,
 * plus the parameters as the application gave them where the get calls
 * must return them (copies, memsets). A captured operation becomes the
 * node of its type (sc_node_from_op); stream memory operations become
 * batch-memop nodes. Allocation nodes allocate when they are added (the
 * address is the node's output) and free when the node goes: the memory
 * is the graph's for its lifetime, and allocation and free nodes only
 * order work when the graph runs. Events of event nodes are recorded or
 * waited for when the graph runs, like cuEventRecord/cuStreamWaitEvent on
 * the launch stream.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Points the node's argv at its kernel's parameter values. */
static void sc_node_argv(struct CUgraphNode_st *n)
{
	const struct sf_kernel_def *k = n->op.u.kernel.def;

	memset(n->argv, 0, sizeof(n->argv));
	for (unsigned i = 0; k && i < k->nparams && i < 4; i++)
		n->argv[i] = n->op.u.kernel.params + k->offset[i];
}

/* The CUDA_MEMCPY3D of a captured copy: both sides by address (unified). */
static void sc_copy_desc(const struct sf_region *r, CUDA_MEMCPY3D *c)
{
	memset(c, 0, sizeof(*c));
	c->srcMemoryType = CU_MEMORYTYPE_UNIFIED;
	c->srcDevice = (CUdeviceptr)(uintptr_t)r->src;
	c->srcPitch = r->spitch;
	c->srcHeight = r->spitch ? r->sslice / r->spitch : 0;
	c->dstMemoryType = CU_MEMORYTYPE_UNIFIED;
	c->dstDevice = (CUdeviceptr)(uintptr_t)r->dst;
	c->dstPitch = r->dpitch;
	c->dstHeight = r->dpitch ? r->dslice / r->dpitch : 0;
	c->WidthInBytes = r->width;
	c->Height = r->height;
	c->Depth = r->depth;
}

/*
 * Gives @n (a fresh node) the type and parameters of captured @op, which
 * owns nothing. 0 or -EINVAL (an operation graphs cannot hold).
 */
int sc_node_from_op(struct CUgraphNode_st *n, const struct sc_op *op)
{
	n->op = *op;
	switch (op->kind) {
	case SC_OP_KERNEL:
		n->type = CU_GRAPH_NODE_TYPE_KERNEL;
		sc_node_argv(n);
		return 0;
	case SC_OP_COPY:
		n->type = CU_GRAPH_NODE_TYPE_MEMCPY;
		sc_copy_desc(&op->u.copy.r, &n->copy);
		return 0;
	case SC_OP_MEMSET:
		n->type = CU_GRAPH_NODE_TYPE_MEMSET;
		n->ms = (CUDA_MEMSET_NODE_PARAMS){ .dst = (CUdeviceptr)(uintptr_t)op->u.memset.dst,
						   .value = op->u.memset.value,
						   .elementSize = op->u.memset.elem,
						   .width = op->u.memset.n, .height = 1 };
		return 0;
	case SC_OP_HOST:
		n->type = CU_GRAPH_NODE_TYPE_HOST;
		return 0;
	case SC_OP_WRITE32:
	case SC_OP_WAIT32:
		n->type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Frees what @n owns: its child graph, its allocation. */
void sc_node_fini(struct CUgraphNode_st *n)
{
	void *owner = NULL, *p = (void *)(uintptr_t)n->dptr;

	if (n->type == CU_GRAPH_NODE_TYPE_GRAPH) {
		sc_graph_free(n->child);
		n->child = NULL;
	}
	if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && p &&
	    sf_mem_owner(p, SF_MEM_DEVICE, &owner) == 0 && owner == n)
		sf_mem_free(p, SF_MEM_DEVICE, NULL);
}

/* Registers child graph @g of a node. */
static int sc_child_register(struct CUgraph_st *g)
{
	int rc = sc_handle_add(g, SC_H_GRAPH, NULL);

	for (size_t i = 0; i < g->n && rc == 0; i++)
		if (g->nodes[i]->type == CU_GRAPH_NODE_TYPE_GRAPH)
			rc = sc_child_register(g->nodes[i]->child);
	return rc;
}

/* Copies @src's parameters into @dst (a clone of it); child graphs deep. */
int sc_node_copy_params(struct CUgraphNode_st *dst, const struct CUgraphNode_st *src)
{
	int rc;

	dst->type = src->type;
	dst->op = src->op;
	dst->copy = src->copy;
	dst->ms = src->ms;
	dst->event = src->event;
	if (dst->type == CU_GRAPH_NODE_TYPE_KERNEL)
		sc_node_argv(dst);
	if (dst->type != CU_GRAPH_NODE_TYPE_GRAPH)
		return 0;
	rc = sc_graph_clone(src->child, &dst->child, dst);
	if (rc == 0 && (rc = sc_child_register(dst->child)) < 0) {
		sc_graph_free(dst->child);
		dst->child = NULL;
	}
	if (rc < 0)
		dst->type = CU_GRAPH_NODE_TYPE_EMPTY;
	return rc;
}

static int sc_xop_push(struct sc_xop **v, size_t *len, size_t *cap, const struct sc_xop *x)
{
	if (*len == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct sc_xop *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*len)++] = *x;
	return 0;
}

/*
 * Appends what @n runs to the operations (*@v, *@len of *@cap), marked as
 * coming from top-level node @src: nothing for empty and memory nodes, one
 * operation per memset row, a child graph's operations in its topological
 * order. 0, -EINVAL (a cycle in a child), -ENOMEM.
 */
int sc_node_ops(const struct CUgraphNode_st *n, const struct CUgraphNode_st *src,
		struct sc_xop **v, size_t *len, size_t *cap)
{
	struct sc_xop x = { .type = n->type, .src = src, .enabled = true };
	struct CUgraphNode_st **order;
	int rc = 0;

	switch (n->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
	case CU_GRAPH_NODE_TYPE_MEMCPY:
	case CU_GRAPH_NODE_TYPE_HOST:
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		x.op = n->op;
		return sc_xop_push(v, len, cap, &x);
	case CU_GRAPH_NODE_TYPE_MEMSET:
		x.op.kind = SC_OP_MEMSET;
		x.op.u.memset.value = n->ms.value;
		x.op.u.memset.elem = n->ms.elementSize;
		x.op.u.memset.n = n->ms.width;
		for (size_t y = 0; y < n->ms.height && rc == 0; y++) {
			x.op.u.memset.dst = (uint8_t *)(uintptr_t)(n->ms.dst + y * n->ms.pitch);
			rc = sc_xop_push(v, len, cap, &x);
		}
		return rc;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		x.event = n->event;
		return sc_xop_push(v, len, cap, &x);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		rc = sc_graph_topo(n->child, &order);
		if (rc < 0)
			return rc;
		for (size_t i = 0; rc == 0 && i < n->child->n; i++)
			rc = sc_node_ops(order[i], src, v, len, cap);
		free(order);
		return rc;
	default:
		return 0;
	}
}

/* The checks every "cuGraphAdd*Node" call starts with: the driver, @ph, graph @g. */
static CUresult sc_add_begin(CUgraphNode *ph, CUgraph g)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	return ph && sc_handle_valid(g, SC_H_GRAPH) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- kernel nodes ---- */

static int sc_kernel_node_op(const CUDA_KERNEL_NODE_PARAMS *p, struct sc_op *op)
{
	unsigned dims[7];
	CUfunction f;

	if (!p)
		return -EINVAL;
	f = p->func ? p->func : (CUfunction)(void *)p->kern;
	dims[0] = p->gridDimX;
	dims[1] = p->gridDimY;
	dims[2] = p->gridDimZ;
	dims[3] = p->blockDimX;
	dims[4] = p->blockDimY;
	dims[5] = p->blockDimZ;
	dims[6] = p->sharedMemBytes;
	return sc_kernel_op(f, dims, p->kernelParams, p->extra, op);
}

SC_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
					   const CUgraphNode *dependencies,
					   size_t numDependencies,
					   const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	struct sc_op op;
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	CUgraph g = hGraph;
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	rc = sc_kernel_node_op(nodeParams, &op);
	if (rc == 0)
		rc = sc_node_new(g, CU_GRAPH_NODE_TYPE_KERNEL, dependencies, numDependencies, &n);
	if (rc == 0) {
		n->op = op;
		sc_node_argv(n);
		*phGraphNode = n;
	}
	return sc_result(rc == -EBADF ? -EINVAL : rc);
}

/*
 * The node of a get or set call: @h, a live node of @type, with @param
 * given. CUDA_SUCCESS (*@out set) or the call's error.
 */
static CUresult sc_node_of(CUgraphNode h, int type, const void *param,
			   struct CUgraphNode_st **out)
{
	struct CUgraphNode_st *n = NULL;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	n = sc_node_get(h);
	if (!n || n->type != type || !param)
		return CUDA_ERROR_INVALID_VALUE;
	*out = n;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
						 CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	const void *f;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_KERNEL, nodeParams, &n);

	if (r != CUDA_SUCCESS)
		return r;
	f = n->op.u.kernel.func;
	memset(nodeParams, 0, sizeof(*nodeParams));
	if (sc_handle_valid(f, SC_H_KERNEL))
		nodeParams->kern = (CUkernel)(uintptr_t)f;
	else
		nodeParams->func = (CUfunction)(uintptr_t)f;
	nodeParams->gridDimX = n->op.u.kernel.grid[0];
	nodeParams->gridDimY = n->op.u.kernel.grid[1];
	nodeParams->gridDimZ = n->op.u.kernel.grid[2];
	nodeParams->blockDimX = n->op.u.kernel.block[0];
	nodeParams->blockDimY = n->op.u.kernel.block[1];
	nodeParams->blockDimZ = n->op.u.kernel.block[2];
	nodeParams->sharedMemBytes = n->op.u.kernel.shmem;
	nodeParams->kernelParams = n->argv;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
						 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	struct sc_op op;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_KERNEL, hNode, &n);
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	rc = sc_kernel_node_op(nodeParams, &op);
	if (rc == 0) {
		n->op = op;
		sc_node_argv(n);
	}
	return sc_result(rc == -EBADF ? -EINVAL : rc);
}

/* ---- memcpy nodes ---- */

static int sc_memcpy_node_op(const CUDA_MEMCPY3D *c, struct sc_op *op)
{
	memset(op, 0, sizeof(*op));
	op->kind = SC_OP_COPY;
	return sc_copy3d_region(c, &op->u.copy.r);
}

SC_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					const CUgraphNode *dependencies, size_t numDependencies,
					const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	struct CUgraphNode_st *n = NULL;
	struct sc_op op;
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	CUgraph g = hGraph;
	int rc;

	(void)ctx;
	if (r != CUDA_SUCCESS)
		return r;
	rc = sc_memcpy_node_op(copyParams, &op);
	if (rc == 0)
		rc = sc_node_new(g, CU_GRAPH_NODE_TYPE_MEMCPY, dependencies, numDependencies, &n);
	if (rc == 0) {
		n->op = op;
		n->copy = *copyParams;
		*phGraphNode = n;
	}
	return sc_result(rc);
}

SC_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, nodeParams, &n);

	if (r != CUDA_SUCCESS)
		return r;
	*nodeParams = n->copy;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	struct sc_op op;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, hNode, &n);
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	rc = sc_memcpy_node_op(nodeParams, &op);
	if (rc == 0) {
		n->op = op;
		n->copy = *nodeParams;
	}
	return sc_result(rc);
}

/* ---- memset nodes ---- */

static int sc_memset_check(const CUDA_MEMSET_NODE_PARAMS *p)
{
	size_t row, span;
	uint32_t e;

	if (!p)
		return -EINVAL;
	e = p->elementSize;
	if ((e != 1 && e != 2 && e != 4) || !p->width || !p->height || (p->dst & (e - 1)))
		return -EINVAL;
	if (p->width > SIZE_MAX / e)
		return -EINVAL;
	row = p->width * e;
	if (p->height > 1 && p->pitch < row)
		return -EINVAL;
	span = sf_span(row, p->height, 1, p->height > 1 ? p->pitch : row, 0);
	return sf_mem_accessible((void *)(uintptr_t)p->dst, span) ? 0 : -EINVAL;
}

SC_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					const CUgraphNode *dependencies, size_t numDependencies,
					const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	CUgraph g = hGraph;
	int rc;

	(void)ctx;
	if (r != CUDA_SUCCESS)
		return r;
	rc = sc_memset_check(memsetParams);
	if (rc == 0)
		rc = sc_node_new(g, CU_GRAPH_NODE_TYPE_MEMSET, dependencies, numDependencies, &n);
	if (rc == 0) {
		n->ms = *memsetParams;
		*phGraphNode = n;
	}
	return sc_result(rc);
}

SC_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode,
					      CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_MEMSET, nodeParams, &n);

	if (r != CUDA_SUCCESS)
		return r;
	*nodeParams = n->ms;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode,
					      const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_MEMSET, hNode, &n);
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	rc = sc_memset_check(nodeParams);
	if (rc == 0)
		n->ms = *nodeParams;
	return sc_result(rc);
}

/* ---- host nodes ---- */

SC_EXPORT CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				      const CUgraphNode *dependencies, size_t numDependencies,
				      const CUDA_HOST_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	CUgraph g = hGraph;
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	if (!nodeParams || !nodeParams->fn)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_node_new(g, CU_GRAPH_NODE_TYPE_HOST, dependencies, numDependencies, &n);
	if (rc == 0) {
		n->op.kind = SC_OP_HOST;
		n->op.u.host.fn = nodeParams->fn;
		n->op.u.host.data = nodeParams->userData;
		*phGraphNode = n;
	}
	return sc_result(rc);
}

SC_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_HOST, nodeParams, &n);

	if (r != CUDA_SUCCESS)
		return r;
	nodeParams->fn = n->op.u.host.fn;
	nodeParams->userData = n->op.u.host.data;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
					    const CUDA_HOST_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_HOST, nodeParams, &n);

	if (r != CUDA_SUCCESS)
		return r;
	if (!nodeParams->fn)
		return CUDA_ERROR_INVALID_VALUE;
	n->op.u.host.fn = nodeParams->fn;
	n->op.u.host.data = nodeParams->userData;
	return CUDA_SUCCESS;
}

/* ---- child graph nodes ---- */

/* The node embeds a copy of @childGraph (taken now, like the driver's). */
SC_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					    const CUgraphNode *dependencies,
					    size_t numDependencies, CUgraph childGraph)
{
	struct CUgraphNode_st *n, tmp = { .type = CU_GRAPH_NODE_TYPE_GRAPH };
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	CUgraph g = hGraph;
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	if (!sc_handle_valid(childGraph, SC_H_GRAPH) || childGraph == hGraph)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_node_new(g, CU_GRAPH_NODE_TYPE_GRAPH, dependencies, numDependencies, &n);
	if (rc < 0)
		return sc_result(rc);
	tmp.child = childGraph;
	rc = sc_node_copy_params(n, &tmp);
	if (rc < 0) {
		cuGraphDestroyNode(n);
		return sc_result(rc == -EOPNOTSUPP ? -EINVAL : rc);
	}
	*phGraphNode = n;
	return CUDA_SUCCESS;
}

/* The embedded graph, owned by the node (not to be destroyed). */
SC_EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, CU_GRAPH_NODE_TYPE_GRAPH, phGraph, &n);

	if (r != CUDA_SUCCESS)
		return r;
	*phGraph = n->child;
	return CUDA_SUCCESS;
}

/* ---- event nodes ---- */

static CUresult sc_add_event_node(CUgraphNode *ph, CUgraph hGraph, const CUgraphNode *deps,
				  size_t ndeps, CUevent ev, int type)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_add_begin(ph, hGraph);
	CUgraph g = hGraph;
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	if (!sc_handle_valid(ev, SC_H_EVENT))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_node_new(g, type, deps, ndeps, &n);
	if (rc == 0) {
		n->event = ev;
		*ph = n;
	}
	return sc_result(rc);
}

SC_EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					     const CUgraphNode *dependencies,
					     size_t numDependencies, CUevent event)
{
	return sc_add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event,
				 CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

SC_EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					   const CUgraphNode *dependencies,
					   size_t numDependencies, CUevent event)
{
	return sc_add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event,
				 CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

static CUresult sc_node_event(CUgraphNode hNode, CUevent *out, int type)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_node_of(hNode, type, out, &n);

	if (r == CUDA_SUCCESS)
		*out = n->event;
	return r;
}

SC_EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
	return sc_node_event(hNode, event_out, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

SC_EXPORT CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
	return sc_node_event(hNode, event_out, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

/* ---- memory nodes ---- */

SC_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					  const CUgraphNode *dependencies, size_t numDependencies,
					  CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	struct CUgraphNode_st *n = NULL;
	void *p = NULL;
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	if (!nodeParams || !nodeParams->bytesize ||
	    nodeParams->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    nodeParams->poolProps.location.id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_node_new(hGraph, CU_GRAPH_NODE_TYPE_MEM_ALLOC, dependencies, numDependencies, &n);
	if (rc < 0)
		return sc_result(rc);
	rc = sf_mem_alloc(nodeParams->bytesize, 0, SF_MEM_DEVICE, n, &p);
	if (rc < 0) {
		cuGraphDestroyNode(n);
		return sc_result(rc);
	}
	n->dptr = (CUdeviceptr)(uintptr_t)p;
	n->bytes = nodeParams->bytesize;
	nodeParams->dptr = n->dptr;
	*phGraphNode = n;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					 const CUgraphNode *dependencies, size_t numDependencies,
					 CUdeviceptr dptr)
{
	struct CUgraphNode_st *n = NULL;
	CUresult r = sc_add_begin(phGraphNode, hGraph);
	CUgraph g = hGraph;
	int rc;

	if (r != CUDA_SUCCESS)
		return r;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_node_new(g, CU_GRAPH_NODE_TYPE_MEM_FREE, dependencies, numDependencies, &n);
	if (rc == 0) {
		n->dptr = dptr;
		*phGraphNode = n;
	}
	return sc_result(rc);
}
