/*
 * What the xschedd end-to-end tests share (tests/test_daemon_*.c, one file
 * per theme): each runs a real daemon, real client processes (xs_load, raw
 * IPC clients, forked children) and the test process's own XQueues, all on
 * a private simulated device, with the fixture of it_util.h; here are the
 * helpers more than one theme uses.
 *
 * Each case asserts behaviour, not speed: outcomes are compared across
 * orders of magnitude (a 1 ms task next to 100 ms commands, a 100 ms
 * cleanup budget for what takes microseconds), so they hold on a loaded
 * two-core machine and under sanitizers. Polling (IT_WAIT_UNTIL) is used
 * only to observe another process's state, with timeouts far above the
 * expected time; where a case measures a bound (cleanup within 100 ms,
 * resume within 200 ms) it measures from the event to the first
 * observation.
 *
 * Everything a case starts is recorded in its fixture (it_util.h) and
 * removed by the teardown, also after a failed assertion or a timeout.
 */
#ifndef XS_TEST_DAEMON_UTIL_H
#define XS_TEST_DAEMON_UTIL_H

#include "it_util.h"

#include "agent/agent.h"
#include "base/slice.h"
#include "xsched/policy.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>


#define WAIT_MS 10000        /* for anything that should take milliseconds */

/* The end of a case: the daemon is still sound. */
static inline void case_done(struct it_env *e)
{
	it_daemon_check(e);
	e->ok = true;
}

/* Waits until @pid has one queue listed that is ready; returns its record. */
static inline struct ipc_queue_rec wait_ready(struct it_env *e, pid_t pid)
{
	struct ipc_queue_rec r;

	if (!IT_WAIT_UNTIL(it_queues(e, pid, &r) == 1 && r.state == IPC_QS_READY, WAIT_MS))
		fail_msg("pid %d never showed a ready queue", (int)pid);
	return r;
}

/* Reads one byte from @fd within @ms; false on timeout or end of file. */
static inline bool read_byte(int fd, unsigned ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b;

	return poll(&p, 1, (int)ms) == 1 && read(fd, &b, 1) == 1;
}

static inline bool write_byte(int fd)
{
	char b = 1;

	return write(fd, &b, 1) == 1;
}

static inline int rec_cmp(const void *a, const void *b)
{
	const struct ipc_queue_rec *x = a, *y = b;

	return x->queue_id < y->queue_id ? -1 : x->queue_id > y->queue_id;
}

/* Every queue, sorted by id; *@n of them. */
static inline struct ipc_queue_rec *all_queues(struct it_env *e, size_t *n)
{
	struct ipc_queue_rec *r = NULL;

	assert_int_equal(ipc_client_list(&e->c, &r, n), 0);
	qsort(r, *n, sizeof(*r), rec_cmp);
	return r;
}

static inline void assert_policy(struct it_env *e, const char *name)
{
	char got[IPC_POLICY_LEN];
	struct ipc_status_reply st;

	assert_int_equal(ipc_client_policy_get(&e->c, got, sizeof(got)), 0);
	assert_string_equal(got, name);
	st = it_status(e);
	assert_string_equal(st.policy, name);
}

/* The daemon's log so far, NUL-terminated; malloc()ed. */
static inline char *read_log(struct it_env *e)
{
	size_t len = 0, cap = 4096;
	char *text = malloc(cap);
	ssize_t n;
	int fd = open(e->log, O_RDONLY | O_CLOEXEC);

	assert_non_null(text);
	assert_true(fd >= 0);
	while ((n = read(fd, text + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			cap *= 2;
			text = realloc(text, cap);
			assert_non_null(text);
		}
	}
	close(fd);
	text[len] = '\0';
	return text;
}

/* Occurrences of @what in the daemon's log. */
static inline int log_count(struct it_env *e, const char *what)
{
	char *text = read_log(e), *p = text;
	int n = 0;

	while ((p = strstr(p, what))) {
		n++;
		p += strlen(what);
	}
	free(text);
	return n;
}

/*
 * Runs @path with @args, as user @uid unless it is (uid_t)-1; its stdout
 * and stderr go to @out. It must exit within WAIT_MS. Returns its exit
 * status.
 */
static inline int prog_run(struct it_env *e, const char *path, uid_t uid,
			   const char *const *args, char *out, size_t len)
{
	const char *argv[24] = { path };
	int p[2], st = 0, n = 1;
	size_t got = 0;
	ssize_t k;
	pid_t pid;

	while (*args && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = it_fork(e);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (uid != (uid_t)-1 && (setgroups(0, NULL) < 0 || setgid(uid) < 0 ||
					 setuid(uid) < 0))
			_exit(126);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (got + 1 < len && (k = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)k;
	out[got] = '\0';
	close(p[0]);
	assert_int_equal(it_reap(e, pid, WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Open descriptors of process @pid. */
static inline int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

static inline int raw_connect(struct it_env *e)
{
	int fd = ipc_connect(e->sock);

	assert_true(fd >= 0);
	return fd;
}

static inline int raw_ctl(struct it_env *e)
{
	struct ipc_hello h = { .role = IPC_ROLE_CTL };
	int fd = raw_connect(e);

	assert_true(it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) > 0);
	assert_int_equal(it_raw_answer(fd, WAIT_MS, NULL), 0);
	return fd;
}

static inline int raw_agent(struct it_env *e)
{
	int fd = raw_connect(e);

	assert_true(it_raw_hello_agent(fd, NULL) > 0);
	return fd;
}

/* A daemon answers on our control connection and takes a registration. */
static inline void assert_daemon_serves(struct it_env *e)
{
	struct ipc_registered reg;
	int fd = raw_agent(e);

	it_status(e);
	assert_int_equal(it_raw_register(fd, e->dev, 0, 1, &reg), 0);
	close(fd);
}

/*
 * Starts the case's daemon and control connection, and another client
 * busy with small periodic tasks for as long as the case runs (its record
 * in *@rec once listed). Returns its pid.
 */
static inline pid_t busy_daemon(struct it_env *e, struct ipc_queue_rec *rec)
{
	pid_t other;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	other = it_load(e, NULL, IT_ARGS("--level", "3", "--cmd-us", "500", "--tasks", "1000000",
					 "--period-us", "3000", "--wait-connected-ms", "10000"));
	assert_true(IT_WAIT_UNTIL(it_queues(e, other, rec) == 1, WAIT_MS));
	return other;
}

/* Sends SIGHUP after writing @conf; waits for the reload to end. */
static inline void reload_with(struct it_env *e, const char *conf)
{
	it_config(e, conf);
	it_daemon_signal(e, SIGHUP);
	assert_int_equal(it_notify_wait(e, "RELOADING=1", WAIT_MS, NULL, 0), 0);
	assert_int_equal(it_notify_wait(e, "READY=1", WAIT_MS, NULL, 0), 0);
}

#endif
