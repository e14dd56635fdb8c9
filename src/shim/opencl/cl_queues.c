/*
 * Command queues and their XQueues (see cl_shim.h).
 *
 * Queues live in a small hash map under one reader-writer lock: lookups
 * (every enqueue) take it shared, creation and the last release exclusive.
 * Every queue the application creates through the shim is scheduled;
 * queues the shim never saw (created before it was loaded, or by another
 * path) pass through.
 */
#include "shim/opencl/cl_shim.h"
#include "shim/opencl/guard/cl_guard.h"
#include "agent/agent.h"
#include "base/xlog.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct shim_map clq_table = SHIM_MAP_INIT;
static _Atomic int clq_count;           /* created, ever */
static _Atomic int clq_live;
_Atomic unsigned long cl_stat_cmds, cl_stat_proxies, cl_stat_deferred, cl_stat_guarded;

int cl_q_count(void)
{
	return atomic_load(&clq_count);
}

struct cl_q *cl_q_of(cl_command_queue queue)
{
	return queue ? (struct cl_q *)shim_map_find(&clq_table, queue) : NULL;
}

struct cl_q *cl_q_scheduled(cl_command_queue queue)
{
	if (cl_load() < 0 || cl_passthrough())
		return NULL;
	return cl_q_of(queue);
}

static bool clq_kick(struct shim_map_node *n, void *arg)
{
	struct xq *xq = ((struct cl_q *)n)->xq;

	(void)arg;
	/* Only a queue at its gate: every proxy bound wakes nobody else. */
	if (xq_gated(xq))
		xq_kick(xq);
	return true;
}

void cl_q_kick_all(void)
{
	/* What the caller changed (a proxy bound) before the gates are read. */
	atomic_thread_fence(memory_order_seq_cst);
	shim_map_each(&clq_table, clq_kick, NULL);
}

/*
 * The levels of queues already destroyed, for $XSCHED_OPENCL_STATS (the
 * first CLQ_GONE_MAX; the count of the others).
 */
#define CLQ_GONE_MAX 64
static pthread_mutex_t clq_gone_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int lv;
	char why[sizeof(((struct cl_q *)0)->why)];
} clq_gone[CLQ_GONE_MAX];
static int clq_ngone;

static void clq_note_gone(struct cl_q *q)
{
	pthread_mutex_lock(&clq_gone_lock);
	if (clq_ngone < CLQ_GONE_MAX) {
		clq_gone[clq_ngone].lv = atomic_load(&q->lv) == 2 ? 2 : 1;
		memcpy(clq_gone[clq_ngone].why, q->why, sizeof(q->why));
	}
	clq_ngone++;
	pthread_mutex_unlock(&clq_gone_lock);
}

static void clq_print_level(FILE *f, int lv, const char *why)
{
	fprintf(f, "pid %d queue level %d%s%s%s\n", (int)getpid(), lv, why[0] ? " (" : "", why,
		why[0] ? ")" : "");
}

/* One queue's line of $XSCHED_OPENCL_STATS: its level, and why not 2. */
static bool clq_print_live(struct shim_map_node *n, void *arg)
{
	struct cl_q *q = (struct cl_q *)n;

	clq_print_level(arg, atomic_load(&q->lv) == 2 ? 2 : 1, q->why);
	return true;
}

/* $XSCHED_OPENCL_STATS: what the shim scheduled, for tests and tools. */
static void clq_write_stats(void)
{
	const char *path = getenv("XSCHED_OPENCL_STATS");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "pid %d queues %d commands %lu proxies %lu deferred-kernels %lu "
		"guarded-kernels %lu\n",
		(int)getpid(), atomic_load(&clq_count), atomic_load(&cl_stat_cmds),
		atomic_load(&cl_stat_proxies), atomic_load(&cl_stat_deferred),
		atomic_load(&cl_stat_guarded));
	pthread_mutex_lock(&clq_gone_lock);
	for (int i = 0; i < clq_ngone && i < CLQ_GONE_MAX; i++)
		clq_print_level(f, clq_gone[i].lv, clq_gone[i].why);
	pthread_mutex_unlock(&clq_gone_lock);
	shim_map_each(&clq_table, clq_print_live, f);
	fclose(f);
}

