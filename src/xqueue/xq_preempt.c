/*
 * XQueue preemption: suspend, resume and the preemption level, and the
 * scheduler's run word. Lv1 only stops launching and lets in-flight commands
 * drain; Lv2 also deactivates the device queue (stalls what it holds); Lv3
 * interrupts the running command. Suspend/resume and the backend's
 * deactivate/reactivate (interrupt/restore) are serialised by a second
 * mutex (ctl_lock), so the device's state always follows the last call; the
 * queue lock is never held while the backend waits for the device.
 */
#include "xqueue/xqueue_internal.h"
#include "xqueue/xq_usdt.h"
#include "base/clock.h"
#include "base/futex.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void xq_record_preemption(struct xq *q)
{
	uint64_t ns = clock_now_ns() - q->susp_ns;

	hist_record(&q->preempt_hist, ns);
	XQ_PROBE2(preempt_done, q->trace_id, ns);
	q->measured_gen = q->susp_gen;
}

static int xq_backend_preempt(struct xq *q, bool on)
{
	if (q->level == 2)
		return on ? q->ops->deactivate(q->hwq) : q->ops->reactivate(q->hwq);
	if (q->level == 3)
		return on ? q->ops->interrupt(q->hwq) : q->ops->restore(q->hwq);
	return 0;
}

int xq_suspend(struct xq *q, unsigned flags)
{
	uint64_t gen, until;
	bool had_work;
	int level, rc;

	if (!q || (flags & ~XS_SUSPEND_SYNC))
		return -EINVAL;
	pthread_mutex_lock(&q->ctl_lock);
	pthread_mutex_lock(&q->lock);
	if (atomic_load(&q->suspended)) {
		pthread_mutex_unlock(&q->lock);
		pthread_mutex_unlock(&q->ctl_lock);
		return 0;
	}
	atomic_store(&q->suspended, true);
	gen = ++q->susp_gen;
	q->susp_ns = clock_now_ns();
	XQ_PROBE2(suspend, q->trace_id, q->level);
	had_work = q->susp_had_work = q->inflight.n > 0;
	if (had_work || q->pending.n) {
		/* Told now: a stalled queue may complete nothing until resumed. */
		q->st.preemptions++;
		xq_notify(q, XQ_EVENT_PROGRESS);
	}
	if (q->level >= 2 && (q->hwq->caps & XAL_CAP_FLUSH))
		q->relaunch_barrier = true;
	until = q->launched_seq;
	/* The worker times an asynchronous stall (a caller that waits times it
	 * itself): a wakeup is CPU time the device may be sharing. */
	if (had_work && q->level >= 2 && !(flags & XS_SUSPEND_SYNC) && q->worker_running &&
	    q->worker_idle)
		pthread_cond_signal(&q->wcond);
	pthread_mutex_unlock(&q->lock);
	atomic_fetch_add(&q->kick_word, 1);
	futex_wake(&q->kick_word, 1, false);
	rc = xq_backend_preempt(q, true);
	if (q->level >= 2) {
		/* The device holds the rest: nothing left to drain. */
		pthread_mutex_lock(&q->lock);
		xq_pub_inflight(q);
		xq_unlock(q);
	}
	/* Read where it is written (xq_apply_level() holds ctl_lock). */
	level = q->level;
	pthread_mutex_unlock(&q->ctl_lock);
	if (!had_work)
		return rc;
	/* An interrupt takes effect within microseconds: measure it here,
	 * exactly; a Lv2 stall may take a whole command, so the worker
	 * measures it unless the caller asked to wait. */
	if (!(flags & XS_SUSPEND_SYNC) && level != 3)
		return rc;
	if (level >= 2 && q->ops->wait_quiet) {
		q->ops->wait_quiet(q->hwq);
		pthread_mutex_lock(&q->lock);
		if (gen == q->susp_gen && q->measured_gen != gen)
			xq_record_preemption(q);
		xq_unlock(q);
	} else if (level == 1) {
		pthread_mutex_lock(&q->lock);
		if (gen == q->susp_gen)
			xq_complete_through(q, until);
		xq_unlock(q);
	}
	return rc;
}

