/*
 * cl_prog's error phases: bad calls return their error from the call
 * itself and leave no event behind, whether the queue is idle ("errors")
 * or has a backlog of slow kernels ("errors_pending"), where a shim holds
 * commands back and must still check each call as the driver would, not
 * report the driver's error later, at launch. Each code is printed.
 *
 * Only what PoCL 3.1 rejects is here: it crashes on a NULL kernel and on a
 * wait count with a NULL list given to clEnqueueNDRangeKernel, and accepts
 * without a check the wait lists of kernel launches.
 */
#include "cl_prog.h"

static void error_calls(const char *phase)
{
	static cl_uint want[N], got[N];
	cl_kernel k = clp_kernel("axpb"), unset = clp_kernel("axpb");
	cl_mem m = clp_buffer(sizeof(want));
	size_t n = N, l = LOCAL, odd = 100, big = (N + 1) * sizeof(cl_uint);
	cl_event ev = NULL, nul = NULL, foreign, ok_ev;
	const cl_queue_properties bad_props[] = { CL_QUEUE_PROPERTIES, 0x1000, 0 };
	const size_t org[3] = { 0, 0, 0 }, reg[3] = { 4, 1, 1 };
	cl_command_queue q;
	cl_context ctx2;
	cl_uint a = 1, b = 0;
	cl_int err;
	void *p;
	int leaked = 0;

#define ERR(name, call)                                                            \
	do {                                                                       \
		ev = NULL;                                                         \
		printf("%s: %s %d\n", phase, name, (int)(call));                  \
		leaked |= ev != NULL;                                              \
	} while (0)

	/* Nothing here waits for the queue: a backlog stays pending. */
	clp_iota(want, N, 80);
	CK(clEnqueueWriteBuffer(clp.q, m, CL_FALSE, 0, sizeof(want), want, 0, NULL, NULL));
	CK(clSetKernelArg(k, 0, sizeof(m), &m));
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	ctx2 = clCreateContext(NULL, 1, &clp.dev, NULL, NULL, &err);
	CK(err);
	foreign = clCreateUserEvent(ctx2, &err);
	CK(err);

	ERR("ndrange null queue", clEnqueueNDRangeKernel(NULL, k, 1, NULL, &n, &l, 0, NULL, &ev));
	ERR("read null queue", clEnqueueReadBuffer(NULL, m, CL_TRUE, 0, 4, got, 0, NULL, &ev));
	ERR("marker null queue", clEnqueueMarkerWithWaitList(NULL, 0, NULL, &ev));
	ERR("finish null queue", clFinish(NULL));
	ERR("flush null queue", clFlush(NULL));
	ERR("unset args", clEnqueueNDRangeKernel(clp.q, unset, 1, NULL, &n, &l, 0, NULL, &ev));
	ERR("work dim 0", clEnqueueNDRangeKernel(clp.q, k, 0, NULL, &n, &l, 0, NULL, &ev));
	ERR("uneven groups", clEnqueueNDRangeKernel(clp.q, k, 1, NULL, &odd, &l, 0, NULL, &ev));
	ERR("write count, null list",
	    clEnqueueWriteBuffer(clp.q, m, CL_FALSE, 0, 4, want, 1, NULL, &ev));
	ERR("write zero count, list",
	    clEnqueueWriteBuffer(clp.q, m, CL_FALSE, 0, 4, want, 0, &nul, &ev));
	ERR("write null in list",
	    clEnqueueWriteBuffer(clp.q, m, CL_FALSE, 0, 4, want, 1, &nul, &ev));
	ERR("read count, null list",
	    clEnqueueReadBuffer(clp.q, m, CL_TRUE, 0, 4, got, 2, NULL, &ev));
	ERR("read null in list", clEnqueueReadBuffer(clp.q, m, CL_FALSE, 0, 4, got, 1, &nul, &ev));
	ERR("read foreign event",
	    clEnqueueReadBuffer(clp.q, m, CL_FALSE, 0, 4, got, 1, &foreign, &ev));
	ERR("marker count, null list", clEnqueueMarkerWithWaitList(clp.q, 1, NULL, &ev));
	ERR("marker null in list", clEnqueueMarkerWithWaitList(clp.q, 1, &nul, &ev));
	ERR("marker foreign event", clEnqueueMarkerWithWaitList(clp.q, 1, &foreign, &ev));
	ERR("barrier null in list", clEnqueueBarrierWithWaitList(clp.q, 1, &nul, &ev));
	ERR("copy null in list", clEnqueueCopyBuffer(clp.q, m, m, 0, 64, 64, 1, &nul, &ev));
	ERR("fill count, null list", clEnqueueFillBuffer(clp.q, m, want, 4, 0, 64, 1, NULL, &ev));
	ERR("rect null in list",
	    clEnqueueReadBufferRect(clp.q, m, CL_FALSE, org, org, reg, 0, 0, 0, 0, got, 1, &nul,
				    &ev));
	p = clEnqueueMapBuffer(clp.q, m, CL_FALSE, CL_MAP_READ, 0, 64, 1, &nul, &ev, &err);
	printf("%s: map null in list %d %s\n", phase, err, p ? "pointer" : "null");
	leaked |= ev != NULL;
	ERR("read null buffer", clEnqueueReadBuffer(clp.q, NULL, CL_TRUE, 0, 4, got, 0, NULL, &ev));
	ERR("read past end", clEnqueueReadBuffer(clp.q, m, CL_FALSE, 0, big, got, 0, NULL, &ev));
	ERR("read null pointer", clEnqueueReadBuffer(clp.q, m, CL_FALSE, 0, 4, NULL, 0, NULL, &ev));
	ERR("copy overlap", clEnqueueCopyBuffer(clp.q, m, m, 0, 8, 64, 0, NULL, &ev));
	ERR("fill pattern 3", clEnqueueFillBuffer(clp.q, m, want, 3, 0, 12, 0, NULL, &ev));
	p = clEnqueueMapBuffer(clp.q, m, CL_TRUE, CL_MAP_READ, 0, big, 0, NULL, &ev, &err);
	printf("%s: map past end %d %s\n", phase, err, p ? "pointer" : "null");
	leaked |= ev != NULL;
	ERR("unmap bad pointer", clEnqueueUnmapMemObject(clp.q, m, got, 0, NULL, &ev));
	ERR("unmap null buffer", clEnqueueUnmapMemObject(clp.q, NULL, got, 0, NULL, &ev));
	ERR("migrate nothing", clEnqueueMigrateMemObjects(clp.q, 0, NULL, 0, 0, NULL, &ev));
	ERR("native null function",
	    clEnqueueNativeKernel(clp.q, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, &ev));
	ERR("wait none", clWaitForEvents(0, NULL));
	ERR("wait null event", clWaitForEvents(1, &nul));
	ERR("arg index", clSetKernelArg(k, 9, sizeof(a), &a));
	ERR("arg size", clSetKernelArg(k, 1, 2, &a));
	ERR("event info null", clGetEventInfo(NULL, CL_EVENT_COMMAND_TYPE, 4, &a, NULL));
	ERR("event info bad param", clGetEventInfo(foreign, 0x7fff, 4, &a, NULL));
	ERR("callback type", clSetEventCallback(foreign, 77, NULL, NULL));
	ERR("user status positive", clSetUserEventStatus(foreign, CL_SUBMITTED));
	q = clCreateCommandQueueWithProperties(clp.ctx, clp.dev, bad_props, &err);
	printf("%s: queue bad properties %d %s\n", phase, err, q ? "queue" : "null");
	q = clCreateCommandQueueWithProperties(clp.ctx, NULL, NULL, &err);
	printf("%s: queue null device %d %s\n", phase, err, q ? "queue" : "null");
	printf("%s: events left behind %d\n", phase, leaked);
#undef ERR

	/* The queue still works, with the arguments as they were. */
	clp_range(clp.q, k, N, 0, NULL, &ok_ev);
	CK(clWaitForEvents(1, &ok_ev));
	clp_read(clp.q, m, got, N);
	if (clp_same_u32(phase, "after", got, want, N))
		printf("%s: ok queue usable\n", phase);
	CK(clSetUserEventStatus(foreign, CL_COMPLETE));
	clReleaseEvent(foreign);
	clReleaseEvent(ok_ev);
	clReleaseContext(ctx2);
	clReleaseMemObject(m);
	clReleaseKernel(k);
	clReleaseKernel(unset);
}

