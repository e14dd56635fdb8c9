/*
 * The command object of every scheduled enqueue (see cl_cmds.h).
 *
 * Each scheduled enqueue becomes one struct cl_cmd: the call's arguments,
 * with deep copies of what the application may reuse once the call
 * returned (sizes, origins, fill patterns), and its wait list with a
 * reference on every event. When the XQueue buffers the command instead
 * of launching it at once (xal_cmd_ops.deferred), the command also takes
 * a snapshot of the kernel's arguments (cl_kernel.c), replayed onto a
 * private kernel when the command is issued, and checks what the driver
 * would have refused at once, so those errors are still returned by the
 * enqueue.
 */
#include "shim/opencl/cl_cmds.h"
#include "shim/opencl/guard/cl_guard.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Link states of a command: launched, or the proxy waiting for it. */
#define CLC_LAUNCHED ((uintptr_t)1)

static struct cl_cmd *to_k(struct xal_cl_cmd *c)
{
	return (struct cl_cmd *)c;
}

/* --- mapped pointers ------------------------------------------------------------------ */

struct clc_map {
	struct clc_map *next;
	cl_mem mem;
	void *ptr;
	unsigned count;
};

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clc_map *map_head;

void cl_map_note(cl_mem mem, void *ptr)
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

bool cl_map_find(cl_mem mem, void *ptr, bool take)
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

		/* A settle takes it to the driver behind the proxy's user event. */
		if (p && cl_proxy_queue(p) != k->q && !cl_proxy_real(p, &failed) && !failed &&
		    !atomic_load(&k->q->forcing))
			return cl_proxy_queue(p)->xq;
	}
	return NULL;
}

/* --- issue ---------------------------------------------------------------------- */

