/*
 * xschedd end to end: a real daemon, real client processes (xs_load, raw
 * IPC clients, forked children) and this test process's own XQueues, all
 * on a private simulated device.
 *
 * Each case asserts behaviour, not speed: outcomes are compared across
 * orders of magnitude (a 1 ms task next to 100 ms commands, a 100 ms
 * cleanup budget for what takes microseconds), so they hold on a loaded
 * two-core machine and under sanitizers. Polling (IT_WAIT_UNTIL) is used
 * only to observe another process's state, with timeouts far above the
 * expected time; where a case measures a bound (cleanup within 100 ms,
 * resume within 200 ms) it measures from the event to the first
 * observation.
 *
 * Everything a case starts is recorded in its fixture (it_util.h) and
 * removed by the teardown, also after a failed assertion or a timeout.
 */
#include "it_util.h"

#include "agent/agent.h"
#include "base/slice.h"
#include "xsched/policy.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define WAIT_MS 10000        /* for anything that should take milliseconds */

/* The end of a case: the daemon is still sound. */
static void case_done(struct it_env *e)
{
	it_daemon_check(e);
	e->ok = true;
}

/* Waits until @pid has one queue listed that is ready; returns its record. */
static struct ipc_queue_rec wait_ready(struct it_env *e, pid_t pid)
{
	struct ipc_queue_rec r;

	if (!IT_WAIT_UNTIL(it_queues(e, pid, &r) == 1 && r.state == IPC_QS_READY, WAIT_MS))
		fail_msg("pid %d never showed a ready queue", (int)pid);
	return r;
}

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

/* --- 4a. Clients killed at any instant ---------------------------------- */

enum victim {
	V_CONNECTED,            /* connected, said nothing */
	V_HELLO_UNREAD,         /* HELLO sent, the reply (with fds) never read */
	V_READY_HIGH,           /* registered at priority 50, marked ready in shm */
	V_CHATTER,              /* requests in a loop, killed between any two */
	V_REGISTER_LOOP,        /* register/unregister in a loop */
};

/* Child: becomes @v, writes one byte to @wfd, and waits to be killed. */
static void victim_main(struct it_env *e, enum victim v, int wfd)
{
	struct ipc_registered reg;
	int fd = ipc_connect(e->sock), fds[3], n;
	char one = 1;

	if (fd < 0)
		_exit(10);
	switch (v) {
	case V_CONNECTED:
		break;
	case V_HELLO_UNREAD: {
		struct ipc_hello h = { .role = IPC_ROLE_AGENT };

		if (it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) < 0)
			_exit(11);
		break;
	}
	case V_READY_HIGH: {
		struct ipc_shm *shm;
		struct stat st;
		uint64_t bell = 1;

		n = it_raw_hello_agent(fd, fds);
		if (n <= 0 || fstat(fds[0], &st) < 0)
			_exit(12);
		shm = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
		if (shm == MAP_FAILED || it_raw_register(fd, e->dev, 0, 50, &reg) < 0)
			_exit(13);
		atomic_store(&shm->slot[0].ready_ns, clock_now_ns());
		atomic_store(&shm->slot[0].status, IPC_ST_READY);
		atomic_fetch_add(&shm->slot[0].status_seq, 1);
		if (write(fds[1], &bell, sizeof(bell)) < 0)
			_exit(14);
		break;
	}
	case V_CHATTER:
	case V_REGISTER_LOOP:
		if (v == V_CHATTER) {
			struct ipc_hello h = { .role = IPC_ROLE_CTL };

			if (it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) < 0 ||
			    it_raw_answer(fd, 10000, NULL) != 0)
				_exit(15);
		} else if (it_raw_hello_agent(fd, NULL) <= 0) {
			_exit(15);
		}
		if (write(wfd, &one, 1) < 0)
			_exit(16);
		for (uint32_t seq = 10;; seq++) {
			if (v == V_CHATTER) {
				struct ipc_list l = { 0 };
				union it_buf buf;

				it_raw_send(fd, seq % 2 ? IPC_STATUS : IPC_LIST, seq, &l,
					    seq % 2 ? 0 : sizeof(l));
				while ((n = it_raw_recv(fd, &buf, 10000, NULL, NULL)) > 0) {
					const struct ipc_hdr *hd = (const void *)buf.b;
					const struct ipc_list_reply *lr = (const void *)(hd + 1);

					if (hd->type != IPC_LIST_REPLY || (lr->flags & IPC_F_LAST))
						break;
				}
			} else {
				struct ipc_unregister u = { .slot = 0 };

				if (it_raw_register(fd, e->dev, 0, 1, &reg) < 0)
					_exit(17);
				it_raw_send(fd, IPC_UNREGISTER, seq, &u, sizeof(u));
				it_raw_answer(fd, 10000, NULL);
			}
		}
	}
	if (write(wfd, &one, 1) < 0)
		_exit(16);
	for (;;)
		pause();
}

/* Reads one byte from @fd within @ms; false on timeout or end of file. */
static bool read_byte(int fd, unsigned ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b;

	return poll(&p, 1, (int)ms) == 1 && read(fd, &b, 1) == 1;
}

static bool write_byte(int fd)
{
	char b = 1;

	return write(fd, &b, 1) == 1;
}

/* Kills @pid and returns the milliseconds until the daemon is back at @base. */
static uint64_t kill_and_measure(struct it_env *e, pid_t pid, const struct ipc_status_reply *base)
{
	struct ipc_status_reply st;
	uint64_t t0, ms;

	assert_int_equal(kill(pid, SIGKILL), 0);
	t0 = clock_now_ns();
	if (!IT_WAIT_UNTIL((st = it_status(e), st.clients == base->clients &&
				    st.queues == base->queues), 5000))
		fail_msg("pid %d: never cleaned up (clients %u, queues %u, expected %u, %u)",
			 (int)pid, st.clients, st.queues, base->clients, base->queues);
	ms = it_ms_since(t0);
	assert_int_equal(it_reap(e, pid, WAIT_MS, NULL), 0);
	return ms;
}

/*
 * Clients killed at any instant of their conversation, including one
 * holding the highest priority and one killed on the device in the middle
 * of a command, are cleaned up within 100 ms; another client keeps
 * completing commands throughout and is resumed when the killed
 * high-priority client goes.
 */
static void daemon_client_killed_cleanup(void **state)
{
	struct it_env *e = *state;
	static const enum victim victims[] = { V_CONNECTED, V_HELLO_UNREAD, V_READY_HIGH,
					       V_CHATTER, V_REGISTER_LOOP };
	struct ipc_status_reply base, st;
	struct ipc_queue_rec other_rec;
	uint64_t done0, ms;
	pid_t other, v;
	size_t i;

	it_guard(80);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	other = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "1000", "--tasks", "1000000",
					 "--period-us", "5000", "--priority", "0",
					 "--wait-connected-ms", "10000"));
	assert_true(IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1, WAIT_MS));
	base = it_status(e);
	assert_int_equal(base.clients, 2);
	assert_int_equal(base.queues, 1);

	for (i = 0; i < sizeof(victims) / sizeof(victims[0]); i++) {
		int p[2];

		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		v = it_fork(e);
		if (v == 0) {
			close(p[0]);
			victim_main(e, victims[i], p[1]);
		}
		close(p[1]);
		if (!read_byte(p[0], WAIT_MS))
			fail_msg("victim %zu did not get ready", i);
		close(p[0]);
		assert_true(IT_WAIT_UNTIL((st = it_status(e), st.clients == base.clients + 1),
					  WAIT_MS));
		if (victims[i] == V_READY_HIGH) {
			assert_true(IT_WAIT_UNTIL((st = it_status(e), st.queues == base.queues + 1),
						  WAIT_MS));
			/* Its priority suspends the other client. */
			assert_true(IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1 &&
						  !other_rec.running, WAIT_MS));
		}
		if (victims[i] >= V_CHATTER)
			it_nap_ms(20 + 7 * (unsigned)i);      /* somewhere in its loop */
		ms = kill_and_measure(e, v, &base);
		print_message("victim %zu cleaned up in %llu ms\n", i, (unsigned long long)ms);
		if (ms > 100)
			fail_msg("victim %zu cleaned up after %llu ms", i, (unsigned long long)ms);
		/* The other client runs and completes commands. */
		assert_int_equal(it_queues(e, other, &other_rec), 1);
		done0 = other_rec.completed;
		if (!IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1 && other_rec.running &&
				   other_rec.completed > done0, WAIT_MS))
			fail_msg("after victim %zu the other client is stuck", i);
	}

	/* A flooding high-priority process killed on the device. */
	v = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "5000", "--flood",
				     "--duration-s", "60", "--priority", "10",
				     "--wait-connected-ms", "10000"));
	wait_ready(e, v);
	assert_true(IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1 && !other_rec.running,
				  WAIT_MS));
	it_nap_ms(30);
	ms = kill_and_measure(e, v, &base);
	print_message("flooding process cleaned up in %llu ms\n", (unsigned long long)ms);
	if (ms > 100)
		fail_msg("the killed flooding process was cleaned up after %llu ms",
			 (unsigned long long)ms);
	done0 = other_rec.completed;
	if (!IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1 && other_rec.running &&
			   other_rec.completed > done0 + 5, WAIT_MS))
		fail_msg("the other client did not resume after the flooding process died");
	it_kill(e, other);
	case_done(e);
}

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

/* --- 5. Security ------------------------------------------------------------ */

#define SEC_CEILING 5

/* What the unprivileged child got from the daemon, in two phases. */
struct sec_report {
	int ctl_connect;
	int reg;
	int64_t reg_prio;
	uint64_t qid;
	int hint_above, hint_above1, hint_ceiling, hint_lower;
	int open_rc, open_control;
	int set_other_q, set_other_pid, set_own_above, set_own_lower, policy_set;
	int list_rc, list_n, list_foreign;
};

