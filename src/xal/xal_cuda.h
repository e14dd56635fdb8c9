/*
 * The `cuda` XAL backend: XQueues over CUDA streams (driver API).
 *
 * A command is a closure that issues one driver call on its stream when the
 * XQueue launches it (struct xal_cuda_cmd, embedded first by the shim's
 * command types). Sync points are events recorded right after the command;
 * whole-queue syncs synchronise every stream the queue launched on since
 * (a queue may span several streams: the legacy default stream and the
 * blocking streams of a context share one, to keep their implicit
 * ordering). CUDA exposes no preemption to the host: Lv1 only.
 *
 * Errors: a failed launch or sync records the driver's CUresult as the
 * queue's pending error and returns -EIO to the XQueue; the shim returns
 * the CUresult at the next synchronisation, once (errors the driver keeps
 * sticky, such as a faulted context, it reports again by itself).
 */
#ifndef XS_XAL_CUDA_H
#define XS_XAL_CUDA_H

#include "vendor/cuda/cu_api.h"
#include "xal/xal.h"

#include <stdatomic.h>
#include <stdbool.h>

struct xal_cuda_cmd;

struct xal_cuda_cmd_ops {
	/*
	 * Issues the call on c->stream with c->ctx current. Called once, from
	 * the XQueue's launch (any thread, XQueue lock held). Returns the
	 * driver's result.
	 */
	CUresult (*issue)(struct xal_cuda_cmd *c, const struct cu_fns *cu);
	/* Frees what the command owns (deep copies); may be NULL. */
	void (*fini)(struct xal_cuda_cmd *c);
	/* Optional: xal_cmd_ops.blocked_on for this command. */
	void *(*blocked_on)(struct xal_cuda_cmd *c);
};

struct xal_cuda_cmd {
	struct xal_cmd base;
	const struct xal_cuda_cmd_ops *ops;
	CUcontext ctx;
	CUstream stream;            /* the real stream to issue on */
	CUevent done;               /* sync point: recorded after the command */
	struct xal_cuda_hwq *hwq;   /* set at launch */
	_Atomic int launched;       /* issued to the driver */
};

struct xal_cuda_hwq;

/*
 * A hardware queue over the streams of @ctx, driven through @cu (the real
 * driver's functions; must outlive the hwq). @device names the device for
 * the scheduler (e.g. "cuda:0"). Errors: -ENOMEM.
 */
int xal_cuda_hwq_create(const struct cu_fns *cu, CUcontext ctx, const char *device,
			struct xal_hwq **out);

/* Takes the queue's pending CUresult (CUDA_SUCCESS if none). */
CUresult xal_cuda_hwq_error(struct xal_hwq *hwq);

/*
 * Forgets @stream, about to be destroyed once the queue's work on it
 * completed: a later whole-queue sync must not synchronise a stream that
 * is gone (its handle may even be another stream's by then). Any thread.
 */
void xal_cuda_hwq_forget(struct xal_hwq *hwq, CUstream stream);

/*
 * Initialises @c (calloc()ed by the caller, embedding struct xal_cuda_cmd
 * first; freed with free() on destroy, after ops->fini) for @stream of
 * @ctx. @est_key groups equal commands for duration learning, @kind is
 * enum xal_cmd_kind.
 */
void xal_cuda_cmd_init(struct xal_cuda_cmd *c, const struct xal_cuda_cmd_ops *ops,
		       CUcontext ctx, CUstream stream, uint32_t kind, uint64_t est_key);

/* True once the command was issued to the driver. */
static inline bool xal_cuda_cmd_launched(struct xal_cuda_cmd *c)
{
	return atomic_load(&c->launched) != 0;
}

#endif
