/*
 * Scheduling policies (src/policy): every built-in policy as plain
 * functions over fake queues, the registry and the loader of policy
 * modules. No process, device or real clock is involved.
 *
 * A tiny simulator stands in for the daemon: an array of struct xs_pqueue,
 * a virtual clock advanced in steps, service_ns credited to every ready
 * queue the policy lets run (split evenly when several run on one device),
 * and schedule() called after every event and whenever the time it last
 * returned is reached, as xschedd does. Shares are measured over windows
 * of virtual time, so the results are exact and deterministic.
 */
#include "test_util.h"

#include "base/compiler.h"
#include "policy/policy_builtin.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#define MS 1000000ull
#define SIM_MAX 8
#define SIM_DEVS 4

struct sim {
	const struct xs_policy_ops *ops;
	void *state;
	struct xs_pqueue q[SIM_MAX];
	struct xs_pqueue *qp[SIM_MAX];
	size_t n;
	uint64_t now;
	uint64_t wake;          /* what schedule() last returned */
	unsigned calls;         /* schedule() calls */
	unsigned switches;      /* changes of the running ready set */
	bool exclusive;         /* assert one running ready entity per device */
	bool by_client;         /* ...where an entity is a client */
	uint32_t last_mask;
};

static void sim_init(struct sim *s, const char *policy,
		     const struct xs_policy_conf *conf)
{
	memset(s, 0, sizeof(*s));
	s->ops = policy_find(policy);
	assert_non_null(s->ops);
	if (s->ops->init)
		assert_int_equal(s->ops->init(&s->state, conf), 0);
	s->now = 1000 * MS;
}

/* A conf with the given tunables (0: default). */
static struct xs_policy_conf mkconf(uint32_t k, uint64_t slice, bool per_process)
{
	struct xs_policy_conf c = {
		.size = sizeof(c),
		.edf_k = k,
		.slice_ns = slice,
		.per_process = per_process,
	};

	return c;
}

/* Adds an idle queue; returns its index. */
static int sim_add(struct sim *s, uint32_t dev, uint64_t client, int32_t prio,
		   int64_t share)
{
	struct xs_pqueue *q = &s->q[s->n];

	assert_true(s->n < SIM_MAX);
	memset(q, 0, sizeof(*q));
	q->id = 100 + s->n;
	q->client = client;
	q->device = dev;
	q->pid = (int32_t)(1000 + client);
	q->priority = prio;
	q->share = share;
	q->run = true;
	s->qp[s->n] = q;
	if (s->ops->queue_add)
		assert_int_equal(s->ops->queue_add(s->state, q), 0);
	return (int)s->n++;
}

/* Running ready queues, as a bit mask. */
static uint32_t sim_mask(const struct sim *s)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->q[i].ready && s->q[i].run)
			m |= 1u << i;
	return m;
}

static void sim_check_exclusive(const struct sim *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		for (j = i + 1; j < s->n; j++) {
			const struct xs_pqueue *a = &s->q[i], *b = &s->q[j];

			if (a->device != b->device || !a->ready || !b->ready ||
			    !a->run || !b->run)
				continue;
			if (s->by_client && a->client == b->client)
				continue;
			fail_msg("queues %zu and %zu run together", i, j);
		}
	}
}

static void sim_sched(struct sim *s)
{
	uint32_t m;

	s->wake = s->ops->schedule(s->state, s->qp, s->n, s->now);
	s->calls++;
	if (s->wake)
		assert_true(s->wake > s->now);
	m = sim_mask(s);
	if (m != s->last_mask)
		s->switches++;
	s->last_mask = m;
	if (s->exclusive)
		sim_check_exclusive(s);
}

/* An event: queue @i becomes ready or idle; the daemon then decides. */
static void sim_ready(struct sim *s, int i, bool ready)
{
	struct xs_pqueue *q = &s->q[i];

	q->ready = ready;
	if (ready) {
		q->ready_ns = s->now;
		if (s->ops->queue_ready)
			s->ops->queue_ready(s->state, q, s->now);
	} else if (s->ops->queue_idle) {
		s->ops->queue_idle(s->state, q, s->now);
	}
	sim_sched(s);
}

/* Advances time by @dt, crediting device time, then honours the wake-up. */
static void sim_step(struct sim *s, uint64_t dt)
{
	unsigned cnt[SIM_DEVS] = { 0 };
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->q[i].ready && s->q[i].run)
			cnt[s->q[i].device]++;
	for (i = 0; i < s->n; i++)
		if (s->q[i].ready && s->q[i].run)
			s->q[i].service_ns += dt / cnt[s->q[i].device];
	s->now += dt;
	if (s->wake && s->now >= s->wake)
		sim_sched(s);
}

static void sim_run(struct sim *s, uint64_t dur)
{
	uint64_t end = s->now + dur;

	while (s->now < end)
		sim_step(s, MS);
}

/* Queue @i is gone: the policy forgets it, the last one takes its slot. */
static void sim_remove(struct sim *s, int i)
{
	if (s->ops->queue_remove)
		s->ops->queue_remove(s->state, &s->q[i]);
	assert_null(s->q[i].pdata);
	s->n--;
	if ((size_t)i != s->n)
		s->q[i] = s->q[s->n];
	sim_sched(s);
}

static void sim_fini(struct sim *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->ops->queue_remove)
			s->ops->queue_remove(s->state, &s->q[i]);
		assert_null(s->q[i].pdata);
	}
	if (s->ops->fini)
		s->ops->fini(s->state);
}

/* Percentage of @a in @a + @b. */
static double pct(uint64_t a, uint64_t b)
{
	return a + b ? 100.0 * (double)a / (double)(a + b) : 0;
}

static void assert_near(double v, double want, double tol)
{
	if (v < want - tol || v > want + tol)
		fail_msg("%.3f not within %.3f of %.3f", v, tol, want);
}

