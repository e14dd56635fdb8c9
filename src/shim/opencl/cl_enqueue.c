/*
 * Enqueues as XQueue commands (see cl_shim.h).
 *
 * Each scheduled enqueue becomes one struct cl_cmd: the call's arguments,
 * with deep copies of what the application may reuse once the call
 * returned (sizes, origins, fill patterns), and its wait list with a
 * reference on every event. When the XQueue buffers the command instead
 * of launching it at once (xal_cmd_ops.deferred), the command also
 * captures the kernel's arguments (a clone of the kernel, which OpenCL
 * defines as copying them) and checks what the driver would have refused
 * at once, so those errors are still returned by the enqueue.
 *
 * Calls whose result the application needs at once (maps) and rare ones
 * (native kernels, SVM free and migration, memory migration, GL/EGL
 * acquire/release) launch everything buffered first and go straight to
 * the driver: they may wait while the queue is suspended.
 *
 * Memory objects and samplers released by the application while commands
 * that may use them are still buffered (a kernel argument is invisible to
 * the shim) are released once every such command launched: the driver
 * then holds its own references.
 */
#include "shim/opencl/cl_shim.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum cl_op {
	OP_NDRANGE, OP_TASK, OP_READ, OP_WRITE, OP_COPY, OP_READ_RECT, OP_WRITE_RECT, OP_COPY_RECT,
	OP_FILL, OP_READ_IMAGE, OP_WRITE_IMAGE, OP_COPY_IMAGE, OP_FILL_IMAGE,
	OP_IMAGE_TO_BUFFER, OP_BUFFER_TO_IMAGE, OP_UNMAP, OP_MARKER, OP_BARRIER,
	OP_SVM_MEMCPY, OP_SVM_FILL, OP_SVM_UNMAP,
};

/* Link states of a command: launched, or the proxy waiting for it. */
#define CLC_LAUNCHED ((uintptr_t)1)

struct cl_cmd {
	struct xal_cl_cmd c;
	struct cl_q *q;
	enum cl_op op;
	cl_command_type type;
	cl_uint nwait;
	cl_event *wait;                 /* events referenced (ours) */
	struct cl_proxy **wproxy;       /* the proxies among them, else NULL */
	_Atomic uintptr_t link;         /* 0, CLC_LAUNCHED or the proxy */
	cl_int reject;                  /* refused when deferred */
	bool deferred;                  /* buffered at the enqueue */
	/* the call's arguments */
	cl_kernel kernel, clone;
	cl_uint dim;
	bool has_offset, has_local;
	size_t goff[3], gsize[3], lsize[3];
	cl_mem mem[2];
	size_t off[2], size;
	size_t o1[3], o2[3], region[3];
	size_t pitch[4];                /* row/slice pitches as the call orders them */
	void *ptr;
	const void *cptr;
	unsigned char pattern[128];     /* fill pattern / color */
	size_t pattern_size;
};

static struct cl_cmd *to_k(struct xal_cl_cmd *c)
{
	return (struct cl_cmd *)c;
}

/* --- mapped pointers ------------------------------------------------------------------ */

/*
 * Mappings the application holds (maps go to the driver at once), so that
 * a buffered unmap of a pointer that is not mapped fails at the call with
 * CL_INVALID_VALUE, as the driver's would.
 */
struct clc_map {
	struct clc_map *next;
	cl_mem mem;
	void *ptr;
	unsigned count;
};

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clc_map *map_head;

static void clc_map_note(cl_mem mem, void *ptr)
{
	struct clc_map *m;

	pthread_mutex_lock(&map_lock);
	for (m = map_head; m && (m->mem != mem || m->ptr != ptr); m = m->next)
		;
	if (!m && (m = calloc(1, sizeof(*m)))) {
		m->mem = mem;
		m->ptr = ptr;
		m->next = map_head;
		map_head = m;
	}
	if (m)
		m->count++;
	pthread_mutex_unlock(&map_lock);
}

/* Whether @ptr is mapped from @mem; @take: one mapping fewer. */
static bool clc_map_find(cl_mem mem, void *ptr, bool take)
{
	struct clc_map **pp, *m;

	pthread_mutex_lock(&map_lock);
	for (pp = &map_head; *pp && ((*pp)->mem != mem || (*pp)->ptr != ptr); pp = &(*pp)->next)
		;
	m = *pp;
	if (m && take && !--m->count) {
		*pp = m->next;
		free(m);
	}
	pthread_mutex_unlock(&map_lock);
	return m != NULL;
}

/* --- wait lists -------------------------------------------------------------- */

/*
 * Checks and copies the application's wait list into @k, with a reference
 * on every event (the application may release them once we return).
 */
static cl_int clc_take_waits(struct cl_cmd *k, cl_uint n, const cl_event *list)
{
	cl_context ctx;

	if ((n && !list) || (!n && list))
		return CL_INVALID_EVENT_WAIT_LIST;
	if (!n)
		return CL_SUCCESS;
	k->wait = calloc(n, sizeof(*k->wait));
	k->wproxy = calloc(n, sizeof(*k->wproxy));
	if (!k->wait || !k->wproxy)
		return CL_OUT_OF_HOST_MEMORY;
	for (cl_uint i = 0; i < n; i++) {
		if (!list[i] || cl_real.clGetEventInfo(list[i], CL_EVENT_CONTEXT, sizeof(ctx),
						       &ctx, NULL) != CL_SUCCESS)
			return CL_INVALID_EVENT_WAIT_LIST;
		if (ctx != k->q->ctx)
			return CL_INVALID_CONTEXT;
		k->wproxy[i] = cl_proxy_get(list[i]);
		if (!k->wproxy[i] && cl_real.clRetainEvent(list[i]) != CL_SUCCESS)
			return CL_INVALID_EVENT_WAIT_LIST;
		k->wait[i] = list[i];
		k->nwait = i + 1;
	}
	return CL_SUCCESS;
}

