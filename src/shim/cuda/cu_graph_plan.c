/*
 * Graph slicing, the plan (see cu_graph.h): analysis of an executable's
 * private graph (node types, keys, a topological order, the event nodes
 * that must share a slice), the slices as pruned clones instantiated on
 * demand and cached by node range, the greedy plan, and how updates of
 * the executable reach the slices. Everything here runs with the
 * record's lock held.
 */
#include "shim/cuda/cu_graph_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CG_CHILD_DEPTH 16

/* ---- slices ---- */

static void cg_slice_free(struct cg_slice *s)
{
	if (s->exec)
		cu_real.cuGraphExecDestroy(s->exec);
	if (s->g)
		cu_real.cuGraphDestroy(s->g);
	free(s);
}

static bool cg_in_plan(const struct cg_exec *x, const struct cg_slice *s)
{
	for (size_t i = 0; i < x->nplan; i++)
		if (x->plan[i] == s)
			return true;
	return false;
}

/* Drops the slices the plan does not use and no command waits to issue. */
static void cg_slices_collect(struct cg_exec *x)
{
	struct cg_slice **pp = &x->cache;

	while (*pp) {
		struct cg_slice *s = *pp;

		if (cg_in_plan(x, s) || atomic_load(&s->uses)) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		cg_slice_free(s);
	}
}

/* Slices still to be issued stay until a later collection (or the record goes). */
void cg_slices_drop(struct cg_exec *x)
{
	free(x->plan);
	x->plan = NULL;
	x->nplan = 0;
	x->plan_final = false;
	cg_slices_collect(x);
}

/* A clone of @g without the nodes outside [a, b) of @nodes (nodes of @g). */
static CUresult cg_prune(CUgraph g, const struct cg_node *nodes, size_t n, size_t a, size_t b,
			 CUgraph *out)
{
	CUgraph c = NULL;
	CUresult rc = cu_real.cuGraphClone(&c, g);

	for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++) {
		CUgraphNode cn = NULL;

		if (i >= a && i < b)
			continue;
		rc = cu_real.cuGraphNodeFindInClone(&cn, nodes[i].node, c);
		if (rc == CUDA_SUCCESS)
			rc = cu_real.cuGraphDestroyNode(cn);
	}
	if (rc != CUDA_SUCCESS && c)
		cu_real.cuGraphDestroy(c);
	if (rc == CUDA_SUCCESS)
		*out = c;
	return rc;
}

