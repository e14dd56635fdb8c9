/*
 * The `ze` XAL backend (see xal_ze.h).
 *
 * Sync objects of ours are pooled per hwq and reset when taken: a command
 * queue's fences (created on that queue, as Level Zero requires), an
 * immediate list's events (host-visible pools of XZ_POOL_EVENTS on the
 * list's context and device). A command returns its sync object when it is
 * destroyed, which the XQueue does after completion, so an object is never
 * reset while the device may still signal it.
 */
#include "xal/xal_ze.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define XZ_POOL_FENCES 64
#define XZ_POOL_EVENTS 64

enum xz_kind { XZ_QUEUE, XZ_LIST };

struct xz_event_pool {
	struct xz_event_pool *next;
	ze_event_pool_handle_t pool;
	uint32_t used;                  /* events created from it so far */
};

struct xal_ze_hwq {
	struct xal_hwq base;
	const struct xal_ze_fns *ze;
	enum xz_kind kind;
	ze_command_queue_handle_t queue;
	ze_command_list_handle_t list;
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	_Atomic ze_result_t error;      /* first error not reported yet */
	pthread_mutex_t append;         /* list: appends of the backend and the shim */
	pthread_mutex_t lock;           /* the pools below */
	ze_fence_handle_t fences[XZ_POOL_FENCES];
	size_t nfences;
	struct xz_event_pool *pools;    /* list: newest first */
	ze_event_handle_t *events;      /* list: spare events */
	size_t nevents, cap;
	ze_event_handle_t *all_events;  /* list: every event, for destroy */
	size_t nall, all_cap;
};

/*
 * The guard of an application fence. The lock is global: it is taken once
 * per sync point on such a fence and once per fence reset or destroy.
 */
struct xal_ze_fence {
	const struct xal_ze_fns *ze;
	ze_fence_handle_t h;
	_Atomic int refs;
	uint32_t gen;                   /* bumped by each retire (xz_fence_lock) */
	uint32_t busy;                  /* backend calls using h (xz_fence_lock) */
};

static pthread_mutex_t xz_fence_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t xz_fence_idle = PTHREAD_COND_INITIALIZER;

static struct xal_ze_hwq *to_hwq(struct xal_hwq *h)
{
	return (struct xal_ze_hwq *)h;
}

static struct xal_ze_cmd *to_cmd(struct xal_cmd *c)
{
	return (struct xal_ze_cmd *)c;
}

/* Records the first error of the queue and returns -EIO. */
static int xz_fail(struct xal_ze_hwq *h, ze_result_t rc)
{
	ze_result_t none = ZE_RESULT_SUCCESS;

	atomic_compare_exchange_strong(&h->error, &none, rc);
	return -EIO;
}

static int xz_result(struct xal_ze_hwq *h, ze_result_t rc)
{
	if (rc == ZE_RESULT_SUCCESS)
		return 0;
	if (rc == ZE_RESULT_NOT_READY)
		return -EBUSY;
	return xz_fail(h, rc);
}

/* --- pools ------------------------------------------------------------------ */

static ze_fence_handle_t xz_fence_get(struct xal_ze_hwq *h)
{
	ze_fence_desc_t desc = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_fence_handle_t f = NULL;

	pthread_mutex_lock(&h->lock);
	if (h->nfences)
		f = h->fences[--h->nfences];
	pthread_mutex_unlock(&h->lock);
	if (f && h->ze->zeFenceReset(f) != ZE_RESULT_SUCCESS) {
		h->ze->zeFenceDestroy(f);
		f = NULL;
	}
	if (!f && h->ze->zeFenceCreate(h->queue, &desc, &f) != ZE_RESULT_SUCCESS)
		f = NULL;
	return f;
}

static void xz_fence_put(struct xal_ze_hwq *h, ze_fence_handle_t f)
{
	pthread_mutex_lock(&h->lock);
	if (h->nfences < XZ_POOL_FENCES) {
		h->fences[h->nfences++] = f;
		f = NULL;
	}
	pthread_mutex_unlock(&h->lock);
	if (f)
		h->ze->zeFenceDestroy(f);
}

