/*
 * Lv2 of the `opencl` backend, the other half (see xal_opencl.h,
 * xal_opencl_lv2.c): how a guarded launch is judged once its event
 * completed (final, cut, or failed with the launches before it), the
 * syncs and queries of an Lv2 queue, the gate that keeps commands behind
 * a cut launch's relaunch, and the forced passes that complete launches
 * before a call that goes to the driver at once (xg_settle(), the
 * table's settle()).
 *
 * Locks as in xal_opencl_lv2.c: glock guards the list of unresolved
 * launches; settle_lock is held while forced passes are issued (outside
 * glock). Nothing here calls into the XQueue.
 */
#include "xal/xal_opencl_internal.h"
#include "xal/xal_opencl_guard.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Whether launch @c was cut: groups skipped in this launch (the control
 * word), and no forced pass ran them since (a forced pass never skips and
 * runs every group not started; xg_resolve() resolves @c only once its
 * forced pass completed). A launch that failed is not cut: its error is
 * its result.
 */
static bool xg_cut(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	cl_int st = CL_COMPLETE;

	if (c->ev && h->cl->clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st),
					   &st, NULL) == CL_SUCCESS && st < 0)
		return false;
	if (c->g.forced || xg_count(h, c) < 0)
		return false;
	return c->g.skipped > c->g.skipped_before;
}

/*
 * The state of guarded @c, whose sync point completed: final, or cut.
 * Final, so is every unresolved launch before it (the sticky control
 * word would have cut them all from the first cut one on); cut, it and
 * every launch after it go again. glock held.
 */
static int xg_resolve(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	struct xal_cl_cmd *p, *next;
	bool cut, after = false;

	if (c->g.state != XG_LAUNCHED)
		return c->g.state;
	/* A forced pass on its way or not read yet: not now (xg_after_forced()). */
	for (p = h->head; p; p = p->g.next) {
		if (p->g.forcing || (p->g.forced && !p->g.recounted))
			return -EBUSY;
		if (p == c)
			break;
	}
	if (xg_count(h, c) < 0)
		return -EIO;
	/* Those before it completed too (in order). */
	cut = xg_cut(h, c);
	for (p = h->head; !cut && p && p != c; p = p->g.next)
		cut = xg_cut(h, p);
	if (cut) {
		for (p = h->head; p; p = next) {
			next = p->g.next;
			after |= p == c;
			if (after) {
				p->g.state = XG_CUT;
				h->cut_waiting++;
				xg_list_del(h, p);
			}
		}
		c->g.state = XG_CUT;
		return XG_CUT;
	}
	while (h->head && h->head != c) {
		p = h->head;
		p->g.state = XG_FINAL;
		xg_list_del(h, p);
		xg_completed(p, false);
	}
	c->g.state = XG_FINAL;
	xg_list_del(h, c);
	return XG_FINAL;
}

/*
 * Whether every command launched on @h completed (-EBUSY before); @span,
 * if not NULL, gets the device times at which the last one started and
 * ended (0 when unknown: nothing launched, or the queue is not profiled).
 */
int xg_drained(struct xal_cl_hwq *h, bool wait, cl_ulong span[2])
{
	cl_event last = NULL;
	cl_int st = CL_COMPLETE;
	int rc = 0;

	if (span)
		span[0] = span[1] = 0;
	pthread_mutex_lock(&h->glock);
	if (h->last && h->cl->clRetainEvent(h->last) == CL_SUCCESS)
		last = h->last;
	pthread_mutex_unlock(&h->glock);
	if (!last)
		return 0;
	if (wait)
		h->cl->clWaitForEvents(1, &last);
	if (h->cl->clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
				  NULL) == CL_SUCCESS &&
	    st > CL_COMPLETE)
		rc = -EBUSY;
	if (!rc && span && h->profiled &&
	    (h->cl->clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_START, sizeof(span[0]),
					    &span[0], NULL) != CL_SUCCESS ||
	     h->cl->clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof(span[1]),
					    &span[1], NULL) != CL_SUCCESS))
		span[0] = span[1] = 0;
	h->cl->clReleaseEvent(last);
	return rc;
}

