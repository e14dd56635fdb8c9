/*
 * Green contexts of the simulated CUDA driver: the device's SMs as a
 * resource, split into groups and described (cuDeviceGetDevResource,
 * cuDevSmResourceSplitByCount, cuDevResourceGenerateDesc), provisioned as
 * green contexts with their streams (cuGreenCtxCreate, cuCtxFromGreenCtx,
 * cuGreenCtxStreamCreate), and the context-wide event record and wait
 * (cuGreenCtxRecordEvent/WaitEvent, cuCtxRecordEvent/WaitEvent).
 *
 * Design: a green context retains the primary context and owns a context
 * of its own, the one cuCtxFromGreenCtx returns, whose parent is the
 * primary (sc_ctx_root): its streams, current-context use and teardown
 * are those of any context, and the primary's events may be recorded and
 * waited on in it. The simulated device runs one command at a time
 * whatever the SMs, so a green context partitions nothing: SM counts are
 * bookkeeping, checked as the driver checks them. A context-wide record
 * is a hidden join stream of the context (SC_S_JOIN) that waits for the
 * last command of each stream of the context, and of its green contexts
 * for a primary, then records the event; a context-wide wait makes a
 * second join stream wait for the event, and every stream of the context
 * waits for that join before its next command (sc_stream_prepare), so
 * streams created later wait too.
 *
 * A descriptor lives as long as the process, as no call destroys one.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SC_RES_MAGIC 0x58535252u   /* "XSRR": a resource this driver wrote */
#define SC_SM_MIN 8                /* compute capability 9.0's partitions */
#define SC_SM_MIN_FINE 2           /* with ..._IGNORE_SM_COSCHEDULING */

struct CUgreenCtx_st {
	struct CUctx_st *ctx;         /* its own context (cuCtxFromGreenCtx) */
	CUdevice dev;                 /* whose primary context it retains */
	unsigned sm;                  /* SMs provisioned */
	struct CUgreenCtx_st *next;   /* sc_green_lock: live green contexts */
};

struct CUdevResourceDesc_st {
	unsigned sm;
};

/* What the driver keeps in a resource's opaque part. */
struct sc_res_tag {
	uint32_t magic;
	uint32_t split;               /* the split that made it; 0: a whole set */
};

_Static_assert(sizeof(struct sc_res_tag) <= sizeof(((CUdevResource *)0)->_internal_padding),
	       "resource tag");

static pthread_mutex_t sc_green_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUgreenCtx_st *sc_greens;
static _Atomic uint32_t sc_splits;

/* ---- resources ---- */

static void sc_res_fill(CUdevResource *r, unsigned sm, unsigned min, uint32_t split)
{
	struct sc_res_tag tag = { SC_RES_MAGIC, split };

	memset(r, 0, sizeof(*r));
	r->type = CU_DEV_RESOURCE_TYPE_SM;
	r->sm.smCount = sm;
	r->sm.minSmPartitionSize = min;
	r->sm.smCoscheduledAlignment = min;
	memcpy(r->_internal_padding, &tag, sizeof(tag));
}

/* The tag of @r; -EINVAL if this driver did not write it, -EPROTOTYPE if not SMs. */
static int sc_res_tag(const CUdevResource *r, struct sc_res_tag *tag)
{
	memcpy(tag, r->_internal_padding, sizeof(*tag));
	if (tag->magic != SC_RES_MAGIC)
		return -EINVAL;
	return r->type == CU_DEV_RESOURCE_TYPE_SM ? 0 : -EPROTOTYPE;
}

/* A whole set of @sm SMs of type @type into @r. */
static CUresult sc_res_get(CUdevResource *r, CUdevResourceType type, unsigned sm)
{
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	if (type != CU_DEV_RESOURCE_TYPE_SM)
		return CUDA_ERROR_INVALID_RESOURCE_TYPE;
	sc_res_fill(r, sm, SC_SM_MIN, 0);
	return CUDA_SUCCESS;
}

/* All SMs of the device: CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT. */
SC_EXPORT CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource *resource,
					  CUdevResourceType type)
{
	int sm = 0;
	CUresult rc = cuDeviceGetAttribute(&sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);

	return rc != CUDA_SUCCESS ? rc : sc_res_get(resource, type, (unsigned)sm);
}

/*
 * Groups of max(@minCount, 8) SMs rounded up to a multiple of 8 (2 and 2
 * with CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING), as many as fit
 * and were asked for; the rest in @remaining. A group cannot be split
 * again (it must become a green context first).
 */
