/*
 * The shims' device-memory accounting (src/shim/common/shim_mem.h) as plain
 * functions, in processes of their own (the limit is read from the
 * environment once per process): a limit refuses exactly what would pass
 * it, also when threads race for the last bytes; a free gives back what
 * its handle holds, a handle recorded twice is counted once; managed
 * memory is never refused; the application's view under a limit; a
 * forked child counts from zero and its frees of the parent's handles give
 * nothing back.
 */
#include "test_util.h"

#include "shim/common/shim_mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs @fn in a child with XSCHED_MEMORY_LIMIT=@limit; its exit status 0 is a pass. */
static void in_child(const char *limit, void (*fn)(void))
{
	int st = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("XSCHED_SCHEDULER", "none", 1);
		if (limit)
			setenv("XSCHED_MEMORY_LIMIT", limit, 1);
		else
			unsetenv("XSCHED_MEMORY_LIMIT");
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("child failed: status 0x%x", st);
}

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);    \
			_exit(1);                                                  \
		}                                                                  \
	} while (0)

static struct shim_map map = SHIM_MAP_INIT;

static const void *key(uintptr_t i)
{
	return (const void *)(0x7f0000000000u + i * 0x1000u);
}

static void limit_exact_body(void)
{
	struct shim_mem_dev *d = shim_mem_device("t:0", NULL);
	uint64_t total = 1000, free = 900;

	CHECK(d && shim_mem_limit(d) == 100);
	CHECK(shim_mem_reserve(d, 60, SHIM_MEM_DEVICE, "t") == 0);
	shim_mem_commit(&map, key(1), d, 60, SHIM_MEM_DEVICE);
	CHECK(shim_mem_reserve(d, 41, SHIM_MEM_DEVICE, "t") == -ENOMEM);
	CHECK(shim_mem_reserve(d, 40, SHIM_MEM_DEVICE, "t") == 0);
	shim_mem_commit(&map, key(2), d, 40, SHIM_MEM_DEVICE);
	CHECK(shim_mem_reserve(d, 1, SHIM_MEM_DEVICE, "t") == -ENOMEM);
	CHECK(atomic_load(&d->c.refused) == 2 && atomic_load(&d->c.peak) == 100);
	/* Managed memory: apart, never refused. */
	CHECK(shim_mem_reserve(d, 1000, SHIM_MEM_MANAGED, "t") == 0);
	CHECK(atomic_load(&d->c.managed) == 1000);
	shim_mem_cancel(d, 1000, SHIM_MEM_MANAGED);
	/* The view: a device of the limit's size, nothing left. */
	shim_mem_view(d, &total, &free);
	CHECK(total == 100 && free == 0);
	CHECK(atomic_load(&d->c.total) == 1000);
	/* A free gives back what its handle holds; an unknown one nothing. */
	CHECK(shim_mem_release(&map, key(1)) == 60);
	CHECK(shim_mem_release(&map, key(1)) == 0);
	CHECK(atomic_load(&d->c.used) == 40);
	/* A handle given out again after a free we did not see: counted once. */
	CHECK(shim_mem_reserve(d, 30, SHIM_MEM_DEVICE, "t") == 0);
	shim_mem_commit(&map, key(2), d, 30, SHIM_MEM_DEVICE);
	CHECK(atomic_load(&d->c.used) == 30);
	CHECK(shim_mem_size(&map, key(2), NULL) == 30);
	/* A pitch the driver widened: counted as taken. */
	shim_mem_resize(d, 30, 50, SHIM_MEM_DEVICE);
	CHECK(atomic_load(&d->c.used) == 50);
	total = 1000;
	free = 900;
	shim_mem_view(d, &total, &free);
	CHECK(total == 100 && free == 50);
	/* One record per device name. */
	CHECK(shim_mem_device("t:0", NULL) == d && shim_mem_device("t:1", NULL) != d);
}

static void mem_limit_exact(void **state)
{
	(void)state;
	in_child("100", limit_exact_body);
}

static struct shim_mem_dev *race_dev;
static _Atomic uint64_t race_got;

static void *race_thread(void *arg)
{
	(void)arg;
	while (shim_mem_reserve(race_dev, 7, SHIM_MEM_DEVICE, "race") == 0)
		atomic_fetch_add(&race_got, 7);
	return NULL;
}

static void race_body(void)
{
	pthread_t t[4];

	race_dev = shim_mem_device("race:0", NULL);
	CHECK(race_dev);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, race_thread, NULL) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* 1 MiB / 7: every thread stopped at the limit, none passed it. */
	CHECK(atomic_load(&race_got) == (1048576 / 7) * 7);
	CHECK(atomic_load(&race_dev->c.used) == atomic_load(&race_got));
}

static void mem_limit_race(void **state)
{
	(void)state;
	in_child("1M", race_body);
}

static void fork_body(void)
{
	struct shim_mem_dev *d = shim_mem_device("f:0", NULL);
	int st = 0;
	pid_t pid;

	CHECK(shim_mem_reserve(d, 80, SHIM_MEM_DEVICE, "t") == 0);
	shim_mem_commit(&map, key(7), d, 80, SHIM_MEM_DEVICE);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct shim_mem_dev *c = shim_mem_device("f:0", NULL);

		/* The child holds nothing of its parent's, under its own limit. */
		CHECK(c && atomic_load(&c->c.used) == 0 && shim_mem_limit(c) == 100);
		CHECK(shim_mem_reserve(c, 100, SHIM_MEM_DEVICE, "t") == 0);
		CHECK(shim_mem_release(&map, key(7)) == 0);
		CHECK(atomic_load(&c->c.used) == 100);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(atomic_load(&d->c.used) == 80);
	CHECK(shim_mem_release(&map, key(7)) == 80);
}

static void mem_fork_child_from_zero(void **state)
{
	(void)state;
	in_child("100", fork_body);
}

static void unlimited_body(void)
{
	struct shim_mem_dev *d = shim_mem_device("u:0", NULL);
	uint64_t total = 1000, free = 900;

	CHECK(shim_mem_limit(d) == 0);
	CHECK(shim_mem_reserve(d, 1ull << 40, SHIM_MEM_DEVICE, "t") == 0);
	shim_mem_view(d, &total, &free);
	CHECK(total == 1000 && free == 900);
}

static void mem_no_limit_passes(void **state)
{
	(void)state;
	in_child(NULL, unlimited_body);
	in_child("lots", unlimited_body);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(mem_limit_exact),
	cmocka_unit_test(mem_limit_race),
	cmocka_unit_test(mem_fork_child_from_zero),
	cmocka_unit_test(mem_no_limit_passes),
};

TU_MAIN(tests)
