/*
 * XQueue over the sim backend: submission order, the progressive-launching
 * window (threshold and time budget), suspend/resume at Lv1/Lv2/Lv3 and Lv2
 * flush, destroy, error reporting, observer events, level clamping and the
 * statistics.
 *
 * Determinism on a loaded machine: a command whose host function waits on a
 * gate holds the device, so "this command is running" and "these commands
 * are in flight" are established states, not timing guesses. A "spy"
 * backend wraps the sim hwq to observe what the XQueue does to the device
 * (occupancy at each launch, threads inside sync) and to inject launch
 * failures. Sleeps appear only where a test checks that nothing happens.
 */
#include "test_util.h"

#include "base/clock.h"
#include "xal/xal_sim.h"
#include "xqueue/xqueue.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define US NSEC_PER_USEC
#define MS NSEC_PER_MSEC

/* Polls @cond for up to 20 s; a hang fails instead of blocking. */
#define WAIT_UNTIL(cond)                                                     \
	do {                                                                 \
		uint64_t end_ = clock_now_ns() + 20 * NSEC_PER_SEC;          \
		while (!(cond)) {                                            \
			if (clock_now_ns() > end_)                           \
				fail_msg("timed out waiting for %s", #cond); \
			usleep(200);                                         \
		}                                                            \
	} while (0)

/* --- the spy backend ------------------------------------------------------ */

struct spy {
	struct xal_hwq base;          /* first: what the XQueue drives */
	struct xal_hwq *inner;        /* the sim hwq every op forwards to */
	_Atomic uint32_t launches;    /* launch() calls */
	_Atomic uint32_t occ_max;     /* most device-queue entries at a launch */
	_Atomic uint32_t fail_launch; /* 1-based launch() call that fails; 0: none */
	int fail_rc;
	_Atomic uint32_t sp_events;   /* event commands launched as sync points */
	_Atomic uint32_t in_sync;     /* threads inside sync()/sync_all() */
	_Atomic uint32_t sync_hold;   /* while set, sync()/sync_all() wait */
};

static struct spy *to_spy(struct xal_hwq *h)
{
	return (struct spy *)h;
}

static int spy_launch(struct xal_hwq *h, struct xal_cmd *cmd, unsigned flags)
{
	struct spy *s = to_spy(h);
	struct sim_hwq_info info;
	uint32_t n = atomic_fetch_add(&s->launches, 1) + 1, occ, max;

	if (n == atomic_load(&s->fail_launch))
		return s->fail_rc;
	if (cmd->kind == XAL_CMD_EVENT && (flags & XAL_LAUNCH_SYNC_POINT))
		atomic_fetch_add(&s->sp_events, 1);
	/* Commands on the device, this one included. */
	sim_hwq_info_get(xal_sim_hwq_sim(s->inner), &info);
	occ = (uint32_t)(info.submitted - info.done) + 1;
	max = atomic_load(&s->occ_max);
	while (occ > max && !atomic_compare_exchange_weak(&s->occ_max, &max, occ))
		;
	return s->inner->ops->launch(s->inner, cmd, flags);
}

static void spy_enter_sync(struct spy *s)
{
	atomic_fetch_add(&s->in_sync, 1);
	while (atomic_load(&s->sync_hold))
		usleep(100);
}

static int spy_sync(struct xal_hwq *h, struct xal_cmd *cmd, unsigned flags)
{
	struct spy *s = to_spy(h);
	int rc;

	spy_enter_sync(s);
	rc = s->inner->ops->sync(s->inner, cmd, flags);
	atomic_fetch_sub(&s->in_sync, 1);
	return rc;
}

static int spy_sync_all(struct xal_hwq *h, unsigned flags)
{
	struct spy *s = to_spy(h);
	int rc;

	spy_enter_sync(s);
	rc = s->inner->ops->sync_all(s->inner, flags);
	atomic_fetch_sub(&s->in_sync, 1);
	return rc;
}

static int spy_query(struct xal_hwq *h, struct xal_cmd *cmd)
{
	return to_spy(h)->inner->ops->query(to_spy(h)->inner, cmd);
}

static int spy_deactivate(struct xal_hwq *h)
{
	return to_spy(h)->inner->ops->deactivate(to_spy(h)->inner);
}

static int spy_reactivate(struct xal_hwq *h)
{
	return to_spy(h)->inner->ops->reactivate(to_spy(h)->inner);
}

static int spy_interrupt(struct xal_hwq *h)
{
	return to_spy(h)->inner->ops->interrupt(to_spy(h)->inner);
}

static int spy_restore(struct xal_hwq *h)
{
	return to_spy(h)->inner->ops->restore(to_spy(h)->inner);
}

static int spy_cmd_time(struct xal_hwq *h, struct xal_cmd *cmd, uint64_t *ns)
{
	return to_spy(h)->inner->ops->cmd_time(to_spy(h)->inner, cmd, ns);
}

static void spy_wait_quiet(struct xal_hwq *h)
{
	to_spy(h)->inner->ops->wait_quiet(to_spy(h)->inner);
}

/* The spy is embedded in the test fixture; the fixture destroys the inner hwq. */
static void spy_hwq_destroy(struct xal_hwq *h)
{
	(void)h;
}

static const struct xal_ops spy_ops = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "spy",
	.launch = spy_launch,
	.sync = spy_sync,
	.sync_all = spy_sync_all,
	.query = spy_query,
	.deactivate = spy_deactivate,
	.reactivate = spy_reactivate,
	.interrupt = spy_interrupt,
	.restore = spy_restore,
	.cmd_time = spy_cmd_time,
	.wait_quiet = spy_wait_quiet,
	.hwq_destroy = spy_hwq_destroy,
};

/* --- fixture: a device with chosen options, its hwq, the spy, a queue ---- */

struct fx {
	char name[64];
	struct sim_dev *dev;
	struct xal_hwq *hwq;
	struct spy spy;
	struct xq *q;
};

/*
 * On the heap: after a failed assertion cmocka leaves the test function
 * while the queue's worker may still use the spy; it then leaks instead.
 */
static struct fx *fx_new(const char *tag, uint32_t level_max, bool flush)
{
	struct sim_dev_opts o = {
		.arbitration = SIM_ARB_RR, .level_max = level_max, .lv2_flush = flush,
	};
	struct fx *f = calloc(1, sizeof(*f));

	alarm(60);
	assert_non_null(f);
	snprintf(f->name, sizeof(f->name), "%s", test_dev(tag));
	assert_int_equal(sim_dev_open(f->name, &o, &f->dev), 0);
	assert_int_equal(xal_sim_hwq_create(f->name, &f->hwq), 0);
	f->spy.base.ops = &spy_ops;
	f->spy.base.caps = f->hwq->caps;
	f->spy.inner = f->hwq;
	return f;
}

/* Creates f->q over the sim hwq or the spy. */
static void fx_queue(struct fx *f, bool spy, int32_t level, int32_t threshold,
		     int32_t batch, int64_t budget_ns)
{
	struct xq_config c = {
		.level = level, .threshold = threshold, .batch = batch,
		.budget_ns = budget_ns,
	};

	assert_int_equal(xq_create(spy ? &f->spy.base : f->hwq, &c, &f->q), 0);
}

static void fx_fini(struct fx *f)
{
	if (f->q)
		assert_int_equal(xq_destroy(f->q, XS_DESTROY_DRAIN), 0);
	f->q = NULL;
	f->hwq->ops->hwq_destroy(f->hwq);
	sim_dev_close(f->dev);
	sim_dev_unlink(f->name);
	free(f);
	alarm(0);
}

static struct sim_hwq_info fx_dev(struct fx *f)
{
	struct sim_hwq_info i;

	sim_hwq_info_get(xal_sim_hwq_sim(f->hwq), &i);
	return i;
}

static xs_queue_stats fx_stats(struct fx *f)
{
	xs_queue_stats st;

	xq_stats(f->q, &st);
	return st;
}

/* --- recording commands ------------------------------------------------- */

struct gate {
	_Atomic uint32_t entered;  /* the command's fn started on the device */
	_Atomic uint32_t open;     /* lets it continue */
};

struct rec;

