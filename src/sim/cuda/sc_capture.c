/*
 * Stream capture and graphs of the simulated CUDA driver.
 *
 * Design: a graph is the ordered list of operations (struct sc_op, by
 * value, kernel parameters included) that a capture recorded, and
 * launching its executable copy submits them to the stream in that order.
 * Capture across streams (a stream joins by waiting for an event recorded
 * in the capture) records every stream's work into the one list, in call
 * order: the graph is a linearisation of the captured DAG, so it keeps
 * every dependency and adds some, and it runs on the launch stream alone.
 * Not captured: stream callbacks, stream-ordered allocation and free,
 * external event nodes (those calls fail with the capture error and
 * invalidate the capture); events recorded during capture only serve
 * fork/join. Joined streams need not rejoin the origin before the capture
 * ends (no CUDA_ERROR_STREAM_CAPTURE_UNJOINED).
 *
 * Modes follow the driver: a capture in GLOBAL mode forbids "potentially
 * unsafe" calls (context synchronisation, cuMemAlloc/Free and their host
 * counterparts) in every thread, one in THREAD_LOCAL mode in its own
 * thread, RELAXED nowhere. Streams of other threads are never affected.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t sc_cap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_capture *sc_caps;          /* active captures */
static _Atomic unsigned sc_ncaps;
static _Atomic uint64_t sc_cap_ids;

static int sc_oplist_add(struct sc_oplist *l, const struct sc_op *op)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct sc_op *v = realloc(l->ops, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->ops = v;
		l->cap = cap;
	}
	l->ops[l->n++] = *op;
	return 0;
}

static void sc_oplist_fini(struct sc_oplist *l)
{
	free(l->ops);
	l->ops = NULL;
	l->n = l->cap = 0;
}

/*
 * Records a copy of @op (owning nothing) into capture @c. ctx->lock held.
 * Returns 0, -ECANCELED once the capture was invalidated, -ENOMEM (which
 * invalidates it).
 */
int sc_capture_add(struct sc_capture *c, const struct sc_op *op)
{
	int rc;

	if (c->invalidated)
		return -ECANCELED;
	rc = sc_oplist_add(&c->graph->l, op);
	if (rc < 0)
		c->invalidated = true;
	return rc;
}

/* Marks @c invalidated: it ends only with cuStreamEndCapture. ctx->lock held. */
void sc_capture_invalidate(struct sc_capture *c)
{
	c->invalidated = true;
}

/* The capture of @ctx with @id still in progress, or NULL. ctx->lock held. */
struct sc_capture *sc_capture_find(struct CUctx_st *ctx, uint64_t id)
{
	struct CUstream_st *s;

	for (s = ctx->streams; s; s = s->next)
		if (s->cap && s->cap->id == id)
			return s->cap;
	return NULL;
}

/* Ends @c: detaches its streams and frees it (and any graph it still holds). */
void sc_capture_end(struct CUctx_st *ctx, struct sc_capture *c)
{
	struct sc_capture **pp;
	struct CUstream_st *s;

	for (s = ctx->streams; s; s = s->next)
		if (s->cap == c)
			s->cap = NULL;
	pthread_mutex_lock(&sc_cap_lock);
	for (pp = &sc_caps; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	atomic_fetch_sub(&sc_ncaps, 1);
	pthread_mutex_unlock(&sc_cap_lock);
	if (c->graph) {
		sc_oplist_fini(&c->graph->l);
		free(c->graph);
	}
	free(c);
}

/*
 * -EPERM if a capture forbids potentially unsafe calls in the calling
 * thread now (see the file comment), else 0.
 */
int sc_capture_unsafe(void)
{
	struct sc_capture *c;
	int rc = 0;

	if (!atomic_load(&sc_ncaps))
		return 0;
	pthread_mutex_lock(&sc_cap_lock);
	for (c = sc_caps; c && rc == 0; c = c->next)
		if (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
		    (c->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
		     pthread_equal(c->thread, pthread_self())))
			rc = -EPERM;
	pthread_mutex_unlock(&sc_cap_lock);
	return rc;
}

static CUresult sc_begin_capture(CUstream h, CUstreamCaptureMode mode, bool pt)
{
	struct CUstream_st *s;
	struct sc_capture *c;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	if (s->kind == SC_S_LEGACY) {
		rc = -EPERM;
		goto out;
	}
	if (s->cap) {
		rc = -EBADFD;
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->graph = calloc(1, sizeof(*c->graph));
	if (!c || !c->graph) {
		free(c);
		rc = -ENOMEM;
		goto out;
	}
	c->id = atomic_fetch_add(&sc_cap_ids, 1) + 1;
	c->mode = mode;
	c->thread = pthread_self();
	c->origin = s;
	s->cap = c;
	pthread_mutex_lock(&sc_cap_lock);
	c->next = sc_caps;
	sc_caps = c;
	atomic_fetch_add(&sc_ncaps, 1);
	pthread_mutex_unlock(&sc_cap_lock);
out:
	sc_stream_release(s);
	return sc_result(rc);
}

/* Work submitted to the stream is recorded until cuStreamEndCapture. */
SC_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	return sc_begin_capture(hStream, mode, false);
}

SC_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return sc_begin_capture(hStream, mode, true);
}

