/*
 * Fair share by virtual time with priority weights, one queue at a time per
 * device.
 *
 * Each queue has a virtual time: at every call the device time it consumed
 * since the previous call (service_ns delta) advances it by
 * delta * 1024 / weight, with weight = 1024 * 2^(priority / 10) (priority
 * clamped to XS_PRIORITY_MIN..MAX, so weights span 1..2^20 and +10 doubles
 * a queue's share). Per device, the ready queue with the smallest virtual
 * time runs alone; the others, and idle queues, are suspended; with no
 * ready queue all run. To avoid thrashing, the queue holding the device
 * keeps it until it has consumed slice_ns (default 10 ms) since its turn
 * started, even if another's virtual time is smaller by then. After that
 * the smallest virtual time wins; ties go to a waiting queue rather than
 * the holder (equal weights then alternate slice by slice), then to the
 * lower id.
 *
 * A queue that becomes ready (or went idle and came back between calls)
 * gets vtime = max(its vtime, ref - slice_ns), with ref the smallest
 * virtual time of the queues that stayed ready on the device, or, when
 * none did, the device's virtual clock (the largest such minimum seen so
 * far). So a queue neither hoards credit while idle nor starves the others
 * with a stale small virtual time, and a queue that ran alone for long is
 * not starved afterwards by one that was idle meanwhile.
 *
 * Switch-over: a new holder waits until the other queues of the device
 * have at most one command left in flight, or [policy] drain_ms (default
 * POLICY_DRAIN_MAX_NS) from its turn's start (policy_drain_hold).
 *
 * schedule() returns the end of the holder's minimum slice when other
 * queues are waiting on its device (now plus the slice time it has left),
 * else 0. The device's virtual clock is copied into every queue's pdata of
 * that device instead of a per-device table, so nothing needs allocating
 * outside queue_add. Queues without pdata are left running and ignored.
 */
#include "policy/policy_builtin.h"

#include <errno.h>
#include <stdlib.h>

#include "base/compiler.h"
#include "xsched/xsched.h"

struct fair_q {
	uint64_t vtime;
	uint64_t vclock;        /* the device's virtual clock, as of last call */
	uint64_t last_service;  /* service_ns at the previous call */
	uint64_t turn_service;  /* service_ns when its current turn started */
	uint64_t turn_ns;       /* when its current turn started */
	bool seen_ready;        /* ready at the previous call */
	bool bounced;           /* went idle since the previous call */
	bool cur;               /* holds its device */
};

struct fair_state {
	struct policy_conf conf;
};

/* 1024 * 2^(i / 10), i = 0..9, rounded. */
static const uint32_t fair_frac[10] = {
	1024, 1097, 1176, 1261, 1351, 1448, 1552, 1663, 1783, 1911,
};

/* The weight of priority @prio: 1024 * 2^(prio / 10), within 1..2^20. */
static uint64_t fair_weight(int32_t prio)
{
	int32_t e, r;

	if (prio < XS_PRIORITY_MIN)
		prio = XS_PRIORITY_MIN;
	if (prio > XS_PRIORITY_MAX)
		prio = XS_PRIORITY_MAX;
	/* Floor division, so that r is 0..9 for negative priorities too. */
	e = (prio - XS_PRIORITY_MIN) / 10 + XS_PRIORITY_MIN / 10;
	r = prio - 10 * e;
	if (e >= 0)
		return (uint64_t)fair_frac[r] << e;
	return BASE_MAX((uint64_t)fair_frac[r] >> -e, 1);
}

static int fair_init(void **state, const struct xs_policy_conf *conf)
{
	struct fair_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	policy_conf_resolve(&st->conf, conf, POLICY_FAIR_SLICE_NS);
	*state = st;
	return 0;
}

static void fair_fini(void *state)
{
	free(state);
}

static int fair_queue_add(void *state, struct xs_pqueue *q)
{
	struct fair_q *pd = calloc(1, sizeof(*pd));

	(void)state;
	if (!pd)
		return -ENOMEM;
	pd->last_service = q->service_ns;
	q->pdata = pd;
	return 0;
}

static void fair_queue_remove(void *state, struct xs_pqueue *q)
{
	(void)state;
	free(q->pdata);
	q->pdata = NULL;
}

static void fair_queue_idle(void *state, struct xs_pqueue *q, uint64_t now)
{
	struct fair_q *pd = q->pdata;

	(void)state;
	(void)now;
	if (pd)
		pd->bounced = true;
}

/* Device time @q consumed in its current turn. */
static uint64_t fair_used(const struct xs_pqueue *q, const struct fair_q *pd)
{
	return q->service_ns > pd->turn_service ?
		q->service_ns - pd->turn_service : 0;
}

/* True when ready @a should run rather than ready @b. */
static bool fair_before(const struct xs_pqueue *a, const struct xs_pqueue *b)
{
	const struct fair_q *pa = a->pdata, *pb = b->pdata;

	if (pa->vtime != pb->vtime)
		return pa->vtime < pb->vtime;
	if (pa->cur != pb->cur)
		return pb->cur;
	return a->id < b->id;
}

