/*
 * cl_prog phases on what a buffering shim must capture or keep alive:
 * kernel arguments (values, buffers, SVM pointers) as they were at each
 * enqueue, native kernels' argument blocks, objects the application
 * releases while commands using them are pending (queues, buffers,
 * kernels, events), the OpenCL 1.x entry points, several threads.
 */
#include "cl_prog.h"

#include <pthread.h>
#include <string.h>

static cl_event user_event(void)
{
	cl_int err;
	cl_event u = clCreateUserEvent(clp.ctx, &err);

	CK(err);
	return u;
}

/*
 * Arguments change right after each enqueue, while the commands are held
 * back by a user event: each command runs with the values and buffers of
 * its own enqueue, on its own queue.
 */
void ph_args(void)
{
	static cl_uint wx[N], wy[N], wz[N], gx[N], gy[N], gz[N];
	cl_command_queue q2 = clp_queue(0);
	cl_kernel k = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(wx)), y = clp_buffer(sizeof(wy)), z = clp_buffer(sizeof(wz));
	cl_event u = user_event(), u2 = user_event(), ez;
	cl_uint a = 3, b = 1;
	int ok;

	clp_iota(wx, N, 50);
	clp_iota(wy, N, 51);
	clp_iota(wz, N, 52);
	clp_write(clp.q, x, wx, N);
	clp_write(clp.q, y, wy, N);
	clp_write(clp.q, z, wz, N);
	CK(clSetKernelArg(k, 0, sizeof(x), &x));
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	clp_range(clp.q, k, N, 1, &u, NULL);
	clp_axpb_ref(wx, N, 3, 1);
	a = 5;          /* the argument was copied: changing it is harmless */
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	clp_axpb_ref(wx, N, 5, 1);
	CK(clSetKernelArg(k, 0, sizeof(y), &y));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	clp_axpb_ref(wy, N, 5, 1);
	/* The same kernel object on another queue, with other arguments. */
	CK(clSetKernelArg(k, 0, sizeof(z), &z));
	b = 17;
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	clp_range(q2, k, N, 1, &u2, &ez);
	clp_axpb_ref(wz, N, 5, 17);
	b = 2;
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	CK(clSetKernelArg(k, 0, sizeof(y), &y));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	clp_axpb_ref(wy, N, 5, 2);
	CK(clSetKernelArg(k, 0, sizeof(x), &x));
	CK(clSetKernelArg(k, 1, sizeof(b), &b));
	CK(clFlush(clp.q));
	CK(clFlush(q2));
	CK(clSetUserEventStatus(u2, CL_COMPLETE));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clWaitForEvents(1, &ez));
	clp_read(clp.q, x, gx, N);
	clp_read(clp.q, y, gy, N);
	clp_read(clp.q, z, gz, N);
	ok = clp_same_u32("args", "x", gx, wx, N);
	ok &= clp_same_u32("args", "y", gy, wy, N);
	ok &= clp_same_u32("args", "z (other queue)", gz, wz, N);
	if (ok)
		printf("args: ok %016llx\n", (unsigned long long)(clp_hash(gx, sizeof(gx)) ^
								 clp_hash(gy, sizeof(gy)) ^
								 clp_hash(gz, sizeof(gz))));
	clReleaseEvent(u);
	clReleaseEvent(u2);
	clReleaseEvent(ez);
	CK(clFinish(q2));
	clReleaseCommandQueue(q2);
	clReleaseMemObject(x);
	clReleaseMemObject(y);
	clReleaseMemObject(z);
	clReleaseKernel(k);
}

/* --- SVM ------------------------------------------------------------------ */

static int svm_freed;

static void CL_CALLBACK on_svm_free(cl_command_queue q, cl_uint n, void **ptrs, void *data)
{
	(void)q;
	for (cl_uint i = 0; i < n; i++)
		clSVMFree(clp.ctx, ptrs[i]);
	*(int *)data += (int)n;
}

