/*
 * Device memory of the OpenCL shim: what the application allocates is
 * counted against its device's limit (shim/common/shim_mem.h) before the
 * driver is asked, and the device it is shown has the limit's size.
 *
 * Counted: buffers (clCreateBuffer, clCreateBufferWithProperties), images
 * (clCreateImage*, their bytes from the format and the descriptor, as
 * the driver stores them without row padding) and SVM (clSVMAlloc, fine
 * grain too), all as device memory of the context's first device.
 * Sub-buffers, and images made over a buffer or another image, share
 * memory already counted and count nothing.
 *
 * A memory object's memory goes with its last reference, which the
 * application does not see (commands in flight hold some, the shim's
 * buffered commands too): the shim registers a destructor callback of its
 * own when it makes the object, which the driver calls before it frees
 * the memory (after the application's own callbacks: they are called in
 * reverse order of registration). The callback carries the record of what
 * it counted, so no lookup by handle is needed and a handle the driver
 * gives out again cannot be confused with the one it freed.
 *
 * SVM is counted by pointer (a map): clSVMFree gives the bytes back before
 * the driver frees them (after, another thread could be handed the same
 * pointer first). clEnqueueSVMFree gives them back when the free happens,
 * not at the enqueue: the shim puts a callback of its own in the command,
 * which frees the pointers itself (as the driver would have) or calls the
 * application's, whose clSVMFree is then the shim's.
 *
 * Memory the shim makes for itself (the guardian's records and control
 * words, cl_refs.c's probes) goes to the driver directly and is not
 * counted: the application's limit is the application's.
 */
#include "shim/opencl/cl_shim.h"
#include "shim/common/shim_mem.h"
#include "base/xlog.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* What one memory object counts, until its destructor callback. */
struct clm_obj {
	struct shim_mem_dev *dev;
	uint64_t bytes;
};

/* The devices seen so far (their handles live as long as the platform). */
static struct {
	cl_device_id dev;
	struct shim_mem_dev *d;
} clm_devs[SHIM_MEM_DEVICES];
static unsigned clm_ndev;
static pthread_mutex_t clm_lock = PTHREAD_MUTEX_INITIALIZER;

static struct shim_map clm_svm = SHIM_MAP_INIT;

/* The shim_mem record of @dev (named as its queues are); NULL: uncounted. */
static struct shim_mem_dev *clm_device(cl_device_id dev)
{
	struct shim_mem_dev *d = NULL;
	struct devid id;
	char name[sizeof(d->device)];
	unsigned i;

	pthread_mutex_lock(&clm_lock);
	for (i = 0; i < clm_ndev && !d; i++)
		if (clm_devs[i].dev == dev)
			d = clm_devs[i].d;
	pthread_mutex_unlock(&clm_lock);
	if (d)
		return d;
	/* Named with no lock held: the driver is asked. */
	cl_device_naming(dev, name, sizeof(name), &id);
	d = shim_mem_device(name, &id);
	pthread_mutex_lock(&clm_lock);
	if (d && clm_ndev < SHIM_MEM_DEVICES) {
		for (i = 0; i < clm_ndev && clm_devs[i].dev != dev; i++)
			;
		if (i == clm_ndev) {
			clm_devs[i].dev = dev;
			clm_devs[i].d = d;
			clm_ndev++;
		}
	}
	pthread_mutex_unlock(&clm_lock);
	return d;
}

/* The record of @ctx's first device, which its allocations count against. */
static struct shim_mem_dev *clm_context_device(cl_context ctx)
{
	cl_device_id dev = cl_context_first_device(ctx);

	return dev ? clm_device(dev) : NULL;
}

/*
 * Counts @bytes of a memory object about to be made in @ctx by @api: into
 * *@out the record to hand to clm_obj_done() (NULL: not counted). Returns
 * CL_SUCCESS, or CL_MEM_OBJECT_ALLOCATION_FAILURE over the limit.
 */
static cl_int clm_obj_begin(cl_context ctx, uint64_t bytes, const char *api,
			    struct clm_obj **out)
{
	struct shim_mem_dev *d;
	struct clm_obj *o;

	*out = NULL;
	if (!bytes || !(d = clm_context_device(ctx)))
		return CL_SUCCESS;
	o = malloc(sizeof(*o));
	if (!o) {
		XLOG_ONCE(XLOG_WARN, "out of host memory to record a device allocation: "
			  "some device memory of this process is not counted");
		return CL_SUCCESS;
	}
	if (shim_mem_reserve(d, bytes, SHIM_MEM_DEVICE, api) < 0) {
		free(o);
		return CL_MEM_OBJECT_ALLOCATION_FAILURE;
	}
	o->dev = d;
	o->bytes = bytes;
	*out = o;
	return CL_SUCCESS;
}