/*
 * A snapshot of the scheduled queues, each held (cl_q.holds) until
 * clq_unhold(): a queue that another thread releases meanwhile is freed
 * only once nobody holds it (clq_retire()). The table lock is not
 * held while calling into them: launches take it under an XQueue lock
 * (cl_q_kick_all()), so the reverse order must never happen.
 */
struct clq_list {
	struct cl_q **q;
	size_t n, cap;
	bool short_of_memory;
};

static bool clq_take(struct shim_map_node *n, void *arg)
{
	struct clq_list *l = arg;
	struct cl_q *q = (struct cl_q *)n;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct cl_q **more = realloc(l->q, cap * sizeof(*more));

		if (!more) {
			l->short_of_memory = true;
			return false;
		}
		l->q = more;
		l->cap = cap;
	}
	atomic_fetch_add_explicit(&q->holds, 1, memory_order_relaxed);
	l->q[l->n++] = q;
	return true;
}

/*
 * Every scheduled queue into @l, held. Out of memory, those it could list
 * (said once): a caller then misses some queues, as it would miss one
 * created after the snapshot.
 */
static void clq_snapshot(struct clq_list *l)
{
	*l = (struct clq_list){ 0 };
	shim_map_each(&clq_table, clq_take, l);
	if (l->short_of_memory)
		XLOG_ONCE(XLOG_WARN, "OpenCL shim: out of memory listing its %zu+ queues: a "
			  "release or exit looked at those it could list", l->n);
}

static void clq_unhold(struct clq_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		atomic_fetch_sub_explicit(&l->q[i]->holds, 1, memory_order_release);
	free(l->q);
}

static void clq_reap_at_exit(void)
{
	struct clq_list l;

	clq_write_stats();
	clq_snapshot(&l);
	for (size_t i = 0; i < l.n; i++)
		xq_reap(l.q[i]->xq);
	clq_unhold(&l);
}

static void clq_reap_register(void)
{
	atexit(clq_reap_at_exit);
}

static bool clq_held_one(struct shim_map_node *n, void *arg)
{
	struct cl_q *q = (struct cl_q *)n;
	struct { cl_context ctx; struct xal_cl_held *out; } *a = arg;

	if (q->ctx == a->ctx)
		xal_cl_hwq_held(q->hwq, a->out);
	return true;
}

/* What the shim checks of a buffered launch before the driver sees it. */
static void clq_device_limits(struct cl_q *q)
{
	cl_bool nonuniform = CL_FALSE;
	size_t items[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };

	if (cl_real.clGetDeviceInfo(q->dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items,
				    NULL) != CL_SUCCESS)
		items[0] = items[1] = items[2] = SIZE_MAX;
	memcpy(q->max_items, items, sizeof(items));
	/* Unknown before OpenCL 2.0: then work-groups must be even. */
	if (cl_real.clGetDeviceInfo(q->dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
				    sizeof(nonuniform), &nonuniform, NULL) != CL_SUCCESS)
		nonuniform = CL_FALSE;
	q->nonuniform = nonuniform;
}

void cl_q_note_kernel(struct cl_q *q, cl_kernel kernel, int32_t hidden, const char *uncut)
{
	char name[64] = "?";
	cl_program prog = NULL;
	int none = 0;

	if (!(q->hwq->caps & XAL_CAP_LV2) || atomic_load_explicit(&q->lv, memory_order_relaxed) == 1)
		return;
	if (hidden >= 0 && !uncut) {
		if (atomic_compare_exchange_strong(&q->lv, &none, 2))
			xq_set_level_why(q->xq, 2, NULL);
		return;
	}
	if (atomic_exchange(&q->lv, 1) == 1)
		return;
	if (cl_real.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL) !=
	    CL_SUCCESS)
		snprintf(name, sizeof(name), "?");
	cl_real.clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof(prog), &prog, NULL);
	if (uncut)
		snprintf(q->why, sizeof(q->why), "kernel %s %s", name, uncut);
	else
		snprintf(q->why, sizeof(q->why), "kernel %s not instrumented: %s", name,
			 cl_twin_why(prog, name));
	xq_set_level_why(q->xq, 1, q->why);
	xlog(XLOG_INFO, "OpenCL queue: level 1 (%s)", q->why);
}

