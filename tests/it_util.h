/*
 * Helpers for the integration tests with real processes (test_daemon_*.c):
 * an xschedd per test in a private temporary directory with its own
 * client, control and notify sockets and configuration file, xs_load
 * children started with a chosen environment and their result line
 * parsed, raw IPC clients, and queries through ipc_client.
 *
 * Every process and file a case creates is recorded in its struct it_env,
 * so the fixture teardown removes all of them even when an assertion
 * failed; an alarm() guard does the same from its signal handler (with
 * async-signal-safe calls only) when a case hangs. Children get
 * PR_SET_PDEATHSIG so nothing outlives a test killed by CTest.
 *
 * The cases measure what xsched decides, not how fast a crowded CPU runs
 * its threads: when allowed (root), the test process raises its CPU
 * priority to nice -10, which the daemon and every child inherit, so
 * that other work on the machine delays wakeups less.
 *
 * Children are only ever fork()ed from the test process; a forked child
 * that does not exec reports through a pipe or its exit status and never
 * calls a cmocka assertion (whose longjmp would continue the suite in it).
 */
#ifndef XS_IT_UTIL_H
#define XS_IT_UTIL_H

#include "test_util.h"

#include "base/clock.h"
#include "base/compiler.h"
#include "base/devid.h"
#include "ipc/ipc_client.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"
#include "sim/sim.h"
#include "xsched/sim.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#define IT_MS NSEC_PER_MSEC
#define IT_MAX_KIDS 32
#define IT_MAX_QUEUES 256
#define IT_PATH 112
#define IT_NICE (-10)
#define IT_USERDEL "/usr/sbin/userdel"
#define IT_GROUPDEL "/usr/sbin/groupdel"

extern char **environ;

/* The line xs_load prints. */
struct it_result {
	long tasks;
	double p50_us, p90_us, p99_us, max_us;
	long commands;
	double device_ms;
	long missed;
	double elapsed_ms;
};

struct it_env {
	char dir[IT_PATH];
	char sock[IT_PATH], ctl[IT_PATH], notify[IT_PATH], conf[IT_PATH], log[IT_PATH];
	char sock_lock[IT_PATH + 8], ctl_lock[IT_PATH + 8]; /* the daemon's lock files */
	char prom[IT_PATH + 16];        /* a metrics textfile a case may configure */
	char dev[64];
	char dev_path[256];
	int notify_fd;
	pid_t daemon;                   /* 0: none running (or reaped) */
	struct ipc_client c;            /* our control connection; fd -1: closed */
	pid_t kid[IT_MAX_KIDS];         /* 0: free or reaped */
	int kid_out[IT_MAX_KIDS];       /* read end of its stdout, -1: none */
	struct sim_dev *sim;            /* our handle on the device, for its counters */
	xs_hwq *hwq[IT_MAX_QUEUES];     /* this process's queues, destroyed last */
	xs_queue *q[IT_MAX_QUEUES];
	int nq;
	char user[32], group[32];       /* created by the case; "" none */
	bool ok;                        /* the case reached its end */
};

/* The environment the alarm and termination handler cleans up. */
static struct it_env *it_cur;

static inline void it_nap_ms(unsigned ms)
{
	clock_sleep_until(clock_now_ns() + (uint64_t)ms * IT_MS);
}

static inline uint64_t it_ms_since(uint64_t t0)
{
	return (clock_now_ns() - t0) / IT_MS;
}

/* Polls @cond every millisecond for up to @ms; true if it became true. */
#define IT_WAIT_UNTIL(cond, ms)                                              \
	({                                                                   \
		uint64_t it_end_ = clock_now_ns() + (uint64_t)(ms) * IT_MS;  \
		bool it_ok_;                                                 \
		while (!(it_ok_ = (cond)) && clock_now_ns() < it_end_)       \
			it_nap_ms(1);                                        \
		it_ok_;                                                      \
	})

/* --- processes ------------------------------------------------------------ */

