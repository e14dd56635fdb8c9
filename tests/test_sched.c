/*
 * The scheduler core (src/sched/): plain functions over arrays of queues,
 * driven by a fake host that records what the core asks of it (decisions
 * applied, quiet flags, loads, refreshes), with the built-in policies and
 * a virtual clock. Then the agent's local mode, which runs the same core
 * in one process over the simulated XPU, with its starvation guard on and
 * off.
 */
#include "test_util.h"

#include "base/clock.h"
#include "base/compiler.h"
#include "policy/policy_builtin.h"
#include "sched/sched_core.h"
#include "xsched/sim.h"
#include "xsched/xsched.h"

#include <errno.h>
#include <stdbool.h>

#define MS 1000000ull
#define NQ 80

struct fq {
	struct sched_q sq;
	uint32_t left;          /* what inflight() answers */
	int waits_on;           /* index in the host's table, -1: none */
	bool quiet;             /* as set_quiet() left it */
	uint32_t applies, loads, refreshes, refused;
};

struct host {
	struct fq q[NQ];
	size_t n;
	struct sched s;
};

static struct fq *fq_of(struct sched_q *sq)
{
	return base_container_of(sq, struct fq, sq);
}

static bool h_apply(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	fq_of(sq)->applies++;
	return true;
}

static void h_set_quiet(void *ctx, struct sched_q *sq, bool quiet)
{
	(void)ctx;
	fq_of(sq)->quiet = quiet;
}

static void h_refresh(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	fq_of(sq)->refreshes++;
}

static void h_load(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	fq_of(sq)->loads++;
}

static uint32_t h_inflight(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	return fq_of(sq)->left;
}

static struct sched_q *h_waits_on(void *ctx, struct sched_q *sq)
{
	struct host *h = ctx;
	int w = fq_of(sq)->waits_on;

	return w < 0 ? NULL : &h->q[w].sq;
}

static void h_refused(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	fq_of(sq)->refused++;
}

static const struct sched_host fake_host = {
	.apply = h_apply,
	.set_quiet = h_set_quiet,
	.refresh = h_refresh,
	.load = h_load,
	.inflight = h_inflight,
	.waits_on = h_waits_on,
	.refused = h_refused,
};

static void host_init(struct host *h, const char *policy, uint32_t guard_pct, uint32_t cw)
{
	struct sched_conf c = { .guard_pct = guard_pct, .guard_period_ns = 100 * MS,
				.contention_window = cw };
	const struct xs_policy_ops *ops = policy_find(policy);
	void *state = NULL;

	memset(h, 0, sizeof(*h));
	assert_non_null(ops);
	if (ops->init)
		assert_int_equal(ops->init(&state, NULL), 0);
	sched_init(&h->s, &fake_host, h, &c);
	assert_int_equal(sched_set_policy(&h->s, ops, state), 0);
}

/* Adds queue number h->n on @dev with @prio. */
static struct fq *host_add(struct host *h, uint32_t dev, int32_t prio)
{
	struct fq *q = &h->q[h->n];

	q->sq.pq.id = h->n + 1;
	q->sq.pq.client = 1;
	q->sq.pq.device = dev;
	q->sq.own_priority = prio;
	q->waits_on = -1;
	h->n++;
	assert_int_equal(sched_add(&h->s, &q->sq), 0);
	return q;
}

static void host_clear(struct host *h)
{
	for (size_t i = 0; i < h->n; i++)
		h->q[i].applies = h->q[i].loads = h->q[i].refreshes = 0;
}

static void host_fini(struct host *h)
{
	sched_fini(&h->s);
}

/* hpf, recording which queues each schedule() call saw. */
static uint32_t seen_calls, seen_n, seen_dev;
static bool seen_mixed;

static uint64_t seeing_schedule(void *st, struct xs_pqueue *const *qs, size_t n, uint64_t now)
{
	seen_calls++;
	seen_n += (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		seen_mixed |= qs[i]->device != qs[0]->device;
	seen_dev = n ? qs[0]->device : UINT32_MAX;
	return policy_hpf.schedule(st, qs, n, now);
}

static const struct xs_policy_ops seeing = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "seeing",
	.schedule = seeing_schedule,
	.flags = XS_POLICY_PER_DEVICE,
};

