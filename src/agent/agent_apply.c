/*
 * What the agent does to its XQueues (see agent_apply.h): the one file
 * that suspends, resumes and re-windows them for a decision, whoever made
 * it: the daemon through the shared slots, the local mode's core, or the
 * agent itself failing open (agent_daemon.c on a lost connection,
 * agent_live.c on a silent daemon). The decision as last applied is kept
 * in the queue's entry (run, cap, the own window), so applying the same
 * decision twice does nothing.
 */
#include "agent/agent_apply.h"
#include "agent/agent_state.h"
#include "base/compiler.h"

/*
 * Contention-aware window (DESIGN 3.3): while a queue of higher priority
 * shares the device, the scheduler caps this queue at @cap commands in
 * flight (0: no cap), so that the higher one's task waits for little of
 * ours at Lv1; the queue's own window is kept aside and comes back. With
 * @own_set, the own window was just changed (daemon knobs): keep that one.
 * Agent lock held.
 */
void agent_apply_cap(struct agent_queue *aq, int32_t cap, bool own_set)
{
	if (cap == aq->cap && !own_set)
		return;
	/* As set: a budget left to the level stays so when it comes back. */
	if (!aq->cap || own_set)
		xq_window_get(aq->q, &aq->own_threshold, &aq->own_batch, &aq->own_budget_ns);
	if (cap)
		xq_set_window(aq->q, cap, 1, 0);
	else
		xq_set_window(aq->q, aq->own_threshold, aq->own_batch, aq->own_budget_ns);
	aq->cap = cap;
}

void agent_apply_run(struct agent_queue *aq, bool run)
{
	if (run == aq->run)
		return;
	if (run)
		xq_resume(aq->q);
	else
		xq_suspend(aq->q, 0);
	aq->run = run;
}

/*
 * Hints set with xschedctl become the queue's own, so they are registered
 * again after a daemon restart. Only new values are taken: a hint the
 * application set since keeps precedence.
 */
static void agent_take_ctl_hints(struct agent_queue *aq, struct ipc_slot *slot)
{
	uint32_t set = atomic_load(&slot->hint_set), k;

	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++) {
		int64_t v = atomic_load(&slot->hint[k]);

		if (!(set & (1u << k)) ||
		    ((aq->ctl_taken & (1u << k)) && v == aq->ctl_hint[k]))
			continue;
		aq->ctl_hint[k] = v;
		aq->ctl_taken |= 1u << k;
		xq_set_hint(aq->q, (enum xs_hint)k, v);
	}
}

void agent_apply_slots(void)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	uint32_t i;

	/* A silent daemon's decisions wait until it beats again (agent_live.c). */
	if (!shm || ag.hung)
		return;
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];
		struct ipc_slot *slot = &shm->slot[i];
		uint32_t seq, run;
		int32_t t, b, l;
		bool own_set;
		int64_t g;

		if (!aq || !aq->registered)
			continue;
		/* First: the daemon bumps it last (a release, src/daemon/slot.c). */
		seq = atomic_load(&slot->decision_seq);
		if (seq == aq->decision_seen && !ag.reapply)
			continue;
		aq->decision_seen = seq;
		t = atomic_load(&slot->threshold);
		b = atomic_load(&slot->batch);
		g = atomic_load(&slot->budget_ns);
		l = atomic_load(&slot->level);
		run = atomic_load(&slot->run);
		own_set = false;
		if ((t && t != aq->threshold) || (b && b != aq->batch) ||
		    (g && g != aq->budget_ns)) {
			if (aq->cap)
				xq_set_window(aq->q, aq->own_threshold, aq->own_batch,
					      aq->own_budget_ns);
			if (xq_set_window(aq->q, t, b, g) == 0) {
				aq->threshold = t ? t : aq->threshold;
				aq->batch = b ? b : aq->batch;
				aq->budget_ns = g ? g : aq->budget_ns;
				own_set = true;
			}
		}
		if (l && l != aq->level && xq_set_level(aq->q, l) == 0)
			aq->level = l;
		agent_take_ctl_hints(aq, slot);
		agent_apply_cap(aq, run > 1 ? (int32_t)BASE_MIN(run - 1, XS_MAX_THRESHOLD) : 0,
				own_set);
		agent_apply_run(aq, run != 0);
		/* The run word may have gone to 0 and back meanwhile. */
		if (run)
			xq_kick(aq->q);
	}
	ag.reapply = false;
	pthread_mutex_unlock(&ag.lock);
}
