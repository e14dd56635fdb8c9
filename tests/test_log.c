/*
 * XSCHED_LOG: what the shims and the agent say on stderr when they cannot
 * do what was asked, each case with the text it must say and how often
 * (once per process per cause), and silence when everything works.
 *
 * Children are real programs: cu_loader under the CUDA shim (the driver
 * not found, relative paths), cl_dlopen and ze_prog under their shims
 * where those are built, and xs_load (the xsched API) with or without a
 * private xschedd. Their stderr goes to a memfd (err_capture.h); this
 * process's own stderr is captured for the cases where its agent speaks.
 */
#include "it_util.h"
#include "err_capture.h"

#include "agent/agent.h"

#include <dlfcn.h>
#include <link.h>
#include <libgen.h>
#include <limits.h>

#define RUN_MS 60000
#define WAIT_MS 10000

/* What a child printed, and its exit status. */
struct out {
	char *out, *err;
	int status;
};

/* Starts @argv with @vars, stdout to a pipe, stderr to a memfd. */
static pid_t start(struct it_env *e, const char *const *argv, const char *const *vars,
		   int *errfd)
{
	*errfd = err_memfd();
	return it_spawn(e, argv, vars, true, *errfd);
}

/* Waits for child @pid started by start() and collects its output. */
static struct out finish(struct it_env *e, pid_t pid, int errfd)
{
	int i = it_kid_index(e, pid), st = 0, fd = e->kid_out[i];
	size_t len = 0, cap = 8192;
	struct out r = { .out = calloc(1, cap) };
	ssize_t n;

	assert_non_null(r.out);
	while ((n = read(fd, r.out + len, cap - 1 - len)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			r.out = realloc(r.out, cap *= 2);
			assert_non_null(r.out);
		}
	}
	r.out[len] = '\0';
	if (it_wait_pid(pid, RUN_MS, &st) < 0)
		fail_msg("%d still running", (int)pid);
	e->kid[i] = 0;
	close(fd);
	e->kid_out[i] = -1;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.err = err_text(errfd);
	close(errfd);
	return r;
}

static struct out run(struct it_env *e, const char *const *argv, const char *const *vars)
{
	int errfd;
	pid_t pid = start(e, argv, vars, &errfd);

	return finish(e, pid, errfd);
}

static void out_free(struct out *r)
{
	free(r->out);
	free(r->err);
}

/* Lines of @text (each ends with a newline). */
static size_t lines(const char *text)
{
	return err_count(text, "\n");
}

/* Whether memfd @fd holds @what exactly @n times. */
static bool fd_says(int fd, const char *what, size_t n)
{
	char *text = err_text(fd);
	bool yes = err_count(text, what) == n;

	free(text);
	return yes;
}

/* Fails, showing the child's output, unless it exited 0. */
#define EXITED_0(r)                                                                \
	do {                                                                       \
		if ((r)->status != 0)                                              \
			fail_msg("status %d; stderr:\n%s\nstdout:\n%s", (r)->status,   \
				 (r)->err, (r)->out);                               \
	} while (0)

/* Fails, showing the child's output, unless @text says @what @n times. */
#define SAYS(r, what, n)                                                            \
	do {                                                                        \
		size_t got_ = err_count((r)->err, (what));                          \
		if (got_ != (size_t)(n))                                            \
			fail_msg("'%s' said %zu times, not %d; stderr:\n%s\nstdout:\n%s", \
				 (what), got_, (int)(n), (r)->err, (r)->out);       \
	} while (0)

/* --- the CUDA shim: the driver not found, relative paths ------------------- */

static const char *cuda_preload(void)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s%s%s", XS_SAN_RT, XS_SAN_RT[0] ? " " : "",
		 XS_SHIM_PATH);
	return buf;
}

#define CU_INSTEAD "CUDA calls fail with CUDA_ERROR_NOT_INITIALIZED, as without a driver"