static void clc_drop_waits(struct cl_cmd *k)
{
	for (cl_uint i = 0; i < k->nwait; i++) {
		if (k->wproxy[i])
			cl_proxy_put(k->wproxy[i]);
		else
			cl_real.clReleaseEvent(k->wait[i]);
	}
	free(k->wait);
	free(k->wproxy);
	k->wait = NULL;
	k->wproxy = NULL;
	k->nwait = 0;
}

/*
 * A command waiting on another queue's proxy must not reach the driver
 * before that command did (its real event does not exist yet): it names
 * the queue it waits for, which the scheduler then runs (inheritance).
 */
static void *clc_blocked_on(struct xal_cl_cmd *c)
{
	struct cl_cmd *k = to_k(c);
	bool failed;

	for (cl_uint i = 0; i < k->nwait; i++) {
		struct cl_proxy *p = k->wproxy[i];

		if (p && cl_proxy_queue(p) != k->q && !cl_proxy_real(p, &failed) && !failed)
			return cl_proxy_queue(p)->xq;
	}
	return NULL;
}

/* --- issue ---------------------------------------------------------------------- */

static cl_int clc_issue_op(struct cl_cmd *k, cl_command_queue cq, cl_uint n,
			   const cl_event *w, cl_event *ev)
{
	const struct cl_fns *cl = &cl_real;

	switch (k->op) {
	case OP_NDRANGE:
		return cl->clEnqueueNDRangeKernel(cq, k->clone ? k->clone : k->kernel, k->dim,
						  k->has_offset ? k->goff : NULL, k->gsize,
						  k->has_local ? k->lsize : NULL, n, w, ev);
	case OP_TASK:
		return cl->clEnqueueTask(cq, k->clone ? k->clone : k->kernel, n, w, ev);
	case OP_READ:
		return cl->clEnqueueReadBuffer(cq, k->mem[0], CL_FALSE, k->off[0], k->size,
					       k->ptr, n, w, ev);
	case OP_WRITE:
		return cl->clEnqueueWriteBuffer(cq, k->mem[0], CL_FALSE, k->off[0], k->size,
						k->cptr, n, w, ev);
	case OP_COPY:
		return cl->clEnqueueCopyBuffer(cq, k->mem[0], k->mem[1], k->off[0], k->off[1],
					       k->size, n, w, ev);
	case OP_READ_RECT:
		return cl->clEnqueueReadBufferRect(cq, k->mem[0], CL_FALSE, k->o1, k->o2,
						   k->region, k->pitch[0], k->pitch[1],
						   k->pitch[2], k->pitch[3], k->ptr, n, w, ev);
	case OP_WRITE_RECT:
		return cl->clEnqueueWriteBufferRect(cq, k->mem[0], CL_FALSE, k->o1, k->o2,
						    k->region, k->pitch[0], k->pitch[1],
						    k->pitch[2], k->pitch[3], k->cptr, n, w, ev);
	case OP_COPY_RECT:
		return cl->clEnqueueCopyBufferRect(cq, k->mem[0], k->mem[1], k->o1, k->o2,
						   k->region, k->pitch[0], k->pitch[1],
						   k->pitch[2], k->pitch[3], n, w, ev);
	case OP_FILL:
		return cl->clEnqueueFillBuffer(cq, k->mem[0], k->pattern, k->pattern_size,
					       k->off[0], k->size, n, w, ev);
	case OP_READ_IMAGE:
		return cl->clEnqueueReadImage(cq, k->mem[0], CL_FALSE, k->o1, k->region,
					      k->pitch[0], k->pitch[1], k->ptr, n, w, ev);
	case OP_WRITE_IMAGE:
		return cl->clEnqueueWriteImage(cq, k->mem[0], CL_FALSE, k->o1, k->region,
					       k->pitch[0], k->pitch[1], k->cptr, n, w, ev);
	case OP_COPY_IMAGE:
		return cl->clEnqueueCopyImage(cq, k->mem[0], k->mem[1], k->o1, k->o2, k->region,
					      n, w, ev);
	case OP_FILL_IMAGE:
		return cl->clEnqueueFillImage(cq, k->mem[0], k->pattern, k->o1, k->region, n, w,
					      ev);
	case OP_IMAGE_TO_BUFFER:
		return cl->clEnqueueCopyImageToBuffer(cq, k->mem[0], k->mem[1], k->o1, k->region,
						      k->off[1], n, w, ev);
	case OP_BUFFER_TO_IMAGE:
		return cl->clEnqueueCopyBufferToImage(cq, k->mem[0], k->mem[1], k->off[0], k->o2,
						      k->region, n, w, ev);
	case OP_UNMAP:
		return cl->clEnqueueUnmapMemObject(cq, k->mem[0], k->ptr, n, w, ev);
	case OP_MARKER:
		return cl->clEnqueueMarkerWithWaitList(cq, n, w, ev);
	case OP_BARRIER:
		return cl->clEnqueueBarrierWithWaitList(cq, n, w, ev);
	case OP_SVM_MEMCPY:
		return cl->clEnqueueSVMMemcpy(cq, CL_FALSE, k->ptr, k->cptr, k->size, n, w, ev);
	case OP_SVM_FILL:
		return cl->clEnqueueSVMMemFill(cq, k->ptr, k->pattern, k->pattern_size, k->size,
					       n, w, ev);
	case OP_SVM_UNMAP:
		return cl->clEnqueueSVMUnmap(cq, k->ptr, n, w, ev);
	}
	return CL_INVALID_OPERATION;
}

