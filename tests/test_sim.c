/*
 * Tests of the simulated XPU itself: exact command timing and data movement,
 * native arbitration (round-robin per command, FCFS), Lv2 stall and flush,
 * Lv3 interrupt/restore keeping the total work, error reporting, and
 * survival of processes killed at any point while attached.
 *
 * Orderings are made deterministic with a HOLD command, which keeps the
 * engine busy until the test releases it, so every queue under test has
 * its commands in place before arbitration starts.
 */
#include "test_util.h"
#include "base/clock.h"
#include "sim/sim_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define MS (1000 * 1000ull)
#define US 1000ull

struct fixture {
	struct sim_dev *dev;
	struct sim_hwq *gate_q;
	_Atomic uint32_t gate;
};

static struct sim_cmd kernel(uint64_t ns)
{
	struct sim_cmd c = { .kind = SIM_CMD_KERNEL, .duration_ns = ns };
	return c;
}

static void open_dev(struct fixture *f, const char *tag, uint32_t arb,
		     uint32_t level, bool flush)
{
	struct sim_dev_opts o = { .arbitration = arb, .level_max = level, .lv2_flush = flush };

	memset(f, 0, sizeof(*f));
	assert_int_equal(sim_dev_open(test_dev(tag), &o, &f->dev), 0);
}

/* Occupies the engine until gate_open(). */
static void gate_close(struct fixture *f)
{
	struct sim_cmd hold = { .kind = SIM_CMD_HOLD, .hold = &f->gate };
	struct sim_hwq_info info;

	atomic_store(&f->gate, 0);
	assert_int_equal(sim_hwq_create(f->dev, &f->gate_q), 0);
	assert_int_equal(sim_hwq_launch(f->gate_q, &hold, NULL), 0);
	do {
		sim_hwq_info_get(f->gate_q, &info);
	} while (!info.running);
}

static void gate_open(struct fixture *f)
{
	atomic_store(&f->gate, 1);
	assert_int_equal(sim_hwq_wait_all(f->gate_q, 0), 0);
}

static void close_dev(struct fixture *f)
{
	sim_hwq_destroy(f->gate_q);
	sim_dev_close(f->dev);
}

static void sim_bad_names(void **state)
{
	struct sim_dev *dev = (struct sim_dev *)state;
	char longname[80];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(sim_dev_open("", NULL, &dev), -EINVAL);
	assert_int_equal(sim_dev_open(NULL, NULL, &dev), -EINVAL);
	assert_int_equal(sim_dev_open(".hidden", NULL, &dev), -EINVAL);
	assert_int_equal(sim_dev_open("a/b", NULL, &dev), -EINVAL);
	assert_int_equal(sim_dev_open("../x", NULL, &dev), -EINVAL);
	assert_int_equal(sim_dev_open(longname, NULL, &dev), -EINVAL);
	assert_int_equal(sim_dev_open("ok", NULL, NULL), -EINVAL);
}

static void sim_bad_options(void **state)
{
	struct sim_dev_opts o = { .arbitration = SIM_ARB_RR, .level_max = 4 };
	struct sim_dev *dev;

	(void)state;
	assert_int_equal(sim_dev_open(test_dev("badopt"), &o, &dev), -EINVAL);
	o.level_max = 0;
	assert_int_equal(sim_dev_open(test_dev("badopt"), &o, &dev), -EINVAL);
	o.level_max = 3;
	o.arbitration = 7;
	assert_int_equal(sim_dev_open(test_dev("badopt"), &o, &dev), -EINVAL);
	setenv("XSCHED_SIM_LEVEL", "9", 1);
	assert_int_equal(sim_dev_opts_from_env(&o), -EINVAL);
	setenv("XSCHED_SIM_LEVEL", "2", 1);
	setenv("XSCHED_SIM_ARBITRATION", "fcfs", 1);
	setenv("XSCHED_SIM_LV2", "flush", 1);
	assert_int_equal(sim_dev_opts_from_env(&o), 0);
	assert_int_equal(o.level_max, 2);
	assert_int_equal(o.arbitration, SIM_ARB_FCFS);
	assert_true(o.lv2_flush);
	setenv("XSCHED_SIM_LV2", "sometimes", 1);
	assert_int_equal(sim_dev_opts_from_env(&o), -EINVAL);
	unsetenv("XSCHED_SIM_LEVEL");
	unsetenv("XSCHED_SIM_ARBITRATION");
	unsetenv("XSCHED_SIM_LV2");
}

