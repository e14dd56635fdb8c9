/*
 * The OpenCL shim, end to end, on PoCL: unmodified OpenCL programs
 * (tests/opencl/) run natively and under the shim and must print the same
 * lines — every cl_prog phase in a process of its own (some also with the
 * guardian off), then all of them in one; the ways an application reaches the loader (linked, preloaded shim,
 * the shim first on LD_LIBRARY_PATH, dlopen of libOpenCL.so.1 or of
 * libOpenCL.so) must all end up in the shim, which says so through its
 * cl_test_queues() diagnostic; XSCHED_DISABLE passes through with no
 * queue; kernels compiled under the shim (PoCL runs the linker as a child
 * that inherits LD_PRELOAD) build as natively; and the same programs run
 * through xschedd, also at low priority under a busy high-priority
 * process, where their queues are suspended and their commands held back.
 *
 * PoCL's kernel cache goes to the build tree (warm after the first native
 * run, which keeps the cases fast), except in the cold-cache case.
 */
#include "test_util.h"
#include "it_util.h"
#include "cl_test_util.h"

#include <errno.h>
#include <ftw.h>

#define CL_RUN_MS 30000
#define CL_MAX_PHASES 64
#define CL_MAX_DIFFS 12         /* differing lines shown per comparison */

static struct run_out run(struct it_env *e, const char *const *argv, const char *const *vars)
{
	return run_finish(e, run_start(e, argv, vars), CL_RUN_MS);
}

/* Runs @argv and requires exit status 0. */
static struct run_out run_ok(struct it_env *e, const char *const *argv, const char *const *vars)
{
	struct run_out r = run(e, argv, vars);

	if (r.status != 0) {
		print_error("%s %s: status %d\n--- stdout ---\n%s--- stderr (tail) ---\n%s\n",
			    argv[0], argv[1] ? argv[1] : "", r.status, r.out, r.err);
		run_out_free(&r);
		fail();
	}
	return r;
}

/* The next line of *@s (without its newline), or NULL at the end. */
static const char *next_line(char **s)
{
	char *line = *s, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*s = nl + 1;
	} else {
		*s = line + strlen(line);
	}
	return line;
}

/*
 * Compares two runs of @what line by line; prints every difference and
 * the shim run's stderr. True if both ended alike with the same output.
 */
static bool same_runs(const char *what, const struct run_out *native, const struct run_out *shim)
{
	char *a = strdup(native->out), *b = strdup(shim->out), *pa = a, *pb = b;
	const char *la, *lb;
	bool same = native->status == shim->status;
	int n = 1, shown = 0;

	assert_non_null(a);
	assert_non_null(b);
	if (!same)
		print_error("%s: exit status native %d, shim %d\n", what, native->status,
			    shim->status);
	for (;; n++) {
		la = next_line(&pa);
		lb = next_line(&pb);
		if (!la && !lb)
			break;
		if (la && lb && !strcmp(la, lb))
			continue;
		if (++shown <= CL_MAX_DIFFS)
			print_error("%s line %d:\n  native: %s\n  shim:   %s\n", what, n,
				    la ? la : "(none)", lb ? lb : "(none)");
		same = false;
	}
	if (shown > CL_MAX_DIFFS)
		print_error("%s: %d more lines differ\n", what, shown - CL_MAX_DIFFS);
	if (!same && shim->err[0])
		print_error("%s: shim stderr (tail):\n%s\n", what, shim->err);
	free(a);
	free(b);
	return same;
}

/* The phases cl_prog knows, from cl_prog --list. */
static int phase_list(struct it_env *e, char names[][32])
{
	const char *vars[] = { pocl_cache_var(), NULL };
	struct run_out r = run_ok(e, IT_ARGS(XS_CL_PROG, "--list"), vars);
	char *p = r.out;
	const char *line;
	int n = 0;

	while ((line = next_line(&p)) && n < CL_MAX_PHASES)
		snprintf(names[n++], 32, "%s", line);
	run_out_free(&r);
	assert_true(n > 10);
	return n;
}

