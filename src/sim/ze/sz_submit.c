/*
 * Submission of Level Zero commands to the simulated device: one appended
 * command (struct sz_cmd) becomes its waits, its data part and its signal,
 * as device commands on one queue; and the completion marker that ends an
 * execution.
 *
 * Design: every event a command waits for is a gate (src/sim/common/
 * sf_watch.c): a zero-time command tells the watcher that the queue
 * reached the wait, and a WAIT on the gate holds the queue, without
 * holding the engine, until the watcher saw both that and the event
 * signalled; so a queue honours the event's state when it gets there, not
 * when the command was submitted (an event signalled earlier and reset
 * before is waited for again). The data part is one KERNEL command whose
 * function (sz_cmd_run) does the work on the executor thread, stamps the
 * signalled event's start time and turns a failure into a lost context;
 * its device time is the built-in kernel's, or the copy model's. The
 * signal is a zero-time command after it, so the event is signalled when
 * the work is done, with the end time stamped. All launches of one
 * submission happen under the queue's lock. The driver never stalls or
 * flushes its queues and waits for them before returning them to the
 * pool, so every command launched here runs its function, which frees
 * what it owns. Limit: launching blocks while a queue has SIM_RING
 * commands in flight, so more than a thousand commands queued behind an
 * event the host has not signalled yet block the submitting thread.
 */
#include "sim/ze/sz_internal.h"
#include "base/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A wait for one event, owned by the watcher once armed. */
struct sz_watch {
	struct sf_watch base;         /* first: the watcher frees the whole */
	struct sz_event *ev;
	_Atomic bool arrived;         /* the queue reached the wait */
};

/* Frees what @c owns (its wait list). */
void sz_cmd_fini(struct sz_cmd *c)
{
	free(c->wait);
	c->wait = NULL;
	c->nwait = 0;
}

/* Watcher thread: the queue is there and the event signalled. */
static bool sz_watch_ready(struct sf_watch *base)
{
	struct sz_watch *w = (struct sz_watch *)base;

	return atomic_load(&w->arrived) && sz_event_signalled(w->ev);
}

/* Executor thread: the queue reached the wait. */
static int sz_arrive_run(void *arg)
{
	struct sz_watch *w = arg;

	atomic_store(&w->arrived, true);
	sf_watch_kick();
	return 0;
}

/*
 * Makes @q wait for @ev. Once the arrival command is launched, the watch
 * is armed whatever happens next: it then completes (and frees itself)
 * harmlessly even if the WAIT itself could not be launched.
 */
static int sz_wait_launch(struct sz_queue *q, struct sz_event *ev)
{
	struct sim_cmd arrive = { .kind = SIM_CMD_KERNEL, .fn = sz_arrive_run };
	struct sim_cmd wait;
	struct sz_watch *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	w->base.ready = sz_watch_ready;
	w->ev = ev;
	rc = sf_watch_prepare(sz_drv.dev, &w->base, &wait);
	if (rc < 0) {
		free(w);
		return rc;
	}
	arrive.arg = w;
	rc = sf_hwq_launch(q->q, &arrive, NULL);
	if (rc < 0) {
		sf_watch_cancel(&w->base);
		free(w);
		return rc;
	}
	rc = sf_hwq_launch(q->q, &wait, NULL);
	sf_watch_arm(&w->base);
	return rc;
}

/* Executor thread: signals the event of a command with a data part. */
static int sz_signal_run(void *arg)
{
	sz_event_signal(arg, false);
	return 0;
}

/* Executor thread: signals the event of a command without a data part. */
static int sz_signal_instant_run(void *arg)
{
	sz_event_signal(arg, true);
	return 0;
}

/* The data part of @c, on the executor thread: 0 or a fault. */
static int sz_cmd_data(const struct sz_cmd *c)
{
	int rc;

	switch (c->kind) {
	case SZ_C_KERNEL:
		sf_mem_access_begin();
		rc = c->u.kernel.def->run(c->u.kernel.params);
		sf_mem_access_end();
		return rc;
	case SZ_C_COPY:
		return sf_region_run(&c->u.copy);
	case SZ_C_FILL:
		return sf_pattern_run(c->u.fill.dst, c->u.fill.reg, c->u.fill.pattern,
				      c->u.fill.psize, c->u.fill.size);
	case SZ_C_TIMESTAMP:
		sf_mem_access_begin();
		rc = c->u.ts.reg && !sf_mem_accessible(c->u.ts.dst, sizeof(uint64_t)) ? -EFAULT : 0;
		if (rc == 0)
			__atomic_store_n(c->u.ts.dst, clock_now_ns(), __ATOMIC_RELAXED);
		sf_mem_access_end();
		return rc;
	case SZ_C_RESET:
		sz_event_clear(c->u.reset);
		return 0;
	default:
		return 0;
	}
}

