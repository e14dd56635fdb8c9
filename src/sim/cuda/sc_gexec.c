/*
 * Executable graphs of the simulated CUDA driver: instantiation, launch,
 * and the updates of an executable graph (per node, whole-graph update,
 * enabling and disabling nodes).
 *
 * Design: instantiation flattens the graph, in a topological order (ties
 * in creation order) with child graphs expanded in place, into the list
 * of operations a launch submits to its stream in that order; each
 * operation remembers the top-level node it came from, which is how the
 * per-node updates find it. The executable is a private copy: the graph
 * may change or go. Because one stream runs a launch, the launch is a
 * linearisation of the DAG (every dependency kept, some added). A launch
 * follows the previous launch of the same executable even on another
 * stream, as the driver orders them. cuGraphExecUpdate pairs the nodes of
 * the new graph with the executable's by topological position and
 * requires the same shape: node types, dependency counts and positions,
 * child graphs alike (the driver's pairing follows edges; for graphs of
 * the same construction both agree).
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sc_shape {
	uint64_t *v;
	size_t n, cap;
};

static int sc_shape_push(struct sc_shape *s, uint64_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

/* Appends @g's shape: per node in topological order, type, deps and their positions. */
static int sc_shape_of(const struct CUgraph_st *g, struct sc_shape *s)
{
	struct CUgraphNode_st **order;
	int rc = sc_graph_topo(g, &order);

	if (rc < 0)
		return rc;
	rc = sc_shape_push(s, g->n);
	for (size_t i = 0; i < g->n && rc == 0; i++) {
		const struct CUgraphNode_st *n = order[i];

		rc = sc_shape_push(s, ((uint64_t)n->type << 32) | n->ndeps);
		for (size_t d = 0; d < n->ndeps && rc == 0; d++) {
			size_t j;

			for (j = 0; j < i && order[j] != n->deps[d]; j++)
				;
			rc = sc_shape_push(s, j);
		}
		if (rc == 0 && n->type == CU_GRAPH_NODE_TYPE_GRAPH)
			rc = sc_shape_of(n->child, s);
	}
	free(order);
	return rc;
}

/* The operations of @g (*@v, *@n); 0, -EINVAL (a cycle), -ENOMEM. */
static int sc_graph_ops(const struct CUgraph_st *g, struct sc_xop **v, size_t *n)
{
	struct CUgraphNode_st **order;
	size_t cap = 0;
	int rc = sc_graph_topo(g, &order);

	*v = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < g->n && rc == 0; i++)
		rc = sc_node_ops(order[i], order[i], v, n, &cap);
	free(order);
	if (rc < 0) {
		free(*v);
		*v = NULL;
	}
	return rc;
}

/* Whether @g holds only what a device-launchable graph may hold. */
static bool sc_device_launchable(const struct CUgraph_st *g)
{
	for (size_t i = 0; i < g->n; i++) {
		int t = g->nodes[i]->type;

		if (t == CU_GRAPH_NODE_TYPE_GRAPH && !sc_device_launchable(g->nodes[i]->child))
			return false;
		if (t != CU_GRAPH_NODE_TYPE_KERNEL && t != CU_GRAPH_NODE_TYPE_MEMCPY &&
		    t != CU_GRAPH_NODE_TYPE_MEMSET && t != CU_GRAPH_NODE_TYPE_GRAPH)
			return false;
	}
	return g->n != 0;
}

static int sc_instantiate(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
	struct CUctx_st *ctx;
	struct CUgraphExec_st *e;
	struct sc_shape shape = { 0 };
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return rc;
	if (!out || !sc_handle_valid(g, SC_H_GRAPH) || (flags & ~0xfull))
		return -EINVAL;
	if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) &&
	    ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) || !sc_device_launchable(g)))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ctx = ctx;
	e->flags = flags;
	rc = sc_graph_ops(g, &e->v, &e->n);
	if (rc == 0)
		rc = sc_shape_of(g, &shape);
	e->shape = shape.v;
	e->nshape = shape.n;
	if (rc == 0)
		rc = sc_handle_add(e, SC_H_EXEC, ctx);
	if (rc < 0) {
		sc_exec_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

SC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
					       unsigned long long flags)
{
	return sc_result(sc_instantiate(phGraphExec, hGraph, flags));
}

