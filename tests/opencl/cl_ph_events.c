/*
 * cl_prog phases on events and orderings. Under the shim an event the
 * application gets for a still-buffered command is a stand-in until the
 * command is launched: it must still carry the command's type, queue and
 * context, fire the callbacks registered on it (with itself as the
 * handle), report profiling times only once complete, refuse
 * clSetUserEventStatus, and order work on other queues, through markers,
 * barriers and wait lists, as the real event would.
 */
#include "cl_prog.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static cl_event user_event(void)
{
	cl_int err;
	cl_event u = clCreateUserEvent(clp.ctx, &err);

	CK(err);
	return u;
}

static int ooo_supported(void)
{
	cl_command_queue_properties p = 0;

	CK(clGetDeviceInfo(clp.dev, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof(p), &p, NULL));
	return !!(p & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
}

/* --- callbacks ------------------------------------------------------------- */

#define CB_MAX 48

struct cb_reg {
	cl_event ev;
	cl_int want;            /* the status registered for */
	cl_int got;
	cl_int info;            /* the event's status read in the callback */
	int fired;
	int same_handle;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fired;
	struct cb_reg reg[CB_MAX];
	int n;
} cb = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void CL_CALLBACK on_event(cl_event e, cl_int status, void *data)
{
	struct cb_reg *r = data;
	cl_int info = -1;

	clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(info), &info, NULL);
	pthread_mutex_lock(&cb.mu);
	r->got = status;
	r->info = info;
	r->same_handle = e == r->ev;
	r->fired++;
	cb.fired++;
	pthread_cond_broadcast(&cb.cv);
	pthread_mutex_unlock(&cb.mu);
}

static void watch(cl_event e, cl_int status)
{
	struct cb_reg *r = &cb.reg[cb.n++];

	r->ev = e;
	r->want = status;
	CK(clSetEventCallback(e, status, on_event, r));
}

static void watch_all(cl_event e)
{
	watch(e, CL_SUBMITTED);
	watch(e, CL_RUNNING);
	watch(e, CL_COMPLETE);
}

/* Waits up to 10 s for @n callbacks in all; returns how many fired. */
static int wait_callbacks(int n)
{
	struct timespec end;
	int fired;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 10;
	pthread_mutex_lock(&cb.mu);
	while (cb.fired < n && pthread_cond_timedwait(&cb.cv, &cb.mu, &end) != ETIMEDOUT)
		;
	fired = cb.fired;
	pthread_mutex_unlock(&cb.mu);
	return fired;
}

/*
 * CL_SUBMITTED, CL_RUNNING and CL_COMPLETE callbacks on a kernel, a
 * non-blocking read, a marker, a command gated by a user event, the user
 * event itself, and an event already complete: each fires once, with the
 * registered handle and a status at or past the one asked for; the gated
 * command's CL_COMPLETE callback waits for the gate.
 */
void ph_callbacks(void)
{
	static cl_uint host[N], want[N], want_read[N];
	cl_kernel k = clp_kernel("axpb");
	cl_mem m = clp_buffer(sizeof(host));
	cl_event ek, er, em, eg, u = user_event(), done;
	int early, fired, ok = 1, i;

	cb.n = 0;
	cb.fired = 0;
	clp_iota(want, N, 2);
	clp_write(clp.q, m, want, N);
	clp_axpb(clp.q, k, m, 3, 3, 0, NULL, &done);
	clp_axpb_ref(want, N, 3, 3);
	CK(clWaitForEvents(1, &done));
	clp_axpb(clp.q, k, m, 5, 5, 0, NULL, &ek);
	clp_axpb_ref(want, N, 5, 5);
	memcpy(want_read, want, sizeof(want));
	CK(clEnqueueReadBuffer(clp.q, m, CL_FALSE, 0, sizeof(host), host, 0, NULL, &er));
	CK(clEnqueueMarkerWithWaitList(clp.q, 0, NULL, &em));
	watch_all(ek);
	watch_all(er);
	watch_all(em);
	watch_all(done);
	CK(clWaitForEvents(1, &em));
	clp_axpb(clp.q, k, m, 7, 7, 1, &u, &eg);
	clp_axpb_ref(want, N, 7, 7);
	watch_all(eg);
	watch(u, CL_COMPLETE);
	CK(clFlush(clp.q));
	pthread_mutex_lock(&cb.mu);
	early = cb.reg[cb.n - 2].fired + cb.reg[cb.n - 1].fired;
	pthread_mutex_unlock(&cb.mu);
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clWaitForEvents(1, &eg));
	fired = wait_callbacks(cb.n);
	ok &= clp_check("callbacks", fired == cb.n, "%d of %d callbacks fired", fired, cb.n);
	pthread_mutex_lock(&cb.mu);
	for (i = 0; i < cb.n; i++) {
		struct cb_reg *r = &cb.reg[i];

		ok &= clp_check("callbacks", r->fired <= 1, "callback %d fired %d times", i,
				r->fired);
		if (!r->fired)
			continue;
		ok &= clp_check("callbacks", r->same_handle, "callback %d: another handle", i);
		ok &= clp_check("callbacks", r->got >= 0 && r->got <= r->want,
				"callback %d for status %d got %d", i, r->want, r->got);
		ok &= clp_check("callbacks", r->want != CL_COMPLETE || r->info == CL_COMPLETE,
				"callback %d for CL_COMPLETE: event status %d", i, r->info);
	}
	pthread_mutex_unlock(&cb.mu);
	ok &= clp_check("callbacks", !early, "the gated command's callbacks fired before the gate");
	ok &= clp_same_u32("callbacks", "data", host, want_read, N);
	CK(clFinish(clp.q));
	clp_read(clp.q, m, host, N);
	ok &= clp_same_u32("callbacks", "gated data", host, want, N);
	printf("callbacks: %s %d/%d\n", ok ? "ok" : "failed", fired, cb.n);
	clReleaseEvent(ek);
	clReleaseEvent(er);
	clReleaseEvent(em);
	clReleaseEvent(eg);
	clReleaseEvent(u);
	clReleaseEvent(done);
	clReleaseMemObject(m);
	clReleaseKernel(k);
}

