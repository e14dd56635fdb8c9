/*
 * The `ze` XAL backend: XQueues over Level Zero command queues and
 * immediate command lists.
 *
 * A command is a closure that makes one driver call when the XQueue
 * launches it (struct xal_ze_cmd, embedded first by the shim's command
 * types). There are two kinds of hardware queue:
 *
 *  - a command queue: each command is an execution of closed command
 *    lists. A sync point is a fence passed to that execution: one of ours,
 *    from a per-queue pool, unless the application passed its own fence,
 *    which the backend then waits on under a guard (struct xal_ze_fence)
 *    so that the application may reset or destroy it once it has seen the
 *    execution complete. sync_all is zeCommandQueueSynchronize.
 *  - an immediate command list: each command is one append. A sync point
 *    is a barrier appended right after the command, signalling an event of
 *    ours (per-list pools); sync_all appends such a barrier and waits on it.
 *    Appends to one list are serialised by the hwq's append lock, which the
 *    shim also takes for the appends it passes straight to the driver.
 *
 * Like every XQueue backend this relies on the hardware queue completing
 * work in submission order: Level Zero submits the executions of a queue
 * in the order received, and a barrier completes after everything
 * appended before it. Level Zero exposes no preemption to the host: Lv1
 * only.
 *
 * Errors: a failed launch or sync records the driver's ze_result_t as the
 * queue's pending error and returns -EIO to the XQueue; the shim returns
 * the result at the application's next synchronisation, once.
 *
 * The Level Zero functions the shim and this backend call are the CALL and
 * HOOK rows of src/vendor/ze/ze_functions.def, reached through a struct
 * xal_ze_fns of typed pointers filled by the shim (the loader is
 * dlopen()ed, never linked).
 */
#ifndef XS_XAL_ZE_H
#define XS_XAL_ZE_H

#include "vendor/ze/ze_fns.h"
#include "xal/xal.h"

#include <stdatomic.h>
#include <stdbool.h>

/*
 * Typed pointers to the real functions of the CALL and HOOK rows of
 * ze_functions.def (NULL: the loader lacks one).
 */
struct xal_ze_fns {
#define XAL_ZE_FIELD_PASS(name)
#define XAL_ZE_FIELD_CALL(name) __typeof__(&name) name;
#define XAL_ZE_FIELD_HOOK(name) __typeof__(&name) name;
#define XS_ZE_FN(name, how) XAL_ZE_FIELD_##how(name)
#include "vendor/ze/ze_functions.def"
#undef XAL_ZE_FIELD_PASS
#undef XAL_ZE_FIELD_CALL
#undef XAL_ZE_FIELD_HOOK
};

struct xal_ze_cmd;
struct xal_ze_hwq;
struct xal_ze_fence;

/* Where a command is issued (see xal_ze_cmd_ops.issue). */
struct xal_ze_target {
	ze_command_queue_handle_t queue;        /* a command queue's hwq, else NULL */
	ze_command_list_handle_t list;          /* an immediate list's hwq, else NULL */
	ze_fence_handle_t fence;                /* queue: the fence to pass, or NULL */
};

struct xal_ze_cmd_ops {
	/*
	 * Makes the driver call on @t. Called once, from the XQueue's launch
	 * (any thread, XQueue lock held; for a list, its append lock too).
	 * On a command queue the execution must pass @t->fence. Returns the
	 * driver's result.
	 */
	ze_result_t (*issue)(struct xal_ze_cmd *c, const struct xal_ze_target *t);
	/* Frees what the command owns (deep copies, references); may be NULL. */
	void (*fini)(struct xal_ze_cmd *c);
	/* Optional: xal_cmd_ops.blocked_on for this command. */
	void *(*blocked_on)(struct xal_ze_cmd *c);
};

struct xal_ze_cmd {
	struct xal_cmd base;
	const struct xal_ze_cmd_ops *ops;
	/* Set by the creator: the application's fence of an execution (a
	 * reference the command owns, dropped on destroy), or NULL. */
	struct xal_ze_fence *app_fence;
	/* --- backend --- */
	struct xal_ze_hwq *hwq;         /* set at launch */
	ze_fence_handle_t fence;        /* sync point: a fence of ours */
	ze_event_handle_t event;        /* sync point: an event of ours */
	uint32_t app_gen;               /* sync point: app_fence at this generation */
	bool borrowed;                  /* the sync point is app_fence */
};

/*
 * A hardware queue over the command queue @queue (the application's; it
 * must outlive the hwq), driven through @ze (must outlive the hwq).
 * @device names the device for the scheduler. Errors: -ENOMEM.
 */
int xal_ze_hwq_create_queue(const struct xal_ze_fns *ze, ze_command_queue_handle_t queue,
			    const char *device, struct xal_hwq **out);

/*
 * A hardware queue over the immediate command list @list of @ctx and @dev
 * (its events are created there). As xal_ze_hwq_create_queue() otherwise.
 */
int xal_ze_hwq_create_list(const struct xal_ze_fns *ze, ze_command_list_handle_t list,
			   ze_context_handle_t ctx, ze_device_handle_t dev, const char *device,
			   struct xal_hwq **out);

/* Takes the queue's pending error (ZE_RESULT_SUCCESS if none). */
ze_result_t xal_ze_hwq_error(struct xal_hwq *hwq);

/*
 * Drops the queue's pending error if it is @rc: the caller reported it
 * already (a launch that failed on the caller's own thread).
 */
void xal_ze_hwq_forget(struct xal_hwq *hwq, ze_result_t rc);

/*
 * The append lock of an immediate list's hwq (no-ops for a command queue):
 * held by the caller around an append it makes to the list itself, so
 * that it never runs concurrently with the backend's. Never taken while
 * holding it.
 */
void xal_ze_hwq_lock(struct xal_hwq *hwq);
void xal_ze_hwq_unlock(struct xal_hwq *hwq);

/*
 * Initialises @c (calloc()ed by the caller, embedding struct xal_ze_cmd
 * first; freed with free() on destroy, after ops->fini). @kind is enum
 * xal_cmd_kind, @est_key groups equal commands for duration learning.
 */
void xal_ze_cmd_init(struct xal_ze_cmd *c, const struct xal_ze_cmd_ops *ops, uint32_t kind,
		     uint64_t est_key);

/*
 * An application fence the backend may wait on. Created with one
 * reference; each command holding it owns one more.
 */
struct xal_ze_fence *xal_ze_fence_create(const struct xal_ze_fns *ze, ze_fence_handle_t h);
struct xal_ze_fence *xal_ze_fence_ref(struct xal_ze_fence *f);
void xal_ze_fence_unref(struct xal_ze_fence *f);

/*
 * Called before the application resets or destroys the fence, once every
 * execution that used it completed (the caller waited on its XQueue):
 * syncs on those executions then return at once, and this returns when no
 * backend call uses the handle any more. Any thread, no lock held.
 */
void xal_ze_fence_retire(struct xal_ze_fence *f);

#endif
