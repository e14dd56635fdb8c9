/*
 * cl_prog phases for what the OpenCL conformance suite (CTS) found the
 * shim doing differently from the driver: commands behind a user event
 * that fails (their statuses and waits, guarded launches among them),
 * calls that go to the driver at once (a map, a release) while earlier
 * work waits for a user event the application sets only afterwards,
 * enqueue errors of launches and transfers (also when the command waits
 * behind others), programs compiled and linked in pieces, the reference
 * counts an application reads, a kernel that copies between memories
 * with async_work_group_copy after a barrier, and threads that release
 * their queues while others release buffers. Each prints what it saw
 * (return codes and statuses as numbers) for the line-by-line comparison
 * with the native run; none of it may hang.
 */
#include "cl_prog.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static cl_event conf_user_event(void)
{
	cl_int err;
	cl_event u = clCreateUserEvent(clp.ctx, &err);

	CK(err);
	return u;
}

/* The slow kernels that keep @q busy, so that what follows waits behind them. */
static void conf_backlog(cl_command_queue q, cl_kernel ks, cl_mem x, cl_mem junk, int n)
{
	for (int i = 0; i < n; i++)
		clp_slow_axpb(q, ks, x, junk, 1, 0, 0, NULL, NULL);
}

/* --- commands behind a user event that fails --------------------------------------- */

/*
 * @n launches of inc (one work-item each as tasks, else groups of LOCAL)
 * wait for a user event that is then set to -1: the wait returns the
 * driver's error, and every command then reports the driver's status,
 * before and after clFinish. Behind a backlog of slow kernels (@backlog)
 * they are still buffered in the shim when the event fails.
 */
static int user_fail_case(const char *what, int n, int task, int backlog)
{
	cl_command_queue q = clp_queue(0);
	cl_kernel k = clp_kernel("inc"), ks = clp_kernel("slow_axpb");
	cl_mem x = clp_buffer(N * sizeof(cl_uint)), junk = clp_buffer(N * sizeof(cl_uint));
	cl_event u = conf_user_event(), e[8];
	cl_int rc, st;
	int ok;

	conf_backlog(q, ks, x, junk, backlog);
	CK(clSetKernelArg(k, 0, sizeof(x), &x));
	for (int i = 0; i < n; i++) {
		if (task)
			CK(clEnqueueTask(q, k, 1, &u, &e[i]));
		else
			clp_range(q, k, N, 1, &u, &e[i]);
	}
	for (int i = 0; i < n; i++) {
		st = clp_status(e[i]);
		if (st != CL_QUEUED && st != CL_SUBMITTED)
			printf("user_fail: %s %d before: status %d\n", what, i, st);
	}
	CK(clSetUserEventStatus(u, -1));
	/* The first alone, as a waiter on one command would. */
	rc = clWaitForEvents(1, &e[0]);
	printf("user_fail: %s wait first %d\n", what, rc);
	rc = clWaitForEvents((cl_uint)n, e);
	printf("user_fail: %s wait all %d\n", what, rc);
	ok = clp_check("user_fail", rc != CL_SUCCESS, "%s: the wait succeeded", what);
	for (int i = 0; i < n; i++) {
		st = clp_status(e[i]);
		printf("user_fail: %s %d status %d\n", what, i, st);
		ok &= clp_check("user_fail", st < 0, "%s %d: status %d", what, i, st);
	}
	printf("user_fail: %s finish %d\n", what, clFinish(q));
	for (int i = 0; i < n; i++) {
		printf("user_fail: %s %d after finish %d\n", what, i, clp_status(e[i]));
		clReleaseEvent(e[i]);
	}
	clReleaseEvent(u);
	clReleaseCommandQueue(q);
	clReleaseMemObject(x);
	clReleaseMemObject(junk);
	clReleaseKernel(k);
	clReleaseKernel(ks);
	return ok;
}

void ph_user_fail(void)
{
	int ok = user_fail_case("tasks", 4, 1, 0);

	ok &= user_fail_case("ranges", 2, 0, 0);
	ok &= user_fail_case("buffered", 3, 0, 18);
	if (ok)
		printf("user_fail: ok\n");
}

