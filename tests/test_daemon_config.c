/*
 * xschedd end to end, configuration and operation: reloads (SIGHUP) that
 * apply at once, the loop's CPU policy, the command line, the log on a
 * terminal, one daemon per socket, messages that name their cause, and
 * metrics scoped to their reader. The conventions and shared helpers are
 * in test_daemon_util.h.
 */
#include "test_daemon_util.h"

/* --- 6. Reload ------------------------------------------------------------ */

/*
 * SIGHUP re-reads the configuration file: a new policy applies and the
 * notify protocol says RELOADING=1 (with MONOTONIC_USEC) then READY=1. A
 * broken file or an unknown policy keeps the running one, and says so
 * where an operator looks: the log, at error level, with the reason, and
 * systemd's STATUS=; "configuration reloaded" is never logged for it.
 */
static void daemon_sighup_reload(void **state)
{
	struct it_env *e = *state;
	char msg[512];
	struct ipc_queue_rec r;

	it_guard(60);
	it_config(e, "[policy]\nname = hpf\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_policy(e, "hpf");
	it_queue(e, 4);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1 &&
				  r.hint[IPC_KEY_PRIORITY] == 4, WAIT_MS));

	it_config(e, "[policy]\nname = edf\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "MONOTONIC_USEC="));
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_policy(e, "edf");
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 4);

	assert_non_null(strstr(msg, "STATUS=scheduling (policy edf)"));
	assert_int_equal(log_count(e, "configuration reloaded"), 1);

	it_config(e, "[policy]\nname = hpf\nno_such_key = 1\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_policy(e, "edf");
	if (!strstr(msg, "STATUS=reload failed: ") || !strstr(msg, ":3: unknown key [policy] no_such_key"))
		fail_msg("notify after a failed reload: '%s'", msg);
	assert_int_equal(log_count(e, "<3>xschedd: reload failed"), 1);
	assert_int_equal(log_count(e, ":3: unknown key [policy] no_such_key"), 1);

	it_config(e, "[policy]\nname = no-such-policy\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, msg, sizeof(msg)), 0);
	assert_policy(e, "edf");
	if (!strstr(msg, "STATUS=reload failed: policy no-such-policy: no such built-in policy"))
		fail_msg("notify after a failed reload: '%s'", msg);
	assert_int_equal(log_count(e, "<3>xschedd: reload failed"), 2);
	assert_int_equal(log_count(e, "configuration reloaded"), 1);
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 4);
	case_done(e);
}

/* prog_run() of @path as @uid must exit @rc with @what in its output. */
#define PROG_EXPECT(e, path, uid, rc, what, ...)                                   \
	do {                                                                       \
		char out_[4096];                                                   \
		int rc_ = prog_run(e, path, uid, IT_ARGS(__VA_ARGS__), out_,       \
				   sizeof(out_));                                  \
		if (rc_ != (rc) || !strstr(out_, what))                            \
			fail_msg("%s %s: exit %d, output '%s'; expected exit %d and "  \
				 "'%s'", path, #__VA_ARGS__, rc_, out_, rc, what); \
	} while (0)

/* xschedd with these arguments must exit @rc with @what in its output. */
#define XSD_EXPECT(e, rc, what, ...) PROG_EXPECT(e, XSD_BIN, (uid_t)-1, rc, what, __VA_ARGS__)

/* The CPU slice the kernel gives thread @tid, in ns (0: unknown). */
static uint64_t thread_slice_ns(pid_t tid)
{
	struct slice_attr at;

	if (slice_getattr(tid, &at) < 0 || at.policy != SCHED_OTHER)
		return 0;
	return at.runtime;
}

/* The scheduling attributes of @pid's thread named @comm: 0, or -ESRCH. */
static int named_thread_attr(pid_t pid, const char *comm, struct slice_attr *at)
{
	char path[320], name[32];
	struct dirent *d;
	int rc = -ESRCH;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while (rc < 0 && (d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && !strncmp(name, comm, strlen(comm)))
			rc = slice_getattr((pid_t)atoi(d->d_name), at);
		fclose(f);
	}
	closedir(dir);
	return rc;
}

/* The slice of @pid's thread named @comm; 0 if no such thread. */
static uint64_t named_thread_slice_ns(pid_t pid, const char *comm)
{
	struct slice_attr at;

	if (named_thread_attr(pid, comm, &at) < 0 || at.policy != SCHED_OTHER)
		return 0;
	return at.runtime;
}

/* Whether @pid has a thread named @comm under @policy at @prio. */
static bool named_thread_policy(pid_t pid, const char *comm, uint32_t policy, uint32_t prio)
{
	struct slice_attr at;

	return named_thread_attr(pid, comm, &at) == 0 && at.policy == policy &&
	       at.priority == prio;
}

/* "Max realtime timeout" of /proc/@pid/limits: soft and hard, in us. */
static bool rttime_limits(pid_t pid, char soft[32], char hard[32])
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "Max realtime timeout", 20) &&
			sscanf(line + 20, "%31s %31s", soft, hard) == 2;
	fclose(f);
	return found;
}