static bool xz_grow(ze_event_handle_t **v, size_t n, size_t *cap)
{
	ze_event_handle_t *grown;
	size_t c;

	if (n < *cap)
		return true;
	c = *cap ? 2 * *cap : XZ_POOL_EVENTS;
	grown = realloc(*v, c * sizeof(*grown));
	if (!grown)
		return false;
	*v = grown;
	*cap = c;
	return true;
}

/* A new event from the pools (a new pool when the newest is used up). Lock held. */
static ze_event_handle_t xz_event_new(struct xal_ze_hwq *h)
{
	ze_event_pool_desc_t pdesc = {
		.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
		.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
		.count = XZ_POOL_EVENTS,
	};
	ze_event_desc_t edesc = {
		.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
		.signal = ZE_EVENT_SCOPE_FLAG_HOST,
		.wait = ZE_EVENT_SCOPE_FLAG_HOST,
	};
	struct xz_event_pool *p = h->pools;
	ze_event_handle_t ev = NULL;

	if (!xz_grow(&h->all_events, h->nall, &h->all_cap) ||
	    !xz_grow(&h->events, h->nall, &h->cap))
		return NULL;
	if (!p || p->used == XZ_POOL_EVENTS) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		if (h->ze->zeEventPoolCreate(h->ctx, &pdesc, 1, &h->dev, &p->pool) !=
		    ZE_RESULT_SUCCESS) {
			free(p);
			return NULL;
		}
		p->next = h->pools;
		h->pools = p;
	}
	edesc.index = p->used;
	if (h->ze->zeEventCreate(p->pool, &edesc, &ev) != ZE_RESULT_SUCCESS)
		return NULL;
	p->used++;
	h->all_events[h->nall++] = ev;
	return ev;
}

