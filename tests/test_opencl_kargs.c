/*
 * The kernel argument records the OpenCL and Level Zero shims replay onto
 * their private kernels for buffered launches (src/shim/common/shim_kargs.h),
 * as plain functions: values of every size and NULL values are kept
 * exactly, a snapshot is independent of later settings, an argument never
 * set fails a snapshot when the count is known (the driver's
 * CL_INVALID_KERNEL_ARGS) and is left out when it is not, copies (an
 * application's clone) are deep, and a value that could not be recorded
 * fails every later snapshot instead of replaying something else.
 */
#include "test_util.h"

#include "shim/common/shim_kargs.h"

#include <errno.h>

#define MAX_SEEN 8

/* What shim_kargs_apply() handed to the callback. */
struct seen {
	int n;
	uint32_t idx[MAX_SEEN];
	size_t size[MAX_SEEN];
	unsigned char bytes[MAX_SEEN][128];
	bool null[MAX_SEEN];
	uint8_t tag[MAX_SEEN];
	int stop_at;                    /* answer non-zero at this call (-1: never) */
};

static int record(void *ctx, uint32_t idx, size_t size, const void *value, uint8_t tag)
{
	struct seen *s = ctx;
	int i = s->n++;

	assert_true(i < MAX_SEEN);
	s->idx[i] = idx;
	s->size[i] = size;
	s->null[i] = value == NULL;
	s->tag[i] = tag;
	if (value)
		memcpy(s->bytes[i], value, size < 128 ? size : 128);
	return i == s->stop_at ? 99 : 0;
}

static struct seen replay(const struct shim_kargs_snap *snap, int stop_at, int want_rc)
{
	struct seen s = { .stop_at = stop_at };

	assert_int_equal(shim_kargs_apply(snap, record, &s), want_rc);
	return s;
}

