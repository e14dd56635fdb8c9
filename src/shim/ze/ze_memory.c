/*
 * Device memory of the Level Zero shim: what the application allocates is
 * counted against its device's limit (shim/common/shim_mem.h) before the
 * driver is asked, and the device's memory properties show the limit.
 *
 * Counted as device memory, and refused over the limit with
 * ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: zeMemAllocDevice (on its device),
 * zePhysicalMemCreate on a device (not host physical memory), zeImageCreate
 * (bytes from the descriptor: format bits times pixels, every mip level).
 * Counted apart and never refused (the driver migrates it): zeMemAllocShared,
 * on its device or, without one, the context's first device. Host
 * allocations are not device memory and are not counted; neither are image
 * views (zeImageViewCreate*), which share their image's memory.
 *
 * Frees are the application's calls (zeMemFree, zeMemFreeExt,
 * zePhysicalMemDestroy, zeImageDestroy): Level Zero has no reference
 * counts, what is freed goes at the call (a deferred zeMemFreeExt is
 * counted freed at the call too). The bytes leave the count before the
 * driver frees them (after, another thread could be given the same
 * address first and have it counted twice) and come back if the driver
 * refuses the free.
 *
 * A context's devices cannot be asked of the driver, so the shim notes
 * each context's first device when it is created (zeContextCreate: the
 * driver's first; zeContextCreateEx: the first one given).
 */
#include "shim/ze/ze_queues.h"
#include "shim/common/shim_mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/* ze_physical_mem_flag_t's ZE_PHYSICAL_MEM_FLAG_ALLOCATE_ON_HOST (spec 1.18),
 * for headers older than it. */
#define ZM_PHYS_ON_HOST (1u << 1)

/* One handle of each kind the shim counts: their keys may be equal numbers. */
static struct shim_map zm_mem = SHIM_MAP_INIT;          /* zeMemAlloc* pointers */
static struct shim_map zm_phys = SHIM_MAP_INIT;         /* physical memory */
static struct shim_map zm_images = SHIM_MAP_INIT;

/* A context's first device (zm_ctxs). */
struct zm_ctx {
	struct shim_map_node node;      /* first; key: the context */
	ze_device_handle_t dev;
};

static struct shim_map zm_ctxs = SHIM_MAP_INIT;

/* The devices seen so far (handles live as long as the driver). */
static struct {
	ze_device_handle_t dev;
	struct shim_mem_dev *d;
} zm_devs[SHIM_MEM_DEVICES];
static unsigned zm_ndev;
static pthread_mutex_t zm_lock = PTHREAD_MUTEX_INITIALIZER;

/* The shim_mem record of @dev (named as its queues are); NULL: uncounted. */
static struct shim_mem_dev *zm_device(ze_device_handle_t dev)
{
	struct shim_mem_dev *d = NULL;
	char name[sizeof(d->device)];
	struct devid id;
	unsigned i;

	if (!dev)
		return NULL;
	pthread_mutex_lock(&zm_lock);
	for (i = 0; i < zm_ndev && !d; i++)
		if (zm_devs[i].dev == dev)
			d = zm_devs[i].d;
	pthread_mutex_unlock(&zm_lock);
	if (d)
		return d;
	/* Named with no lock held: the driver is asked. */
	zs_device_name(dev, name, sizeof(name), &id);
	d = shim_mem_device(name, &id);
	pthread_mutex_lock(&zm_lock);
	if (d && zm_ndev < SHIM_MEM_DEVICES) {
		for (i = 0; i < zm_ndev && zm_devs[i].dev != dev; i++)
			;
		if (i == zm_ndev) {
			zm_devs[i].dev = dev;
			zm_devs[i].d = d;
			zm_ndev++;
		}
	}
	pthread_mutex_unlock(&zm_lock);
	return d;
}

