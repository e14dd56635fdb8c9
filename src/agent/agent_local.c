/*
 * Local mode (XSCHED_SCHEDULER=local; see agent_local.h, agent_mode.h): the
 * scheduler core (src/sched/) run by the agent thread over this process's
 * queues, with no daemon at all. It is the daemon's core with the agent as
 * its host: the same policies, priority inheritance, starvation guard,
 * contention-aware window, quiet flags, drain re-decide and idle grace;
 * this file reads each queue's status and hints from the XQueue and its
 * observer, and has the decisions applied to the XQueue (agent_apply.c).
 * The core runs with the agent lock held; the observers' callbacks
 * (local_publish(), local_ring()) only wake the agent thread.
 */
#include "agent/agent_local.h"
#include "agent/agent_apply.h"
#include "agent/agent_state.h"
#include "base/compiler.h"
#include "base/xlog.h"
#include "policy/policy_builtin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct agent_queue *local_queue(struct sched_q *sq)
{
	return base_container_of(sq, struct agent_queue, sq);
}

/* Reads @aq's hints, waits and status and tells the core what changed. */
static void local_refresh(struct agent_queue *aq)
{
	struct sched_q *sq = &aq->sq;
	int64_t hint[XQ_HINTS];
	xs_queue_stats st;

	xq_hints(aq->q, hint);
	xq_stats(aq->q, &st);
	if (sq->own_priority != (int32_t)hint[XS_HINT_PRIORITY] ||
	    sq->pq.share != hint[XS_HINT_SHARE] ||
	    sq->pq.deadline_us != hint[XS_HINT_DEADLINE_US] ||
	    sq->pq.laxity_us != hint[XS_HINT_LAXITY_US]) {
		sq->own_priority = (int32_t)hint[XS_HINT_PRIORITY];
		sq->pq.share = hint[XS_HINT_SHARE];
		sq->pq.deadline_us = hint[XS_HINT_DEADLINE_US];
		sq->pq.laxity_us = hint[XS_HINT_LAXITY_US];
		sched_hints(&ag.sched, sq);
	}
	sq->pq.service_ns = st.exec_ns;
	sched_waits(&ag.sched, sq, atomic_load(&aq->blocked_on) != NULL);
	if (atomic_load(&aq->status) == IPC_ST_READY) {
		uint64_t r = atomic_load(&aq->ready_ns);

		/* Against the status as reported (sq->ready), not the policy's
		 * view, which an idle grace holds up. */
		if (sq->ready && r != sq->ready_ns)
			/* Idle and ready again between two looks: both happened. */
			sched_idle(&ag.sched, sq, clock_now_ns());
		if (!sq->ready)
			sched_ready(&ag.sched, sq, r, clock_now_ns());
		sq->pq.inflight = (uint16_t)BASE_MIN(atomic_load(&aq->inflight), UINT16_MAX);
	} else if (sq->ready) {
		sched_idle(&ag.sched, sq, clock_now_ns());
	}
}

static bool local_apply(void *ctx, struct sched_q *sq)
{
	struct agent_queue *aq = local_queue(sq);
	bool changed = aq->run != sq->pq.run || aq->cap != (int32_t)sq->cap;

	(void)ctx;
	agent_apply_cap(aq, (int32_t)sq->cap, false);
	agent_apply_run(aq, sq->pq.run);
	return changed;
}

static void local_set_quiet(void *ctx, struct sched_q *sq, bool quiet)
{
	(void)ctx;
	atomic_store(&local_queue(sq)->quiet, quiet);
}

static void local_host_refresh(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	local_refresh(local_queue(sq));
}

static uint32_t local_inflight(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	return atomic_load(&local_queue(sq)->inflight);
}

/*
 * The queue of this process that @sq's next command waits for (a CUDA
 * event of another stream, say): it inherits @sq's priority, or it could
 * stay suspended for the very queue that waits on it.
 */
static struct sched_q *local_waits_on(void *ctx, struct sched_q *sq)
{
	void *on = atomic_load(&local_queue(sq)->blocked_on);

	(void)ctx;
	for (uint32_t j = 0; on && j < AGENT_SLOTS; j++) {
		struct agent_queue *t = ag.tab[j];

		if (t && t->local && (void *)t->q == on)
			return &t->sq;
	}
	return NULL;
}

static const struct sched_host local_host = {
	.apply = local_apply,
	.set_quiet = local_set_quiet,
	.refresh = local_host_refresh,
	.inflight = local_inflight,
	.waits_on = local_waits_on,
};

