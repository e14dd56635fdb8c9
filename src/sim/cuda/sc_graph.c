/*
 * Graphs of the simulated CUDA driver: creation, destruction, cloning, and
 * the structure queries (nodes, types, dependencies) a scheduler needs to
 * take a graph apart.
 *
 * Design: a graph is an array of nodes in creation order; each node keeps
 * the nodes it depends on (with the edge data of the _v2 calls), and the
 * reverse direction is found by scanning, which is linear in the graph and
 * fine at the sizes graphs have. Node handles are registered like every
 * other handle (sc_handle.c), so a node of a destroyed graph is refused.
 * A clone remembers, node by node, the node it was copied from, which is
 * how cuGraphNodeFindInClone answers; like the real driver, graphs with
 * memory allocation or free nodes cannot be cloned. Node parameters and
 * the per-type calls live in sc_gnode.c, instantiation in sc_gexec.c.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A new empty graph (not registered); @owner: the child-graph node holding it. */
int sc_graph_new(struct CUgraph_st **out, struct CUgraphNode_st *owner)
{
	struct CUgraph_st *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->owner = owner;
	*out = g;
	return 0;
}

static void sc_node_free(struct CUgraphNode_st *n)
{
	sc_handle_del(n, SC_H_NODE);
	sc_node_fini(n);
	free(n->deps);
	free(n->edges);
	free(n);
}

/* Frees @g (NULL accepted), its nodes and their child graphs; unregisters them. */
void sc_graph_free(struct CUgraph_st *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		sc_node_free(g->nodes[i]);
	sc_handle_del(g, SC_H_GRAPH);
	free(g->nodes);
	free(g);
}

/* The live node @h, or NULL. */
struct CUgraphNode_st *sc_node_get(CUgraphNode h)
{
	return sc_handle_valid(h, SC_H_NODE) ? h : NULL;
}

static int sc_node_add_dep(struct CUgraphNode_st *n, struct CUgraphNode_st *d,
			   const CUgraphEdgeData *e)
{
	if (n->ndeps == n->capdeps) {
		size_t cap = n->capdeps ? 2 * n->capdeps : 4;
		struct CUgraphNode_st **v = realloc(n->deps, cap * sizeof(*v));
		CUgraphEdgeData *ed;

		if (!v)
			return -ENOMEM;
		n->deps = v;
		ed = realloc(n->edges, cap * sizeof(*ed));
		if (!ed)
			return -ENOMEM;
		n->edges = ed;
		n->capdeps = cap;
	}
	n->deps[n->ndeps] = d;
	if (e)
		n->edges[n->ndeps] = *e;
	else
		memset(&n->edges[n->ndeps], 0, sizeof(n->edges[0]));
	n->ndeps++;
	return 0;
}

/*
 * Adds a node of @type to @g after @ndeps dependencies, which must be
 * distinct live nodes of @g. Returns 0 (*@out: the registered node, its
 * parameters still to set), -EINVAL, -ENOMEM.
 */
int sc_node_new(struct CUgraph_st *g, int type, const CUgraphNode *deps, size_t ndeps,
		struct CUgraphNode_st **out)
{
	struct CUgraphNode_st *n;
	size_t i, j;
	int rc = 0;

	if (ndeps && !deps)
		return -EINVAL;
	for (i = 0; i < ndeps; i++) {
		if (!sc_node_get(deps[i]) || deps[i]->graph != g)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (deps[j] == deps[i])
				return -EINVAL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->graph = g;
	n->type = type;
	for (i = 0; i < ndeps && rc == 0; i++)
		rc = sc_node_add_dep(n, deps[i], NULL);
	if (rc == 0 && g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct CUgraphNode_st **v = realloc(g->nodes, cap * sizeof(*v));

		if (v) {
			g->nodes = v;
			g->cap = cap;
		} else {
			rc = -ENOMEM;
		}
	}
	if (rc == 0)
		rc = sc_handle_add(n, SC_H_NODE, NULL);
	if (rc < 0) {
		free(n->deps);
		free(n->edges);
		free(n);
		return rc;
	}
	g->nodes[g->n++] = n;
	*out = n;
	return 0;
}

static bool sc_graph_clonable(const struct CUgraph_st *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct CUgraphNode_st *n = g->nodes[i];

		if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
		    n->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
			return false;
		if (n->type == CU_GRAPH_NODE_TYPE_GRAPH && !sc_graph_clonable(n->child))
			return false;
	}
	return true;
}

