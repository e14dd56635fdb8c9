/*
 * Streams, contexts and their XQueues (see cu_queues.h), and the adoption
 * of streams the shim meets without having seen them created: a handle the
 * driver knows as a stream (cuStreamGetCtx) is recorded with the context,
 * flags and priority the driver reports, unless it is capturing (it joined
 * a capture through an event the shim passed on: left to the driver until
 * the capture is over).
 *
 * Streams are a handle map (shim/common/shim_map.h), contexts a list under
 * a reader-writer lock: lookups (every intercepted call) take the locks
 * shared, creations and destructions exclusive; the context lock comes
 * before the map's.
 * A stream's own XQueue is made on its first use, under a mutex of its
 * own, and published with release semantics. Per-thread default streams
 * live in a thread-local list, destroyed when the thread exits (after
 * their work completed).
 */
#include "shim/cuda/cu_queues.h"
#include "agent/agent.h"
#include "shim/cuda/cu_events.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cs_ctx {
	struct cs_ctx *next;
	CUcontext ctx;
	CUcontext primary;              /* a green context's primary; else ctx */
	CUgreenCtx green;               /* the green context whose ctx it is, or NULL */
	char device[32];                /* API-local name, "cuda:<ordinal>" */
	struct devid id;                /* node-wide identity (cs_device_identity) */
	struct cs_queue group;          /* legacy, blocking and per-thread streams */
	struct cs_stream legacy;
};

struct cs_tls_stream {
	struct cs_tls_stream *next;
	struct cs_stream s;
};

static pthread_rwlock_t cs_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t cs_qlock = PTHREAD_MUTEX_INITIALIZER;   /* own queues' creation */
static struct shim_map cs_streams = SHIM_MAP_INIT;
static struct cs_ctx *cs_ctxs;
static pthread_key_t cs_tls_key;
static pthread_once_t cs_tls_once = PTHREAD_ONCE_INIT;
static _Thread_local struct cs_tls_stream *cs_tls;

static _Atomic int cs_nqueues;

int cs_queue_count(void)
{
	return atomic_load(&cs_nqueues);
}

static void cs_reap_at_exit(void);
static pthread_once_t cs_reap_once = PTHREAD_ONCE_INIT;

static void cs_reap_register(void)
{
	atexit(cs_reap_at_exit);
}

/*
 * The identity of @dev that does not depend on this process's ordinals or
 * CUDA_VISIBLE_DEVICES (base/devid.h): its UUID (the MIG instance's, with
 * cuDeviceGetUuid_v2), else its PCI bus id; the bus id is kept besides
 * the UUID. Left unverified when the driver answers neither.
 */
void cs_device_identity(CUdevice dev, struct devid *id)
{
	char bus[32];
	CUuuid u;

	memset(id, 0, sizeof(*id));
	if (cu_real.cuDeviceGetPCIBusId &&
	    cu_real.cuDeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == CUDA_SUCCESS) {
		bus[sizeof(bus) - 1] = '\0';
		devid_set_pci_text(id, bus);
	}
	if ((cu_real.cuDeviceGetUuid_v2 && cu_real.cuDeviceGetUuid_v2(&u, dev) == CUDA_SUCCESS) ||
	    (cu_real.cuDeviceGetUuid && cu_real.cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS))
		devid_set_uuid(id, (const uint8_t *)u.bytes);
}

static int cs_queue_init(struct cs_queue *q, CUcontext ctx, const struct cs_ctx *c)
{
	struct xq_config cfg = { .level = 1 };
	int rc = xal_cuda_hwq_create(&cu_real, ctx, c->device, &q->hwq);

	if (rc < 0)
		return rc;
	q->hwq->id = c->id;
	rc = xq_create(q->hwq, &cfg, &q->xq);
	if (rc < 0) {
		q->hwq->ops->hwq_destroy(q->hwq);
		q->hwq = NULL;
		return rc;
	}
	agent_register(q->xq);
	atomic_fetch_add(&cs_nqueues, 1);
	pthread_once(&cs_reap_once, cs_reap_register);
	return 0;
}

static void cs_queue_fini(struct cs_queue *q)
{
	if (!q->xq)
		return;
	agent_unregister(q->xq);
	xq_destroy(q->xq, XS_DESTROY_DRAIN);
	q->hwq->ops->hwq_destroy(q->hwq);
	q->xq = NULL;
	q->hwq = NULL;
}