struct rec_arg {
	struct rec *rec;
	uint32_t idx;
	int rc;                    /* what the fn returns */
	struct gate *gate;         /* if set, the fn holds the device until open */
	uint64_t seq;              /* XQueue sequence number, if a test records it */
};

/* What ran on the device, in which order (fns run on the executor thread). */
struct rec {
	uint32_t n;
	_Atomic uint32_t ran;
	uint32_t *order;
	_Atomic uint32_t *runs;
	struct rec_arg *args;
	struct rec_arg **by_run;   /* the arg of the k-th fn call */
};

static struct rec *rec_new(uint32_t n)
{
	struct rec *r = calloc(1, sizeof(*r));
	uint32_t i;

	assert_non_null(r);
	r->n = n;
	r->order = calloc(n, sizeof(*r->order));
	r->runs = calloc(n, sizeof(*r->runs));
	r->args = calloc(n, sizeof(*r->args));
	r->by_run = calloc(n, sizeof(*r->by_run));
	assert_true(r->order && r->runs && r->args && r->by_run);
	for (i = 0; i < n; i++) {
		r->args[i].rec = r;
		r->args[i].idx = i;
	}
	return r;
}

static void rec_free(struct rec *r)
{
	free(r->order);
	free(r->runs);
	free(r->args);
	free(r->by_run);
	free(r);
}

static int rec_fn(void *p)
{
	struct rec_arg *a = p;
	struct rec *r = a->rec;
	uint32_t k;

	if (a->gate) {
		atomic_store(&a->gate->entered, 1);
		while (!atomic_load(&a->gate->open))
			usleep(50);
	}
	k = atomic_fetch_add(&r->ran, 1);
	if (k < r->n) {
		r->order[k] = a->idx;
		r->by_run[k] = a;
	}
	atomic_fetch_add(&r->runs[a->idx], 1);
	return a->rc;
}

static struct xal_cmd *kcmd(uint64_t ns, int (*fn)(void *), void *arg)
{
	struct sim_cmd d = {
		.kind = SIM_CMD_KERNEL, .duration_ns = ns, .fn = fn, .arg = arg,
	};
	struct xal_cmd *c = NULL;

	assert_int_equal(xal_sim_cmd_create(&d, NULL, &c), 0);
	return c;
}

static struct xal_cmd *rec_cmd(struct rec *r, uint32_t i, uint64_t ns)
{
	return kcmd(ns, rec_fn, &r->args[i]);
}

static uint64_t submit(struct xq *q, struct xal_cmd *c)
{
	uint64_t s = 0;

	assert_int_equal(xq_submit(q, c, &s), 0);
	assert_true(s > 0);
	return s;
}

/* Submits commands @from..@to-1 of @r; returns the last sequence number. */
static uint64_t rec_submit(struct xq *q, struct rec *r, uint32_t from, uint32_t to,
			   uint64_t ns)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = from; i < to; i++) {
		s = submit(q, rec_cmd(r, i, ns));
		r->args[i].seq = s;
	}
	return s;
}

/* Commands 0..@n-1 each ran exactly once, in index order, and no other. */
static void rec_check_once_in_order(struct rec *r, uint32_t n)
{
	uint32_t i;

	assert_int_equal(atomic_load(&r->ran), n);
	for (i = 0; i < n; i++) {
		if (r->order[i] != i)
			fail_msg("run %u executed command %u", i, r->order[i]);
		assert_int_equal(atomic_load(&r->runs[i]), 1);
	}
	for (; i < r->n; i++)
		assert_int_equal(atomic_load(&r->runs[i]), 0);
}

/* A thread blocked in xq_wait() (seq > 0) or xq_wait_all() (seq 0). */
struct waiter {
	pthread_t t;
	struct xq *q;
	uint64_t seq;
	int rc;
	_Atomic bool done;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;

	w->rc = w->seq ? xq_wait(w->q, w->seq) : xq_wait_all(w->q);
	atomic_store(&w->done, true);
	return NULL;
}

static void waiter_start(struct waiter *w, struct xq *q, uint64_t seq)
{
	memset(w, 0, sizeof(*w));
	w->q = q;
	w->seq = seq;
	assert_int_equal(pthread_create(&w->t, NULL, waiter_main, w), 0);
}

static int waiter_join(struct waiter *w)
{
	assert_int_equal(pthread_join(w->t, NULL), 0);
	return w->rc;
}

/* --- order ---------------------------------------------------------------- */

static void xq_order_single_submitter(void **state)
{
	struct fx *f;
	struct rec *r = rec_new(300);

	(void)state;
	f = fx_new("order1", 3, false);
	fx_queue(f, false, 0, 2, 1, 0);
	rec_submit(f->q, r, 0, 300, 10 * US);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 300);
	assert_int_equal(fx_stats(f).completed, 300);
	fx_fini(f);
	rec_free(r);
}

#define ORDER_THREADS 4
#define ORDER_PER_THREAD 100

struct submitter {
	pthread_t t;
	struct xq *q;
	struct rec *r;
	uint32_t from;
};

static void *submitter_main(void *p)
{
	struct submitter *s = p;
	uint32_t i;

	for (i = s->from; i < s->from + ORDER_PER_THREAD; i++) {
		struct rec_arg *a = &s->r->args[i];
		struct sim_cmd d = {
			.kind = SIM_CMD_KERNEL, .duration_ns = 20 * US, .fn = rec_fn,
			.arg = a,
		};
		struct xal_cmd *c;
		uint64_t seq = 0;

		if (xal_sim_cmd_create(&d, NULL, &c) < 0 || xq_submit(s->q, c, &seq) < 0)
			return (void *)1;
		a->seq = seq;
	}
	return NULL;
}

/* Several threads submit to one queue: execution order is seq order. */
static void xq_order_concurrent_submitters(void **state)
{
	const uint32_t n = ORDER_THREADS * ORDER_PER_THREAD;
	struct submitter s[ORDER_THREADS];
	struct rec *r = rec_new(n);
	struct fx *f;
	uint32_t i;

	(void)state;
	f = fx_new("order4", 3, false);
	fx_queue(f, false, 0, 4, 2, 0);
	for (i = 0; i < ORDER_THREADS; i++) {
		s[i] = (struct submitter){ .q = f->q, .r = r, .from = i * ORDER_PER_THREAD };
		assert_int_equal(pthread_create(&s[i].t, NULL, submitter_main, &s[i]), 0);
	}
	for (i = 0; i < ORDER_THREADS; i++) {
		void *ret;

		assert_int_equal(pthread_join(s[i].t, &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&r->ran), n);
	for (i = 0; i < n; i++) {
		if (r->by_run[i]->seq != i + 1)
			fail_msg("run %u executed seq %llu", i,
				 (unsigned long long)r->by_run[i]->seq);
		assert_int_equal(atomic_load(&r->runs[i]), 1);
	}
	fx_fini(f);
	rec_free(r);
}

/* --- the window ----------------------------------------------------------- */

static void xq_window_threshold(void **state)
{
	struct rec *r = rec_new(200);
	struct fx *f;

	(void)state;
	f = fx_new("thresh", 3, false);
	fx_queue(f, true, 0, 4, 2, XS_BUDGET_NONE);
	rec_submit(f->q, r, 0, 200, 50 * US);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 200);
	assert_int_equal(atomic_load(&f->spy.launches), 200);
	assert_true(atomic_load(&f->spy.occ_max) <= 4);
	assert_true(atomic_load(&f->spy.occ_max) > 1);
	fx_fini(f);
	rec_free(r);
}

/* 300 us commands, 1 ms budget: at most 1 + floor(1 ms / 300 us) on the device. */
static void xq_window_budget_short_cmds(void **state)
{
	const uint64_t t = 300 * US, budget = 1 * MS;
	struct rec *r = rec_new(60);
	struct fx *f;

	(void)state;
	f = fx_new("budget300", 3, false);
	fx_queue(f, true, 0, 16, 8, (int64_t)budget);
	rec_submit(f->q, r, 0, 60, t);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 60);
	assert_true(atomic_load(&f->spy.occ_max) <= 1 + budget / t);
	assert_true(atomic_load(&f->spy.occ_max) > 1);
	fx_fini(f);
	rec_free(r);
}

/*
 * 2 ms commands, 1 ms budget: never more than one on the device, from the
 * first command on (an unknown command is assumed to fill the budget).
 */