/*
 * [daemon] @key = @bad must fail --check-config; then the daemon starts
 * with @key = @good, and the case talks to it.
 */
static void start_after_refusal(struct it_env *e, const char *key, const char *bad,
				const char *good)
{
	char conf[128], why[160];

	snprintf(conf, sizeof(conf), "[daemon]\n%s = %s\n", key, bad);
	snprintf(why, sizeof(why), "bad value for [daemon] %s = %s", key, bad);
	it_config(e, conf);
	XSD_EXPECT(e, 1, why, "--check-config", "--config", e->conf);
	snprintf(conf, sizeof(conf), "[daemon]\n%s = %s\n", key, good);
	it_config(e, conf);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
}

/*
 * Short CPU slices for the threads that carry decisions: the daemon's
 * ([daemon] thread_slice_us, applied at start and at a reload, 0 giving the
 * kernel's back) and a process's agent and XQueue worker
 * (XSCHED_THREAD_SLICE_US); the application's own threads keep theirs. A
 * value the kernel would clamp is an error in the file.
 */
static void daemon_thread_slices(void **state)
{
	struct it_env *e = *state;
	const char *const vars[] = { "XSCHED_THREAD_SLICE_US=400", NULL };
	uint64_t main_ns;
	pid_t lo;

	if (!tu_kernel_at_least(6, 12))
		skip();
	it_guard(60);
	start_after_refusal(e, "thread_slice_us", "50", "300");
	assert_int_equal(thread_slice_ns(e->daemon), 300000);

	lo = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "1000", "--flood",
				      "--duration-s", "60", "--wait-connected-ms", "10000"));
	wait_ready(e, lo);
	assert_true(IT_WAIT_UNTIL(named_thread_slice_ns(lo, "xsched-agent") == 400000 &&
				  named_thread_slice_ns(lo, "xsched-worker") == 400000, WAIT_MS));
	main_ns = thread_slice_ns(lo);
	assert_true(main_ns > 0);
	assert_int_not_equal(main_ns, 400000);

	it_config(e, "[daemon]\nthread_slice_us = 0\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(thread_slice_ns(e->daemon), main_ns);   /* the kernel's */
	it_kill(e, lo);
	case_done(e);
}

/* Whether `xschedctl metrics` (as root) prints @line. */
static bool metrics_have(struct it_env *e, const char *line)
{
	static char out[1 << 16];

	return prog_run(e, XSCTL_BIN, (uid_t)-1, IT_ARGS("--control", e->ctl, "metrics"), out,
			sizeof(out)) == 0 && strstr(out, line);
}

/*
 * Real-time priority for the threads that carry decisions, when the
 * operator asks: [daemon] realtime_priority for the daemon's loop (with an
 * RLIMIT_RTTIME guard against a runaway loop; 0 at a reload gives the
 * normal policy and the slice back), XSCHED_THREAD_RTPRIO for a process's
 * agent thread only (its XQueue workers keep the slice). Needs root.
 */
