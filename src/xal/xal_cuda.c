/*
 * The `cuda` XAL backend (see xal_cuda.h). Every driver call is made with
 * the command's context current on the calling thread, restoring the
 * caller's afterwards: launches happen on application threads as well as
 * on XQueue workers, and neither may see its context changed.
 */
#include "xal/xal_cuda.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XAL_CUDA_POOL 64

struct xal_cuda_hwq {
	struct xal_hwq base;
	const struct cu_fns *cu;
	CUcontext ctx;
	_Atomic CUresult error;         /* first error not reported yet */
	pthread_mutex_t lock;           /* below */
	CUstream *streams;              /* launched on since the last sync_all */
	size_t nstreams, cap;
	CUevent pool[XAL_CUDA_POOL];    /* spare sync-point events */
	size_t npool;
};

static struct xal_cuda_hwq *to_hwq(struct xal_hwq *h)
{
	return (struct xal_cuda_hwq *)h;
}

static struct xal_cuda_cmd *to_cmd(struct xal_cmd *c)
{
	return (struct xal_cuda_cmd *)c;
}

/* Makes @ctx current; returns the previous one to give to ctx_leave(). */
static CUcontext ctx_enter(const struct cu_fns *cu, CUcontext ctx)
{
	CUcontext cur = NULL;

	if (cu->cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
		cur = NULL;
	if (cur != ctx)
		cu->cuCtxSetCurrent(ctx);
	return cur;
}

static void ctx_leave(const struct cu_fns *cu, CUcontext ctx, CUcontext prev)
{
	if (prev != ctx)
		cu->cuCtxSetCurrent(prev);
}

/* Records the first error of the queue and returns -EIO. */
static int xal_cuda_fail(struct xal_cuda_hwq *h, CUresult rc)
{
	CUresult none = CUDA_SUCCESS;

	atomic_compare_exchange_strong(&h->error, &none, rc);
	return -EIO;
}

static void xal_cuda_note_stream(struct xal_cuda_hwq *h, CUstream s)
{
	size_t i;

	for (i = 0; i < h->nstreams; i++)
		if (h->streams[i] == s)
			return;
	if (h->nstreams == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;
		CUstream *grown = realloc(h->streams, cap * sizeof(*grown));

		if (!grown)
			return;
		h->streams = grown;
		h->cap = cap;
	}
	h->streams[h->nstreams++] = s;
}

static CUevent xal_cuda_event_get(struct xal_cuda_hwq *h)
{
	CUevent ev = NULL;

	pthread_mutex_lock(&h->lock);
	if (h->npool)
		ev = h->pool[--h->npool];
	pthread_mutex_unlock(&h->lock);
	if (!ev && h->cu->cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		ev = NULL;
	return ev;
}

static void xal_cuda_event_put(struct xal_cuda_hwq *h, CUevent ev)
{
	pthread_mutex_lock(&h->lock);
	if (h->npool < XAL_CUDA_POOL) {
		h->pool[h->npool++] = ev;
		ev = NULL;
	}
	pthread_mutex_unlock(&h->lock);
	if (ev)
		h->cu->cuEventDestroy_v2(ev);
}

static int xal_cuda_launch(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	struct xal_cuda_hwq *h = to_hwq(hwq);
	struct xal_cuda_cmd *c = to_cmd(cmd);
	const struct cu_fns *cu = h->cu;
	CUcontext prev = ctx_enter(cu, c->ctx);
	CUresult rc;
	int ret = 0;

	c->hwq = h;
	rc = c->ops->issue(c, cu);
	atomic_store(&c->launched, 1);
	if (rc != CUDA_SUCCESS) {
		ret = xal_cuda_fail(h, rc);
		goto out;
	}
	if (flags & XAL_LAUNCH_SYNC_POINT) {
		c->done = xal_cuda_event_get(h);
		if (c->done && (rc = cu->cuEventRecord(c->done, c->stream)) != CUDA_SUCCESS) {
			xal_cuda_event_put(h, c->done);
			c->done = NULL;
		}
	}
	pthread_mutex_lock(&h->lock);
	xal_cuda_note_stream(h, c->stream);
	pthread_mutex_unlock(&h->lock);
out:
	ctx_leave(cu, c->ctx, prev);
	return ret;
}

static int xal_cuda_result(struct xal_cuda_hwq *h, CUresult rc)
{
	if (rc == CUDA_SUCCESS)
		return 0;
	if (rc == CUDA_ERROR_NOT_READY)
		return -EBUSY;
	return xal_cuda_fail(h, rc);
}

static int xal_cuda_sync_all(struct xal_hwq *hwq, unsigned flags)
{
	struct xal_cuda_hwq *h = to_hwq(hwq);
	CUstream *streams;
	size_t n, i;
	CUcontext prev;
	int rc = 0;

	(void)flags;
	pthread_mutex_lock(&h->lock);
	streams = h->streams;
	n = h->nstreams;
	h->streams = NULL;
	h->nstreams = h->cap = 0;
	pthread_mutex_unlock(&h->lock);
	prev = ctx_enter(h->cu, h->ctx);
	for (i = 0; i < n; i++) {
		int r = xal_cuda_result(h, h->cu->cuStreamSynchronize(streams[i]));

		if (r < 0 && !rc)
			rc = r;
	}
	ctx_leave(h->cu, h->ctx, prev);
	free(streams);
	return rc;
}

static int xal_cuda_sync(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	struct xal_cuda_hwq *h = to_hwq(hwq);
	struct xal_cuda_cmd *c = to_cmd(cmd);

	if (!c->done)
		return xal_cuda_sync_all(hwq, flags);
	return xal_cuda_result(h, h->cu->cuEventSynchronize(c->done));
}

static int xal_cuda_query(struct xal_hwq *hwq, struct xal_cmd *cmd)
{
	struct xal_cuda_hwq *h = to_hwq(hwq);
	struct xal_cuda_cmd *c = to_cmd(cmd);

	if (!c->done)
		return -EBUSY;
	return xal_cuda_result(h, h->cu->cuEventQuery(c->done));
}

static void xal_cuda_hwq_destroy(struct xal_hwq *hwq)
{
	struct xal_cuda_hwq *h = to_hwq(hwq);

	while (h->npool)
		h->cu->cuEventDestroy_v2(h->pool[--h->npool]);
	pthread_mutex_destroy(&h->lock);
	free(h->streams);
	free(h);
}

static const struct xal_ops xal_cuda_ops = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "cuda",
	.launch = xal_cuda_launch,
	.sync = xal_cuda_sync,
	.sync_all = xal_cuda_sync_all,
	.query = xal_cuda_query,
	.hwq_destroy = xal_cuda_hwq_destroy,
};

int xal_cuda_hwq_create(const struct cu_fns *cu, CUcontext ctx, const char *device,
			struct xal_hwq **out)
{
	struct xal_cuda_hwq *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->base.ops = &xal_cuda_ops;
	h->base.caps = 0;
	snprintf(h->base.device, sizeof(h->base.device), "%s", device);
	h->cu = cu;
	h->ctx = ctx;
	pthread_mutex_init(&h->lock, NULL);
	*out = &h->base;
	return 0;
}

CUresult xal_cuda_hwq_error(struct xal_hwq *hwq)
{
	return atomic_exchange(&to_hwq(hwq)->error, CUDA_SUCCESS);
}

void xal_cuda_hwq_forget(struct xal_hwq *hwq, CUstream stream)
{
	struct xal_cuda_hwq *h = to_hwq(hwq);
	size_t i;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->nstreams; i++) {
		if (h->streams[i] == stream) {
			h->streams[i] = h->streams[--h->nstreams];
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

static void xal_cuda_cmd_destroy(struct xal_cmd *cmd)
{
	struct xal_cuda_cmd *c = to_cmd(cmd);

	if (c->done && c->hwq)
		xal_cuda_event_put(c->hwq, c->done);
	if (c->ops->fini)
		c->ops->fini(c);
	free(c);
}

static void *xal_cuda_cmd_blocked_on(struct xal_cmd *cmd)
{
	struct xal_cuda_cmd *c = to_cmd(cmd);

	return c->ops->blocked_on ? c->ops->blocked_on(c) : NULL;
}

static const struct xal_cmd_ops xal_cuda_cmd_ops = {
	.destroy = xal_cuda_cmd_destroy,
	.blocked_on = xal_cuda_cmd_blocked_on,
};

void xal_cuda_cmd_init(struct xal_cuda_cmd *c, const struct xal_cuda_cmd_ops *ops,
		       CUcontext ctx, CUstream stream, uint32_t kind, uint64_t est_key)
{
	c->base.ops = &xal_cuda_cmd_ops;
	c->base.kind = kind;
	c->base.est_key = est_key;
	c->ops = ops;
	c->ctx = ctx;
	c->stream = stream;
	c->done = NULL;
	c->hwq = NULL;
	atomic_store(&c->launched, 0);
}