/* One scheduling pass of the in-process policy; when to pass again. */
static uint64_t local_turn(void)
{
	pthread_mutex_lock(&ag.lock);
	/* Quiet queues are read again by the core once their flag is down
	 * (the Dekker pair of local_publish()). */
	for (uint32_t i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i] && ag.tab[i]->local)
			local_refresh(ag.tab[i]);
	ag.pwake_ns = sched_run(&ag.sched, clock_now_ns(), true);
	pthread_mutex_unlock(&ag.lock);
	return ag.pwake_ns;
}

/* The observer stored the status (aq->status): wake the agent thread. */
static void local_publish(struct agent_queue *aq, bool status, bool force)
{
	/* The quiet load comes after the observer's status store, the Dekker
	 * pair of local_turn() (ipc_abi.h, "Lazy doorbells"). */
	if (status && (force || !atomic_load(&aq->quiet)))
		agent_wake();
}

static void local_ring(void)
{
	agent_wake();
}

/* Local mode tells devices apart by identity, as the daemon (FNV-1a of the
 * identity, or of the API-local name when unverified). */
static uint32_t local_device_hash(const struct xal_hwq *hwq)
{
	const char *s = hwq->id.kind != DEVID_UNVERIFIED ? hwq->id.ident : hwq->device;
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Hands @aq (id, client, device set) to the core; false when it runs
 * unscheduled (refused, or out of memory). Agent lock held. */
static bool local_add(struct agent_queue *aq)
{
	int64_t hint[XQ_HINTS];

	aq->sq.pq.id = ++ag.next_id;
	aq->sq.pq.client = (uint64_t)getpid();
	aq->sq.pq.device = local_device_hash(xq_hwq(aq->q));
	xq_hints(aq->q, hint);
	aq->sq.own_priority = (int32_t)hint[XS_HINT_PRIORITY];
	aq->sq.pq.share = hint[XS_HINT_SHARE];
	aq->sq.pq.deadline_us = hint[XS_HINT_DEADLINE_US];
	aq->sq.pq.laxity_us = hint[XS_HINT_LAXITY_US];
	return sched_add(&ag.sched, &aq->sq) == 0;
}

/* Takes @aq out of the core. Agent lock held. */
static void local_remove(struct agent_queue *aq)
{
	sched_remove(&ag.sched, &aq->sq);
}

/* Sets up the in-process scheduler core from the environment (see
 * agent_local.h). 0 or -ENOMEM. Agent lock held. */
static int local_init(void)
{
	static _Atomic bool said[4];    /* one warning per malformed setting */
	const char *name = getenv("XSCHED_POLICY");
	struct xs_policy_conf conf = { .size = sizeof(conf) };
	const struct xs_policy_ops *ops;
	struct sched_conf sc = {
		.contention_window = (uint32_t)xlog_env_long("XSCHED_CONTENTION_WINDOW", 0, 64,
							      SCHED_CONTENTION_WINDOW, &said[0]),
		.guard_pct = (uint32_t)xlog_env_long("XSCHED_STARVATION_GUARD_PCT", 0, 50,
						     SCHED_GUARD_PCT_DEFAULT, &said[1]),
		.guard_period_ns = (uint64_t)xlog_env_long("XSCHED_STARVATION_PERIOD_MS", 10,
							   3600000, SCHED_GUARD_PERIOD_MS_DEFAULT,
							   &said[2]) *
				   NSEC_PER_MSEC,
		.grace_max_ns = (uint64_t)xlog_env_long("XSCHED_IDLE_GRACE_US", 0, SCHED_GRACE_US_MAX,
							SCHED_GRACE_US_DEFAULT, &said[3]) * 1000,
	};
	void *state = NULL;

	ops = policy_find(name && *name ? name : POLICY_DEFAULT);
	if (!ops) {
		XLOG_ONCE(XLOG_WARN, "XSCHED_POLICY=%s is not a built-in policy: using %s",
			  name, POLICY_DEFAULT);
		ops = policy_find(POLICY_DEFAULT);
	}
	if (ops->init && ops->init(&state, &conf) < 0)
		return -ENOMEM;
	sched_init(&ag.sched, &local_host, NULL, &sc);
	/* No queue yet: the switch-in cannot fail. */
	return sched_set_policy(&ag.sched, ops, state);
}

const struct agent_mode_ops agent_local_ops = {
	.init = local_init,
	.turn = local_turn,
	.publish = local_publish,
	.ring = local_ring,
	.add = local_add,
	.remove = local_remove,
};
