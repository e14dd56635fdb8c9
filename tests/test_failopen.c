/*
 * Fail-open on a hung daemon (ipc_abi.h, "Liveness"): a real xschedd that
 * holds a queue of this process suspended (or capped) behind a
 * high-priority xs_load is stopped with SIGSTOP and continued with
 * SIGCONT. While it is stopped, the queue runs after the timeout
 * (XSCHED_DAEMON_TIMEOUT_MS, default 1 s) and the process says so once on
 * stderr; once continued, the daemon's decisions apply again while the
 * high-priority work still runs. While the daemon is alive, nothing fails
 * open however long the queue waits.
 *
 * Bounds are generous (the 1.25 s the mechanism guarantees, asserted as
 * 4 s) so that a loaded two-core machine does not fail them; each case
 * prints what it measured. This process's stderr is captured
 * (err_capture.h) to check what the agent says.
 */
#include "it_util.h"
#include "err_capture.h"

#include "agent/agent.h"

#define WAIT_MS 10000
#define BOUND_MS 4000

#define HUNG_LINE "xsched: the scheduler daemon gave no sign of life"

/* Fails unless this process said the hung-daemon line @n times so far. */
static void hung_said(size_t n)
{
	char *err = err_captured();
	size_t got = err_count(err, HUNG_LINE);

	free(err);
	if (got != n)
		fail_msg("the hung-daemon line was said %zu times, not %zu", got, n);
}

/* The end of a case: stderr back, the daemon still sound. */
static void case_done(struct it_env *e)
{
	err_release();
	it_ctl_close(e);
	it_daemon_check(e);
	e->ok = true;
}

static int fo_teardown(void **state)
{
	err_release();
	return it_teardown(state);
}

/*
 * Our queue is held behind the flood for seconds on purpose: the
 * starvation guard (on by default) would run it now and then, so it is off.
 */
#define NO_GUARD "starvation_guard_pct = 0\n"

/*
 * The setting of most cases: the case's daemon, a priority-10 xs_load
 * flooding 20 ms commands (ready for a minute, its pid in *@hi), and our
 * priority-0 queue, which the daemon suspends; stderr captured.
 */
static xs_queue *held_queue(struct it_env *e, pid_t *hi)
{
	struct ipc_queue_rec r;
	xs_queue *q;

	it_config(e, "[policy]\n" NO_GUARD);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	*hi = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "20000", "--flood",
				       "--duration-s", "60", "--priority", "10",
				       "--wait-connected-ms", "10000"));
	if (!IT_WAIT_UNTIL(it_queues(e, *hi, &r) == 1 && r.state == IPC_QS_READY, WAIT_MS))
		fail_msg("the high-priority xs_load never showed a ready queue");
	err_capture();
	q = it_queue(e, 0);
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == 1 && it_suspended(q), WAIT_MS))
		fail_msg("the daemon never suspended our queue");
	assert_true(agent_connected());
	return q;
}

/*
 * The daemon alive: the queue stays suspended past the timeout. Stopped:
 * it runs within the bound and its work completes, said once. Continued:
 * the daemon suspends it again while the flood runs, and its new work
 * waits; the flood gone, it completes.
 */
static void failopen_sigstop_sigcont(void **state)
{
	struct it_env *e = *state;
	uint64_t seq, t0, ms;
	xs_queue *q;
	pid_t hi;
	char *err;

	it_guard(90);
	q = held_queue(e, &hi);
	seq = it_submit(q, 10, 2000);

	/* Alive for twice the timeout: nothing fails open. */
	it_nap_ms(2000);
	assert_true(it_suspended(q));
	assert_int_equal(xs_query(q, seq), -EBUSY);
	hung_said(0);

	it_daemon_signal(e, SIGSTOP);
	t0 = clock_now_ns();
	if (!IT_WAIT_UNTIL(!it_suspended(q), BOUND_MS + 2000))
		fail_msg("our queue stayed suspended behind a stopped daemon");
	ms = it_ms_since(t0);
	print_message("resumed %llu ms after SIGSTOP\n", (unsigned long long)ms);
	if (ms > BOUND_MS)
		fail_msg("our queue was resumed %llu ms after SIGSTOP", (unsigned long long)ms);
	/* Resumed and ungated: the work runs with the daemon still stopped. */
	assert_int_equal(xs_wait(q, seq), 0);
	assert_int_equal(xs_wait(q, it_submit(q, 5, 1000)), 0);
	assert_true(agent_connected());
	hung_said(1);
	err = err_captured();
	assert_non_null(strstr(err, HUNG_LINE " for 1000 ms (stopped or stuck): this "
				    "process's queues run unscheduled until it does\n"));
	free(err);

	it_daemon_signal(e, SIGCONT);
	t0 = clock_now_ns();
	if (!IT_WAIT_UNTIL(it_suspended(q), BOUND_MS + 2000))
		fail_msg("the continued daemon never suspended our queue again");
	print_message("suspended again %llu ms after SIGCONT\n",
		      (unsigned long long)it_ms_since(t0));
	seq = it_submit(q, 5, 1000);
	it_nap_ms(100);
	assert_true(it_suspended(q));
	assert_int_equal(xs_query(q, seq), -EBUSY);

	it_kill(e, hi);
	if (!IT_WAIT_UNTIL(!it_suspended(q), WAIT_MS))
		fail_msg("our queue stayed suspended after the flood ended");
	assert_int_equal(xs_wait(q, seq), 0);
	hung_said(1);
	case_done(e);
}