/* Scalars of 1 to 128 bytes, a NULL value with its size, tags; in index order. */
static void kargs_values_replayed_exactly(void **state)
{
	struct shim_kargs a;
	unsigned char big[128];
	uint8_t c = 0x5a;
	uint64_t l = 0x0123456789abcdefull;
	struct shim_kargs_snap *snap;
	struct seen s;
	int err = 0;

	(void)state;
	for (int i = 0; i < 128; i++)
		big[i] = (unsigned char)(i * 7 + 1);
	shim_kargs_init(&a, 4, true);
	/* Set out of order: replay is by index. */
	assert_int_equal(shim_kargs_set(&a, 3, sizeof(big), big, 0), 0);
	assert_int_equal(shim_kargs_set(&a, 0, sizeof(c), &c, 0), 0);
	assert_int_equal(shim_kargs_set(&a, 2, 4096, NULL, 0), 0);
	assert_int_equal(shim_kargs_set(&a, 1, sizeof(l), &l, 1), 0);
	assert_true(shim_kargs_complete(&a));
	snap = shim_kargs_snapshot(&a, &err);
	assert_non_null(snap);
	s = replay(snap, -1, 0);
	assert_int_equal(s.n, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(s.idx[i], i);
	assert_int_equal(s.size[0], 1);
	assert_int_equal(s.bytes[0][0], 0x5a);
	assert_int_equal(s.size[1], 8);
	assert_memory_equal(s.bytes[1], &l, 8);
	assert_int_equal(s.tag[1], 1);
	assert_int_equal(s.tag[0], 0);
	assert_true(s.null[2]);
	assert_int_equal(s.size[2], 4096);
	assert_false(s.null[3]);
	assert_int_equal(s.size[3], 128);
	assert_memory_equal(s.bytes[3], big, 128);
	free(snap);
	shim_kargs_fini(&a);
}

/* Settings after a snapshot (a buffered launch) never reach it. */
static void kargs_snapshot_independent_of_later_sets(void **state)
{
	struct shim_kargs a;
	uint32_t v = 1, w = 2;
	struct shim_kargs_snap *first, *second;
	struct seen s;
	int err = 0;

	(void)state;
	shim_kargs_init(&a, 2, true);
	assert_int_equal(shim_kargs_set(&a, 0, sizeof(v), &v, 0), 0);
	assert_int_equal(shim_kargs_set(&a, 1, 16, NULL, 0), 0);
	first = shim_kargs_snapshot(&a, &err);
	assert_non_null(first);
	v = 7;          /* the caller's memory changes: the record has its copy */
	/* Argument 1 turns from local memory into a value, argument 0 changes. */
	assert_int_equal(shim_kargs_set(&a, 0, sizeof(w), &w, 0), 0);
	assert_int_equal(shim_kargs_set(&a, 1, sizeof(w), &w, 1), 0);
	second = shim_kargs_snapshot(&a, &err);
	assert_non_null(second);
	s = replay(first, -1, 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(*(uint32_t *)s.bytes[0], 1);
	assert_true(s.null[1]);
	assert_int_equal(s.size[1], 16);
	s = replay(second, -1, 0);
	assert_int_equal(*(uint32_t *)s.bytes[0], 2);
	assert_false(s.null[1]);
	assert_int_equal(s.tag[1], 1);
	assert_int_equal(*(uint32_t *)s.bytes[1], 2);
	free(first);
	free(second);
	shim_kargs_fini(&a);
}

/* A known count: a gap fails (-ENOENT); unknown: gaps are skipped. */
static void kargs_missing_argument(void **state)
{
	struct shim_kargs a;
	uint32_t v = 3;
	struct shim_kargs_snap *snap;
	struct seen s;
	int err = 0;

	(void)state;
	shim_kargs_init(&a, 3, true);
	assert_int_equal(shim_kargs_set(&a, 0, sizeof(v), &v, 0), 0);
	assert_int_equal(shim_kargs_set(&a, 2, sizeof(v), &v, 0), 0);
	assert_false(shim_kargs_complete(&a));
	assert_null(shim_kargs_snapshot(&a, &err));
	assert_int_equal(err, -ENOENT);
	shim_kargs_fini(&a);

	/* A kernel with no argument at all snapshots to nothing. */
	shim_kargs_init(&a, 0, true);
	snap = shim_kargs_snapshot(&a, &err);
	assert_non_null(snap);
	s = replay(snap, -1, 0);
	assert_int_equal(s.n, 0);
	free(snap);
	shim_kargs_fini(&a);

	shim_kargs_init(&a, 0, false);
	assert_int_equal(shim_kargs_set(&a, 5, sizeof(v), &v, 0), 0);
	assert_int_equal(a.nargs, 6);
	snap = shim_kargs_snapshot(&a, &err);
	assert_non_null(snap);
	s = replay(snap, -1, 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.idx[0], 5);
	free(snap);
	shim_kargs_fini(&a);
}

/* Sums the values and counts the arguments of a replay. */
static int sum_values(void *ctx, uint32_t idx, size_t size, const void *value, uint8_t tag)
{
	uint64_t *acc = ctx;
	uint32_t v;

	(void)tag;
	assert_int_equal(size, sizeof(v));
	memcpy(&v, value, sizeof(v));
	assert_int_equal(v, idx);
	acc[0] += v;
	acc[1]++;
	return 0;
}

/* Many arguments (past any bit mask), a copy that stays apart from its source. */
static void kargs_many_and_copy(void **state)
{
	struct shim_kargs a, b;
	struct shim_kargs_snap *snap;
	uint64_t acc[2] = { 0, 0 };
	int err = 0;

	(void)state;
	shim_kargs_init(&a, 200, true);
	for (uint32_t i = 0; i < 200; i++)
		assert_int_equal(shim_kargs_set(&a, i, sizeof(i), &i, 0), 0);
	shim_kargs_init(&b, 0, false);
	assert_int_equal(shim_kargs_copy(&b, &a), 0);
	assert_int_equal(b.nargs, 200);
	assert_true(b.nargs_known);
	/* The source changes after the copy. */
	for (uint32_t i = 0; i < 200; i++) {
		uint32_t z = 1000 + i;

		assert_int_equal(shim_kargs_set(&a, i, sizeof(z), &z, 0), 0);
	}
	snap = shim_kargs_snapshot(&b, &err);
	assert_non_null(snap);
	assert_int_equal(shim_kargs_apply(snap, sum_values, acc), 0);
	assert_int_equal(acc[1], 200);
	assert_int_equal(acc[0], 199 * 200 / 2);
	free(snap);
	shim_kargs_fini(&a);
	shim_kargs_fini(&b);
}

/* Past the limit or out of memory: lost, and no snapshot from then on. */
static void kargs_lost_fails_snapshots(void **state)
{
	struct shim_kargs a;
	uint32_t v = 1;
	int err = 0;

	(void)state;
	shim_kargs_init(&a, 1, true);
	assert_int_equal(shim_kargs_set(&a, 0, sizeof(v), &v, 0), 0);
	assert_int_equal(shim_kargs_set(&a, SHIM_KARGS_MAX, sizeof(v), &v, 0), -E2BIG);
	assert_true(a.lost);
	assert_false(shim_kargs_complete(&a));
	assert_null(shim_kargs_snapshot(&a, &err));
	assert_int_equal(err, -EIO);
	shim_kargs_fini(&a);
}

/* The callback's first non-zero answer ends the replay and is returned. */
static void kargs_apply_stops_at_error(void **state)
{
	struct shim_kargs a;
	struct shim_kargs_snap *snap;
	struct seen s;
	int err = 0;

	(void)state;
	shim_kargs_init(&a, 4, true);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(shim_kargs_set(&a, i, sizeof(i), &i, 0), 0);
	snap = shim_kargs_snapshot(&a, &err);
	assert_non_null(snap);
	s = replay(snap, 1, 99);
	assert_int_equal(s.n, 2);
	free(snap);
	shim_kargs_fini(&a);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(kargs_values_replayed_exactly),
	cmocka_unit_test(kargs_snapshot_independent_of_later_sets),
	cmocka_unit_test(kargs_missing_argument),
	cmocka_unit_test(kargs_many_and_copy),
	cmocka_unit_test(kargs_lost_fails_snapshots),
	cmocka_unit_test(kargs_apply_stops_at_error),
};

TU_MAIN(tests)