/* The driver freed a memory object the shim counted (@arg: its clm_obj). */
static void CL_CALLBACK clm_obj_freed(cl_mem mem, void *arg)
{
	struct clm_obj *o = arg;

	(void)mem;
	shim_mem_cancel(o->dev, o->bytes, SHIM_MEM_DEVICE);
	free(o);
}

/* After the driver's answer @m (NULL: it refused) to what @o counted. */
static void clm_obj_done(struct clm_obj *o, cl_mem m)
{
	if (!o)
		return;
	if (m && cl_real.clSetMemObjectDestructorCallback(m, clm_obj_freed, o) == CL_SUCCESS)
		return;
	if (m)
		XLOG_ONCE(XLOG_WARN, "the OpenCL driver takes no destructor callback: memory "
			  "objects are not counted against XSCHED_MEMORY_LIMIT");
	shim_mem_cancel(o->dev, o->bytes, SHIM_MEM_DEVICE);
	free(o);
}

/* Bytes of one element of @f as the driver stores it; 16 (the most a
 * core format takes) when unknown, so that a limit is not passed. */
static uint64_t clm_element(const cl_image_format *f)
{
	unsigned ch;

	switch (f->image_channel_data_type) {
	case CL_UNORM_SHORT_565:
	case CL_UNORM_SHORT_555:
		return 2;
	case CL_UNORM_INT_101010:
	case CL_UNORM_INT_101010_2:
		return 4;
	default:
		break;
	}
	switch (f->image_channel_order) {
	case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH:
		ch = 1;
		break;
	case CL_RG: case CL_RA: case CL_Rx:
		ch = 2;
		break;
	case CL_RGB: case CL_RGx: case CL_sRGB:
		ch = 3;
		break;
	case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_RGBx:
	case CL_sRGBA: case CL_sBGRA: case CL_sRGBx:
		ch = 4;
		break;
	case CL_DEPTH_STENCIL:
		/* 24-bit depth and 8-bit stencil, or a float depth and a padded stencil. */
		return f->image_channel_data_type == CL_FLOAT ? 8 : 4;
	default:
		return 16;
	}
	switch (f->image_channel_data_type) {
	case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8:
		return ch;
	case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16:
	case CL_HALF_FLOAT:
		return 2 * ch;
	case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: case CL_UNORM_INT24:
		return 4 * ch;
	default:
		return 16;
	}
}

/* @a * @b * @c * @d, or 0 if it overflows (the driver refuses such an image). */
static uint64_t clm_mul4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t x;

	if (__builtin_mul_overflow(a, b, &x) || __builtin_mul_overflow(x, c, &x) ||
	    __builtin_mul_overflow(x, d, &x))
		return 0;
	return x;
}

/* The device bytes of an image of @f and @desc: 0 for one over another
 * object's memory (or arguments the driver will refuse). */
static uint64_t clm_image_bytes(const cl_image_format *f, const cl_image_desc *desc)
{
	uint64_t w, h = 1, dep = 1, arr = 1;

	if (!f || !desc || desc->buffer)
		return 0;
	w = desc->image_width;
	switch (desc->image_type) {
	case CL_MEM_OBJECT_IMAGE1D:
		break;
	case CL_MEM_OBJECT_IMAGE1D_ARRAY:
		arr = desc->image_array_size;
		break;
	case CL_MEM_OBJECT_IMAGE2D:
		h = desc->image_height;
		break;
	case CL_MEM_OBJECT_IMAGE2D_ARRAY:
		h = desc->image_height;
		arr = desc->image_array_size;
		break;
	case CL_MEM_OBJECT_IMAGE3D:
		h = desc->image_height;
		dep = desc->image_depth;
		break;
	default:        /* an image1d_buffer without its buffer: the driver refuses it */
		return 0;
	}
	return clm_mul4(clm_element(f), w, h, dep * arr);
}

/* The answer of a hook that makes nothing: NULL, and @rc for the application. */
static cl_mem clm_refuse(cl_int rc, cl_int *err)
{
	if (err)
		*err = rc;
	return NULL;
}

/* What every hook below starts with: without a loader, no context is valid. */
#define CLM_LOADED(err)                                                    \
	do {                                                               \
		if (cl_load() < 0)                                         \
			return clm_refuse(CL_INVALID_CONTEXT, (err));      \
	} while (0)

