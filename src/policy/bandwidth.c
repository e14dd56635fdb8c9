/*
 * Bandwidth partition: on each device, exclusive time slices in proportion
 * to shares, deficit round robin with carry-over credit.
 *
 * The unit that owns a share is an entity: a queue, or with conf
 * per_process a process (client) on one device, whose weight is then the
 * largest share among its ready queues there and whose ready queues run
 * together. Shares are the queue's hint, or conf default_share (100), at
 * most POLICY_SHARE_MAX. Per device, among the entities with a ready queue:
 *
 * - When an entity's turn starts it gets credit += slice * w / W (slice:
 *   conf slice_ns, default 20 ms; w its weight; W the sum over the ready
 *   entities of the device at that moment) and runs alone on the device
 *   until the device time it consumed (service_ns deltas) used its credit
 *   up; then the ready entity whose last turn is the oldest takes the
 *   next turn (round robin; never-served ones first, by queue or client
 *   id).
 * - Leftover credit carries over: debt (an overrun, including work that
 *   completes after the entity was suspended) is paid on later turns, an
 *   entity whose credit stays <= 0 after its quantum is skipped for that
 *   round; positive leftover is kept only while the entity stays ready.
 *   An entity that goes idle (all its queues idle at a call, or one went
 *   idle and back in between) loses its turn and any positive credit, so
 *   idle time never accrues.
 * - A single ready entity runs without slicing: its time is not charged
 *   and no credit accrues.
 * - Idle queues are suspended while any entity of their device is ready;
 *   on a device with nothing ready every queue runs.
 * - Switch-over: a new turn's queues wait until the suspended queues of
 *   the device have at most one command left in flight, or [policy]
 *   drain_ms (default POLICY_DRAIN_MAX_NS) from the turn's start
 *   (policy_drain_hold); the drain is charged to those who launched it, and
 *   the waiting costs the new holder no credit.
 *
 * schedule() returns the expected end of the current turn, now plus the
 * remaining credit (device time runs at wall-clock speed while the turn
 * holder is alone on the device); if called earlier it simply keeps the
 * turn. Consumption is attributed when schedule() runs, so a turn ends at
 * the first call after its credit is spent and the overshoot becomes debt.
 *
 * Entities are per-instance heap objects in a list owned by the state,
 * shared by their queues' pdata and refcounted by them; the per-device
 * state (who holds the turn, the round-robin position) lives in the
 * entities themselves. Queues without pdata (queue_add failed) are left
 * running and ignored.
 */
#include "policy/policy_builtin.h"

#include <errno.h>
#include <stdlib.h>

struct bw_ent {
	struct bw_ent *next;    /* in bw_state.ents */
	uint64_t key;           /* client (per process) or queue id */
	uint32_t device;
	uint32_t refs;          /* queues whose pdata points here */
	int64_t credit;         /* device ns left in its turn; < 0: debt */
	uint64_t turn_ns;       /* when its current turn began */
	uint64_t seq;           /* bw_state.seq when last considered; 0: never */
	int64_t weight;         /* this call: largest share of its ready queues */
	bool ready;             /* this call: has a ready queue */
	bool cont;              /* this call: a queue stayed ready since the last */
	bool turn;              /* holds the turn of its device */
};

struct bw_q {
	struct bw_ent *ent;
	uint64_t last_service;  /* service_ns at the previous call */
	bool seen_ready;        /* ready at the previous call */
	bool bounced;           /* went idle since the previous call */
	bool charge;            /* consumption since the previous call is charged */
};

struct bw_state {
	struct policy_conf conf;
	struct bw_ent *ents;
	uint64_t seq;
};

static int bw_init(void **state, const struct xs_policy_conf *conf)
{
	struct bw_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	policy_conf_resolve(&st->conf, conf, POLICY_BANDWIDTH_SLICE_NS);
	*state = st;
	return 0;
}

