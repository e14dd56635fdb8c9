/*
 * The `opencl` XAL backend (see xal_opencl.h): hardware queues over
 * OpenCL command queues, launches, syncs and the command objects. A queue
 * with the guardian takes its Lv2 path from xal_opencl_lv2.c.
 */
#include "xal/xal_opencl_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int xal_cl_launch(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	struct xal_cl_hwq *h = to_hwq(hwq);
	struct xal_cl_cmd *c = to_cmd(cmd);
	bool sync = flags & XAL_LAUNCH_SYNC_POINT;
	bool own_ev = c->want_event || (sync && !h->ooo);

	if (h->lv2)
		return xg_launch(h, c);

	static const struct xal_cl_guard_args off;

	c->cl = h->cl;
	c->rc = c->ops->issue(c, h->queue, &off, own_ev ? &c->ev : NULL);
	if (c->rc != CL_SUCCESS)
		c->ev = NULL;
	if (sync) {
		/* The command's event, or a marker behind it: the marker waits
		 * for every earlier command, in any queue order. */
		if (c->ev && !h->ooo && h->cl->clRetainEvent(c->ev) == CL_SUCCESS)
			c->done = c->ev;
		else if (h->cl->clEnqueueMarkerWithWaitList(h->queue, 0, NULL, &c->done))
			c->done = NULL;
		/* Drivers may hold commands back until a flush. */
		h->cl->clFlush(h->queue);
	}
	/* Published with @launched (its store releases it). */
	if (!atomic_load_explicit(&c->launched, memory_order_relaxed))
		c->first_rc = c->rc;
	atomic_store(&c->launched, 1);
	if (c->ops->issued)
		c->ops->issued(c, c->rc, c->ev);
	return c->rc == CL_SUCCESS ? 0 : -EIO;
}

int xal_cl_event_state(const struct cl_fns *cl, cl_event ev, bool wait)
{
	cl_int st = CL_COMPLETE;

	if (!ev)
		return 0;
	if (wait)
		cl->clWaitForEvents(1, &ev);
	if (cl->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL))
		return -EIO;
	if (st < 0)
		return -EIO;
	return st == CL_COMPLETE ? 0 : -EBUSY;
}

static int xal_cl_sync(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	struct xal_cl_cmd *c = to_cmd(cmd);

	(void)flags;
	if (to_hwq(hwq)->lv2)
		return c->g.on ? xg_state(to_hwq(hwq), c, true)
			       : xg_plain_state(to_hwq(hwq), c, true);
	return xal_cl_event_state(to_hwq(hwq)->cl, c->done, true);
}

static int xal_cl_sync_all(struct xal_hwq *hwq, unsigned flags)
{
	struct xal_cl_hwq *h = to_hwq(hwq);

	(void)flags;
	if (h->cl->clFinish(h->queue) != CL_SUCCESS)
		return -EIO;
	/* The newest unresolved guarded launch answers for all. */
	return h->lv2 ? xg_sync_all(h) : 0;
}

static int xal_cl_query(struct xal_hwq *hwq, struct xal_cmd *cmd)
{
	struct xal_cl_cmd *c = to_cmd(cmd);

	if (to_hwq(hwq)->lv2)
		return c->g.on ? xg_state(to_hwq(hwq), c, false)
			       : xg_plain_state(to_hwq(hwq), c, false);
	return xal_cl_event_state(to_hwq(hwq)->cl, c->done, false);
}

static void xal_cl_hwq_destroy(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);

	if (h->lv2 && !xg_hwq_fini(h))
		return;
	free(h);
}

static const struct xal_ops xal_cl_ops = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "opencl",
	.launch = xal_cl_launch,
	.sync = xal_cl_sync,
	.sync_all = xal_cl_sync_all,
	.query = xal_cl_query,
	.hwq_destroy = xal_cl_hwq_destroy,
};

const struct xal_ops xal_cl_ops_lv2 = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "opencl",
	.launch = xal_cl_launch,
	.sync = xal_cl_sync,
	.sync_all = xal_cl_sync_all,
	.query = xal_cl_query,
	.deactivate = xg_deactivate,
	.reactivate = xg_reactivate,
	.wait_quiet = xg_wait_quiet,
	.hwq_destroy = xal_cl_hwq_destroy,
	.settle = xg_settle,
};

int xal_cl_hwq_create(const struct cl_fns *cl, cl_command_queue queue, bool out_of_order,
		      const char *device, unsigned flags, struct xal_hwq **out)
{
	struct xal_cl_hwq *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->base.ops = &xal_cl_ops;
	snprintf(h->base.device, sizeof(h->base.device), "%s", device);
	h->cl = cl;
	h->queue = queue;
	h->ooo = out_of_order;
	/* Lv1 where Lv2 cannot be had. */
	if (flags & XAL_CL_LV2)
		xg_enable(h, flags & XAL_CL_LV2_BUFFERS);
	*out = &h->base;
	return 0;
}

/* --- commands --------------------------------------------------------------- */

void xal_cl_cmd_release(struct xal_cl_cmd *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	xg_cmd_fini(c);
	if (c->cl && c->g.rec)
		c->cl->clReleaseMemObject(c->g.rec);
	if (c->cl && c->g.rec_svm && c->hwq)
		c->cl->clSVMFree(to_hwq(c->hwq)->ctx, c->g.rec_svm);
	if (c->hwq && (c->g.rec || c->g.rec_svm))
		atomic_fetch_sub(&to_hwq(c->hwq)->records, 1);
	if (c->cl && c->ev)
		c->cl->clReleaseEvent(c->ev);
	if (c->cl && c->done)
		c->cl->clReleaseEvent(c->done);
	if (c->ops->fini)
		c->ops->fini(c);
	free(c);
}

static void xal_cl_cmd_destroy(struct xal_cmd *cmd)
{
	xal_cl_cmd_release(to_cmd(cmd));
}

static void *xal_cl_cmd_blocked_on(struct xal_cmd *cmd)
{
	struct xal_cl_cmd *c = to_cmd(cmd);
	struct xal_cl_hwq *h = c->hwq ? to_hwq(c->hwq) : NULL;

	/* Nothing that cannot be cut goes behind a launch that may be, but
	 * behind one whose forced pass is issued (xg_settle()): that
	 * pass runs whatever the launch skipped, before it on the queue. */
	if (h && h->lv2 && !c->g.on && atomic_load(&h->unforced))
		return h;
	/* Nothing goes before a cut launch's relaunch (xg_behind_cut()). */
	if (h && h->lv2 && xg_behind_cut(h, c))
		return h;
	return c->ops->blocked_on ? c->ops->blocked_on(c) : NULL;
}

static void xal_cl_cmd_deferred(struct xal_cmd *cmd)
{
	struct xal_cl_cmd *c = to_cmd(cmd);

	if (c->ops->deferred)
		c->ops->deferred(c);
}

static const struct xal_cmd_ops xal_cl_cmd_ops = {
	.destroy = xal_cl_cmd_destroy,
	.blocked_on = xal_cl_cmd_blocked_on,
	.deferred = xal_cl_cmd_deferred,
};

void xal_cl_cmd_init(struct xal_cl_cmd *c, const struct xal_cl_cmd_ops *ops, uint32_t kind,
		     uint64_t est_key)
{
	c->base.ops = &xal_cl_cmd_ops;
	c->base.kind = kind;
	c->base.est_key = est_key;
	c->ops = ops;
	atomic_init(&c->refs, 2);
}

void xal_cl_cmd_put(struct xal_cl_cmd *c)
{
	xal_cl_cmd_release(c);
}
