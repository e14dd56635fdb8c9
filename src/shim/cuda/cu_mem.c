/*
 * Device memory of the CUDA shim (see cu_mem.h and shim/common/shim_mem.h).
 *
 * Each allocation counts against the device of the calling thread's
 * current context (the driver allocates there; a stream-ordered
 * allocation's stream belongs to it), before the driver is asked: over the
 * limit the call answers CUDA_ERROR_OUT_OF_MEMORY itself. Frees give the
 * bytes back when the driver accepted them. Stream-ordered memory
 * (cuMemAllocAsync, cuMemAllocFromPoolAsync) is counted per pool instead:
 * what the pool reserves from the device, frees or not, kept in step by
 * asking the pool after each allocation, free, trim and synchronization.
 * cuMemGetInfo_v2 and cuDeviceTotalMem_v2 answer a device of the limit's
 * size.
 */
#include "shim/cuda/cu_mem.h"
#include "shim/cuda/cu_evict.h"
#include "agent/agent_mem.h"
#include "shim/cuda/cu_queues.h"
#include "shim/common/shim_mem.h"

#include <pthread.h>
#include <errno.h>
#include <stdio.h>

#define CM_ORDINALS 64          /* device ordinals whose record is cached */

static struct shim_map cm_ptrs = SHIM_MAP_INIT;     /* CUdeviceptr -> bytes */
static struct shim_map cm_arrays = SHIM_MAP_INIT;   /* CUarray, CUmipmappedArray */
static struct shim_map cm_handles = SHIM_MAP_INIT;  /* CUmemGenericAllocationHandle */
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
 * Counts @bytes on device @dev, calls the driver (@call, which sets
 * *@p), and records *@p in @map or gives the bytes back.
 */
#define CM_ALLOC_ON(dev, map, api, p, bytes, kind, call)                          \
	({                                                                         \
		struct shim_mem_dev *d_ = (dev);                                   \
		uint64_t n_ = (bytes);                                             \
		CUresult r_;                                                       \
		if (shim_mem_reserve(d_, n_, (kind), (api)) < 0) {                 \
			r_ = CUDA_ERROR_OUT_OF_MEMORY;                             \
		} else {                                                           \
			r_ = (call);                                               \
			if (r_ == CUDA_SUCCESS)                                    \
				shim_mem_commit((map), (const void *)(uintptr_t)*(p), \
						d_, n_, (kind));                   \
			else                                                       \
				shim_mem_cancel(d_, n_, (kind));                   \
		}                                                                  \
		r_;                                                                \
	})

/* CM_ALLOC_ON() the current context's device, into cm_ptrs. */
#define CM_ALLOC(api, p, bytes, kind, call)                                        \
	CM_ALLOC_ON(cm_on() ? cm_current() : NULL, &cm_ptrs, api, p, bytes, kind, call)

/* @p's record again with the @bytes the driver took (its free gives them
 * back), where they differ from what was counted before the call. */
static void cm_recount(CUdeviceptr p, uint64_t bytes)
{
	struct shim_mem_dev *d = NULL;

	if (shim_mem_size(&cm_ptrs, (const void *)(uintptr_t)p, &d) == bytes || !d)
		return;
	shim_mem_release(&cm_ptrs, (const void *)(uintptr_t)p);
	shim_mem_resize(d, 0, bytes, SHIM_MEM_DEVICE);
	shim_mem_commit(&cm_ptrs, (const void *)(uintptr_t)p, d, bytes, SHIM_MEM_DEVICE);
}

/* Times an allocation the driver refuses asks the daemon for memory. */
#define CM_NEED_TRIES 3

/*
 * cuMemAlloc_v2, memory that can be evicted (whole granules of the
 * driver's) with memory preemption. When the driver has not the memory
 * and the daemon does memory preemption, the daemon is asked to free it
 * (from processes of lower priority) and the allocation tried again.
 */
