/*
 * XQueue itself: submit, launch, sync, retire and the waits (see xqueue.h
 * for the model). The worker that makes progress when no application thread
 * waits is xq_worker.c; suspend, resume and the preemption level are
 * xq_preempt.c; the window and duration learning xq_window.c; hints,
 * observers and statistics xq_attr.c.
 *
 * One mutex per queue protects its lists and counters; launches happen
 * under it, so submission order is launch order whoever launches. Backend
 * syncs happen without it, possibly on several threads at once (an app
 * thread waiting and the worker); retiring is idempotent ("everything up
 * to seq S is complete"), and a command stays allocated while any thread is
 * inside a backend sync (garbage is freed only when none is), so a sync
 * never touches a freed command.
 */
#include "xqueue/xqueue_internal.h"
#include "xqueue/xq_usdt.h"
#include "base/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void xq_list_push(struct xq_list *l, struct xal_cmd *c)
{
	c->xq_next = NULL;
	if (l->tail)
		l->tail->xq_next = c;
	else
		l->head = c;
	l->tail = c;
	l->n++;
}

static struct xal_cmd *xq_list_pop(struct xq_list *l)
{
	struct xal_cmd *c = l->head;

	if (c) {
		l->head = c->xq_next;
		if (!l->head)
			l->tail = NULL;
		l->n--;
		c->xq_next = NULL;
	}
	return c;
}

static struct xal_cmd *xq_list_take(struct xq_list *l)
{
	struct xal_cmd *c = l->head;

	memset(l, 0, sizeof(*l));
	return c;
}

static void xq_cmds_destroy(struct xal_cmd *c)
{
	while (c) {
		struct xal_cmd *next = c->xq_next;

		xal_cmd_destroy(c);
		c = next;
	}
}

/* Unlocks @q, then destroys retired commands if no sync can still use them. */
void xq_unlock(struct xq *q)
{
	struct xal_cmd *g = NULL;

	if (q->garbage.n && q->syncers == 0)
		g = xq_list_take(&q->garbage);
	pthread_mutex_unlock(&q->lock);
	xq_cmds_destroy(g);
}

void xq_notify(struct xq *q, enum xq_event ev)
{
	if (q->observer)
		q->observer(q, ev, q->observer_ctx);
}

static void xq_record_error(struct xq *q, int err)
{
	q->st.failed++;
	if (!q->error)
		q->error = err;
}

/*
 * Device errors are asynchronous: the first one not reported yet goes to
 * the next wait, whichever command it waits for, as a driver reports a
 * failed launch at the next synchronisation.
 */
static int xq_take_error(struct xq *q)
{
	int err = q->error;

	q->error = 0;
	return err;
}

/*
 * Whether launches are stopped: suspended, or the run word is 0. The word
 * load is sequentially consistent: it pairs with the scheduler's store of
 * the decision (ipc_abi.h), and is the second half of xq_pub_inflight()'s
 * Dekker pair ("Drain"). On x86 that costs what an acquire load does.
 */
bool xq_stopped(struct xq *q)
{
	const _Atomic uint32_t *run = atomic_load_explicit(&q->run_word, memory_order_relaxed);

	return atomic_load(&q->suspended) || (run && !atomic_load(run));
}

/*
 * Stores the runnable in-flight count in the scheduler's word and raises
 * XQ_EVENT_DRAINED as xq_set_run_word() describes. Lock held.
 */
void xq_pub_inflight(struct xq *q)
{
	_Atomic uint32_t *pub = atomic_load_explicit(&q->inflight_pub, memory_order_relaxed);
	uint32_t n;

	if (!pub)
		return;
	n = q->level >= 2 && atomic_load(&q->suspended) ? 0 :
	    (uint32_t)BASE_MIN(q->inflight_work, (uint64_t)UINT32_MAX);
	if (n > 1 || q->inflight_said <= 1) {
		atomic_store_explicit(pub, n, memory_order_release);
	} else {
		/* A drop to one or none: the store, then the decision's load,
		 * all sequentially consistent (ipc_abi.h, "Drain"). */
		atomic_store(pub, n);
		if (xq_stopped(q))
			xq_notify(q, XQ_EVENT_DRAINED);
	}
	q->inflight_said = n;
}

