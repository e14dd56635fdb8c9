/*
 * xschedd end to end, the agent's side: fail-open when the daemon is
 * killed, absent, hung or stopped (SIGTERM), registering again after a
 * restart with the hints of the process and of xschedctl, hints set while
 * a queue registers, XSCHED_DISABLE, and fork. The conventions and shared
 * helpers are in test_daemon_util.h.
 */
#include "test_daemon_util.h"

/* --- 4b. Daemon killed: fail-open ----------------------------------------- */

/*
 * Makes @e's daemon suspend a queue of this process that has work: an
 * xs_load child at priority 10 floods the device, so hpf suspends our
 * queue (priority 0) from its registration on, before we submit.
 */
static xs_queue *suspended_queue(struct it_env *e, uint64_t *seq)
{
	struct ipc_queue_rec r;
	xs_queue *q;
	pid_t hi;

	/* 32 commands of 20 ms queued: ready even if it gets no CPU for 0.5 s. */
	hi = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "20000", "--flood",
				      "--duration-s", "60", "--priority", "10",
				      "--wait-connected-ms", "10000"));
	wait_ready(e, hi);
	q = it_queue(e, 0);
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 && it_suspended(q), WAIT_MS))
		fail_msg("the daemon never suspended our queue");
	assert_true(agent_connected());
	*seq = it_submit(q, 10, 2000);
	it_nap_ms(50);
	assert_true(it_suspended(q));
	assert_true(xs_query(q, 1) == -EBUSY);
	return q;
}

/*
 * The daemon is SIGKILLed while it holds a queue of this process
 * suspended: the agent notices the hang-up and resumes it within 200 ms.
 */
static void daemon_killed_resumes_queues(void **state)
{
	struct it_env *e = *state;
	uint64_t seq, t0, ms;
	xs_queue *q;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = suspended_queue(e, &seq);
	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	t0 = clock_now_ns();
	if (!IT_WAIT_UNTIL(!it_suspended(q), 5000))
		fail_msg("our queue stayed suspended after the daemon died");
	ms = it_ms_since(t0);
	print_message("resumed %llu ms after the daemon died\n", (unsigned long long)ms);
	if (ms > 200)
		fail_msg("our queue was resumed %llu ms after the daemon died",
			 (unsigned long long)ms);
	it_daemon_reap(e, WAIT_MS);
	assert_int_equal(xs_wait(q, seq), 0);
	assert_false(agent_connected());
	case_done(e);
}

/* --- 4c. No daemon ------------------------------------------------------- */

/*
 * Without a daemon queues run (this process's and an xs_load's); a daemon
 * started later is found by the agent's reconnection and gets the queue
 * with its hint.
 */
static void daemon_absent_fail_open(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec r;
	struct it_result res;
	uint64_t seq;
	xs_queue *q;
	pid_t l;

	it_guard(60);
	q = it_queue(e, 5);
	seq = it_submit(q, 20, 1000);
	assert_int_equal(xs_wait(q, seq), 0);
	assert_false(agent_connected());
	assert_false(it_suspended(q));
	l = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "1000", "--tasks", "20",
				     "--period-us", "2000", "--priority", "3"));
	it_finish(e, l, 30000, &res);
	assert_int_equal(res.tasks, 20);
	assert_int_equal(res.commands, 20);

	/* The backoff never exceeds 2 s. */
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	if (!IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), &r) == 1, WAIT_MS))
		fail_msg("the agent never connected to the late daemon");
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 5);
	seq = it_submit(q, 5, 1000);
	assert_int_equal(xs_wait(q, seq), 0);
	case_done(e);
}

/* --- 4d. Daemon restart ----------------------------------------------------- */

static bool our_hints_are(struct it_env *e, int64_t prio, int64_t share, int64_t deadline)
{
	struct ipc_queue_rec r;

	return it_queues(e, getpid(), &r) == 1 && r.hint[IPC_KEY_PRIORITY] == prio &&
	       r.hint[IPC_KEY_SHARE] == share && r.hint[IPC_KEY_DEADLINE_US] == deadline;
}

/*
 * The daemon dies and a new one starts on the same sockets: the agent
 * reconnects and registers its queue again with its hints, including one
 * set while no daemon ran; the queue runs in between.
 */