XS_CL_HOOK cl_mem clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host,
				 cl_int *err)
{
	struct clm_obj *o;
	cl_int rc;
	cl_mem m;

	CLM_LOADED(err);
	if (cl_passthrough())
		return cl_real.clCreateBuffer(ctx, flags, size, host, err);
	rc = clm_obj_begin(ctx, size, "clCreateBuffer", &o);
	if (rc != CL_SUCCESS)
		return clm_refuse(rc, err);
	m = cl_real.clCreateBuffer(ctx, flags, size, host, err);
	clm_obj_done(o, m);
	return m;
}

XS_CL_HOOK cl_mem clCreateBufferWithProperties(cl_context ctx, const cl_mem_properties *props,
					       cl_mem_flags flags, size_t size, void *host,
					       cl_int *err)
{
	struct clm_obj *o;
	cl_int rc;
	cl_mem m;

	CLM_LOADED(err);
	if (!cl_real.clCreateBufferWithProperties)
		return clm_refuse(CL_INVALID_OPERATION, err);
	if (cl_passthrough())
		return cl_real.clCreateBufferWithProperties(ctx, props, flags, size, host, err);
	rc = clm_obj_begin(ctx, size, "clCreateBufferWithProperties", &o);
	if (rc != CL_SUCCESS)
		return clm_refuse(rc, err);
	m = cl_real.clCreateBufferWithProperties(ctx, props, flags, size, host, err);
	clm_obj_done(o, m);
	return m;
}

XS_CL_HOOK cl_mem clCreateImage(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt,
				const cl_image_desc *desc, void *host, cl_int *err)
{
	struct clm_obj *o;
	cl_int rc;
	cl_mem m;

	CLM_LOADED(err);
	if (cl_passthrough())
		return cl_real.clCreateImage(ctx, flags, fmt, desc, host, err);
	rc = clm_obj_begin(ctx, clm_image_bytes(fmt, desc), "clCreateImage", &o);
	if (rc != CL_SUCCESS)
		return clm_refuse(rc, err);
	m = cl_real.clCreateImage(ctx, flags, fmt, desc, host, err);
	clm_obj_done(o, m);
	return m;
}

XS_CL_HOOK cl_mem clCreateImageWithProperties(cl_context ctx, const cl_mem_properties *props,
					      cl_mem_flags flags, const cl_image_format *fmt,
					      const cl_image_desc *desc, void *host, cl_int *err)
{
	struct clm_obj *o;
	cl_int rc;
	cl_mem m;

	CLM_LOADED(err);
	if (!cl_real.clCreateImageWithProperties)
		return clm_refuse(CL_INVALID_OPERATION, err);
	if (cl_passthrough())
		return cl_real.clCreateImageWithProperties(ctx, props, flags, fmt, desc, host, err);
	rc = clm_obj_begin(ctx, clm_image_bytes(fmt, desc), "clCreateImageWithProperties", &o);
	if (rc != CL_SUCCESS)
		return clm_refuse(rc, err);
	m = cl_real.clCreateImageWithProperties(ctx, props, flags, fmt, desc, host, err);
	clm_obj_done(o, m);
	return m;
}

XS_CL_HOOK cl_mem clCreateImage2D(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt,
				  size_t w, size_t h, size_t row_pitch, void *host, cl_int *err)
{
	struct clm_obj *o;
	cl_int rc;
	cl_mem m;

	CLM_LOADED(err);
	if (cl_passthrough())
		return cl_real.clCreateImage2D(ctx, flags, fmt, w, h, row_pitch, host, err);
	rc = clm_obj_begin(ctx, fmt ? clm_mul4(clm_element(fmt), w, h, 1) : 0, "clCreateImage2D",
			   &o);
	if (rc != CL_SUCCESS)
		return clm_refuse(rc, err);
	m = cl_real.clCreateImage2D(ctx, flags, fmt, w, h, row_pitch, host, err);
	clm_obj_done(o, m);
	return m;
}

XS_CL_HOOK cl_mem clCreateImage3D(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt,
				  size_t w, size_t h, size_t depth, size_t row_pitch,
				  size_t slice_pitch, void *host, cl_int *err)
{
	struct clm_obj *o;
	cl_int rc;
	cl_mem m;

	CLM_LOADED(err);
	if (cl_passthrough())
		return cl_real.clCreateImage3D(ctx, flags, fmt, w, h, depth, row_pitch, slice_pitch,
					       host, err);
	rc = clm_obj_begin(ctx, fmt ? clm_mul4(clm_element(fmt), w, h, depth) : 0,
			   "clCreateImage3D", &o);
	if (rc != CL_SUCCESS)
		return clm_refuse(rc, err);
	m = cl_real.clCreateImage3D(ctx, flags, fmt, w, h, depth, row_pitch, slice_pitch, host,
				    err);
	clm_obj_done(o, m);
	return m;
}

/* --- SVM -------------------------------------------------------------------- */