void ph_errors(void)
{
	error_calls("errors");
}

/* The same calls behind twenty slow kernels on the same queue. */
void ph_errors_pending(void)
{
	static cl_uint want[N], got[N];
	cl_kernel ks = clp_kernel("slow_axpb");
	cl_mem x = clp_buffer(sizeof(want)), junk = clp_buffer(sizeof(want));

	clp_iota(want, N, 81);
	clp_write(clp.q, x, want, N);
	for (cl_uint i = 0; i < 20; i++) {
		clp_slow_axpb(clp.q, ks, x, junk, 3, i, 0, NULL, NULL);
		clp_axpb_ref(want, N, 3, i);
	}
	error_calls("errors_pending");
	clp_read(clp.q, x, got, N);
	if (clp_same_u32("errors_pending", "backlog", got, want, N))
		printf("errors_pending: ok backlog %016llx\n",
		       (unsigned long long)clp_hash(got, sizeof(got)));
	clReleaseMemObject(x);
	clReleaseMemObject(junk);
	clReleaseKernel(ks);
}

/* Runs bk (x += a) of @p's kernel @k over N items and checks the result. */
static void build_run(const char *what, cl_kernel k, cl_mem m, cl_uint *want, cl_uint a)
{
	static cl_uint got[N];

	CK(clSetKernelArg(k, 0, sizeof(m), &m));
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	for (size_t i = 0; i < N; i++)
		want[i] += a;
	clp_read(clp.q, m, got, N);
	if (clp_same_u32("builds", what, got, want, N))
		printf("builds: ok %s\n", what);
}