static void seen_clear(void)
{
	seen_calls = seen_n = 0;
	seen_mixed = false;
}

/* An event on one device decides that device's queues only. */
static void sched_per_device_domains(void **state)
{
	struct host h;
	struct fq *a0, *a1, *b0, *b1;

	(void)state;
	host_init(&h, "hpf", 0, 0);
	assert_int_equal(sched_set_policy(&h.s, &seeing, NULL), 0);
	a0 = host_add(&h, 0, 10);
	a1 = host_add(&h, 0, 0);
	b0 = host_add(&h, 7, 10);
	b1 = host_add(&h, 7, 0);
	sched_run(&h.s, 1, false);
	assert_int_equal(seen_calls, 2);
	assert_false(seen_mixed);
	seen_clear();
	sched_ready(&h.s, &a0->sq, 2, 2);
	sched_ready(&h.s, &a1->sq, 2, 2);
	sched_run(&h.s, 3, false);
	assert_true(seen_calls == 1 && seen_n == 2 && seen_dev == 0);
	assert_true(a0->sq.pq.run && !a1->sq.pq.run);
	assert_true(a0->applies == 0 && a1->applies == 1);   /* changes only */
	/* Device 7 was left alone: both still run. */
	assert_true(b0->sq.pq.run && b1->sq.pq.run);
	/* Nothing changed: nothing decided. */
	seen_clear();
	sched_run(&h.s, 4, false);
	assert_int_equal(seen_calls, 0);
	/* A touch (the process rang) decides its device. */
	sched_touch(&h.s, &b1->sq);
	sched_run(&h.s, 5, false);
	assert_true(seen_calls == 1 && seen_dev == 7);
	/* `all` decides everything, one device at a time. */
	seen_clear();
	sched_run(&h.s, 6, true);
	assert_true(seen_calls == 2 && seen_n == 4 && !seen_mixed);
	/* Without the flag, one call sees every queue. */
	seen_clear();
	assert_int_equal(sched_set_policy(&h.s, &policy_hhpf, NULL), 0);
	assert_int_equal(h.s.n, 4);
	host_fini(&h);
}

/* A policy that decides across devices gets one domain holding every queue. */
static void sched_cross_device_one_domain(void **state)
{
	struct host h;
	struct fq *hi, *lo;

	(void)state;
	host_init(&h, "hhpf", 0, 0);
	hi = host_add(&h, 0, 10);
	lo = host_add(&h, 3, 0);
	sched_ready(&h.s, &hi->sq, 1, 1);
	sched_ready(&h.s, &lo->sq, 1, 1);
	sched_run(&h.s, 2, false);
	assert_true(hi->sq.pq.run && !lo->sq.pq.run);
	/* Switching to hpf splits the domain: lo runs on its own device. */
	assert_int_equal(sched_set_policy(&h.s, policy_find("hpf"), NULL), 0);
	sched_run(&h.s, 3, false);
	assert_true(hi->sq.pq.run && lo->sq.pq.run);
	host_fini(&h);
}

/* The guard grants a starved queue guard_pct of the next period, and only
 * under priority policies. */