static void xq_window_budget_long_cmds(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(10);
	struct fx *f;

	(void)state;
	f = fx_new("budget2ms", 3, false);
	fx_queue(f, true, 0, 16, 8, 1 * MS);
	/* The first command stays on the device while the others are submitted. */
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 10, 2 * MS);
	WAIT_UNTIL(atomic_load(&g.entered));
	atomic_store(&g.open, 1);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 10);
	assert_int_equal(atomic_load(&f->spy.occ_max), 1);
	fx_fini(f);
	rec_free(r);
}

/*
 * The default budget is the level's: at Lv3 the device stops the queue, so
 * 2 ms commands fill the window up to the threshold; the same queue at Lv1
 * keeps one in flight. A window set and set back with the budget as read
 * by xq_window_get() (what a scheduler's cap does) keeps following it.
 */
static void xq_window_budget_follows_level(void **state)
{
	struct gate g1 = { 0 }, g2 = { 0 };
	struct rec *r = rec_new(12);
	int32_t t, b;
	int64_t budget;
	struct fx *f;

	(void)state;
	f = fx_new("budgetlv", 3, false);
	fx_queue(f, true, 0, 4, 2, 0);
	r->args[0].gate = &g1;
	rec_submit(f->q, r, 0, 6, 2 * MS);
	WAIT_UNTIL(atomic_load(&g1.entered));
	WAIT_UNTIL(fx_stats(f).in_flight == 4);
	atomic_store(&g1.open, 1);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&f->spy.occ_max), 4);

	xq_window_get(f->q, &t, &b, &budget);
	assert_int_equal(budget, 0);
	assert_int_equal(xq_set_window(f->q, 1, 1, 0), 0);
	assert_int_equal(xq_set_window(f->q, t, b, budget), 0);
	assert_int_equal(xq_set_level(f->q, 1), 0);
	atomic_store(&f->spy.occ_max, 0);
	r->args[6].gate = &g2;
	rec_submit(f->q, r, 6, 12, 2 * MS);
	WAIT_UNTIL(atomic_load(&g2.entered));
	usleep(2000);
	assert_int_equal(fx_stats(f).in_flight, 1);
	atomic_store(&g2.open, 1);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&f->spy.occ_max), 1);
	rec_check_once_in_order(r, 12);
	fx_fini(f);
	rec_free(r);
}

/* As above once the duration is learned, even for a burst at resume. */
static void xq_window_budget_long_cmds_learned(void **state)
{
	struct rec *r = rec_new(11);
	struct fx *f;

	(void)state;
	f = fx_new("budget2msl", 3, false);
	fx_queue(f, true, 0, 16, 8, 1 * MS);
	assert_int_equal(xq_wait(f->q, rec_submit(f->q, r, 0, 1, 2 * MS)), 0);
	atomic_store(&f->spy.occ_max, 0);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	rec_submit(f->q, r, 1, 11, 2 * MS);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 11);
	assert_int_equal(atomic_load(&f->spy.occ_max), 1);
	fx_fini(f);
	rec_free(r);
}

/* --- suspend and resume ---------------------------------------------------- */

static void xq_suspend_stops_launches(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(50);
	struct sim_hwq_info a, b;
	xs_queue_stats st;
	struct fx *f;

	(void)state;
	f = fx_new("susp", 3, false);
	fx_queue(f, false, 1, 16, 8, XS_BUDGET_NONE);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 50, 100 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	a = fx_dev(f);
	assert_int_equal(a.submitted, 16);
	atomic_store(&g.open, 1);
	/* What was launched runs out; nothing more reaches the device. */
	WAIT_UNTIL(fx_dev(f).done == a.submitted);
	usleep(5000);
	b = fx_dev(f);
	assert_int_equal(b.submitted, a.submitted);
	assert_int_equal(atomic_load(&r->ran), a.submitted);
	st = fx_stats(f);
	assert_int_equal(st.pending, 50 - a.submitted);
	assert_int_equal(st.suspended, 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 50);
	fx_fini(f);
	rec_free(r);
}

/* Submitting to a suspended queue buffers without blocking, even past the ring. */
static void xq_submit_while_suspended_buffers(void **state)
{
	const uint32_t n = 1500;
	struct rec *r = rec_new(n);
	xs_queue_stats st;
	struct fx *f;

	(void)state;
	f = fx_new("suspbuf", 3, false);
	fx_queue(f, false, 0, 0, 0, 0);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	assert_true(xq_suspended(f->q));
	rec_submit(f->q, r, 0, n, 1 * US);
	st = fx_stats(f);
	assert_int_equal(st.submitted, n);
	assert_int_equal(st.pending, n);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.direct_launches, 0);
	assert_int_equal(fx_dev(f).submitted, 0);
	assert_int_equal(atomic_load(&r->ran), 0);
	assert_int_equal(xq_resume(f->q), 0);
	assert_false(xq_suspended(f->q));
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, n);
	st = fx_stats(f);
	assert_int_equal(st.completed, n);
	assert_int_equal(st.pending, 0);
	fx_fini(f);
	rec_free(r);
}

/* Lv1: a wait blocked across a suspension returns once resumed. */
static void xq_wait_across_preemption_lv1(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(20);
	struct sim_hwq_info a;
	struct waiter w;
	uint64_t last;
	struct fx *f;

	(void)state;
	f = fx_new("waitlv1", 3, false);
	fx_queue(f, false, 1, 4, 2, XS_BUDGET_NONE);
	r->args[0].gate = &g;
	last = rec_submit(f->q, r, 0, 20, 200 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	atomic_store(&g.open, 1);
	waiter_start(&w, f->q, last);
	a = fx_dev(f);
	WAIT_UNTIL(fx_dev(f).done == a.submitted);
	usleep(20000);
	assert_false(atomic_load(&w.done));
	assert_int_equal(fx_dev(f).submitted, a.submitted);
	assert_int_equal(fx_stats(f).pending, 20 - a.submitted);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(waiter_join(&w), 0);
	rec_check_once_in_order(r, 20);
	fx_fini(f);
	rec_free(r);
}

/* Lv2 (stall): launched commands do not start while suspended. */
static void xq_wait_across_preemption_lv2(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(20);
	struct sim_hwq_info a;
	struct waiter w;
	uint64_t last;
	struct fx *f;

	(void)state;
	f = fx_new("waitlv2", 3, false);
	fx_queue(f, false, 2, 16, 8, XS_BUDGET_NONE);
	r->args[0].gate = &g;
	last = rec_submit(f->q, r, 0, 20, 200 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	atomic_store(&g.open, 1);
	waiter_start(&w, f->q, last);
	/* The running command ends; the stalled ones stay on the device. */
	WAIT_UNTIL(fx_dev(f).done == 1 && !fx_dev(f).running);
	usleep(20000);
	a = fx_dev(f);
	assert_int_equal(a.submitted, 16);
	assert_int_equal(a.done, 1);
	assert_int_equal(a.executed, 1);
	assert_false(atomic_load(&w.done));
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(waiter_join(&w), 0);
	rec_check_once_in_order(r, 20);
	assert_int_equal(fx_stats(f).relaunches, 0);
	fx_fini(f);
	rec_free(r);
}

/* Lv3: a long kernel interrupted mid-run keeps its progress. */
static void xq_wait_across_preemption_lv3(void **state)
{
	const uint64_t long_ns = 500 * MS, short_ns = 1 * MS;
	struct gate g = { .open = 1 };
	struct rec *r = rec_new(6);
	struct sim_hwq_info a;
	struct waiter w;
	uint64_t last, sum;
	struct fx *f;

	(void)state;
	f = fx_new("waitlv3", 3, false);
	fx_queue(f, false, 3, 0, 0, 0);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 1, long_ns);
	last = rec_submit(f->q, r, 1, 6, short_ns);
	sum = long_ns + 5 * short_ns;
	WAIT_UNTIL(atomic_load(&g.entered));
	usleep(100000);
	assert_int_equal(xq_suspend(f->q, XS_SUSPEND_SYNC), 0);
	a = fx_dev(f);
	assert_false(a.running);
	assert_true(a.interrupts >= 1);
	assert_int_equal(a.done, 0);
	waiter_start(&w, f->q, last);
	usleep(20000);
	assert_false(atomic_load(&w.done));
	assert_int_equal(fx_dev(f).done, 0);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(waiter_join(&w), 0);
	rec_check_once_in_order(r, 6);
	a = fx_dev(f);
	assert_int_equal(a.executed, 6);
	/* Restarting the long kernel would add the 100+ ms it ran before. */
	assert_true(a.busy_ns >= sum);
	assert_true(a.busy_ns < sum + 60 * MS);
	fx_fini(f);
	rec_free(r);
}

/* Lv2 flush: the device discards launched commands; the XQueue relaunches them. */
static void xq_lv2_flush_relaunches_in_order(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(40);
	xs_queue_stats st;
	struct fx *f;

	(void)state;
	f = fx_new("flush", 3, true);
	fx_queue(f, false, 2, 16, 8, XS_BUDGET_NONE);
	assert_true(f->hwq->caps & XAL_CAP_FLUSH);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 40, 2 * MS);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(fx_dev(f).submitted, 16);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	atomic_store(&g.open, 1);
	/* Command 0 completes, the 15 behind it are flushed. */
	WAIT_UNTIL(fx_dev(f).done == 16);
	assert_int_equal(fx_dev(f).executed, 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 40);
	st = fx_stats(f);
	assert_true(st.relaunches >= 15);
	assert_int_equal(st.completed, 40);
	assert_int_equal(st.failed, 0);
	fx_fini(f);
	rec_free(r);
}

