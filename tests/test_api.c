/*
 * The public C API (include/xsched/xsched.h): bad input gives a clear error
 * and never a crash (NULL handles, zero and negative sizes, inconsistent
 * windows, unknown levels and hints, unknown sequence numbers), outputs are
 * written only on success, xs_strerror() covers the codes the API returns,
 * and the sim commands own what the caller may reuse (xs_sim_copy's source).
 */
#include "test_util.h"

#include "base/clock.h"
#include "xsched/sim.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>

/* A sentinel no API call may write into an output on failure. */
#define POISON ((void *)0x5a5a5a5a)

struct env {
	char name[64];
	struct sim_dev *dev;
	xs_hwq *hwq;
	xs_queue *q;
};

/* A private Lv3 device (not the environment's default) and one hwq on it. */
static void env_init(struct env *e, const char *tag)
{
	struct sim_dev_opts o = { .arbitration = SIM_ARB_RR, .level_max = 3 };

	alarm(60);
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", test_dev(tag));
	assert_int_equal(sim_dev_open(e->name, &o, &e->dev), 0);
	assert_int_equal(xs_sim_hwq_create(e->name, &e->hwq), 0);
	assert_non_null(e->hwq);
}

static void env_queue(struct env *e)
{
	assert_int_equal(xs_queue_create(e->hwq, NULL, &e->q), 0);
	assert_non_null(e->q);
}

static void env_fini(struct env *e)
{
	assert_int_equal(xs_queue_destroy(e->q, XS_DESTROY_DRAIN), 0);
	xs_hwq_destroy(e->hwq);
	sim_dev_close(e->dev);
	sim_dev_unlink(e->name);
	alarm(0);
}

static xs_cmd *kernel(uint64_t ns)
{
	xs_cmd *c = NULL;

	assert_int_equal(xs_sim_kernel(ns, &c), 0);
	assert_non_null(c);
	return c;
}

static int noop_fn(void *arg)
{
	(void)arg;
	return 0;
}

static void api_null_handles(void **state)
{
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;
	xs_queue_stats st;
	xs_queue_info info;
	xs_queue *q = POISON;
	int64_t v = 42;
	uint64_t seq = 7;
	struct env e;

	(void)state;
	env_init(&e, "null");
	assert_int_equal(xs_sim_hwq_create(e.name, NULL), -EINVAL);
	assert_int_equal(xs_queue_create(NULL, NULL, &q), -EINVAL);
	assert_int_equal(xs_queue_create(NULL, &cfg, &q), -EINVAL);
	assert_int_equal(xs_queue_create(e.hwq, NULL, NULL), -EINVAL);
	assert_int_equal(xs_queue_create(e.hwq, &cfg, NULL), -EINVAL);
	assert_ptr_equal(q, POISON);

	/* A command submitted to no queue still belongs to the call (no leak). */
	assert_int_equal(xs_submit(NULL, kernel(1000), &seq), -EINVAL);
	assert_int_equal(seq, 7);
	assert_int_equal(xs_wait(NULL, 1), -EINVAL);
	assert_int_equal(xs_wait_all(NULL), -EINVAL);
	assert_int_equal(xs_query(NULL, 1), -EINVAL);
	assert_int_equal(xs_suspend(NULL, 0), -EINVAL);
	assert_int_equal(xs_suspend(NULL, XS_SUSPEND_SYNC), -EINVAL);
	assert_int_equal(xs_resume(NULL), -EINVAL);
	assert_int_equal(xs_queue_set_window(NULL, 4, 2, 0), -EINVAL);
	assert_int_equal(xs_queue_set_hint(NULL, XS_HINT_PRIORITY, 1), -EINVAL);
	assert_int_equal(xs_queue_get_hint(NULL, XS_HINT_PRIORITY, &v), -EINVAL);
	assert_int_equal(v, 42);
	assert_int_equal(xs_queue_info_get(NULL, &info), -EINVAL);
	assert_int_equal(xs_queue_stats_get(NULL, &st), -EINVAL);

	env_queue(&e);
	assert_int_equal(xs_submit(e.q, NULL, &seq), -EINVAL);
	assert_int_equal(seq, 7);
	assert_int_equal(xs_queue_get_hint(e.q, XS_HINT_PRIORITY, NULL), -EINVAL);
	assert_int_equal(xs_queue_info_get(e.q, NULL), -EINVAL);
	assert_int_equal(xs_queue_stats_get(e.q, NULL), -EINVAL);
	/* NULL seq output is allowed on submit. */
	assert_int_equal(xs_submit(e.q, kernel(1000), NULL), 0);
	assert_int_equal(xs_wait_all(e.q), 0);
	env_fini(&e);
}