SC_EXPORT CUresult cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *nbGroups,
					       const CUdevResource *input,
					       CUdevResource *remaining, unsigned int useFlags,
					       unsigned int minCount)
{
	const unsigned known = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
			       CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
	unsigned min, size, fit, n, i;
	struct sc_res_tag tag;
	uint32_t split;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!nbGroups || !input || (useFlags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_res_tag(input, &tag);
	if (rc == 0 && tag.split)
		rc = -EINVAL;
	if (rc == 0 && minCount > input->sm.smCount)
		rc = -EINVAL;
	if (rc < 0)
		return sc_result(rc);
	min = (useFlags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) ? SC_SM_MIN_FINE :
									    SC_SM_MIN;
	size = minCount > min ? (minCount + min - 1) / min * min : min;
	fit = input->sm.smCount / size;
	if (!result) {
		*nbGroups = fit;
		return CUDA_SUCCESS;
	}
	n = *nbGroups < fit ? *nbGroups : fit;
	split = atomic_fetch_add(&sc_splits, 1) + 1;
	for (i = 0; i < n; i++)
		sc_res_fill(&result[i], size, min, split);
	if (remaining)
		sc_res_fill(remaining, input->sm.smCount - n * size, min, split);
	*nbGroups = n;
	return CUDA_SUCCESS;
}

/*
 * A descriptor of the SMs of @resources: one whole set, or groups (and
 * the remainder) of one split.
 */
SC_EXPORT CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *phDesc, CUdevResource *resources,
					     unsigned int nbResources)
{
	struct CUdevResourceDesc_st *d;
	struct sc_res_tag tag, first = { 0, 0 };
	unsigned sm = 0, i;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phDesc || !resources || !nbResources)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < nbResources; i++) {
		rc = sc_res_tag(&resources[i], &tag);
		if (rc < 0)
			return sc_result(rc);
		if (i == 0)
			first = tag;
		else if (tag.split != first.split || !tag.split)
			return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
		sm += resources[i].sm.smCount;
	}
	if (!sm)
		return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
	d = calloc(1, sizeof(*d));
	if (!d)
		return CUDA_ERROR_OUT_OF_MEMORY;
	d->sm = sm;
	rc = sc_handle_add(d, SC_H_DESC, NULL);
	if (rc < 0) {
		free(d);
		return sc_result(rc);
	}
	*phDesc = d;
	return CUDA_SUCCESS;
}

/* ---- green contexts ---- */

static int sc_green_resolve(CUgreenCtx g)
{
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	return g && sc_handle_valid(g, SC_H_GREEN) ? 0 : -ESRCH;
}

/*
 * Retains the primary context of @dev and makes a context with the SMs of
 * @desc; CU_GREEN_CTX_DEFAULT_STREAM is required. Not made current.
 */
SC_EXPORT CUresult cuGreenCtxCreate(CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev,
				    unsigned int flags)
{
	struct CUgreenCtx_st *g;
	CUcontext primary;
	CUresult res;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phCtx || flags != CU_GREEN_CTX_DEFAULT_STREAM || !desc ||
	    !sc_handle_valid(desc, SC_H_DESC))
		return CUDA_ERROR_INVALID_VALUE;
	res = cuDevicePrimaryCtxRetain(&primary, dev);
	if (res != CUDA_SUCCESS)
		return res;
	g = calloc(1, sizeof(*g));
	rc = g ? sc_ctx_green_new(primary, g, &g->ctx) : -ENOMEM;
	if (rc == 0) {
		g->dev = dev;
		g->sm = desc->sm;
		rc = sc_handle_add(g, SC_H_GREEN, NULL);
		if (rc < 0)
			sc_ctx_green_destroy(g->ctx);
	}
	if (rc < 0) {
		free(g);
		cuDevicePrimaryCtxRelease_v2(dev);
		return sc_result(rc);
	}
	pthread_mutex_lock(&sc_green_lock);
	g->next = sc_greens;
	sc_greens = g;
	pthread_mutex_unlock(&sc_green_lock);
	*phCtx = g;
	return CUDA_SUCCESS;
}

/*
 * Waits for the green context's work, frees what its context owns (its
 * streams too: later calls on them fail with CUDA_ERROR_INVALID_HANDLE)
 * and releases the primary context.
 */