static void daemon_restart_reregisters(void **state)
{
	struct it_env *e = *state;
	uint64_t seq;
	xs_queue *q;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = it_queue_hints(e, 3, 40, 2000, 0);
	assert_true(IT_WAIT_UNTIL(our_hints_are(e, 3, 40, 2000), WAIT_MS));

	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	it_daemon_reap(e, WAIT_MS);
	assert_true(IT_WAIT_UNTIL(!agent_connected(), WAIT_MS));
	assert_int_equal(xs_queue_set_hint(q, XS_HINT_PRIORITY, 4), 0);
	seq = it_submit(q, 5, 1000);
	assert_int_equal(xs_wait(q, seq), 0);

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	if (!IT_WAIT_UNTIL(agent_connected() && our_hints_are(e, 4, 40, 2000), WAIT_MS))
		fail_msg("the queue was not registered again with its hints");
	seq = it_submit(q, 5, 1000);
	assert_int_equal(xs_wait(q, seq), 0);
	case_done(e);
}

/*
 * DESIGN 3.5: "Daemon restart: clients keep running and re-register; hints
 * are not lost." A hint set by an administrator through the control socket
 * (xschedctl set) must survive a restart like the application's own; so
 * must a window knob.
 */
static void daemon_restart_keeps_ctl_hints(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec r;
	xs_queue *q;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = it_queue(e, 3);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 &&
				  r.hint[IPC_KEY_PRIORITY] == 3, WAIT_MS));
	assert_int_equal(ipc_client_set(&e->c, IPC_TARGET_PID, (uint64_t)getpid(),
					IPC_KEY_PRIORITY, 7), 0);
	assert_int_equal(ipc_client_set(&e->c, IPC_TARGET_PID, (uint64_t)getpid(),
					IPC_KEY_THRESHOLD, 4), 0);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 &&
				  r.hint[IPC_KEY_PRIORITY] == 7 && r.threshold == 4, WAIT_MS));
	{
		xs_queue_info info;

		assert_true(IT_WAIT_UNTIL(xs_queue_info_get(q, &info) == 0 &&
					  info.threshold == 4, WAIT_MS));
	}

	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	it_daemon_reap(e, WAIT_MS);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), &r) == 1,
				  WAIT_MS));
	assert_int_equal(r.threshold, 4);
	if (r.hint[IPC_KEY_PRIORITY] != 7)
		fail_msg("the priority set with ipc_client_set was lost by the restart: "
			 "%lld after, 7 before", (long long)r.hint[IPC_KEY_PRIORITY]);
	case_done(e);
}

/* --- Hints set while a queue registers ------------------------------------ */

/* Every queue of ours shows at the daemon the priority it has here. */
static int hints_missing(struct it_env *e, bool print)
{
	struct ipc_queue_rec *r = NULL;
	size_t n = 0, i;
	int64_t *want, *got;
	int k = 0, missing = 0, j;

	assert_int_equal(ipc_client_list(&e->c, &r, &n), 0);
	want = calloc((size_t)e->nq, sizeof(*want));
	got = calloc((size_t)e->nq, sizeof(*got));
	assert_true(want && got);
	for (j = 0; j < e->nq; j++)
		assert_int_equal(xs_queue_get_hint(e->q[j], XS_HINT_PRIORITY, &want[j]), 0);
	for (i = 0; i < n && k < e->nq; i++)
		if (r[i].pid == getpid())
			got[k++] = r[i].hint[IPC_KEY_PRIORITY];
	/* Priorities are distinct: compare them as sets. */
	for (j = 0; j < e->nq; j++) {
		int m;

		for (m = 0; m < k && got[m] != want[j]; m++)
			;
		if (m == k) {
			missing++;
			if (print)
				print_message("priority %lld of queue %d never reached the daemon\n",
					      (long long)want[j], j);
		}
	}
	free(want);
	free(got);
	free(r);
	return missing + (e->nq - k);
}

/*
 * A hint set while the agent registers its queue must reach the daemon.
 * agent_send_register() reads the queue's hints, sends IPC_REGISTER and
 * only then clears hints_dirty, so a hint set in between is never sent.
 * The window is microseconds wide (wider under TSan): the case sweeps the
 * delay between creating each of 200 queues and setting its priority
 * (sleeping or spinning, this process and the daemon on one CPU so that
 * the daemon's wakeup preempts the agent inside the window).
 */