static void assert_run(const struct sim *s, int i, bool run)
{
	if (s->q[i].run != run)
		fail_msg("queue %d: run %d, expected %d", i, s->q[i].run, run);
}

/* ---- registry ---- */

static void registry_find_all(void **st)
{
	const char *const *names = policy_names();
	const char *want[] = { "hpf", "hhpf", "bandwidth", "edf", "laxity", "fair" };
	size_t i;

	(void)st;
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		const struct xs_policy_ops *ops = policy_find(want[i]);

		assert_non_null(ops);
		assert_string_equal(ops->name, want[i]);
		assert_string_equal(names[i], want[i]);
		assert_int_equal(ops->version, XS_POLICY_VERSION);
		assert_int_equal(ops->size, sizeof(struct xs_policy_ops));
		assert_non_null(ops->schedule);
		/* State and pdata come and go together. */
		assert_true(!ops->init == !ops->fini);
		assert_true(!ops->queue_add == !ops->queue_remove);
	}
	assert_null(names[i]);
	assert_string_equal(names[0], POLICY_DEFAULT);
}

static void registry_unknown(void **st)
{
	(void)st;
	assert_null(policy_find("nope"));
	assert_null(policy_find(""));
	assert_null(policy_find("HPF"));
	assert_null(policy_find(NULL));
}

/* Zero and short confs mean defaults; values are clamped. */
static void registry_conf_defaults(void **st)
{
	struct xs_policy_conf c = mkconf(3, 5 * MS, true);
	struct policy_conf pc;

	(void)st;
	policy_conf_resolve(&pc, NULL, 7);
	assert_int_equal(pc.edf_k, 1);
	assert_int_equal(pc.slice_ns, 7);
	assert_int_equal(pc.default_share, 100);
	assert_false(pc.per_process);
	policy_conf_resolve(&pc, &c, 7);
	assert_int_equal(pc.edf_k, 3);
	assert_int_equal(pc.slice_ns, 5 * MS);
	assert_true(pc.per_process);
	/* A conf from an older daemon that ends after edf_k. */
	c.size = offsetof(struct xs_policy_conf, slice_ns);
	policy_conf_resolve(&pc, &c, 7);
	assert_int_equal(pc.edf_k, 3);
	assert_int_equal(pc.slice_ns, 7);
	assert_false(pc.per_process);
	c = mkconf(0, 1, false);
	c.default_share = 1ll << 40;
	policy_conf_resolve(&pc, &c, 7);
	assert_int_equal(pc.slice_ns, POLICY_SLICE_MIN_NS);
	assert_int_equal(pc.default_share, POLICY_SHARE_MAX);
}

/* ---- hpf / hhpf ---- */

