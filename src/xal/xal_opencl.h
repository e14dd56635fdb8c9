/*
 * The `opencl` XAL backend: XQueues over OpenCL command queues.
 *
 * A command is a closure that makes one enqueue call on the queue when the
 * XQueue launches it (struct xal_cl_cmd, embedded first by the shim's
 * command type). A sync point is the command's own event on an in-order
 * queue; on an out-of-order queue it is a marker enqueued right after the
 * command, which completes only when every earlier command did. OpenCL
 * exposes no preemption to the host: Lv1 only.
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

struct xal_cl_cmd_ops {
	/*
	 * Enqueues the command on @queue, its event into *@ev when @ev is not
	 * NULL. Called once, by the XQueue's launch (any thread, XQueue lock
	 * held). Returns the OpenCL result.
	 */
	cl_int (*issue)(struct xal_cl_cmd *c, cl_command_queue queue, cl_event *ev);
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
};

struct xal_cl_cmd {
	struct xal_cmd base;
	const struct xal_cl_cmd_ops *ops;
	bool want_event;        /* issue with an event even without a sync point */
	cl_event ev;            /* the command's event, if requested (owned) */
	cl_event done;          /* sync point (owned) */
	cl_int rc;              /* issue()'s result */
	const struct cl_fns *cl; /* set at launch, to release the events */
	_Atomic int refs;       /* the XQueue's reference and the submitter's */
	_Atomic int launched;
};

/*
 * A hardware queue over @queue (not retained: its creator keeps it alive
 * while the hwq exists), driven through @cl (must outlive the hwq).
 * @device names the device for the scheduler. Errors: -ENOMEM.
 */
int xal_cl_hwq_create(const struct cl_fns *cl, cl_command_queue queue, bool out_of_order,
		      const char *device, struct xal_hwq **out);

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
