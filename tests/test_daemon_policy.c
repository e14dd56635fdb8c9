/*
 * xschedd end to end: policies between processes. HPF, bandwidth shares
 * and the drain before a hand-over, EDF, lazy doorbells, the
 * contention-aware window, the starvation guard, and a policy switch that
 * keeps every hint. The conventions and shared helpers are in
 * test_daemon_util.h.
 */
#include "test_daemon_util.h"

/* Waits until the device executed one more command (a native flood runs). */
static void wait_device_busy(struct it_env *e)
{
	uint64_t n0 = it_dev_commands(e);

	if (!IT_WAIT_UNTIL(it_dev_commands(e) > n0, WAIT_MS))
		fail_msg("the device executed nothing");
}

static bool hints_equal(const struct ipc_queue_rec *a, const struct ipc_queue_rec *b)
{
	return !memcmp(a->hint, b->hint, sizeof(a->hint));
}

/* --- 1. HPF between two processes ----------------------------------------- */

/*
 * A low-priority process floods 100 ms commands; a high-priority one runs
 * tasks of one 1 ms command. Under xschedd (hpf, Lv3) each high task is
 * served at once: P99 over 200 tasks far below half a low command.
 * Natively (no scheduler, the device's round robin) it waits for the low
 * command in progress. After the high process is gone, the low one runs
 * again.
 */
static void daemon_hpf_two_processes(void **state)
{
	struct it_env *e = *state;
	struct it_result hi, nat;
	struct ipc_queue_rec lo_rec;
	uint64_t done0;
	pid_t lo, h;

	it_guard(80);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	lo = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "100000", "--flood",
				      "--duration-s", "60", "--priority", "0",
				      "--wait-connected-ms", "10000"));
	wait_ready(e, lo);
	h = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "1000", "--cmds", "1",
				     "--tasks", "200", "--period-us", "10000", "--priority", "10",
				     "--wait-connected-ms", "10000"));
	it_finish(e, h, 30000, &hi);
	assert_int_equal(hi.tasks, 200);
	if (hi.p99_us >= 50000)
		fail_msg("high task P99 %.0f us under xschedd, not below half a low command",
			 hi.p99_us);
	assert_int_equal(it_queues(e, lo, &lo_rec), 1);
	assert_true(lo_rec.preemptions >= 1);
	/* The high process is gone: the low one is resumed and completes work. */
	done0 = lo_rec.completed;
	if (!IT_WAIT_UNTIL(it_queues(e, lo, &lo_rec) == 1 && lo_rec.running &&
			   lo_rec.completed >= done0 + 3, WAIT_MS))
		fail_msg("the low process did not resume (completed %llu -> %llu, running %u)",
			 (unsigned long long)done0, (unsigned long long)lo_rec.completed,
			 lo_rec.running);
	it_kill(e, lo);

	/* The same pair without a scheduler. */
	{
		const char *const vars[] = { "XSCHED_SCHEDULER=none", NULL };

		lo = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "100000", "--flood",
					      "--duration-s", "60"));
		wait_device_busy(e);
		h = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "1000", "--cmds", "1",
					     "--tasks", "20", "--period-us", "50000"));
		it_finish(e, h, 30000, &nat);
		it_kill(e, lo);
	}
	print_message("high task: xschedd P99 %.0f us; native P90 %.0f us, max %.0f us\n",
		      hi.p99_us, nat.p90_us, nat.max_us);
	assert_int_equal(nat.tasks, 20);
	if (nat.p90_us <= 25000 || nat.max_us <= 50000)
		fail_msg("native high task P90 %.0f us, max %.0f us: it should wait for the "
			 "low command (xschedd: P99 %.0f us)", nat.p90_us, nat.max_us, hi.p99_us);
	case_done(e);
}

/* --- 2. Bandwidth partition ----------------------------------------------- */

/*
 * Two flooding processes with shares 75 and 25 (policy from the config
 * file) for 5 s: their device time splits 75/25 within 3 points.
 */