static void api_cmd_bad_args(void **state)
{
	char buf[16], src[16] = "abc";
	uint64_t ts;
	xs_cmd *c = POISON;

	(void)state;
	assert_int_equal(xs_sim_kernel(0, &c), -EINVAL);
	assert_int_equal(xs_sim_kernel(1000, NULL), -EINVAL);
	assert_int_equal(xs_sim_kernel_fn(1000, NULL, NULL, &c), -EINVAL);
	assert_int_equal(xs_sim_kernel_fn(1000, noop_fn, NULL, NULL), -EINVAL);
	assert_int_equal(xs_sim_copy(NULL, src, sizeof(src), 0, &c), -EINVAL);
	assert_int_equal(xs_sim_copy(buf, NULL, sizeof(buf), 0, &c), -EINVAL);
	assert_int_equal(xs_sim_copy(buf, src, 0, 0, &c), -EINVAL);
	assert_int_equal(xs_sim_copy(buf, src, sizeof(buf), 0, NULL), -EINVAL);
	assert_int_equal(xs_sim_memset(NULL, 0, sizeof(buf), &c), -EINVAL);
	assert_int_equal(xs_sim_memset(buf, 0, 0, &c), -EINVAL);
	assert_int_equal(xs_sim_memset(buf, 0, sizeof(buf), NULL), -EINVAL);
	assert_int_equal(xs_sim_event(NULL, &c), -EINVAL);
	assert_int_equal(xs_sim_event(&ts, NULL), -EINVAL);
	assert_ptr_equal(c, POISON);
	/* Never-submitted commands are destroyed by their creator; NULL is fine. */
	assert_int_equal(xs_sim_copy(buf, src, sizeof(src), 0, &c), 0);
	xs_cmd_destroy(c);
	xs_cmd_destroy(NULL);
}

static int create_with(xs_hwq *h, xs_queue_config cfg)
{
	xs_queue *q = POISON;
	int rc = xs_queue_create(h, &cfg, &q);

	if (rc < 0) {
		assert_ptr_equal(q, POISON);
	} else {
		assert_ptr_not_equal(q, POISON);
		assert_int_equal(xs_queue_destroy(q, 0), 0);
	}
	return rc;
}

static void api_queue_config_invalid(void **state)
{
	xs_queue_config c = XS_QUEUE_CONFIG_INIT;
	struct env e;

	(void)state;
	env_init(&e, "cfg");
	assert_int_equal(create_with(e.hwq, c), 0);
	c = (xs_queue_config){ .size = sizeof(c), .threshold = -1 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .batch = -1 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .budget_ns = -2 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .budget_ns = INT64_MIN };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .threshold = 4, .batch = 5 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .threshold = XS_MAX_THRESHOLD + 1 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .threshold = INT32_MAX };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .level = 4 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c), .level = -1 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = sizeof(c) - 1 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	c = (xs_queue_config){ .size = 0 };
	assert_int_equal(create_with(e.hwq, c), -EINVAL);
	/* The limits themselves are valid. */
	c = (xs_queue_config){ .size = sizeof(c), .threshold = XS_MAX_THRESHOLD, .batch = 1 };
	assert_int_equal(create_with(e.hwq, c), 0);
	c = (xs_queue_config){ .size = sizeof(c), .threshold = 4, .batch = 4 };
	assert_int_equal(create_with(e.hwq, c), 0);
	c = (xs_queue_config){ .size = sizeof(c), .budget_ns = XS_BUDGET_NONE, .level = 1 };
	assert_int_equal(create_with(e.hwq, c), 0);
	e.q = NULL;
	env_fini(&e);
}