static size_t sc_node_index(const struct CUgraph_st *g, const struct CUgraphNode_st *n)
{
	size_t i;

	for (i = 0; i < g->n && g->nodes[i] != n; i++)
		;
	return i;
}

/*
 * A deep copy of @g (child graphs included, not registered, owned by
 * @owner); each node's orig names the node it copies. -EOPNOTSUPP for
 * memory nodes, -ENOMEM.
 */
int sc_graph_clone(const struct CUgraph_st *g, struct CUgraph_st **out,
		   struct CUgraphNode_st *owner)
{
	struct CUgraph_st *c;
	int rc;

	if (!sc_graph_clonable(g))
		return -EOPNOTSUPP;
	rc = sc_graph_new(&c, owner);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < g->n && rc == 0; i++) {
		const struct CUgraphNode_st *o = g->nodes[i];
		struct CUgraphNode_st *n;

		rc = sc_node_new(c, o->type, NULL, 0, &n);
		if (rc < 0)
			break;
		n->orig = o;
		for (size_t d = 0; d < o->ndeps && rc == 0; d++)
			rc = sc_node_add_dep(n, c->nodes[sc_node_index(g, o->deps[d])],
					     &o->edges[d]);
		if (rc == 0)
			rc = sc_node_copy_params(n, o);
	}
	if (rc < 0) {
		sc_graph_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

/*
 * The nodes of @g in a topological order (Kahn's, ties in creation order),
 * in a malloc()ed array of g->n. -EINVAL on a cycle, -ENOMEM.
 */
int sc_graph_topo(const struct CUgraph_st *g, struct CUgraphNode_st ***out)
{
	struct CUgraphNode_st **order = malloc((g->n ? g->n : 1) * sizeof(*order));
	size_t *missing = calloc(g->n ? g->n : 1, sizeof(*missing)), done = 0;
	bool progress = true;

	if (!order || !missing) {
		free(order);
		free(missing);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		missing[i] = g->nodes[i]->ndeps + 1;    /* +1: not placed yet */
	while (done < g->n && progress) {
		progress = false;
		for (size_t i = 0; i < g->n; i++) {
			struct CUgraphNode_st *n = g->nodes[i];

			if (missing[i] != 1)
				continue;
			missing[i] = 0;
			order[done++] = n;
			progress = true;
			for (size_t j = 0; j < g->n; j++)
				for (size_t d = 0; d < g->nodes[j]->ndeps; d++)
					if (g->nodes[j]->deps[d] == n)
						missing[j]--;
		}
	}
	free(missing);
	if (done < g->n) {
		free(order);
		return -EINVAL;
	}
	*out = order;
	return 0;
}

SC_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct CUgraph_st *g;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_graph_new(&g, NULL);
	if (rc == 0) {
		rc = sc_handle_add(g, SC_H_GRAPH, NULL);
		if (rc < 0)
			sc_graph_free(g);
	}
	if (rc == 0)
		*phGraph = g;
	return sc_result(rc);
}

/* A graph of a child-graph node belongs to the node: not destroyed here. */
SC_EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_valid(hGraph, SC_H_GRAPH) || hGraph->owner)
		return CUDA_ERROR_INVALID_VALUE;
	sc_graph_free(hGraph);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	struct CUgraph_st *c;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phGraphClone || !sc_handle_valid(originalGraph, SC_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_graph_clone(originalGraph, &c, NULL);
	if (rc == 0) {
		rc = sc_handle_add(c, SC_H_GRAPH, NULL);
		if (rc < 0)
			sc_graph_free(c);
	}
	if (rc == 0)
		*phGraphClone = c;
	return sc_result(rc);
}