/*
 * Whether a floor holds launches (xq_set_floor()); says so to the observer
 * when that changes. The run word was read first. Lock held.
 */
static bool xq_floor_holds(struct xq *q)
{
	xq_floor_fn fn = atomic_load_explicit(&q->floor_fn, memory_order_acquire);
	bool held = fn && fn(atomic_load_explicit(&q->floor_ctx, memory_order_relaxed));

	if (held != q->floored) {
		q->floored = held;
		xq_notify(q, XQ_EVENT_FLOOR);
	}
	return held;
}

bool xq_may_launch(struct xq *q)
{
	if (xq_stopped(q) || xq_floor_holds(q))
		return false;
	if (q->relaunch_barrier) {
		if (q->inflight.n || q->syncers)
			return false;
		q->relaunch_barrier = false;
	}
	return true;
}

/* Bookkeeping after commands completed. Lock held. */
static void xq_after_retire(struct xq *q)
{
	if (q->level == 1 && atomic_load(&q->suspended) && q->susp_had_work &&
	    q->measured_gen != q->susp_gen && q->inflight.n == 0)
		xq_record_preemption(q);
	xq_pub_inflight(q);
	xq_notify(q, XQ_EVENT_PROGRESS);
	if (q->busy && q->completed_seq == q->next_seq) {
		q->busy = false;
		xq_notify(q, XQ_EVENT_IDLE);
	}
	pthread_cond_broadcast(&q->cond);
	if (q->pending.n && q->worker_running && q->worker_idle && !q->completers)
		pthread_cond_signal(&q->wcond);
}

static void xq_retire_head(struct xq *q)
{
	struct xal_cmd *c = xq_list_pop(&q->inflight);
	uint64_t ns, dev_ns = 0;

	if (c->xq_flags & XQ_F_LOCAL_DONE) {
		xq_record_error(q, c->xq_status);
	} else if (q->ops->cmd_time && q->ops->cmd_time(q->hwq, c, &ns) == 0) {
		xq_est_learn(q, c, ns);
		dev_ns = ns;
	} else {
		dev_ns = c->xq_est_ns;
	}
	q->st.exec_ns += dev_ns;
	xq_window_retired(q, c);
	XQ_PROBE3(complete, q->trace_id, c->xq_seq, dev_ns);
	q->completed_seq = c->xq_seq;
	q->st.completed++;
	xq_list_push(&q->garbage, c);
}

/*
 * Retires every in-flight command <= @seq after a backend sync returned
 * @rc for it. Without per-command device times, the time since the
 * previous completion is shared among the retired commands in proportion
 * to their estimates (equally while any of them is a guess).
 */
static void xq_retire_through(struct xq *q, uint64_t seq, int rc)
{
	uint64_t now = clock_now_ns(), n = 0, sum = 0, since, share;
	bool guess = false;
	struct xal_cmd *c;

	/*
	 * Spacings measure nothing of ours across a switch: the first after a
	 * resume waited behind others' work (a previous holder's tail), and
	 * those observed while stopped come with whatever delay the switch
	 * adds to seeing them. Those commands are charged their estimates.
	 */
	if (!q->ops->cmd_time && q->inflight.head && !q->spacing_stale && !xq_stopped(q)) {
		for (c = q->inflight.head; c && c->xq_seq <= seq; c = c->xq_next)
			if (!(c->xq_flags & XQ_F_LOCAL_DONE)) {
				n++;
				sum += c->xq_est_ns;
				guess |= c->xq_flags & XQ_F_EST_GUESS;
			}
		if (guess)
			sum = 0;
		since = BASE_MAX(q->last_done_ns, q->inflight.head->xq_launch_ns);
		for (c = q->inflight.head; n && now > since && c && c->xq_seq <= seq;
		     c = c->xq_next) {
			if (c->xq_flags & XQ_F_LOCAL_DONE)
				continue;
			share = sum ? (uint64_t)((unsigned __int128)(now - since) *
						 c->xq_est_ns / sum) :
				      (now - since) / n;
			xq_est_learn(q, c, share);
		}
	}
	while (q->inflight.head && q->inflight.head->xq_seq <= seq)
		xq_retire_head(q);
	if (rc < 0)
		xq_record_error(q, rc);
	q->spacing_stale = false;
	q->last_done_ns = now;
	xq_after_retire(q);
}

