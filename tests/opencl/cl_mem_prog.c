/*
 * Device memory as an OpenCL application sees it, for test_opencl_memory:
 * run natively, under the shim, and under the shim with
 * XSCHED_MEMORY_LIMIT, it checks what the device it is shown allows. Told
 * the limit it should find (or "none"), it checks that the device reports
 * it (CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_MAX_MEM_ALLOC_SIZE), that
 * allocations fill it to the byte and no further (buffers, images, SVM;
 * sub-buffers and images over a buffer take nothing more), that every way
 * of freeing gives the memory back (the last release, clSVMFree,
 * clEnqueueSVMFree with and without a callback of the application's), that
 * an application's destructor callback is still called, and that a kernel
 * runs with the device full. Without a limit the same allocations all
 * succeed.
 *
 * Usage: cl_mem_prog 64M|none   (the limit: a number of MiB, at least 64)
 * Prints one line per step ("<step>: ok" or "<step>: MISMATCH ...") and
 * "failures N"; exit status 0 if every check passed, 1 otherwise.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1ull << 20)
#define WORDS 4096

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static uint64_t limit;          /* bytes; 0: none */
static int failures;
static const char *step = "setup";
static bool step_bad;

#define CK(call)                                                                   \
	do {                                                                       \
		cl_int rc_ = (call);                                               \
		if (rc_ != CL_SUCCESS) {                                           \
			printf("%s: error %s = %d (line %d)\n", step, #call, rc_,  \
			       __LINE__);                                          \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	step_bad = true;
	printf("%s: MISMATCH ", step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void begin(const char *name)
{
	step = name;
	step_bad = false;
}

static void end(void)
{
	if (!step_bad)
		printf("%s: ok\n", step);
}

static cl_mem buffer(size_t size, cl_int *err)
{
	return clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, err);
}

/*
 * @room more bytes fit on the device and not one more: under a limit a
 * buffer of @room is made and one more byte is refused with
 * CL_MEM_OBJECT_ALLOCATION_FAILURE; without one both are made.
 */
static void room_is(uint64_t room)
{
	cl_mem a = NULL, b;
	cl_int err = CL_SUCCESS;

	if (room) {
		a = buffer(room, &err);
		check(a != NULL, "a buffer of %llu bytes: %d", (unsigned long long)room, err);
	}
	b = buffer(1, &err);
	if (limit)
		check(!b && err == CL_MEM_OBJECT_ALLOCATION_FAILURE,
		      "one byte more than the limit: %s, error %d", b ? "made" : "refused", err);
	else
		check(b != NULL, "one more byte without a limit: %d", err);
	if (b)
		clReleaseMemObject(b);
	if (a)
		clReleaseMemObject(a);
}

/* The device as shown: the limit's size, or the driver's (more than 64 MiB). */
static void step_view(void)
{
	cl_ulong global = 0, max_alloc = 0;

	begin("view");
	CK(clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global), &global, NULL));
	CK(clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc,
			   NULL));
	if (limit) {
		check(global == limit, "CL_DEVICE_GLOBAL_MEM_SIZE %llu, limit %llu",
		      (unsigned long long)global, (unsigned long long)limit);
		check(max_alloc == limit, "CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu, limit %llu",
		      (unsigned long long)max_alloc, (unsigned long long)limit);
	} else {
		check(global > 64 * MIB, "CL_DEVICE_GLOBAL_MEM_SIZE %llu",
		      (unsigned long long)global);
		check(max_alloc >= 16 * MIB, "CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu",
		      (unsigned long long)max_alloc);
	}
	end();
}

static const char kernel_src[] =
	"__kernel void inc(__global uint *x) { x[get_global_id(0)] += 1; }\n";