static cl_int clc_issue_op(struct cl_cmd *k, cl_command_queue cq,
			   const struct xal_cl_guard_args *g, cl_uint n, const cl_event *w,
			   cl_event *ev)
{
	const struct cl_fns *cl = &cl_real;
	cl_kernel kernel = k->kernel;
	cl_int rc;

	/*
	 * Deferred, or launched again: a private kernel with the arguments of
	 * the enqueue. A launch at once uses the application's kernel as it is
	 * (a guarded one keeps a snapshot for a relaunch).
	 */
	if (k->snap && (k->deferred || k->c.g.launches > 1 || k->c.g.forcing) &&
	    !(kernel = cl_kernel_bind(k->snap, &rc)))
		return rc;
	if ((k->op == OP_NDRANGE || k->op == OP_TASK) &&
	    (rc = cl_guard_set_args(kernel, k->hidden, g)) != CL_SUCCESS)
		return rc;
	switch (k->op) {
	case OP_NDRANGE:
		return cl->clEnqueueNDRangeKernel(cq, kernel, k->dim,
						  k->has_offset ? k->goff : NULL, k->gsize,
						  k->has_local ? k->lsize : NULL, n, w, ev);
	case OP_TASK:
		return cl->clEnqueueTask(cq, kernel, n, w, ev);
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

static cl_int clc_issue(struct xal_cl_cmd *c, cl_command_queue cq,
			const struct xal_cl_guard_args *g, cl_event *ev)
{
	struct cl_cmd *k = to_k(c);
	cl_event small[8], *w = small;
	cl_uint n = 0;
	cl_int rc;

	if (k->reject) {
		/* Refused at the enqueue already; nothing reaches the driver. */
		return CL_SUCCESS;
	}
	/* A relaunch follows its first launch on the queue: waited already. */
	if (k->c.g.launches > 1)
		return clc_issue_op(k, cq, g, 0, NULL, ev);
	/* A forced pass (the backend's settle()) likewise; no ops->issued
	 * follows it, so the private kernel goes back here. */
	if (k->c.g.forcing) {
		rc = clc_issue_op(k, cq, g, 0, NULL, ev);
		cl_kernel_snap_unbind(k->snap);
		return rc;
	}
	if (k->nwait > 8 && !(w = malloc(k->nwait * sizeof(*w))))
		return CL_OUT_OF_HOST_MEMORY;
	for (cl_uint i = 0; i < k->nwait; i++) {
		bool failed = false;
		cl_event real = k->wproxy[i] ? cl_proxy_real(k->wproxy[i], &failed) : NULL;
		cl_int st = CL_COMPLETE;

		/*
		 * A guarded launch of this queue not final yet: the queue's
		 * order runs it (and its relaunch, if it is cut) first, and
		 * its user event completes only once the XQueue resolved it,
		 * which may take a sync on this very command: waiting on it
		 * here could never end. (Should it fail on the device, this
		 * command is not failed with it, as a driver would do.)
		 */
		if (!real && !failed && k->wproxy[i] && cl_proxy_queue(k->wproxy[i]) == k->q)
			continue;
		/* A failed or unlaunched proxy stays the user event it is. */
		w[n] = real ? real : k->wait[i];
		/*
		 * An event that failed before the command reaches the driver
		 * fails the command here: a driver may never complete a
		 * command enqueued behind an event that already failed
		 * (PoCL 3.1 does not), where it fails it if the event fails
		 * later, as it would have natively.
		 */
		if (k->deferred &&
		    cl_real.clGetEventInfo(w[n], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st),
					   &st, NULL) == CL_SUCCESS && st < 0) {
			if (w != small)
				free(w);
			k->wait_failed = st;
			return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
		}
		n++;
	}
	rc = clc_issue_op(k, cq, g, n, n ? w : NULL, ev);
	if (w != small)
		free(w);
	return rc;
}

/*
 * What the driver calls a task's command (drivers differ: PoCL says
 * NDRange), learned from the first task launched, or asked of the driver
 * with a task of the shim's own when a proxy of a task must answer first
 * (cl_cmd_task_type()); CL_COMMAND_TASK until then.
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

/* A task of an empty kernel on a context of @dev's own: its event's type. */
static void clc_probe_task_type(cl_device_id dev)
{
	static const char *src = "__kernel void xsched_task_probe(void) {}";
	cl_int err = CL_SUCCESS;
	cl_context c = cl_real.clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_command_queue q = c ? cl_real.clCreateCommandQueue(c, dev, 0, &err) : NULL;
	cl_program p = q ? cl_real.clCreateProgramWithSource(c, 1, &src, NULL, &err) : NULL;
	cl_kernel k = NULL;
	cl_event ev = NULL;

	if (p && cl_real.clBuildProgram(p, 1, &dev, "", NULL, NULL) == CL_SUCCESS)
		k = cl_real.clCreateKernel(p, "xsched_task_probe", &err);
	if (k && cl_real.clEnqueueTask(q, k, 0, NULL, &ev) == CL_SUCCESS) {
		clc_learn_task_type(ev);
		cl_real.clWaitForEvents(1, &ev);
		cl_real.clReleaseEvent(ev);
	}
	if (k)
		cl_real.clReleaseKernel(k);
	if (p)
		cl_real.clReleaseProgram(p);
	if (q)
		cl_real.clReleaseCommandQueue(q);
	if (c)
		cl_real.clReleaseContext(c);
}

cl_command_type cl_cmd_task_type(cl_device_id dev)
{
	static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

	if (!atomic_load(&clc_task_learned)) {
		pthread_mutex_lock(&probe_lock);
		if (!atomic_load(&clc_task_learned))
			clc_probe_task_type(dev);
		/* Once, even if the driver would not say. */
		atomic_store(&clc_task_learned, true);
		pthread_mutex_unlock(&probe_lock);
	}
	return atomic_load(&clc_task_type);
}

/* Threads inside clc_completed() (cl_cmd_wait_completing()). */
static _Atomic uint32_t clc_completing;

/*
 * A guarded launch complete for good: its proxy follows the last launch.
 * Two threads may find out at once (the driver's callback and a sync);
 * each is counted before it races for the link, so that the loser, whose
 * caller may tell the application the command is done, is never out of
 * here before the winner is counted, and a reader of the proxy waits for
 * the winner's binding (cl_cmd_wait_completing()).
 */
static void clc_completed(struct xal_cl_cmd *c, bool unlocked)
{
	struct cl_cmd *k = to_k(c);
	uintptr_t old;

	atomic_fetch_add(&clc_completing, 1);
	old = atomic_exchange(&k->link, CLC_LAUNCHED);
	if (old && old != CLC_LAUNCHED)
		cl_proxy_bind((struct cl_proxy *)old, c->ev, CL_SUCCESS, unlocked);
	atomic_fetch_sub(&clc_completing, 1);
}

void cl_cmd_wait_completing(void)
{
	while (atomic_load(&clc_completing))
		sched_yield();
}

static void clc_completed_after(struct xal_cl_cmd *c)
{
	(void)c;
	cl_jobs_run_local();
}

static void clc_issued(struct xal_cl_cmd *c, cl_int rc, cl_event ev)
{
	struct cl_cmd *k = to_k(c);
	uintptr_t old;

	if (k->op == OP_TASK && ev)
		clc_learn_task_type(ev);
	/*
	 * A guarded launch may go again: the proxy waits for the last one,
	 * and only clc_completed() takes the link. Not even for a moment
	 * here: the launch may be final already (its driver callback), and a
	 * proxy taken and put back around that would never complete.
	 */
	if (k->c.g.on && rc == CL_SUCCESS && !k->reject) {
		cl_kernel_snap_unbind(k->snap);
		return;
	}
	old = atomic_exchange(&k->link, CLC_LAUNCHED);
	/* Behind a failed event, the status the driver gives such a command. */
	if (old && old != CLC_LAUNCHED)
		cl_proxy_bind((struct cl_proxy *)old, ev,
			      k->reject ? k->reject :
			      k->wait_failed ? cl_event_failed_status(k->q->dev, k->wait_failed) :
			      rc, false);
	/* The driver holds what it needs now; the submitter may still be
	 * copying them into a proxy (cl_cmd_submit()): then clc_fini(). */
	if (!atomic_load_explicit(&k->submitting, memory_order_acquire))
		clc_drop_waits(k);
	cl_kernel_snap_free(k->snap);
	k->snap = NULL;
}

/* --- checks when buffered --------------------------------------------------- */

/* What the host does to a memory object in a transfer (clc_check_mem()). */
enum clc_host { CLC_DEVICE, CLC_HOST_READS, CLC_HOST_WRITES };

/*
 * A memory object as the driver checks it at the enqueue: valid, the
 * range @off, @size (SIZE_MAX: not checked) inside it, and the host's
 * access allowed by its CL_MEM_HOST_* flags (CL_INVALID_OPERATION).
 */
static cl_int clc_check_mem(cl_mem m, size_t off, size_t size, enum clc_host host)
{
	cl_mem_flags flags = 0, deny = 0;
	size_t total = 0;

	if (!m || cl_real.clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(total), &total, NULL))
		return CL_INVALID_MEM_OBJECT;
	if (host == CLC_HOST_READS)
		deny = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS;
	else if (host == CLC_HOST_WRITES)
		deny = CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
	if (deny && cl_real.clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof(flags), &flags, NULL) ==
			    CL_SUCCESS && (flags & deny))
		return CL_INVALID_OPERATION;
	if (size == SIZE_MAX)
		return CL_SUCCESS;
	return off > total || size > total - off ? CL_INVALID_VALUE : CL_SUCCESS;
}