/* XSCHED_CUDA_LIB names no file: said once, with the path and the effect. */
static void log_cuda_lib_missing(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { cuda_preload(), "XSCHED_CUDA_LIB=/nonexistent/libcuda.so.1", NULL };
	struct out r = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), vars);

	assert_non_null(strstr(r.out, "no driver"));
	SAYS(&r, "xsched: XSCHED_CUDA_LIB=/nonexistent/libcuda.so.1: no such file: " CU_INSTEAD
		 "\n", 1);
	assert_int_equal(lines(r.err), 1);
	out_free(&r);
	e->ok = true;
}

/*
 * Nothing found by the search: the places looked in, the library path as
 * set, a relative entry as what it became. (Skipped where the machine has
 * a driver of its own for the search to find.)
 */
static void log_cuda_search_missing(void **state)
{
	struct it_env *e = *state;
	char cwd[PATH_MAX], path_var[IT_PATH + 64], want[2 * PATH_MAX];
	const char *vars[] = { cuda_preload(), path_var, NULL };
	struct out r;

	snprintf(path_var, sizeof(path_var), "LD_LIBRARY_PATH=%s/nolib:relnolib", e->dir);
	r = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), vars);
	if (!strstr(r.out, "no driver")) {
		out_free(&r);
		skip();
	}
	SAYS(&r, "xsched: libcuda.so.1 not found (XSCHED_CUDA_LIB unset; looked in "
		 "/etc/ld.so.cache, /usr/lib/x86_64-linux-gnu, ", 1);
	SAYS(&r, path_var, 1);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "relnolib as %s/relnolib): " CU_INSTEAD "\n", cwd);
	SAYS(&r, want, 1);
	assert_int_equal(lines(r.err), 1);
	out_free(&r);
	e->ok = true;
}

/*
 * Relative paths work as the dynamic loader takes them, from the current
 * directory: an LD_LIBRARY_PATH entry (where the machine has no driver of
 * its own, which the search would find first) and XSCHED_CUDA_LIB; the
 * latter said at info level, nothing at the default one.
 */
static void log_cuda_relative_paths(void **state)
{
	struct it_env *e = *state;
	char dir[PATH_MAX], parent[PATH_MAX], base[PATH_MAX], cwd[PATH_MAX];
	char path_var[PATH_MAX + 32], lib_var[PATH_MAX + 32], want[3 * PATH_MAX];
	const char *native[] = { "LD_LIBRARY_PATH=", NULL };
	const char *by_path[] = { cuda_preload(), path_var, "XSCHED_SCHEDULER=local", NULL };
	const char *by_lib[] = { cuda_preload(), lib_var, "XSCHED_SCHEDULER=local", NULL };
	const char *by_lib_info[] = { cuda_preload(), lib_var, "XSCHED_SCHEDULER=local",
				      "XSCHED_LOG=info", NULL };
	struct out r;
	bool system_driver;

	snprintf(dir, sizeof(dir), "%s", XS_SIM_CUDA_DIR);
	snprintf(parent, sizeof(parent), "%s", dirname(dir));
	snprintf(dir, sizeof(dir), "%s", XS_SIM_CUDA_DIR);
	snprintf(base, sizeof(base), "%s", basename(dir));
	snprintf(path_var, sizeof(path_var), "LD_LIBRARY_PATH=%s", base);
	snprintf(lib_var, sizeof(lib_var), "XSCHED_CUDA_LIB=%s/libcuda.so.1", base);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(parent), 0);

	r = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), native);
	system_driver = !strstr(r.out, "no driver");
	out_free(&r);
	if (!system_driver) {
		r = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), by_path);
		if (!strstr(r.out, "result 42 42") || !strstr(r.out, "launch via shim"))
			fail_msg("relative LD_LIBRARY_PATH=%s: %s%s", base, r.out, r.err);
		assert_string_equal(r.err, "");
		out_free(&r);
	}
	r = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), by_lib);
	if (!strstr(r.out, "result 42 42") || !strstr(r.out, "launch via shim"))
		fail_msg("relative %s: %s%s", lib_var, r.out, r.err);
	assert_string_equal(r.err, "");
	out_free(&r);
	r = run(e, IT_ARGS(XS_CU_LOADER, "libcuda.so.1"), by_lib_info);
	snprintf(want, sizeof(want), "xsched: %s: taken as %s/libcuda.so.1\n", lib_var,
		 XS_SIM_CUDA_DIR);
	SAYS(&r, want, 1);
	out_free(&r);
	assert_int_equal(chdir(cwd), 0);
	e->ok = true;
}

