/*
 * Stream memory operations of the simulated CUDA driver:
 * cuStreamWriteValue32 (an ordered 32-bit store) and cuStreamWaitValue32
 * (the stream waits until a 32-bit word meets a condition).
 *
 * Design: a wait must block its stream without holding the simulated
 * engine, or a write that another stream makes later could never run. So
 * the stream waits on a gate that the shared watcher thread releases
 * (src/sim/common/sf_watch.c) once the stream reached the wait and the word
 * meets the condition; the word is polled (as a GPU polls memory).
 * Simplifications: the condition is evaluated on the host, so the release
 * lags the write by up to the watcher's backoff; the FLUSH flag is
 * accepted and has no effect; a context that faulted releases its waits
 * (its work no longer computes); destroying a context waits for its
 * streams, so an unsatisfied wait blocks it, as it would hang a real one.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

/* One pending wait. */
struct sc_watch {
	struct sf_watch base;         /* first: the watcher frees the whole */
	struct CUctx_st *ctx;
	struct sf_hwq *q;             /* the stream's queue */
	uint64_t after;               /* the stream reached the wait once q finished this */
	uint32_t *addr;
	uint32_t value;
	uint32_t cond;
};

static bool sc_wv_met(const struct sc_watch *w)
{
	uint32_t v = __atomic_load_n(w->addr, __ATOMIC_ACQUIRE);

	switch (w->cond) {
	case CU_STREAM_WAIT_VALUE_GEQ:
		return (int32_t)(v - w->value) >= 0;
	case CU_STREAM_WAIT_VALUE_EQ:
		return v == w->value;
	case CU_STREAM_WAIT_VALUE_AND:
		return (v & w->value) != 0;
	default:
		return ~(v | w->value) != 0;
	}
}

/*
 * Whether the wait can release its stream now; records a fault if its word
 * is gone. The watcher thread, under its lock (leaf locks only).
 */
static bool sc_wv_ready(struct sf_watch *base)
{
	struct sc_watch *w = (struct sc_watch *)base;
	bool met;

	if (atomic_load(&w->ctx->sticky))
		return true;
	if (!sf_hwq_done(w->q, w->after))
		return false;
	sf_mem_access_begin();
	if (!sf_mem_accessible(w->addr, sizeof(*w->addr))) {
		sf_mem_access_end();
		sc_ctx_fault(w->ctx, -EFAULT);
		return true;
	}
	met = sc_wv_met(w);
	sf_mem_access_end();
	return met;
}

/*
 * Launches the wait @op (SC_OP_WAIT32) on prepared stream @s (ctx->lock
 * held): a WAIT on a fresh gate queue, which the watcher releases.
 */
int sc_waitval_launch(struct CUstream_st *s, const struct sc_op *op, uint64_t *seq)
{
	struct sim_cmd cmd;
	struct sc_watch *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	w->base.ready = sc_wv_ready;
	w->base.poll = true;
	w->ctx = s->ctx;
	w->q = s->q;
	w->after = s->q->launched;
	w->addr = op->u.value.addr;
	w->value = op->u.value.value;
	w->cond = op->u.value.flags & 0x3;
	rc = sf_watch_prepare(sc_drv.dev, &w->base, &cmd);
	if (rc < 0) {
		free(w);
		return rc;
	}
	rc = sc_stream_launch(s, &cmd, seq);
	if (rc < 0) {
		sf_watch_cancel(&w->base);
		free(w);
		return rc;
	}
	sf_watch_arm(&w->base);
	return 0;
}

/* A 4-byte aligned word of registered (device or pinned) memory. */
static int sc_word(CUdeviceptr addr)
{
	enum sf_mem_kind kind;

	if ((addr & 3) || sf_mem_classify((void *)(uintptr_t)addr, 4, &kind) < 0 ||
	    kind == SF_MEM_PAGEABLE)
		return -EINVAL;
	return 0;
}

static CUresult sc_value_op(CUstream h, bool pt, uint32_t kind, CUdeviceptr addr,
			    cuuint32_t value, unsigned int flags, unsigned int known)
{
	struct sc_op op = { .kind = kind };
	struct CUstream_st *s;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if ((flags & ~known) || sc_word(addr) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	op.u.value.addr = (uint32_t *)(uintptr_t)addr;
	op.u.value.value = value;
	op.u.value.flags = flags;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	rc = sc_stream_op(s, &op, NULL);
	sc_stream_release(s);
	return sc_result(rc);
}

/* An ordered, atomic 32-bit store when the stream reaches it. */
SC_EXPORT CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
					   unsigned int flags)
{
	return sc_value_op(stream, false, SC_OP_WRITE32, addr, value, flags,
			   CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
}

SC_EXPORT CUresult cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr,
						cuuint32_t value, unsigned int flags)
{
	return sc_value_op(stream, true, SC_OP_WRITE32, addr, value, flags,
			   CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
}

/* See the file comment for how the wait is simulated. */
SC_EXPORT CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
					  unsigned int flags)
{
	return sc_value_op(stream, false, SC_OP_WAIT32, addr, value, flags,
			   0x3u | CU_STREAM_WAIT_VALUE_FLUSH);
}

SC_EXPORT CUresult cuStreamWaitValue32_v2_ptsz(CUstream stream, CUdeviceptr addr,
					       cuuint32_t value, unsigned int flags)
{
	return sc_value_op(stream, true, SC_OP_WAIT32, addr, value, flags,
			   0x3u | CU_STREAM_WAIT_VALUE_FLUSH);
}