/* --- calls at once while earlier work waits for the application ------------------------- */

/*
 * Writes on a queue wait for a user event that this thread sets only
 * after it made a call that goes to the driver at once on the same
 * queue: a non-blocking map (which then completes behind the writes), a
 * release of a buffer none of them uses, and of one a buffered kernel
 * uses. Natively each returns at once; the results are checked after the
 * event is set.
 */
static int gated_case(const char *what, int writes)
{
	static cl_uint src[N], want[N], got[N];
	cl_command_queue q = clp_queue(0);
	cl_kernel k = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(src)), y = clp_buffer(sizeof(src));
	cl_mem unused = clp_buffer(64), z = clp_buffer(sizeof(src)), w = clp_buffer(sizeof(src));
	cl_event u = conf_user_event(), em;
	cl_uint *p;
	cl_int err;
	int ok;

	clp_iota(src, N, 91);
	clp_write(q, y, src, N);
	for (int i = 0; i < writes; i++)
		CK(clEnqueueWriteBuffer(q, x, CL_FALSE, 0, sizeof(src), src, 1, &u, NULL));
	/* z lives on only in a launch and a copy waiting behind them. */
	clp_write(clp.q, z, src, N);
	clp_axpb(q, k, z, 5, 3, 0, NULL, NULL);
	CK(clEnqueueCopyBuffer(q, z, w, 0, 0, sizeof(src), 0, NULL, NULL));
	CK(clReleaseMemObject(z));
	p = clEnqueueMapBuffer(q, y, CL_FALSE, CL_MAP_READ, 0, sizeof(src), 0, NULL, &em, &err);
	printf("gated: %s map %d %s\n", what, err, p ? "pointer" : "null");
	printf("gated: %s release %d\n", what, clReleaseMemObject(unused));
	printf("gated: %s map status %s\n", what,
	       clp_status(em) == CL_COMPLETE ? "complete" : "not complete");
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clWaitForEvents(1, &em));
	ok = clp_check("gated", p != NULL, "%s: no mapping", what);
	if (p && (ok = clp_same_u32("gated", "mapped", p, src, N)))
		printf("gated: %s ok mapped\n", what);
	if (p)
		CK(clEnqueueUnmapMemObject(q, y, p, 0, NULL, NULL));
	CK(clFinish(q));
	clp_read(q, x, got, N);
	if (clp_same_u32("gated", "written", got, src, N))
		printf("gated: %s ok written\n", what);
	else
		ok = 0;
	memcpy(want, src, sizeof(want));
	clp_axpb_ref(want, N, 5, 3);
	clp_read(q, w, got, N);
	if (clp_same_u32("gated", "released", got, want, N))
		printf("gated: %s ok released buffer\n", what);
	else
		ok = 0;
	clReleaseEvent(em);
	clReleaseEvent(u);
	clReleaseCommandQueue(q);
	clReleaseMemObject(x);
	clReleaseMemObject(y);
	clReleaseMemObject(w);
	clReleaseKernel(k);
	return ok;
}

void ph_gated(void)
{
	int ok = gated_case("three", 3);

	ok &= gated_case("twenty", 20);
	if (ok)
		printf("gated: ok\n");
}

/* --- enqueue errors ------------------------------------------------------------------ */

static const char reqd_src[] =
	"__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
	"void reqd(__global uint *x)\n"
	"{\n"
	"	x[get_global_id(0)] += 1;\n"
	"}\n";

/* Launches refused at the enqueue, on an idle queue and behind a backlog. */
static void launch_errors(const char *what, cl_command_queue q, cl_kernel r, cl_kernel inc)
{
	size_t g8 = 8, l8 = 8, l4 = 4, g10 = 10;
	cl_event ev;
	cl_int rc;

	rc = clEnqueueNDRangeKernel(q, r, 1, NULL, &g8, &l8, 0, NULL, NULL);
	printf("enqueue_errors: %s reqd local 8 %d\n", what, rc);
	rc = clEnqueueNDRangeKernel(q, r, 1, NULL, &g8, &l8, 0, NULL, &ev);
	printf("enqueue_errors: %s reqd local 8 with event %d\n", what, rc);
	if (rc == CL_SUCCESS)
		clReleaseEvent(ev);
	rc = clEnqueueNDRangeKernel(q, r, 1, NULL, &g8, &l4, 0, NULL, NULL);
	printf("enqueue_errors: %s reqd local 4 %d\n", what, rc);
	rc = clEnqueueNDRangeKernel(q, inc, 1, NULL, &g10, &l4, 0, NULL, NULL);
	printf("enqueue_errors: %s uneven groups %d\n", what, rc);
}