/* A completion callback's view of another command's event. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	cl_event other;
	cl_int seen;
	int fired;
} asks = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void CL_CALLBACK on_done_ask(cl_event e, cl_int status, void *data)
{
	cl_int st = -1;

	(void)e;
	(void)status;
	(void)data;
	clGetEventInfo(asks.other, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL);
	pthread_mutex_lock(&asks.mu);
	asks.seen = st;
	asks.fired++;
	pthread_cond_broadcast(&asks.cv);
	pthread_mutex_unlock(&asks.mu);
}

/*
 * Kernels' completion callbacks ask for the status of a later kernel held
 * back by a user event (under the shim: a stand-in whose command is not
 * complete): each gets an answer, "not complete", and returns, whatever
 * thread runs it. Eight times: which thread learns first of a completion
 * varies from run to run.
 */
void ph_callback_asks(void)
{
	static cl_uint host[N], want[N], want2[N];
	cl_kernel k = clp_kernel("axpb");
	cl_mem m = clp_buffer(sizeof(host)), m2 = clp_buffer(sizeof(host));
	cl_event eb, u = user_event();
	cl_command_queue q2;
	cl_int err;
	int ok = 1, i;

	/* The other kernels on a queue of their own, not behind the held one. */
	q2 = clCreateCommandQueueWithProperties(clp.ctx, clp.dev, NULL, &err);
	CK(err);
	asks.fired = 0;
	clp_iota(want, N, 4);
	clp_write(clp.q, m, want, N);
	clp_axpb(clp.q, k, m, 3, 1, 1, &u, &eb);
	clp_axpb_ref(want, N, 3, 1);
	asks.other = eb;
	CK(clFlush(clp.q));
	clp_iota(want2, N, 6);
	clp_write(q2, m2, want2, N);
	for (i = 0; i < 8 && ok; i++) {
		struct timespec end;
		cl_event ea;
		int fired;

		asks.seen = -1;
		clp_axpb(q2, k, m2, 5, 2, 0, NULL, &ea);
		clp_axpb_ref(want2, N, 5, 2);
		CK(clSetEventCallback(ea, CL_COMPLETE, on_done_ask, NULL));
		CK(clFlush(q2));
		clock_gettime(CLOCK_REALTIME, &end);
		end.tv_sec += 10;
		pthread_mutex_lock(&asks.mu);
		while (asks.fired == i &&
		       pthread_cond_timedwait(&asks.cv, &asks.mu, &end) != ETIMEDOUT)
			;
		fired = asks.fired;
		pthread_mutex_unlock(&asks.mu);
		ok &= clp_check("callback_asks", fired == i + 1,
				"kernel %d: %d callbacks in all after 10 s", i, fired);
		ok &= clp_check("callback_asks", !ok || asks.seen > CL_COMPLETE,
				"kernel %d: the held kernel's status in the callback: %d", i,
				asks.seen);
		CK(clFinish(q2));
		clReleaseEvent(ea);
	}
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clFinish(clp.q));
	clp_read(clp.q, m, host, N);
	ok &= clp_same_u32("callback_asks", "held data", host, want, N);
	clp_read(q2, m2, host, N);
	ok &= clp_same_u32("callback_asks", "data", host, want2, N);
	printf("callback_asks: %s\n", ok ? "ok" : "failed");
	clReleaseEvent(eb);
	clReleaseEvent(u);
	clReleaseCommandQueue(q2);
	clReleaseMemObject(m2);
	clReleaseMemObject(m);
	clReleaseKernel(k);
}