static void sim_open_is_shared_per_process(void **state)
{
	struct sim_dev *a, *b;
	struct sim_dev_info info;
	struct sim_dev_opts o = { .arbitration = SIM_ARB_FCFS, .level_max = 2 };

	(void)state;
	assert_int_equal(sim_dev_open(test_dev("shared"), &o, &a), 0);
	/* The second open finds the device: its options are the creator's. */
	assert_int_equal(sim_dev_open(test_dev_name, NULL, &b), 0);
	assert_ptr_equal(a, b);
	sim_dev_info_get(b, &info);
	assert_int_equal(info.arbitration, SIM_ARB_FCFS);
	assert_int_equal(info.level_max, 2);
	sim_dev_close(b);
	sim_dev_close(a);
}

static void sim_stale_layout_refused(void **state)
{
	const char *dir = getenv("XSCHED_SIM_DIR");
	struct sim_dev *dev;
	char path[256];
	FILE *fp;

	(void)state;
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/dev/shm", test_dev("stale"));
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("not a device", fp);
	fclose(fp);
	assert_int_equal(sim_dev_open(test_dev_name, NULL, &dev), -EPROTO);
}

static void sim_kernel_time_exact(void **state)
{
	struct fixture f;
	struct sim_hwq *q;
	struct sim_cmd k = kernel(2 * MS);
	struct sim_hwq_info info;
	uint64_t seq, t0, ns;
	int i;

	(void)state;
	open_dev(&f, "exact", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &q), 0);
	t0 = clock_now_ns();
	for (i = 0; i < 5; i++)
		assert_int_equal(sim_hwq_launch(q, &k, &seq), 0);
	assert_int_equal(seq, 5);
	assert_int_equal(sim_hwq_wait(q, seq, 0), 0);
	/* Busy-spun: never shorter than asked, and the wall time covers it. */
	assert_true(clock_now_ns() - t0 >= 10 * MS);
	sim_hwq_info_get(q, &info);
	assert_int_equal(info.executed, 5);
	assert_true(info.busy_ns >= 10 * MS);
	assert_int_equal(sim_hwq_cmd_time(q, 3, &ns), 0);
	assert_true(ns >= 2 * MS);
	sim_hwq_destroy(q);
	close_dev(&f);
}

static void sim_data_commands(void **state)
{
	struct fixture f;
	struct sim_hwq *q;
	char src[64] = "the quick brown fox", dst[64] = { 0 }, buf[32];
	uint64_t t1 = 0, t2 = 0, seq;
	struct sim_cmd c;

	(void)state;
	open_dev(&f, "data", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &q), 0);
	c = (struct sim_cmd){ .kind = SIM_CMD_EVENT, .timestamp = &t1 };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), 0);
	c = (struct sim_cmd){ .kind = SIM_CMD_COPY, .dst = dst, .src = src,
			      .size = sizeof(src), .duration_ns = 100 * US };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), 0);
	c = (struct sim_cmd){ .kind = SIM_CMD_MEMSET, .dst = buf, .value = 0x5a,
			      .size = sizeof(buf), .duration_ns = 10 * US };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), 0);
	c = kernel(1 * MS);
	assert_int_equal(sim_hwq_launch(q, &c, NULL), 0);
	c = (struct sim_cmd){ .kind = SIM_CMD_EVENT, .timestamp = &t2 };
	assert_int_equal(sim_hwq_launch(q, &c, &seq), 0);
	assert_int_equal(sim_hwq_wait(q, seq, 0), 0);
	assert_string_equal(dst, "the quick brown fox");
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal((unsigned char)buf[i], 0x5a);
	assert_true(t1 > 0 && t2 > t1);
	assert_true(t2 - t1 >= 1100 * US);
	sim_hwq_destroy(q);
	close_dev(&f);
}

static void sim_bad_launches(void **state)
{
	struct fixture f;
	struct sim_hwq *q;
	struct sim_cmd c = { .kind = 99 };

	(void)state;
	open_dev(&f, "badlaunch", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &q), 0);
	assert_int_equal(sim_hwq_launch(q, NULL, NULL), -EINVAL);
	assert_int_equal(sim_hwq_launch(NULL, &c, NULL), -EINVAL);
	assert_int_equal(sim_hwq_launch(q, &c, NULL), -EINVAL);
	c = (struct sim_cmd){ .kind = SIM_CMD_KERNEL };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), -EINVAL);
	c = (struct sim_cmd){ .kind = SIM_CMD_COPY, .size = 8 };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), -EINVAL);
	c = (struct sim_cmd){ .kind = SIM_CMD_MEMSET, .size = 8 };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), -EINVAL);
	c = (struct sim_cmd){ .kind = SIM_CMD_HOLD };
	assert_int_equal(sim_hwq_launch(q, &c, NULL), -EINVAL);
	assert_int_equal(sim_hwq_wait(q, 0, 0), -EINVAL);
	assert_int_equal(sim_hwq_wait(q, 1, 0), -EINVAL);
	assert_int_equal(sim_hwq_query(q, 1), -EINVAL);
	assert_int_equal(sim_hwq_wait_all(q, 0), 0);
	sim_hwq_destroy(q);
	close_dev(&f);
}

