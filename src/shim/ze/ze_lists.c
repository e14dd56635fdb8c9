/*
 * Regular command lists, slices and executions (see ze_lists.h).
 *
 * A list's notes live in its slices: without slicing (or once a recording
 * cannot be sliced) everything is noted in slice 0, whose private list is
 * unused. Each slice keeps the events its appends signal and wait on, so
 * that an execution slice by slice records each signal at the command that
 * makes it, and gates each slice on what it waits for.
 */
#include "shim/ze/ze_lists.h"

#include <stdlib.h>
#include <string.h>

#define ZR_SLICE_MAX 1000000

struct zr_events {
	ze_event_handle_t *v;
	uint32_t n, cap;
};

struct zr_slice {
	ze_command_list_handle_t list;  /* the private list (slicing), or NULL */
	uint32_t appends;
	struct zr_events signals, waits;
};

struct zr_list {
	struct shim_map_node node;            /* key: the application's list */
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	ze_command_list_desc_t desc;    /* without extensions */
	pthread_mutex_t mu;             /* everything below */
	struct zr_slice *slices;        /* cap of them; [0, made) have a private list */
	uint32_t used, made, cap;       /* used: slices of this recording */
	bool whole;                     /* this recording is executed whole */
	bool closed;                    /* closed since the last append or reset */
	struct zt_deps execs;           /* the last execution on each queue */
};

static struct shim_map zr_lists = SHIM_MAP_INIT;
static pthread_once_t zr_env_once = PTHREAD_ONCE_INIT;
static uint32_t zr_size;

static void zr_read_env(void)
{
	const char *v = getenv("XSCHED_ZE_SLICE");
	char *end;
	unsigned long n;

	if (!v || !*v)
		return;
	n = strtoul(v, &end, 10);
	if (*end == '\0' && n <= ZR_SLICE_MAX)
		zr_size = (uint32_t)n;
}

/* XSCHED_ZE_SLICE: appends per slice, 0 when not slicing. */
static uint32_t zr_slice_size(void)
{
	pthread_once(&zr_env_once, zr_read_env);
	return zr_size;
}

static void zr_events_add(struct zr_events *e, ze_event_handle_t ev)
{
	if (!ev)
		return;
	for (uint32_t i = 0; i < e->n; i++)
		if (e->v[i] == ev)
			return;
	if (e->n == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 4;
		ze_event_handle_t *grown = realloc(e->v, cap * sizeof(*grown));

		if (!grown)
			return;
		e->v = grown;
		e->cap = cap;
	}
	e->v[e->n++] = ev;
}

/* Slot @i of @l's slices, grown as needed; NULL out of memory. mu held. */
static struct zr_slice *zr_slot(struct zr_list *l, uint32_t i)
{
	if (i >= l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 4;
		struct zr_slice *grown;

		while (cap <= i)
			cap *= 2;
		grown = realloc(l->slices, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + l->cap, 0, (cap - l->cap) * sizeof(*grown));
		l->slices = grown;
		l->cap = cap;
	}
	return &l->slices[i];
}

/* The slice notes go to. mu held. */
static struct zr_slice *zr_noting(struct zr_list *l)
{
	return zr_slot(l, l->used ? l->used - 1 : 0);
}

/* The slice being filled (a new one when the last is full). mu held. */
static struct zr_slice *zr_filling(struct zr_list *l)
{
	struct zr_slice *s;

	if (l->used && l->slices[l->used - 1].appends < zr_size)
		return &l->slices[l->used - 1];
	s = zr_slot(l, l->used);
	if (!s)
		return NULL;
	if (l->used == l->made) {
		if (ze_real.zeCommandListCreate(l->ctx, l->dev, &l->desc, &s->list) !=
		    ZE_RESULT_SUCCESS)
			return NULL;
		l->made++;
	}
	l->used++;
	return s;
}

static void zr_note(struct zr_slice *s, ze_event_handle_t signal, uint32_t nwait,
		    const ze_event_handle_t *waits)
{
	zr_events_add(&s->signals, signal);
	for (uint32_t i = 0; waits && i < nwait; i++)
		zr_events_add(&s->waits, waits[i]);
}