/* --- profiling --------------------------------------------------------------- */

/* 1 if @e's times are all set and in order, 0 if not, or the error code. */
static int prof_ok(cl_event e, cl_ulong *start, cl_ulong *end)
{
	static const cl_profiling_info what[] = {
		CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
		CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
		CL_PROFILING_COMMAND_COMPLETE,
	};
	cl_ulong t[5];

	for (int i = 0; i < 5; i++) {
		cl_int rc = clGetEventProfilingInfo(e, what[i], sizeof(t[i]), &t[i], NULL);

		if (rc != CL_SUCCESS)
			return rc;
	}
	*start = t[2];
	*end = t[3];
	return t[0] && t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] <= t[4];
}

/*
 * Profiling times of kernels, transfers and a marker on a profiling queue
 * are set and ordered (queued <= submit <= start <= end <= complete, each
 * command starting after the previous one ended); an incomplete command,
 * a user event and an event of a queue without profiling have none.
 */
void ph_profiling(void)
{
	static cl_uint host[N];
	cl_command_queue pq = clp_queue(CL_QUEUE_PROFILING_ENABLE);
	cl_kernel k = clp_kernel("axpb");
	cl_mem m = clp_buffer(sizeof(host));
	cl_event ev[24], u = user_event(), gated, plain;
	cl_ulong start, end, prev_end = 0, t;
	int consistent = 1, ordered = 1, i, n = 0;
	cl_int gated_rc, user_rc, plain_rc;

	clp_iota(host, N, 4);
	CK(clEnqueueWriteBuffer(pq, m, CL_FALSE, 0, sizeof(host), host, 0, NULL, &ev[n++]));
	for (i = 0; i < 20; i++)
		clp_axpb(pq, k, m, 3, (cl_uint)i, 0, NULL, &ev[n++]);
	CK(clEnqueueReadBuffer(pq, m, CL_FALSE, 0, sizeof(host), host, 0, NULL, &ev[n++]));
	CK(clEnqueueMarkerWithWaitList(pq, 0, NULL, &ev[n++]));
	clp_axpb(pq, k, m, 3, 3, 1, &u, &gated);
	clp_axpb(clp.q, k, m, 1, 0, 0, NULL, &plain);
	CK(clWaitForEvents(n, ev));
	CK(clWaitForEvents(1, &plain));
	for (i = 0; i < n; i++) {
		int r = prof_ok(ev[i], &start, &end);

		if (r != 1) {
			consistent = 0;
			printf("profiling: event %d: %d\n", i, r);
			continue;
		}
		if (start < prev_end)
			ordered = 0;
		prev_end = end;
	}
	gated_rc = clGetEventProfilingInfo(gated, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL);
	user_rc = clGetEventProfilingInfo(u, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL);
	plain_rc = clGetEventProfilingInfo(plain, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL);
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clWaitForEvents(1, &gated));
	consistent &= prof_ok(gated, &start, &end) == 1 && start >= prev_end;
	clp_check("profiling", consistent && ordered, "consistent %d ordered %d", consistent,
		  ordered);
	printf("profiling: %s consistent %d ordered %d gated %d user %d unprofiled %d\n",
	       consistent && ordered ? "ok" : "failed", consistent, ordered, gated_rc, user_rc,
	       plain_rc);
	for (i = 0; i < n; i++)
		clReleaseEvent(ev[i]);
	clReleaseEvent(u);
	clReleaseEvent(gated);
	clReleaseEvent(plain);
	CK(clFinish(pq));
	clReleaseCommandQueue(pq);
	clReleaseMemObject(m);
	clReleaseKernel(k);
}

/* --- event info ---------------------------------------------------------------- */

struct info_case {
	const char *name;
	cl_event ev;
};

/* Type, queue and context (asked before completion), status after. */
static void print_info(const struct info_case *c, int n, cl_command_queue q)
{
	for (int i = 0; i < n; i++) {
		cl_command_type type = 0;
		cl_command_queue eq = NULL;
		cl_context ctx = NULL;
		size_t len = 0;

		CK(clGetEventInfo(c[i].ev, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, &len));
		CK(clGetEventInfo(c[i].ev, CL_EVENT_COMMAND_QUEUE, sizeof(eq), &eq, NULL));
		CK(clGetEventInfo(c[i].ev, CL_EVENT_CONTEXT, sizeof(ctx), &ctx, NULL));
		printf("eventinfo: %s type 0x%x size %zu queue %s context %d\n", c[i].name,
		       (unsigned)type, len, eq == q ? "own" : eq ? "other" : "none",
		       ctx == clp.ctx);
	}
}