/*
 * Forced passes (xg_settle()) ran the groups their launches did
 * not: once the newest is done, they are marked so (recounted), and only
 * then resolved, as final (xg_cut()): no launch is taken for cut while
 * its forced pass runs or after it did.
 * Waits for a settle in progress (@wait), or answers -EBUSY. Returns 0,
 * -EBUSY, or -EIO when a forced pass failed.
 */
static int xg_after_forced(struct xal_cl_hwq *h, bool wait)
{
	cl_event fl = NULL;
	int rc;

	if (wait)
		pthread_mutex_lock(&h->settle_lock);
	else if (pthread_mutex_trylock(&h->settle_lock))
		return -EBUSY;
	pthread_mutex_unlock(&h->settle_lock);
	pthread_mutex_lock(&h->glock);
	if (h->forced_last && h->cl->clRetainEvent(h->forced_last) == CL_SUCCESS)
		fl = h->forced_last;
	pthread_mutex_unlock(&h->glock);
	if (!fl)
		return 0;
	rc = xal_cl_event_state(h->cl, fl, wait);
	h->cl->clReleaseEvent(fl);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&h->glock);
	for (struct xal_cl_cmd *p = h->head; p; p = p->g.next)
		if (p->g.forced && !p->g.recounted) {
			p->g.recounted = true;
		}
	pthread_mutex_unlock(&h->glock);
	return 0;
}

/*
 * Guarded @c failed (its launch, or its event: a failed wait list): final
 * as it is, and never issued again (a relaunch would run what the driver
 * refused to). The launches listed before it are resolved with it, since
 * the XQueue retires them all on this answer: on an in-order queue a
 * command can fail (its own wait list) while an earlier one still runs,
 * so each earlier launch is first waited for (@wait) or the answer is
 * -EBUSY; then those that failed too are final, those that ran whole are
 * final, and from the first one cut on, every launch but the failed ones
 * goes again (-ECANCELED once the queue drained). The driver may never
 * call a completion callback registered before an event fails (PoCL 3.1
 * does not), so this is what completes them all. @issue: the launch of
 * @c judged (xg_take()). Returns -EIO, -ECANCELED or -EBUSY.
 */
static int xg_failed(struct xal_cl_hwq *h, struct xal_cl_cmd *c, uint32_t issue, bool wait)
{
	struct xal_cl_cmd *p, *next;
	bool cut = false, before = true, forcing;
	cl_event busy;
	int rc;

	for (;;) {
		busy = NULL;
		forcing = false;
		pthread_mutex_lock(&h->glock);
		if (c->g.issues != issue) {
			pthread_mutex_unlock(&h->glock);
			return -EBUSY;
		}
		for (p = c->g.listed ? h->head : NULL; p && p != c && !busy && !forcing;
		     p = p->g.next) {
			forcing = p->g.forcing || (p->g.forced && !p->g.recounted);
			if (xal_cl_event_state(h->cl, p->done, false) == -EBUSY)
				busy = p->done;
		}
		if ((!busy && !forcing) || !wait)
			break;
		if (busy && h->cl->clRetainEvent(busy) != CL_SUCCESS)
			break;
		pthread_mutex_unlock(&h->glock);
		if (busy) {
			xal_cl_event_state(h->cl, busy, true);
			h->cl->clReleaseEvent(busy);
		} else if ((rc = xg_after_forced(h, true)) < 0 && rc != -EIO) {
			return rc;
		}
	}
	if (busy || forcing) {
		pthread_mutex_unlock(&h->glock);
		return -EBUSY;
	}
	/* Not listed (refused at the enqueue): nothing before it to judge. */
	for (p = c->g.listed ? h->head : c; p; p = next) {
		next = p->g.listed ? p->g.next : NULL;
		if (p == c || xal_cl_event_state(h->cl, p->done, false) == -EIO) {
			p->g.failed = true;
			p->g.state = XG_FINAL;
			xg_list_del(h, p);
			xg_completed(p, false);
		} else if (cut || (before && xg_cut(h, p))) {
			cut = true;
			p->g.state = XG_CUT;
			h->cut_waiting++;
			xg_list_del(h, p);
		} else if (before) {
			p->g.state = XG_FINAL;
			xg_list_del(h, p);
			xg_completed(p, false);
		}
		if (p == c) {
			/* Those after @c go again only behind a cut one. */
			if (!cut)
				break;
			before = false;
		}
	}
	pthread_mutex_unlock(&h->glock);
	if (cut && xg_drained(h, wait, NULL) == -EBUSY)
		return -EBUSY;
	return cut ? -ECANCELED : -EIO;
}