/* Runs @path with @argv and waits (async-signal-safe: for the handler too). */
static inline int it_run_cmd(const char *path, char *const argv[])
{
	static char *const no_env[] = { NULL };
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execve(path, argv, no_env);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Kills and reaps everything of @e, removes its files. Signal-safe. */
static inline void it_kill_all(struct it_env *e)
{
	int i;

	for (i = 0; i < IT_MAX_KIDS; i++) {
		if (e->kid[i] > 0) {
			kill(e->kid[i], SIGKILL);
			waitpid(e->kid[i], NULL, 0);
			e->kid[i] = 0;
		}
		if (e->kid_out[i] >= 0) {
			close(e->kid_out[i]);
			e->kid_out[i] = -1;
		}
	}
	if (e->daemon > 0) {
		kill(e->daemon, SIGKILL);
		waitpid(e->daemon, NULL, 0);
		e->daemon = 0;
	}
}

static inline void it_remove_files(struct it_env *e)
{
	if (e->user[0]) {
		char *argv[] = { (char *)"userdel", e->user, NULL };

		it_run_cmd(IT_USERDEL, argv);
		e->user[0] = '\0';
	}
	if (e->group[0]) {
		char *argv[] = { (char *)"groupdel", e->group, NULL };

		it_run_cmd(IT_GROUPDEL, argv);
		e->group[0] = '\0';
	}
	if (e->dev_path[0])
		unlink(e->dev_path);
	if (e->dir[0]) {
		unlink(e->sock);
		unlink(e->ctl);
		unlink(e->sock_lock);
		unlink(e->ctl_lock);
		unlink(e->prom);
		unlink(e->notify);
		unlink(e->conf);
		unlink(e->log);
		rmdir(e->dir);
	}
}

static void it_on_alarm(int sig)
{
	static const char timeout[] = "test_daemon_*: the case timed out (alarm guard)\n";
	static const char killed[] = "test_daemon_*: terminated by a signal, cleaning up\n";
	const char *msg = sig == SIGALRM ? timeout : killed;

	if (write(2, msg, strlen(msg)) < 0)
		(void)errno;
	if (it_cur) {
		it_kill_all(it_cur);
		it_remove_files(it_cur);
	}
	_exit(1);
}

/* Arms the guard: the case fails (and is cleaned up) after @s seconds. */
static inline void it_guard(unsigned s)
{
	alarm(s);
}

static inline int it_slot(struct it_env *e)
{
	int i;

	for (i = 0; i < IT_MAX_KIDS; i++)
		if (e->kid[i] == 0 && e->kid_out[i] < 0)
			return i;
	fail_msg("too many children");
	return -1;
}

static inline void it_child_init(pid_t parent)
{
	/* The parent's cleanup handler is not ours to run. */
	it_cur = NULL;
	signal(SIGALRM, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	/* Dies with the test; a parent already gone means we are orphans. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
}

/*
 * Forks a child recorded in @e; returns its pid in the parent and 0 in the
 * child, which must end with _exit() and never assert.
 */
static inline pid_t it_fork(struct it_env *e)
{
	pid_t parent = getpid(), pid;
	int i = it_slot(e);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		it_child_init(parent);
		return 0;
	}
	e->kid[i] = pid;
	return pid;
}

/* Builds environ with @vars applied ("K=V" sets, "K" unsets); malloc()ed. */
static inline char **it_envp(const char *const *vars)
{
	size_t n = 0, m = 0, i, j, k;
	char **envp;

	while (environ[n])
		n++;
	while (vars && vars[m])
		m++;
	envp = calloc(n + m + 1, sizeof(*envp));
	assert_non_null(envp);
	for (i = 0, k = 0; i < n; i++) {
		bool drop = false;

		for (j = 0; j < m; j++) {
			size_t kl = strcspn(vars[j], "=");

			if (!strncmp(environ[i], vars[j], kl) && environ[i][kl] == '=')
				drop = true;
		}
		if (!drop)
			envp[k++] = environ[i];
	}
	for (j = 0; j < m; j++)
		if (strchr(vars[j], '='))
			envp[k++] = (char *)vars[j];
	return envp;
}

/*
 * Starts @argv (argv[0] is the path) with @vars over our environment;
 * its stdout is kept (for it_finish()) if @keep_out, its stderr goes to
 * @err_fd unless -1. Returns the pid.
 */
static inline pid_t it_spawn(struct it_env *e, const char *const *argv,
			     const char *const *vars, bool keep_out, int err_fd)
{
	char **envp = it_envp(vars);
	pid_t parent = getpid(), pid;
	int i = it_slot(e), p[2] = { -1, -1 };

	if (keep_out)
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		it_child_init(parent);
		if (keep_out && dup2(p[1], 1) < 0)
			_exit(127);
		if (err_fd >= 0 && dup2(err_fd, 2) < 0)
			_exit(127);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	free(envp);
	if (keep_out)
		close(p[1]);
	e->kid[i] = pid;
	e->kid_out[i] = p[0];
	return pid;
}

static inline int it_kid_index(struct it_env *e, pid_t pid)
{
	int i;

	for (i = 0; i < IT_MAX_KIDS; i++)
		if (e->kid[i] == pid)
			return i;
	fail_msg("pid %d is not a child of this case", (int)pid);
	return -1;
}

/*
 * Waits up to @ms for @pid to exit and reaps it. Returns 0 with its wait
 * status in *@status, or -ETIMEDOUT (it keeps running).
 */
static inline int it_wait_pid(pid_t pid, unsigned ms, int *status)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), st = 0;

	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		uint64_t end = clock_now_ns() + (uint64_t)ms * IT_MS;
		int n;

		do {
			int left = (int)((end - BASE_MIN(end, clock_now_ns())) / IT_MS);

			n = poll(&p, 1, left);
		} while (n < 0 && errno == EINTR);
		close(pfd);
		if (n == 0)
			return -ETIMEDOUT;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
	return 0;
}