/* Lv2 flush: an error of a command that completed before the flush is kept. */
static void xq_lv2_flush_keeps_error(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(20);
	xs_queue_stats st;
	struct fx *f;

	(void)state;
	f = fx_new("flusherr", 3, true);
	fx_queue(f, false, 2, 16, 16, XS_BUDGET_NONE);
	r->args[0].gate = &g;
	r->args[0].rc = -EIO;
	/* Launch all 16 at once, so no sync targets command 0 alone. */
	assert_int_equal(xq_suspend(f->q, 0), 0);
	rec_submit(f->q, r, 0, 20, 1 * MS);
	assert_int_equal(xq_resume(f->q), 0);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	atomic_store(&g.open, 1);
	WAIT_UNTIL(fx_dev(f).done == 16);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), -EIO);
	rec_check_once_in_order(r, 20);
	st = fx_stats(f);
	assert_int_equal(st.failed, 1);
	assert_int_equal(xq_wait_all(f->q), 0);
	fx_fini(f);
	rec_free(r);
}

/* --- destroy -------------------------------------------------------------- */

static void xq_destroy_discard_pending(void **state)
{
	struct rec *r = rec_new(100);
	struct fx *f;

	(void)state;
	f = fx_new("discard", 3, false);
	fx_queue(f, false, 0, 0, 0, 0);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	rec_submit(f->q, r, 0, 100, 100 * US);
	assert_int_equal(fx_stats(f).pending, 100);
	assert_int_equal(xq_destroy(f->q, XS_DESTROY_DISCARD), 0);
	f->q = NULL;
	usleep(5000);
	assert_int_equal(atomic_load(&r->ran), 0);
	assert_int_equal(fx_dev(f).submitted, 0);
	fx_fini(f);
	rec_free(r);
}

/* Discard at Lv3 while interrupted: in-flight work finishes, the rest never runs. */
static void xq_destroy_discard_interrupted(void **state)
{
	struct gate g = { .open = 1 };
	struct rec *r = rec_new(50);
	struct sim_hwq_info a;
	uint32_t i;
	struct fx *f;

	(void)state;
	f = fx_new("discardlv3", 3, false);
	fx_queue(f, false, 3, 0, 0, 0);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 1, 200 * MS);
	rec_submit(f->q, r, 1, 50, 100 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, XS_SUSPEND_SYNC), 0);
	assert_true(fx_stats(f).pending > 0);
	assert_int_equal(xq_destroy(f->q, XS_DESTROY_DISCARD), 0);
	f->q = NULL;
	a = fx_dev(f);
	assert_true(a.submitted >= 1 && a.submitted < 50);
	assert_int_equal(a.done, a.submitted);
	assert_int_equal(a.executed, a.submitted);
	for (i = 0; i < 50; i++)
		assert_int_equal(atomic_load(&r->runs[i]), i < a.submitted ? 1 : 0);
	fx_fini(f);
	rec_free(r);
}

static void xq_destroy_drain_runs_all(void **state)
{
	struct rec *r = rec_new(100);
	struct fx *f;

	(void)state;
	f = fx_new("drain", 3, false);
	fx_queue(f, false, 0, 4, 2, 0);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	/* Long enough that few complete (and are replaced) before the stats
	 * are read, even under a sanitizer on a loaded machine, where the
	 * reading thread may wait a scheduler tick (4 ms) behind the worker
	 * and the device: 0.5 ms commands lost that race in CI. */
	rec_submit(f->q, r, 0, 100, 2000 * US);
	assert_int_equal(xq_resume(f->q), 0);
	assert_true(fx_stats(f).pending >= 90);
	assert_int_equal(xq_destroy(f->q, XS_DESTROY_DRAIN), 0);
	f->q = NULL;
	rec_check_once_in_order(r, 100);
	fx_fini(f);
	rec_free(r);
}

/* --- errors --------------------------------------------------------------- */

static void xq_error_kernel_reported_once(void **state)
{
	struct rec *r = rec_new(10);
	xs_queue_stats st;
	uint64_t last;
	struct fx *f;

	(void)state;
	f = fx_new("err", 3, false);
	fx_queue(f, false, 0, 0, 0, 0);
	r->args[4].rc = -EIO;
	last = rec_submit(f->q, r, 0, 10, 100 * US);
	assert_int_equal(xq_wait(f->q, last), -EIO);
	assert_int_equal(xq_wait(f->q, last), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 10);
	st = fx_stats(f);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.completed, 10);
	/* The queue keeps working after an error. */
	assert_int_equal(xq_wait(f->q, submit(f->q, kcmd(10 * US, NULL, NULL))), 0);
	fx_fini(f);
	rec_free(r);
}

/*
 * Waiting on the failed command itself reports its error, even when the
 * worker's sync of a later command is what noticed it.
 */
static void xq_error_reported_at_wait_of_failed_cmd(void **state)
{
	struct rec *r = rec_new(10);
	struct fx *f;

	(void)state;
	f = fx_new("errseq", 3, false);
	fx_queue(f, false, 1, 16, 16, XS_BUDGET_NONE);
	r->args[4].rc = -EIO;
	assert_int_equal(xq_suspend(f->q, 0), 0);
	rec_submit(f->q, r, 0, 10, 100 * US);
	assert_int_equal(xq_resume(f->q), 0);
	/* Only the worker syncs (the tail); wait until it retired everything. */
	WAIT_UNTIL(fx_stats(f).completed == 10);
	assert_int_equal(xq_wait(f->q, r->args[4].seq), -EIO);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(fx_stats(f).failed, 1);
	fx_fini(f);
	rec_free(r);
}

/* A launch failure completes the command with the error; nothing exits. */
static void xq_error_launch_failure(void **state)
{
	struct rec *r = rec_new(10);
	xs_queue_stats st;
	uint32_t i;
	struct fx *f;

	(void)state;
	f = fx_new("errlaunch", 3, false);
	fx_queue(f, true, 0, 0, 0, 0);
	f->spy.fail_rc = -EIO;
	atomic_store(&f->spy.fail_launch, 5);
	rec_submit(f->q, r, 0, 10, 100 * US);
	assert_int_equal(xq_wait(f->q, r->args[4].seq), -EIO);
	assert_int_equal(xq_wait_all(f->q), 0);
	st = fx_stats(f);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.completed, 10);
	assert_int_equal(atomic_load(&r->ran), 9);
	for (i = 0; i < 10; i++)
		assert_int_equal(atomic_load(&r->runs[i]), i == 4 ? 0 : 1);
	for (i = 0; i < 9; i++)
		assert_int_equal(r->order[i], i < 4 ? i : i + 1);
	fx_fini(f);
	rec_free(r);
}

