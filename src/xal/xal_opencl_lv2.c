/*
 * Lv2 of the `opencl` XAL backend (see xal_opencl.h): the queue's control
 * word, the progress records of guarded launches and their launches
 * (xg_launch()), the driver's completion callback, deactivation and
 * reactivation. How a launch is judged once complete, and the forced
 * passes, are xal_opencl_resolve.c's. The words the device shares with
 * the host are the guardian's ABI (xal_opencl_guard.h).
 *
 * Locks: glock guards the list of unresolved launches and the hwq's Lv2
 * state; settle_lock is held while forced passes are issued (outside
 * glock: a driver may run event callbacks, which take glock, inside an
 * enqueue). Nothing here calls into the XQueue.
 */
#include "xal/xal_opencl_internal.h"
#include "xal/xal_opencl_guard.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const uint32_t xg_one = CLG_CTL_SKIP, xg_zero = CLG_CTL_RUN;

/*
 * Sets the control word to @v. A buffer is written on the second queue
 * only (made with it, xg_make_ctl()), so that the writes land in the
 * order they were made: a clear on the hwq's own queue and a set on the
 * second one could land in either order (and race in the driver).
 *
 * A set lands when it lands: the deactivation is asynchronous. A clear
 * has landed when this returns (a blocking write, behind any set still on
 * its way), for it comes right before a launch (xg_launch()) or once
 * nothing launched may be cut (xg_reactivate()): a clear that landed
 * after the next kernel started would cut that kernel's first groups
 * while the kernels queued behind it ran those groups whole, ahead of the
 * cut one's relaunch (wrong results). No kernel that reads the word is
 * running then, so the write does not wait for one. glock held.
 */
static void xg_ctl_set(struct xal_cl_hwq *h, const uint32_t *v)
{
	if (h->ctl_svm) {
		atomic_store(h->ctl_svm, *v);
		return;
	}
	/* Static sources: the writes never race a reuse. */
	h->cl->clEnqueueWriteBuffer(h->side, h->ctl, *v ? CL_FALSE : CL_TRUE, 0, sizeof(*v), v,
				    0, NULL, NULL);
	if (*v)
		h->cl->clFlush(h->side);
}

/* Replaces the hwq's last event with @ev (a reference taken). glock held. */
void xg_set_last(struct xal_cl_hwq *h, cl_event ev)
{
	if (!ev || h->cl->clRetainEvent(ev) != CL_SUCCESS)
		return;
	if (h->last)
		h->cl->clReleaseEvent(h->last);
	h->last = ev;
}

static void xg_list_unlink(struct xal_cl_hwq *h, struct xal_cl_cmd *c);

static void xg_list_add(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	c->g.next = NULL;
	c->g.listed = true;
	if (h->tail)
		h->tail->g.next = c;
	else
		h->head = c;
	h->tail = c;
	atomic_fetch_add(&h->unresolved, 1);
	if (!c->g.forced)
		atomic_fetch_add(&h->unforced, 1);
}

/* Takes @c out of the unresolved list. glock held. */
void xg_list_del(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	xg_list_unlink(h, c);
	/* Nothing left to force or to read again after a forced pass. */
	if (!h->head && h->forced_last) {
		h->cl->clReleaseEvent(h->forced_last);
		h->forced_last = NULL;
	}
}

static void xg_list_unlink(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	struct xal_cl_cmd **pp, *prev = NULL;

	if (!c->g.listed)
		return;
	for (pp = &h->head; *pp && *pp != c; pp = &(*pp)->g.next)
		prev = *pp;
	if (*pp)
		*pp = c->g.next;
	if (h->tail == c)
		h->tail = prev;
	c->g.listed = false;
	atomic_fetch_sub(&h->unresolved, 1);
	if (!c->g.forced)
		atomic_fetch_sub(&h->unforced, 1);
}

/*
 * Before a guarded first launch: the record, zeroed (SVM: by the host; a
 * buffer: by a fill on the queue). Returns the OpenCL result.
 */