/*
 * Coarse-grained SVM buffers: maps, a kernel whose SVM pointer argument
 * changes right after its enqueue, fill (pattern reused at once), copies
 * between SVM buffers and to the host, and a queued free with a callback.
 */
void ph_svm(void)
{
	static cl_uint want_s[N], want_t[N], got[N];
	cl_device_svm_capabilities caps = 0;
	cl_kernel k = clp_kernel("axpb");
	cl_uint *s, *t, a = 3, b = 4, pat = 0x77;
	cl_event ev;
	int ok;

	if (clGetDeviceInfo(clp.dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, NULL) ||
	    !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
		printf("svm: skipped\n");
		clReleaseKernel(k);
		return;
	}
	s = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, N * sizeof(cl_uint), 0);
	t = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, N * sizeof(cl_uint), 0);
	if (!s || !t) {
		printf("error clSVMAlloc\n");
		exit(1);
	}
	CK(clEnqueueSVMMap(clp.q, CL_TRUE, CL_MAP_WRITE, s, N * sizeof(cl_uint), 0, NULL, NULL));
	clp_iota(s, N, 60);
	memcpy(want_s, s, sizeof(want_s));
	CK(clEnqueueSVMUnmap(clp.q, s, 0, NULL, NULL));
	CK(clEnqueueSVMMemFill(clp.q, t, &pat, sizeof(pat), N * sizeof(cl_uint), 0, NULL, NULL));
	pat = 0;
	for (size_t i = 0; i < N; i++)
		want_t[i] = 0x77;
	CK(clSetKernelArgSVMPointer(k, 0, s));
	CK(clSetKernelArg(k, 1, sizeof(a), &a));
	CK(clSetKernelArg(k, 2, sizeof(b), &b));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	clp_axpb_ref(want_s, N, 3, 4);
	CK(clSetKernelArgSVMPointer(k, 0, t));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	clp_axpb_ref(want_t, N, 3, 4);
	CK(clSetKernelArgSVMPointer(k, 0, s));
	/* The first half of s over t, then t mapped without blocking. */
	CK(clEnqueueSVMMemcpy(clp.q, CL_FALSE, t, s, N / 2 * sizeof(cl_uint), 0, NULL, NULL));
	memcpy(want_t, want_s, N / 2 * sizeof(cl_uint));
	CK(clEnqueueSVMMap(clp.q, CL_FALSE, CL_MAP_READ, t, N * sizeof(cl_uint), 0, NULL, &ev));
	CK(clWaitForEvents(1, &ev));
	ok = clp_same_u32("svm", "mapped", t, want_t, N);
	CK(clEnqueueSVMUnmap(clp.q, t, 0, NULL, NULL));
	CK(clEnqueueSVMMemcpy(clp.q, CL_TRUE, got, s, sizeof(got), 0, NULL, NULL));
	ok &= clp_same_u32("svm", "to host", got, want_s, N);
	svm_freed = 0;
	CK(clEnqueueSVMFree(clp.q, 1, (void **)&t, on_svm_free, &svm_freed, 0, NULL, NULL));
	CK(clFinish(clp.q));
	clSVMFree(clp.ctx, s);
	ok &= clp_check("svm", svm_freed == 1, "free callback freed %d", svm_freed);
	if (ok)
		printf("svm: ok %016llx\n", (unsigned long long)clp_hash(got, sizeof(got)));
	clReleaseEvent(ev);
	clReleaseKernel(k);
}

/* --- native kernels ------------------------------------------------------- */

struct nk_args {
	cl_uint *p;     /* replaced by the buffer's address */
	cl_uint n, a, b;
};

static void CL_CALLBACK native_axpb(void *args)
{
	struct nk_args *na = args;

	for (cl_uint i = 0; i < na->n; i++)
		na->p[i] = na->p[i] * na->a + na->b;
}

/*
 * A native kernel between two OpenCL kernels, gated by a user event; its
 * argument block and memory-object locations are copied at the enqueue
 * (the block changes right after).
 */