/* xq_query() that finds a failed command must not swallow its error. */
static void xq_query_keeps_error(void **state)
{
	struct rec *r = rec_new(1);
	uint64_t seq;
	struct fx *f;
	int rc;

	(void)state;
	f = fx_new("queryerr", 3, false);
	fx_queue(f, true, 1, 0, 0, 0);
	/* Background syncs wait in the spy, so only query sees the device. */
	atomic_store(&f->spy.sync_hold, 1);
	r->args[0].rc = -EIO;
	seq = rec_submit(f->q, r, 0, 1, 100 * US);
	WAIT_UNTIL((rc = xq_query(f->q, seq)) != -EBUSY);
	assert_int_equal(rc, 0);
	atomic_store(&f->spy.sync_hold, 0);
	assert_int_equal(xq_wait(f->q, seq), -EIO);
	assert_int_equal(fx_stats(f).failed, 1);
	fx_fini(f);
	rec_free(r);
}

/* --- observer ------------------------------------------------------------- */

#define MAX_EVENTS 4096

struct events {
	pthread_mutex_t lock;
	unsigned n;
	unsigned progress;          /* XQ_EVENT_PROGRESS calls */
	uint64_t preemptions;       /* the count at the last of them */
	enum xq_event ev[MAX_EVENTS];
};

static void events_observer(struct xq *q, enum xq_event ev, void *ctx)
{
	struct events *e = ctx;

	pthread_mutex_lock(&e->lock);
	if (ev == XQ_EVENT_PROGRESS) {
		struct xq_counters c;

		/* Counted apart: counters, not state changes. */
		xq_counters_locked(q, &c);
		e->progress++;
		e->preemptions = c.preemptions;
	} else {
		if (e->n < MAX_EVENTS)
			e->ev[e->n] = ev;
		e->n++;
	}
	pthread_mutex_unlock(&e->lock);
}

static unsigned events_n(struct events *e)
{
	unsigned n;

	pthread_mutex_lock(&e->lock);
	n = e->n;
	pthread_mutex_unlock(&e->lock);
	return n;
}

/* READY and IDLE alternate strictly, from READY; IDLE is last after wait_all. */
static void events_check_alternate(struct events *e)
{
	enum xq_event want = XQ_EVENT_READY;
	unsigned i;

	pthread_mutex_lock(&e->lock);
	assert_true(e->n > 0 && e->n <= MAX_EVENTS);
	for (i = 0; i < e->n; i++) {
		if (e->ev[i] == XQ_EVENT_HINT)
			continue;
		if (e->ev[i] != want)
			fail_msg("event %u is %d, want %d", i, e->ev[i], want);
		want = want == XQ_EVENT_READY ? XQ_EVENT_IDLE : XQ_EVENT_READY;
	}
	assert_int_equal(want, XQ_EVENT_READY);
	pthread_mutex_unlock(&e->lock);
}

static void xq_observer_ready_idle_alternate(void **state)
{
	struct events e = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rec *r = rec_new(60);
	int64_t v = 0;
	unsigned round, n;
	struct fx *f;

	(void)state;
	f = fx_new("observer", 3, false);
	fx_queue(f, false, 0, 4, 2, 0);
	xq_set_observer(f->q, events_observer, &e);
	assert_int_equal(events_n(&e), 0);
	for (round = 0; round < 6; round++) {
		uint64_t last = rec_submit(f->q, r, round * 10, round * 10 + 10, 100 * US);

		if (round & 1)
			assert_int_equal(xq_wait(f->q, last), 0);
		else
			assert_int_equal(xq_wait_all(f->q), 0);
		pthread_mutex_lock(&e.lock);
		assert_int_equal(e.ev[e.n - 1], XQ_EVENT_IDLE);
		pthread_mutex_unlock(&e.lock);
	}
	events_check_alternate(&e);
	n = events_n(&e);
	assert_true(n >= 12);
	/* Completions were reported too, at least once per busy period. */
	pthread_mutex_lock(&e.lock);
	assert_true(e.progress >= n / 2);
	pthread_mutex_unlock(&e.lock);
	assert_int_equal(xq_set_hint(f->q, XS_HINT_PRIORITY, 7), 0);
	assert_int_equal(events_n(&e), n + 1);
	assert_int_equal(e.ev[n], XQ_EVENT_HINT);
	assert_int_equal(xq_get_hint(f->q, XS_HINT_PRIORITY, &v), 0);
	assert_int_equal(v, 7);
	/* A rejected hint changes nothing. */
	assert_int_equal(xq_set_hint(f->q, XS_HINT_PRIORITY, 1000), -ERANGE);
	assert_int_equal(events_n(&e), n + 1);
	xq_set_observer(f->q, NULL, NULL);
	assert_int_equal(xq_wait(f->q, submit(f->q, kcmd(10 * US, NULL, NULL))), 0);
	assert_int_equal(events_n(&e), n + 1);
	fx_fini(f);
	rec_free(r);
}

/* Two threads syncing the same last command must still give one IDLE. */
static void xq_observer_idle_once_with_two_syncers(void **state)
{
	struct events e = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct gate g = { 0 };
	struct rec *r = rec_new(1);
	struct waiter w;
	uint64_t seq;
	struct fx *f;

	(void)state;
	f = fx_new("observer2", 3, false);
	fx_queue(f, true, 1, 0, 0, XS_BUDGET_NONE);
	xq_set_observer(f->q, events_observer, &e);
	r->args[0].gate = &g;
	seq = rec_submit(f->q, r, 0, 1, 100 * US);
	/* The worker syncs the command; then a waiting thread does too. */
	WAIT_UNTIL(atomic_load(&f->spy.in_sync) == 1);
	waiter_start(&w, f->q, seq);
	WAIT_UNTIL(atomic_load(&f->spy.in_sync) == 2);
	atomic_store(&g.open, 1);
	assert_int_equal(waiter_join(&w), 0);
	/* Destroy joins the worker: every event it causes has happened. */
	assert_int_equal(xq_destroy(f->q, XS_DESTROY_DRAIN), 0);
	f->q = NULL;
	events_check_alternate(&e);
	assert_int_equal(events_n(&e), 2);
	fx_fini(f);
	rec_free(r);
}

/* --- levels ----------------------------------------------------------------- */

static void xq_level_clamped_lv1(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(10);
	xs_queue_info info;
	struct sim_hwq_info a;
	struct fx *f;

	(void)state;
	f = fx_new("lv1dev", 1, false);
	assert_int_equal(xal_level_max(f->hwq), 1);
	fx_queue(f, false, 3, 4, 2, XS_BUDGET_NONE);
	xq_info(f->q, &info);
	assert_int_equal(info.level, 1);
	assert_int_equal(info.level_requested, 3);
	assert_int_equal(info.level_max, 1);
	assert_string_equal(info.backend, "sim");
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 10, 100 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	atomic_store(&g.open, 1);
	a = fx_dev(f);
	WAIT_UNTIL(fx_dev(f).done == a.submitted);
	usleep(5000);
	assert_int_equal(fx_dev(f).submitted, a.submitted);
	assert_int_equal(fx_stats(f).pending, 10 - a.submitted);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 10);
	fx_fini(f);
	rec_free(r);
}

static void xq_level_default_is_device_max_lv2(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(10);
	xs_queue_info info;
	struct xq *q3;
	struct fx *f;

	(void)state;
	f = fx_new("lv2dev", 2, false);
	fx_queue(f, false, XS_LEVEL_DEFAULT, 16, 8, XS_BUDGET_NONE);
	xq_info(f->q, &info);
	assert_int_equal(info.level, 2);
	assert_int_equal(info.level_requested, 0);
	assert_int_equal(info.level_max, 2);
	/* Asking for 3 on a Lv2 device gets 2. */
	{
		struct xq_config c = { .level = 3 };
		struct xal_hwq *h2;

		assert_int_equal(xal_sim_hwq_create(f->name, &h2), 0);
		assert_int_equal(xq_create(h2, &c, &q3), 0);
		xq_info(q3, &info);
		assert_int_equal(info.level, 2);
		assert_int_equal(info.level_requested, 3);
		assert_int_equal(xq_destroy(q3, 0), 0);
		h2->ops->hwq_destroy(h2);
	}
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 10, 100 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	atomic_store(&g.open, 1);
	WAIT_UNTIL(fx_dev(f).done == 1 && !fx_dev(f).running);
	usleep(5000);
	assert_int_equal(fx_dev(f).done, 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 10);
	fx_fini(f);
	rec_free(r);
}