/* --- OpenCL and Level Zero shims: the loader not found, relative paths --- */

/* The file the dynamic loader maps for @soname, or false. */
static bool real_file(const char *soname, char *out, size_t len)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm = NULL;
	bool ok;

	if (!h)
		return false;
	ok = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0] == '/' &&
	     (size_t)snprintf(out, len, "%s", lm->l_name) < len;
	dlclose(h);
	return ok;
}

/*
 * @shim in front of @argv: with @env naming no file, said once with
 * @instead; with @env relative (from "/"), taken, and said at info level.
 */
static void shim_lib_case(struct it_env *e, const char *shim, const char *env,
			  const char *soname, const char *instead, const char *const *argv,
			  const char *extra)
{
	char preload[1024], missing[256], rel[PATH_MAX + 64], file[PATH_MAX],
		want[3 * PATH_MAX], cwd[PATH_MAX];
	const char *miss_vars[] = { preload, missing, extra, NULL };
	const char *rel_vars[] = { preload, rel, "XSCHED_LOG=info", "XSCHED_SCHEDULER=local",
				   extra, NULL };
	struct out r;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s%s%s", XS_SAN_RT,
		 XS_SAN_RT[0] ? " " : "", shim);
	snprintf(missing, sizeof(missing), "%s=/nonexistent/%s", env, soname);
	r = run(e, argv, miss_vars);
	snprintf(want, sizeof(want), "xsched: %s: no such file: %s\n", missing, instead);
	SAYS(&r, want, 1);
	out_free(&r);

	if (!real_file(soname, file, sizeof(file)))
		skip();
	snprintf(rel, sizeof(rel), "%s=%s", env, file + 1);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/"), 0);
	r = run(e, argv, rel_vars);
	assert_int_equal(chdir(cwd), 0);
	snprintf(want, sizeof(want), "xsched: %s: taken as %s\n", rel, file);
	SAYS(&r, want, 1);
	snprintf(want, sizeof(want), "xsched: opened the real library %s\n", file);
	SAYS(&r, want, 1);
	out_free(&r);
}

static void log_opencl_lib(void **state)
{
#ifdef XS_CL_SHIM_PATH
	shim_lib_case(*state, XS_CL_SHIM_PATH, "XSCHED_OPENCL_LIB", "libOpenCL.so.1",
		      "OpenCL calls fail with CL_INVALID_PLATFORM, as without a platform",
		      IT_ARGS(XS_CL_DLOPEN, "libOpenCL.so.1"), "POCL_CACHE_DIR=" XS_POCL_CACHE);
	((struct it_env *)*state)->ok = true;
#else
	(void)state;
	skip();
#endif
}

static void log_ze_lib(void **state)
{
#ifdef XS_ZE_SHIM_PATH
	shim_lib_case(*state, XS_ZE_SHIM_PATH, "XSCHED_ZE_LIB", "libze_loader.so.1",
		      "Level Zero calls fail with ZE_RESULT_ERROR_UNINITIALIZED, as without a "
		      "loader", IT_ARGS(XS_ZE_PROG, "order"),
		      "ZE_ENABLE_ALT_DRIVERS=" XS_SIM_ZE_PATH);
	((struct it_env *)*state)->ok = true;
#else
	(void)state;
	skip();
#endif
}