/*
 * Builds and compiles called wrongly (a device count without its list, a
 * list without its count, user data without a callback, a build while a
 * kernel of the program exists, also when the program was built from its
 * own source because the options define a name a shim's guardian uses, an
 * option the compiler does not know),
 * each code printed, and whether the program is still usable after. A kernel's argument information is
 * told as the driver tells it: without -cl-kernel-arg-info PoCL tells
 * none, although a shim may build its own copy of the program with it.
 */
void ph_builds(void)
{
	static const char *src = "__kernel void bk(__global uint *x, uint a)\n"
				 "{\n"
				 "	x[get_global_id(0)] += a;\n"
				 "}\n";
	static cl_uint want[N];
	char name[16] = "";
	cl_program p, c;
	cl_kernel k;
	cl_mem m = clp_buffer(sizeof(want));
	int data = 0;
	cl_int err;

	clp_iota(want, N, 82);
	clp_write(clp.q, m, want, N);
	p = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);
	CK(err);
	printf("builds: build, count without list %d\n",
	       clBuildProgram(p, 1, NULL, "", NULL, NULL));
	printf("builds: build, list without count %d\n",
	       clBuildProgram(p, 0, &clp.dev, "", NULL, NULL));
	printf("builds: build, data without callback %d\n",
	       clBuildProgram(p, 1, &clp.dev, "", NULL, &data));
	CK(clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	k = clCreateKernel(p, "bk", &err);
	CK(err);
	printf("builds: build, kernel attached %d\n", clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	printf("builds: build, kernel attached, count without list %d\n",
	       clBuildProgram(p, 1, NULL, "", NULL, NULL));
	printf("builds: arg name, not asked for %d\n",
	       clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL));
	printf("builds: arg 2, not asked for %d\n",
	       clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL));
	build_run("first build", k, m, want, 3);
	CK(clReleaseKernel(k));
	printf("builds: build, unknown option %d\n",
	       clBuildProgram(p, 1, &clp.dev, "-cl-no-such-option", NULL, NULL));
	k = clCreateKernel(p, "bk", &err);
	printf("builds: kernel after it %d\n", err);
	if (k) {
		build_run("after a rejected build", k, m, want, 4);
		CK(clReleaseKernel(k));
	}

	CK(clBuildProgram(p, 1, &clp.dev, " -cl-kernel-arg-info ", NULL, NULL));
	k = clCreateKernel(p, "bk", &err);
	CK(err);
	for (cl_uint i = 0; i < 3; i++) {
		err = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL);
		printf("builds: arg %u name %d %s\n", i, err, err == CL_SUCCESS ? name : "-");
	}
	build_run("rebuilt", k, m, want, 5);
	CK(clReleaseKernel(k));

	c = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);
	CK(err);
	printf("builds: compile, count without list %d\n",
	       clCompileProgram(c, 1, NULL, "", 0, NULL, NULL, NULL, NULL));
	printf("builds: compile, list without count %d\n",
	       clCompileProgram(c, 0, &clp.dev, "", 0, NULL, NULL, NULL, NULL));
	printf("builds: compile, data without callback %d\n",
	       clCompileProgram(c, 1, &clp.dev, "", 0, NULL, NULL, NULL, &data));
	printf("builds: compile %d\n", clCompileProgram(c, 1, &clp.dev, "", 0, NULL, NULL, NULL, NULL));
	CK(clReleaseProgram(c));
	CK(clReleaseProgram(p));

	/* Built as asked (the option defines a name the guardian uses), a
	 * kernel made from it, then built again. */
	p = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(p, 1, &clp.dev, "-D__xsched_x=1", NULL, NULL));
	k = clCreateKernel(p, "bk", &err);
	CK(err);
	printf("builds: own build, kernel attached %d\n",
	       clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	build_run("own build", k, m, want, 6);
	CK(clReleaseKernel(k));
	printf("builds: own build, rebuilt %d\n", clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	k = clCreateKernel(p, "bk", &err);
	CK(err);
	build_run("own build rebuilt", k, m, want, 7);
	CK(clReleaseKernel(k));
	CK(clReleaseProgram(p));
	clReleaseMemObject(m);
}