int xq_resume(struct xq *q)
{
	int rc;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->ctl_lock);
	pthread_mutex_lock(&q->lock);
	if (!atomic_load(&q->suspended)) {
		pthread_mutex_unlock(&q->lock);
		pthread_mutex_unlock(&q->ctl_lock);
		return 0;
	}
	q->susp_gen++;
	XQ_PROBE2(resume, q->trace_id, clock_now_ns() - q->susp_ns);
	pthread_mutex_unlock(&q->lock);
	rc = xq_backend_preempt(q, false);
	pthread_mutex_lock(&q->lock);
	atomic_store(&q->suspended, false);
	q->spacing_stale = true;
	xq_launch_pending(q);
	xq_pub_inflight(q);
	if (q->pending.n || q->inflight.n)
		xq_worker_kick(q);
	pthread_cond_broadcast(&q->cond);
	xq_unlock(q);
	pthread_mutex_unlock(&q->ctl_lock);
	return rc;
}

/* xq_set_level(), and with @set_why the reason @why too. */
static int xq_apply_level(struct xq *q, int level, bool set_why, const char *why)
{
	int granted, rc = 0;
	bool changed;

	if (!q)
		return -EINVAL;
	granted = xal_level_grant(q->hwq, level);
	if (granted < 0)
		return granted;
	pthread_mutex_lock(&q->ctl_lock);
	/* A suspended queue moves its device-side preemption to the new level. */
	if (atomic_load(&q->suspended) && granted != q->level)
		rc = xq_backend_preempt(q, false);
	pthread_mutex_lock(&q->lock);
	changed = q->level != granted;
	if (set_why && strncmp(q->level_why, why ? why : "", sizeof(q->level_why) - 1)) {
		snprintf(q->level_why, sizeof(q->level_why), "%s", why ? why : "");
		changed = true;
	}
	q->level = granted;
	q->level_req = level;
	if (changed)
		xq_notify(q, XQ_EVENT_LEVEL);
	xq_pub_inflight(q);
	if (atomic_load(&q->suspended) && q->level >= 2 && (q->hwq->caps & XAL_CAP_FLUSH))
		q->relaunch_barrier = true;
	/* The level's default budget may have opened the window. */
	xq_launch_pending(q);
	pthread_mutex_unlock(&q->lock);
	if (atomic_load(&q->suspended) && rc == 0)
		rc = xq_backend_preempt(q, true);
	pthread_mutex_unlock(&q->ctl_lock);
	return rc;
}

int xq_set_level(struct xq *q, int level)
{
	return xq_apply_level(q, level, false, NULL);
}

int xq_set_level_why(struct xq *q, int level, const char *why)
{
	return xq_apply_level(q, level, true, why);
}

void xq_level_why(struct xq *q, char *buf, size_t len)
{
	pthread_mutex_lock(&q->lock);
	snprintf(buf, len, "%s", q->level_why);
	pthread_mutex_unlock(&q->lock);
}

void xq_set_run_word(struct xq *q, const _Atomic uint32_t *run, _Atomic uint32_t *inflight,
		     bool sync)
{
	atomic_store(&q->run_word, run);
	atomic_store(&q->inflight_pub, inflight);
	if (sync || inflight) {
		/* Launch decisions read them under the lock: none uses the old
		 * ones once we had the lock. A new count word gets the count. */
		pthread_mutex_lock(&q->lock);
		q->inflight_said = 0;
		xq_pub_inflight(q);
		pthread_mutex_unlock(&q->lock);
	}
}

void xq_set_floor(struct xq *q, xq_floor_fn fn, void *ctx, bool sync)
{
	if (sync)
		pthread_mutex_lock(&q->lock);
	atomic_store(&q->floor_fn, NULL);
	atomic_store(&q->floor_ctx, ctx);
	atomic_store(&q->floor_fn, fn);
	if (sync) {
		/* Gone: said ended, so that the observer's view is not left held. */
		if (!fn && q->floored) {
			q->floored = false;
			xq_notify(q, XQ_EVENT_FLOOR);
		}
		pthread_mutex_unlock(&q->lock);
	}
}

void xq_floor_barrier(struct xq *q)
{
	pthread_mutex_lock(&q->lock);
	pthread_mutex_unlock(&q->lock);
}

bool xq_floored_locked(struct xq *q)
{
	return q->floored;
}

void xq_kick(struct xq *q)
{
	/* Condition variables may be signalled without their mutex. */
	pthread_cond_broadcast(&q->cond);
	pthread_cond_signal(&q->wcond);
}

bool xq_suspended(struct xq *q)
{
	return atomic_load(&q->suspended);
}

uint64_t xq_preempt_p99_locked(struct xq *q)
{
	return hist_quantile(&q->preempt_hist, 0.99);
}