/* Starts scheduling the application's new @queue. Failure: pass-through. */
static void clq_adopt(cl_command_queue queue, cl_context ctx, cl_device_id dev,
		      cl_command_queue_properties props)
{
	static pthread_once_t reap_once = PTHREAD_ONCE_INIT;
	struct xq_config cfg = { .level = 1 };
	struct cl_q *q = calloc(1, sizeof(*q));
	struct devid id;
	char device[32];

	if (!q)
		return;
	q->queue = queue;
	q->ctx = ctx;
	q->dev = dev;
	q->ooo = props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
	clq_device_limits(q);
	cl_device_naming(dev, device, sizeof(device), &id);
	if (xal_cl_hwq_create(&cl_real, queue, q->ooo, device,
			      !cl_guard_enabled() ? 0 :
			      cl_guard_buffers() ? XAL_CL_LV2 | XAL_CL_LV2_BUFFERS : XAL_CL_LV2,
			      &q->hwq) < 0) {
		free(q);
		return;
	}
	/* Lv2 once its kernels are instrumented (cl_q_note_kernel()). */
	if (!cl_guard_enabled())
		snprintf(q->why, sizeof(q->why), "the guardian is off (XSCHED_OPENCL_LV2=0)");
	else if (!(q->hwq->caps & XAL_CAP_LV2))
		snprintf(q->why, sizeof(q->why), "%s", q->ooo ? "an out-of-order queue" :
			 "the device refused the guardian's control word");
	q->hwq->id = id;
	if (xq_create(q->hwq, &cfg, &q->xq) < 0) {
		q->hwq->ops->hwq_destroy(q->hwq);
		free(q);
		return;
	}
	/* Said to the scheduler with the registration (xschedctl list). */
	xq_set_level_why(q->xq, 1, q->why[0] ? q->why :
			 "no instrumented kernel launched yet");
	/* Held until the XQueue is gone: buffered commands outlive the
	 * application's last release. */
	cl_real.clRetainCommandQueue(queue);
	atomic_init(&q->app_refs, 1);
	agent_register(q->xq);
	atomic_fetch_add(&clq_count, 1);
	atomic_fetch_add(&clq_live, 1);
	pthread_once(&reap_once, clq_reap_register);
	/* No record can be left for @queue: each holds its queue retained
	 * until it is out of the map (clq_retire()). */
	shim_map_insert(&clq_table, &q->node, queue);
}

XS_CL_HOOK cl_command_queue clCreateCommandQueue(cl_context ctx, cl_device_id dev,
						 cl_command_queue_properties props,
						 cl_int *err)
{
	cl_command_queue queue;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_CONTEXT;
		return NULL;
	}
	queue = cl_real.clCreateCommandQueue(ctx, dev, props, err);
	if (queue && !cl_passthrough())
		clq_adopt(queue, ctx, dev, props);
	return queue;
}

XS_CL_HOOK cl_command_queue
clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
				   const cl_queue_properties *props, cl_int *err)
{
	cl_command_queue_properties flags = 0;
	cl_command_queue queue;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_CONTEXT;
		return NULL;
	}
	queue = cl_real.clCreateCommandQueueWithProperties(ctx, dev, props, err);
	if (!queue || cl_passthrough())
		return queue;
	for (const cl_queue_properties *p = props; p && p[0]; p += 2)
		if (p[0] == CL_QUEUE_PROPERTIES)
			flags = p[1];
	/* Device-side queues are the device's own business. */
	if (!(flags & CL_QUEUE_ON_DEVICE))
		clq_adopt(queue, ctx, dev, flags);
	return queue;
}

