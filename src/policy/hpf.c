/*
 * Highest priority first, per device (hpf) and across devices (hhpf).
 *
 * hpf: on each device, let P be the highest priority among its ready
 * queues; every queue of the device, ready or idle, runs iff its priority
 * is >= P, so equal priorities run together and the device's own
 * arbitration shares between them. A device without a ready queue lets
 * all of its queues run. Idle queues are decided like ready ones, so a
 * low-priority queue that becomes ready while a higher one is busy is
 * already suspended and cannot slip a command in before the scheduler
 * reacts.
 *
 * hhpf (heterogeneous): the same rule with P taken over the ready queues
 * of every device, because devices interfere through shared host
 * resources (PCIe, memory bandwidth, CPU submission threads): a ready
 * high-priority queue on one device suspends lower ones everywhere. When
 * no queue is ready anywhere, all run.
 *
 * Priorities arrive effective: inheritance and any starvation guard are
 * applied by the scheduler core (src/sched/), whichever hosts it (xschedd,
 * or the agent in local mode). Both policies are stateless and never ask
 * for a timer: schedule() returns 0. Queues with nothing of lower priority
 * beside them may skip their doorbells (quiet()).
 */
#include "policy/policy_builtin.h"

/* Decides every queue against P computed per device, or globally if @all. */
static void hpf_decide(struct xs_pqueue *const *qs, size_t n, bool all)
{
	uint32_t dev = 0;
	bool one = true;
	int32_t p;
	size_t i;

	/* One pass for P over everything, noting whether it is one device
	 * (what the scheduler core passes a per-device policy). */
	p = INT32_MIN;
	for (i = 0; i < n; i++) {
		one &= qs[i]->device == qs[0]->device;
		if (qs[i]->ready && qs[i]->priority > p)
			p = qs[i]->priority;
	}
	if (all || one) {
		for (i = 0; i < n; i++)
			qs[i]->run = qs[i]->priority >= p;
		return;
	}
	policy_for_each_dev(dev, qs, n) {
		p = policy_max_ready_prio(qs, n, dev, false);
		for (i = 0; i < n; i++)
			if (qs[i]->device == dev)
				qs[i]->run = qs[i]->priority >= p;
	}
}

/*
 * A queue may change unannounced when everything it competes with runs
 * (nothing to resume) and none of it has a lower priority (its Ready would
 * suspend that one). Queues of higher priority then see a lower one and are
 * not quiet, so their changes are always announced; equal ones are quiet
 * together and run together anyway. O(n) per device.
 */
static void hpf_quiet_set(struct xs_pqueue *const *qs, size_t n, bool *quiet, uint32_t dev,
			  bool all)
{
	int32_t low = INT32_MAX;
	bool all_run = true;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!all && qs[i]->device != dev)
			continue;
		all_run &= qs[i]->run;
		if (qs[i]->priority < low)
			low = qs[i]->priority;
	}
	for (i = 0; i < n; i++)
		if ((all || qs[i]->device == dev) && all_run)
			quiet[i] = qs[i]->priority == low;
}

static void hpf_quiet(void *state, struct xs_pqueue *const *qs, size_t n, bool *quiet)
{
	uint32_t dev = 0;

	(void)state;
	policy_for_each_dev(dev, qs, n)
		hpf_quiet_set(qs, n, quiet, dev, false);
}

static void hhpf_quiet(void *state, struct xs_pqueue *const *qs, size_t n, bool *quiet)
{
	(void)state;
	hpf_quiet_set(qs, n, quiet, 0, true);
}

static uint64_t hpf_schedule(void *state, struct xs_pqueue *const *qs,
			     size_t n, uint64_t now)
{
	(void)state;
	(void)now;
	hpf_decide(qs, n, false);
	return 0;
}

static uint64_t hhpf_schedule(void *state, struct xs_pqueue *const *qs,
			      size_t n, uint64_t now)
{
	(void)state;
	(void)now;
	hpf_decide(qs, n, true);
	return 0;
}

const struct xs_policy_ops policy_hpf = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "hpf",
	.flags = XS_POLICY_PER_DEVICE | XS_POLICY_FLOOR,
	.schedule = hpf_schedule,
	.quiet = hpf_quiet,
};

const struct xs_policy_ops policy_hhpf = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "hhpf",
	.schedule = hhpf_schedule,
	.quiet = hhpf_quiet,
};
