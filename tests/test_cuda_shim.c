/*
 * The CUDA shim, end to end, on the simulated CUDA driver: unmodified
 * driver-API programs (tests/cuda/) run natively and under the shim and
 * must print the same results; each way an application can reach the
 * driver (linked, preloaded shim, the shim first on LD_LIBRARY_PATH,
 * dlopen of libcuda.so.1 or of libcuda.so, cudart-style cuGetProcAddress
 * with and without the per-thread-stream flag) must end up in the shim;
 * without a driver the shim answers as the system would; XSCHED_DISABLE
 * passes through; a high-priority process keeps its latency while a
 * low-priority one floods, through xschedd, whether the flood's stream was
 * created through the shim, behind its back (adopted) or in a green
 * context; and queues past the daemon's per-process limit are counted and
 * reported, once.
 */
#include "test_util.h"
#include "it_util.h"

#include <errno.h>
#include <poll.h>
#include <sys/stat.h>

#define CU_SHIM_RUN_MS 60000

/* The preload list of the shim (sanitizer runtime first, when built so). */
static const char *shim_preload(void)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s%s%s", XS_SAN_RT, XS_SAN_RT[0] ? " " : "",
		 XS_SHIM_PATH);
	return buf;
}

/* For programs not built by us (nvcc's) that load our sanitized libraries. */
static const char *san_preload(void)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s", XS_SAN_RT);
	return buf;
}

static const char *sim_lib_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "XSCHED_CUDA_LIB=%s/libcuda.so.1", XS_SIM_CUDA_DIR);
	return buf;
}

static const char *native_path_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "LD_LIBRARY_PATH=%s", XS_SIM_CUDA_DIR);
	return buf;
}

/* Runs @argv with @vars, waits for it (exit 0) and returns its stdout. */
static char *run(struct it_env *e, const char *const *argv, const char *const *vars)
{
	pid_t pid = it_spawn(e, argv, vars, true, -1);
	int i = it_kid_index(e, pid), st = 0, fd = e->kid_out[i];
	size_t len = 0, cap = 8192;
	char *out = calloc(1, cap);
	ssize_t n;

	assert_non_null(out);
	while ((n = read(fd, out + len, cap - 1 - len)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			out = realloc(out, cap *= 2);
			assert_non_null(out);
		}
	}
	out[len] = '\0';
	if (it_wait_pid(pid, CU_SHIM_RUN_MS, &st) < 0)
		fail_msg("%s still running", argv[0]);
	e->kid[i] = 0;
	close(fd);
	e->kid_out[i] = -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		print_error("%s failed (status 0x%x): %s\n", argv[0], st, out);
		free(out);
		fail();
	}
	return out;
}

/* The output without its "shim ..." line. */
static char *without_shim_line(char *s)
{
	char *p = strstr(s, "shim ");

	if (p)
		*p = '\0';
	return s;
}

static void cuda_shim_matches_native(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { native_path_var(), "XSCHED_SCHEDULER=local", NULL };
	const char *shim_vars[] = { native_path_var(), sim_lib_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", NULL };
	char *native = run(e, IT_ARGS(XS_CU_PROG), native_vars);
	char *shim = run(e, IT_ARGS(XS_CU_PROG), shim_vars);

	assert_non_null(strstr(native, "shim absent"));
	/* The stream made behind the shim's back got a queue at its first
	 * use, as did the green context and its first stream. */
	assert_non_null(strstr(shim, "shim active adopted=1 green=2"));
	/* Every phase: orderings, pageable copies, events, host functions,
	 * graphs, errors — the same results, line for line. */
	assert_non_null(strstr(native, "errors "));
	assert_string_equal(without_shim_line(native), without_shim_line(shim));
	free(native);
	free(shim);
	e->ok = true;
}

static void cuda_shim_first_on_library_path(void **state)
{
	struct it_env *e = *state;
	char dir[IT_PATH + 16], link[IT_PATH + 32], path_var[IT_PATH * 2 + 32];
	const char *vars[] = { path_var, sim_lib_var(), "XSCHED_SCHEDULER=local", NULL };
	char *out;

	/* The shim under the name libcuda.so.1, found before the driver. */
	snprintf(dir, sizeof(dir), "%s/lib", e->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/libcuda.so.1", dir);
	assert_int_equal(symlink(XS_SHIM_PATH, link), 0);
	snprintf(path_var, sizeof(path_var), "LD_LIBRARY_PATH=%s:%s", dir, XS_SIM_CUDA_DIR);
	out = run(e, IT_ARGS(XS_CU_PROG, "order", "events", "legacy", "shim"), vars);
	assert_non_null(strstr(out, "shim active"));
	free(out);
	/* cudart-style loading finds it there too. */
	out = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), vars);
	assert_non_null(strstr(out, "result 42 42"));
	assert_non_null(strstr(out, "launch via shim"));
	free(out);
	unlink(link);
	rmdir(dir);
	e->ok = true;
}

/* cudart's way in, by @name, with the per-thread-stream flag if @ptsz. */
static void loader_case(struct it_env *e, const char *name, bool ptsz)
{
	const char *native_vars[] = { native_path_var(), NULL };
	const char *shim_vars[] = { sim_lib_var(), shim_preload(), "XSCHED_SCHEDULER=local", NULL };
	char *native = run(e, IT_ARGS(XS_CU_LOADER, name, ptsz ? "ptsz" : "plain"), native_vars);
	char *shim = run(e, IT_ARGS(XS_CU_LOADER, name, ptsz ? "ptsz" : "plain"), shim_vars);

	assert_non_null(strstr(native, "result 42 42"));
	assert_non_null(strstr(native, "launch via driver"));
	assert_non_null(strstr(shim, "result 42 42"));
	assert_non_null(strstr(shim, "launch via shim"));
	free(native);
	free(shim);
	e->ok = true;
}

static void cuda_loader_soname(void **state)
{
	loader_case(*state, "libcuda.so.1", false);
}