static CUresult cm_alloc(struct shim_mem_dev *d, CUdeviceptr *p, size_t n, size_t *taken)
{
	CUresult rc;
	int need = 0;

	for (int tries = 0;; tries++) {
		*taken = n;
		rc = cu_evict_armed ? cu_evict_alloc(p, n, taken, d) : cu_real.cuMemAlloc_v2(p, n);
		/* A daemon gone while it answered may have freed memory first:
		 * one more try, then the driver's answer. */
		if (rc != CUDA_ERROR_OUT_OF_MEMORY || tries == CM_NEED_TRIES || !d || need < 0)
			return rc;
		need = agent_mem_need(d->index, *taken, agent_mem_wait_ms());
		if (need == -ENOMEM || need == -EOPNOTSUPP || need == -EBUSY)
			return rc;
	}
}

XS_CU_HOOK CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	struct shim_mem_dev *d;
	size_t taken = 0;
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Invalid arguments stay the driver's to answer. */
	if (!p || !n || !cm_on())
		return cu_real.cuMemAlloc_v2(p, n);
	d = cm_current();
	rc = CM_ALLOC_ON(d, &cm_ptrs, "cuMemAlloc_v2", p, n, SHIM_MEM_DEVICE,
			 cm_alloc(d, p, n, &taken));
	if (rc == CUDA_SUCCESS && taken != n)
		cm_recount(*p, taken);
	return rc;
}

/*
 * Stream-ordered memory is counted per pool, not per allocation: a
 * device's figure includes what each pool the process allocated from
 * reserves there (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), which a free
 * leaves reserved. The record of a pool keeps what was last counted for
 * it; cm_pool_update() asks the driver again and moves the device's
 * figure by the change. Records are few (pools the process allocated
 * from); a pool beyond CM_POOLS is not counted (its allocations pass).
 */
#define CM_POOLS 32

struct cm_pool {
	CUmemoryPool pool;
	struct shim_mem_dev *dev;
	uint64_t counted;               /* its reserve, as last counted */
};

static pthread_mutex_t cm_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cm_pool cm_pools[CM_POOLS];   /* cm_pool_lock */
static _Atomic unsigned cm_npools;          /* written under cm_pool_lock */

static uint64_t cm_pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0;

	if (!cu_real.cuMemPoolGetAttribute || cu_real.cuMemPoolGetAttribute(pool, attr, &v) !=
						      CUDA_SUCCESS)
		return 0;
	return v;
}

/* Counts @pool's reserve on @d as the driver says it now. cm_pool_lock held. */
static void cm_pool_count(struct cm_pool *c)
{
	uint64_t now = cm_pool_attr(c->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);

	if (now != c->counted)
		shim_mem_resize(c->dev, c->counted, now, SHIM_MEM_DEVICE);
	c->counted = now;
}

/* @pool's record, made for device @d if new; NULL when full. Locked. */
static struct cm_pool *cm_pool_find(CUmemoryPool pool, struct shim_mem_dev *d)
{
	unsigned n = atomic_load(&cm_npools);

	for (unsigned i = 0; i < n; i++)
		if (cm_pools[i].pool == pool)
			return &cm_pools[i];
	if (!d || n == CM_POOLS)
		return NULL;
	cm_pools[n] = (struct cm_pool){ .pool = pool, .dev = d };
	atomic_store(&cm_npools, n + 1);
	return &cm_pools[n];
}

/* Counts @pool's reserve again (recorded on @d if new; @d NULL: only if known). */
static void cm_pool_update(CUmemoryPool pool, struct shim_mem_dev *d)
{
	struct cm_pool *c;

	pthread_mutex_lock(&cm_pool_lock);
	c = cm_pool_find(pool, d);
	if (c)
		cm_pool_count(c);
	pthread_mutex_unlock(&cm_pool_lock);
}

void cu_mem_pools_update(void)
{
	if (atomic_load(&cm_npools) == 0)
		return;
	pthread_mutex_lock(&cm_pool_lock);
	for (unsigned i = 0; i < atomic_load(&cm_npools); i++)
		cm_pool_count(&cm_pools[i]);
	pthread_mutex_unlock(&cm_pool_lock);
}

