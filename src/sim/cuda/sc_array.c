/*
 * CUDA arrays and mipmapped arrays of the simulated CUDA driver: created,
 * charged to the device's memory, destroyed.
 *
 * Design: the simulated device has no texture units and no array copies
 * (sc_copy.c refuses CU_MEMORYTYPE_ARRAY), so an array is only its
 * descriptor and its size, which is what matters to the device's memory:
 * width x height x depth x element size, 1 for a dimension that is 0, no
 * padding modelled; a mipmapped array is the sum of its levels, each
 * dimension halved per level (down to 1; a layered array keeps its layer
 * count). Nothing is allocated on the host. Arrays belong to the context
 * current at their creation and go with it (sc_array_drain()).
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

struct CUarray_st {
	CUDA_ARRAY3D_DESCRIPTOR desc;
	uint64_t bytes;               /* charged */
};

struct CUmipmappedArray_st {
	CUDA_ARRAY3D_DESCRIPTOR desc;
	unsigned levels;
	uint64_t bytes;               /* charged */
};

/* Flags this driver models; sparse and deferred mapping it does not. */
#define SC_ARRAY_FLAGS (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | \
			CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER | 0x10u | 0x20u)

/* Bytes of one element of @d (format x channels): 0 if either is invalid. */
static uint64_t sc_elem_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	uint64_t fmt;

	switch (d->Format) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		fmt = 1;
		break;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		fmt = 2;
		break;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		fmt = 4;
		break;
	default:
		return 0;
	}
	if (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4)
		return 0;
	return fmt * d->NumChannels;
}

/*
 * Checks descriptor @d: 0, -EINVAL (format, channels, shape) or
 * -EOPNOTSUPP (sparse or deferred-mapping arrays).
 */
static int sc_desc_check(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	bool layered = d->Flags & CUDA_ARRAY3D_LAYERED;

	if (d->Flags & ~(unsigned)SC_ARRAY_FLAGS)
		return d->Flags & ~0xffu ? -EINVAL : -EOPNOTSUPP;
	if (!d->Width || !sc_elem_bytes(d))
		return -EINVAL;
	/* A 3D array needs a height; a layered one needs layers. */
	if ((!d->Height && d->Depth && !layered) || (layered && !d->Depth))
		return -EINVAL;
	if ((d->Flags & CUDA_ARRAY3D_CUBEMAP) &&
	    (d->Width != d->Height || !d->Depth || d->Depth % 6 || (!layered && d->Depth != 6)))
		return -EINVAL;
	return 0;
}

/* Bytes of level @lvl of @d, into *@out: 0 or -ENOMEM (overflow). */
static int sc_level_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned lvl, uint64_t *out)
{
	bool layered = d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
	uint64_t w = d->Width >> lvl, h = d->Height >> lvl;
	uint64_t z = layered ? d->Depth : d->Depth >> lvl, b;

	w = w ? w : 1;
	h = h ? h : 1;
	z = z ? z : 1;
	if (__builtin_mul_overflow(w, h, &b) || __builtin_mul_overflow(b, z, &b) ||
	    __builtin_mul_overflow(b, sc_elem_bytes(d), &b))
		return -ENOMEM;
	*out = b;
	return 0;
}

/* Levels a full mip chain of @d has: 1 + log2 of its largest dimension. */
static unsigned sc_max_levels(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	bool layered = d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
	uint64_t m = d->Width;
	unsigned n = 1;

	if (d->Height > m)
		m = d->Height;
	if (!layered && d->Depth > m)
		m = d->Depth;
	while (m >>= 1)
		n++;
	return n;
}

/*
 * The checks every creation shares, then the charge of @bytes; *@ctx
 * receives the current context. 0 or a negative errno.
 */
static int sc_array_charge(uint64_t bytes, struct CUctx_st **ctx)
{
	int rc = sc_ctx_current(ctx);

	if (rc == 0)
		rc = sc_capture_unsafe();
	if (rc == 0)
		rc = atomic_load(&(*ctx)->sticky);
	if (rc == 0)
		rc = sf_mem_charge(bytes);
	return rc;
}

static int sc_array_new(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	struct CUarray_st *a;
	struct CUctx_st *ctx;
	uint64_t bytes;
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	if (!out || !d)
		return -EINVAL;
	rc = sc_desc_check(d);
	if (rc == 0)
		rc = sc_level_bytes(d, 0, &bytes);
	if (rc == 0)
		rc = sc_array_charge(bytes, &ctx);
	if (rc < 0)
		return rc;
	a = malloc(sizeof(*a));
	if (!a || sc_handle_add(a, SC_H_ARRAY, ctx) < 0) {
		free(a);
		sf_mem_uncharge(bytes);
		return -ENOMEM;
	}
	a->desc = *d;
	a->bytes = bytes;
	*out = a;
	return 0;
}

SC_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	CUDA_ARRAY3D_DESCRIPTOR d = { 0 };

	if (pAllocateArray) {
		d.Width = pAllocateArray->Width;
		d.Height = pAllocateArray->Height;
		d.Format = pAllocateArray->Format;
		d.NumChannels = pAllocateArray->NumChannels;
	}
	return sc_result(sc_array_new(pHandle, pAllocateArray ? &d : NULL));
}

SC_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle,
				      const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	return sc_result(sc_array_new(pHandle, pAllocateArray));
}

/* Nothing on the device can still use it: arrays take part in no command. */
SC_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hArray, SC_H_ARRAY))
		return CUDA_ERROR_INVALID_HANDLE;
	sf_mem_uncharge(hArray->bytes);
	free(hArray);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
					  const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
					  unsigned int numMipmapLevels)
{
	const CUDA_ARRAY3D_DESCRIPTOR *d = pMipmappedArrayDesc;
	struct CUmipmappedArray_st *m;
	struct CUctx_st *ctx;
	uint64_t bytes = 0, lb;
	unsigned i;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pHandle || !d || !numMipmapLevels)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_desc_check(d);
	if (rc == 0 && numMipmapLevels > sc_max_levels(d))
		rc = -EINVAL;
	for (i = 0; rc == 0 && i < numMipmapLevels; i++) {
		rc = sc_level_bytes(d, i, &lb);
		if (rc == 0 && __builtin_add_overflow(bytes, lb, &bytes))
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = sc_array_charge(bytes, &ctx);
	if (rc < 0)
		return sc_result(rc);
	m = malloc(sizeof(*m));
	if (!m || sc_handle_add(m, SC_H_MIPMAP, ctx) < 0) {
		free(m);
		sf_mem_uncharge(bytes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->desc = *d;
	m->levels = numMipmapLevels;
	m->bytes = bytes;
	*pHandle = m;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hMipmappedArray, SC_H_MIPMAP))
		return CUDA_ERROR_INVALID_HANDLE;
	sf_mem_uncharge(hMipmappedArray->bytes);
	free(hMipmappedArray);
	return CUDA_SUCCESS;
}

/* Destroys the arrays of @ctx (its teardown). */
void sc_array_drain(struct CUctx_st *ctx)
{
	void *h[64];
	size_t n, i;

	while ((n = sc_handle_drain(ctx, SC_H_ARRAY, h, 64)) > 0) {
		for (i = 0; i < n; i++) {
			sf_mem_uncharge(((struct CUarray_st *)h[i])->bytes);
			free(h[i]);
		}
	}
	while ((n = sc_handle_drain(ctx, SC_H_MIPMAP, h, 64)) > 0) {
		for (i = 0; i < n; i++) {
			sf_mem_uncharge(((struct CUmipmappedArray_st *)h[i])->bytes);
			free(h[i]);
		}
	}
}