/* Retires leading commands whose launch failed. Lock held. */
static void xq_retire_local(struct xq *q)
{
	bool any = false;

	while (q->inflight.head && (q->inflight.head->xq_flags & XQ_F_LOCAL_DONE)) {
		xq_retire_head(q);
		any = true;
	}
	if (any)
		xq_after_retire(q);
}

static void xq_launch_one(struct xq *q, struct xal_cmd *c)
{
	unsigned flags = xq_window_launch_flags(q, c);
	int rc;

	c->xq_launch_ns = clock_now_ns();
	rc = q->ops->launch(q->hwq, c, flags);
	if (rc < 0) {
		if (c->xq_flags & XQ_F_WORK)
			q->inflight_work--;
		c->xq_flags = (c->xq_flags & ~(uint32_t)(XQ_F_SYNC_POINT | XQ_F_WORK)) |
			      XQ_F_LOCAL_DONE;
		c->xq_status = rc;
		c->xq_est_ns = 0;
	}
	XQ_PROBE2(launch, q->trace_id, c->xq_seq);
	xq_list_push(&q->inflight, c);
	q->inflight_est_ns += c->xq_est_ns;
	q->launched_seq = c->xq_seq;
	atomic_store_explicit(&q->launched_pub, c->xq_seq, memory_order_release);
	xq_pub_inflight(q);
}

/* Whether @c's gate lets it launch now; reports changes. Lock held. */
static bool xq_gate_open(struct xq *q, struct xal_cmd *c)
{
	void *on = c->ops->blocked_on ? c->ops->blocked_on(c) : NULL;

	/*
	 * Published before a second look: whoever opens the gate after the
	 * first look and then reads xq_gated() either is seen by the second
	 * look or sees the flag (and kicks).
	 */
	if (on && !atomic_load(&q->gated)) {
		atomic_store(&q->gated, true);
		atomic_thread_fence(memory_order_seq_cst);
		on = c->ops->blocked_on(c);
	}
	/* Every launch comes here: a store only when the flag changes. */
	if (!on && atomic_load_explicit(&q->gated, memory_order_relaxed))
		atomic_store(&q->gated, false);
	if (on != q->blocked_on) {
		q->blocked_on = on;
		xq_notify(q, on ? XQ_EVENT_BLOCKED : XQ_EVENT_UNBLOCKED);
	}
	return on == NULL;
}

/* Launches buffered commands while the window admits them. Lock held. */
void xq_launch_pending(struct xq *q)
{
	bool any = false;

	while (q->pending.head && xq_may_launch(q) &&
	       xq_window_has_room(q, q->pending.head) && xq_gate_open(q, q->pending.head)) {
		xq_launch_one(q, xq_list_pop(&q->pending));
		any = true;
	}
	if (any) {
		xq_retire_local(q);
		if (q->waiters)
			pthread_cond_broadcast(&q->cond);
	}
}

/*
 * Chooses what to sync so that every command <= @seq completes: the last
 * launched command <= @seq if it can be synced, else the next sync point
 * after it, else the whole queue (*@all). NULL: no command <= @seq needs
 * the device. Lock held.
 */
static struct xal_cmd *xq_sync_target(struct xq *q, uint64_t seq, bool *all)
{
	struct xal_cmd *c, *last = NULL;

	*all = false;
	for (c = q->inflight.head; c && c->xq_seq <= seq; c = c->xq_next)
		if (!(c->xq_flags & XQ_F_LOCAL_DONE))
			last = c;
	if (!last)
		return NULL;
	if ((q->hwq->caps & XAL_CAP_SYNC_ANY) || (last->xq_flags & XQ_F_SYNC_POINT))
		return last;
	for (c = last->xq_next; c; c = c->xq_next)
		if (c->xq_flags & XQ_F_SYNC_POINT)
			return c;
	*all = true;
	return last;
}

/*
 * A sync reported a flushed command: find the first flushed one, retire
 * what completed before it and put it and every later in-flight command
 * back at the front of the buffer, to be launched again in order.
 */