static cl_int xg_prepare(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	size_t size = clg_rec_size(c->g.groups);
	cl_int rc;

	if (h->ctl_svm) {
		if (!c->g.rec_svm) {
			if (!(c->g.rec_svm = h->cl->clSVMAlloc(h->ctx, CL_MEM_READ_WRITE |
									CL_MEM_SVM_FINE_GRAIN_BUFFER,
							       size, 0)))
				return CL_OUT_OF_RESOURCES;
			atomic_fetch_add(&h->records, 1);
		}
		memset(c->g.rec_svm, 0, size);
		return CL_SUCCESS;
	}
	if (!c->g.rec) {
		if (!(c->g.rec = h->cl->clCreateBuffer(h->ctx, CL_MEM_READ_WRITE, size, NULL, &rc)))
			return rc;
		atomic_fetch_add(&h->records, 1);
	}
	return h->cl->clEnqueueFillBuffer(h->queue, c->g.rec, &xg_zero, sizeof(xg_zero), 0, size,
					  0, NULL, NULL);
}

/*
 * Reads the counts of @c's launch, which completed. Returns 0, or -EIO.
 * glock held (the second queue is the hwq's).
 */
int xg_count(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	if (c->g.counted)
		return 0;
	if (c->g.rec_svm) {
		c->g.skipped = c->g.rec_svm[CLG_REC_SKIPPED];
	} else {
		if (h->cl->clEnqueueReadBuffer(h->side, c->g.rec, CL_TRUE,
					       CLG_REC_SKIPPED * sizeof(uint32_t),
					       sizeof(c->g.skipped), &c->g.skipped, 0, NULL,
					       NULL) != CL_SUCCESS)
			return -EIO;
	}
	c->g.counted = true;
	return 0;
}

void xg_guard_args(struct xal_cl_cmd *c, struct xal_cl_guard_args *out)
{
	struct xal_cl_hwq *h = c->hwq ? to_hwq(c->hwq) : NULL;

	memset(out, 0, sizeof(*out));
	if (!c->g.on || !h || !h->lv2 || (!c->g.rec && !c->g.rec_svm))
		return;
	if (c->g.forcing) {
		out->ctl = h->ctl_zero;
		out->ctl_svm = h->ctl_zero_svm;
	} else {
		out->ctl = h->ctl;
		out->ctl_svm = (void *)h->ctl_svm;
	}
	out->rec = c->g.rec;
	out->rec_svm = c->g.rec_svm;
	out->attempt = c->g.attempt;
}

/*
 * Tells the creator that guarded @c is complete for good. Two threads may
 * find out at the same time (the driver's callback and a sync): both tell
 * it (xal_cl_cmd_ops.completed), so that the one that loses does not let
 * its caller see the command done before the creator heard of it. Nothing
 * of the hwq is touched after completed(): the application may release
 * the queue as soon as it sees the command done.
 */
void xg_completed(struct xal_cl_cmd *c, bool unlocked)
{
	if (c->ops->completed)
		c->ops->completed(c, unlocked);
}

static void CL_CALLBACK xg_done_cb(cl_event ev, cl_int status, void *arg);

/*
 * launch() at Lv2: every command gets its event (XAL_CAP_SYNC_ANY); a
 * guarded one its record (first launch), and the read of its counts,
 * whose event is its sync point.
 */
