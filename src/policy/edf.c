/*
 * Earliest deadline first, K-EDF: per device, the K (conf edf_k, default 1)
 * ready queues with the earliest absolute deadlines run, the other ready
 * queues are suspended.
 *
 * A ready queue's absolute deadline is ready_ns + deadline_us * 1000, i.e.
 * relative to when its current work arrived. Queues without a deadline
 * hint sort after every queue with one, among themselves first come first
 * served by ready_ns; remaining ties go to the lower queue id, so the
 * order is total and the K chosen are well defined. Idle queues run only
 * while fewer than K queues are ready on their device, which also lets
 * every queue of an all-idle device run.
 *
 * The order only changes on events (absolute deadlines do not move), so
 * schedule() returns 0. The K-th smallest key is found by K selection
 * passes, O(K x queues) per device with no allocation; K is tiny in
 * practice (the number of queues a device overlaps usefully).
 */
#include "policy/policy_builtin.h"

#include <errno.h>
#include <stdlib.h>

struct edf_state {
	uint32_t k;
};

/* Total order of ready queues: (no deadline, time, id). */
struct edf_key {
	bool none;
	uint64_t at;
	uint64_t id;
};

static struct edf_key edf_key_of(const struct xs_pqueue *q)
{
	struct edf_key k = {
		.none = q->deadline_us <= 0,
		.at = q->deadline_us > 0 ?
			policy_add_us(q->ready_ns, q->deadline_us) : q->ready_ns,
		.id = q->id,
	};

	return k;
}

static bool edf_less(const struct edf_key *a, const struct edf_key *b)
{
	if (a->none != b->none)
		return !a->none;
	if (a->at != b->at)
		return a->at < b->at;
	return a->id < b->id;
}

static int edf_init(void **state, const struct xs_policy_conf *conf)
{
	struct policy_conf pc;
	struct edf_state *st;

	policy_conf_resolve(&pc, conf, 0);
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->k = pc.edf_k;
	*state = st;
	return 0;
}

static void edf_fini(void *state)
{
	free(state);
}

/* Decides the queues of @dev given K. */
static void edf_device(struct xs_pqueue *const *qs, size_t n, uint32_t dev,
		       uint32_t k)
{
	struct edf_key last = { 0 }, best = { 0 }, key;
	uint32_t nready = 0, picked;
	bool found;
	size_t i;

	for (i = 0; i < n; i++)
		if (qs[i]->device == dev && qs[i]->ready)
			nready++;
	if (nready < k) {
		for (i = 0; i < n; i++)
			if (qs[i]->device == dev)
				qs[i]->run = true;
		return;
	}
	/* Find the K-th smallest key: each pass takes the next one above `last`. */
	for (picked = 0; picked < k; picked++) {
		found = false;
		for (i = 0; i < n; i++) {
			if (qs[i]->device != dev || !qs[i]->ready)
				continue;
			key = edf_key_of(qs[i]);
			if (picked && !edf_less(&last, &key))
				continue;
			if (!found || edf_less(&key, &best)) {
				best = key;
				found = true;
			}
		}
		last = best;
	}
	for (i = 0; i < n; i++) {
		if (qs[i]->device != dev)
			continue;
		key = edf_key_of(qs[i]);
		qs[i]->run = qs[i]->ready && !edf_less(&last, &key);
	}
}

static uint64_t edf_schedule(void *state, struct xs_pqueue *const *qs,
			     size_t n, uint64_t now)
{
	const struct edf_state *st = state;
	uint32_t dev = 0;

	(void)now;
	policy_for_each_dev(dev, qs, n)
		edf_device(qs, n, dev, st ? st->k : 1);
	return 0;
}

const struct xs_policy_ops policy_edf = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "edf",
	.flags = XS_POLICY_PER_DEVICE,
	.init = edf_init,
	.fini = edf_fini,
	.schedule = edf_schedule,
};
