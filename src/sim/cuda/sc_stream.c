/*
 * Streams of the simulated CUDA driver: explicit streams, the legacy
 * default stream of each context, per-thread default streams, and the
 * stream calls that are not memory operations or events.
 *
 * Design: a stream is one hardware queue from the pool (sf_hwq.c). The
 * legacy stream is created on first use per context; a per-thread default
 * stream on first use per (thread, context), remembered in a table owned
 * by a pthread key whose destructor retires the thread's streams. Both are
 * ordinary streams to the submission path, which knows the legacy stream's
 * rules (sc_submit.c). A destroyed stream loses its handle at once but
 * stays on its context's list until its queue is idle, so its pending work
 * completes and the legacy stream still orders after it; it is reaped by
 * later stream calls. Handles are resolved through the registry and
 * returned with their context locked.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

#define SC_PT_MAX 32

/* A thread's per-thread default streams, one per context. */
struct sc_pt_table {
	unsigned n;
	struct sc_pt_entry {
		struct CUctx_st *ctx;
		uint64_t gen;
		struct CUstream_st *s;
	} e[SC_PT_MAX];
};

static pthread_once_t sc_pt_once = PTHREAD_ONCE_INIT;
static pthread_key_t sc_pt_key;
static int sc_pt_key_err;

static void sc_pt_key_init(void)
{
	sc_pt_key_err = -pthread_key_create(&sc_pt_key, sc_stream_thread_exit);
}

/* A new stream of @ctx (ctx->lock held); user streams get a handle. */
int sc_stream_new(struct CUctx_st *ctx, uint8_t kind, unsigned flags, int prio,
			 struct CUstream_st **out)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	rc = sf_hwq_get(sc_drv.dev, &s->q);
	if (rc < 0) {
		free(s);
		return rc;
	}
	s->ctx = ctx;
	s->kind = kind;
	s->flags = flags;
	s->priority = prio;
	if (kind == SC_S_USER) {
		rc = sc_handle_add(s, SC_H_STREAM, ctx);
		if (rc < 0) {
			sf_hwq_put(s->q);
			free(s);
			return rc;
		}
	}
	if (kind != SC_S_LEGACY) {
		s->next = ctx->streams;
		ctx->streams = s;
	}
	*out = s;
	return 0;
}