int xg_launch(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	bool guarded = c->g.on;
	cl_event old_ev, old_done, ev = NULL, done = NULL;
	cl_int rc = CL_SUCCESS;

	c->cl = h->cl;
	pthread_mutex_lock(&h->glock);
	/* Failed, and sent again with the cut launches around it
	 * (xg_failed()): its failure stands, nothing is issued. */
	if (guarded && c->g.failed) {
		pthread_mutex_unlock(&h->glock);
		/* Launched before (its first launch published first_rc). */
		return -EIO;
	}
	/* Still listed: its last launch passed the gate (xg_behind_cut())
	 * just as a launch before it was found cut, and the XQueue's flush
	 * sends it again. That launch is done (drained before the flush):
	 * count its skips and take it off the list. Should the count fail,
	 * this launch is judged cut, which only costs a relaunch. */
	if (guarded && c->g.listed) {
		xg_count(h, c);
		xg_list_del(h, c);
	}
	/* Not for a launch that a cut one found after the gate let it
	 * through (xg_behind_cut()): it skips whole, and goes again after. */
	if (h->clear_pending && !atomic_load(&h->unresolved) &&
	    (!h->cut_waiting || (guarded && c->g.state == XG_CUT))) {
		h->clear_pending = false;
		xg_ctl_set(h, &xg_zero);
	}
	if (guarded) {
		if (c->g.state == XG_CUT)
			h->cut_waiting--;
		c->g.launches++;
		c->g.attempt++;
		c->g.state = XG_LAUNCHED;
		c->g.skipped_before = c->g.counted ? c->g.skipped : 0;
		c->g.counted = false;
	}
	/* A relaunch replaces the events of the launch before, which a sync
	 * on another thread may be judging still (xg_take()). */
	old_ev = c->ev;
	old_done = c->done;
	c->ev = c->done = NULL;
	c->g.issues++;
	c->g.issuing = true;
	if (guarded)
		h->launching++;
	pthread_mutex_unlock(&h->glock);
	if (old_ev)
		h->cl->clReleaseEvent(old_ev);
	if (old_done)
		h->cl->clReleaseEvent(old_done);
	if (guarded && c->g.launches == 1)
		rc = xg_prepare(h, c);
	if (rc == CL_SUCCESS) {
		struct xal_cl_guard_args ga;

		xg_guard_args(c, &ga);
		c->rc = c->ops->issue(c, h->queue, &ga, &ev);
	}
	else
		c->rc = rc;
	if (c->rc != CL_SUCCESS)
		ev = NULL;
	if (ev && h->cl->clRetainEvent(ev) == CL_SUCCESS)
		done = ev;
	pthread_mutex_lock(&h->glock);
	c->ev = ev;
	c->done = done;
	c->g.issuing = false;
	if (guarded)
		h->launching--;
	xg_set_last(h, c->done);
	if (guarded && c->rc == CL_SUCCESS)
		xg_list_add(h, c);
	/* A callback of an earlier launch of @c, late, must not judge this
	 * one by its record (xg_done_cb()). */
	c->g.cb_ev = c->ev;
	pthread_mutex_unlock(&h->glock);
	if (guarded && c->rc == CL_SUCCESS && c->ev && c->g.rec_svm && h->cl->clSetEventCallback) {
		atomic_fetch_add(&c->refs, 1);
		atomic_fetch_add(&h->callbacks, 1);
		if (h->cl->clSetEventCallback(c->ev, CL_COMPLETE, xg_done_cb, c) != CL_SUCCESS) {
			xal_cl_cmd_release(c);
			atomic_fetch_sub(&h->callbacks, 1);
		}
	}
	h->cl->clFlush(h->queue);
	/* Published with @launched (its store releases it). */
	if (!atomic_load_explicit(&c->launched, memory_order_relaxed))
		c->first_rc = c->rc;
	atomic_store(&c->launched, 1);
	if (c->ops->issued)
		c->ops->issued(c, c->rc, c->ev);
	return c->rc == CL_SUCCESS ? 0 : -EIO;
}

/*
 * Driver callback at the completion of a guarded launch with an SVM
 * record: when it and every unresolved launch before it ran all their
 * groups (no skip counted in their latest launches), nothing can cut it
 * any more, so its submitter learns at once
 * (its proxy event completes) instead of at the XQueue's next sync. The
 * XQueue still resolves it as usual. Holds a command reference.
 */
static void CL_CALLBACK xg_done_cb(cl_event ev, cl_int status, void *arg)
{
	struct xal_cl_cmd *c = arg;
	struct xal_cl_hwq *h = to_hwq(c->hwq);
	bool full = status == CL_COMPLETE;

	pthread_mutex_lock(&h->glock);
	if (full && c->g.state == XG_LAUNCHED && c->g.listed && ev == c->g.cb_ev) {
		full = c->g.rec_svm[CLG_REC_SKIPPED] == c->g.skipped_before;
		for (struct xal_cl_cmd *p = h->head; full && p && p != c; p = p->g.next)
			full = p->g.rec_svm &&
			       p->g.rec_svm[CLG_REC_SKIPPED] == p->g.skipped_before;
	} else {
		full = false;
	}
	pthread_mutex_unlock(&h->glock);
	if (full) {
		xg_completed(c, true);
		if (c->ops->completed_after)
			c->ops->completed_after(c);
	}
	/* Its last reference may be this one, whose release reads the hwq:
	 * the hwq is freed only once no callback is left (xg_hwq_fini()). */
	xal_cl_cmd_release(c);
	atomic_fetch_sub(&h->callbacks, 1);
}

