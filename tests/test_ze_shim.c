/*
 * The Level Zero shim, end to end, on the simulated Level Zero driver
 * (loaded by the real loader through ZE_ENABLE_ALT_DRIVERS): unmodified
 * programs (tests/ze/) run natively and under the shim and must print the
 * same lines, sliced or not; the shim is really in between (it made
 * XQueues, dlopen by another name and lookups through the loader's handle
 * lead to it); XSCHED_DISABLE passes through; XSCHED_ZE_LIB chooses the
 * loader; zero timeouts never block on a flooded queue; a high-priority
 * list that waits on a low-priority one does not deadlock, with the
 * in-process policy and with xschedd; device memory is counted and held
 * to XSCHED_MEMORY_LIMIT.
 */
#include "test_util.h"
#include "it_util.h"

#define ZE_RUN_MS 60000

/* One child's output and exit status. */
struct ze_out {
	char *out, *err;
	int status;
};

static const char *driver_var(void)
{
	return "ZE_ENABLE_ALT_DRIVERS=" XS_SIM_ZE_PATH;
}

/* The preload list of the shim (sanitizer runtime first, when built so). */
static const char *shim_var(void)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s%s%s", XS_SAN_RT, XS_SAN_RT[0] ? " " : "",
		 XS_SHIM_PATH);
	return buf;
}

/* LeakSanitizer cannot scan the dynamic TLS of the driver's live thread. */
static const char *lsan_var(void)
{
	return XS_SAN_RT[0] ? "LSAN_OPTIONS=use_tls=0:suppressions=" XS_ZE_LSAN_SUPP :
			      "XS_UNUSED=";
}

/* Everything @in holds, as a string; closes @in. */
static char *slurp(FILE *in)
{
	char chunk[4096], *s = NULL;
	size_t len = 0, n;
	FILE *out = open_memstream(&s, &len);

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		fwrite(chunk, 1, n, out);
	fclose(out);
	fclose(in);
	return s;
}

/* Runs @argv with @vars over our environment and waits for it. */
static struct ze_out run(struct it_env *e, const char *const *argv, const char *const *vars)
{
	char path[IT_PATH + 16];
	struct ze_out r = { 0 };
	pid_t pid;
	int err, i;

	snprintf(path, sizeof(path), "%s/stderr", e->dir);
	err = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(err >= 0);
	pid = it_spawn(e, argv, vars, true, err);
	close(err);
	i = it_kid_index(e, pid);
	/* The pipe ends when the child exits (its descendants hold no copy). */
	r.out = slurp(fdopen(e->kid_out[i], "r"));
	e->kid_out[i] = -1;
	if (it_wait_pid(pid, ZE_RUN_MS, &r.status) < 0)
		fail_msg("%s still running", argv[0]);
	e->kid[i] = 0;
	r.err = slurp(fopen(path, "r"));
	unlink(path);
	return r;
}

/* As run(), for a program that must succeed; its output. */
static char *run_ok(struct it_env *e, const char *const *argv, const char *const *vars)
{
	struct ze_out r = run(e, argv, vars);

	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
		print_error("%s failed (status 0x%x): %s\n%s\n", argv[0], r.status, r.out, r.err);
		fail();
	}
	free(r.err);
	return r.out;
}

static char *native(struct it_env *e, const char *const *argv)
{
	const char *vars[] = { driver_var(), lsan_var(), NULL };

	return run_ok(e, argv, vars);
}

/* Under the shim with the in-process policy, plus @extra (may be NULL). */
static char *shimmed(struct it_env *e, const char *const *argv, const char *extra)
{
	const char *vars[] = { driver_var(), lsan_var(), shim_var(), "XSCHED_SCHEDULER=local",
			       extra, NULL };

	return run_ok(e, argv, vars);
}

/* The number after "shim active queues=", or -1 for "shim absent". */
static int queues_of(const char *out)
{
	const char *p = strstr(out, "shim active queues=");

	if (!p) {
		assert_non_null(strstr(out, "shim absent"));
		return -1;
	}
	return atoi(p + strlen("shim active queues="));
}

/* Every phase of ze_prog, the same line for line, with and without slicing. */
static void ze_shim_matches_native(void **state)
{
	struct it_env *e = *state;
	char *want = native(e, IT_ARGS(XS_ZE_PROG));
	char *got = shimmed(e, IT_ARGS(XS_ZE_PROG), NULL);
	char *sliced = shimmed(e, IT_ARGS(XS_ZE_PROG), "XSCHED_ZE_SLICE=2");

	assert_non_null(strstr(want, "threads: 4 x 25 executions"));
	assert_string_equal(want, got);
	assert_string_equal(want, sliced);
	free(want);
	free(got);
	free(sliced);
	e->ok = true;
}