static void hpf_per_device(void **st)
{
	struct sim s;
	int a, b, c, d;

	(void)st;
	sim_init(&s, "hpf", NULL);
	a = sim_add(&s, 0, 1, 10, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	c = sim_add(&s, 1, 3, 0, 0);
	d = sim_add(&s, 1, 4, -5, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_ready(&s, c, true);
	sim_ready(&s, d, true);
	assert_int_equal(s.wake, 0);
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	/* The high queue of device 0 does not touch device 1. */
	assert_run(&s, c, true);
	assert_run(&s, d, false);
	sim_ready(&s, a, false);
	assert_run(&s, b, true);
	sim_ready(&s, c, false);
	assert_run(&s, d, true);
	sim_fini(&s);
}

static void hpf_ties_run_together(void **st)
{
	struct sim s;
	int a, b, c;

	(void)st;
	sim_init(&s, "hpf", NULL);
	a = sim_add(&s, 0, 1, 5, 0);
	b = sim_add(&s, 0, 2, 5, 0);
	c = sim_add(&s, 0, 3, 4, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_ready(&s, c, true);
	assert_run(&s, a, true);
	assert_run(&s, b, true);
	assert_run(&s, c, false);
	sim_fini(&s);
}

/* An idle low queue is suspended before it submits; an idle high one is not. */
static void hpf_idle_presuspended(void **st)
{
	struct sim s;
	int hi, lo, top;

	(void)st;
	sim_init(&s, "hpf", NULL);
	hi = sim_add(&s, 0, 1, 10, 0);
	lo = sim_add(&s, 0, 2, 0, 0);
	top = sim_add(&s, 0, 3, 20, 0);
	sim_ready(&s, hi, true);
	assert_run(&s, hi, true);
	assert_run(&s, lo, false);
	assert_run(&s, top, true);
	/* lo becomes ready: it already was suspended, nothing to undo. */
	sim_ready(&s, lo, true);
	assert_run(&s, lo, false);
	sim_ready(&s, top, true);
	assert_run(&s, hi, false);
	assert_run(&s, lo, false);
	assert_run(&s, top, true);
	sim_fini(&s);
}

static void hpf_all_idle_run(void **st)
{
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "hpf", NULL);
	a = sim_add(&s, 0, 1, 10, 0);
	b = sim_add(&s, 0, 2, -100, 0);
	sim_ready(&s, a, true);
	assert_run(&s, b, false);
	sim_ready(&s, a, false);
	assert_run(&s, a, true);
	assert_run(&s, b, true);
	sim_fini(&s);
}

static void hhpf_across_devices(void **st)
{
	struct sim s;
	int a, b, c, d;

	(void)st;
	sim_init(&s, "hhpf", NULL);
	a = sim_add(&s, 0, 1, 5, 0);
	b = sim_add(&s, 1, 2, 1, 0);
	c = sim_add(&s, 1, 3, 5, 0);
	d = sim_add(&s, 2, 4, 0, 0);
	sim_ready(&s, b, true);
	assert_run(&s, b, true);
	assert_run(&s, d, false);       /* idle, below b */
	sim_ready(&s, a, true);
	/* a on device 0 suspends lower queues on every device. */
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	assert_run(&s, c, true);        /* idle, equal to a */
	assert_run(&s, d, false);
	sim_ready(&s, c, true);
	assert_run(&s, a, true);
	assert_run(&s, c, true);
	sim_ready(&s, a, false);
	sim_ready(&s, c, false);
	assert_run(&s, b, true);
	assert_run(&s, a, true);
	sim_ready(&s, b, false);
	assert_run(&s, d, true);
	assert_int_equal(s.wake, 0);
	sim_fini(&s);
}

/*
 * Which queues may skip their doorbells (quiet): under hpf, those with no
 * lower-priority queue beside them while everything runs; under hhpf the
 * same across devices; under a policy without quiet(), a single running
 * queue only.
 */
static bool sim_quiet(struct sim *s, int i)
{
	bool quiet[SIM_MAX];

	policy_quiet(s->ops, s->state, s->qp, s->n, quiet);
	return quiet[i];
}

static void hpf_quiet_rule(void **st)
{
	struct sim h, hh, b;
	int a, c, l, x;

	(void)st;
	sim_init(&h, "hpf", NULL);
	a = sim_add(&h, 0, 1, 5, 0);
	sim_ready(&h, a, false);
	assert_true(sim_quiet(&h, a));           /* alone */
	c = sim_add(&h, 0, 1, 5, 0);
	sim_ready(&h, a, true);
	assert_true(sim_quiet(&h, a));           /* equal ones run together */
	assert_true(sim_quiet(&h, c));
	l = sim_add(&h, 0, 2, 1, 0);
	x = sim_add(&h, 1, 3, -5, 0);
	sim_ready(&h, a, false);
	/* a and c would suspend l: they must ring; l may not be suspended
	 * by anyone quiet, so it may skip; x is alone on its device. */
	assert_false(sim_quiet(&h, a));
	assert_false(sim_quiet(&h, c));
	assert_true(sim_quiet(&h, l));
	assert_true(sim_quiet(&h, x));
	sim_ready(&h, a, true);
	assert_run(&h, l, false);
	assert_false(sim_quiet(&h, l));         /* suspended: its changes matter */
	assert_false(sim_quiet(&h, a));
	sim_fini(&h);

	sim_init(&hh, "hhpf", NULL);
	a = sim_add(&hh, 0, 1, 5, 0);
	x = sim_add(&hh, 1, 3, -5, 0);
	sim_ready(&hh, a, false);
	assert_false(sim_quiet(&hh, a));         /* x is lower, on another device */
	assert_true(sim_quiet(&hh, x));
	sim_fini(&hh);

	sim_init(&b, "bandwidth", NULL);
	a = sim_add(&b, 0, 1, 0, 50);
	sim_ready(&b, a, true);
	assert_true(sim_quiet(&b, a));
	c = sim_add(&b, 0, 2, 0, 50);
	sim_ready(&b, c, true);
	assert_false(sim_quiet(&b, a));
	assert_false(sim_quiet(&b, c));
	sim_fini(&b);
}

/* hpf and hhpf differ exactly where devices do. */
static void hpf_vs_hhpf(void **st)
{
	struct sim h, hh;
	int i;

	(void)st;
	sim_init(&h, "hpf", NULL);
	sim_init(&hh, "hhpf", NULL);
	for (i = 0; i < 2; i++) {
		struct sim *s = i ? &hh : &h;

		sim_add(s, 0, 1, 10, 0);
		sim_add(s, 1, 2, 0, 0);
		sim_ready(s, 0, true);
		sim_ready(s, 1, true);
	}
	assert_run(&h, 1, true);
	assert_run(&hh, 1, false);
	sim_fini(&h);
	sim_fini(&hh);
}

/* ---- bandwidth ---- */

/* Two queues with shares @sa, @sb, always ready: A's percentage over 10 s. */
static double bw_two(int64_t sa, int64_t sb, uint64_t slice)
{
	struct xs_policy_conf c = mkconf(0, slice, false);
	struct sim s;
	uint64_t a0, b0;
	double p;
	int a, b;

	sim_init(&s, "bandwidth", &c);
	s.exclusive = true;
	a = sim_add(&s, 0, 1, 0, sa);
	b = sim_add(&s, 0, 2, 0, sb);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	sim_run(&s, 10000 * MS);
	p = pct(s.q[a].service_ns - a0, s.q[b].service_ns - b0);
	/* Slices were used, not per-step thrashing. */
	assert_true(s.switches < 10000 * MS / slice * 2 + 4);
	sim_fini(&s);
	return p;
}

static void bw_75_25(void **st)
{
	(void)st;
	assert_near(bw_two(75, 25, 20 * MS), 75, 1);
}

static void bw_50_50(void **st)
{
	(void)st;
	/* Default share on both. */
	assert_near(bw_two(0, 0, 20 * MS), 50, 1);
}

static void bw_90_10(void **st)
{
	(void)st;
	assert_near(bw_two(900, 100, 20 * MS), 90, 1);
}

/* Quanta that are not whole steps: overshoot turns into debt, shares hold. */
static void bw_uneven_slices(void **st)
{
	(void)st;
	assert_near(bw_two(2, 1, 7 * MS + 300000), 100.0 * 2 / 3, 1);
}

/* Turn lengths: slice * w / W, returned as the wake-up; conf 0 is 20 ms. */
static void bw_turns_and_wakeup(void **st)
{
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "bandwidth", NULL);
	a = sim_add(&s, 0, 1, 0, 300);
	b = sim_add(&s, 0, 2, 0, 100);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	/* Neither had a turn: the lower id goes first. */
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	assert_int_equal(s.wake, s.now + 15 * MS);
	sim_run(&s, 15 * MS);
	assert_run(&s, a, false);
	assert_run(&s, b, true);
	assert_int_equal(s.wake, s.now + 5 * MS);
	sim_run(&s, 5 * MS);
	assert_run(&s, a, true);
	sim_fini(&s);
}

/* Steps @s until queue @i stops running; fails after @max_ms. */
static void sim_until_stopped(struct sim *s, int i, unsigned max_ms)
{
	while (s->q[i].run) {
		assert_true(max_ms-- > 0);
		sim_step(s, MS);
	}
}

/*
 * Switch-over (policy_drain_hold): the next holder waits while the previous
 * one still has more than one command in flight, until it drains (its
 * doorbell) or POLICY_DRAIN_MAX_NS from the new turn's start.
 */
static void drain_switch_over(const char *policy)
{
	struct sim s;
	int a, b;

	sim_init(&s, policy, NULL);
	a = sim_add(&s, 0, 1, 0, 100);
	b = sim_add(&s, 0, 2, 0, 100);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	/* a's turn ends with three commands in flight: b waits for them. */
	s.q[a].inflight = 3;
	sim_until_stopped(&s, a, 100);
	assert_run(&s, b, false);
	assert_int_equal(s.wake, s.now + POLICY_DRAIN_MAX_NS);
	sim_step(&s, MS);
	assert_run(&s, a, false);
	assert_run(&s, b, false);
	/* Down to one: a's doorbell, and b runs. */
	s.q[a].inflight = 1;
	sim_sched(&s);
	assert_run(&s, a, false);
	assert_run(&s, b, true);
	/* b's work never drains: a waits no longer than the limit. */
	s.q[b].inflight = 5;
	sim_until_stopped(&s, b, 100);
	assert_run(&s, a, false);
	assert_int_equal(s.wake, s.now + POLICY_DRAIN_MAX_NS);
	sim_run(&s, POLICY_DRAIN_MAX_NS - MS);
	assert_run(&s, a, false);
	sim_step(&s, MS);
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	/* Queues that say nothing of their work in flight (0) never wait. */
	s.q[a].inflight = s.q[b].inflight = 0;
	sim_until_stopped(&s, a, 100);
	assert_run(&s, b, true);
	sim_fini(&s);
}

/* [policy] drain_ms: the wait's limit, or none at all. */
static void bw_drain_conf(void **st)
{
	struct xs_policy_conf c = mkconf(0, 0, false);
	uint64_t limit[] = { 10 * MS, XS_DRAIN_NONE };
	struct sim s;
	unsigned k;
	int a, b;

	(void)st;
	for (k = 0; k < 2; k++) {
		c.drain_ns = limit[k];
		sim_init(&s, "bandwidth", &c);
		a = sim_add(&s, 0, 1, 0, 100);
		b = sim_add(&s, 0, 2, 0, 100);
		sim_ready(&s, a, true);
		sim_ready(&s, b, true);
		s.q[a].inflight = 3;
		sim_until_stopped(&s, a, 100);
		if (limit[k] == XS_DRAIN_NONE) {
			assert_run(&s, b, true);
		} else {
			assert_run(&s, b, false);
			assert_int_equal(s.wake, s.now + limit[k]);
		}
		sim_fini(&s);
	}
}

static void bw_drain_switch_over(void **st)
{
	(void)st;
	drain_switch_over("bandwidth");
}

static void fair_drain_switch_over(void **st)
{
	(void)st;
	drain_switch_over("fair");
}

/* A queue idle for a while gets no more than its share when it returns. */
static void bw_idle_no_hoarding(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, false);
	uint64_t a0, b0;
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	s.exclusive = true;
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_run(&s, 1003 * MS);          /* b idles in the middle of a turn */
	sim_ready(&s, b, false);
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	sim_ready(&s, a, false);         /* nothing ready: all run */
	sim_run(&s, 500 * MS);
	sim_ready(&s, a, true);
	assert_run(&s, b, false);        /* idle, another one is ready */
	sim_run(&s, 2000 * MS);          /* a alone, b accrues nothing */
	sim_ready(&s, b, true);
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	sim_run(&s, 1000 * MS);
	assert_near(pct(s.q[b].service_ns - b0, s.q[a].service_ns - a0), 50, 1);
	/* And at no point more than one extra turn ahead. */
	sim_run(&s, 7 * MS);
	assert_true(s.q[b].service_ns - b0 <= s.q[a].service_ns - a0 + 10 * MS);
	sim_fini(&s);
}

