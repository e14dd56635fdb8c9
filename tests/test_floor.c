/*
 * Run floors (src/ipc/ipc_abi.h, "Run floors") with a real xschedd, an
 * xs_load of priority 10 and a queue of priority 0 in this process, all on
 * the case's simulated device:
 * - the xs_load's Ready alone stops our queue at its next launch: the
 *   daemon stopped (SIGSTOP) and our agent thread kept from acting (we
 *   hold its lock), our work stays pending, nothing in flight, our queue
 *   never suspended; once the liveness timeout passes, the floor is
 *   ignored and the work completes;
 * - a new daemon (the old one killed) sends its pages again, and its word
 *   follows its decisions;
 * - on a device of more than 16 queues, idle queues below the word are
 *   held without a store into their slots, and told once they have work;
 * - a process of another uid that scribbles on its own floor page holds
 *   our queue at most one daemon reaction: its page is withdrawn and said
 *   once, and it cannot map the daemon's page or ours for writing.
 * Bounds are generous for a loaded two-core machine; each case prints
 * what it measured.
 */
#include "it_util.h"
#include "err_capture.h"

#include "agent/agent.h"
#include "agent/agent_state.h"

#include <sys/mman.h>

#define WAIT_MS 10000
#define NO_GUARD "[policy]\nstarvation_guard_pct = 0\n"

/* The whole of the file at @path (NUL-terminated; "" if unreadable). */
static char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 1 << 20);

	assert_non_null(text);
	if (f) {
		size_t n = fread(text, 1, (1 << 20) - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	return text;
}

static int floor_teardown(void **state)
{
	err_release();
	return it_teardown(state);
}

/* The start of every case: its daemon (no starvation guard: our queues
 * wait behind a flood on purpose), the control connection. */
static void case_start(struct it_env *e)
{
	it_guard(90);
	it_config(e, NO_GUARD);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
}

/* Our queue's statistics. */
static xs_queue_stats st_of(xs_queue *q)
{
	return it_qstats(q);
}

/* The daemon's word (page 0) of the device in our table 0, or OPEN. */
static int32_t daemon_word(void)
{
	struct ipc_floor_page *p = atomic_load(&ag.floor[0].page[0]);

	return p ? ipc_floor_prio(atomic_load(&p->word)) : IPC_FLOOR_OPEN;
}

/* Starts a priority-10 xs_load flooding 2 ms commands for @secs from
 * @start_ns (CLOCK_MONOTONIC), registered at once. */
static pid_t high_load(struct it_env *e, uint64_t start_ns, const char *secs)
{
	char at[32];

	snprintf(at, sizeof(at), "%llu", (unsigned long long)start_ns);
	return it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "2000", "--flood",
					 "--duration-s", secs, "--priority", "10",
					 "--wait-connected-ms", "10000", "--start-at-ns", at));
}

/* Waits until both the xs_load @hi and our queue are registered and our
 * agent has the daemon's page of the device. */
static void both_registered(struct it_env *e, pid_t hi)
{
	if (!IT_WAIT_UNTIL(it_queues(e, hi, NULL) == 1 && it_queues(e, getpid(), NULL) == 1 &&
			   atomic_load(&ag.floor[0].page[0]), WAIT_MS))
		fail_msg("the queues never registered, or no floor page came");
}

static void floor_stops_low_without_daemon(void **state)
{
	struct it_env *e = *state;
	uint64_t start, seq, t0;
	xs_queue_stats a, b;
	xs_queue *q;
	pid_t hi;

	case_start(e);
	start = clock_now_ns() + 1500 * NSEC_PER_MSEC;
	hi = high_load(e, start, "30");
	err_capture();
	q = it_queue(e, 0);
	both_registered(e, hi);
	/* Our work runs while the xs_load waits for its start. */
	seq = it_submit(q, 8000, 500);
	if (!IT_WAIT_UNTIL(st_of(q).completed > 20, WAIT_MS))
		fail_msg("our queue never ran");
	it_daemon_signal(e, SIGSTOP);
	/* From here nobody decides, and our agent thread cannot apply anything. */
	pthread_mutex_lock(&ag.lock);
	while (clock_now_ns() < start)
		it_nap_ms(5);
	t0 = clock_now_ns();
	while (st_of(q).in_flight && it_ms_since(t0) < 2000)
		it_nap_ms(1);
	a = st_of(q);
	it_nap_ms(200);
	b = st_of(q);
	pthread_mutex_unlock(&ag.lock);
	print_message("the high queue started: ours completed %llu, then %llu 200 ms later, "
		      "%llu in flight, %llu pending\n", (unsigned long long)a.completed,
		      (unsigned long long)b.completed, (unsigned long long)b.in_flight,
		      (unsigned long long)b.pending);
	assert_int_equal(a.in_flight, 0);
	assert_int_equal(b.completed, a.completed);
	assert_true(b.pending > 0);
	assert_int_equal(b.suspended, 0);
	/* The daemon silent past the timeout: its floors no longer hold us. */
	if (!IT_WAIT_UNTIL(xs_query(q, seq) == 0, 4 * WAIT_MS))
		fail_msg("our work never completed behind a stopped daemon's floor");
	err_release();
	it_daemon_signal(e, SIGCONT);
	it_kill(e, hi);
	it_ctl_close(e);
	it_daemon_check(e);
	e->ok = true;
}