static void sched_starvation_guard(void **state)
{
	struct host h;
	struct fq *hi, *lo;
	uint64_t t = 10 * MS, next;

	(void)state;
	host_init(&h, "hpf", 10, 0);
	hi = host_add(&h, 0, 10);
	lo = host_add(&h, 0, 0);
	sched_ready(&h.s, &hi->sq, t, t);
	sched_ready(&h.s, &lo->sq, t, t);
	next = sched_run(&h.s, t, false);
	assert_false(lo->sq.pq.run);
	assert_int_equal(next, t + 100 * MS);       /* the end of its period */
	next = sched_run(&h.s, t + 50 * MS, false); /* early: nothing yet */
	assert_false(lo->sq.pq.run);
	next = sched_run(&h.s, t + 100 * MS, false);
	assert_true(lo->sq.pq.run && hi->sq.pq.run);
	assert_int_equal(lo->sq.guard_runs, 1);
	assert_int_equal(next, t + 110 * MS);       /* 10% of the period */
	sched_run(&h.s, t + 110 * MS, false);
	assert_false(lo->sq.pq.run);
	host_fini(&h);

	/* Off: it waits for as long as the higher queue is ready. */
	host_init(&h, "hpf", 0, 0);
	hi = host_add(&h, 0, 10);
	lo = host_add(&h, 0, 0);
	sched_ready(&h.s, &hi->sq, t, t);
	sched_ready(&h.s, &lo->sq, t, t);
	assert_int_equal(sched_run(&h.s, t, false), 0);
	sched_run(&h.s, t + 1000 * MS, true);
	assert_false(lo->sq.pq.run);
	assert_int_equal(lo->sq.guard_runs, 0);
	host_fini(&h);

	/* Share-based policies bound waits themselves: no grant. */
	host_init(&h, "bandwidth", 10, 0);
	hi = host_add(&h, 0, 10);
	lo = host_add(&h, 0, 0);
	sched_ready(&h.s, &hi->sq, t, t);
	sched_ready(&h.s, &lo->sq, t, t);
	for (uint64_t at = t; at < t + 300 * MS; at += 5 * MS)
		sched_run(&h.s, at, true);
	assert_int_equal(lo->sq.guard_runs + hi->sq.guard_runs, 0);
	host_fini(&h);
}

/* A ready queue waiting on another lends it its priority, transitively and
 * across devices; it is given back once the wait ends. */
static void sched_inheritance(void **state)
{
	struct host h;
	struct fq *hi, *mid, *lo, *lo2;

	(void)state;
	host_init(&h, "hpf", 0, 0);
	hi = host_add(&h, 0, 20);
	mid = host_add(&h, 1, 10);
	lo = host_add(&h, 1, 0);
	lo2 = host_add(&h, 1, -5);
	sched_ready(&h.s, &mid->sq, 1, 1);
	sched_ready(&h.s, &lo->sq, 1, 1);
	sched_ready(&h.s, &lo2->sq, 1, 1);
	sched_run(&h.s, 2, false);
	assert_true(mid->sq.pq.run && !lo->sq.pq.run && !lo2->sq.pq.run);
	/* hi (device 0) waits on lo, which waits on lo2 (device 1). */
	sched_ready(&h.s, &hi->sq, 3, 3);
	hi->waits_on = 2;
	sched_waits(&h.s, &hi->sq, true);
	lo->waits_on = 3;
	sched_waits(&h.s, &lo->sq, true);
	sched_run(&h.s, 4, false);
	assert_int_equal(lo->sq.pq.priority, 20);
	assert_int_equal(lo2->sq.pq.priority, 20);
	assert_true(lo->sq.pq.run && lo2->sq.pq.run && !mid->sq.pq.run);
	/* The waits end: priorities come back, and so does the decision. */
	sched_waits(&h.s, &hi->sq, false);
	sched_waits(&h.s, &lo->sq, false);
	sched_run(&h.s, 5, false);
	assert_int_equal(lo->sq.pq.priority, 0);
	assert_int_equal(lo2->sq.pq.priority, -5);
	assert_true(mid->sq.pq.run && !lo->sq.pq.run && !lo2->sq.pq.run);
	host_fini(&h);
}

/* Queues below the top priority of their device get the window cap. */
static void sched_contention_cap(void **state)
{
	struct host h;
	struct fq *hi, *lo, *other;
	struct sched_conf off = { .guard_period_ns = 100 * MS };

	(void)state;
	host_init(&h, "hpf", 0, 2);
	hi = host_add(&h, 0, 10);
	lo = host_add(&h, 0, 0);
	other = host_add(&h, 1, 0);
	sched_run(&h.s, 1, false);
	assert_int_equal(hi->sq.cap, 0);
	assert_int_equal(lo->sq.cap, 2);
	assert_int_equal(other->sq.cap, 0);      /* alone on its device */
	/* A hint change moves it. */
	lo->sq.own_priority = 30;
	sched_hints(&h.s, &lo->sq);
	sched_run(&h.s, 2, false);
	assert_int_equal(hi->sq.cap, 2);
	assert_int_equal(lo->sq.cap, 0);
	sched_set_conf(&h.s, &off);
	sched_run(&h.s, 3, false);
	assert_int_equal(hi->sq.cap, 0);
	host_fini(&h);
}