void ph_enqueue_errors(void)
{
	const char *src = reqd_src;
	cl_command_queue q = clp_queue(0);
	cl_kernel ks = clp_kernel("slow_axpb"), inc = clp_kernel("inc"), r;
	cl_mem x = clp_buffer(N * sizeof(cl_uint)), junk = clp_buffer(N * sizeof(cl_uint));
	cl_program p;
	cl_int err;

	p = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	r = clCreateKernel(p, "reqd", &err);
	CK(err);
	CK(clSetKernelArg(r, 0, sizeof(x), &x));
	CK(clSetKernelArg(inc, 0, sizeof(x), &x));
	launch_errors("idle", q, r, inc);
	conf_backlog(q, ks, x, junk, 20);
	launch_errors("behind", q, r, inc);
	CK(clFinish(q));
	clReleaseKernel(r);
	clReleaseProgram(p);
	clReleaseKernel(ks);
	clReleaseKernel(inc);
	clReleaseMemObject(x);
	clReleaseMemObject(junk);
	clReleaseCommandQueue(q);
	printf("enqueue_errors: ok\n");
}

/* Transfers a buffer's host-access flags forbid, on an idle queue and behind a backlog. */
static void host_flag_calls(const char *what, cl_command_queue q, cl_mem ro, cl_mem wo,
			    cl_mem na)
{
	static cl_uint buf[64];
	size_t origin[3] = { 0, 0, 0 }, region[3] = { 16, 2, 1 };
	cl_uint pat = 7;

	printf("host_flags: %s write read-only %d\n", what,
	       clEnqueueWriteBuffer(q, ro, CL_FALSE, 0, 16, buf, 0, NULL, NULL));
	printf("host_flags: %s read write-only %d\n", what,
	       clEnqueueReadBuffer(q, wo, CL_FALSE, 0, 16, buf, 0, NULL, NULL));
	printf("host_flags: %s write no-access %d\n", what,
	       clEnqueueWriteBuffer(q, na, CL_FALSE, 0, 16, buf, 0, NULL, NULL));
	printf("host_flags: %s read no-access %d\n", what,
	       clEnqueueReadBuffer(q, na, CL_FALSE, 0, 16, buf, 0, NULL, NULL));
	printf("host_flags: %s write rect read-only %d\n", what,
	       clEnqueueWriteBufferRect(q, ro, CL_FALSE, origin, origin, region, 0, 0, 0, 0,
					buf, 0, NULL, NULL));
	printf("host_flags: %s read rect no-access %d\n", what,
	       clEnqueueReadBufferRect(q, na, CL_FALSE, origin, origin, region, 0, 0, 0, 0, buf,
				       0, NULL, NULL));
	/* Allowed: the device fills, the host reads. */
	printf("host_flags: %s fill read-only %d\n", what,
	       clEnqueueFillBuffer(q, ro, &pat, sizeof(pat), 0, 16, 0, NULL, NULL));
	printf("host_flags: %s read read-only %d\n", what,
	       clEnqueueReadBuffer(q, ro, CL_FALSE, 0, 16, buf, 0, NULL, NULL));
	CK(clFinish(q));
}

void ph_host_flags(void)
{
	cl_command_queue q = clp_queue(0);
	cl_kernel ks = clp_kernel("slow_axpb");
	cl_mem x = clp_buffer(N * sizeof(cl_uint)), junk = clp_buffer(N * sizeof(cl_uint));
	cl_mem ro, wo, na;
	cl_int err;

	ro = clCreateBuffer(clp.ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY, 256, NULL, &err);
	CK(err);
	wo = clCreateBuffer(clp.ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_WRITE_ONLY, 256, NULL, &err);
	CK(err);
	na = clCreateBuffer(clp.ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, 256, NULL, &err);
	CK(err);
	host_flag_calls("idle", q, ro, wo, na);
	conf_backlog(q, ks, x, junk, 20);
	host_flag_calls("behind", q, ro, wo, na);
	clReleaseMemObject(ro);
	clReleaseMemObject(wo);
	clReleaseMemObject(na);
	clReleaseMemObject(x);
	clReleaseMemObject(junk);
	clReleaseKernel(ks);
	clReleaseCommandQueue(q);
	printf("host_flags: ok\n");
}

