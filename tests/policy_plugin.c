/*
 * A sample external scheduling policy, built as a loadable module for the
 * loader tests: first come, first served, one queue at a time per device.
 *
 * It uses only the public header, as a user's policy would. On each device
 * the ready queue that became ready first (lowest ready_ns, then lowest id)
 * runs alone; idle queues are suspended while anything on their device is
 * ready. Stateless, so it fills only `schedule`; the entry point is given
 * default visibility explicitly because xsched builds with hidden symbols.
 */
#include <stddef.h>

#include "xsched/policy.h"

__attribute__((visibility("default")))
const struct xs_policy_ops *xs_policy_entry(uint32_t version);

/* True when ready @a came before ready @b. */
static bool fifo_before(const struct xs_pqueue *a, const struct xs_pqueue *b)
{
	if (a->ready_ns != b->ready_ns)
		return a->ready_ns < b->ready_ns;
	return a->id < b->id;
}

static uint64_t fifo_schedule(void *state, struct xs_pqueue *const *qs,
			      size_t n, uint64_t now)
{
	size_t i, j;

	(void)state;
	(void)now;
	for (i = 0; i < n; i++) {
		const struct xs_pqueue *first = NULL;

		for (j = 0; j < n; j++)
			if (qs[j]->device == qs[i]->device && qs[j]->ready &&
			    (!first || fifo_before(qs[j], first)))
				first = qs[j];
		qs[i]->run = !first || qs[i] == first;
	}
	return 0;
}

static const struct xs_policy_ops fifo_ops = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "fifo",
	.schedule = fifo_schedule,
};

/* Returns the table for @version 1..XS_POLICY_VERSION, else NULL. */
const struct xs_policy_ops *xs_policy_entry(uint32_t version)
{
	if (version < 1)
		return NULL;
	return &fifo_ops;
}
