/*
 * Submission of stream work: the implicit synchronisation of the legacy
 * default stream, recording into a capture, and turning an operation into
 * a device command whose data part runs on the executor thread.
 *
 * Design: the legacy stream's rule ("waits for all earlier work of every
 * blocking stream of its context, and blocking streams wait for its
 * earlier work") is kept with WAIT commands launched just before the
 * command that needs them, under the context lock that orders launches,
 * and only when the other stream launched something new since the last
 * such WAIT; the caller never blocks for it. Every operation becomes one
 * KERNEL command whose function (sc_job_run) does the data part, checks
 * device addresses and records faults in the context; once a context has
 * faulted, its remaining commands skip their data part (a dead context
 * computes nothing), except frees and stream callbacks, which report the
 * error. All functions here run with ctx->lock held.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An operation travelling to the executor thread. */
struct sc_job {
	struct CUctx_st *ctx;
	struct sc_op op;
};

/* Frees what @op owns (its staging buffer); any thread. */
void sc_op_fini(struct sc_op *op)
{
	if (op->kind == SC_OP_COPY) {
		free(op->u.copy.staging);
		op->u.copy.staging = NULL;
	}
}

/* Whether @s synchronises with the legacy stream (ctx->lock held). */
bool sc_stream_blocking(const struct CUstream_st *s)
{
	return s->kind != SC_S_LEGACY && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* @n elements of @elem (1, 2 or 4) bytes, each the low bytes of @value. */
static int sc_memset_run(uint8_t *dst, uint32_t value, uint32_t elem, size_t n)
{
	uint16_t v16 = (uint16_t)value;
	uint8_t v8 = (uint8_t)value;
	const void *pattern = elem == 1 ? (const void *)&v8 :
			      elem == 2 ? (const void *)&v16 : (const void *)&value;

	return sf_pattern_run(dst, true, pattern, elem, n * elem);
}

/* The data part of a command, on the executor thread. Always returns 0. */
static int sc_job_run(void *arg)
{
	struct sc_job *j = arg;
	struct sc_op *op = &j->op;
	int dead = atomic_load(&j->ctx->sticky), rc = 0;

	switch (op->kind) {
	case SC_OP_KERNEL:
		if (!dead) {
			sf_mem_access_begin();
			rc = op->u.kernel.def->run(op->u.kernel.params);
			sf_mem_access_end();
		}
		break;
	case SC_OP_COPY:
		if (!dead)
			rc = sf_region_run(&op->u.copy.r);
		break;
	case SC_OP_MEMSET:
		if (!dead)
			rc = sc_memset_run(op->u.memset.dst, op->u.memset.value,
					   op->u.memset.elem, op->u.memset.n);
		break;
	case SC_OP_HOST:
		if (!dead)
			op->u.host.fn(op->u.host.data);
		break;
	case SC_OP_CALLBACK:
		op->u.callback.fn(op->u.callback.handle, sc_result(dead), op->u.callback.data);
		break;
	case SC_OP_WRITE32:
		if (dead)
			break;
		sf_mem_access_begin();
		if (!sf_mem_accessible(op->u.value.addr, 4))
			rc = -EFAULT;
		else
			__atomic_store_n(op->u.value.addr, op->u.value.value, __ATOMIC_SEQ_CST);
		sf_mem_access_end();
		break;
	case SC_OP_FREE:
		if (!sc_pool_freed(op->u.free.ptr))
			sf_mem_release(op->u.free.ptr);
		break;
	default:
		break;
	}
	if (rc < 0)
		sc_ctx_fault(j->ctx, rc);
	sc_op_fini(op);
	free(j);
	return 0;
}

static uint64_t sc_op_ns(const struct sc_op *op)
{
	switch (op->kind) {
	case SC_OP_KERNEL:
		return op->u.kernel.def->duration(op->u.kernel.params);
	case SC_OP_COPY:
		return sf_copy_ns((uint64_t)op->u.copy.r.width * op->u.copy.r.height *
				  op->u.copy.r.depth);
	case SC_OP_MEMSET:
		return sf_copy_ns((uint64_t)op->u.memset.n * op->u.memset.elem);
	default:
		return 0;
	}
}

/*
 * Launches @cmd on @s's queue, after whatever prepared it. Returns 0 or a
 * sim error; *@seq (optional) receives its sequence number.
 */
int sc_stream_launch(struct CUstream_st *s, const struct sim_cmd *cmd, uint64_t *seq)
{
	uint64_t sq;
	int rc = sf_hwq_launch(s->q, cmd, &sq);

	if (rc < 0)
		return rc;
	s->last = sq;
	if (seq)
		*seq = sq;
	return 0;
}

/* Makes @s wait for command @seq of queue @q (no-op on its own queue or seq 0). */
int sc_wait_cmd(struct CUstream_st *s, struct sf_hwq *q, uint64_t seq)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_WAIT };

	if (q == s->q || !seq)
		return 0;
	cmd.wait_hwq = q->index;
	cmd.wait_seq = seq;
	return sc_stream_launch(s, &cmd, NULL);
}

