/*
 * src/base: the log-linear histogram (index/bucket round trip, monotonicity,
 * bucket width, quantiles against exact ranks, empty and extreme values),
 * the futex wrappers (timeout, changed value, wake-up, both private and
 * shared), the clock helpers (sleeps and spins never end early, even
 * when signals interrupt them) and the threads' CPU slice
 * (XSCHED_THREAD_SLICE_US: parsed strictly; the nice value and another
 * policy are kept; the kernel reports the slice on 6.12 and later; a
 * refusal, here by a seccomp filter, is said once).
 */
#include "test_util.h"

#include "base/clock.h"
#include "base/compiler.h"
#include "base/futex.h"
#include "base/hist.h"
#include "base/size.h"
#include "base/slice.h"
#include "base/xlog.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t lcg_state = 0x243f6a8885a308d3ull;

/* Deterministic pseudo-random 64-bit values. */
static uint64_t rnd(void)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return lcg_state ^ (lcg_state >> 29);
}

/* A value of random magnitude: uniform bits below a random top bit. */
static uint64_t rnd_log(void)
{
	unsigned bits = (unsigned)(rnd() % 64) + 1;

	return bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
}

/* The highest index any value maps to. */
static unsigned hist_top(void)
{
	return hist_index(UINT64_MAX);
}

static void check_value(uint64_t v)
{
	unsigned i = hist_index(v);
	uint64_t low = hist_bucket_low(i);

	if (i >= HIST_BUCKETS)
		fail_msg("index %u of %llu out of range", i, (unsigned long long)v);
	if (low > v)
		fail_msg("bucket %u starts at %llu above %llu", i,
			 (unsigned long long)low, (unsigned long long)v);
	assert_int_equal(hist_index(low), i);
	if (i < hist_top()) {
		uint64_t next = hist_bucket_low(i + 1);

		if (v >= next)
			fail_msg("%llu in bucket %u but the next starts at %llu",
				 (unsigned long long)v, i, (unsigned long long)next);
	}
}

static void hist_index_roundtrip(void **state)
{
	uint64_t v;
	unsigned e, k;

	(void)state;
	for (v = 0; v < 70000; v++)
		check_value(v);
	for (e = 0; e < 64; e++) {
		uint64_t p = 1ull << e;

		check_value(p);
		check_value(p - 1);
		check_value(p + 1);
		check_value(p | (p >> 1));
		check_value(p | (p - 1));
	}
	check_value(UINT64_MAX);
	check_value(UINT64_MAX - 1);
	for (k = 0; k < 200000; k++)
		check_value(rnd_log());
	/* Values below 2^SUB_BITS are exact. */
	for (v = 0; v < (1u << HIST_SUB_BITS); v++) {
		assert_int_equal(hist_index(v), v);
		assert_int_equal(hist_bucket_low((unsigned)v), v);
	}
}

static void hist_index_monotonic(void **state)
{
	unsigned i, top = hist_top(), prev_idx = 0;
	uint64_t prev_low = 0, v, step;

	(void)state;
	assert_true(top < HIST_BUCKETS);
	for (i = 1; i <= top; i++) {
		uint64_t low = hist_bucket_low(i);

		if (low <= prev_low)
			fail_msg("bucket %u starts at %llu, not above %llu", i,
				 (unsigned long long)low, (unsigned long long)prev_low);
		/* A bucket spans at most 1/8 of its start: the 12.5% bound. */
		if (i >= (1u << HIST_SUB_BITS) && i < top) {
			uint64_t width = hist_bucket_low(i + 1) - low;

			assert_true(width * (1u << HIST_SUB_BITS) <= low);
		}
		prev_low = low;
	}
	/* The index never decreases over increasing values. */
	for (v = 0, step = 1; v < UINT64_MAX / 2; v += step, step += step / 16 + 1) {
		unsigned idx = hist_index(v);

		assert_true(idx >= prev_idx);
		prev_idx = idx;
	}
	assert_true(hist_index(UINT64_MAX) >= prev_idx);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Quantile @q of sorted @v (n values) by the histogram's rank rule. */
static uint64_t exact_quantile(const uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n);

	return v[(rank ? rank : 1) - 1];
}