static void daemon_bandwidth_75_25(void **state)
{
	struct it_env *e = *state;
	struct it_result a, b;
	char start[32];
	double share;
	pid_t pa, pb;

	it_guard(80);
	it_config(e, "[policy]\nname = bandwidth\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	/* Both start together, once connected. */
	snprintf(start, sizeof(start), "%llu",
		 (unsigned long long)(clock_now_ns() + 2 * NSEC_PER_SEC));
	pa = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "1000", "--flood",
				      "--duration-s", "5", "--share", "75",
				      "--wait-connected-ms", "10000", "--start-at-ns", start));
	pb = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "1000", "--flood",
				      "--duration-s", "5", "--share", "25",
				      "--wait-connected-ms", "10000", "--start-at-ns", start));
	it_finish(e, pa, 40000, &a);
	it_finish(e, pb, 40000, &b);
	assert_true(a.device_ms > 500 && b.device_ms > 100);
	share = 100.0 * a.device_ms / (a.device_ms + b.device_ms);
	print_message("device time %.0f ms / %.0f ms: %.1f/%.1f\n", a.device_ms, b.device_ms,
		      share, 100.0 - share);
	if (share < 72.0 || share > 78.0)
		fail_msg("shares %.1f/%.1f (device %.0f ms / %.0f ms), expected 75/25 +-3",
			 share, 100.0 - share, a.device_ms, b.device_ms);
	case_done(e);
}

/* A Lv1 queue of this process with a window of @threshold, no budget. */
static xs_queue *lv1_queue(struct it_env *e, int32_t threshold)
{
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;

	cfg.level = XS_LEVEL_1;
	cfg.threshold = threshold;
	cfg.batch = 1;
	cfg.budget_ns = XS_BUDGET_NONE;
	return it_queue_cfg(e, &cfg);
}

struct hold {
	_Atomic bool entered, open;
};

/* A device function that holds the device until the test opens it. */
static int hold_fn(void *arg)
{
	struct hold *h = arg;

	atomic_store(&h->entered, true);
	while (!atomic_load(&h->open))
		sched_yield();
	return 0;
}

/* Submits *@c, which the call that returned @rc made (0: success). */
static void submit_cmd(xs_queue *q, int rc, xs_cmd **c)
{
	assert_int_equal(rc, 0);
	assert_int_equal(xs_submit(q, *c, NULL), 0);
}

/*
 * Switch-over (ipc_abi.h, "Drain"): when the bandwidth policy hands the
 * device from Lv1 queue A to B, B launches nothing while A's commands in
 * flight are more than one, and starts as soon as they drain (A's
 * doorbell), long before drain_ms. Device timestamps show B's work ran
 * after A's: without the wait, round robin would run B's kernel right
 * after A's first command.
 */
