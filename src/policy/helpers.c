/*
 * Helpers the built-in policies share (declared in policy_builtin.h):
 * share and time arithmetic, device iteration, the switch-over drain and
 * the quiet flags' default. Plain functions over struct xs_pqueue views,
 * with no state of their own, so any thread may call them.
 */
#include "policy/policy_builtin.h"

int64_t policy_share(const struct xs_pqueue *q, int64_t dflt)
{
	int64_t s = q->share > 0 ? q->share : dflt;

	return s > POLICY_SHARE_MAX ? POLICY_SHARE_MAX : s;
}

uint64_t policy_add_us(uint64_t ns, int64_t us)
{
	uint64_t add;

	if (us <= 0)
		return ns;
	if ((uint64_t)us > UINT64_MAX / 1000)
		return UINT64_MAX;
	add = (uint64_t)us * 1000;
	return add > UINT64_MAX - ns ? UINT64_MAX : ns + add;
}

uint64_t policy_wake_min(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

/* True when @ops is long enough to hold @field. */
#define OPS_HAS(ops, field)                                                   \
	((ops)->size >= offsetof(struct xs_policy_ops, field) + sizeof((ops)->field))

void policy_quiet(const struct xs_policy_ops *ops, void *state,
		  struct xs_pqueue *const *qs, size_t n, bool *quiet)
{
	size_t i;

	for (i = 0; i < n; i++)
		quiet[i] = false;
	if (OPS_HAS(ops, quiet) && ops->quiet)
		ops->quiet(state, qs, n, quiet);
	else if (n == 1)
		quiet[0] = true;
	for (i = 0; i < n; i++)
		quiet[i] &= qs[i]->run;
}

bool policy_per_device(const struct xs_policy_ops *ops)
{
	return OPS_HAS(ops, flags) && (ops->flags & XS_POLICY_PER_DEVICE);
}

bool policy_floor(const struct xs_policy_ops *ops)
{
	return policy_per_device(ops) && (ops->flags & XS_POLICY_FLOOR);
}

bool policy_dev_next(struct xs_pqueue *const *qs, size_t n, bool first, uint32_t *dev)
{
	bool found = false;
	uint32_t best = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t d = qs[i]->device;

		if (!first && d <= *dev)
			continue;
		if (!found || d < best) {
			best = d;
			found = true;
		}
	}
	if (found)
		*dev = best;
	return found;
}

uint64_t policy_drain_hold(struct xs_pqueue *const *qs, size_t n, uint32_t dev,
			   uint64_t turn_ns, uint64_t max_ns, uint64_t now)
{
	uint64_t until = turn_ns + max_ns;
	bool draining = false;
	size_t i;

	if (now >= until)
		return 0;
	for (i = 0; i < n; i++)
		draining |= qs[i]->device == dev && !qs[i]->run && qs[i]->inflight > 1;
	if (!draining)
		return 0;
	for (i = 0; i < n; i++)
		if (qs[i]->device == dev)
			qs[i]->run = false;
	return until;
}

int32_t policy_max_ready_prio(struct xs_pqueue *const *qs, size_t n, uint32_t dev, bool all)
{
	int32_t p = INT32_MIN;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct xs_pqueue *q = qs[i];

		if (q->ready && (all || q->device == dev) && q->priority > p)
			p = q->priority;
	}
	return p;
}
