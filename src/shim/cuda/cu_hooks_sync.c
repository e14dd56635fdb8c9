/*
 * Entry points that synchronise, create or destroy, and the events: the
 * other half of the scheduled driver API (see cu_hooks.c for the model).
 *
 * Synchronous calls wait for what the driver would have made them wait
 * for, then go to the driver: a stream synchronisation for its queue,
 * cuMemFree and cuCtxSynchronize for every queue of the context (the
 * synchronous copies and memsets are generic hooks, cu_passes.c). Event
 * queries and synchronisations answer for the record the application
 * made, buffered or not.
 *
 * Context-wide calls: cuGreenCtxRecordEvent and cuCtxRecordEvent capture
 * the work of every stream of a context made so far, so what its queues
 * buffered is launched first. cuGreenCtxWaitEvent and cuCtxWaitEvent hold
 * back the work submitted after them: what was submitted before is
 * launched first, or the wait would hold it back too (a deadlock if the
 * event depends on it), and so is the event's own record if still
 * buffered, or the driver would wait for an older record of the event. A
 * primary context's record and wait cover its green contexts. Launching
 * waits while a queue is suspended: these calls are rare next to launches.
 * A green context's streams are recorded when they are created
 * (cuGreenCtxStreamCreate, through which CUDA 13.1's runtime execution
 * contexts also reach the driver).
 */
#include "shim/cuda/cu_cmds.h"
#include "shim/cuda/cu_events.h"
#include "shim/cuda/cu_evict.h"
#include "shim/cuda/cu_mem.h"

#include <stdint.h>

static bool scheduling(void)
{
	return cu_load() == 0 && !cu_passthrough();
}

/* --- streams --------------------------------------------------------------- */

XS_CU_HOOK CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuStreamCreate(ph, flags);
	if (rc == CUDA_SUCCESS && scheduling())
		cs_stream_created(*ph, flags, 0);
	return rc;
}

XS_CU_HOOK CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuStreamCreateWithPriority(ph, flags, prio);
	/* The driver clamps the priority to the device's range: ask it. */
	if (rc == CUDA_SUCCESS && scheduling()) {
		if (cu_real.cuStreamGetPriority(*ph, &prio) != CUDA_SUCCESS)
			prio = 0;
		cs_stream_created(*ph, flags, prio);
	}
	return rc;
}

/* The first version, same semantics. */
CUresult cuStreamDestroy(CUstream h);

XS_CU_HOOK CUresult cuStreamDestroy(CUstream h)
{
	return cuStreamDestroy_v2(h);
}

XS_CU_HOOK CUresult cuStreamDestroy_v2(CUstream h)
{
	CUresult err;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Buffered work must reach the driver before its stream goes. */
	err = scheduling() ? cs_stream_destroyed(h) : CUDA_SUCCESS;
	(void)err;
	return cu_real.cuStreamDestroy_v2(h);
}

static CUresult do_cuStreamSynchronize(bool ptsz, CUstream h)
{
	struct cs_stream *s = scheduling() ? cs_stream_of(h, ptsz) : NULL;
	CUresult err;

	if (s) {
		err = cs_sync(s);
		if (err != CUDA_SUCCESS)
			return err;
	}
	err = REAL(ptsz, cuStreamSynchronize, "_ptsz")(s ? s->real : cs_real_handle(h, ptsz));
	cu_mem_pools_update();   /* a pool may give back reserve here */
	return err;
}

XS_CU_PAIR(CUresult, cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream h), h)

static CUresult do_cuStreamQuery(bool ptsz, CUstream h)
{
	struct cs_stream *s = scheduling() ? cs_stream_of(h, ptsz) : NULL;

	if (s) {
		CUresult rc = cs_query(s);

		if (rc != CUDA_SUCCESS)
			return rc;
	}
	return REAL(ptsz, cuStreamQuery, "_ptsz")(s ? s->real : cs_real_handle(h, ptsz));
}

XS_CU_PAIR(CUresult, cuStreamQuery, cuStreamQuery_ptsz, (CUstream h), h)

/*
 * A capture records what the stream receives from now on: what was
 * submitted before must reach the driver first, and later work goes
 * straight to it until the capture ends.
 */