static void bw_fini(void *state)
{
	struct bw_state *st = state;
	struct bw_ent *e, *next;

	if (!st)
		return;
	/* Every queue was removed first; free anything left defensively. */
	for (e = st->ents; e; e = next) {
		next = e->next;
		free(e);
	}
	free(st);
}

static int bw_queue_add(void *state, struct xs_pqueue *q)
{
	struct bw_state *st = state;
	uint64_t key = st->conf.per_process ? q->client : q->id;
	struct bw_ent *e = NULL;
	struct bw_q *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	if (st->conf.per_process)
		for (e = st->ents; e; e = e->next)
			if (e->key == key && e->device == q->device)
				break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			free(pd);
			return -ENOMEM;
		}
		e->key = key;
		e->device = q->device;
		e->next = st->ents;
		st->ents = e;
	}
	e->refs++;
	pd->ent = e;
	pd->last_service = q->service_ns;
	q->pdata = pd;
	return 0;
}

static void bw_queue_remove(void *state, struct xs_pqueue *q)
{
	struct bw_state *st = state;
	struct bw_q *pd = q->pdata;
	struct bw_ent **pp;

	if (!pd)
		return;
	if (--pd->ent->refs == 0) {
		for (pp = &st->ents; *pp; pp = &(*pp)->next) {
			if (*pp == pd->ent) {
				*pp = pd->ent->next;
				break;
			}
		}
		free(pd->ent);
	}
	free(pd);
	q->pdata = NULL;
}

static void bw_queue_idle(void *state, struct xs_pqueue *q, uint64_t now)
{
	struct bw_q *pd = q->pdata;

	(void)state;
	(void)now;
	if (pd)
		pd->bounced = true;
}

/* The quantum of an entity of weight @w when the ready weights sum to @W. */
static int64_t bw_quantum(const struct bw_state *st, int64_t w, int64_t W)
{
	int64_t q = (int64_t)st->conf.slice_ns * w / W;

	return q > 0 ? q : 1;
}

/*
 * Charges consumption and recomputes each entity's readiness on @dev;
 * drops the turn and positive credit of entities not continuously ready.
 * Returns the number of ready entities and their weight sum in *@W.
 */
static unsigned bw_account(struct bw_state *st, struct xs_pqueue *const *qs,
			   size_t n, uint32_t dev, int64_t *W)
{
	unsigned m = 0;
	struct bw_ent *e;
	size_t i;

	for (e = st->ents; e; e = e->next) {
		if (e->device != dev)
			continue;
		e->ready = e->cont = false;
		e->weight = 0;
	}
	for (i = 0; i < n; i++) {
		struct xs_pqueue *q = qs[i];
		struct bw_q *pd = q->pdata;
		uint64_t delta;

		if (q->device != dev || !pd)
			continue;
		e = pd->ent;
		delta = q->service_ns > pd->last_service ?
			q->service_ns - pd->last_service : 0;
		pd->last_service = q->service_ns;
		if (pd->charge) {
			if (delta > (uint64_t)INT64_MAX / 4)
				delta = (uint64_t)INT64_MAX / 4;
			e->credit -= (int64_t)delta;
			if (e->credit < INT64_MIN / 4)
				e->credit = INT64_MIN / 4;
		}
		if (q->ready) {
			int64_t w = policy_share(q, st->conf.default_share);

			e->ready = true;
			if (w > e->weight)
				e->weight = w;
			if (pd->seen_ready && !pd->bounced)
				e->cont = true;
		}
		pd->seen_ready = q->ready;
		pd->bounced = false;
	}
	*W = 0;
	for (e = st->ents; e; e = e->next) {
		if (e->device != dev)
			continue;
		if (!e->cont) {
			e->turn = false;
			if (e->credit > 0)
				e->credit = 0;
		}
		if (e->ready) {
			m++;
			*W += e->weight;
		}
	}
	return m;
}

