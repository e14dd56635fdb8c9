/*
 * Proxy events (see cl_shim.h).
 *
 * A proxy stands for a command still buffered in an XQueue when the
 * application asked for its event. It is a user event of the queue's
 * context, so the application can wait on it, pass it in wait lists (to
 * any queue, scheduled or not) and attach callbacks with the driver's own
 * rules; the shim completes it with the real command (a callback on the
 * real event sets its status) and answers the queries a user event would
 * answer differently (queue, command type, status, profiling, reference
 * count) from the real command.
 *
 * Lifetime: the record holds the only driver reference to its user event;
 * the application's retains and releases count in the record, as do the
 * shim's own uses (a launch not bound yet, wait lists of buffered
 * commands). At zero the record leaves the table before the user event
 * is released, so a recycled handle never finds a stale record.
 *
 * Callbacks and user-event status changes may run application callbacks
 * synchronously; when that could happen under an XQueue lock (binding
 * happens at launch) they are handed to a helper thread instead
 * (cl_jobs.c).
 */
#include "shim/opencl/cl_shim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLP_BUCKETS 256

enum { CLP_PENDING, CLP_LAUNCHED, CLP_FAILED };

struct cl_cb {
	struct cl_cb *next;
	void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
	void *data;
	cl_int type;
	struct cl_proxy *p;
};

struct cl_proxy {
	struct cl_proxy *next;          /* hash chain */
	cl_event user;
	struct cl_q *q;
	cl_command_type type;
	_Atomic int refs;               /* application's + shim's */
	_Atomic int app_refs;
	pthread_mutex_t lock;           /* below */
	pthread_cond_t bound;           /* @state left CLP_PENDING */
	int state;
	cl_event real;                  /* owned once launched */
	cl_int rc;
	struct cl_cb *cbs;              /* submitted/running callbacks, until launched */
	/* The command's wait list (references, kept unchanged until the
	 * proxy goes, so that it is read without the lock), to fail it as
	 * the driver would once one of them failed (clp_doomed()). */
	cl_uint nwatch;
	cl_event *watch;
	struct cl_proxy **wproxy;       /* the proxies among them, else NULL */
	_Atomic bool completed;         /* the user event's status was set */
};

static pthread_rwlock_t clp_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct cl_proxy *clp_table[CLP_BUCKETS];
static _Atomic int clp_count;           /* proxies alive: 0 skips lookups */

static unsigned clp_hash(const void *p)
{
	uintptr_t x = (uintptr_t)p;

	return (unsigned)((x >> 4) ^ (x >> 12)) % CLP_BUCKETS;
}

/* --- records ---------------------------------------------------------------- */

/* Drops the references to the wait list: at the last reference only. */
static void clp_unwatch(struct cl_proxy *p)
{
	for (cl_uint i = 0; i < p->nwatch; i++) {
		if (p->wproxy[i])
			cl_proxy_put(p->wproxy[i]);
		else
			cl_real.clReleaseEvent(p->watch[i]);
	}
	free(p->watch);
	free(p->wproxy);
	p->watch = NULL;
	p->wproxy = NULL;
	p->nwatch = 0;
}

/* References to the @n events of @wait (@wproxy: the proxies among them). */
static void clp_watch(struct cl_proxy *p, cl_uint n, const cl_event *wait,
		      struct cl_proxy *const *wproxy)
{
	if (!n || !(p->watch = calloc(n, sizeof(*p->watch))) ||
	    !(p->wproxy = calloc(n, sizeof(*p->wproxy)))) {
		free(p->watch);
		p->watch = NULL;
		return;
	}
	for (cl_uint i = 0; i < n; i++) {
		if (wproxy[i]) {
			atomic_fetch_add(&wproxy[i]->refs, 1);
			p->wproxy[p->nwatch] = wproxy[i];
		} else if (cl_real.clRetainEvent(wait[i]) != CL_SUCCESS) {
			continue;
		}
		p->watch[p->nwatch++] = wait[i];
	}
}