static CUresult do_cuStreamBeginCapture_v2(bool ptsz, CUstream h, CUstreamCaptureMode mode)
{
	struct cs_stream *s = scheduling() ? cs_stream_of(h, ptsz) : NULL;
	CUresult rc;

	if (s)
		cs_flush(s);
	rc = REAL(ptsz, cuStreamBeginCapture_v2, "_ptsz")(s ? s->real : cs_real_handle(h, ptsz), mode);
	if (rc == CUDA_SUCCESS && s)
		atomic_store(&s->capturing, true);
	return rc;
}

XS_CU_PAIR(CUresult, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz,
	   (CUstream h, CUstreamCaptureMode mode), h, mode)

/* The first version: a capture in the global mode. */
static CUresult do_cuStreamBeginCapture(bool ptsz, CUstream h)
{
	return do_cuStreamBeginCapture_v2(ptsz, h, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture(CUstream h);
XS_CU_PAIR(CUresult, cuStreamBeginCapture, cuStreamBeginCapture_ptsz, (CUstream h), h)

/*
 * Capture into an existing graph: the same treatment; the extra arguments
 * (nodes, edges) pass through untyped.
 */
typedef CUresult (*capture_to_graph_fn)(CUstream h, CUgraph g, const void *deps,
					const void *edges, size_t n, CUstreamCaptureMode mode);

static CUresult do_cuStreamBeginCaptureToGraph(bool ptsz, CUstream h, CUgraph g,
					       const void *deps, const void *edges, size_t n,
					       CUstreamCaptureMode mode)
{
	capture_to_graph_fn real = (capture_to_graph_fn)cu_real_sym(
		ptsz ? "cuStreamBeginCaptureToGraph_ptsz" : "cuStreamBeginCaptureToGraph");
	struct cs_stream *s = scheduling() ? cs_stream_of(h, ptsz) : NULL;
	CUresult rc;

	if (!real)
		return cu_load() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_NOT_FOUND;
	if (s)
		cs_flush(s);
	rc = real(s ? s->real : cs_real_handle(h, ptsz), g, deps, edges, n, mode);
	if (rc == CUDA_SUCCESS && s)
		atomic_store(&s->capturing, true);
	return rc;
}

CUresult cuStreamBeginCaptureToGraph(CUstream h, CUgraph g, const void *deps,
				     const void *edges, size_t n, CUstreamCaptureMode mode);
XS_CU_PAIR(CUresult, cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph_ptsz,
	   (CUstream h, CUgraph g, const void *deps, const void *edges, size_t n,
	    CUstreamCaptureMode mode),
	   h, g, deps, edges, n, mode)

/* The stream is capturing, so cs_stream_of() would not return it. */
static struct cs_stream *capturing_stream(CUstream h, bool ptsz)
{
	struct cs_stream *s;

	if (!scheduling())
		return NULL;
	s = cs_stream_of_any(h, ptsz);
	return s && atomic_load(&s->capturing) ? s : NULL;
}

static CUresult do_cuStreamEndCapture(bool ptsz, CUstream h, CUgraph *g)
{
	struct cs_stream *s = capturing_stream(h, ptsz);
	CUresult rc = REAL(ptsz, cuStreamEndCapture, "_ptsz")(s ? s->real : cs_real_handle(h, ptsz), g);

	if (s)
		atomic_store(&s->capturing, false);
	return rc;
}

XS_CU_PAIR(CUresult, cuStreamEndCapture, cuStreamEndCapture_ptsz, (CUstream h, CUgraph *g),
	   h, g)

/* --- events ------------------------------------------------------------------ */

XS_CU_HOOK CUresult cuEventCreate(CUevent *ev, unsigned int flags)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuEventCreate(ev, flags);
	if (rc == CUDA_SUCCESS && scheduling())
		ev_created(*ev);
	return rc;
}

/* Events the driver does not know go to it, which refuses them. */
static struct cs_stream *event_stream(CUevent ev, CUstream h, bool ptsz)
{
	return ev && scheduling() && ev_known(ev) ? cs_stream_of(h, ptsz) : NULL;
}

static CUresult do_cuEventRecord(bool ptsz, CUevent ev, CUstream h)
{
	struct cs_stream *s = event_stream(ev, h, ptsz);
	struct xal_cuda_cmd *c;
	uint64_t seq;
	CUresult rc;

	if (s && (c = cmd_event_record(s, ev, 0, false))) {
		rc = cs_submit(s, c, &seq);
		if (rc == CUDA_SUCCESS)
			ev_recorded(ev, s->q, seq);
		return rc;
	}
	/* Not buffered (the stream is not scheduled, or no memory): the
	 * driver records, behind what the stream buffered. */
	return ev_recorded_by_driver(REAL(ptsz, cuEventRecord, "_ptsz")(ev, cs_direct(s, h, ptsz)),
				     ev);
}

XS_CU_PAIR(CUresult, cuEventRecord, cuEventRecord_ptsz, (CUevent ev, CUstream h), ev, h)

static CUresult do_cuEventRecordWithFlags(bool ptsz, CUevent ev, CUstream h, unsigned flags)
{
	struct cs_stream *s = event_stream(ev, h, ptsz);
	struct xal_cuda_cmd *c;
	uint64_t seq;
	CUresult rc;

	if (s && (c = cmd_event_record(s, ev, flags, true))) {
		rc = cs_submit(s, c, &seq);
		if (rc == CUDA_SUCCESS)
			ev_recorded(ev, s->q, seq);
		return rc;
	}
	return ev_recorded_by_driver(REAL(ptsz, cuEventRecordWithFlags, "_ptsz")(
					     ev, cs_direct(s, h, ptsz), flags), ev);
}

XS_CU_PAIR(CUresult, cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz,
	   (CUevent ev, CUstream h, unsigned flags), ev, h, flags)

static CUresult do_cuStreamWaitEvent(bool ptsz, CUstream h, CUevent ev, unsigned flags)
{
	struct cs_stream *s = event_stream(ev, h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_wait_event(s, ev, flags)))
		return cs_submit(s, c, NULL);
	/* The driver waits for the record it knows: the buffered one first. */
	if (ev && scheduling())
		ev_launch_record(ev);
	return REAL(ptsz, cuStreamWaitEvent, "_ptsz")(cs_direct(s, h, ptsz), ev, flags);
}

