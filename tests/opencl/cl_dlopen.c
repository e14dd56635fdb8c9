/*
 * Reaches OpenCL the way some applications do: dlopen() of the loader by
 * a name given on the command line, every entry point looked up through
 * that handle (a plain preload sees none of these calls). Runs a vector
 * addition, prints its result, and asks the same handle for the shim's
 * diagnostic cl_test_queues(), so that the test sees whether the calls
 * reached the shim and how many queues it made.
 *
 * Usage: cl_dlopen [NAME]     NAME: libOpenCL.so (default), libOpenCL.so.1
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024
#define LOCAL 16

#define SYM(var, name)                                                     \
	do {                                                               \
		var = (__typeof__(var))dlsym(h, name);                     \
		if (!var) {                                                \
			printf("dlsym %s: not found\n", name);             \
			return 1;                                          \
		}                                                          \
	} while (0)

#define CK(call)                                                                   \
	do {                                                                       \
		cl_int rc_ = (call);                                               \
		if (rc_ != CL_SUCCESS) {                                           \
			printf("error %s = %d at line %d\n", #call, rc_, __LINE__); \
			return 1;                                                  \
		}                                                                  \
	} while (0)

static const char src[] =
	"__kernel void vadd(__global const uint *a, __global const uint *b,\n"
	"		   __global uint *c)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	c[i] = a[i] + b[i];\n"
	"}\n";

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "libOpenCL.so";
	__typeof__(&clGetPlatformIDs) get_platforms;
	__typeof__(&clGetDeviceIDs) get_devices;
	__typeof__(&clCreateContext) create_context;
	__typeof__(&clCreateCommandQueueWithProperties) create_queue;
	__typeof__(&clCreateProgramWithSource) create_program;
	__typeof__(&clBuildProgram) build;
	__typeof__(&clCreateKernel) create_kernel;
	__typeof__(&clCreateBuffer) create_buffer;
	__typeof__(&clSetKernelArg) set_arg;
	__typeof__(&clEnqueueWriteBuffer) write;
	__typeof__(&clEnqueueNDRangeKernel) launch;
	__typeof__(&clEnqueueReadBuffer) read;
	__typeof__(&clWaitForEvents) wait;
	__typeof__(&clFinish) finish;
	__typeof__(&clReleaseEvent) release_event;
	__typeof__(&clReleaseMemObject) release_mem;
	__typeof__(&clReleaseKernel) release_kernel;
	__typeof__(&clReleaseProgram) release_program;
	__typeof__(&clReleaseCommandQueue) release_queue;
	__typeof__(&clReleaseContext) release_context;
	int (*queues)(void);
	static cl_uint a[N], b[N], c[N];
	size_t n = N, local = LOCAL;
	const char *text = src;
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel k;
	cl_mem ma, mb, mc;
	cl_event ev;
	cl_int err;
	int bad = 0;
	void *h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen %s: %s\n", name, dlerror());
		return 1;
	}
	SYM(get_platforms, "clGetPlatformIDs");
	SYM(get_devices, "clGetDeviceIDs");
	SYM(create_context, "clCreateContext");
	SYM(create_queue, "clCreateCommandQueueWithProperties");
	SYM(create_program, "clCreateProgramWithSource");
	SYM(build, "clBuildProgram");
	SYM(create_kernel, "clCreateKernel");
	SYM(create_buffer, "clCreateBuffer");
	SYM(set_arg, "clSetKernelArg");
	SYM(write, "clEnqueueWriteBuffer");
	SYM(launch, "clEnqueueNDRangeKernel");
	SYM(read, "clEnqueueReadBuffer");
	SYM(wait, "clWaitForEvents");
	SYM(finish, "clFinish");
	SYM(release_event, "clReleaseEvent");
	SYM(release_mem, "clReleaseMemObject");
	SYM(release_kernel, "clReleaseKernel");
	SYM(release_program, "clReleaseProgram");
	SYM(release_queue, "clReleaseCommandQueue");
	SYM(release_context, "clReleaseContext");

	CK(get_platforms(1, &plat, NULL));
	CK(get_devices(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	ctx = create_context(NULL, 1, &dev, NULL, NULL, &err);
	CK(err);
	q = create_queue(ctx, dev, NULL, &err);
	CK(err);
	prog = create_program(ctx, 1, &text, NULL, &err);
	CK(err);
	CK(build(prog, 1, &dev, "", NULL, NULL));
	k = create_kernel(prog, "vadd", &err);
	CK(err);
	ma = create_buffer(ctx, CL_MEM_READ_WRITE, sizeof(a), NULL, &err);
	CK(err);
	mb = create_buffer(ctx, CL_MEM_READ_WRITE, sizeof(b), NULL, &err);
	CK(err);
	mc = create_buffer(ctx, CL_MEM_READ_WRITE, sizeof(c), NULL, &err);
	CK(err);
	for (cl_uint i = 0; i < N; i++) {
		a[i] = i * 3 + 1;
		b[i] = i * 5 + 2;
	}
	CK(write(q, ma, CL_FALSE, 0, sizeof(a), a, 0, NULL, NULL));
	CK(write(q, mb, CL_FALSE, 0, sizeof(b), b, 0, NULL, NULL));
	CK(set_arg(k, 0, sizeof(ma), &ma));
	CK(set_arg(k, 1, sizeof(mb), &mb));
	CK(set_arg(k, 2, sizeof(mc), &mc));
	CK(launch(q, k, 1, NULL, &n, &local, 0, NULL, NULL));
	CK(read(q, mc, CL_FALSE, 0, sizeof(c), c, 0, NULL, &ev));
	CK(wait(1, &ev));
	for (cl_uint i = 0; i < N; i++)
		bad += c[i] != a[i] + b[i];
	printf("result %s %u %u\n", bad ? "wrong" : "ok", c[0], c[N - 1]);
	queues = (int (*)(void))dlsym(h, "cl_test_queues");
	if (queues)
		printf("queues %d\n", queues());
	else
		printf("queues absent\n");
	CK(finish(q));
	CK(release_event(ev));
	CK(release_mem(ma));
	CK(release_mem(mb));
	CK(release_mem(mc));
	CK(release_kernel(k));
	CK(release_program(prog));
	CK(release_queue(q));
	CK(release_context(ctx));
	return bad ? 1 : 0;
}