static void sec_child(struct it_env *e, uid_t uid, gid_t gid, uint64_t root_qid, pid_t parent,
		      int wfd, int rfd)
{
	struct sec_report r;
	struct ipc_registered reg = { 0 };
	struct ipc_queue_rec *recs = NULL;
	struct ipc_client c;
	size_t n = 0, i;
	int fd;

	memset(&r, 0, sizeof(r));
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
		_exit(10);
	/* Changing credentials cleared the parent-death signal. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(11);
	r.ctl_connect = ipc_connect(e->ctl);
	if (r.ctl_connect >= 0)
		close(r.ctl_connect);
	fd = ipc_connect(e->sock);
	if (fd < 0 || it_raw_hello_agent(fd, NULL) <= 0)
		_exit(12);
	r.reg = it_raw_register(fd, e->dev, 0, 50, &reg);
	r.reg_prio = reg.hint[IPC_KEY_PRIORITY];
	r.qid = reg.queue_id;
	if (write(wfd, &r, sizeof(r)) != sizeof(r) || !read_byte(rfd, 60000))
		_exit(13);

	r.hint_above = it_raw_set_hint(fd, 0, IPC_KEY_PRIORITY, 50);
	r.hint_above1 = it_raw_set_hint(fd, 0, IPC_KEY_PRIORITY, SEC_CEILING + 1);
	r.hint_ceiling = it_raw_set_hint(fd, 0, IPC_KEY_PRIORITY, SEC_CEILING);
	r.hint_lower = it_raw_set_hint(fd, 0, IPC_KEY_PRIORITY, 2);
	r.open_rc = ipc_client_open(&c, e->ctl, e->sock);
	r.open_control = c.control;
	if (r.open_rc == 0) {
		r.set_other_q = ipc_client_set(&c, IPC_TARGET_QUEUE, root_qid, IPC_KEY_PRIORITY, -5);
		r.set_other_pid = ipc_client_set(&c, IPC_TARGET_PID, (uint64_t)parent,
						 IPC_KEY_PRIORITY, -5);
		r.set_own_above = ipc_client_set(&c, IPC_TARGET_QUEUE, r.qid, IPC_KEY_PRIORITY, 50);
		r.set_own_lower = ipc_client_set(&c, IPC_TARGET_QUEUE, r.qid, IPC_KEY_PRIORITY, 1);
		r.policy_set = ipc_client_policy_set(&c, "edf");
		r.list_rc = ipc_client_list(&c, &recs, &n);
		r.list_n = (int)n;
		for (i = 0; r.list_rc == 0 && i < n; i++)
			r.list_foreign += recs[i].uid != uid;
		free(recs);
		ipc_client_close(&c);
	}
	if (write(wfd, &r, sizeof(r)) != sizeof(r) || !read_byte(rfd, 60000))
		_exit(14);
	_exit(0);
}

static bool read_report(int fd, struct sec_report *r)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, WAIT_MS) == 1 && read(fd, r, sizeof(*r)) == sizeof(*r);
}

/*
 * A client of another uid (a user created for the test) against the
 * per-uid ceiling, other users' queues, the policy and the control socket.
 */
static void daemon_security_uid(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec root_rec, rec;
	struct sec_report r;
	struct passwd *pw;
	struct group *gr;
	struct stat sst;
	char user[32], conf[256], policy[IPC_POLICY_LEN];
	int up[2], down[2], st;
	uid_t uid;
	gid_t gid;
	pid_t child;

	it_guard(60);
	if (geteuid() != 0)
		skip();
	if (access("/usr/sbin/useradd", X_OK) < 0 || access(IT_USERDEL, X_OK) < 0 ||
	    access("/usr/sbin/groupadd", X_OK) < 0 || access(IT_GROUPDEL, X_OK) < 0)
		skip();
	snprintf(user, sizeof(user), "xstest1-%d", (int)getpid());
	{
		char *argv[] = { (char *)"useradd", (char *)"-M", (char *)"-N", (char *)"-s",
				 (char *)"/usr/sbin/nologin", user, NULL };

		assert_int_equal(it_run_cmd("/usr/sbin/useradd", argv), 0);
		snprintf(e->user, sizeof(e->user), "%s", user);
	}
	if (!getgrnam("xsched")) {
		char *argv[] = { (char *)"groupadd", (char *)"xsched", NULL };

		assert_int_equal(it_run_cmd("/usr/sbin/groupadd", argv), 0);
		snprintf(e->group, sizeof(e->group), "xsched");
	}
	gr = getgrnam("xsched");
	assert_non_null(gr);
	pw = getpwnam(user);
	assert_non_null(pw);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	assert_true(uid != 0);
	snprintf(conf, sizeof(conf), "[limits]\npriority_ceiling = 0\nuid.%u.priority_ceiling = %d\n",
		 (unsigned)uid, SEC_CEILING);
	it_config(e, conf);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	/* The control socket is for root and group xsched only. */
	assert_int_equal(stat(e->ctl, &sst), 0);
	assert_int_equal(sst.st_mode & 0777, 0660);
	assert_int_equal(sst.st_gid, gr->gr_gid);

	it_queue(e, 20);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &root_rec) == 1 &&
				  root_rec.hint[IPC_KEY_PRIORITY] == 20, WAIT_MS));
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	child = it_fork(e);
	if (child == 0)
		sec_child(e, uid, gid, root_rec.queue_id, getppid(), up[1], down[0]);
	close(up[1]);
	close(down[0]);

	/* Phase 1: connecting and registering. */
	if (!read_report(up[0], &r))
		fail_msg("the unprivileged child did not report (see its exit status)");
	assert_int_equal(r.ctl_connect, -EACCES);      /* control socket: refused */
	assert_int_equal(r.reg, 0);
	assert_int_equal(r.reg_prio, SEC_CEILING);     /* asked 50: clamped */
	assert_true(it_queue_rec(e, r.qid, &rec));
	assert_int_equal(rec.uid, uid);
	assert_int_equal(rec.hint[IPC_KEY_PRIORITY], SEC_CEILING);
	assert_true(write_byte(down[1]));

	/* Phase 2: changing things. */
	if (!read_report(up[0], &r))
		fail_msg("the unprivileged child did not report phase 2");
	assert_int_equal(r.hint_above, -EPERM);        /* own hint above the ceiling */
	assert_int_equal(r.hint_above1, -EPERM);
	assert_int_equal(r.hint_ceiling, 0);           /* up to the ceiling is fine */
	assert_int_equal(r.hint_lower, 0);             /* lowering is fine */
	assert_int_equal(r.open_rc, 0);                /* falls back to the client socket */
	assert_false(r.open_control);
	assert_int_equal(r.set_other_q, -EPERM);       /* root's queue, by id */
	assert_int_equal(r.set_other_pid, -EPERM);     /* root's process, by pid */
	assert_int_equal(r.set_own_above, -EPERM);     /* own queue above the ceiling */
	assert_int_equal(r.set_own_lower, 0);          /* own queue lowered */
	assert_int_equal(r.policy_set, -EPERM);        /* the policy */
	assert_int_equal(r.list_rc, 0);
	assert_int_equal(r.list_n, 1);                 /* sees only its own queue */
	assert_int_equal(r.list_foreign, 0);

	assert_true(it_queue_rec(e, r.qid, &rec));
	assert_int_equal(rec.hint[IPC_KEY_PRIORITY], 1);
	assert_true(it_queue_rec(e, root_rec.queue_id, &rec));
	assert_int_equal(rec.hint[IPC_KEY_PRIORITY], 20);
	assert_int_equal(ipc_client_policy_get(&e->c, policy, sizeof(policy)), 0);
	assert_string_equal(policy, "hpf");

	assert_true(write_byte(down[1]));
	assert_int_equal(it_reap(e, child, WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(up[0]);
	close(down[1]);
	case_done(e);
}

/* --- 6. Policy switch and reload ------------------------------------------- */

static int rec_cmp(const void *a, const void *b)
{
	const struct ipc_queue_rec *x = a, *y = b;

	return x->queue_id < y->queue_id ? -1 : x->queue_id > y->queue_id;
}

/* Every queue, sorted by id; *@n of them. */
static struct ipc_queue_rec *all_queues(struct it_env *e, size_t *n)
{
	struct ipc_queue_rec *r = NULL;

	assert_int_equal(ipc_client_list(&e->c, &r, n), 0);
	qsort(r, *n, sizeof(*r), rec_cmp);
	return r;
}

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

static void assert_policy(struct it_env *e, const char *name)
{
	char got[IPC_POLICY_LEN];
	struct ipc_status_reply st;

	assert_int_equal(ipc_client_policy_get(&e->c, got, sizeof(got)), 0);
	assert_string_equal(got, name);
	st = it_status(e);
	assert_string_equal(st.policy, name);
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

/* The daemon's log so far, NUL-terminated; malloc()ed. */
static char *read_log(struct it_env *e)
{
	size_t len = 0, cap = 4096;
	char *text = malloc(cap);
	ssize_t n;
	int fd = open(e->log, O_RDONLY | O_CLOEXEC);

	assert_non_null(text);
	assert_true(fd >= 0);
	while ((n = read(fd, text + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			cap *= 2;
			text = realloc(text, cap);
			assert_non_null(text);
		}
	}
	close(fd);
	text[len] = '\0';
	return text;
}

/* Occurrences of @what in the daemon's log. */
static int log_count(struct it_env *e, const char *what)
{
	char *text = read_log(e), *p = text;
	int n = 0;

	while ((p = strstr(p, what))) {
		n++;
		p += strlen(what);
	}
	free(text);
	return n;
}

/*
 * SIGHUP re-reads the configuration file: a new policy applies and the
 * notify protocol says RELOADING=1 (with MONOTONIC_USEC) then READY=1. A
 * broken file or an unknown policy keeps the running one, and says so
 * where an operator looks: the log, at error level, with the reason, and
 * systemd's STATUS=; "configuration reloaded" is never logged for it.
 */
static void daemon_sighup_reload(void **state)
{
	struct it_env *e = *state;
	char msg[512];
	struct ipc_queue_rec r;

	it_guard(60);
	it_config(e, "[policy]\nname = hpf\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_policy(e, "hpf");
	it_queue(e, 4);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 &&
				  r.hint[IPC_KEY_PRIORITY] == 4, WAIT_MS));

	it_config(e, "[policy]\nname = edf\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "MONOTONIC_USEC="));
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_policy(e, "edf");
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 4);

	assert_non_null(strstr(msg, "STATUS=scheduling (policy edf)"));
	assert_int_equal(log_count(e, "configuration reloaded"), 1);

	it_config(e, "[policy]\nname = hpf\nno_such_key = 1\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_policy(e, "edf");
	if (!strstr(msg, "STATUS=reload failed: ") || !strstr(msg, ":3: unknown key [policy] no_such_key"))
		fail_msg("notify after a failed reload: '%s'", msg);
	assert_int_equal(log_count(e, "<3>xschedd: reload failed"), 1);
	assert_int_equal(log_count(e, ":3: unknown key [policy] no_such_key"), 1);

	it_config(e, "[policy]\nname = no-such-policy\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_policy(e, "edf");
	if (!strstr(msg, "STATUS=reload failed: policy no-such-policy: no such built-in policy"))
		fail_msg("notify after a failed reload: '%s'", msg);
	assert_int_equal(log_count(e, "<3>xschedd: reload failed"), 2);
	assert_int_equal(log_count(e, "configuration reloaded"), 1);
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 4);
	case_done(e);
}

/*
 * Runs @path with @args, as user @uid unless it is (uid_t)-1; its stdout
 * and stderr go to @out. It must exit within WAIT_MS. Returns its exit
 * status.
 */
static int prog_run(struct it_env *e, const char *path, uid_t uid, const char *const *args,
		    char *out, size_t len)
{
	const char *argv[24] = { path };
	int p[2], st = 0, n = 1;
	size_t got = 0;
	ssize_t k;
	pid_t pid;

	while (*args && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = it_fork(e);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (uid != (uid_t)-1 && (setgroups(0, NULL) < 0 || setgid(uid) < 0 ||
					 setuid(uid) < 0))
			_exit(126);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (got + 1 < len && (k = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)k;
	out[got] = '\0';
	close(p[0]);
	assert_int_equal(it_reap(e, pid, WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* prog_run() of @path as @uid must exit @rc with @what in its output. */
#define PROG_EXPECT(e, path, uid, rc, what, ...)                                   \
	do {                                                                       \
		char out_[4096];                                                   \
		int rc_ = prog_run(e, path, uid, IT_ARGS(__VA_ARGS__), out_,       \
				   sizeof(out_));                                  \
		if (rc_ != (rc) || !strstr(out_, what))                            \
			fail_msg("%s %s: exit %d, output '%s'; expected exit %d and "  \
				 "'%s'", path, #__VA_ARGS__, rc_, out_, rc, what); \
	} while (0)

/* xschedd with these arguments must exit @rc with @what in its output. */
#define XSD_EXPECT(e, rc, what, ...) PROG_EXPECT(e, XSD_BIN, (uid_t)-1, rc, what, __VA_ARGS__)

/* The CPU slice the kernel gives thread @tid, in ns (0: unknown). */
static uint64_t thread_slice_ns(pid_t tid)
{
	struct slice_attr at;

	if (slice_getattr(tid, &at) < 0 || at.policy != SCHED_OTHER)
		return 0;
	return at.runtime;
}

/* The scheduling attributes of @pid's thread named @comm: 0, or -ESRCH. */
static int named_thread_attr(pid_t pid, const char *comm, struct slice_attr *at)
{
	char path[320], name[32];
	struct dirent *d;
	int rc = -ESRCH;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while (rc < 0 && (d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && !strncmp(name, comm, strlen(comm)))
			rc = slice_getattr((pid_t)atoi(d->d_name), at);
		fclose(f);
	}
	closedir(dir);
	return rc;
}

/* The slice of @pid's thread named @comm; 0 if no such thread. */
static uint64_t named_thread_slice_ns(pid_t pid, const char *comm)
{
	struct slice_attr at;

	if (named_thread_attr(pid, comm, &at) < 0 || at.policy != SCHED_OTHER)
		return 0;
	return at.runtime;
}

/* Whether @pid has a thread named @comm under @policy at @prio. */
static bool named_thread_policy(pid_t pid, const char *comm, uint32_t policy, uint32_t prio)
{
	struct slice_attr at;

	return named_thread_attr(pid, comm, &at) == 0 && at.policy == policy &&
	       at.priority == prio;
}

/* "Max realtime timeout" of /proc/@pid/limits: soft and hard, in us. */
static bool rttime_limits(pid_t pid, char soft[32], char hard[32])
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "Max realtime timeout", 20) &&
			sscanf(line + 20, "%31s %31s", soft, hard) == 2;
	fclose(f);
	return found;
}

/*
 * [daemon] @key = @bad must fail --check-config; then the daemon starts
 * with @key = @good, and the case talks to it.
 */
static void start_after_refusal(struct it_env *e, const char *key, const char *bad,
				const char *good)
{
	char conf[128], why[160];

	snprintf(conf, sizeof(conf), "[daemon]\n%s = %s\n", key, bad);
	snprintf(why, sizeof(why), "bad value for [daemon] %s = %s", key, bad);
	it_config(e, conf);
	XSD_EXPECT(e, 1, why, "--check-config", "--config", e->conf);
	snprintf(conf, sizeof(conf), "[daemon]\n%s = %s\n", key, good);
	it_config(e, conf);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
}

/*
 * Short CPU slices for the threads that carry decisions: the daemon's
 * ([daemon] thread_slice_us, applied at start and at a reload, 0 giving the
 * kernel's back) and a process's agent and XQueue worker
 * (XSCHED_THREAD_SLICE_US); the application's own threads keep theirs. A
 * value the kernel would clamp is an error in the file.
 */
static void daemon_thread_slices(void **state)
{
	struct it_env *e = *state;
	const char *const vars[] = { "XSCHED_THREAD_SLICE_US=400", NULL };
	uint64_t main_ns;
	pid_t lo;

	if (!tu_kernel_at_least(6, 12))
		skip();
	it_guard(60);
	start_after_refusal(e, "thread_slice_us", "50", "300");
	assert_int_equal(thread_slice_ns(e->daemon), 300000);

	lo = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "1000", "--flood",
				      "--duration-s", "60", "--wait-connected-ms", "10000"));
	wait_ready(e, lo);
	assert_true(IT_WAIT_UNTIL(named_thread_slice_ns(lo, "xsched-agent") == 400000 &&
				  named_thread_slice_ns(lo, "xsched-worker") == 400000, WAIT_MS));
	main_ns = thread_slice_ns(lo);
	assert_true(main_ns > 0);
	assert_int_not_equal(main_ns, 400000);

	it_config(e, "[daemon]\nthread_slice_us = 0\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(thread_slice_ns(e->daemon), main_ns);   /* the kernel's */
	it_kill(e, lo);
	case_done(e);
}

/* Whether `xschedctl metrics` (as root) prints @line. */
static bool metrics_have(struct it_env *e, const char *line)
{
	static char out[1 << 16];

	return prog_run(e, XSCTL_BIN, (uid_t)-1, IT_ARGS("--control", e->ctl, "metrics"), out,
			sizeof(out)) == 0 && strstr(out, line);
}

/*
 * Real-time priority for the threads that carry decisions, when the
 * operator asks: [daemon] realtime_priority for the daemon's loop (with an
 * RLIMIT_RTTIME guard against a runaway loop; 0 at a reload gives the
 * normal policy and the slice back), XSCHED_THREAD_RTPRIO for a process's
 * agent thread only (its XQueue workers keep the slice). Needs root.
 */
static void daemon_realtime(void **state)
{
	struct it_env *e = *state;
	const char *const vars[] = { "XSCHED_THREAD_RTPRIO=1", NULL };
	char soft[32], hard[32];
	struct slice_attr at;
	pid_t lo;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	start_after_refusal(e, "realtime_priority", "100", "1");
	assert_int_equal(slice_getattr(e->daemon, &at), 0);
	assert_int_equal(at.policy, SCHED_FIFO);
	assert_int_equal(at.priority, 1);
	assert_true(metrics_have(e, "\nxsched_daemon_realtime_priority 1\n"));
	assert_true(rttime_limits(e->daemon, soft, hard));
	assert_string_equal(soft, "500000");
	assert_string_equal(hard, "1000000");

	lo = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "1000", "--flood",
				      "--duration-s", "60", "--wait-connected-ms", "10000"));
	wait_ready(e, lo);
	assert_true(IT_WAIT_UNTIL(named_thread_policy(lo, "xsched-agent", SCHED_FIFO, 1) &&
				  named_thread_policy(lo, "xsched-worker", SCHED_OTHER, 0),
				  WAIT_MS));
	assert_int_equal(slice_getattr(lo, &at), 0);
	assert_int_equal(at.policy, SCHED_OTHER);               /* the application's */

	it_config(e, "[daemon]\nrealtime_priority = 0\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(slice_getattr(e->daemon, &at), 0);
	assert_int_equal(at.policy, SCHED_OTHER);
	if (tu_kernel_at_least(6, 12))
		assert_int_equal(at.runtime, SLICE_DEFAULT_US * 1000ull);
	assert_true(metrics_have(e, "\nxsched_daemon_realtime_priority 0\n"));
	it_kill(e, lo);
	case_done(e);
}

/*
 * The command line: --version; --check-config reports every problem of a
 * file (a key given twice names both lines) and exits 0 or 1; a directory
 * as --config, an over-long socket path (never cut to 107 bytes) and twice
 * the same socket are errors, at start too.
 */
static void daemon_command_line(void **state)
{
	struct it_env *e = *state;
	char long_path[160], bad[IT_PATH + 8];
	FILE *f;

	it_guard(60);
	XSD_EXPECT(e, 0, "xschedd 0.", "--version");
	XSD_EXPECT(e, 0, "Usage: xschedd", "--help");
	XSD_EXPECT(e, 2, "Usage: xschedd", "--bogus");
	it_config(e, "[policy]\nname = fair\nslice_ms = 5\n");
	XSD_EXPECT(e, 0, "valid (policy fair)", "--check-config", "--config", e->conf);

	snprintf(bad, sizeof(bad), "%s.bad", e->conf);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("[policy]\nname = fair\n[daemon]\nmax_clients = 0\n[policy]\nname = hpf\n", f);
	fclose(f);
	XSD_EXPECT(e, 1, ".bad:4: bad value for [daemon] max_clients = 0", "--check-config",
		   "--config", bad);
	XSD_EXPECT(e, 1, ".bad:6: [policy] name given twice (first at line 2)",
		   "--check-config", "--config", bad);
	/* A start with it fails the same way, before any socket exists. */
	XSD_EXPECT(e, 1, "given twice", "--config", bad, "--socket", e->sock,
		   "--control-socket", e->ctl);
	unlink(bad);
	XSD_EXPECT(e, 1, "is a directory", "--check-config", "--config", e->dir);
	XSD_EXPECT(e, 1, "is a directory", "--config", e->dir, "--socket", e->sock,
		   "--control-socket", e->ctl);
	XSD_EXPECT(e, 1, "policy nope: no such built-in policy", "--check-config", "--config",
		   e->conf, "--policy", "nope");

	memset(long_path, 'a', sizeof(long_path));
	memcpy(long_path, e->dir, strlen(e->dir));
	long_path[strlen(e->dir)] = '/';
	long_path[120] = '\0';
	XSD_EXPECT(e, 1, "longer than 107 bytes", "--socket", long_path, "--control-socket",
		   e->ctl, "--config", e->conf);
	XSD_EXPECT(e, 1, "longer than 107 bytes", "--check-config", "--control-socket",
		   long_path);
	XSD_EXPECT(e, 1, "must differ", "--socket", e->sock, "--control-socket", e->sock,
		   "--config", e->conf);
	/* None of these left a socket behind. */
	assert_int_equal(access(e->sock, F_OK), -1);
	assert_int_equal(access(long_path, F_OK), -1);
	long_path[107] = '\0';
	assert_int_equal(access(long_path, F_OK), -1);
	e->ok = true;
}

/* --- 7. Malformed input and limits ----------------------------------------- */

/* Prints what @pid's descriptors are, for a failure message. */
static void print_fds(pid_t pid)
{
	char path[64], fdpath[PATH_MAX], target[256];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(dir = opendir(path)))
		return;
	while ((d = readdir(dir))) {
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, d->d_name);
		n = readlink(fdpath, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		print_message("  fd %s: %s\n", d->d_name, target);
	}
	closedir(dir);
}

/* Open descriptors of process @pid. */
static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* An answer that refuses: an error reply or a closed connection. */
static void assert_refused(int answer, const char *what)
{
	if (answer == -ETIMEDOUT)
		fail_msg("%s: no answer", what);
	if (answer >= 0 && answer != 1)
		fail_msg("%s: accepted", what);
}

static int raw_connect(struct it_env *e)
{
	int fd = ipc_connect(e->sock);

	assert_true(fd >= 0);
	return fd;
}

static int raw_ctl(struct it_env *e)
{
	struct ipc_hello h = { .role = IPC_ROLE_CTL };
	int fd = raw_connect(e);

	assert_true(it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) > 0);
	assert_int_equal(it_raw_answer(fd, WAIT_MS, NULL), 0);
	return fd;
}

static int raw_agent(struct it_env *e)
{
	int fd = raw_connect(e);

	assert_true(it_raw_hello_agent(fd, NULL) > 0);
	return fd;
}

/*
 * On a terminal the daemon's lines carry a timestamp and a level word
 * instead of the syslog prefix that journald reads; elsewhere (the other
 * cases' log file) the prefix stays.
 */
static void daemon_log_on_terminal(void **state)
{
	struct it_env *e = *state;
	char buf[4096], *line;
	size_t got = 0;
	int master, st;
	pid_t pid;

	it_guard(60);
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	pid = it_fork(e);
	if (pid == 0) {
		int tty = open(ptsname(master), O_RDWR | O_NOCTTY);

		if (tty < 0 || dup2(tty, 2) < 0)
			_exit(126);
		execl(XSD_BIN, XSD_BIN, "--socket", e->sock, "--control-socket", e->ctl,
		      "--config", e->conf, "--policy", "no-such-policy", (char *)NULL);
		_exit(127);
	}
	/* It fails at once: an unknown policy, said at error level. */
	assert_int_equal(it_reap(e, pid, WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	for (;;) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (got + 1 >= sizeof(buf) || poll(&p, 1, 200) != 1 ||
		    (n = read(master, buf + got, sizeof(buf) - 1 - got)) <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(master);
	line = strstr(buf, "xschedd: error: policy no-such-policy: no such built-in policy");
	if (!line || strchr(buf, '<') || line - buf < 24 || buf[4] != '-' || buf[13] != ':')
		fail_msg("on a terminal: '%s'", buf);
	e->ok = true;
}

/* A socket at @path that listens (@listen) or is stale; returns its fd. */
static int plain_socket(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0 && strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* A daemon answers on our control connection and takes a registration. */
static void assert_daemon_serves(struct it_env *e)
{
	struct ipc_registered reg;
	int fd = raw_agent(e);

	it_status(e);
	assert_int_equal(it_raw_register(fd, e->dev, 0, 1, &reg), 0);
	close(fd);
}

/*
 * One daemon per socket: a second xschedd on the same paths (or on one of
 * them) exits 1 naming the first, which keeps serving both; so does one
 * facing a socket someone else listens on without a lock. Nothing but a
 * stale socket is ever removed: a regular file or a directory at a socket
 * path is an error and stays as it was. The stale sockets of a killed
 * daemon are replaced at the next start; a stopped daemon removes its
 * sockets.
 */
static void daemon_one_per_socket(void **state)
{
	struct it_env *e = *state;
	char other[IT_PATH + 16], file[IT_PATH + 16], expect[160];
	struct stat st;
	FILE *f;
	int fd;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	snprintf(other, sizeof(other), "%s/other.sock", e->dir);
	snprintf(expect, sizeof(expect), "another xschedd (pid %d) serves %s", (int)e->daemon,
		 e->sock);
	XSD_EXPECT(e, 1, expect, "--socket", e->sock, "--control-socket", e->ctl, "--config",
		   e->conf);
	snprintf(expect, sizeof(expect), "another xschedd (pid %d) serves %s", (int)e->daemon,
		 e->ctl);
	XSD_EXPECT(e, 1, expect, "--socket", other, "--control-socket", e->ctl, "--config",
		   e->conf);
	/* The first one is untouched; the second left nothing behind. */
	assert_int_equal(access(other, F_OK), -1);
	assert_daemon_serves(e);
	it_ctl_close(e);
	it_ctl_open(e);

	/* A listener that holds no lock (an older daemon) is detected too. */
	snprintf(file, sizeof(file), "%s/file", e->dir);
	fd = plain_socket(other, true);
	XSD_EXPECT(e, 1, "a daemon is listening on", "--socket", other, "--control-socket",
		   file, "--config", e->conf);
	close(fd);
	unlink(other);
	{
		char lock[IT_PATH + 24];

		snprintf(lock, sizeof(lock), "%s.lock", other);
		unlink(lock);
	}

	/* A regular file and a directory are errors, and are left alone. */
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	XSD_EXPECT(e, 1, "exists and is not a socket: not removing it", "--socket", file,
		   "--control-socket", other, "--config", e->conf);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 9);
	XSD_EXPECT(e, 1, "is a directory", "--socket", other, "--control-socket", e->dir,
		   "--config", e->conf);
	assert_int_equal(access(other, F_OK), -1);
	unlink(file);
	{
		char lock[IT_PATH + 24];

		/* No lock file next to what is no socket. */
		snprintf(lock, sizeof(lock), "%s.lock", file);
		assert_int_equal(access(lock, F_OK), -1);
		snprintf(lock, sizeof(lock), "%s.lock", other);
		unlink(lock);
	}

	/* Killed: its sockets are stale, and the next daemon replaces them. */
	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	it_daemon_reap(e, WAIT_MS);
	assert_int_equal(stat(e->sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_daemon_serves(e);
	it_ctl_close(e);
	it_daemon_signal(e, SIGTERM);
	assert_true(WIFEXITED(it_daemon_reap(e, WAIT_MS)));
	assert_int_equal(access(e->sock, F_OK), -1);
	assert_int_equal(access(e->ctl, F_OK), -1);
	e->ok = true;
}

/* CPU time of process @pid so far, in clock ticks. */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	/* After the command name in parentheses: fields 3.. ; utime is 14. */
	p = strrchr(buf, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st), 2);
	return (long)(ut + st);
}

/*
 * Starts the case's daemon and control connection, and another client
 * busy with small periodic tasks for as long as the case runs (its record
 * in *@rec once listed). Returns its pid.
 */
static pid_t busy_daemon(struct it_env *e, struct ipc_queue_rec *rec)
{
	pid_t other;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	other = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "500", "--tasks", "1000000",
					 "--period-us", "3000", "--wait-connected-ms", "10000"));
	assert_true(IT_WAIT_UNTIL(it_queues(e, other, rec) == 1, WAIT_MS));
	return other;
}

/*
 * One round of descriptor exhaustion: the daemon's limit lowered to its
 * @fds0 descriptors plus @extra, 80 connections at once, one second. The
 * daemon must not spin (under a quarter of a CPU), log at most one line
 * (at least one if @must_log), keep serving status and @other's work, and
 * be back at @fds0 descriptors, taking new clients, once they are closed.
 */
static void fd_exhaust_round(struct it_env *e, int fds0, int extra, pid_t other, bool must_log)
{
	struct rlimit lim, low;
	struct ipc_queue_rec rec;
	int fd[80], i, lines;
	uint64_t done0;
	long t0, used;

	assert_int_equal(prlimit(e->daemon, RLIMIT_NOFILE, NULL, &lim), 0);
	low = lim;
	low.rlim_cur = (rlim_t)(fds0 + extra);
	assert_int_equal(prlimit(e->daemon, RLIMIT_NOFILE, &low, NULL), 0);
	lines = log_count(e, "out of file descriptors");
	for (i = 0; i < 80; i++)
		fd[i] = raw_connect(e);
	t0 = cpu_ticks(e->daemon);
	it_nap_ms(1000);
	used = cpu_ticks(e->daemon) - t0;
	lines = log_count(e, "out of file descriptors") - lines;
	print_message("out of descriptors (+%d): %ld of %ld CPU ticks in 1 s, %d log lines\n",
		      extra, used, sysconf(_SC_CLK_TCK), lines);
	if (used > sysconf(_SC_CLK_TCK) / 4)
		fail_msg("the daemon used %ld of %ld CPU ticks in 1 s out of descriptors", used,
			 sysconf(_SC_CLK_TCK));
	/* Rate-limited: one message per 10 s at most. */
	if (lines > 1 || (must_log && lines < 1))
		fail_msg("%d log lines about the descriptors in round +%d", lines, extra);
	/* Clients it has are served meanwhile. */
	it_status(e);
	/* (fail_msg: its message is printed at once, whatever teardown does.) */
	if (it_queues(e, other, &rec) != 1)
		fail_msg("round +%d: the other process's queue is not listed", extra);
	done0 = rec.completed;
	if (!IT_WAIT_UNTIL(it_queues(e, other, &rec) == 1 && rec.completed > done0 + 5, WAIT_MS))
		fail_msg("round +%d: the other process completed %llu commands in %d ms (6 expected)",
			 extra, (unsigned long long)(rec.completed - done0), WAIT_MS);
	for (i = 0; i < 80; i++)
		close(fd[i]);
	assert_int_equal(prlimit(e->daemon, RLIMIT_NOFILE, &lim, NULL), 0);
	if (!IT_WAIT_UNTIL(count_fds(e->daemon) == fds0, WAIT_MS))
		fail_msg("the daemon holds %d descriptors, %d before", count_fds(e->daemon), fds0);
	assert_daemon_serves(e);
}

/*
 * Out of file descriptors (the daemon's limit lowered to what it uses
 * plus 21, and plus 20, then 80 connections at once: one of the two fills
 * every descriptor with connections, where accept() itself fails): the
 * daemon neither spins on its listener nor floods its log. It closes the
 * connections it cannot hold, keeps serving the clients it has (status,
 * another process's work), and takes new clients again once descriptors
 * are free.
 */
static void daemon_fd_exhaustion(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec rec;
	int fds0;
	pid_t other;

	it_guard(60);
	other = busy_daemon(e, &rec);
	fds0 = count_fds(e->daemon);
	fd_exhaust_round(e, fds0, 21, other, true);
	fd_exhaust_round(e, fds0, 20, other, false);
	it_kill(e, other);
	case_done(e);
}

/* --- Node-grade operation --------------------------------------------------- */

/*
 * A raw agent of user nobody (uid 65534) with one queue asking for
 * @priority. Returns its pid; closing *@ctl ends it.
 */
static pid_t nobody_agent(struct it_env *e, int64_t priority, int *ctl)
{
	int ok[2], hold[2];
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe2(ok, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	pid = it_fork(e);
	if (pid == 0) {
		struct ipc_registered reg;
		int fd;

		close(hold[1]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		fd = ipc_connect(e->sock);
		if (fd < 0 || it_raw_hello_agent(fd, NULL) <= 0 ||
		    it_raw_register(fd, e->dev, 0, priority, &reg) < 0)
			_exit(2);
		if (write(ok[1], "k", 1) != 1)
			_exit(3);
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ok[1]);
	close(hold[0]);
	{
		struct pollfd p = { .fd = ok[0], .events = POLLIN };

		if (poll(&p, 1, WAIT_MS) != 1 || read(ok[0], &c, 1) != 1)
			fail_msg("the agent of user nobody did not register");
	}
	close(ok[0]);
	*ctl = hold[1];
	return pid;
}

/* The listed record of queue @id; fails if it is gone. */
static struct ipc_queue_rec queue_rec(struct it_env *e, uint64_t id)
{
	struct ipc_queue_rec r;

	if (!it_queue_rec(e, id, &r))
		fail_msg("queue %llu is not listed", (unsigned long long)id);
	return r;
}

/* Sends SIGHUP after writing @conf; waits for the reload to end. */
static void reload_with(struct it_env *e, const char *conf)
{
	it_config(e, conf);
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
}

/*
 * A reload applies new defaults and ceilings at once to queues already
 * registered: a queue that set no priority takes the new default, one that
 * set its own keeps it, a user's queue is clamped to the user's lowered
 * ceiling and given back what it asked when the ceiling rises. A failed
 * reload changes nothing and says so in the status (and `xschedctl
 * status`). Each registration is logged (-v) with pid, uid, comm, device
 * and hints. Needs root (a second user).
 */
static void daemon_reload_applies_now(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec r, rn, ro, rb;
	struct ipc_status_reply st;
	uint64_t qn = 0, qo = 0, qb = 0;
	int hold;
	size_t n, i;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	it_config(e, "[limits]\nuid.65534.priority_ceiling = 3\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	it_queue_bare(e);
	it_queue(e, 4);
	nb = nobody_agent(e, 3, &hold);
	assert_true(IT_WAIT_UNTIL(it_queues(e, 0, NULL) == 3, WAIT_MS));
	{
		struct ipc_queue_rec *all = all_queues(e, &n);

		for (i = 0; i < n; i++) {
			if (all[i].pid == nb)
				qb = all[i].queue_id;
			else if (all[i].hint[IPC_KEY_PRIORITY] == 4)
				qo = all[i].queue_id;
			else
				qn = all[i].queue_id;
		}
		free(all);
	}
	assert_true(qn && qo && qb);
	rb = queue_rec(e, qb);
	assert_int_equal(rb.uid, 65534);
	assert_int_equal(rb.hint[IPC_KEY_PRIORITY], 3);
	assert_int_equal(queue_rec(e, qn).hint[IPC_KEY_PRIORITY], 0);
	/* -v logs every registration, with who and what. */
	if (log_count(e, "registered: pid ") < 3 || log_count(e, " uid 65534 comm it-raw device ") != 1)
		fail_msg("registrations are not logged with pid, uid, comm and device");

	reload_with(e, "[defaults]\npriority = -7\nshare = 30\n"
		       "[limits]\nuid.65534.priority_ceiling = 1\n");
	rn = queue_rec(e, qn);
	ro = queue_rec(e, qo);
	rb = queue_rec(e, qb);
	print_message("after the reload: priorities %lld (default), %lld (own), %lld (user)\n",
		      (long long)rn.hint[IPC_KEY_PRIORITY], (long long)ro.hint[IPC_KEY_PRIORITY],
		      (long long)rb.hint[IPC_KEY_PRIORITY]);
	assert_int_equal(rn.hint[IPC_KEY_PRIORITY], -7);
	assert_int_equal(rn.eff_priority, -7);
	assert_int_equal(rn.hint[IPC_KEY_SHARE], 30);
	assert_int_equal(ro.hint[IPC_KEY_PRIORITY], 4);
	assert_int_equal(ro.hint[IPC_KEY_SHARE], 30);
	assert_int_equal(rb.hint[IPC_KEY_PRIORITY], 1);
	st = it_status(e);
	assert_int_equal(st.reloads, 1);
	assert_int_equal(st.reload_status, 0);

	/* The ceiling rises again: the user's queue gets what it asked. */
	reload_with(e, "[limits]\nuid.65534.priority_ceiling = 5\n");
	assert_int_equal(queue_rec(e, qb).hint[IPC_KEY_PRIORITY], 3);
	assert_int_equal(queue_rec(e, qn).hint[IPC_KEY_PRIORITY], 0);
	assert_int_equal(queue_rec(e, qn).hint[IPC_KEY_SHARE], 0);

	/* A failed reload changes nothing, and says why. */
	reload_with(e, "[limits]\nuid.65534.priority_ceiling = 0\nbogus = 1\n");
	assert_int_equal(queue_rec(e, qb).hint[IPC_KEY_PRIORITY], 3);
	st = it_status(e);
	assert_int_equal(st.reloads, 3);
	assert_true(st.reload_status < 0);
	if (!strstr(st.reload_error, ":3: unknown key [limits] bogus"))
		fail_msg("status after a failed reload: '%s'", st.reload_error);
	PROG_EXPECT(e, XSCTL_BIN, (uid_t)-1, 0, "Last reload: failed: ", "--control", e->ctl,
		    "--socket", e->sock, "status");
	PROG_EXPECT(e, XSCTL_BIN, (uid_t)-1, 0, "unknown key [limits] bogus", "--control",
		    e->ctl, "--socket", e->sock, "status");
	PROG_EXPECT(e, XSCTL_BIN, (uid_t)-1, 0, "\"last_reload\":{\"ok\":false", "--control",
		    e->ctl, "--socket", e->sock, "status", "-o", "json");

	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
	assert_true(IT_WAIT_UNTIL(!it_queue_rec(e, qb, &r), WAIT_MS));
	assert_true(IT_WAIT_UNTIL(log_count(e, "removed (") >= 1, WAIT_MS));
	case_done(e);
}

/*
 * Error messages name their cause: a priority above the user's ceiling
 * says which ceiling (not "only your own processes"); a batch above the
 * queue's threshold is refused with the threshold; `set level 3` on a
 * Lv1 queue says the level granted; a policy module of another ops
 * version names both versions. Needs root (a second user).
 */
static void daemon_messages_name_the_cause(void **state)
{
	struct it_env *e = *state;
	struct ipc_register reg;
	struct ipc_registered got;
	struct ipc_queue_rec r;
	char pid_s[16], qid[24], lv1[24], want[160];
	int hold, fd;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	it_config(e, "[limits]\nuid.65534.priority_ceiling = 3\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	nb = nobody_agent(e, 2, &hold);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)nb);
#define CTL(uid, rc, what, ...) PROG_EXPECT(e, XSCTL_BIN, uid, rc, what, "--control", e->ctl, \
					   "--socket", e->sock, __VA_ARGS__)
	CTL(65534, 4, "priority 5 is above your priority ceiling (3)", "set", "priority", "5",
	    "--pid", pid_s);
	CTL(65534, 0, "", "set", "priority", "3", "--pid", pid_s);
	assert_int_equal(it_queues(e, nb, &r), 1);
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 3);

	it_queue_bare(e);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1, WAIT_MS));
	snprintf(qid, sizeof(qid), "%llu", (unsigned long long)r.queue_id);
	CTL((uid_t)-1, 1, "batch 100 is above the queue's threshold (16)", "set", "batch", "100",
	    "--queue", qid);
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_int_equal(r.batch, 8);
	CTL((uid_t)-1, 0, "", "set", "batch", "16", "--queue", qid);

	/* A queue on a device of Lv1 only. */
	fd = raw_agent(e);
	reg = it_reg_body(e->dev, 0, 0);
	reg.level = reg.level_max = 1;
	assert_true(it_raw_send(fd, IPC_REGISTER, 2, &reg, sizeof(reg)) > 0);
	{
		union it_buf buf;
		struct ipc_msg m;
		int n = it_raw_recv(fd, &buf, WAIT_MS, NULL, NULL);

		assert_true(n > 0);
		assert_int_equal(ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m), 0);
		assert_int_equal(m.hdr.type, IPC_REGISTERED);
		memcpy(&got, m.body, sizeof(got));
	}
	snprintf(lv1, sizeof(lv1), "%llu", (unsigned long long)got.queue_id);
	CTL((uid_t)-1, 0, "runs at level 1, not 3: its device supports up to level 1", "set",
	    "level", "3", "--queue", lv1);

	snprintf(want, sizeof(want), "the module is for policy ops version %u; this daemon "
		 "serves versions 1 to %u", XS_POLICY_VERSION + 1, XS_POLICY_VERSION);
	CTL((uid_t)-1, 1, want, "policy", "set", XS_PLUGIN_BAD_PATH);
	assert_policy(e, "hpf");
	CTL((uid_t)-1, 1, "not supported", "metrics", "-o", "json");
#undef CTL
	close(fd);
	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
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

/* Reads the whole file @path into a malloc()ed string; NULL if missing. */
static char *read_file(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	assert_true(getdelim(&text, &len, '\0', f) >= 0 || feof(f));
	fclose(f);
	return text;
}

/*
 * Metrics are scoped like listings: user nobody on the client socket gets
 * the series of its own queues only, root every user's; queue series carry
 * a uid label (with pid and comm), and xsched_info names the version and
 * policy. [metrics] textfile is written for node_exporter's textfile
 * collector, atomically (a temporary file renamed: a reader never sees a
 * partial one) and again every interval, and removed when the daemon stops.
 * Needs root (a second user).
 */
static void daemon_metrics_scoped(void **state)
{
	struct it_env *e = *state;
	char conf[IT_PATH * 2 + 64], prom[IT_PATH + 16], tmp[IT_PATH + 24], out[65536];
	struct stat st0, st1;
	char *text;
	int hold;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	snprintf(prom, sizeof(prom), "%s", e->prom);
	snprintf(tmp, sizeof(tmp), "%s.tmp", prom);
	snprintf(conf, sizeof(conf), "[metrics]\ntextfile = %s\ninterval_s = 1\n", prom);
	it_config(e, conf);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	it_queue(e, 1);
	nb = nobody_agent(e, 0, &hold);
	assert_true(IT_WAIT_UNTIL(it_queues(e, 0, NULL) == 2, WAIT_MS));

	assert_int_equal(prog_run(e, XSCTL_BIN, 65534, IT_ARGS("--control", e->ctl, "--socket",
				  e->sock, "metrics"), out, sizeof(out)), 0);
	if (!strstr(out, "xsched_queue_priority{queue=") || !strstr(out, ",uid=\"65534\",") ||
	    strstr(out, ",uid=\"0\","))
		fail_msg("metrics of user nobody are not scoped to its queues:\n%s", out);
	assert_non_null(strstr(out, "xsched_info{version=\"0."));
	assert_non_null(strstr(out, ",policy=\"hpf\"} 1\n"));
	assert_int_equal(prog_run(e, XSCTL_BIN, (uid_t)-1, IT_ARGS("--control", e->ctl,
				  "metrics"), out, sizeof(out)), 0);
	assert_non_null(strstr(out, ",uid=\"65534\","));
	assert_non_null(strstr(out, ",uid=\"0\",comm=\""));
	assert_non_null(strstr(out, "xsched_queue_wait_seconds{"));
	assert_non_null(strstr(out, "xsched_queue_starvation_grants_total{"));

	/* The textfile: every user's series, rewritten every second. */
	text = NULL;
	if (!IT_WAIT_UNTIL((free(text), text = read_file(prom)) && strstr(text, ",uid=\"65534\",") &&
			   strstr(text, ",uid=\"0\","), 5000))
		fail_msg("the textfile does not show both users' queues within 5 s: %s",
			 text ? text : "(none)");
	assert_non_null(strstr(text, "xsched_info{version="));
	free(text);
	assert_int_equal(stat(prom, &st0), 0);
	if (!IT_WAIT_UNTIL(stat(prom, &st1) == 0 && st1.st_ino != st0.st_ino, 5000))
		fail_msg("the textfile was not replaced within 5 s (interval 1 s)");
	assert_int_equal(access(tmp, F_OK), -1);
	assert_true((st1.st_mode & 0777) == 0644);

	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
	it_ctl_close(e);
	it_daemon_signal(e, SIGTERM);
	assert_true(WIFEXITED(it_daemon_reap(e, WAIT_MS)));
	assert_int_equal(access(prom, F_OK), -1);
	e->ok = true;
}

/* A connection that got an error reply still works. */
static void assert_alive(int fd, int answer)
{
	if (answer != 1) {
		assert_true(it_raw_send(fd, IPC_STATUS, 77, NULL, 0) > 0);
		assert_int_equal(it_raw_answer(fd, WAIT_MS, NULL), 0);
	}
}

/* Sends a packet of @type with @body, built with header fields overridden. */
static int raw_packet(int fd, uint16_t version, uint16_t type, uint32_t len_field,
		      const void *body, size_t len)
{
	union it_buf buf;
	struct ipc_hdr h = { .magic = IPC_MAGIC, .version = version, .type = type,
			     .len = len_field, .seq = 5 };

	memcpy(buf.b, &h, sizeof(h));
	if (len)
		memcpy(buf.b + sizeof(h), body, len);
	return it_raw_bytes(fd, buf.b, sizeof(h) + len);
}

#define FULL_LEN(body) ((uint32_t)(sizeof(struct ipc_hdr) + sizeof(body)))

/*
 * Garbage, truncated headers, a wrong version, a lying or huge length, a
 * wrong type, requests out of order, out-of-range fields, descriptors
 * attached, a client that never reads: each gets an error reply or its
 * own connection closed, the daemon leaks no descriptor, keeps answering,
 * and a registered client keeps working.
 */
static void daemon_malformed_input(void **state)
{
	struct it_env *e = *state;
	struct ipc_hello hello = { .role = IPC_ROLE_CTL };
	struct ipc_queue_rec other_rec;
	struct ipc_status_reply st;
	union it_buf big;
	uint64_t done0;
	int fds0, fd, a, i;
	pid_t other;

	it_guard(60);
	other = busy_daemon(e, &other_rec);
	done0 = other_rec.completed;
	fds0 = count_fds(e->daemon);

	/* Garbage that does not even frame. */
	fd = raw_connect(e);
	memset(big.b, 0xa5, 64);
	assert_true(it_raw_bytes(fd, big.b, 64) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "garbage");
	close(fd);

	/* Half a header, then 3 bytes. */
	fd = raw_connect(e);
	{
		struct ipc_hdr h = { .magic = IPC_MAGIC, .version = IPC_VERSION,
				     .type = IPC_HELLO, .len = 8 };

		assert_true(it_raw_bytes(fd, &h, 8) > 0);
		a = it_raw_answer(fd, WAIT_MS, NULL);
		assert_refused(a, "truncated header");
		if (a != 1) {
			assert_true(it_raw_bytes(fd, "abc", 3) > 0);
			assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "3 bytes");
		}
	}
	close(fd);

	/* An empty packet. */
	fd = raw_connect(e);
	assert_true(it_raw_bytes(fd, "", 0) >= 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "empty packet");
	close(fd);

	/* Wrong version. */
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION + 7, IPC_HELLO, FULL_LEN(hello), &hello,
			       sizeof(hello)) > 0);
	a = it_raw_answer(fd, WAIT_MS, NULL);
	assert_refused(a, "wrong version");
	close(fd);

	/* A length field that lies (huge, and short), and a huge packet. */
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION, IPC_HELLO, 0xfffffff0u, &hello,
			       sizeof(hello)) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "huge length field");
	close(fd);
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION, IPC_HELLO, 20, &hello, sizeof(hello)) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "short length field");
	close(fd);
	fd = raw_connect(e);
	{
		static char huge[64 * 1024];
		struct ipc_hdr h = { .magic = IPC_MAGIC, .version = IPC_VERSION,
				     .type = IPC_HELLO, .len = sizeof(huge) };

		memcpy(huge, &h, sizeof(h));
		assert_true(it_raw_bytes(fd, huge, sizeof(huge)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "64 KiB packet");
	}
	close(fd);

	/* Wrong types: unknown, and one only the daemon sends. */
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION, 99, FULL_LEN(hello), &hello, sizeof(hello)) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "unknown type");
	close(fd);
	fd = raw_connect(e);
	{
		struct ipc_reply r = { 0 };

		assert_true(raw_packet(fd, IPC_VERSION, IPC_REPLY, FULL_LEN(r), &r, sizeof(r)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "daemon-only type");
	}
	close(fd);

	/* Before HELLO; a bad HELLO; a second HELLO. */
	fd = raw_connect(e);
	assert_true(it_raw_send(fd, IPC_STATUS, 3, NULL, 0) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "request before hello");
	close(fd);
	fd = raw_connect(e);
	{
		struct ipc_hello h = { .role = 7 };

		assert_true(it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "hello with role 7");
	}
	close(fd);
	fd = raw_connect(e);
	{
		struct ipc_hello h = { .role = IPC_ROLE_CTL };

		memset(h.comm, 'x', sizeof(h.comm));            /* no NUL */
		assert_true(it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "hello without NUL");
	}
	close(fd);
	fd = raw_ctl(e);
	assert_true(it_raw_send(fd, IPC_HELLO, 2, &hello, sizeof(hello)) > 0);
	a = it_raw_answer(fd, WAIT_MS, NULL);
	assert_refused(a, "second hello");
	assert_alive(fd, a);
	close(fd);

	/* Valid headers, fields out of range, from an agent. */
	fd = raw_agent(e);
	{
		struct ipc_register r = it_reg_body(e->dev, 0, 1);
		struct ipc_set_hint h = { .slot = 0, .key = IPC_KEY_PRIORITY, .value = 1000 };
		struct ipc_ctl_set c = { .target = 9, .key = IPC_KEY_PRIORITY, .id = 1 };
		struct ipc_unregister u = { .slot = 0, .pad = 3 };
		struct ipc_list l = { .flags = 1 };

		r.level = 9;
		assert_true(it_raw_send(fd, IPC_REGISTER, 10, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register level 9");
		assert_alive(fd, a);
		r = it_reg_body(e->dev, 100000, 1);
		assert_true(it_raw_send(fd, IPC_REGISTER, 11, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register slot 100000");
		assert_alive(fd, a);
		r = it_reg_body(e->dev, 0, 1);
		r.batch = r.threshold + 1;
		assert_true(it_raw_send(fd, IPC_REGISTER, 12, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register batch > threshold");
		assert_alive(fd, a);
		r = it_reg_body(e->dev, 0, 1);
		memset(r.device, 'd', sizeof(r.device));
		assert_true(it_raw_send(fd, IPC_REGISTER, 13, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register device no NUL");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_SET_HINT, 14, &h, sizeof(h)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "priority 1000");
		assert_alive(fd, a);
		h.value = 1;
		h.slot = 0;
		assert_true(it_raw_send(fd, IPC_SET_HINT, 15, &h, sizeof(h)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "hint of no queue");
		assert_alive(fd, a);
		h.slot = 0xffffffffu;
		assert_true(it_raw_send(fd, IPC_SET_HINT, 16, &h, sizeof(h)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "hint of slot 2^32-1");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_CTL_SET, 17, &c, sizeof(c)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "ctl set target 9");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_UNREGISTER, 18, &u, sizeof(u)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "unregister pad");
		assert_alive(fd, a);
		u.pad = 0;
		u.slot = 60000;
		assert_true(it_raw_send(fd, IPC_UNREGISTER, 19, &u, sizeof(u)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "unregister slot 60000");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_LIST, 20, &l, sizeof(l)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "list flags");
		assert_alive(fd, a);
		/* Body one byte short of the type's size. */
		r = it_reg_body(e->dev, 0, 1);
		assert_true(raw_packet(fd, IPC_VERSION, IPC_REGISTER, FULL_LEN(r) - 1, &r,
				       sizeof(r) - 1) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register body short");
		assert_alive(fd, a);
	}
	close(fd);

	/* A control client registering; descriptors attached to a request. */
	fd = raw_ctl(e);
	{
		struct ipc_register r = it_reg_body(e->dev, 0, 1);
		union it_buf b;
		int pass[3], n;

		assert_true(it_raw_send(fd, IPC_REGISTER, 30, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register by a control client");
		assert_alive(fd, a);
		for (i = 0; i < 3; i++)
			pass[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		n = ipc_build(b.b, sizeof(b.b), IPC_STATUS, 31, NULL, 0);
		assert_true(ipc_send(fd, b.b, (size_t)n, pass, 3) > 0);
		for (i = 0; i < 3; i++)
			close(pass[i]);
		a = it_raw_answer(fd, WAIT_MS, NULL);
		assert_true(a == 0 || a == 1 || (a < 0 && a != -ETIMEDOUT));
	}
	close(fd);

	/* A stream of bad packets: the client is dropped, others are not. */
	fd = raw_agent(e);
	for (i = 0; i < 40; i++) {
		struct ipc_set_hint h = { .slot = 0, .key = 77, .value = 1 };

		if (it_raw_send(fd, IPC_SET_HINT, (uint32_t)i, &h, sizeof(h)) < 0)
			break;
	}
	for (a = 0; a != 1;) {
		a = it_raw_answer(fd, WAIT_MS, NULL);
		if (a == -ETIMEDOUT)
			fail_msg("a client sending only bad packets is never dropped");
	}
	close(fd);

	/* A client that sends requests and never reads: the daemon never blocks. */
	fd = raw_ctl(e);
	{
		int fl = fcntl(fd, F_GETFL);

		assert_int_equal(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
		for (i = 0; i < 20000; i++) {
			struct ipc_list l = { 0 };

			if (it_raw_send(fd, IPC_LIST, (uint32_t)i, &l, sizeof(l)) < 0)
				break;
			if (i % 1000 == 0)
				it_status(e);           /* the daemon keeps answering */
		}
	}
	st = it_status(e);
	close(fd);

	/* Everything refused is gone, nothing leaked, the other client works. */
	if (!IT_WAIT_UNTIL((st = it_status(e), st.clients == 2 && st.queues == 1) &&
			   count_fds(e->daemon) == fds0, WAIT_MS))
		fail_msg("daemon: %u clients, %u queues, %d fds (expected 2, 1, %d)",
			 st.clients, st.queues, count_fds(e->daemon), fds0);
	assert_true(IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1 &&
				  other_rec.completed > done0 + 10, WAIT_MS));
	it_kill(e, other);
	case_done(e);
}

/* --- Soak: everything at once ------------------------------------------------ */

/* Resident memory of @pid in KiB. */
static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* True when every listed queue's process is alive. */
static bool no_dead_pid_listed(struct it_env *e)
{
	struct ipc_queue_rec *r;
	size_t n, i;
	bool ok = true;

	r = all_queues(e, &n);
	for (i = 0; i < n; i++)
		if (kill(r[i].pid, 0) < 0 && errno == ESRCH)
			ok = false;
	free(r);
	return ok;
}

/* A pseudo-random number in 0..@n-1 (deterministic sequence). */
static unsigned soak_rand(unsigned n)
{
	static unsigned seed = 13;

	return (unsigned)rand_r(&seed) % n;
}

/* Sends @n packets a fuzzer would: garbage, bad headers, bad bodies. */
static void soak_bad_packets(struct it_env *e, int n)
{
	union it_buf buf;
	int fd = -1, i;

	for (i = 0; i < n; i++) {
		struct ipc_hdr *h = (struct ipc_hdr *)buf.b;
		size_t len = 1 + soak_rand(300);
		unsigned k;

		if (fd < 0)
			fd = soak_rand(2) ? raw_ctl(e) : raw_agent(e);
		for (k = 0; k < len; k++)
			buf.b[k] = (char)soak_rand(256);
		if (soak_rand(3)) {
			/* A header that frames, with random type, length and body. */
			len = BASE_MAX(len, sizeof(*h));
			h->magic = IPC_MAGIC;
			h->version = soak_rand(8) ? IPC_VERSION : (uint16_t)soak_rand(100);
			h->type = (uint16_t)soak_rand(IPC_TYPE_MAX + 3);
			h->len = soak_rand(4) ? (uint32_t)len : (uint32_t)soak_rand(5000);
			h->seq = (uint32_t)i;
		}
		if (it_raw_bytes(fd, buf.b, len) < 0 ||
		    it_raw_answer(fd, WAIT_MS, NULL) == 1) {
			close(fd);              /* dropped: a new connection */
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
}

/*
 * The daemon survives everything at once, and loses nothing: 100 clients
 * killed by SIGKILL at random instants (xs_load processes and raw clients
 * at every stage of their conversation), 1000 malformed packets, 100
 * connections that never say HELLO, a client that never reads its
 * replies, descriptor exhaustion, SIGSTOP/SIGCONT, and 50 policy switches
 * with 20 SIGHUPs (valid and invalid files), while two processes and this
 * one keep working. Their work completes in full, no dead process is
 * listed a second after its death, and the daemon's descriptors and
 * resident memory are back where they started.
 */
static void daemon_soak(void **state)
{
	struct it_env *e = *state;
	static const char *const policies[] = { "edf", "fair", "bandwidth", "hhpf", "laxity",
						"hpf" };
	static const char *const confs[] = {
		"[policy]\nname = hpf\n",
		"[defaults]\npriority = 1\n[policy]\nstarvation_guard_pct = 10\n",
		"[policy]\nbogus = 1\n",
		"[limits]\npriority_ceiling = 3\n[policy]\nname = fair\n",
	};
	struct ipc_status_reply st0, st;
	struct it_result a, b;
	long rss0, rss1;
	int fds0, fds1, i, hups = 0, noread, never[100], rd = -1;
	uint64_t seq = 0;
	pid_t sa, sb;
	xs_queue *q;

	it_guard(110);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q = it_queue(e, 0);
	assert_int_equal(xs_wait(q, it_submit(q, 2, 200)), 0);
	/* The baseline: our control connection and agent, after one client of
	 * each kind came and went. */
	close(raw_agent(e));
	close(raw_ctl(e));
	assert_true(IT_WAIT_UNTIL(it_status(e).clients == 2, WAIT_MS));
	st0 = it_status(e);
	fds0 = count_fds(e->daemon);
	rss0 = rss_kib(e->daemon);
	/* The survivors: two processes of periodic tasks, beside our queue. */
	sa = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "500", "--cmds", "2",
				      "--tasks", "1000", "--period-us", "20000", "--priority", "2",
				      "--wait-connected-ms", "10000"));
	sb = it_load(e, NULL, IT_ARGS("--level", "1", "--cmd-us", "300", "--cmds", "3",
				      "--tasks", "1000", "--period-us", "20000", "--share", "50",
				      "--wait-connected-ms", "10000"));
	assert_true(IT_WAIT_UNTIL(it_queues(e, sa, NULL) == 1 && it_queues(e, sb, NULL) == 1,
				  WAIT_MS));

	/* 100 kills at random instants: starting, connecting, talking, working. */
	for (i = 0; i < 100; i++) {
		pid_t v;

		if (i % 2) {
			v = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "300", "--flood",
						     "--duration-s", "30", "--priority",
						     soak_rand(2) ? "5" : "-5"));
		} else {
			int p[2];

			assert_int_equal(pipe2(p, O_CLOEXEC), 0);
			v = it_fork(e);
			if (v == 0)
				victim_main(e, (enum victim)soak_rand(V_REGISTER_LOOP + 1), p[1]);
			close(p[1]);
			rd = p[0];
		}
		it_nap_ms(soak_rand(40));
		it_kill(e, v);
		if (rd >= 0)
			close(rd);
		rd = -1;
		seq = it_submit(q, 1, 100);
		if (i % 10 == 9 && !IT_WAIT_UNTIL(no_dead_pid_listed(e), 1000))
			fail_msg("a killed client is still listed a second later (kill %d)", i);
	}

	fd_exhaust_round(e, count_fds(e->daemon), 21, sa, false);
	soak_bad_packets(e, 1000);

	/* 100 connections that never say HELLO; one client that never reads. */
	for (i = 0; i < 100; i++)
		never[i] = raw_connect(e);
	noread = raw_ctl(e);
	assert_int_equal(fcntl(noread, F_SETFL, fcntl(noread, F_GETFL) | O_NONBLOCK), 0);
	for (i = 0; i < 5000; i++) {
		struct ipc_list l = { 0 };

		if (it_raw_send(noread, IPC_LIST, (uint32_t)i, &l, sizeof(l)) < 0)
			break;
	}
	it_status(e);

	/* 50 policy switches, a SIGHUP after every few (some files invalid). */
	for (i = 0; i < 50; i++) {
		assert_int_equal(ipc_client_policy_set(&e->c, policies[i % 6]), 0);
		if (i % 5 == 2 || i % 5 == 4) {
			it_config(e, confs[hups % 4]);
			it_daemon_signal(e, SIGHUP);
			assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
			hups++;
		}
		seq = it_submit(q, 1, 100);
	}
	assert_int_equal(hups, 20);
	assert_int_equal(it_status(e).reloads, 20);
	it_config(e, "");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(ipc_client_policy_set(&e->c, "hpf"), 0);

	for (i = 0; i < 100; i++)
		close(never[i]);
	close(noread);

	/* Stopped and continued under its clients. */
	it_daemon_signal(e, SIGSTOP);
	it_nap_ms(1500);
	it_daemon_signal(e, SIGCONT);
	it_status(e);

	/* Nothing lost: every task of every survivor, and our work. */
	assert_int_equal(xs_wait(q, seq), 0);
	it_finish(e, sa, 100000, &a);
	it_finish(e, sb, 100000, &b);
	assert_int_equal(a.tasks, 1000);
	assert_int_equal(b.tasks, 1000);
	if (!IT_WAIT_UNTIL(no_dead_pid_listed(e) && it_queues(e, 0, NULL) == 1, 1000))
		fail_msg("finished clients are still listed a second later");
	st = it_status(e);
	assert_int_equal(st.clients, st0.clients);
	/* A leak stays; a descriptor on its way out (seen under a loaded
	 * sanitizer run: two more, once) goes within the wait. */
	IT_WAIT_UNTIL((fds1 = count_fds(e->daemon)) == fds0, 2000);
	rss1 = rss_kib(e->daemon);
	print_message("daemon: %d descriptors (%d at the start), RSS %ld KiB (%ld KiB), "
		      "%llu decisions\n", fds1, fds0, rss1, rss0, (unsigned long long)st.decisions);
	if (fds1 != fds0) {
		print_fds(e->daemon);
		fail_msg("the daemon holds %d descriptors, %d at the start", fds1, fds0);
	}
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	/* (A sanitizer keeps freed memory in quarantine: its leak check below
	 * stands in for this.) */
	if (rss1 > rss0 + 1024)
		fail_msg("the daemon's RSS grew from %ld KiB to %ld KiB", rss0, rss1);
#endif
	/* A clean stop; under AddressSanitizer its leak check runs then. */
	it_ctl_close(e);
	it_daemon_signal(e, SIGTERM);
	assert_int_equal(it_daemon_reap(e, WAIT_MS), 0);
	case_done(e);
}

/*
 * max_clients = 2: this process's control connection and its agent fill
 * it; a third connection is closed, and the slot comes back once one
 * leaves. max_queues_per_client = 2: a third queue of this process is not
 * registered and runs unscheduled while the daemon suspends a registered
 * one.
 */
static void daemon_limits(void **state)
{
	struct it_env *e = *state;
	struct ipc_status_reply st;
	struct ipc_client extra;
	xs_queue *q1, *q2, *q3;
	uint64_t s2, s3;
	int fd;

	it_guard(60);
	it_config(e, "[daemon]\nmax_clients = 2\nmax_queues_per_client = 2\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q1 = it_queue(e, 10);
	q2 = it_queue(e, 0);
	q3 = it_queue(e, 0);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 2,
				  WAIT_MS));
	st = it_status(e);
	assert_int_equal(st.clients, 2);
	assert_int_equal(st.queues, 2);

	/* A third client: connected by the kernel, closed by the daemon. */
	fd = raw_connect(e);
	{
		struct ipc_hello h = { .role = IPC_ROLE_CTL };

		it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h));
		assert_int_equal(it_raw_answer(fd, WAIT_MS, NULL), 1);
	}
	close(fd);
	assert_true(ipc_client_open(&extra, e->ctl, e->sock) < 0);
	st = it_status(e);
	assert_int_equal(st.clients, 2);

	/* The extra queue runs while a registered one is suspended. */
	it_submit(q1, 40, 10000);
	assert_true(IT_WAIT_UNTIL(it_suspended(q2), WAIT_MS));
	s2 = it_submit(q2, 1, 1000);
	s3 = it_submit(q3, 1, 1000);
	assert_int_equal(xs_wait(q3, s3), 0);
	assert_false(it_suspended(q3));
	assert_true(it_suspended(q2));
	assert_int_equal(xs_query(q2, s2), -EBUSY);
	assert_true(xs_query(q1, it_qstats(q1).submitted) == -EBUSY);

	/* A freed client slot can be taken again. */
	it_ctl_close(e);
	assert_true(IT_WAIT_UNTIL(ipc_client_open(&e->c, e->ctl, e->sock) == 0, WAIT_MS));
	st = it_status(e);
	assert_int_equal(st.clients, 2);
	assert_int_equal(xs_wait(q2, s2), 0);
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
		cmocka_unit_test_setup_teardown(daemon_hpf_two_processes, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_bandwidth_75_25, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_bandwidth_drain, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_edf_meets_deadlines, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_client_killed_cleanup, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_quiet_queue_rings_not, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_contention_window, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_contention_window_off, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_killed_resumes_queues, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_absent_fail_open, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_restart_reregisters, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_restart_keeps_ctl_hints, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_hint_during_registration, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_hung_does_not_block_api, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_disable_passthrough, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_fork_client, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_security_uid, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_policy_switch_keeps_hints, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_sighup_reload, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_thread_slices, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_realtime, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_command_line, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_log_on_terminal, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_one_per_socket, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_fd_exhaustion, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_reload_applies_now, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_messages_name_the_cause, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_starvation_bounded, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_metrics_scoped, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_malformed_input, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_soak, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_limits, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_sigterm_resumes, it_setup, it_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