/* Frees @l (out of the table) and its private lists. */
static void zr_free(struct zr_list *l)
{
	for (uint32_t i = 0; i < l->cap; i++) {
		if (l->slices[i].list)
			ze_real.zeCommandListDestroy(l->slices[i].list);
		free(l->slices[i].signals.v);
		free(l->slices[i].waits.v);
	}
	free(l->slices);
	zt_deps_fini(&l->execs);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

void zr_created(ze_command_list_handle_t h, ze_context_handle_t ctx, ze_device_handle_t dev,
		const ze_command_list_desc_t *desc)
{
	struct zr_list *l = calloc(1, sizeof(*l));

	if (!l)
		return;
	l->ctx = ctx;
	l->dev = dev;
	l->desc = *desc;
	l->desc.pNext = NULL;
	l->whole = zr_slice_size() == 0;
	pthread_mutex_init(&l->mu, NULL);
	/* A record left by a list destroyed behind our back is replaced. */
	l = (struct zr_list *)shim_map_insert(&zr_lists, &l->node, h);
	if (l)
		zr_free(l);
}

struct zr_list *zr_of(ze_command_list_handle_t h)
{
	return (struct zr_list *)shim_map_find(&zr_lists, h);
}

void zr_appended(struct zr_list *l, struct zc_append *a)
{
	struct zr_slice *s;

	pthread_mutex_lock(&l->mu);
	l->closed = false;
	if (!l->whole) {
		s = zr_filling(l);
		if (s && zc_issue_on(a, s->list) == ZE_RESULT_SUCCESS)
			s->appends++;
		else
			l->whole = true;
	}
	s = zr_noting(l);
	if (s)
		zr_note(s, a->signal, a->nwait, a->waits);
	pthread_mutex_unlock(&l->mu);
}

void zr_appended_raw(struct zr_list *l, ze_event_handle_t signal, uint32_t nwait,
		     const ze_event_handle_t *waits)
{
	struct zr_slice *s;

	pthread_mutex_lock(&l->mu);
	l->whole = true;
	l->closed = false;
	s = zr_noting(l);
	if (s)
		zr_note(s, signal, nwait, waits);
	pthread_mutex_unlock(&l->mu);
}

void zr_closed(ze_command_list_handle_t h)
{
	struct zr_list *l = zr_of(h);

	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	for (uint32_t i = 0; !l->whole && i < l->used; i++)
		if (ze_real.zeCommandListClose(l->slices[i].list) != ZE_RESULT_SUCCESS)
			l->whole = true;
	l->closed = true;
	pthread_mutex_unlock(&l->mu);
}

/* Waits until no execution of @l may still use it. */
static void zr_quiesce(struct zr_list *l)
{
	struct zt_deps execs;

	pthread_mutex_lock(&l->mu);
	execs = l->execs;
	l->execs = (struct zt_deps){ 0 };
	pthread_mutex_unlock(&l->mu);
	for (uint32_t i = 0; i < execs.n; i++)
		zs_wait(execs.v[i].q, execs.v[i].seq, UINT64_MAX, false);
	zt_deps_fini(&execs);
}

void zr_reset(ze_command_list_handle_t h)
{
	struct zr_list *l = zr_of(h);
	bool failed = false;

	if (!l)
		return;
	zr_quiesce(l);
	pthread_mutex_lock(&l->mu);
	for (uint32_t i = 0; i < l->cap; i++) {
		struct zr_slice *s = &l->slices[i];

		if (i < l->used && s->list && ze_real.zeCommandListReset(s->list) != ZE_RESULT_SUCCESS)
			failed = true;
		s->appends = 0;
		s->signals.n = 0;
		s->waits.n = 0;
	}
	/* Slices that failed to reset are not used again: none is. */
	if (failed) {
		for (uint32_t i = 0; i < l->made; i++) {
			ze_real.zeCommandListDestroy(l->slices[i].list);
			l->slices[i].list = NULL;
		}
		l->made = 0;
	}
	l->used = 0;
	l->closed = false;
	l->whole = zr_slice_size() == 0;
	pthread_mutex_unlock(&l->mu);
}

void zr_destroyed(ze_command_list_handle_t h)
{
	struct zr_list *l = (struct zr_list *)shim_map_remove(&zr_lists, h);

	if (l) {
		zr_quiesce(l);
		zr_free(l);
	}
}

/* --- executions --------------------------------------------------------------- */

/* Records an execution of @l (slices [@from, @upto)) as command @seq of @q. mu held. */
static void zr_executed(struct zr_list *l, uint32_t from, uint32_t upto, struct zs_queue *q,
			uint64_t seq)
{
	for (uint32_t i = from; i < upto && i < l->cap; i++)
		for (uint32_t j = 0; j < l->slices[i].signals.n; j++)
			zt_note(ZT_EVENT, l->slices[i].signals.v[j], q, seq);
	zt_deps_note(&l->execs, q, seq);
}

/* The whole call as one command. */
static ze_result_t zr_execute_whole(struct zs_queue *q, uint32_t n,
				    ze_command_list_handle_t *lists, struct zr_list **recs,
				    ze_fence_handle_t fence)
{
	struct zt_deps deps = { 0 };
	struct xal_ze_cmd *c;
	uint64_t seq = 0;
	ze_result_t rc;

	for (uint32_t i = 0; i < n; i++) {
		if (!recs[i])
			continue;
		pthread_mutex_lock(&recs[i]->mu);
		for (uint32_t j = 0; j < recs[i]->cap; j++)
			zt_deps_add(&deps, q, recs[i]->slices[j].waits.n, recs[i]->slices[j].waits.v);
		pthread_mutex_unlock(&recs[i]->mu);
	}
	c = zc_exec(n, lists, fence, &deps);
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	rc = zs_submit(q, c, &seq);
	if (!seq || rc != ZE_RESULT_SUCCESS)
		return rc;
	zt_note(ZT_FENCE, fence, q, seq);
	for (uint32_t i = 0; i < n; i++) {
		if (!recs[i])
			continue;
		pthread_mutex_lock(&recs[i]->mu);
		zr_executed(recs[i], 0, recs[i]->cap, q, seq);
		pthread_mutex_unlock(&recs[i]->mu);
	}
	return rc;
}

/* One command per slice, the fence with the last. */
static ze_result_t zr_execute_sliced(struct zs_queue *q, uint32_t n, struct zr_list **recs,
				     ze_fence_handle_t fence)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;
	uint64_t seq = 0;

	for (uint32_t i = 0; i < n && rc == ZE_RESULT_SUCCESS; i++) {
		struct zr_list *l = recs[i];

		pthread_mutex_lock(&l->mu);
		for (uint32_t j = 0; j < l->used && rc == ZE_RESULT_SUCCESS; j++) {
			bool last = i == n - 1 && j == l->used - 1;
			struct zt_deps deps = { 0 };
			struct xal_ze_cmd *c;

			zt_deps_add(&deps, q, l->slices[j].waits.n, l->slices[j].waits.v);
			c = zc_exec(1, &l->slices[j].list, last ? fence : NULL, &deps);
			if (!c) {
				rc = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
				break;
			}
			rc = zs_submit(q, c, &seq);
			if (seq)
				zr_executed(l, j, j + 1, q, seq);
		}
		pthread_mutex_unlock(&l->mu);
	}
	if (seq && rc == ZE_RESULT_SUCCESS)
		zt_note(ZT_FENCE, fence, q, seq);
	return rc;
}