static void api_queue_info_defaults(void **state)
{
	xs_queue_config c = {
		.size = sizeof(c), .level = XS_LEVEL_2, .threshold = 32, .batch = 4,
		.budget_ns = XS_BUDGET_NONE,
	};
	xs_queue_info info;
	xs_queue_stats st;
	xs_queue *q;
	struct env e;

	(void)state;
	env_init(&e, "info");
	env_queue(&e);
	assert_int_equal(xs_queue_info_get(e.q, &info), 0);
	assert_int_equal(info.level, 3);
	assert_int_equal(info.level_requested, 0);
	assert_int_equal(info.level_max, 3);
	assert_int_equal(info.threshold, XS_DEFAULT_THRESHOLD);
	assert_int_equal(info.batch, XS_DEFAULT_BATCH);
	assert_int_equal(info.budget_ns, XS_BUDGET_NONE); /* Lv3: no budget by default */
	assert_string_equal(info.backend, "sim");
	assert_int_equal(xs_queue_stats_get(e.q, &st), 0);
	assert_int_equal(st.submitted, 0);
	assert_int_equal(st.suspended, 0);

	assert_int_equal(xs_queue_create(e.hwq, &c, &q), 0);
	assert_int_equal(xs_queue_info_get(q, &info), 0);
	assert_int_equal(info.level, 2);
	assert_int_equal(info.level_requested, 2);
	assert_int_equal(info.threshold, 32);
	assert_int_equal(info.batch, 4);
	assert_int_equal(info.budget_ns, XS_BUDGET_NONE);
	assert_int_equal(xs_queue_destroy(q, 0), 0);
	env_fini(&e);
}

static void api_hints(void **state)
{
	static const struct {
		enum xs_hint hint;
		int64_t lo, hi;
	} range[] = {
		{ XS_HINT_PRIORITY, XS_PRIORITY_MIN, XS_PRIORITY_MAX },
		{ XS_HINT_SHARE, 0, XS_SHARE_MAX },
		{ XS_HINT_DEADLINE_US, 0, XS_TIME_HINT_MAX_US },
		{ XS_HINT_LAXITY_US, 0, XS_TIME_HINT_MAX_US },
	};
	int64_t v;
	struct env e;
	size_t i;

	(void)state;
	env_init(&e, "hint");
	env_queue(&e);
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		v = -7;
		assert_int_equal(xs_queue_get_hint(e.q, range[i].hint, &v), 0);
		assert_int_equal(v, 0);
		assert_int_equal(xs_queue_set_hint(e.q, range[i].hint, range[i].lo - 1), -ERANGE);
		assert_int_equal(xs_queue_set_hint(e.q, range[i].hint, range[i].hi + 1), -ERANGE);
		assert_int_equal(xs_queue_set_hint(e.q, range[i].hint, INT64_MIN), -ERANGE);
		assert_int_equal(xs_queue_set_hint(e.q, range[i].hint, INT64_MAX), -ERANGE);
		assert_int_equal(xs_queue_set_hint(e.q, range[i].hint, range[i].hi), 0);
		assert_int_equal(xs_queue_get_hint(e.q, range[i].hint, &v), 0);
		assert_int_equal(v, range[i].hi);
		assert_int_equal(xs_queue_set_hint(e.q, range[i].hint, range[i].lo), 0);
		assert_int_equal(xs_queue_get_hint(e.q, range[i].hint, &v), 0);
		assert_int_equal(v, range[i].lo);
	}
	/* Rejected values leave the hint as it was. */
	assert_int_equal(xs_queue_set_hint(e.q, XS_HINT_PRIORITY, 5), 0);
	assert_int_equal(xs_queue_set_hint(e.q, XS_HINT_PRIORITY, 101), -ERANGE);
	assert_int_equal(xs_queue_get_hint(e.q, XS_HINT_PRIORITY, &v), 0);
	assert_int_equal(v, 5);
	/* Unknown hints. */
	v = 99;
	assert_int_equal(xs_queue_set_hint(e.q, (enum xs_hint)0, 0), -EINVAL);
	assert_int_equal(xs_queue_set_hint(e.q, (enum xs_hint)5, 0), -EINVAL);
	assert_int_equal(xs_queue_set_hint(e.q, (enum xs_hint)-1, 0), -EINVAL);
	assert_int_equal(xs_queue_set_hint(e.q, (enum xs_hint)1000, 0), -EINVAL);
	assert_int_equal(xs_queue_get_hint(e.q, (enum xs_hint)0, &v), -EINVAL);
	assert_int_equal(xs_queue_get_hint(e.q, (enum xs_hint)5, &v), -EINVAL);
	assert_int_equal(xs_queue_get_hint(e.q, (enum xs_hint)-1, &v), -EINVAL);
	assert_int_equal(v, 99);
	env_fini(&e);
}