/* Whether a line of @out starts with @prefix. */
static bool has_line(const char *out, const char *prefix)
{
	size_t len = strlen(prefix);

	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, len))
			return true;
	return false;
}

/* Whether @phase passed its own checks in @out (or was skipped). */
static bool phase_passed(const char *out, const char *phase)
{
	char ok[48], skipped[48];

	snprintf(ok, sizeof(ok), "%.32s: ok", phase);
	snprintf(skipped, sizeof(skipped), "%.32s: skipped", phase);
	return !strstr(out, "MISMATCH") && (has_line(out, ok) || has_line(out, skipped));
}

/*
 * Every phase in a process of its own: natively it passes its own checks;
 * under the shim it prints the same lines. All differences are listed
 * before the case fails.
 */
static void opencl_phases_match_native(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", NULL };
	char names[CL_MAX_PHASES][32];
	int n = phase_list(e, names), i, bad = 0;

	/* About sixty processes, each a few seconds under TSan on a loaded
	 * machine (its CTest timeout is raised to match). */
	it_guard(230);
	for (i = 0; i < n; i++) {
		struct run_out native = run_ok(e, IT_ARGS(XS_CL_PROG, names[i]), native_vars);
		struct run_out shim = run(e, IT_ARGS(XS_CL_PROG, names[i]), shim_vars);

		if (!phase_passed(native.out, names[i]))
			fail_msg("phase %s fails natively:\n%s", names[i], native.out);
		if (!same_runs(names[i], &native, &shim))
			bad++;
		run_out_free(&native);
		run_out_free(&shim);
	}
	if (bad)
		fail_msg("%d of %d phases differ under the shim", bad, n);
	e->ok = true;
}

/*
 * The guardian off (XSCHED_OPENCL_LV2=0: every queue at level 1, launches
 * buffered with their recorded arguments rather than guarded): the phases
 * on what the conformance suite found (failed user events, calls at once
 * behind gated work, enqueue errors, host-access flags, linked programs,
 * reference counts) and those on events and releases print the same
 * lines as natively, each in a process of its own.
 */
static void opencl_guardian_off_matches_native(void **state)
{
	static const char *const phases[] = { "user_fail", "gated", "enqueue_errors",
					      "host_flags", "link", "refcounts", "user",
					      "user_error", "release", "errors_pending", "map",
					      "callbacks" };
	struct it_env *e = *state;
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", "XSCHED_OPENCL_LV2=0", NULL };
	int bad = 0;

	it_guard(200);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		struct run_out native = run_ok(e, IT_ARGS(XS_CL_PROG, phases[i]), native_vars);
		struct run_out shim = run(e, IT_ARGS(XS_CL_PROG, phases[i]), shim_vars);

		if (!phase_passed(native.out, phases[i]))
			fail_msg("phase %s fails natively:\n%s", phases[i], native.out);
		if (!same_runs(phases[i], &native, &shim))
			bad++;
		run_out_free(&native);
		run_out_free(&shim);
	}
	if (bad)
		fail_msg("%d phases differ with the guardian off", bad);
	e->ok = true;
}

/* The output without its "shim: ..." line. */
static char *without_shim_line(char *s)
{
	char *p = strstr(s, "shim: "), *rest;

	if (p) {
		rest = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
		memmove(p, rest, strlen(rest) + 1);
	}
	return s;
}

/*
 * What the shim says it scheduled ($XSCHED_OPENCL_STATS): the line it
 * appended to @path at exit, parsed; the file is removed.
 */
static void shim_stats(const char *path, long *queues, long *cmds, long *proxies,
		       long *deferred)
{
	char line[256] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	unlink(path);
	if (sscanf(line, "pid %*d queues %ld commands %ld proxies %ld deferred-kernels %ld",
		   queues, cmds, proxies, deferred) != 4)
		fail_msg("unexpected XSCHED_OPENCL_STATS line: '%s'", line);
	print_message("shim: %s", line);
}