/* A queue that overruns its turn pays the overshoot back on its next turns. */
static void bw_overrun_debt(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, false);
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	assert_run(&s, a, true);
	assert_int_equal(s.wake, s.now + 10 * MS);
	/* The daemon is late by 5 ms: a used 15 ms of its 10. */
	s.q[a].service_ns += 15 * MS;
	s.now += 15 * MS;
	sim_sched(&s);
	assert_run(&s, a, false);
	assert_run(&s, b, true);
	assert_int_equal(s.wake, s.now + 10 * MS);
	/* Suspended, a still completes 2 ms of in-flight work: charged too. */
	s.q[b].service_ns += 10 * MS;
	s.q[a].service_ns += 2 * MS;
	s.now += 10 * MS;
	sim_sched(&s);
	assert_run(&s, a, true);
	assert_int_equal(s.wake, s.now + 3 * MS);      /* 10 - 5 - 2 */
	sim_fini(&s);
}

/* A debt of several quanta skips turns; the long-run split still holds. */
static void bw_deep_debt(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, false);
	uint64_t a0, b0;
	struct sim s;
	int a, b, turns_b = 0;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	s.q[a].service_ns += 45 * MS;   /* 35 ms over its 10 ms quantum */
	s.now += 45 * MS;
	sim_sched(&s);
	/* b runs turns until a's debt is paid: 10 + 3 skipped rounds. */
	while (s.q[b].run) {
		turns_b++;
		sim_run(&s, 10 * MS);
	}
	assert_int_equal(turns_b, 4);
	assert_int_equal(s.wake, s.now + 5 * MS);
	sim_run(&s, 995 * MS);
	assert_near(pct(s.q[a].service_ns - a0, s.q[b].service_ns - b0), 50, 1);
	sim_fini(&s);
}