static void daemon_bandwidth_drain(void **state)
{
	struct it_env *e = *state;
	uint64_t ta = 0, tb = 0, t0;
	struct hold h = { 0 };
	xs_queue_stats st;
	xs_queue *a, *b;
	xs_cmd *c;
	int rc;

	it_guard(60);
	it_config(e, "[policy]\nname = bandwidth\ndrain_ms = 1000\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	/* B first: the lower id takes the first turn of two never served. */
	b = lv1_queue(e, 4);
	a = lv1_queue(e, 4);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 2,
				  WAIT_MS));
	submit_cmd(a, xs_sim_kernel_fn(0, hold_fn, &h, &c), &c);
	submit_cmd(a, xs_sim_kernel(200 * NSEC_PER_USEC, &c), &c);
	submit_cmd(a, xs_sim_kernel(200 * NSEC_PER_USEC, &c), &c);
	submit_cmd(a, xs_sim_event(&ta, &c), &c);
	/* Beyond the window: A stays ready, so only its drain rings. */
	submit_cmd(a, xs_sim_kernel(200 * NSEC_PER_USEC, &c), &c);
	submit_cmd(a, xs_sim_kernel(200 * NSEC_PER_USEC, &c), &c);
	/* The daemon saw A ready: idle B is suspended. */
	assert_true(IT_WAIT_UNTIL(it_suspended(b), WAIT_MS));
	assert_true(IT_WAIT_UNTIL(atomic_load(&h.entered), WAIT_MS));
	assert_true(IT_WAIT_UNTIL(xs_queue_stats_get(a, &st) == 0 && st.in_flight == 4 &&
				  st.pending == 2, WAIT_MS));
	/* B's work: the turn passes to B, which waits for A's four. */
	submit_cmd(b, xs_sim_kernel(200 * NSEC_PER_USEC, &c), &c);
	submit_cmd(b, xs_sim_event(&tb, &c), &c);
	assert_true(IT_WAIT_UNTIL(it_suspended(a), WAIT_MS));
	it_nap_ms(20);
	rc = xs_queue_stats_get(b, &st);
	/* Released before asserting: a failure must not hold the device. */
	t0 = clock_now_ns();
	atomic_store(&h.open, true);
	assert_int_equal(rc, 0);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.pending, 2);
	assert_int_equal(xs_wait_all(b), 0);
	print_message("B done %.1f ms after A's device work was released\n",
		      (double)(clock_now_ns() - t0) / 1e6);
	if (clock_now_ns() - t0 > 500 * NSEC_PER_MSEC)
		fail_msg("B waited for drain_ms, not for A's doorbell");
	assert_int_equal(xs_wait_all(a), 0);
	assert_true(ta > 0 && tb > ta);
	case_done(e);
}

/* --- 3. EDF ------------------------------------------------------------- */

/*
 * Process A runs periodic tasks of 3 x 2 ms with an 80 ms deadline next to
 * process B flooding 250 ms commands without a deadline. Natively, round
 * robin makes each task wait for B's command in progress and then for one
 * more between its own commands: ~250 ms or more, A misses (almost) every
 * deadline. Under EDF A's queue always has the earliest deadline, B is
 * interrupted (Lv3), and A meets them with a margin of over 70 ms.
 */
static void daemon_edf_meets_deadlines(void **state)
{
	struct it_env *e = *state;
	const char *const a_args[] = { "--level", "3", "--cmd-us", "2000", "--cmds", "3",
				       "--period-us", "150000", "--deadline-us", "80000", NULL };
	const char *const native[] = { "XSCHED_SCHEDULER=none", NULL };
	struct it_result nat, edf;
	pid_t a, b;

	it_guard(80);
	it_daemon_start(e, IT_ARGS("--policy", "edf"));
	it_ctl_open(e);

	b = it_load(e, native, IT_ARGS("--level", "3", "--cmd-us", "250000", "--flood",
				       "--duration-s", "60"));
	wait_device_busy(e);
	{
		const char *args[20] = { "--tasks", "12" };
		int n = 2, i;

		for (i = 0; a_args[i]; i++)
			args[n++] = a_args[i];
		args[n] = NULL;
		a = it_load(e, native, args);
	}
	it_finish(e, a, 30000, &nat);
	it_kill(e, b);

	b = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "250000", "--flood",
				     "--duration-s", "60", "--wait-connected-ms", "10000"));
	wait_ready(e, b);
	{
		const char *args[20] = { "--wait-connected-ms", "10000", "--tasks", "30" };
		int n = 4, i;

		for (i = 0; a_args[i]; i++)
			args[n++] = a_args[i];
		args[n] = NULL;
		a = it_load(e, NULL, args);
	}
	it_finish(e, a, 30000, &edf);
	it_kill(e, b);

	print_message("missed: native %ld/12 (P50 %.0f us), edf %ld/30 (P99 %.0f us)\n",
		      nat.missed, nat.p50_us, edf.missed, edf.p99_us);
	assert_int_equal(nat.tasks, 12);
	assert_int_equal(edf.tasks, 30);
	/* At least half missed natively, at most 10% under EDF. */
	if (nat.missed < 6 || edf.missed > 3)
		fail_msg("missed deadlines: native %ld/12 (P50 %.0f us), edf %ld/30 (P99 %.0f us)",
			 nat.missed, nat.p50_us, edf.missed, edf.p99_us);
	case_done(e);
}

