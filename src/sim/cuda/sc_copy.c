/*
 * Copies and memsets of the simulated CUDA driver: the 1D, 2D and 3D
 * copies, synchronous and asynchronous, batched copies, and the 8-, 16-
 * and 32-bit memsets (2D ones too), with their per-thread-stream variants.
 *
 * Design: every copy becomes one region operation (struct sf_region) on a
 * stream. Synchronous calls run on the legacy stream (the per-thread one
 * for _ptds) and wait for their command, so they are ordered with all the
 * implicit synchronisation of that stream. Asynchronous calls follow the
 * real driver for pageable (unregistered) host memory: a pageable source
 * is staged into a driver buffer at the call, so the application may
 * reuse it on return; a pageable destination is written before the call
 * returns (the call waits for its command). Pinned memory is copied when
 * the stream gets there. During capture nothing is staged or awaited: the
 * recorded copy reads and writes the application's memory when the graph
 * runs. Arrays (CU_MEMORYTYPE_ARRAY) do not exist here:
 * CUDA_ERROR_INVALID_VALUE. Memsets wait in their synchronous form too
 * (allowed: the driver may return earlier, never later).
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What a copy side must be: any host memory, or registered memory. */
enum { SC_ANY = 0, SC_REG = 1 };

/* Packs @r's source into a contiguous buffer the copy then reads. */
static int sc_stage(struct sf_region *r, void **staging)
{
	size_t row = r->width, plane = row * r->height, z, y;
	uint8_t *b = malloc(plane * r->depth);

	if (!b)
		return -ENOMEM;
	for (z = 0; z < r->depth; z++)
		for (y = 0; y < r->height; y++)
			memcpy(b + z * plane + y * row, r->src + z * r->sslice + y * r->spitch, row);
	r->src = b;
	r->spitch = row;
	r->sslice = plane;
	r->src_reg = false;
	*staging = b;
	return 0;
}

/*
 * Submits region copy @r to stream @h. @sync: wait for it (synchronous
 * call); @src_pageable / @dst_pageable select the pageable-memory
 * semantics of asynchronous calls.
 */
static int sc_copy_submit(CUstream h, bool pt, struct sf_region *r, bool src_pageable,
			  bool dst_pageable, bool sync)
{
	struct sc_op op = { .kind = SC_OP_COPY };
	struct CUstream_st *s;
	struct CUctx_st *ctx;
	struct sf_hwq *q;
	uint64_t seq = 0;
	int rc = sc_stream_acquire(h, pt, &s);

	if (rc < 0)
		return rc;
	if (sync && s->cap) {
		sc_capture_invalidate(s->cap);
		sc_stream_release(s);
		return -EPERM;
	}
	if (!r->width || !r->height || !r->depth) {
		sc_stream_release(s);
		return 0;
	}
	op.u.copy.r = *r;
	if (!s->cap && !sync && src_pageable)
		rc = sc_stage(&op.u.copy.r, &op.u.copy.staging);
	if (rc == 0)
		rc = sc_stream_op(s, &op, &seq);
	q = s->q;
	ctx = s->ctx;
	sc_stream_release(s);
	if (rc == 0 && seq && (sync || dst_pageable)) {
		sf_hwq_wait(q, seq);
		rc = atomic_load(&ctx->sticky);
	}
	return rc;
}

/*
 * Checks one side of a copy: 0, -EINVAL, or -EFAULT for device memory
 * that is reserved but not accessible (sc_vmm.c); *@pageable set (false
 * for -EFAULT: the device checks the side again when the copy runs).
 */
static int sc_side(const void *p, size_t n, int need, bool *pageable)
{
	enum sf_mem_kind kind;
	int rc = sf_mem_classify(p, n, &kind);

	*pageable = false;
	if (rc < 0)
		return rc == -EFAULT ? rc : -EINVAL;
	if (need == SC_REG && kind == SF_MEM_PAGEABLE)
		return -EINVAL;
	*pageable = kind == SF_MEM_PAGEABLE;
	return 0;
}

/*
 * Combines the checks of a call's sides: an invalid side fails the call;
 * an inaccessible one fails a synchronous call at once (the device never
 * touches it, the context stays usable) and lets an asynchronous one go,
 * to fault on the device when it runs, as the real driver's would.
 */
static int sc_sides_rc(int a, int b, bool sync)
{
	if (a == -EINVAL || b == -EINVAL)
		return -EINVAL;
	if (a == -EFAULT || b == -EFAULT)
		return sync ? -EFAULT : 0;
	return a < 0 ? a : b;
}