CUresult cu_mem_alloc_async(CUdeviceptr *p, size_t n, CUmemoryPool pool,
			    CUresult (*real)(CUdeviceptr *, size_t, CUstream),
			    CUresult (*real_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream),
			    CUstream h)
{
	const char *api = real_pool ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync";
	struct shim_mem_dev *d = NULL;
	uint64_t reserved, used, counted = 0;
	CUdevice dev;
	CUresult rc;

#define CM_CALL() (real_pool ? real_pool(p, n, pool, h) : real(p, n, h))
	if (!p || !n || !cm_on() || !cu_real.cuCtxGetDevice ||
	    cu_real.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return CM_CALL();
	d = cm_device(dev);
	if (!pool && (!cu_real.cuDeviceGetMemPool ||
		      cu_real.cuDeviceGetMemPool(&pool, dev) != CUDA_SUCCESS))
		pool = NULL;
	if (!d || !pool)
		return CM_CALL();
	/* What the pool's free reserve holds takes nothing more from the
	 * device; anything else is counted (or refused) before the driver. */
	reserved = cm_pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
	used = cm_pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
	if (reserved < used || reserved - used < n) {
		if (shim_mem_reserve(d, n, SHIM_MEM_DEVICE, api) < 0)
			return CUDA_ERROR_OUT_OF_MEMORY;
		counted = n;
	}
	rc = CM_CALL();
#undef CM_CALL
	/* The pool's reservation replaces the bytes held for the call. */
	if (counted)
		shim_mem_cancel(d, counted, SHIM_MEM_DEVICE);
	cm_pool_update(pool, d);
	return rc;
}

XS_CU_HOOK CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuMemPoolTrimTo(pool, keep);
	if (rc == CUDA_SUCCESS && cm_on())
		cm_pool_update(pool, NULL);
	return rc;
}

/* A destroyed pool's reserve leaves the count (the driver gives back
 * what is still allocated from it when freed). */
XS_CU_HOOK CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuMemPoolDestroy(pool);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&cm_pool_lock);
	for (unsigned i = 0, n = atomic_load(&cm_npools); i < n; i++) {
		if (cm_pools[i].pool != pool)
			continue;
		shim_mem_resize(cm_pools[i].dev, cm_pools[i].counted, 0, SHIM_MEM_DEVICE);
		cm_pools[i] = cm_pools[n - 1];
		atomic_store(&cm_npools, n - 1);
		break;
	}
	pthread_mutex_unlock(&cm_pool_lock);
	return rc;
}

XS_CU_HOOK CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p || !n)
		return cu_real.cuMemAllocManaged(p, n, flags);
	return CM_ALLOC("cuMemAllocManaged", p, n, SHIM_MEM_MANAGED,
			cu_real.cuMemAllocManaged(p, n, flags));
}

/* The pitch the driver picks is not known before: rows of 512 bytes are
 * counted against the limit, then what it took. */
#define CM_PITCH_ALIGN 512u

XS_CU_HOOK CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width,
				       size_t height, unsigned int elem)
{
	uint64_t guess;
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p || !pitch || !width || !height)
		return cu_real.cuMemAllocPitch_v2(p, pitch, width, height, elem);
	guess = (uint64_t)(width + CM_PITCH_ALIGN - 1) / CM_PITCH_ALIGN * CM_PITCH_ALIGN * height;
	rc = CM_ALLOC("cuMemAllocPitch_v2", p, guess, SHIM_MEM_DEVICE,
		      cu_real.cuMemAllocPitch_v2(p, pitch, width, height, elem));
	if (rc == CUDA_SUCCESS)
		cm_recount(*p, (uint64_t)*pitch * height);
	return rc;
}

/* Bytes of one element of @format with @channels channels (0: unknown). */
static uint64_t cm_elem_bytes(CUarray_format format, unsigned channels)
{
	switch (format) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		return channels;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2ull * channels;
	default:
		return 4ull * channels;
	}
}