/* Runs @n tasks of one short command on @q; returns the daemon's events. */
static uint64_t tasks_events(struct it_env *e, xs_queue *q, int n)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(xs_wait(q, it_submit(q, 1, 10)), 0);
	return it_status(e).events;
}

/*
 * Lazy doorbells: a queue that cannot change any decision (alone, or with
 * nothing of lower priority beside it under hpf) publishes its Ready and
 * Idle without ringing, so the daemon sees no event per task; once a lower
 * queue appears, every task is announced again, and the lower queue is
 * suspended while the higher one works.
 */
static void daemon_quiet_queue_rings_not(void **state)
{
	struct it_env *e = *state;
	xs_queue *hi, *lo;
	uint64_t ev0, ev1;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	hi = it_queue(e, 10);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 1,
				  WAIT_MS));
	/* Let the registration's decision raise the flag. */
	ev0 = tasks_events(e, hi, 5);
	it_nap_ms(20);
	ev0 = tasks_events(e, hi, 0);
	ev1 = tasks_events(e, hi, 100);
	if (ev1 - ev0 > 2)
		fail_msg("a queue alone caused %llu daemon events in 100 tasks",
			 (unsigned long long)(ev1 - ev0));
	lo = it_queue(e, 0);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == 2, WAIT_MS));
	it_nap_ms(20);
	/* Each task rings: the daemon sees every one of them, however late it
	 * wakes (a quiet queue's task would never reach it: nothing else
	 * happens on the device). */
	for (int i = 0; i < 20; i++) {
		ev0 = tasks_events(e, hi, 0);
		tasks_events(e, hi, 1);
		if (!IT_WAIT_UNTIL(it_status(e).events > ev0, WAIT_MS))
			fail_msg("with a lower queue beside it, task %d reached no daemon event",
				 i);
	}
	/* Its Ready suspends the lower queue before that one submits. */
	it_submit(hi, 20, 5000);
	assert_true(IT_WAIT_UNTIL(it_suspended(lo), WAIT_MS));
	assert_int_equal(xs_wait_all(hi), 0);
	assert_true(IT_WAIT_UNTIL(!it_suspended(lo), WAIT_MS));
	case_done(e);
}

/*
 * Contention-aware window: a queue below a higher-priority queue on its
 * device is capped at contention_window commands in flight; its own window
 * returns when it is the top one again, and a cap of 0 turns this off.
 */
static void daemon_contention_window(void **state)
{
	struct it_env *e = *state;
	xs_queue *hi, *lo;
	int32_t own;

	it_guard(60);
	it_config(e, "[policy]\ncontention_window = 2\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	lo = it_queue(e, 0);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 1,
				  WAIT_MS));
	own = it_threshold(lo);
	assert_true(own > 2);
	hi = it_queue(e, 10);
	assert_true(IT_WAIT_UNTIL(it_threshold(lo) == 2, WAIT_MS));
	assert_int_equal(it_threshold(hi), own);
	/* Its work still completes, two commands at a time. */
	assert_int_equal(xs_wait(lo, it_submit(lo, 6, 100)), 0);
	assert_int_equal(xs_queue_set_hint(hi, XS_HINT_PRIORITY, 0), 0);
	assert_true(IT_WAIT_UNTIL(it_threshold(lo) == own, WAIT_MS));
	assert_int_equal(xs_queue_set_hint(hi, XS_HINT_PRIORITY, 5), 0);
	assert_true(IT_WAIT_UNTIL(it_threshold(lo) == 2, WAIT_MS));
	case_done(e);
}