/* The shim's own phases: the same lines natively, except those about the shim. */
static void ze_shim_phases_match_native(void **state)
{
	struct it_env *e = *state;
	const char *const *argv = IT_ARGS(XS_ZE_SHIM_PROG, "flood", "deps", "regular", "midsignal");
	char *want = native(e, argv);
	char *got = shimmed(e, argv, NULL);
	char *sliced = shimmed(e, argv, "XSCHED_ZE_SLICE=3");
	char *one = shimmed(e, argv, "XSCHED_ZE_SLICE=1");

	/* Zero timeouts on a list holding work it has not launched. */
	assert_non_null(strstr(got, "flood: query = ZE_RESULT_NOT_READY, "
				    "sync 0 = ZE_RESULT_NOT_READY"));
	assert_non_null(strstr(got, "flood: 40 buffers with their own values"));
	assert_non_null(strstr(got, "regular: again buf=40"));
	assert_string_equal(want, got);
	assert_string_equal(want, sliced);
	assert_string_equal(want, one);
	free(want);
	free(got);
	free(sliced);
	free(one);
	e->ok = true;
}

static void ze_shim_makes_queues(void **state)
{
	struct it_env *e = *state;
	char *want = native(e, IT_ARGS(XS_ZE_SHIM_PROG, "queues"));
	char *got = shimmed(e, IT_ARGS(XS_ZE_SHIM_PROG, "queues"), NULL);

	assert_int_equal(queues_of(want), -1);
	/* A command queue and an immediate list. */
	assert_int_equal(queues_of(got), 2);
	free(want);
	free(got);
	e->ok = true;
}

static void ze_shim_disable_is_pass_through(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { driver_var(), lsan_var(), shim_var(), "XSCHED_DISABLE=1", NULL };
	char *want = native(e, IT_ARGS(XS_ZE_PROG, "order", "immediate", "events", "fault"));
	char *got = run_ok(e, IT_ARGS(XS_ZE_PROG, "order", "immediate", "events", "fault"), vars);
	char *queues = run_ok(e, IT_ARGS(XS_ZE_SHIM_PROG, "queues"), vars);

	assert_string_equal(want, got);
	/* The shim is there, and made no queue. */
	assert_int_equal(queues_of(queues), 0);
	free(want);
	free(got);
	free(queues);
	e->ok = true;
}

/* dlopen("libze_loader.so") and the loader's own file both lead to the shim. */
static void ze_shim_dlopen_and_dlsym(void **state)
{
	struct it_env *e = *state;
	const char *const *argv = IT_ARGS(XS_ZE_SHIM_PROG, "dlopen");
	const char *file = "XS_ZE_LOADER_FILE=" XS_ZE_LOADER_FILE;
	const char *nvars[] = { driver_var(), lsan_var(), file, NULL };
	char *want = run_ok(e, argv, nvars);
	char *got = shimmed(e, argv, file);

	assert_non_null(strstr(want, "shim dlopen: name loader, ze_test_queues absent"));
	assert_non_null(strstr(want, "shim dlopen: loader file loader"));
	assert_non_null(strstr(got, "shim dlopen: name shim, ze_test_queues found"));
	assert_non_null(strstr(got, "shim dlopen: loader file shim"));
	free(want);
	free(got);
	e->ok = true;
}

/*
 * XSCHED_ZE_LIB names the loader (honoured, or failing as without one);
 * the shim first on LD_LIBRARY_PATH under the loader's name works too.
 */
