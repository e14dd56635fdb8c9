/*
 * Internals of graph slicing shared by cu_graph.c (records, the launch
 * command) and cu_graph_plan.c (analysis, slices, the plan, updates).
 */
#ifndef XS_CU_GRAPH_INTERNAL_H
#define XS_CU_GRAPH_INTERNAL_H

#include "shim/cuda/cu_graph.h"
#include "shim/common/shim_map.h"

#include <pthread.h>
#include <stdatomic.h>

/* A final plan is made again, from what the queue learned since, this often. */
#define CG_REPLAN_LAUNCHES 64

struct cg_node {
	CUgraphNode node;       /* of the private graph */
	int type;               /* CU_GRAPH_NODE_TYPE_* */
	uint32_t kind;          /* XAL_CMD_*; 0: no device time (empty, event nodes) */
	uint64_t key;           /* est_key: function, bytes, host function, child graph */
	CUevent event;          /* event nodes */
};

/* Nodes [a, b) of the topological order, as an executable of their own. */
struct cg_slice {
	struct cg_slice *next;
	size_t a, b;
	CUgraph g;              /* the pruned clone it was instantiated from */
	CUgraphExec exec;
	_Atomic uint32_t uses;  /* commands of it not yet issued (nor dropped) */
};

enum { CG_NEW, CG_SLICED, CG_FROZEN, CG_WHOLE };

struct cg_exec {
	struct shim_map_node node; /* first; key: exec (the executables' map) */
	CUgraphExec exec;       /* the application's */
	_Atomic int refs;       /* the table's, and each command's */
	pthread_mutex_t lock;   /* below, unless noted */
	int state;
	CUgraph priv;           /* private clone of the graph */
	CUcontext ctx;
	unsigned long long flags;
	size_t n;
	struct cg_node *nodes;  /* topological order */
	bool *glued;            /* glued[i]: node i stays with node i - 1 (event pairs) */
	struct cg_slice *cache;
	struct cg_slice **plan; /* nplan slices; one NULL slice: the whole executable */
	size_t nplan;
	bool plan_final;        /* every duration was known when planned */
	int64_t plan_target;
	uint32_t plan_uses;     /* launches since planned (a final plan is reviewed) */
	uint64_t submitted;     /* launch commands submitted */
	_Atomic uint64_t issued; /* launch commands that reached the driver or were dropped */
	struct xq *last_xq;     /* queue of the last launch (a token once issued) */
	CUstream last_stream;   /* real stream of the last launch */
	bool last_recorded;     /* the last launch recorded done */
	CUevent done;           /* recorded after each launch that may be sliced */
	_Atomic int last_split; /* commands of the last launch (diagnostics) */
	_Atomic bool orphan;    /* its handle was reused: the executable is not ours */
};

/*
 * XSCHED_CUDA_GRAPH_SLICE, read once: -1 slicing off ("0"), 0 slices of
 * the queue's budget (unset, empty, "1", malformed), else the slice target
 * in ns (N > 1 alone is N us; "Nns", "Nus", "Nms" name the unit).
 */
int64_t cg_target_mode(void);

/*
 * The slices of the next launch on @q: 0 with x->plan set (one NULL slice:
 * launch the whole executable), or -EINVAL to launch whole this time (no
 * budget; a graph that cannot be sliced, or a slice the driver refused,
 * which end slicing). Lock held; the first call analyses the graph.
 */
int cg_plan(struct cg_exec *x, struct xq *q);

/* Kind and key of a slice's command: its one timed node's, else the slice's own. */
void cg_slice_key(const struct cg_exec *x, const struct cg_slice *s, uint32_t *kind,
		  uint64_t *key);

/* Forgets the plan and destroys the slices no command waits to issue. */
void cg_slices_drop(struct cg_exec *x);

#endif