struct cl_proxy *cl_proxy_new(struct cl_q *q, cl_command_type type, cl_uint nwait,
			      const cl_event *wait, struct cl_proxy *const *wproxy)
{
	struct cl_proxy *p = calloc(1, sizeof(*p));
	cl_int err = CL_SUCCESS;
	unsigned b;

	if (!p)
		return NULL;
	p->user = cl_real.clCreateUserEvent(q->ctx, &err);
	if (!p->user || err != CL_SUCCESS) {
		free(p);
		return NULL;
	}
	p->q = q;
	p->type = type;
	/* The application's reference and the pending launch's. */
	atomic_init(&p->refs, 2);
	atomic_init(&p->app_refs, 1);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->bound, NULL);
	clp_watch(p, nwait, wait, wproxy);
	b = clp_hash(p->user);
	pthread_rwlock_wrlock(&clp_lock);
	p->next = clp_table[b];
	clp_table[b] = p;
	atomic_fetch_add(&clp_count, 1);
	pthread_rwlock_unlock(&clp_lock);
	return p;
}

unsigned cl_proxy_count_in(cl_context ctx)
{
	unsigned n = 0;

	pthread_rwlock_rdlock(&clp_lock);
	for (unsigned b = 0; b < CLP_BUCKETS; b++)
		for (struct cl_proxy *p = clp_table[b]; p; p = p->next)
			n += p->q->ctx == ctx;
	pthread_rwlock_unlock(&clp_lock);
	return n;
}

struct cl_proxy *cl_proxy_get(cl_event ev)
{
	struct cl_proxy *p;

	if (!ev || !atomic_load_explicit(&clp_count, memory_order_relaxed))
		return NULL;
	pthread_rwlock_rdlock(&clp_lock);
	for (p = clp_table[clp_hash(ev)]; p && p->user != ev; p = p->next)
		;
	if (p)
		atomic_fetch_add(&p->refs, 1);
	pthread_rwlock_unlock(&clp_lock);
	return p;
}