static void ze_shim_loader_choice(void **state)
{
	struct it_env *e = *state;
	const char *const *argv = IT_ARGS(XS_ZE_PROG, "order");
	char dir[IT_PATH + 16], link[IT_PATH + 40], path_var[IT_PATH + 40];
	const char *missing[] = { driver_var(), lsan_var(), shim_var(),
				  "XSCHED_ZE_LIB=/nonexistent/libze_loader.so.1", NULL };
	const char *on_path[] = { driver_var(), lsan_var(), path_var, "XSCHED_SCHEDULER=local",
				  XS_SAN_RT[0] ? "LD_PRELOAD=" XS_SAN_RT : "XS_UNUSED=", NULL };
	char *want = native(e, argv);
	char *got = shimmed(e, argv, "XSCHED_ZE_LIB=" XS_ZE_LOADER_FILE);
	struct ze_out none = run(e, argv, missing);

	assert_string_equal(want, got);
	assert_true(WIFEXITED(none.status) && WEXITSTATUS(none.status) == 1);
	assert_non_null(strstr(none.err, "ZE_RESULT_ERROR_UNINITIALIZED"));
	free(got);
	free(none.out);
	free(none.err);
	snprintf(dir, sizeof(dir), "%s/lib", e->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/libze_loader.so.1", dir);
	assert_int_equal(symlink(XS_SHIM_PATH, link), 0);
	snprintf(path_var, sizeof(path_var), "LD_LIBRARY_PATH=%s", dir);
	got = run_ok(e, argv, on_path);
	assert_string_equal(want, got);
	free(got);
	got = run_ok(e, IT_ARGS(XS_ZE_SHIM_PROG, "queues"), on_path);
	assert_int_equal(queues_of(got), 2);
	unlink(link);
	rmdir(dir);
	free(want);
	free(got);
	e->ok = true;
}

/*
 * A high-priority list waits on an event whose signal a low-priority list
 * holds behind its flood: the wait is a gate the policy sees, the low
 * list inherits the priority, nothing deadlocks; in process and through
 * xschedd.
 */
static void ze_shim_cross_queue_wait_no_deadlock(void **state)
{
	struct it_env *e = *state;
	const char *const *argv = IT_ARGS(XS_ZE_SHIM_PROG, "deps");
	const char *global[] = { driver_var(), lsan_var(), shim_var(), NULL };
	char *want = native(e, argv);
	char *local = shimmed(e, argv, NULL);
	char *daemon;

	assert_non_null(strstr(want, "deps: high waited for low, buf=5"));
	assert_string_equal(want, local);
	it_daemon_start(e, NULL);
	daemon = run_ok(e, argv, global);
	assert_string_equal(want, daemon);
	it_daemon_check(e);
	free(want);
	free(local);
	free(daemon);
	e->ok = true;
}

/*
 * Device memory (ze_shim_prog memory): without a limit, as natively; with
 * XSCHED_MEMORY_LIMIT the memory properties show it, device allocations
 * stop at it (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, said on stderr),
 * images and physical memory are refused there before the driver, shared
 * allocations pass, frees give back; XSCHED_DISABLE=1 ignores the limit.
 */
static void ze_shim_memory_limit(void **state)
{
	struct it_env *e = *state;
	const char *const *argv = IT_ARGS(XS_ZE_SHIM_PROG, "memory");
	const char *limited[] = { driver_var(), lsan_var(), shim_var(), "XSCHED_SCHEDULER=local",
				  "XSCHED_MEMORY_LIMIT=64M", "XS_MEM_LIMIT_MIB=64", NULL };
	const char *off[] = { driver_var(), lsan_var(), shim_var(), "XSCHED_DISABLE=1",
			      "XSCHED_MEMORY_LIMIT=64M", NULL };
	char *want = native(e, argv);
	char *got = shimmed(e, argv, NULL);
	struct ze_out lim = run(e, argv, limited), dis = run(e, argv, off);

	assert_non_null(strstr(want, "memory: images and physical memory counted"));
	assert_string_equal(want, got);
	if (!WIFEXITED(lim.status) || WEXITSTATUS(lim.status) != 0)
		fail_msg("under XSCHED_MEMORY_LIMIT=64M: status 0x%x\n%s\n%s", lim.status, lim.out,
			 lim.err);
	assert_string_equal(want, lim.out);
	assert_non_null(strstr(lim.err, "zeMemAllocDevice of 1 B on ze:"));
	assert_non_null(strstr(lim.err, "zeImageCreate of 16 MiB on ze:"));
	assert_non_null(strstr(lim.err, "zePhysicalMemCreate of 16 MiB on ze:"));
	assert_null(strstr(lim.err, "zeMemAllocShared"));
	assert_true(WIFEXITED(dis.status) && WEXITSTATUS(dis.status) == 0);
	assert_string_equal(want, dis.out);
	assert_null(strstr(dis.err, "refused"));
	free(want);
	free(got);
	free(lim.out);
	free(lim.err);
	free(dis.out);
	free(dis.err);
	e->ok = true;
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(ze_shim_matches_native, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_phases_match_native, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_makes_queues, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_disable_is_pass_through, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_dlopen_and_dlsym, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_loader_choice, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_cross_queue_wait_no_deadlock, it_setup,
					it_teardown),
	cmocka_unit_test_setup_teardown(ze_shim_memory_limit, it_setup, it_teardown),
};

TU_MAIN(tests)