/* With CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD the upload stream must be valid. */
static CUresult sc_instantiate_params(CUgraphExec *ph, CUgraph g,
				      CUDA_GRAPH_INSTANTIATE_PARAMS *p, bool pt)
{
	struct CUstream_st *s;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	p->hErrNode_out = NULL;
	if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
		rc = sc_stream_acquire(p->hUploadStream, pt, &s);
		if (rc < 0) {
			p->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
			return sc_result(rc);
		}
		sc_stream_release(s);
	}
	rc = sc_instantiate(ph, g, p->flags);
	p->result_out = rc == 0 ? CUDA_GRAPH_INSTANTIATE_SUCCESS :
			rc == -EINVAL && sc_handle_valid(g, SC_H_GRAPH) ?
				CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE :
				CUDA_GRAPH_INSTANTIATE_ERROR;
	return sc_result(rc);
}

SC_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
						CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return sc_instantiate_params(phGraphExec, hGraph, instantiateParams, false);
}

SC_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
						     CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	return sc_instantiate_params(phGraphExec, hGraph, params, true);
}

/* Frees executable graph @e (already unregistered). */
void sc_exec_free(struct CUgraphExec_st *e)
{
	free(e->v);
	free(e->shape);
	free(e);
}

SC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hGraphExec, SC_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	sc_exec_free(hGraphExec);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_valid(hGraphExec, SC_H_EXEC) || !flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = hGraphExec->flags;
	return CUDA_SUCCESS;
}

/* An event node of a launch: the stream's own call, with the stream unlocked. */
static int sc_exec_event(const struct sc_xop *x, CUstream h, bool pt, struct CUstream_st **s)
{
	CUresult r;
	int rc;

	sc_stream_release(*s);
	if (x->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
		r = pt ? cuEventRecord_ptsz(x->event, h) : cuEventRecord(x->event, h);
	else
		r = pt ? cuStreamWaitEvent_ptsz(h, x->event, 0) : cuStreamWaitEvent(h, x->event, 0);
	rc = sc_stream_acquire(h, pt, s);
	if (rc < 0)
		return rc;
	return r == CUDA_SUCCESS ? 0 : r == CUDA_ERROR_INVALID_HANDLE ? -EBADF : -EINVAL;
}

/* Makes @s wait for @e's previous launch when that ran on another queue. */
static int sc_exec_follow(struct CUgraphExec_st *e, struct CUstream_st *s)
{
	int rc;

	if (s->cap || !e->last_q || e->last_q == s->q || sf_hwq_done(e->last_q, e->last_seq))
		return 0;
	rc = sc_stream_prepare(s);
	return rc < 0 ? rc : sc_wait_cmd(s, e->last_q, e->last_seq);
}

static CUresult sc_graph_launch(CUgraphExec e, CUstream h, bool pt, bool upload)
{
	struct CUstream_st *s;
	size_t i;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_valid(e, SC_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	if (!upload)
		rc = sc_exec_follow(e, s);
	for (i = 0; !upload && rc == 0 && i < e->n; i++) {
		const struct sc_xop *x = &e->v[i];
		struct sc_op op = x->op;

		if (!x->enabled)
			continue;
		if (x->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ||
		    x->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT) {
			rc = sc_exec_event(x, h, pt, &s);
			if (rc == -EBADF && !sc_handle_valid(x->event, SC_H_EVENT))
				return CUDA_ERROR_INVALID_HANDLE;
			if (rc < 0 && !s)
				return sc_result(rc);
			continue;
		}
		rc = sc_stream_op(s, &op, NULL);
	}
	if (!upload && rc == 0 && !s->cap && s->last) {
		e->last_q = s->q;
		e->last_seq = s->last;
	}
	sc_stream_release(s);
	return sc_result(rc);
}

/* Submits the operations to the stream, in order. */
SC_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, false, false);
}

SC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, true, false);
}

/* Nothing to upload: validates and returns (ordered trivially). */
SC_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, false, true);
}

SC_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, true, true);
}

/* ---- updates ---- */

/*
 * Replaces the operations of @e that came from node @src with @ops (@n
 * of them, types checked): the count must match. 0 or -EINVAL.
 */