/* Instantiates @g in @x's context (as the application did). */
static CUresult cg_instantiate(struct cg_exec *x, CUgraph g, CUgraphExec *out)
{
	CUcontext cur = NULL, popped;
	bool pushed = false;
	CUresult rc;

	if (cu_real.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != x->ctx && x->ctx)
		pushed = cu_real.cuCtxPushCurrent_v2(x->ctx) == CUDA_SUCCESS;
	rc = cu_real.cuGraphInstantiateWithFlags(
		out, g, x->flags & CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
	if (pushed)
		cu_real.cuCtxPopCurrent_v2(&popped);
	return rc;
}

static struct cg_slice *cg_slice_get(struct cg_exec *x, size_t a, size_t b)
{
	struct cg_slice *s;

	for (s = x->cache; s; s = s->next)
		if (s->a == a && s->b == b)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->a = a;
	s->b = b;
	if (cg_prune(x->priv, x->nodes, x->n, a, b, &s->g) != CUDA_SUCCESS ||
	    cg_instantiate(x, s->g, &s->exec) != CUDA_SUCCESS) {
		s->exec = NULL;
		cg_slice_free(s);
		return NULL;
	}
	s->next = x->cache;
	x->cache = s;
	return s;
}

void cg_slice_key(const struct cg_exec *x, const struct cg_slice *s, uint32_t *kind,
			 uint64_t *key)
{
	size_t timed = 0, at = 0;

	for (size_t i = s->a; i < s->b; i++)
		if (x->nodes[i].kind) {
			timed++;
			at = i;
		}
	*kind = timed == 1 ? x->nodes[at].kind : XAL_CMD_KERNEL;
	*key = timed == 1 ? x->nodes[at].key : (uint64_t)(uintptr_t)s->exec;
}

/* ---- analysis ---- */

/* Whether a child graph holds only nodes a slice can carry whole. */
static bool cg_child_ok(CUgraph g, int depth)
{
	CUgraphNode *v;
	size_t n = 0;
	bool ok;

	if (depth > CG_CHILD_DEPTH || cu_real.cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS)
		return false;
	v = calloc(n ? n : 1, sizeof(*v));
	ok = v && cu_real.cuGraphGetNodes(g, v, &n) == CUDA_SUCCESS;
	for (size_t i = 0; ok && i < n; i++) {
		CUgraphNodeType t = -1;
		CUgraph c = NULL;

		ok = cu_real.cuGraphNodeGetType(v[i], &t) == CUDA_SUCCESS;
		if (ok && t == CU_GRAPH_NODE_TYPE_GRAPH)
			ok = cu_real.cuGraphChildGraphNodeGetGraph(v[i], &c) == CUDA_SUCCESS &&
			     cg_child_ok(c, depth + 1);
		else if (ok)
			ok = t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY ||
			     t == CU_GRAPH_NODE_TYPE_MEMSET || t == CU_GRAPH_NODE_TYPE_HOST ||
			     t == CU_GRAPH_NODE_TYPE_EMPTY;
	}
	free(v);
	return ok;
}

/* Kind, key (and event) of node @n of type @n->type; false if it cannot be sliced. */
static bool cg_node_describe(struct cg_node *n)
{
	CUDA_KERNEL_NODE_PARAMS k;
	CUDA_MEMCPY3D c;
	CUDA_MEMSET_NODE_PARAMS m;
	CUDA_HOST_NODE_PARAMS h;
	CUgraph child;

	n->kind = 0;
	n->key = 0;
	switch (n->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		if (!cu_real.cuGraphKernelNodeGetParams_v2 ||
		    cu_real.cuGraphKernelNodeGetParams_v2(n->node, &k) != CUDA_SUCCESS)
			return false;
		n->kind = XAL_CMD_KERNEL;
		n->key = k.func ? (uint64_t)(uintptr_t)k.func : (uint64_t)(uintptr_t)k.kern;
		return true;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (cu_real.cuGraphMemcpyNodeGetParams(n->node, &c) != CUDA_SUCCESS)
			return false;
		n->kind = XAL_CMD_COPY;
		n->key = (uint64_t)c.WidthInBytes * c.Height * c.Depth;
		return true;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		if (cu_real.cuGraphMemsetNodeGetParams(n->node, &m) != CUDA_SUCCESS)
			return false;
		n->kind = XAL_CMD_MEMSET;
		n->key = (uint64_t)m.width * m.elementSize * m.height;
		return true;
	case CU_GRAPH_NODE_TYPE_HOST:
		if (cu_real.cuGraphHostNodeGetParams(n->node, &h) != CUDA_SUCCESS)
			return false;
		n->kind = XAL_CMD_HOST_FUNC;
		n->key = (uint64_t)(uintptr_t)h.fn;
		return true;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		if (cu_real.cuGraphChildGraphNodeGetGraph(n->node, &child) != CUDA_SUCCESS ||
		    !cg_child_ok(child, 1))
			return false;
		n->kind = XAL_CMD_KERNEL;
		n->key = (uint64_t)(uintptr_t)child;
		return true;
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return true;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return cu_real.cuGraphEventRecordNodeGetEvent(n->node, &n->event) == CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		return cu_real.cuGraphEventWaitNodeGetEvent(n->node, &n->event) == CUDA_SUCCESS;
	default:
		return false;   /* memory, conditional, semaphore, batch-memop, unknown */
	}
}

static int cg_ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const CUgraphNode *)a, y = (uintptr_t)*(const CUgraphNode *)b;

	return x < y ? -1 : x > y;
}