static cl_int clc_issue(struct xal_cl_cmd *c, cl_command_queue cq, cl_event *ev)
{
	struct cl_cmd *k = to_k(c);
	cl_event small[8], *w = small;
	cl_int rc;

	if (k->reject) {
		/* Refused at the enqueue already; nothing reaches the driver. */
		return CL_SUCCESS;
	}
	if (k->nwait > 8 && !(w = malloc(k->nwait * sizeof(*w))))
		return CL_OUT_OF_HOST_MEMORY;
	for (cl_uint i = 0; i < k->nwait; i++) {
		bool failed;
		cl_event real = k->wproxy[i] ? cl_proxy_real(k->wproxy[i], &failed) : NULL;
		cl_int st = CL_COMPLETE;

		/* A failed or unlaunched proxy stays the user event it is. */
		w[i] = real ? real : k->wait[i];
		/*
		 * An event that failed before the command reaches the driver
		 * fails the command here: a driver may never complete a
		 * command enqueued behind an event that already failed
		 * (PoCL 3.1 does not), where it fails it if the event fails
		 * later, as it would have natively.
		 */
		if (k->deferred &&
		    cl_real.clGetEventInfo(w[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st),
					   &st, NULL) == CL_SUCCESS && st < 0) {
			if (w != small)
				free(w);
			return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
		}
	}
	rc = clc_issue_op(k, cq, k->nwait, k->nwait ? w : NULL, ev);
	if (w != small)
		free(w);
	return rc;
}

/*
 * What the driver calls a task's command (drivers differ: PoCL says
 * NDRange), learned from the first task launched, for proxies of tasks
 * not launched yet; CL_COMMAND_TASK until then.
 */
static _Atomic cl_command_type clc_task_type = CL_COMMAND_TASK;
static _Atomic bool clc_task_learned;

static void clc_learn_task_type(cl_event ev)
{
	cl_command_type type;

	if (!atomic_load_explicit(&clc_task_learned, memory_order_relaxed) &&
	    cl_real.clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, NULL) ==
		    CL_SUCCESS) {
		atomic_store(&clc_task_type, type);
		atomic_store(&clc_task_learned, true);
	}
}

static void clc_issued(struct xal_cl_cmd *c, cl_int rc, cl_event ev)
{
	struct cl_cmd *k = to_k(c);
	uintptr_t old = atomic_exchange(&k->link, CLC_LAUNCHED);

	if (k->op == OP_TASK && ev)
		clc_learn_task_type(ev);

	if (old && old != CLC_LAUNCHED)
		cl_proxy_bind((struct cl_proxy *)old, ev, k->reject ? k->reject : rc);
	/* The driver holds what it needs now. */
	clc_drop_waits(k);
	if (k->clone) {
		cl_real.clReleaseKernel(k->clone);
		k->clone = NULL;
	}
}

/* --- checks when buffered --------------------------------------------------- */

static cl_int clc_check_mem(cl_mem m, size_t off, size_t size)
{
	size_t total = 0;

	if (!m || cl_real.clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(total), &total, NULL))
		return CL_INVALID_MEM_OBJECT;
	if (size == SIZE_MAX)
		return CL_SUCCESS;
	return off > total || size > total - off ? CL_INVALID_VALUE : CL_SUCCESS;
}

/* Work-group sizes as the driver checks them at the enqueue. */
static cl_int clc_check_groups(struct cl_cmd *k)
{
	struct cl_q *q = k->q;
	size_t total = 1, most = 0;

	if (!k->has_local)
		return CL_SUCCESS;
	for (cl_uint d = 0; d < k->dim; d++) {
		if (!k->lsize[d])
			return CL_INVALID_WORK_GROUP_SIZE;
		if (k->lsize[d] > q->max_items[d])
			return CL_INVALID_WORK_ITEM_SIZE;
		if (!q->nonuniform && k->gsize[d] % k->lsize[d])
			return CL_INVALID_WORK_GROUP_SIZE;
		total *= k->lsize[d];
	}
	if (cl_real.clGetKernelWorkGroupInfo(k->kernel, q->dev, CL_KERNEL_WORK_GROUP_SIZE,
					     sizeof(most), &most, NULL) == CL_SUCCESS &&
	    total > most)
		return CL_INVALID_WORK_GROUP_SIZE;
	return CL_SUCCESS;
}