/*
 * All phases in one process (queues, kernels and events of earlier phases
 * around), and the shim's own account of it: every queue is an XQueue,
 * every command went through one, some events were stand-ins.
 */
static void opencl_one_process_matches_native(void **state)
{
	struct it_env *e = *state;
	char stats[IT_PATH + 16], stats_var[IT_PATH + 40];
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", stats_var, NULL };
	char names[CL_MAX_PHASES][32];
	const char *argv[CL_MAX_PHASES + 3] = { XS_CL_PROG };
	int n = phase_list(e, names), i;
	long queues, cmds, proxies, deferred;
	struct run_out native, shim;

	snprintf(stats, sizeof(stats), "%s/stats", e->dir);
	snprintf(stats_var, sizeof(stats_var), "XSCHED_OPENCL_STATS=%s", stats);
	for (i = 0; i < n; i++)
		argv[i + 1] = names[i];
	argv[n + 1] = "shim";
	native = run_ok(e, argv, native_vars);
	shim = run(e, argv, shim_vars);
	assert_non_null(strstr(native.out, "shim: absent\n"));
	assert_non_null(strstr(native.out, "failures 0\n"));
	if (!strstr(shim.out, "shim: active\n"))
		fail_msg("the shim is not loaded:\n%s\n%s", shim.out, shim.err);
	without_shim_line(native.out);
	without_shim_line(shim.out);
	if (!same_runs("all phases", &native, &shim))
		fail_msg("the shim's run differs");
	shim_stats(stats, &queues, &cmds, &proxies, &deferred);
	/* cl_prog makes more than 15 queues and enqueues thousands of commands. */
	assert_true(queues >= 15);
	assert_true(cmds >= 1000);
	assert_true(proxies > 0);
	run_out_free(&native);
	run_out_free(&shim);
	e->ok = true;
}

/*
 * Buffered launches with every kind of kernel argument (the kargs
 * phases): the same results as natively, and the shim did buffer them —
 * all 97 launches (93 without SVM) wait behind sixteen held markers, a
 * full window.
 */
static void opencl_deferred_launches_keep_arguments(void **state)
{
	struct it_env *e = *state;
	char stats[IT_PATH + 16], stats_var[IT_PATH + 40];
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", stats_var, NULL };
	long queues, cmds, proxies, deferred, want;
	struct run_out native, shim;
	bool same;

	snprintf(stats, sizeof(stats), "%s/stats", e->dir);
	snprintf(stats_var, sizeof(stats_var), "XSCHED_OPENCL_STATS=%s", stats);
	native = run_ok(e, IT_ARGS(XS_CL_PROG, "kargs", "kargs_svm"), native_vars);
	shim = run(e, IT_ARGS(XS_CL_PROG, "kargs", "kargs_svm"), shim_vars);
	assert_true(phase_passed(native.out, "kargs"));
	assert_true(phase_passed(native.out, "kargs_svm"));
	want = has_line(native.out, "kargs_svm: skipped") ? 93 : 97;
	same = same_runs("deferred launches", &native, &shim);
	run_out_free(&native);
	run_out_free(&shim);
	if (!same)
		fail_msg("buffered launches differ under the shim");
	shim_stats(stats, &queues, &cmds, &proxies, &deferred);
	if (deferred < want)
		fail_msg("only %ld kernel launches were buffered (%ld expected)", deferred, want);
	e->ok = true;
}

/* The number after "queues " in @out: -1 if "absent", -2 if missing. */
static int queues_of(const char *out)
{
	const char *p = strstr(out, "queues ");

	if (!p)
		return -2;
	if (!strncmp(p + 7, "absent", 6))
		return -1;
	return atoi(p + 7);
}