static CUresult sc_copy1d(void *dst, const void *src, size_t n, int dst_need, int src_need,
			  CUstream h, bool pt, bool sync)
{
	struct sf_region r = { .dst = dst, .src = src, .dpitch = n, .spitch = n,
			       .dslice = n, .sslice = n, .width = n, .height = 1, .depth = 1 };
	bool dpage = false, spage = false;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (n) {
		rc = sc_sides_rc(sc_side(dst, n, dst_need, &dpage),
				 sc_side(src, n, src_need, &spage), sync);
		if (rc < 0)
			return sc_result(rc);
	}
	r.dst_reg = !dpage;
	r.src_reg = !spage;
	return sc_result(sc_copy_submit(h, pt, &r, spage, dpage, sync));
}

#define SC_DPTR(p) ((void *)(uintptr_t)(p))

/* Unified addressing: either side may be host or device memory. */
SC_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return sc_copy1d(SC_DPTR(dst), SC_DPTR(src), ByteCount, SC_ANY, SC_ANY, NULL, false, true);
}

SC_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return sc_copy1d(SC_DPTR(dst), SC_DPTR(src), ByteCount, SC_ANY, SC_ANY, NULL, true, true);
}

SC_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return sc_copy1d(SC_DPTR(dstDevice), srcHost, ByteCount, SC_REG, SC_ANY, NULL, false, true);
}

SC_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
					size_t ByteCount)
{
	return sc_copy1d(SC_DPTR(dstDevice), srcHost, ByteCount, SC_REG, SC_ANY, NULL, true, true);
}

SC_EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return sc_copy1d(dstHost, SC_DPTR(srcDevice), ByteCount, SC_ANY, SC_REG, NULL, false, true);
}

SC_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return sc_copy1d(dstHost, SC_DPTR(srcDevice), ByteCount, SC_ANY, SC_REG, NULL, true, true);
}

SC_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				   size_t ByteCount)
{
	return sc_copy1d(SC_DPTR(dstDevice), SC_DPTR(srcDevice), ByteCount, SC_REG, SC_REG, NULL,
			 false, true);
}

SC_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
					size_t ByteCount)
{
	return sc_copy1d(SC_DPTR(dstDevice), SC_DPTR(srcDevice), ByteCount, SC_REG, SC_REG, NULL,
			 true, true);
}

SC_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
				 CUstream hStream)
{
	return sc_copy1d(SC_DPTR(dst), SC_DPTR(src), ByteCount, SC_ANY, SC_ANY, hStream, false,
			 false);
}

SC_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
				      CUstream hStream)
{
	return sc_copy1d(SC_DPTR(dst), SC_DPTR(src), ByteCount, SC_ANY, SC_ANY, hStream, true,
			 false);
}

SC_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
					size_t ByteCount, CUstream hStream)
{
	return sc_copy1d(SC_DPTR(dstDevice), srcHost, ByteCount, SC_REG, SC_ANY, hStream, false,
			 false);
}

SC_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
					     size_t ByteCount, CUstream hStream)
{
	return sc_copy1d(SC_DPTR(dstDevice), srcHost, ByteCount, SC_REG, SC_ANY, hStream, true,
			 false);
}

SC_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
					CUstream hStream)
{
	return sc_copy1d(dstHost, SC_DPTR(srcDevice), ByteCount, SC_ANY, SC_REG, hStream, false,
			 false);
}

SC_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
					     size_t ByteCount, CUstream hStream)
{
	return sc_copy1d(dstHost, SC_DPTR(srcDevice), ByteCount, SC_ANY, SC_REG, hStream, true,
			 false);
}

SC_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
					size_t ByteCount, CUstream hStream)
{
	return sc_copy1d(SC_DPTR(dstDevice), SC_DPTR(srcDevice), ByteCount, SC_REG, SC_REG,
			 hStream, false, false);
}

SC_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
					     size_t ByteCount, CUstream hStream)
{
	return sc_copy1d(SC_DPTR(dstDevice), SC_DPTR(srcDevice), ByteCount, SC_REG, SC_REG,
			 hStream, true, false);
}

/* One side of a 2D/3D copy, as the descriptor gives it. */
struct sc_side3d {
	CUmemorytype type;
	const void *host;
	CUdeviceptr dev;
	size_t x, y, z, pitch, height;
};

/*
 * Resolves a side of a @width x @height x @depth copy to its first byte,
 * pitch and slice pitch, and checks its memory. 0, -EINVAL or -EFAULT
 * (sc_side()).
 */