/* --- statistics ------------------------------------------------------------- */

static void xq_preempt_stats_lv3_sync(void **state)
{
	struct gate g = { .open = 1 };
	struct rec *r = rec_new(3);
	xs_queue_stats st;
	struct fx *f;

	(void)state;
	f = fx_new("statlv3", 3, false);
	fx_queue(f, false, 3, 0, 0, 0);
	/* Suspending an idle queue is not a preemption. */
	assert_int_equal(xq_suspend(f->q, XS_SUSPEND_SYNC), 0);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(fx_stats(f).preemptions, 0);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 1, 200 * MS);
	rec_submit(f->q, r, 1, 3, 100 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, XS_SUSPEND_SYNC), 0);
	assert_false(fx_dev(f).running);
	st = fx_stats(f);
	assert_int_equal(st.suspended, 1);
	assert_int_equal(st.preemptions, 1);
	assert_true(st.preempt_samples >= 1);
	assert_true(st.preempt_max_ns > 0);
	assert_true(st.preempt_p50_ns <= st.preempt_max_ns);
	/* Idempotent: a second suspend is not another preemption. */
	assert_int_equal(xq_suspend(f->q, XS_SUSPEND_SYNC), 0);
	assert_int_equal(fx_stats(f).preemptions, 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	st = fx_stats(f);
	assert_int_equal(st.suspended, 0);
	assert_int_equal(st.completed, 3);
	rec_check_once_in_order(r, 3);
	fx_fini(f);
	rec_free(r);
}

/*
 * An observer hears of a preemption when it is counted: a queue stalled at
 * Lv2 may complete nothing (no other occasion to publish) until resumed.
 */
static void xq_observer_told_of_preemption(void **state)
{
	struct events e = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct gate g = { 0 };
	struct rec *r = rec_new(3);
	unsigned before;
	struct fx *f;

	(void)state;
	f = fx_new("observer3", 3, false);
	fx_queue(f, false, 2, 0, 0, XS_BUDGET_NONE);
	xq_set_observer(f->q, events_observer, &e);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 3, 100 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	pthread_mutex_lock(&e.lock);
	before = e.progress;
	assert_int_equal(e.preemptions, 0);
	pthread_mutex_unlock(&e.lock);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	pthread_mutex_lock(&e.lock);
	assert_int_equal(e.progress, before + 1);
	assert_int_equal(e.preemptions, 1);
	pthread_mutex_unlock(&e.lock);
	assert_int_equal(fx_stats(f).completed, 0);
	atomic_store(&g.open, 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	xq_set_observer(f->q, NULL, NULL);
	rec_check_once_in_order(r, 3);
	fx_fini(f);
	rec_free(r);
}

struct opener {
	pthread_t t;
	struct gate *g;
	_Atomic bool go;
};

static void *opener_main(void *p)
{
	struct opener *o = p;

	while (!atomic_load(&o->go))
		usleep(100);
	usleep(10000);
	atomic_store(&o->g->open, 1);
	return NULL;
}

/* Lv1 with XS_SUSPEND_SYNC returns once nothing of the queue is in flight. */
static void xq_preempt_sync_lv1_drains_inflight(void **state)
{
	struct gate g = { 0 };
	struct opener o = { .g = &g };
	struct rec *r = rec_new(20);
	struct sim_hwq_info a;
	xs_queue_stats st;
	struct fx *f;

	(void)state;
	f = fx_new("statlv1", 3, false);
	fx_queue(f, false, 1, 4, 2, XS_BUDGET_NONE);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 20, 200 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(fx_stats(f).in_flight, 4);
	/* The gate opens while suspend waits for the in-flight commands. */
	assert_int_equal(pthread_create(&o.t, NULL, opener_main, &o), 0);
	atomic_store(&o.go, true);
	assert_int_equal(xq_suspend(f->q, XS_SUSPEND_SYNC), 0);
	assert_true(atomic_load(&g.open));
	st = fx_stats(f);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.pending, 16);
	assert_int_equal(st.preemptions, 1);
	assert_true(st.preempt_samples >= 1);
	a = fx_dev(f);
	assert_int_equal(a.done, a.submitted);
	assert_false(a.running);
	assert_int_equal(pthread_join(o.t, NULL), 0);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 20);
	fx_fini(f);
	rec_free(r);
}

/* How many @ev the observer saw. */
static unsigned events_count(struct events *e, enum xq_event ev)
{
	unsigned i, k = 0;

	pthread_mutex_lock(&e->lock);
	for (i = 0; i < e->n && i < MAX_EVENTS; i++)
		k += e->ev[i] == ev;
	pthread_mutex_unlock(&e->lock);
	return k;
}

/*
 * xq_set_run_word(): the in-flight word follows launches and completions, and
 * XQ_EVENT_DRAINED comes once when, with the gate closed, the work in
 * flight drops to one; an open gate raises none.
 */
static void xq_gate_inflight_drained(void **state)
{
	_Atomic uint32_t run = 1, inflight = 0;
	struct events e = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct gate g = { 0 };
	struct rec *r = rec_new(10);
	struct fx *f;

	(void)state;
	f = fx_new("drain1", 3, false);
	fx_queue(f, false, 1, 4, 1, XS_BUDGET_NONE);
	xq_set_observer(f->q, events_observer, &e);
	xq_set_run_word(f->q, &run, &inflight, true);
	r->args[0].gate = &g;
	rec_submit(f->q, r, 0, 10, 200 * US);
	WAIT_UNTIL(atomic_load(&g.entered));
	WAIT_UNTIL(atomic_load(&inflight) == 4);
	atomic_store(&run, 0);
	atomic_store(&g.open, 1);
	WAIT_UNTIL(fx_stats(f).in_flight == 0);
	assert_int_equal(atomic_load(&inflight), 0);
	assert_int_equal(events_count(&e, XQ_EVENT_DRAINED), 1);
	assert_int_equal(fx_dev(f).submitted, 4);
	/* Open again: the rest runs without another DRAINED. */
	atomic_store(&run, 1);
	xq_kick(f->q);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&inflight), 0);
	assert_int_equal(events_count(&e, XQ_EVENT_DRAINED), 1);
	rec_check_once_in_order(r, 10);
	xq_set_run_word(f->q, NULL, NULL, true);
	xq_set_observer(f->q, NULL, NULL);
	fx_fini(f);
	rec_free(r);
}

/* At Lv3 the device holds what is in flight: a suspension drains at once. */
static void xq_gate_inflight_lv3_suspend(void **state)
{
	_Atomic uint32_t inflight = 0;
	struct events e = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rec *r = rec_new(10);
	struct fx *f;

	(void)state;
	f = fx_new("drain3", 3, false);
	fx_queue(f, false, 3, 4, 1, XS_BUDGET_NONE);
	xq_set_observer(f->q, events_observer, &e);
	xq_set_run_word(f->q, NULL, &inflight, true);
	rec_submit(f->q, r, 0, 10, 2000 * US);
	WAIT_UNTIL(atomic_load(&inflight) == 4);
	assert_int_equal(xq_suspend(f->q, 0), 0);
	assert_int_equal(atomic_load(&inflight), 0);
	assert_int_equal(events_count(&e, XQ_EVENT_DRAINED), 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&inflight), 0);
	assert_int_equal(events_count(&e, XQ_EVENT_DRAINED), 1);
	rec_check_once_in_order(r, 10);
	xq_set_run_word(f->q, NULL, NULL, true);
	xq_set_observer(f->q, NULL, NULL);
	fx_fini(f);
	rec_free(r);
}

/* --- without per-command device times ------------------------------------ */

/*
 * Durations learned from completion spacings are what such a queue charges
 * as device time: a completion seen while the queue was stopped (here 30 ms
 * late) is not learned from, so four commands after it are charged about
 * what four were before it (slow builds stretch both), not the stop.
 */