void cl_proxy_put(struct cl_proxy *p)
{
	struct cl_proxy **pp;

	if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	pthread_rwlock_wrlock(&clp_lock);
	for (pp = &clp_table[clp_hash(p->user)]; *pp && *pp != p; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = p->next;
	atomic_fetch_sub(&clp_count, 1);
	pthread_rwlock_unlock(&clp_lock);
	cl_real.clReleaseEvent(p->user);
	if (p->real)
		cl_real.clReleaseEvent(p->real);
	while (p->cbs) {
		struct cl_cb *cb = p->cbs;

		p->cbs = cb->next;
		free(cb);
	}
	clp_unwatch(p);
	pthread_cond_destroy(&p->bound);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

cl_event cl_proxy_event(struct cl_proxy *p)
{
	return p->user;
}

struct cl_q *cl_proxy_queue(struct cl_proxy *p)
{
	return p->q;
}

cl_event cl_proxy_real(struct cl_proxy *p, bool *failed)
{
	cl_event real;

	pthread_mutex_lock(&p->lock);
	real = p->state == CLP_LAUNCHED ? p->real : NULL;
	*failed = p->state == CLP_FAILED;
	pthread_mutex_unlock(&p->lock);
	return real;
}

/* --- completion ----------------------------------------------------------------- */

/*
 * The user event takes the command's final status, once: from the real
 * event's completion callback, or from a thread that found the real
 * event (or the command's wait list) failed, since a driver may never
 * call a completion callback registered before an event fails (PoCL 3.1
 * does not). The proxy is bound (not pending).
 */
static void clp_complete(struct cl_proxy *p)
{
	cl_int st = CL_COMPLETE;

	if (atomic_exchange(&p->completed, true))
		return;
	if (p->state == CLP_FAILED)
		st = p->rc < 0 ? p->rc : CL_INVALID_OPERATION;
	else if (cl_real.clGetEventInfo(p->real, CL_EVENT_COMMAND_EXECUTION_STATUS,
					sizeof(st), &st, NULL) != CL_SUCCESS || st > 0)
		st = CL_COMPLETE;
	cl_real.clSetUserEventStatus(p->user, st);
}

/* The real command completed (or failed): so does the user event. */
static void clp_finish(void *arg)
{
	struct cl_proxy *p = arg;

	clp_complete(p);
	cl_proxy_put(p);        /* the pending launch's reference */
}

static void CL_CALLBACK clp_real_done(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	(void)status;
	cl_jobs_run(clp_finish, arg);
}

/* An application callback on a proxy, called with the real event's news. */
static void clp_cb_run(void *arg)
{
	struct cl_cb *cb = arg;

	cb->fn(cb->p->user, cb->type, cb->data);
	cl_proxy_put(cb->p);
	free(cb);
}

static void CL_CALLBACK clp_cb_relay(cl_event ev, cl_int status, void *arg)
{
	struct cl_cb *cb = arg;

	(void)ev;
	cb->type = status;
	cl_jobs_run(clp_cb_run, cb);
}

/* Registers @cb on the real event (the caller holds a reference for it). */
static void clp_cb_attach(struct cl_proxy *p, struct cl_cb *cb)
{
	cb->p = p;
	if (cl_real.clSetEventCallback(p->real, cb->type, clp_cb_relay, cb) != CL_SUCCESS) {
		cl_proxy_put(p);
		free(cb);
	}
}

void cl_proxy_bind(struct cl_proxy *p, cl_event ev, cl_int rc, bool unlocked)
{
	struct cl_jobs_mode mode;
	struct cl_cb *cbs;

	pthread_mutex_lock(&p->lock);
	if (p->state != CLP_PENDING) {
		/* Failed already, with its wait list (clp_doomed()). */
		pthread_mutex_unlock(&p->lock);
		cl_proxy_put(p);        /* the pending launch's reference */
		return;
	}
	if (ev && cl_real.clRetainEvent(ev) == CL_SUCCESS) {
		p->real = ev;
		p->state = CLP_LAUNCHED;
	} else {
		p->state = CLP_FAILED;
		p->rc = rc;
	}
	cbs = p->cbs;
	p->cbs = NULL;
	pthread_cond_broadcast(&p->bound);
	pthread_mutex_unlock(&p->lock);
	/* A driver's callback thread runs them itself, once out of
	 * completed(): a thread wakeup less per launch. */
	mode = cl_jobs_enter(unlocked ? CL_JOBS_LATER : CL_JOBS_DEFER);
	while (cbs) {
		struct cl_cb *cb = cbs;

		cbs = cb->next;
		if (p->state == CLP_LAUNCHED) {
			clp_cb_attach(p, cb);
		} else {
			cb->p = p;
			cb->type = p->rc < 0 ? p->rc : CL_INVALID_OPERATION;
			cl_jobs_run(clp_cb_run, cb);
		}
	}
	if (p->state != CLP_LAUNCHED ||
	    cl_real.clSetEventCallback(p->real, CL_COMPLETE, clp_real_done, p) != CL_SUCCESS)
		cl_jobs_run(clp_finish, p);
	cl_jobs_leave(mode);
	cl_q_kick_all();
}

/* --- failed wait lists ------------------------------------------------------------------ */

/* The status of @w as the application would read it (proxies too). */
static cl_int clp_event_status(cl_event ev, struct cl_proxy *w)
{
	cl_int st = CL_QUEUED;

	if (w) {
		/* The driver is never called under a proxy's lock: an
		 * application callback, which the driver runs holding an event
		 * of its own locked, may ask about this proxy. */
		pthread_mutex_lock(&w->lock);
		if (w->state == CLP_FAILED)
			st = w->rc < 0 ? w->rc : CL_INVALID_OPERATION;
		ev = w->state == CLP_LAUNCHED ? w->real : NULL;  /* kept until @w goes */
		pthread_mutex_unlock(&w->lock);
		if (!ev)
			return st;
	}
	if (cl_real.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL) !=
	    CL_SUCCESS)
		st = CL_QUEUED;
	return st;
}

/*
 * Pending @p's command waits for an event that failed: it can never run,
 * and the driver would have terminated it already (the application may
 * be reading its status right after its wait on the failed event
 * returned), so it fails now, with the status the driver gives such a
 * command (cl_event_failed_status()), rather than when its XQueue gets to
 * it. The XQueue still issues it later (cl_cmds.c refuses it then, and its
 * binding finds it failed). Returns whether @p failed here. No lock held.
 */
static bool clp_doomed(struct cl_proxy *p)
{
	cl_int failed = 0, rc;
	struct cl_cb *cbs;
	bool pending;

	pthread_mutex_lock(&p->lock);
	pending = p->state == CLP_PENDING;
	pthread_mutex_unlock(&p->lock);
	/* The wait list stays as it was made until @p goes (clp_watch()):
	 * read without the lock, which is never held around the driver. */
	for (cl_uint i = 0; pending && i < p->nwatch && failed >= 0; i++)
		failed = clp_event_status(p->watch[i], p->wproxy[i]);
	if (!pending || failed >= 0)
		return false;
	rc = cl_event_failed_status(p->q->dev, failed);
	pthread_mutex_lock(&p->lock);
	if (p->state != CLP_PENDING) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	p->state = CLP_FAILED;
	p->rc = rc;
	cbs = p->cbs;
	p->cbs = NULL;
	pthread_cond_broadcast(&p->bound);
	pthread_mutex_unlock(&p->lock);
	while (cbs) {
		struct cl_cb *cb = cbs;

		cbs = cb->next;
		cb->p = p;
		cb->type = p->rc;
		/* The reference the callback held becomes the job's. */
		cl_jobs_run(clp_cb_run, cb);
	}
	clp_complete(p);
	return true;
}

/* Commands' statuses behind a failed event, learned per device and status. */
#define CLP_FAILED_MAX 8
static pthread_mutex_t failed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	cl_device_id dev;
	cl_int in, out;
} failed_seen[CLP_FAILED_MAX];
static unsigned failed_next;

