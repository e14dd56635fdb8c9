/*
 * The `opencl` XAL backend: XQueues over OpenCL command queues.
 *
 * A command is a closure that makes one enqueue call on the queue when the
 * XQueue launches it (struct xal_cl_cmd, embedded first by the shim's
 * command type). A sync point is the command's own event on an in-order
 * queue; on an out-of-order queue it is a marker enqueued right after the
 * command, which completes only when every earlier command did. OpenCL
 * exposes no preemption to the host; Lv2 comes from the guardian the shim
 * compiles into kernels (its ABI: xal_opencl_guard.h), once the shim
 * asked for it when it created an in-order queue (XAL_CL_LV2):
 *
 * - deactivate() sets the queue's control word (a fine-grain SVM word the
 *   host stores to where the device has one, else a buffer written by a
 *   small non-blocking write on a second queue, which lands when the
 *   device gets to it); work-groups that start after it see it and skip.
 *   Started groups finish: a kernel is cut between work-groups.
 * - A guarded launch (xal_cl_cmd.g) gets a progress record: fine-grain
 *   SVM zeroed and read by the host where the device has it, else a
 *   buffer zeroed by a fill before its first launch and read on the
 *   second queue once the launch completed (nothing is enqueued behind a
 *   launch: a driver may never run what follows a failed command). A
 *   launch that completed
 *   with groups skipped in it is cut (unless a forced pass, below, ran
 *   them): sync()/query() report
 *   -ECANCELED (XAL_CAP_FLUSH) once the driver queue drained, and the
 *   XQueue launches it again, with the same record and NDRange, before
 *   anything after it; the groups that ran skip themselves.
 * - The control word stays set after reactivate() until every guarded
 *   launch before it is resolved, so no kernel behind a cut one can run
 *   ahead of its relaunch; and no other command is launched while a
 *   guarded launch is unresolved (blocked_on), since a copy or an
 *   uninstrumented kernel cannot be cut or run twice.
 * - The command's final event (its last launch's) is reported to the
 *   submitter through ops->completed once it is known complete for good.
 * - A call the shim hands to the driver at once (a map, say) must land
 *   behind the final run of every earlier command, not between a cut
 *   launch and its relaunch: settle() (xal_ops) completes each
 *   unresolved guarded launch on the spot with a forced pass (same
 *   NDRange and record, a control word that is never set: the groups that
 *   have not run run now), so that such a call never waits for the queue
 *   to be resumed. Those launches are then final; preemption gives way
 *   to the application's call.
 *
 * Command errors are OpenCL's: a failed enqueue is the command's result
 * (xal_cl_cmd.rc), a failed execution its event's negative status; the
 * XQueue sees -EIO for either, and the shim reports them the OpenCL way.
 */
#ifndef XS_XAL_OPENCL_H
#define XS_XAL_OPENCL_H

#include "vendor/opencl/cl_fns.h"
#include "xal/xal.h"

#include <stdatomic.h>
#include <stdbool.h>

struct xal_cl_cmd;

/*
 * What a launch of an instrumented kernel passes in the guardian's hidden
 * arguments (xal_opencl_guard.h): the queue's control word (a
 * buffer, or an SVM pointer when @ctl_svm is set) and the launch's
 * progress record. A NULL @ctl turns the guardian off for the launch.
 */
struct xal_cl_guard_args {
	cl_mem ctl;
	void *ctl_svm;
	cl_mem rec;
	void *rec_svm;          /* the record as an SVM pointer instead */
	cl_uint attempt;        /* CLG_ATT: which issue of the record this is */
};

struct xal_cl_cmd_ops {
	/*
	 * Enqueues the command on @queue, its event into *@ev when @ev is not
	 * NULL. Called by the XQueue's launch (any thread, XQueue lock held),
	 * for a guarded launch once more per relaunch (g.launches > 1) and
	 * per forced pass (g.forcing: from settle(), the creator's
	 * thread, no XQueue lock; no issued() follows). @g: what a kernel
	 * with the guardian takes in its hidden arguments for this issue (the
	 * backend's, valid during the call; all NULL: the guardian off).
	 * Returns the OpenCL result.
	 */
	cl_int (*issue)(struct xal_cl_cmd *c, cl_command_queue queue,
			const struct xal_cl_guard_args *g, cl_event *ev);
	/*
	 * Optional. Called right after issue() with its result and event
	 * (NULL unless requested and successful), lock still held.
	 */
	void (*issued)(struct xal_cl_cmd *c, cl_int rc, cl_event ev);
	/* Frees what the command owns; may be NULL. */
	void (*fini)(struct xal_cl_cmd *c);
	/* Optional: xal_cmd_ops.blocked_on and .deferred for this command. */
	void *(*blocked_on)(struct xal_cl_cmd *c);
	void (*deferred)(struct xal_cl_cmd *c);
	/*
	 * Optional, for guarded launches: called when the command is complete
	 * for good (its last launch's event is @c->ev, complete), by each
	 * thread that finds out (a sync without the lock, a query with it, or
	 * the driver's completion callback: then @unlocked, no lock of the
	 * XQueue or the backend held), so maybe more than once and on two
	 * threads at a time: the creator acts on the first call, and a later
	 * caller does not return (nor its sync) before the creator has heard
	 * of it. Must not block or call into the XQueue.
	 */
	void (*completed)(struct xal_cl_cmd *c, bool unlocked);
	/*
	 * Optional: after an @unlocked completed(), on the same thread: where
	 * the creator runs what may call the application.
	 */
	void (*completed_after)(struct xal_cl_cmd *c);
};