/* Forgets @q (removed from the table): its work is launched first. */
static void clq_destroy(struct cl_q *q)
{
	clq_note_gone(q);
	agent_unregister(q->xq);
	xq_destroy(q->xq, XS_DESTROY_DRAIN);
	q->hwq->ops->hwq_destroy(q->hwq);
	/* The shim's own reference, which kept the queue alive meanwhile. */
	cl_real.clReleaseCommandQueue(q->queue);
	atomic_fetch_sub(&clq_live, 1);
	free(q);
}

/* Queues released by the application whose work is still being launched
 * by a thread of their own (clq_retire()), linked by retire_next: a
 * release of an object one of them names settles it (clq_release_prepare()). */
static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cl_q *retiring;

static void *clq_destroy_main(void *arg)
{
	struct cl_q *q = arg, **pp;

	/* Launched when the scheduler lets it, and then completed for good
	 * (forced passes), the work holds the driver's references to what it
	 * uses: nothing of it is issued again. */
	xq_flush(q->xq);
	cl_q_settle(q);
	pthread_mutex_lock(&retire_lock);
	for (pp = &retiring; *pp && *pp != q; pp = &(*pp)->retire_next)
		;
	if (*pp)
		*pp = q->retire_next;
	pthread_mutex_unlock(&retire_lock);
	/* Out of the table, so no new snapshot holds it: those that do
	 * finish what they do with it (never waiting for the application). */
	while (atomic_load_explicit(&q->holds, memory_order_acquire))
		sched_yield();
	clq_destroy(q);
	return NULL;
}

/*
 * The application released its last reference to @q's queue (events may
 * still hold the driver's): buffered work still launches, on a thread of
 * its own, since a suspended queue may hold it back for long and the
 * release must not wait for that (natively it returns at once).
 */
static void clq_retire(struct cl_q *q)
{
	xs_queue_stats st;
	pthread_attr_t attr;
	pthread_t t;

	shim_map_remove(&clq_table, q->queue);
	xq_stats(q->xq, &st);
	if (!st.pending && !st.in_flight &&
	    !atomic_load_explicit(&q->holds, memory_order_acquire)) {
		/* Nothing left and nobody else looking at it (the usual case,
		 * and the only one at exit, where a thread would race the
		 * driver's teardown): at once. Work in flight may wait for the
		 * application (a user event), and a snapshot of another thread
		 * (a release settling queues) may be using it: neither is
		 * waited for here, the thread below does. */
		clq_destroy(q);
		return;
	}
	pthread_mutex_lock(&retire_lock);
	q->retire_next = retiring;
	retiring = q;
	pthread_mutex_unlock(&retire_lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, clq_destroy_main, q))
		clq_destroy_main(q);
	pthread_attr_destroy(&attr);
}

XS_CL_HOOK cl_int clRetainCommandQueue(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_COMMAND_QUEUE;
	rc = cl_real.clRetainCommandQueue(queue);
	if (q && rc == CL_SUCCESS)
		atomic_fetch_add(&q->app_refs, 1);
	return rc;
}

XS_CL_HOOK cl_int clReleaseCommandQueue(cl_command_queue queue)
{
	struct cl_q *q = cl_q_of(queue);
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_COMMAND_QUEUE;
	rc = cl_real.clReleaseCommandQueue(queue);
	if (q && rc == CL_SUCCESS && atomic_fetch_sub(&q->app_refs, 1) == 1)
		clq_retire(q);
	return rc;
}

XS_CL_HOOK cl_int clGetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info param,
					size_t size, void *value, size_t *ret)
{
	struct cl_q *q = cl_q_of(queue);
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_COMMAND_QUEUE;
	rc = cl_real.clGetCommandQueueInfo(queue, param, size, value, ret);
	/* The shim's own reference is not the application's business. */
	if (q && rc == CL_SUCCESS && param == CL_QUEUE_REFERENCE_COUNT && value &&
	    size >= sizeof(cl_uint) && *(cl_uint *)value > 0)
		(*(cl_uint *)value)--;
	return rc;
}