/*
 * clGetEventInfo for every kind of command, a gated command (pending until
 * its gate opens) and a user event; then, after clFinish, every status is
 * CL_COMPLETE.
 */
void ph_eventinfo(void)
{
	static cl_uint host[N];
	cl_kernel k = clp_kernel("axpb"), kt = clp_kernel("task_sum");
	cl_mem m = clp_buffer(sizeof(host)), m2 = clp_buffer(sizeof(host));
	cl_event u = user_event();
	struct info_case c[20];
	size_t o[3] = { 0, 0, 0 }, r[3] = { 64, 4, 1 };
	cl_uint zero = 0, n = 64, *p;
	cl_int err, st;
	int i, nc = 0, ok = 1;
	char bad[8];

	clp_iota(host, N, 8);
	c[nc].name = "write";
	CK(clEnqueueWriteBuffer(clp.q, m, CL_FALSE, 0, sizeof(host), host, 0, NULL, &c[nc++].ev));
	c[nc].name = "ndrange";
	clp_axpb(clp.q, k, m, 3, 1, 0, NULL, &c[nc++].ev);
	c[nc].name = "task";
	CK(clSetKernelArg(kt, 0, sizeof(m), &m));
	CK(clSetKernelArg(kt, 1, sizeof(m2), &m2));
	CK(clSetKernelArg(kt, 2, sizeof(n), &n));
	CK(clEnqueueTask(clp.q, kt, 0, NULL, &c[nc++].ev));
	c[nc].name = "copy";
	CK(clEnqueueCopyBuffer(clp.q, m, m2, 0, 64, 64, 0, NULL, &c[nc++].ev));
	c[nc].name = "fill";
	CK(clEnqueueFillBuffer(clp.q, m2, &zero, 4, 256, 256, 0, NULL, &c[nc++].ev));
	c[nc].name = "read_rect";
	CK(clEnqueueReadBufferRect(clp.q, m, CL_FALSE, o, o, r, 256, 0, 256, 0, host, 0, NULL,
				   &c[nc++].ev));
	c[nc].name = "write_rect";
	CK(clEnqueueWriteBufferRect(clp.q, m2, CL_FALSE, o, o, r, 256, 0, 256, 0, host, 0, NULL,
				    &c[nc++].ev));
	c[nc].name = "copy_rect";
	CK(clEnqueueCopyBufferRect(clp.q, m, m2, o, o, r, 256, 0, 256, 0, 0, NULL, &c[nc++].ev));
	c[nc].name = "migrate";
	CK(clEnqueueMigrateMemObjects(clp.q, 1, &m, 0, 0, NULL, &c[nc++].ev));
	c[nc].name = "map";
	p = clEnqueueMapBuffer(clp.q, m, CL_FALSE, CL_MAP_READ, 0, 64, 0, NULL, &c[nc++].ev, &err);
	CK(err);
	c[nc].name = "unmap";
	CK(clEnqueueUnmapMemObject(clp.q, m, p, 1, &c[nc - 1].ev, &c[nc].ev));
	nc++;
	c[nc].name = "marker";
	CK(clEnqueueMarkerWithWaitList(clp.q, 0, NULL, &c[nc++].ev));
	c[nc].name = "barrier";
	CK(clEnqueueBarrierWithWaitList(clp.q, 0, NULL, &c[nc++].ev));
	c[nc].name = "gated";
	clp_axpb(clp.q, k, m, 5, 1, 1, &u, &c[nc++].ev);
	c[nc].name = "gated_task";
	CK(clEnqueueTask(clp.q, kt, 1, &u, &c[nc++].ev));
	c[nc].name = "read";
	CK(clEnqueueReadBuffer(clp.q, m, CL_FALSE, 0, sizeof(host), host, 0, NULL, &c[nc++].ev));
	c[nc].name = "user";
	c[nc++].ev = u;
	print_info(c, nc, clp.q);
	CK(clFlush(clp.q));
	printf("eventinfo: gated status %d %d %d user %d\n", clp_status(c[nc - 4].ev),
	       clp_status(c[nc - 3].ev), clp_status(c[nc - 2].ev), clp_status(u));
	printf("eventinfo: bad param %d short size %d\n",
	       clGetEventInfo(u, 0x7fff, sizeof(bad), bad, NULL),
	       clGetEventInfo(c[0].ev, CL_EVENT_COMMAND_TYPE, 1, bad, NULL));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clFinish(clp.q));
	for (i = 0; i < nc; i++) {
		st = clp_status(c[i].ev);
		ok &= clp_check("eventinfo", st == CL_COMPLETE, "%s status %d after clFinish",
				c[i].name, st);
	}
	if (ok)
		printf("eventinfo: ok all complete\n");
	for (i = 0; i < nc; i++)
		clReleaseEvent(c[i].ev);
	clReleaseMemObject(m);
	clReleaseMemObject(m2);
	clReleaseKernel(k);
	clReleaseKernel(kt);
}