static void cs_unhold(struct cs_queue *q)
{
	atomic_fetch_sub_explicit(&q->holds, 1, memory_order_release);
}

/*
 * Until no collection holds @q (taken out of the stream map, so none can
 * take it any more). A holder waits at most for the work of the queues it
 * collected, which reaches the device without the application's help.
 */
static void cs_wait_unheld(struct cs_queue *q)
{
	for (unsigned i = 0; atomic_load_explicit(&q->holds, memory_order_acquire); i++) {
		if (i < 64)
			sched_yield();
		else
			usleep(100);
	}
}

static struct cs_ctx *cs_ctx_find(CUcontext ctx)
{
	struct cs_ctx *c;

	pthread_rwlock_rdlock(&cs_lock);
	for (c = cs_ctxs; c && c->ctx != ctx; c = c->next)
		;
	pthread_rwlock_unlock(&cs_lock);
	return c;
}

/*
 * Which green context @c->ctx belongs to, if any, and its primary (the
 * context must be current): a primary context's record and wait cover its
 * green contexts (cu_adopt.c).
 */
static void cs_ctx_green(struct cs_ctx *c)
{
	CUcontext primary = NULL;
	CUgreenCtx green = NULL;

	c->primary = c->ctx;
	if (cu_real.cuStreamGetCtx_v2 &&
	    cu_real.cuStreamGetCtx_v2(CU_STREAM_LEGACY, &primary, &green) == CUDA_SUCCESS &&
	    green && primary) {
		c->primary = primary;
		c->green = green;
	}
}

/*
 * The shim's state of driver context @ctx, created on first use; @current
 * says whether @ctx is the calling thread's current context (else it is
 * made current while its device is read).
 */
static struct cs_ctx *cs_ctx_get(CUcontext ctx, bool current)
{
	struct cs_ctx *c = cs_ctx_find(ctx);
	CUdevice dev = 0;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = ctx;
	if (!current && cu_real.cuCtxPushCurrent_v2(ctx) != CUDA_SUCCESS) {
		free(c);
		return NULL;
	}
	cu_real.cuCtxGetDevice(&dev);
	snprintf(c->device, sizeof(c->device), "cuda:%d", dev);
	cs_device_identity(dev, &c->id);
	cs_ctx_green(c);
	if (!current)
		cu_real.cuCtxPopCurrent_v2(NULL);
	if (cs_queue_init(&c->group, ctx, c) < 0) {
		free(c);
		return NULL;
	}
	c->legacy.handle = CU_STREAM_LEGACY;
	c->legacy.real = CU_STREAM_LEGACY;
	c->legacy.ctx = c;
	c->legacy.cuctx = ctx;
	c->legacy.q = &c->group;
	pthread_rwlock_wrlock(&cs_lock);
	{
		struct cs_ctx *other;

		for (other = cs_ctxs; other && other->ctx != ctx; other = other->next)
			;
		if (other) {
			/* Another thread won the race: use its state. */
			pthread_rwlock_unlock(&cs_lock);
			cs_queue_fini(&c->group);
			free(c);
			return other;
		}
	}
	c->next = cs_ctxs;
	cs_ctxs = c;
	pthread_rwlock_unlock(&cs_lock);
	return c;
}

/* The shim's state of the current context, created on first use. */
static struct cs_ctx *cs_ctx_current(void)
{
	CUcontext ctx = NULL;

	if (cu_real.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		return NULL;
	return cs_ctx_get(ctx, true);
}

/* Thread exit: per-thread streams are destroyed once their work is done. */
static void cs_tls_destroy(void *arg)
{
	struct cs_tls_stream *t = arg;

	while (t) {
		struct cs_tls_stream *next = t->next;

		xq_wait_all(t->s.q->xq);
		xal_cuda_hwq_forget(t->s.q->hwq, t->s.real);
		cu_real.cuStreamDestroy_v2(t->s.real);
		free(t);
		t = next;
	}
}

static void cs_tls_init(void)
{
	pthread_key_create(&cs_tls_key, cs_tls_destroy);
}

static struct cs_stream *cs_per_thread(struct cs_ctx *c)
{
	struct cs_tls_stream *t;