static void daemon_realtime(void **state)
{
	struct it_env *e = *state;
	const char *const vars[] = { "XSCHED_THREAD_RTPRIO=1", NULL };
	char soft[32], hard[32];
	struct slice_attr at;
	pid_t lo;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	start_after_refusal(e, "realtime_priority", "100", "1");
	assert_int_equal(slice_getattr(e->daemon, &at), 0);
	assert_int_equal(at.policy, SCHED_FIFO);
	assert_int_equal(at.priority, 1);
	assert_true(metrics_have(e, "\nxsched_daemon_realtime_priority 1\n"));
	assert_true(rttime_limits(e->daemon, soft, hard));
	assert_string_equal(soft, "500000");
	assert_string_equal(hard, "1000000");

	lo = it_load(e, vars, IT_ARGS("--level", "3", "--cmd-us", "1000", "--flood",
				      "--duration-s", "60", "--wait-connected-ms", "10000"));
	wait_ready(e, lo);
	assert_true(IT_WAIT_UNTIL(named_thread_policy(lo, "xsched-agent", SCHED_FIFO, 1) &&
				  named_thread_policy(lo, "xsched-worker", SCHED_OTHER, 0),
				  WAIT_MS));
	assert_int_equal(slice_getattr(lo, &at), 0);
	assert_int_equal(at.policy, SCHED_OTHER);               /* the application's */

	it_config(e, "[daemon]\nrealtime_priority = 0\n");
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(slice_getattr(e->daemon, &at), 0);
	assert_int_equal(at.policy, SCHED_OTHER);
	if (tu_kernel_at_least(6, 12))
		assert_int_equal(at.runtime, SLICE_DEFAULT_US * 1000ull);
	assert_true(metrics_have(e, "\nxsched_daemon_realtime_priority 0\n"));
	it_kill(e, lo);
	case_done(e);
}

/*
 * The command line: --version; --check-config reports every problem of a
 * file (a key given twice names both lines) and exits 0 or 1; a directory
 * as --config, an over-long socket path (never cut to 107 bytes) and twice
 * the same socket are errors, at start too.
 */
static void daemon_command_line(void **state)
{
	struct it_env *e = *state;
	char long_path[160], bad[IT_PATH + 8];
	FILE *f;

	it_guard(60);
	XSD_EXPECT(e, 0, "xschedd 0.", "--version");
	XSD_EXPECT(e, 0, "Usage: xschedd", "--help");
	XSD_EXPECT(e, 2, "Usage: xschedd", "--bogus");
	it_config(e, "[policy]\nname = fair\nslice_ms = 5\n");
	XSD_EXPECT(e, 0, "valid (policy fair)", "--check-config", "--config", e->conf);

	snprintf(bad, sizeof(bad), "%s.bad", e->conf);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("[policy]\nname = fair\n[daemon]\nmax_clients = 0\n[policy]\nname = hpf\n", f);
	fclose(f);
	XSD_EXPECT(e, 1, ".bad:4: bad value for [daemon] max_clients = 0", "--check-config",
		   "--config", bad);
	XSD_EXPECT(e, 1, ".bad:6: [policy] name given twice (first at line 2)",
		   "--check-config", "--config", bad);
	/* A start with it fails the same way, before any socket exists. */
	XSD_EXPECT(e, 1, "given twice", "--config", bad, "--socket", e->sock,
		   "--control-socket", e->ctl);
	unlink(bad);
	XSD_EXPECT(e, 1, "is a directory", "--check-config", "--config", e->dir);
	XSD_EXPECT(e, 1, "is a directory", "--config", e->dir, "--socket", e->sock,
		   "--control-socket", e->ctl);
	XSD_EXPECT(e, 1, "policy nope: no such built-in policy", "--check-config", "--config",
		   e->conf, "--policy", "nope");

	memset(long_path, 'a', sizeof(long_path));
	memcpy(long_path, e->dir, strlen(e->dir));
	long_path[strlen(e->dir)] = '/';
	long_path[120] = '\0';
	XSD_EXPECT(e, 1, "longer than 107 bytes", "--socket", long_path, "--control-socket",
		   e->ctl, "--config", e->conf);
	XSD_EXPECT(e, 1, "longer than 107 bytes", "--check-config", "--control-socket",
		   long_path);
	XSD_EXPECT(e, 1, "must differ", "--socket", e->sock, "--control-socket", e->sock,
		   "--config", e->conf);
	/* None of these left a socket behind. */
	assert_int_equal(access(e->sock, F_OK), -1);
	assert_int_equal(access(long_path, F_OK), -1);
	long_path[107] = '\0';
	assert_int_equal(access(long_path, F_OK), -1);
	e->ok = true;
}