/* Waits for child @pid of @e and forgets it. */
static inline int it_reap(struct it_env *e, pid_t pid, unsigned ms, int *status)
{
	int i = it_kid_index(e, pid), rc = it_wait_pid(pid, ms, status);

	if (rc == 0)
		e->kid[i] = 0;
	return rc;
}

/* SIGKILLs child @pid of @e and reaps it. */
static inline void it_kill(struct it_env *e, pid_t pid)
{
	int i = it_kid_index(e, pid);

	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(it_wait_pid(pid, 10000, NULL), 0);
	e->kid[i] = 0;
	if (e->kid_out[i] >= 0)
		close(e->kid_out[i]);
	e->kid_out[i] = -1;
}

static inline int it_parse(const char *line, struct it_result *r)
{
	const char *p = strstr(line, "tasks=");

	memset(r, 0, sizeof(*r));
	if (!p)
		return -EINVAL;
	return sscanf(p, "tasks=%ld p50_us=%lf p90_us=%lf p99_us=%lf max_us=%lf "
			 "commands=%ld device_ms=%lf missed=%ld elapsed_ms=%lf",
		      &r->tasks, &r->p50_us, &r->p90_us, &r->p99_us, &r->max_us,
		      &r->commands, &r->device_ms, &r->missed, &r->elapsed_ms) == 9 ?
		       0 : -EINVAL;
}

/*
 * Waits up to @ms for xs_load child @pid, which must exit 0, and parses
 * its result line into @r.
 */
static inline void it_finish(struct it_env *e, pid_t pid, unsigned ms, struct it_result *r)
{
	int i = it_kid_index(e, pid), st = 0, fd = e->kid_out[i];
	char buf[1024];
	size_t len = 0;
	ssize_t n;

	assert_true(fd >= 0);
	if (it_wait_pid(pid, ms, &st) < 0)
		fail_msg("xs_load (pid %d) still running after %u ms", (int)pid, ms);
	e->kid[i] = 0;
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	e->kid_out[i] = -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("xs_load (pid %d) failed: status 0x%x, output '%s'", (int)pid, st, buf);
	if (it_parse(buf, r) < 0)
		fail_msg("xs_load (pid %d): no result line in '%s'", (int)pid, buf);
}

/* Starts xs_load with @args over the case's device, and @vars. */
static inline pid_t it_load(struct it_env *e, const char *const *vars, const char *const *args)
{
	const char *argv[32] = { XS_LOAD_BIN, "--device", e->dev };
	int n = 3;

	while (args && *args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	return it_spawn(e, argv, vars, true, -1);
}

#define IT_ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* --- the daemon --------------------------------------------------------- */

/* Replaces the configuration file with @text. */
static inline void it_config(struct it_env *e, const char *text)
{
	char tmp[IT_PATH + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", e->conf);
	f = fopen(tmp, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, e->conf), 0);
}

/*
 * Waits up to @ms for a notify message with the line @what (e.g. "READY=1");
 * earlier messages are consumed. The whole message goes to @msg if not
 * NULL. Returns 0 or -ETIMEDOUT.
 */
static inline int it_notify_wait(struct it_env *e, const char *what, unsigned ms,
				 char *msg, size_t len)
{
	uint64_t end = clock_now_ns() + (uint64_t)ms * IT_MS;
	size_t wl = strlen(what);

	for (;;) {
		struct pollfd p = { .fd = e->notify_fd, .events = POLLIN };
		uint64_t now = clock_now_ns();
		char buf[512];
		const char *line;
		ssize_t n;

		if (now >= end)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)((end - now) / IT_MS) + 1) <= 0)
			continue;
		n = recv(e->notify_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (line = buf; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			if (!strncmp(line, what, wl) && (line[wl] == '\n' || line[wl] == '\0')) {
				if (msg)
					snprintf(msg, len, "%s", buf);
				return 0;
			}
		}
	}
}