/* Frees destroyed streams whose work finished. ctx->lock held. */
void sc_stream_reap(struct CUctx_st *ctx)
{
	struct CUstream_st **pp = &ctx->streams;

	while (*pp) {
		struct CUstream_st *s = *pp;

		if (s->destroyed && sf_hwq_done(s->q, s->last)) {
			*pp = s->next;
			sf_hwq_put(s->q);
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

/*
 * Retires @s (ctx->lock held): its capture ends (invalidated) or it leaves
 * one it joined; it is freed once its work is done. @s may be freed here.
 */
static void sc_stream_retire(struct CUctx_st *ctx, struct CUstream_st *s)
{
	if (s->cap) {
		if (s->cap->origin == s)
			sc_capture_end(ctx, s->cap);
		else
			s->cap = NULL;
	}
	s->destroyed = true;
	sc_stream_reap(ctx);
}

/* The calling thread's default stream in @ctx (ctx->lock held). */
static int sc_pt_get(struct CUctx_st *ctx, struct CUstream_st **out)
{
	struct sc_pt_table *t;
	struct sc_pt_entry *slot = NULL;
	unsigned i;
	int rc;

	pthread_once(&sc_pt_once, sc_pt_key_init);
	if (sc_pt_key_err)
		return -ENOMEM;
	t = pthread_getspecific(sc_pt_key);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || pthread_setspecific(sc_pt_key, t)) {
			free(t);
			return -ENOMEM;
		}
	}
	for (i = 0; i < t->n; i++) {
		if (t->e[i].ctx != ctx)
			continue;
		if (t->e[i].gen == ctx->gen) {
			*out = t->e[i].s;
			return 0;
		}
		slot = &t->e[i];   /* from before a teardown: its stream is gone */
	}
	if (!slot) {
		if (t->n == SC_PT_MAX)
			return -ENOMEM;
		slot = &t->e[t->n++];
	}
	rc = sc_stream_new(ctx, SC_S_THREAD, CU_STREAM_DEFAULT, 0, &slot->s);
	if (rc < 0) {
		slot->ctx = NULL;
		return rc;
	}
	slot->ctx = ctx;
	slot->gen = ctx->gen;
	*out = slot->s;
	return 0;
}

/* pthread key destructor: retires the exiting thread's default streams. */
void sc_stream_thread_exit(void *table)
{
	struct sc_pt_table *t = table;
	unsigned i;

	for (i = 0; i < t->n; i++) {
		struct CUctx_st *ctx = t->e[i].ctx;

		if (!ctx)
			continue;
		pthread_mutex_lock(&ctx->lock);
		if (ctx->gen == t->e[i].gen)
			sc_stream_retire(ctx, t->e[i].s);
		pthread_mutex_unlock(&ctx->lock);
	}
	free(t);
}

/*
 * Resolves stream handle @h (NULL: the legacy stream, or with @pt the
 * per-thread one) and returns it with its context locked. Returns 0,
 * -ENXIO, -ESRCH (no current context for a default stream), -EBADF
 * (unknown or destroyed handle), -ENOMEM.
 */
int sc_stream_acquire(CUstream h, bool pt, struct CUstream_st **out)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	if (!h)
		h = pt ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		rc = sc_ctx_current(&ctx);
		if (rc < 0)
			return rc;
		pthread_mutex_lock(&ctx->lock);
		if (!atomic_load(&ctx->live))
			rc = -ESRCH;
		else if (h == CU_STREAM_PER_THREAD)
			rc = sc_pt_get(ctx, out);
		else if (!ctx->legacy)
			rc = sc_stream_new(ctx, SC_S_LEGACY, CU_STREAM_DEFAULT, 0, &ctx->legacy);
		if (rc == 0 && h == CU_STREAM_LEGACY)
			*out = ctx->legacy;
		if (rc < 0)
			pthread_mutex_unlock(&ctx->lock);
		return rc;
	}
	if (!sc_handle_valid(h, SC_H_STREAM))
		return -EBADF;
	s = h;
	pthread_mutex_lock(&s->ctx->lock);
	if (s->destroyed || !atomic_load(&s->ctx->live)) {
		pthread_mutex_unlock(&s->ctx->lock);
		return -EBADF;
	}
	*out = s;
	return 0;
}

/* Unlocks the context of @s, from sc_stream_acquire(). */
void sc_stream_release(struct CUstream_st *s)
{
	pthread_mutex_unlock(&s->ctx->lock);
}

/* Adds @s's last command to @w (ctx->lock held). */
int sc_stream_waitset(struct CUstream_st *s, struct sf_waitset *w)
{
	return sf_waitset_add(w, s->q, s->last);
}

/*
 * Frees every stream of @ctx (teardown, after its work finished); ends its
 * captures and invalidates per-thread references (generation).
 */
void sc_stream_teardown(struct CUctx_st *ctx)
{
	struct CUstream_st *s, *next;

	pthread_mutex_lock(&ctx->lock);
	for (s = ctx->streams; s; s = s->next)
		if (s->cap && s->cap->origin == s)
			sc_capture_end(ctx, s->cap);
	for (s = ctx->streams; s; s = next) {
		next = s->next;
		if (s->kind == SC_S_USER && !s->destroyed)
			sc_handle_del(s, SC_H_STREAM);
		sf_hwq_put(s->q);
		free(s);
	}
	ctx->streams = NULL;
	ctx->rec_join = ctx->wait_join = NULL;
	if (ctx->legacy) {
		sf_hwq_put(ctx->legacy->q);
		free(ctx->legacy);
		ctx->legacy = NULL;
	}
	ctx->gen++;
	pthread_mutex_unlock(&ctx->lock);
}

/*
 * A user stream of @ctx, its priority clamped to the device's range.
 * Returns 0, -EINVAL (unknown flags), -ESRCH (context destroyed), -ENOMEM.
 */