/* What the backend keeps of a guarded launch (xal_cl_cmd.g). */
struct xal_cl_guard {
	bool on;                /* set by the creator: a launch that may be cut */
	uint64_t groups;        /* its work-groups (set by the creator) */
	/* --- backend --- */
	uint32_t launches;      /* issued so far (1: the first) */
	uint32_t attempt;       /* launches and forced passes issued (CLG_ATT) */
	int state;              /* launched, final or cut */
	cl_mem rec;             /* the progress record (owned), or */
	uint32_t *rec_svm;      /* the record in fine-grain SVM (owned) */
	uint32_t skipped;       /* CLG_REC_SKIPPED, read once each launch completed */
	bool counted;           /* @skipped read for this launch */
	uint32_t skipped_before; /* @skipped before this launch */
	struct xal_cl_cmd *next; /* the hwq's unresolved launches */
	bool listed;
	cl_event cb_ev;         /* the launch xg_done_cb() may judge (glock) */
	bool forcing;           /* its forced pass is being issued (settle) */
	bool forced;            /* ... was issued: the record is read again */
	bool failed;            /* its launch failed: final, never issued again */
	bool recounted;
	/* Lv2, every command (glock): launches begun, and one being issued
	 * (its events not set yet); a sync on another thread holds its own
	 * references to the events of the launch it judges (xg_state()). */
	uint32_t issues;
	bool issuing;
};

struct xal_cl_cmd {
	struct xal_cmd base;
	const struct xal_cl_cmd_ops *ops;
	bool want_event;        /* issue with an event even without a sync point */
	cl_event ev;            /* the command's event, if requested (owned) */
	cl_event done;          /* sync point (owned) */
	cl_int rc;              /* issue()'s result */
	cl_int first_rc;        /* ... at the first launch: readable once xal_cl_cmd_launched()
				 * (a relaunch writes @rc again, never this) */
	const struct cl_fns *cl; /* set at launch, to release the events */
	_Atomic int refs;       /* the XQueue's reference and the submitter's */
	_Atomic int launched;
	struct xal_hwq *hwq;    /* the hwq it is for (set by the creator), or NULL */
	struct xal_cl_guard g;
};

/* xal_cl_hwq_create() flags. */
#define XAL_CL_LV2 1u           /* Lv2 through the guardian, where it can be had */
#define XAL_CL_LV2_BUFFERS 2u   /* ... with the control word and the records in
				 * buffers even where the device has fine-grain SVM */

/*
 * A hardware queue over @queue (not retained: its creator keeps it alive
 * while the hwq exists), driven through @cl (must outlive the hwq).
 * @device names the device for the scheduler. With XAL_CL_LV2 and an
 * in-order queue, it makes the queue's control word and sets XAL_CAP_LV2 |
 * XAL_CAP_FLUSH | XAL_CAP_SYNC_ANY (absent from caps: the driver refused
 * what Lv2 takes, or the queue is out of order; the hwq is at Lv1).
 * Errors: -ENOMEM.
 */
int xal_cl_hwq_create(const struct cl_fns *cl, cl_command_queue queue, bool out_of_order,
		      const char *device, unsigned flags, struct xal_hwq **out);

/* Objects an hwq made in its queue's context (xal_cl_hwq_held()). */
struct xal_cl_held {
	uint32_t buffers;       /* memory objects */
	uint32_t svm;           /* SVM allocations */
	uint32_t queues;        /* command queues */
};

/*
 * Adds to *@out what @hwq holds in its context now (its control words,
 * its second queue, the progress records of its commands), each of which
 * may hold a reference on the context that the application must not see
 * (CL_CONTEXT_REFERENCE_COUNT). Any thread; a snapshot.
 */
void xal_cl_hwq_held(struct xal_hwq *hwq, struct xal_cl_held *out);

/*
 * When the device last went quiet for Lv2 queue @hwq, in the device's
 * profiling clock (ns): the end of the last command it ran before the
 * wait_quiet() that returned last, i.e. after a synchronous suspension
 * the moment the device stopped running the queue's work (a cut launch's
 * last work-group), not the moment the host heard of it. 0 when unknown:
 * a queue without CL_QUEUE_PROFILING_ENABLE, or nothing was in flight.
 */
uint64_t xal_cl_hwq_quiet_end(struct xal_hwq *hwq);

/*
 * When that last command started on the device, in the same clock (0
 * when unknown): a synchronous suspension that came before it tells how
 * long the device took to start a kernel it was then told to skip, not
 * how long a running one took to stop (bench/bench_cl_preempt.c).
 */
uint64_t xal_cl_hwq_quiet_start(struct xal_hwq *hwq);

/* How the control word of @hwq reaches the device ("svm", "write"), or NULL
 * (not at Lv2). */
const char *xal_cl_hwq_ctl_kind(struct xal_hwq *hwq);

/* How many launches of Lv2 queue @hwq were found cut and wait to be
 * launched again (0 when not at Lv2): tests/opencl/cl_lv2_prog.c. */
uint32_t xal_cl_hwq_cut_waiting(struct xal_hwq *hwq);

/*
 * Initialises @c (calloc()ed by the caller, embedding struct xal_cl_cmd
 * first; freed with free() once both references are dropped, after
 * ops->fini). The submitter holds the second reference until it calls
 * xal_cl_cmd_put(), so it may look at the command after xq_submit().
 */
void xal_cl_cmd_init(struct xal_cl_cmd *c, const struct xal_cl_cmd_ops *ops,
		     uint32_t kind, uint64_t est_key);

/* Drops the submitter's reference. */
void xal_cl_cmd_put(struct xal_cl_cmd *c);

static inline bool xal_cl_cmd_launched(struct xal_cl_cmd *c)
{
	return atomic_load(&c->launched) != 0;
}

#endif
