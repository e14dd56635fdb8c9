/*
 * Memory management of the simulated CUDA driver: device and pinned host
 * allocations, stream-ordered allocation, pointer attributes and memory
 * information. Copies and memsets are in sc_copy.c.
 *
 * Pitched and managed allocations are here too; arrays are in sc_array.c,
 * the virtual memory management calls in sc_vmm.c.
 *
 * Design: device memory is host memory tracked by the shared memory
 * registry (src/sim/common/sf_memreg.c), so the executor thread computes on
 * it directly and misuse is detected. Frees synchronise as the real driver's do: cuMemFree and
 * cuMemFreeHost wait for the owning context's work first, cuMemFreeAsync
 * frees when its stream reaches it. cuMemAllocAsync and
 * cuMemAllocFromPoolAsync allocate from a memory pool (sc_pool.c) at the
 * call (the memory is usable by the stream's later work, which is all the
 * API promises); the stream-ordered pair cannot be captured here.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>

static CUresult sc_alloc(void **out, size_t size, enum sf_mem_kind kind)
{
	struct CUctx_st *ctx;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!out || !size)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_capture_unsafe();
	if (rc == 0)
		rc = atomic_load(&ctx->sticky);
	if (rc == 0)
		rc = sf_mem_alloc(size, 0, kind, ctx, out);
	return sc_result(rc);
}

/*
 * 256-byte aligned device memory, charged to the simulated device, whose
 * capacity the node's processes share (XSCHED_SIM_DEVICE_MEMORY).
 */
SC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	void *p = NULL;
	CUresult r = sc_alloc(dptr ? &p : NULL, bytesize, SF_MEM_DEVICE);

	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

/* Rows padded to this, as the texture hardware of real GPUs wants them. */
#define SC_PITCH_ALIGN 512u

/*
 * @Height rows of @WidthInBytes, each starting SC_PITCH_ALIGN bytes after
 * the previous one; ElementSizeBytes (4, 8 or 16) is only checked.
 */
SC_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				      size_t Height, unsigned int ElementSizeBytes)
{
	size_t pitch, bytes;
	void *p = NULL;
	CUresult r;

	if (sc_ready() < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dptr || !pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	pitch = (WidthInBytes + SC_PITCH_ALIGN - 1) & ~(size_t)(SC_PITCH_ALIGN - 1);
	if (pitch < WidthInBytes || __builtin_mul_overflow(pitch, Height, &bytes))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = sc_alloc(&p, bytes, SF_MEM_DEVICE);
	if (r == CUDA_SUCCESS) {
		*dptr = (CUdeviceptr)(uintptr_t)p;
		*pPitch = pitch;
	}
	return r;
}

/*
 * Host memory the device uses directly, as all memory here: not charged
 * to the device's memory, which a real driver pages it in and out of.
 */
SC_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	void *p = NULL;
	CUresult r;

	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	r = sc_alloc(dptr ? &p : NULL, bytesize, SF_MEM_MANAGED);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

SC_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return sc_alloc(pp, bytesize, SF_MEM_HOST);
}

/* Portable, mapped and write-combined flags are accepted; all memory is all three. */
SC_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	if (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				CU_MEMHOSTALLOC_WRITECOMBINED))
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	return sc_alloc(pp, bytesize, SF_MEM_HOST);
}

/* Waits for the owner's work, then frees. */
static CUresult sc_free(void *p, enum sf_mem_kind kind)
{
	struct CUctx_st *ctx;
	void *owner;
	int rc = sc_ctx_current(&ctx), sticky;

	if (rc < 0)
		return sc_result(rc);
	rc = sc_capture_unsafe();
	if (rc < 0)
		return sc_result(rc);
	if (sf_mem_owner(p, kind, &owner) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	sticky = sc_ctx_sync(owner);
	rc = sf_mem_free(p, kind, NULL);
	return sc_result(rc < 0 ? rc : sticky);
}

/* Freeing 0 does nothing. Device and managed memory alike. */
SC_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	enum sf_mem_kind kind = SF_MEM_DEVICE;

	if (!dptr) {
		struct CUctx_st *ctx;

		return sc_result(sc_ctx_current(&ctx));
	}
	if (sc_pool_mark_freeing((void *)(uintptr_t)dptr) == 0) {
		/* Stream-ordered memory: back to its pool once the device is idle. */
		struct CUctx_st *ctx;
		int rc = sc_ctx_current(&ctx);

		if (rc == 0)
			rc = sc_ctx_sync(ctx);
		sc_pool_freed((void *)(uintptr_t)dptr);
		return sc_result(rc);
	}
	if (sf_mem_lookup((void *)(uintptr_t)dptr, &kind, NULL) == 0 && kind == SF_MEM_MANAGED)
		return sc_free((void *)(uintptr_t)dptr, SF_MEM_MANAGED);
	return sc_free((void *)(uintptr_t)dptr, SF_MEM_DEVICE);
}