int sc_stream_create_in(struct CUctx_st *ctx, CUstream *out, unsigned flags, int prio)
{
	struct CUstream_st *s;
	int rc;

	if (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)
		return -EINVAL;
	if (prio < SC_PRIO_GREATEST)
		prio = SC_PRIO_GREATEST;
	if (prio > SC_PRIO_LEAST)
		prio = SC_PRIO_LEAST;
	pthread_mutex_lock(&ctx->lock);
	sc_stream_reap(ctx);
	rc = atomic_load(&ctx->live) ? sc_stream_new(ctx, SC_S_USER, flags, prio, &s) : -ESRCH;
	pthread_mutex_unlock(&ctx->lock);
	if (rc == 0)
		*out = s;
	return rc;
}

static CUresult sc_stream_create(CUstream *phStream, unsigned int flags, int priority)
{
	struct CUctx_st *ctx;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!phStream)
		return CUDA_ERROR_INVALID_VALUE;
	return sc_result(sc_stream_create_in(ctx, phStream, flags, priority));
}

SC_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return sc_stream_create(phStream, Flags, 0);
}

/* Priorities are kept (clamped to [-5, 0]) but the device does not use them. */
SC_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
					      int priority)
{
	return sc_stream_create(phStream, flags, priority);
}

/*
 * Destroys a stream without waiting: its handle is invalid at once, its
 * pending work still completes. A capture it began is invalidated and ended.
 */
SC_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
	struct CUstream_st *s;
	struct CUctx_st *ctx;
	int rc;

	if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_HANDLE;
	rc = sc_stream_acquire(hStream, false, &s);
	if (rc < 0)
		return sc_result(rc);
	ctx = s->ctx;
	sc_handle_del(s, SC_H_STREAM);
	sc_stream_retire(ctx, s);
	pthread_mutex_unlock(&ctx->lock);
	return CUDA_SUCCESS;
}

static CUresult sc_get_priority(CUstream h, int *priority, bool pt)
{
	struct CUstream_st *s;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return sc_result(rc);
	if (priority)
		*priority = s->priority;
	sc_stream_release(s);
	return priority ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SC_EXPORT CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
	return sc_get_priority(hStream, priority, false);
}

SC_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	return sc_get_priority(hStream, priority, true);
}

static CUresult sc_get_flags(CUstream h, unsigned int *flags, bool pt)
{
	struct CUstream_st *s;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return sc_result(rc);
	if (flags)
		*flags = s->flags;
	sc_stream_release(s);
	return flags ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SC_EXPORT CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	return sc_get_flags(hStream, flags, false);
}

SC_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	return sc_get_flags(hStream, flags, true);
}

static CUresult sc_get_ctx(CUstream h, CUcontext *pctx, CUgreenCtx *green, bool v2, bool pt)
{
	struct CUstream_st *s;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return sc_result(rc);
	/* The _v2 form names a green context's primary and the green context;
	 * the first one the green context's own context. */
	if (pctx)
		*pctx = v2 ? sc_ctx_root(s->ctx) : s->ctx;
	if (green)
		*green = s->ctx->green;
	sc_stream_release(s);
	return pctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SC_EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	return sc_get_ctx(hStream, pctx, NULL, false, false);
}

SC_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
	return sc_get_ctx(hStream, pctx, NULL, false, true);
}

SC_EXPORT CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
	return sc_get_ctx(hStream, pCtx, pGreenCtx, true, false);
}

SC_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx,
					  CUgreenCtx *pGreenCtx)
{
	return sc_get_ctx(hStream, pCtx, pGreenCtx, true, true);
}

/* NULL for a stream of a context that is not a green context's. */
SC_EXPORT CUresult cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx *phCtx)
{
	struct CUstream_st *s;
	int rc;

	if (!phCtx)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(hStream, false, &s);
	if (rc < 0)
		return sc_result(rc);
	*phCtx = s->ctx->green;
	sc_stream_release(s);
	return CUDA_SUCCESS;
}

