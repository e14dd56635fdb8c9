/*
 * Event and fence records, and gates (see ze_events.h). Each table has one
 * mutex guarding its records' fields; records hold references on their
 * queues, so a record that outlives its queue reads it as gone.
 */
#include "shim/ze/ze_events.h"

#include <stdlib.h>

/* A record of either table (fences use every field, events the first three). */
struct zt_rec {
	struct shim_map_node node;            /* key: the event or fence */
	struct zs_queue *q;             /* a reference, or NULL while nothing is known */
	uint64_t seq;
	ze_command_queue_handle_t queue; /* fences: the queue it was created on */
	struct xal_ze_fence *guard;     /* fences: the record's reference */
};

/* Each table's mutex guards its records' fields. */
static struct {
	struct shim_map map;
	pthread_mutex_t mu;
} zt_tab[2] = {
	[ZT_EVENT] = { SHIM_MAP_INIT, PTHREAD_MUTEX_INITIALIZER },
	[ZT_FENCE] = { SHIM_MAP_INIT, PTHREAD_MUTEX_INITIALIZER },
};

static void zt_rec_free(struct zt_rec *r)
{
	if (!r)
		return;
	zs_queue_unref(r->q);
	xal_ze_fence_unref(r->guard);
	free(r);
}

/* --- gates ----------------------------------------------------------------- */

/* As zt_deps_note(), taking over the caller's reference on @q. */
static void zt_deps_push(struct zt_deps *d, struct zs_queue *q, uint64_t seq)
{
	for (uint32_t i = 0; i < d->n; i++) {
		if (d->v[i].q == q) {
			if (d->v[i].seq < seq)
				d->v[i].seq = seq;
			zs_queue_unref(q);
			return;
		}
	}
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? 2 * d->cap : 4;
		struct zt_dep *grown = realloc(d->v, cap * sizeof(*grown));

		if (!grown) {
			zs_queue_unref(q);
			return;
		}
		d->v = grown;
		d->cap = cap;
	}
	d->v[d->n].q = q;
	d->v[d->n].seq = seq;
	d->n++;
}

void zt_deps_note(struct zt_deps *d, struct zs_queue *q, uint64_t seq)
{
	zt_deps_push(d, zs_queue_ref(q), seq);
}

void zt_deps_add(struct zt_deps *d, struct zs_queue *own, uint32_t n,
		 const ze_event_handle_t *evs)
{
	for (uint32_t i = 0; evs && i < n; i++) {
		struct zs_queue *q;
		uint64_t seq;

		if (!evs[i] || !zt_last(ZT_EVENT, evs[i], &q, &seq))
			continue;
		/* The same queue orders them already. */
		if (q == own || !zs_unlaunched(q, seq))
			zs_queue_unref(q);
		else
			zt_deps_push(d, q, seq);
	}
}

void *zt_deps_blocked(const struct zt_deps *d)
{
	for (uint32_t i = 0; i < d->n; i++) {
		struct xq *xq = zs_unlaunched(d->v[i].q, d->v[i].seq);

		if (xq)
			return xq;
	}
	return NULL;
}