static void xq_spacing_not_learned_while_stopped(void **state)
{
	struct gate g = { 0 };
	static struct xal_ops spacing_ops;
	struct rec *r = rec_new(20);
	xs_queue_stats a, b;
	uint64_t before;
	struct fx *f;

	(void)state;
	f = fx_new("spacing", 3, false);
	/* The spy without per-command device times: durations from spacings. */
	spacing_ops = spy_ops;
	spacing_ops.cmd_time = NULL;
	f->spy.base.ops = &spacing_ops;
	fx_queue(f, true, 1, 4, 1, XS_BUDGET_NONE);
	rec_submit(f->q, r, 0, 8, MS);
	assert_int_equal(xq_wait_all(f->q), 0);
	a = fx_stats(f);
	rec_submit(f->q, r, 8, 12, MS);
	assert_int_equal(xq_wait_all(f->q), 0);
	b = fx_stats(f);
	before = b.exec_ns - a.exec_ns;
	r->args[13].gate = &g;
	rec_submit(f->q, r, 12, 16, MS);
	WAIT_UNTIL(atomic_load(&g.entered));
	assert_int_equal(xq_suspend(f->q, 0), 0);
	usleep(30000);
	atomic_store(&g.open, 1);
	WAIT_UNTIL(fx_stats(f).in_flight == 0);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait_all(f->q), 0);
	a = fx_stats(f);
	rec_submit(f->q, r, 16, 20, MS);
	assert_int_equal(xq_wait_all(f->q), 0);
	b = fx_stats(f);
	/* Four 1 ms commands, charged like the four before the stop (an
	 * estimate that learned the stop would add several ms each). */
	if (b.exec_ns - a.exec_ns > 2 * before)
		fail_msg("charged %.1f ms for 4 x 1 ms, %.1f ms before the stop",
			 (double)(b.exec_ns - a.exec_ns) / 1e6, (double)before / 1e6);
	assert_true(b.exec_ns - a.exec_ns >= 3 * MS && before >= 3 * MS);
	rec_check_once_in_order(r, 20);
	fx_fini(f);
	rec_free(r);
}

/* An event command (what an application waits for) is a sync point. */
static void xq_event_is_sync_point(void **state)
{
	struct sim_cmd d = { .kind = SIM_CMD_EVENT };
	struct xal_cmd *ev = NULL;
	struct rec *r = rec_new(6);
	struct fx *f;

	(void)state;
	f = fx_new("evsp", 3, false);
	fx_queue(f, true, 1, 16, 8, XS_BUDGET_NONE);
	rec_submit(f->q, r, 0, 3, 100 * US);
	assert_int_equal(xal_sim_cmd_create(&d, NULL, &ev), 0);
	submit(f->q, ev);
	rec_submit(f->q, r, 3, 6, 100 * US);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&f->spy.sp_events), 1);
	rec_check_once_in_order(r, 6);
	fx_fini(f);
	rec_free(r);
}

/*
 * A thread waiting for a launched command while others wait for window
 * room refills the window on the way (sync point by sync point), so the
 * device does not run dry behind it: when its wait returns, more than the
 * first window was launched (a wait on the command itself would return
 * with none; the worker stands aside while a thread waits).
 */
static void xq_wait_refills_window(void **state)
{
	struct rec *r = rec_new(10);
	struct fx *f;

	(void)state;
	f = fx_new("refill", 3, false);
	fx_queue(f, true, 1, 2, 1, XS_BUDGET_NONE);
	rec_submit(f->q, r, 0, 10, 300 * US);
	assert_int_equal(xq_wait(f->q, r->args[1].seq), 0);
	assert_true(xq_launched(f->q) >= r->args[2].seq);
	assert_int_equal(xq_wait_all(f->q), 0);
	rec_check_once_in_order(r, 10);
	fx_fini(f);
	rec_free(r);
}

/* --- query, window changes, direct launches, creation ------------------------ */

static void xq_query_busy_then_done(void **state)
{
	struct gate g = { 0 };
	struct rec *r = rec_new(3);
	uint64_t s1, s2, s3;
	struct fx *f;

	(void)state;
	f = fx_new("query", 3, false);
	fx_queue(f, false, 0, 0, 0, 0);
	assert_int_equal(xq_query(f->q, 1), -EINVAL);
	r->args[0].gate = &g;
	s1 = rec_submit(f->q, r, 0, 1, 100 * US);
	s2 = rec_submit(f->q, r, 1, 2, 100 * US);
	assert_int_equal(xq_query(f->q, s1), -EBUSY);
	assert_int_equal(xq_query(f->q, s2), -EBUSY);
	assert_int_equal(xq_query(f->q, 0), -EINVAL);
	assert_int_equal(xq_query(f->q, s2 + 1), -EINVAL);
	atomic_store(&g.open, 1);
	WAIT_UNTIL(xq_query(f->q, s2) == 0);
	assert_int_equal(xq_query(f->q, s1), 0);
	/* Buffered while suspended: busy until resumed and run. */
	assert_int_equal(xq_suspend(f->q, 0), 0);
	s3 = rec_submit(f->q, r, 2, 3, 100 * US);
	usleep(2000);
	assert_int_equal(xq_query(f->q, s3), -EBUSY);
	assert_int_equal(xq_resume(f->q), 0);
	WAIT_UNTIL(xq_query(f->q, s3) == 0);
	assert_int_equal(xq_wait(f->q, s3), 0);
	rec_check_once_in_order(r, 3);
	fx_fini(f);
	rec_free(r);
}

static void check_window(struct xq *q, int32_t t, int32_t b, int64_t g)
{
	xs_queue_info info;

	xq_info(q, &info);
	assert_int_equal(info.threshold, t);
	assert_int_equal(info.batch, b);
	assert_int_equal(info.budget_ns, g);
}

static void xq_set_window_runtime(void **state)
{
	struct gate g1 = { 0 }, g2 = { 0 };
	struct rec *r = rec_new(31);
	struct fx *f;

	(void)state;
	f = fx_new("setwin", 3, false);
	fx_queue(f, true, 0, 0, 0, 0);
	/* Lv3 by default: no budget unless one is set. */
	check_window(f->q, XS_DEFAULT_THRESHOLD, XS_DEFAULT_BATCH, XS_BUDGET_NONE);
	assert_int_equal(xq_set_level(f->q, 1), 0);
	check_window(f->q, XS_DEFAULT_THRESHOLD, XS_DEFAULT_BATCH, XS_DEFAULT_BUDGET_NS);
	assert_int_equal(xq_set_window(f->q, 2, 4, 0), -EINVAL);
	assert_int_equal(xq_set_window(f->q, XS_MAX_THRESHOLD + 1, 0, 0), -EINVAL);
	assert_int_equal(xq_set_window(f->q, -1, 0, 0), -EINVAL);
	assert_int_equal(xq_set_window(f->q, 0, -1, 0), -EINVAL);
	assert_int_equal(xq_set_window(f->q, 0, 0, -5), -EINVAL);
	assert_int_equal(xq_set_window(NULL, 1, 1, 0), -EINVAL);
	check_window(f->q, XS_DEFAULT_THRESHOLD, XS_DEFAULT_BATCH, XS_DEFAULT_BUDGET_NS);
	assert_int_equal(xq_set_window(f->q, 0, 0, 0), 0);
	check_window(f->q, XS_DEFAULT_THRESHOLD, XS_DEFAULT_BATCH, XS_DEFAULT_BUDGET_NS);

	/* A window of one: never two commands on the device. */
	assert_int_equal(xq_set_window(f->q, 1, 1, XS_BUDGET_NONE), 0);
	check_window(f->q, 1, 1, XS_BUDGET_NONE);
	r->args[0].gate = &g1;
	rec_submit(f->q, r, 0, 10, 100 * US);
	WAIT_UNTIL(atomic_load(&g1.entered));
	assert_int_equal(fx_stats(f).in_flight, 1);
	atomic_store(&g1.open, 1);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&f->spy.occ_max), 1);

	/* Widened while commands are buffered: the new window fills at once. */
	assert_int_equal(xq_suspend(f->q, 0), 0);
	r->args[10].gate = &g2;
	rec_submit(f->q, r, 10, 31, 100 * US);
	assert_int_equal(xq_set_window(f->q, 8, 4, 0), 0);
	check_window(f->q, 8, 4, XS_BUDGET_NONE);
	assert_int_equal(fx_stats(f).in_flight, 0);
	assert_int_equal(xq_resume(f->q), 0);
	WAIT_UNTIL(atomic_load(&g2.entered));
	assert_int_equal(fx_stats(f).in_flight, 8);
	atomic_store(&g2.open, 1);
	assert_int_equal(xq_wait_all(f->q), 0);
	assert_int_equal(atomic_load(&f->spy.occ_max), 8);
	rec_check_once_in_order(r, 31);
	fx_fini(f);
	rec_free(r);
}

