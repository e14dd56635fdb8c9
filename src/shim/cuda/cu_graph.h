/*
 * Executable graphs as the CUDA shim schedules them: graph slicing.
 *
 * A cuGraphLaunch is one driver call however long the graph runs, so at
 * Lv1 a queue suspended behind a 20 ms graph stops only after it. The
 * shim therefore keeps, for every executable graph the application
 * instantiates, a private clone of its graph, and launches it as slices:
 * contiguous runs of the graph's nodes in a topological order, each an
 * executable graph of its own (a clone of the private graph with the
 * other nodes removed), sized to about the queue's in-flight budget from
 * the durations the XQueue learned per node kind and kernel, and each its
 * own XQueue command on the launch stream, so that the queue can stop
 * between slices. Slices run one after another on one stream, so every
 * dependency of the graph holds (dependencies across a slice boundary
 * become the boundary itself).
 *
 * Not split (launched whole, one command, as without slicing): graphs the
 * driver cannot clone (memory allocation and free nodes, conditional
 * nodes), graphs instantiated for device launch, graphs with node types
 * other than kernel, memcpy, memset, host, child graph, empty and event
 * record/wait (event nodes of one event stay in one slice), graphs under
 * Lv2/Lv3 without a budget, and every graph with XSCHED_CUDA_GRAPH_SLICE=0.
 *
 * Learning: a node whose duration the queue has not learned yet launches
 * as a slice of its own, with the node's kind and key (a kernel's
 * function, a copy's size...), which is how eager launches of the same
 * kernel teach the same estimate; once every node is known, the plan is
 * final: kept, and made again from the current estimates every
 * CG_REPLAN_LAUNCHES launches or when the budget changes (slices of an
 * unchanged cut are reused). Executable-graph updates are
 * applied to the whole executable and to the slices (and the private
 * graph); the updates the slices cannot take turn slicing off for that
 * executable (cu_graph_hooks.c). Launches of one executable keep the
 * driver's order across streams: a launch on another stream waits, in
 * the queue and on the device, for the previous one.
 */
#ifndef XS_CU_GRAPH_H
#define XS_CU_GRAPH_H

#include "shim/cuda/cu_queues.h"

struct cg_exec;

/*
 * Records executable @e that the application instantiated from @g with
 * @flags, in the current context: clones @g unless slicing is off. Out of
 * memory or a clone the driver refuses leave @e launched whole. Any
 * application thread.
 */
void cg_instantiated(CUgraphExec e, CUgraph g, unsigned long long flags);

/* The record of @e with a reference (cg_put()), or NULL. */
struct cg_exec *cg_get(CUgraphExec e);
void cg_put(struct cg_exec *x);

/*
 * Forgets @e (cuGraphExecDestroy): the executable, its slices and the
 * private graph are destroyed once no command of @e is left. False if @e
 * was not recorded (the caller then passes the call to the driver).
 */
bool cg_forget(CUgraphExec e);

/*
 * Submits a launch (or, @upload, an upload) of @e on scheduled stream @s:
 * one command per slice, or the whole executable as one command.
 */
CUresult cg_launch(struct cs_stream *s, CUgraphExec e, bool upload);

/*
 * Returns once every command of @x submitted so far reached the driver
 * (an update then changes no launch made before it, as natively). May
 * block while a queue holding them is suspended. Takes @x's lock; the
 * caller holds it from here until cg_unlock().
 */
void cg_quiesce_lock(struct cg_exec *x);
void cg_unlock(struct cg_exec *x);

/* With the lock: slicing ends for @x (launches whole from now on). */
void cg_whole_locked(struct cg_exec *x);

/* How a per-node update of the whole executable applies to the slices. */
enum cg_update {
	CG_UPD_KERNEL, CG_UPD_MEMCPY, CG_UPD_MEMSET, CG_UPD_HOST, /* private graph too */
	CG_UPD_CHILD, CG_UPD_ENABLED,                             /* slices only: plan frozen */
};

/*
 * With the lock, after the driver accepted the update on the whole
 * executable: applies it to node @node's slices through @apply(slice
 * executable, slice node) and to the private graph through @apply_graph
 * (NULL for the updates the graph cannot take). Any failure turns
 * slicing off for @x, which is then still correct.
 */
void cg_update_locked(struct cg_exec *x, CUgraphNode node, enum cg_update what,
		      CUresult (*apply)(CUgraphExec se, CUgraphNode sn, const void *arg),
		      CUresult (*apply_graph)(CUgraphNode pn, const void *arg), const void *arg);

/* With the lock, after the driver updated the whole executable from @g. */
void cg_exec_updated_locked(struct cg_exec *x, CUgraph g);

#endif