/* A marker behind a user event set to @in, on a context of its own: its status. */
static cl_int clp_failed_probe(cl_device_id dev, cl_int in)
{
	cl_int err = CL_SUCCESS, st = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
	cl_context ctx = cl_real.clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_command_queue q = NULL;
	cl_event u = NULL, m = NULL;

	if (ctx)
		q = cl_real.clCreateCommandQueue(ctx, dev, 0, &err);
	if (q)
		u = cl_real.clCreateUserEvent(ctx, &err);
	if (u && cl_real.clEnqueueMarkerWithWaitList(q, 1, &u, &m) != CL_SUCCESS)
		m = NULL;
	if (u)
		cl_real.clSetUserEventStatus(u, in);
	if (m && (cl_real.clWaitForEvents(1, &m), true) &&
	    (cl_real.clGetEventInfo(m, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
				    NULL) != CL_SUCCESS || st >= 0))
		st = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
	if (m)
		cl_real.clReleaseEvent(m);
	if (u)
		cl_real.clReleaseEvent(u);
	if (q)
		cl_real.clReleaseCommandQueue(q);
	if (ctx)
		cl_real.clReleaseContext(ctx);
	return st;
}

cl_int cl_event_failed_status(cl_device_id dev, cl_int in)
{
	cl_int out;
	unsigned i;

	pthread_mutex_lock(&failed_lock);
	for (i = 0; i < CLP_FAILED_MAX; i++)
		if (failed_seen[i].dev == dev && failed_seen[i].in == in && failed_seen[i].out) {
			out = failed_seen[i].out;
			pthread_mutex_unlock(&failed_lock);
			return out;
		}
	pthread_mutex_unlock(&failed_lock);
	/* Rare (a failure), and a few calls: no lock held meanwhile. */
	out = clp_failed_probe(dev, in);
	pthread_mutex_lock(&failed_lock);
	i = failed_next++ % CLP_FAILED_MAX;
	failed_seen[i].dev = dev;
	failed_seen[i].in = in;
	failed_seen[i].out = out;
	pthread_mutex_unlock(&failed_lock);
	return out;
}

/*
 * Waits until @p is bound, or failed with its wait list. Returns its real
 * event (a reference), or NULL when it failed.
 */
