/*
 * Device memory of the CUDA shim (see cu_mem.h and shim/common/shim_mem.h).
 *
 * Each allocation counts against the device of the calling thread's
 * current context (the driver allocates there; a stream-ordered
 * allocation's stream belongs to it), before the driver is asked: over the
 * limit the call answers CUDA_ERROR_OUT_OF_MEMORY itself. Frees give the
 * bytes back when the driver accepted them; cuMemFreeAsync at the call,
 * since the pointer is the application's no longer from then on.
 * cuMemGetInfo_v2 and cuDeviceTotalMem_v2 answer a device of the limit's
 * size.
 */
#include "shim/cuda/cu_mem.h"
#include "shim/cuda/cu_queues.h"
#include "shim/common/shim_mem.h"

#include <stdio.h>

#define CM_ORDINALS 64          /* device ordinals whose record is cached */

static struct shim_map cm_ptrs = SHIM_MAP_INIT;     /* CUdeviceptr -> bytes */
static struct shim_mem_dev *_Atomic cm_dev[CM_ORDINALS];

static bool cm_on(void)
{
	return cu_load() == 0 && !cu_passthrough();
}

/* The record of device @dev; NULL: not counted. */
static struct shim_mem_dev *cm_device(CUdevice dev)
{
	struct shim_mem_dev *d;
	struct devid id;
	size_t total;
	char name[32];

	if (dev < 0)
		return NULL;
	if (dev < CM_ORDINALS && (d = atomic_load(&cm_dev[dev])))
		return d;
	cs_device_identity(dev, &id);
	snprintf(name, sizeof(name), "cuda:%d", dev);
	d = shim_mem_device(name, &id);
	/* The device's size, for the daemon's listing of it. */
	if (d && cu_real.cuDeviceTotalMem_v2 && cu_real.cuDeviceTotalMem_v2(&total, dev) ==
							    CUDA_SUCCESS) {
		uint64_t t = total, f = 0;

		shim_mem_view(d, &t, &f);
	}
	if (dev < CM_ORDINALS)
		atomic_store(&cm_dev[dev], d);
	return d;
}

/* The record of the current context's device; NULL without one. */
static struct shim_mem_dev *cm_current(void)
{
	CUdevice dev;

	if (!cu_real.cuCtxGetDevice || cu_real.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return NULL;
	return cm_device(dev);
}

/*
 * Counts @bytes on the current device, calls the driver (@call, which
 * sets *@p), and records *@p or gives the bytes back.
 */
#define CM_ALLOC(api, p, bytes, kind, call)                                       \
	({                                                                         \
		struct shim_mem_dev *d_ = cm_on() ? cm_current() : NULL;          \
		uint64_t n_ = (bytes);                                             \
		CUresult r_;                                                       \
		if (shim_mem_reserve(d_, n_, (kind), (api)) < 0) {                 \
			r_ = CUDA_ERROR_OUT_OF_MEMORY;                             \
		} else {                                                           \
			r_ = (call);                                               \
			if (r_ == CUDA_SUCCESS)                                    \
				shim_mem_commit(&cm_ptrs, (const void *)(uintptr_t)*(p), \
						d_, n_, (kind));                   \
			else                                                       \
				shim_mem_cancel(d_, n_, (kind));                   \
		}                                                                  \
		r_;                                                                \
	})

XS_CU_HOOK CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Invalid arguments stay the driver's to answer. */
	if (!p || !n)
		return cu_real.cuMemAlloc_v2(p, n);
	return CM_ALLOC("cuMemAlloc_v2", p, n, SHIM_MEM_DEVICE, cu_real.cuMemAlloc_v2(p, n));
}

CUresult cu_mem_alloc_async(CUdeviceptr *p, size_t n, CUresult (*real)(CUdeviceptr *, size_t,
									 CUstream),
			    CUstream h)
{
	if (!p || !n)
		return real(p, n, h);
	return CM_ALLOC("cuMemAllocAsync", p, n, SHIM_MEM_DEVICE, real(p, n, h));
}

void cu_mem_freed(CUdeviceptr p)
{
	if (p)
		shim_mem_release(&cm_ptrs, (const void *)(uintptr_t)p);
}

XS_CU_HOOK CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
	CUresult rc;
	uint64_t f, t;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuMemGetInfo_v2(free, total);
	if (rc != CUDA_SUCCESS || !cm_on())
		return rc;
	f = *free;
	t = *total;
	shim_mem_view(cm_current(), &t, &f);
	*free = (size_t)f;
	*total = (size_t)t;
	return rc;
}

XS_CU_HOOK CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult rc;
	uint64_t f = 0, t;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuDeviceTotalMem_v2(bytes, dev);
	if (rc != CUDA_SUCCESS || !cm_on())
		return rc;
	t = *bytes;
	shim_mem_view(cm_device(dev), &t, &f);
	*bytes = (size_t)t;
	return rc;
}
