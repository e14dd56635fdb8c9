/*
 * Command queues and immediate lists and their XQueues (see ze_queues.h).
 *
 * A queue record outlives the application's handle while anything refers
 * to it (event and fence records, gates of other queues' commands): when
 * the application destroys the handle, the record is marked gone under
 * its own mutex, after every command was launched and before the XQueue is
 * destroyed, and whoever holds a reference reads "gone" instead of using
 * the XQueue. Threads that enter the XQueue through a reference count
 * themselves in `users`, which the destroyer waits out.
 */
#include "shim/ze/ze_queues.h"
#include "agent/agent.h"
#include "base/clock.h"
#include "base/compiler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Finite timeouts poll the XQueue at most this far apart. */
#define ZS_POLL_MAX_NS (1000 * 1000)
#define ZS_POLL_MIN_NS (20 * 1000)

static struct shim_map zs_queues = SHIM_MAP_INIT;
static _Atomic int zs_nqueues;
static _Thread_local const struct xal_ze_cmd *zs_direct;
static _Thread_local ze_result_t zs_direct_rc;

int zs_queue_count(void)
{
	return atomic_load(&zs_nqueues);
}

struct zs_queue *zs_queue_of(const void *h)
{
	return h ? (struct zs_queue *)shim_map_find(&zs_queues, h) : NULL;
}

struct zs_queue *zs_queue_ref(struct zs_queue *q)
{
	atomic_fetch_add(&q->refs, 1);
	return q;
}

void zs_queue_unref(struct zs_queue *q)
{
	if (!q || atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->idle);
	free(q);
}

/* The scheduler's name of @dev: its UUID's first bytes and its name. */
/*
 * The scheduler's names of @dev: the API-local name ("ze:" and the first
 * UUID bytes and device name, as the shim always named it) and the
 * node-wide identity (base/devid.h), the device UUID of its properties;
 * unverified when the driver reports none (all zero).
 */
void zs_device_name(ze_device_handle_t dev, char *out, size_t len, struct devid *id)
{
	ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };

	memset(id, 0, sizeof(*id));
	if (ze_real.zeDeviceGetProperties(dev, &p) != ZE_RESULT_SUCCESS) {
		snprintf(out, len, "ze:%p", (void *)dev);
		return;
	}
	snprintf(out, len, "ze:%02x%02x%02x%02x:%.19s", p.uuid.id[0], p.uuid.id[1],
		 p.uuid.id[2], p.uuid.id[3], p.name);
	_Static_assert(sizeof(p.uuid.id) == DEVID_UUID_BYTES, "ze UUID size");
	devid_set_uuid(id, p.uuid.id);
}

static bool zs_reap_one(struct shim_map_node *n, void *arg)
{
	struct zs_queue *q = (struct zs_queue *)n;

	(void)arg;
	if (q->xq)
		xq_reap(q->xq);
	return true;
}

/*
 * At exit applications rarely destroy their queues: join the workers that
 * already went idle, so the process leaves no finished thread unjoined.
 * Registered when the first queue is made, to run before the handlers of
 * libraries loaded earlier (a sanitizer's leak check among them).
 */
static void zs_reap_at_exit(void)
{
	shim_map_each(&zs_queues, zs_reap_one, NULL);
}

static void zs_reap_register(void)
{
	atexit(zs_reap_at_exit);
}