/* One ready queue runs unsliced; its solo time is not charged. */
static void bw_single_unsliced(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, false);
	uint64_t a0, b0;
	struct sim s;
	unsigned calls;
	int a, b;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	a = sim_add(&s, 0, 1, 0, 300);
	b = sim_add(&s, 0, 2, 0, 100);
	sim_ready(&s, a, true);
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	assert_int_equal(s.wake, 0);
	calls = s.calls;
	sim_run(&s, 1000 * MS);
	assert_int_equal(s.calls, calls);       /* no slice timer */
	assert_int_equal(s.q[a].service_ns, 1000 * MS);
	sim_ready(&s, b, true);
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	sim_run(&s, 2000 * MS);
	assert_near(pct(s.q[a].service_ns - a0, s.q[b].service_ns - b0), 75, 1);
	sim_fini(&s);
}

/* Devices are partitioned independently. */
static void bw_two_devices(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, false);
	struct sim s;
	int a, b, x, y;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	s.exclusive = true;
	a = sim_add(&s, 0, 1, 0, 75);
	b = sim_add(&s, 0, 2, 0, 25);
	x = sim_add(&s, 1, 1, 0, 10);
	y = sim_add(&s, 1, 2, 0, 90);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_ready(&s, x, true);
	sim_ready(&s, y, true);
	sim_run(&s, 4000 * MS);
	assert_near(pct(s.q[a].service_ns, s.q[b].service_ns), 75, 1);
	assert_near(pct(s.q[x].service_ns, s.q[y].service_ns), 10, 1);
	sim_fini(&s);
}

/* Per process: 2 processes x 2 queues, process weight = max share. */
static void bw_per_process(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, true);
	uint64_t p1, p2;
	struct sim s;
	int a, b, d, e, i;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	s.exclusive = true;
	s.by_client = true;
	a = sim_add(&s, 0, 1, 0, 300);
	b = sim_add(&s, 0, 1, 0, 100);
	d = sim_add(&s, 0, 2, 0, 100);
	e = sim_add(&s, 0, 2, 0, 0);    /* default 100 */
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_ready(&s, d, true);
	sim_ready(&s, e, true);
	for (i = 0; i < 10000; i++) {
		sim_step(&s, MS);
		/* The queues of one process run together. */
		assert_int_equal(s.q[a].run, s.q[b].run);
		assert_int_equal(s.q[d].run, s.q[e].run);
		assert_true(s.q[a].run != s.q[d].run);
	}
	p1 = s.q[a].service_ns + s.q[b].service_ns;
	p2 = s.q[d].service_ns + s.q[e].service_ns;
	assert_near(pct(p1, p2), 75, 1);
	assert_near(pct(s.q[a].service_ns, s.q[b].service_ns), 50, 1);
	/* One queue of process 1 idle: its weight becomes 100, 50/50. */
	sim_ready(&s, a, false);
	p1 = s.q[b].service_ns;
	p2 = s.q[d].service_ns + s.q[e].service_ns;
	sim_run(&s, 2000 * MS);
	assert_near(pct(s.q[b].service_ns - p1,
			s.q[d].service_ns + s.q[e].service_ns - p2), 50, 1);
	sim_fini(&s);
}

/* Removing queues releases shared process entities; none leak (ASan). */
static void bw_per_process_lifecycle(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, true);
	uint64_t b0, d0;
	struct sim s;
	int a, b, d;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 1, 0, 0);
	d = sim_add(&s, 0, 2, 0, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_ready(&s, d, true);
	sim_run(&s, 100 * MS);
	/* Process 1 loses one queue; the other keeps the process's turns. */
	sim_remove(&s, a);
	d = a;                          /* moved into the freed slot */
	b0 = s.q[b].service_ns;
	d0 = s.q[d].service_ns;
	sim_run(&s, 1000 * MS);
	assert_near(pct(s.q[b].service_ns - b0, s.q[d].service_ns - d0), 50, 1);
	/* Process 1 gone: the other runs unsliced. */
	sim_remove(&s, b);
	assert_run(&s, d, true);
	assert_int_equal(s.wake, 0);
	sim_fini(&s);
}

/* A share hint change takes effect at the next turns. */
static void bw_share_change(void **st)
{
	struct xs_policy_conf c = mkconf(0, 20 * MS, false);
	uint64_t a0, b0;
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "bandwidth", &c);
	a = sim_add(&s, 0, 1, 0, 50);
	b = sim_add(&s, 0, 2, 0, 50);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_run(&s, 1000 * MS);
	s.q[a].share = 150;
	if (s.ops->hints_changed)
		s.ops->hints_changed(s.state, &s.q[a]);
	sim_sched(&s);
	sim_run(&s, 20 * MS);   /* finish the round in progress */
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	sim_run(&s, 2000 * MS);
	assert_near(pct(s.q[a].service_ns - a0, s.q[b].service_ns - b0), 75, 1);
	sim_fini(&s);
}

/* ---- edf ---- */

static void edf_order(void **st)
{
	struct sim s;
	int a, b, c, d, e;

	(void)st;
	sim_init(&s, "edf", NULL);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	c = sim_add(&s, 0, 3, 0, 0);
	d = sim_add(&s, 0, 4, 0, 0);
	e = sim_add(&s, 1, 5, 0, 0);
	s.q[a].deadline_us = 10000;     /* due at t + 10 ms */
	s.q[b].deadline_us = 5000;      /* ready at t + 1 ms: due at t + 6 ms */
	s.q[e].deadline_us = 100000;
	sim_ready(&s, c, true);         /* no deadline, ready first */
	assert_run(&s, c, true);
	assert_run(&s, a, false);       /* idle while K = 1 are ready */
	sim_ready(&s, a, true);
	assert_run(&s, a, true);
	assert_run(&s, c, false);       /* deadlines go before none */
	s.now += MS;
	sim_ready(&s, b, true);
	assert_run(&s, b, true);
	assert_run(&s, a, false);
	sim_ready(&s, e, true);         /* other device: independent */
	assert_run(&s, e, true);
	assert_run(&s, b, true);
	sim_ready(&s, b, false);
	assert_run(&s, a, true);
	sim_ready(&s, a, false);
	assert_run(&s, c, true);
	sim_ready(&s, d, true);         /* later, no deadline: FIFO */
	assert_run(&s, c, true);
	assert_run(&s, d, false);
	assert_int_equal(s.wake, 0);
	sim_fini(&s);
}