static int sc_exec_replace(struct CUgraphExec_st *e, const struct CUgraphNode_st *src,
			   const struct sc_xop *ops, size_t n)
{
	size_t i, first = e->n, count = 0;

	for (i = 0; i < e->n; i++) {
		if (e->v[i].src != src)
			continue;
		if (first == e->n)
			first = i;
		count++;
	}
	if (first == e->n || count != n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (e->v[first + i].type != ops[i].type)
			return -EINVAL;
	for (i = 0; i < n; i++) {
		e->v[first + i].op = ops[i].op;
		e->v[first + i].event = ops[i].event;
	}
	return 0;
}

/*
 * A per-node update: @apply validates @params into a scratch copy of node
 * @hNode (of the instantiated graph, type @type), whose operations then
 * replace those the node put into @e. 0 or -EINVAL.
 */
static int sc_exec_node_update(CUgraphExec e, CUgraphNode hNode, int type,
			       int (*apply)(struct CUgraphNode_st *tmp, const void *p),
			       const void *params)
{
	struct CUgraphNode_st *n, tmp;
	struct sc_xop *ops = NULL;
	size_t len = 0, cap = 0;
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	n = sc_node_get(hNode);
	if (!sc_handle_valid(e, SC_H_EXEC) || !n || n->type != type || !params)
		return -EINVAL;
	tmp = *n;
	rc = apply(&tmp, params);
	if (rc == 0)
		rc = sc_node_ops(&tmp, n, &ops, &len, &cap);
	if (rc == 0)
		rc = sc_exec_replace(e, n, ops, len);
	free(ops);
	return rc;
}

static int sc_apply_kernel(struct CUgraphNode_st *tmp, const void *p)
{
	const CUDA_KERNEL_NODE_PARAMS *k = p;
	const unsigned dims[7] = { k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX,
				   k->blockDimY, k->blockDimZ, k->sharedMemBytes };
	CUfunction f = k->func ? k->func : (CUfunction)(void *)k->kern;

	return sc_kernel_op(f, dims, k->kernelParams, k->extra, &tmp->op) == 0 ? 0 : -EINVAL;
}

static int sc_apply_memcpy(struct CUgraphNode_st *tmp, const void *p)
{
	memset(&tmp->op, 0, sizeof(tmp->op));
	tmp->op.kind = SC_OP_COPY;
	return sc_copy3d_region(p, &tmp->op.u.copy.r);
}

/* Address and value may change; a 1D memset its width too (driver rules). */
static int sc_apply_memset(struct CUgraphNode_st *tmp, const void *p)
{
	const CUDA_MEMSET_NODE_PARAMS *m = p;
	size_t row = m->width * m->elementSize;

	if (m->elementSize != tmp->ms.elementSize || m->height != tmp->ms.height ||
	    (m->height > 1 && (m->width != tmp->ms.width || m->pitch < row)) || !m->width ||
	    (m->dst & (m->elementSize - 1)))
		return -EINVAL;
	if (!sf_mem_accessible((void *)(uintptr_t)m->dst, (m->height - 1) * m->pitch + row))
		return -EINVAL;
	tmp->ms = *m;
	return 0;
}

static int sc_apply_host(struct CUgraphNode_st *tmp, const void *p)
{
	const CUDA_HOST_NODE_PARAMS *h = p;

	if (!h->fn)
		return -EINVAL;
	tmp->op.u.host.fn = h->fn;
	tmp->op.u.host.data = h->userData;
	return 0;
}

/* The new child graph must have the shape of the one instantiated. */
static int sc_apply_child(struct CUgraphNode_st *tmp, const void *p)
{
	CUgraph g = (CUgraph)(uintptr_t)p;
	struct sc_shape a = { 0 }, b = { 0 };
	int rc;

	if (!sc_handle_valid(g, SC_H_GRAPH))
		return -EINVAL;
	rc = sc_shape_of(g, &a);
	if (rc == 0)
		rc = sc_shape_of(tmp->child, &b);
	if (rc == 0 && (a.n != b.n || memcmp(a.v, b.v, a.n * sizeof(a.v[0]))))
		rc = -EINVAL;
	free(a.v);
	free(b.v);
	if (rc == 0)
		tmp->child = g;         /* borrowed by the scratch node */
	return rc;
}

SC_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
						     const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_KERNEL,
					     sc_apply_kernel, nodeParams));
}

SC_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						  const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	(void)ctx;
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMCPY,
					     sc_apply_memcpy, copyParams));
}