static void cuda_loader_ptsz(void **state)
{
	loader_case(*state, "libcuda.so.1", true);
}

/* The development name maps the real file; the dlopen hook catches it. */
static void cuda_loader_other_name(void **state)
{
	loader_case(*state, "libcuda.so", false);
}

static void cuda_no_driver_as_native(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { "LD_LIBRARY_PATH=/nonexistent", NULL };
	const char *shim_vars[] = { "XSCHED_CUDA_LIB=/nonexistent/libcuda.so.1", shim_preload(),
				    NULL };
	char *native = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), native_vars);
	char *shim = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), shim_vars);

	assert_non_null(strstr(native, "no driver"));
	assert_string_equal(native, shim);
	free(native);
	free(shim);
	e->ok = true;
}

/*
 * A <<<>>> program built by nvcc (cudart static): without any driver it
 * reports the driver's absence under the shim exactly as natively, and on
 * the simulated driver (which has no export tables for cudart) it fails
 * the same way in both runs: the shim forwards what it does not schedule.
 */
static void cuda_runtime_program_as_native(void **state)
{
#ifdef XS_CU_RUNTIME_PROG
	struct it_env *e = *state;
	const char *none_native[] = { "LD_LIBRARY_PATH=/nonexistent", NULL };
	const char *none_shim[] = { "XSCHED_CUDA_LIB=/nonexistent/libcuda.so.1", shim_preload(),
				    NULL };
	const char *sim_native[] = { native_path_var(), san_preload(), NULL };
	const char *sim_shim[] = { sim_lib_var(), shim_preload(), NULL };
	char *native = run(e, IT_ARGS(XS_CU_RUNTIME_PROG), none_native);
	char *shim = run(e, IT_ARGS(XS_CU_RUNTIME_PROG), none_shim);

	/* cudaErrorInsufficientDriver */
	assert_non_null(strstr(native, "count -1 err 35"));
	assert_string_equal(native, shim);
	free(native);
	free(shim);
	native = run(e, IT_ARGS(XS_CU_RUNTIME_PROG), sim_native);
	shim = run(e, IT_ARGS(XS_CU_RUNTIME_PROG), sim_shim);
	assert_string_equal(native, shim);
	free(native);
	free(shim);
	e->ok = true;
#else
	(void)state;
	print_message("nvcc not found at configure time: nothing to run\n");
	skip();
#endif
}

static void cuda_disable_is_pass_through(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { native_path_var(), sim_lib_var(), shim_preload(),
			       "XSCHED_DISABLE=1", NULL };
	const char *native_vars[] = { native_path_var(), NULL };
	char *native = run(e, IT_ARGS(XS_CU_PROG, "order", "legacy", "errors"), native_vars);
	char *off = run(e, IT_ARGS(XS_CU_PROG, "order", "legacy", "errors"), vars);
	char *loader = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), vars);

	assert_string_equal(native, off);
	/* No queue was made, and cuGetProcAddress hands out the driver's own. */
	assert_non_null(strstr(loader, "launch via driver"));
	free(native);
	free(off);
	free(loader);
	e->ok = true;
}

/*
 * A high-priority stream waits on an event of a low-priority stream whose
 * record is still buffered (cu_prog "deps"): under the daemon and under the
 * in-process policy the dependency lends the low stream the priority, so
 * the program finishes, with the native result.
 */
static void cuda_cross_stream_wait_no_deadlock(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { native_path_var(), NULL };
	const char *local_vars[] = { sim_lib_var(), shim_preload(), "XSCHED_SCHEDULER=local",
				     NULL };
	const char *global_vars[] = { sim_lib_var(), shim_preload(), NULL };
	char *native = run(e, IT_ARGS(XS_CU_PROG, "deps"), native_vars);
	char *local = run(e, IT_ARGS(XS_CU_PROG, "deps"), local_vars);
	char *global;

	assert_non_null(strstr(native, "priorities 1"));
	assert_string_equal(native, local);
	it_daemon_start(e, NULL);
	global = run(e, IT_ARGS(XS_CU_PROG, "deps"), global_vars);
	assert_string_equal(native, global);
	it_daemon_check(e);
	free(native);
	free(local);
	free(global);
	e->ok = true;
}

/*
 * The queue of @pid that ran commands and was preempted most; false if
 * none ran any.
 */
static bool busiest_queue(struct it_env *e, pid_t pid, struct ipc_queue_rec *out)
{
	struct ipc_queue_rec *r = NULL;
	size_t n = 0, i;
	bool found = false;

	assert_int_equal(ipc_client_list(&e->c, &r, &n), 0);
	for (i = 0; i < n; i++) {
		if (r[i].pid != pid || !r[i].submitted)
			continue;
		if (!found || r[i].preemptions > out->preemptions)
			*out = r[i];
		found = true;
	}
	free(r);
	return found;
}

/*
 * The low process floods 20 ms kernels on a stream made as @how says
 * (cu_load --stream); the high one's tasks are 10 kernels of 1 ms.
 * Natively each high kernel waits for a low one (about 200 ms a task);
 * with the daemon only the first does, because the low stream is a queue
 * of the daemon's, suspended for the high one.
 */
static void priorities_case(struct it_env *e, const char *how)
{
	const char *low_vars[] = { sim_lib_var(), shim_preload(), "XSCHED_PRIORITY=0", NULL };
	const char *high_vars[] = { sim_lib_var(), shim_preload(), "XSCHED_PRIORITY=10", NULL };
	struct ipc_queue_rec rec;
	double p50 = 0;
	pid_t low;
	char *out, *p;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	low = it_spawn(e, IT_ARGS(XS_CU_LOAD, "--flood", "8", "--cmd-us", "20000", "--stream", how),
		       low_vars, false, -1);
	it_nap_ms(1000);
	out = run(e, IT_ARGS(XS_CU_LOAD, "--tasks", "20", "--cmds", "10", "--cmd-us", "1000"),
		  high_vars);
	p = strstr(out, "p50_us=");
	assert_non_null(p);
	p50 = strtod(p + 7, NULL);
	assert_true(p50 > 9000);
	assert_true(p50 < 100000);
	free(out);
	assert_true(busiest_queue(e, low, &rec));
	assert_true(rec.preemptions > 0);
	it_kill(e, low);
	it_daemon_check(e);
	e->ok = true;
}