static int fail_eio(void *arg)
{
	(void)arg;
	return -EIO;
}

static void sim_error_reported_once(void **state)
{
	struct fixture f;
	struct sim_hwq *q;
	struct sim_cmd bad = { .kind = SIM_CMD_KERNEL, .fn = fail_eio, .duration_ns = 10 * US };
	struct sim_cmd ok = kernel(10 * US);
	uint64_t s1, s2, s3;

	(void)state;
	open_dev(&f, "err", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &q), 0);
	assert_int_equal(sim_hwq_launch(q, &ok, &s1), 0);
	assert_int_equal(sim_hwq_launch(q, &bad, &s2), 0);
	assert_int_equal(sim_hwq_launch(q, &ok, &s3), 0);
	assert_int_equal(sim_hwq_wait(q, s1, 0), 0);
	/* Reported at the first wait covering it, once; later work still ran. */
	assert_int_equal(sim_hwq_wait(q, s3, 0), -EIO);
	assert_int_equal(sim_hwq_wait(q, s3, 0), 0);
	assert_int_equal(sim_hwq_query(q, s2), 0);
	sim_hwq_destroy(q);
	close_dev(&f);
}

/*
 * Runs what was launched behind the closed gate with tracing on: opens the
 * gate, waits for queues @a and @b, and reads the order commands started
 * in, as (queue, seq) pairs.
 */
static size_t run_traced(struct fixture *f, struct sim_hwq *a, struct sim_hwq *b,
			 uint32_t *hw, uint64_t *seq, size_t cap)
{
	assert_int_equal(sim_dev_trace_start(f->dev, cap), 0);
	gate_open(f);
	assert_int_equal(sim_hwq_wait_all(a, 0), 0);
	assert_int_equal(sim_hwq_wait_all(b, 0), 0);
	return sim_dev_trace_read(f->dev, hw, seq, cap);
}

static void sim_round_robin_per_command(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b, *c;
	struct sim_cmd k = kernel(200 * US);
	uint32_t hw[32];
	uint64_t seq[32];
	size_t n, i;

	(void)state;
	open_dev(&f, "rr", SIM_ARB_RR, 3, false);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	assert_int_equal(sim_hwq_create(f.dev, &c), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
		assert_int_equal(sim_hwq_launch(c, &k, NULL), 0);
	}
	assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	n = run_traced(&f, a, c, hw, seq, 32);
	assert_int_equal(n, 9);
	/* a b c a c a c a c: one command per queue in turn. */
	{
		struct sim_hwq_info ia, ib, ic;
		uint32_t want[9];

		sim_hwq_info_get(a, &ia);
		sim_hwq_info_get(b, &ib);
		sim_hwq_info_get(c, &ic);
		want[0] = ia.index;
		want[1] = ib.index;
		want[2] = ic.index;
		for (i = 3; i < 9; i++)
			want[i] = i % 2 ? ia.index : ic.index;
		for (i = 0; i < n; i++)
			assert_int_equal(hw[i], want[i]);
	}
	sim_hwq_destroy(a);
	sim_hwq_destroy(b);
	sim_hwq_destroy(c);
	close_dev(&f);
}

/*
 * A timestamp right behind a command completes with it, in the same turn,
 * as a device's front end retires it: round robin puts no other queue's
 * command between them (a kernel after it still waits for its turn).
 */
static void sim_event_completes_with_command(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *c;
	struct sim_cmd k = kernel(200 * US), ev = { .kind = SIM_CMD_EVENT };
	uint32_t hw[32];
	uint64_t seq[32];
	struct sim_hwq_info ia, ic;
	size_t n, i;

	(void)state;
	open_dev(&f, "evturn", SIM_ARB_RR, 3, false);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &c), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
		assert_int_equal(sim_hwq_launch(a, &ev, NULL), 0);
		assert_int_equal(sim_hwq_launch(c, &k, NULL), 0);
	}
	n = run_traced(&f, a, c, hw, seq, 32);
	sim_hwq_info_get(a, &ia);
	sim_hwq_info_get(c, &ic);
	/* a-kernel a-event c a-kernel a-event c */
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++)
		assert_int_equal(hw[i], i % 3 == 2 ? ic.index : ia.index);
	sim_hwq_destroy(a);
	sim_hwq_destroy(c);
	close_dev(&f);
}