/* A kernel runs on @m (the device full under a limit) and a read returns its result. */
static void step_kernel(cl_mem m)
{
	const char *src = kernel_src;
	cl_uint in[WORDS], out[WORDS];
	size_t n = WORDS, local = 16;
	cl_program prog;
	cl_kernel k;
	cl_int err;

	begin("kernel");
	for (size_t i = 0; i < WORDS; i++)
		in[i] = (cl_uint)i * 2654435761u;
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
	k = clCreateKernel(prog, "inc", &err);
	CK(err);
	CK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof(in), in, 0, NULL, NULL));
	CK(clSetKernelArg(k, 0, sizeof(m), &m));
	CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &local, 0, NULL, NULL));
	CK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL));
	for (size_t i = 0; i < WORDS; i++)
		if (out[i] != in[i] + 1) {
			check(false, "word %zu: %u, want %u", i, out[i], in[i] + 1);
			break;
		}
	CK(clReleaseKernel(k));
	CK(clReleaseProgram(prog));
	end();
}

static atomic_int destroyed;

static void CL_CALLBACK app_destructor(cl_mem m, void *data)
{
	(void)m;
	(void)data;
	atomic_fetch_add(&destroyed, 1);
}

/* Waits up to a second for @flag to reach @want (a driver's thread sets it). */
static bool wait_for(atomic_int *flag, int want)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000 && atomic_load(flag) < want; i++)
		nanosleep(&ms, NULL);
	return atomic_load(flag) >= want;
}

/* 48 MiB held: 16 MiB more, a sub-buffer, a destructor, exact give-back. */
static void step_buffers(cl_mem big)
{
	cl_mem b, sub;
	cl_buffer_region r = { 0, MIB };
	cl_int err;

	begin("buffers");
	b = clCreateBufferWithProperties(ctx, NULL, CL_MEM_READ_WRITE, 16 * MIB, NULL, &err);
	check(b != NULL, "clCreateBufferWithProperties of 16 MiB: %d", err);
	room_is(limit ? 0 : 16 * MIB);
	if (limit)
		check(!clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1, 0), "clSVMAlloc over the limit made");
	sub = clCreateSubBuffer(big, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
	check(sub != NULL, "a sub-buffer of the full device: %d", err);
	if (sub)
		CK(clReleaseMemObject(sub));
	if (b) {
		CK(clSetMemObjectDestructorCallback(b, app_destructor, NULL));
		CK(clReleaseMemObject(b));
		check(wait_for(&destroyed, 1), "the application's destructor callback not called");
	}
	/* Exactly what was given back. */
	room_is(16 * MIB);
	end();
}

/* 48 MiB held: images of 16 MiB by each call, one over a buffer. */
static void step_images(void)
{
	cl_image_format rgba = { CL_RGBA, CL_UNSIGNED_INT8 };
	cl_image_desc d2 = { .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 2048,
			     .image_height = 2048 };
	cl_image_desc d1b = { .image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER,
			      .image_width = 4 * MIB };
	cl_mem img, buf;
	cl_int err;

	begin("images");
	img = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &d2, NULL, &err);
	check(img != NULL, "clCreateImage 2048x2048 RGBA8: %d", err);
	room_is(0);
	if (img)
		CK(clReleaseMemObject(img));
	img = clCreateImageWithProperties(ctx, NULL, CL_MEM_READ_WRITE, &rgba, &d2, NULL, &err);
	check(img != NULL, "clCreateImageWithProperties 2048x2048 RGBA8: %d", err);
	room_is(0);
	if (img)
		CK(clReleaseMemObject(img));
	img = clCreateImage2D(ctx, CL_MEM_READ_WRITE, &rgba, 2048, 2048, 0, NULL, &err);
	check(img != NULL, "clCreateImage2D 2048x2048 RGBA8: %d", err);
	room_is(0);
	if (img)
		CK(clReleaseMemObject(img));
	img = clCreateImage3D(ctx, CL_MEM_READ_WRITE, &rgba, 1024, 1024, 4, 0, 0, NULL, &err);
	check(img != NULL, "clCreateImage3D 1024x1024x4 RGBA8: %d", err);
	room_is(0);
	if (img)
		CK(clReleaseMemObject(img));
	/* The buffer fills the device; the image over it takes nothing more. */
	buf = buffer(16 * MIB, &err);
	check(buf != NULL, "a buffer of 16 MiB: %d", err);
	d1b.buffer = buf;
	img = buf ? clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &d1b, NULL, &err) : NULL;
	check(img != NULL, "an image1d_buffer over the buffer: %d", err);
	if (img)
		CK(clReleaseMemObject(img));
	if (buf)
		CK(clReleaseMemObject(buf));
	room_is(16 * MIB);
	end();
}