/* Work-group sizes as the driver checks them at the enqueue. */
static cl_int clc_check_groups(struct cl_cmd *k)
{
	struct cl_q *q = k->q;
	size_t total = 1, most = 0, reqd[3] = { 0, 0, 0 };
	bool has_reqd;

	/* reqd_work_group_size(): that local size and no other, and one given. */
	if (cl_real.clGetKernelWorkGroupInfo(k->kernel, q->dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
					     sizeof(reqd), reqd, NULL) != CL_SUCCESS)
		reqd[0] = reqd[1] = reqd[2] = 0;
	has_reqd = reqd[0] || reqd[1] || reqd[2];
	if (!k->has_local)
		return has_reqd ? CL_INVALID_WORK_GROUP_SIZE : CL_SUCCESS;
	for (cl_uint d = 0; d < k->dim; d++) {
		if (!k->lsize[d])
			return CL_INVALID_WORK_GROUP_SIZE;
		if (k->lsize[d] > q->max_items[d])
			return CL_INVALID_WORK_ITEM_SIZE;
		if (has_reqd && k->lsize[d] != reqd[d])
			return CL_INVALID_WORK_GROUP_SIZE;
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
		/* The arguments set so far: the application may set others
		 * for its next enqueue at once. */
		if (!k->snap)
			rc = cl_kernel_snapshot(k->kernel, &k->snap);
		if (rc == CL_SUCCESS)
			atomic_fetch_add_explicit(&cl_stat_deferred, 1, memory_order_relaxed);
		if (rc == CL_SUCCESS && k->op == OP_NDRANGE)
			rc = clc_check_groups(k);
		break;
	case OP_READ:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size, CLC_HOST_READS);
		break;
	case OP_WRITE:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size, CLC_HOST_WRITES);
		break;
	case OP_FILL:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size, CLC_DEVICE);
		if (!rc && (k->off[0] % k->pattern_size || k->size % k->pattern_size))
			rc = CL_INVALID_VALUE;
		break;
	case OP_COPY:
		rc = clc_check_mem(k->mem[0], k->off[0], k->size, CLC_DEVICE);
		if (!rc)
			rc = clc_check_mem(k->mem[1], k->off[1], k->size, CLC_DEVICE);
		if (!rc && k->mem[0] == k->mem[1] && k->off[0] < k->off[1] + k->size &&
		    k->off[1] < k->off[0] + k->size)
			rc = CL_MEM_COPY_OVERLAP;
		break;
	case OP_COPY_RECT:
	case OP_COPY_IMAGE:
	case OP_IMAGE_TO_BUFFER:
	case OP_BUFFER_TO_IMAGE:
		rc = clc_check_mem(k->mem[1], 0, SIZE_MAX, CLC_DEVICE);
		/* fallthrough */
	case OP_READ_RECT:
	case OP_WRITE_RECT:
	case OP_READ_IMAGE:
	case OP_WRITE_IMAGE:
	case OP_FILL_IMAGE:
	case OP_UNMAP:
		if (!rc)
			rc = clc_check_mem(k->mem[0], 0, SIZE_MAX,
					   k->op == OP_READ_RECT || k->op == OP_READ_IMAGE ?
						   CLC_HOST_READS :
					   k->op == OP_WRITE_RECT || k->op == OP_WRITE_IMAGE ?
						   CLC_HOST_WRITES : CLC_DEVICE);
		if (!rc && k->op == OP_UNMAP && !cl_map_find(k->mem[0], k->ptr, false))
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
	cl_kernel_snap_free(k->snap);
}

