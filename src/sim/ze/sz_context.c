/*
 * Contexts of the simulated Level Zero driver, and device faults.
 *
 * Design: a context owns nothing the driver must track except its memory
 * (sz_memory.c) and its fault state. When a command faults (a kernel
 * failed or touched memory it may not), the context is lost for good, as a
 * real device would be: later commands of its queues skip their data part
 * (nothing computes any more) but still complete and signal, so no waiter
 * hangs, and every synchronisation and submission in it returns
 * ZE_RESULT_ERROR_DEVICE_LOST. Other contexts, and other processes on the
 * device, are unaffected.
 */
#include "sim/ze/sz_internal.h"

#include <errno.h>
#include <stdlib.h>

/* Marks @ctx lost. Any thread, the executor's included. */
void sz_ctx_fault(struct sz_context *ctx)
{
	int none = 0;

	atomic_compare_exchange_strong(&ctx->fault, &none, -EIO);
}

ze_result_t zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
			    ze_context_handle_t *phContext)
{
	ze_result_t r;
	struct sz_context *c;

	if (!sz_get(hDriver, SZ_M_DRIVER, &r))
		return r;
	if (!desc || !phContext)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~(ze_context_flags_t)ZE_CONTEXT_FLAG_TBD)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->magic = SZ_M_CONTEXT;
	*phContext = (ze_context_handle_t)(void *)c;
	return ZE_RESULT_SUCCESS;
}

/* The context's remaining allocations go with it. */
ze_result_t zeContextDestroy(ze_context_handle_t hContext)
{
	ze_result_t r;
	struct sz_context *c = sz_get(hContext, SZ_M_CONTEXT, &r);

	if (c) {
		sf_mem_drain(c);
		c->magic = 0;
		free(c);
	}
	return r;
}

ze_result_t zeContextGetStatus(ze_context_handle_t hContext)
{
	ze_result_t r;
	struct sz_context *c = sz_get(hContext, SZ_M_CONTEXT, &r);

	return c ? sz_result(atomic_load(&c->fault)) : r;
}