static void daemon_contention_window_off(void **state)
{
	struct it_env *e = *state;
	xs_queue *lo;
	int32_t own;

	it_guard(60);
	it_config(e, "[policy]\ncontention_window = 0\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	lo = it_queue(e, 0);
	own = it_threshold(lo);
	it_queue(e, 10);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 2,
				  WAIT_MS));
	it_nap_ms(50);
	assert_int_equal(it_threshold(lo), own);
	case_done(e);
}

/* --- 6. Policy switch and reload ------------------------------------------- */

static void assert_same_hints(struct it_env *e, const struct ipc_queue_rec *want, size_t n)
{
	struct ipc_queue_rec *now;
	size_t m, i;

	now = all_queues(e, &m);
	assert_int_equal(m, n);
	for (i = 0; i < n; i++) {
		assert_true(now[i].queue_id == want[i].queue_id);
		if (!hints_equal(&now[i], &want[i]))
			fail_msg("queue %llu: hints changed", (unsigned long long)want[i].queue_id);
	}
	free(now);
}

/* Both queues of ours are listed with every hint they were created with. */
static bool switch_hints_arrived(struct it_env *e)
{
	struct ipc_queue_rec *r;
	size_t n, i;
	int good = 0;

	r = all_queues(e, &n);
	for (i = 0; i < n; i++) {
		if (r[i].pid != getpid())
			continue;
		good += r[i].hint[IPC_KEY_PRIORITY] == 7 && r[i].hint[IPC_KEY_SHARE] == 30 &&
			r[i].hint[IPC_KEY_DEADLINE_US] == 5000 &&
			r[i].hint[IPC_KEY_LAXITY_US] == 300;
		good += r[i].hint[IPC_KEY_PRIORITY] == -3 && r[i].hint[IPC_KEY_SHARE] == 70;
	}
	free(r);
	return good == 2;
}

/*
 * Hot switches bandwidth -> edf -> hpf keep every queue and hint (this
 * process's, given at creation, and an xs_load's, from XSCHED_PRIORITY
 * and XSCHED_SHARE); an unknown policy is refused and changes nothing.
 */
static void daemon_policy_switch_keeps_hints(void **state)
{
	struct it_env *e = *state;
	const char *const vars[] = { "XSCHED_PRIORITY=2", "XSCHED_SHARE=10", NULL };
	static const char *const order[] = { "edf", "hpf", "bandwidth", "hpf" };
	struct ipc_queue_rec *snap, lr;
	xs_queue *q1, *q2;
	uint64_t done0;
	size_t n, i;
	pid_t l;

	it_guard(60);
	it_config(e, "[policy]\nname = bandwidth\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_policy(e, "bandwidth");
	q1 = it_queue_hints(e, 7, 30, 5000, 300);
	q2 = it_queue_hints(e, -3, 70, 0, 0);
	l = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "500", "--tasks", "1000000",
				     "--period-us", "3000", "--wait-connected-ms", "10000"));
	assert_true(IT_WAIT_UNTIL(it_queues(e, l, &lr) == 1 && lr.hint[IPC_KEY_PRIORITY] == 2 &&
				  lr.hint[IPC_KEY_SHARE] == 10, WAIT_MS));
	assert_true(IT_WAIT_UNTIL(it_queues(e, 0, NULL) == 3, WAIT_MS));
	/* Wait for every hint of ours to arrive, then take the reference. */
	if (!IT_WAIT_UNTIL(switch_hints_arrived(e), WAIT_MS)) {
		snap = all_queues(e, &n);
		for (i = 0; i < n; i++)
			print_message("queue %llu pid %d: priority %lld share %lld deadline %lld "
				      "laxity %lld\n", (unsigned long long)snap[i].queue_id,
				      snap[i].pid, (long long)snap[i].hint[1],
				      (long long)snap[i].hint[2], (long long)snap[i].hint[3],
				      (long long)snap[i].hint[4]);
		fail_msg("the hints of our queues did not all reach the daemon");
	}
	snap = all_queues(e, &n);
	assert_int_equal(n, 3);

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_int_equal(ipc_client_policy_set(&e->c, order[i]), 0);
		assert_policy(e, order[i]);
		assert_same_hints(e, snap, n);
	}
	assert_true(ipc_client_policy_set(&e->c, "no-such-policy") < 0);
	assert_policy(e, "hpf");
	assert_true(ipc_client_policy_set(&e->c, "/nonexistent/policy.so") < 0);
	assert_policy(e, "hpf");
	assert_same_hints(e, snap, n);
	free(snap);

	/* Work goes on after the switches. */
	assert_int_equal(xs_wait(q2, it_submit(q2, 3, 1000)), 0);
	assert_int_equal(xs_wait(q1, it_submit(q1, 3, 1000)), 0);
	assert_int_equal(it_queues(e, l, &lr), 1);
	done0 = lr.completed;
	assert_true(IT_WAIT_UNTIL(it_queues(e, l, &lr) == 1 && lr.completed > done0 + 5, WAIT_MS));
	it_kill(e, l);
	case_done(e);
}