/* --- programs compiled and linked in pieces --------------------------------------------- */

static const char link_lib_src[] =
	"uint twice(uint v)\n"
	"{\n"
	"	return v * 2u;\n"
	"}\n"
	"__kernel void lib_kernel(__global uint *x)\n"
	"{\n"
	"	x[get_global_id(0)] = twice(x[get_global_id(0)]);\n"
	"}\n";

static const char link_main_src[] =
	"uint twice(uint v);\n"
	"__kernel void main_kernel(__global uint *x, uint a)\n"
	"{\n"
	"	x[get_global_id(0)] = twice(x[get_global_id(0)]) + a;\n"
	"}\n";

static cl_program conf_compile(const char *src)
{
	cl_int err;
	cl_program p = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);

	CK(err);
	CK(clCompileProgram(p, 1, &clp.dev, "", 0, NULL, NULL, NULL, NULL));
	return p;
}

/* Kernel @name of @p: its argument count, and a run over N items checked. */
static int link_run(const char *what, cl_program p, const char *name, cl_uint a)
{
	static cl_uint src[N], want[N], got[N];
	cl_mem x = clp_buffer(sizeof(src));
	cl_uint nargs = 0;
	cl_int err;
	cl_kernel k = clCreateKernel(p, name, &err);

	int ok;

	printf("link: %s kernel %s %d\n", what, name, err);
	if (err != CL_SUCCESS) {
		clReleaseMemObject(x);
		return 0;
	}
	CK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL));
	printf("link: %s %s args %u\n", what, name, nargs);
	clp_iota(src, N, 17);
	memcpy(want, src, sizeof(want));
	clp_axpb_ref(want, N, 2, nargs > 1 ? a : 0);
	clp_write(clp.q, x, src, N);
	CK(clSetKernelArg(k, 0, sizeof(x), &x));
	if (nargs > 1)
		CK(clSetKernelArg(k, 1, sizeof(a), &a));
	err = clEnqueueNDRangeKernel(clp.q, k, 1, NULL, (size_t[]){ N }, (size_t[]){ LOCAL }, 0,
				     NULL, NULL);
	printf("link: %s %s launch %d\n", what, name, err);
	clp_read(clp.q, x, got, N);
	ok = err == CL_SUCCESS && clp_same_u32("link", name, got, want, N);
	if (ok)
		printf("link: %s ok %s\n", what, name);
	clReleaseKernel(k);
	clReleaseMemObject(x);
	return ok;
}

void ph_link(void)
{
	cl_program lib = conf_compile(link_lib_src), main_obj = conf_compile(link_main_src);
	cl_program both[2] = { main_obj, lib }, library, linked;
	cl_build_status bs;
	cl_int err;
	int ok = 0;

	/* Two objects linked into an executable. */
	linked = clLinkProgram(clp.ctx, 1, &clp.dev, "", 2, both, NULL, NULL, &err);
	printf("link: objects %d\n", err);
	if (linked) {
		CK(clGetProgramBuildInfo(linked, clp.dev, CL_PROGRAM_BUILD_STATUS, sizeof(bs), &bs,
					 NULL));
		printf("link: objects status %d\n", bs);
		ok = link_run("objects", linked, "main_kernel", 9);
		ok &= link_run("objects", linked, "lib_kernel", 0);
		clReleaseProgram(linked);
	}
	/* A library first, linked later with the main object. */
	library = clLinkProgram(clp.ctx, 1, &clp.dev, "-create-library", 1, &lib, NULL, NULL,
				&err);
	printf("link: library %d\n", err);
	if (library) {
		cl_program parts[2] = { main_obj, library };

		link_run("library itself", library, "lib_kernel", 0);
		linked = clLinkProgram(clp.ctx, 1, &clp.dev, "", 2, parts, NULL, NULL, &err);
		printf("link: with library %d\n", err);
		if (linked) {
			ok &= link_run("with library", linked, "main_kernel", 4);
			ok &= link_run("with library", linked, "lib_kernel", 0);
			clReleaseProgram(linked);
		}
		clReleaseProgram(library);
	}
	clReleaseProgram(lib);
	clReleaseProgram(main_obj);
	if (ok)
		printf("link: ok\n");
}