/* --- reference counts ------------------------------------------------------------ */

static cl_uint refs(cl_event e)
{
	cl_uint n = 0;

	CK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof(n), &n, NULL));
	return n;
}

/*
 * refs() once the driver let go of the event: PoCL drops its own
 * reference some time after the command completed (after clFinish has
 * returned, now and then), which would show as the application's change.
 */
static cl_uint settled_refs(cl_event e)
{
	const struct timespec ms2 = { 0, 2000000 };
	cl_uint n = refs(e), m;

	for (int i = 0; i < 100; i++, n = m) {
		nanosleep(&ms2, NULL);
		if ((m = refs(e)) == n)
			break;
	}
	return n;
}

/*
 * Retained events stay valid, released ones need not be waited for: an
 * event released right after its enqueue still lets the command run.
 * Changes of the reference counts are printed once the commands completed.
 */
void ph_retain(void)
{
	static cl_uint host[N], want[N];
	cl_kernel k = clp_kernel("axpb");
	cl_mem m = clp_buffer(sizeof(host));
	cl_event e, dropped;
	cl_uint r0, r1, r2, q0, q1;

	clp_iota(want, N, 6);
	clp_write(clp.q, m, want, N);
	clp_axpb(clp.q, k, m, 3, 1, 0, NULL, &dropped);
	clp_axpb_ref(want, N, 3, 1);
	CK(clReleaseEvent(dropped));
	clp_axpb(clp.q, k, m, 5, 2, 0, NULL, &e);
	clp_axpb_ref(want, N, 5, 2);
	CK(clRetainEvent(e));
	CK(clRetainEvent(e));
	CK(clReleaseEvent(e));
	CK(clWaitForEvents(1, &e));
	CK(clFinish(clp.q));
	r0 = settled_refs(e);
	CK(clRetainEvent(e));
	r1 = refs(e);
	CK(clReleaseEvent(e));
	CK(clReleaseEvent(e));
	/* One reference left: still valid. */
	r2 = refs(e);
	CK(clGetCommandQueueInfo(clp.q, CL_QUEUE_REFERENCE_COUNT, sizeof(q0), &q0, NULL));
	CK(clRetainCommandQueue(clp.q));
	CK(clGetCommandQueueInfo(clp.q, CL_QUEUE_REFERENCE_COUNT, sizeof(q1), &q1, NULL));
	CK(clReleaseCommandQueue(clp.q));
	clp_read(clp.q, m, host, N);
	if (clp_same_u32("retain", "data", host, want, N))
		printf("retain: ok %016llx\n", (unsigned long long)clp_hash(host, sizeof(host)));
	/* Counts include the implementation's own references: only the
	 * changes are the application's. */
	printf("retain: event refs %+d %+d queue refs %+d\n", (int)(r1 - r0), (int)(r2 - r1),
	       (int)(q1 - q0));
	CK(clReleaseEvent(e));
	clReleaseMemObject(m);
	clReleaseKernel(k);
}

/* --- several queues ------------------------------------------------------------------ */

/*
 * Chains across three in-order queues through wait lists (each step waits
 * for the previous one on another queue, the first steps being slow), and
 * a kernel waiting on events of two queues at once; only the last queue
 * is finished before reading.
 */