/*
 * Charges virtual time, advances the device's virtual clock and applies
 * ready transitions on @dev. Returns the clock.
 */
static uint64_t fair_account(const struct fair_state *st,
			     struct xs_pqueue *const *qs, size_t n,
			     uint32_t dev)
{
	uint64_t vclock = 0, ref = UINT64_MAX, prev = UINT64_MAX, delta;
	size_t i;

	for (i = 0; i < n; i++) {
		struct xs_pqueue *q = qs[i];
		struct fair_q *pd = q->pdata;

		if (q->device != dev || !pd)
			continue;
		delta = q->service_ns > pd->last_service ?
			q->service_ns - pd->last_service : 0;
		pd->last_service = q->service_ns;
		if (delta > (1ull << 50))
			delta = 1ull << 50;
		pd->vtime += delta * 1024 / fair_weight(q->priority);
		vclock = BASE_MAX(vclock, pd->vclock);
		if (pd->seen_ready)
			prev = BASE_MIN(prev, pd->vtime);
		if (!q->ready || pd->bounced)
			pd->cur = false;
		/* Stayed ready: the reference for arrivals. */
		if (q->ready && pd->seen_ready && !pd->bounced)
			ref = BASE_MIN(ref, pd->vtime);
	}
	/*
	 * The clock advances to the smallest virtual time among the queues
	 * that were ready until now, those going idle included: a queue that
	 * ran alone (no calls meanwhile) moves it when it stops.
	 */
	if (prev != UINT64_MAX)
		vclock = BASE_MAX(vclock, prev);
	if (ref == UINT64_MAX)
		ref = vclock;
	ref = ref > st->conf.slice_ns ? ref - st->conf.slice_ns : 0;
	for (i = 0; i < n; i++) {
		struct xs_pqueue *q = qs[i];
		struct fair_q *pd = q->pdata;

		if (q->device != dev || !pd)
			continue;
		if (q->ready && (!pd->seen_ready || pd->bounced))
			pd->vtime = BASE_MAX(pd->vtime, ref);
		pd->seen_ready = q->ready;
		pd->bounced = false;
	}
	return vclock;
}

/* Decides the queues of @dev; returns the end of the holder's slice or 0. */
static uint64_t fair_device(const struct fair_state *st,
			    struct xs_pqueue *const *qs, size_t n,
			    uint32_t dev, uint64_t now)
{
	struct xs_pqueue *hold = NULL, *best = NULL;
	uint64_t vclock, used, left, wait, minv = UINT64_MAX;
	unsigned m = 0;
	size_t i;

	vclock = fair_account(st, qs, n, dev);
	for (i = 0; i < n; i++) {
		struct xs_pqueue *q = qs[i];
		struct fair_q *pd = q->pdata;

		if (q->device != dev || !pd || !q->ready)
			continue;
		m++;
		minv = BASE_MIN(minv, pd->vtime);
		if (pd->cur)
			hold = q;
		if (!best || fair_before(q, best))
			best = q;
	}
	if (hold && m >= 2 &&
	    fair_used(hold, hold->pdata) < st->conf.slice_ns)
		best = hold;
	if (best && best != hold) {
		struct fair_q *pb = best->pdata;

		if (hold)
			((struct fair_q *)hold->pdata)->cur = false;
		pb->cur = true;
		pb->turn_service = best->service_ns;
		pb->turn_ns = now;
	} else if (best && fair_used(best, best->pdata) >= st->conf.slice_ns) {
		/* Still the smallest after its slice: a fresh slice. */
		((struct fair_q *)best->pdata)->turn_service = best->service_ns;
	}
	if (m)
		vclock = BASE_MAX(vclock, minv);
	for (i = 0; i < n; i++) {
		struct xs_pqueue *q = qs[i];
		struct fair_q *pd = q->pdata;

		if (q->device != dev)
			continue;
		if (!pd) {
			q->run = true;
			continue;
		}
		q->run = !best || q == best;
		pd->vclock = vclock;
	}
	if (m < 2)
		return 0;
	wait = policy_drain_hold(qs, n, dev, ((struct fair_q *)best->pdata)->turn_ns,
			      st->conf.drain_ns, now);
	if (wait)
		return wait;
	used = fair_used(best, best->pdata);
	left = st->conf.slice_ns - used;
	return left > UINT64_MAX - now ? UINT64_MAX : now + left;
}

static uint64_t fair_schedule(void *state, struct xs_pqueue *const *qs,
			      size_t n, uint64_t now)
{
	uint64_t wake = 0;
	uint32_t dev = 0;

	policy_for_each_dev(dev, qs, n)
		wake = policy_wake_min(wake, fair_device(state, qs, n, dev, now));
	return wake;
}

const struct xs_policy_ops policy_fair = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "fair",
	.flags = XS_POLICY_PER_DEVICE,
	.init = fair_init,
	.fini = fair_fini,
	.queue_add = fair_queue_add,
	.queue_remove = fair_queue_remove,
	.queue_idle = fair_queue_idle,
	.schedule = fair_schedule,
};
