/*
 * Command queues and fences of the simulated Level Zero driver.
 *
 * Design: a command queue is one device queue from the shared pool; an
 * execution launches every command of its (closed) lists in order under
 * the queue's lock, then a completion marker (sz_submit.c) that counts
 * finished executions and signals the execution's fence. Synchronising
 * waits for the count to reach the executions launched before the call,
 * on a futex with the caller's timeout (sz_wait.c); so does a fence, on
 * its own word. The device is in-order, which is one valid schedule of
 * the API's out-of-order lists. A synchronous queue waits for each
 * execution before returning. Destroying a queue waits for its work, so
 * an execution blocked on an event nobody signals blocks the destroy, as
 * it would hang a real device.
 */
#include "sim/ze/sz_internal.h"

#include <stdlib.h>

/*
 * A new device queue in @hContext for @desc, checked as both
 * zeCommandQueueCreate and zeCommandListCreateImmediate check them (@out
 * is the caller's output pointer, only checked here). Its magic is 0.
 */
ze_result_t sz_queue_new(ze_context_handle_t hContext, ze_device_handle_t hDevice,
			 const ze_command_queue_desc_t *desc, const void *out,
			 struct sz_queue **q)
{
	ze_result_t r;
	struct sz_context *ctx = sz_get(hContext, SZ_M_CONTEXT, &r);
	struct sz_queue *nq;
	int rc;

	if (!ctx)
		return r;
	if (!sz_obj(hDevice, SZ_M_DEVICE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags > ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY ||
	    desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
	    desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->ordinal != 0 || desc->index >= SZ_NUM_QUEUES)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	nq = calloc(1, sizeof(*nq));
	if (!nq)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	rc = sf_hwq_get(sz_drv.dev, &nq->q);
	if (rc < 0) {
		free(nq);
		return sz_result(rc);
	}
	nq->ctx = ctx;
	nq->mode = desc->mode;
	pthread_mutex_init(&nq->lock, NULL);
	*q = nq;
	return ZE_RESULT_SUCCESS;
}

/* Waits for everything launched on @q, then returns its device queue and frees it. */
void sz_queue_free(struct sz_queue *q)
{
	q->magic = 0;
	sf_hwq_wait(q->q, q->q->launched);
	sf_hwq_put(q->q);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

ze_result_t zeCommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
				 const ze_command_queue_desc_t *desc,
				 ze_command_queue_handle_t *phCommandQueue)
{
	struct sz_queue *q;
	ze_result_t r = sz_queue_new(hContext, hDevice, desc, phCommandQueue, &q);

	if (r == ZE_RESULT_SUCCESS) {
		q->magic = SZ_M_QUEUE;
		*phCommandQueue = (ze_command_queue_handle_t)(void *)q;
	}
	return r;
}

ze_result_t zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue)
{
	ze_result_t r;
	struct sz_queue *q = sz_get(hCommandQueue, SZ_M_QUEUE, &r);

	if (q)
		sz_queue_free(q);
	return r;
}

/* What a synchroniser waits for: @q finished execution @target. */
struct sz_qwait {
	struct sz_queue *q;
	uint64_t target;
};

static bool sz_queue_reached(const void *arg)
{
	const struct sz_qwait *w = arg;

	return atomic_load(&w->q->execs_done) >= w->target;
}

/* Waits until @q finished execution @target: 0, -EBUSY (timeout) or -EIO. */
static int sz_queue_wait(struct sz_queue *q, uint64_t target, uint64_t timeout)
{
	struct sz_qwait w = { .q = q, .target = target };
	int rc = sz_wait(&q->wq, sz_queue_reached, &w, timeout);

	return rc < 0 ? rc : atomic_load(&q->ctx->fault);
}

/* Checks the lists of an execution on @q: ZE_RESULT_SUCCESS if fine. */
static ze_result_t sz_exec_check(struct sz_queue *q, uint32_t n, ze_command_list_handle_t *lists)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct sz_list *l = sz_obj(lists[i], SZ_M_LIST);

		if (!l)
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		if (l->immediate)
			return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
		if (!l->closed || l->ctx != q->ctx)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	return ZE_RESULT_SUCCESS;
}