static void daemon_hint_during_registration(void **state)
{
	struct it_env *e = *state;
	enum { N = 200 };
	cpu_set_t all, one;
	int k, missing;

	it_guard(60);
	it_config(e, "[daemon]\nmax_queues_per_client = 256\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	sched_setaffinity(e->daemon, sizeof(one), &one);
	prctl(PR_SET_TIMERSLACK, 1UL);
	/* Distinct priorities: -100 here, then -98..100. */
	it_queue(e, -100);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 1,
				  WAIT_MS));
	for (k = 1; k < N; k++) {
		xs_queue *q = it_queue_bare(e);
		uint64_t d = (uint64_t)(k % 50) * 2 * NSEC_PER_USEC;

		if (k % 2) {
			struct timespec ts = clock_ns_to_timespec(d);

			nanosleep(&ts, NULL);
		} else {
			clock_spin_until(clock_now_ns() + d);
		}
		assert_int_equal(xs_queue_set_hint(q, XS_HINT_PRIORITY, k - 99), 0);
	}
	sched_setaffinity(0, sizeof(all), &all);
	sched_setaffinity(e->daemon, sizeof(all), &all);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == N, WAIT_MS));
	/* A hint follows its registration within milliseconds: allow 2 s. */
	IT_WAIT_UNTIL(hints_missing(e, false) == 0, 2000);
	missing = hints_missing(e, true);
	if (missing)
		fail_msg("%d of %d hints set while their queue registered never reached the "
			 "daemon", missing, N);
	case_done(e);
}

/* --- 4g. Fail-open when the daemon hangs ------------------------------- */

struct create_arg {
	const char *dev;
	xs_hwq *hwq;
	xs_queue *q;
	_Atomic bool done;
};

static void *create_queue_thread(void *p)
{
	struct create_arg *a = p;

	if (xs_sim_hwq_create(a->dev, &a->hwq) == 0 && xs_queue_create(a->hwq, NULL, &a->q) < 0)
		a->q = NULL;
	atomic_store(&a->done, true);
	return NULL;
}

/*
 * Fail-open must not depend on the daemon dying: when it hangs (stopped,
 * stuck) the application's calls must not hang with it. The agent thread
 * sends on its blocking socket while holding the agent lock, so once the
 * daemon stops reading and the socket buffer is full (a few hundred
 * messages: here, hint changes) it blocks in sendmsg() with the lock held,
 * and xs_queue_create() (agent_register() takes the lock) blocks in
 * the application until the daemon reads again.
 */
static void daemon_hung_does_not_block_api(void **state)
{
	struct it_env *e = *state;
	struct create_arg a = { .dev = e->dev };
	struct ipc_queue_rec r;
	bool returned;
	pthread_t t;
	xs_queue *q;
	int i;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = it_queue_hints(e, 3, 40, 2000, 300);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 &&
				  r.hint[IPC_KEY_PRIORITY] == 3, WAIT_MS));
	it_ctl_close(e);
	it_daemon_signal(e, SIGSTOP);
	/* Each change makes the agent send the queue's hints; nobody reads. */
	for (i = 0; i < 3000; i++) {
		assert_int_equal(xs_queue_set_hint(q, XS_HINT_PRIORITY, i % 50), 0);
		if (i % 10 == 9)
			it_nap_ms(1);
	}
	assert_int_equal(pthread_create(&t, NULL, create_queue_thread, &a), 0);
	returned = IT_WAIT_UNTIL(atomic_load(&a.done), 2000);
	/* Let the daemon read again, so that a blocked call completes. */
	it_daemon_signal(e, SIGCONT);
	if (!IT_WAIT_UNTIL(atomic_load(&a.done), WAIT_MS))
		fail_msg("xs_queue_create() still blocked after the daemon resumed");
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_non_null(a.q);
	xs_queue_destroy(a.q, XS_DESTROY_DISCARD);
	xs_hwq_destroy(a.hwq);
	if (!returned)
		fail_msg("xs_queue_create() blocked while the daemon was stopped");
	case_done(e);
}

/* --- 4e. XSCHED_DISABLE ----------------------------------------------------- */

/* XSCHED_DISABLE=1: no connection at all, and the work runs. */
static void daemon_disable_passthrough(void **state)
{
	struct it_env *e = *state;
	const char *const vars[] = { "XSCHED_DISABLE=1", NULL };
	struct ipc_status_reply st;
	struct it_result res;
	uint64_t seq;
	xs_queue *q;
	pid_t l;
	int i;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	l = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "1000", "--tasks", "40",
				     "--period-us", "10000", "--priority", "50"));
	setenv("XSCHED_DISABLE", "1", 1);
	q = it_queue(e, 50);
	seq = it_submit(q, 10, 1000);
	for (i = 0; i < 10; i++) {
		st = it_status(e);
		/* Only this connection (and, when cases share the process, the
		 * agent an earlier case started, which has no queue). */
		assert_int_equal(st.clients - agent_connected(), 1);
		assert_int_equal(st.queues, 0);
		it_nap_ms(20);
	}
	assert_int_equal(xs_wait(q, seq), 0);
	assert_int_equal(it_queues(e, getpid(), NULL), 0);
	it_finish(e, l, 30000, &res);
	assert_int_equal(res.tasks, 40);
	st = it_status(e);
	assert_int_equal(st.clients - agent_connected(), 1);
	assert_int_equal(st.queues, 0);
	case_done(e);
}