/*
 * On a terminal the daemon's lines carry a timestamp and a level word
 * instead of the syslog prefix that journald reads; elsewhere (the other
 * cases' log file) the prefix stays.
 */
static void daemon_log_on_terminal(void **state)
{
	struct it_env *e = *state;
	char buf[4096], *line;
	size_t got = 0;
	int master, st;
	pid_t pid;

	it_guard(60);
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	pid = it_fork(e);
	if (pid == 0) {
		int tty = open(ptsname(master), O_RDWR | O_NOCTTY);

		if (tty < 0 || dup2(tty, 2) < 0)
			_exit(126);
		execl(XSD_BIN, XSD_BIN, "--socket", e->sock, "--control-socket", e->ctl,
		      "--config", e->conf, "--policy", "no-such-policy", (char *)NULL);
		_exit(127);
	}
	/* It fails at once: an unknown policy, said at error level. */
	assert_int_equal(it_reap(e, pid, WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	for (;;) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (got + 1 >= sizeof(buf) || poll(&p, 1, 200) != 1 ||
		    (n = read(master, buf + got, sizeof(buf) - 1 - got)) <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(master);
	line = strstr(buf, "xschedd: error: policy no-such-policy: no such built-in policy");
	if (!line || strchr(buf, '<') || line - buf < 24 || buf[4] != '-' || buf[13] != ':')
		fail_msg("on a terminal: '%s'", buf);
	e->ok = true;
}

/* A socket at @path that listens (@listen) or is stale; returns its fd. */
static int plain_socket(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0 && strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/*
 * One daemon per socket: a second xschedd on the same paths (or on one of
 * them) exits 1 naming the first, which keeps serving both; so does one
 * facing a socket someone else listens on without a lock. Nothing but a
 * stale socket is ever removed: a regular file or a directory at a socket
 * path is an error and stays as it was. The stale sockets of a killed
 * daemon are replaced at the next start; a stopped daemon removes its
 * sockets.
 */
static void daemon_one_per_socket(void **state)
{
	struct it_env *e = *state;
	char other[IT_PATH + 16], file[IT_PATH + 16], expect[160];
	struct stat st;
	FILE *f;
	int fd;

	it_guard(60);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	snprintf(other, sizeof(other), "%s/other.sock", e->dir);
	snprintf(expect, sizeof(expect), "another xschedd (pid %d) serves %s", (int)e->daemon,
		 e->sock);
	XSD_EXPECT(e, 1, expect, "--socket", e->sock, "--control-socket", e->ctl, "--config",
		   e->conf);
	snprintf(expect, sizeof(expect), "another xschedd (pid %d) serves %s", (int)e->daemon,
		 e->ctl);
	XSD_EXPECT(e, 1, expect, "--socket", other, "--control-socket", e->ctl, "--config",
		   e->conf);
	/* The first one is untouched; the second left nothing behind. */
	assert_int_equal(access(other, F_OK), -1);
	assert_daemon_serves(e);
	it_ctl_close(e);
	it_ctl_open(e);

	/* A listener that holds no lock (an older daemon) is detected too. */
	snprintf(file, sizeof(file), "%s/file", e->dir);
	fd = plain_socket(other, true);
	XSD_EXPECT(e, 1, "a daemon is listening on", "--socket", other, "--control-socket",
		   file, "--config", e->conf);
	close(fd);
	unlink(other);
	{
		char lock[IT_PATH + 24];

		snprintf(lock, sizeof(lock), "%s.lock", other);
		unlink(lock);
	}

	/* A regular file and a directory are errors, and are left alone. */
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	XSD_EXPECT(e, 1, "exists and is not a socket: not removing it", "--socket", file,
		   "--control-socket", other, "--config", e->conf);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 9);
	XSD_EXPECT(e, 1, "is a directory", "--socket", other, "--control-socket", e->dir,
		   "--config", e->conf);
	assert_int_equal(access(other, F_OK), -1);
	unlink(file);
	{
		char lock[IT_PATH + 24];

		/* No lock file next to what is no socket. */
		snprintf(lock, sizeof(lock), "%s.lock", file);
		assert_int_equal(access(lock, F_OK), -1);
		snprintf(lock, sizeof(lock), "%s.lock", other);
		unlink(lock);
	}

	/* Killed: its sockets are stale, and the next daemon replaces them. */
	it_ctl_close(e);
	it_daemon_signal(e, SIGKILL);
	it_daemon_reap(e, WAIT_MS);
	assert_int_equal(stat(e->sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	assert_daemon_serves(e);
	it_ctl_close(e);
	it_daemon_signal(e, SIGTERM);
	assert_true(WIFEXITED(it_daemon_reap(e, WAIT_MS)));
	assert_int_equal(access(e->sock, F_OK), -1);
	assert_int_equal(access(e->ctl, F_OK), -1);
	e->ok = true;
}

/* --- Node-grade operation --------------------------------------------------- */

/*
 * A raw agent of user nobody (uid 65534) with one queue asking for
 * @priority. Returns its pid; closing *@ctl ends it.
 */
static pid_t nobody_agent(struct it_env *e, int64_t priority, int *ctl)
{
	int ok[2], hold[2];
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe2(ok, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	pid = it_fork(e);
	if (pid == 0) {
		struct ipc_registered reg;
		int fd;

		close(hold[1]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		fd = ipc_connect(e->sock);
		if (fd < 0 || it_raw_hello_agent(fd, NULL) <= 0 ||
		    it_raw_register(fd, e->dev, 0, priority, &reg) < 0)
			_exit(2);
		if (write(ok[1], "k", 1) != 1)
			_exit(3);
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ok[1]);
	close(hold[0]);
	{
		struct pollfd p = { .fd = ok[0], .events = POLLIN };

		if (poll(&p, 1, WAIT_MS) != 1 || read(ok[0], &c, 1) != 1)
			fail_msg("the agent of user nobody did not register");
	}
	close(ok[0]);
	*ctl = hold[1];
	return pid;
}

/* The listed record of queue @id; fails if it is gone. */
static struct ipc_queue_rec queue_rec(struct it_env *e, uint64_t id)
{
	struct ipc_queue_rec r;

	if (!it_queue_rec(e, id, &r))
		fail_msg("queue %llu is not listed", (unsigned long long)id);
	return r;
}

/*
 * A reload applies new defaults and ceilings at once to queues already
 * registered: a queue that set no priority takes the new default, one that
 * set its own keeps it, a user's queue is clamped to the user's lowered
 * ceiling and given back what it asked when the ceiling rises. A failed
 * reload changes nothing and says so in the status (and `xschedctl
 * status`). Each registration is logged (-v) with pid, uid, comm, device
 * and hints. Needs root (a second user).
 */
static void daemon_reload_applies_now(void **state)
{
	struct it_env *e = *state;
	struct ipc_queue_rec r, rn, ro, rb;
	struct ipc_status_reply st;
	uint64_t qn = 0, qo = 0, qb = 0;
	int hold;
	size_t n, i;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	it_config(e, "[limits]\nuid.65534.priority_ceiling = 3\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	it_queue_bare(e);
	it_queue(e, 4);
	nb = nobody_agent(e, 3, &hold);
	assert_true(IT_WAIT_UNTIL(it_queues(e, 0, NULL) == 3, WAIT_MS));
	{
		struct ipc_queue_rec *all = all_queues(e, &n);

		for (i = 0; i < n; i++) {
			if (all[i].pid == nb)
				qb = all[i].queue_id;
			else if (all[i].hint[IPC_KEY_PRIORITY] == 4)
				qo = all[i].queue_id;
			else
				qn = all[i].queue_id;
		}
		free(all);
	}
	assert_true(qn && qo && qb);
	rb = queue_rec(e, qb);
	assert_int_equal(rb.uid, 65534);
	assert_int_equal(rb.hint[IPC_KEY_PRIORITY], 3);
	assert_int_equal(queue_rec(e, qn).hint[IPC_KEY_PRIORITY], 0);
	/* -v logs every registration, with who and what. */
	if (log_count(e, "registered: pid ") < 3 || log_count(e, " uid 65534 comm it-raw device ") != 1)
		fail_msg("registrations are not logged with pid, uid, comm and device");

	reload_with(e, "[defaults]\npriority = -7\nshare = 30\n"
		       "[limits]\nuid.65534.priority_ceiling = 1\n");
	rn = queue_rec(e, qn);
	ro = queue_rec(e, qo);
	rb = queue_rec(e, qb);
	print_message("after the reload: priorities %lld (default), %lld (own), %lld (user)\n",
		      (long long)rn.hint[IPC_KEY_PRIORITY], (long long)ro.hint[IPC_KEY_PRIORITY],
		      (long long)rb.hint[IPC_KEY_PRIORITY]);
	assert_int_equal(rn.hint[IPC_KEY_PRIORITY], -7);
	assert_int_equal(rn.eff_priority, -7);
	assert_int_equal(rn.hint[IPC_KEY_SHARE], 30);
	assert_int_equal(ro.hint[IPC_KEY_PRIORITY], 4);
	assert_int_equal(ro.hint[IPC_KEY_SHARE], 30);
	assert_int_equal(rb.hint[IPC_KEY_PRIORITY], 1);
	st = it_status(e);
	assert_int_equal(st.reloads, 1);
	assert_int_equal(st.reload_status, 0);

	/* The ceiling rises again: the user's queue gets what it asked. */
	reload_with(e, "[limits]\nuid.65534.priority_ceiling = 5\n");
	assert_int_equal(queue_rec(e, qb).hint[IPC_KEY_PRIORITY], 3);
	assert_int_equal(queue_rec(e, qn).hint[IPC_KEY_PRIORITY], 0);
	assert_int_equal(queue_rec(e, qn).hint[IPC_KEY_SHARE], 0);

	/* A failed reload changes nothing, and says why. */
	reload_with(e, "[limits]\nuid.65534.priority_ceiling = 0\nbogus = 1\n");
	assert_int_equal(queue_rec(e, qb).hint[IPC_KEY_PRIORITY], 3);
	st = it_status(e);
	assert_int_equal(st.reloads, 3);
	assert_true(st.reload_status < 0);
	if (!strstr(st.reload_error, ":3: unknown key [limits] bogus"))
		fail_msg("status after a failed reload: '%s'", st.reload_error);
	PROG_EXPECT(e, XSCTL_BIN, (uid_t)-1, 0, "Last reload: failed: ", "--control", e->ctl,
		    "--socket", e->sock, "status");
	PROG_EXPECT(e, XSCTL_BIN, (uid_t)-1, 0, "unknown key [limits] bogus", "--control",
		    e->ctl, "--socket", e->sock, "status");
	PROG_EXPECT(e, XSCTL_BIN, (uid_t)-1, 0, "\"last_reload\":{\"ok\":false", "--control",
		    e->ctl, "--socket", e->sock, "status", "-o", "json");

	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
	assert_true(IT_WAIT_UNTIL(!it_queue_rec(e, qb, &r), WAIT_MS));
	assert_true(IT_WAIT_UNTIL(log_count(e, "removed (") >= 1, WAIT_MS));
	case_done(e);
}

/*
 * Error messages name their cause: a priority above the user's ceiling
 * says which ceiling (not "only your own processes"); a batch above the
 * queue's threshold is refused with the threshold; `set level 3` on a
 * Lv1 queue says the level granted; a policy module of another ops
 * version names both versions. Needs root (a second user).
 */
static void daemon_messages_name_the_cause(void **state)
{
	struct it_env *e = *state;
	struct ipc_register reg;
	struct ipc_registered got;
	struct ipc_queue_rec r;
	char pid_s[16], qid[24], lv1[24], want[160];
	int hold, fd;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	it_config(e, "[limits]\nuid.65534.priority_ceiling = 3\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	nb = nobody_agent(e, 2, &hold);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)nb);
#define CTL(uid, rc, what, ...) PROG_EXPECT(e, XSCTL_BIN, uid, rc, what, "--control", e->ctl, \
					   "--socket", e->sock, __VA_ARGS__)
	CTL(65534, 4, "priority 5 is above your priority ceiling (3)", "set", "priority", "5",
	    "--pid", pid_s);
	CTL(65534, 0, "", "set", "priority", "3", "--pid", pid_s);
	assert_int_equal(it_queues(e, nb, &r), 1);
	assert_int_equal(r.hint[IPC_KEY_PRIORITY], 3);

	it_queue_bare(e);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), &r) == 1, WAIT_MS));
	snprintf(qid, sizeof(qid), "%llu", (unsigned long long)r.queue_id);
	CTL((uid_t)-1, 1, "batch 100 is above the queue's threshold (16)", "set", "batch", "100",
	    "--queue", qid);
	assert_int_equal(it_queues(e, getpid(), &r), 1);
	assert_int_equal(r.batch, 8);
	CTL((uid_t)-1, 0, "", "set", "batch", "16", "--queue", qid);

	/* A queue on a device of Lv1 only. */
	fd = raw_agent(e);
	reg = it_reg_body(e->dev, 0, 0);
	reg.level = reg.level_max = 1;
	assert_true(it_raw_send(fd, IPC_REGISTER, 2, &reg, sizeof(reg)) > 0);
	{
		union it_buf buf;
		struct ipc_msg m;
		int n = it_raw_recv(fd, &buf, WAIT_MS, NULL, NULL);

		assert_true(n > 0);
		assert_int_equal(ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m), 0);
		assert_int_equal(m.hdr.type, IPC_REGISTERED);
		memcpy(&got, m.body, sizeof(got));
	}
	snprintf(lv1, sizeof(lv1), "%llu", (unsigned long long)got.queue_id);
	CTL((uid_t)-1, 0, "runs at level 1, not 3: its device supports up to level 1", "set",
	    "level", "3", "--queue", lv1);

	snprintf(want, sizeof(want), "the module is for policy ops version %u; this daemon "
		 "serves versions 1 to %u", XS_POLICY_VERSION + 1, XS_POLICY_VERSION);
	CTL((uid_t)-1, 1, want, "policy", "set", XS_PLUGIN_BAD_PATH);
	assert_policy(e, "hpf");
	CTL((uid_t)-1, 1, "not supported", "metrics", "-o", "json");
#undef CTL
	close(fd);
	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
	case_done(e);
}

/*
 * A process's memory limit set with xschedctl (IPC_KEY_MEMORY_LIMIT): a
 * user may set one for its own processes up to its uid's memory_limit,
 * never above it nor none at all under one, and the refusal names the
 * ceiling; another user's process is refused; root may set any, or none;
 * the limit goes into the process's shared memory (mem_limit, mem_seq
 * moved) and the ceiling is there from the start. Needs root.
 */
static void daemon_memory_limit_ceiling(void **state)
{
	struct it_env *e = *state;
	char pid_s[16], self[16];
	int hold;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	snprintf(self, sizeof(self), "%d", (int)getpid());
	it_config(e, "[limits]\nuid.65534.memory_limit = 32M\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	nb = nobody_agent(e, 0, &hold);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)nb);
#define CTL(uid, rc, what, ...) PROG_EXPECT(e, XSCTL_BIN, uid, rc, what, "--control", e->ctl, \
					   "--socket", e->sock, __VA_ARGS__)
	CTL(65534, 4, "the memory limit of your processes may be at most 32 MiB per device",
	    "set", "memory-limit", "64M", "--pid", pid_s);
	CTL(65534, 4, "at most 32 MiB per device", "set", "memory-limit", "none", "--pid", pid_s);
	CTL(65534, 0, "", "set", "memory-limit", "16M", "--pid", pid_s);
	/* This process, root's, once it is an agent. */
	it_queue_bare(e);
	assert_true(IT_WAIT_UNTIL(it_queues(e, getpid(), NULL) == 1, WAIT_MS));
	CTL(65534, 4, "", "set", "memory-limit", "16M", "--pid", self);
	CTL((uid_t)-1, 0, "", "set", "memory-limit", "1G", "--pid", pid_s);
	CTL((uid_t)-1, 0, "", "set", "memory-limit", "none", "--pid", pid_s);
	CTL((uid_t)-1, 1, "no process known to xschedd with pid 1", "set", "memory-limit", "1G",
	    "--pid", "1");
	CTL((uid_t)-1, 1, "memory-limit is a process's: give --pid PID", "set", "memory-limit",
	    "1G", "--queue", "1");
	CTL((uid_t)-1, 1, "invalid memory-limit 'lots'", "set", "memory-limit", "lots", "--pid",
	    pid_s);
	CTL((uid_t)-1, 1, "invalid memory-limit '0'", "set", "memory-limit", "0", "--pid", pid_s);
#undef CTL
	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
	case_done(e);
}

/* Reads the whole file @path into a malloc()ed string; NULL if missing. */
static char *read_file(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	assert_true(getdelim(&text, &len, '\0', f) >= 0 || feof(f));
	fclose(f);
	return text;
}

/*
 * Metrics are scoped like listings: user nobody on the client socket gets
 * the series of its own queues only, root every user's; queue series carry
 * a uid label (with pid and comm), and xsched_info names the version and
 * policy. [metrics] textfile is written for node_exporter's textfile
 * collector, atomically (a temporary file renamed: a reader never sees a
 * partial one) and again every interval, and removed when the daemon stops.
 * Needs root (a second user).
 */
static void daemon_metrics_scoped(void **state)
{
	struct it_env *e = *state;
	char conf[IT_PATH * 2 + 64], prom[IT_PATH + 16], tmp[IT_PATH + 24], out[65536];
	struct stat st0, st1;
	char *text;
	int hold;
	pid_t nb;

	if (geteuid() != 0)
		skip();
	it_guard(60);
	snprintf(prom, sizeof(prom), "%s", e->prom);
	snprintf(tmp, sizeof(tmp), "%s.tmp", prom);
	snprintf(conf, sizeof(conf), "[metrics]\ntextfile = %s\ninterval_s = 1\n", prom);
	it_config(e, conf);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	it_queue(e, 1);
	nb = nobody_agent(e, 0, &hold);
	assert_true(IT_WAIT_UNTIL(it_queues(e, 0, NULL) == 2, WAIT_MS));

	assert_int_equal(prog_run(e, XSCTL_BIN, 65534, IT_ARGS("--control", e->ctl, "--socket",
				  e->sock, "metrics"), out, sizeof(out)), 0);
	if (!strstr(out, "xsched_queue_priority{queue=") || !strstr(out, ",uid=\"65534\",") ||
	    strstr(out, ",uid=\"0\","))
		fail_msg("metrics of user nobody are not scoped to its queues:\n%s", out);
	assert_non_null(strstr(out, "xsched_info{version=\"0."));
	assert_non_null(strstr(out, ",policy=\"hpf\"} 1\n"));
	assert_int_equal(prog_run(e, XSCTL_BIN, (uid_t)-1, IT_ARGS("--control", e->ctl,
				  "metrics"), out, sizeof(out)), 0);
	assert_non_null(strstr(out, ",uid=\"65534\","));
	assert_non_null(strstr(out, ",uid=\"0\",comm=\""));
	assert_non_null(strstr(out, "xsched_queue_wait_seconds{"));
	assert_non_null(strstr(out, "xsched_queue_starvation_grants_total{"));

	/* The textfile: every user's series, rewritten every second. */
	text = NULL;
	if (!IT_WAIT_UNTIL((free(text), text = read_file(prom)) && strstr(text, ",uid=\"65534\",") &&
			   strstr(text, ",uid=\"0\","), 5000))
		fail_msg("the textfile does not show both users' queues within 5 s: %s",
			 text ? text : "(none)");
	assert_non_null(strstr(text, "xsched_info{version="));
	free(text);
	assert_int_equal(stat(prom, &st0), 0);
	if (!IT_WAIT_UNTIL(stat(prom, &st1) == 0 && st1.st_ino != st0.st_ino, 5000))
		fail_msg("the textfile was not replaced within 5 s (interval 1 s)");
	assert_int_equal(access(tmp, F_OK), -1);
	assert_true((st1.st_mode & 0777) == 0644);

	close(hold);
	assert_int_equal(it_reap(e, nb, WAIT_MS, NULL), 0);
	it_ctl_close(e);
	it_daemon_signal(e, SIGTERM);
	assert_true(WIFEXITED(it_daemon_reap(e, WAIT_MS)));
	assert_int_equal(access(prom, F_OK), -1);
	e->ok = true;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(daemon_sighup_reload, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_thread_slices, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_realtime, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_command_line, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_log_on_terminal, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_one_per_socket, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_reload_applies_now, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_memory_limit_ceiling, it_setup, it_teardown),
	cmocka_unit_test_setup_teardown(daemon_messages_name_the_cause, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_metrics_scoped, it_setup, it_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