static void sim_fcfs_order(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b;
	struct sim_cmd k = kernel(100 * US);
	struct sim_hwq_info ia, ib;
	uint32_t hw[16];
	uint64_t seq[16];
	size_t n, i;

	(void)state;
	open_dev(&f, "fcfs", SIM_ARB_FCFS, 3, false);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	/* Launch order: b b a a a b: FCFS runs exactly that. */
	assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	n = run_traced(&f, a, b, hw, seq, 16);
	assert_int_equal(n, 6);
	sim_hwq_info_get(a, &ia);
	sim_hwq_info_get(b, &ib);
	{
		uint32_t want[6] = { ib.index, ib.index, ia.index, ia.index, ia.index, ib.index };

		for (i = 0; i < n; i++)
			assert_int_equal(hw[i], want[i]);
	}
	sim_hwq_destroy(a);
	sim_hwq_destroy(b);
	close_dev(&f);
}

static void sim_lv2_stall(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b;
	struct sim_cmd k = kernel(300 * US);
	struct sim_hwq_info ia;
	int i;

	(void)state;
	open_dev(&f, "stall", SIM_ARB_RR, 2, false);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
		assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	}
	assert_int_equal(sim_hwq_stall(a, true), 0);
	gate_open(&f);
	/* b runs alone to completion while a's launched work waits. */
	assert_int_equal(sim_hwq_wait_all(b, 0), 0);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.done, 0);
	assert_false(ia.running);
	assert_int_equal(sim_hwq_wait(a, 1, SIM_WAIT_PREEMPTIBLE), -EAGAIN);
	assert_int_equal(sim_hwq_query(a, 1), -EBUSY);
	assert_int_equal(sim_hwq_unstall(a), 0);
	assert_int_equal(sim_hwq_wait_all(a, SIM_WAIT_PREEMPTIBLE), 0);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.executed, 5);
	sim_hwq_destroy(a);
	sim_hwq_destroy(b);
	close_dev(&f);
}

static void sim_lv2_running_command_finishes(void **state)
{
	struct fixture f;
	struct sim_hwq *a;
	_Atomic uint32_t release = 0;
	struct sim_cmd hold = { .kind = SIM_CMD_HOLD, .hold = &release };
	struct sim_cmd k = kernel(2 * MS);
	struct sim_hwq_info ia;

	(void)state;
	open_dev(&f, "stallrun", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_launch(a, &hold, NULL), 0);
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	do {
		sim_hwq_info_get(a, &ia);
	} while (!ia.running);
	/* Lv2 does not stop the running command... */
	assert_int_equal(sim_hwq_stall(a, false), 0);
	sim_hwq_info_get(a, &ia);
	assert_true(ia.running);
	assert_int_equal(ia.done, 0);
	/* ...and once it ends the device is quiet: the next did not start. */
	atomic_store(&release, 1);
	sim_hwq_wait_quiet(a);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.done, 1);
	assert_int_equal(ia.executed, 1);
	assert_int_equal(ia.interrupts, 0);
	assert_int_equal(sim_hwq_query(a, 2), -EBUSY);
	assert_int_equal(sim_hwq_unstall(a), 0);
	assert_int_equal(sim_hwq_wait_all(a, 0), 0);
	sim_hwq_destroy(a);
	close_dev(&f);
}

static void sim_lv3_interrupt_keeps_work(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b;
	const uint64_t len = 200 * MS; /* long: the interrupt must find it running */
	struct sim_cmd longk = kernel(len), shortk = kernel(2 * MS);
	struct sim_hwq_info ia, ib;
	uint64_t ns;

	(void)state;
	open_dev(&f, "lv3", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	assert_int_equal(sim_hwq_launch(a, &longk, NULL), 0);
	/*
	 * "running" is set when the queue's turn begins, before its command
	 * starts: an interrupt in between stops nothing (interrupts stays 0).
	 * Until one catches the command executing, restore and try again.
	 */
	for (;;) {
		do {
			sim_hwq_info_get(a, &ia);
		} while (!ia.running);
		assert_int_equal(sim_hwq_interrupt(a, true), 0);
		sim_hwq_info_get(a, &ia);
		if (ia.interrupts)
			break;
		assert_int_equal(ia.done, 0);
		assert_int_equal(sim_hwq_restore(a), 0);
	}
	assert_false(ia.running);
	assert_int_equal(ia.done, 0);
	assert_int_equal(ia.interrupts, 1);
	assert_true(ia.busy_ns < len);
	/* The device serves another queue while a is interrupted. */
	assert_int_equal(sim_hwq_launch(b, &shortk, NULL), 0);
	assert_int_equal(sim_hwq_wait_all(b, 0), 0);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.done, 0);
	assert_int_equal(sim_hwq_restore(a), 0);
	assert_int_equal(sim_hwq_wait_all(a, 0), 0);
	sim_hwq_info_get(a, &ia);
	sim_hwq_info_get(b, &ib);
	/* Work is kept: the command ran @len in total, plus a check interval
	 * and scheduling noise (generous: a loaded 2-core machine deschedules
	 * the engine for tens of ms), not twice its length. */
	assert_int_equal(sim_hwq_cmd_time(a, 1, &ns), 0);
	assert_true(ns >= len);
	assert_true(ns < 2 * len);
	assert_int_equal(ia.executed, 1);
	assert_int_equal(ib.executed, 1);
	sim_hwq_destroy(a);
	sim_hwq_destroy(b);
	close_dev(&f);
}