static void check_quantiles(struct hist *h, uint64_t *v, size_t n)
{
	static const double qs[] = {
		0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0,
	};
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = exact_quantile(v, n, qs[i]);
		uint64_t got = hist_quantile(h, qs[i]);
		double err = want ? ((double)got - (double)want) / (double)want : (double)got;

		if (got < want || err >= 0.125)
			fail_msg("q %.3f: got %llu, exact %llu", qs[i],
				 (unsigned long long)got, (unsigned long long)want);
	}
	assert_int_equal(hist_quantile(h, 1.0), v[n - 1]);
}

static void hist_quantiles_known_data(void **state)
{
	enum { N = 10000 };
	struct hist *h = calloc(1, sizeof(*h));
	uint64_t *v = calloc(N, sizeof(*v)), sum = 0;
	size_t i;

	(void)state;
	assert_true(h && v);
	/* 1..N recorded in a scrambled order. */
	for (i = 0; i < N; i++) {
		v[i] = (i * 7919) % N + 1;
		sum += v[i];
		hist_record(h, v[i]);
	}
	assert_int_equal(h->count, N);
	assert_int_equal(h->sum, sum);
	assert_int_equal(h->max, N);
	check_quantiles(h, v, N);
	assert_in_range(hist_quantile(h, 0.5), 5000, 5624);
	assert_in_range(hist_quantile(h, 0.99), 9900, 10000);
	/* Out-of-range fractions are clamped. */
	assert_int_equal(hist_quantile(h, -1.0), hist_quantile(h, 0.0));
	assert_int_equal(hist_quantile(h, 2.0), hist_quantile(h, 1.0));

	/* Latency-like data over many magnitudes. */
	memset(h, 0, sizeof(*h));
	for (i = 0; i < N; i++) {
		v[i] = (rnd() % 1000000) * (1ull << (rnd() % 20)) + 1;
		hist_record(h, v[i]);
	}
	check_quantiles(h, v, N);
	free(v);
	free(h);
}

static void hist_small_values_exact(void **state)
{
	struct hist h = { 0 };

	(void)state;
	hist_record(&h, 3);
	assert_int_equal(hist_quantile(&h, 0.5), 3);
	hist_record(&h, 0);
	hist_record(&h, 7);
	assert_int_equal(hist_quantile(&h, 0.0), 0);
	assert_int_equal(hist_quantile(&h, 0.67), 3);
	assert_int_equal(hist_quantile(&h, 1.0), 7);
	assert_int_equal(h.count, 3);
	assert_int_equal(h.sum, 10);
	assert_int_equal(h.max, 7);
}

static void hist_empty(void **state)
{
	struct hist h = { 0 };

	(void)state;
	assert_int_equal(hist_quantile(&h, 0.0), 0);
	assert_int_equal(hist_quantile(&h, 0.5), 0);
	assert_int_equal(hist_quantile(&h, 0.99), 0);
	assert_int_equal(hist_quantile(&h, 1.0), 0);
	assert_int_equal(h.count, 0);
}

/* The 12.5% bound holds up to the top of the 64-bit range. */
static void hist_quantile_top_bucket(void **state)
{
	static const uint64_t vals[] = {
		1ull << 63, (1ull << 63) + (1ull << 62), 0xf000000000000000ull,
		UINT64_MAX,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		struct hist h = { 0 };
		uint64_t got;

		hist_record(&h, vals[i]);
		got = hist_quantile(&h, 0.5);
		if (got != vals[i])
			fail_msg("single value %llu: quantile %llu",
				 (unsigned long long)vals[i], (unsigned long long)got);
	}
}