static void floor_republished_after_restart(void **state)
{
	struct it_env *e = *state;
	xs_queue *q;
	pid_t hi;

	case_start(e);
	hi = high_load(e, clock_now_ns() + 600000 * NSEC_PER_MSEC, "1");
	err_capture();
	q = it_queue(e, 0);
	both_registered(e, hi);
	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	assert_true(WIFSIGNALED(it_daemon_reap(e, WAIT_MS)));
	if (!IT_WAIT_UNTIL(!agent_connected(), WAIT_MS))
		fail_msg("our agent never saw the daemon go");
	assert_null(atomic_load(&ag.floor[0].page[0]));
	it_kill(e, hi);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	hi = high_load(e, clock_now_ns(), "30");
	both_registered(e, hi);
	/* The new daemon's word follows its decision: the flood is ready. */
	if (!IT_WAIT_UNTIL(daemon_word() == 10, WAIT_MS))
		fail_msg("the new daemon's word is %d, not 10", daemon_word());
	if (!IT_WAIT_UNTIL(it_suspended(q), WAIT_MS))
		fail_msg("the new daemon never suspended our queue");
	it_kill(e, hi);
	if (!IT_WAIT_UNTIL(daemon_word() == IPC_FLOOR_OPEN, WAIT_MS))
		fail_msg("the word stayed at %d with nothing ready", daemon_word());
	assert_int_equal(xs_wait(q, it_submit(q, 5, 500)), 0);
	err_release();
	it_ctl_close(e);
	it_daemon_check(e);
	e->ok = true;
}

/* How many of our queues the daemon lists as not running. */
static size_t held_idle(struct it_env *e)
{
	struct ipc_queue_rec *rec = NULL;
	size_t i, n = 0, held = 0;

	if (ipc_client_list(&e->c, &rec, &n) < 0)
		return 0;
	for (i = 0; i < n; i++)
		held += rec[i].pid == getpid() && !rec[i].running;
	free(rec);
	return held;
}

/*
 * A device of more than 16 queues: the idle ones below the daemon's word
 * are suspended without a store into their slots (not suspended in the
 * process, not running in the listing); the one that then gets work stops
 * at its floor, rings, and is suspended and told; the flood gone, its work
 * completes.
 */
static void floor_lazy_idle_queues(void **state)
{
	struct it_env *e = *state;
	xs_queue *q[20];
	uint64_t seq;
	size_t i, held = 0;
	pid_t hi;

	case_start(e);
	err_capture();
	for (i = 0; i < 20; i++)
		q[i] = it_queue(e, 0);
	/* All 20 registered before the flood: while the device had 16 queues
	 * or fewer, the flood would suspend ours with a store, not lazily. */
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == 20, WAIT_MS))
		fail_msg("our 20 queues never registered");
	hi = high_load(e, clock_now_ns(), "30");
	if (!IT_WAIT_UNTIL(daemon_word() == 10, WAIT_MS))
		fail_msg("the word never rose");
	/* The daemon's decisions of the 20 registrations may trail the word
	 * on a loaded machine: wait for them to list as not running. */
	if (!IT_WAIT_UNTIL((held = held_idle(e)) == 20, WAIT_MS))
		fail_msg("%zu of our 20 idle queues list as not running", held);
	for (i = 0; i < 20; i++)
		assert_false(it_suspended(q[i]));
	seq = it_submit(q[7], 3, 500);
	if (!IT_WAIT_UNTIL(it_suspended(q[7]), WAIT_MS))
		fail_msg("the queue with work was never suspended");
	assert_int_equal(xs_query(q[7], seq), -EBUSY);
	assert_false(it_suspended(q[8]));
	it_kill(e, hi);
	assert_int_equal(xs_wait(q[7], seq), 0);
	err_release();
	it_ctl_close(e);
	it_daemon_check(e);
	e->ok = true;
}