/* The first device of @ctx as noted at its creation, or NULL. */
static ze_device_handle_t zm_context_device(ze_context_handle_t ctx)
{
	struct zm_ctx *c;
	ze_device_handle_t dev = NULL;

	pthread_rwlock_rdlock(&zm_ctxs.lock);
	c = (struct zm_ctx *)shim_map_find_locked(&zm_ctxs, ctx);
	if (c)
		dev = c->dev;
	pthread_rwlock_unlock(&zm_ctxs.lock);
	return dev;
}

/* After a creation (@rc) of @ctx whose first device is @dev: noted. */
static ze_result_t zm_context_made(ze_result_t rc, ze_context_handle_t ctx,
				   ze_device_handle_t dev)
{
	struct zm_ctx *c, *old;

	if (rc != ZE_RESULT_SUCCESS || !dev || !ze_scheduling())
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return rc;      /* its shared allocations without a device are not counted */
	c->dev = dev;
	/* A handle the driver reused after a destroy the shim did not see. */
	old = (struct zm_ctx *)shim_map_insert(&zm_ctxs, &c->node, ctx);
	free(old);
	return rc;
}

XS_ZE_HOOK ze_result_t zeContextCreate(ze_driver_handle_t drv, const ze_context_desc_t *desc,
				       ze_context_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeContextCreate, drv, desc, out);
	ze_device_handle_t dev = NULL;
	uint32_t n = 1;

	if (rc == ZE_RESULT_SUCCESS && ze_scheduling() &&
	    ze_real.zeDeviceGet(drv, &n, &dev) != ZE_RESULT_SUCCESS)
		dev = NULL;
	return zm_context_made(rc, rc == ZE_RESULT_SUCCESS ? *out : NULL, dev);
}

XS_ZE_HOOK ze_result_t zeContextCreateEx(ze_driver_handle_t drv, const ze_context_desc_t *desc,
					 uint32_t ndev, ze_device_handle_t *devs,
					 ze_context_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeContextCreateEx, drv, desc, ndev, devs, out);
	ze_device_handle_t dev = NULL;
	uint32_t n = 1;

	if (rc == ZE_RESULT_SUCCESS && ze_scheduling()) {
		if (ndev && devs)
			dev = devs[0];
		else if (ze_real.zeDeviceGet(drv, &n, &dev) != ZE_RESULT_SUCCESS)
			dev = NULL;
	}
	return zm_context_made(rc, rc == ZE_RESULT_SUCCESS ? *out : NULL, dev);
}

XS_ZE_HOOK ze_result_t zeContextDestroy(ze_context_handle_t ctx)
{
	/* Before the driver: then the handle may be given out again. */
	if (ctx && ze_scheduling())
		free(shim_map_remove(&zm_ctxs, ctx));
	return ZE_CALL(zeContextDestroy, ctx);
}

/*
 * Counts @bytes of @kind on @dev for @api, before the driver: *@out the
 * record (NULL: not counted). SUCCESS, or OUT_OF_DEVICE_MEMORY.
 */
static ze_result_t zm_reserve(ze_device_handle_t dev, uint64_t bytes, enum shim_mem_kind kind,
			      const char *api, struct shim_mem_dev **out)
{
	struct shim_mem_dev *d;

	*out = NULL;
	if (!bytes || !ze_scheduling() || !(d = zm_device(dev)))
		return ZE_RESULT_SUCCESS;
	if (shim_mem_reserve(d, bytes, kind, api) < 0)
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	*out = d;
	return ZE_RESULT_SUCCESS;
}

/* After the driver's @rc for what zm_reserve() counted on @d: @key holds it. */
static ze_result_t zm_done(ze_result_t rc, struct shim_map *m, const void *key,
			   struct shim_mem_dev *d, uint64_t bytes, enum shim_mem_kind kind)
{
	if (!d)
		return rc;
	if (rc == ZE_RESULT_SUCCESS && key)
		shim_mem_commit(m, key, d, bytes, kind);
	else
		shim_mem_cancel(d, bytes, kind);
	return rc;
}

/* What a free took out of the count (zm_free_begin()), to count again if
 * the driver refuses the free (zm_free_end()). */