static void sim_level_limits(void **state)
{
	struct fixture f;
	struct sim_hwq *a;

	(void)state;
	open_dev(&f, "lv1", SIM_ARB_RR, 1, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_stall(a, false), -EOPNOTSUPP);
	assert_int_equal(sim_hwq_interrupt(a, false), -EOPNOTSUPP);
	sim_hwq_destroy(a);
	close_dev(&f);
	open_dev(&f, "lv2", SIM_ARB_RR, 2, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_stall(a, false), 0);
	assert_int_equal(sim_hwq_unstall(a), 0);
	assert_int_equal(sim_hwq_interrupt(a, false), -EOPNOTSUPP);
	sim_hwq_destroy(a);
	close_dev(&f);
}

static void sim_lv2_flush(void **state)
{
	struct fixture f;
	struct sim_hwq *a;
	struct sim_cmd k = kernel(100 * US);
	struct sim_hwq_info ia;
	uint64_t seq;
	int i;

	(void)state;
	open_dev(&f, "flush", SIM_ARB_RR, 2, true);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(sim_hwq_stall(a, false), 0);
	gate_open(&f);
	/* Flushed commands complete without running. */
	for (seq = 1; seq <= 5; seq++)
		assert_int_equal(sim_hwq_wait(a, seq, SIM_WAIT_PREEMPTIBLE), -ECANCELED);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.executed, 0);
	assert_int_equal(sim_hwq_unstall(a), 0);
	assert_int_equal(sim_hwq_launch(a, &k, &seq), 0);
	assert_int_equal(sim_hwq_wait(a, seq, 0), 0);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.executed, 1);
	sim_hwq_destroy(a);
	close_dev(&f);
}

static void sim_destroy_discards_pending(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b;
	struct sim_cmd k = kernel(1 * MS);
	uint64_t before;
	struct sim_dev_info info;
	int i;

	(void)state;
	open_dev(&f, "destroy", SIM_ARB_RR, 3, false);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	for (i = 0; i < 50; i++)
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	sim_dev_info_get(f.dev, &info);
	before = info.commands;
	sim_hwq_destroy(a);
	gate_open(&f);
	assert_int_equal(sim_hwq_wait_all(b, 0), 0);
	sim_dev_info_get(f.dev, &info);
	/* The gate and b's command ran; none of a's 50. */
	assert_int_equal(info.commands - before, 2);
	sim_hwq_destroy(b);
	close_dev(&f);
}