static const struct xal_cl_cmd_ops clc_ops = {
	.issue = clc_issue,
	.issued = clc_issued,
	.fini = clc_fini,
	.blocked_on = clc_blocked_on,
	.deferred = clc_deferred,
	.completed = clc_completed,
	.completed_after = clc_completed_after,
};

/* --- objects named by buffered commands ------------------------------------------- */

struct clc_uses {
	const void *obj;
	bool found;
};

static bool clc_uses_one(struct xal_cmd *cmd, void *arg)
{
	struct cl_cmd *k = (struct cl_cmd *)cmd;
	struct clc_uses *u = arg;

	u->found = k->mem[0] == u->obj || k->mem[1] == u->obj ||
		   (k->snap && cl_kernel_snap_names(k->snap, u->obj));
	return !u->found;
}

bool cl_cmd_pending_uses(struct cl_q *q, const void *obj)
{
	struct clc_uses u = { .obj = obj };

	xq_pending_each(q->xq, clc_uses_one, &u);
	return u.found;
}

/* --- the common path ---------------------------------------------------------- */

struct cl_cmd *cl_cmd_new(struct cl_q *q, enum cl_op op, cl_command_type type, uint32_t kind,
			  uint64_t est_key)
{
	struct cl_cmd *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cl_cmd_init(&k->c, &clc_ops, kind, est_key);
	k->q = q;
	k->op = op;
	k->type = type;
	k->c.hwq = q->hwq;
	return k;
}

/* Frees a command never submitted. */
static void clc_discard(struct cl_cmd *k)
{
	xal_cl_cmd_put(&k->c);
	xal_cl_cmd_put(&k->c);
}

cl_int cl_cmd_submit(struct cl_cmd *k, cl_uint nwait, const cl_event *wait, cl_event *event,
		     cl_bool blocking)
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
	/* From here the launch may run on another thread at any moment
	 * (xq_submit()'s lock publishes this store to that thread). */
	atomic_store_explicit(&k->submitting, true, memory_order_relaxed);
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
	/* Refused by the driver at a launch before we returned: its answer,
	 * guarded or not (no event, and nothing will run). */
	if (xal_cl_cmd_launched(&k->c) && k->c.first_rc != CL_SUCCESS) {
		rc = k->c.first_rc;
		goto out;
	}
	if (xal_cl_cmd_launched(&k->c) && !k->c.g.on) {
		/* Launched before we returned: the driver's own answer. */
		rc = k->c.first_rc;
		if (rc == CL_SUCCESS && event && k->c.ev &&
		    cl_real.clRetainEvent(k->c.ev) == CL_SUCCESS)
			*event = k->c.ev;
		goto out;
	}
	if (!event)
		goto out;
	p = cl_proxy_new(q, k->op == OP_TASK ? atomic_load(&clc_task_type) : k->type, k->nwait,
			 k->wait, k->wproxy);
	if (p && atomic_compare_exchange_strong(&k->link, &none, (uintptr_t)p)) {
		atomic_fetch_add_explicit(&cl_stat_proxies, 1, memory_order_relaxed);
		*event = cl_proxy_event(p);
		goto out;
	}
	if (p) {
		/* Launched meanwhile: drop the proxy (both its references). */
		cl_proxy_put(p);
		cl_proxy_put(p);
	} else if (k->c.g.on) {
		/* No proxy to be had: the event of the last launch, once complete. */
		xq_wait(q->xq, seq);
	} else {
		/* No proxy to be had: wait for the launch, answer with the real event. */
		xq_flush(q->xq);
	}
	rc = k->c.rc;
	if (rc == CL_SUCCESS && k->c.ev && cl_real.clRetainEvent(k->c.ev) == CL_SUCCESS)
		*event = k->c.ev;
out:
	atomic_store_explicit(&k->submitting, false, memory_order_release);
	xal_cl_cmd_put(&k->c);
	return rc;
}