struct zm_freeing {
	struct shim_mem_dev *d;
	uint64_t bytes;
	enum shim_mem_kind kind;
};

static struct zm_freeing zm_free_begin(struct shim_map *m, const void *key)
{
	struct zm_freeing f = { 0 };
	struct shim_mem_alloc *a;

	if (!key || !ze_scheduling())
		return f;
	a = (struct shim_mem_alloc *)shim_map_remove(m, key);
	if (!a)
		return f;
	f.d = a->dev;
	f.bytes = a->bytes;
	f.kind = a->kind;
	shim_mem_cancel(a->dev, a->bytes, a->kind);
	free(a);
	return f;
}

/* After the driver's answer @rc to the free of @key in @m. */
static ze_result_t zm_free_end(ze_result_t rc, struct shim_map *m, const void *key,
			       const struct zm_freeing *f)
{
	/* Refused (another context's pointer, say): still held. It may not
	 * fit any more if another thread allocated meanwhile; then it stays
	 * uncounted, and the warning says so. */
	if (rc != ZE_RESULT_SUCCESS && f->d &&
	    shim_mem_reserve(f->d, f->bytes, f->kind, "a free the driver refused") == 0)
		shim_mem_commit(m, key, f->d, f->bytes, f->kind);
	return rc;
}

/* --- allocations ------------------------------------------------------------ */

XS_ZE_HOOK ze_result_t zeMemAllocDevice(ze_context_handle_t ctx,
					const ze_device_mem_alloc_desc_t *desc, size_t size,
					size_t align, ze_device_handle_t dev, void **pptr)
{
	struct shim_mem_dev *d;
	ze_result_t rc;

	if (!pptr)
		return ZE_CALL(zeMemAllocDevice, ctx, desc, size, align, dev, pptr);
	rc = zm_reserve(dev, size, SHIM_MEM_DEVICE, "zeMemAllocDevice", &d);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	rc = ZE_CALL(zeMemAllocDevice, ctx, desc, size, align, dev, pptr);
	return zm_done(rc, &zm_mem, rc == ZE_RESULT_SUCCESS ? *pptr : NULL, d, size,
		       SHIM_MEM_DEVICE);
}

XS_ZE_HOOK ze_result_t zeMemAllocShared(ze_context_handle_t ctx,
					const ze_device_mem_alloc_desc_t *ddesc,
					const ze_host_mem_alloc_desc_t *hdesc, size_t size,
					size_t align, ze_device_handle_t dev, void **pptr)
{
	struct shim_mem_dev *d;
	ze_result_t rc;

	if (!pptr)
		return ZE_CALL(zeMemAllocShared, ctx, ddesc, hdesc, size, align, dev, pptr);
	/* Managed memory is never refused: zm_reserve() succeeds. */
	zm_reserve(dev ? dev : zm_context_device(ctx), size, SHIM_MEM_MANAGED, "zeMemAllocShared",
		   &d);
	rc = ZE_CALL(zeMemAllocShared, ctx, ddesc, hdesc, size, align, dev, pptr);
	return zm_done(rc, &zm_mem, rc == ZE_RESULT_SUCCESS ? *pptr : NULL, d, size,
		       SHIM_MEM_MANAGED);
}

XS_ZE_HOOK ze_result_t zeMemFree(ze_context_handle_t ctx, void *ptr)
{
	struct zm_freeing f = zm_free_begin(&zm_mem, ptr);

	return zm_free_end(ZE_CALL(zeMemFree, ctx, ptr), &zm_mem, ptr, &f);
}

/*
 * A blocking or deferred free waits, in the driver, for the commands using
 * the memory: those still in an XQueue of the context must reach it and
 * complete first.
 */
XS_ZE_HOOK ze_result_t zeMemFreeExt(ze_context_handle_t ctx, const ze_memory_free_ext_desc_t *desc,
				    void *ptr)
{
	struct zm_freeing f;

	if (ctx && desc && desc->freePolicy && ze_scheduling())
		zs_wait_context(ctx);
	f = zm_free_begin(&zm_mem, ptr);
	return zm_free_end(ZE_CALL(zeMemFreeExt, ctx, desc, ptr), &zm_mem, ptr, &f);
}