/* The dependencies of @node as indices into @sorted (node, index) pairs. */
static int cg_deps(CUgraphNode node, const CUgraphNode *sorted, const size_t *sorted_idx,
		   size_t n, size_t **out, size_t *nout)
{
	CUgraphNode *d;
	size_t k = 0;
	CUresult rc;

	rc = cu_real.cuGraphNodeGetDependencies_v2 ?
		     cu_real.cuGraphNodeGetDependencies_v2(node, NULL, NULL, &k) :
		     cu_real.cuGraphNodeGetDependencies(node, NULL, &k);
	if (rc != CUDA_SUCCESS)
		return -EINVAL;
	d = calloc(k ? k : 1, sizeof(*d));
	*out = calloc(k ? k : 1, sizeof(**out));
	if (!d || !*out) {
		free(d);
		free(*out);
		return -ENOMEM;
	}
	rc = cu_real.cuGraphNodeGetDependencies_v2 ?
		     cu_real.cuGraphNodeGetDependencies_v2(node, d, NULL, &k) :
		     cu_real.cuGraphNodeGetDependencies(node, d, &k);
	for (size_t i = 0; rc == CUDA_SUCCESS && i < k; i++) {
		const CUgraphNode *hit = bsearch(&d[i], sorted, n, sizeof(*sorted), cg_ptr_cmp);

		if (!hit)
			rc = CUDA_ERROR_INVALID_VALUE;
		else
			(*out)[i] = sorted_idx[hit - sorted];
	}
	free(d);
	if (rc != CUDA_SUCCESS) {
		free(*out);
		return -EINVAL;
	}
	*nout = k;
	return 0;
}

/* The analysis of a graph: its nodes in a topological order, glued pairs. */
struct cg_shape {
	size_t n;
	struct cg_node *nodes;
	bool *glued;
};

static void cg_shape_fini(struct cg_shape *s)
{
	free(s->nodes);
	free(s->glued);
	memset(s, 0, sizeof(*s));
}

/* Orders @v (@n nodes, creation order) topologically into @s->nodes: 0 or -errno. */
static int cg_topo(CUgraphNode *v, size_t n, struct cg_shape *s)
{
	CUgraphNode *sorted = malloc(n * sizeof(*sorted));
	size_t *sidx = malloc(n * sizeof(*sidx)), *indeg = calloc(n, sizeof(*indeg));
	size_t *succ_n = calloc(n + 1, sizeof(*succ_n)), *succ = NULL, *fill = NULL;
	size_t **deps = calloc(n, sizeof(*deps)), *ndeps = calloc(n, sizeof(*ndeps));
	size_t *queue = malloc(n * sizeof(*queue)), head = 0, tail = 0, total = 0;
	int rc = 0;

	if (!sorted || !sidx || !indeg || !succ_n || !deps || !ndeps || !queue) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), cg_ptr_cmp);
	for (size_t i = 0; i < n; i++) {
		const CUgraphNode *hit = bsearch(&v[i], sorted, n, sizeof(*sorted), cg_ptr_cmp);

		sidx[hit - sorted] = i;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = cg_deps(v[i], sorted, sidx, n, &deps[i], &ndeps[i]);
		indeg[i] = ndeps[i];
		total += ndeps[i];
	}
	if (rc < 0)
		goto out;
	/* Successor lists (CSR), in creation order of the dependents. */
	succ = malloc((total ? total : 1) * sizeof(*succ));
	fill = calloc(n + 1, sizeof(*fill));
	if (!succ || !fill) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t d = 0; d < ndeps[i]; d++)
			succ_n[deps[i][d] + 1]++;
	for (size_t i = 0; i < n; i++)
		succ_n[i + 1] += succ_n[i];
	for (size_t i = 0; i < n; i++)
		for (size_t d = 0; d < ndeps[i]; d++) {
			size_t u = deps[i][d];

			succ[succ_n[u] + fill[u]++] = i;
		}
	for (size_t i = 0; i < n; i++)
		if (!indeg[i])
			queue[tail++] = i;
	while (head < tail) {
		size_t u = queue[head++];

		s->nodes[head - 1].node = v[u];
		for (size_t k = succ_n[u]; k < succ_n[u + 1]; k++)
			if (--indeg[succ[k]] == 0)
				queue[tail++] = succ[k];
	}
	if (head != n)
		rc = -EINVAL;   /* a cycle: the driver would not have instantiated it */