/* Quiet flags: raised as the policy allows, cleared (and the status read
 * again) first thing at the next decision of the domain, and not offered
 * in a domain of more than SCHED_QUIET_MAX queues. */
static void sched_quiet_flags(void **state)
{
	struct host h;
	struct fq *a, *b, *c;

	(void)state;
	host_init(&h, "hpf", 0, 0);
	a = host_add(&h, 0, 0);
	b = host_add(&h, 0, 0);
	c = host_add(&h, 1, 5);
	sched_run(&h.s, 1, false);
	assert_true(a->quiet && b->quiet && c->quiet);
	host_clear(&h);
	sched_touch(&h.s, &a->sq);
	sched_run(&h.s, 2, false);
	assert_true(a->refreshes == 1 && b->refreshes == 1 && c->refreshes == 0);
	/* A higher queue ready: the lower one is held, so neither is quiet. */
	b->sq.own_priority = 9;
	sched_hints(&h.s, &b->sq);
	sched_ready(&h.s, &b->sq, 3, 3);
	sched_run(&h.s, 3, false);
	assert_false(a->quiet);
	assert_false(b->quiet);
	host_fini(&h);

	host_init(&h, "hpf", 0, 0);
	for (int i = 0; i <= SCHED_QUIET_MAX; i++)
		host_add(&h, 0, 0);
	sched_run(&h.s, 1, false);
	for (int i = 0; i <= SCHED_QUIET_MAX; i++)
		assert_false(h.q[i].quiet);
	host_fini(&h);
}

/* A queue stopped with work in flight that drained before it saw the
 * decision gets its domain decided again at once; one held with nothing
 * in flight is not loaded again until its decision or status changes. */
static void sched_drain_and_frozen(void **state)
{
	struct host h;
	struct fq *hi, *lo;
	uint64_t next;

	(void)state;
	host_init(&h, "hpf", 0, 0);
	hi = host_add(&h, 0, 10);
	lo = host_add(&h, 0, 0);
	sched_ready(&h.s, &lo->sq, 1, 1);
	sched_run(&h.s, 1, false);
	lo->sq.pq.inflight = 3;     /* as its last load said */
	lo->left = 1;               /* and what is left once stopped */
	sched_ready(&h.s, &hi->sq, 2, 2);
	next = sched_run(&h.s, 2, false);
	assert_false(lo->sq.pq.run);
	assert_int_equal(next, 2);
	/* Drained to none: frozen, no more loads while held. */
	lo->left = 0;
	sched_touch(&h.s, &hi->sq);
	sched_run(&h.s, 3, false);
	assert_int_equal(lo->sq.pq.inflight, 0);
	host_clear(&h);
	for (uint64_t t = 4; t < 10; t++) {
		sched_touch(&h.s, &hi->sq);
		sched_run(&h.s, t, false);
	}
	assert_int_equal(lo->loads, 0);
	assert_int_equal(hi->loads, 6);
	/* Running again: loaded again. */
	sched_idle(&h.s, &hi->sq, 10);
	sched_run(&h.s, 10, false);
	assert_true(lo->sq.pq.run);
	sched_touch(&h.s, &lo->sq);
	sched_run(&h.s, 11, false);
	assert_true(lo->loads >= 1);
	host_fini(&h);
}

/* A policy's timer is per domain: a device whose time came is decided, the
 * other is not. */
static void sched_timer_per_domain(void **state)
{
	struct host h;
	struct fq *q[4];
	uint64_t next;

	(void)state;
	host_init(&h, "bandwidth", 0, 0);
	q[0] = host_add(&h, 0, 0);
	q[1] = host_add(&h, 0, 0);
	q[2] = host_add(&h, 1, 0);
	q[3] = host_add(&h, 1, 0);
	for (int i = 0; i < 2; i++)
		sched_ready(&h.s, &q[i]->sq, 1, 1);
	next = sched_run(&h.s, 1, false);
	assert_int_equal(next, 1 + 10 * MS);     /* half of the 20 ms slice */
	for (int i = 2; i < 4; i++)
		sched_ready(&h.s, &q[i]->sq, 5 * MS, 5 * MS);
	next = sched_run(&h.s, 5 * MS, false);
	assert_int_equal(next, 1 + 10 * MS);
	host_clear(&h);
	q[0]->sq.pq.service_ns = 10 * MS;       /* it used its turn */
	sched_run(&h.s, 1 + 10 * MS, false);
	/* Device 0's turn passed to its other queue; device 1's stayed. */
	assert_true(q[0]->applies == 1 && q[1]->applies == 1);
	assert_true(q[2]->applies == 0 && q[3]->applies == 0);
	assert_true(q[1]->sq.pq.run && !q[0]->sq.pq.run);
	host_fini(&h);
}