static atomic_int svm_freed;

/* An application's free callback: it frees the pointers itself. */
static void CL_CALLBACK app_svm_free(cl_command_queue cq, cl_uint n, void *ptrs[], void *data)
{
	(void)cq;
	for (cl_uint i = 0; i < n; i++)
		clSVMFree((cl_context)data, ptrs[i]);
	atomic_fetch_add(&svm_freed, 1);
}

/* 48 MiB held: 16 MiB of SVM, freed each way. */
static void step_svm(void)
{
	cl_device_svm_capabilities caps = 0;
	cl_svm_mem_flags fine = CL_MEM_READ_WRITE;
	void *p;

	begin("svm");
	if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, NULL) ||
	    !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
		printf("svm: skipped\n");
		return;
	}
	if (caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER)
		fine |= CL_MEM_SVM_FINE_GRAIN_BUFFER;
	p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 16 * MIB, 0);
	check(p != NULL, "clSVMAlloc of 16 MiB");
	room_is(0);
	clSVMFree(ctx, p);
	room_is(16 * MIB);
	/* Freed by the command, as the driver would. */
	p = clSVMAlloc(ctx, fine, 16 * MIB, 0);
	check(p != NULL, "clSVMAlloc of 16 MiB (fine grain where offered)");
	room_is(0);
	if (p) {
		CK(clEnqueueSVMFree(q, 1, &p, NULL, NULL, 0, NULL, NULL));
		CK(clFinish(q));
	}
	room_is(16 * MIB);
	/* Freed by the application's callback. */
	p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 16 * MIB, 0);
	check(p != NULL, "clSVMAlloc of 16 MiB");
	if (p) {
		CK(clEnqueueSVMFree(q, 1, &p, app_svm_free, ctx, 0, NULL, NULL));
		CK(clFinish(q));
		check(wait_for(&svm_freed, 1), "the application's free callback not called");
	}
	room_is(16 * MIB);
	end();
}

int main(int argc, char **argv)
{
	cl_platform_id plat;
	cl_mem big;
	cl_int err;
	char *endp;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: cl_mem_prog 64M|none\n");
		return 2;
	}
	if (strcmp(argv[1], "none")) {
		limit = strtoull(argv[1], &endp, 10) * MIB;
		if (strcmp(endp, "M") || limit < 64 * MIB) {
			fprintf(stderr, "cl_mem_prog: bad limit '%s'\n", argv[1]);
			return 2;
		}
	}
	CK(clGetPlatformIDs(1, &plat, NULL));
	CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CK(err);
	q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	CK(err);
	step_view();
	/* All but 16 MiB of the device, the rest of the run. */
	begin("fill");
	big = buffer(limit ? limit - 16 * MIB : 48 * MIB, &err);
	CK(err);
	room_is(16 * MIB);
	end();
	step_buffers(big);
	step_kernel(big);
	step_images();
	step_svm();
	begin("empty");
	CK(clReleaseMemObject(big));
	/* Nothing is left counted: the whole limit fits again. */
	room_is(limit ? limit : 64 * MIB);
	end();
	CK(clReleaseCommandQueue(q));
	CK(clReleaseContext(ctx));
	printf("failures %d\n", failures);
	return failures ? 1 : 0;
}