XS_CU_PAIR(CUresult, cuStreamWaitEvent, cuStreamWaitEvent_ptsz,
	   (CUstream h, CUevent ev, unsigned flags), h, ev, flags)

/* Whether @ev's last scheduled record completed; NOT_READY if not yet. */
static CUresult ev_state(CUevent ev, bool wait)
{
	struct cs_queue *q;
	uint64_t seq;

	if (!scheduling() || !ev_last(ev, &q, &seq))
		return CUDA_SUCCESS;
	if (wait) {
		if (xq_wait(q->xq, seq) < 0)
			return xal_cuda_hwq_error(q->hwq);
		return CUDA_SUCCESS;
	}
	return xq_query(q->xq, seq) == 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

XS_CU_HOOK CUresult cuEventQuery(CUevent ev)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = ev ? ev_state(ev, false) : CUDA_SUCCESS;
	return rc != CUDA_SUCCESS ? rc : cu_real.cuEventQuery(ev);
}

XS_CU_HOOK CUresult cuEventSynchronize(CUevent ev)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = ev ? ev_state(ev, true) : CUDA_SUCCESS;
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = cu_real.cuEventSynchronize(ev);
	cu_mem_pools_update();
	return rc;
}

XS_CU_HOOK CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (a && (rc = ev_state(a, false)) != CUDA_SUCCESS)
		return rc;
	if (b && (rc = ev_state(b, false)) != CUDA_SUCCESS)
		return rc;
	return cu_real.cuEventElapsedTime_v2(ms, a, b);
}

/* The CUDA 12 entry point of the same call. */
__typeof__(cuEventElapsedTime_v2) cuEventElapsedTime;

XS_CU_HOOK CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	static __typeof__(&cuEventElapsedTime) real;
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!real)
		real = (__typeof__(&cuEventElapsedTime))cu_real_sym("cuEventElapsedTime");
	if (a && (rc = ev_state(a, false)) != CUDA_SUCCESS)
		return rc;
	if (b && (rc = ev_state(b, false)) != CUDA_SUCCESS)
		return rc;
	return real ? real(ms, a, b) : CUDA_ERROR_NOT_SUPPORTED;
}