/*
 * The launch of @c that a sync is about to judge: its number in *@issue,
 * and a reference on its sync point in *@done (NULL: none). A sync runs
 * outside the XQueue's lock, so another thread's sync may find @c cut
 * meanwhile and the XQueue launch it again, which drops the events of
 * this launch. Returns -EBUSY while a launch of @c is being issued (the
 * XQueue's flush made the sync's answer moot), else 0.
 */
static int xg_take(struct xal_cl_hwq *h, struct xal_cl_cmd *c, uint32_t *issue, cl_event *done)
{
	int rc = 0;

	*done = NULL;
	pthread_mutex_lock(&h->glock);
	*issue = c->g.issues;
	if (c->g.issuing)
		rc = -EBUSY;
	else if (c->done && h->cl->clRetainEvent(c->done) == CL_SUCCESS)
		*done = c->done;
	pthread_mutex_unlock(&h->glock);
	return rc;
}

int xg_plain_state(struct xal_cl_hwq *h, struct xal_cl_cmd *c, bool wait)
{
	uint32_t issue;
	cl_event done;
	int rc = xg_take(h, c, &issue, &done);

	if (rc < 0)
		return rc;
	rc = xal_cl_event_state(h->cl, done, wait);
	if (done)
		h->cl->clReleaseEvent(done);
	return rc;
}

int xg_state(struct xal_cl_hwq *h, struct xal_cl_cmd *c, bool wait)
{
	uint32_t issue;
	cl_event done;
	int rc = xg_take(h, c, &issue, &done), state;

	if (rc < 0)
		return rc;
	rc = xal_cl_event_state(h->cl, done, wait);
	if (done)
		h->cl->clReleaseEvent(done);
	if (rc == 0)
		rc = xg_after_forced(h, wait);
	if (rc < 0 && rc != -EIO)
		return rc;
	pthread_mutex_lock(&h->glock);
	/* Launched again meanwhile: nothing here is about that launch. */
	if (c->g.issues != issue) {
		pthread_mutex_unlock(&h->glock);
		return -EBUSY;
	}
	if (rc == -EIO || c->rc != CL_SUCCESS) {
		pthread_mutex_unlock(&h->glock);
		return xg_failed(h, c, issue, wait);
	}
	pthread_mutex_unlock(&h->glock);
again:
	pthread_mutex_lock(&h->glock);
	if (c->g.issues != issue) {
		pthread_mutex_unlock(&h->glock);
		return -EBUSY;
	}
	state = xg_resolve(h, c);
	if (state == -EBUSY) {
		pthread_mutex_unlock(&h->glock);
		if (!wait)
			return -EBUSY;
		if ((rc = xg_after_forced(h, true)) < 0)
			return rc;
		goto again;
	}
	if (state < 0) {
		c->g.state = XG_FINAL;
		xg_list_del(h, c);
	}
	pthread_mutex_unlock(&h->glock);
	if (state < 0) {
		xg_completed(c, false);
		return state;
	}
	if (state == XG_FINAL) {
		xg_completed(c, false);
		return 0;
	}
	/* Cut: once nothing of the queue runs any more, it launches again. */
	if (xg_drained(h, wait, NULL) == -EBUSY)
		return -EBUSY;
	return -ECANCELED;
}

