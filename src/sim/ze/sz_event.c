/*
 * Event pools and events of the simulated Level Zero driver.
 *
 * Design: an event is a word in its pool, 0 (clear) or 1 (signalled),
 * written by device commands on the executor thread (signal, reset) or by
 * the host, plus the device times of the command that last signalled it.
 * Signalling stores the times, then the word (sequentially consistent,
 * which also orders it before the watch count read in sf_watch_kick()),
 * then wakes host waiters and the watcher that releases queues waiting on
 * events; after the word's store it touches nothing in the event, which a
 * host waiter may destroy (with its pool) at once. The pool owns the
 * events' memory, so a command that signals an event destroyed meanwhile
 * writes into a free slot, not freed memory; destroying the pool itself
 * while the device still uses its events is the application's error, as
 * the spec says. Kernel timestamps are nanoseconds of the device clock.
 */
#include "sim/ze/sz_internal.h"
#include "base/clock.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Signals @ev with the current device time as its end (and start, if
 * @instant: the command had no data part to stamp it). Any thread.
 */
void sz_event_signal(struct sz_event *ev, bool instant)
{
	uint64_t now = clock_now_ns();

	if (instant)
		atomic_store_explicit(&ev->ts_start, now, memory_order_relaxed);
	atomic_store_explicit(&ev->ts_end, now, memory_order_relaxed);
	atomic_store(&ev->wq.word, 1);
	sz_wake(&ev->wq);
	sf_watch_kick();
}

/* Clears @ev. Any thread. */
void sz_event_clear(struct sz_event *ev)
{
	atomic_store(&ev->wq.word, 0);
}

bool sz_event_signalled(const struct sz_event *ev)
{
	return atomic_load(&ev->wq.word) == 1;
}

static bool sz_event_done(const void *arg)
{
	return sz_event_signalled(arg);
}

ze_result_t zeEventPoolCreate(ze_context_handle_t hContext, const ze_event_pool_desc_t *desc,
			      uint32_t numDevices, ze_device_handle_t *phDevices,
			      ze_event_pool_handle_t *phEventPool)
{
	const uint32_t known = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_IPC |
			       ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
	ze_result_t r;
	struct sz_context *ctx = sz_get(hContext, SZ_M_CONTEXT, &r);
	struct sz_pool *p;
	uint32_t i;

	if (!ctx)
		return r;
	if (!desc || !phEventPool)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~known)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->count == 0 || (!phDevices && numDevices > 0))
		return ZE_RESULT_ERROR_INVALID_SIZE;
	for (i = 0; i < numDevices; i++)
		if (!sz_obj(phDevices[i], SZ_M_DEVICE))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (desc->flags & ZE_EVENT_POOL_FLAG_IPC)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	p = calloc(1, sizeof(*p) + (size_t)desc->count * sizeof(p->ev[0]));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	p->magic = SZ_M_POOL;
	p->ctx = ctx;
	p->flags = desc->flags;
	p->count = desc->count;
	pthread_mutex_init(&p->lock, NULL);
	*phEventPool = (ze_event_pool_handle_t)(void *)p;
	return ZE_RESULT_SUCCESS;
}

/* Its events go with it. */
ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t hEventPool)
{
	ze_result_t r;
	struct sz_pool *p = sz_get(hEventPool, SZ_M_POOL, &r);

	if (p) {
		p->magic = 0;
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	return r;
}

/* An index already holding a live event is INVALID_ARGUMENT. */
ze_result_t zeEventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
			  ze_event_handle_t *phEvent)
{
	const uint32_t scopes = ZE_EVENT_SCOPE_FLAG_SUBDEVICE | ZE_EVENT_SCOPE_FLAG_DEVICE |
				ZE_EVENT_SCOPE_FLAG_HOST;
	ze_result_t r;
	struct sz_pool *p = sz_get(hEventPool, SZ_M_POOL, &r);
	struct sz_event *ev;

	if (!p)
		return r;
	if (!desc || !phEvent)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if ((desc->signal & ~scopes) || (desc->wait & ~scopes))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	ev = &p->ev[desc->index];
	pthread_mutex_lock(&p->lock);
	if (ev->magic == SZ_M_EVENT) {
		r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
	} else {
		ev->pool = p;
		atomic_store(&ev->wq.word, 0);
		atomic_store(&ev->ts_start, 0);
		atomic_store(&ev->ts_end, 0);
		ev->magic = SZ_M_EVENT;
	}
	pthread_mutex_unlock(&p->lock);
	if (r == ZE_RESULT_SUCCESS)
		*phEvent = (ze_event_handle_t)(void *)ev;
	return r;
}

ze_result_t zeEventDestroy(ze_event_handle_t hEvent)
{
	ze_result_t r;
	struct sz_event *ev = sz_get(hEvent, SZ_M_EVENT, &r);

	if (ev) {
		pthread_mutex_lock(&ev->pool->lock);
		ev->magic = 0;
		pthread_mutex_unlock(&ev->pool->lock);
	}
	return r;
}

/* The event's status as an errno: 0 signalled, -EBUSY not yet, -EIO lost. */
static int sz_event_status(struct sz_event *ev)
{
	int fault = atomic_load(&ev->pool->ctx->fault);

	if (fault)
		return fault;
	return sz_event_signalled(ev) ? 0 : -EBUSY;
}

/* Applies @op to the event behind @h, from the host. */
static ze_result_t sz_event_host(ze_event_handle_t h, void (*op)(struct sz_event *ev))
{
	ze_result_t r;
	struct sz_event *ev = sz_get(h, SZ_M_EVENT, &r);

	if (ev)
		op(ev);
	return r;
}

static void sz_event_host_signal(struct sz_event *ev)
{
	sz_event_signal(ev, true);
}

ze_result_t zeEventHostSignal(ze_event_handle_t hEvent)
{
	return sz_event_host(hEvent, sz_event_host_signal);
}

ze_result_t zeEventHostReset(ze_event_handle_t hEvent)
{
	return sz_event_host(hEvent, sz_event_clear);
}

/* See sz_wait() for the timeout; NOT_READY when it expired. */
ze_result_t zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout)
{
	ze_result_t r;
	struct sz_event *ev = sz_get(hEvent, SZ_M_EVENT, &r);
	int rc;

	if (!ev)
		return r;
	rc = sz_wait(&ev->wq, sz_event_done, ev, timeout);
	return sz_result(rc < 0 ? rc : sz_event_status(ev));
}

ze_result_t zeEventQueryStatus(ze_event_handle_t hEvent)
{
	ze_result_t r;
	struct sz_event *ev = sz_get(hEvent, SZ_M_EVENT, &r);

	return ev ? sz_result(sz_event_status(ev)) : r;
}

/*
 * Start and end of the command that signalled @hEvent, global and context
 * alike. The pool must have ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP.
 */
ze_result_t zeEventQueryKernelTimestamp(ze_event_handle_t hEvent,
					ze_kernel_timestamp_result_t *dstptr)
{
	ze_result_t r;
	struct sz_event *ev = sz_get(hEvent, SZ_M_EVENT, &r);

	if (!ev)
		return r;
	if (!dstptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!(ev->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP))
		return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	if (!sz_event_signalled(ev))
		return ZE_RESULT_NOT_READY;
	dstptr->global.kernelStart = atomic_load_explicit(&ev->ts_start, memory_order_relaxed);
	dstptr->global.kernelEnd = atomic_load_explicit(&ev->ts_end, memory_order_relaxed);
	dstptr->context = dstptr->global;
	return ZE_RESULT_SUCCESS;
}