/* An array's bytes: width x height x depth elements (0 means 1), levels
 * halving each dimension down to 1. */
static uint64_t cm_array_bytes(size_t w, size_t h, size_t d, uint64_t elem, unsigned levels)
{
	uint64_t n = 0;

	for (unsigned l = 0; l < (levels ? levels : 1); l++) {
		uint64_t lw = w >> l, lh = h >> l, ld = d >> l;

		n += (lw ? lw : 1) * (h && lh ? lh : 1) * (d && ld ? ld : 1) * elem;
	}
	return n;
}

XS_CU_HOOK CUresult cuArrayCreate_v2(CUarray *a, const CUDA_ARRAY_DESCRIPTOR *desc)
{
	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!a || !desc)
		return cu_real.cuArrayCreate_v2(a, desc);
	return CM_ALLOC_ON(cm_on() ? cm_current() : NULL, &cm_arrays, "cuArrayCreate_v2", a,
			   cm_array_bytes(desc->Width, desc->Height, 0,
					  cm_elem_bytes(desc->Format, desc->NumChannels), 1),
			   SHIM_MEM_DEVICE, cu_real.cuArrayCreate_v2(a, desc));
}

XS_CU_HOOK CUresult cuArray3DCreate_v2(CUarray *a, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!a || !desc)
		return cu_real.cuArray3DCreate_v2(a, desc);
	return CM_ALLOC_ON(cm_on() ? cm_current() : NULL, &cm_arrays, "cuArray3DCreate_v2", a,
			   cm_array_bytes(desc->Width, desc->Height, desc->Depth,
					  cm_elem_bytes(desc->Format, desc->NumChannels), 1),
			   SHIM_MEM_DEVICE, cu_real.cuArray3DCreate_v2(a, desc));
}

XS_CU_HOOK CUresult cuMipmappedArrayCreate(CUmipmappedArray *a,
					   const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!a || !desc)
		return cu_real.cuMipmappedArrayCreate(a, desc, levels);
	return CM_ALLOC_ON(cm_on() ? cm_current() : NULL, &cm_arrays, "cuMipmappedArrayCreate",
			   a, cm_array_bytes(desc->Width, desc->Height, desc->Depth,
					     cm_elem_bytes(desc->Format, desc->NumChannels),
					     levels),
			   SHIM_MEM_DEVICE, cu_real.cuMipmappedArrayCreate(a, desc, levels));
}

XS_CU_HOOK CUresult cuArrayDestroy(CUarray a)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuArrayDestroy(a);
	if (rc == CUDA_SUCCESS && a)
		shim_mem_release(&cm_arrays, a);
	return rc;
}

XS_CU_HOOK CUresult cuMipmappedArrayDestroy(CUmipmappedArray a)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuMipmappedArrayDestroy(a);
	if (rc == CUDA_SUCCESS && a)
		shim_mem_release(&cm_arrays, a);
	return rc;
}

/* Physical memory of the virtual memory management API, on the device its
 * properties name; counted until cuMemRelease (the driver may keep it
 * while mapped; the application has let it go). */
XS_CU_HOOK CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
				const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct shim_mem_dev *d = NULL;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!h || !n || !prop)
		return cu_real.cuMemCreate(h, n, prop, flags);
	if (cm_on() && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		d = cm_device(prop->location.id);
	return CM_ALLOC_ON(d, &cm_handles, "cuMemCreate", h, n, SHIM_MEM_DEVICE,
			   cu_real.cuMemCreate(h, n, prop, flags));
}

XS_CU_HOOK CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	CUresult rc;

	if (cu_load() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cu_real.cuMemRelease(h);
	if (rc == CUDA_SUCCESS)
		shim_mem_release(&cm_handles, (const void *)(uintptr_t)h);
	return rc;
}

void cu_mem_freed(CUdeviceptr p)
{
	if (p && shim_mem_release(&cm_ptrs, (const void *)(uintptr_t)p) == 0)
		cu_mem_pools_update();   /* stream-ordered memory, maybe */
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
