/*
 * The driver entry points around executable graphs that graph slicing
 * (cu_graph.h) needs: instantiation records the executable, destruction
 * forgets it (the driver's objects go once no command uses them), and the
 * updates of an executable graph go to the driver's executable and then to
 * its slices.
 *
 * Every update first brings the executable's earlier launches to the
 * driver (an update changes only later launches, and a launch still
 * buffered in an XQueue is a later one to the driver), which may wait
 * while the queue holding them is suspended. Updates applied to the
 * slices: the kernel, memcpy, memset and host node setters (also to the
 * private graph, so that slices made later have them), child graphs and
 * node enabling (these freeze the slice plan: the private graph cannot
 * take them), and cuGraphExecUpdate (per slice, from the new graph cut the
 * same way; a later per-node update of such an executable, naming nodes of
 * the graph it was instantiated from, turns slicing off). Every other
 * update of an executable (generic GRAPH rows of cu_functions.def)
 * turns slicing off for it: it then launches whole, as the driver's own
 * executable, which every update reached.
 */
#include "shim/cuda/cu_graph.h"

__attribute__((visibility("hidden"))) CUgraphExec cu_graph_pick(CUgraphExec e);

/* The driver's @name, or the error the call gets without it. */
#define CG_DRIVER(name, ...)                                                       \
	(cu_load() < 0 ? CUDA_ERROR_NOT_INITIALIZED :                               \
	 !cu_real.name ? CUDA_ERROR_NOT_SUPPORTED : cu_real.name(__VA_ARGS__))

static bool cg_active(void)
{
	return cu_load() == 0 && !cu_passthrough();
}

/* --- instantiation and destruction ----------------------------------------- */

XS_CU_HOOK CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
						unsigned long long flags)
{
	CUresult rc = CG_DRIVER(cuGraphInstantiateWithFlags, phGraphExec, hGraph, flags);

	if (rc == CUDA_SUCCESS && cg_active())
		cg_instantiated(*phGraphExec, hGraph, flags);
	return rc;
}

/* With an upload stream, the upload lands behind that stream's buffered work. */
static CUresult do_cuGraphInstantiateWithParams(bool ptsz, CUgraphExec *phGraphExec,
						CUgraph hGraph,
						CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	CUDA_GRAPH_INSTANTIATE_PARAMS real;
	struct cs_stream *s = NULL;
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!cg_active() || !p)
		return REAL(ptsz, cuGraphInstantiateWithParams, "_ptsz")(phGraphExec, hGraph, p);
	real = *p;
	if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
		s = cs_stream_of(p->hUploadStream, ptsz);
		if (s)
			cs_flush(s);
		real.hUploadStream = s ? s->real : cs_real_handle(p->hUploadStream, ptsz);
	}
	rc = REAL(ptsz, cuGraphInstantiateWithParams, "_ptsz")(phGraphExec, hGraph, &real);
	p->hErrNode_out = real.hErrNode_out;
	p->result_out = real.result_out;
	if (rc == CUDA_SUCCESS)
		cg_instantiated(*phGraphExec, hGraph, p->flags);
	return rc;
}

XS_CU_PAIR(CUresult, cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz,
	   (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
	   phGraphExec, hGraph, p)

/*
 * Natively the executable goes at once (freed by the driver when its work
 * is done); here launches may still be buffered, so the shim destroys it,
 * with its slices, once its last command went.
 */
XS_CU_HOOK CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	if (cg_active() && cg_forget(hGraphExec))
		return CUDA_SUCCESS;
	return CG_DRIVER(cuGraphExecDestroy, hGraphExec);
}

/* --- per-node updates ---------------------------------------------------- */

/* An update's arguments, as the slice and graph setters below read them. */
struct cg_args {
	const void *params;
	CUcontext ctx;
	unsigned enabled;
	CUgraph child;
};

static CUresult up_kernel(CUgraphExec se, CUgraphNode sn, const void *a)
{
	const struct cg_args *g = a;

	return CG_DRIVER(cuGraphExecKernelNodeSetParams_v2, se, sn, g->params);
}

static CUresult up_kernel_graph(CUgraphNode pn, const void *a)
{
	return CG_DRIVER(cuGraphKernelNodeSetParams_v2, pn, ((const struct cg_args *)a)->params);
}

static CUresult up_memcpy(CUgraphExec se, CUgraphNode sn, const void *a)
{
	const struct cg_args *g = a;

	return CG_DRIVER(cuGraphExecMemcpyNodeSetParams, se, sn, g->params, g->ctx);
}

static CUresult up_memcpy_graph(CUgraphNode pn, const void *a)
{
	return CG_DRIVER(cuGraphMemcpyNodeSetParams, pn, ((const struct cg_args *)a)->params);
}

static CUresult up_memset(CUgraphExec se, CUgraphNode sn, const void *a)
{
	const struct cg_args *g = a;

	return CG_DRIVER(cuGraphExecMemsetNodeSetParams, se, sn, g->params, g->ctx);
}