static void cuda_priorities_through_daemon(void **state)
{
	priorities_case(*state, "plain");
}

/* The flood's stream was made behind the shim's back: adopted at its first launch. */
static void cuda_adopted_stream_through_daemon(void **state)
{
	priorities_case(*state, "hidden");
}

static void cuda_green_stream_through_daemon(void **state)
{
	priorities_case(*state, "green");
}

/* How many times @needle occurs in @hay. */
static int occurrences(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The daemon's log so far, NUL-terminated (malloc()ed). */
static char *daemon_log(struct it_env *e)
{
	FILE *f = fopen(e->log, "r");
	char *text = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	assert_non_null(text);
	n = fread(text, 1, (1 << 16) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/*
 * A process with @streams non-blocking streams, all used, under a daemon
 * configured with @conf: returns the daemon's status while they run, and
 * the process's stderr in *@err (malloc()ed).
 */
static struct ipc_status_reply many_streams(struct it_env *e, const char *conf, int streams,
					    unsigned expect_queues, char **err)
{
	const char *vars[] = { sim_lib_var(), shim_preload(), NULL };
	char n[16];
	struct ipc_status_reply st;
	size_t len = 0;
	ssize_t got;
	int pipefd[2], status = 0;
	pid_t pid;

	snprintf(n, sizeof(n), "%d", streams);
	if (conf)
		it_config(e, conf);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	pid = it_spawn(e, IT_ARGS(XS_CU_LOAD, "--flood", "3", "--cmd-us", "200", "--streams", n),
		       vars, false, pipefd[1]);
	close(pipefd[1]);
	/* Every stream has run once the queues are registered (or refused). */
	assert_true(IT_WAIT_UNTIL(it_status(e).queues == expect_queues, 20000));
	it_nap_ms(200);
	st = it_status(e);
	assert_int_equal(it_reap(e, pid, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*err = calloc(1, 8192);
	assert_non_null(*err);
	while (len < 8191 && (got = read(pipefd[0], *err + len, 8191 - len)) > 0)
		len += (size_t)got;
	close(pipefd[0]);
	it_daemon_check(e);
	return st;
}

/*
 * Past max_queues_per_client a process's queues run unscheduled, and it
 * is said once: a daemon log line, xschedctl status, the shim's stderr.
 * 20 streams and the context's own queue: 8 registered, 13 refused.
 */
static void cuda_queue_limit_said_once(void **state)
{
	struct it_env *e = *state;
	char *err, *log;
	struct ipc_status_reply st;

	st = many_streams(e, "[daemon]\nmax_queues_per_client = 8\n", 20, 8, &err);
	assert_int_equal(st.queues, 8);
	assert_int_equal(st.unscheduled, 13);
	assert_int_equal(st.max_queues_per_client, 8);
	assert_int_equal(occurrences(err, "xsched: xschedd takes 8 queues per process"), 1);
	log = daemon_log(e);
	assert_int_equal(occurrences(log, "more queues than max_queues_per_client = 8"), 1);
	free(log);
	free(err);
	e->ok = true;
}

/* The default fits a framework's pools: 100 streams in use, all scheduled, nothing said. */
static void cuda_queue_limit_default(void **state)
{
	struct it_env *e = *state;
	struct ipc_status_reply st;
	char *err, *log;

	st = many_streams(e, NULL, 100, 101, &err);
	assert_int_equal(st.unscheduled, 0);
	assert_true(st.max_queues_per_client >= 101);
	assert_null(strstr(err, "xsched:"));
	log = daemon_log(e);
	assert_null(strstr(log, "max_queues_per_client"));
	free(log);
	free(err);
	e->ok = true;
}

/* run() with the process's stderr into *@err (malloc()ed). */
static char *run_err(struct it_env *e, const char *const *argv, const char *const *vars,
		     char **err)
{
	pid_t pid;
	int pipefd[2], i, st = 0;
	size_t len = 0, elen = 0, cap = 8192;
	char *out = calloc(1, cap);
	ssize_t n;

	assert_non_null(out);
	*err = calloc(1, 8192);
	assert_non_null(*err);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	pid = it_spawn(e, argv, vars, true, pipefd[1]);
	close(pipefd[1]);
	i = it_kid_index(e, pid);
	while ((n = read(e->kid_out[i], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	while (elen < 8191 && (n = read(pipefd[0], *err + elen, 8191 - elen)) > 0)
		elen += (size_t)n;
	close(pipefd[0]);
	if (it_wait_pid(pid, CU_SHIM_RUN_MS, &st) < 0)
		fail_msg("%s still running", argv[0]);
	e->kid[i] = 0;
	close(e->kid_out[i]);
	e->kid_out[i] = -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s failed (status 0x%x): %s\n%s", argv[0], st, out, *err);
	return out;
}

/* Fails unless each of the @n lines @want is in @out. */
static void has_lines(const char *out, const char *const *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (!strstr(out, want[i]))
			fail_msg("no line '%s' %s:\n%s", want[i], what, out);
}

/*
 * XSCHED_MEMORY_LIMIT=64M: the application sees a 64 MiB device
 * (cuMemGetInfo_v2, cuDeviceTotalMem_v2); 48 + 16 MiB fit, one more byte
 * is refused with CUDA_ERROR_OUT_OF_MEMORY (synchronous and
 * stream-ordered) until a free gives memory back; each refusal is one
 * warning naming the limit; the process works on after them. Natively
 * every allocation succeeds.
 */
static void cuda_memory_limit(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { native_path_var(), "XSCHED_MEMORY_LIMIT=64M", NULL };
	const char *shim_vars[] = { native_path_var(), sim_lib_var(), shim_preload(),
				    "XSCHED_SCHEDULER=local", "XSCHED_MEMORY_LIMIT=64M", NULL };
	static const char *const want[] = {
		"device total=67108864\n", "start total=67108864 free=67108864\n",
		"alloc 48M: 0\n", "alloc 16M: 0\n", "alloc 1: 2\n",
		"full total=67108864 free=0\n", "free 16M: 0\n", "async 16M: 0\n",
		"async 1: 2\n", "free async 16M: 0\n", "alloc 16M again: 0\n", "work ok\n",
		"end total=67108864 free=67108864\n",
	};
	char *native = run(e, IT_ARGS(XS_CU_MEM_PROG), native_vars), *err;
	char *shim = run_err(e, IT_ARGS(XS_CU_MEM_PROG), shim_vars, &err);

	assert_non_null(strstr(native, "alloc 1: 0\n"));
	assert_non_null(strstr(native, "async 1: 0\n"));
	has_lines(shim, want, ARRAY_SIZE(want), "under the shim");
	assert_int_equal(occurrences(err, "xsched: cuMemAlloc_v2 of 1 B on cuda:0 refused: "
				     "the process holds 64 MiB there, its limit is 64 MiB"), 1);
	assert_int_equal(occurrences(err, "xsched: cuMemAllocAsync of 1 B on cuda:0 refused"), 1);
	free(native);
	free(shim);
	free(err);
	e->ok = true;
}

/*
 * cu_mem_prog @mode under the shim with XSCHED_MEMORY_LIMIT=64M in local
 * mode: its output holds the @n lines @want; its stderr, into *@err.
 */
static char *limited_run(struct it_env *e, const char *mode, const char *const *want, size_t n,
			 char **err)
{
	const char *vars[] = { native_path_var(), sim_lib_var(), shim_preload(),
			       "XSCHED_SCHEDULER=local", "XSCHED_MEMORY_LIMIT=64M", NULL };
	char *out = run_err(e, IT_ARGS(XS_CU_MEM_PROG, mode), vars, err);

	has_lines(out, want, n, "under the shim");
	return out;
}

/*
 * Every other allocation call counted exactly under a limit, and given
 * back by its free: pitched (what the driver's pitch took), arrays 2D, 3D
 * and mipmapped (elements x levels), physical memory of cuMemCreate (over
 * the limit: refused); managed memory counted apart, never refused.
 */
static void cuda_memory_every_api(void **state)
{
	struct it_env *e = *state;
	static const char *const want[] = {
		"start held=0\n", "pitch: 0\n", "pitch held=4194304 (pitch x height 4194304)\n",
		"managed 100M: 0\n", "managed held=4194304\n", "array 2D: 0\n",
		"array 2D held=8388608\n", "array 3D: 0\n", "array 3D held=25165824\n",
		"mipmapped: 0\n", "mipmapped held=44302336\n", "create: 0\n",
		"create held=52690944\n", "create over: 2\n", "released held=44302336\n",
		"arrays destroyed held=4194304\n", "end held=0\n",
	};
	char *err, *out = limited_run(e, "apis", want, ARRAY_SIZE(want), &err);

	assert_int_equal(occurrences(err, "xsched: cuMemCreate of 64 MiB on cuda:0 refused"), 1);
	free(out);
	free(err);
	e->ok = true;
}

/*
 * Stream-ordered memory under XSCHED_MEMORY_LIMIT=64M counts what its pool
 * reserves: a freed block's bytes stay counted while the pool keeps them
 * (its release threshold raised), the pool's free reserve holds an
 * allocation the limit would refuse, one it cannot hold is refused (one
 * warning), trimming gives the reserve back, and an explicit pool's
 * allocations are counted and refused alike.
 */
static void cuda_memory_pools(void **state)
{
	struct it_env *e = *state;
	static const char *const want[] = {
		"start held=0\n", "async 20M: 0\n", "async held=20971520\n",
		"freed held=20971520\n", "synced held=20971520\n", "alloc 40M: 0\n",
		"async 10M: 0\n", "reused held=62914560\n", "async 16M: 2\n",
		"trimmed held=41943040\n", "pool 8M: 0\n", "pool held=50331648\n",
		"pool 24M: 2\n", "pool synced held=41943040\n", "end held=0\n",
	};
	char *err, *out = limited_run(e, "pools", want, ARRAY_SIZE(want), &err);

	assert_int_equal(occurrences(err, "xsched: cuMemAllocAsync of 16 MiB on cuda:0 refused"),
			 1);
	assert_int_equal(occurrences(err, "xsched: cuMemAllocFromPoolAsync of 24 MiB on cuda:0 "
				     "refused"), 1);
	free(out);
	free(err);
	e->ok = true;
}

/*
 * Memory preemption in one process (XSCHED_MEMORY_PREEMPTION=1, evictions
 * through the test build's hook): allocations backed by the virtual memory
 * management API; evicting gives the device back every byte taken (its
 * free memory grows by as much); a synchronous copy, a kernel through the
 * queue, each brings the memory back first, contents identical byte for
 * byte; a free of evicted memory forgets it; 40 evictions while another
 * thread copies the memory in a loop lose nothing. And every phase of
 * cu_prog prints what it prints natively with the backing on.
 */
static void cuda_memory_eviction_in_process(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { native_path_var(), "XSCHED_SCHEDULER=local", NULL };
	const char *vars[] = { native_path_var(), sim_lib_var(), shim_preload(),
			       "XSCHED_SCHEDULER=local", "XSCHED_MEMORY_PREEMPTION=1", NULL };
	static const char *const want[] = {
		"evicted 10485760, device free grew by 10485760, away 10485760\n",
		"copy after eviction: a intact, away 0\n", "b intact\n",
		"kernel after eviction: away 0, a intact\n", "free while evicted: away 4194304\n",
		"all freed: away 0\n", "race: intact (0 wrong of", "race took memory: yes\n",
	};
	char *out, *native, *shim;

	out = run(e, IT_ARGS(XS_CU_MEM_PROG, "evict"), vars);
	has_lines(out, want, ARRAY_SIZE(want), "with memory preemption");
	free(out);
	native = run(e, IT_ARGS(XS_CU_PROG), native_vars);
	shim = run(e, IT_ARGS(XS_CU_PROG), vars);
	without_shim_line(native);
	without_shim_line(shim);
	assert_string_equal(native, shim);
	free(native);
	free(shim);
	e->ok = true;
}

/* A malformed XSCHED_MEMORY_LIMIT is said once and sets no limit. */
static void cuda_memory_limit_malformed(void **state)
{
	struct it_env *e = *state;
	const char *bad[] = { "lots", "-1", "0", "8X", "1.5" };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char var[64], *out, *err;
		const char *vars[] = { native_path_var(), sim_lib_var(), shim_preload(),
				       "XSCHED_SCHEDULER=local", var, NULL };

		snprintf(var, sizeof(var), "XSCHED_MEMORY_LIMIT=%s", bad[i]);
		out = run_err(e, IT_ARGS(XS_CU_MEM_PROG), vars, &err);
		assert_non_null(strstr(out, "alloc 1: 0\n"));
		assert_int_equal(occurrences(err, "is not a size above zero"), 1);
		assert_null(strstr(err, "refused"));
		free(out);
		free(err);
	}
	e->ok = true;
}

/* Reads @fd (a child's stdout) until a line starting with @want; the line, or NULL. */
static char *read_line_until(int fd, const char *want, char *buf, size_t len)
{
	size_t have = 0;
	uint64_t t0 = clock_now_ns();

	buf[0] = '\0';
	while (it_ms_since(t0) < 10000 && have + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *line;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + have, 1);
		if (n <= 0)
			return NULL;
		have += (size_t)n;
		buf[have] = '\0';
		if (buf[have - 1] != '\n')
			continue;
		line = buf;
		if (!strncmp(line, want, strlen(want)))
			return line;
		have = 0;
	}
	return NULL;
}

/* The memory limit xschedctl lists for @pid's queue, -1 if not listed yet. */
static long long listed_memory_limit(struct it_env *e, pid_t pid, long long *held)
{
	char *out = it_ctl_output(e, XS_CTL_BIN, IT_ARGS("--socket", e->ctl, "list", "-o", "json"));
	char key[32], *p;
	long long limit = -1;

	snprintf(key, sizeof(key), "\"pid\":%d,", (int)pid);
	p = strstr(out, key);
	if (p && (p = strstr(p, "\"memory_bytes\":")))
		*held = strtoll(p + 15, NULL, 10);
	if (p && (p = strstr(p, "\"memory_limit_bytes\":")))
		limit = strncmp(p + 21, "null", 4) ? strtoll(p + 21, NULL, 10) : 0;
	free(out);
	return limit;
}

/*
 * Device memory through the daemon: the uid's ceiling (uid.0.memory_limit
 * = 32M) caps the process's own limit (64M) as soon as it is connected;
 * the process's holdings show in `xschedctl list` (MEM, JSON), `devices`
 * and the metrics without a message per allocation; root raises the
 * process's limit at run time with `xschedctl set memory-limit`, and its
 * next allocation succeeds; a SIGHUP that lowers the ceiling reaches it
 * too.
 */
static void cuda_memory_through_daemon(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { sim_lib_var(), shim_preload(), "XSCHED_MEMORY_LIMIT=64M", NULL };
	char fifo[IT_PATH + 16], buf[256], pid_s[16], *out;
	long long held = 0;
	pid_t pid;
	int i, w, fd, st = 0;

	it_config(e, "[limits]\nuid.0.memory_limit = 32M\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	snprintf(fifo, sizeof(fifo), "%s/cmds", e->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid = it_spawn(e, IT_ARGS(XS_CU_MEM_PROG, "serve", fifo), vars, true, -1);
	i = it_kid_index(e, pid);
	fd = e->kid_out[i];
	assert_non_null(read_line_until(fd, "serving", buf, sizeof(buf)));
	w = open(fifo, O_WRONLY | O_CLOEXEC);
	assert_true(w >= 0);
	dprintf(w, "alloc 16M\nwork\n");
	assert_non_null(read_line_until(fd, "alloc 16M: 0", buf, sizeof(buf)));
	assert_non_null(read_line_until(fd, "work ok", buf, sizeof(buf)));
	/* Connected: the ceiling is the limit, and the daemon sees 16 MiB. */
	assert_true(IT_WAIT_UNTIL(listed_memory_limit(e, pid, &held) == 32 << 20, 10000));
	/* And the word "work" launches on. */
	assert_int_equal(held, (16 << 20) + 4);
	dprintf(w, "alloc 20M\n");
	assert_non_null(read_line_until(fd, "alloc 20M: 2", buf, sizeof(buf)));
	dprintf(w, "info\n");
	assert_non_null(read_line_until(fd, "info total=33554432 free=16777212", buf,
					sizeof(buf)));
	/* Root raises it; the process applies it at once. */
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	free(it_ctl_output(e, XS_CTL_BIN, IT_ARGS("set", "memory-limit",
						  "128M", "--pid", pid_s)));
	assert_true(IT_WAIT_UNTIL(listed_memory_limit(e, pid, &held) == 128 << 20, 10000));
	dprintf(w, "alloc 20M\n");
	assert_non_null(read_line_until(fd, "alloc 20M: 0", buf, sizeof(buf)));
	assert_true(IT_WAIT_UNTIL(listed_memory_limit(e, pid, &held) == 128 << 20 &&
				  held == (36 << 20) + 4, 10000));
	out = it_ctl_output(e, XS_CTL_BIN, IT_ARGS("--socket", e->ctl, "list"));
	if (!strstr(out, "36.0 MiB/128 MiB"))
		fail_msg("no MEM cell in:\n%s", out);
	free(out);
	out = it_ctl_output(e, XS_CTL_BIN, IT_ARGS("--socket", e->ctl, "devices"));
	if (!strstr(out, "memory: 36.0 MiB held by 1 process (1 under a limit) of 1 GiB"))
		fail_msg("no memory line in:\n%s", out);
	free(out);
	out = it_ctl_output(e, XS_CTL_BIN, IT_ARGS("--socket", e->ctl, "metrics"));
	snprintf(buf, sizeof(buf), "xsched_process_device_memory_bytes{pid=\"%d\"", (int)pid);
	if (!strstr(out, buf) || !strstr(out, "kind=\"device\"} 37748740\n") ||
	    !strstr(out, "xsched_device_memory_bytes{domain=\"1\",kind=\"used\"} 37748740\n"))
		fail_msg("no memory series in:\n%s", out);
	free(out);
	/* Back to the process's own under the ceiling; then a reload lowers
	 * the ceiling to 8M: nothing is freed, the next allocation fails. */
	free(it_ctl_output(e, XS_CTL_BIN, IT_ARGS("set", "memory-limit",
						  "none", "--pid", pid_s)));
	assert_true(IT_WAIT_UNTIL(listed_memory_limit(e, pid, &held) == 32 << 20, 10000));
	it_config(e, "[limits]\nuid.0.memory_limit = 8M\n");
	it_daemon_signal(e, SIGHUP);
	assert_true(IT_WAIT_UNTIL(listed_memory_limit(e, pid, &held) == 8 << 20, 10000));
	assert_int_equal(held, (36 << 20) + 4);
	dprintf(w, "alloc 1\nfree\nalloc 7M\nquit\n");
	assert_non_null(read_line_until(fd, "alloc 1: 2", buf, sizeof(buf)));
	assert_non_null(read_line_until(fd, "freed 2", buf, sizeof(buf)));
	assert_non_null(read_line_until(fd, "alloc 7M: 0", buf, sizeof(buf)));
	close(w);
	assert_int_equal(it_reap(e, pid, 10000, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
	e->kid_out[i] = -1;
	it_daemon_check(e);
	e->ok = true;
}

/* A serving cu_mem_prog (see its usage): its pid, stdout and command pipe. */
struct server {
	pid_t pid;
	int out, cmd, i;
};

static struct server serve_start(struct it_env *e, const char *name, const char *const *vars)
{
	char fifo[IT_PATH + 32], buf[128];
	struct server v;

	snprintf(fifo, sizeof(fifo), "%s/%s", e->dir, name);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	v.pid = it_spawn(e, IT_ARGS(XS_CU_MEM_PROG, "serve", fifo), vars, true, -1);
	v.i = it_kid_index(e, v.pid);
	v.out = e->kid_out[v.i];
	assert_non_null(read_line_until(v.out, "serving", buf, sizeof(buf)));
	v.cmd = open(fifo, O_WRONLY | O_CLOEXEC);
	assert_true(v.cmd >= 0);
	return v;
}

/* Sends @cmd and waits for a line starting with @want. */
static void serve_expect(struct server *v, const char *cmd, const char *want)
{
	char buf[256];

	dprintf(v->cmd, "%s\n", cmd);
	if (!read_line_until(v->out, want, buf, sizeof(buf)))
		fail_msg("pid %d: '%s' did not answer '%s' (last: '%s')", (int)v->pid, cmd, want,
			 buf);
}

static void serve_end(struct it_env *e, struct server *v)
{
	int st = 0;

	dprintf(v->cmd, "quit\n");
	close(v->cmd);
	assert_int_equal(it_reap(e, v->pid, 10000, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(v->out);
	e->kid_out[v->i] = -1;
}

/* @pid's memory_evicted_bytes in `xschedctl list -o json`, -1 if not listed. */
static long long listed_evicted(struct it_env *e, pid_t pid)
{
	char *out = it_ctl_output(e, XS_CTL_BIN, IT_ARGS("list", "-o", "json"));
	char key[32], *p;
	long long n = -1;

	snprintf(key, sizeof(key), "\"pid\":%d,", (int)pid);
	p = strstr(out, key);
	if (p && (p = strstr(p, "\"memory_evicted_bytes\":")))
		n = strtoll(p + 23, NULL, 10);
	free(out);
	return n;
}

/*
 * Memory preemption through the daemon ([memory] preemption = yes): a
 * background of priority -5 fills 42 of a 64 MiB simulated device with
 * patterned data; natively another process's 40 MiB do not fit (OOM). A
 * foreground of priority 10 asks the same under the shim: the daemon
 * suspends the background, has it evict its memory, and the foreground's
 * allocation succeeds; the background stays suspended (listed with its
 * memory evicted), a call of its own that touches its memory waits; once
 * the foreground frees its memory the background gets its own back, at the
 * same addresses, identical byte for byte. @kill: MP_KILL_DAEMON kills the
 * daemon with SIGKILL while the memory is evicted: the background restores
 * on its own once there is room (fail-open), nothing lost; MP_KILL_VICTIM
 * kills the evicted background: the foreground and the daemon go on, the
 * daemon forgets it.
 */
enum { MP_NONE, MP_KILL_DAEMON, MP_KILL_VICTIM };

static void memory_preemption(struct it_env *e, int kill)
{
	bool kill_daemon = kill == MP_KILL_DAEMON;
	char dev[96], *log;
	const char *bg_vars[] = { sim_lib_var(), shim_preload(), dev, "XSCHED_SIM_DEVICE_MEMORY=64M",
				  "XSCHED_MEMORY_PREEMPTION=1", "XSCHED_PRIORITY=-5", NULL };
	const char *fg_vars[] = { sim_lib_var(), shim_preload(), dev, "XSCHED_SIM_DEVICE_MEMORY=64M",
				  "XSCHED_PRIORITY=10", NULL };
	const char *native_vars[] = { native_path_var(), dev, "XSCHED_SIM_DEVICE_MEMORY=64M",
				      NULL };
	struct server bg, fg, nat;

	snprintf(dev, sizeof(dev), "XSCHED_SIM_DEVICE=%s-mem", e->dev);
	it_config(e, "[memory]\npreemption = yes\nwait_ms = 5000\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	bg = serve_start(e, "bg", bg_vars);
	serve_expect(&bg, "alloc 40M", "alloc 40M: 0");
	serve_expect(&bg, "pattern 7", "pattern 7");
	serve_expect(&bg, "work", "work ok");
	nat = serve_start(e, "native", native_vars);
	serve_expect(&nat, "alloc 40M", "alloc 40M: 2");
	serve_end(e, &nat);
	fg = serve_start(e, "fg", fg_vars);
	serve_expect(&fg, "work", "work ok");
	serve_expect(&fg, "alloc 40M", "alloc 40M: 0");
	assert_int_equal(listed_evicted(e, bg.pid), 44040192);
	log = daemon_log(e);
	assert_non_null(strstr(log, "evicting pid"));
	free(log);
	/* Its own call waits while the memory is away. */
	dprintf(bg.cmd, "check 7\n");
	it_nap_ms(300);
	assert_int_equal(listed_evicted(e, bg.pid), 44040192);
	if (kill == MP_KILL_VICTIM) {
		it_kill(e, bg.pid);
		close(bg.cmd);
		close(bg.out);
		e->kid_out[bg.i] = -1;
		/* Nothing of the foreground's is lost: it allocates and runs on. */
		serve_expect(&fg, "alloc 20M", "alloc 20M: 0");
		serve_expect(&fg, "work", "work ok");
		assert_true(IT_WAIT_UNTIL(listed_evicted(e, bg.pid) == -1, 5000));
		serve_end(e, &fg);
		it_daemon_check(e);
		e->ok = true;
		return;
	}
	if (kill_daemon) {
		it_daemon_signal(e, SIGKILL);
		it_daemon_reap(e, 5000);
	}
	serve_expect(&fg, "free", "freed 1");
	{
		char buf[128];

		if (!read_line_until(bg.out, "check ok", buf, sizeof(buf)))
			fail_msg("the background's memory did not come back intact: '%s'", buf);
	}
	if (!kill_daemon)
		assert_true(IT_WAIT_UNTIL(listed_evicted(e, bg.pid) == 0, 5000));
	serve_expect(&bg, "work", "work ok");
	serve_expect(&bg, "check 7", "check ok");
	serve_end(e, &fg);
	serve_end(e, &bg);
	if (!kill_daemon)
		it_daemon_check(e);
	e->ok = true;
}

static void cuda_memory_preemption_through_daemon(void **state)
{
	memory_preemption(*state, MP_NONE);
}

static void cuda_memory_preemption_daemon_killed(void **state)
{
	memory_preemption(*state, MP_KILL_DAEMON);
}

static void cuda_memory_preemption_victim_killed(void **state)
{
	memory_preemption(*state, MP_KILL_VICTIM);
}

/*
 * xschedd killed (SIGKILL) a few milliseconds after the foreground's
 * allocation went to ask it for memory: before, during or after the
 * background's eviction, whichever the timing makes it. Whatever it was,
 * the foreground's allocation answers (0, or the driver's out-of-memory
 * without a daemon to free memory), nothing hangs, and the background's
 * memory comes back intact once there is room (fail-open).
 */
static void cuda_memory_preemption_daemon_killed_midway(void **state)
{
	struct it_env *e = *state;
	char dev[96], buf[128];
	const char *bg_vars[] = { sim_lib_var(), shim_preload(), dev, "XSCHED_SIM_DEVICE_MEMORY=64M",
				  "XSCHED_MEMORY_PREEMPTION=1", "XSCHED_PRIORITY=-5", NULL };
	const char *fg_vars[] = { sim_lib_var(), shim_preload(), dev, "XSCHED_SIM_DEVICE_MEMORY=64M",
				  "XSCHED_PRIORITY=10", NULL };
	struct server bg, fg;
	char *line;

	snprintf(dev, sizeof(dev), "XSCHED_SIM_DEVICE=%s-mid", e->dev);
	it_config(e, "[memory]\npreemption = yes\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	bg = serve_start(e, "bg", bg_vars);
	serve_expect(&bg, "alloc 40M", "alloc 40M: 0");
	serve_expect(&bg, "pattern 7", "pattern 7");
	serve_expect(&bg, "work", "work ok");
	fg = serve_start(e, "fg", fg_vars);
	serve_expect(&fg, "work", "work ok");
	dprintf(fg.cmd, "alloc 40M\n");
	it_nap_ms(3);
	it_daemon_signal(e, SIGKILL);
	it_daemon_reap(e, 5000);
	line = read_line_until(fg.out, "alloc 40M: ", buf, sizeof(buf));
	assert_non_null(line);
	print_message("the foreground's allocation answered: %s", line);
	if (!strncmp(line, "alloc 40M: 0", 12))
		serve_expect(&fg, "free", "freed 1");
	else
		assert_int_equal(strncmp(line, "alloc 40M: 2", 12), 0);
	serve_expect(&bg, "check 7", "check ok");
	serve_expect(&bg, "work", "work ok");
	serve_end(e, &fg);
	serve_end(e, &bg);
	e->ok = true;
}

/* @out without its "split ..." and "shim ..." lines. */
static char *results_only(char *out)
{
	char *r = out, *w = out;

	while (*r) {
		char *nl = strchr(r, '\n');
		size_t len = nl ? (size_t)(nl - r) + 1 : strlen(r);

		if (strncmp(r, "split ", 6) && strncmp(r, "shim ", 5)) {
			memmove(w, r, len);
			w += len;
		}
		r += len;
	}
	*w = '\0';
	return out;
}

/*
 * Graph slicing (cu_graph_prog): every way the shim may split the
 * graphs computes what the driver computes, line for line. With
 * XSCHED_CUDA_GRAPH_SLICE=1ns every node that takes device time is a
 * slice of its own, so the split of each launch is known: the
 * chain's 13 kernels, the DAG's 8 timed nodes (its empty node joins one),
 * the updated graph's 5 until an update the slices cannot take, 1 for the
 * graphs that launch whole, 3 for 4 kernels of which 2 share a slice with
 * an event pair. With 0 nothing is split; by default the queue's budget
 * decides (not asserted: learned durations vary).
 */
static void cuda_graph_slices_match_native(void **state)
{
	struct it_env *e = *state;
	const char *native_vars[] = { native_path_var(), "XSCHED_SCHEDULER=local", NULL };
	const char *vars[][6] = {
		{ native_path_var(), sim_lib_var(), shim_preload(), "XSCHED_SCHEDULER=local",
		  "XSCHED_CUDA_GRAPH_SLICE=1ns", NULL },
		{ native_path_var(), sim_lib_var(), shim_preload(), "XSCHED_SCHEDULER=local",
		  NULL },
		{ native_path_var(), sim_lib_var(), shim_preload(), "XSCHED_SCHEDULER=local",
		  "XSCHED_CUDA_GRAPH_SLICE=0", NULL },
	};
	static const char *const fine[] = {
		"split chain 13 13 13 13\n", "split dag 8 8\n",
		"split update 5 5 5 5 5 5 5 1\n", "split update_event 2 1\n",
		"split unsplit 1 1 3 1\n", "split order 2 2 2 2 2\n",
	};
	static const char *const whole[] = {
		"split chain 1 1 1 1\n", "split dag 1 1\n", "split update 1 1 1 1 1 1 1 1\n",
		"split update_event 1 1\n", "split unsplit 1 1 1 1\n", "split order 1 1 1 1 1\n",
	};
	char *native = run(e, IT_ARGS(XS_CU_GRAPH_PROG), native_vars);

	assert_non_null(strstr(native, "shim absent"));
	assert_non_null(strstr(native, "order "));
	for (size_t i = 0; i < 3; i++) {
		char *shim = run(e, IT_ARGS(XS_CU_GRAPH_PROG), vars[i]);

		assert_non_null(strstr(shim, "shim active"));
		for (size_t j = 0; i != 1 && j < sizeof(fine) / sizeof(fine[0]); j++)
			if (!strstr(shim, i == 0 ? fine[j] : whole[j]))
				fail_msg("run %zu: no \"%s\" in:\n%s", i, i == 0 ? fine[j] : whole[j],
					 shim);
		assert_string_equal(results_only(native), results_only(shim));
		free(shim);
	}
	free(native);
	e->ok = true;
}

/*
 * The foreground's median task latency (us) next to a background that
 * floods CUDA graphs of 20 x 20 ms kernels (400 ms a launch) through the
 * daemon, the background's graph slicing set by @slice.
 */
static double graph_flood_p50(struct it_env *e, const char *slice)
{
	const char *low_vars[] = { sim_lib_var(), shim_preload(), "XSCHED_PRIORITY=0", slice,
				   NULL };
	const char *high_vars[] = { sim_lib_var(), shim_preload(), "XSCHED_PRIORITY=10", NULL };
	double p50;
	pid_t low;
	char *out, *p;

	low = it_spawn(e, IT_ARGS(XS_BENCH_CU_LOAD, "--flood", "--graph", "--cmds", "20",
				  "--cmd-us", "20000"), low_vars, false, -1);
	it_nap_ms(1000);
	out = run(e, IT_ARGS(XS_BENCH_CU_LOAD, "--tasks", "10", "--cmds", "10", "--cmd-us", "2000",
			     "--period-us", "300000"), high_vars);
	p = strstr(out, "p50_us=");
	assert_non_null(p);
	p50 = strtod(p + 7, NULL);
	free(out);
	it_kill(e, low);
	return p50;
}

/*
 * Graph slicing makes a graph preemptible at Lv1. A high-priority task of
 * 10 x 2 ms kernels (20 ms alone) next to a sliced background graph waits
 * for the one background kernel running (20 ms); next to an unsliced one
 * its kernels alternate, on the simulated device's round-robin, with what
 * is left of the graph (200 ms for half the tasks). Margins of several
 * times the difference: a behaviour, not a timing goal
 * (bench/scenarios/graph.sh measures).
 */
static void cuda_graph_preemptible_through_daemon(void **state)
{
	struct it_env *e = *state;
	double sliced, whole;

	it_daemon_start(e, NULL);
	sliced = graph_flood_p50(e, "XSCHED_CUDA_GRAPH_SLICE=1");
	whole = graph_flood_p50(e, "XSCHED_CUDA_GRAPH_SLICE=0");
	print_message("foreground p50: %.0f us sliced, %.0f us unsliced\n", sliced, whole);
	assert_true(sliced < 100000);
	assert_true(whole > 100000);
	it_daemon_check(e);
	e->ok = true;
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(cuda_shim_matches_native, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_shim_first_on_library_path, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_loader_soname, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_loader_ptsz, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_loader_other_name, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_no_driver_as_native, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_runtime_program_as_native, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_disable_is_pass_through, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_cross_stream_wait_no_deadlock, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_priorities_through_daemon, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_adopted_stream_through_daemon, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_green_stream_through_daemon, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_queue_limit_said_once, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_queue_limit_default, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_limit, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_limit_malformed, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_every_api, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_pools, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_eviction_in_process, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_through_daemon, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_preemption_through_daemon, it_setup,
					it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_preemption_daemon_killed, it_setup,
					it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_preemption_victim_killed, it_setup,
					it_teardown),
	cmocka_unit_test_setup_teardown(cuda_memory_preemption_daemon_killed_midway, it_setup,
					it_teardown),
	cmocka_unit_test_setup_teardown(cuda_graph_slices_match_native, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(cuda_graph_preemptible_through_daemon, it_setup,
					it_teardown),
};

TU_MAIN(tests)