static void edf_k2(void **st)
{
	struct xs_policy_conf c = mkconf(2, 0, false);
	struct sim s;
	int a, b, q3, d;

	(void)st;
	sim_init(&s, "edf", &c);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	q3 = sim_add(&s, 0, 3, 0, 0);
	d = sim_add(&s, 0, 4, 0, 0);
	s.q[a].deadline_us = 30000;
	s.q[b].deadline_us = 10000;
	s.q[q3].deadline_us = 20000;
	sim_ready(&s, a, true);
	/* One ready < K: idle ones may still run. */
	assert_run(&s, a, true);
	assert_run(&s, d, true);
	sim_ready(&s, b, true);
	assert_run(&s, a, true);
	assert_run(&s, b, true);
	assert_run(&s, d, false);
	sim_ready(&s, q3, true);
	assert_run(&s, b, true);
	assert_run(&s, q3, true);
	assert_run(&s, a, false);
	sim_fini(&s);
}

/* Equal absolute deadlines are ordered by id, so exactly K run. */
static void edf_ties(void **st)
{
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "edf", NULL);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	s.q[a].deadline_us = 1000;
	s.q[b].deadline_us = 1000;
	s.q[a].ready = s.q[b].ready = true;
	s.q[a].ready_ns = s.q[b].ready_ns = s.now;
	sim_sched(&s);
	assert_run(&s, a, true);
	assert_run(&s, b, false);
	sim_fini(&s);
}

/* ---- laxity ---- */

static void laxity_becomes_urgent(void **st)
{
	struct sim s;
	uint64_t t0;
	int hi, lo, lo2;

	(void)st;
	sim_init(&s, "laxity", NULL);
	hi = sim_add(&s, 0, 1, 10, 0);
	lo = sim_add(&s, 0, 2, 0, 0);
	lo2 = sim_add(&s, 0, 3, -10, 0);
	s.q[lo].laxity_us = 5000;
	s.q[lo2].laxity_us = 8000;
	sim_ready(&s, hi, true);
	assert_int_equal(s.wake, 0);
	t0 = s.now;
	sim_ready(&s, lo, true);
	sim_ready(&s, lo2, true);
	assert_run(&s, hi, true);
	assert_run(&s, lo, false);
	assert_int_equal(s.wake, t0 + 5 * MS);
	sim_run(&s, 4 * MS);
	assert_run(&s, lo, false);
	sim_step(&s, MS);               /* exactly t0 + 5 ms */
	assert_int_equal(s.now, t0 + 5 * MS);
	assert_run(&s, lo, true);
	assert_run(&s, hi, false);
	assert_run(&s, lo2, false);
	assert_int_equal(s.wake, t0 + 8 * MS);
	sim_run(&s, 3 * MS);
	/* Both urgent: the earlier latest start wins. */
	assert_run(&s, lo, true);
	assert_run(&s, lo2, false);
	assert_int_equal(s.wake, 0);
	sim_ready(&s, lo, false);
	assert_run(&s, lo2, true);
	assert_run(&s, hi, false);
	sim_ready(&s, lo2, false);
	assert_run(&s, hi, true);
	sim_fini(&s);
}

/* Without urgency: hpf, ties together, idle ones decided by priority. */
static void laxity_hpf_fallback(void **st)
{
	struct sim s;
	int a, b, c, d;

	(void)st;
	sim_init(&s, "laxity", NULL);
	a = sim_add(&s, 0, 1, 5, 0);
	b = sim_add(&s, 0, 2, 5, 0);
	c = sim_add(&s, 0, 3, 0, 0);
	d = sim_add(&s, 1, 4, 0, 0);
	s.q[c].laxity_us = 1000000;
	sim_ready(&s, a, true);
	sim_ready(&s, c, true);
	assert_run(&s, a, true);
	assert_run(&s, b, true);        /* idle, tie with a */
	assert_run(&s, c, false);
	assert_run(&s, d, true);        /* idle device */
	assert_int_equal(s.wake, s.q[c].ready_ns + 1000 * MS);
	sim_fini(&s);
}

/* Urgent queues with the same latest start run together. */
static void laxity_urgent_ties(void **st)
{
	struct sim s;
	int a, b, c;

	(void)st;
	sim_init(&s, "laxity", NULL);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	c = sim_add(&s, 0, 3, 50, 0);
	s.q[a].laxity_us = s.q[b].laxity_us = 2000;
	s.q[a].ready = s.q[b].ready = s.q[c].ready = true;
	s.q[a].ready_ns = s.q[b].ready_ns = s.q[c].ready_ns = s.now;
	sim_sched(&s);
	assert_run(&s, c, true);
	assert_int_equal(s.wake, s.now + 2 * MS);
	sim_run(&s, 2 * MS);
	assert_run(&s, a, true);
	assert_run(&s, b, true);
	assert_run(&s, c, false);
	sim_fini(&s);
}

/* ---- fair ---- */

/* A's percentage over @dur with priorities @pa, @pb, both always ready. */
static double fair_two(int32_t pa, int32_t pb, uint64_t dur, unsigned *switches)
{
	struct sim s;
	double p;
	int a, b;

	sim_init(&s, "fair", NULL);
	s.exclusive = true;
	a = sim_add(&s, 0, 1, pa, 0);
	b = sim_add(&s, 0, 2, pb, 0);
	sim_ready(&s, a, true);
	sim_ready(&s, b, true);
	sim_run(&s, dur);
	p = pct(s.q[a].service_ns, s.q[b].service_ns);
	if (switches)
		*switches = s.switches;
	sim_fini(&s);
	return p;
}