/*
 * Starts xschedd on the case's sockets and configuration file with @extra
 * options and waits for READY=1. Its log goes to the case's log file.
 */
static inline void it_daemon_start(struct it_env *e, const char *const *extra)
{
	const char *argv[24] = { XSD_BIN, "--socket", e->sock, "--control-socket", e->ctl,
				 "--config", e->conf, "--verbose" };
	char notify[IT_PATH + 16];
	const char *vars[] = { notify, NULL };
	int n = 8, log, st;

	assert_int_equal(e->daemon, 0);
	while (extra && *extra && n < 23)
		argv[n++] = *extra++;
	argv[n] = NULL;
	snprintf(notify, sizeof(notify), "NOTIFY_SOCKET=%s", e->notify);
	log = open(e->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	assert_true(log >= 0);
	e->daemon = it_spawn(e, argv, vars, false, log);
	close(log);
	/* The daemon is tracked apart from the other children. */
	e->kid[it_kid_index(e, e->daemon)] = 0;
	if (it_notify_wait(e, "READY=1", 20000, NULL, 0) < 0) {
		if (it_wait_pid(e->daemon, 0, &st) == 0)
			e->daemon = 0;
		fail_msg("xschedd did not become ready (see %s)", e->log);
	}
}

/* Sends @sig to the daemon. */
static inline void it_daemon_signal(struct it_env *e, int sig)
{
	assert_true(e->daemon > 0);
	assert_int_equal(kill(e->daemon, sig), 0);
}

/* Waits up to @ms for the daemon to exit; returns its wait status. */
static inline int it_daemon_reap(struct it_env *e, unsigned ms)
{
	int st = 0;

	assert_true(e->daemon > 0);
	if (it_wait_pid(e->daemon, ms, &st) < 0)
		fail_msg("xschedd still running after %u ms", ms);
	e->daemon = 0;
	return st;
}

/* Opens the case's control connection (it counts as one client). */
static inline void it_ctl_open(struct it_env *e)
{
	int rc = ipc_client_open(&e->c, e->ctl, e->sock);

	if (rc < 0)
		fail_msg("cannot open the control socket: %s", strerror(-rc));
	assert_true(e->c.control);
}

static inline void it_ctl_close(struct it_env *e)
{
	ipc_client_close(&e->c);
}

static inline struct ipc_status_reply it_status(struct it_env *e)
{
	struct ipc_status_reply st;
	int rc = ipc_client_status(&e->c, &st);

	if (rc < 0)
		fail_msg("status: %s", strerror(-rc));
	return st;
}

/*
 * The queues of @pid (every queue if @pid is 0): returns how many, the
 * first copied to *@out if not NULL.
 */
static inline size_t it_queues(struct it_env *e, pid_t pid, struct ipc_queue_rec *out)
{
	struct ipc_queue_rec *r = NULL;
	size_t n = 0, i, k = 0;
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	rc = ipc_client_list(&e->c, &r, &n);
	if (rc < 0)
		fail_msg("list: %s", strerror(-rc));
	for (i = 0; i < n; i++) {
		if (pid && r[i].pid != pid)
			continue;
		if (k++ == 0 && out)
			*out = r[i];
	}
	free(r);
	return k;
}

/*
 * Runs the xschedctl at @bin with @args (at most 6) against the case's
 * daemon, which must exit 0; returns its stdout, malloc()ed.
 */
static inline char *it_ctl_output(struct it_env *e, const char *bin, const char *const *args)
{
	const char *argv[8] = { bin };
	pid_t pid;
	int i, fd, st = 0;
	size_t len = 0, cap = 16384;
	char *out = calloc(1, cap);
	ssize_t n;

	assert_non_null(out);
	for (i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	pid = it_spawn(e, argv, NULL, true, -1);
	i = it_kid_index(e, pid);
	fd = e->kid_out[i];
	while (len + 1 < cap && (n = read(fd, out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	assert_int_equal(it_reap(e, pid, 10000, &st), 0);
	close(fd);
	e->kid_out[i] = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return out;
}

/* The record of queue @id; false if it is not listed. */
static inline bool it_queue_rec(struct it_env *e, uint64_t id, struct ipc_queue_rec *out)
{
	struct ipc_queue_rec *r = NULL;
	size_t n = 0, i;
	bool found = false;

	assert_int_equal(ipc_client_list(&e->c, &r, &n), 0);
	for (i = 0; i < n; i++) {
		if (r[i].queue_id == id) {
			*out = r[i];
			found = true;
		}
	}
	free(r);
	return found;
}

/* --- queues of the test process -------------------------------------- */

/*
 * An XQueue of this process configured by @cfg, on a hardware queue of its
 * own on the case's device, with no hint set.
 */
static inline xs_queue *it_queue_cfg(struct it_env *e, const xs_queue_config *cfg)
{
	xs_queue *q = NULL;

	assert_true(e->nq < IT_MAX_QUEUES);
	assert_int_equal(xs_sim_hwq_create(e->dev, &e->hwq[e->nq]), 0);
	assert_int_equal(xs_queue_create(e->hwq[e->nq], cfg, &q), 0);
	e->q[e->nq++] = q;
	return q;
}

/* The same at Lv3 with the default window. */
static inline xs_queue *it_queue_bare(struct it_env *e)
{
	xs_queue_config cfg = XS_QUEUE_CONFIG_INIT;

	cfg.level = XS_LEVEL_3;
	return it_queue_cfg(e, &cfg);
}

/*
 * The same with hints (0: unset, except @priority), given through the
 * XSCHED_* environment so that they are part of the queue's registration.
 * (Set through the API right after creation, they could race with it: see
 * daemon_hint_during_registration.) it_setup() created the variables,
 * empty, so that changing them never reallocates environ under a thread
 * of the agent reading it.
 */
static inline xs_queue *it_queue_hints(struct it_env *e, int64_t priority, int64_t share,
				       int64_t deadline_us, int64_t laxity_us)
{
	static const char *const var[] = { "XSCHED_PRIORITY", "XSCHED_SHARE",
					   "XSCHED_DEADLINE_US", "XSCHED_LAXITY_US" };
	int64_t v[] = { priority, share, deadline_us, laxity_us };
	xs_queue *q;
	char buf[32];
	size_t i;

	for (i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf), "%lld", (long long)v[i]);
		setenv(var[i], i == 0 || v[i] ? buf : "", 1);
	}
	q = it_queue_bare(e);
	for (i = 0; i < 4; i++)
		setenv(var[i], "", 1);
	return q;
}

/* A queue with @priority. */
static inline xs_queue *it_queue(struct it_env *e, int64_t priority)
{
	return it_queue_hints(e, priority, 0, 0, 0);
}

/* Submits @n kernels of @us each; returns the last sequence number. */
static inline uint64_t it_submit(xs_queue *q, int n, uint64_t us)
{
	uint64_t seq = 0;
	int i;

	for (i = 0; i < n; i++) {
		xs_cmd *c = NULL;

		assert_int_equal(xs_sim_kernel(us * NSEC_PER_USEC, &c), 0);
		assert_int_equal(xs_submit(q, c, &seq), 0);
	}
	return seq;
}

static inline xs_queue_stats it_qstats(xs_queue *q)
{
	xs_queue_stats st;

	assert_int_equal(xs_queue_stats_get(q, &st), 0);
	return st;
}

/* Commands the case's device has executed so far. */
static inline uint64_t it_dev_commands(struct it_env *e)
{
	struct sim_dev_info info;

	if (!e->sim)
		assert_int_equal(sim_dev_open(e->dev, NULL, &e->sim), 0);
	sim_dev_info_get(e->sim, &info);
	return info.commands;
}

static inline bool it_suspended(xs_queue *q)
{
	xs_queue_stats st;

	return xs_queue_stats_get(q, &st) == 0 && st.suspended;
}

/* The window threshold @q runs with (a contention cap shows here). */
static inline int32_t it_threshold(xs_queue *q)
{
	xs_queue_info info;

	assert_int_equal(xs_queue_info_get(q, &info), 0);
	return info.threshold;
}

/* --- raw IPC clients -------------------------------------------------- */

union it_buf {
	char b[IPC_MSG_MAX + 64];
	uint64_t align;
};

static inline int it_raw_send(int fd, uint16_t type, uint32_t seq, const void *body, size_t len)
{
	union it_buf buf;
	int n = ipc_build(buf.b, sizeof(buf.b), type, seq, body, len);

	return n < 0 ? n : ipc_send(fd, buf.b, (size_t)n, NULL, 0);
}

/*
 * Floor pages (ipc_abi.h, "Run floors") the daemon sent raw clients of this
 * process, kept with their descriptors for the cases that map them.
 */
#define IT_FLOORS 16
static struct ipc_floor it_floor[IT_FLOORS];
static int it_floor_fd[IT_FLOORS];
static int it_nfloors;

/* Keeps IPC_FLOOR packet @buf of @n bytes and its descriptor; false if it
 * is not one. */
static inline bool it_raw_floor(const union it_buf *buf, int n, int *got, int ngot)
{
	struct ipc_msg m;

	if (n <= 0 || ipc_decode(buf->b, (size_t)n, IPC_FROM_DAEMON, &m) < 0 ||
	    m.hdr.type != IPC_FLOOR)
		return false;
	if (ngot == 1 && it_nfloors < IT_FLOORS) {
		memcpy(&it_floor[it_nfloors], m.body, sizeof(it_floor[0]));
		it_floor_fd[it_nfloors++] = got[0];
	} else {
		for (int i = 0; i < ngot; i++)
			close(got[i]);
	}
	return true;
}

/*
 * Receives one packet within @ms, past the floor pages (kept: it_floor).
 * Returns its length, 0 at end of stream, -ETIMEDOUT or -errno.
 * Descriptors that come with it go to @fds (3 at most) when not NULL, else
 * are closed.
 */
static inline int it_raw_recv(int fd, union it_buf *buf, unsigned ms, int *fds, int *nfds)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int got[IPC_MAX_FDS], ngot = 0, n, i;

	do {
		if (poll(&p, 1, (int)ms) == 0)
			return -ETIMEDOUT;
		ngot = 0;
		n = ipc_recv(fd, buf->b, sizeof(buf->b), got, &ngot, MSG_DONTWAIT);
	} while (it_raw_floor(buf, n, got, ngot));
	for (i = 0; i < ngot; i++) {
		if (fds && i < 3)
			fds[i] = got[i];
		else
			close(got[i]);
	}
	if (nfds)
		*nfds = fds ? BASE_MIN(ngot, 3) : 0;
	return n;
}

/*
 * What the daemon answered a request: the status of an IPC_REPLY (or of
 * a POLICY_REPLY), 0 for any other reply, 1 if it closed the connection,
 * -ETIMEDOUT if it said nothing within @ms.
 */
static inline int it_raw_answer(int fd, unsigned ms, union it_buf *out)
{
	union it_buf tmp, *buf = out ? out : &tmp;
	struct ipc_msg m;
	int n = it_raw_recv(fd, buf, ms, NULL, NULL);

	if (n == 0 || n == -ECONNRESET || n == -EPIPE)
		return 1;
	if (n < 0)
		return n;
	if (ipc_decode(buf->b, (size_t)n, IPC_FROM_DAEMON, &m) < 0)
		return -EBADMSG;
	if (m.hdr.type == IPC_REPLY)
		return ((const struct ipc_reply *)m.body)->status;
	if (m.hdr.type == IPC_POLICY_REPLY)
		return ((const struct ipc_policy_reply *)m.body)->status;
	return 0;
}

/* Sends raw @len bytes as one packet. */
static inline int it_raw_bytes(int fd, const void *p, size_t len)
{
	return ipc_send(fd, p, len, NULL, 0);
}

/*
 * Says hello as an agent: returns the number of slots, with the memfd and
 * both doorbells in @fds (closed if NULL), or a negative errno.
 */
static inline int it_raw_hello_agent(int fd, int *fds)
{
	struct ipc_hello h = { .role = IPC_ROLE_AGENT, .comm = "it-raw" };
	int got[3] = { -1, -1, -1 }, ngot = 0, n, i;
	union it_buf buf;
	struct ipc_msg m;

	n = it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h));
	if (n < 0)
		return n;
	n = it_raw_recv(fd, &buf, 10000, got, &ngot);
	if (n > 0 && ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) == 0 &&
	    m.hdr.type == IPC_HELLO_REPLY && ngot == 3) {
		n = (int)((const struct ipc_hello_reply *)m.body)->nslots;
	} else {
		n = n <= 0 ? (n ? n : -EPIPE) : -EBADMSG;
	}
	for (i = 0; i < ngot; i++) {
		if (fds && n > 0)
			fds[i] = got[i];
		else
			close(got[i]);
	}
	return n;
}