static ze_event_handle_t xz_event_get(struct xal_ze_hwq *h)
{
	ze_event_handle_t ev = NULL;
	bool fresh = false;

	pthread_mutex_lock(&h->lock);
	if (h->nevents) {
		ev = h->events[--h->nevents];
	} else {
		ev = xz_event_new(h);
		fresh = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (ev && !fresh && h->ze->zeEventHostReset(ev) != ZE_RESULT_SUCCESS) {
		/* Kept for destroy, never reused. */
		ev = NULL;
	}
	return ev;
}

/* Spare events fit: the array grows with every event created. */
static void xz_event_put(struct xal_ze_hwq *h, ze_event_handle_t ev)
{
	pthread_mutex_lock(&h->lock);
	h->events[h->nevents++] = ev;
	pthread_mutex_unlock(&h->lock);
}

/* --- application fences ----------------------------------------------------- */

struct xal_ze_fence *xal_ze_fence_create(const struct xal_ze_fns *ze, ze_fence_handle_t h)
{
	struct xal_ze_fence *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->ze = ze;
	f->h = h;
	atomic_store(&f->refs, 1);
	return f;
}

struct xal_ze_fence *xal_ze_fence_ref(struct xal_ze_fence *f)
{
	atomic_fetch_add(&f->refs, 1);
	return f;
}

void xal_ze_fence_unref(struct xal_ze_fence *f)
{
	if (f && atomic_fetch_sub(&f->refs, 1) == 1)
		free(f);
}

void xal_ze_fence_retire(struct xal_ze_fence *f)
{
	pthread_mutex_lock(&xz_fence_lock);
	f->gen++;
	while (f->busy)
		pthread_cond_wait(&xz_fence_idle, &xz_fence_lock);
	pthread_mutex_unlock(&xz_fence_lock);
}

/*
 * Waits on (@wait) or queries the application's fence of @c. Once the
 * fence was retired, @c is known complete: the application retires a
 * fence only after its executions completed, and may reset it then.
 */
static int xz_borrowed(struct xal_ze_hwq *h, struct xal_ze_cmd *c, bool wait)
{
	struct xal_ze_fence *f = c->app_fence;
	ze_result_t rc;

	pthread_mutex_lock(&xz_fence_lock);
	if (f->gen != c->app_gen) {
		pthread_mutex_unlock(&xz_fence_lock);
		return 0;
	}
	f->busy++;
	pthread_mutex_unlock(&xz_fence_lock);
	rc = wait ? h->ze->zeFenceHostSynchronize(f->h, UINT64_MAX) :
		    h->ze->zeFenceQueryStatus(f->h);
	pthread_mutex_lock(&xz_fence_lock);
	if (--f->busy == 0)
		pthread_cond_broadcast(&xz_fence_idle);
	pthread_mutex_unlock(&xz_fence_lock);
	return xz_result(h, rc);
}

/* --- ops ---------------------------------------------------------------------- */

static int xz_launch_queue(struct xal_ze_hwq *h, struct xal_ze_cmd *c, unsigned flags)
{
	struct xal_ze_target t = { .queue = h->queue };
	ze_result_t rc;

	if (c->app_fence) {
		t.fence = c->app_fence->h;
		if (flags & XAL_LAUNCH_SYNC_POINT) {
			pthread_mutex_lock(&xz_fence_lock);
			c->app_gen = c->app_fence->gen;
			pthread_mutex_unlock(&xz_fence_lock);
			c->borrowed = true;
		}
	} else if (flags & XAL_LAUNCH_SYNC_POINT) {
		/* Without a fence the command is synced through the queue. */
		c->fence = xz_fence_get(h);
		t.fence = c->fence;
	}
	rc = c->ops->issue(c, &t);
	if (rc != ZE_RESULT_SUCCESS) {
		c->borrowed = false;
		return xz_fail(h, rc);
	}
	return 0;
}

static int xz_launch_list(struct xal_ze_hwq *h, struct xal_ze_cmd *c, unsigned flags)
{
	struct xal_ze_target t = { .list = h->list };
	ze_result_t rc;

	pthread_mutex_lock(&h->append);
	rc = c->ops->issue(c, &t);
	if (rc == ZE_RESULT_SUCCESS && (flags & XAL_LAUNCH_SYNC_POINT)) {
		c->event = xz_event_get(h);
		if (c->event &&
		    h->ze->zeCommandListAppendBarrier(h->list, c->event, 0, NULL) != ZE_RESULT_SUCCESS) {
			xz_event_put(h, c->event);
			c->event = NULL;
		}
	}
	pthread_mutex_unlock(&h->append);
	return rc == ZE_RESULT_SUCCESS ? 0 : xz_fail(h, rc);
}

static int xz_launch(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	struct xal_ze_hwq *h = to_hwq(hwq);
	struct xal_ze_cmd *c = to_cmd(cmd);

	c->hwq = h;
	if (h->kind == XZ_QUEUE)
		return xz_launch_queue(h, c, flags);
	return xz_launch_list(h, c, flags);
}

static int xz_sync_all(struct xal_hwq *hwq, unsigned flags)
{
	struct xal_ze_hwq *h = to_hwq(hwq);
	ze_event_handle_t ev;
	ze_result_t rc;

	(void)flags;
	if (h->kind == XZ_QUEUE)
		return xz_result(h, h->ze->zeCommandQueueSynchronize(h->queue, UINT64_MAX));
	ev = xz_event_get(h);
	if (!ev)
		return xz_fail(h, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
	pthread_mutex_lock(&h->append);
	rc = h->ze->zeCommandListAppendBarrier(h->list, ev, 0, NULL);
	pthread_mutex_unlock(&h->append);
	if (rc == ZE_RESULT_SUCCESS)
		rc = h->ze->zeEventHostSynchronize(ev, UINT64_MAX);
	/* A barrier that failed to append is never signalled: reusable. */
	xz_event_put(h, ev);
	return xz_result(h, rc);
}

static int xz_sync(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	struct xal_ze_hwq *h = to_hwq(hwq);
	struct xal_ze_cmd *c = to_cmd(cmd);

	if (c->fence)
		return xz_result(h, h->ze->zeFenceHostSynchronize(c->fence, UINT64_MAX));
	if (c->event)
		return xz_result(h, h->ze->zeEventHostSynchronize(c->event, UINT64_MAX));
	if (c->borrowed)
		return xz_borrowed(h, c, true);
	return xz_sync_all(hwq, flags);
}

static int xz_query(struct xal_hwq *hwq, struct xal_cmd *cmd)
{
	struct xal_ze_hwq *h = to_hwq(hwq);
	struct xal_ze_cmd *c = to_cmd(cmd);

	if (c->fence)
		return xz_result(h, h->ze->zeFenceQueryStatus(c->fence));
	if (c->event)
		return xz_result(h, h->ze->zeEventQueryStatus(c->event));
	if (c->borrowed)
		return xz_borrowed(h, c, false);
	return -EBUSY;
}

static void xz_hwq_destroy(struct xal_hwq *hwq)
{
	struct xal_ze_hwq *h = to_hwq(hwq);

	while (h->nfences)
		h->ze->zeFenceDestroy(h->fences[--h->nfences]);
	while (h->nall)
		h->ze->zeEventDestroy(h->all_events[--h->nall]);
	while (h->pools) {
		struct xz_event_pool *p = h->pools;

		h->pools = p->next;
		h->ze->zeEventPoolDestroy(p->pool);
		free(p);
	}
	free(h->events);
	free(h->all_events);
	pthread_mutex_destroy(&h->append);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

static const struct xal_ops xz_ops = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "ze",
	.launch = xz_launch,
	.sync = xz_sync,
	.sync_all = xz_sync_all,
	.query = xz_query,
	.hwq_destroy = xz_hwq_destroy,
};

static struct xal_ze_hwq *xz_hwq_new(const struct xal_ze_fns *ze, enum xz_kind kind,
				     const char *device)
{
	struct xal_ze_hwq *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->base.ops = &xz_ops;
	h->base.caps = 0;
	snprintf(h->base.device, sizeof(h->base.device), "%s", device);
	h->ze = ze;
	h->kind = kind;
	pthread_mutex_init(&h->append, NULL);
	pthread_mutex_init(&h->lock, NULL);
	return h;
}

int xal_ze_hwq_create_queue(const struct xal_ze_fns *ze, ze_command_queue_handle_t queue,
			    const char *device, struct xal_hwq **out)
{
	struct xal_ze_hwq *h = xz_hwq_new(ze, XZ_QUEUE, device);

	if (!h)
		return -ENOMEM;
	h->queue = queue;
	*out = &h->base;
	return 0;
}

int xal_ze_hwq_create_list(const struct xal_ze_fns *ze, ze_command_list_handle_t list,
			   ze_context_handle_t ctx, ze_device_handle_t dev, const char *device,
			   struct xal_hwq **out)
{
	struct xal_ze_hwq *h = xz_hwq_new(ze, XZ_LIST, device);

	if (!h)
		return -ENOMEM;
	h->list = list;
	h->ctx = ctx;
	h->dev = dev;
	*out = &h->base;
	return 0;
}

ze_result_t xal_ze_hwq_error(struct xal_hwq *hwq)
{
	return atomic_exchange(&to_hwq(hwq)->error, ZE_RESULT_SUCCESS);
}

void xal_ze_hwq_forget(struct xal_hwq *hwq, ze_result_t rc)
{
	atomic_compare_exchange_strong(&to_hwq(hwq)->error, &rc, ZE_RESULT_SUCCESS);
}

void xal_ze_hwq_lock(struct xal_hwq *hwq)
{
	if (to_hwq(hwq)->kind == XZ_LIST)
		pthread_mutex_lock(&to_hwq(hwq)->append);
}

void xal_ze_hwq_unlock(struct xal_hwq *hwq)
{
	if (to_hwq(hwq)->kind == XZ_LIST)
		pthread_mutex_unlock(&to_hwq(hwq)->append);
}

static void xz_cmd_destroy(struct xal_cmd *cmd)
{
	struct xal_ze_cmd *c = to_cmd(cmd);

	if (c->fence)
		xz_fence_put(c->hwq, c->fence);
	if (c->event)
		xz_event_put(c->hwq, c->event);
	if (c->ops->fini)
		c->ops->fini(c);
	xal_ze_fence_unref(c->app_fence);
	free(c);
}

static void *xz_cmd_blocked_on(struct xal_cmd *cmd)
{
	struct xal_ze_cmd *c = to_cmd(cmd);

	return c->ops->blocked_on ? c->ops->blocked_on(c) : NULL;
}

static const struct xal_cmd_ops xz_cmd_ops = {
	.destroy = xz_cmd_destroy,
	.blocked_on = xz_cmd_blocked_on,
};

void xal_ze_cmd_init(struct xal_ze_cmd *c, const struct xal_ze_cmd_ops *ops, uint32_t kind,
		     uint64_t est_key)
{
	*c = (struct xal_ze_cmd){
		.base = { .ops = &xz_cmd_ops, .est_key = est_key, .kind = kind },
		.ops = ops,
	};
}