/* --- the agent: no daemon, a daemon lost, settings ----------------------- */

static char sock_var[IT_PATH + 32];

/* XSCHED_SOCKET of the case's daemon (which may not run). */
static const char *socket_var(struct it_env *e)
{
	snprintf(sock_var, sizeof(sock_var), "XSCHED_SOCKET=%s", e->sock);
	return sock_var;
}

/*
 * No daemon: said once although the agent retries, and the work runs.
 * At info level, a daemon started later: its connection is said too.
 */
static void log_no_daemon(void **state)
{
	struct it_env *e = *state;
	char want[IT_PATH + 128];
	const char *vars[] = { socket_var(e), NULL };
	const char *info[] = { socket_var(e), "XSCHED_LOG=info", NULL };
	struct it_result res;
	struct out r;
	pid_t l;
	int errfd;

	it_guard(90);
	r = run(e, IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3", "--cmd-us", "500",
			   "--tasks", "40", "--period-us", "10000"), vars);
	EXITED_0(&r);
	assert_int_equal(it_parse(r.out, &res), 0);
	assert_int_equal(res.tasks, 40);
	snprintf(want, sizeof(want), "xsched: no scheduler daemon at %s (No such file or "
		 "directory): queues run unscheduled; retrying in the background\n", e->sock);
	SAYS(&r, want, 1);
	assert_int_equal(lines(r.err), 1);
	out_free(&r);

	l = start(e, IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3", "--cmd-us", "500",
			     "--tasks", "5", "--wait-connected-ms", "30000"), info, &errfd);
	assert_true(IT_WAIT_UNTIL(fd_says(errfd, "no scheduler daemon", 1), WAIT_MS));
	it_daemon_start(e, NULL);
	r = finish(e, l, errfd);
	EXITED_0(&r);
	SAYS(&r, want, 1);
	snprintf(want, sizeof(want), "xsched: connected to the scheduler daemon at %s: "
		 "queues are scheduled\n", e->sock);
	SAYS(&r, want, 1);
	out_free(&r);
	it_daemon_check(e);
	e->ok = true;
}

/* The daemon killed under a client: said once; the work completes. */
static void log_daemon_lost(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { socket_var(e), NULL };
	struct ipc_queue_rec rec;
	struct it_result res;
	struct out r;
	pid_t l;
	int errfd;

	it_guard(90);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	l = start(e, IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3", "--cmd-us", "500",
			     "--tasks", "100", "--period-us", "10000", "--wait-connected-ms",
			     "10000"), vars, &errfd);
	/* Its tasks started: it saw the connection before losing it. */
	assert_true(IT_WAIT_UNTIL(it_queues(e, l, &rec) == 1 && rec.submitted > 0, WAIT_MS));
	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	it_daemon_reap(e, WAIT_MS);
	r = finish(e, l, errfd);
	EXITED_0(&r);
	assert_int_equal(it_parse(r.out, &res), 0);
	assert_int_equal(res.tasks, 100);
	SAYS(&r, "xsched: lost the connection to the scheduler daemon: queues run "
		 "unscheduled; reconnecting in the background\n", 1);
	SAYS(&r, "xsched: no scheduler daemon at", 1);
	/* A retry can reach the dying daemon's listening socket before it
	 * goes: that is said too, as what it is. */
	if (lines(r.err) != 2 + err_count(r.err, "closed the connection during the handshake"))
		fail_msg("stderr:\n%s", r.err);
	out_free(&r);
	e->ok = true;
}

/*
 * A daemon stopped before the client came: the handshake gets no answer,
 * said once; the work runs unscheduled meanwhile.
 */