/*
 * A valid registration of slot @slot asking for @priority, for a queue on
 * the simulated device @dev, identified as the sim backend identifies it
 * (its UUID and PCI bus id, sim_ident.c): the scheduler's domain of that
 * device.
 */
static inline struct ipc_register it_reg_body(const char *dev, uint32_t slot, int64_t priority)
{
	struct ipc_register r = {
		.slot = slot, .level = 3, .level_max = 3,
		.hint_set = 1u << IPC_KEY_PRIORITY,
		.threshold = 16, .batch = 8, .budget_ns = 1000000,
	};
	struct devid id = { 0 };
	uint32_t domain, bus;
	uint8_t uuid[DEVID_UUID_BYTES];

	r.hint[IPC_KEY_PRIORITY] = priority;
	snprintf(r.device, sizeof(r.device), "sim:%.27s", dev);
	snprintf(r.backend, sizeof(r.backend), "sim");
	sim_dev_uuid(dev, uuid);
	sim_dev_pci(dev, &domain, &bus);
	devid_set_uuid(&id, uuid);
	devid_set_pci(&id, domain, bus, 0, 0);
	r.id_kind = id.kind;
	memcpy(r.ident, id.ident, sizeof(r.ident));
	memcpy(r.pci, id.pci, sizeof(r.pci));
	return r;
}

