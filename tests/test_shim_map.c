/*
 * The shims' handle -> record map (src/shim/common/shim_map.h) as plain
 * functions: lookups find exactly what was inserted, also among handles
 * that share a bucket; insert replaces a record left under the same key
 * and hands it back, add keeps the first and hands it back; remove takes
 * out only its key; iteration visits every record once and stops when
 * told, also after removals emptied buckets; and concurrent lookups see a record either whole or not at all
 * while other threads insert and remove (run under TSan in CI).
 */
#include "test_util.h"

#include "shim/common/shim_map.h"

#include <pthread.h>
#include <stdlib.h>

struct rec {
	struct shim_map_node node;
	int id;
};

/* Page-aligned, like the handles drivers give: 600 of them fill the 256
 * buckets two or three deep. */
static const void *handle(uintptr_t i)
{
	return (const void *)(0x7f0000000000u + i * 0x1000u);
}

static void map_find_insert_remove(void **state)
{
	static struct shim_map m = SHIM_MAP_INIT;
	struct rec r[600];

	(void)state;
	assert_null(shim_map_find(&m, handle(1)));
	for (int i = 0; i < 600; i++) {
		r[i].id = i;
		assert_null(shim_map_insert(&m, &r[i].node, handle((uintptr_t)i)));
	}
	for (int i = 0; i < 600; i++) {
		struct rec *f = (struct rec *)shim_map_find(&m, handle((uintptr_t)i));

		assert_non_null(f);
		assert_int_equal(f->id, i);
		assert_ptr_equal(f->node.key, handle((uintptr_t)i));
	}
	assert_null(shim_map_find(&m, handle(600)));
	assert_ptr_equal(shim_map_remove(&m, handle(17)), &r[17].node);
	assert_null(shim_map_remove(&m, handle(17)));
	assert_null(shim_map_find(&m, handle(17)));
	for (int i = 0; i < 600; i++)
		if (i != 17)
			assert_ptr_equal(shim_map_find(&m, handle((uintptr_t)i)), &r[i].node);
	for (int i = 0; i < 600; i++)
		shim_map_remove(&m, handle((uintptr_t)i));
	for (int i = 0; i < 600; i++)
		assert_null(shim_map_find(&m, handle((uintptr_t)i)));
}

static void map_insert_replaces_add_keeps(void **state)
{
	static struct shim_map m = SHIM_MAP_INIT;
	struct rec a = { .id = 1 }, b = { .id = 2 }, c = { .id = 3 };

	(void)state;
	assert_null(shim_map_insert(&m, &a.node, handle(5)));
	/* A reused handle: the new record replaces the old, which is returned. */
	assert_ptr_equal(shim_map_insert(&m, &b.node, handle(5)), &a.node);
	assert_ptr_equal(shim_map_find(&m, handle(5)), &b.node);
	/* Two threads racing to record one handle: the first stays. */
	assert_ptr_equal(shim_map_add(&m, &c.node, handle(5)), &b.node);
	assert_ptr_equal(shim_map_find(&m, handle(5)), &b.node);
	assert_ptr_equal(shim_map_remove(&m, handle(5)), &b.node);
	assert_null(shim_map_remove(&m, handle(5)));
	assert_null(shim_map_add(&m, &c.node, handle(5)));
	assert_ptr_equal(shim_map_find(&m, handle(5)), &c.node);
	pthread_rwlock_rdlock(&m.lock);
	assert_ptr_equal(shim_map_find_locked(&m, handle(5)), &c.node);
	assert_null(shim_map_find_locked(&m, handle(6)));
	pthread_rwlock_unlock(&m.lock);
}

struct visit {
	int seen[64];
	int calls, stop_after;
};

static bool count_visit(struct shim_map_node *n, void *arg)
{
	struct visit *v = arg;

	v->seen[((struct rec *)n)->id]++;
	return ++v->calls != v->stop_after;
}

