/*
 * A test double of an OpenCL driver, for the OpenCL shim's device identity
 * (test_identity): one platform with two devices of the same name ("Fake
 * GPU", as identical GPUs of one node are) but different UUIDs
 * (cl_khr_device_uuid) and PCI bus ids (cl_khr_pci_bus_info). It answers
 * only what the shim asks while an application creates and releases
 * command queues; enqueues are not implemented.
 *
 * Loaded by the shim as its "real" library ($XSCHED_OPENCL_LIB); the
 * application (cl_two_devices) reaches it through the shim's exports.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <stdatomic.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

struct _cl_platform_id { int unused; };
struct _cl_device_id { int index; };
struct _cl_context { int unused; };
struct _cl_command_queue { atomic_int refs; cl_device_id dev; cl_context ctx; };

static struct _cl_platform_id fake_platform;
static struct _cl_device_id fake_dev[2] = { { 0 }, { 1 } };
static struct _cl_context fake_ctx;
static struct _cl_command_queue fake_queue[8];
static atomic_int fake_nqueues;

/* UUIDs 00112233-4455-6677-8899-aabbccddee0N and bus ids 0000:1N:00.0. */
static const char fake_ext[] = "cl_khr_byte_addressable_store cl_khr_device_uuid "
			       "cl_khr_pci_bus_info cl_khr_fp64";

static cl_int fake_answer(const void *v, size_t len, size_t size, void *out, size_t *ret)
{
	if (ret)
		*ret = len;
	if (!out)
		return CL_SUCCESS;
	if (size < len)
		return CL_INVALID_VALUE;
	memcpy(out, v, len);
	return CL_SUCCESS;
}

FAKE_EXPORT cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *num)
{
	if (num)
		*num = 1;
	if (p && n)
		p[0] = &fake_platform;
	return CL_SUCCESS;
}

FAKE_EXPORT cl_int clGetPlatformInfo(cl_platform_id p, cl_platform_info what, size_t size,
				     void *out, size_t *ret)
{
	static const char name[] = "Fake";

	(void)p;
	if (what != CL_PLATFORM_NAME && what != CL_PLATFORM_VENDOR)
		return CL_INVALID_VALUE;
	return fake_answer(name, sizeof(name), size, out, ret);
}

FAKE_EXPORT cl_int clGetDeviceIDs(cl_platform_id p, cl_device_type type, cl_uint n,
				  cl_device_id *d, cl_uint *num)
{
	(void)p;
	(void)type;
	if (num)
		*num = 2;
	for (cl_uint i = 0; d && i < n && i < 2; i++)
		d[i] = &fake_dev[i];
	return CL_SUCCESS;
}

FAKE_EXPORT cl_int clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t size, void *out,
				   size_t *ret)
{
	static const char name[] = "Fake GPU";
	size_t items[3] = { 1024, 1024, 64 };
	cl_bool no = CL_FALSE;
	cl_uchar uuid[CL_UUID_SIZE_KHR] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x00 };
	cl_device_pci_bus_info_khr pci = { 0, 0x10, 0, 0 };

	if (d != &fake_dev[0] && d != &fake_dev[1])
		return CL_INVALID_DEVICE;
	switch (what) {
	case CL_DEVICE_NAME:
		return fake_answer(name, sizeof(name), size, out, ret);
	case CL_DEVICE_EXTENSIONS:
		return fake_answer(fake_ext, sizeof(fake_ext), size, out, ret);
	case CL_DEVICE_UUID_KHR:
		uuid[15] = (cl_uchar)d->index;
		return fake_answer(uuid, sizeof(uuid), size, out, ret);
	case CL_DEVICE_PCI_BUS_INFO_KHR:
		pci.pci_bus += (cl_uint)d->index;
		return fake_answer(&pci, sizeof(pci), size, out, ret);
	case CL_DEVICE_MAX_WORK_ITEM_SIZES:
		return fake_answer(items, sizeof(items), size, out, ret);
	case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
		return fake_answer(&no, sizeof(no), size, out, ret);
	default:
		return CL_INVALID_VALUE;
	}
}

FAKE_EXPORT cl_context clCreateContext(const cl_context_properties *props, cl_uint n,
				       const cl_device_id *d,
				       void (CL_CALLBACK *notify)(const char *, const void *,
								  size_t, void *),
				       void *user, cl_int *err)
{
	(void)props;
	(void)n;
	(void)d;
	(void)notify;
	(void)user;
	if (err)
		*err = CL_SUCCESS;
	return &fake_ctx;
}

FAKE_EXPORT cl_int clRetainContext(cl_context c)
{
	return c == &fake_ctx ? CL_SUCCESS : CL_INVALID_CONTEXT;
}

FAKE_EXPORT cl_int clReleaseContext(cl_context c)
{
	return c == &fake_ctx ? CL_SUCCESS : CL_INVALID_CONTEXT;
}

FAKE_EXPORT cl_command_queue clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
								const cl_queue_properties *props,
								cl_int *err)
{
	int i = atomic_fetch_add(&fake_nqueues, 1);

	(void)props;
	if (i >= 8) {
		if (err)
			*err = CL_OUT_OF_HOST_MEMORY;
		return NULL;
	}
	atomic_store(&fake_queue[i].refs, 1);
	fake_queue[i].dev = d;
	fake_queue[i].ctx = c;
	if (err)
		*err = CL_SUCCESS;
	return &fake_queue[i];
}

FAKE_EXPORT cl_command_queue clCreateCommandQueue(cl_context c, cl_device_id d,
						  cl_command_queue_properties props, cl_int *err)
{
	(void)props;
	return clCreateCommandQueueWithProperties(c, d, NULL, err);
}

FAKE_EXPORT cl_int clRetainCommandQueue(cl_command_queue q)
{
	atomic_fetch_add(&q->refs, 1);
	return CL_SUCCESS;
}

FAKE_EXPORT cl_int clReleaseCommandQueue(cl_command_queue q)
{
	return atomic_fetch_sub(&q->refs, 1) > 0 ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE;
}

FAKE_EXPORT cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info what,
					 size_t size, void *out, size_t *ret)
{
	switch (what) {
	case CL_QUEUE_DEVICE:
		return fake_answer(&q->dev, sizeof(q->dev), size, out, ret);
	case CL_QUEUE_CONTEXT:
		return fake_answer(&q->ctx, sizeof(q->ctx), size, out, ret);
	default:
		return CL_INVALID_VALUE;
	}
}

/* Nothing is ever enqueued: every queue is always finished. */
FAKE_EXPORT cl_int clFlush(cl_command_queue q)
{
	(void)q;
	return CL_SUCCESS;
}

FAKE_EXPORT cl_int clFinish(cl_command_queue q)
{
	(void)q;
	return CL_SUCCESS;
}
