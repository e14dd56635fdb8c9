/*
 * An OpenCL application for the OpenCL shim's tests, run natively and
 * under the shim (LD_PRELOAD) on PoCL: each phase checks its results
 * against a host reference and prints deterministic lines ("<phase>: ok
 * <checksum>", event statuses, error codes; never times or pointers), so
 * that the test compares the two runs line by line. The phases cover what
 * a scheduler that buffers commands must keep transparent: data movement
 * of every kind, kernel arguments captured at enqueue, events (callbacks,
 * profiling, info, reference counts, user events) of commands that may
 * still be buffered, orderings within and across queues, out-of-order
 * queues, SVM, native kernels, deferred releases, threads, and the error
 * codes of bad calls.
 *
 * Usage: cl_prog [--repeat N] [PHASE...]   no phase: every phase but "shim",
 *                                         all of them N times (default 1)
 *        cl_prog --list                   the phase names, one a line
 * Exit status: 0 if every self-check passed, 1 otherwise.
 */
#include "cl_prog.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>

struct clp clp;

static const char kernels_src[] =
	"__kernel void vadd(__global const uint *a, __global const uint *b,\n"
	"		   __global uint *c)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	c[i] = a[i] + b[i];\n"
	"}\n"
	"__kernel void axpb(__global uint *x, uint a, uint b)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	x[i] = x[i] * a + b;\n"
	"}\n"
	"__kernel void inc(__global uint *x)\n"
	"{\n"
	"	x[get_global_id(0)] += 1;\n"
	"}\n"
	/* axpb after a pseudo-random walk of @iters steps per item, whose
	 * end goes to @junk so that it is not optimized away. */
	"__kernel void slow_axpb(__global uint *x, uint a, uint b, uint iters,\n"
	"			__global uint *junk)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	uint v = (uint)i;\n"
	"	for (uint k = 0; k < iters; k++)\n"
	"		v = v * 1664525u + 1013904223u;\n"
	"	junk[i] = v;\n"
	"	x[i] = x[i] * a + b;\n"
	"}\n"
	"__kernel void reduce(__global const uint *in, __global uint *out,\n"
	"		     __local uint *tmp)\n"
	"{\n"
	"	size_t l = get_local_id(0), n = get_local_size(0);\n"
	"	tmp[l] = in[get_global_id(0)];\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	for (size_t s = n / 2; s > 0; s >>= 1) {\n"
	"		if (l < s)\n"
	"			tmp[l] += tmp[l + s];\n"
	"		barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	}\n"
	"	if (l == 0)\n"
	"		out[get_group_id(0)] = tmp[0];\n"
	"}\n"
	"__kernel void img_shift(__read_only image2d_t src, sampler_t s,\n"
	"			__write_only image2d_t dst, int dx)\n"
	"{\n"
	"	int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
	"	uint4 v = read_imageui(src, s, p + (int2)(dx, 0));\n"
	"	write_imageui(dst, p, v + (uint4)(1, 2, 3, 4));\n"
	"}\n"
	/* One work-item: out[0] = sum of in[0..n). */
	"__kernel void task_sum(__global const uint *in, __global uint *out, uint n)\n"
	"{\n"
	"	uint s = 0;\n"
	"	for (uint i = 0; i < n; i++)\n"
	"		s += in[i];\n"
	"	out[0] = s;\n"
	"}\n";

static const struct {
	const char *name;
	void (*fn)(void);
} phases[] = {
	{ "vecadd", ph_vecadd }, { "reduction", ph_reduction },
	{ "transfers", ph_transfers }, { "rect", ph_rect }, { "fill", ph_fill },
	{ "map", ph_map }, { "many", ph_many }, { "image", ph_image },
	{ "callbacks", ph_callbacks }, { "callback_asks", ph_callback_asks },
	{ "profiling", ph_profiling },
	{ "eventinfo", ph_eventinfo }, { "retain", ph_retain },
	{ "queues", ph_queues }, { "markers", ph_markers }, { "user", ph_user },
	{ "user_error", ph_user_error }, { "ooo", ph_ooo }, { "args", ph_args },
	{ "kargs", ph_kargs }, { "kargs_svm", ph_kargs_svm },
	{ "svm", ph_svm }, { "native", ph_native }, { "errors", ph_errors },
	{ "errors_pending", ph_errors_pending }, { "builds", ph_builds },
	{ "release", ph_release }, { "legacy", ph_legacy }, { "threads", ph_threads },
	{ "contexts", ph_contexts }, { "user_fail", ph_user_fail }, { "gated", ph_gated },
	{ "enqueue_errors", ph_enqueue_errors }, { "host_flags", ph_host_flags },
	{ "link", ph_link }, { "refcounts", ph_refcounts }, { "group_copy", ph_group_copy },
	{ "release_race", ph_release_race },
};

cl_kernel clp_kernel(const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(clp.prog, name, &err);

	CK(err);
	return k;
}

cl_mem clp_buffer(size_t size)
{
	cl_int err;
	cl_mem m = clCreateBuffer(clp.ctx, CL_MEM_READ_WRITE, size, NULL, &err);

	CK(err);
	return m;
}

cl_command_queue clp_queue(cl_command_queue_properties props)
{
	cl_queue_properties p[] = { CL_QUEUE_PROPERTIES, props, 0 };
	cl_int err;
	cl_command_queue q = clCreateCommandQueueWithProperties(clp.ctx, clp.dev,
								 props ? p : NULL, &err);

	CK(err);
	return q;
}