/* Executor thread: runs @arg's data part unless its context is lost. */
static int sz_cmd_run(void *arg)
{
	struct sz_cmd *c = arg;

	/* The device's start, not this thread's: its duration counts from there. */
	if (c->signal)
		atomic_store_explicit(&c->signal->ts_start, sim_cmd_started_ns(),
				      memory_order_relaxed);
	if (!atomic_load(&c->ctx->fault) && sz_cmd_data(c) < 0)
		sz_ctx_fault(c->ctx);
	if (c->transient)
		free(c);
	return 0;
}

/* Modelled device time of @c's data part. */
static uint64_t sz_cmd_ns(const struct sz_cmd *c)
{
	switch (c->kind) {
	case SZ_C_KERNEL:
		return c->u.kernel.def->duration(c->u.kernel.params);
	case SZ_C_COPY:
		return sf_copy_ns((uint64_t)c->u.copy.width * c->u.copy.height * c->u.copy.depth);
	case SZ_C_FILL:
		return sf_copy_ns(c->u.fill.size);
	default:
		return 0;
	}
}

static bool sz_cmd_has_data(const struct sz_cmd *c)
{
	return c->kind == SZ_C_KERNEL || c->kind == SZ_C_COPY || c->kind == SZ_C_FILL ||
	       c->kind == SZ_C_TIMESTAMP || c->kind == SZ_C_RESET;
}

/*
 * Launches @c on @q (q->lock held). With @copy, the data part gets a heap
 * copy of @c (without its wait list), so @c may go when this returns;
 * without, @c must stay until the device is done with it. Returns 0,
 * -ENOMEM or a sim error.
 */
int sz_cmd_launch(struct sz_queue *q, const struct sz_cmd *c, bool copy)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_KERNEL };
	uint32_t i;
	int rc;

	for (i = 0; i < c->nwait; i++) {
		rc = sz_wait_launch(q, c->wait[i]);
		if (rc < 0)
			return rc;
	}
	if (sz_cmd_has_data(c)) {
		struct sz_cmd *run = (struct sz_cmd *)c;

		if (copy) {
			run = malloc(sizeof(*run));
			if (!run)
				return -ENOMEM;
			*run = *c;
			run->wait = NULL;
			run->nwait = 0;
			run->transient = true;
		}
		cmd.fn = sz_cmd_run;
		cmd.arg = run;
		cmd.duration_ns = sz_cmd_ns(c);
		rc = sf_hwq_launch(q->q, &cmd, NULL);
		if (rc < 0) {
			if (copy)
				free(run);
			return rc;
		}
	}
	if (c->signal) {
		cmd.fn = sz_cmd_has_data(c) ? sz_signal_run : sz_signal_instant_run;
		cmd.arg = c->signal;
		cmd.duration_ns = 0;
		return sf_hwq_launch(q->q, &cmd, NULL);
	}
	return 0;
}

/* The end of one execution, travelling to the executor thread. */
struct sz_mark {
	struct sz_queue *q;
	struct sz_fence *fence;       /* optional */
	uint64_t exec;
};

/*
 * Executor thread: signals the execution's fence, then publishes its end,
 * so a synchronised queue has its fences signalled. The queue outlives
 * this function (destroying it waits for this command); the fence may be
 * freed as soon as its word is stored (sz_wait.c).
 */
static int sz_mark_run(void *arg)
{
	struct sz_mark *m = arg;
	struct sz_queue *q = m->q;

	if (m->fence) {
		atomic_store(&m->fence->wq.word, 1);
		sz_wake(&m->fence->wq);
	}
	atomic_store(&q->execs_done, m->exec);
	atomic_fetch_add(&q->wq.word, 1);
	sz_wake(&q->wq);
	free(m);
	return 0;
}

/*
 * Ends an execution on @q (q->lock held): a zero-time command that marks
 * it finished for zeCommandQueueSynchronize and signals @f (optional).
 */
int sz_queue_mark(struct sz_queue *q, struct sz_fence *f)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_KERNEL, .fn = sz_mark_run };
	struct sz_mark *m = malloc(sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	m->q = q;
	m->fence = f;
	m->exec = q->execs + 1;
	cmd.arg = m;
	rc = sf_hwq_launch(q->q, &cmd, NULL);
	if (rc < 0) {
		free(m);
		return rc;
	}
	q->execs++;
	return 0;
}