static void xq_handle_flush(struct xq *q)
{
	struct xal_cmd *c, *first = NULL;
	struct xq_list again = { 0 };

	for (c = q->inflight.head; c; c = c->xq_next) {
		int rc;

		if (c->xq_flags & XQ_F_LOCAL_DONE)
			continue;
		rc = q->ops->query ? q->ops->query(q->hwq, c) : -ECANCELED;
		if (rc == -ECANCELED) {
			first = c;
			break;
		}
		if (rc == -EBUSY)
			return;
		if (rc < 0)
			xq_record_error(q, rc);
	}
	if (!first)
		return;
	if (first != q->inflight.head)
		xq_retire_through(q, first->xq_seq - 1, 0);
	while (q->inflight.head) {
		c = xq_list_pop(&q->inflight);
		xq_window_retired(q, c);
		c->xq_flags &= ~(uint32_t)XQ_F_SYNC_POINT;
		xq_list_push(&again, c);
		q->st.relaunches++;
	}
	again.tail->xq_next = q->pending.head;
	if (!q->pending.head)
		q->pending.tail = again.tail;
	q->pending.head = again.head;
	q->pending.n += again.n;
	q->launched_seq = again.head->xq_seq - 1;
	q->flush_epoch++;
	xq_window_reset(q);
	pthread_cond_broadcast(&q->cond);
}

/* Waits on @cv; while the queue is gated, only for XQ_GATE_POLL_NS. */
static void xq_cond_wait(struct xq *q, pthread_cond_t *cv)
{
	struct timespec ts;

	if (!q->blocked_on) {
		pthread_cond_wait(cv, &q->lock);
		return;
	}
	ts = clock_ns_to_timespec(clock_now_ns() + XQ_GATE_POLL_NS);
	pthread_cond_timedwait(cv, &q->lock, &ts);
}

void xq_wait_resumed(struct xq *q)
{
	while (atomic_load(&q->suspended)) {
		q->waiters++;
		pthread_cond_wait(&q->cond, &q->lock);
		q->waiters--;
	}
}

/*
 * One step towards completing every command <= @seq (launched): one backend
 * sync and its consequences. With @prompt (the worker refilling an
 * emptying window) the sync may poll near the expected completion instead
 * of blocking. Lock held; released during the sync. Returns -EAGAIN when
 * the queue is preempted at Lv2/Lv3 and the step could not progress, else 0.
 */
int xq_sync_step(struct xq *q, uint64_t seq, bool prompt)
{
	uint64_t epoch = q->flush_epoch, launched = q->launched_seq, tseq, deadline = 0;
	struct xal_cmd *target;
	bool all;
	int rc = -EBUSY;

	target = xq_sync_target(q, seq, &all);
	if (!target) {
		xq_retire_through(q, seq, 0);
		return 0;
	}
	if (prompt && !all)
		deadline = xq_prompt_deadline(q, target);
	tseq = target->xq_seq;
	q->syncers++;
	pthread_mutex_unlock(&q->lock);
	if (deadline)
		rc = xq_poll_until(q, target, deadline);
	if (rc == -EBUSY)
		rc = all ? q->ops->sync_all(q->hwq, XAL_SYNC_PREEMPTIBLE) :
			   q->ops->sync(q->hwq, target, XAL_SYNC_PREEMPTIBLE);
	pthread_mutex_lock(&q->lock);
	q->syncers--;
	if (epoch != q->flush_epoch)
		return 0;
	if (rc == -EAGAIN)
		return -EAGAIN;
	if (rc == -ECANCELED)
		xq_handle_flush(q);
	else
		xq_retire_through(q, all ? launched : tseq, rc);
	return 0;
}

/* Oldest in-flight sync point, or the newest command: what refills the window. */
uint64_t xq_refill_target(struct xq *q)
{
	struct xal_cmd *c;

	for (c = q->inflight.head; c; c = c->xq_next)
		if (c->xq_flags & XQ_F_SYNC_POINT)
			return c->xq_seq;
	return q->inflight.tail->xq_seq;
}

/*
 * Blocks until every command <= @seq completed. Lock held. A thread in here
 * launches and syncs for itself, so the worker stands aside meanwhile (two
 * threads waking per completion would only cost CPU).
 */
