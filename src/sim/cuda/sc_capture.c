/*
 * Stream capture of the simulated CUDA driver.
 *
 * Design: a capture records each operation as a node of its graph
 * (sc_graph.c) that depends on the node recorded before it. Capture across
 * streams (a stream joins by waiting for an event recorded in the capture)
 * records every stream's work into the one chain, in call order: the graph
 * is a linearisation of the captured DAG, so it keeps every dependency and
 * adds some. Not captured: stream callbacks, stream-ordered allocation and
 * free, external event nodes (those calls fail with the capture error and
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

/*
 * Records a copy of @op (owning nothing) into capture @c. ctx->lock held.
 * Returns 0, -ECANCELED once the capture was invalidated, -ENOMEM (which
 * invalidates it).
 */
int sc_capture_add(struct sc_capture *c, const struct sc_op *op)
{
	struct CUgraphNode_st *n;
	int rc;

	if (c->invalidated)
		return -ECANCELED;
	rc = sc_node_new(c->graph, CU_GRAPH_NODE_TYPE_EMPTY, c->last ? &c->last : NULL,
			 c->last ? 1 : 0, &n);
	if (rc == 0)
		rc = sc_node_from_op(n, op);
	if (rc == 0)
		c->last = n;
	else
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
	sc_graph_free(c->graph);
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
	if (!c || sc_graph_new(&c->graph, NULL) < 0) {
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
			sc_graph_free(g);
			g = NULL;
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