static void api_wait_unknown_seq(void **state)
{
	uint64_t seq;
	struct env e;

	(void)state;
	env_init(&e, "seq");
	env_queue(&e);
	assert_int_equal(xs_wait(e.q, 0), -EINVAL);
	assert_int_equal(xs_wait(e.q, 1), -EINVAL);
	assert_int_equal(xs_query(e.q, 0), -EINVAL);
	assert_int_equal(xs_query(e.q, 1), -EINVAL);
	assert_int_equal(xs_wait_all(e.q), 0);
	assert_int_equal(xs_submit(e.q, kernel(1000), &seq), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(xs_wait(e.q, 2), -EINVAL);
	assert_int_equal(xs_wait(e.q, UINT64_MAX), -EINVAL);
	assert_int_equal(xs_query(e.q, 2), -EINVAL);
	assert_int_equal(xs_wait(e.q, 1), 0);
	assert_int_equal(xs_query(e.q, 1), 0);
	assert_int_equal(xs_submit(e.q, kernel(1000), &seq), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(xs_wait(e.q, 2), 0);
	env_fini(&e);
}

static void api_suspend_resume_flags(void **state)
{
	xs_queue_stats st;
	struct env e;

	(void)state;
	env_init(&e, "susp");
	env_queue(&e);
	assert_int_equal(xs_suspend(e.q, 0x2), -EINVAL);
	assert_int_equal(xs_suspend(e.q, ~0u), -EINVAL);
	assert_int_equal(xs_queue_stats_get(e.q, &st), 0);
	assert_int_equal(st.suspended, 0);
	assert_int_equal(xs_resume(e.q), 0);
	assert_int_equal(xs_suspend(e.q, 0), 0);
	assert_int_equal(xs_suspend(e.q, XS_SUSPEND_SYNC), 0);
	assert_int_equal(xs_queue_stats_get(e.q, &st), 0);
	assert_int_equal(st.suspended, 1);
	assert_int_equal(xs_submit(e.q, kernel(1000), NULL), 0);
	assert_int_equal(xs_query(e.q, 1), -EBUSY);
	assert_int_equal(xs_resume(e.q), 0);
	assert_int_equal(xs_resume(e.q), 0);
	assert_int_equal(xs_wait_all(e.q), 0);
	assert_int_equal(xs_queue_stats_get(e.q, &st), 0);
	assert_int_equal(st.suspended, 0);
	assert_int_equal(st.completed, 1);
	/* Unknown destroy flags are refused and leave the queue usable. */
	assert_int_equal(xs_queue_destroy(e.q, 0x4), -EINVAL);
	assert_int_equal(xs_submit(e.q, kernel(1000), NULL), 0);
	assert_int_equal(xs_wait_all(e.q), 0);
	env_fini(&e);
}

static void api_strerror(void **state)
{
	static const int codes[] = {
		0, -EINVAL, -ENOMEM, -ENOSPC, -EBUSY, -EAGAIN, -ECANCELED,
		-ESHUTDOWN, -EOPNOTSUPP, -ERANGE, -EPROTO, -ENOENT, -EIO,
		-ETIMEDOUT, -ENAMETOOLONG,
	};
	const size_t n = sizeof(codes) / sizeof(codes[0]);
	const char *unknown = xs_strerror(-4095);
	size_t i, j;

	(void)state;
	assert_non_null(unknown);
	for (i = 0; i < n; i++) {
		const char *m = xs_strerror(codes[i]);

		assert_non_null(m);
		assert_true(strlen(m) > 0);
		if (!strcmp(m, unknown))
			fail_msg("code %d has the generic message", codes[i]);
		for (j = 0; j < i; j++)
			if (!strcmp(m, xs_strerror(codes[j])))
				fail_msg("codes %d and %d share \"%s\"", codes[i], codes[j], m);
	}
	assert_non_null(xs_strerror(-100000));
	assert_non_null(xs_strerror(INT_MAX));
}

/* Any int is accepted, including one whose negation overflows. */
static void api_strerror_int_min(void **state)
{
	const char *m;

	(void)state;
	m = xs_strerror(INT_MIN);
	assert_non_null(m);
	assert_string_equal(m, xs_strerror(-4095));
}

static void api_destroy_null(void **state)
{
	(void)state;
	assert_int_equal(xs_queue_destroy(NULL, 0), 0);
	assert_int_equal(xs_queue_destroy(NULL, XS_DESTROY_DISCARD), 0);
	xs_hwq_destroy(NULL);
	xs_cmd_destroy(NULL);
}

static void api_hwq_bad_device_name(void **state)
{
	static const char *const bad[] = {
		"", "a/b", "../x", ".hidden", "a b", "dev\n", "x*",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	xs_hwq *h = POISON;
	size_t i;

	(void)state;
	alarm(60);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (xs_sim_hwq_create(bad[i], &h) != -EINVAL)
			fail_msg("device name \"%s\" accepted", bad[i]);
		assert_ptr_equal(h, POISON);
	}
	alarm(0);
}

/* xs_sim_copy takes its source at creation; the copy lands at completion. */
static void api_copy_snapshots_source(void **state)
{
	unsigned char src[4096], dst[4096], expect[4096];
	xs_cmd *c;
	uint64_t seq;
	struct env e;
	size_t i;

	(void)state;
	env_init(&e, "copy");
	env_queue(&e);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 3);
	memcpy(expect, src, sizeof(src));
	memset(dst, 0, sizeof(dst));
	assert_int_equal(xs_suspend(e.q, 0), 0);
	assert_int_equal(xs_sim_copy(dst, src, sizeof(src), 0, &c), 0);
	memset(src, 0xee, sizeof(src));
	assert_int_equal(xs_submit(e.q, c, &seq), 0);
	/* Not run yet while suspended. */
	assert_int_equal(xs_query(e.q, seq), -EBUSY);
	assert_int_equal(dst[1], 0);
	assert_int_equal(xs_resume(e.q), 0);
	assert_int_equal(xs_wait(e.q, seq), 0);
	assert_memory_equal(dst, expect, sizeof(dst));
	env_fini(&e);
}

static void api_memset_and_event(void **state)
{
	unsigned char buf[1000];
	uint64_t ts = 0, before, after, seq;
	xs_cmd *c;
	struct env e;
	size_t i;

	(void)state;
	env_init(&e, "memset");
	env_queue(&e);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(xs_sim_memset(buf, 0xab, sizeof(buf), &c), 0);
	assert_int_equal(xs_submit(e.q, c, NULL), 0);
	before = clock_now_ns();
	assert_int_equal(xs_sim_event(&ts, &c), 0);
	assert_int_equal(xs_submit(e.q, c, &seq), 0);
	assert_int_equal(xs_wait(e.q, seq), 0);
	after = clock_now_ns();
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xab);
	assert_true(ts >= before && ts <= after);
	env_fini(&e);
}