void zt_deps_fini(struct zt_deps *d)
{
	for (uint32_t i = 0; i < d->n; i++)
		zs_queue_unref(d->v[i].q);
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

/* --- records ----------------------------------------------------------------- */

void zt_note(enum zt_table t, const void *h, struct zs_queue *q, uint64_t seq)
{
	struct zs_queue *old = NULL;
	struct zt_rec *r;

	if (!h)
		return;
	pthread_mutex_lock(&zt_tab[t].mu);
	r = (struct zt_rec *)shim_map_find_locked(&zt_tab[t].map, h);
	if (!r && t == ZT_EVENT && (r = calloc(1, sizeof(*r))))
		shim_map_insert(&zt_tab[t].map, &r->node, h);
	if (r) {
		old = r->q;
		r->q = zs_queue_ref(q);
		r->seq = seq;
	}
	pthread_mutex_unlock(&zt_tab[t].mu);
	zs_queue_unref(old);
}

bool zt_last(enum zt_table t, const void *h, struct zs_queue **q, uint64_t *seq)
{
	struct zt_rec *r;
	bool found = false;

	pthread_mutex_lock(&zt_tab[t].mu);
	r = (struct zt_rec *)shim_map_find_locked(&zt_tab[t].map, h);
	if (r && r->q) {
		*q = zs_queue_ref(r->q);
		*seq = r->seq;
		found = true;
	}
	pthread_mutex_unlock(&zt_tab[t].mu);
	return found;
}

void zt_event_forget(ze_event_handle_t h)
{
	struct zt_rec *r;

	pthread_mutex_lock(&zt_tab[ZT_EVENT].mu);
	r = (struct zt_rec *)shim_map_remove(&zt_tab[ZT_EVENT].map, h);
	pthread_mutex_unlock(&zt_tab[ZT_EVENT].mu);
	zt_rec_free(r);
}

/* --- fences -------------------------------------------------------------------- */

void zt_fence_created(ze_fence_handle_t f, ze_command_queue_handle_t queue)
{
	struct zt_rec *r = calloc(1, sizeof(*r)), *old;

	if (!r || !(r->guard = xal_ze_fence_create(&ze_real, f))) {
		free(r);
		return;
	}
	r->queue = queue;
	pthread_mutex_lock(&zt_tab[ZT_FENCE].mu);
	/* A record of a handle destroyed behind our back is replaced. */
	old = (struct zt_rec *)shim_map_insert(&zt_tab[ZT_FENCE].map, &r->node, f);
	pthread_mutex_unlock(&zt_tab[ZT_FENCE].mu);
	zt_rec_free(old);
}

bool zt_fence_on(ze_fence_handle_t f, ze_command_queue_handle_t queue)
{
	struct zt_rec *r;
	bool on;

	pthread_mutex_lock(&zt_tab[ZT_FENCE].mu);
	r = (struct zt_rec *)shim_map_find_locked(&zt_tab[ZT_FENCE].map, f);
	on = r && r->queue == queue;
	pthread_mutex_unlock(&zt_tab[ZT_FENCE].mu);
	return on;
}

struct xal_ze_fence *zt_fence_guard(ze_fence_handle_t f)
{
	struct xal_ze_fence *g = NULL;
	struct zt_rec *r;

	pthread_mutex_lock(&zt_tab[ZT_FENCE].mu);
	r = (struct zt_rec *)shim_map_find_locked(&zt_tab[ZT_FENCE].map, f);
	if (r)
		g = xal_ze_fence_ref(r->guard);
	pthread_mutex_unlock(&zt_tab[ZT_FENCE].mu);
	return g;
}

void zt_fence_release(ze_fence_handle_t f, bool destroy)
{
	struct xal_ze_fence *g = NULL;
	struct zs_queue *q = NULL;
	struct zt_rec *r;
	uint64_t seq = 0;

	pthread_mutex_lock(&zt_tab[ZT_FENCE].mu);
	r = (struct zt_rec *)(destroy ? shim_map_remove(&zt_tab[ZT_FENCE].map, f) :
					shim_map_find_locked(&zt_tab[ZT_FENCE].map, f));
	if (r) {
		q = r->q;
		seq = r->seq;
		r->q = NULL;
		g = xal_ze_fence_ref(r->guard);
	}
	pthread_mutex_unlock(&zt_tab[ZT_FENCE].mu);
	if (!r)
		return;
	/* The application may only reset or destroy a fence the device no
	 * longer uses: once its execution completed. */
	if (q)
		zs_wait(q, seq, UINT64_MAX, false);
	xal_ze_fence_retire(g);
	xal_ze_fence_unref(g);
	zs_queue_unref(q);
	if (destroy)
		zt_rec_free(r);
}