static void clc_deferred(struct xal_cl_cmd *c)
{
	struct cl_cmd *k = to_k(c);
	cl_int rc = CL_SUCCESS;

	k->deferred = true;
	switch (k->op) {
	case OP_NDRANGE:
	case OP_TASK:
		/* A clone copies the arguments set so far: the application may
		 * set others for its next enqueue at once. */
		if (cl_real.clCloneKernel)
			k->clone = cl_real.clCloneKernel(k->kernel, &rc);
		if (rc == CL_SUCCESS)
			rc = cl_kernel_prepare(k->kernel, k->clone);
		if (rc == CL_SUCCESS && k->op == OP_NDRANGE)
			rc = clc_check_groups(k);
		break;
	case OP_READ:
	case OP_WRITE:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size);
		break;
	case OP_FILL:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size);
		if (!rc && (k->off[0] % k->pattern_size || k->size % k->pattern_size))
			rc = CL_INVALID_VALUE;
		break;
	case OP_COPY:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size);
		if (!rc)
			rc = clc_check_mem(k->mem[1], k->off[1], k->size);
		if (!rc && k->mem[0] == k->mem[1] && k->off[0] < k->off[1] + k->size &&
		    k->off[1] < k->off[0] + k->size)
			rc = CL_MEM_COPY_OVERLAP;
		break;
	case OP_COPY_RECT:
	case OP_COPY_IMAGE:
	case OP_IMAGE_TO_BUFFER:
	case OP_BUFFER_TO_IMAGE:
		rc = clc_check_mem(k->mem[1], 0, SIZE_MAX);
		/* fallthrough */
	case OP_READ_RECT:
	case OP_WRITE_RECT:
	case OP_READ_IMAGE:
	case OP_WRITE_IMAGE:
	case OP_FILL_IMAGE:
	case OP_UNMAP:
		if (!rc)
			rc = clc_check_mem(k->mem[0], 0, SIZE_MAX);
		if (!rc && k->op == OP_UNMAP && !clc_map_find(k->mem[0], k->ptr, false))
			rc = CL_INVALID_VALUE;
		break;
	default:
		break;
	}
	k->reject = rc;
}

static void clc_fini(struct xal_cl_cmd *c)
{
	struct cl_cmd *k = to_k(c);

	clc_drop_waits(k);
	if (k->clone)
		cl_real.clReleaseKernel(k->clone);
}

static const struct xal_cl_cmd_ops clc_ops = {
	.issue = clc_issue,
	.issued = clc_issued,
	.fini = clc_fini,
	.blocked_on = clc_blocked_on,
	.deferred = clc_deferred,
};

/* --- the common path ---------------------------------------------------------- */

static struct cl_cmd *clc_new(struct cl_q *q, enum cl_op op, cl_command_type type,
			      uint32_t kind, uint64_t est_key)
{
	struct cl_cmd *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cl_cmd_init(&k->c, &clc_ops, kind, est_key);
	k->q = q;
	k->op = op;
	k->type = type;
	return k;
}

/* Frees a command never submitted. */
static void clc_discard(struct cl_cmd *k)
{
	xal_cl_cmd_put(&k->c);
	xal_cl_cmd_put(&k->c);
}

/*
 * Submits @k (with the application's wait list) and answers as the driver
 * would: the enqueue's error, the event (real if the command launched
 * already, else a proxy), and for @blocking calls the wait.
 */
static cl_int clc_submit(struct cl_cmd *k, cl_uint nwait, const cl_event *wait,
			 cl_event *event, cl_bool blocking)
{
	struct cl_q *q = k->q;
	uint64_t seq = 0;
	cl_int rc = clc_take_waits(k, nwait, wait);
	struct cl_proxy *p = NULL;
	uintptr_t none = 0;

	if (rc != CL_SUCCESS) {
		clc_discard(k);
		return rc;
	}
	k->c.want_event = event || blocking;
	atomic_fetch_add_explicit(&cl_stat_cmds, 1, memory_order_relaxed);
	if (xq_submit(q->xq, &k->c.base, &seq) < 0) {
		xal_cl_cmd_put(&k->c);
		return CL_INVALID_COMMAND_QUEUE;
	}
	if (k->reject) {
		rc = k->reject;
		goto out;
	}
	if (blocking) {
		cl_int st = CL_COMPLETE;

		xq_wait(q->xq, seq);
		rc = k->c.rc;
		if (rc == CL_SUCCESS && k->c.ev &&
		    (cl_real.clWaitForEvents(1, &k->c.ev) != CL_SUCCESS ||
		     cl_real.clGetEventInfo(k->c.ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
					    sizeof(st), &st, NULL) != CL_SUCCESS || st < 0))
			rc = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
		if (event && k->c.ev && cl_real.clRetainEvent(k->c.ev) == CL_SUCCESS)
			*event = k->c.ev;
		goto out;
	}
	if (xal_cl_cmd_launched(&k->c)) {
		/* Launched before we returned: the driver's own answer. */
		rc = k->c.rc;
		if (rc == CL_SUCCESS && event && k->c.ev &&
		    cl_real.clRetainEvent(k->c.ev) == CL_SUCCESS)
			*event = k->c.ev;
		goto out;
	}
	if (!event)
		goto out;
	p = cl_proxy_new(q, k->op == OP_TASK ? atomic_load(&clc_task_type) : k->type);
	if (p && atomic_compare_exchange_strong(&k->link, &none, (uintptr_t)p)) {
		atomic_fetch_add_explicit(&cl_stat_proxies, 1, memory_order_relaxed);
		*event = cl_proxy_event(p);
		goto out;
	}
	if (p) {
		/* Launched meanwhile: drop the proxy (both its references). */
		cl_proxy_put(p);
		cl_proxy_put(p);
	} else {
		/* No proxy to be had: wait for the launch, answer with the real event. */
		xq_flush(q->xq);
	}
	rc = k->c.rc;
	if (rc == CL_SUCCESS && k->c.ev && cl_real.clRetainEvent(k->c.ev) == CL_SUCCESS)
		*event = k->c.ev;
out:
	xal_cl_cmd_put(&k->c);
	return rc;
}

/* The scheduled queue of @cq for an enqueue, or NULL to pass through. */
static struct cl_q *clc_queue(cl_command_queue cq)
{
	if (cl_load() < 0 || cl_passthrough())
		return NULL;
	return cl_q_of(cq);
}

