/*
 * Device memory through the OpenCL shim, on PoCL: cl_mem_prog (tests/
 * opencl/) checks the device it is shown and fills it to the byte. Without
 * a limit it runs as natively (all its allocations succeed), under the
 * shim too, and with XSCHED_DISABLE=1 a limit changes nothing; with
 * XSCHED_MEMORY_LIMIT the device is the limit's size, one byte more is
 * refused with CL_MEM_OBJECT_ALLOCATION_FAILURE (and said on stderr), and
 * every free gives its bytes back; a malformed limit is said once and
 * ignored.
 */
#include "test_util.h"
#include "it_util.h"
#include "cl_test_util.h"

#define MEM_RUN_MS 30000

/* cl_mem_prog @want with @vars: it must pass its own checks. */
static struct run_out mem_run(struct it_env *e, const char *want, const char *const *vars)
{
	struct run_out r = run_finish(e, run_start(e, IT_ARGS(XS_CL_MEM_PROG, want), vars),
				      MEM_RUN_MS);

	if (r.status != 0 || !strstr(r.out, "failures 0\n"))
		fail_msg("cl_mem_prog %s: status %d\n--- stdout ---\n%s--- stderr (tail) ---\n%s",
			 want, r.status, r.out, r.err);
	return r;
}

/* How many times @needle occurs in @s. */
static int count_of(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* No limit: natively, under the shim, and disabled with one set. */
static void opencl_memory_unlimited_as_native(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { pocl_cache_var(), lsan_var(), NULL };
	const char *shim_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", NULL };
	const char *off_vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				   "XSCHED_DISABLE=1", "XSCHED_MEMORY_LIMIT=64M", NULL };
	struct run_out native = mem_run(e, "none", native_vars);
	struct run_out shim = mem_run(e, "none", shim_vars);
	struct run_out off = mem_run(e, "none", off_vars);

	assert_string_equal(native.out, shim.out);
	assert_string_equal(native.out, off.out);
	assert_null(strstr(off.err, "refused"));
	run_out_free(&native);
	run_out_free(&shim);
	run_out_free(&off);
	e->ok = true;
}

/* XSCHED_MEMORY_LIMIT: the device is that big, and holds that much (two sizes). */
static void opencl_memory_limit_enforced(void **state)
{
	struct it_env *e = *state;
	const char *vars64[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				 "XSCHED_SCHEDULER=local", "XSCHED_MEMORY_LIMIT=64M", NULL };
	const char *vars96[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				 "XSCHED_SCHEDULER=local", "XSCHED_MEMORY_LIMIT=96MiB", NULL };
	struct run_out r = mem_run(e, "64M", vars64);

	assert_non_null(strstr(r.err, "clCreateBuffer of 1 B on cl:"));
	assert_non_null(strstr(r.err, "clSVMAlloc of 1 B on cl:"));
	assert_non_null(strstr(r.err, "its limit is 64 MiB"));
	run_out_free(&r);
	r = mem_run(e, "96M", vars96);
	assert_non_null(strstr(r.err, "its limit is 96 MiB"));
	run_out_free(&r);
	e->ok = true;
}

/* A limit that is no size above zero: one warning, and no limit. */
static void opencl_memory_limit_malformed(void **state)
{
	static const char *const bad[] = { "lots", "-1", "0" };
	struct it_env *e = *state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char var[64], said[96];
		const char *vars[] = { pocl_cache_var(), lsan_var(), shim_preload(),
				       "XSCHED_SCHEDULER=local", var, NULL };
		struct run_out r;

		snprintf(var, sizeof(var), "XSCHED_MEMORY_LIMIT=%s", bad[i]);
		snprintf(said, sizeof(said), "XSCHED_MEMORY_LIMIT=%s is not a size", bad[i]);
		r = mem_run(e, "none", vars);
		if (count_of(r.err, said) != 1 || count_of(r.err, "XSCHED_MEMORY_LIMIT") != 1)
			fail_msg("XSCHED_MEMORY_LIMIT=%s: expected one warning:\n%s", bad[i], r.err);
		assert_null(strstr(r.err, "refused"));
		run_out_free(&r);
	}
	e->ok = true;
}

static int mem_teardown(void **state)
{
	buf_free_all();
	return it_teardown(state);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(opencl_memory_unlimited_as_native, it_setup, mem_teardown),
	cmocka_unit_test_setup_teardown(opencl_memory_limit_enforced, it_setup, mem_teardown),
	cmocka_unit_test_setup_teardown(opencl_memory_limit_malformed, it_setup, mem_teardown),
};

TU_MAIN(tests)