/* --- 4f. fork ------------------------------------------------------------ */

/*
 * A process with a registered queue forks and the child creates its own
 * queue. The child starts unmanaged: it inherits no connection (the
 * agent's atfork handler drops the parent's) and registers its own queues
 * through its own agent, so the daemon lists two pids. The parent's
 * registration is unaffected, and the child's exit removes only the
 * child's queues.
 */
static void daemon_fork_client(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec pr, cr, after;
	int up[2], down[2], st;
	uint64_t seq;
	xs_queue *q;
	pid_t child;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = it_queue(e, 5);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &pr) == 1 &&
				  pr.hint[IPC_KEY_PRIORITY] == 5, WAIT_MS));
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	child = it_fork(e);
	if (child == 0) {
		xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;
		xs_hwq *h;
		xs_queue *cq;
		uint64_t end = clock_now_ns() + WAIT_MS * IT_MS, s;
		xs_cmd *c;

		cfg.level = 3;
		setenv("XSCHED_PRIORITY", "1", 1);        /* part of the registration */
		if (xs_sim_hwq_create(e->dev, &h) < 0 || xs_queue_create(h, &cfg, &cq) < 0)
			_exit(2);
		while (!agent_connected() && clock_now_ns() < end)
			it_nap_ms(1);
		if (!agent_connected())
			_exit(3);
		if (xs_sim_kernel(1000000, &c) < 0 || xs_submit(cq, c, &s) < 0 ||
		    xs_wait(cq, s) < 0)
			_exit(4);
		if (!write_byte(up[1]) || !read_byte(down[0], 60000))
			_exit(5);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (!read_byte(up[0], WAIT_MS))
		fail_msg("the forked child did not register its queue");
	assert_true(IT_WAIT_UNTIL(it_queues(e, child, &cr) == 1 &&
				  cr.hint[IPC_KEY_PRIORITY] == 1, WAIT_MS));
	assert_int_equal(it_queues(e, 0, NULL), 2);
	assert_int_equal(it_queues(e, getpid(), &after), 1);
	assert_true(cr.pid != after.pid);
	assert_true(cr.client_id != after.client_id);
	assert_true(cr.queue_id != after.queue_id);
	assert_true(after.queue_id == pr.queue_id && after.client_id == pr.client_id);
	assert_int_equal(after.hint[IPC_KEY_PRIORITY], 5);

	assert_true(write_byte(down[1]));
	assert_int_equal(it_reap(e, child, WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(up[0]);
	close(down[1]);
	assert_true(IT_WAIT_UNTIL(it_queues(e, child, NULL) == 0, WAIT_MS));
	assert_int_equal(it_queues(e, getpid(), &after), 1);
	assert_true(after.queue_id == pr.queue_id && after.client_id == pr.client_id);
	assert_int_equal(after.hint[IPC_KEY_PRIORITY], 5);
	assert_true(agent_connected());
	seq = it_submit(q, 3, 1000);
	assert_int_equal(xs_wait(q, seq), 0);
	case_done(e);
}

/* --- 8. SIGTERM ------------------------------------------------------------ */

/*
 * SIGTERM: STOPPING=1, every queue resumed (ours was suspended), the
 * sockets removed, exit status 0 (which, in the sanitizer builds, also
 * means no leak report).
 */
static void daemon_sigterm_resumes(void **state)
{
	struct it_env *e = *state;
	uint64_t seq;
	xs_queue *q;
	int st;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = suspended_queue(e, &seq);
	it_ctl_close(e);
	it_daemon_signal(e, SIGTERM);
	st = it_daemon_reap(e, WAIT_MS);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("xschedd ended with status 0x%x on SIGTERM", st);
	assert_int_equal(it_notify_wait(e, "STOPPING=1", WAIT_MS, NULL, 0), 0);
	if (!IT_WAIT_UNTIL(!it_suspended(q), 2000))
		fail_msg("our queue stayed suspended after xschedd stopped");
	assert_int_equal(xs_wait(q, seq), 0);
	assert_int_equal(access(e->sock, F_OK), -1);
	assert_int_equal(access(e->ctl, F_OK), -1);
	case_done(e);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(daemon_killed_resumes_queues, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_absent_fail_open, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_restart_reregisters, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_restart_keeps_ctl_hints, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_hint_during_registration, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_hung_does_not_block_api, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_disable_passthrough, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_fork_client, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_sigterm_resumes, it_setup, it_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