void ph_queues(void)
{
	static cl_uint want[N], got[N], wa[N], wb[N], src_a[N], src_b[N];
	cl_command_queue qa = clp_queue(0), qb = clp_queue(0), qc = clp_queue(0);
	cl_kernel ks = clp_kernel("slow_axpb"), k = clp_kernel("axpb"), kv = clp_kernel("vadd"),
		  ks2 = clp_kernel("slow_axpb");
	cl_mem x = clp_buffer(sizeof(want)), junk = clp_buffer(sizeof(want)),
	       a = clp_buffer(sizeof(want)), b = clp_buffer(sizeof(want)),
	       c = clp_buffer(sizeof(want));
	cl_event e[6], both[2], done;
	int ok;

	clp_iota(want, N, 12);
	clp_write(qa, x, want, N);
	clp_slow_axpb(qa, ks, x, junk, 3, 1, 0, NULL, &e[0]);
	clp_axpb_ref(want, N, 3, 1);
	clp_axpb(qb, k, x, 5, 2, 1, &e[0], &e[1]);
	clp_axpb_ref(want, N, 5, 2);
	clp_slow_axpb(qa, ks, x, junk, 7, 3, 1, &e[1], &e[2]);
	clp_axpb_ref(want, N, 7, 3);
	clp_axpb(qb, k, x, 11, 4, 1, &e[2], &e[3]);
	clp_axpb_ref(want, N, 11, 4);
	clp_axpb(qc, k, x, 13, 5, 1, &e[3], &e[4]);
	clp_axpb_ref(want, N, 13, 5);
	CK(clFinish(qc));
	CK(clEnqueueReadBuffer(qc, x, CL_TRUE, 0, sizeof(got), got, 0, NULL, NULL));
	ok = clp_same_u32("queues", "chain", got, want, N);

	/* c = a + b, a and b made on two queues at once. */
	/* Sources of non-blocking writes stay untouched until they complete. */
	clp_iota(src_a, N, 1);
	clp_iota(src_b, N, 2);
	memcpy(wa, src_a, sizeof(wa));
	memcpy(wb, src_b, sizeof(wb));
	CK(clEnqueueWriteBuffer(qa, a, CL_FALSE, 0, sizeof(wa), src_a, 0, NULL, NULL));
	CK(clEnqueueWriteBuffer(qb, b, CL_FALSE, 0, sizeof(wb), src_b, 0, NULL, NULL));
	clp_slow_axpb(qa, ks, a, junk, 3, 0, 0, NULL, &both[0]);
	clp_slow_axpb(qb, ks2, b, junk, 5, 0, 0, NULL, &both[1]);
	clp_axpb_ref(wa, N, 3, 0);
	clp_axpb_ref(wb, N, 5, 0);
	CK(clSetKernelArg(kv, 0, sizeof(a), &a));
	CK(clSetKernelArg(kv, 1, sizeof(b), &b));
	CK(clSetKernelArg(kv, 2, sizeof(c), &c));
	clp_range(qc, kv, N, 2, both, &e[5]);
	CK(clEnqueueReadBuffer(qc, c, CL_FALSE, 0, sizeof(got), got, 1, &e[5], &done));
	CK(clWaitForEvents(1, &done));
	for (size_t i = 0; i < N; i++)
		want[i] = wa[i] + wb[i];
	ok &= clp_same_u32("queues", "join", got, want, N);
	if (ok)
		printf("queues: ok %016llx\n", (unsigned long long)clp_hash(got, sizeof(got)));
	for (int i = 0; i < 6; i++)
		clReleaseEvent(e[i]);
	clReleaseEvent(both[0]);
	clReleaseEvent(both[1]);
	clReleaseEvent(done);
	CK(clFinish(qa));
	CK(clFinish(qb));
	clReleaseCommandQueue(qa);
	clReleaseCommandQueue(qb);
	clReleaseCommandQueue(qc);
	clReleaseMemObject(x);
	clReleaseMemObject(junk);
	clReleaseMemObject(a);
	clReleaseMemObject(b);
	clReleaseMemObject(c);
	clReleaseKernel(ks);
	clReleaseKernel(ks2);
	clReleaseKernel(k);
	clReleaseKernel(kv);
}

/* --- markers and barriers ------------------------------------------------------------- */

/*
 * A marker without a wait list completes after everything before it; a
 * barrier waiting on another queue's slow kernel holds back what follows;
 * a marker waiting on two queues completes after both; a marker gated by a
 * user event stays pending until the gate opens.
 */