static void xq_direct_launch_idle_queue(void **state)
{
	xs_queue_stats st;
	uint64_t s;
	struct fx *f;

	(void)state;
	f = fx_new("direct", 3, false);
	fx_queue(f, false, 0, 0, 0, 0);
	s = submit(f->q, kcmd(100 * US, NULL, NULL));
	st = fx_stats(f);
	assert_int_equal(st.direct_launches, 1);
	assert_int_equal(st.pending, 0);
	assert_int_equal(fx_dev(f).submitted, 1);
	assert_int_equal(xq_wait(f->q, s), 0);
	assert_int_equal(xq_wait(f->q, submit(f->q, kcmd(100 * US, NULL, NULL))), 0);
	assert_int_equal(fx_stats(f).direct_launches, 2);
	/* A suspended queue buffers instead. */
	assert_int_equal(xq_suspend(f->q, 0), 0);
	s = submit(f->q, kcmd(100 * US, NULL, NULL));
	st = fx_stats(f);
	assert_int_equal(st.direct_launches, 2);
	assert_int_equal(st.pending, 1);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait(f->q, s), 0);
	st = fx_stats(f);
	assert_int_equal(st.direct_launches, 2);
	assert_int_equal(st.submitted, 3);
	assert_int_equal(st.completed, 3);
	fx_fini(f);
}

/* Threads of this process (/proc/self/status). */
static int thread_count(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	int n = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* xq_reap() stops an idle worker; later work starts a new one. */
static void xq_reap_idle_worker(void **state)
{
	struct rec *r = rec_new(40);
	struct fx *f;
	uint64_t s;
	int base;

	(void)state;
	f = fx_new("reap", 3, false);
	fx_queue(f, false, 0, 4, 2, 0);
	base = thread_count();
	/* Buffered work makes the worker start. */
	assert_int_equal(xq_suspend(f->q, 0), 0);
	s = rec_submit(f->q, r, 0, 20, 20 * US);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait(f->q, s), 0);
	assert_true(thread_count() > base);
	xq_reap(f->q);
	assert_int_equal(thread_count(), base);
	xq_reap(f->q);          /* nothing to reap: no effect */
	assert_int_equal(xq_suspend(f->q, 0), 0);
	s = rec_submit(f->q, r, 20, 40, 20 * US);
	assert_int_equal(xq_resume(f->q), 0);
	assert_int_equal(xq_wait(f->q, s), 0);
	rec_check_once_in_order(r, 40);
	fx_fini(f);
	rec_free(r);
}

static const struct xal_ops bad_version_ops = {
	.version = XAL_OPS_VERSION + 1,
	.size = sizeof(struct xal_ops),
	.name = "bad",
	.launch = spy_launch,
	.sync = spy_sync,
	.sync_all = spy_sync_all,
	.hwq_destroy = spy_hwq_destroy,
};

static const struct xal_ops no_launch_ops = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "bad",
	.sync = spy_sync,
	.sync_all = spy_sync_all,
	.hwq_destroy = spy_hwq_destroy,
};

static void xq_create_checks_config(void **state)
{
	struct xal_hwq bad = { .ops = &bad_version_ops };
	struct xq *q = (struct xq *)&bad;
	struct xq_config c;
	xs_queue_info info;
	struct fx *f;

	(void)state;
	f = fx_new("create", 3, false);
	assert_int_equal(xq_create(NULL, NULL, &q), -EINVAL);
	assert_int_equal(xq_create(f->hwq, NULL, NULL), -EINVAL);
	assert_int_equal(xq_create(&bad, NULL, &q), -EINVAL);
	bad.ops = &no_launch_ops;
	assert_int_equal(xq_create(&bad, NULL, &q), -EINVAL);
	c = (struct xq_config){ .level = 4 };
	assert_int_equal(xq_create(f->hwq, &c, &q), -EINVAL);
	c = (struct xq_config){ .level = -1 };
	assert_int_equal(xq_create(f->hwq, &c, &q), -EINVAL);
	c = (struct xq_config){ .threshold = XS_MAX_THRESHOLD + 1 };
	assert_int_equal(xq_create(f->hwq, &c, &q), -EINVAL);
	c = (struct xq_config){ .threshold = 4, .batch = 5 };
	assert_int_equal(xq_create(f->hwq, &c, &q), -EINVAL);
	c = (struct xq_config){ .budget_ns = -2 };
	assert_int_equal(xq_create(f->hwq, &c, &q), -EINVAL);
	/* Output untouched on failure. */
	assert_ptr_equal(q, (struct xq *)&bad);
	assert_int_equal(xq_create(f->hwq, NULL, &f->q), 0);
	xq_info(f->q, &info);
	assert_int_equal(info.level, 3);
	assert_int_equal(info.level_max, 3);
	assert_int_equal(info.threshold, XS_DEFAULT_THRESHOLD);
	assert_int_equal(info.batch, XS_DEFAULT_BATCH);
	assert_int_equal(info.budget_ns, XS_BUDGET_NONE); /* Lv3: the device stops it */
	assert_ptr_equal(xq_hwq(f->q), f->hwq);
	assert_int_equal(xq_destroy(NULL, 0), 0);
	assert_int_equal(xq_destroy(f->q, 0x80), -EINVAL);
	fx_fini(f);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(xq_order_single_submitter),
	cmocka_unit_test(xq_order_concurrent_submitters),
	cmocka_unit_test(xq_window_threshold),
	cmocka_unit_test(xq_window_budget_short_cmds),
	cmocka_unit_test(xq_window_budget_long_cmds),
	cmocka_unit_test(xq_window_budget_long_cmds_learned),
	cmocka_unit_test(xq_suspend_stops_launches),
	cmocka_unit_test(xq_submit_while_suspended_buffers),
	cmocka_unit_test(xq_wait_across_preemption_lv1),
	cmocka_unit_test(xq_wait_across_preemption_lv2),
	cmocka_unit_test(xq_wait_across_preemption_lv3),
	cmocka_unit_test(xq_lv2_flush_relaunches_in_order),
	cmocka_unit_test(xq_lv2_flush_keeps_error),
	cmocka_unit_test(xq_destroy_discard_pending),
	cmocka_unit_test(xq_destroy_discard_interrupted),
	cmocka_unit_test(xq_destroy_drain_runs_all),
	cmocka_unit_test(xq_error_kernel_reported_once),
	cmocka_unit_test(xq_error_reported_at_wait_of_failed_cmd),
	cmocka_unit_test(xq_error_launch_failure),
	cmocka_unit_test(xq_query_keeps_error),
	cmocka_unit_test(xq_observer_ready_idle_alternate),
	cmocka_unit_test(xq_observer_idle_once_with_two_syncers),
	cmocka_unit_test(xq_level_clamped_lv1),
	cmocka_unit_test(xq_level_default_is_device_max_lv2),
	cmocka_unit_test(xq_preempt_stats_lv3_sync),
	cmocka_unit_test(xq_observer_told_of_preemption),
	cmocka_unit_test(xq_preempt_sync_lv1_drains_inflight),
	cmocka_unit_test(xq_gate_inflight_drained),
	cmocka_unit_test(xq_gate_inflight_lv3_suspend),
	cmocka_unit_test(xq_spacing_not_learned_while_stopped),
	cmocka_unit_test(xq_event_is_sync_point),
	cmocka_unit_test(xq_wait_refills_window),
	cmocka_unit_test(xq_query_busy_then_done),
	cmocka_unit_test(xq_set_window_runtime),
	cmocka_unit_test(xq_window_budget_follows_level),
	cmocka_unit_test(xq_direct_launch_idle_queue),
	cmocka_unit_test(xq_create_checks_config),
	cmocka_unit_test(xq_reap_idle_worker),
};

TU_MAIN(tests)