static void futex_timeout(void **state)
{
	_Atomic uint32_t w = 0;
	uint64_t t0;
	int rc;

	(void)state;
	alarm(60);
	t0 = clock_now_ns();
	rc = futex_wait(&w, 0, 2 * NSEC_PER_MSEC, false);
	/* A spurious wakeup is allowed; an early timeout is not. */
	if (rc == -ETIMEDOUT)
		assert_true(clock_now_ns() - t0 >= 2 * NSEC_PER_MSEC);
	else
		assert_int_equal(rc, 0);
	/* A few tries: at least one must time out. */
	for (rc = 0; rc != -ETIMEDOUT;) {
		rc = futex_wait(&w, 0, NSEC_PER_MSEC, true);
		assert_true(rc == 0 || rc == -ETIMEDOUT);
	}
	assert_int_equal(futex_wait(&w, 0, 0, false), -ETIMEDOUT);
	alarm(0);
}

static void futex_value_differs(void **state)
{
	_Atomic uint32_t w = 1;
	uint64_t t0;

	(void)state;
	alarm(60);
	t0 = clock_now_ns();
	/* Would block for 30 s if the comparison were ignored. */
	assert_int_equal(futex_wait(&w, 0, 30 * NSEC_PER_SEC, false), 0);
	assert_int_equal(futex_wait(&w, 0, 30 * NSEC_PER_SEC, true), 0);
	assert_int_equal(futex_wait(&w, 2, UINT64_MAX, false), 0);
	assert_true(clock_now_ns() - t0 < 10 * NSEC_PER_SEC);
	alarm(0);
}

struct futex_waiter {
	_Atomic uint32_t word;
	_Atomic uint32_t waiting;
	bool shared;
	int last_rc;
};

static void *futex_waiter_main(void *p)
{
	struct futex_waiter *f = p;

	atomic_store(&f->waiting, 1);
	while (atomic_load(&f->word) == 0)
		f->last_rc = futex_wait(&f->word, 0, 20 * NSEC_PER_SEC, f->shared);
	return NULL;
}

/* A wake reaches a sleeping waiter long before its 20 s timeout. */
static void futex_wake_wakes_waiter(void **state)
{
	int shared;

	(void)state;
	alarm(60);
	for (shared = 0; shared < 2; shared++) {
		struct futex_waiter f = { .shared = shared };
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, futex_waiter_main, &f), 0);
		while (!atomic_load(&f.waiting))
			usleep(100);
		usleep(5000);
		atomic_store(&f.word, 1);
		futex_wake(&f.word, 1, shared);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_int_equal(f.last_rc, 0);
	}
	/* Waking with nobody waiting is harmless. */
	{
		_Atomic uint32_t w = 0;

		futex_wake(&w, 1, false);
		futex_wake(&w, 1 << 30, true);
	}
	alarm(0);
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct sleeper {
	uint64_t deadline;
	uint64_t woke;
	_Atomic bool done;
};

static void *sleeper_main(void *p)
{
	struct sleeper *s = p;

	clock_sleep_until(s->deadline);
	s->woke = clock_now_ns();
	atomic_store(&s->done, true);
	return NULL;
}