static void log_daemon_silent(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { socket_var(e), NULL };
	struct it_result res;
	struct out r;
	char want[IT_PATH + 128];

	it_guard(90);
	it_daemon_start(e, NULL);
	it_daemon_signal(e, SIGSTOP);
	r = run(e, IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3", "--cmd-us", "500",
			   "--tasks", "300", "--period-us", "10000"), vars);
	it_daemon_signal(e, SIGCONT);
	EXITED_0(&r);
	assert_int_equal(it_parse(r.out, &res), 0);
	assert_int_equal(res.tasks, 300);
	snprintf(want, sizeof(want), "xsched: the scheduler daemon at %s did not answer the "
		 "handshake within 2 s: queues run unscheduled; retrying in the background\n",
		 e->sock);
	SAYS(&r, want, 1);
	out_free(&r);
	it_daemon_check(e);
	e->ok = true;
}

/*
 * Everything fine: not a word at the default level, over many commands.
 * At debug level, the connection and the registration are said.
 */
static void log_silent_when_fine(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { socket_var(e), NULL };
	const char *debug[] = { socket_var(e), "XSCHED_LOG=debug", NULL };
	const char *const *argv = IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3",
					  "--cmd-us", "20", "--cmds", "10", "--tasks", "200",
					  "--wait-connected-ms", "10000", "--priority", "3");
	struct out r;

	it_guard(90);
	it_daemon_start(e, NULL);
	r = run(e, argv, vars);
	EXITED_0(&r);
	assert_string_equal(r.err, "");
	out_free(&r);
	r = run(e, argv, debug);
	EXITED_0(&r);
	SAYS(&r, "xsched: connected to ", 1);
	SAYS(&r, "registered as ", 1);
	out_free(&r);
	it_daemon_check(e);
	e->ok = true;
}

/*
 * Malformed settings: each said once, naming the variable, its value and
 * what is done instead; the work runs. XSCHED_LOG=error hides them.
 */
static void log_bad_settings(void **state)
{
	struct it_env *e = *state;
	const char *bad[] = {
		socket_var(e), "XSCHED_PRIORITY=abc", "XSCHED_SHARE=-5", "XSCHED_DEADLINE_US=12x",
		"XSCHED_LAXITY_US=99999999999999", "XSCHED_SCHEDULER=bogus",
		"XSCHED_DAEMON_TIMEOUT_MS=soon", "XSCHED_LOG=loud", NULL,
	};
	const char *local[] = { "XSCHED_SCHEDULER=local", "XSCHED_POLICY=nope",
				"XSCHED_CONTENTION_WINDOW=99", NULL };
	const char *quiet[] = { socket_var(e), "XSCHED_PRIORITY=abc", "XSCHED_SCHEDULER=bogus",
				"XSCHED_LOG=error", NULL };
	const char *const *argv = IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3",
					  "--cmd-us", "200", "--tasks", "20",
					  "--wait-connected-ms", "10000");
	struct ipc_queue_rec rec;
	struct out r;

	it_guard(90);
	it_daemon_start(e, NULL);
	r = run(e, argv, bad);
	EXITED_0(&r);
	SAYS(&r, "xsched: XSCHED_LOG=loud is not error, warn, info or debug: using warn\n", 1);
	SAYS(&r, "xsched: XSCHED_PRIORITY=abc is not an integer from -100 to 100: ignored, "
		 "as if unset\n", 1);
	SAYS(&r, "xsched: XSCHED_SHARE=-5 is not an integer from 0 to 1000000: ignored", 1);
	SAYS(&r, "xsched: XSCHED_DEADLINE_US=12x is not an integer from 0 to 3600000000: "
		 "ignored", 1);
	SAYS(&r, "xsched: XSCHED_LAXITY_US=99999999999999 is not an integer from 0 to "
		 "3600000000: ignored", 1);
	SAYS(&r, "xsched: XSCHED_SCHEDULER=bogus is not global, local or none: using global "
		 "(the daemon schedules)\n", 1);
	SAYS(&r, "xsched: XSCHED_DAEMON_TIMEOUT_MS=soon is not a number of milliseconds "
		 "(0 to 3600000): using 1000\n", 1);
	assert_int_equal(lines(r.err), 7);
	out_free(&r);

	r = run(e, IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3", "--cmd-us", "200",
			   "--tasks", "20"), local);
	EXITED_0(&r);
	SAYS(&r, "xsched: XSCHED_POLICY=nope is not a built-in policy: using hpf\n", 1);
	SAYS(&r, "xsched: XSCHED_CONTENTION_WINDOW=99 is not an integer from 0 to 64: "
		 "using 1\n", 1);
	assert_int_equal(lines(r.err), 2);
	out_free(&r);

	r = run(e, argv, quiet);
	EXITED_0(&r);
	assert_string_equal(r.err, "");
	out_free(&r);

	/* Ignored means unset: the queue got the daemon's default. */
	it_ctl_open(e);
	{
		int errfd;
		pid_t l = start(e, IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3",
					   "--cmd-us", "1000", "--flood", "--duration-s", "60",
					   "--wait-connected-ms", "10000"), bad, &errfd);

		assert_true(IT_WAIT_UNTIL(it_queues(e, l, &rec) == 1, WAIT_MS));
		assert_int_equal(rec.hint[IPC_KEY_PRIORITY], 0);
		assert_int_equal(rec.hint[IPC_KEY_SHARE], 0);
		it_kill(e, l);
		close(errfd);
	}
	it_daemon_check(e);
	e->ok = true;
}

