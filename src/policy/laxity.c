/*
 * Laxity-based scheduling: highest priority first, until a queue has waited
 * as long as its laxity hint allows.
 *
 * Per device, a ready queue with a laxity hint has a latest start time,
 * ready_ns + laxity_us * 1000; once that time has come (latest <= now) the
 * queue is urgent. Urgent queues outrank every non-urgent one regardless
 * of priority: among them the earliest latest start runs, with ties
 * running together; everything else on the device, idle queues included,
 * is suspended. Without an urgent queue the device follows hpf: with P the
 * highest priority among ready queues, each queue (ready or idle) runs iff
 * its priority >= P, and all run when none is ready.
 *
 * The policy is stateless; the time it depends on is returned instead:
 * schedule() asks to be called again at the earliest future latest start
 * of a non-urgent ready queue, so a queue is promoted exactly when its
 * laxity runs out, or 0 when there is none.
 */
#include "policy/policy_builtin.h"

/* The latest start of ready @q, or 0 when it has no laxity hint. */
static uint64_t latest_start(const struct xs_pqueue *q)
{
	if (!q->ready || q->laxity_us <= 0)
		return 0;
	return policy_add_us(q->ready_ns, q->laxity_us);
}

/* Decides the queues of @dev; returns its next promotion time or 0. */
static uint64_t laxity_device(struct xs_pqueue *const *qs, size_t n,
			      uint32_t dev, uint64_t now)
{
	uint64_t urgent = 0, wake = 0, t;
	int32_t p;
	size_t i;

	for (i = 0; i < n; i++) {
		if (qs[i]->device != dev)
			continue;
		t = latest_start(qs[i]);
		if (t == 0)
			continue;
		if (t <= now)
			urgent = urgent && urgent < t ? urgent : t;
		else
			wake = policy_wake_min(wake, t);
	}
	if (urgent) {
		for (i = 0; i < n; i++)
			if (qs[i]->device == dev)
				qs[i]->run = latest_start(qs[i]) == urgent;
		return wake;
	}
	p = policy_max_ready_prio(qs, n, dev, false);
	for (i = 0; i < n; i++)
		if (qs[i]->device == dev)
			qs[i]->run = qs[i]->priority >= p;
	return wake;
}

static uint64_t laxity_schedule(void *state, struct xs_pqueue *const *qs,
				size_t n, uint64_t now)
{
	uint64_t wake = 0;
	uint32_t dev = 0;

	(void)state;
	policy_for_each_dev(dev, qs, n)
		wake = policy_wake_min(wake, laxity_device(qs, n, dev, now));
	return wake;
}

const struct xs_policy_ops policy_laxity = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "laxity",
	.flags = XS_POLICY_PER_DEVICE,
	.schedule = laxity_schedule,
};