SC_EXPORT CUresult cuGreenCtxDestroy(CUgreenCtx hCtx)
{
	struct CUgreenCtx_st **pp;
	CUdevice dev;
	int rc = sc_green_resolve(hCtx);

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hCtx, SC_H_GREEN))
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&sc_green_lock);
	for (pp = &sc_greens; *pp && *pp != hCtx; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = hCtx->next;
	pthread_mutex_unlock(&sc_green_lock);
	sc_ctx_green_destroy(hCtx->ctx);
	dev = hCtx->dev;
	free(hCtx);
	cuDevicePrimaryCtxRelease_v2(dev);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuCtxFromGreenCtx(CUcontext *pContext, CUgreenCtx hCtx)
{
	int rc = sc_green_resolve(hCtx);

	if (rc < 0)
		return sc_result(rc);
	if (!pContext)
		return CUDA_ERROR_INVALID_VALUE;
	*pContext = hCtx->ctx;
	return CUDA_SUCCESS;
}

/* The SMs provisioned, as a whole set that may be split again. */
SC_EXPORT CUresult cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource *resource,
					    CUdevResourceType type)
{
	int rc = sc_green_resolve(hCtx);

	return rc < 0 ? sc_result(rc) : sc_res_get(resource, type, hCtx->sm);
}

/* CU_STREAM_NON_BLOCKING is required; the current context plays no part. */
SC_EXPORT CUresult cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx,
					  unsigned int flags, int priority)
{
	int rc = sc_green_resolve(greenCtx);

	if (rc < 0)
		return sc_result(rc);
	if (!phStream || flags != CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	return sc_result(sc_stream_create_in(greenCtx->ctx, phStream, flags, priority));
}

/* ---- context-wide record and wait ---- */

/* The last commands of some streams, gathered under their contexts' locks. */
struct sc_lasts {
	size_t n, cap;
	struct sc_evrec *v;
};

static int sc_lasts_add(struct sc_lasts *l, struct sf_hwq *q, uint64_t seq)
{
	if (!seq)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct sc_evrec *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct sc_evrec){ .q = q, .seq = seq };
	return 0;
}

/*
 * Whether a context-wide call may act on @ctx (ctx->lock held): -ESRCH if
 * it was destroyed; -EPERM if a stream of it captures, whose capture is
 * then invalidated, as the driver does.
 */
static int sc_ctx_usable(struct CUctx_st *ctx)
{
	struct CUstream_st *s;
	int rc = atomic_load(&ctx->live) ? 0 : -ESRCH;

	for (s = ctx->streams; rc == 0 && s; s = s->next) {
		if (s->cap) {
			sc_capture_invalidate(s->cap);
			rc = -EPERM;
		}
	}
	return rc;
}

/* The last command of every stream of @ctx into @l (ctx->lock held). */
static int sc_ctx_lasts(struct CUctx_st *ctx, struct sc_lasts *l)
{
	struct CUstream_st *s;
	int rc = sc_ctx_usable(ctx);

	for (s = ctx->streams; rc == 0 && s; s = s->next)
		if (s->kind != SC_S_JOIN)
			rc = sc_lasts_add(l, s->q, s->last);
	if (rc == 0 && ctx->legacy)
		rc = sc_lasts_add(l, ctx->legacy->q, ctx->legacy->last);
	return rc;
}

/* The join stream @*join of @ctx, created on first use (ctx->lock held). */
static int sc_join(struct CUctx_st *ctx, struct CUstream_st **join)
{
	if (*join)
		return 0;
	return sc_stream_new(ctx, SC_S_JOIN, CU_STREAM_NON_BLOCKING, 0, join);
}

/*
 * Records @ev after everything launched so far in @ctx, and with @greens
 * in the green contexts of the primary @ctx.
 */
static int sc_ctx_record(struct CUctx_st *ctx, CUevent ev, bool greens)
{
	struct sc_lasts l = { 0 };
	struct sc_evrec rec;
	size_t i;
	int rc = 0;

	if (greens) {
		pthread_mutex_lock(&sc_green_lock);
		for (struct CUgreenCtx_st *g = sc_greens; rc == 0 && g; g = g->next) {
			if (g->ctx->parent != ctx)
				continue;
			pthread_mutex_lock(&g->ctx->lock);
			rc = sc_ctx_lasts(g->ctx, &l);
			pthread_mutex_unlock(&g->ctx->lock);
		}
		pthread_mutex_unlock(&sc_green_lock);
	}
	pthread_mutex_lock(&ctx->lock);
	if (rc == 0)
		rc = sc_ctx_lasts(ctx, &l);
	if (rc == 0)
		rc = sc_join(ctx, &ctx->rec_join);
	if (rc == 0)
		rc = atomic_load(&ctx->sticky);
	for (i = 0; rc == 0 && i < l.n; i++)
		rc = sc_wait_cmd(ctx->rec_join, l.v[i].q, l.v[i].seq);
	if (rc == 0)
		rc = sc_event_launch(ctx->rec_join, ev, &rec);
	pthread_mutex_unlock(&ctx->lock);
	if (rc == 0)
		sc_event_set(ev, &rec);
	free(l.v);
	return rc;
}