out:
	for (size_t i = 0; deps && i < n; i++)
		free(deps[i]);
	free(deps);
	free(ndeps);
	free(sorted);
	free(sidx);
	free(indeg);
	free(succ_n);
	free(succ);
	free(fill);
	free(queue);
	return rc;
}

/*
 * Analyses @g: 0 with @s filled, or -EINVAL when it must launch whole (a
 * node that cannot be sliced, fewer than two nodes), -ENOMEM.
 */
static int cg_analyse(CUgraph g, struct cg_shape *s)
{
	CUgraphNode *v = NULL;
	size_t n = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (cu_real.cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS || n < 2)
		return -EINVAL;
	v = calloc(n, sizeof(*v));
	s->nodes = calloc(n, sizeof(*s->nodes));
	s->glued = calloc(n, sizeof(*s->glued));
	if (!v || !s->nodes || !s->glued)
		rc = -ENOMEM;
	if (rc == 0 && cu_real.cuGraphGetNodes(g, v, &n) != CUDA_SUCCESS)
		rc = -EINVAL;
	s->n = n;
	if (rc == 0)
		rc = cg_topo(v, n, s);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct cg_node *c = &s->nodes[i];
		CUgraphNodeType t = -1;

		if (cu_real.cuGraphNodeGetType(c->node, &t) != CUDA_SUCCESS)
			rc = -EINVAL;
		c->type = t;
		if (rc == 0 && !cg_node_describe(c))
			rc = -EINVAL;
	}
	/* Every node from the first to the last use of an event stays in one slice. */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		size_t last = i;

		if (!s->nodes[i].event)
			continue;
		for (size_t j = i + 1; j < n; j++)
			if (s->nodes[j].event == s->nodes[i].event)
				last = j;
		for (size_t j = i + 1; j <= last; j++)
			s->glued[j] = true;
	}
	free(v);
	if (rc < 0)
		cg_shape_fini(s);
	return rc;
}

/* ---- plan ---- */

/*
 * The duration of each node (req[i].ns, 0: not learned), and the budget:
 * what the queue learned per node kind and key, scaled, for the nodes of
 * a slice of the current plan that the queue timed as a whole, to what
 * that slice took (a graph's work may change, or the estimates of its
 * nodes come from elsewhere). NULL on out-of-memory.
 */
static struct xq_est_req *cg_estimates(struct cg_exec *x, struct xq *q, int64_t *budget)
{
	size_t m = x->n + x->nplan;
	struct xq_est_req *req = calloc(m ? m : 1, sizeof(*req));

	if (!req)
		return NULL;
	for (size_t i = 0; i < x->n; i++) {
		req[i].kind = x->nodes[i].kind;
		req[i].est_key = x->nodes[i].key;
	}
	for (size_t k = 0; k < x->nplan; k++) {
		struct xq_est_req *r = &req[x->n + k];

		if (x->plan[k])
			cg_slice_key(x, x->plan[k], &r->kind, &r->est_key);
		else
			*r = (struct xq_est_req){ XAL_CMD_KERNEL, (uint64_t)(uintptr_t)x->exec, 0 };
	}
	*budget = xq_est_query(q, req, m);
	for (size_t k = 0; k < x->nplan; k++) {
		size_t a = x->plan[k] ? x->plan[k]->a : 0, b = x->plan[k] ? x->plan[k]->b : x->n;
		uint64_t took = req[x->n + k].ns, sum = 0;
		bool all = true;

		for (size_t i = a; i < b; i++) {
			sum += req[i].ns;
			all &= req[i].ns || !x->nodes[i].kind;
		}
		if (!took || !sum || !all || took == sum)
			continue;
		for (size_t i = a; i < b; i++)
			req[i].ns = (uint64_t)((unsigned __int128)req[i].ns * took / sum);
	}
	return req;
}

/*
 * The cut of the nodes into slices (cut[0..*ncut], cut[*ncut] = n), greedy
 * in topological order: a slice takes the next node while that brings it
 * nearer @target; a node not learned yet goes alone (with its own kind and
 * key, so the queue learns it; *@final false); zero-time and glued nodes
 * always join.
 */