/*
 * A second stop fails open again (the line is said once per process),
 * and a queue registered while the daemon is taken for hung runs too.
 */
static void failopen_twice(void **state)
{
	struct it_env *e = *state;
	uint64_t seq;
	xs_queue *q, *q2;
	pid_t hi;

	it_guard(90);
	q = held_queue(e, &hi);
	for (int round = 0; round < 2; round++) {
		seq = it_submit(q, 3, 1000);
		it_daemon_signal(e, SIGSTOP);
		if (!IT_WAIT_UNTIL(!it_suspended(q), BOUND_MS + 2000))
			fail_msg("round %d: our queue stayed suspended", round);
		assert_int_equal(xs_wait(q, seq), 0);
		it_daemon_signal(e, SIGCONT);
		if (!IT_WAIT_UNTIL(it_suspended(q), BOUND_MS + 2000))
			fail_msg("round %d: never suspended again", round);
	}
	/* Stopped with two queues; one more created meanwhile registers
	 * once the daemon reads again, and every one runs before. */
	it_daemon_signal(e, SIGSTOP);
	assert_true(IT_WAIT_UNTIL(!it_suspended(q), BOUND_MS + 2000));
	q2 = it_queue(e, 0);
	assert_int_equal(xs_wait(q2, it_submit(q2, 3, 1000)), 0);
	it_daemon_signal(e, SIGCONT);
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == 2 && it_suspended(q) &&
			   it_suspended(q2), BOUND_MS + 4000))
		fail_msg("the continued daemon did not take both queues again");
	hung_said(1);
	it_kill(e, hi);
	assert_true(IT_WAIT_UNTIL(!it_suspended(q) && !it_suspended(q2), WAIT_MS));
	case_done(e);
}

/* XSCHED_DAEMON_TIMEOUT_MS=0: a stopped daemon keeps its queues held. */
static void failopen_timeout_off(void **state)
{
	struct it_env *e = *state;
	xs_queue *q;
	pid_t hi;

	it_guard(90);
	setenv("XSCHED_DAEMON_TIMEOUT_MS", "0", 1);
	q = held_queue(e, &hi);
	it_submit(q, 3, 1000);
	it_daemon_signal(e, SIGSTOP);
	it_nap_ms(3000);
	assert_true(it_suspended(q));
	it_daemon_signal(e, SIGCONT);
	it_kill(e, hi);
	assert_true(IT_WAIT_UNTIL(!it_suspended(q), WAIT_MS));
	assert_int_equal(xs_wait_all(q), 0);
	hung_said(0);
	case_done(e);
}

/*
 * A queue running capped (contention-aware window, below an idle queue of
 * higher priority) gets its own window back when the daemon stops, and the
 * cap again when it continues.
 */
static void failopen_cap_lifted(void **state)
{
	struct it_env *e = *state;
	xs_queue *lo;

	it_guard(90);
	it_config(e, "[policy]\ncontention_window = 2\n" NO_GUARD);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	/* Capped from its registration on, below an idle queue. */
	it_queue(e, 10);
	lo = it_queue(e, 0);
	if (!IT_WAIT_UNTIL(it_threshold(lo) == 2, WAIT_MS))
		fail_msg("the daemon never capped the lower queue");
	err_capture();
	it_daemon_signal(e, SIGSTOP);
	if (!IT_WAIT_UNTIL(it_threshold(lo) == XS_DEFAULT_THRESHOLD, BOUND_MS + 2000))
		fail_msg("the cap stayed behind a stopped daemon");
	assert_false(it_suspended(lo));
	it_daemon_signal(e, SIGCONT);
	if (!IT_WAIT_UNTIL(it_threshold(lo) == 2, BOUND_MS + 2000))
		fail_msg("the continued daemon's cap did not come back");
	hung_said(1);
	case_done(e);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(failopen_sigstop_sigcont, it_setup, fo_teardown),
		cmocka_unit_test_setup_teardown(failopen_twice, it_setup, fo_teardown),
		cmocka_unit_test_setup_teardown(failopen_timeout_off, it_setup, fo_teardown),
		cmocka_unit_test_setup_teardown(failopen_cap_lifted, it_setup, fo_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