/* --- reference counts -------------------------------------------------------------------- */

static cl_uint ctx_refs(cl_context c)
{
	cl_uint n = 0;

	CK(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof(n), &n, NULL));
	return n;
}

/*
 * A context of its own, and its reference count as objects are made in
 * it and released: a queue, a program built from source, a kernel, a
 * buffer, an event; each object's own count too (an event's only as a
 * difference: drivers hold references of their own on events).
 */
void ph_refcounts(void)
{
	const char *src = "__kernel void rk(__global uint *x) { x[get_global_id(0)] += 1; }\n";
	cl_context c;
	cl_command_queue q;
	cl_program p;
	cl_kernel k;
	cl_mem m;
	cl_event ev;
	cl_uint n, n2;
	cl_int err;

	c = clCreateContext(NULL, 1, &clp.dev, NULL, NULL, &err);
	CK(err);
	printf("refcounts: context %u\n", ctx_refs(c));
	q = clCreateCommandQueueWithProperties(c, clp.dev, NULL, &err);
	CK(err);
	printf("refcounts: context with queue %u\n", ctx_refs(c));
	p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	printf("refcounts: context with program %u\n", ctx_refs(c));
	k = clCreateKernel(p, "rk", &err);
	CK(err);
	CK(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof(n), &n, NULL));
	printf("refcounts: program with kernel %u\n", n);
	m = clCreateBuffer(c, CL_MEM_READ_WRITE, N * sizeof(cl_uint), NULL, &err);
	CK(err);
	printf("refcounts: context with buffer %u\n", ctx_refs(c));
	CK(clSetKernelArg(k, 0, sizeof(m), &m));
	CK(clEnqueueNDRangeKernel(q, k, 1, NULL, (size_t[]){ N }, (size_t[]){ LOCAL }, 0, NULL,
				  &ev));
	CK(clFinish(q));
	CK(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(n), &n, NULL));
	printf("refcounts: kernel after launch %u\n", n);
	CK(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof(n), &n, NULL));
	printf("refcounts: buffer after launch %u\n", n);
	/* A driver's own references show in an event's count; a retain adds one. */
	CK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof(n), &n, NULL));
	CK(clRetainEvent(ev));
	CK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof(n2), &n2, NULL));
	printf("refcounts: event retained %d more\n", (int)n2 - (int)n);
	CK(clReleaseEvent(ev));
	CK(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof(n), &n, NULL));
	printf("refcounts: queue %u\n", n);
	printf("refcounts: context with all %u\n", ctx_refs(c));
	clReleaseEvent(ev);
	clReleaseKernel(k);
	printf("refcounts: context without kernel %u\n", ctx_refs(c));
	clReleaseProgram(p);
	clReleaseMemObject(m);
	printf("refcounts: context with queue only %u\n", ctx_refs(c));
	clReleaseCommandQueue(q);
	clReleaseContext(c);
	printf("refcounts: ok\n");
}

/* --- work-group copies ------------------------------------------------------------------ */

/*
 * The shape of the CTS's async_copy_local_to_global: each work-item fills
 * its part of a local buffer, a barrier, then one async_work_group_copy of
 * the group's part to global memory. PoCL 3.1 miscompiles such a kernel
 * when anything returns before the barrier (the guardian's prologue did):
 * the process died of SIGSEGV. The data must arrive whole.
 */
