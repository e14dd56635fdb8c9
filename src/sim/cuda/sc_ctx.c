/*
 * Contexts of the simulated CUDA driver: the primary context of the device
 * (reference counted), explicit contexts, each thread's stack of current
 * contexts, context-wide synchronisation and the sticky fault state.
 *
 * Design: a context owns its streams, events, modules, executable graphs
 * and allocations (tracked by owner in the registries); destroying it, or
 * releasing the primary context for the last time, waits for its work and
 * frees all of them, as the real driver does. Context structures are never
 * freed but recycled, with a generation counter, so per-thread references
 * (the current-context stack, per-thread default streams) can never point
 * at freed memory; a destroyed context is simply not live.
 *
 * A device fault (a failing kernel, an illegal address) is recorded once
 * in its context's sticky state, from the executor thread; from then on
 * every launch, query and synchronisation in that context returns it.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

#define SC_STACK_MAX 32

static _Thread_local struct CUctx_st *sc_stack[SC_STACK_MAX];
static _Thread_local unsigned sc_depth;

static struct CUctx_st *sc_primary;   /* sc_drv.lock */
static unsigned sc_primary_refs;      /* sc_drv.lock */
static struct CUctx_st *sc_ctx_free;  /* sc_drv.lock: destroyed explicit contexts */

/*
 * The calling thread's current context. Returns 0, -ENXIO before cuInit,
 * -ESRCH if there is none or it was destroyed.
 */
int sc_ctx_current(struct CUctx_st **out)
{
	int rc = sc_ready();
	struct CUctx_st *c;

	if (rc < 0)
		return rc;
	c = sc_depth ? sc_stack[sc_depth - 1] : NULL;
	if (!c || !atomic_load(&c->live))
		return -ESRCH;
	*out = c;
	return 0;
}

/* Validates a context handle: 0, -ENXIO, -ESRCH (unknown or destroyed). */
int sc_ctx_resolve(CUcontext c, struct CUctx_st **out)
{
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	if (!sc_handle_valid(c, SC_H_CTX) || !atomic_load(&c->live))
		return -ESRCH;
	*out = c;
	return 0;
}

/* Records device fault @err in @ctx unless one is already recorded. Any thread. */
void sc_ctx_fault(struct CUctx_st *ctx, int err)
{
	int none = 0;

	atomic_compare_exchange_strong(&ctx->sticky, &none, err);
}

/*
 * Waits for all work launched so far in @ctx, on every stream. Returns the
 * context's sticky fault (0 if none) or -ENOMEM.
 */
int sc_ctx_sync(struct CUctx_st *ctx)
{
	struct sf_waitset w = { 0 };
	struct CUstream_st *s;
	int rc = 0;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->legacy)
		rc = sf_waitset_add(&w, ctx->legacy->q, ctx->legacy->last);
	for (s = ctx->streams; s && rc == 0; s = s->next)
		rc = sf_waitset_add(&w, s->q, s->last);
	pthread_mutex_unlock(&ctx->lock);
	sf_waitset_wait(&w);
	sf_waitset_fini(&w);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&ctx->lock);
	sc_stream_reap(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return atomic_load(&ctx->sticky);
}

/* Frees everything @ctx owns once its work is done. sc_drv.lock held. */
static void sc_ctx_teardown(struct CUctx_st *ctx)
{
	void *h[64];
	size_t n, i;

	atomic_store(&ctx->live, false);
	sc_ctx_sync(ctx);
	sc_stream_teardown(ctx);
	while ((n = sc_handle_drain(ctx, SC_H_EVENT, h, 64)) > 0)
		for (i = 0; i < n; i++)
			free(h[i]);
	while ((n = sc_handle_drain(ctx, SC_H_MODULE, h, 64)) > 0)
		for (i = 0; i < n; i++)
			sc_module_free(h[i]);
	while ((n = sc_handle_drain(ctx, SC_H_EXEC, h, 64)) > 0)
		for (i = 0; i < n; i++)
			sc_exec_free(h[i]);
	sf_mem_drain(ctx);
	sc_array_drain(ctx);
	atomic_store(&ctx->sticky, 0);
}