XS_ZE_HOOK ze_result_t zePhysicalMemCreate(ze_context_handle_t ctx, ze_device_handle_t dev,
					   ze_physical_mem_desc_t *desc,
					   ze_physical_mem_handle_t *out)
{
	struct shim_mem_dev *d = NULL;
	uint64_t bytes = 0;
	ze_result_t rc;

	if (desc && out && dev && !(desc->flags & ZM_PHYS_ON_HOST))
		bytes = desc->size;
	rc = zm_reserve(dev, bytes, SHIM_MEM_DEVICE, "zePhysicalMemCreate", &d);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	rc = ZE_CALL(zePhysicalMemCreate, ctx, dev, desc, out);
	return zm_done(rc, &zm_phys, rc == ZE_RESULT_SUCCESS ? *out : NULL, d, bytes,
		       SHIM_MEM_DEVICE);
}

XS_ZE_HOOK ze_result_t zePhysicalMemDestroy(ze_context_handle_t ctx, ze_physical_mem_handle_t h)
{
	struct zm_freeing f = zm_free_begin(&zm_phys, h);

	return zm_free_end(ZE_CALL(zePhysicalMemDestroy, ctx, h), &zm_phys, h, &f);
}

/* Bits per pixel of @layout; 128 (the most a plain layout takes) when unknown. */
static uint64_t zm_pixel_bits(ze_image_format_layout_t layout)
{
	switch (layout) {
	case ZE_IMAGE_FORMAT_LAYOUT_8: case ZE_IMAGE_FORMAT_LAYOUT_Y8:
	case ZE_IMAGE_FORMAT_LAYOUT_P8: case ZE_IMAGE_FORMAT_LAYOUT_IA44:
	case ZE_IMAGE_FORMAT_LAYOUT_AI44: case ZE_IMAGE_FORMAT_LAYOUT_400P:
		return 8;
	case ZE_IMAGE_FORMAT_LAYOUT_NV12: case ZE_IMAGE_FORMAT_LAYOUT_I420:
	case ZE_IMAGE_FORMAT_LAYOUT_YV12:
		return 12;
	case ZE_IMAGE_FORMAT_LAYOUT_16: case ZE_IMAGE_FORMAT_LAYOUT_8_8:
	case ZE_IMAGE_FORMAT_LAYOUT_5_6_5: case ZE_IMAGE_FORMAT_LAYOUT_5_5_5_1:
	case ZE_IMAGE_FORMAT_LAYOUT_4_4_4_4: case ZE_IMAGE_FORMAT_LAYOUT_YUYV:
	case ZE_IMAGE_FORMAT_LAYOUT_VYUY: case ZE_IMAGE_FORMAT_LAYOUT_YVYU:
	case ZE_IMAGE_FORMAT_LAYOUT_UYVY: case ZE_IMAGE_FORMAT_LAYOUT_YUY2:
	case ZE_IMAGE_FORMAT_LAYOUT_A8P8: case ZE_IMAGE_FORMAT_LAYOUT_Y16:
	case ZE_IMAGE_FORMAT_LAYOUT_422H: case ZE_IMAGE_FORMAT_LAYOUT_422V:
		return 16;
	case ZE_IMAGE_FORMAT_LAYOUT_P010: case ZE_IMAGE_FORMAT_LAYOUT_P012:
	case ZE_IMAGE_FORMAT_LAYOUT_P016: case ZE_IMAGE_FORMAT_LAYOUT_444P:
	case ZE_IMAGE_FORMAT_LAYOUT_RGBP: case ZE_IMAGE_FORMAT_LAYOUT_BRGP:
		return 24;
	case ZE_IMAGE_FORMAT_LAYOUT_32: case ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8:
	case ZE_IMAGE_FORMAT_LAYOUT_16_16: case ZE_IMAGE_FORMAT_LAYOUT_10_10_10_2:
	case ZE_IMAGE_FORMAT_LAYOUT_11_11_10: case ZE_IMAGE_FORMAT_LAYOUT_AYUV:
	case ZE_IMAGE_FORMAT_LAYOUT_Y410: case ZE_IMAGE_FORMAT_LAYOUT_Y216:
	case ZE_IMAGE_FORMAT_LAYOUT_Y210: case ZE_IMAGE_FORMAT_LAYOUT_P216:
		return 32;
	case ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16: case ZE_IMAGE_FORMAT_LAYOUT_32_32:
	case ZE_IMAGE_FORMAT_LAYOUT_Y416:
		return 64;
	default:
		return 128;
	}
}