void xq_complete_through(struct xq *q, uint64_t seq)
{
	bool refill;

	q->completers++;
	while (q->completed_seq < seq) {
		xq_launch_pending(q);
		if (q->completed_seq >= seq)
			break;
		if (q->inflight.n == 0) {
			/* Suspended, a flush being resolved, or gated: wait. */
			q->waiters++;
			xq_cond_wait(q, &q->cond);
			q->waiters--;
			continue;
		}
		/* With work waiting for room, go from sync point to sync point,
		 * refilling: a sync on @seq itself would let the window run dry. */
		refill = seq > q->launched_seq || q->pending.n;
		if (xq_sync_step(q, refill ? BASE_MIN(seq, xq_refill_target(q)) : seq,
				 refill) == -EAGAIN)
			xq_wait_resumed(q);
	}
	if (--q->completers == 0 && (q->pending.n || q->inflight.n))
		xq_worker_kick(q);
}

/* Numbers queues for the USDT probes (xq_usdt.h). */
static _Atomic uint32_t xq_trace_ids;

int xq_create(struct xal_hwq *hwq, const struct xq_config *cfg, struct xq **out)
{
	static const struct xq_config defaults;
	pthread_condattr_t ca;
	struct xq *q;
	int rc;

	if (!hwq || !out || xal_ops_check(hwq->ops) < 0)
		return -EINVAL;
	if (!cfg)
		cfg = &defaults;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->hwq = hwq;
	q->trace_id = atomic_fetch_add(&xq_trace_ids, 1) + 1;
	q->ops = hwq->ops;
	rc = xal_level_grant(hwq, cfg->level);
	if (rc < 0)
		goto fail;
	q->level = rc;
	q->level_req = cfg->level;
	q->level_max = xal_level_max(hwq);
	rc = xq_window_resolve(q, cfg->threshold, cfg->batch, cfg->budget_ns, true);
	if (rc < 0)
		goto fail;
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_init(&q->ctl_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_cond_init(&q->wcond, &ca);
	pthread_condattr_destroy(&ca);
	*out = q;
	return 0;
fail:
	free(q);
	return rc;
}

/* Submits @cmd (reset by the caller) with the lock held; returns its seq. */
static uint64_t xq_submit_locked(struct xq *q, struct xal_cmd *cmd)
{
	uint64_t s;

	if (!q->busy) {
		q->busy = true;
		xq_notify(q, XQ_EVENT_READY);
	}
	s = ++q->next_seq;
	cmd->xq_seq = s;
	q->st.submitted++;
	XQ_PROBE2(submit, q->trace_id, s);
	if (!q->pending.head && xq_may_launch(q) && xq_window_has_room(q, cmd) &&
	    xq_gate_open(q, cmd)) {
		xq_launch_one(q, cmd);
		q->st.direct_launches++;
		q->last_direct_ns = cmd->xq_launch_ns;
		xq_retire_local(q);
		if (q->inflight.n &&
		    (!q->worker_running || (q->worker_idle && !q->worker_napping)))
			xq_worker_kick(q);
	} else {
		if (cmd->ops->deferred)
			cmd->ops->deferred(cmd);
		xq_list_push(&q->pending, cmd);
		xq_worker_kick(q);
	}
	return s;
}

int xq_submit(struct xq *q, struct xal_cmd *cmd, uint64_t *seq)
{
	return xq_submit_n(q, &cmd, 1, seq);
}

int xq_submit_n(struct xq *q, struct xal_cmd *const *cmds, size_t n, uint64_t *last_seq)
{
	uint64_t s = 0;
	size_t i;

	if (!q || !n || !cmds) {
		for (i = 0; cmds && i < n; i++)
			xal_cmd_destroy(cmds[i]);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (cmds[i])
			continue;
		for (i = 0; i < n; i++)
			xal_cmd_destroy(cmds[i]);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		cmds[i]->xq_flags = 0;
		cmds[i]->xq_status = 0;
		cmds[i]->xq_next = NULL;
	}
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		pthread_mutex_unlock(&q->lock);
		for (i = 0; i < n; i++)
			xal_cmd_destroy(cmds[i]);
		return -ESHUTDOWN;
	}
	for (i = 0; i < n; i++)
		s = xq_submit_locked(q, cmds[i]);
	xq_unlock(q);
	if (last_seq)
		*last_seq = s;
	return 0;
}