/*
 * More queues than the daemon takes per process (max_queues_per_client):
 * the others run unscheduled, said once although two are left out.
 */
static void log_queues_over_limit(void **state)
{
	struct it_env *e = *state;
	xs_queue *q[3];
	char *err;

	it_guard(90);
	it_config(e, "[daemon]\nmax_queues_per_client = 1\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	err_capture();
	for (int i = 0; i < 3; i++)
		q[i] = it_queue(e, 0);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 1,
				  WAIT_MS));
	for (int i = 0; i < 3; i++)
		assert_int_equal(xs_wait(q[i], it_submit(q[i], 3, 100)), 0);
	assert_true(IT_WAIT_UNTIL(fd_says(2, "xsched:", 1), WAIT_MS));
	err = err_captured();
	assert_non_null(strstr(err, "xsched: xschedd takes 1 queues per process "
				    "(max_queues_per_client): the others run unscheduled\n"));
	free(err);
	err_release();
	it_daemon_check(e);
	e->ok = true;
}

/* --- the priority ceiling (root: a client of another uid) ----------------- */

/* Starts @argv as @uid/@gid (stdout to a pipe, stderr to @errfd). */
static pid_t start_as(struct it_env *e, uid_t uid, gid_t gid, const char *const *argv,
		      const char *const *vars, int errfd)
{
	char **envp = it_envp(vars);
	pid_t parent = getpid(), pid;
	int i = it_slot(e), p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		it_child_init(parent);
		if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
			_exit(126);
		/* Changing credentials cleared the parent-death signal. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent || dup2(p[1], 1) < 0 || dup2(errfd, 2) < 0)
			_exit(127);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	free(envp);
	close(p[1]);
	e->kid[i] = pid;
	e->kid_out[i] = p[0];
	return pid;
}

/*
 * A forked child that becomes @uid, creates a queue with no hint, and
 * once told (a byte on @go) raises its priority to 10; its stderr goes
 * to @errfd. Never returns; asserts nothing (it_util.h).
 */
static void raise_child(struct it_env *e, uid_t uid, gid_t gid, int errfd, int go)
{
	struct pollfd p = { .fd = go, .events = POLLIN };
	xs_hwq *hwq;
	xs_queue *q;
	char c;

	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0 ||
	    dup2(errfd, 2) < 0)
		_exit(10);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	unsetenv("XSCHED_PRIORITY");
	if (xs_sim_hwq_create(e->dev, &hwq) < 0 || xs_queue_create(hwq, NULL, &q) < 0)
		_exit(11);
	if (poll(&p, 1, 30000) != 1 || read(go, &c, 1) != 1)
		_exit(12);
	if (xs_queue_set_hint(q, XS_HINT_PRIORITY, 10) < 0)
		_exit(13);
	pause();
	_exit(0);
}