static void sim_ring_full_blocks_then_proceeds(void **state)
{
	struct fixture f;
	struct sim_hwq *a;
	struct sim_cmd k = kernel(1 * US);
	uint64_t seq = 0;
	int i;

	(void)state;
	open_dev(&f, "ring", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	/* More than the ring holds: the launcher waits for room, as a device
	 * whose queue is full does, and nothing is lost. */
	for (i = 0; i < 3 * 1024 + 7; i++)
		assert_int_equal(sim_hwq_launch(a, &k, &seq), 0);
	assert_int_equal(sim_hwq_wait(a, seq, 0), 0);
	{
		struct sim_hwq_info ia;

		sim_hwq_info_get(a, &ia);
		assert_int_equal(ia.executed, 3 * 1024 + 7);
	}
	sim_hwq_destroy(a);
	close_dev(&f);
}

/* Child: attach, start a command that holds the engine, report, spin. */
static void child_hold_engine(const char *name, int fd, bool running)
{
	static _Atomic uint32_t never;
	struct sim_dev *dev;
	struct sim_hwq *q;
	struct sim_cmd hold = { .kind = SIM_CMD_HOLD, .hold = &never };
	struct sim_cmd k = kernel(5 * MS);
	char c = 'x';

	if (sim_dev_open(name, NULL, &dev) || sim_hwq_create(dev, &q))
		_exit(2);
	if (running) {
		struct sim_hwq_info info;

		sim_hwq_launch(q, &hold, NULL);
		do {
			sim_hwq_info_get(q, &info);
		} while (!info.running);
	} else {
		for (int i = 0; i < 100; i++)
			sim_hwq_launch(q, &k, NULL);
	}
	if (write(fd, &c, 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/*
 * The holder runs as pid 1 of a PID namespace of its own (our child
 * unshares and forks it): its peers cannot read its pid in /proc. While it
 * lives it must keep the engine; once killed it must be reaped. Needs root.
 */
static void exec_holder_in_pidns(const char *fd_arg, bool running)
{
	pid_t g;

	if (setpgid(0, 0) < 0 || unshare(CLONE_NEWPID) < 0)
		_exit(4);
	g = fork();
	if (g == 0) {
		execl("/proc/self/exe", "test_sim", "--hold-engine", test_dev_name, fd_arg,
		      running ? "1" : "0", (char *)NULL);
		_exit(127);
	}
	waitpid(g, NULL, 0);
	_exit(0);
}

static void killed_process_case_ns(const char *tag, bool running, bool reap, bool pidns)
{
	struct fixture f;
	struct sim_hwq *a;
	struct sim_cmd k = kernel(1 * MS);
	int fds[2];
	pid_t pid;
	char c, fd_arg[16];
	uint64_t seq;

	open_dev(&f, tag, SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	/* Our own queue first, so the child's launches have to wait turns. */
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(pipe(fds), 0);
	snprintf(fd_arg, sizeof(fd_arg), "%d", fds[1]);
	/* Also while the child starts: a hang fails here, not in ctest's timeout. */
	alarm(30);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Orphaned (the parent failed first), it spins no longer; the
		 * alarm survives the exec. A fresh program, not the fork: a
		 * forked child of this multithreaded process may inherit a
		 * lock some other thread held (an ASan build hung so, 1 run in
		 * ~50, its executor stuck starting in the allocator). */
		alarm(60);
		if (pidns)
			exec_holder_in_pidns(fd_arg, running);
		execl("/proc/self/exe", "test_sim", "--hold-engine", test_dev_name, fd_arg,
		      running ? "1" : "0", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(read(fds[0], &c, 1), 1);
	if (pidns && running) {
		struct sim_hwq_info ia;

		/* Twenty watchdog periods (10 ms): the live holder keeps the engine. */
		assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
		clock_sleep_until(clock_now_ns() + 200 * MS);
		sim_hwq_info_get(a, &ia);
		assert_int_equal(ia.executed, 1);
	}
	kill(pidns ? -pid : pid, SIGKILL);
	if (reap)
		waitpid(pid, NULL, 0);
	/* The device keeps serving us: the dead holder is reaped. */
	for (int i = 0; i < 20; i++)
		assert_int_equal(sim_hwq_launch(a, &k, &seq), 0);
	assert_int_equal(sim_hwq_wait(a, seq, 0), 0);
	alarm(0);
	if (!reap)
		waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	sim_hwq_destroy(a);
	sim_dev_close(f.dev);
}

static void killed_process_case(const char *tag, bool running, bool reap)
{
	killed_process_case_ns(tag, running, reap, false);
}

static void sim_killed_while_running(void **state)
{
	(void)state;
	killed_process_case("killrun", true, true);
}

static void sim_killed_zombie_while_running(void **state)
{
	(void)state;
	killed_process_case("killzombie", true, false);
}

static void sim_killed_while_queued(void **state)
{
	(void)state;
	killed_process_case("killqueued", false, true);
}

/* A peer in another PID namespace: kept while it lives, reaped once dead. */
static void sim_other_pidns_kept_then_reaped(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	killed_process_case_ns("killns", true, true, true);
}

/* The file of device test_dev_name, mapped as its processes see it. */
static struct sim_shm_dev *map_dev_file(char *path, size_t len)
{
	const char *dir = getenv("XSCHED_SIM_DIR");
	struct sim_shm_dev *shm;
	int fd;

	snprintf(path, len, "%s/%s", dir && *dir ? dir : "/dev/shm", test_dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(shm != MAP_FAILED);
	return shm;
}

/*
 * A reaper that dies half way (a process killed while it reaps a dead peer,
 * as one starting does) leaves the peer's context REAPING, its dead queue
 * holding the engine. While the reaper lives (its reap byte locked) the
 * reap is its own; once it is dead, the next reaper (our watchdog) takes it
 * over and the engine serves us again. It used to stay so for good: every
 * process's commands on the device then waited forever (a soak of killed
 * clients, test_daemon_clients, failed so once in CI).
 */
static void sim_reaper_killed_midway(void **state)
{
	struct fixture f;
	struct sim_shm_dev *shm;
	struct sim_hwq *a;
	struct sim_hwq_info ia;
	struct sim_cmd k = kernel(1 * MS);
	uint32_t c, expected = SIM_SLOT_LIVE;
	int fds[2], lk[2];
	pid_t holder, reaper;
	char b, fd_arg[16], path[256];
	uint64_t seq;

	(void)state;
	open_dev(&f, "reapkill", SIM_ARB_RR, 3, false);
	shm = map_dev_file(path, sizeof(path));
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe(lk), 0);
	snprintf(fd_arg, sizeof(fd_arg), "%d", fds[1]);
	alarm(30);
	holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		alarm(60);
		execl("/proc/self/exe", "test_sim", "--hold-engine", test_dev_name, fd_arg, "1",
		      (char *)NULL);
		_exit(127);
	}
	assert_int_equal(read(fds[0], &b, 1), 1);
	for (c = 0; c < SIM_MAX_CTX && shm->ctx[c].pid != holder; c++)
		;
	assert_true(c < SIM_MAX_CTX);
	/* The reaper: its byte locked on a description of its own, then the
	 * context taken (a reaper's first step) and the holder killed. */
	reaper = fork();
	assert_true(reaper >= 0);
	if (reaper == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = SIM_REAP_BYTE(c), .l_len = 1 };
		int fd = open(path, O_RDWR | O_CLOEXEC);

		alarm(60);
		if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) < 0 || write(lk[1], "x", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	assert_int_equal(read(lk[0], &b, 1), 1);
	assert_true(atomic_compare_exchange_strong(&shm->ctx[c].state, &expected,
						   SIM_SLOT_REAPING));
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	/* Twenty watchdog periods: the live reaper's context is left to it. */
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	clock_sleep_until(clock_now_ns() + 200 * MS);
	sim_hwq_info_get(a, &ia);
	assert_int_equal(ia.executed, 1);
	assert_int_equal(atomic_load(&shm->ctx[c].state), SIM_SLOT_REAPING);
	/* The reaper dies: its reap is finished for it. */
	kill(reaper, SIGKILL);
	waitpid(reaper, NULL, 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(sim_hwq_launch(a, &k, &seq), 0);
	assert_int_equal(sim_hwq_wait(a, seq, 0), 0);
	alarm(0);
	assert_int_equal(atomic_load(&shm->ctx[c].state), SIM_SLOT_FREE);
	munmap(shm, sizeof(*shm));
	close(fds[0]);
	close(fds[1]);
	close(lk[0]);
	close(lk[1]);
	sim_hwq_destroy(a);
	sim_dev_close(f.dev);
}

static void sim_processes_share_one_engine(void **state)
{
	enum { PROCS = 3, CMDS = 20 };
	struct sim_dev *dev;
	struct sim_dev_info before, after;
	pid_t pids[PROCS];
	uint64_t t0, elapsed;
	int i, status;

	(void)state;
	assert_int_equal(sim_dev_open(test_dev("share"), NULL, &dev), 0);
	sim_dev_info_get(dev, &before);
	t0 = clock_now_ns();
	for (i = 0; i < PROCS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct sim_dev *d;
			struct sim_hwq *q;
			struct sim_cmd k = kernel(1 * MS);
			uint64_t seq = 0;

			if (sim_dev_open(test_dev_name, NULL, &d) || sim_hwq_create(d, &q))
				_exit(2);
			for (int j = 0; j < CMDS; j++)
				sim_hwq_launch(q, &k, &seq);
			_exit(sim_hwq_wait(q, seq, 0) == 0 ? 0 : 3);
		}
	}
	for (i = 0; i < PROCS; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	elapsed = clock_now_ns() - t0;
	sim_dev_info_get(dev, &after);
	assert_int_equal(after.commands - before.commands, PROCS * CMDS);
	/* One engine: the device time executed cannot exceed the wall time,
	 * as it would if two processes ran commands at once on our 2 cores. */
	assert_true(after.busy_ns - before.busy_ns >= PROCS * CMDS * MS);
	assert_true(after.busy_ns - before.busy_ns <= elapsed);
	sim_dev_close(dev);
}

static void sim_fork_child_attaches_afresh(void **state)
{
	struct fixture f;
	struct sim_hwq *a;
	struct sim_cmd k = kernel(100 * US);
	pid_t pid;
	int status;

	(void)state;
	open_dev(&f, "fork", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	/*
	 * The executor thread has run a command before the fork, so it is
	 * past its start: under AddressSanitizer (GCC 12) a thread starting
	 * holds the allocator's lock in its first calloc(), and a child forked
	 * then inherits it locked, so its own executor hangs at its first
	 * allocation (seen on a loaded CI machine). glibc's malloc is
	 * fork-safe; the sanitizer's is not. The parent's queue works on
	 * during the child's life: it launches again after the fork.
	 */
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(sim_hwq_wait_all(a, 0), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sim_dev *d;
		struct sim_hwq *q;
		uint64_t seq;

		/* The parent's handle is not ours: opening gives a new one. */
		if (sim_dev_open(test_dev_name, NULL, &d) || d == f.dev)
			_exit(2);
		if (sim_hwq_create(d, &q) || sim_hwq_launch(q, &k, &seq))
			_exit(3);
		_exit(sim_hwq_wait(q, seq, 0) == 0 ? 0 : 4);
	}
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(sim_hwq_wait_all(a, 0), 0);
	sim_hwq_destroy(a);
	sim_dev_close(f.dev);
}

static void sim_wait_orders_across_queues(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b;
	struct sim_cmd k = kernel(300 * US), w = { .kind = SIM_CMD_WAIT };
	struct sim_hwq_info ia, ib;
	uint32_t hw[16];
	uint64_t seq[16];
	size_t n, i;

	(void)state;
	open_dev(&f, "wait", SIM_ARB_RR, 3, false);
	gate_close(&f);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	/* a: WAIT(b reaches 3), k; b: k k k. Round-robin alone would run a's
	 * kernel second; the wait holds it back, without holding the engine. */
	w.wait_hwq = sim_hwq_index(b);
	w.wait_seq = 3;
	assert_int_equal(sim_hwq_launch(a, &w, NULL), 0);
	assert_int_equal(sim_hwq_launch(a, &k, NULL), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(sim_hwq_launch(b, &k, NULL), 0);
	sim_hwq_info_get(a, &ia);
	sim_hwq_info_get(b, &ib);
	n = run_traced(&f, a, b, hw, seq, 16);
	/* Started: a's WAIT (seq 1) may show anywhere, but a's kernel (seq 2)
	 * only after b's third. */
	{
		size_t b3 = n, a2 = n;

		for (i = 0; i < n; i++) {
			if (hw[i] == ib.index && seq[i] == 3)
				b3 = i;
			if (hw[i] == ia.index && seq[i] == 2)
				a2 = i;
		}
		assert_true(b3 < n && a2 < n);
		assert_true(a2 > b3);
	}
	/* Bad waits are refused. */
	w.wait_seq = 0;
	assert_int_equal(sim_hwq_launch(a, &w, NULL), -EINVAL);
	sim_hwq_destroy(a);
	sim_hwq_destroy(b);
	close_dev(&f);
}

static void sim_wait_on_gone_queue_proceeds(void **state)
{
	struct fixture f;
	struct sim_hwq *a, *b;
	struct sim_cmd w = { .kind = SIM_CMD_WAIT, .wait_seq = 100 };

	(void)state;
	open_dev(&f, "waitgone", SIM_ARB_RR, 3, false);
	assert_int_equal(sim_hwq_create(f.dev, &a), 0);
	assert_int_equal(sim_hwq_create(f.dev, &b), 0);
	w.wait_hwq = sim_hwq_index(b);
	assert_int_equal(sim_hwq_launch(a, &w, NULL), 0);
	/* b will never reach 100: once it is destroyed, a is not stuck. */
	sim_hwq_destroy(b);
	alarm(30);
	assert_int_equal(sim_hwq_wait_all(a, 0), 0);
	alarm(0);
	sim_hwq_destroy(a);
	close_dev(&f);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sim_wait_orders_across_queues),
	cmocka_unit_test(sim_wait_on_gone_queue_proceeds),
	cmocka_unit_test(sim_bad_names),
	cmocka_unit_test(sim_bad_options),
	cmocka_unit_test(sim_open_is_shared_per_process),
	cmocka_unit_test(sim_stale_layout_refused),
	cmocka_unit_test(sim_kernel_time_exact),
	cmocka_unit_test(sim_data_commands),
	cmocka_unit_test(sim_bad_launches),
	cmocka_unit_test(sim_error_reported_once),
	cmocka_unit_test(sim_round_robin_per_command),
	cmocka_unit_test(sim_event_completes_with_command),
	cmocka_unit_test(sim_fcfs_order),
	cmocka_unit_test(sim_lv2_stall),
	cmocka_unit_test(sim_lv2_running_command_finishes),
	cmocka_unit_test(sim_lv3_interrupt_keeps_work),
	cmocka_unit_test(sim_level_limits),
	cmocka_unit_test(sim_lv2_flush),
	cmocka_unit_test(sim_destroy_discards_pending),
	cmocka_unit_test(sim_ring_full_blocks_then_proceeds),
	cmocka_unit_test(sim_killed_while_running),
	cmocka_unit_test(sim_killed_zombie_while_running),
	cmocka_unit_test(sim_killed_while_queued),
	cmocka_unit_test(sim_other_pidns_kept_then_reaped),
	cmocka_unit_test(sim_reaper_killed_midway),
	cmocka_unit_test(sim_processes_share_one_engine),
	cmocka_unit_test(sim_fork_child_attaches_afresh),
};

/* test_sim --hold-engine NAME FD RUNNING: the child of the kill tests. */
static void hold_engine_mode(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--hold-engine"))
		child_hold_engine(argv[2], atoi(argv[3]), argv[4][0] == '1');
}

TU_MAIN_WITH(tests, hold_engine_mode)