static CUresult up_memset_graph(CUgraphNode pn, const void *a)
{
	return CG_DRIVER(cuGraphMemsetNodeSetParams, pn, ((const struct cg_args *)a)->params);
}

static CUresult up_host(CUgraphExec se, CUgraphNode sn, const void *a)
{
	return CG_DRIVER(cuGraphExecHostNodeSetParams, se, sn, ((const struct cg_args *)a)->params);
}

static CUresult up_host_graph(CUgraphNode pn, const void *a)
{
	return CG_DRIVER(cuGraphHostNodeSetParams, pn, ((const struct cg_args *)a)->params);
}

static CUresult up_child(CUgraphExec se, CUgraphNode sn, const void *a)
{
	const struct cg_args *g = a;

	return CG_DRIVER(cuGraphExecChildGraphNodeSetParams, se, sn, g->child);
}

static CUresult up_enabled(CUgraphExec se, CUgraphNode sn, const void *a)
{
	return CG_DRIVER(cuGraphNodeSetEnabled, se, sn, ((const struct cg_args *)a)->enabled);
}

/*
 * The common path of the per-node updates: the earlier launches reach the
 * driver, the driver updates the whole executable (@whole's result is the
 * call's), then the slices follow.
 */
static CUresult cg_node_update(CUgraphNode node, CUresult whole, struct cg_exec *x,
			       enum cg_update what,
			       CUresult (*apply)(CUgraphExec, CUgraphNode, const void *),
			       CUresult (*apply_graph)(CUgraphNode, const void *),
			       const struct cg_args *a)
{
	if (x && whole == CUDA_SUCCESS)
		cg_update_locked(x, node, what, apply, apply_graph, a);
	if (x) {
		cg_unlock(x);
		cg_put(x);
	}
	return whole;
}

/* The record of @e, quiesced and locked, when the shim schedules. */
static struct cg_exec *cg_begin(CUgraphExec e)
{
	struct cg_exec *x = cg_active() ? cg_get(e) : NULL;

	if (x)
		cg_quiesce_lock(x);
	return x;
}

XS_CU_HOOK CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
						      const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct cg_args a = { .params = nodeParams };
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphExecKernelNodeSetParams_v2, hGraphExec, hNode, nodeParams);

	return cg_node_update(hNode, rc, x, CG_UPD_KERNEL, up_kernel, up_kernel_graph, &a);
}

XS_CU_HOOK CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						   const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	struct cg_args a = { .params = copyParams, .ctx = ctx };
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphExecMemcpyNodeSetParams, hGraphExec, hNode, copyParams, ctx);

	return cg_node_update(hNode, rc, x, CG_UPD_MEMCPY, up_memcpy, up_memcpy_graph, &a);
}

XS_CU_HOOK CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						   const CUDA_MEMSET_NODE_PARAMS *memsetParams,
						   CUcontext ctx)
{
	struct cg_args a = { .params = memsetParams, .ctx = ctx };
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphExecMemsetNodeSetParams, hGraphExec, hNode, memsetParams,
				ctx);

	return cg_node_update(hNode, rc, x, CG_UPD_MEMSET, up_memset, up_memset_graph, &a);
}

XS_CU_HOOK CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						 const CUDA_HOST_NODE_PARAMS *nodeParams)
{
	struct cg_args a = { .params = nodeParams };
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphExecHostNodeSetParams, hGraphExec, hNode, nodeParams);

	return cg_node_update(hNode, rc, x, CG_UPD_HOST, up_host, up_host_graph, &a);
}

XS_CU_HOOK CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						       CUgraph childGraph)
{
	struct cg_args a = { .child = childGraph };
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphExecChildGraphNodeSetParams, hGraphExec, hNode, childGraph);

	return cg_node_update(hNode, rc, x, CG_UPD_CHILD, up_child, NULL, &a);
}

XS_CU_HOOK CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
					  unsigned int isEnabled)
{
	struct cg_args a = { .enabled = isEnabled };
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphNodeSetEnabled, hGraphExec, hNode, isEnabled);

	return cg_node_update(hNode, rc, x, CG_UPD_ENABLED, up_enabled, NULL, &a);
}

/* --- whole-graph update, and the rest ------------------------------------ */

XS_CU_HOOK CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
					 CUgraphExecUpdateResultInfo *resultInfo)
{
	struct cg_exec *x = cg_begin(hGraphExec);
	CUresult rc = CG_DRIVER(cuGraphExecUpdate_v2, hGraphExec, hGraph, resultInfo);

	if (x && rc == CUDA_SUCCESS)
		cg_exec_updated_locked(x, hGraph);
	if (x) {
		cg_unlock(x);
		cg_put(x);
	}
	return rc;
}

/*
 * The generic hooks (GRAPH rows of cu_functions.def, cu_passes.S): an
 * update the slices cannot take. The executable's launches reach the
 * driver, slicing ends for it, and the call goes to the driver unchanged.
 */
CUgraphExec cu_graph_pick(CUgraphExec e)
{
	struct cg_exec *x = cg_begin(e);

	if (x) {
		cg_whole_locked(x);
		cg_unlock(x);
		cg_put(x);
	}
	return e;
}
