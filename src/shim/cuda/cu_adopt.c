/*
 * Streams the CUDA shim meets without having seen them created, green
 * contexts, and the driver calls that act on a whole context.
 *
 * Adoption: a stream handle the shim has no record of can reach it in a
 * launch or any other stream-taking call: a stream created through a
 * private driver table that cudart uses and the shim does not see into,
 * or one created before the shim could schedule. If the driver knows the
 * handle as a stream (cuStreamGetCtx), the shim records it with the
 * context, flags and priority the driver reports and schedules its work
 * like any other stream's from then on. A stream met while it captures
 * (it joined a capture through an event the shim passed on) is left to
 * the driver until the capture is over; a handle the driver refuses goes
 * to it as it is, and the driver reports the error. Green contexts'
 * streams are recorded the same way when they are created
 * (cuGreenCtxStreamCreate, through which CUDA 13.1's runtime execution
 * contexts also reach the driver).
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
 */
#include "shim/cuda/cu_events.h"
#include "shim/cuda/cu_sched.h"

static bool scheduling(void)
{
	return cu_load() == 0 && !cu_passthrough();
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