static int sc_side3d(const struct sc_side3d *sd, size_t width, size_t height, size_t depth,
		     uint8_t **base, size_t *pitch, size_t *slice, bool *pageable)
{
	const uint8_t *p;
	size_t span;

	switch (sd->type) {
	case CU_MEMORYTYPE_HOST:
		p = sd->host;
		break;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		p = SC_DPTR(sd->dev);
		break;
	default:
		return -EINVAL;
	}
	*pitch = sd->pitch ? sd->pitch : width;
	if (!p || *pitch < width || (depth > 1 && sd->height < height))
		return -EINVAL;
	*slice = *pitch * (depth > 1 ? sd->height : height);
	p += sd->z * *slice + sd->y * *pitch + sd->x;
	span = sf_span(width, height, depth, *pitch, *slice);
	*base = (uint8_t *)p;
	return sc_side(p, span, sd->type == CU_MEMORYTYPE_DEVICE ? SC_REG : SC_ANY, pageable);
}

static CUresult sc_copy3d(const struct sc_side3d *src, const struct sc_side3d *dst,
			  size_t width, size_t height, size_t depth, CUstream h, bool pt, bool sync)
{
	struct sf_region r = { .width = width, .height = height, .depth = depth };
	bool spage = false, dpage = false;
	uint8_t *s;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (width && height && depth) {
		rc = sc_sides_rc(sc_side3d(src, width, height, depth, &s, &r.spitch, &r.sslice,
					   &spage),
				 sc_side3d(dst, width, height, depth, &r.dst, &r.dpitch, &r.dslice,
					   &dpage), sync);
		if (rc < 0)
			return sc_result(rc);
		r.src = s;
		r.src_reg = !spage;
		r.dst_reg = !dpage;
	}
	return sc_result(sc_copy_submit(h, pt, &r, spage, dpage, sync));
}

static CUresult sc_copy2d(const CUDA_MEMCPY2D *c, CUstream h, bool pt, bool sync)
{
	struct sc_side3d src, dst;

	if (!c)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	src = (struct sc_side3d){ c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes,
				  c->srcY, 0, c->srcPitch, c->Height };
	dst = (struct sc_side3d){ c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes,
				  c->dstY, 0, c->dstPitch, c->Height };
	return sc_copy3d(&src, &dst, c->WidthInBytes, c->Height, 1, h, pt, sync);
}

static CUresult sc_copy3d_desc(const CUDA_MEMCPY3D *c, CUstream h, bool pt, bool sync)
{
	struct sc_side3d src, dst;

	if (!c || c->srcLOD || c->dstLOD || c->reserved0 || c->reserved1)
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	src = (struct sc_side3d){ c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes,
				  c->srcY, c->srcZ, c->srcPitch, c->srcHeight };
	dst = (struct sc_side3d){ c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes,
				  c->dstY, c->dstZ, c->dstPitch, c->dstHeight };
	return sc_copy3d(&src, &dst, c->WidthInBytes, c->Height, c->Depth, h, pt, sync);
}

/*
 * The region copy @c describes (graph memcpy nodes): 0, or -EINVAL for a
 * descriptor a copy call would refuse. Pageable host memory is read and
 * written when the copy runs, as during capture.
 */
int sc_copy3d_region(const CUDA_MEMCPY3D *c, struct sf_region *r)
{
	struct sc_side3d src, dst;
	bool spage = false, dpage = false;
	uint8_t *sp;

	if (!c || c->srcLOD || c->dstLOD || c->reserved0 || c->reserved1)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->width = c->WidthInBytes;
	r->height = c->Height;
	r->depth = c->Depth;
	if (!r->width || !r->height || !r->depth)
		return -EINVAL;
	src = (struct sc_side3d){ c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes,
				  c->srcY, c->srcZ, c->srcPitch, c->srcHeight };
	dst = (struct sc_side3d){ c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes,
				  c->dstY, c->dstZ, c->dstPitch, c->dstHeight };
	if (sc_side3d(&src, r->width, r->height, r->depth, &sp, &r->spitch, &r->sslice,
		      &spage) < 0 ||
	    sc_side3d(&dst, r->width, r->height, r->depth, &r->dst, &r->dpitch, &r->dslice,
		      &dpage) < 0)
		return -EINVAL;
	r->src = sp;
	r->src_reg = !spage;
	r->dst_reg = !dpage;
	return 0;
}

SC_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	return sc_copy2d(pCopy, NULL, false, true);
}

SC_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
	return sc_copy2d(pCopy, NULL, true, true);
}

SC_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return sc_copy2d(pCopy, hStream, false, false);
}

SC_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return sc_copy2d(pCopy, hStream, true, false);
}

SC_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
	return sc_copy3d_desc(pCopy, NULL, false, true);
}

SC_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
	return sc_copy3d_desc(pCopy, NULL, true, true);
}

SC_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	return sc_copy3d_desc(pCopy, hStream, false, false);
}

SC_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	return sc_copy3d_desc(pCopy, hStream, true, false);
}