	for (t = cs_tls; t; t = t->next)
		if (t->s.ctx == c)
			return &t->s;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	/* A blocking stream: ordered against the legacy stream like the
	 * per-thread default stream it stands for. */
	if (cu_real.cuStreamCreate(&t->s.real, CU_STREAM_DEFAULT) != CUDA_SUCCESS) {
		free(t);
		return NULL;
	}
	t->s.handle = CU_STREAM_PER_THREAD;
	t->s.ctx = c;
	t->s.cuctx = c->ctx;
	t->s.q = &c->group;
	pthread_once(&cs_tls_once, cs_tls_init);
	t->next = cs_tls;
	cs_tls = t;
	pthread_setspecific(cs_tls_key, cs_tls);
	return &t->s;
}

static struct cs_stream *cs_stream_find(CUstream h)
{
	return (struct cs_stream *)shim_map_find(&cs_streams, h);
}

/*
 * Makes sure @s has its queue: an own one is made on the stream's first
 * use. False if it cannot be (the call then goes straight to the driver,
 * unscheduled but in order, since nothing of the stream was buffered).
 */
static bool cs_stream_ready(struct cs_stream *s)
{
	struct cs_queue *q;

	/* Pairs with the release store below. */
	if (atomic_load_explicit(&s->q, memory_order_acquire))
		return true;
	pthread_mutex_lock(&cs_qlock);
	q = atomic_load_explicit(&s->q, memory_order_relaxed);
	if (!q && (q = calloc(1, sizeof(*q))) != NULL) {
		if (cs_queue_init(q, s->cuctx, s->ctx) < 0) {
			free(q);
			q = NULL;
		} else if (s->prio) {
			int64_t hint[XQ_HINTS];

			xq_hints(q->xq, hint);
			xq_set_hint(q->xq, XS_HINT_PRIORITY, hint[XS_HINT_PRIORITY] - s->prio);
		}
		if (q)
			atomic_store_explicit(&s->q, q, memory_order_release);
	}
	pthread_mutex_unlock(&cs_qlock);
	return q != NULL;
}

struct cs_stream *cs_stream_of(CUstream h, bool ptsz)
{
	struct cs_stream *s = cs_stream_of_any(h, ptsz);

	return s && !atomic_load(&s->capturing) ? s : NULL;
}

struct cs_stream *cs_stream_of_any(CUstream h, bool ptsz)
{
	struct cs_stream *s;
	struct cs_ctx *c;

	if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		c = cs_ctx_current();
		if (!c)
			return NULL;
		if (h == CU_STREAM_PER_THREAD || (h == NULL && ptsz))
			s = cs_per_thread(c);
		else
			s = &c->legacy;
	} else {
		s = cs_stream_find(h);
		if (!s)
			s = cs_stream_adopt(h);
	}
	return s && cs_stream_ready(s) ? s : NULL;
}

CUstream cs_real_handle(CUstream h, bool ptsz)
{
	struct cs_ctx *c;

	/* Stand-ins exist only where calls were scheduled. */
	if (!cs_tls || (h != CU_STREAM_PER_THREAD && !(h == NULL && ptsz)))
		return h;
	c = cs_ctx_current();
	for (struct cs_tls_stream *t = cs_tls; c && t; t = t->next)
		if (t->s.ctx == c)
			return t->s.real;
	return h;
}

/* A new record of @h in @c (not yet in the table); NULL without memory. */
static struct cs_stream *cs_stream_new(struct cs_ctx *c, CUstream h, unsigned int flags, int prio)
{
	struct cs_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->handle = h;
	s->real = h;
	s->ctx = c;
	s->cuctx = c->ctx;
	s->prio = prio;
	if (flags & CU_STREAM_NON_BLOCKING)
		s->own = true;          /* its queue comes with its first use */
	else
		s->q = &c->group;
	return s;
}

CUstream cs_direct(struct cs_stream *s, CUstream h, bool ptsz)
{
	if (!s)
		return cs_real_handle(h, ptsz);
	cs_flush(s);
	return s->real;
}

static CUresult cs_stream_retire(struct cs_stream *s);

