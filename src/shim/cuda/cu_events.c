/*
 * The event table (see cu_events.h): a hash map under a mutex, touched
 * only by event records, waits and queries.
 */
#include "shim/cuda/cu_events.h"
#include "xqueue/xqueue.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define EV_BUCKETS 256

struct ev_entry {
	struct ev_entry *next;
	CUevent ev;
	struct cs_queue *q;     /* NULL: not recorded through a scheduled stream */
	uint64_t seq;
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ev_entry *ev_table[EV_BUCKETS];

static unsigned ev_hash(CUevent ev)
{
	uintptr_t x = (uintptr_t)ev;

	return (unsigned)((x >> 4) ^ (x >> 12)) % EV_BUCKETS;
}

static struct ev_entry **ev_find(CUevent ev)
{
	struct ev_entry **pp;

	for (pp = &ev_table[ev_hash(ev)]; *pp; pp = &(*pp)->next)
		if ((*pp)->ev == ev)
			return pp;
	return NULL;
}

void ev_created(CUevent ev)
{
	struct ev_entry *e = calloc(1, sizeof(*e));
	unsigned b = ev_hash(ev);

	if (!e)
		return;
	e->ev = ev;
	pthread_mutex_lock(&ev_lock);
	/* A handle the driver reuses starts afresh. */
	if (ev_find(ev)) {
		struct ev_entry **pp = ev_find(ev), *old = *pp;

		*pp = old->next;
		free(old);
	}
	e->next = ev_table[b];
	ev_table[b] = e;
	pthread_mutex_unlock(&ev_lock);
}

bool ev_alive(CUevent ev)
{
	bool alive;

	pthread_mutex_lock(&ev_lock);
	alive = ev_find(ev) != NULL;
	pthread_mutex_unlock(&ev_lock);
	return alive;
}

bool ev_known(CUevent ev)
{
	struct ev_entry *e;
	CUresult rc;

	if (ev_alive(ev))
		return true;
	rc = cu_real.cuEventQuery(ev);
	if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY)
		return false;
	e = calloc(1, sizeof(*e));
	if (!e)
		return false;
	e->ev = ev;
	pthread_mutex_lock(&ev_lock);
	if (ev_find(ev)) {
		free(e);        /* adopted meanwhile */
	} else {
		e->next = ev_table[ev_hash(ev)];
		ev_table[ev_hash(ev)] = e;
	}
	pthread_mutex_unlock(&ev_lock);
	return true;
}

void ev_recorded(CUevent ev, struct cs_queue *q, uint64_t seq)
{
	struct ev_entry **pp;

	pthread_mutex_lock(&ev_lock);
	pp = ev_find(ev);
	if (pp) {
		(*pp)->q = q;
		(*pp)->seq = seq;
	}
	pthread_mutex_unlock(&ev_lock);
}

bool ev_last(CUevent ev, struct cs_queue **q, uint64_t *seq)
{
	struct ev_entry **pp;
	bool found = false;

	pthread_mutex_lock(&ev_lock);
	pp = ev_find(ev);
	if (pp && (*pp)->q) {
		*q = (*pp)->q;
		*seq = (*pp)->seq;
		found = true;
	}
	pthread_mutex_unlock(&ev_lock);
	return found;
}

CUresult ev_recorded_by_driver(CUresult rc, CUevent ev)
{
	if (rc == CUDA_SUCCESS && ev && cu_load() == 0 && !cu_passthrough())
		ev_recorded(ev, NULL, 0);
	return rc;
}

void ev_launch_record(CUevent ev)
{
	struct cs_queue *q;
	uint64_t seq;

	if (ev && ev_last(ev, &q, &seq) && xq_launched(q->xq) < seq)
		xq_flush(q->xq);
}

void ev_forget(CUevent ev)
{
	struct ev_entry **pp, *e = NULL;

	pthread_mutex_lock(&ev_lock);
	pp = ev_find(ev);
	if (pp) {
		e = *pp;
		*pp = e->next;
	}
	pthread_mutex_unlock(&ev_lock);
	free(e);
}

void ev_queue_gone(struct cs_queue *q)
{
	unsigned b;

	pthread_mutex_lock(&ev_lock);
	for (b = 0; b < EV_BUCKETS; b++) {
		struct ev_entry **pp = &ev_table[b];

		for (; *pp; pp = &(*pp)->next)
			if ((*pp)->q == q)
				(*pp)->q = NULL;
	}
	pthread_mutex_unlock(&ev_lock);
}