void ph_markers(void)
{
	static cl_uint want[N], got[N];
	cl_command_queue qa = clp_queue(0), qb = clp_queue(0);
	cl_kernel ks = clp_kernel("slow_axpb"), k = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(want)), junk = clp_buffer(sizeof(want));
	cl_event e[3], m, ea, eb, two[2], u = user_event(), mu;
	cl_int st[3], sa, sb, pend, after;
	int ok, i;

	clp_iota(want, N, 21);
	clp_write(clp.q, x, want, N);
	for (i = 0; i < 3; i++) {
		clp_axpb(clp.q, k, x, 3, (cl_uint)i, 0, NULL, &e[i]);
		clp_axpb_ref(want, N, 3, (cl_uint)i);
	}
	CK(clEnqueueMarkerWithWaitList(clp.q, 0, NULL, &m));
	CK(clWaitForEvents(1, &m));
	for (i = 0; i < 3; i++)
		st[i] = clp_status(e[i]);
	printf("markers: before marker %d %d %d\n", st[0], st[1], st[2]);

	/* qb: barrier on qa's slow kernel, then a kernel with no wait list. */
	clp_slow_axpb(qa, ks, x, junk, 5, 5, 0, NULL, &ea);
	clp_axpb_ref(want, N, 5, 5);
	CK(clEnqueueBarrierWithWaitList(qb, 1, &ea, NULL));
	clp_axpb(qb, k, x, 7, 7, 0, NULL, &eb);
	clp_axpb_ref(want, N, 7, 7);
	/* The main queue: a marker on both, then a read after it. */
	two[0] = ea;
	two[1] = eb;
	clReleaseEvent(m);
	CK(clEnqueueMarkerWithWaitList(clp.q, 2, two, &m));
	CK(clEnqueueReadBuffer(clp.q, x, CL_FALSE, 0, sizeof(got), got, 1, &m, NULL));
	CK(clWaitForEvents(1, &m));
	sa = clp_status(ea);
	sb = clp_status(eb);
	CK(clFinish(clp.q));
	ok = clp_same_u32("markers", "barrier", got, want, N);
	printf("markers: two queues %d %d\n", sa, sb);

	/* A marker gated by a user event. */
	CK(clEnqueueMarkerWithWaitList(qa, 1, &u, &mu));
	CK(clFlush(qa));
	pend = clp_status(mu);
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clWaitForEvents(1, &mu));
	after = clp_status(mu);
	printf("markers: gated status %d after %d\n", pend, after);
	if (ok)
		printf("markers: ok %016llx\n", (unsigned long long)clp_hash(got, sizeof(got)));
	for (i = 0; i < 3; i++)
		clReleaseEvent(e[i]);
	clReleaseEvent(m);
	clReleaseEvent(ea);
	clReleaseEvent(eb);
	clReleaseEvent(u);
	clReleaseEvent(mu);
	CK(clFinish(qa));
	CK(clFinish(qb));
	clReleaseCommandQueue(qa);
	clReleaseCommandQueue(qb);
	clReleaseMemObject(x);
	clReleaseMemObject(junk);
	clReleaseKernel(ks);
	clReleaseKernel(k);
}

/* --- user events ------------------------------------------------------------------------ */

/*
 * A user event gates a kernel; the kernel and a read enqueued after it
 * (no wait list, in order) stay pending until the gate opens. A user
 * event's status can be set once; a command's event is not a user event.
 */
void ph_user(void)
{
	static cl_uint want[N], got[N];
	cl_kernel k = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(want));
	cl_event u = user_event(), e1, e2, er;
	cl_command_type type = 0;
	cl_command_queue uq = clp.q;
	cl_int init = clp_status(u), p1, p2, pr, twice, on_cmd;
	int ok;

	CK(clGetEventInfo(u, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, NULL));
	CK(clGetEventInfo(u, CL_EVENT_COMMAND_QUEUE, sizeof(uq), &uq, NULL));
	printf("user: initial %d type 0x%x queue %s\n", init, (unsigned)type,
	       uq ? "set" : "none");
	clp_iota(want, N, 30);
	clp_write(clp.q, x, want, N);
	clp_axpb(clp.q, k, x, 3, 1, 1, &u, &e1);
	clp_axpb_ref(want, N, 3, 1);
	clp_axpb(clp.q, k, x, 5, 2, 0, NULL, &e2);
	clp_axpb_ref(want, N, 5, 2);
	CK(clEnqueueReadBuffer(clp.q, x, CL_FALSE, 0, sizeof(got), got, 0, NULL, &er));
	CK(clFlush(clp.q));
	p1 = clp_status(e1);
	p2 = clp_status(e2);
	pr = clp_status(er);
	on_cmd = clSetUserEventStatus(e1, CL_COMPLETE);
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	twice = clSetUserEventStatus(u, CL_COMPLETE);
	CK(clWaitForEvents(1, &er));
	ok = clp_same_u32("user", "gated", got, want, N);
	printf("user: pending status %d %d %d set on command %d set twice %d\n", p1, p2, pr,
	       on_cmd, twice);
	if (ok)
		printf("user: ok %016llx\n", (unsigned long long)clp_hash(got, sizeof(got)));
	clReleaseEvent(u);
	clReleaseEvent(e1);
	clReleaseEvent(e2);
	clReleaseEvent(er);
	clReleaseMemObject(x);
	clReleaseKernel(k);
}