void ph_native(void)
{
	static cl_uint want[N], got[N];
	cl_device_exec_capabilities caps = 0;
	cl_kernel k = clp_kernel("axpb");
	cl_mem m = clp_buffer(sizeof(want));
	struct nk_args na = { NULL, N, 7, 9 };
	const void *loc = &na.p;
	cl_event u, ev;

	CK(clGetDeviceInfo(clp.dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof(caps), &caps, NULL));
	if (!(caps & CL_EXEC_NATIVE_KERNEL)) {
		printf("native: skipped\n");
		clReleaseMemObject(m);
		clReleaseKernel(k);
		return;
	}
	u = user_event();
	clp_iota(want, N, 70);
	clp_write(clp.q, m, want, N);
	clp_axpb(clp.q, k, m, 3, 1, 1, &u, NULL);
	clp_axpb_ref(want, N, 3, 1);
	CK(clEnqueueNativeKernel(clp.q, native_axpb, &na, sizeof(na), 1, &m, &loc, 0, NULL, &ev));
	clp_axpb_ref(want, N, 7, 9);
	na.a = 1000;
	na.b = 1000;
	na.n = 1;
	clp_axpb(clp.q, k, m, 5, 2, 0, NULL, NULL);
	clp_axpb_ref(want, N, 5, 2);
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	clp_read(clp.q, m, got, N);
	if (clp_same_u32("native", "data", got, want, N))
		printf("native: ok %016llx status %d\n",
		       (unsigned long long)clp_hash(got, sizeof(got)), clp_status(ev));
	clReleaseEvent(u);
	clReleaseEvent(ev);
	clReleaseMemObject(m);
	clReleaseKernel(k);
}

/* --- deferred releases ------------------------------------------------------------ */

/*
 * The application releases objects while commands using them are still
 * pending (OpenCL keeps them until those commands finish): a queue with
 * twenty kernels, one whose kernel waits on a user event, a buffer
 * written and copied from, a kernel object, an event in a wait list.
 */
void ph_release(void)
{
	static cl_uint want[N], got[N], src[N], w2[N];
	cl_command_queue tq = clp_queue(0), gq = clp_queue(0), qa = clp_queue(0);
	cl_kernel k = clp_kernel("axpb"), tk;
	cl_mem x = clp_buffer(sizeof(want)), y = clp_buffer(sizeof(want)), tmp;
	cl_event last, gated, u = user_event(), ea, eb;
	int ok, i;

	clp_iota(want, N, 90);
	clp_write(clp.q, x, want, N);
	for (i = 0; i < 20; i++) {
		clp_axpb(tq, k, x, 3, (cl_uint)i, 0, NULL, i == 19 ? &last : NULL);
		clp_axpb_ref(want, N, 3, (cl_uint)i);
	}
	CK(clReleaseCommandQueue(tq));
	CK(clWaitForEvents(1, &last));
	clp_read(clp.q, x, got, N);
	ok = clp_same_u32("release", "queue", got, want, N);

	/* A released queue whose kernel is still gated. */
	clp_axpb(gq, k, x, 5, 5, 1, &u, &gated);
	clp_axpb_ref(want, N, 5, 5);
	CK(clReleaseCommandQueue(gq));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clWaitForEvents(1, &gated));
	clp_read(clp.q, x, got, N);
	ok &= clp_same_u32("release", "gated queue", got, want, N);

	/* A buffer and a kernel released right after use. */
	clp_iota(src, N, 91);
	memcpy(w2, src, sizeof(w2));
	tmp = clp_buffer(sizeof(src));
	tk = clp_kernel("axpb");
	CK(clEnqueueWriteBuffer(clp.q, tmp, CL_FALSE, 0, sizeof(src), src, 0, NULL, NULL));
	clp_axpb(clp.q, tk, tmp, 7, 7, 0, NULL, NULL);
	clp_axpb_ref(w2, N, 7, 7);
	CK(clReleaseKernel(tk));
	CK(clEnqueueCopyBuffer(clp.q, tmp, y, 0, 0, sizeof(src), 0, NULL, NULL));
	CK(clReleaseMemObject(tmp));
	clp_read(clp.q, y, got, N);
	ok &= clp_same_u32("release", "buffer and kernel", got, w2, N);

	/* An event released right after it went into another queue's wait list. */
	clp_axpb(qa, k, y, 9, 1, 0, NULL, &ea);
	clp_axpb_ref(w2, N, 9, 1);
	clp_axpb(clp.q, k, y, 11, 1, 1, &ea, &eb);
	clp_axpb_ref(w2, N, 11, 1);
	CK(clReleaseEvent(ea));
	CK(clReleaseCommandQueue(qa));
	CK(clWaitForEvents(1, &eb));
	clp_read(clp.q, y, got, N);
	ok &= clp_same_u32("release", "event", got, w2, N);
	if (ok)
		printf("release: ok %016llx\n", (unsigned long long)clp_hash(got, sizeof(got)));
	clReleaseEvent(last);
	clReleaseEvent(gated);
	clReleaseEvent(u);
	clReleaseEvent(eb);
	clReleaseMemObject(x);
	clReleaseMemObject(y);
	clReleaseKernel(k);
}