/* The "result ..." line of cl_dlopen's output, copied into @buf. */
static const char *result_of(const char *out, char *buf, size_t len)
{
	const char *p = strstr(out, "result ");

	assert_non_null(p);
	snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

/* cl_dlopen NAME natively and under the shim: same result, queues seen. */
static void dlopen_case(struct it_env *e, const char *name)
{
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", NULL };
	struct run_out native = run_ok(e, IT_ARGS(XS_CL_DLOPEN, name), native_vars);
	struct run_out shim = run_ok(e, IT_ARGS(XS_CL_DLOPEN, name), shim_vars);
	char rn[128], rs[128];

	assert_string_equal(result_of(native.out, rn, sizeof(rn)), "result ok 3 8187");
	assert_int_equal(queues_of(native.out), -1);
	assert_string_equal(result_of(shim.out, rs, sizeof(rs)), rn);
	if (queues_of(shim.out) <= 0)
		fail_msg("dlopen(\"%s\") did not reach the shim's queues: %s", name, shim.out);
	run_out_free(&native);
	run_out_free(&shim);
	e->ok = true;
}

static void opencl_dlopen_soname(void **state)
{
	dlopen_case(*state, "libOpenCL.so.1");
}

/* The development name maps the real loader's file; the dlopen hook catches it. */
static void opencl_dlopen_other_name(void **state)
{
	dlopen_case(*state, "libOpenCL.so");
}

/* The shim under the name libOpenCL.so.1, found before the real loader. */
static void opencl_first_on_library_path(void **state)
{
	struct it_env *e = *state;
	char dir[IT_PATH + 16], link[IT_PATH + 32], path_var[IT_PATH + 48];
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *vars[] = { pocl_cache_var(), lsan_var(), path_var, "XSCHED_SCHEDULER=local",
			       NULL };
	struct run_out native, shim;

	snprintf(dir, sizeof(dir), "%s/lib", e->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/libOpenCL.so.1", dir);
	assert_int_equal(symlink(XS_SHIM_PATH, link), 0);
	snprintf(path_var, sizeof(path_var), "LD_LIBRARY_PATH=%s", dir);
	native = run_ok(e, IT_ARGS(XS_CL_PROG, "vecadd", "queues", "user", "shim"), native_vars);
	shim = run(e, IT_ARGS(XS_CL_PROG, "vecadd", "queues", "user", "shim"), vars);
	if (!strstr(shim.out, "shim: active\n"))
		fail_msg("the shim is not loaded:\n%s\n%s", shim.out, shim.err);
	without_shim_line(native.out);
	without_shim_line(shim.out);
	if (!same_runs("library path", &native, &shim))
		fail_msg("the shim's run differs");
	run_out_free(&native);
	run_out_free(&shim);
	e->ok = true;
}

/* XSCHED_DISABLE=1: the same output, and not one queue. */
static void opencl_disable_is_pass_through(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *off_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				   "XSCHED_DISABLE=1", NULL };
	struct run_out native = run_ok(e, IT_ARGS(XS_CL_PROG), native_vars);
	struct run_out off = run(e, IT_ARGS(XS_CL_PROG), off_vars);
	struct run_out loader;
	char rn[128], rs[128];

	if (!same_runs("disabled", &native, &off))
		fail_msg("XSCHED_DISABLE=1 changes the output");
	run_out_free(&native);
	run_out_free(&off);
	native = run_ok(e, IT_ARGS(XS_CL_DLOPEN, "libOpenCL.so.1"), native_vars);
	loader = run_ok(e, IT_ARGS(XS_CL_DLOPEN, "libOpenCL.so.1"), off_vars);
	assert_string_equal(result_of(loader.out, rs, sizeof(rs)),
			    result_of(native.out, rn, sizeof(rn)));
	if (queues_of(loader.out) != 0)
		fail_msg("XSCHED_DISABLE=1: expected 'queues 0': %s", loader.out);
	run_out_free(&native);
	run_out_free(&loader);
	e->ok = true;
}

/*
 * An empty kernel cache: PoCL compiles and links every kernel under the
 * shim, running its linker as a child process that inherits LD_PRELOAD.
 */
static void opencl_cold_cache_under_shim(void **state)
{
	struct it_env *e = *state;
	char cache[IT_PATH + 16], cache_var[IT_PATH + 40];
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { cache_var, lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", NULL };
	struct run_out native, shim;
	bool same;

	snprintf(cache, sizeof(cache), "%s/pocl", e->dir);
	snprintf(cache_var, sizeof(cache_var), "POCL_CACHE_DIR=%s", cache);
	assert_int_equal(mkdir(cache, 0755), 0);
	native = run_ok(e, IT_ARGS(XS_CL_PROG, "vecadd", "image", "many"), native_vars);
	shim = run(e, IT_ARGS(XS_CL_PROG, "vecadd", "image", "many"), shim_vars);
	same = same_runs("cold cache", &native, &shim);
	run_out_free(&native);
	run_out_free(&shim);
	if (!same)
		fail_msg("the shim's run differs with an empty kernel cache");
	e->ok = true;
}

/* Through xschedd (the agent registers every queue): the same lines. */
static void opencl_through_daemon(void **state)
{
	static const char *const phases[] = { "queues", "markers", "user", "callbacks", "many",
					       "release", "args", "threads" };
	struct it_env *e = *state;
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(), NULL };
	const char *argv[16] = { XS_CL_PROG };
	struct run_out native, shim;
	size_t i;

	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		argv[i + 1] = phases[i];
	it_daemon_start(e, NULL);
	native = run_ok(e, argv, native_vars);
	shim = run(e, argv, shim_vars);
	if (!same_runs("through xschedd", &native, &shim))
		fail_msg("the shim's run through xschedd differs");
	it_daemon_check(e);
	run_out_free(&native);
	run_out_free(&shim);
	e->ok = true;
}

/*
 * Preempted: through xschedd, a high-priority process keeps the device
 * busy while every phase runs in a low-priority one, whose queues are
 * then suspended and resumed under it (their commands buffered, their
 * events stand-ins for longer): both print what they print natively.
 */
static void opencl_preempted_matches_native(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *high_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_PRIORITY=10", NULL };
	const char *low_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				   "XSCHED_PRIORITY=0", NULL };
	const char *const high_argv[] = { XS_CL_PROG, "--repeat", "20", "queues", "many", NULL };
	struct run_out native, native_high, low, high;
	struct run_job job;
	bool same;

	it_guard(110);
	native = run_ok(e, IT_ARGS(XS_CL_PROG), native_vars);
	native_high = run_ok(e, high_argv, native_vars);
	it_daemon_start(e, NULL);
	job = run_start(e, high_argv, high_vars);
	low = run(e, IT_ARGS(XS_CL_PROG), low_vars);
	high = run_finish(e, job, CL_RUN_MS);
	same = same_runs("low priority", &native, &low);
	same &= same_runs("high priority", &native_high, &high);
	it_daemon_check(e);
	run_out_free(&native);
	run_out_free(&native_high);
	run_out_free(&low);
	run_out_free(&high);
	if (!same)
		fail_msg("a run under xschedd differs");
	e->ok = true;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* it_teardown, after removing what the cases may leave in the case's directory. */
static int cl_teardown(void **state)
{
	struct it_env *e = *state;
	char path[IT_PATH + 16];

	buf_free_all();
	if (e) {
		snprintf(path, sizeof(path), "%s/pocl", e->dir);
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		snprintf(path, sizeof(path), "%s/lib", e->dir);
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		snprintf(path, sizeof(path), "%s/stats", e->dir);
		unlink(path);
	}
	return it_teardown(state);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(opencl_phases_match_native, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_guardian_off_matches_native, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_one_process_matches_native, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_deferred_launches_keep_arguments, it_setup,
					cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_dlopen_soname, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_dlopen_other_name, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_first_on_library_path, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_disable_is_pass_through, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_cold_cache_under_shim, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_through_daemon, it_setup, cl_teardown),
	cmocka_unit_test_setup_teardown(opencl_preempted_matches_native, it_setup, cl_teardown),
};

TU_MAIN(tests)
