/*
 * Synchronisations, fences and events: the calls that must observe work
 * the shim may still hold in an XQueue.
 *
 * Each waits (within the call's timeout) for what the shim knows the
 * object depends on: a command queue for its XQueue, a fence for the
 * execution it was last passed to to complete, an event for the command
 * that last signals it to reach the driver; then asks the driver with
 * what is left of the timeout, so
 * that work the shim never saw counts as well. A zero timeout never
 * blocks; a buffered or suspended command answers ZE_RESULT_NOT_READY. An
 * error of a launch the shim made late is returned by the first of these
 * calls on its queue, once.
 */
#include "shim/ze/ze_lists.h"

/*
 * Waits until @deadline for what table @t last recorded for @h; SUCCESS
 * when that is done or nothing is known, else NOT_READY or the queue's
 * error. A fence is signalled when its execution ended: that completes.
 * An event may be signalled partway through the execution that signals
 * it (a list that signals it, then waits for another event the
 * application signals after this wait): that reaches the driver, and the
 * driver answers for the event.
 */
static ze_result_t zy_wait(enum zt_table t, const void *h, uint64_t deadline)
{
	struct zs_queue *q;
	ze_result_t rc;
	uint64_t seq;

	if (!h || !ze_scheduling() || !zt_last(t, h, &q, &seq))
		return ZE_RESULT_SUCCESS;
	rc = t == ZT_EVENT ? zs_wait_launched(q, seq, deadline) : zs_wait(q, seq, deadline, true);
	zs_queue_unref(q);
	return rc;
}

/* A synchronisation of an object of table @t, with a timeout. */
#define ZY_TIMED(name, type, t)                                                    \
	XS_ZE_HOOK ze_result_t name(type h, uint64_t timeout)                      \
	{                                                                          \
		uint64_t deadline = zs_deadline(timeout);                          \
		ze_result_t rc = zy_wait(t, h, deadline);                          \
                                                                                   \
		if (rc != ZE_RESULT_SUCCESS)                                       \
			return rc;                                                 \
		return ZE_CALL(name, h, zs_remaining(deadline));                   \
	}

/* A query of an object of table @t (never blocks). */
#define ZY_QUERY(name, t, params, ...)                                       \
	XS_ZE_HOOK ze_result_t name params                                         \
	{                                                                          \
		ze_result_t rc = zy_wait(t, h, zs_deadline(0));                    \
                                                                                   \
		if (rc != ZE_RESULT_SUCCESS)                                       \
			return rc;                                                 \
		return ZE_CALL(name, __VA_ARGS__);                                 \
	}

ZY_TIMED(zeFenceHostSynchronize, ze_fence_handle_t, ZT_FENCE)
ZY_TIMED(zeEventHostSynchronize, ze_event_handle_t, ZT_EVENT)
ZY_QUERY(zeFenceQueryStatus, ZT_FENCE, (ze_fence_handle_t h), h)
ZY_QUERY(zeEventQueryStatus, ZT_EVENT, (ze_event_handle_t h), h)
ZY_QUERY(zeEventQueryKernelTimestamp, ZT_EVENT,
	 (ze_event_handle_t h, ze_kernel_timestamp_result_t *dst), h, dst)

XS_ZE_HOOK ze_result_t zeCommandQueueSynchronize(ze_command_queue_handle_t h, uint64_t timeout)
{
	struct zs_queue *q = h && ze_scheduling() ? zs_queue_of(h) : NULL;
	uint64_t deadline = zs_deadline(timeout);

	if (q && !q->is_list) {
		ze_result_t rc = zs_wait(q, 0, deadline, true);

		if (rc != ZE_RESULT_SUCCESS)
			return rc;
	}
	return ZE_CALL(zeCommandQueueSynchronize, h, zs_remaining(deadline));
}

XS_ZE_HOOK ze_result_t zeFenceReset(ze_fence_handle_t f)
{
	if (f && ze_scheduling())
		zt_fence_release(f, false);
	return ZE_CALL(zeFenceReset, f);
}

XS_ZE_HOOK ze_result_t zeFenceDestroy(ze_fence_handle_t f)
{
	if (f && ze_scheduling())
		zt_fence_release(f, true);
	return ZE_CALL(zeFenceDestroy, f);
}

/*
 * Signalled from the host: a wait on the event no longer depends on a
 * buffered signal of it.
 */
XS_ZE_HOOK ze_result_t zeEventHostSignal(ze_event_handle_t ev)
{
	ze_result_t rc = ZE_CALL(zeEventHostSignal, ev);

	if (rc == ZE_RESULT_SUCCESS && ze_scheduling())
		zt_event_forget(ev);
	return rc;
}

XS_ZE_HOOK ze_result_t zeEventDestroy(ze_event_handle_t ev)
{
	struct zs_queue *q;
	uint64_t seq;

	/* A buffered command must not reach the driver with a dead event. */
	if (ev && ze_scheduling() && zt_last(ZT_EVENT, ev, &q, &seq)) {
		zs_wait(q, seq, UINT64_MAX, false);
		zs_queue_unref(q);
		zt_event_forget(ev);
	}
	return ZE_CALL(zeEventDestroy, ev);
}