/* Refusing policies: a queue refused at add or at a switch runs
 * unscheduled, is told to the host, and removing it is harmless. */
static int refuse_add(void *st, struct xs_pqueue *q)
{
	(void)st;
	return q->id == 2 ? -ENOSPC : 0;
}

static uint64_t hold_all(void *st, struct xs_pqueue *const *qs, size_t n, uint64_t now)
{
	(void)st;
	(void)now;
	for (size_t i = 0; i < n; i++)
		qs[i]->run = false;
	return 0;
}

static const struct xs_policy_ops picky = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "picky",
	.queue_add = refuse_add,
	.schedule = hold_all,
};

static void sched_refusals(void **state)
{
	struct host h;
	struct fq *a, *b;

	(void)state;
	host_init(&h, "hpf", 0, 0);
	a = host_add(&h, 0, 0);
	b = host_add(&h, 0, 0);
	assert_int_equal(sched_set_policy(&h.s, &picky, NULL), 0);
	assert_int_equal(b->refused, 1);
	assert_false(b->sq.added);
	assert_true(a->sq.added);
	sched_run(&h.s, 1, false);
	assert_false(a->sq.pq.run);
	assert_true(b->sq.pq.run);
	sched_remove(&h.s, &b->sq);
	sched_remove(&h.s, &a->sq);
	assert_int_equal(h.s.n, 0);
	host_fini(&h);
}

#define US 1000ull

/*
 * The idle grace: once a foreground has shown its gaps (100 us), a gap
 * shorter than the learned grace (150 us) never lets the held background
 * run, nor tells the policy; an idle longer than it does, at the grace's
 * end; gaps longer than the cap are not learned; 0 turns it off.
 */
/*
 * Preemption cap 1: a foreground request of steps 0.6 ms long, 0.1 ms
 * apart, holds the ready background at its first step only; the next
 * steps let it run (free); a step after a gap longer than request_gap_ns
 * is a new request and holds it again. Without the cap, every step holds
 * it.
 */
static void cap_steps(uint32_t cap, bool *held, int nsteps)
{
	struct sched_conf c = { .guard_period_ns = 100 * MS, .preempt_cap = cap,
				.request_gap_ns = 1000 * US };
	uint64_t t = 10 * MS;
	struct fq *fg, *bg;
	struct host h;

	host_init(&h, "hpf", 0, 0);
	sched_set_conf(&h.s, &c);
	fg = host_add(&h, 0, 10);
	bg = host_add(&h, 0, 0);
	sched_ready(&h.s, &bg->sq, t, t);
	sched_run(&h.s, t, false);
	for (int k = 0; k < nsteps; k++) {
		/* Step 3 comes after a long gap: a new request. */
		t += k == 3 ? 5 * MS : 100 * US;
		sched_ready(&h.s, &fg->sq, t, t);
		sched_run(&h.s, t, false);
		held[k] = !bg->sq.pq.run;
		assert_true(fg->sq.pq.run);
		t += 600 * US;
		sched_idle(&h.s, &fg->sq, t);
		sched_run(&h.s, t, false);
		assert_true(bg->sq.pq.run);
	}
	host_fini(&h);
}

static void sched_preempt_cap(void **state)
{
	bool held[5];

	(void)state;
	cap_steps(1, held, 5);
	assert_true(held[0]);
	assert_false(held[1]);
	assert_false(held[2]);
	assert_true(held[3]);
	assert_false(held[4]);
	cap_steps(0, held, 5);
	for (int k = 0; k < 5; k++)
		assert_true(held[k]);
	cap_steps(2, held, 5);
	assert_true(held[0] && held[1] && !held[2] && held[3] && held[4]);
}

