/*
 * Hardware queues of the simulated CUDA driver: a pool of simulated-device
 * queues, launching and waiting on them, the event timestamps kept per
 * queue, and wait sets (what a synchronising call waits for).
 *
 * Design: queues are recycled, never destroyed. A WAIT command names a
 * queue by index and sequence number, and an event remembers the queue and
 * sequence number of its last record; destroying a queue whose index a
 * pending WAIT or an event still names would let a new queue in that slot
 * (with counters restarted) satisfy or block it wrongly. A recycled queue
 * keeps counting, so every (queue, seq) pair stays meaningful for the life
 * of the process. The pool only grows to the largest number of streams
 * alive at once.
 *
 * Event timestamps live in a ring per queue, each slot tagged with the
 * sequence number of the record that owns it; the tag is written under
 * sc_stamp_lock before the EVENT command is launched and checked under it
 * after the command finished, so a reader never sees another record's time.
 * The ring holds twice the device ring's depth: a slot is reused only by a
 * record at least that many commands later, when the old command has
 * certainly finished (sim_hwq_launch keeps at most SIM_RING in flight).
 */
#include "sim/cuda/sc_internal.h"
#include "sim/sim_abi.h"

#include <errno.h>
#include <stdlib.h>

_Static_assert(SC_STAMPS >= 2 * SIM_RING, "stamp slots outlive their command");

static pthread_mutex_t sc_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_hwq *sc_pool;
static pthread_mutex_t sc_stamp_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Takes a queue from the pool, or creates one on the device. Returns 0,
 * -ENOMEM (out of memory or of device queues).
 */
int sc_hwq_get(struct sc_hwq **out)
{
	struct sc_hwq *q;
	int rc;

	pthread_mutex_lock(&sc_pool_lock);
	q = sc_pool;
	if (q)
		sc_pool = q->next;
	pthread_mutex_unlock(&sc_pool_lock);
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return -ENOMEM;
		rc = sim_hwq_create(sc_drv.dev, &q->hq);
		if (rc < 0) {
			free(q);
			return rc == -ENOSPC ? -ENOMEM : rc;
		}
		q->index = sim_hwq_index(q->hq);
	}
	q->next = NULL;
	*out = q;
	return 0;
}

/* Returns @q to the pool; its launched work must have finished. */
void sc_hwq_put(struct sc_hwq *q)
{
	pthread_mutex_lock(&sc_pool_lock);
	q->next = sc_pool;
	sc_pool = q;
	pthread_mutex_unlock(&sc_pool_lock);
}

/* Launches @cmd on @q (may block while the device ring is full). */
int sc_hwq_launch(struct sc_hwq *q, const struct sim_cmd *cmd, uint64_t *seq)
{
	uint64_t s;
	int rc = sim_hwq_launch(q->hq, cmd, &s);

	if (rc < 0)
		return rc;
	q->launched = s;
	if (seq)
		*seq = s;
	return 0;
}

/* Whether command @seq of @q finished (seq 0: nothing to wait for). */
bool sc_hwq_done(struct sc_hwq *q, uint64_t seq)
{
	return seq == 0 || sim_hwq_query(q->hq, seq) != -EBUSY;
}

/*
 * Waits until command @seq of @q finished. Device-level command errors are
 * not used: faults are recorded in their context (sc_ctx_fault()).
 */
void sc_hwq_wait(struct sc_hwq *q, uint64_t seq)
{
	if (seq)
		sim_hwq_wait(q->hq, seq, 0);
}

/*
 * Claims the next timestamp slot of @q for the record that will be
 * command @seq; returns where its EVENT command writes the time.
 */
uint64_t *sc_hwq_stamp(struct sc_hwq *q, uint64_t seq, uint32_t *slot)
{
	uint32_t i = q->stamp_next++ % SC_STAMPS;

	pthread_mutex_lock(&sc_stamp_lock);
	q->stamps[i].seq = seq;
	pthread_mutex_unlock(&sc_stamp_lock);
	*slot = i;
	return &q->stamps[i].ns;
}

/*
 * Reads the time of record @seq in @slot, which must have finished.
 * -ENOENT if the slot was taken by a later record (SC_STAMPS records).
 */
int sc_hwq_stamp_read(struct sc_hwq *q, uint32_t slot, uint64_t seq, uint64_t *ns)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&sc_stamp_lock);
	if (q->stamps[slot].seq == seq) {
		*ns = q->stamps[slot].ns;
		rc = 0;
	}
	pthread_mutex_unlock(&sc_stamp_lock);
	return rc;
}

/* Adds (@q, @seq) to @w unless there is nothing to wait for. 0 or -ENOMEM. */
int sc_waitset_add(struct sc_waitset *w, struct sc_hwq *q, uint64_t seq)
{
	if (!seq)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 8;
		struct sc_wait *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n].q = q;
	w->v[w->n].seq = seq;
	w->n++;
	return 0;
}

/* Blocks until every command in @w finished. */
void sc_waitset_wait(struct sc_waitset *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		sc_hwq_wait(w->v[i].q, w->v[i].seq);
}

/* Whether every command in @w finished, without blocking. */
bool sc_waitset_done(const struct sc_waitset *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!sc_hwq_done(w->v[i].q, w->v[i].seq))
			return false;
	return true;
}

/* Frees @w's storage; @w is empty and reusable after. */
void sc_waitset_fini(struct sc_waitset *w)
{
	free(w->v);
	w->v = NULL;
	w->n = w->cap = 0;
}