static cl_event clp_wait_bound(struct cl_proxy *p)
{
	long poll_ns = 1000000;
	cl_event real = NULL;

	pthread_mutex_lock(&p->lock);
	while (p->state == CLP_PENDING) {
		struct timespec ts;

		pthread_mutex_unlock(&p->lock);
		clp_doomed(p);
		pthread_mutex_lock(&p->lock);
		if (p->state != CLP_PENDING)
			break;
		/* Bound: woken at once; a failing wait list is looked at again. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += poll_ns;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&p->bound, &p->lock, &ts);
		if (poll_ns < 16000000)
			poll_ns *= 2;
	}
	if (p->state == CLP_LAUNCHED)
		real = p->real;         /* kept until @p goes */
	pthread_mutex_unlock(&p->lock);
	if (real && cl_real.clRetainEvent(real) != CL_SUCCESS)
		real = NULL;
	return real;
}

/*
 * clWaitForEvents() with proxies in the list waits for each in turn (the
 * driver's order), on a proxy's real command once it launched: the
 * driver answers as for its own events (an error as soon as one failed),
 * and a proxy whose real event failed completes here, whether or not the
 * driver calls its completion callback.
 */
XS_CL_HOOK cl_int clWaitForEvents(cl_uint n, const cl_event *list)
{
	cl_context ctx = NULL, c;
	bool any = false;
	cl_int rc = CL_SUCCESS;

	if (cl_load() < 0)
		return CL_INVALID_EVENT;
	if (!n || !list || !atomic_load_explicit(&clp_count, memory_order_relaxed))
		return cl_real.clWaitForEvents(n, list);
	/* A list the driver refuses gets its answer, before any wait. */
	for (cl_uint i = 0; i < n; i++) {
		struct cl_proxy *p = cl_proxy_get(list[i]);

		any |= p != NULL;
		cl_proxy_put(p);
		if (!list[i] || cl_real.clGetEventInfo(list[i], CL_EVENT_CONTEXT, sizeof(c), &c,
						       NULL) != CL_SUCCESS || (ctx && c != ctx))
			return cl_real.clWaitForEvents(n, list);
		ctx = c;
	}
	if (!any)
		return cl_real.clWaitForEvents(n, list);
	for (cl_uint i = 0; i < n && rc == CL_SUCCESS; i++) {
		struct cl_proxy *p = cl_proxy_get(list[i]);
		cl_event real;

		if (!p) {
			rc = cl_real.clWaitForEvents(1, &list[i]);
			continue;
		}
		real = clp_wait_bound(p);
		if (!real) {
			rc = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
		} else {
			rc = cl_real.clWaitForEvents(1, &real);
			if (clp_event_status(real, NULL) < 0)
				clp_complete(p);
			cl_real.clReleaseEvent(real);
		}
		cl_proxy_put(p);
	}
	return rc;
}

/* --- application calls on events -------------------------------------------------- */

/*
 * Before answering for a proxy still pending: a guarded launch's proxy is
 * bound by whichever thread learns first that the launch is complete for
 * good, so an application that learnt it another way (its clFinish
 * returned) could find the binding still on its way; it is waited for.
 */
static void clp_settle(struct cl_proxy *p)
{
	int state;

	pthread_mutex_lock(&p->lock);
	state = p->state;
	pthread_mutex_unlock(&p->lock);
	if (state == CLP_PENDING)
		cl_cmd_wait_completing();
}

static cl_int clp_answer(size_t size, void *value, size_t *ret, const void *src, size_t len)
{
	if (value) {
		if (size < len)
			return CL_INVALID_VALUE;
		memcpy(value, src, len);
	}
	if (ret)
		*ret = len;
	return CL_SUCCESS;
}

XS_CL_HOOK cl_int clGetEventInfo(cl_event ev, cl_event_info param, size_t size, void *value,
				 size_t *ret)
{
	struct cl_proxy *p = cl_proxy_get(ev);
	cl_command_type type;
	cl_int rc, st;
	cl_uint refs;

	if (!p)
		return cl_load() < 0 ? CL_INVALID_EVENT
				     : cl_real.clGetEventInfo(ev, param, size, value, ret);
	switch (param) {
	case CL_EVENT_COMMAND_QUEUE:
		rc = clp_answer(size, value, ret, &p->q->queue, sizeof(p->q->queue));
		break;
	case CL_EVENT_COMMAND_TYPE:
		/* Once launched, the driver's word (drivers differ, e.g. on
		 * what a task is); before, the type the call stands for. */
		pthread_mutex_lock(&p->lock);
		if (p->state != CLP_LAUNCHED ||
		    cl_real.clGetEventInfo(p->real, param, sizeof(type), &type, NULL))
			type = p->type;
		pthread_mutex_unlock(&p->lock);
		if (type == CL_COMMAND_TASK)
			type = cl_cmd_task_type(p->q->dev);
		rc = clp_answer(size, value, ret, &type, sizeof(type));
		break;
	case CL_EVENT_REFERENCE_COUNT:
		refs = (cl_uint)atomic_load(&p->app_refs);
		rc = clp_answer(size, value, ret, &refs, sizeof(refs));
		break;
	case CL_EVENT_COMMAND_EXECUTION_STATUS:
		clp_settle(p);
		clp_doomed(p);
		pthread_mutex_lock(&p->lock);
		if (p->state == CLP_PENDING)
			st = CL_QUEUED;
		else if (p->state == CLP_FAILED)
			st = p->rc < 0 ? p->rc : CL_INVALID_OPERATION;
		else if (cl_real.clGetEventInfo(p->real, param, sizeof(st), &st, NULL))
			st = CL_QUEUED;
		pthread_mutex_unlock(&p->lock);
		rc = clp_answer(size, value, ret, &st, sizeof(st));
		break;
	default:
		rc = cl_real.clGetEventInfo(ev, param, size, value, ret);
	}
	cl_proxy_put(p);
	return rc;
}

XS_CL_HOOK cl_int clGetEventProfilingInfo(cl_event ev, cl_profiling_info param, size_t size,
					  void *value, size_t *ret)
{
	struct cl_proxy *p = cl_proxy_get(ev);
	bool failed;
	cl_event real;
	cl_int rc;

	if (!p)
		return cl_load() < 0 ? CL_INVALID_EVENT
				     : cl_real.clGetEventProfilingInfo(ev, param, size, value, ret);
	clp_settle(p);
	real = cl_proxy_real(p, &failed);
	rc = real ? cl_real.clGetEventProfilingInfo(real, param, size, value, ret)
		  : CL_PROFILING_INFO_NOT_AVAILABLE;
	cl_proxy_put(p);
	return rc;
}

XS_CL_HOOK cl_int clRetainEvent(cl_event ev)
{
	struct cl_proxy *p = cl_proxy_get(ev);

	if (!p)
		return cl_load() < 0 ? CL_INVALID_EVENT : cl_real.clRetainEvent(ev);
	/* The reference cl_proxy_get() took becomes the application's. */
	atomic_fetch_add(&p->app_refs, 1);
	return CL_SUCCESS;
}

XS_CL_HOOK cl_int clReleaseEvent(cl_event ev)
{
	struct cl_proxy *p = cl_proxy_get(ev);
	int refs;

	if (!p)
		return cl_load() < 0 ? CL_INVALID_EVENT : cl_real.clReleaseEvent(ev);
	refs = atomic_load(&p->app_refs);
	while (refs > 0 && !atomic_compare_exchange_weak(&p->app_refs, &refs, refs - 1))
		;
	if (refs > 0)
		cl_proxy_put(p);        /* the application's */
	cl_proxy_put(p);                /* ours, from cl_proxy_get() */
	return refs > 0 ? CL_SUCCESS : CL_INVALID_EVENT;
}

XS_CL_HOOK cl_int clSetEventCallback(cl_event ev, cl_int type,
				     void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data)
{
	struct cl_proxy *p;
	struct cl_cb *cb;

	if (cl_load() < 0)
		return CL_INVALID_EVENT;
	p = cl_proxy_get(ev);
	/* Completion callbacks go on the user event itself, which completes
	 * with the command; bad arguments get the driver's answer. */
	if (!p || type == CL_COMPLETE || !fn ||
	    (type != CL_SUBMITTED && type != CL_RUNNING)) {
		cl_proxy_put(p);
		return cl_real.clSetEventCallback(ev, type, fn, data);
	}
	cb = calloc(1, sizeof(*cb));
	if (!cb) {
		cl_proxy_put(p);
		return CL_OUT_OF_HOST_MEMORY;
	}
	cb->fn = fn;
	cb->data = data;
	cb->type = type;
	pthread_mutex_lock(&p->lock);
	if (p->state == CLP_PENDING) {
		/* Attached at the launch; the reference stays with it. */
		cb->next = p->cbs;
		p->cbs = cb;
		pthread_mutex_unlock(&p->lock);
		return CL_SUCCESS;
	}
	pthread_mutex_unlock(&p->lock);
	if (p->state == CLP_LAUNCHED) {
		clp_cb_attach(p, cb);
		return CL_SUCCESS;
	}
	free(cb);
	cl_proxy_put(p);
	return cl_real.clSetEventCallback(ev, type, fn, data);
}

XS_CL_HOOK cl_int clSetUserEventStatus(cl_event ev, cl_int status)
{
	struct cl_proxy *p = cl_proxy_get(ev);

	if (p) {
		/* Not a user event, as far as the application knows. */
		cl_proxy_put(p);
		return CL_INVALID_EVENT;
	}
	return cl_load() < 0 ? CL_INVALID_EVENT : cl_real.clSetUserEventStatus(ev, status);
}