static CUresult sc_end_capture(CUstream h, CUgraph *phGraph, bool pt)
{
	struct CUstream_st *s;
	struct sc_capture *c;
	struct CUgraph_st *g = NULL;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	c = s->cap;
	if (!c) {
		rc = -EBADFD;
	} else if (c->origin != s) {
		rc = -ECHILD;
	} else if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
		   !pthread_equal(c->thread, pthread_self())) {
		rc = -EACCES;
	} else {
		if (!c->invalidated) {
			g = c->graph;
			c->graph = NULL;
		}
		sc_capture_end(s->ctx, c);
		rc = g ? sc_handle_add(g, SC_H_GRAPH, NULL) : -ECANCELED;
		if (rc < 0 && g) {
			sc_oplist_fini(&g->l);
			free(g);
		}
	}
	sc_stream_release(s);
	if (rc == 0)
		*phGraph = g;
	else if (rc == -ECANCELED)
		*phGraph = NULL;
	return sc_result(rc);
}

/* Ends the capture begun on this stream; NULL graph if it was invalidated. */
SC_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	return sc_end_capture(hStream, phGraph, false);
}

SC_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return sc_end_capture(hStream, phGraph, true);
}

static CUresult sc_is_capturing(CUstream h, CUstreamCaptureStatus *status, bool pt)
{
	struct CUstream_st *s, *t;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	for (t = s->ctx->streams; s->kind == SC_S_LEGACY && t; t = t->next)
		if (sc_stream_blocking(t) && t->cap)
			rc = -EDEADLK;
	if (rc == 0)
		*status = !s->cap ? CU_STREAM_CAPTURE_STATUS_NONE :
			  s->cap->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED :
						CU_STREAM_CAPTURE_STATUS_ACTIVE;
	sc_stream_release(s);
	return sc_result(rc);
}

SC_EXPORT CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	return sc_is_capturing(hStream, captureStatus, false);
}

SC_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream hStream,
					    CUstreamCaptureStatus *captureStatus)
{
	return sc_is_capturing(hStream, captureStatus, true);
}

SC_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct CUgraph_st *g;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = sc_handle_add(g, SC_H_GRAPH, NULL);
	if (rc < 0) {
		free(g);
		return sc_result(rc);
	}
	*phGraph = g;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hGraph, SC_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	sc_oplist_fini(&hGraph->l);
	free(hGraph);
	return CUDA_SUCCESS;
}

/* An executable graph is a private copy: the graph may change or go. */
SC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
					       unsigned long long flags)
{
	struct CUctx_st *ctx;
	struct CUgraphExec_st *e;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!phGraphExec || !sc_handle_valid(hGraph, SC_H_GRAPH) || (flags & ~0xfull))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->ctx = ctx;
	if (hGraph->l.n) {
		e->l.ops = malloc(hGraph->l.n * sizeof(*e->l.ops));
		if (!e->l.ops) {
			free(e);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		memcpy(e->l.ops, hGraph->l.ops, hGraph->l.n * sizeof(*e->l.ops));
		e->l.n = e->l.cap = hGraph->l.n;
	}
	rc = sc_handle_add(e, SC_H_EXEC, ctx);
	if (rc < 0) {
		sc_exec_free(e);
		return sc_result(rc);
	}
	*phGraphExec = e;
	return CUDA_SUCCESS;
}

/* Frees executable graph @e (already unregistered). */
void sc_exec_free(struct CUgraphExec_st *e)
{
	sc_oplist_fini(&e->l);
	free(e);
}

SC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hGraphExec, SC_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	sc_exec_free(hGraphExec);
	return CUDA_SUCCESS;
}

static CUresult sc_graph_launch(CUgraphExec e, CUstream h, bool pt, bool upload)
{
	struct CUstream_st *s;
	size_t i;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_valid(e, SC_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	for (i = 0; !upload && rc == 0 && i < e->l.n; i++) {
		struct sc_op op = e->l.ops[i];

		rc = sc_stream_op(s, &op, NULL);
	}
	sc_stream_release(s);
	return sc_result(rc);
}

/* Submits the recorded operations to the stream, in order. */
SC_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, false, false);
}

SC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, true, false);
}

/* Nothing to upload: validates and returns (ordered trivially). */
SC_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, false, true);
}

SC_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return sc_graph_launch(hGraphExec, hStream, true, true);
}
