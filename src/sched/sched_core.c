/*
 * The scheduler core (sched_core.h): domains of queues, the transitions the
 * host reports, and the decision of a domain around the policy.
 *
 * A domain is a plain array of queues (and the parallel array of their
 * views that schedule() takes), with its own wake-up time and flags; the
 * core finds a queue's domain once, at sched_add(), and keeps its index
 * there, so every later call is O(1) and a decision is O(queues of the
 * domain). What must hold whichever policy runs is added here:
 *
 * - priority inheritance inside a process: a ready queue waiting on
 *   another queue of its process lends it its priority, transitively
 *   (processes never lend to each other, so neither do users). It may cross
 *   devices, so while any queue waits every domain is decided;
 * - the starvation guard: a ready queue that a priority policy kept
 *   suspended for a whole period runs for guard_pct of the next one;
 * - the contention-aware window: queues below the top priority of their
 *   device get the in-flight cap;
 * - the quiet flags the policy allows (lazy doorbells);
 * - the drain re-decide: a queue stopped with work in flight that drained
 *   before it saw the decision did not ring (ipc_abi.h, "Drain"), so its
 *   domain is decided again at once. A queue found held with nothing in
 *   flight is frozen: it cannot launch or complete anything until its
 *   decision or status changes, so its counters are not loaded again;
 * - the idle grace: a running queue that goes idle while it holds others
 *   suspended stays ready to the policy for a grace learned from its own
 *   gaps (sched_grace.c), so the background is not resumed into the
 *   host-side gap between two kernels of a task; the policy hears of the
 *   Idle only when the grace ends with the queue still idle.
 */
#include "sched/sched_core.h"
#include "policy/policy_builtin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sched_dom {
	uint32_t device;             /* per-device domains: the device */
	struct sched_q **q;
	struct xs_pqueue **pv;       /* q[i]->pq, for schedule() */
	bool *quiet;                 /* scratch for the policy's quiet() */
	size_t n, cap;
	size_t nquiet;               /* its queues with the quiet flag up */
	uint64_t wakeup_ns;          /* the policy's or the guard's next time */
	bool due;                    /* something changed since its decision */
	bool caps_dirty;             /* priorities or queues changed */
	bool sum_dirty;              /* its queues changed since the last summary */
	bool go;                     /* decided in the current run */
};

static uint64_t min_time(uint64_t a, uint64_t b)
{
	return policy_wake_min(a, b);
}

static struct sched_dom *dom_of(const struct sched *s, const struct sched_q *q)
{
	return s->dom[q->dom];
}

static void dom_free(struct sched_dom *d)
{
	if (!d)
		return;
	free(d->q);
	free(d->pv);
	free(d->quiet);
	free(d);
}