/* The device bytes of an image of @desc (every mip level); 0 when the
 * driver will refuse it (sizes that overflow). */
static uint64_t zm_image_bytes(const ze_image_desc_t *desc)
{
	uint64_t w = desc->width, h = 1, dep = 1, arr = 1, bits, total = 0, level;
	uint32_t mips = desc->miplevels ? desc->miplevels : 1;

	if (desc->type == ZE_IMAGE_TYPE_BUFFER)
		return desc->width;     /* its size in bytes */
	if (desc->type == ZE_IMAGE_TYPE_2D || desc->type == ZE_IMAGE_TYPE_2DARRAY ||
	    desc->type == ZE_IMAGE_TYPE_3D)
		h = desc->height;
	if (desc->type == ZE_IMAGE_TYPE_3D)
		dep = desc->depth;
	if (desc->type == ZE_IMAGE_TYPE_1DARRAY || desc->type == ZE_IMAGE_TYPE_2DARRAY)
		arr = desc->arraylevels;
	bits = zm_pixel_bits(desc->format.layout);
	for (uint32_t i = 0; i < mips && i < 64; i++) {
		if (__builtin_mul_overflow(w, h, &level) ||
		    __builtin_mul_overflow(level, dep, &level) ||
		    __builtin_mul_overflow(level, arr, &level) ||
		    __builtin_mul_overflow(level, bits, &level) ||
		    __builtin_add_overflow(total, (level + 7) / 8, &total))
			return 0;
		w = w > 1 ? w / 2 : 1;
		h = h > 1 ? h / 2 : 1;
		dep = dep > 1 ? dep / 2 : 1;
	}
	return total;
}

XS_ZE_HOOK ze_result_t zeImageCreate(ze_context_handle_t ctx, ze_device_handle_t dev,
				     const ze_image_desc_t *desc, ze_image_handle_t *out)
{
	struct shim_mem_dev *d;
	uint64_t bytes = desc && out ? zm_image_bytes(desc) : 0;
	ze_result_t rc;

	rc = zm_reserve(dev, bytes, SHIM_MEM_DEVICE, "zeImageCreate", &d);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	rc = ZE_CALL(zeImageCreate, ctx, dev, desc, out);
	return zm_done(rc, &zm_images, rc == ZE_RESULT_SUCCESS ? *out : NULL, d, bytes,
		       SHIM_MEM_DEVICE);
}

XS_ZE_HOOK ze_result_t zeImageDestroy(ze_image_handle_t h)
{
	struct zm_freeing f = zm_free_begin(&zm_images, h);

	return zm_free_end(ZE_CALL(zeImageDestroy, h), &zm_images, h, &f);
}

/* --- the device as the application sees it ------------------------------------ */

XS_ZE_HOOK ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t dev, uint32_t *count,
						   ze_device_memory_properties_t *props)
{
	ze_result_t rc = ZE_CALL(zeDeviceGetMemoryProperties, dev, count, props);
	struct shim_mem_dev *d;

	if (rc != ZE_RESULT_SUCCESS || !props || !count || !ze_scheduling() ||
	    !(d = zm_device(dev)))
		return rc;
	for (uint32_t i = 0; i < *count; i++) {
		uint64_t total = props[i].totalSize, unused = UINT64_MAX;

		shim_mem_view(d, &total, &unused);
		props[i].totalSize = total;
	}
	return rc;
}