static void fair_equal(void **st)
{
	(void)st;
	assert_near(fair_two(0, 0, 10000 * MS, NULL), 50, 1);
	assert_near(fair_two(-30, -30, 10000 * MS, NULL), 50, 1);
}

static void fair_priority_weight(void **st)
{
	(void)st;
	assert_near(fair_two(10, 0, 10000 * MS, NULL), 100.0 * 2 / 3, 1);
	assert_near(fair_two(-5, -15, 10000 * MS, NULL), 100.0 * 2 / 3, 1);
	assert_near(fair_two(20, 0, 10000 * MS, NULL), 80, 1);
	/* Out of range priorities are clamped, never overflow. */
	assert_near(fair_two(1000, 100, 1000 * MS, NULL), 50, 1);
}

/* The holder keeps the device for a whole minimum slice (10 ms default). */
static void fair_no_thrashing(void **st)
{
	unsigned switches;

	(void)st;
	assert_near(fair_two(0, 0, 1000 * MS, &switches), 50, 1);
	assert_true(switches <= 1000 / 10 + 2);
	assert_true(switches >= 1000 / 10 - 2);
}

/* A newly ready queue starts near the others: no hoarding, no starving. */
static void fair_newcomer(void **st)
{
	uint64_t a0, b0;
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "fair", NULL);
	s.exclusive = true;
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	sim_ready(&s, a, true);
	assert_int_equal(s.wake, 0);
	sim_run(&s, 5000 * MS);
	sim_ready(&s, b, true);
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	sim_run(&s, 100 * MS);
	/* b's 5 s of idleness bought it at most one extra slice. */
	assert_true(s.q[a].service_ns - a0 >= 40 * MS);
	sim_run(&s, 1900 * MS);
	assert_near(pct(s.q[a].service_ns - a0, s.q[b].service_ns - b0), 50, 1);
	sim_fini(&s);
}

/*
 * b runs alone for long and goes idle; a runs alone; b comes back. The
 * device's virtual clock keeps a from looking starved against b (which
 * would then starve b for seconds).
 */
static void fair_vclock_after_solo(void **st)
{
	uint64_t a0, b0;
	struct sim s;
	int a, b;

	(void)st;
	sim_init(&s, "fair", NULL);
	a = sim_add(&s, 0, 1, 0, 0);
	b = sim_add(&s, 0, 2, 0, 0);
	sim_ready(&s, b, true);
	sim_run(&s, 5000 * MS);
	sim_ready(&s, b, false);
	sim_ready(&s, a, true);
	sim_run(&s, 1000 * MS);
	sim_ready(&s, b, true);
	a0 = s.q[a].service_ns;
	b0 = s.q[b].service_ns;
	sim_run(&s, 1000 * MS);
	assert_near(pct(s.q[a].service_ns - a0, s.q[b].service_ns - b0), 50, 1);
	sim_fini(&s);
}

/* ---- common ---- */

/* Every policy through a churn of events; pdata freed (ASan: no leaks). */
static void lifecycle_all(void **st)
{
	const char *const *names = policy_names();
	struct xs_policy_conf c = mkconf(2, 5 * MS, false);
	size_t p;

	(void)st;
	for (p = 0; names[p]; p++) {
		struct sim s;
		int i, t;

		for (t = 0; t < 2; t++) {
			c.per_process = t;
			sim_init(&s, names[p], &c);
			for (i = 0; i < 6; i++)
				sim_add(&s, (uint32_t)(i % 2), (uint64_t)(i / 3),
					i - 3, 10 * (i + 1));
			for (i = 0; i < 300; i++) {
				int k = (i * 7) % 6;

				if (i % 3 == 0)
					sim_ready(&s, k, !s.q[k].ready);
				sim_step(&s, MS / 2);
				/* A device with nothing ready runs everything. */
				if (!s.q[0].ready && !s.q[2].ready && !s.q[4].ready &&
				    strcmp(names[p], "hhpf") != 0)
					assert_true(s.q[0].run && s.q[2].run &&
						    s.q[4].run);
			}
			sim_fini(&s);
		}
	}
}

/* Two instances of one policy keep separate state. */
static void instances_independent(void **st)
{
	struct xs_policy_conf c1 = mkconf(0, 20 * MS, false);
	struct xs_policy_conf c2 = mkconf(0, 40 * MS, false);
	struct sim s1, s2;

	(void)st;
	sim_init(&s1, "bandwidth", &c1);
	sim_init(&s2, "bandwidth", &c2);
	assert_ptr_not_equal(s1.state, s2.state);
	sim_add(&s1, 0, 1, 0, 0);
	sim_add(&s1, 0, 2, 0, 0);
	sim_add(&s2, 0, 1, 0, 0);
	sim_add(&s2, 0, 2, 0, 0);
	sim_ready(&s1, 0, true);
	sim_ready(&s2, 0, true);
	sim_ready(&s1, 1, true);
	sim_ready(&s2, 1, true);
	assert_int_equal(s1.wake, s1.now + 10 * MS);
	assert_int_equal(s2.wake, s2.now + 20 * MS);
	sim_run(&s1, 10 * MS);
	assert_run(&s1, 1, true);
	assert_run(&s2, 0, true);       /* untouched by s1's progress */
	sim_fini(&s1);
	sim_fini(&s2);
}

/* A queue the policy never saw (queue_add failed) is left running. */
static void unscheduled_queue_runs(void **st)
{
	static const char *const stateful[] = { "bandwidth", "fair" };
	size_t p;

	(void)st;
	for (p = 0; p < ARRAY_SIZE(stateful); p++) {
		struct sim s;
		int a, b;

		sim_init(&s, stateful[p], NULL);
		a = sim_add(&s, 0, 1, 0, 0);
		b = sim_add(&s, 0, 2, 0, 0);
		/* Pretend b's queue_add failed. */
		s.ops->queue_remove(s.state, &s.q[b]);
		sim_ready(&s, a, true);
		sim_ready(&s, b, true);
		assert_run(&s, a, true);
		assert_run(&s, b, true);
		sim_fini(&s);
	}
}