XS_CL_HOOK void *clSVMAlloc(cl_context ctx, cl_svm_mem_flags flags, size_t size,
			    cl_uint alignment)
{
	struct shim_mem_dev *d;
	void *p;

	if (cl_load() < 0 || !cl_real.clSVMAlloc)
		return NULL;
	if (cl_passthrough() || !size || !(d = clm_context_device(ctx)))
		return cl_real.clSVMAlloc(ctx, flags, size, alignment);
	if (shim_mem_reserve(d, size, SHIM_MEM_DEVICE, "clSVMAlloc") < 0)
		return NULL;
	p = cl_real.clSVMAlloc(ctx, flags, size, alignment);
	if (p)
		shim_mem_commit(&clm_svm, p, d, size, SHIM_MEM_DEVICE);
	else
		shim_mem_cancel(d, size, SHIM_MEM_DEVICE);
	return p;
}

XS_CL_HOOK void clSVMFree(cl_context ctx, void *p)
{
	if (cl_load() < 0 || !cl_real.clSVMFree)
		return;
	/* Before the driver frees: then another thread may be given @p. */
	if (p && !cl_passthrough())
		shim_mem_release(&clm_svm, p);
	cl_real.clSVMFree(ctx, p);
}

/* The shim's part in a clEnqueueSVMFree: the application's callback and data. */
struct clm_svm_free {
	void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[], void *);
	void *data;
	cl_context ctx;
};

/*
 * The command's callback, on a thread of the driver's: the application's
 * frees the pointers if it wants (through the shim's clSVMFree), or the
 * shim frees them as the driver would have without one.
 */
static void CL_CALLBACK clm_svm_freed(cl_command_queue q, cl_uint n, void *ptrs[], void *arg)
{
	struct clm_svm_free *f = arg;

	if (f->fn) {
		f->fn(q, n, ptrs, f->data);
	} else {
		for (cl_uint i = 0; i < n; i++) {
			if (ptrs[i])
				shim_mem_release(&clm_svm, ptrs[i]);
			cl_real.clSVMFree(f->ctx, ptrs[i]);
		}
	}
	free(f);
}

cl_int cl_mem_svm_free_enqueue(cl_command_queue cq, cl_uint n, void *ptrs[],
			       void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[], void *),
			       void *data, cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct clm_svm_free *f;
	cl_int rc;

	if (cl_passthrough())
		return cl_real.clEnqueueSVMFree(cq, n, ptrs, fn, data, nwait, wait, event);
	f = malloc(sizeof(*f));
	if (!f)
		return CL_OUT_OF_HOST_MEMORY;
	f->fn = fn;
	f->data = data;
	f->ctx = NULL;
	if (!fn && cl_real.clGetCommandQueueInfo(cq, CL_QUEUE_CONTEXT, sizeof(f->ctx), &f->ctx,
						 NULL) != CL_SUCCESS) {
		/* An invalid queue: the driver says so. */
		free(f);
		return cl_real.clEnqueueSVMFree(cq, n, ptrs, fn, data, nwait, wait, event);
	}
	rc = cl_real.clEnqueueSVMFree(cq, n, ptrs, clm_svm_freed, f, nwait, wait, event);
	if (rc != CL_SUCCESS)
		free(f);
	return rc;
}

/* --- the device as the application sees it ------------------------------------ */

/*
 * @param's @value as the limit of @dev leaves it: the memory at most the
 * limit, and so the largest allocation (never above the memory).
 */
static void clm_view(cl_device_id dev, cl_device_info param, void *value, size_t size)
{
	cl_ulong v, total;
	uint64_t shown, unused = UINT64_MAX;

	if ((param != CL_DEVICE_GLOBAL_MEM_SIZE && param != CL_DEVICE_MAX_MEM_ALLOC_SIZE) ||
	    !value || size < sizeof(cl_ulong) || cl_passthrough())
		return;
	memcpy(&v, value, sizeof(v));
	total = v;
	if (param == CL_DEVICE_MAX_MEM_ALLOC_SIZE &&
	    cl_real.clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(total), &total, NULL) !=
		    CL_SUCCESS)
		return;
	shown = total;
	shim_mem_view(clm_device(dev), &shown, &unused);
	if (shown < v)
		v = shown;
	memcpy(value, &v, sizeof(v));
}

XS_CL_HOOK cl_int clGetDeviceInfo(cl_device_id dev, cl_device_info param, size_t size,
				  void *value, size_t *ret)
{
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_DEVICE;
	rc = cl_real.clGetDeviceInfo(dev, param, size, value, ret);
	if (rc == CL_SUCCESS)
		clm_view(dev, param, value, size);
	return rc;
}