/*
 * Launches every command of @phCommandLists, in order, then the marker
 * that signals @hFence (optional; it must belong to this queue). The
 * lists must be closed and must stay unchanged until the execution ends.
 */
ze_result_t zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
					      uint32_t numCommandLists,
					      ze_command_list_handle_t *phCommandLists,
					      ze_fence_handle_t hFence)
{
	ze_result_t r;
	struct sz_queue *q = sz_get(hCommandQueue, SZ_M_QUEUE, &r);
	struct sz_fence *f = NULL;
	uint64_t target;
	uint32_t i;
	size_t k;
	int rc;

	if (!q)
		return r;
	if (!phCommandLists)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (numCommandLists == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (hFence) {
		f = sz_obj(hFence, SZ_M_FENCE);
		if (!f || f->queue != q)
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	}
	r = sz_exec_check(q, numCommandLists, phCommandLists);
	if (r != ZE_RESULT_SUCCESS)
		return r;
	rc = atomic_load(&q->ctx->fault);
	if (rc < 0)
		return sz_result(rc);
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < numCommandLists && rc == 0; i++) {
		struct sz_list *l = sz_obj(phCommandLists[i], SZ_M_LIST);

		for (k = 0; k < l->n && rc == 0; k++)
			rc = sz_cmd_launch(q, &l->cmds[k], false);
	}
	if (rc == 0)
		rc = sz_queue_mark(q, f);
	target = q->execs;
	pthread_mutex_unlock(&q->lock);
	if (rc == 0 && q->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS)
		rc = sz_queue_wait(q, target, UINT64_MAX);
	return sz_result(rc);
}

/* Waits for the executions launched before the call; NOT_READY on timeout. */
ze_result_t zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout)
{
	ze_result_t r;
	struct sz_queue *q = sz_get(hCommandQueue, SZ_M_QUEUE, &r);
	uint64_t target;

	if (q) {
		pthread_mutex_lock(&q->lock);
		target = q->execs;
		pthread_mutex_unlock(&q->lock);
		r = sz_result(sz_queue_wait(q, target, timeout));
	}
	return r;
}

ze_result_t zeFenceCreate(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t *desc,
			  ze_fence_handle_t *phFence)
{
	ze_result_t r;
	struct sz_queue *q = sz_get(hCommandQueue, SZ_M_QUEUE, &r);
	struct sz_fence *f;

	if (!q)
		return r;
	if (!desc || !phFence)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~(ze_fence_flags_t)ZE_FENCE_FLAG_SIGNALED)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	f->magic = SZ_M_FENCE;
	f->queue = q;
	atomic_store(&f->wq.word, (desc->flags & ZE_FENCE_FLAG_SIGNALED) ? 1 : 0);
	*phFence = (ze_fence_handle_t)(void *)f;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeFenceDestroy(ze_fence_handle_t hFence)
{
	return sz_handle_free(hFence, SZ_M_FENCE);
}

static bool sz_fence_signalled(const void *arg)
{
	const struct sz_fence *f = arg;

	return atomic_load(&f->wq.word) == 1;
}

/* Waits for @f: 0, -EBUSY (timeout) or its queue's fault. */
static int sz_fence_wait(struct sz_fence *f, uint64_t timeout)
{
	int rc = sz_wait(&f->wq, sz_fence_signalled, f, timeout);

	return rc < 0 ? rc : atomic_load(&f->queue->ctx->fault);
}

ze_result_t zeFenceHostSynchronize(ze_fence_handle_t hFence, uint64_t timeout)
{
	ze_result_t r;
	struct sz_fence *f = sz_get(hFence, SZ_M_FENCE, &r);

	return f ? sz_result(sz_fence_wait(f, timeout)) : r;
}

ze_result_t zeFenceQueryStatus(ze_fence_handle_t hFence)
{
	return zeFenceHostSynchronize(hFence, 0);
}

ze_result_t zeFenceReset(ze_fence_handle_t hFence)
{
	ze_result_t r;
	struct sz_fence *f = sz_get(hFence, SZ_M_FENCE, &r);

	if (f)
		atomic_store(&f->wq.word, 0);
	return r;
}