static void sleep_until_not_early(void **state)
{
	static const uint64_t delays[] = { 0, 1000, 100000, 2000000 };
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct sleeper s = { 0 };
	pthread_t t;
	size_t i;

	(void)state;
	alarm(60);
	for (i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
		uint64_t deadline = clock_now_ns() + delays[i];

		clock_sleep_until(deadline);
		assert_true(clock_now_ns() >= deadline);
	}
	/* A deadline in the past returns at once. */
	clock_sleep_until(clock_now_ns() - NSEC_PER_SEC);

	/* Signals interrupt clock_nanosleep; the sleep resumes. */
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	s.deadline = clock_now_ns() + 100 * NSEC_PER_MSEC;
	assert_int_equal(pthread_create(&t, NULL, sleeper_main, &s), 0);
	while (!atomic_load(&s.done)) {
		pthread_kill(t, SIGUSR1);
		usleep(2000);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(s.woke >= s.deadline);
	signal(SIGUSR1, SIG_DFL);
	alarm(0);
}

static void clock_helpers(void **state)
{
	uint64_t a, b, deadline;
	struct timespec ts;

	(void)state;
	ts = clock_ns_to_timespec(3 * NSEC_PER_SEC + 123456789);
	assert_int_equal(ts.tv_sec, 3);
	assert_int_equal(ts.tv_nsec, 123456789);
	ts = clock_ns_to_timespec(999999999);
	assert_int_equal(ts.tv_sec, 0);
	assert_int_equal(ts.tv_nsec, 999999999);
	a = clock_now_ns();
	b = clock_now_ns();
	assert_true(b >= a);
	deadline = clock_now_ns() + 200 * NSEC_PER_USEC;
	clock_spin_until(deadline);
	assert_true(clock_now_ns() >= deadline);
}

/* Each @var value of @cases (NULL: unset) must read as its number. */
struct env_case {
	const char *v;
	uint32_t want;
};

static void env_cases(const char *var, const struct env_case *cases, size_t n,
		      uint32_t (*read)(void))
{
	for (size_t i = 0; i < n; i++) {
		if (cases[i].v)
			setenv(var, cases[i].v, 1);
		else
			unsetenv(var);
		assert_int_equal(read(), cases[i].want);
	}
	unsetenv(var);
}

static void slice_env(void **state)
{
	static const struct env_case cases[] = {
		{ NULL, SLICE_DEFAULT_US }, { "", SLICE_DEFAULT_US }, { "0", 0 },
		{ "100", 100 }, { "250", 250 }, { "100000", 100000 },
		{ "99", SLICE_DEFAULT_US }, { "100001", SLICE_DEFAULT_US },
		{ "-5", SLICE_DEFAULT_US }, { "2ms", SLICE_DEFAULT_US },
		{ "abc", SLICE_DEFAULT_US },
	};

	(void)state;
	env_cases("XSCHED_THREAD_SLICE_US", cases, sizeof(cases) / sizeof(cases[0]),
		  slice_wanted_us);
}

/* What slice_thread() saw: asserted on the test's own thread. */
struct slice_seen {
	int renice, set, reset, batch, set_batch;
	struct slice_attr after_set, after_reset, after_batch;
	int got_set, got_reset, got_batch;
};

/* In a thread of its own: the test changes the thread's nice and policy. */
static void *slice_thread(void *arg)
{
	struct slice_seen *s = arg;
	struct sched_param none = { 0 };

	s->renice = setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 7);
	s->set = slice_set_thread(250);
	s->got_set = slice_getattr(0, &s->after_set);
	s->reset = slice_set_thread(0);         /* the kernel's own slice again */
	s->got_reset = slice_getattr(0, &s->after_reset);
	/* A thread the operator put under another policy is left alone. */
	s->batch = sched_setscheduler(0, SCHED_BATCH, &none);
	s->set_batch = slice_set_thread(250);
	s->got_batch = slice_getattr(0, &s->after_batch);
	return NULL;
}

static void slice_thread_kept(void **state)
{
	struct slice_seen s;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, slice_thread, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(s.renice, 0);
	assert_int_equal(s.set, 0);
	assert_int_equal(s.got_set, 0);
	assert_int_equal(s.got_reset, 0);
	assert_int_equal(s.got_batch, 0);
	assert_int_equal(s.after_set.policy, SCHED_OTHER);
	assert_int_equal(s.after_set.nice, 7);          /* kept */
	assert_int_equal(s.reset, 0);
	assert_int_equal(s.after_reset.nice, 7);
	if (tu_kernel_at_least(6, 12)) {
		assert_int_equal(s.after_set.runtime, 250000);
		assert_int_not_equal(s.after_reset.runtime, 250000);
	}
	assert_int_equal(s.batch, 0);
	assert_int_equal(s.set_batch, -EAGAIN);
	assert_int_equal(s.after_batch.policy, SCHED_BATCH);
	assert_int_equal(s.after_batch.nice, 7);
}

/*
 * In a child whose sched_setattr() a seccomp filter refuses (EPERM, as a
 * container profile may): @apply twice at log level @level with @var=@env
 * (NULL: unset). Returns what the child wrote on stderr; *@rc gets
 * @apply's first answer (as -errno) or 99.
 */
