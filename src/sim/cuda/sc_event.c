/*
 * Events of the simulated CUDA driver: create, record, query, synchronise,
 * elapsed time, and cuStreamWaitEvent.
 *
 * Design: recording launches an EVENT command, which stamps the device
 * time into a slot of its queue's timestamp ring (sf_hwq.c); the event
 * only remembers the queue, the command's sequence number and the slot of
 * its last record, so an event can be re-recorded, destroyed or waited on
 * while older records are still pending without the device ever writing
 * into freed memory. A stream waits for an event with a WAIT command on
 * that (queue, seq). During stream capture, a record marks the event as
 * belonging to the capture, and a stream that waits for such an event
 * joins the capture (fork/join capture; see sc_capture.c).
 *
 * Limit: a timestamp stays in its ring until SF_STAMPS later records on
 * the same queue (cuEventElapsedTime copies it into the event on first
 * use); asked later than that, the elapsed time is CUDA_ERROR_UNKNOWN.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

/* What an event's last record was, read under its context's lock. */
struct sc_evsnap {
	struct sf_hwq *q;
	uint64_t seq;
	uint32_t slot;
	bool have_ts;
	uint64_t ts;
	unsigned flags;
};

SC_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
			       CU_EVENT_INTERPROCESS;
	struct CUctx_st *ctx;
	struct CUevent_st *e;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!phEvent || (Flags & ~known) ||
	    ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->ctx = ctx;
	e->flags = Flags;
	rc = sc_handle_add(e, SC_H_EVENT, ctx);
	if (rc < 0) {
		free(e);
		return sc_result(rc);
	}
	*phEvent = e;
	return CUDA_SUCCESS;
}

/* Destroys at once; a pending record still completes harmlessly. */
SC_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hEvent, SC_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	free(hEvent);
	return CUDA_SUCCESS;
}

/*
 * Launches a record of @ev on @s (ctx->lock held, @s prepared): an EVENT
 * command stamping the device time unless @ev has timing disabled. Fills
 * *@rec for sc_event_set(). Returns 0 or a sim error.
 */
int sc_event_launch(struct CUstream_st *s, CUevent ev, struct sc_evrec *rec)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_EVENT };
	uint64_t expect = s->q->launched + 1, seq;
	uint32_t slot = 0;
	int rc;

	if (!(ev->flags & CU_EVENT_DISABLE_TIMING))
		cmd.timestamp = sf_hwq_stamp(s->q, expect, &slot);
	rc = sc_stream_launch(s, &cmd, &seq);
	if (rc < 0)
		return rc;
	rec->q = s->q;
	rec->seq = seq;
	rec->slot = seq == expect ? slot : SF_STAMPS;
	return 0;
}

/* Makes @rec @ev's last record; the lock of @ev's context is held. */
static void sc_event_set_locked(CUevent ev, const struct sc_evrec *rec)
{
	ev->q = rec->q;
	ev->seq = rec->seq;
	ev->slot = rec->slot;
	ev->have_ts = false;
	ev->cap_id = 0;
}

/* The same, taking the lock of @ev's context (no context lock held). */
void sc_event_set(CUevent ev, const struct sc_evrec *rec)
{
	pthread_mutex_lock(&ev->ctx->lock);
	sc_event_set_locked(ev, rec);
	pthread_mutex_unlock(&ev->ctx->lock);
}

/*
 * An event may be recorded on any stream of its context, or of a green
 * context of the same primary (whose events those are): then the record
 * is launched under the stream's context lock and noted under the
 * event's, the two never held at once.
 */
static CUresult sc_event_record(CUevent ev, CUstream h, unsigned int flags, bool pt)
{
	struct sc_evrec rec;
	struct CUstream_st *s;
	bool other = false;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc_handle_valid(ev, SC_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	if (sc_ctx_root(ev->ctx) != sc_ctx_root(s->ctx)) {
		rc = -EBADF;
	} else if (s->cap) {
		/* External record nodes, and events of another context, are not
		 * supported in a capture. */
		if ((flags & CU_EVENT_RECORD_EXTERNAL) || ev->ctx != s->ctx)
			rc = -EOPNOTSUPP;
		else
			ev->cap_id = s->cap->id;
	} else if ((rc = sc_stream_prepare(s)) == 0 &&
		   (rc = sc_event_launch(s, ev, &rec)) == 0) {
		other = ev->ctx != s->ctx;
		if (!other)
			sc_event_set_locked(ev, &rec);
	}
	sc_stream_release(s);
	if (other)
		sc_event_set(ev, &rec);
	return sc_result(rc);
}

SC_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	return sc_event_record(hEvent, hStream, 0, false);
}

SC_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return sc_event_record(hEvent, hStream, 0, true);
}

/* CU_EVENT_RECORD_EXTERNAL is accepted outside capture only. */
SC_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	return sc_event_record(hEvent, hStream, flags, false);
}

SC_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
					       unsigned int flags)
{
	return sc_event_record(hEvent, hStream, flags, true);
}

/*
 * Reads @ev's last record. Returns 0, -ENXIO, -EBADF (unknown event),
 * -EPERM (recorded in a capture still in progress).
 */