/*
 * Registers slot @slot with @priority: 0 with the daemon's answer in
 * @out, or the negative status it replied.
 */
static inline int it_raw_register(int fd, const char *dev, uint32_t slot, int64_t priority,
				  struct ipc_registered *out)
{
	struct ipc_register r = it_reg_body(dev, slot, priority);
	union it_buf buf;
	struct ipc_msg m;
	int n = it_raw_send(fd, IPC_REGISTER, 2, &r, sizeof(r));

	if (n < 0)
		return n;
	n = it_raw_recv(fd, &buf, 10000, NULL, NULL);
	if (n <= 0)
		return n ? n : -EPIPE;
	if (ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) < 0)
		return -EBADMSG;
	if (m.hdr.type == IPC_REPLY)
		return ((const struct ipc_reply *)m.body)->status;
	if (m.hdr.type != IPC_REGISTERED)
		return -EBADMSG;
	memcpy(out, m.body, sizeof(*out));
	return 0;
}

/* Sends IPC_SET_HINT for own slot @slot; returns the daemon's status. */
static inline int it_raw_set_hint(int fd, uint32_t slot, uint32_t key, int64_t value)
{
	struct ipc_set_hint h = { .slot = slot, .key = key, .value = value };
	int n = it_raw_send(fd, IPC_SET_HINT, 3, &h, sizeof(h));

	return n < 0 ? n : it_raw_answer(fd, 10000, NULL);
}