void zs_queue_created(const void *h, bool is_list, ze_context_handle_t ctx,
		      ze_device_handle_t dev, const ze_command_queue_desc_t *desc)
{
	static pthread_once_t reap_once = PTHREAD_ONCE_INIT;
	struct xq_config cfg = { .level = 1 };
	struct zs_queue *q = calloc(1, sizeof(*q)), *old;
	struct devid id;
	char device[32];
	int rc;

	if (!q)
		return;
	zs_device_name(dev, device, sizeof(device), &id);
	rc = is_list ? xal_ze_hwq_create_list(&ze_real, (ze_command_list_handle_t)h, ctx, dev,
					      device, &q->hwq) :
		       xal_ze_hwq_create_queue(&ze_real, (ze_command_queue_handle_t)h, device,
					       &q->hwq);
	if (rc == 0)
		q->hwq->id = id;
	/* Unscheduled, still correct: the handle's calls go to the driver. */
	if (rc == 0 && (rc = xq_create(q->hwq, &cfg, &q->xq)) < 0)
		q->hwq->ops->hwq_destroy(q->hwq);
	if (rc < 0) {
		free(q);
		return;
	}
	atomic_store(&q->refs, 1);
	q->is_list = is_list;
	q->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
	q->ctx = ctx;
	q->dev = dev;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->idle, NULL);
	agent_register(q->xq);
	if (desc->priority == ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH ||
	    desc->priority == ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW) {
		int64_t hint[XQ_HINTS];

		xq_hints(q->xq, hint);
		xq_set_hint(q->xq, XS_HINT_PRIORITY, hint[XS_HINT_PRIORITY] +
			    (desc->priority == ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH ? 1 : -1));
	}
	atomic_fetch_add(&zs_nqueues, 1);
	pthread_once(&reap_once, zs_reap_register);
	/* A handle we never saw destroyed (destroyed through another path)
	 * is replaced: its queue is gone with it. */
	old = (struct zs_queue *)shim_map_insert(&zs_queues, &q->node, h);
	if (old) {
		pthread_mutex_lock(&old->mu);
		old->gone = true;
		pthread_mutex_unlock(&old->mu);
		zs_queue_unref(old);
	}
}

ze_result_t zs_queue_destroyed(const void *h)
{
	struct zs_queue *q = (struct zs_queue *)shim_map_remove(&zs_queues, h);
	ze_result_t rc;

	if (!q)
		return ZE_RESULT_SUCCESS;
	/* Everything reaches the driver before gates stop looking. */
	xq_flush(q->xq);
	pthread_mutex_lock(&q->mu);
	q->gone = true;
	while (q->users)
		pthread_cond_wait(&q->idle, &q->mu);
	pthread_mutex_unlock(&q->mu);
	agent_unregister(q->xq);
	xq_destroy(q->xq, XS_DESTROY_DRAIN);
	rc = xal_ze_hwq_error(q->hwq);
	q->hwq->ops->hwq_destroy(q->hwq);
	q->xq = NULL;
	q->hwq = NULL;
	zs_queue_unref(q);
	return rc;
}

/* Enters @q's XQueue through a reference; false if the queue is gone. */
static bool zs_enter(struct zs_queue *q)
{
	bool ok;

	pthread_mutex_lock(&q->mu);
	ok = !q->gone;
	if (ok)
		q->users++;
	pthread_mutex_unlock(&q->mu);
	return ok;
}

static void zs_leave(struct zs_queue *q)
{
	pthread_mutex_lock(&q->mu);
	if (--q->users == 0)
		pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->mu);
}

ze_result_t zs_submit(struct zs_queue *q, struct xal_ze_cmd *c, uint64_t *seq)
{
	uint64_t s = 0;
	int rc;

	if (seq)
		*seq = 0;
	zs_direct = c;
	zs_direct_rc = ZE_RESULT_SUCCESS;
	rc = xq_submit(q->xq, &c->base, &s);
	zs_direct = NULL;
	if (rc < 0)
		return rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY :
				       ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (seq)
		*seq = s;
	if (zs_direct_rc != ZE_RESULT_SUCCESS) {
		xal_ze_hwq_forget(q->hwq, zs_direct_rc);
		return zs_direct_rc;
	}
	return q->synchronous ? zs_wait(q, s, UINT64_MAX, true) : ZE_RESULT_SUCCESS;
}

bool zs_issue_is_direct(const struct xal_ze_cmd *c)
{
	return zs_direct == c;
}

void zs_issued(const struct xal_ze_cmd *c, ze_result_t rc)
{
	if (zs_direct == c)
		zs_direct_rc = rc;
}

uint64_t zs_deadline(uint64_t timeout_ns)
{
	uint64_t now = clock_now_ns();

	if (timeout_ns == UINT64_MAX || timeout_ns > UINT64_MAX - now)
		return UINT64_MAX;
	return now + timeout_ns;
}

uint64_t zs_remaining(uint64_t deadline)
{
	uint64_t now;

	if (deadline == UINT64_MAX)
		return UINT64_MAX;
	now = clock_now_ns();
	return deadline > now ? deadline - now : 0;
}

/*
 * True once command @seq (0: every command submitted) completed, false at
 * @deadline. The XQueue's own error is not used: every backend failure
 * records its ze_result_t in the hwq, reported by the caller.
 */