/*
 * A user asks for priority 10 above its ceiling of 3: the daemon clamps
 * (as before) and the process says so, once, with the ceiling's uid and
 * the priority it got. Raised later, the daemon refuses (as before), and
 * the process says that.
 */
static void log_priority_clamped(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { socket_var(e), "XSCHED_PRIORITY=10", NULL };
	struct passwd *pw = getpwnam("nobody");
	struct ipc_queue_rec rec;
	char want[256], *err;
	pid_t l;
	int errfd, go[2];

	it_guard(90);
	if (geteuid() != 0 || !pw || pw->pw_uid == 0)
		skip();
	it_config(e, "[limits]\npriority_ceiling = 3\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	errfd = err_memfd();
	l = start_as(e, pw->pw_uid, pw->pw_gid,
		     IT_ARGS(XS_LOAD_BIN, "--device", e->dev, "--level", "3", "--cmd-us", "1000",
			     "--flood", "--duration-s", "60", "--wait-connected-ms", "10000"),
		     vars, errfd);
	if (!IT_WAIT_UNTIL(it_queues(e, l, &rec) == 1, WAIT_MS))
		fail_msg("the unprivileged xs_load never registered (status of a kill: %d)",
			 kill(l, 0));
	assert_int_equal(rec.hint[IPC_KEY_PRIORITY], 3);
	snprintf(want, sizeof(want), "xsched: priority 10 is above the priority ceiling of uid "
		 "%u (limits in xschedd.conf): the queue runs at priority 3\n",
		 (unsigned)pw->pw_uid);
	if (!IT_WAIT_UNTIL(fd_says(errfd, want, 1), WAIT_MS)) {
		err = err_text(errfd);
		fail_msg("'%s' not said; stderr:\n%s", want, err);
	}
	it_kill(e, l);
	assert_true(fd_says(errfd, "xsched:", 1));
	close(errfd);

	/* Registered at 0, then raised above the ceiling: refused, said. */
	errfd = err_memfd();
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	l = it_fork(e);
	if (l == 0)
		raise_child(e, pw->pw_uid, pw->pw_gid, errfd, go[0]);
	close(go[0]);
	if (!IT_WAIT_UNTIL(it_queues(e, l, &rec) == 1, WAIT_MS))
		fail_msg("the unprivileged child never registered");
	assert_int_equal(write(go[1], "x", 1), 1);
	snprintf(want, sizeof(want), "xsched: xschedd refused a priority above the priority "
		 "ceiling of uid %u (limits in xschedd.conf): the queue keeps the priority it "
		 "had\n", (unsigned)pw->pw_uid);
	if (!IT_WAIT_UNTIL(fd_says(errfd, want, 1), WAIT_MS)) {
		err = err_text(errfd);
		fail_msg("'%s' not said; stderr:\n%s", want, err);
	}
	assert_true(it_queue_rec(e, rec.queue_id, &rec));
	assert_int_equal(rec.hint[IPC_KEY_PRIORITY], 0);
	it_kill(e, l);
	close(go[1]);
	assert_true(fd_says(errfd, "xsched:", 1));
	close(errfd);
	it_daemon_check(e);
	e->ok = true;
}

static int log_teardown(void **state)
{
	err_release();
	return it_teardown(state);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(log_cuda_lib_missing, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_cuda_search_missing, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_cuda_relative_paths, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_opencl_lib, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_ze_lib, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_no_daemon, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_daemon_lost, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_daemon_silent, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_silent_when_fine, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_bad_settings, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_queues_over_limit, it_setup, log_teardown),
		cmocka_unit_test_setup_teardown(log_priority_clamped, it_setup, log_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