/* Room for one more queue in @d. 0 or -ENOMEM (@d unchanged but for spare room). */
static int dom_reserve(struct sched_dom *d)
{
	size_t cap = d->cap ? 2 * d->cap : 16;
	struct sched_q **q;
	struct xs_pqueue **pv;
	bool *quiet;

	if (d->n < d->cap)
		return 0;
	q = realloc(d->q, cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	d->q = q;
	pv = realloc(d->pv, cap * sizeof(*pv));
	if (!pv)
		return -ENOMEM;
	d->pv = pv;
	quiet = realloc(d->quiet, cap * sizeof(*quiet));
	if (!quiet)
		return -ENOMEM;
	d->quiet = quiet;
	d->cap = cap;
	return 0;
}

/*
 * The domain index for a queue on @device (the only domain when the policy
 * decides across devices), created if there is none, with room for one
 * more queue. 0 or -ENOMEM.
 */
static int dom_get(struct sched *s, uint32_t device, uint32_t *idx)
{
	uint32_t i, slot = UINT32_MAX;
	struct sched_dom *d;

	if (!s->per_device)
		device = 0;
	for (i = 0; i < s->ndom; i++) {
		if (!s->dom[i]) {
			if (slot == UINT32_MAX)
				slot = i;
			continue;
		}
		if (s->dom[i]->device == device) {
			*idx = i;
			return dom_reserve(s->dom[i]);
		}
	}
	if (slot == UINT32_MAX) {
		if (s->ndom == s->domcap) {
			uint32_t cap = s->domcap ? 2 * s->domcap : 4;
			struct sched_dom **grown = realloc(s->dom, cap * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			s->dom = grown;
			s->domcap = cap;
		}
		slot = s->ndom++;
		s->dom[slot] = NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d || dom_reserve(d) < 0) {
		dom_free(d);
		return -ENOMEM;
	}
	d->device = device;
	d->caps_dirty = true;
	s->dom[slot] = d;
	*idx = slot;
	return 0;
}

/* Frees domain @idx if it holds no queue. */
static void dom_put(struct sched *s, uint32_t idx)
{
	if (s->dom[idx] && !s->dom[idx]->n) {
		dom_free(s->dom[idx]);
		s->dom[idx] = NULL;
	}
}

/* Appends @q to domain @idx (room reserved). */
static void dom_push(struct sched *s, uint32_t idx, struct sched_q *q)
{
	struct sched_dom *d = s->dom[idx];

	q->dom = idx;
	q->pos = (uint32_t)d->n;
	d->q[d->n] = q;
	d->pv[d->n] = &q->pq;
	d->n++;
	d->due = d->caps_dirty = d->sum_dirty = true;
}

/* Takes @q out of its domain (freed when empty). */
static void dom_drop(struct sched *s, struct sched_q *q)
{
	struct sched_dom *d = dom_of(s, q);
	size_t last = d->n - 1;

	if (q->pos != last) {
		d->q[q->pos] = d->q[last];
		d->pv[q->pos] = d->pv[last];
		d->q[q->pos]->pos = q->pos;
	}
	d->n--;
	d->due = d->caps_dirty = d->sum_dirty = true;
	dom_put(s, q->dom);
}

static void mark_due(struct sched *s, const struct sched_q *q)
{
	if (q->added)
		dom_of(s, q)->due = true;
}

static void set_quiet(struct sched *s, struct sched_q *q, bool quiet)
{
	if (q->quiet != quiet) {
		s->host->set_quiet(s->ctx, q, quiet);
		q->quiet = quiet;
		if (q->added) {
			struct sched_dom *d = dom_of(s, q);

			d->nquiet = quiet ? d->nquiet + 1 : d->nquiet - 1;
		}
	}
}

/* Makes @q's decision visible if it changed; counts it when the host says
 * its process sees something new. */
static void apply(struct sched *s, struct sched_q *q)
{
	uint32_t shown = q->pq.run ? 1 + q->cap : 0;

	if (shown == q->shown)
		return;
	q->shown = shown;
	s->decisions += s->host->apply(s->ctx, q);
}

/* The applies so far visible before what is loaded next (sched_host). */
static void commit(struct sched *s)
{
	if (s->host->commit)
		s->host->commit(s->ctx);
}

/* @q runs unscheduled from now on. */
static void run_unscheduled(struct sched *s, struct sched_q *q)
{
	q->added = false;
	q->pq.pdata = NULL;
	q->pq.run = true;
	q->cap = 0;
	q->frozen = false;
	apply(s, q);
	commit(s);
}

/* @q's grace ended with it still idle: now the policy hears of the Idle. */
static void grace_end(struct sched *s, struct sched_q *q)
{
	q->grace_until = 0;
	s->graces--;
	q->pq.ready = false;
	q->pq.inflight = 0;
	if (q->added && s->ops->queue_idle)
		s->ops->queue_idle(s->state, &q->pq, q->idle_ns);
}

/* Ends @q's grace, if any, as if it had not been (a switch, a removal). */
static void grace_drop(struct sched *s, struct sched_q *q)
{
	if (!q->grace_until)
		return;
	q->grace_until = 0;
	s->graces--;
	q->pq.ready = false;
	q->pq.inflight = 0;
}

void sched_init(struct sched *s, const struct sched_host *host, void *ctx,
		const struct sched_conf *conf)
{
	memset(s, 0, sizeof(*s));
	s->host = host;
	s->ctx = ctx;
	s->conf = *conf;
}

void sched_unquiet(struct sched *s)
{
	uint32_t i;
	size_t j;

	for (i = 0; i < s->ndom; i++) {
		struct sched_dom *d = s->dom[i];

		for (j = 0; d && j < d->n; j++) {
			struct sched_q *q = d->q[j];

			if (!q->quiet)
				continue;
			/* The flag's store, then the status load: see ipc_abi.h. */
			set_quiet(s, q, false);
			if (s->host->refresh)
				s->host->refresh(s->ctx, q);
		}
	}
}

/* Every queue in a domain, into a new array of s->n; NULL on out-of-memory. */
static struct sched_q **sched_collect(const struct sched *s)
{
	struct sched_q **all = malloc((s->n ? s->n : 1) * sizeof(*all));
	size_t k = 0, j;
	uint32_t i;

	if (!all)
		return NULL;
	for (i = 0; i < s->ndom; i++)
		for (j = 0; s->dom[i] && j < s->dom[i]->n; j++)
			all[k++] = s->dom[i]->q[j];
	return all;
}

/* The policy lets go of every queue and its state; the domains are freed. */
static void sched_detach(struct sched *s, struct sched_q **all, size_t n)
{
	uint32_t i;
	size_t j;

	for (j = 0; j < n; j++) {
		if (s->ops->queue_remove)
			s->ops->queue_remove(s->state, &all[j]->pq);
		all[j]->pq.pdata = NULL;
		all[j]->added = false;
	}
	if (s->ops->fini)
		s->ops->fini(s->state);
	for (i = 0; i < s->ndom; i++) {
		dom_free(s->dom[i]);
		s->dom[i] = NULL;
	}
	s->ndom = 0;
	s->n = 0;
}

void sched_fini(struct sched *s)
{
	struct sched_q **all;

	sched_unquiet(s);
	if (s->ops) {
		all = sched_collect(s);
		if (all) {
			sched_detach(s, all, s->n);
			free(all);
		} else {
			/* Out of memory: no per-queue goodbyes, the state still goes. */
			if (s->ops->fini)
				s->ops->fini(s->state);
		}
	}
	for (uint32_t i = 0; i < s->ndom; i++)
		dom_free(s->dom[i]);
	free(s->dom);
	memset(s, 0, sizeof(*s));
}

/* Whether @ops bounds every queue's wait itself (share-based policies). */
static bool bounds_waits(const struct xs_policy_ops *ops)
{
	return ops == &policy_bandwidth || ops == &policy_fair;
}

int sched_set_policy(struct sched *s, const struct xs_policy_ops *ops, void *state)
{
	struct sched_q **all = NULL;
	size_t n = s->n, j;
	uint32_t idx;

	if (s->ops) {
		all = sched_collect(s);
		if (!all)
			return -ENOMEM;
		sched_unquiet(s);
		for (j = 0; j < n; j++)
			grace_drop(s, all[j]);
		sched_detach(s, all, n);
	}
	s->ops = ops;
	s->state = state;
	s->per_device = policy_per_device(ops);
	s->floor = policy_floor(ops);
	s->guard_exempt = bounds_waits(ops);
	for (j = 0; j < n; j++) {
		struct sched_q *q = all[j];

		if (dom_get(s, q->pq.device, &idx) < 0 ||
		    (ops->queue_add && ops->queue_add(state, &q->pq) < 0)) {
			/* Refused (or no memory for it): it runs unscheduled. */
			for (idx = 0; idx < s->ndom; idx++)
				dom_put(s, idx);
			run_unscheduled(s, q);
			if (s->host->refused)
				s->host->refused(s->ctx, q);
			continue;
		}
		dom_push(s, idx, q);
		q->added = true;
		s->n++;
		if (q->pq.ready && ops->queue_ready)
			ops->queue_ready(state, &q->pq, q->pq.ready_ns);
	}
	free(all);
	s->all_due = true;
	return 0;
}

void sched_set_conf(struct sched *s, const struct sched_conf *conf)
{
	uint32_t i;

	s->conf = *conf;
	s->all_due = true;
	for (i = 0; i < s->ndom; i++)
		if (s->dom[i])
			s->dom[i]->caps_dirty = true;
}

int sched_add(struct sched *s, struct sched_q *q)
{
	uint32_t idx;

	q->pq.priority = q->own_priority;
	q->pq.run = true;
	q->pq.pdata = NULL;
	q->cap = 0;
	q->shown = 1;               /* what a new queue's process starts with */
	q->added = q->quiet = q->waits = q->frozen = false;
	q->starve_since = q->guard_until = 0;
	q->grace_until = q->idle_ns = 0;
	q->ready = q->pq.ready;
	q->ready_ns = q->pq.ready_ns;
	if (dom_get(s, q->pq.device, &idx) < 0)
		return -ENOMEM;
	if (s->ops->queue_add && s->ops->queue_add(s->state, &q->pq) < 0) {
		dom_put(s, idx);
		run_unscheduled(s, q);
		return 1;
	}
	dom_push(s, idx, q);
	q->added = true;
	s->n++;
	return 0;
}

void sched_remove(struct sched *s, struct sched_q *q)
{
	grace_drop(s, q);
	sched_waits(s, q, false);
	set_quiet(s, q, false);
	if (!q->added)
		return;
	dom_drop(s, q);
	if (s->ops->queue_remove)
		s->ops->queue_remove(s->state, &q->pq);
	q->pq.pdata = NULL;
	q->added = false;
	s->n--;
}

void sched_hints(struct sched *s, struct sched_q *q)
{
	q->pq.priority = q->own_priority;
	if (!q->added)
		return;
	if (s->ops->hints_changed)
		s->ops->hints_changed(s->state, &q->pq);
	dom_of(s, q)->caps_dirty = true;
	mark_due(s, q);
}

void sched_ready(struct sched *s, struct sched_q *q, uint64_t ready_ns, uint64_t now)
{
	q->ready = true;
	q->ready_ns = ready_ns;
	q->frozen = false;
	if (q->idle_ns) {
		sched_grace_learn(q, now > q->idle_ns ? now - q->idle_ns : 0,
				  s->conf.grace_max_ns);
		q->idle_ns = 0;
	}
	if (q->grace_until) {
		/* Back within its grace: to the policy it never left. */
		q->grace_until = 0;
		s->graces--;
		q->grace_hits++;
		mark_due(s, q);
		return;
	}
	q->pq.ready = true;
	q->pq.ready_ns = ready_ns;
	if (q->added && s->ops->queue_ready)
		s->ops->queue_ready(s->state, &q->pq, ready_ns);
	mark_due(s, q);
}

/* Whether a ready queue of @q's domain other than @q is held suspended. */
static bool holds_others(const struct sched *s, const struct sched_q *q)
{
	const struct sched_dom *d = dom_of(s, q);

	for (size_t i = 0; i < d->n; i++)
		if (d->q[i] != q && d->q[i]->pq.ready && !d->q[i]->pq.run)
			return true;
	return false;
}

void sched_idle(struct sched *s, struct sched_q *q, uint64_t now)
{
	uint64_t grace;

	q->ready = false;
	q->idle_ns = now ? now : 1;
	q->frozen = false;
	if (q->added && q->pq.ready && q->pq.run &&
	    (grace = sched_grace_of(q, s->conf.grace_max_ns)) && holds_others(s, q)) {
		/* The queues it holds stay held for its grace (sched_grace.c). */
		q->grace_until = now + grace;
		s->graces++;
		q->graces++;
		mark_due(s, q);
		return;
	}
	q->pq.ready = false;
	q->pq.inflight = 0;
	if (q->added && s->ops->queue_idle)
		s->ops->queue_idle(s->state, &q->pq, now);
	mark_due(s, q);
}

void sched_waits(struct sched *s, struct sched_q *q, bool waits)
{
	if (q->waits == waits)
		return;
	q->waits = waits;
	if (waits)
		s->waiting++;
	else
		s->waiting--;
	mark_due(s, q);
}

void sched_touch(struct sched *s, struct sched_q *q)
{
	mark_due(s, q);
}

/*
 * Priority inheritance inside a process: a ready queue waiting on another
 * lends it its priority, transitively. Priorities only grow, so this ends
 * after at most n rounds, cycles too. Called only while a queue waits or
 * one inherited last time (then once more, to give it back).
 */
static void sched_inherit(struct sched *s)
{
	bool changed = true;
	size_t j, round;
	uint32_t i;

	s->inherited = false;
	for (i = 0; i < s->ndom; i++)
		for (j = 0; s->dom[i] && j < s->dom[i]->n; j++)
			s->dom[i]->q[j]->pq.priority = s->dom[i]->q[j]->own_priority;
	for (round = 0; changed && round < s->n; round++) {
		changed = false;
		for (i = 0; i < s->ndom; i++) {
			for (j = 0; s->dom[i] && j < s->dom[i]->n; j++) {
				struct sched_q *q = s->dom[i]->q[j], *t;

				if (!q->pq.ready || !q->waits || !s->host->waits_on)
					continue;
				t = s->host->waits_on(s->ctx, q);
				if (t && t->pq.priority < q->pq.priority) {
					t->pq.priority = q->pq.priority;
					s->inherited = changed = true;
				}
			}
		}
	}
}

/*
 * The starvation guard for @q, after the policy decided: a ready queue
 * that a priority policy kept suspended for a whole period runs for
 * guard_pct of the next one, alongside the queues that starved it, as
 * Linux gives non-real-time tasks 5% of each second (RT throttling). The
 * share-based policies (bandwidth, fair) are left alone: their turns
 * already bound every queue's wait, and a grant would skew the shares.
 * Overrides @q's decision when it starved a whole period; returns when to
 * look again (0: no need).
 */
static uint64_t sched_guard(struct sched *s, struct sched_q *q, uint64_t now, uint64_t grant)
{
	if (q->guard_until > now) {
		q->pq.run = true;
		return q->guard_until;
	}
	if (!q->pq.ready || q->pq.run) {
		q->starve_since = 0;
		return 0;
	}
	if (!q->starve_since)
		q->starve_since = now;
	if (now - q->starve_since >= s->conf.guard_period_ns) {
		q->guard_until = now + grant;
		q->guard_runs++;
		q->starve_since = 0;
		q->pq.run = true;
		return q->guard_until;
	}
	return q->starve_since + s->conf.guard_period_ns;
}

/*
 * The preemption cap for @q, after the policy decided (struct sched_conf):
 * a ready queue the policy holds is a preemption, unless it was already
 * held at the last decision; the preemptions within one request (holds
 * less than request_gap_ns apart) beyond preempt_cap are not made, and the
 * queue runs until the policy has not held it for the gap.
 */
static void sched_cap(struct sched *s, struct sched_q *q, uint64_t now)
{
	bool wanted = q->pq.ready && !q->pq.run;

	if (!wanted) {
		q->cap_held = false;
		return;
	}
	if (now - q->cap_last >= s->conf.request_gap_ns) {
		q->cap_count = 0;
		q->cap_free = false;
	}
	q->cap_last = now;
	if (!q->cap_free && !q->cap_held && ++q->cap_count > s->conf.preempt_cap)
		q->cap_free = true;
	q->cap_held = !q->cap_free;
	q->pq.run = q->cap_free;
}

/*
 * Contention-aware window: queues below the top priority of their device
 * get the in-flight cap. O(queues x devices of the domain).
 */
static void dom_caps(const struct sched *s, struct sched_dom *d)
{
	uint32_t dev = 0;
	size_t i;

	if (!s->conf.contention_window) {
		for (i = 0; i < d->n; i++)
			d->q[i]->cap = 0;
		return;
	}
	policy_for_each_dev(dev, d->pv, d->n) {
		int32_t top = INT32_MIN;

		for (i = 0; i < d->n; i++)
			if (d->pv[i]->device == dev && d->pv[i]->priority > top)
				top = d->pv[i]->priority;
		for (i = 0; i < d->n; i++)
			if (d->pv[i]->device == dev)
				d->q[i]->cap = d->pv[i]->priority < top ? s->conf.contention_window : 0;
	}
}

/* First thing of a domain's decision: clears the quiet flags (reading the
 * status of those that had one, the only ones that may have changed
 * without ringing). */
static void dom_prepare(struct sched *s, struct sched_dom *d)
{
	size_t i;

	d->go = true;
	for (i = 0; d->nquiet && i < d->n; i++) {
		struct sched_q *q = d->q[i];

		if (!q->quiet)
			continue;
		set_quiet(s, q, false);
		if (s->host->refresh)
			s->host->refresh(s->ctx, q);
	}
}

/* Decides @d: the policy, the guard, the caps, the writes, the quiet flags. */
static void dom_decide(struct sched *s, struct sched_dom *d, uint64_t now)
{
	struct sched_summary sum;
	uint64_t next, grant = s->conf.guard_period_ns * s->conf.guard_pct / 100;
	bool guard = s->conf.guard_pct && !s->guard_exempt;
	size_t i;

	s->runs++;
	/* Graces that ran out; only ready queues consume device time or have
	 * work in flight (sched_idle() zeroed the others' count). */
	for (i = 0; (s->host->load || s->graces) && i < d->n; i++) {
		struct sched_q *q = d->q[i];

		if (q->grace_until && now >= q->grace_until)
			grace_end(s, q);
		if (q->pq.ready && !q->frozen && s->host->load)
			s->host->load(s->ctx, q);
	}
	next = s->ops->schedule(s->state, d->pv, d->n, now);
	if (d->caps_dirty) {
		dom_caps(s, d);
		d->caps_dirty = false;
	}
	sum.low = INT32_MAX;
	sum.changed = d->sum_dirty;
	for (i = 0; i < d->n; i++) {
		struct sched_q *q = d->q[i];
		bool exempt;

		if (s->conf.preempt_cap && !s->guard_exempt)
			sched_cap(s, q, now);
		if (guard)
			next = min_time(next, sched_guard(s, q, now, grant));
		if (q->grace_until)
			next = min_time(next, q->grace_until);
		exempt = q->guard_until > now || q->cap_free;
		if (q->pq.ready && q->pq.run && !exempt && q->pq.priority < sum.low)
			sum.low = q->pq.priority;
		if (exempt != q->exempt || q->pq.priority != q->said_priority) {
			q->exempt = exempt;
			q->said_priority = q->pq.priority;
			sum.changed = true;
		}
	}
	d->sum_dirty = false;
	if (s->host->decided)
		s->host->decided(s->ctx, d->q, d->n, &sum);
	for (i = 0; i < d->n; i++)
		apply(s, d->q[i]);
	/* Every store of a decision, then the loads of in-flight counts: one
	 * barrier for the device, not one a queue. */
	commit(s);
	for (i = 0; i < d->n; i++) {
		struct sched_q *q = d->q[i];
		uint32_t left;

		if (q->pq.run || !q->pq.ready) {
			q->frozen = false;
			continue;
		}
		if (q->frozen)
			continue;
		/* After the run store (the Dekker pair of ipc_abi.h, "Drain"). */
		left = s->host->inflight(s->ctx, q);
		if (q->pq.inflight > 1 && left <= 1)
			next = min_time(next, now);
		if (!left) {
			q->frozen = true;
			q->pq.inflight = 0;
		}
	}
	if (d->n <= SCHED_QUIET_MAX) {
		policy_quiet(s->ops, s->state, d->pv, d->n, d->quiet);
		for (i = 0; i < d->n; i++)
			set_quiet(s, d->q[i], d->quiet[i]);
	}
	d->wakeup_ns = next;
	d->due = false;
}

uint64_t sched_run(struct sched *s, uint64_t now, bool all)
{
	uint64_t next = 0;
	bool every;
	uint32_t i;

	if (!s->ops)
		return 0;
	every = all || s->all_due || s->waiting || s->inherited;
	for (i = 0; i < s->ndom; i++) {
		struct sched_dom *d = s->dom[i];

		if (d && (every || d->due || (d->wakeup_ns && d->wakeup_ns <= now)))
			dom_prepare(s, d);
		else if (d)
			d->go = false;
	}
	/* A quiet queue's fresh status may have started a wait. */
	if (!every && (s->waiting || s->inherited))
		for (i = 0; i < s->ndom; i++)
			if (s->dom[i] && !s->dom[i]->go)
				dom_prepare(s, s->dom[i]);
	if (s->waiting || s->inherited) {
		sched_inherit(s);
		/* Inheritance moves priorities while queues wait, and once more after. */
		for (i = 0; i < s->ndom; i++)
			if (s->dom[i])
				s->dom[i]->caps_dirty = true;
	}
	for (i = 0; i < s->ndom; i++) {
		struct sched_dom *d = s->dom[i];

		if (!d)
			continue;
		if (d->go)
			dom_decide(s, d, now);
		next = min_time(next, d->wakeup_ns);
	}
	s->all_due = false;
	s->wakeup_ns = next;
	return next;
}