int xg_deactivate(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);

	pthread_mutex_lock(&h->glock);
	h->clear_pending = false;
	xg_ctl_set(h, &xg_one);
	pthread_mutex_unlock(&h->glock);
	return 0;
}

int xg_reactivate(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);

	pthread_mutex_lock(&h->glock);
	/* While a launch may be cut, kernels behind it must keep skipping;
	 * so must those already issued behind a cut one (resolved cut with
	 * it, xg_resolve(), but still queued on the device), and those behind
	 * a launch on its way to the list, which may have started skipping
	 * already. The relaunch of the first cut one clears (xg_launch()),
	 * once the launches behind it drained. */
	if (atomic_load(&h->unresolved) || h->cut_waiting || h->launching)
		h->clear_pending = true;
	else
		xg_ctl_set(h, &xg_zero);
	pthread_mutex_unlock(&h->glock);
	return 0;
}

void xg_wait_quiet(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);
	cl_ulong span[2];

	xg_drained(h, true, span);
	atomic_store(&h->quiet_start, span[0]);
	atomic_store(&h->quiet_end, span[1]);
}

uint64_t xal_cl_hwq_quiet_end(struct xal_hwq *hwq)
{
	return atomic_load(&to_hwq(hwq)->quiet_end);
}

uint64_t xal_cl_hwq_quiet_start(struct xal_hwq *hwq)
{
	return atomic_load(&to_hwq(hwq)->quiet_start);
}

bool xg_hwq_fini(struct xal_cl_hwq *h)
{
	/* Every command completed (the XQueue drained): their callbacks are
	 * due; a driver that never calls them (torn down at exit) costs the
	 * hwq's memory, not a use after free. */
	for (int i = 0; atomic_load(&h->callbacks); i++) {
		struct timespec ms = { 0, 1000000 };

		if (i == 1000)
			return false;
		nanosleep(&ms, NULL);
	}
	if (h->last)
		h->cl->clReleaseEvent(h->last);
	if (h->side)
		h->cl->clReleaseCommandQueue(h->side);
	if (h->ctl)
		h->cl->clReleaseMemObject(h->ctl);
	if (h->ctl_svm)
		h->cl->clSVMFree(h->ctx, (void *)h->ctl_svm);
	if (h->ctl_zero)
		h->cl->clReleaseMemObject(h->ctl_zero);
	if (h->ctl_zero_svm)
		h->cl->clSVMFree(h->ctx, h->ctl_zero_svm);
	if (h->forced_last)
		h->cl->clReleaseEvent(h->forced_last);
	pthread_mutex_destroy(&h->settle_lock);
	pthread_mutex_destroy(&h->glock);
	return true;
}

/*
 * The control word, and a second one never set for forced passes:
 * fine-grain SVM where the device has it (and @flags allow), else buffers.
 */