#define CLC_NEW_OR_FAIL(k, q, op, type, kind, key)                                 \
	do {                                                                       \
		(k) = clc_new((q), (op), (type), (kind), (key));                   \
		if (!(k))                                                          \
			return CL_OUT_OF_HOST_MEMORY;                              \
	} while (0)

/* Without a loader, enqueues fail as on an unknown queue. */
#define CLC_REAL(call) (cl_load() < 0 ? CL_INVALID_COMMAND_QUEUE : cl_real.call)

static void copy3(size_t *dst, const size_t *src)
{
	if (src)
		memcpy(dst, src, 3 * sizeof(*dst));
}

/* --- kernels -------------------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueNDRangeKernel(cl_command_queue cq, cl_kernel kernel, cl_uint dim,
					 const size_t *goff, const size_t *gsize,
					 const size_t *lsize, cl_uint nwait,
					 const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !kernel || dim < 1 || dim > 3 || !gsize)
		return CLC_REAL(clEnqueueNDRangeKernel(cq, kernel, dim, goff, gsize, lsize,
						       nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_NDRANGE, CL_COMMAND_NDRANGE_KERNEL, XAL_CMD_KERNEL,
			(uint64_t)(uintptr_t)kernel);
	k->kernel = kernel;
	k->dim = dim;
	memcpy(k->gsize, gsize, dim * sizeof(size_t));
	if ((k->has_offset = goff != NULL))
		memcpy(k->goff, goff, dim * sizeof(size_t));
	if ((k->has_local = lsize != NULL))
		memcpy(k->lsize, lsize, dim * sizeof(size_t));
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueTask(cl_command_queue cq, cl_kernel kernel, cl_uint nwait,
				const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !kernel)
		return CLC_REAL(clEnqueueTask(cq, kernel, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_TASK, CL_COMMAND_TASK, XAL_CMD_KERNEL,
			(uint64_t)(uintptr_t)kernel);
	k->kernel = kernel;
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

/* --- buffers ---------------------------------------------------------------------- */

static cl_int clc_buffer(struct cl_q *q, enum cl_op op, cl_command_type type,
			 uint32_t kind, cl_mem m0, cl_mem m1, size_t off0, size_t off1,
			 size_t size, void *ptr, const void *cptr, cl_bool blocking,
			 cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_cmd *k;

	CLC_NEW_OR_FAIL(k, q, op, type, kind, 0);
	k->mem[0] = m0;
	k->mem[1] = m1;
	k->off[0] = off0;
	k->off[1] = off1;
	k->size = size;
	k->ptr = ptr;
	k->cptr = cptr;
	return clc_submit(k, nwait, wait, event, blocking);
}