static const char group_copy_src[] =
	"__kernel void group_copy(__global const uchar *src, __global uchar *dst,\n"
	"                         __local uchar *buf, int per_group, int per_item)\n"
	"{\n"
	"  for (int i = 0; i < per_item; i++)\n"
	"    buf[get_local_id(0) * per_item + i] = src[get_global_id(0) * per_item + i];\n"
	"  barrier(CLK_LOCAL_MEM_FENCE);\n"
	"  event_t e = async_work_group_copy(dst + per_group * get_group_id(0),\n"
	"                                    (__local const uchar *)buf, (size_t)per_group, 0);\n"
	"  wait_group_events(1, &e);\n"
	"}\n";

void ph_group_copy(void)
{
	enum { ITEMS = 64, GROUPS = 37, PER_ITEM = 13 };
	size_t local = ITEMS, global = (size_t)ITEMS * GROUPS, n = global * PER_ITEM;
	const char *src = group_copy_src;
	int per_group = ITEMS * PER_ITEM, per_item = PER_ITEM;
	unsigned char *in = malloc(n), *out = calloc(n, 1);
	cl_int err;
	cl_program p;
	cl_kernel k;
	cl_mem a, b;

	if (!in || !out) {
		printf("group_copy: MISMATCH out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		in[i] = (unsigned char)(i * 7 + 1);
	p = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);
	CK(err);
	CK(clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	k = clCreateKernel(p, "group_copy", &err);
	CK(err);
	a = clCreateBuffer(clp.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, in, &err);
	CK(err);
	b = clp_buffer(n);
	CK(clSetKernelArg(k, 0, sizeof(a), &a));
	CK(clSetKernelArg(k, 1, sizeof(b), &b));
	CK(clSetKernelArg(k, 2, (size_t)per_group, NULL));
	CK(clSetKernelArg(k, 3, sizeof(per_group), &per_group));
	CK(clSetKernelArg(k, 4, sizeof(per_item), &per_item));
	CK(clEnqueueNDRangeKernel(clp.q, k, 1, NULL, &global, &local, 0, NULL, NULL));
	CK(clEnqueueReadBuffer(clp.q, b, CL_TRUE, 0, n, out, 0, NULL, NULL));
	if (clp_same("group_copy", "copied bytes", out, in, n))
		printf("group_copy: ok\n");
	clReleaseMemObject(a);
	clReleaseMemObject(b);
	clReleaseKernel(k);
	clReleaseProgram(p);
out:
	free(in);
	free(out);
}

/* --- a release while another thread releases its queue ----------------------------- */

/*
 * The shape of the CTS's unload_build_threaded: threads that each create a
 * queue, use it and release it, over and over, while the others release
 * buffers. A buffer's release looks at every queue (what it names must
 * go to the driver first); a queue that another thread released meanwhile
 * was freed under it (a use after free: SIGSEGV or a corrupted heap).
 * Every thread's data must come back.
 */
enum { RACE_THREADS = 3, RACE_ROUNDS = 300, RACE_N = 64 };

struct race {
	pthread_t t;
	cl_uint seed;
	int ok;
};

static void *race_main(void *arg)
{
	struct race *r = arg;
	cl_uint in[RACE_N], out[RACE_N];

	r->ok = 1;
	for (int i = 0; i < RACE_ROUNDS && r->ok; i++) {
		cl_command_queue q = clp_queue(0);
		cl_mem m = clp_buffer(sizeof(in));

		clp_iota(in, RACE_N, r->seed + (cl_uint)i);
		clp_write(q, m, in, RACE_N);
		clp_read(q, m, out, RACE_N);
		r->ok = !memcmp(in, out, sizeof(in));
		CK(clReleaseMemObject(m));
		CK(clReleaseCommandQueue(q));
	}
	return NULL;
}

void ph_release_race(void)
{
	struct race r[RACE_THREADS];
	int ok = 1;

	for (int i = 0; i < RACE_THREADS; i++) {
		r[i].seed = 1000u * (cl_uint)i;
		if (pthread_create(&r[i].t, NULL, race_main, &r[i])) {
			printf("release_race: MISMATCH pthread_create\n");
			exit(1);
		}
	}
	for (int i = 0; i < RACE_THREADS; i++) {
		pthread_join(r[i].t, NULL);
		ok &= clp_check("release_race", r[i].ok, "thread %d: data", i);
	}
	if (ok)
		printf("release_race: ok\n");
}