/*
 * The starvation guard is on by default: a priority-0 queue next to a
 * priority-5 flood is listed as suspended with the time it has waited,
 * runs after about a period (1 s), and the listing counts the guard's
 * grants. With starvation_guard_pct = 0 it waits for as long as the flood
 * runs.
 */
static void daemon_starvation_bounded(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec r;
	uint64_t seq, t0, grants;
	char out[8192];
	xs_queue *q;
	pid_t flood;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	/* Commands of 20 ms: the flood stays ready even if it gets no CPU for
	 * a while (a loaded machine, a sanitizer). */
	flood = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "20000", "--flood",
					 "--duration-s", "50", "--priority", "5",
					 "--wait-connected-ms", "10000"));
	wait_ready(e, flood);
	q = it_queue(e, 0);
	/* A queue runs from its registration until the daemon's first decision
	 * about it: submit only once it is held, or the command may slip
	 * through before that decision (a slow daemon, a sanitizer). */
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 && it_suspended(q), WAIT_MS))
		fail_msg("the daemon never suspended our queue");
	t0 = clock_now_ns();
	seq = it_submit(q, 1, 1000);
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 && r.state == IPC_QS_READY &&
			   !r.running && r.wait_ns >= 300 * IT_MS, WAIT_MS))
		fail_msg("our queue was never listed as suspended and waiting");
	assert_true(r.wait_ns < 60ull * NSEC_PER_SEC);
	assert_int_equal(prog_run(e, XSCTL_BIN, (uid_t)-1, IT_ARGS("--control", e->ctl, "list"),
				  out, sizeof(out)), 0);
	assert_non_null(strstr(out, "WAITED"));
	assert_non_null(strstr(out, "GUARD"));
	if (!IT_WAIT_UNTIL(it_qstats(q).completed == 1, WAIT_MS))
		fail_msg("the starved queue did not run within %u ms", WAIT_MS);
	print_message("starved queue ran after %llu ms\n", (unsigned long long)it_ms_since(t0));
	assert_int_equal(xs_wait(q, seq), 0);
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_true(r.guard_runs >= 1);
	grants = r.guard_runs;

	/* 0 turns it off: the queue waits for the flood. */
	reload_with(e, "[policy]\nstarvation_guard_pct = 0\n");
	assert_int_equal(it_status(e).guard_pct, 0);
	seq = it_submit(q, 1, 1000);
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 && r.wait_ns >= 2500 * IT_MS,
			   WAIT_MS))
		fail_msg("with the guard off the queue was not held");
	assert_int_equal(it_qstats(q).completed, 1);
	assert_int_equal(r.guard_runs, grants);
	it_kill(e, flood);
	assert_int_equal(xs_wait(q, seq), 0);
	case_done(e);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(daemon_hpf_two_processes, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_bandwidth_75_25, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_bandwidth_drain, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_edf_meets_deadlines, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_quiet_queue_rings_not, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_contention_window, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_contention_window_off, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_policy_switch_keeps_hints, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_starvation_bounded, it_setup, it_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