static void cg_cut(const struct cg_exec *x, const struct xq_est_req *req, int64_t target,
		   size_t *cut, size_t *ncut, bool *final)
{
	*ncut = 0;
	*final = true;
	for (size_t i = 0; i < x->n;) {
		uint64_t acc = 0;
		size_t j = i, costed = 0;
		bool unknown = false;

		for (; j < x->n; j++) {
			uint64_t est = req[j].ns;
			bool zero = !x->nodes[j].kind, unk = !zero && !est;

			if (j > i && !x->glued[j] && !zero) {
				if (unk && costed)
					break;
				if (!unk && unknown)
					break;
				if (!unk && costed &&
				    (int64_t)(acc + est) - target > target - (int64_t)acc)
					break;
			}
			if (unk) {
				unknown = true;
				*final = false;
			}
			acc += est;
			costed += !zero;
		}
		cut[(*ncut)++] = i;
		i = j;
	}
	cut[*ncut] = x->n;
}

int cg_plan(struct cg_exec *x, struct xq *q)
{
	struct xq_est_req *req;
	struct cg_slice **plan;
	size_t *cut, ncut = 0;
	int64_t budget = 0, target, mode = cg_target_mode();
	bool final = true, refused = false;

	if (x->state == CG_NEW) {
		struct cg_shape s;

		if (cg_analyse(x->priv, &s) < 0) {
			cg_whole_locked(x);
			return -EINVAL;
		}
		x->n = s.n;
		x->nodes = s.nodes;
		x->glued = s.glued;
		x->state = CG_SLICED;
	}
	if (x->state == CG_WHOLE)
		return -EINVAL;
	if (x->state == CG_FROZEN)
		return x->nplan ? 0 : -EINVAL;
	if (x->plan_final && x->nplan && ++x->plan_uses < CG_REPLAN_LAUNCHES &&
	    x->plan_target == (mode > 0 ? mode : xq_est_query(q, NULL, 0)))
		return 0;
	req = cg_estimates(x, q, &budget);
	cut = calloc(x->n + 1, sizeof(*cut));
	target = mode > 0 ? mode : budget;
	if (!req || !cut || target <= 0) {
		free(req);
		free(cut);
		return -EINVAL;
	}
	cg_cut(x, req, target, cut, &ncut, &final);
	plan = calloc(ncut, sizeof(*plan));
	for (size_t k = 0; plan && ncut > 1 && k < ncut && !refused; k++)
		refused = !(plan[k] = cg_slice_get(x, cut[k], cut[k + 1]));
	free(req);
	free(cut);
	if (!plan || refused) {
		free(plan);
		if (refused)
			cg_whole_locked(x);     /* the driver refused a slice: whole from now on */
		return -EINVAL;
	}
	free(x->plan);
	x->plan = plan;
	x->nplan = ncut;
	x->plan_final = final;
	x->plan_target = target;
	x->plan_uses = 0;
	cg_slices_collect(x);
	return 0;
}

void cg_whole_locked(struct cg_exec *x)
{
	cg_slices_drop(x);
	if (x->priv)
		cu_real.cuGraphDestroy(x->priv);
	x->priv = NULL;
	free(x->nodes);
	free(x->glued);
	x->nodes = NULL;
	x->glued = NULL;
	x->n = 0;
	x->state = CG_WHOLE;
}


/* ---- updates ---- */

static size_t cg_index(const struct cg_exec *x, CUgraphNode pn)
{
	size_t i;

	for (i = 0; i < x->n && x->nodes[i].node != pn; i++)
		;
	return i;
}