XS_CL_HOOK cl_int clEnqueueReadBuffer(cl_command_queue cq, cl_mem buf, cl_bool blocking,
				      size_t off, size_t size, void *ptr, cl_uint nwait,
				      const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);

	if (!q || !ptr || !size)
		return CLC_REAL(clEnqueueReadBuffer(cq, buf, blocking, off, size, ptr, nwait,
						    wait, event));
	return clc_buffer(q, OP_READ, CL_COMMAND_READ_BUFFER, XAL_CMD_COPY, buf, NULL, off, 0,
			  size, ptr, NULL, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueWriteBuffer(cl_command_queue cq, cl_mem buf, cl_bool blocking,
				       size_t off, size_t size, const void *ptr, cl_uint nwait,
				       const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);

	if (!q || !ptr || !size)
		return CLC_REAL(clEnqueueWriteBuffer(cq, buf, blocking, off, size, ptr, nwait,
						     wait, event));
	return clc_buffer(q, OP_WRITE, CL_COMMAND_WRITE_BUFFER, XAL_CMD_COPY, buf, NULL, off, 0,
			  size, NULL, ptr, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyBuffer(cl_command_queue cq, cl_mem src, cl_mem dst,
				      size_t src_off, size_t dst_off, size_t size,
				      cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);

	if (!q || !size)
		return CLC_REAL(clEnqueueCopyBuffer(cq, src, dst, src_off, dst_off, size, nwait,
						    wait, event));
	return clc_buffer(q, OP_COPY, CL_COMMAND_COPY_BUFFER, XAL_CMD_COPY, src, dst, src_off,
			  dst_off, size, NULL, NULL, CL_FALSE, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueFillBuffer(cl_command_queue cq, cl_mem buf, const void *pattern,
				      size_t pattern_size, size_t off, size_t size,
				      cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !pattern || !pattern_size || pattern_size > 128 ||
	    (pattern_size & (pattern_size - 1)))
		return CLC_REAL(clEnqueueFillBuffer(cq, buf, pattern, pattern_size, off, size,
						    nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_FILL, CL_COMMAND_FILL_BUFFER, XAL_CMD_MEMSET, 0);
	k->mem[0] = buf;
	k->off[0] = off;
	k->size = size;
	memcpy(k->pattern, pattern, pattern_size);
	k->pattern_size = pattern_size;
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

/* Rectangular transfers: origins, region and pitches copied. */
static cl_int clc_rect(struct cl_q *q, enum cl_op op, cl_command_type type, cl_mem m0,
		       cl_mem m1, const size_t *o1, const size_t *o2, const size_t *region,
		       const size_t pitch[4], void *ptr, const void *cptr, cl_bool blocking,
		       cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_cmd *k;

	CLC_NEW_OR_FAIL(k, q, op, type, XAL_CMD_COPY, 0);
	k->mem[0] = m0;
	k->mem[1] = m1;
	copy3(k->o1, o1);
	copy3(k->o2, o2);
	copy3(k->region, region);
	memcpy(k->pitch, pitch, sizeof(k->pitch));
	k->ptr = ptr;
	k->cptr = cptr;
	return clc_submit(k, nwait, wait, event, blocking);
}

XS_CL_HOOK cl_int clEnqueueReadBufferRect(cl_command_queue cq, cl_mem buf, cl_bool blocking,
					  const size_t *buf_origin, const size_t *host_origin,
					  const size_t *region, size_t buf_row, size_t buf_slice,
					  size_t host_row, size_t host_slice, void *ptr,
					  cl_uint nwait, const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { buf_row, buf_slice, host_row, host_slice };
	struct cl_q *q = clc_queue(cq);

	if (!q || !buf_origin || !host_origin || !region || !ptr)
		return CLC_REAL(clEnqueueReadBufferRect(cq, buf, blocking, buf_origin,
							host_origin, region, buf_row, buf_slice,
							host_row, host_slice, ptr, nwait, wait,
							event));
	return clc_rect(q, OP_READ_RECT, CL_COMMAND_READ_BUFFER_RECT, buf, NULL, buf_origin,
			host_origin, region, pitch, ptr, NULL, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueWriteBufferRect(cl_command_queue cq, cl_mem buf, cl_bool blocking,
					   const size_t *buf_origin, const size_t *host_origin,
					   const size_t *region, size_t buf_row,
					   size_t buf_slice, size_t host_row, size_t host_slice,
					   const void *ptr, cl_uint nwait, const cl_event *wait,
					   cl_event *event)
{
	const size_t pitch[4] = { buf_row, buf_slice, host_row, host_slice };
	struct cl_q *q = clc_queue(cq);

	if (!q || !buf_origin || !host_origin || !region || !ptr)
		return CLC_REAL(clEnqueueWriteBufferRect(cq, buf, blocking, buf_origin,
							 host_origin, region, buf_row, buf_slice,
							 host_row, host_slice, ptr, nwait, wait,
							 event));
	return clc_rect(q, OP_WRITE_RECT, CL_COMMAND_WRITE_BUFFER_RECT, buf, NULL, buf_origin,
			host_origin, region, pitch, NULL, ptr, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyBufferRect(cl_command_queue cq, cl_mem src, cl_mem dst,
					  const size_t *src_origin, const size_t *dst_origin,
					  const size_t *region, size_t src_row, size_t src_slice,
					  size_t dst_row, size_t dst_slice, cl_uint nwait,
					  const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { src_row, src_slice, dst_row, dst_slice };
	struct cl_q *q = clc_queue(cq);

	if (!q || !src_origin || !dst_origin || !region)
		return CLC_REAL(clEnqueueCopyBufferRect(cq, src, dst, src_origin, dst_origin,
							region, src_row, src_slice, dst_row,
							dst_slice, nwait, wait, event));
	return clc_rect(q, OP_COPY_RECT, CL_COMMAND_COPY_BUFFER_RECT, src, dst, src_origin,
			dst_origin, region, pitch, NULL, NULL, CL_FALSE, nwait, wait, event);
}

/* --- images -------------------------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueReadImage(cl_command_queue cq, cl_mem image, cl_bool blocking,
				     const size_t *origin, const size_t *region, size_t row,
				     size_t slice, void *ptr, cl_uint nwait,
				     const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { row, slice, 0, 0 };
	struct cl_q *q = clc_queue(cq);

	if (!q || !origin || !region || !ptr)
		return CLC_REAL(clEnqueueReadImage(cq, image, blocking, origin, region, row,
						   slice, ptr, nwait, wait, event));
	return clc_rect(q, OP_READ_IMAGE, CL_COMMAND_READ_IMAGE, image, NULL, origin, NULL,
			region, pitch, ptr, NULL, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueWriteImage(cl_command_queue cq, cl_mem image, cl_bool blocking,
				      const size_t *origin, const size_t *region, size_t row,
				      size_t slice, const void *ptr, cl_uint nwait,
				      const cl_event *wait, cl_event *event)
{
	const size_t pitch[4] = { row, slice, 0, 0 };
	struct cl_q *q = clc_queue(cq);

	if (!q || !origin || !region || !ptr)
		return CLC_REAL(clEnqueueWriteImage(cq, image, blocking, origin, region, row,
						    slice, ptr, nwait, wait, event));
	return clc_rect(q, OP_WRITE_IMAGE, CL_COMMAND_WRITE_IMAGE, image, NULL, origin, NULL,
			region, pitch, NULL, ptr, blocking, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyImage(cl_command_queue cq, cl_mem src, cl_mem dst,
				     const size_t *src_origin, const size_t *dst_origin,
				     const size_t *region, cl_uint nwait, const cl_event *wait,
				     cl_event *event)
{
	static const size_t pitch[4];
	struct cl_q *q = clc_queue(cq);

	if (!q || !src_origin || !dst_origin || !region)
		return CLC_REAL(clEnqueueCopyImage(cq, src, dst, src_origin, dst_origin, region,
						   nwait, wait, event));
	return clc_rect(q, OP_COPY_IMAGE, CL_COMMAND_COPY_IMAGE, src, dst, src_origin,
			dst_origin, region, pitch, NULL, NULL, CL_FALSE, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueCopyImageToBuffer(cl_command_queue cq, cl_mem src, cl_mem dst,
					     const size_t *src_origin, const size_t *region,
					     size_t dst_off, cl_uint nwait, const cl_event *wait,
					     cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !src_origin || !region)
		return CLC_REAL(clEnqueueCopyImageToBuffer(cq, src, dst, src_origin, region,
							   dst_off, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_IMAGE_TO_BUFFER, CL_COMMAND_COPY_IMAGE_TO_BUFFER, XAL_CMD_COPY,
			0);
	k->mem[0] = src;
	k->mem[1] = dst;
	copy3(k->o1, src_origin);
	copy3(k->region, region);
	k->off[1] = dst_off;
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueCopyBufferToImage(cl_command_queue cq, cl_mem src, cl_mem dst,
					     size_t src_off, const size_t *dst_origin,
					     const size_t *region, cl_uint nwait,
					     const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !dst_origin || !region)
		return CLC_REAL(clEnqueueCopyBufferToImage(cq, src, dst, src_off, dst_origin,
							   region, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_BUFFER_TO_IMAGE, CL_COMMAND_COPY_BUFFER_TO_IMAGE, XAL_CMD_COPY,
			0);
	k->mem[0] = src;
	k->mem[1] = dst;
	k->off[0] = src_off;
	copy3(k->o2, dst_origin);
	copy3(k->region, region);
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueFillImage(cl_command_queue cq, cl_mem image, const void *color,
				     const size_t *origin, const size_t *region, cl_uint nwait,
				     const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !color || !origin || !region)
		return CLC_REAL(clEnqueueFillImage(cq, image, color, origin, region, nwait, wait,
						   event));
	CLC_NEW_OR_FAIL(k, q, OP_FILL_IMAGE, CL_COMMAND_FILL_IMAGE, XAL_CMD_MEMSET, 0);
	k->mem[0] = image;
	/* A fill color is four 32-bit components at most. */
	memcpy(k->pattern, color, 16);
	copy3(k->o1, origin);
	copy3(k->region, region);
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

/* --- unmap, markers, barriers ---------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueUnmapMemObject(cl_command_queue cq, cl_mem mem, void *ptr,
					  cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;
	cl_int rc;

	if (!q || !ptr)
		return CLC_REAL(clEnqueueUnmapMemObject(cq, mem, ptr, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_UNMAP, CL_COMMAND_UNMAP_MEM_OBJECT, XAL_CMD_OTHER, 0);
	k->mem[0] = mem;
	k->ptr = ptr;
	rc = clc_submit(k, nwait, wait, event, CL_FALSE);
	if (rc == CL_SUCCESS)
		clc_map_find(mem, ptr, true);
	return rc;
}

static cl_int clc_sync_cmd(struct cl_q *q, enum cl_op op, cl_command_type type,
			   cl_uint nwait, const cl_event *wait, cl_event *event)
{
	struct cl_cmd *k;

	CLC_NEW_OR_FAIL(k, q, op, type, XAL_CMD_EVENT, 0);
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueMarkerWithWaitList(cl_command_queue cq, cl_uint nwait,
					      const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);

	if (!q)
		return CLC_REAL(clEnqueueMarkerWithWaitList(cq, nwait, wait, event));
	return clc_sync_cmd(q, OP_MARKER, CL_COMMAND_MARKER, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueBarrierWithWaitList(cl_command_queue cq, cl_uint nwait,
					       const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);

	if (!q)
		return CLC_REAL(clEnqueueBarrierWithWaitList(cq, nwait, wait, event));
	return clc_sync_cmd(q, OP_BARRIER, CL_COMMAND_BARRIER, nwait, wait, event);
}

XS_CL_HOOK cl_int clEnqueueMarker(cl_command_queue cq, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);

	if (!q || !event)
		return CLC_REAL(clEnqueueMarker(cq, event));
	return clc_sync_cmd(q, OP_MARKER, CL_COMMAND_MARKER, 0, NULL, event);
}

XS_CL_HOOK cl_int clEnqueueBarrier(cl_command_queue cq)
{
	struct cl_q *q = clc_queue(cq);

	if (!q)
		return CLC_REAL(clEnqueueBarrier(cq));
	return clc_sync_cmd(q, OP_BARRIER, CL_COMMAND_BARRIER, 0, NULL, NULL);
}

XS_CL_HOOK cl_int clEnqueueWaitForEvents(cl_command_queue cq, cl_uint n, const cl_event *list)
{
	struct cl_q *q = clc_queue(cq);

	if (!q || !n || !list)
		return CLC_REAL(clEnqueueWaitForEvents(cq, n, list));
	/* A barrier on the events: later commands wait for them. */
	return clc_sync_cmd(q, OP_BARRIER, CL_COMMAND_BARRIER, n, list, NULL);
}

/* --- shared virtual memory -------------------------------------------------------------- */

XS_CL_HOOK cl_int clEnqueueSVMMemcpy(cl_command_queue cq, cl_bool blocking, void *dst,
				     const void *src, size_t size, cl_uint nwait,
				     const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !dst || !src || !size)
		return CLC_REAL(clEnqueueSVMMemcpy(cq, blocking, dst, src, size, nwait, wait,
						   event));
	CLC_NEW_OR_FAIL(k, q, OP_SVM_MEMCPY, CL_COMMAND_SVM_MEMCPY, XAL_CMD_COPY, 0);
	k->ptr = dst;
	k->cptr = src;
	k->size = size;
	return clc_submit(k, nwait, wait, event, blocking);
}

XS_CL_HOOK cl_int clEnqueueSVMMemFill(cl_command_queue cq, void *ptr, const void *pattern,
				      size_t pattern_size, size_t size, cl_uint nwait,
				      const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !ptr || !pattern || !pattern_size || pattern_size > 128 ||
	    (pattern_size & (pattern_size - 1)) || size % pattern_size)
		return CLC_REAL(clEnqueueSVMMemFill(cq, ptr, pattern, pattern_size, size, nwait,
						    wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_SVM_FILL, CL_COMMAND_SVM_MEMFILL, XAL_CMD_MEMSET, 0);
	k->ptr = ptr;
	memcpy(k->pattern, pattern, pattern_size);
	k->pattern_size = pattern_size;
	k->size = size;
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

XS_CL_HOOK cl_int clEnqueueSVMUnmap(cl_command_queue cq, void *ptr, cl_uint nwait,
				    const cl_event *wait, cl_event *event)
{
	struct cl_q *q = clc_queue(cq);
	struct cl_cmd *k;

	if (!q || !ptr)
		return CLC_REAL(clEnqueueSVMUnmap(cq, ptr, nwait, wait, event));
	CLC_NEW_OR_FAIL(k, q, OP_SVM_UNMAP, CL_COMMAND_SVM_UNMAP, XAL_CMD_OTHER, 0);
	k->ptr = ptr;
	return clc_submit(k, nwait, wait, event, CL_FALSE);
}

/* --- drained first --------------------------------------------------------------------- */

/* Launches what @cq has buffered, so the call that follows is ordered. */
static void clc_drain(cl_command_queue cq)
{
	struct cl_q *q = clc_queue(cq);

	if (q)
		xq_flush(q->xq);
}

XS_CL_HOOK void *clEnqueueMapBuffer(cl_command_queue cq, cl_mem buf, cl_bool blocking,
				    cl_map_flags flags, size_t off, size_t size, cl_uint nwait,
				    const cl_event *wait, cl_event *event, cl_int *err)
{
	struct cl_q *q;
	void *p;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_COMMAND_QUEUE;
		return NULL;
	}
	q = clc_queue(cq);
	if (q)
		xq_flush(q->xq);
	p = cl_real.clEnqueueMapBuffer(cq, buf, blocking, flags, off, size, nwait, wait, event,
				       err);
	if (p && q)
		clc_map_note(buf, p);
	return p;
}

XS_CL_HOOK void *clEnqueueMapImage(cl_command_queue cq, cl_mem image, cl_bool blocking,
				   cl_map_flags flags, const size_t *origin,
				   const size_t *region, size_t *row, size_t *slice,
				   cl_uint nwait, const cl_event *wait, cl_event *event,
				   cl_int *err)
{
	struct cl_q *q;
	void *p;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_COMMAND_QUEUE;
		return NULL;
	}
	q = clc_queue(cq);
	if (q)
		xq_flush(q->xq);
	p = cl_real.clEnqueueMapImage(cq, image, blocking, flags, origin, region, row, slice,
				      nwait, wait, event, err);
	if (p && q)
		clc_map_note(image, p);
	return p;
}

XS_CL_HOOK cl_int clEnqueueSVMMap(cl_command_queue cq, cl_bool blocking, cl_map_flags flags,
				  void *ptr, size_t size, cl_uint nwait, const cl_event *wait,
				  cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueSVMMap(cq, blocking, flags, ptr, size, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueNativeKernel(cl_command_queue cq, void(CL_CALLBACK *fn)(void *),
					void *args, size_t cb_args, cl_uint nmem,
					const cl_mem *mem_list, const void **args_mem_loc,
					cl_uint nwait, const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueNativeKernel(cq, fn, args, cb_args, nmem, mem_list,
					      args_mem_loc, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueMigrateMemObjects(cl_command_queue cq, cl_uint n, const cl_mem *mems,
					     cl_mem_migration_flags flags, cl_uint nwait,
					     const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueMigrateMemObjects(cq, n, mems, flags, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueSVMFree(cl_command_queue cq, cl_uint n, void *ptrs[],
				   void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[],
							 void *),
				   void *data, cl_uint nwait, const cl_event *wait,
				   cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueSVMFree(cq, n, ptrs, fn, data, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueSVMMigrateMem(cl_command_queue cq, cl_uint n, const void **ptrs,
					 const size_t *sizes, cl_mem_migration_flags flags,
					 cl_uint nwait, const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueSVMMigrateMem(cq, n, ptrs, sizes, flags, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueAcquireGLObjects(cl_command_queue cq, cl_uint n, const cl_mem *mems,
					    cl_uint nwait, const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueAcquireGLObjects(cq, n, mems, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueReleaseGLObjects(cl_command_queue cq, cl_uint n, const cl_mem *mems,
					    cl_uint nwait, const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueReleaseGLObjects(cq, n, mems, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueAcquireEGLObjectsKHR(cl_command_queue cq, cl_uint n,
						const cl_mem *mems, cl_uint nwait,
						const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueAcquireEGLObjectsKHR(cq, n, mems, nwait, wait, event));
}

XS_CL_HOOK cl_int clEnqueueReleaseEGLObjectsKHR(cl_command_queue cq, cl_uint n,
						const cl_mem *mems, cl_uint nwait,
						const cl_event *wait, cl_event *event)
{
	clc_drain(cq);
	return CLC_REAL(clEnqueueReleaseEGLObjectsKHR(cq, n, mems, nwait, wait, event));
}