int xq_wait(struct xq *q, uint64_t seq)
{
	int rc;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	if (seq == 0 || seq > q->next_seq) {
		pthread_mutex_unlock(&q->lock);
		return -EINVAL;
	}
	xq_complete_through(q, seq);
	rc = xq_take_error(q);
	xq_unlock(q);
	return rc;
}

int xq_flush(struct xq *q)
{
	uint64_t target;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	target = q->next_seq;
	q->completers++;
	while (q->launched_seq < target && q->completed_seq < target) {
		xq_launch_pending(q);
		if (q->launched_seq >= target)
			break;
		if (q->inflight.n == 0) {
			q->waiters++;
			xq_cond_wait(q, &q->cond);
			q->waiters--;
			continue;
		}
		/* The window is full: free some of it. */
		if (xq_sync_step(q, xq_refill_target(q), true) == -EAGAIN)
			xq_wait_resumed(q);
	}
	if (--q->completers == 0 && (q->pending.n || q->inflight.n))
		xq_worker_kick(q);
	xq_unlock(q);
	return 0;
}

int xq_flush_now(struct xq *q)
{
	bool any = false;
	int rc = 0;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	/* Neither the window, nor a suspension, nor the scheduler's word, nor
	 * the relaunch barrier: only the commands' own gates. */
	while (q->pending.head) {
		if (!xq_gate_open(q, q->pending.head)) {
			rc = -EAGAIN;
			break;
		}
		xq_launch_one(q, xq_list_pop(&q->pending));
		any = true;
	}
	if (any) {
		xq_retire_local(q);
		if (q->waiters)
			pthread_cond_broadcast(&q->cond);
	}
	/* Someone syncs what is in flight, so that Idle is noticed. */
	if (q->pending.n || q->inflight.n)
		xq_worker_kick(q);
	xq_unlock(q);
	return rc;
}

void xq_pending_each(struct xq *q, bool (*fn)(struct xal_cmd *cmd, void *arg), void *arg)
{
	pthread_mutex_lock(&q->lock);
	for (struct xal_cmd *c = q->pending.head; c && fn(c, arg); c = c->xq_next)
		;
	xq_unlock(q);
}

int xq_wait_all(struct xq *q)
{
	int rc;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	xq_complete_through(q, q->next_seq);
	rc = xq_take_error(q);
	xq_unlock(q);
	return rc;
}

int xq_query(struct xq *q, uint64_t seq)
{
	struct xal_cmd *target;
	bool all;
	int rc;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	if (seq == 0 || seq > q->next_seq) {
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
	if (q->completed_seq >= seq)
		goto out;
	rc = -EBUSY;
	if (seq > q->launched_seq || !q->ops->query)
		goto out;
	target = xq_sync_target(q, seq, &all);
	if (!target || all)
		goto out;
	rc = q->ops->query(q->hwq, target);
	if (rc == -EBUSY)
		goto out;
	if (rc == -ECANCELED) {
		xq_handle_flush(q);
		rc = -EBUSY;
		goto out;
	}
	/* Complete; an error stays for the next wait. */
	xq_retire_through(q, target->xq_seq, rc);
	rc = q->completed_seq >= seq ? 0 : -EBUSY;
out:
	xq_unlock(q);
	return rc;
}

int xq_destroy(struct xq *q, unsigned flags)
{
	struct xal_cmd *dropped = NULL;
	bool join;
	int rc;

	if (!q)
		return 0;
	if (flags & ~XS_DESTROY_DISCARD)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	if (flags & XS_DESTROY_DISCARD) {
		q->next_seq = q->launched_seq;
		dropped = xq_list_take(&q->pending);
		pthread_mutex_unlock(&q->lock);
		xq_resume(q);
		pthread_mutex_lock(&q->lock);
	}
	xq_complete_through(q, q->next_seq);
	rc = xq_take_error(q);
	join = q->worker_running || q->worker_zombie;
	pthread_cond_broadcast(&q->wcond);
	pthread_mutex_unlock(&q->lock);
	if (join)
		pthread_join(q->worker, NULL);
	xq_cmds_destroy(dropped);
	xq_cmds_destroy(xq_list_take(&q->garbage));
	pthread_cond_destroy(&q->cond);
	pthread_cond_destroy(&q->wcond);
	pthread_mutex_destroy(&q->lock);
	pthread_mutex_destroy(&q->ctl_lock);
	free(q);
	return rc;
}