/* ---- loader ---- */

static void loader_plugin(void **st)
{
	const struct xs_policy_ops *ops = NULL;
	void *handle = NULL;
	struct sim s;

	(void)st;
	assert_int_equal(policy_load(XS_PLUGIN_PATH, &ops, &handle, NULL), 0);
	assert_non_null(handle);
	assert_string_equal(ops->name, "fifo");
	/* Drive it like a built-in: first ready runs alone. */
	memset(&s, 0, sizeof(s));
	s.ops = ops;
	s.now = MS;
	sim_add(&s, 0, 1, 0, 0);
	sim_add(&s, 0, 2, 50, 0);
	sim_ready(&s, 0, true);
	s.now += MS;
	sim_ready(&s, 1, true);
	assert_run(&s, 0, true);
	assert_run(&s, 1, false);
	sim_ready(&s, 0, false);
	assert_run(&s, 1, true);
	assert_run(&s, 0, false);
	sim_fini(&s);
	policy_unload(handle);
	policy_unload(NULL);
}

/* The table version the bad module's entry returned last. */
static uint32_t bad_version;

/* Loads the bad module with its mode set to @mode; returns the result. */
static int load_bad(int mode)
{
	const struct xs_policy_ops *ops = (void *)1;
	void *handle = (void *)1, *own;
	int *modep, rc;

	/* Our own reference keeps the module, and the mode, loaded. */
	own = dlopen(XS_PLUGIN_BAD_PATH, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(own);
	modep = dlsym(own, "bad_mode");
	assert_non_null(modep);
	*modep = mode;
	rc = policy_load(XS_PLUGIN_BAD_PATH, &ops, &handle, &bad_version);
	/* Outputs are written only on success. */
	assert_ptr_equal(ops, (void *)1);
	assert_ptr_equal(handle, (void *)1);
	dlclose(own);
	return rc;
}

static void loader_bad_version(void **st)
{
	(void)st;
	assert_int_equal(load_bad(0), -EPROTO);   /* newer than served */
	assert_int_equal(bad_version, XS_POLICY_VERSION + 1);
	assert_int_equal(load_bad(1), -EPROTO);   /* entry returns NULL */
	assert_int_equal(bad_version, 0);
	assert_int_equal(load_bad(2), -EPROTO);   /* version 0 */
}

static void loader_bad_table(void **st)
{
	(void)st;
	assert_int_equal(load_bad(3), -EINVAL);   /* empty name */
	assert_int_equal(load_bad(4), -EINVAL);   /* no schedule */
	assert_int_equal(load_bad(5), -EINVAL);   /* size short of schedule */
}

static void loader_errors(void **st)
{
	const struct xs_policy_ops *ops = NULL;
	void *handle = NULL;

	(void)st;
	assert_int_equal(policy_load("/nonexistent/xsched-policy.so",
					 &ops, &handle, NULL), -ENOENT);
	assert_int_equal(policy_load("policy.so", &ops, &handle, NULL), -EINVAL);
	assert_int_equal(policy_load("./policy.so", &ops, &handle, NULL), -EINVAL);
	assert_int_equal(policy_load(NULL, &ops, &handle, NULL), -EINVAL);
	assert_int_equal(policy_load(XS_PLUGIN_NOENTRY_PATH, &ops, &handle, NULL),
			 -ENOEXEC);
	assert_null(ops);
	assert_null(handle);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(registry_find_all),
	cmocka_unit_test(registry_unknown),
	cmocka_unit_test(registry_conf_defaults),
	cmocka_unit_test(hpf_per_device),
		cmocka_unit_test(hpf_quiet_rule),
	cmocka_unit_test(hpf_ties_run_together),
	cmocka_unit_test(hpf_idle_presuspended),
	cmocka_unit_test(hpf_all_idle_run),
	cmocka_unit_test(hhpf_across_devices),
	cmocka_unit_test(hpf_vs_hhpf),
	cmocka_unit_test(bw_75_25),
	cmocka_unit_test(bw_50_50),
	cmocka_unit_test(bw_90_10),
	cmocka_unit_test(bw_uneven_slices),
	cmocka_unit_test(bw_turns_and_wakeup),
	cmocka_unit_test(bw_drain_switch_over),
	cmocka_unit_test(bw_drain_conf),
	cmocka_unit_test(bw_idle_no_hoarding),
	cmocka_unit_test(bw_overrun_debt),
	cmocka_unit_test(bw_deep_debt),
	cmocka_unit_test(bw_single_unsliced),
	cmocka_unit_test(bw_two_devices),
	cmocka_unit_test(bw_per_process),
	cmocka_unit_test(bw_per_process_lifecycle),
	cmocka_unit_test(bw_share_change),
	cmocka_unit_test(edf_order),
	cmocka_unit_test(edf_k2),
	cmocka_unit_test(edf_ties),
	cmocka_unit_test(laxity_becomes_urgent),
	cmocka_unit_test(laxity_hpf_fallback),
	cmocka_unit_test(laxity_urgent_ties),
	cmocka_unit_test(fair_equal),
	cmocka_unit_test(fair_priority_weight),
	cmocka_unit_test(fair_no_thrashing),
	cmocka_unit_test(fair_newcomer),
	cmocka_unit_test(fair_drain_switch_over),
	cmocka_unit_test(fair_vclock_after_solo),
	cmocka_unit_test(lifecycle_all),
	cmocka_unit_test(instances_independent),
	cmocka_unit_test(unscheduled_queue_runs),
	cmocka_unit_test(loader_plugin),
	cmocka_unit_test(loader_bad_version),
	cmocka_unit_test(loader_bad_table),
	cmocka_unit_test(loader_errors),
};

TU_MAIN(tests)