static void sched_idle_grace(void **state)
{
	struct sched_conf c = { .guard_period_ns = 100 * MS, .grace_max_ns = 1000 * US };
	uint64_t t = 10 * MS, next;
	struct fq *fg, *bg;
	struct host h;

	(void)state;
	host_init(&h, "hpf", 0, 0);
	sched_set_conf(&h.s, &c);
	fg = host_add(&h, 0, 10);
	bg = host_add(&h, 0, 0);
	sched_ready(&h.s, &bg->sq, t, t);
	sched_ready(&h.s, &fg->sq, t, t);
	sched_run(&h.s, t, false);
	assert_false(bg->sq.pq.run);
	/* Learning: the first SCHED_GAPS_MIN gaps get no grace. */
	for (int k = 0; k < SCHED_GAPS_MIN; k++) {
		t += MS;
		sched_idle(&h.s, &fg->sq, t);
		sched_run(&h.s, t, false);
		assert_true(bg->sq.pq.run);
		t += 100 * US;
		sched_ready(&h.s, &fg->sq, t, t);
		sched_run(&h.s, t, false);
		assert_false(bg->sq.pq.run);
	}
	assert_int_equal(sched_grace_of(&fg->sq, c.grace_max_ns), 150000);
	/* A gap shorter than the grace: the background stays held. */
	t += MS;
	sched_idle(&h.s, &fg->sq, t);
	next = sched_run(&h.s, t, false);
	assert_false(bg->sq.pq.run);
	assert_true(fg->sq.pq.ready && !fg->sq.ready);
	assert_int_equal(next, t + 150000);
	sched_run(&h.s, t + 50 * US, true);
	assert_false(bg->sq.pq.run);
	sched_ready(&h.s, &fg->sq, t + 60 * US, t + 60 * US);
	sched_run(&h.s, t + 60 * US, false);
	assert_false(bg->sq.pq.run);
	assert_int_equal(fg->sq.graces, 1);
	assert_int_equal(fg->sq.grace_hits, 1);
	/* Idle past the grace: the background runs once it ends. */
	t += MS;
	sched_idle(&h.s, &fg->sq, t);
	next = sched_run(&h.s, t, false);
	assert_false(bg->sq.pq.run);
	sched_run(&h.s, next - 1, true);
	assert_false(bg->sq.pq.run);
	sched_run(&h.s, next, false);
	assert_true(bg->sq.pq.run);
	assert_false(fg->sq.pq.ready);
	assert_int_equal(fg->sq.grace_hits, 1);
	/* 0 turns it off: resumed at the Idle. */
	c.grace_max_ns = 0;
	sched_set_conf(&h.s, &c);
	t += MS;
	sched_ready(&h.s, &fg->sq, t, t);
	sched_run(&h.s, t, false);
	assert_false(bg->sq.pq.run);
	sched_idle(&h.s, &fg->sq, t + 10 * US);
	sched_run(&h.s, t + 10 * US, false);
	assert_true(bg->sq.pq.run);
	host_fini(&h);

	/* Gaps over the cap (5 ms, between tasks) teach nothing. */
	c.grace_max_ns = 1000 * US;
	host_init(&h, "hpf", 0, 0);
	sched_set_conf(&h.s, &c);
	fg = host_add(&h, 0, 10);
	bg = host_add(&h, 0, 0);
	sched_ready(&h.s, &bg->sq, t, t);
	for (int k = 0; k < 2 * SCHED_GAPS; k++) {
		sched_ready(&h.s, &fg->sq, t, t);
		sched_run(&h.s, t, false);
		t += MS;
		sched_idle(&h.s, &fg->sq, t);
		sched_run(&h.s, t, false);
		assert_true(bg->sq.pq.run);
		t += 5 * MS;
	}
	assert_int_equal(fg->sq.graces, 0);
	host_fini(&h);
}

/* --- local mode: the same core in one process ----------------------------- */

#ifndef LENV_LEVEL
#define LENV_LEVEL 1
#endif

struct lenv {
	struct sim_dev *dev;
	char name[64];
	xs_hwq *hwq;
	xs_queue *hi, *lo;
};

static xs_queue *lenv_queue(struct lenv *e, int64_t prio)
{
	xs_queue *q = NULL;

	assert_int_equal(xs_queue_create(e->hwq, NULL, &q), 0);
	assert_int_equal(xs_queue_set_hint(q, XS_HINT_PRIORITY, prio), 0);
	return q;
}