static CUresult sc_memset(CUdeviceptr dptr, uint32_t value, uint32_t elem, size_t n,
			  CUstream h, bool pt, bool sync)
{
	struct sc_op op = { .kind = SC_OP_MEMSET };
	struct CUstream_st *s;
	struct CUctx_st *ctx;
	struct sf_hwq *q;
	bool page;
	uint64_t seq = 0;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (n && (n > SIZE_MAX / elem || (dptr & (elem - 1))))
		return CUDA_ERROR_INVALID_VALUE;
	if (n) {
		rc = sc_sides_rc(sc_side(SC_DPTR(dptr), n * elem, SC_REG, &page), 0, sync);
		if (rc < 0)
			return sc_result(rc);
	}
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	if (sync && s->cap) {
		sc_capture_invalidate(s->cap);
		rc = -EPERM;
	} else if (n) {
		op.u.memset.dst = SC_DPTR(dptr);
		op.u.memset.value = value;
		op.u.memset.elem = elem;
		op.u.memset.n = n;
		rc = sc_stream_op(s, &op, &seq);
	}
	q = s->q;
	ctx = s->ctx;
	sc_stream_release(s);
	if (rc == 0 && sync && seq) {
		sf_hwq_wait(q, seq);
		rc = atomic_load(&ctx->sticky);
	}
	return sc_result(rc);
}

SC_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return sc_memset(dstDevice, uc, 1, N, NULL, false, true);
}

SC_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return sc_memset(dstDevice, uc, 1, N, NULL, true, true);
}

SC_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return sc_memset(dstDevice, ui, 4, N, NULL, false, true);
}

SC_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return sc_memset(dstDevice, ui, 4, N, NULL, true, true);
}

SC_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				   CUstream hStream)
{
	return sc_memset(dstDevice, uc, 1, N, hStream, false, false);
}

SC_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
					CUstream hStream)
{
	return sc_memset(dstDevice, uc, 1, N, hStream, true, false);
}

SC_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
				    CUstream hStream)
{
	return sc_memset(dstDevice, ui, 4, N, hStream, false, false);
}

SC_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N,
					 CUstream hStream)
{
	return sc_memset(dstDevice, ui, 4, N, hStream, true, false);
}

SC_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return sc_memset(dstDevice, us, 2, N, NULL, false, true);
}

SC_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return sc_memset(dstDevice, us, 2, N, NULL, true, true);
}

SC_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
				    CUstream hStream)
{
	return sc_memset(dstDevice, us, 2, N, hStream, false, false);
}

SC_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N,
					 CUstream hStream)
{
	return sc_memset(dstDevice, us, 2, N, hStream, true, false);
}

/* Row by row, each row an ordinary memset of the stream. */
static CUresult sc_memset_2d(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h,
			     CUstream s, bool pt)
{
	CUresult rc = CUDA_SUCCESS;

	if (h > 1 && pitch < w)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t y = 0; y < h && rc == CUDA_SUCCESS; y++)
		rc = pt ? cuMemsetD8Async_ptsz(d + y * pitch, v, w, s) :
			  cuMemsetD8Async(d + y * pitch, v, w, s);
	return rc;
}

SC_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
				     size_t Width, size_t Height, CUstream hStream)
{
	return sc_memset_2d(dstDevice, dstPitch, uc, Width, Height, hStream, false);
}

SC_EXPORT CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch,
					  unsigned char uc, size_t Width, size_t Height,
					  CUstream hStream)
{
	return sc_memset_2d(dstDevice, dstPitch, uc, Width, Height, hStream, true);
}

/* Copy i as an ordinary copy of the stream; the attributes are hints. */
static CUresult sc_copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
			      size_t count, size_t numAttrs, CUstream s, bool pt)
{
	CUresult rc = CUDA_SUCCESS;

	if (!count || !dsts || !srcs || !sizes || !numAttrs)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count && rc == CUDA_SUCCESS; i++)
		rc = pt ? cuMemcpyAsync_ptsz(dsts[i], srcs[i], sizes[i], s) :
			  cuMemcpyAsync(dsts[i], srcs[i], sizes[i], s);
	return rc;
}

SC_EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
					 size_t count, CUmemcpyAttributes *attrs,
					 size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
{
	(void)attrs;
	(void)attrsIdxs;
	return sc_copy_batch(dsts, srcs, sizes, count, numAttrs, hStream, false);
}

SC_EXPORT CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs,
					      size_t *sizes, size_t count,
					      CUmemcpyAttributes *attrs, size_t *attrsIdxs,
					      size_t numAttrs, CUstream hStream)
{
	(void)attrs;
	(void)attrsIdxs;
	return sc_copy_batch(dsts, srcs, sizes, count, numAttrs, hStream, true);
}
