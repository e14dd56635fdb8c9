/*
 * Stream memory operations of the simulated CUDA driver:
 * cuStreamWriteValue32 (an ordered 32-bit store) and cuStreamWaitValue32
 * (the stream waits until a 32-bit word meets a condition).
 *
 * Design: a wait must block its stream without holding the simulated
 * engine, or a write that another stream makes later could never run. So
 * the stream gets a WAIT command on a private "gate" queue for a command
 * the gate does not have yet; a driver thread (started on first use)
 * watches the word once the stream reached the wait, and when the
 * condition holds it launches that command on the gate, which releases the
 * stream. The word is polled (as a GPU polls memory), with a backoff from
 * 1 us to 100 us between looks; a new wait wakes the thread at once.
 * Simplifications: the condition is evaluated on the host, so the release
 * lags the write by up to the backoff; the FLUSH flag is accepted and has
 * no effect; a context that faulted releases its waits (its work no longer
 * computes); destroying a context waits for its streams, so an unsatisfied
 * wait blocks it, as it would hang a real one.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#define SC_WV_BACKOFF_MIN_NS 1000u
#define SC_WV_BACKOFF_MAX_NS 100000u

/* One pending wait. */
struct sc_watch {
	struct CUctx_st *ctx;
	struct sc_hwq *q;             /* the stream's queue */
	uint64_t after;               /* the stream reached the wait once q finished this */
	uint32_t *addr;
	uint32_t value;
	uint32_t cond;
	struct sc_hwq *gate;          /* its next command releases the stream */
	struct sc_watch *next;
};

static pthread_mutex_t sc_wv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sc_wv_cond;
static struct sc_watch *sc_watches;   /* sc_wv_lock */
static bool sc_wv_started;            /* sc_wv_lock */

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

/* Whether @w can release its stream now; records a fault if its word is gone. */
static bool sc_wv_ready(struct sc_watch *w)
{
	if (atomic_load(&w->ctx->sticky))
		return true;
	if (!sc_hwq_done(w->q, w->after))
		return false;
	if (!sc_mem_accessible(w->addr, sizeof(*w->addr))) {
		sc_ctx_fault(w->ctx, -EFAULT);
		return true;
	}
	return sc_wv_met(w);
}

static void sc_wv_release(struct sc_watch *w)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_EVENT };

	sc_hwq_launch(w->gate, &cmd, NULL);
	sc_hwq_put(w->gate);
	free(w);
}

static void *sc_wv_main(void *arg)
{
	uint64_t backoff = SC_WV_BACKOFF_MIN_NS;

	(void)arg;
	pthread_mutex_lock(&sc_wv_lock);
	for (;;) {
		struct sc_watch **pp = &sc_watches;
		bool progressed = false;
		struct timespec ts;

		while (!sc_watches) {
			pthread_cond_wait(&sc_wv_cond, &sc_wv_lock);
			backoff = SC_WV_BACKOFF_MIN_NS;
		}
		while (*pp) {
			struct sc_watch *w = *pp;

			if (sc_wv_ready(w)) {
				*pp = w->next;
				sc_wv_release(w);
				progressed = true;
			} else {
				pp = &w->next;
			}
		}
		if (!sc_watches)
			continue;
		backoff = progressed ? SC_WV_BACKOFF_MIN_NS :
			  backoff * 2 > SC_WV_BACKOFF_MAX_NS ? SC_WV_BACKOFF_MAX_NS : backoff * 2;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)backoff;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sc_wv_cond, &sc_wv_lock, &ts);
	}
	return NULL;
}

/* Starts the watcher thread once. sc_wv_lock held. */
static int sc_wv_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (sc_wv_started)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sc_wv_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	rc = pthread_create(&t, &attr, sc_wv_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		pthread_cond_destroy(&sc_wv_cond);
		return -rc;
	}
	sc_wv_started = true;
	return 0;
}

/*
 * Launches the wait @op (SC_OP_WAIT32) on prepared stream @s (ctx->lock
 * held): a WAIT on a fresh gate queue, which the watcher releases.
 */
int sc_waitval_launch(struct CUstream_st *s, const struct sc_op *op, uint64_t *seq)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_WAIT };
	struct sc_watch *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	pthread_mutex_lock(&sc_wv_lock);
	rc = sc_wv_start();
	pthread_mutex_unlock(&sc_wv_lock);
	if (rc == 0)
		rc = sc_hwq_get(&w->gate);
	if (rc < 0) {
		free(w);
		return rc;
	}
	w->ctx = s->ctx;
	w->q = s->q;
	w->after = s->q->launched;
	w->addr = op->u.value.addr;
	w->value = op->u.value.value;
	w->cond = op->u.value.flags & 0x3;
	cmd.wait_hwq = w->gate->index;
	cmd.wait_seq = w->gate->launched + 1;
	rc = sc_stream_launch(s, &cmd, seq);
	if (rc < 0) {
		sc_hwq_put(w->gate);
		free(w);
		return rc;
	}
	pthread_mutex_lock(&sc_wv_lock);
	w->next = sc_watches;
	sc_watches = w;
	pthread_cond_signal(&sc_wv_cond);
	pthread_mutex_unlock(&sc_wv_lock);
	return 0;
}

/* A 4-byte aligned word of registered (device or pinned) memory. */
static int sc_word(CUdeviceptr addr)
{
	enum sc_mem_kind kind;

	if ((addr & 3) || sc_mem_classify((void *)(uintptr_t)addr, 4, &kind) < 0 ||
	    kind == SC_MEM_PAGEABLE)
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
