/*
 * Memory of the simulated Level Zero driver: device, host and shared
 * allocations and their properties.
 *
 * Design: all three kinds are host memory registered with the shared
 * memory registry (src/sim/common/sf_memreg.c) under their context, so the
 * application can touch any of them directly and the device's commands
 * check their ranges when they run. Device and shared allocations are
 * charged to the simulated device, whose capacity the node's processes
 * share (XSCHED_SIM_DEVICE_MEMORY): ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
 * once it is exhausted. zeMemFree frees at once: a command still using
 * the memory faults when it runs (device lost), which is what the spec's
 * "the device must not be referencing it" leaves to the application.
 */
#include "sim/ze/sz_internal.h"

#include <errno.h>

/*
 * Allocates for every zeMemAlloc*: @ok is the call's own checks (of its
 * descriptors and device), reported after the common ones.
 */
static ze_result_t sz_alloc(ze_context_handle_t hContext, size_t size, size_t alignment,
			    enum sf_mem_kind kind, void **pptr, ze_result_t ok)
{
	ze_result_t r;
	struct sz_context *ctx = sz_get(hContext, SZ_M_CONTEXT, &r);
	int rc;

	if (!ctx)
		return r;
	if (!pptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (ok != ZE_RESULT_SUCCESS)
		return ok;
	if (size == 0 || size > SZ_MAX_ALLOC)
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (alignment & (alignment - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	rc = sf_mem_alloc(size, alignment, kind, ctx, pptr);
	if (rc == -ENOMEM && kind != SF_MEM_HOST)
		rc = -ENOSPC;
	return sz_result(rc);
}

/* The checks of a device allocation descriptor. */
static ze_result_t sz_device_desc(const ze_device_mem_alloc_desc_t *d)
{
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return d->flags > 0x7 ? ZE_RESULT_ERROR_INVALID_ENUMERATION : ZE_RESULT_SUCCESS;
}

/* The checks of a host allocation descriptor. */
static ze_result_t sz_host_desc(const ze_host_mem_alloc_desc_t *h)
{
	if (!h)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return h->flags > 0xf ? ZE_RESULT_ERROR_INVALID_ENUMERATION : ZE_RESULT_SUCCESS;
}

ze_result_t zeMemAllocDevice(ze_context_handle_t hContext,
			     const ze_device_mem_alloc_desc_t *device_desc, size_t size,
			     size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	ze_result_t ok = sz_obj(hDevice, SZ_M_DEVICE) ? sz_device_desc(device_desc) :
			 ZE_RESULT_ERROR_INVALID_NULL_HANDLE;

	return sz_alloc(hContext, size, alignment, SF_MEM_DEVICE, pptr, ok);
}

ze_result_t zeMemAllocHost(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t *host_desc,
			   size_t size, size_t alignment, void **pptr)
{
	return sz_alloc(hContext, size, alignment, SF_MEM_HOST, pptr, sz_host_desc(host_desc));
}

/* hDevice may be NULL (shared with the host only, here the same thing). */
ze_result_t zeMemAllocShared(ze_context_handle_t hContext,
			     const ze_device_mem_alloc_desc_t *device_desc,
			     const ze_host_mem_alloc_desc_t *host_desc, size_t size,
			     size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	ze_result_t ok = sz_device_desc(device_desc);

	if (hDevice && !sz_obj(hDevice, SZ_M_DEVICE))
		ok = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (ok == ZE_RESULT_SUCCESS)
		ok = sz_host_desc(host_desc);
	return sz_alloc(hContext, size, alignment, SF_MEM_SHARED, pptr, ok);
}

/* An allocation, as sz_mem_find() finds it. */
struct sz_alloc {
	enum sf_mem_kind kind;
	void *base;
	size_t size;
};

/*
 * The allocation of context @hContext that contains @ptr, into @a. *@r:
 * SUCCESS, the handle's error, INVALID_NULL_POINTER, or INVALID_ARGUMENT
 * when @ptr is not in an allocation of this context.
 */
static bool sz_mem_find(ze_context_handle_t hContext, const void *ptr, struct sz_alloc *a,
			ze_result_t *r)
{
	struct sz_context *ctx = sz_get(hContext, SZ_M_CONTEXT, r);
	void *owner = NULL;

	if (!ctx)
		return false;
	if (!ptr) {
		*r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
		return false;
	}
	if (sf_mem_lookup(ptr, &a->kind, &owner) < 0 || owner != ctx ||
	    sf_mem_range(ptr, &a->base, &a->size) < 0) {
		*r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
		return false;
	}
	return true;
}

/* @ptr must start an allocation of @hContext: INVALID_ARGUMENT otherwise. */
ze_result_t zeMemFree(ze_context_handle_t hContext, void *ptr)
{
	struct sz_alloc a;
	ze_result_t r;

	if (!sz_mem_find(hContext, ptr, &a, &r))
		return r;
	return a.base == ptr ? sz_result(sf_mem_free(ptr, a.kind, NULL)) :
	       ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* Memory the driver does not know is ZE_MEMORY_TYPE_UNKNOWN, not an error. */
ze_result_t zeMemGetAllocProperties(ze_context_handle_t hContext, const void *ptr,
				    ze_memory_allocation_properties_t *p,
				    ze_device_handle_t *phDevice)
{
	static const ze_memory_type_t types[] = {
		[SF_MEM_PAGEABLE] = ZE_MEMORY_TYPE_UNKNOWN, [SF_MEM_DEVICE] = ZE_MEMORY_TYPE_DEVICE,
		[SF_MEM_HOST] = ZE_MEMORY_TYPE_HOST, [SF_MEM_SHARED] = ZE_MEMORY_TYPE_SHARED,
	};
	struct sz_alloc a = { .kind = SF_MEM_PAGEABLE };
	ze_result_t r;

	if (!sz_get(hContext, SZ_M_CONTEXT, &r))
		return r;
	if (!ptr || !p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!sz_mem_find(hContext, ptr, &a, &r))
		a = (struct sz_alloc){ .kind = SF_MEM_PAGEABLE };
	p->type = types[a.kind];
	p->id = (uint64_t)(uintptr_t)a.base;
	p->pageSize = a.kind == SF_MEM_PAGEABLE ? 0 : 4096;
	if (phDevice)
		*phDevice = a.kind == SF_MEM_DEVICE || a.kind == SF_MEM_SHARED ?
			    (ze_device_handle_t)(void *)&sz_dev : NULL;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeMemGetAddressRange(ze_context_handle_t hContext, const void *ptr, void **pBase,
				 size_t *pSize)
{
	struct sz_alloc a;
	ze_result_t r;

	if (!sz_mem_find(hContext, ptr, &a, &r))
		return r;
	if (pBase)
		*pBase = a.base;
	if (pSize)
		*pSize = a.size;
	return ZE_RESULT_SUCCESS;
}