/* --- the fixture ------------------------------------------------------ */

static unsigned it_dev_seq;

static int it_setup(void **state)
{
	static const char *const empty[] = {
		"XSCHED_PRIORITY", "XSCHED_SHARE", "XSCHED_DEADLINE_US", "XSCHED_LAXITY_US",
	};
	static const char *const unset[] = {
		"XSCHED_DISABLE", "XSCHED_SCHEDULER", "XSCHED_POLICY",
		"XSCHED_SIM_ARBITRATION", "XSCHED_SIM_LEVEL", "XSCHED_SIM_LV2",
	};
	const char *tmp = getenv("TMPDIR"), *simdir = getenv("XSCHED_SIM_DIR");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct it_env *e = calloc(1, sizeof(*e));
	size_t i;
	int fd;

	if (!e)
		return -1;
	e->notify_fd = -1;
	e->c.fd = -1;
	for (i = 0; i < IT_MAX_KIDS; i++)
		e->kid_out[i] = -1;
	snprintf(e->dir, sizeof(e->dir), "%s/xsd-it-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
	if (strlen(e->dir) > 80 || !mkdtemp(e->dir)) {
		fprintf(stderr, "cannot create a short temporary directory under %s\n", e->dir);
		free(e);
		return -1;
	}
	/* Other uids (the security case) must reach the client socket. */
	chmod(e->dir, 0711);
	snprintf(e->sock, sizeof(e->sock), "%s/xschedd.sock", e->dir);
	snprintf(e->ctl, sizeof(e->ctl), "%s/xschedctl.sock", e->dir);
	snprintf(e->sock_lock, sizeof(e->sock_lock), "%s.lock", e->sock);
	snprintf(e->prom, sizeof(e->prom), "%s/xsched.prom", e->dir);
	snprintf(e->ctl_lock, sizeof(e->ctl_lock), "%s.lock", e->ctl);
	snprintf(e->notify, sizeof(e->notify), "%s/notify.sock", e->dir);
	snprintf(e->conf, sizeof(e->conf), "%s/xschedd.conf", e->dir);
	snprintf(e->log, sizeof(e->log), "%s/xschedd.log", e->dir);
	snprintf(e->dev, sizeof(e->dev), "xsit-%d-%u", (int)getpid(), it_dev_seq++);
	snprintf(e->dev_path, sizeof(e->dev_path), "%s/%s",
		 simdir && *simdir ? simdir : "/dev/shm", e->dev);
	sim_dev_unlink(e->dev);
	it_cur = e;
	if (getpriority(PRIO_PROCESS, 0) > IT_NICE)
		setpriority(PRIO_PROCESS, 0, IT_NICE);        /* best effort */
	/* A timeout, or ctest/timeout(1)/^C stopping us, still cleans up. */
	signal(SIGALRM, it_on_alarm);
	signal(SIGTERM, it_on_alarm);
	signal(SIGINT, it_on_alarm);
	it_guard(60);

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memcpy(sa.sun_path, e->notify, strlen(e->notify));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "notify socket %s: %s\n", e->notify, strerror(errno));
		if (fd >= 0)
			close(fd);
		it_remove_files(e);
		free(e);
		return -1;
	}
	e->notify_fd = fd;
	/* An empty configuration: never the host's /etc/xsched/xschedd.conf. */
	fd = open(e->conf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	/* This process's own queues use the case's daemon and device. */
	for (i = 0; i < sizeof(unset) / sizeof(unset[0]); i++)
		unsetenv(unset[i]);
	for (i = 0; i < sizeof(empty) / sizeof(empty[0]); i++)
		setenv(empty[i], "", 1);
	setenv("XSCHED_SOCKET", e->sock, 1);
	setenv("XSCHED_CONTROL_SOCKET", e->ctl, 1);
	setenv("XSCHED_SIM_DEVICE", e->dev, 1);
	*state = e;
	return 0;
}