/* Run-time window changes through the public API, checked via info. */
static void api_set_window(void **state)
{
	xs_queue_info info;
	struct env e;

	(void)state;
	env_init(&e, "window");
	env_queue(&e);
	assert_int_equal(xs_queue_set_window(e.q, 4, 2, 500000), 0);
	assert_int_equal(xs_queue_set_window(e.q, 0, 8, 0), -EINVAL);
	assert_int_equal(xs_queue_set_window(e.q, XS_MAX_THRESHOLD + 1, 0, 0), -EINVAL);
	assert_int_equal(xs_queue_set_window(e.q, 0, 0, -3), -EINVAL);
	assert_int_equal(xs_queue_info_get(e.q, &info), 0);
	assert_int_equal(info.threshold, 4);
	assert_int_equal(info.batch, 2);
	assert_int_equal(info.budget_ns, 500000);
	assert_int_equal(xs_queue_set_window(e.q, 0, 0, XS_BUDGET_NONE), 0);
	assert_int_equal(xs_queue_info_get(e.q, &info), 0);
	assert_int_equal(info.threshold, 4);
	assert_int_equal(info.budget_ns, XS_BUDGET_NONE);
	env_fini(&e);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(api_null_handles),
	cmocka_unit_test(api_cmd_bad_args),
	cmocka_unit_test(api_queue_config_invalid),
	cmocka_unit_test(api_queue_info_defaults),
	cmocka_unit_test(api_hints),
	cmocka_unit_test(api_wait_unknown_seq),
	cmocka_unit_test(api_suspend_resume_flags),
	cmocka_unit_test(api_strerror),
	cmocka_unit_test(api_strerror_int_min),
	cmocka_unit_test(api_destroy_null),
	cmocka_unit_test(api_hwq_bad_device_name),
	cmocka_unit_test(api_copy_snapshots_source),
	cmocka_unit_test(api_memset_and_event),
	cmocka_unit_test(api_set_window),
};

TU_MAIN(tests)