/* A fresh, live context structure (recycled if possible). sc_drv.lock held. */
static int sc_ctx_new(bool primary, unsigned flags, struct CUctx_st **out)
{
	struct CUctx_st *c = sc_ctx_free;
	int rc;

	if (c) {
		sc_ctx_free = c->next;
	} else {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		pthread_mutex_init(&c->lock, NULL);
	}
	c->next = NULL;
	c->primary = primary;
	c->flags = flags;
	c->parent = NULL;
	c->green = NULL;
	atomic_store(&c->sticky, 0);
	rc = sc_handle_add(c, SC_H_CTX, NULL);
	if (rc < 0) {
		c->next = sc_ctx_free;
		sc_ctx_free = c;
		return rc;
	}
	atomic_store(&c->live, true);
	*out = c;
	return 0;
}

static int sc_push(struct CUctx_st *c)
{
	if (sc_depth == SC_STACK_MAX)
		return -ENOMEM;
	sc_stack[sc_depth++] = c;
	return 0;
}

static CUresult sc_ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct CUctx_st *c;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pctx || (flags & ~(unsigned)CU_CTX_FLAGS_MASK))
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sc_drv.lock);
	rc = sc_ctx_new(false, flags, &c);
	if (rc == 0 && (rc = sc_push(c)) < 0) {
		atomic_store(&c->live, false);
		sc_handle_del(c, SC_H_CTX);
		c->next = sc_ctx_free;
		sc_ctx_free = c;
	}
	pthread_mutex_unlock(&sc_drv.lock);
	if (rc < 0)
		return sc_result(rc);
	*pctx = c;
	return CUDA_SUCCESS;
}

/* Creates a context and makes it current (pushed on the thread's stack). */
SC_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return sc_ctx_create(pctx, flags, dev);
}

/* Execution-affinity parameters are not supported (none may be given). */
SC_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
				  int numParams, unsigned int flags, CUdevice dev)
{
	if (numParams < 0 || (numParams > 0 && !paramsArray))
		return CUDA_ERROR_INVALID_VALUE;
	if (numParams > 0)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_NOT_SUPPORTED;
	return sc_ctx_create(pctx, flags, dev);
}

/* As cuCtxCreate_v3; NULL or empty parameters only. */
SC_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
				  unsigned int flags, CUdevice dev)
{
	if (ctxCreateParams) {
		if (ctxCreateParams->numExecAffinityParams < 0)
			return CUDA_ERROR_INVALID_VALUE;
		if (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams)
			return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED :
						CUDA_ERROR_NOT_SUPPORTED;
	}
	return sc_ctx_create(pctx, flags, dev);
}

/*
 * Destroys a context that is not the primary one, once its work finished,
 * freeing what it owns; popped if current to the calling thread.
 * sc_drv.lock held.
 */
static void sc_ctx_destroy_locked(struct CUctx_st *ctx)
{
	if (sc_depth && sc_stack[sc_depth - 1] == ctx)
		sc_depth--;
	sc_ctx_teardown(ctx);
	sc_handle_del(ctx, SC_H_CTX);
	ctx->next = sc_ctx_free;
	sc_ctx_free = ctx;
}

/*
 * Destroys an explicit context after its work finished, freeing what it
 * owns; popped if current to the calling thread.
 */