int xg_settle(struct xal_hwq *hwq)
{
	struct xal_cl_hwq *h = to_hwq(hwq);
	struct xal_cl_cmd **todo = NULL, *p;
	uint32_t n = 0, i;
	int rc = 0;

	if (!h->lv2 || (!atomic_load(&h->unresolved) && !h->cut_waiting))
		return 0;
	pthread_mutex_lock(&h->settle_lock);
	pthread_mutex_lock(&h->glock);
	if (h->cut_waiting) {
		rc = -EAGAIN;
	} else if (h->unresolved) {
		todo = malloc(atomic_load(&h->unresolved) * sizeof(*todo));
		for (p = h->head; todo && p; p = p->g.next) {
			/* Forced already, or nothing of it reached the driver. */
			if (p->g.forced || !p->ev)
				continue;
			atomic_fetch_add(&p->refs, 1);
			p->g.forcing = true;
			/* A new attempt: the groups its launch ran skip. */
			p->g.attempt++;
			todo[n++] = p;
		}
		if (!todo)
			rc = -EIO;
	}
	pthread_mutex_unlock(&h->glock);
	/* In launch order, on the queue: each runs behind its own launch and
	 * behind every earlier forced pass. */
	for (i = 0; i < n; i++) {
		cl_event ev = NULL;
		struct xal_cl_guard_args ga;
		cl_int r = CL_OUT_OF_RESOURCES;

		if (!rc) {
			xg_guard_args(todo[i], &ga);
			r = todo[i]->ops->issue(todo[i], h->queue, &ga, &ev);
		}

		pthread_mutex_lock(&h->glock);
		todo[i]->g.forcing = false;
		if (r == CL_SUCCESS && !ev) {
			/* Refused before the driver (the command's own error). */
		} else if (r == CL_SUCCESS) {
			if (todo[i]->g.listed && !todo[i]->g.forced)
				atomic_fetch_sub(&h->unforced, 1);
			todo[i]->g.forced = true;
			todo[i]->g.recounted = false;
			if (h->forced_last)
				h->cl->clReleaseEvent(h->forced_last);
			h->forced_last = ev;
			xg_set_last(h, ev);
		} else {
			rc = -EIO;
		}
		pthread_mutex_unlock(&h->glock);
		xal_cl_cmd_release(todo[i]);
	}
	if (n)
		h->cl->clFlush(h->queue);
	pthread_mutex_unlock(&h->settle_lock);
	free(todo);
	return rc;
}

int xg_sync_all(struct xal_cl_hwq *h)
{
	struct xal_cl_cmd *tail;
	int rc;

	pthread_mutex_lock(&h->glock);
	tail = h->tail;
	if (tail)
		atomic_fetch_add(&tail->refs, 1);
	pthread_mutex_unlock(&h->glock);
	if (!tail)
		return 0;
	rc = xg_state(h, tail, true);
	xal_cl_cmd_release(tail);
	return rc;
}

/*
 * Whether launching @c now would put it ahead of the relaunch of a cut
 * launch. The XQueue learns of a cut only at its next sync or query of
 * it, and until then may launch what comes after (its relaunch barrier
 * holds only from a suspend to the first empty window, and a sync
 * resolves outside its lock). Seen in the heterogeneous scenario: a
 * later launch found the control word clear, ran whole before the cut
 * one's remaining groups, was resolved final, and the XQueue retired the
 * cut launches before it with it: never relaunched, their proxies never
 * completed (cl_load's flood hung). A cut launch itself goes (the XQueue
 * relaunches in order, so none before it waits). Lock: the XQueue's.
 */
bool xg_behind_cut(struct xal_cl_hwq *h, struct xal_cl_cmd *c)
{
	bool behind;

	/* Every command of the queue asks: no lock while nothing is cut. */
	if (!atomic_load(&h->cut_waiting))
		return false;
	pthread_mutex_lock(&h->glock);
	behind = h->cut_waiting && !(c->g.on && c->g.state == XG_CUT);
	pthread_mutex_unlock(&h->glock);
	return behind;
}

void xg_cmd_fini(struct xal_cl_cmd *c)
{
	struct xal_cl_hwq *h = c->hwq ? to_hwq(c->hwq) : NULL;

	if (!h || !h->lv2 || (!c->g.listed && c->g.state != XG_CUT))
		return;
	pthread_mutex_lock(&h->glock);
	xg_list_del(h, c);
	if (c->g.state == XG_CUT)
		h->cut_waiting--;
	pthread_mutex_unlock(&h->glock);
}