/* Whether every list of the call was sliced (and holds some slice). */
static bool zr_all_sliced(uint32_t n, struct zr_list **recs)
{
	bool sliced = zr_slice_size() != 0;

	for (uint32_t i = 0; i < n && sliced; i++) {
		if (!recs[i])
			return false;
		pthread_mutex_lock(&recs[i]->mu);
		sliced = !recs[i]->whole && recs[i]->used;
		pthread_mutex_unlock(&recs[i]->mu);
	}
	return sliced;
}

bool zr_executable(uint32_t n, ze_command_list_handle_t *lists)
{
	for (uint32_t i = 0; i < n; i++) {
		struct zr_list *l = zr_of(lists[i]);
		bool closed;

		if (!l)
			return false;
		pthread_mutex_lock(&l->mu);
		closed = l->closed;
		pthread_mutex_unlock(&l->mu);
		if (!closed)
			return false;
	}
	return true;
}

ze_result_t zr_execute(struct zs_queue *q, uint32_t n, ze_command_list_handle_t *lists,
		       ze_fence_handle_t fence)
{
	struct zr_list *stack[8], **recs = n <= 8 ? stack : calloc(n, sizeof(*recs));
	ze_result_t rc;

	if (!recs)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t i = 0; i < n; i++)
		recs[i] = zr_of(lists[i]);
	if (zr_all_sliced(n, recs))
		rc = zr_execute_sliced(q, n, recs, fence);
	else
		rc = zr_execute_whole(q, n, lists, recs, fence);
	if (recs != stack)
		free(recs);
	return rc;
}