void cs_stream_created(CUstream h, unsigned int flags, int prio)
{
	struct cs_ctx *c = cs_ctx_current();
	struct cs_stream *s;

	if (!c || !h)
		return;
	s = cs_stream_new(c, h, flags, prio);
	if (!s)
		return;         /* unscheduled, but still correct: calls go straight through */
	/* A record left for a handle the driver reused (a destroy we did not
	 * see) is retired as cs_stream_destroyed() would have retired it. */
	cs_stream_retire((struct cs_stream *)shim_map_insert(&cs_streams, &s->node, h));
}

struct cs_stream *cs_stream_add(CUstream h, CUcontext ctx, unsigned int flags, int prio)
{
	CUcontext cur = NULL;
	struct cs_stream *s, *other;
	struct cs_ctx *c;

	if (!h || !ctx)
		return NULL;
	if (cu_real.cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
		cur = NULL;
	c = cs_ctx_get(ctx, cur == ctx);
	s = c ? cs_stream_new(c, h, flags, prio) : NULL;
	if (!s)
		return NULL;
	other = (struct cs_stream *)shim_map_add(&cs_streams, &s->node, h);
	if (other) {
		/* Another thread adopted it first. */
		free(s);
		return other;
	}
	return s;
}

CUresult cs_stream_destroyed(CUstream h)
{
	return cs_stream_retire((struct cs_stream *)shim_map_remove(&cs_streams, h));
}

/*
 * Frees the record @s (NULL: none) taken out of the stream map, after its
 * buffered work reached the driver; the error of the group's queue, if any.
 */
static CUresult cs_stream_retire(struct cs_stream *s)
{
	CUresult rc = CUDA_SUCCESS;

	if (!s)
		return CUDA_SUCCESS;
	/* The stream's buffered work must reach the driver before it goes. */
	if (s->own) {
		struct cs_queue *q = atomic_load(&s->q);

		if (q) {
			cs_wait_unheld(q);
			cs_queue_fini(q);
			ev_queue_gone(q);
			free(q);
		}
	} else {
		if (xq_wait_all(s->q->xq) < 0)
			rc = xal_cuda_hwq_error(s->q->hwq);
		xal_cuda_hwq_forget(s->q->hwq, s->real);
	}
	free(s);
	return rc;
}

CUresult cs_submit(struct cs_stream *s, struct xal_cuda_cmd *c, uint64_t *seq)
{
	int rc = xq_submit(s->q->xq, &c->base, seq);

	return rc == 0 ? CUDA_SUCCESS : rc == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY :
							CUDA_ERROR_INVALID_VALUE;
}

CUresult cs_error(struct cs_stream *s)
{
	return xal_cuda_hwq_error(s->q->hwq);
}

CUresult cs_sync(struct cs_stream *s)
{
	xq_wait_all(s->q->xq);
	return cs_error(s);
}

CUresult cs_query(struct cs_stream *s)
{
	xs_queue_stats st;
	CUresult err = cs_error(s);

	if (err != CUDA_SUCCESS)
		return err;
	xq_stats(s->q->xq, &st);
	if (st.pending || st.in_flight) {
		/* Let completions be noticed: a query must not stay stale. */
		if (st.submitted && xq_query(s->q->xq, st.submitted) == 0)
			return cs_error(s);
		return CUDA_ERROR_NOT_READY;
	}
	return CUDA_SUCCESS;
}

CUresult cs_flush(struct cs_stream *s)
{
	xq_flush(s->q->xq);
	return cs_error(s);
}

/*
 * Appends @q to the array *@qs of *@n (grown as needed) and holds it
 * (cs_queue.holds) until cs_unhold(); false without memory.
 */
static bool cs_qs_add(struct cs_queue ***qs, size_t *n, size_t *cap, struct cs_queue *q)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct cs_queue **grown = realloc(*qs, c * sizeof(**qs));

		if (!grown)
			return false;
		*qs = grown;
		*cap = c;
	}
	atomic_fetch_add_explicit(&q->holds, 1, memory_order_relaxed);
	(*qs)[(*n)++] = q;
	return true;
}

/*
 * The queues of the streams of every context @match accepts (or of @only
 * if @match is NULL) and those contexts' own, held, into a malloc()ed
 * array: another thread may destroy one of those streams meanwhile (its
 * own, natively no race with this one), and its queue then goes once
 * nobody holds it (cs_stream_retire()).
 */
