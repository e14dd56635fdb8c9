/*
 * Hardware queues of the simulated drivers: a pool of simulated-device
 * queues, launching and waiting on them, the event timestamps kept per
 * queue, and wait sets (what a synchronising call waits for).
 *
 * Design: queues are recycled, never destroyed. A WAIT command names a
 * queue by index and sequence number, and an event remembers the queue and
 * sequence number of its last record; destroying a queue whose index a
 * pending WAIT or an event still names would let a new queue in that slot
 * (with counters restarted) satisfy or block it wrongly. A recycled queue
 * keeps counting, so every (queue, seq) pair stays meaningful for the life
 * of the process. The pool only grows to the largest number of queues
 * (streams, command queues, gates) alive at once.
 *
 * Event timestamps live in a ring per queue, each slot tagged with the
 * sequence number of the record that owns it; the tag is written under
 * sf_stamp_lock before the EVENT command is launched and checked under it
 * after the command finished, so a reader never sees another record's time.
 * The ring holds twice the device ring's depth: a slot is reused only by a
 * record at least that many commands later, when the old command has
 * certainly finished (sim_hwq_launch keeps at most SIM_RING in flight).
 */
#include "sim/common/sf.h"
#include "sim/sim_abi.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

_Static_assert(SF_STAMPS >= 2 * SIM_RING, "stamp slots outlive their command");

static pthread_mutex_t sf_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sf_hwq *sf_pool;
static pthread_mutex_t sf_stamp_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Takes a queue of @dev from the pool, or creates one on @dev. Returns 0,
 * -ENOMEM (out of memory or of device queues).
 */
int sf_hwq_get(struct sim_dev *dev, struct sf_hwq **out)
{
	struct sf_hwq *q, **pp;
	int rc;

	pthread_mutex_lock(&sf_pool_lock);
	for (pp = &sf_pool; *pp && (*pp)->dev != dev; pp = &(*pp)->next)
		;
	q = *pp;
	if (q)
		*pp = q->next;
	pthread_mutex_unlock(&sf_pool_lock);
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return -ENOMEM;
		rc = sim_hwq_create(dev, &q->hq);
		if (rc < 0) {
			free(q);
			return rc == -ENOSPC ? -ENOMEM : rc;
		}
		q->dev = dev;
		q->index = sim_hwq_index(q->hq);
	}
	q->next = NULL;
	*out = q;
	return 0;
}

/* Returns @q to the pool; its launched work must have finished. */
void sf_hwq_put(struct sf_hwq *q)
{
	pthread_mutex_lock(&sf_pool_lock);
	q->next = sf_pool;
	sf_pool = q;
	pthread_mutex_unlock(&sf_pool_lock);
}

/* Launches @cmd on @q (may block while the device ring is full). */
int sf_hwq_launch(struct sf_hwq *q, const struct sim_cmd *cmd, uint64_t *seq)
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
bool sf_hwq_done(struct sf_hwq *q, uint64_t seq)
{
	return seq == 0 || sim_hwq_query(q->hq, seq) != -EBUSY;
}

/*
 * Waits until command @seq of @q finished. Device-level command errors are
 * not used: the drivers record faults in their own objects.
 */
void sf_hwq_wait(struct sf_hwq *q, uint64_t seq)
{
	if (seq)
		sim_hwq_wait(q->hq, seq, 0);
}

/*
 * Claims the next timestamp slot of @q for the record that will be
 * command @seq; returns where its EVENT command writes the time.
 */
uint64_t *sf_hwq_stamp(struct sf_hwq *q, uint64_t seq, uint32_t *slot)
{
	uint32_t i = q->stamp_next++ % SF_STAMPS;

	pthread_mutex_lock(&sf_stamp_lock);
	q->stamps[i].seq = seq;
	pthread_mutex_unlock(&sf_stamp_lock);
	*slot = i;
	return &q->stamps[i].ns;
}

/*
 * Reads the time of record @seq in @slot, which must have finished.
 * -ENOENT if the slot was taken by a later record (SF_STAMPS records).
 */
int sf_hwq_stamp_read(struct sf_hwq *q, uint32_t slot, uint64_t seq, uint64_t *ns)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&sf_stamp_lock);
	if (q->stamps[slot].seq == seq) {
		*ns = q->stamps[slot].ns;
		rc = 0;
	}
	pthread_mutex_unlock(&sf_stamp_lock);
	return rc;
}

/* Adds (@q, @seq) to @w unless there is nothing to wait for. 0 or -ENOMEM. */
int sf_waitset_add(struct sf_waitset *w, struct sf_hwq *q, uint64_t seq)
{
	if (!seq)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 8;
		struct sf_wait *v = realloc(w->v, cap * sizeof(*v));

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
void sf_waitset_wait(struct sf_waitset *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		sf_hwq_wait(w->v[i].q, w->v[i].seq);
}

/* Whether every command in @w finished, without blocking. */
bool sf_waitset_done(const struct sf_waitset *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!sf_hwq_done(w->v[i].q, w->v[i].seq))
			return false;
	return true;
}

/* Frees @w's storage; @w is empty and reusable after. */
void sf_waitset_fini(struct sf_waitset *w)
{
	free(w->v);
	w->v = NULL;
	w->n = w->cap = 0;
}