/*
 * The hostile child: uid 65534, a raw client with a queue of priority 0 on
 * the device; it writes priority 100 to its own page for @ms, and reports
 * in its exit status what it could not do: 0 all as expected, 2 no
 * writable page of its own, 3 the daemon's page mapped writable, 4
 * another uid's page reopened writable.
 */
static int scribbler(struct it_env *e, unsigned ms)
{
	struct ipc_registered reg;
	uint64_t t0;
	int fd, i, own = -1;

	if (setgid(65534) < 0 || setuid(65534) < 0)
		return 10;
	fd = ipc_connect(e->sock);
	if (fd < 0 || it_raw_hello_agent(fd, NULL) <= 0 || it_raw_register(fd, e->dev, 0, 0, &reg))
		return 11;
	for (i = 0; i < it_nfloors; i++) {
		char path[64];
		void *m;
		int rw;

		if (it_floor[i].writable) {
			own = i;
			continue;
		}
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, it_floor_fd[i], 0);
		if (m != MAP_FAILED && it_floor[i].page == 0)
			return 3;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", it_floor_fd[i]);
		rw = open(path, O_RDWR);
		if (rw >= 0 && it_floor[i].page != 0)
			return 4;
	}
	if (own < 0)
		return 2;
	{
		struct ipc_floor_page *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
						it_floor_fd[own], 0);

		if (p == MAP_FAILED)
			return 2;
		t0 = clock_now_ns();
		while (it_ms_since(t0) < ms)
			atomic_store(&p->word, ipc_floor_next(atomic_load(&p->word), 100));
	}
	return 0;
}

static void floor_hostile_scribble(void **state)
{
	struct it_env *e = *state;
	uint64_t worst = 0, t0, n = 0;
	xs_queue *q;
	char *log;
	pid_t kid;
	int st;

	if (geteuid() != 0)
		skip();
	case_start(e);
	q = it_queue(e, 0);
	if (!IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == 1 && atomic_load(&ag.floor[0].page[0]),
			   WAIT_MS))
		fail_msg("our queue never registered");
	kid = it_fork(e);
	if (kid == 0)
		_exit(scribbler(e, 1500));
	/* Task after task while it scribbles: the longest one is our stall. */
	t0 = clock_now_ns();
	while (it_ms_since(t0) < 2500) {
		uint64_t s = clock_now_ns(), ns;

		assert_int_equal(xs_wait(q, it_submit(q, 1, 200)), 0);
		ns = clock_now_ns() - s;
		worst = ns > worst ? ns : worst;
		n++;
	}
	assert_int_equal(it_reap(e, kid, WAIT_MS, &st), 0);
	print_message("%llu tasks of 200 us; the longest %llu us; the scribbler exited %d\n",
		      (unsigned long long)n, (unsigned long long)(worst / 1000),
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Held by the scribble until it ends would be ~1.5 s; one daemon
	 * reaction is far less, but on two vCPUs with the scribbler spinning on
	 * one and other tests running it has reached 101 ms: the bound is half
	 * the scribble (a behaviour, not a latency goal: those are benchmarks). */
	if (worst > 750 * NSEC_PER_MSEC)
		fail_msg("a task of ours waited %llu ms behind the scribbled floor",
			 (unsigned long long)(worst / NSEC_PER_MSEC));
	log = file_text(e->log);
	assert_int_equal(err_count(log, "uid 65534 wrote priority 100 to its run floor"), 1);
	free(log);
	it_ctl_close(e);
	it_daemon_check(e);
	e->ok = true;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(floor_stops_low_without_daemon, it_setup,
						floor_teardown),
		cmocka_unit_test_setup_teardown(floor_republished_after_restart, it_setup,
						floor_teardown),
		cmocka_unit_test_setup_teardown(floor_lazy_idle_queues, it_setup, floor_teardown),
		cmocka_unit_test_setup_teardown(floor_hostile_scribble, it_setup, floor_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