SC_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						  const CUDA_MEMSET_NODE_PARAMS *memsetParams,
						  CUcontext ctx)
{
	(void)ctx;
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMSET,
					     sc_apply_memset, memsetParams));
}

SC_EXPORT CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						const CUDA_HOST_NODE_PARAMS *nodeParams)
{
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_HOST,
					     sc_apply_host, nodeParams));
}

SC_EXPORT CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						      CUgraph childGraph)
{
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_GRAPH,
					     sc_apply_child, childGraph));
}

/* Pairs by topological position; the shapes must be equal (file comment). */
SC_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
					CUgraphExecUpdateResultInfo *resultInfo)
{
	struct sc_shape shape = { 0 };
	struct sc_xop *ops = NULL;
	size_t n = 0, i;
	int result = CU_GRAPH_EXEC_UPDATE_SUCCESS, rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!resultInfo)
		return CUDA_ERROR_INVALID_VALUE;
	memset(resultInfo, 0, sizeof(*resultInfo));
	if (!sc_handle_valid(hGraphExec, SC_H_EXEC) || !sc_handle_valid(hGraph, SC_H_GRAPH)) {
		resultInfo->result = CU_GRAPH_EXEC_UPDATE_ERROR;
		return CUDA_ERROR_INVALID_VALUE;
	}
	rc = sc_shape_of(hGraph, &shape);
	if (rc == 0 && (shape.n != hGraphExec->nshape ||
			memcmp(shape.v, hGraphExec->shape, shape.n * sizeof(shape.v[0]))))
		result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	if (rc == 0 && result == CU_GRAPH_EXEC_UPDATE_SUCCESS)
		rc = sc_graph_ops(hGraph, &ops, &n);
	if (rc == 0 && result == CU_GRAPH_EXEC_UPDATE_SUCCESS && n != hGraphExec->n)
		result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
	for (i = 0; rc == 0 && result == CU_GRAPH_EXEC_UPDATE_SUCCESS && i < n; i++)
		if (ops[i].type != hGraphExec->v[i].type)
			result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
	for (i = 0; rc == 0 && result == CU_GRAPH_EXEC_UPDATE_SUCCESS && i < n; i++) {
		hGraphExec->v[i].op = ops[i].op;
		hGraphExec->v[i].event = ops[i].event;
	}
	free(ops);
	free(shape.v);
	if (rc < 0) {
		resultInfo->result = CU_GRAPH_EXEC_UPDATE_ERROR;
		return sc_result(rc);
	}
	resultInfo->result = result;
	return result == CU_GRAPH_EXEC_UPDATE_SUCCESS ? CUDA_SUCCESS :
							CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

/* Kernel, memcpy and memset nodes may be disabled: they then do nothing. */
static int sc_enabled_ops(CUgraphExec e, CUgraphNode hNode, bool set, unsigned *val)
{
	struct CUgraphNode_st *n;
	bool found = false;
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	n = sc_node_get(hNode);
	if (!sc_handle_valid(e, SC_H_EXEC) || !n || !val ||
	    (n->type != CU_GRAPH_NODE_TYPE_KERNEL && n->type != CU_GRAPH_NODE_TYPE_MEMCPY &&
	     n->type != CU_GRAPH_NODE_TYPE_MEMSET))
		return -EINVAL;
	for (size_t i = 0; i < e->n; i++) {
		if (e->v[i].src != n)
			continue;
		if (set)
			e->v[i].enabled = *val != 0;
		else
			*val = e->v[i].enabled;
		found = true;
	}
	return found ? 0 : -EINVAL;
}

SC_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
					 unsigned int isEnabled)
{
	return sc_result(sc_enabled_ops(hGraphExec, hNode, true, &isEnabled));
}

SC_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
					 unsigned int *isEnabled)
{
	return sc_result(sc_enabled_ops(hGraphExec, hNode, false, isEnabled));
}

static int sc_apply_event(struct CUgraphNode_st *tmp, const void *p)
{
	CUevent ev = (CUevent)(uintptr_t)p;

	if (!sc_handle_valid(ev, SC_H_EVENT))
		return -EINVAL;
	tmp->event = ev;
	return 0;
}

SC_EXPORT CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
						      CUevent event)
{
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
					     sc_apply_event, event));
}

SC_EXPORT CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
						    CUevent event)
{
	return sc_result(sc_exec_node_update(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
					     sc_apply_event, event));
}