XS_CU_HOOK CUresult cuEventDestroy_v2(CUevent ev)
{
	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ev && scheduling()) {
		/* A buffered record must not reach the driver after this. */
		ev_state(ev, true);
		ev_forget(ev);
	}
	return cu_real.cuEventDestroy_v2(ev);
}

/* --- context-wide -------------------------------------------------------------- */

XS_CU_HOOK CUresult cuCtxSynchronize(void)
{
	CUresult err;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	err = scheduling() ? cs_ctx_sync() : CUDA_SUCCESS;
	if (err != CUDA_SUCCESS)
		return err;
	err = cu_real.cuCtxSynchronize();
	cu_mem_pools_update();
	return err;
}

XS_CU_HOOK CUresult cuMemFree_v2(CUdeviceptr p)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* The driver synchronises the context before freeing; so do we,
	 * over the work still buffered. */
	if (scheduling())
		cs_ctx_sync();
	if (!cu_evict_free(p, &rc))
		rc = cu_real.cuMemFree_v2(p);
	if (rc == CUDA_SUCCESS)
		cu_mem_freed(p);
	return rc;
}

/* --- green contexts and context-wide calls -------------------------------------- */

/* The result for an entry point the real driver lacks. */
static CUresult missing(void)
{
	return cu_load() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_NOT_FOUND;
}

/*
 * The green context ignores the current context: the stream's context,
 * flags and (clamped) priority are the driver's to say.
 */
XS_CU_HOOK CUresult cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx,
					   unsigned int flags, int priority)
{
	CUresult rc;

	if (cu_load() < 0 || !cu_real.cuGreenCtxStreamCreate)
		return missing();
	rc = cu_real.cuGreenCtxStreamCreate(phStream, greenCtx, flags, priority);
	if (rc == CUDA_SUCCESS && scheduling())
		cs_stream_adopt(*phStream);
	return rc;
}

/* A green context, also by the context cuCtxFromGreenCtx gives for it. */
struct green_match {
	CUgreenCtx green;
	CUcontext ctx;
};

static bool match_green(CUcontext ctx, CUcontext primary, CUgreenCtx green, const void *arg)
{
	const struct green_match *m = arg;

	(void)primary;
	return (green && green == m->green) || (m->ctx && ctx == m->ctx);
}

/* A context, and the green contexts of a primary one. */
static bool match_ctx(CUcontext ctx, CUcontext primary, CUgreenCtx green, const void *arg)
{
	(void)green;
	return ctx == arg || primary == arg;
}

static void flush_green(CUgreenCtx g)
{
	struct green_match m = { g, NULL };

	if (cu_real.cuCtxFromGreenCtx && cu_real.cuCtxFromGreenCtx(&m.ctx, g) != CUDA_SUCCESS)
		m.ctx = NULL;
	cs_ctx_flush(match_green, &m);
}

XS_CU_HOOK CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent)
{
	if (cu_load() < 0 || !cu_real.cuGreenCtxRecordEvent)
		return missing();
	if (scheduling())
		flush_green(hCtx);
	return ev_recorded_by_driver(cu_real.cuGreenCtxRecordEvent(hCtx, hEvent), hEvent);
}

XS_CU_HOOK CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent)
{
	if (cu_load() < 0 || !cu_real.cuGreenCtxWaitEvent)
		return missing();
	if (scheduling()) {
		ev_launch_record(hEvent);
		flush_green(hCtx);
	}
	return cu_real.cuGreenCtxWaitEvent(hCtx, hEvent);
}

XS_CU_HOOK CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent)
{
	if (cu_load() < 0 || !cu_real.cuCtxRecordEvent)
		return missing();
	if (scheduling() && hCtx)
		cs_ctx_flush(match_ctx, hCtx);
	return ev_recorded_by_driver(cu_real.cuCtxRecordEvent(hCtx, hEvent), hEvent);
}

XS_CU_HOOK CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent)
{
	if (cu_load() < 0 || !cu_real.cuCtxWaitEvent)
		return missing();
	if (scheduling() && hCtx) {
		ev_launch_record(hEvent);
		cs_ctx_flush(match_ctx, hCtx);
	}
	return cu_real.cuCtxWaitEvent(hCtx, hEvent);
}