static int sc_event_snap(CUevent ev, struct sc_evsnap *out)
{
	struct CUctx_st *ctx;
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	if (!sc_handle_valid(ev, SC_H_EVENT))
		return -EBADF;
	ctx = ev->ctx;
	pthread_mutex_lock(&ctx->lock);
	if (ev->cap_id && sc_capture_find(ctx, ev->cap_id))
		rc = -EPERM;
	out->q = ev->q;
	out->seq = ev->seq;
	out->slot = ev->slot;
	out->have_ts = ev->have_ts;
	out->ts = ev->ts;
	out->flags = ev->flags;
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* NOT_READY until the last record was reached; SUCCESS if never recorded. */
SC_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
	struct sc_evsnap e;
	int rc = sc_event_snap(hEvent, &e);

	if (rc < 0)
		return sc_result(rc);
	if (!e.q)
		return CUDA_SUCCESS;
	rc = atomic_load(&hEvent->ctx->sticky);
	if (rc == 0 && !sf_hwq_done(e.q, e.seq))
		rc = -EBUSY;
	return sc_result(rc);
}

SC_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
	struct sc_evsnap e;
	int rc = sc_event_snap(hEvent, &e);

	if (rc < 0)
		return sc_result(rc);
	if (!e.q)
		return CUDA_SUCCESS;
	sf_hwq_wait(e.q, e.seq);
	sc_pool_sync();
	return sc_result(atomic_load(&hEvent->ctx->sticky));
}

/* Device time of @ev's finished last record, cached in the event. */
static int sc_event_time(CUevent ev, const struct sc_evsnap *e, uint64_t *ns)
{
	int rc;

	if (e->have_ts) {
		*ns = e->ts;
		return 0;
	}
	if (e->slot >= SF_STAMPS)
		return -EOVERFLOW;
	rc = sf_hwq_stamp_read(e->q, e->slot, e->seq, ns);
	if (rc < 0)
		return -EOVERFLOW;
	pthread_mutex_lock(&ev->ctx->lock);
	if (ev->q == e->q && ev->seq == e->seq) {
		ev->have_ts = true;
		ev->ts = *ns;
	}
	pthread_mutex_unlock(&ev->ctx->lock);
	return 0;
}

static CUresult sc_elapsed(float *ms, CUevent start, CUevent end)
{
	struct sc_evsnap a, b;
	uint64_t ta, tb;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_event_snap(start, &a);
	if (rc == 0)
		rc = sc_event_snap(end, &b);
	if (rc < 0)
		return sc_result(rc);
	if (!a.q || !b.q || ((a.flags | b.flags) & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!sf_hwq_done(a.q, a.seq) || !sf_hwq_done(b.q, b.seq))
		return CUDA_ERROR_NOT_READY;
	rc = sc_event_time(start, &a, &ta);
	if (rc == 0)
		rc = sc_event_time(end, &b, &tb);
	if (rc < 0)
		return sc_result(rc);
	*ms = (float)(((double)tb - (double)ta) / 1e6);
	return CUDA_SUCCESS;
}

/* Milliseconds between two finished records, from device timestamps. */
SC_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return sc_elapsed(pMilliseconds, hStart, hEnd);
}

/* The pre-12.8 entry point: same answer. */
SC_EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return sc_elapsed(pMilliseconds, hStart, hEnd);
}

/*
 * Makes @s (locked) wait for @ev's last record (read under the same lock
 * when both share a context; an event of another context only by its
 * queue and sequence number, read before).
 */
static int sc_wait_event(struct CUstream_st *s, CUevent ev, const struct sc_evsnap *other,
			 unsigned int flags)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_WAIT };
	struct sc_capture *cap = NULL;
	struct sf_hwq *q = other ? other->q : ev->q;
	uint64_t seq = other ? other->seq : ev->seq;
	int rc;

	if (!other && ev->cap_id)
		cap = sc_capture_find(s->ctx, ev->cap_id);
	if (s->cap) {
		if (cap == s->cap)
			return 0;
		if (!cap && (flags & CU_EVENT_WAIT_EXTERNAL))
			return -EOPNOTSUPP;
		sc_capture_invalidate(s->cap);
		return cap ? -EMLINK : -EXDEV;
	}
	if (cap) {
		s->cap = cap;   /* joins the capture */
		return 0;
	}
	if (!q || q == s->q)
		return 0;
	rc = sc_stream_prepare(s);
	if (rc < 0)
		return rc;
	cmd.wait_hwq = q->index;
	cmd.wait_seq = seq;
	return sc_stream_launch(s, &cmd, NULL);
}

static CUresult sc_stream_wait_event(CUstream h, CUevent ev, unsigned int flags, bool pt)
{
	struct CUstream_st *s;
	struct sc_evsnap snap;
	struct CUctx_st *ctx;
	bool foreign;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc_handle_valid(ev, SC_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	ctx = ev->ctx;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	foreign = s->ctx != ctx;
	if (foreign) {
		/* Two context locks are never held at once. */
		sc_stream_release(s);
		rc = sc_event_snap(ev, &snap);
		if (rc == -EPERM)
			rc = 0;         /* a foreign capture never joins ours */
		if (rc == 0)
			rc = sc_stream_acquire(h, pt, &s);
		if (rc < 0)
			return sc_result(rc);
	}
	rc = sc_wait_event(s, ev, foreign ? &snap : NULL, flags);
	sc_stream_release(s);
	return sc_result(rc);
}

SC_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return sc_stream_wait_event(hStream, hEvent, Flags, false);
}

SC_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return sc_stream_wait_event(hStream, hEvent, Flags, true);
}