/* Makes the streams of @ctx wait for @rec before their next command. */
static int sc_ctx_barrier(struct CUctx_st *ctx, const struct sc_evrec *rec)
{
	int rc;

	pthread_mutex_lock(&ctx->lock);
	rc = sc_ctx_usable(ctx);
	if (rc == 0)
		rc = sc_join(ctx, &ctx->wait_join);
	if (rc == 0)
		rc = sc_wait_cmd(ctx->wait_join, rec->q, rec->seq);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/*
 * Makes future work of @ctx, and with @greens of the green contexts of the
 * primary @ctx, wait for @ev's last record. An event recorded in a capture
 * in progress fails with -EPERM and invalidates that capture.
 */
static int sc_ctx_wait(struct CUctx_st *ctx, CUevent ev, bool greens)
{
	struct sc_evrec rec = { 0 };
	struct sc_capture *cap;
	int rc = 0;

	pthread_mutex_lock(&ev->ctx->lock);
	cap = ev->cap_id ? sc_capture_find(ev->ctx, ev->cap_id) : NULL;
	if (cap) {
		sc_capture_invalidate(cap);
		rc = -EPERM;
	}
	rec.q = ev->q;
	rec.seq = ev->seq;
	pthread_mutex_unlock(&ev->ctx->lock);
	if (rc < 0 || !rec.q)
		return rc;
	if (greens) {
		pthread_mutex_lock(&sc_green_lock);
		for (struct CUgreenCtx_st *g = sc_greens; rc == 0 && g; g = g->next)
			if (g->ctx->parent == ctx)
				rc = sc_ctx_barrier(g->ctx, &rec);
		pthread_mutex_unlock(&sc_green_lock);
	}
	return rc < 0 ? rc : sc_ctx_barrier(ctx, &rec);
}

/* An event of @g's primary context; -EBADF otherwise. */
static int sc_green_event(CUgreenCtx g, CUevent ev)
{
	int rc = sc_green_resolve(g);

	if (rc < 0)
		return rc;
	if (!sc_handle_valid(ev, SC_H_EVENT) || sc_ctx_root(ev->ctx) != g->ctx->parent)
		return -EBADF;
	return 0;
}

/* @ev completes once every stream of @hCtx reached this point. */
SC_EXPORT CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent)
{
	int rc = sc_green_event(hCtx, hEvent);

	return sc_result(rc < 0 ? rc : sc_ctx_record(hCtx->ctx, hEvent, false));
}

/* Work submitted to @hCtx from now on, on any of its streams, waits for @hEvent. */
SC_EXPORT CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent)
{
	int rc = sc_green_resolve(hCtx);

	if (rc == 0 && !sc_handle_valid(hEvent, SC_H_EVENT))
		rc = -EBADF;
	return sc_result(rc < 0 ? rc : sc_ctx_wait(hCtx->ctx, hEvent, false));
}

/* A primary context's record covers its green contexts; a green one's only itself. */
SC_EXPORT CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent)
{
	struct CUctx_st *c;
	int rc = sc_ctx_resolve(hCtx, &c);

	if (rc == 0 && (!sc_handle_valid(hEvent, SC_H_EVENT) ||
			sc_ctx_root(hEvent->ctx) != sc_ctx_root(c)))
		rc = -EBADF;
	return sc_result(rc < 0 ? rc : sc_ctx_record(c, hEvent, c->primary));
}

/* As cuGreenCtxWaitEvent; a primary context's wait covers its green contexts. */
SC_EXPORT CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent)
{
	struct CUctx_st *c;
	int rc = sc_ctx_resolve(hCtx, &c);

	if (rc == 0 && !sc_handle_valid(hEvent, SC_H_EVENT))
		rc = -EBADF;
	return sc_result(rc < 0 ? rc : sc_ctx_wait(c, hEvent, c->primary));
}