/* True when ready @a's turn comes before ready @b's (older turn, then key). */
static bool bw_before(const struct bw_ent *a, const struct bw_ent *b)
{
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->key < b->key;
}

/*
 * Starts the next turn on @dev, with @W the ready weight sum (>= 2 ready
 * entities): the least recently considered ready entity whose credit is
 * positive after its quantum, skipping the others. Whole rounds in which
 * every entity would be skipped are added at once, so deep debt costs no
 * more than one round of iterations.
 */
static struct bw_ent *bw_next_turn(struct bw_state *st, uint32_t dev, int64_t W,
				   uint64_t now)
{
	uint64_t k, kmin = UINT64_MAX;
	struct bw_ent *e, *best;
	int64_t q;

	for (e = st->ents; e; e = e->next) {
		if (e->device != dev || !e->ready)
			continue;
		q = bw_quantum(st, e->weight, W);
		k = e->credit > 0 ? 1 : (uint64_t)(-e->credit / q) + 1;
		if (k < kmin)
			kmin = k;
	}
	if (kmin > 1) {
		for (e = st->ents; e; e = e->next)
			if (e->device == dev && e->ready)
				e->credit += (int64_t)(kmin - 1) *
					     bw_quantum(st, e->weight, W);
	}
	for (;;) {
		best = NULL;
		for (e = st->ents; e; e = e->next)
			if (e->device == dev && e->ready &&
			    (!best || bw_before(e, best)))
				best = e;
		best->seq = ++st->seq;
		best->credit += bw_quantum(st, best->weight, W);
		if (best->credit > 0) {
			best->turn = true;
			best->turn_ns = now;
			return best;
		}
	}
}

/* Decides the queues of @dev; returns the end of its current turn or 0. */
static uint64_t bw_device(struct bw_state *st, struct xs_pqueue *const *qs,
			  size_t n, uint32_t dev, uint64_t now)
{
	struct bw_ent *e, *hold = NULL;
	uint64_t wait;
	unsigned m;
	int64_t W;
	size_t i;

	m = bw_account(st, qs, n, dev, &W);
	for (e = st->ents; e; e = e->next) {
		if (e->device != dev)
			continue;
		if (m == 1 && e->ready)
			hold = e;
		else if (m >= 2 && e->turn)
			hold = e;
	}
	if (m == 1)
		hold->turn = false;     /* unsliced: keeps its credit, not charged */
	if (m >= 2 && hold && hold->credit <= 0) {
		hold->turn = false;
		hold = NULL;
	}
	if (m >= 2 && !hold)
		hold = bw_next_turn(st, dev, W, now);
	for (i = 0; i < n; i++) {
		struct xs_pqueue *q = qs[i];
		struct bw_q *pd = q->pdata;

		if (q->device != dev)
			continue;
		if (!pd) {
			q->run = true;
			continue;
		}
		q->run = m == 0 || (pd->ent == hold && q->ready);
		pd->charge = m >= 2;
	}
	if (m < 2)
		return 0;
	wait = policy_drain_hold(qs, n, dev, hold->turn_ns, st->conf.drain_ns, now);
	if (wait)
		return wait;
	return (uint64_t)hold->credit > UINT64_MAX - now ?
		UINT64_MAX : now + (uint64_t)hold->credit;
}

static uint64_t bw_schedule(void *state, struct xs_pqueue *const *qs,
			    size_t n, uint64_t now)
{
	uint64_t wake = 0;
	uint32_t dev = 0;

	policy_for_each_dev(dev, qs, n)
		wake = policy_wake_min(wake, bw_device(state, qs, n, dev, now));
	return wake;
}

const struct xs_policy_ops policy_bandwidth = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "bandwidth",
	.flags = XS_POLICY_PER_DEVICE,
	.init = bw_init,
	.fini = bw_fini,
	.queue_add = bw_queue_add,
	.queue_remove = bw_queue_remove,
	.queue_idle = bw_queue_idle,
	.schedule = bw_schedule,
};