static int xg_make_ctl(struct xal_cl_hwq *h, cl_device_id dev, bool buffers)
{
	cl_device_svm_capabilities svm = 0;
	cl_int rc;

	if (!buffers && h->cl->clSVMAlloc && h->cl->clSVMFree &&
	    h->cl->clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL) ==
		    CL_SUCCESS &&
	    (svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) &&
	    (h->ctl_svm = h->cl->clSVMAlloc(h->ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
					    sizeof(uint32_t), 0))) {
		h->ctl_zero_svm = h->cl->clSVMAlloc(h->ctx, CL_MEM_READ_WRITE |
						    CL_MEM_SVM_FINE_GRAIN_BUFFER,
						    sizeof(uint32_t), 0);
		if (!h->ctl_zero_svm) {
			h->cl->clSVMFree(h->ctx, (void *)h->ctl_svm);
			h->ctl_svm = NULL;
			return -ENOTSUP;
		}
		atomic_init(h->ctl_svm, 0);
		*h->ctl_zero_svm = 0;
		return 0;
	}
	h->ctl_svm = NULL;
	h->ctl = h->cl->clCreateBuffer(h->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
				       sizeof(uint32_t), (void *)&xg_zero, &rc);
	if (!h->ctl)
		return -ENOTSUP;
	h->ctl_zero = h->cl->clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
					    sizeof(uint32_t), (void *)&xg_zero, &rc);
	if (!h->ctl_zero) {
		h->cl->clReleaseMemObject(h->ctl);
		h->ctl = NULL;
		return -ENOTSUP;
	}
	h->dev = dev;
	/* Every write of the control word and every read of a record goes
	 * here (xg_ctl_set(), xg_count()): without it, no Lv2. */
	h->side = h->cl->clCreateCommandQueue(h->ctx, dev, 0, &rc);
	if (!h->side) {
		h->cl->clReleaseMemObject(h->ctl_zero);
		h->cl->clReleaseMemObject(h->ctl);
		h->ctl_zero = h->ctl = NULL;
		return -ENOTSUP;
	}
	return 0;
}

void xg_enable(struct xal_cl_hwq *h, bool buffers)
{
	cl_command_queue_properties props = 0;
	cl_device_id dev;

	if (h->ooo)
		return;
	/* What Lv2 calls; a driver without them stays at Lv1. */
	if (!h->cl->clCreateBuffer || !h->cl->clReleaseMemObject || !h->cl->clEnqueueFillBuffer ||
	    !h->cl->clEnqueueReadBuffer || !h->cl->clEnqueueWriteBuffer ||
	    !h->cl->clCreateCommandQueue || !h->cl->clGetCommandQueueInfo ||
	    !h->cl->clGetDeviceInfo || !h->cl->clRetainEvent || !h->cl->clReleaseEvent ||
	    !h->cl->clGetEventInfo || !h->cl->clWaitForEvents)
		return;
	if (h->cl->clGetCommandQueueInfo(h->queue, CL_QUEUE_CONTEXT, sizeof(h->ctx), &h->ctx,
					 NULL) != CL_SUCCESS ||
	    h->cl->clGetCommandQueueInfo(h->queue, CL_QUEUE_DEVICE, sizeof(dev), &dev, NULL) !=
		    CL_SUCCESS)
		return;
	if (xg_make_ctl(h, dev, buffers) < 0)
		return;
	if (h->cl->clGetEventProfilingInfo &&
	    h->cl->clGetCommandQueueInfo(h->queue, CL_QUEUE_PROPERTIES, sizeof(props), &props,
					 NULL) == CL_SUCCESS)
		h->profiled = props & CL_QUEUE_PROFILING_ENABLE;
	pthread_mutex_init(&h->glock, NULL);
	pthread_mutex_init(&h->settle_lock, NULL);
	h->lv2 = true;
	h->base.ops = &xal_cl_ops_lv2;
	h->base.caps |= XAL_CAP_LV2 | XAL_CAP_FLUSH | XAL_CAP_SYNC_ANY;
}

const char *xal_cl_hwq_ctl_kind(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);

	if (!h->lv2)
		return NULL;
	return h->ctl_svm ? "svm" : "write";
}

uint32_t xal_cl_hwq_cut_waiting(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);

	return h->lv2 ? atomic_load(&h->cut_waiting) : 0;
}

void xal_cl_hwq_held(struct xal_hwq *hwq, struct xal_cl_held *out)
{
	struct xal_cl_hwq *h = to_hwq(hwq);
	uint32_t recs;

	if (!h->lv2)
		return;
	recs = atomic_load(&h->records);
	out->buffers += !!h->ctl + !!h->ctl_zero;
	out->svm += !!h->ctl_svm + !!h->ctl_zero_svm;
	out->queues += !!h->side;
	if (h->ctl_svm)
		out->svm += recs;
	else
		out->buffers += recs;
}