void clp_range(cl_command_queue q, cl_kernel k, size_t n, cl_uint nw, const cl_event *w,
	       cl_event *ev)
{
	size_t local = LOCAL;

	CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &local, nw, w, ev));
}

void clp_axpb(cl_command_queue q, cl_kernel k, cl_mem x, cl_uint a, cl_uint b, cl_uint nw,
	      const cl_event *w, cl_event *ev)
{
	CK(clSetKernelArg(k, 0, sizeof(x), &x));
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	clp_range(q, k, N, nw, w, ev);
}

void clp_slow_axpb(cl_command_queue q, cl_kernel k, cl_mem x, cl_mem junk, cl_uint a,
		   cl_uint b, cl_uint nw, const cl_event *w, cl_event *ev)
{
	cl_uint iters = SLOW_ITERS;

	CK(clSetKernelArg(k, 0, sizeof(x), &x));
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	CK(clSetKernelArg(k, 3, sizeof(iters), &iters));
	CK(clSetKernelArg(k, 4, sizeof(junk), &junk));
	clp_range(q, k, N, nw, w, ev);
}

void clp_axpb_ref(cl_uint *x, size_t n, cl_uint a, cl_uint b)
{
	for (size_t i = 0; i < n; i++)
		x[i] = x[i] * a + b;
}

void clp_iota(cl_uint *x, size_t n, cl_uint seed)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (cl_uint)i * 2654435761u + seed;
}

void clp_read(cl_command_queue q, cl_mem m, cl_uint *out, size_t n)
{
	CK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof(*out), out, 0, NULL, NULL));
}

void clp_write(cl_command_queue q, cl_mem m, const cl_uint *in, size_t n)
{
	CK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, n * sizeof(*in), in, 0, NULL, NULL));
}

uint64_t clp_hash(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int clp_check(const char *phase, int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return 1;
	clp.failures++;
	printf("%s: MISMATCH ", phase);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 0;
}

int clp_same(const char *phase, const char *what, const void *got, const void *want,
	     size_t n)
{
	const unsigned char *g = got, *w = want;

	for (size_t i = 0; i < n; i++)
		if (g[i] != w[i])
			return clp_check(phase, 0, "%s at byte %zu: got 0x%02x want 0x%02x",
					 what, i, g[i], w[i]);
	return 1;
}

int clp_same_u32(const char *phase, const char *what, const cl_uint *got, const cl_uint *want,
		 size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			return clp_check(phase, 0, "%s at %zu: got %u want %u", what, i, got[i],
					 want[i]);
	return 1;
}

cl_int clp_status(cl_event e)
{
	cl_int st = 0;

	CK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL));
	return st;
}

/* Whether this process runs under the shim (its diagnostic export). */
static void ph_shim(void)
{
	int (*queues)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cl_test_queues");

	printf("shim: %s\n", queues ? "active" : "absent");
}

cl_program clp_program(cl_context ctx)
{
	const char *src = kernels_src;
	cl_program prog;
	cl_int err;

	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CK(err);
	err = clBuildProgram(prog, 1, &clp.dev, "", NULL, NULL);
	if (err != CL_SUCCESS) {
		char log[4096] = "";

		clGetProgramBuildInfo(prog, clp.dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log,
				      NULL);
		printf("error clBuildProgram = %d: %s\n", err, log);
		exit(1);
	}
	return prog;
}

static void setup(void)
{
	cl_int err;

	CK(clGetPlatformIDs(1, &clp.plat, NULL));
	CK(clGetDeviceIDs(clp.plat, CL_DEVICE_TYPE_ALL, 1, &clp.dev, NULL));
	clp.ctx = clCreateContext(NULL, 1, &clp.dev, NULL, NULL, &err);
	CK(err);
	clp.q = clp_queue(0);
	clp.prog = clp_program(clp.ctx);
}

int main(int argc, char **argv)
{
	size_t i, np = sizeof(phases) / sizeof(phases[0]);
	int j, first = 1, repeat = 1, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < np; i++)
			printf("%s\n", phases[i].name);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--repeat")) {
		repeat = atoi(argv[2]);
		first = 3;
		if (repeat < 1) {
			fprintf(stderr, "%s: bad repeat count '%s'\n", argv[0], argv[2]);
			return 2;
		}
	}
	for (j = first; j < argc; j++) {
		int known = !strcmp(argv[j], "shim");

		for (i = 0; i < np; i++)
			known |= !strcmp(argv[j], phases[i].name);
		if (!known) {
			fprintf(stderr, "%s: unknown phase '%s' (try --list)\n", argv[0], argv[j]);
			return 2;
		}
	}
	setup();
	for (r = 0; r < repeat; r++) {
		for (i = 0; i < np; i++) {
			int run = argc == first;

			for (j = first; j < argc; j++)
				run |= !strcmp(argv[j], phases[i].name);
			if (run)
				phases[i].fn();
		}
	}
	for (j = first; j < argc; j++)
		if (!strcmp(argv[j], "shim"))
			ph_shim();
	CK(clFinish(clp.q));
	CK(clReleaseCommandQueue(clp.q));
	CK(clReleaseProgram(clp.prog));
	CK(clReleaseContext(clp.ctx));
	printf("failures %d\n", clp.failures);
	return clp.failures ? 1 : 0;
}
