/*
 * Streams and contexts as the CUDA shim schedules them.
 *
 * Every stream the application uses maps to an XQueue. Non-blocking
 * streams get one each. The legacy default stream, the blocking streams
 * and the per-thread default streams of a context share one XQueue (the
 * context's "group"): the driver orders those streams implicitly against
 * each other, which stays true only if their commands reach it in the
 * order the application issued them. A per-thread default stream is
 * replaced by a blocking stream of the shim's own, created per thread and
 * context, because the driver resolves CU_STREAM_PER_THREAD on the calling
 * thread and commands may be launched from the XQueue's worker.
 *
 * A stream's XQueue is made when the stream is first used, not when it is
 * created: frameworks create pools of streams (per device and priority)
 * and use few of them, and only used ones take a place under the
 * scheduler. A stream the shim never saw created (a green context's made
 * behind its back, one created through a driver table the shim does not
 * see) is adopted when first met, with its context, flags and priority
 * from the driver (cs_stream_adopt()), and from then on scheduled like any
 * other.
 */
#ifndef XS_CU_QUEUES_H
#define XS_CU_QUEUES_H

#include "shim/cuda/cu_shim.h"
#include "shim/common/shim_map.h"
#include "xal/xal_cuda.h"
#include "xqueue/xqueue.h"

#include <stdatomic.h>

struct cs_ctx;

struct cs_stream {
	struct shim_map_node node;      /* first; key: handle (the stream map) */
	CUstream handle;                /* what the application passes */
	CUstream real;                  /* what the driver receives */
	struct cs_ctx *ctx;
	CUcontext cuctx;                /* the driver's context of the stream */
	/* Own (made on first use, then never changed until the stream goes),
	 * or the context's group. */
	struct cs_queue *_Atomic q;
	bool own;
	int prio;                       /* the stream's CUDA priority */
	_Atomic bool capturing;         /* work goes straight to the driver */
};

/*
 * The scheduled stream for the application's @h on this thread: NULL and
 * CU_STREAM_LEGACY name the context's legacy stream, unless @ptsz (a
 * per-thread-default-stream entry point) makes NULL the per-thread stream;
 * CU_STREAM_PER_THREAD always is. A handle met for the first time is
 * adopted (cs_stream_adopt()), and a stream's own queue made on its first
 * use. NULL when the call must go straight to the driver: no current
 * context, a handle the driver does not know, a capture, no memory.
 */
struct cs_stream *cs_stream_of(CUstream h, bool ptsz);

/* As cs_stream_of(), capturing streams included. */
struct cs_stream *cs_stream_of_any(CUstream h, bool ptsz);

/*
 * The handle the driver receives for the application's @h when a call is
 * not scheduled (a capture, for instance): the calling thread's stand-in
 * for its per-thread stream if it has one, else @h itself.
 */
CUstream cs_real_handle(CUstream h, bool ptsz);

/*
 * The handle a call that goes straight to the driver gives it for @h,
 * whose scheduled stream is @s (or NULL): @s's buffered work is launched
 * first, so that the call does not overtake it.
 */
CUstream cs_direct(struct cs_stream *s, CUstream h, bool ptsz);

/* How many XQueues the shim created (diagnostics, cu_testhooks.c). */
int cs_queue_count(void);

/*
 * The identity of @dev that does not depend on this process's ordinals or
 * CUDA_VISIBLE_DEVICES (base/devid.h), into *@id.
 */
void cs_device_identity(CUdevice dev, struct devid *id);

/*
 * Records a stream the application created in the current context. A
 * non-blocking stream has its own XQueue, whose priority hint is the
 * process's (XSCHED_PRIORITY, else 0) minus the stream's CUDA priority
 * @prio (lower CUDA numbers are higher priorities); the other streams
 * share the context's queue.
 */
void cs_stream_created(CUstream h, unsigned int flags, int prio);

/*
 * Records stream @h of driver context @ctx as cs_stream_created() does,
 * unless it is known already. Returns the record, or NULL (no memory, or
 * no state could be made for @ctx). Any thread.
 */
struct cs_stream *cs_stream_add(CUstream h, CUcontext ctx, unsigned int flags, int prio);

/*
 * Adopts @h, a handle the shim has no record of, if the driver knows it as
 * a stream that is not capturing: returns its record (cs_stream_add()), or
 * NULL for the call to go to the driver as it is.
 */
struct cs_stream *cs_stream_adopt(CUstream h);

/*
 * Launches what the queues of every context @match accepts buffered
 * (their streams' and the context group's), waiting while any of them is
 * suspended: for driver calls on a whole context, which must find its
 * earlier work in the driver. @match is called under the stream table's
 * lock with @arg.
 */
typedef bool cs_ctx_match_fn(CUcontext ctx, CUcontext primary, CUgreenCtx green,
			     const void *arg);
void cs_ctx_flush(cs_ctx_match_fn *match, const void *arg);

/*
 * Forgets @h: its buffered work is launched and completed first. Returns
 * the queue's sticky error, else CUDA_SUCCESS.
 */
CUresult cs_stream_destroyed(CUstream h);

/* Submits @c; returns its sequence number in *@seq. */
CUresult cs_submit(struct cs_stream *s, struct xal_cuda_cmd *c, uint64_t *seq);

/* Waits for every command submitted to @s's queue. */
CUresult cs_sync(struct cs_stream *s);

/* CUDA_SUCCESS if everything submitted to @s completed, else NOT_READY. */
CUresult cs_query(struct cs_stream *s);

/*
 * Waits for every queue of the current context (the context's work as
 * cuCtxSynchronize and the implicitly synchronising calls see it).
 */
CUresult cs_ctx_sync(void);

/* Launches everything buffered on @s's queue and waits until it is. */
CUresult cs_flush(struct cs_stream *s);

/* Takes the pending error of @s's queue (reported once). */
CUresult cs_error(struct cs_stream *s);

#endif