void cl_q_held_in(cl_context ctx, struct xal_cl_held *out)
{
	struct { cl_context ctx; struct xal_cl_held *out; } a = { ctx, out };

	shim_map_each(&clq_table, clq_held_one, &a);
	pthread_mutex_lock(&retire_lock);
	for (struct cl_q *q = retiring; q; q = q->retire_next)
		if (q->ctx == ctx)
			xal_cl_hwq_held(q->hwq, out);
	pthread_mutex_unlock(&retire_lock);
}

/*
 * @q's part of clq_release_prepare(): its buffered work goes now if a
 * command of it names @obj; else its launches that could be cut are
 * completed by their forced passes (which never wait), and a cut one that
 * waits to be launched again, which may name it, goes now too.
 */
static void clq_release_settle(struct cl_q *q, const void *obj)
{
	if (cl_cmd_pending_uses(q, obj) || xal_settle(q->hwq) == -EAGAIN)
		cl_q_settle(q);
}

/*
 * Before the application releases @obj (a memory object or a sampler):
 * a buffered command that names it (as its own argument or in its
 * kernel's) goes to the driver first, with everything before it on its
 * queue, and every guarded launch that could still be cut or relaunched
 * is completed by its forced pass (cl_q_settle()), so that the driver
 * holds its own references for all of it. Nothing here waits for a
 * command to complete or for a queue to be resumed: the work may wait
 * for a user event the application sets after this release. Queues that
 * name nothing of it are left alone.
 */
static void clq_release_prepare(const void *obj)
{
	struct clq_list l;

	if (!atomic_load(&clq_live))
		return;
	/* Another thread may release any of these queues meanwhile: the
	 * snapshot holds them. Released ones are looked at under the lock
	 * that their threads take to go. */
	clq_snapshot(&l);
	for (size_t i = 0; i < l.n; i++)
		clq_release_settle(l.q[i], obj);
	clq_unhold(&l);
	pthread_mutex_lock(&retire_lock);
	for (struct cl_q *q = retiring; q; q = q->retire_next)
		clq_release_settle(q, obj);
	pthread_mutex_unlock(&retire_lock);
}

/*
 * Orders a call that goes to the driver at once on @q behind the queue's
 * earlier work: everything buffered launched now (xq_flush_now(): also
 * while the queue is suspended or its window is full), and every guarded
 * launch that could still be cut completed by its forced pass (the
 * backend's settle()), so that the call cannot land between a cut
 * launch and its relaunch. Nothing here waits for a command to complete
 * or for the scheduler: the queue's work may wait for a user event that
 * the application sets only after this call. A command gated behind an
 * unresolved guarded launch goes once its forced pass is issued; one
 * behind another queue's command not launched yet goes behind that
 * command's proxy (@q->forcing); a launch found cut is relaunched first.
 * Returns CL_SUCCESS, or CL_OUT_OF_RESOURCES when a forced pass could not
 * be issued.
 */
cl_int cl_q_settle(struct cl_q *q)
{
	int rc, flushed;

	atomic_fetch_add(&q->forcing, 1);
	for (;;) {
		flushed = xq_flush_now(q->xq);
		rc = xal_settle(q->hwq);
		if (rc == -EIO || (flushed == 0 && rc == 0))
			break;
		/* A cut launch on its way back to the buffer, or a gate
		 * opened by the forced passes just issued: again. */
		if (rc == -EAGAIN || flushed == -EAGAIN)
			sched_yield();
	}
	atomic_fetch_sub(&q->forcing, 1);
	return rc < 0 ? CL_OUT_OF_RESOURCES : CL_SUCCESS;
}

XS_CL_HOOK cl_int clReleaseMemObject(cl_mem mem)
{
	if (cl_load() < 0)
		return CL_INVALID_MEM_OBJECT;
	/* Even when the application holds more references: commands in
	 * flight hold the driver's, which go when they complete. */
	if (!cl_passthrough())
		clq_release_prepare(mem);
	return cl_real.clReleaseMemObject(mem);
}

XS_CL_HOOK cl_int clReleaseSampler(cl_sampler sampler)
{
	if (cl_load() < 0)
		return CL_INVALID_SAMPLER;
	if (!cl_passthrough())
		clq_release_prepare(sampler);
	return cl_real.clReleaseSampler(sampler);
}