/*
 * A user event set to an error: the command waiting on it does not run,
 * waiting on it reports CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, and
 * its status is negative. Its own queue is then released.
 */
void ph_user_error(void)
{
	static cl_uint want[N], got[N];
	cl_command_queue q = clp_queue(0);
	cl_kernel k = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(want));
	cl_event u = user_event(), e;
	cl_int wait_rc, st;

	clp_iota(want, N, 31);
	clp_write(clp.q, x, want, N);
	clp_axpb(q, k, x, 3, 1, 1, &u, &e);
	CK(clFlush(q));
	CK(clSetUserEventStatus(u, -5));
	wait_rc = clWaitForEvents(1, &e);
	st = clp_status(e);
	clp_read(clp.q, x, got, N);
	if (clp_same_u32("user_error", "untouched", got, want, N))
		printf("user_error: ok wait %d status %s user %d\n", wait_rc,
		       st < 0 ? "negative" : "not negative", clp_status(u));
	clReleaseEvent(u);
	clReleaseEvent(e);
	clReleaseCommandQueue(q);
	clReleaseMemObject(x);
	clReleaseKernel(k);
}

/* --- out-of-order queue ---------------------------------------------------------------- */

/*
 * An out-of-order queue: chains of explicit dependencies on two buffers,
 * a barrier, then reads; a marker without a wait list covers everything
 * enqueued before it.
 */
void ph_ooo(void)
{
	static cl_uint wx[N], wy[N], gx[N], gy[N], src_x[N], src_y[N];
	cl_command_queue q;
	cl_kernel k = clp_kernel("axpb"), k2 = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(wx)), y = clp_buffer(sizeof(wy));
	cl_event e[8], m;
	cl_int st[2];
	int ok, i;

	if (!ooo_supported()) {
		printf("ooo: skipped\n");
		clReleaseMemObject(x);
		clReleaseMemObject(y);
		clReleaseKernel(k);
		clReleaseKernel(k2);
		return;
	}
	q = clp_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
	clp_iota(src_x, N, 40);
	clp_iota(src_y, N, 41);
	memcpy(wx, src_x, sizeof(wx));
	memcpy(wy, src_y, sizeof(wy));
	CK(clEnqueueWriteBuffer(q, x, CL_FALSE, 0, sizeof(wx), src_x, 0, NULL, &e[0]));
	CK(clEnqueueWriteBuffer(q, y, CL_FALSE, 0, sizeof(wy), src_y, 0, NULL, &e[1]));
	clp_axpb(q, k, x, 3, 1, 1, &e[0], &e[2]);
	clp_axpb(q, k2, y, 5, 1, 1, &e[1], &e[3]);
	clp_axpb(q, k, x, 7, 1, 1, &e[2], &e[4]);
	clp_axpb(q, k2, y, 9, 1, 1, &e[3], &e[5]);
	clp_axpb_ref(wx, N, 3, 1);
	clp_axpb_ref(wx, N, 7, 1);
	clp_axpb_ref(wy, N, 5, 1);
	clp_axpb_ref(wy, N, 9, 1);
	CK(clEnqueueMarkerWithWaitList(q, 0, NULL, &m));
	CK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
	/* After the barrier: no explicit wait needed. */
	clp_axpb(q, k, x, 11, 2, 0, NULL, &e[6]);
	clp_axpb_ref(wx, N, 11, 2);
	CK(clEnqueueReadBuffer(q, x, CL_FALSE, 0, sizeof(gx), gx, 1, &e[6], &e[7]));
	CK(clEnqueueReadBuffer(q, y, CL_TRUE, 0, sizeof(gy), gy, 0, NULL, NULL));
	CK(clWaitForEvents(1, &m));
	st[0] = clp_status(e[4]);
	st[1] = clp_status(e[5]);
	CK(clWaitForEvents(1, &e[7]));
	ok = clp_same_u32("ooo", "x", gx, wx, N);
	ok &= clp_same_u32("ooo", "y", gy, wy, N);
	printf("ooo: marker covers %d %d\n", st[0], st[1]);
	if (ok)
		printf("ooo: ok %016llx %016llx\n", (unsigned long long)clp_hash(gx, sizeof(gx)),
		       (unsigned long long)clp_hash(gy, sizeof(gy)));
	for (i = 0; i < 8; i++)
		clReleaseEvent(e[i]);
	clReleaseEvent(m);
	CK(clFinish(q));
	clReleaseCommandQueue(q);
	clReleaseMemObject(x);
	clReleaseMemObject(y);
	clReleaseKernel(k);
	clReleaseKernel(k2);
}