static void refused_with(const char *var, const char *env, int (*apply)(void), int level,
			 char *out, size_t size, int *rc)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setattr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	int p[2], st;
	ssize_t n, got = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int first;

		dup2(p[1], 2);
		close(p[0]);
		if (env)
			setenv(var, env, 1);
		else
			unsetenv(var);
		atomic_store(&xlog_max, level);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(99);
		first = apply();
		apply();
		_exit(-first);
	}
	close(p[1]);
	while ((n = read(p[0], out + got, size - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	*rc = -WEXITSTATUS(st);
}

static void slice_refused(const char *env, int level, char *out, size_t size, int *rc)
{
	refused_with("XSCHED_THREAD_SLICE_US", env, slice_apply, level, out, size, rc);
}

static void slice_refusal_said(void **state)
{
	const char *said = "xsched: xsched's threads cannot have a 300 us CPU slice "
			   "(sched_setattr: Operation not permitted): they keep the kernel's\n";
	char out[1024];
	int rc;

	(void)state;
	/* Asked for: a warning, once however many threads ask. */
	slice_refused("300", XLOG_WARN, out, sizeof(out), &rc);
	assert_int_equal(rc, -EPERM);
	assert_string_equal(out, said);
	/* The default slice: information, not shown at the default level ... */
	slice_refused(NULL, XLOG_WARN, out, sizeof(out), &rc);
	assert_int_equal(rc, -EPERM);
	assert_string_equal(out, "");
	/* ... but at XSCHED_LOG=info. */
	slice_refused(NULL, XLOG_INFO, out, sizeof(out), &rc);
	assert_non_null(strstr(out, "cannot have a 100 us CPU slice"));
	/* Nothing asked (0): nothing tried, nothing said. */
	slice_refused("0", XLOG_DEBUG, out, sizeof(out), &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
}

static void slice_rt_env(void **state)
{
	static const struct env_case cases[] = {
		{ NULL, 0 }, { "", 0 }, { "0", 0 }, { "1", 1 }, { "99", 99 },
		{ "100", 0 }, { "-1", 0 }, { "1x", 0 }, { "fifo", 0 },
	};

	(void)state;
	env_cases("XSCHED_THREAD_RTPRIO", cases, sizeof(cases) / sizeof(cases[0]),
		  slice_rt_wanted);
}

/* What rt_thread() saw, asserted on the test's own thread. */
struct rt_seen {
	int renice, set, created, back, again, bad;
	struct slice_attr after_set, child, after_back;
};

static void *rt_child(void *arg)
{
	slice_getattr(0, arg);
	return NULL;
}

/* In a thread of its own: real-time priority, a thread it creates, back. */
static void *rt_thread(void *arg)
{
	struct rt_seen *s = arg;
	pthread_t c;

	s->renice = setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 5);
	s->set = slice_set_rt(1);
	if (s->set < 0)
		return NULL;
	slice_getattr(0, &s->after_set);
	s->created = pthread_create(&c, NULL, rt_child, &s->child);
	if (!s->created)
		pthread_join(c, NULL);
	s->back = slice_set_rt(0);
	slice_getattr(0, &s->after_back);
	s->again = slice_set_rt(0);              /* already the normal policy */
	s->bad = slice_set_rt(SLICE_RT_MAX + 1);
	return NULL;
}

/*
 * slice_set_rt(): SCHED_FIFO at the priority, reset on fork (a thread it
 * creates has the normal policy), and back to SCHED_OTHER with the nice
 * value kept. Needs CAP_SYS_NICE (root): skipped without.
 */
static void slice_rt_thread(void **state)
{
	struct rt_seen s = { 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, rt_thread, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (s.set == -EPERM)
		skip();
	assert_int_equal(s.renice, 0);
	assert_int_equal(s.set, 0);
	assert_int_equal(s.after_set.policy, SCHED_FIFO);
	assert_int_equal(s.after_set.priority, 1);
	assert_true(s.after_set.flags & SCHED_FLAG_RESET_ON_FORK);
	assert_int_equal(s.created, 0);
	assert_int_equal(s.child.policy, SCHED_OTHER);
	assert_int_equal(s.back, 0);
	assert_int_equal(s.after_back.policy, SCHED_OTHER);
	assert_int_equal(s.after_back.nice, 5);
	assert_int_equal(s.again, -EAGAIN);
	assert_int_equal(s.bad, -EINVAL);
}

/* The agent asked for real-time priority and refused it: one warning. */
static void slice_rt_refusal_said(void **state)
{
	const char *said = "xsched: XSCHED_THREAD_RTPRIO=1: the agent thread cannot have "
			   "real-time priority (sched_setattr: Operation not permitted; it "
			   "needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1): it keeps the "
			   "normal policy\n";
	char out[1024];
	int rc;

	(void)state;
	refused_with("XSCHED_THREAD_RTPRIO", "1", slice_apply_agent, XLOG_WARN, out,
		     sizeof(out), &rc);
	assert_int_equal(rc, -EPERM);
	assert_string_equal(out, said);
	/* Not asked for: the slice only, whose refusal is information. */
	refused_with("XSCHED_THREAD_RTPRIO", "0", slice_apply_agent, XLOG_WARN, out,
		     sizeof(out), &rc);
	assert_int_equal(rc, -EPERM);
	assert_string_equal(out, "");
}

/* Sizes as people write them, binary units, and what is not one. */
static void size_parse_and_format(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = {
		{ "4096", 4096 }, { "8G", 8ull << 30 }, { "8g", 8ull << 30 },
		{ "512MiB", 512ull << 20 }, { "512 MB", 512ull << 20 }, { "1.5G", 3ull << 29 },
		{ "1K", 1024 }, { "2T", 2ull << 40 }, { "7B", 7 }, { "0", 0 },
	};
	static const char *const bad[] = {
		"", "lots", "-1", "+1", "1.5", "8X", "8GiBs", "1.G", " 8G", "8Gi B",
		"99999999999999999999", "9E",
	};
	char buf[SIZE_TEXT];
	uint64_t x;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		x = 1;
		if (size_parse(good[i].text, &x) != 0 || x != good[i].bytes)
			fail_msg("'%s' read as %llu", good[i].text, (unsigned long long)x);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (size_parse(bad[i], &x) == 0)
			fail_msg("'%s' read as a size (%llu)", bad[i], (unsigned long long)x);
	assert_int_equal(size_parse("99999999999999999999", &x), -ERANGE);
	assert_int_equal(size_parse("lots", &x), -EINVAL);
	assert_string_equal(size_format(512, buf, sizeof(buf)), "512 B");
	assert_string_equal(size_format(64ull << 20, buf, sizeof(buf)), "64 MiB");
	assert_string_equal(size_format(3ull << 29, buf, sizeof(buf)), "1.5 GiB");
	assert_string_equal(size_format(UINT64_MAX, buf, sizeof(buf)), "16.0 EiB");
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(size_parse_and_format),
	cmocka_unit_test(hist_index_roundtrip),
	cmocka_unit_test(hist_index_monotonic),
	cmocka_unit_test(hist_quantiles_known_data),
	cmocka_unit_test(hist_small_values_exact),
	cmocka_unit_test(hist_empty),
	cmocka_unit_test(hist_quantile_top_bucket),
	cmocka_unit_test(futex_timeout),
	cmocka_unit_test(futex_value_differs),
	cmocka_unit_test(futex_wake_wakes_waiter),
	cmocka_unit_test(sleep_until_not_early),
	cmocka_unit_test(clock_helpers),
	cmocka_unit_test(slice_env),
	cmocka_unit_test(slice_thread_kept),
	cmocka_unit_test(slice_refusal_said),
	cmocka_unit_test(slice_rt_env),
	cmocka_unit_test(slice_rt_thread),
	cmocka_unit_test(slice_rt_refusal_said),
};

TU_MAIN(tests)