SC_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
					  CUgraph hClonedGraph)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phNode || !hOriginalNode || !sc_handle_valid(hClonedGraph, SC_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < hClonedGraph->n; i++) {
		if (hClonedGraph->nodes[i]->orig == hOriginalNode) {
			*phNode = hClonedGraph->nodes[i];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* Removes the node and every edge to or from it. */
SC_EXPORT CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
	struct CUgraphNode_st *n;
	struct CUgraph_st *g;
	size_t i;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	n = sc_node_get(hNode);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	g = n->graph;
	for (i = 0; i < g->n; i++) {
		struct CUgraphNode_st *m = g->nodes[i];
		size_t d = 0;

		while (d < m->ndeps) {
			if (m->deps[d] == n) {
				m->ndeps--;
				memmove(&m->deps[d], &m->deps[d + 1],
					(m->ndeps - d) * sizeof(m->deps[0]));
				memmove(&m->edges[d], &m->edges[d + 1],
					(m->ndeps - d) * sizeof(m->edges[0]));
			} else {
				d++;
			}
		}
	}
	i = sc_node_index(g, n);
	g->n--;
	memmove(&g->nodes[i], &g->nodes[i + 1], (g->n - i) * sizeof(g->nodes[0]));
	sc_node_free(n);
	return CUDA_SUCCESS;
}

/* Copies up to *@num of @src's @n items into @out (NULL: count only). */
static CUresult sc_list_out(CUgraphNode *out, size_t *num, struct CUgraphNode_st *const *src,
			    size_t n)
{
	if (!num)
		return CUDA_ERROR_INVALID_VALUE;
	if (out) {
		for (size_t i = 0; i < n && i < *num; i++)
			out[i] = src[i];
		for (size_t i = n; i < *num; i++)
			out[i] = NULL;
		if (*num > n)
			*num = n;
	} else {
		*num = n;
	}
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_valid(hGraph, SC_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	return sc_list_out(nodes, numNodes, hGraph->nodes, hGraph->n);
}

SC_EXPORT CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes,
				       size_t *numRootNodes)
{
	struct CUgraphNode_st **roots;
	size_t n = 0;
	CUresult r;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_valid(hGraph, SC_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	roots = malloc((hGraph->n ? hGraph->n : 1) * sizeof(*roots));
	if (!roots)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < hGraph->n; i++)
		if (!hGraph->nodes[i]->ndeps)
			roots[n++] = hGraph->nodes[i];
	r = sc_list_out(rootNodes, numRootNodes, roots, n);
	free(roots);
	return r;
}

SC_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	struct CUgraphNode_st *n;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	n = sc_node_get(hNode);
	if (!n || !type)
		return CUDA_ERROR_INVALID_VALUE;
	*type = n->type;
	return CUDA_SUCCESS;
}

static CUresult sc_deps(CUgraphNode hNode, CUgraphNode *deps, CUgraphEdgeData *edges,
			size_t *num)
{
	struct CUgraphNode_st *n;
	size_t want;
	CUresult r;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	n = sc_node_get(hNode);
	if (!n || !num || (edges && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	want = *num;
	r = sc_list_out(deps, num, n->deps, n->ndeps);
	if (r == CUDA_SUCCESS && edges)
		for (size_t i = 0; i < want; i++) {
			if (i < n->ndeps)
				edges[i] = n->edges[i];
			else
				memset(&edges[i], 0, sizeof(edges[i]));
		}
	return r;
}

SC_EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies,
					      size_t *numDependencies)
{
	return sc_deps(hNode, dependencies, NULL, numDependencies);
}

SC_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
						 CUgraphEdgeData *edgeData,
						 size_t *numDependencies)
{
	return sc_deps(hNode, dependencies, edgeData, numDependencies);
}

SC_EXPORT CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes,
						size_t *numDependentNodes)
{
	struct CUgraphNode_st *n, **out;
	struct CUgraph_st *g;
	size_t k = 0;
	CUresult r;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	n = sc_node_get(hNode);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	g = n->graph;
	out = malloc((g->n ? g->n : 1) * sizeof(*out));
	if (!out)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < g->n; i++)
		for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
			if (g->nodes[i]->deps[d] == n) {
				out[k++] = g->nodes[i];
				break;
			}
	r = sc_list_out(dependentNodes, numDependentNodes, out, k);
	free(out);
	return r;
}

SC_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				       const CUgraphNode *dependencies, size_t numDependencies)
{
	struct CUgraphNode_st *n;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phGraphNode || !sc_handle_valid(hGraph, SC_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_node_new(hGraph, CU_GRAPH_NODE_TYPE_EMPTY, dependencies, numDependencies, &n);
	if (rc == 0)
		*phGraphNode = n;
	return sc_result(rc);
}