static void map_each_visits_all_and_stops(void **state)
{
	static struct shim_map m = SHIM_MAP_INIT;
	struct rec r[64];
	struct visit v = { .stop_after = -1 };

	(void)state;
	shim_map_each(&m, count_visit, &v);
	assert_int_equal(v.calls, 0);
	for (int i = 0; i < 64; i++) {
		r[i].id = i;
		shim_map_insert(&m, &r[i].node, handle((uintptr_t)i * 256));
	}
	shim_map_each(&m, count_visit, &v);
	assert_int_equal(v.calls, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(v.seen[i], 1);
	v = (struct visit){ .stop_after = 10 };
	shim_map_each(&m, count_visit, &v);
	assert_int_equal(v.calls, 10);
}

/*
 * Iteration skips empty buckets (shim_map.used): after removals that empty
 * some buckets and thin others, and a replace, it still visits exactly the
 * records left; none once all are gone, and those put back.
 */
static void map_each_after_removals(void **state)
{
	enum { N = 600 };
	static struct shim_map m = SHIM_MAP_INIT;
	static struct rec r[N], again;
	struct visit v = { .stop_after = -1 };
	int left = 0;

	(void)state;
	for (int i = 0; i < N; i++) {
		r[i].id = i % 64;
		shim_map_insert(&m, &r[i].node, handle((uintptr_t)i));
	}
	for (int i = 0; i < N; i++)
		if (i % 3 && shim_map_remove(&m, handle((uintptr_t)i)) != &r[i].node)
			fail_msg("record %d not removed", i);
	for (int i = 0; i < N; i += 3)
		left++;
	again.id = 0;
	assert_ptr_equal(shim_map_insert(&m, &again.node, handle(0)), &r[0].node);
	shim_map_each(&m, count_visit, &v);
	assert_int_equal(v.calls, left);
	for (int i = 0; i < N; i += 3)
		shim_map_remove(&m, handle((uintptr_t)i));
	v = (struct visit){ .stop_after = -1 };
	shim_map_each(&m, count_visit, &v);
	assert_int_equal(v.calls, 0);
	for (int i = 0; i < 5; i++)
		shim_map_insert(&m, &r[i].node, handle((uintptr_t)i * 97));
	v = (struct visit){ .stop_after = -1 };
	shim_map_each(&m, count_visit, &v);
	assert_int_equal(v.calls, 5);
}

#define RACE_KEYS 64
#define RACE_ROUNDS 2000

static struct shim_map race_map = SHIM_MAP_INIT;
static struct rec race_rec[RACE_KEYS];

/* Takes the odd keys out and puts them back; counts what went wrong (cmocka
 * asserts only on the main thread). */
static void *race_writer(void *arg)
{
	long *wrong = arg;

	for (int round = 0; round < RACE_ROUNDS; round++)
		for (int i = 1; i < RACE_KEYS; i += 2) {
			if (shim_map_remove(&race_map, handle((uintptr_t)i)) != &race_rec[i].node)
				(*wrong)++;
			if (shim_map_insert(&race_map, &race_rec[i].node, handle((uintptr_t)i)))
				(*wrong)++;
		}
	return NULL;
}

static void map_lookups_during_changes(void **state)
{
	pthread_t t;
	long found_odd = 0, wrong = 0;

	(void)state;
	for (int i = 0; i < RACE_KEYS; i++) {
		race_rec[i].id = i;
		shim_map_insert(&race_map, &race_rec[i].node, handle((uintptr_t)i));
	}
	assert_int_equal(pthread_create(&t, NULL, race_writer, &wrong), 0);
	for (int round = 0; round < RACE_ROUNDS; round++)
		for (int i = 0; i < RACE_KEYS; i++) {
			struct rec *f = (struct rec *)shim_map_find(&race_map,
								    handle((uintptr_t)i));

			/* Even keys never leave; odd ones come back whole. */
			if (i % 2 == 0)
				assert_ptr_equal(f, &race_rec[i]);
			else if (f) {
				assert_int_equal(f->id, i);
				found_odd++;
			}
		}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(wrong, 0);
	for (int i = 0; i < RACE_KEYS; i++)
		assert_ptr_equal(shim_map_find(&race_map, handle((uintptr_t)i)), &race_rec[i]);
	print_message("odd keys found during the changes: %ld\n", found_odd);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(map_find_insert_remove),
	cmocka_unit_test(map_insert_replaces_add_keeps),
	cmocka_unit_test(map_each_visits_all_and_stops),
	cmocka_unit_test(map_each_after_removals),
	cmocka_unit_test(map_lookups_during_changes),
};

TU_MAIN(tests)