/*
 * Resolves @h for a synchronising call: what to wait for, or -EPERM
 * (invalidating the capture) on a capturing stream, -EDEADLK for the
 * legacy stream while a blocking stream captures.
 */
static int sc_sync_target(CUstream h, bool pt, struct sf_waitset *w, struct CUctx_st **ctx)
{
	struct CUstream_st *s, *t;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return rc;
	if (s->cap) {
		sc_capture_invalidate(s->cap);
		rc = -EPERM;
	}
	for (t = s->ctx->streams; rc == 0 && s->kind == SC_S_LEGACY && t; t = t->next)
		if (sc_stream_blocking(t) && t->cap)
			rc = -EDEADLK;
	if (rc == 0)
		rc = sc_stream_waitset(s, w);
	*ctx = s->ctx;
	sc_stream_release(s);
	return rc;
}

static CUresult sc_stream_sync(CUstream h, bool pt)
{
	struct sf_waitset w = { 0 };
	struct CUctx_st *ctx;
	int rc = sc_sync_target(h, pt, &w, &ctx);

	if (rc == 0) {
		sf_waitset_wait(&w);
		rc = atomic_load(&ctx->sticky);
		sc_pool_sync();
	}
	sf_waitset_fini(&w);
	return sc_result(rc);
}

SC_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
	return sc_stream_sync(hStream, false);
}

SC_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
	return sc_stream_sync(hStream, true);
}

static CUresult sc_stream_query(CUstream h, bool pt)
{
	struct sf_waitset w = { 0 };
	struct CUctx_st *ctx;
	int rc = sc_sync_target(h, pt, &w, &ctx);

	if (rc == 0)
		rc = atomic_load(&ctx->sticky);
	if (rc == 0 && !sf_waitset_done(&w))
		rc = -EBUSY;
	sf_waitset_fini(&w);
	return sc_result(rc);
}

/* CUDA_ERROR_NOT_READY while the stream has unfinished work. */
SC_EXPORT CUresult cuStreamQuery(CUstream hStream)
{
	return sc_stream_query(hStream, false);
}

SC_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream)
{
	return sc_stream_query(hStream, true);
}

static CUresult sc_host_op(CUstream h, bool pt, struct sc_op *op)
{
	struct CUstream_st *s;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return sc_result(rc);
	if (op->kind == SC_OP_CALLBACK && s->cap) {
		/* Stream callbacks cannot be captured (host functions can). */
		sc_capture_invalidate(s->cap);
		rc = -EPERM;
	} else {
		rc = sc_stream_op(s, op, NULL);
	}
	sc_stream_release(s);
	return sc_result(rc);
}

static CUresult sc_add_callback(CUstream h, CUstreamCallback cb, void *data,
				unsigned int flags, bool pt)
{
	struct sc_op op = { .kind = SC_OP_CALLBACK };

	if (!cb || flags != 0)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	op.u.callback.fn = cb;
	op.u.callback.data = data;
	op.u.callback.handle = h;
	return sc_host_op(h, pt, &op);
}

/*
 * The callback runs on the device's executor thread when the stream
 * reaches it, with the context's sticky error as status; like a real
 * callback it must not call the driver.
 */
SC_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
				       void *userData, unsigned int flags)
{
	return sc_add_callback(hStream, callback, userData, flags, false);
}

SC_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
					    void *userData, unsigned int flags)
{
	return sc_add_callback(hStream, callback, userData, flags, true);
}

static CUresult sc_host_func(CUstream h, CUhostFn fn, void *data, bool pt)
{
	struct sc_op op = { .kind = SC_OP_HOST };

	if (!fn)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	op.u.host.fn = fn;
	op.u.host.data = data;
	return sc_host_op(h, pt, &op);
}

/*
 * The host function runs on the device's executor thread when the stream
 * reaches it, and holds the simulated engine meanwhile (a real driver runs
 * it on a helper thread and blocks only the stream). Skipped once the
 * context faulted.
 */
SC_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	return sc_host_func(hStream, fn, userData, false);
}

SC_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	return sc_host_func(hStream, fn, userData, true);
}