/* --- OpenCL 1.x entry points ------------------------------------------------------ */

/*
 * A queue from clCreateCommandQueue; clEnqueueTask waiting on another
 * queue's kernel, clEnqueueMarker, clEnqueueBarrier. (PoCL 3.1 does not
 * implement clEnqueueWaitForEvents.)
 */
void ph_legacy(void)
{
	static cl_uint want[N], sum[1];
	cl_command_queue lq, qa = clp_queue(0);
	cl_kernel k = clp_kernel("axpb"), kt = clp_kernel("task_sum");
	cl_mem x = clp_buffer(sizeof(want)), s = clp_buffer(sizeof(sum));
	cl_uint n = N, total = 0;
	cl_event ea, m;
	cl_int err;

	lq = clCreateCommandQueue(clp.ctx, clp.dev, 0, &err);
	CK(err);
	clp_iota(want, N, 100);
	clp_write(qa, x, want, N);
	clp_axpb(qa, k, x, 3, 3, 0, NULL, &ea);
	clp_axpb_ref(want, N, 3, 3);
	CK(clSetKernelArg(kt, 0, sizeof(x), &x));
	CK(clSetKernelArg(kt, 1, sizeof(s), &s));
	CK(clSetKernelArg(kt, 2, sizeof(n), &n));
	CK(clEnqueueTask(lq, kt, 1, &ea, NULL));
	CK(clEnqueueMarker(lq, &m));
	CK(clEnqueueBarrier(lq));
	CK(clEnqueueReadBuffer(lq, s, CL_TRUE, 0, sizeof(sum), sum, 0, NULL, NULL));
	for (size_t i = 0; i < N; i++)
		total += want[i];
	if (clp_check("legacy", sum[0] == total, "sum %u want %u", sum[0], total))
		printf("legacy: ok %u marker %d\n", total, clp_status(m));
	clReleaseEvent(ea);
	clReleaseEvent(m);
	CK(clFinish(qa));
	clReleaseCommandQueue(lq);
	clReleaseCommandQueue(qa);
	clReleaseMemObject(x);
	clReleaseMemObject(s);
	clReleaseKernel(k);
	clReleaseKernel(kt);
}

/* --- threads -------------------------------------------------------------------- */

struct worker {
	pthread_t t;
	cl_command_queue q;     /* its own queue */
	cl_mem own, shared;
	cl_uint id;
	int ok;
};