struct cs_collect {
	const struct cs_ctx *only;
	cs_ctx_match_fn *match;
	const void *arg;
	struct cs_queue **qs;
	size_t n, cap;
};

/* shim_map_each() over the streams: adds @node's own queue if it matches. */
static bool cs_collect_stream(struct shim_map_node *node, void *arg)
{
	struct cs_stream *s = (struct cs_stream *)node;
	struct cs_collect *w = arg;
	struct cs_queue *q = atomic_load(&s->q);

	if (!s->own || !q)
		return true;
	if (w->match ? w->match(s->ctx->ctx, s->ctx->primary, s->ctx->green, w->arg) :
		       s->ctx == w->only)
		return cs_qs_add(&w->qs, &w->n, &w->cap, q);
	return true;
}

static struct cs_queue **cs_ctx_queues(const struct cs_ctx *only, cs_ctx_match_fn *match,
				       const void *arg, size_t *count)
{
	struct cs_collect w = { .only = only, .match = match, .arg = arg };
	bool ok = true;

	pthread_rwlock_rdlock(&cs_lock);
	for (struct cs_ctx *c = cs_ctxs; match && ok && c; c = c->next)
		if (match(c->ctx, c->primary, c->green, arg))
			ok = cs_qs_add(&w.qs, &w.n, &w.cap, &c->group);
	if (ok)
		shim_map_each(&cs_streams, cs_collect_stream, &w);
	pthread_rwlock_unlock(&cs_lock);
	*count = w.n;
	return w.qs;
}

CUresult cs_ctx_sync(void)
{
	struct cs_ctx *c = cs_ctx_current();
	CUresult rc = CUDA_SUCCESS;
	struct cs_queue **qs;
	size_t n, i;

	if (!c)
		return CUDA_SUCCESS;
	qs = cs_ctx_queues(c, NULL, NULL, &n);
	if (xq_wait_all(c->group.xq) < 0)
		rc = xal_cuda_hwq_error(c->group.hwq);
	for (i = 0; i < n; i++) {
		xq_wait_all(qs[i]->xq);
		cs_unhold(qs[i]);
	}
	free(qs);
	return rc;
}

void cs_ctx_flush(cs_ctx_match_fn *match, const void *arg)
{
	size_t n, i;
	struct cs_queue **qs = cs_ctx_queues(NULL, match, arg, &n);

	for (i = 0; i < n; i++) {
		xq_flush(qs[i]->xq);
		cs_unhold(qs[i]);
	}
	free(qs);
}

/*
 * At exit applications rarely destroy their streams: join the workers that
 * already went idle so that the process leaves no finished thread unjoined.
 * Workers still busy are left running, as exit() allows. Registered with
 * atexit() when the first queue is made, to run before the handlers of
 * libraries loaded earlier (a sanitizer's leak check among them).
 */
static bool cs_reap_stream(struct shim_map_node *node, void *arg)
{
	struct cs_stream *s = (struct cs_stream *)node;

	(void)arg;
	if (s->own && atomic_load(&s->q))
		xq_reap(s->q->xq);
	return true;
}

static void cs_reap_at_exit(void)
{
	pthread_rwlock_rdlock(&cs_lock);
	for (struct cs_ctx *c = cs_ctxs; c; c = c->next)
		if (c->group.xq)
			xq_reap(c->group.xq);
	pthread_rwlock_unlock(&cs_lock);
	shim_map_each(&cs_streams, cs_reap_stream, NULL);
}

struct cs_stream *cs_stream_adopt(CUstream h)
{
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	CUcontext ctx = NULL;
	unsigned flags = 0;
	int prio = 0;

	if (cu_real.cuStreamGetCtx(h, &ctx) != CUDA_SUCCESS || !ctx ||
	    cu_real.cuStreamGetFlags(h, &flags) != CUDA_SUCCESS)
		return NULL;
	if (cu_real.cuStreamIsCapturing &&
	    cu_real.cuStreamIsCapturing(h, &cap) == CUDA_SUCCESS &&
	    cap != CU_STREAM_CAPTURE_STATUS_NONE)
		return NULL;
	if (cu_real.cuStreamGetPriority(h, &prio) != CUDA_SUCCESS)
		prio = 0;
	return cs_stream_add(h, ctx, flags, prio);
}