SC_EXPORT CUresult cuMemFreeHost(void *p)
{
	return sc_free(p, SF_MEM_HOST);
}

/* Node-wide, as on a real GPU: other processes' memory is not free. */
SC_EXPORT CUresult cuMemGetInfo_v2(size_t *freeBytes, size_t *totalBytes)
{
	struct CUctx_st *ctx;
	uint64_t cap, used;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!freeBytes || !totalBytes)
		return CUDA_ERROR_INVALID_VALUE;
	sim_dev_mem_info(sc_drv.dev, &cap, &used);
	*totalBytes = (size_t)cap;
	*freeBytes = (size_t)(used < cap ? cap - used : 0);
	return CUDA_SUCCESS;
}

/*
 * Attributes of registered memory (any address inside an allocation);
 * pageable memory is unknown to the driver: CUDA_ERROR_INVALID_VALUE.
 */
SC_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
					 CUdeviceptr ptr)
{
	void *p = (void *)(uintptr_t)ptr;
	enum sf_mem_kind kind;
	void *owner;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!data || sf_mem_lookup(p, &kind, &owner) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(CUmemorytype *)data = kind == SF_MEM_DEVICE || kind == SF_MEM_MANAGED ?
					CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = owner;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (kind != SF_MEM_HOST)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = p;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* From pool @pool (NULL: the device's current one), see sc_pool.c. */
static CUresult sc_alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream h,
			       bool pt)
{
	struct CUstream_st *s;
	CUdeviceptr p = 0;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!dptr || !size)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	if (s->cap) {
		sc_capture_invalidate(s->cap);
		rc = -EPERM;
	}
	if (rc == 0)
		rc = atomic_load(&s->ctx->sticky);
	if (rc == 0)
		rc = sc_pool_alloc(pool, &p, size, s);
	sc_stream_release(s);
	if (rc == 0)
		*dptr = p;
	return sc_result(rc);
}

SC_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return sc_alloc_async(dptr, bytesize, NULL, hStream, false);
}

SC_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return sc_alloc_async(dptr, bytesize, NULL, hStream, true);
}

SC_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					   CUmemoryPool pool, CUstream hStream)
{
	if (!pool)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	return sc_alloc_async(dptr, bytesize, pool, hStream, false);
}

SC_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
						CUmemoryPool pool, CUstream hStream)
{
	if (!pool)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	return sc_alloc_async(dptr, bytesize, pool, hStream, true);
}

static CUresult sc_free_async(CUdeviceptr dptr, CUstream h, bool pt)
{
	struct sc_op op = { .kind = SC_OP_FREE };
	struct CUstream_st *s;
	void *p = (void *)(uintptr_t)dptr;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return sc_result(rc);
	if (s->cap) {
		sc_capture_invalidate(s->cap);
		rc = -EPERM;
	}
	if (rc == 0 && sc_pool_mark_freeing(p) < 0)
		rc = sf_mem_mark_freeing(p);
	if (rc == 0) {
		op.u.free.ptr = p;
		rc = sc_stream_op(s, &op, NULL);
		if (rc < 0 && !sc_pool_freed(p))
			sf_mem_release(p);   /* a faulted context orders nothing */
	}
	sc_stream_release(s);
	return sc_result(rc);
}

/* Frees when the stream reaches this point; the pointer is invalid at once. */
SC_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return sc_free_async(dptr, hStream, false);
}

SC_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return sc_free_async(dptr, hStream, true);
}

static CUresult sc_prefetch(CUdeviceptr ptr, size_t count, unsigned int flags, CUstream h,
			    bool pt)
{
	struct CUstream_st *s;
	enum sf_mem_kind kind;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (flags || !count || sf_mem_classify((void *)(uintptr_t)ptr, count, &kind) < 0 ||
	    kind == SF_MEM_PAGEABLE)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	sc_stream_release(s);
	return CUDA_SUCCESS;
}

/* All memory is where the device can use it: validated, then nothing to do. */
SC_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
					 CUmemLocation location, unsigned int flags,
					 CUstream hStream)
{
	(void)location;
	return sc_prefetch(devPtr, count, flags, hStream, false);
}

SC_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
					      CUmemLocation location, unsigned int flags,
					      CUstream hStream)
{
	(void)location;
	return sc_prefetch(devPtr, count, flags, hStream, true);
}