/* 100 order-sensitive kernels on its own queue, 100 increments on the shared one. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	static __thread cl_uint want[N], got[N];
	cl_kernel k = clp_kernel("axpb"), ki = clp_kernel("inc");

	clp_iota(want, N, 110 + w->id);
	clp_write(w->q, w->own, want, N);
	CK(clSetKernelArg(ki, 0, sizeof(w->shared), &w->shared));
	for (cl_uint i = 0; i < 100; i++) {
		clp_axpb(w->q, k, w->own, 5, i, 0, NULL, NULL);
		clp_axpb_ref(want, N, 5, i);
		clp_range(clp.q, ki, N, 0, NULL, NULL);
	}
	clp_read(w->q, w->own, got, N);
	w->ok = !memcmp(got, want, sizeof(got));
	clReleaseKernel(k);
	clReleaseKernel(ki);
	return NULL;
}

void ph_threads(void)
{
	static cl_uint got[N], want[N];
	struct worker w[2];
	cl_mem shared = clp_buffer(sizeof(got));
	cl_uint zero = 0;
	int ok = 1, i;

	CK(clEnqueueFillBuffer(clp.q, shared, &zero, sizeof(zero), 0, sizeof(got), 0, NULL, NULL));
	CK(clFinish(clp.q));
	for (i = 0; i < 2; i++) {
		w[i].q = clp_queue(0);
		w[i].own = clp_buffer(sizeof(got));
		w[i].shared = shared;
		w[i].id = (cl_uint)i;
		w[i].ok = 0;
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i])) {
			printf("error pthread_create\n");
			exit(1);
		}
	}
	for (i = 0; i < 2; i++) {
		pthread_join(w[i].t, NULL);
		ok &= clp_check("threads", w[i].ok, "thread %d: own queue data", i);
	}
	clp_read(clp.q, shared, got, N);
	for (size_t j = 0; j < N; j++)
		want[j] = 200;
	ok &= clp_same_u32("threads", "shared queue", got, want, N);
	if (ok)
		printf("threads: ok\n");
	for (i = 0; i < 2; i++) {
		clReleaseCommandQueue(w[i].q);
		clReleaseMemObject(w[i].own);
	}
	clReleaseMemObject(shared);
}

/* --- several contexts ------------------------------------------------------------- */

/*
 * A second context on the same device, with its own program, queue and
 * buffer: kernels interleaved on both queues, then read on both.
 */
void ph_contexts(void)
{
	static cl_uint w1[N], w2[N], g1[N], g2[N];
	cl_context ctx2;
	cl_command_queue q2;
	cl_program prog2;
	cl_kernel k1 = clp_kernel("axpb"), k2;
	cl_mem m1 = clp_buffer(sizeof(w1)), m2;
	cl_int err;
	int ok;

	ctx2 = clCreateContext(NULL, 1, &clp.dev, NULL, NULL, &err);
	CK(err);
	q2 = clCreateCommandQueueWithProperties(ctx2, clp.dev, NULL, &err);
	CK(err);
	prog2 = clp_program(ctx2);
	k2 = clCreateKernel(prog2, "axpb", &err);
	CK(err);
	m2 = clCreateBuffer(ctx2, CL_MEM_READ_WRITE, sizeof(w2), NULL, &err);
	CK(err);
	clp_iota(w1, N, 120);
	clp_iota(w2, N, 121);
	clp_write(clp.q, m1, w1, N);
	clp_write(q2, m2, w2, N);
	for (cl_uint i = 0; i < 50; i++) {
		clp_axpb(clp.q, k1, m1, 3, i, 0, NULL, NULL);
		clp_axpb_ref(w1, N, 3, i);
		clp_axpb(q2, k2, m2, 5, i, 0, NULL, NULL);
		clp_axpb_ref(w2, N, 5, i);
	}
	clp_read(q2, m2, g2, N);
	clp_read(clp.q, m1, g1, N);
	ok = clp_same_u32("contexts", "first", g1, w1, N);
	ok &= clp_same_u32("contexts", "second", g2, w2, N);
	if (ok)
		printf("contexts: ok %016llx\n", (unsigned long long)(clp_hash(g1, sizeof(g1)) ^
								     clp_hash(g2, sizeof(g2))));
	clReleaseMemObject(m1);
	clReleaseMemObject(m2);
	clReleaseKernel(k1);
	clReleaseKernel(k2);
	clReleaseProgram(prog2);
	clReleaseCommandQueue(q2);
	clReleaseContext(ctx2);
}