static bool zs_wait_entered(struct zs_queue *q, uint64_t seq, uint64_t deadline)
{
	uint64_t pause = ZS_POLL_MIN_NS;
	xs_queue_stats st;

	if (!seq) {
		xq_stats(q->xq, &st);
		seq = st.submitted;
		if (!seq)
			return true;
	}
	if (deadline == UINT64_MAX) {
		xq_wait(q->xq, seq);
		return true;
	}
	for (;;) {
		uint64_t now;

		if (xq_query(q->xq, seq) != -EBUSY)
			return true;
		now = clock_now_ns();
		if (now >= deadline)
			return false;
		clock_sleep_until(now + BASE_MIN(pause, deadline - now));
		pause = BASE_MIN(2 * pause, (uint64_t)ZS_POLL_MAX_NS);
	}
}

/*
 * Waits until command @seq of @q reached the driver, or @deadline passed
 * (false). Polls: a launch wakes no one, and the wait is as short as the
 * buffer in front of the command.
 */
static bool zs_launch_entered(struct zs_queue *q, uint64_t seq, uint64_t deadline)
{
	uint64_t pause = ZS_POLL_MIN_NS;

	for (;;) {
		uint64_t now;

		if (xq_launched(q->xq) >= seq)
			return true;
		now = clock_now_ns();
		if (now >= deadline)
			return false;
		clock_sleep_until(now + BASE_MIN(pause, deadline - now));
		pause = BASE_MIN(2 * pause, (uint64_t)ZS_POLL_MAX_NS);
	}
}

ze_result_t zs_wait_launched(struct zs_queue *q, uint64_t seq, uint64_t deadline)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;

	if (!zs_enter(q))
		return rc;
	if (!zs_launch_entered(q, seq, deadline))
		rc = ZE_RESULT_NOT_READY;
	else
		rc = xal_ze_hwq_error(q->hwq);
	zs_leave(q);
	return rc;
}

ze_result_t zs_wait(struct zs_queue *q, uint64_t seq, uint64_t deadline, bool report)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;

	if (!zs_enter(q))
		return rc;
	if (!zs_wait_entered(q, seq, deadline))
		rc = ZE_RESULT_NOT_READY;
	else if (report)
		rc = xal_ze_hwq_error(q->hwq);
	zs_leave(q);
	return rc;
}

void zs_flush(struct zs_queue *q)
{
	if (!zs_enter(q))
		return;
	xq_flush(q->xq);
	zs_leave(q);
}

struct xq *zs_unlaunched(struct zs_queue *q, uint64_t seq)
{
	struct xq *xq;

	/* Under the mutex, so the XQueue cannot be destroyed meanwhile (the
	 * destroyer marks the queue gone under it first). */
	pthread_mutex_lock(&q->mu);
	xq = q->gone || xq_launched(q->xq) >= seq ? NULL : q->xq;
	pthread_mutex_unlock(&q->mu);
	return xq;
}

struct zs_ctx_wait {
	ze_context_handle_t ctx;
	struct zs_queue **v;
	size_t n, cap;
};

static bool zs_collect(struct shim_map_node *n, void *arg)
{
	struct zs_queue *q = (struct zs_queue *)n;
	struct zs_ctx_wait *w = arg;

	if (w->ctx && q->ctx != w->ctx)
		return true;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct zs_queue **grown = realloc(w->v, cap * sizeof(*grown));

		if (!grown)
			return true;
		w->v = grown;
		w->cap = cap;
	}
	w->v[w->n++] = zs_queue_ref(q);
	return true;
}

void zs_wait_context(ze_context_handle_t ctx)
{
	struct zs_ctx_wait w = { .ctx = ctx };

	shim_map_each(&zs_queues, zs_collect, &w);
	for (size_t i = 0; i < w.n; i++) {
		/* Errors stay for the queue's own synchronisation. */
		if (zs_enter(w.v[i])) {
			xq_wait_all(w.v[i]->xq);
			zs_leave(w.v[i]);
		}
		zs_queue_unref(w.v[i]);
	}
	free(w.v);
}

void zs_lock(struct zs_queue *q)
{
	xal_ze_hwq_lock(q->hwq);
}

void zs_unlock(struct zs_queue *q)
{
	xal_ze_hwq_unlock(q->hwq);
}