/*
 * Fails if the daemon died on its own or its log holds a sanitizer report
 * (sanitized builds): called at the end of every case.
 */
static inline void it_daemon_check(struct it_env *e)
{
	static const char *const bad[] = { "Sanitizer", "runtime error:", "LeakSanitizer" };
	char *text;
	size_t i;
	long size;
	FILE *f;
	int st;

	if (e->daemon > 0 && waitpid(e->daemon, &st, WNOHANG) == e->daemon) {
		e->daemon = 0;
		fail_msg("xschedd died during the case: status 0x%x", st);
	}
	f = fopen(e->log, "r");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
	assert_non_null(text);
	if (size > 0 && fread(text, 1, (size_t)size, f) != (size_t)size)
		size = 0;
	fclose(f);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (strstr(text, bad[i])) {
			free(text);
			fail_msg("xschedd reported a sanitizer error (see its log)");
		}
	}
	free(text);
}

/* Prints the daemon's log of a failed case. */
static inline void it_dump_log(struct it_env *e)
{
	char buf[4096];
	ssize_t n;
	int fd = open(e->log, O_RDONLY | O_CLOEXEC);
	off_t size;

	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) ? size - (off_t)sizeof(buf) : 0, SEEK_SET);
	fprintf(stderr, "--- xschedd log (tail) ---\n");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stderr);
	fprintf(stderr, "--- end of log ---\n");
	close(fd);
}

/* After a failed case, where its teardown is: cmocka prints a failed
 * assertion's message only once teardown returned, so a hang there ends
 * at the alarm guard without it. */
static inline void it_teardown_step(struct it_env *e, const char *step)
{
	if (!e->ok)
		fprintf(stderr, "teardown: %s\n", step);
}

static int it_teardown(void **state)
{
	struct it_env *e = *state;
	int i;

	if (!e)
		return 0;
	alarm(0);
	it_guard(30);
	if (!e->ok) {
		it_dump_log(e);
		/* A case that failed may have left the daemon stopped, or out
		 * of descriptors, holding a queue of ours suspended: without
		 * it, that queue runs again (its agent lost the daemon). */
		it_teardown_step(e, "killing the daemon");
		if (e->daemon > 0) {
			kill(e->daemon, SIGKILL);
			waitpid(e->daemon, NULL, 0);
			e->daemon = 0;
		}
		it_teardown_step(e, "killing the children");
	}
	/* Children before the daemon (in a case that passed): a queue of ours
	 * suspended behind one then drains. */
	for (i = 0; i < IT_MAX_KIDS; i++) {
		if (e->kid[i] > 0) {
			kill(e->kid[i], SIGKILL);
			waitpid(e->kid[i], NULL, 0);
			e->kid[i] = 0;
		}
	}
	it_teardown_step(e, "destroying the case's queues");
	for (i = e->nq - 1; i >= 0; i--) {
		xs_queue_destroy(e->q[i], XS_DESTROY_DISCARD);
		xs_hwq_destroy(e->hwq[i]);
	}
	it_teardown_step(e, "closing the control connection and the daemon");
	sim_dev_close(e->sim);
	it_ctl_close(e);
	it_kill_all(e);
	if (e->notify_fd >= 0)
		close(e->notify_fd);
	it_remove_files(e);
	sim_dev_unlink(e->dev);
	it_cur = NULL;
	alarm(0);
	free(e);
	return 0;
}

#endif