static int sc_legacy_prepare(struct CUstream_st *l)
{
	struct CUstream_st *t;
	int rc;

	for (t = l->ctx->streams; t; t = t->next) {
		if (sc_stream_blocking(t) && t->cap) {
			sc_capture_invalidate(t->cap);
			return -EDEADLK;
		}
	}
	for (t = l->ctx->streams; t; t = t->next) {
		if (!sc_stream_blocking(t) || t->last <= t->synced)
			continue;
		rc = sc_wait_cmd(l, t->q, t->last);
		if (rc < 0)
			return rc;
		t->synced = t->last;
	}
	return 0;
}

/*
 * Prepares @s (not capturing) for a new command: fails with the context's
 * sticky fault, and adds the WAITs of a context-wide wait not seen yet
 * (cuCtxWaitEvent, cuGreenCtxWaitEvent: sc_green.c) and of the legacy
 * stream's implicit synchronisation. -EDEADLK (invalidating the capture)
 * if @s is the legacy stream while a blocking stream of the context
 * captures.
 */
int sc_stream_prepare(struct CUstream_st *s)
{
	struct CUstream_st *l = s->ctx->legacy, *b = s->ctx->wait_join;
	int rc = atomic_load(&s->ctx->sticky);

	if (rc)
		return rc;
	if (b && b != s && b->last > s->barrier_seen) {
		rc = sc_wait_cmd(s, b->q, b->last);
		if (rc < 0)
			return rc;
		s->barrier_seen = b->last;
	}
	if (s->kind == SC_S_LEGACY)
		return sc_legacy_prepare(s);
	if (!sc_stream_blocking(s) || !l || l->last <= s->legacy_seen)
		return 0;
	rc = sc_wait_cmd(s, l->q, l->last);
	if (rc == 0)
		s->legacy_seen = l->last;
	return rc;
}

/*
 * Submits @op to @s: recorded if @s captures (*@seq = 0), else launched
 * after sc_stream_prepare() (*@seq = its command). Takes ownership of what
 * @op owns in every case; an op owning a staging buffer is never given to
 * a capturing stream. Returns 0, the sticky fault, -EDEADLK, -ENOMEM.
 */
int sc_stream_op(struct CUstream_st *s, struct sc_op *op, uint64_t *seq)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_KERNEL, .fn = sc_job_run };
	struct sc_job *j;
	int rc;

	if (seq)
		*seq = 0;
	if (s->cap) {
		rc = sc_capture_add(s->cap, op);
		sc_op_fini(op);
		return rc;
	}
	rc = sc_stream_prepare(s);
	if (rc < 0)
		goto fail;
	if (op->kind == SC_OP_WAIT32)
		return sc_waitval_launch(s, op, seq);
	j = malloc(sizeof(*j));
	if (!j) {
		rc = -ENOMEM;
		goto fail;
	}
	j->ctx = s->ctx;
	j->op = *op;
	cmd.arg = j;
	cmd.duration_ns = sc_op_ns(op);
	rc = sc_stream_launch(s, &cmd, seq);
	if (rc == 0)
		return 0;
	free(j);
fail:
	sc_op_fini(op);
	return rc;
}