void cg_update_locked(struct cg_exec *x, CUgraphNode node, enum cg_update what,
		      CUresult (*apply)(CUgraphExec se, CUgraphNode sn, const void *arg),
		      CUresult (*apply_graph)(CUgraphNode pn, const void *arg), const void *arg)
{
	CUgraphNode pn = NULL;
	struct cg_node before;
	size_t i;

	if (x->state == CG_WHOLE)
		return;
	/* Nodes of another graph than the one instantiated (after a whole-graph
	 * update, say) are not found in the private clone. */
	if (cu_real.cuGraphNodeFindInClone(&pn, node, x->priv) != CUDA_SUCCESS)
		goto whole;
	if (apply_graph) {
		if (apply_graph(pn, arg) != CUDA_SUCCESS)
			goto whole;
	} else {
		/* The private graph cannot take it: the slices made so far must do. */
		if (x->state == CG_NEW || !x->nplan)
			goto whole;
		x->state = CG_FROZEN;
		cg_slices_collect(x);
	}
	if (x->state == CG_NEW)
		return;         /* analysed and sliced later, from the updated graph */
	i = cg_index(x, pn);
	if (i == x->n)
		goto whole;
	for (struct cg_slice *s = x->cache; s; s = s->next) {
		CUgraphNode sn = NULL;

		if (i < s->a || i >= s->b)
			continue;
		if (cu_real.cuGraphNodeFindInClone(&sn, pn, s->g) != CUDA_SUCCESS ||
		    apply(s->exec, sn, arg) != CUDA_SUCCESS)
			goto whole;
	}
	before = x->nodes[i];
	if (what == CG_UPD_KERNEL && cg_node_describe(&x->nodes[i]) &&
	    (before.kind != x->nodes[i].kind || before.key != x->nodes[i].key))
		x->plan_final = false;  /* another kernel: learn it, plan again */
	return;
whole:
	cg_whole_locked(x);
}

/*
 * Applies a whole-graph update to the slices: each plan slice is updated
 * from the new graph cut at the same place when the new graph has the same
 * shape, or made again (not in a frozen plan, whose slices carry updates
 * the new graph does not). The private graph becomes a clone of @g.
 */
void cg_exec_updated_locked(struct cg_exec *x, CUgraph g)
{
	struct cg_shape s = { 0 };
	CUgraph priv = NULL;
	bool same;

	if (x->state == CG_WHOLE)
		return;
	if (cu_real.cuGraphClone(&priv, g) != CUDA_SUCCESS)
		goto whole;
	if (x->state == CG_NEW) {
		cu_real.cuGraphDestroy(x->priv);
		x->priv = priv;
		return;
	}
	if (cg_analyse(priv, &s) < 0) {
		cu_real.cuGraphDestroy(priv);
		goto whole;
	}
	same = s.n == x->n && !memcmp(s.glued, x->glued, s.n * sizeof(*s.glued));
	for (size_t i = 0; same && i < s.n; i++)
		same = s.nodes[i].type == x->nodes[i].type;
	if (!same && x->state == CG_FROZEN)
		goto whole_new;
	x->state = same ? x->state : CG_SLICED;
	if (!same)
		cg_slices_drop(x);
	cg_slices_collect(x);
	for (size_t k = 0; same && k < x->nplan; k++) {
		struct cg_slice *sl = x->plan[k];
		CUgraphExecUpdateResultInfo info;
		CUgraph pg = NULL;

		if (!sl)
			continue;
		if (cg_prune(priv, s.nodes, s.n, sl->a, sl->b, &pg) != CUDA_SUCCESS)
			goto whole_new;
		if (cu_real.cuGraphExecUpdate_v2(sl->exec, pg, &info) != CUDA_SUCCESS) {
			CUgraphExec e = NULL;

			if (x->state == CG_FROZEN || cg_instantiate(x, pg, &e) != CUDA_SUCCESS) {
				cu_real.cuGraphDestroy(pg);
				goto whole_new;
			}
			cu_real.cuGraphExecDestroy(sl->exec);
			sl->exec = e;
		}
		cu_real.cuGraphDestroy(sl->g);
		sl->g = pg;
	}
	for (size_t i = 0; same && x->state == CG_SLICED && i < s.n; i++)
		if (s.nodes[i].key != x->nodes[i].key)
			x->plan_final = false;
	cu_real.cuGraphDestroy(x->priv);
	x->priv = priv;
	free(x->nodes);
	free(x->glued);
	x->nodes = s.nodes;
	x->glued = s.glued;
	x->n = s.n;
	return;
whole_new:
	cg_shape_fini(&s);
	cu_real.cuGraphDestroy(priv);
whole:
	cg_whole_locked(x);
}