static void lenv_submit(xs_queue *q, int n, uint64_t us, uint64_t *seq)
{
	for (int i = 0; i < n; i++) {
		xs_cmd *c = NULL;

		assert_int_equal(xs_sim_kernel(us * 1000, &c), 0);
		assert_int_equal(xs_submit(q, c, seq), 0);
	}
}

static xs_queue_stats lenv_stats(xs_queue *q)
{
	xs_queue_stats st;

	assert_int_equal(xs_queue_stats_get(q, &st), 0);
	return st;
}

/* Waits up to @ms for @q to be suspended; false if it never is. */
static bool lenv_wait_suspended(xs_queue *q, unsigned ms)
{
	uint64_t t0 = clock_now_ns();

	while (clock_now_ns() - t0 < ms * MS) {
		if (lenv_stats(q).suspended)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * A priority-0 queue next to a priority-5 flood of 2 s, local mode, guard
 * period 100 ms: with the guard (the default) the low queue's command runs
 * long before the flood ends; with XSCHED_STARVATION_GUARD_PCT=0 it runs
 * only after the flood is done.
 */
static void local_guard(bool on)
{
	struct sim_dev_opts o = { .arbitration = SIM_ARB_RR, .level_max = LENV_LEVEL };
	struct lenv e = { 0 };
	uint64_t seq_hi = 0, seq_lo = 0;
	xs_queue_stats hs;
	const int flood = 200;

	alarm(60);
	setenv("XSCHED_SCHEDULER", "local", 1);
	setenv("XSCHED_STARVATION_PERIOD_MS", "100", 1);
	if (!on)
		setenv("XSCHED_STARVATION_GUARD_PCT", "0", 1);
	snprintf(e.name, sizeof(e.name), "%s", test_dev(on ? "lguard" : "lnoguard"));
	assert_int_equal(sim_dev_open(e.name, &o, &e.dev), 0);
	assert_int_equal(xs_sim_hwq_create(e.name, &e.hwq), 0);
	e.hi = lenv_queue(&e, 5);
	e.lo = lenv_queue(&e, 0);
	lenv_submit(e.hi, flood, 10000, &seq_hi);
	/* Submit once the policy holds it, or it may slip in first. */
	assert_true(lenv_wait_suspended(e.lo, 5000));
	lenv_submit(e.lo, 1, 1000, &seq_lo);
	assert_int_equal(xs_wait(e.lo, seq_lo), 0);
	hs = lenv_stats(e.hi);
	print_message("low queue ran with %llu of %d flood commands done\n",
		      (unsigned long long)hs.completed, flood);
	if (on)
		assert_true(hs.completed < (uint64_t)flood / 2);
	else
		assert_int_equal(hs.completed, flood);
	assert_int_equal(xs_wait(e.hi, seq_hi), 0);
	assert_int_equal(xs_queue_destroy(e.lo, XS_DESTROY_DRAIN), 0);
	assert_int_equal(xs_queue_destroy(e.hi, XS_DESTROY_DRAIN), 0);
	xs_hwq_destroy(e.hwq);
	sim_dev_close(e.dev);
	sim_dev_unlink(e.name);
	alarm(0);
}

static void local_starvation_guard(void **state)
{
	(void)state;
	local_guard(true);
}

static void local_starvation_guard_off(void **state)
{
	(void)state;
	local_guard(false);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sched_per_device_domains),
	cmocka_unit_test(sched_cross_device_one_domain),
	cmocka_unit_test(sched_starvation_guard),
	cmocka_unit_test(sched_inheritance),
	cmocka_unit_test(sched_contention_cap),
	cmocka_unit_test(sched_quiet_flags),
	cmocka_unit_test(sched_drain_and_frozen),
	cmocka_unit_test(sched_timer_per_domain),
	cmocka_unit_test(sched_refusals),
	cmocka_unit_test(sched_idle_grace),
	cmocka_unit_test(sched_preempt_cap),
	cmocka_unit_test(local_starvation_guard),
	cmocka_unit_test(local_starvation_guard_off),
};

TU_MAIN(tests)