SC_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sc_drv.lock);
	if (!sc_handle_valid(ctx, SC_H_CTX) || !atomic_load(&ctx->live) || ctx->primary ||
	    ctx->green) {
		pthread_mutex_unlock(&sc_drv.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	sc_ctx_destroy_locked(ctx);
	pthread_mutex_unlock(&sc_drv.lock);
	return CUDA_SUCCESS;
}

/*
 * The context of green context @g, whose events and memory are those of
 * @parent (a primary context the caller retained). Returns 0, -ENOMEM.
 */
int sc_ctx_green_new(struct CUctx_st *parent, struct CUgreenCtx_st *g, struct CUctx_st **out)
{
	struct CUctx_st *c;
	int rc;

	pthread_mutex_lock(&sc_drv.lock);
	rc = sc_ctx_new(false, 0, &c);
	if (rc == 0) {
		/* Before anyone has the handle: it is returned through @g. */
		c->parent = parent;
		c->green = g;
		*out = c;
	}
	pthread_mutex_unlock(&sc_drv.lock);
	return rc;
}

/* Destroys a green context's context as cuCtxDestroy would, once its work is done. */
void sc_ctx_green_destroy(struct CUctx_st *ctx)
{
	pthread_mutex_lock(&sc_drv.lock);
	sc_ctx_destroy_locked(ctx);
	pthread_mutex_unlock(&sc_drv.lock);
}

SC_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	struct CUctx_st *c;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!ctx) {
		if (sc_depth)
			sc_depth--;
		return CUDA_SUCCESS;
	}
	rc = sc_ctx_resolve(ctx, &c);
	if (rc < 0)
		return sc_result(rc);
	if (sc_depth)
		sc_stack[sc_depth - 1] = c;
	else
		sc_stack[sc_depth++] = c;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = sc_depth ? sc_stack[sc_depth - 1] : NULL;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	struct CUctx_st *c;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_ctx_resolve(ctx, &c);
	if (rc == 0)
		rc = sc_push(c);
	return sc_result(rc);
}

SC_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	sc_depth--;
	if (pctx)
		*pctx = sc_stack[sc_depth];
	return CUDA_SUCCESS;
}

static CUresult sc_ctx_get_device(CUdevice *device, CUcontext ctx)
{
	struct CUctx_st *c;
	int rc = ctx ? sc_ctx_resolve(ctx, &c) : sc_ctx_current(&c);

	if (rc < 0)
		return sc_result(rc);
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = 0;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
	return sc_ctx_get_device(device, NULL);
}

/* @ctx NULL: the current context. */
SC_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	return sc_ctx_get_device(device, ctx);
}

static CUresult sc_ctx_synchronize(CUcontext ctx)
{
	struct CUctx_st *c;
	int rc = ctx ? sc_ctx_resolve(ctx, &c) : sc_ctx_current(&c);

	if (rc < 0)
		return sc_result(rc);
	rc = sc_capture_unsafe();
	if (rc < 0)
		return sc_result(rc);
	rc = sc_ctx_sync(c);
	sc_pool_sync();
	return sc_result(rc);
}

/* Waits for every stream of the current context. */
SC_EXPORT CUresult cuCtxSynchronize(void)
{
	return sc_ctx_synchronize(NULL);
}

/* @ctx NULL: the current context. */
SC_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	return sc_ctx_synchronize(ctx);
}

SC_EXPORT CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	struct CUctx_st *c;
	int rc = sc_ctx_current(&c);

	if (rc < 0)
		return sc_result(rc);
	if (leastPriority)
		*leastPriority = SC_PRIO_LEAST;
	if (greatestPriority)
		*greatestPriority = SC_PRIO_GREATEST;
	return CUDA_SUCCESS;
}

/*
 * Retains the device's primary context, creating it (again) on the first
 * retain; it is not made current.
 */
SC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sc_drv.lock);
	if (!sc_primary) {
		rc = sc_ctx_new(true, 0, &sc_primary);
	} else if (sc_primary_refs == 0) {
		atomic_store(&sc_primary->sticky, 0);
		atomic_store(&sc_primary->live, true);
	}
	if (rc == 0) {
		sc_primary_refs++;
		*pctx = sc_primary;
	}
	pthread_mutex_unlock(&sc_drv.lock);
	return sc_result(rc);
}

/*
 * Drops a reference to the primary context; the last one destroys it
 * (after its work finished) with everything it owns.
 */
SC_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sc_drv.lock);
	if (sc_primary_refs == 0) {
		pthread_mutex_unlock(&sc_drv.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (--sc_primary_refs == 0)
		sc_ctx_teardown(sc_primary);
	pthread_mutex_unlock(&sc_drv.lock);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sc_drv.lock);
	*flags = sc_primary ? sc_primary->flags : 0;
	*active = sc_primary_refs > 0;
	pthread_mutex_unlock(&sc_drv.lock);
	return CUDA_SUCCESS;
}
