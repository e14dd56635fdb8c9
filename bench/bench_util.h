/*
 * Small helpers shared by the benchmarks: sample statistics, a
 * description of the machine, printed with every table because results on
 * these noisy VMs mean little without it, the one-line result of the
 * scenario workloads (bench_result_print), which scripts parse, and the
 * private xschedd a benchmark starts for its run (bench_daemon_start).
 */
#ifndef XS_BENCH_UTIL_H
#define XS_BENCH_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/sim.h"

/*
 * What CMake passes in for a benchmark (bench/CMakeLists.txt): the shims,
 * the test shims and xschedd of this build; "" where it was not built, and
 * the program says so or asks for the option.
 */
#ifndef XS_SHIM_PATH
#define XS_SHIM_PATH ""
#endif
#ifndef XS_TEST_SHIM_PATH
#define XS_TEST_SHIM_PATH ""
#endif
#ifndef XSD_BIN
#define XSD_BIN ""
#endif

static int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The workload options the scenario programs share (cu_load, cl_load):
 * --cmd-us --cmds --tasks --warmup --period-us --jitter-pct --seed
 * --deadline-us --flood --duration-s --start-at-ms --lat-file --trace-file.
 */
struct bench_load_opts {
	int cmds, tasks, warmup;
	uint64_t cmd_ns, period_ns, deadline_ns, duration_ns, start_at_ms;
	double jitter;          /* of the period, 0..1 */
	unsigned seed;
	bool flood;
	const char *lat_file, *trace_file;
};

/* Their getopt_long() entries, to put first in a program's table. */
#define BENCH_LOAD_LONGOPTS                                                  \
	{ "cmd-us", required_argument, NULL, 't' },                          \
	{ "cmds", required_argument, NULL, 'n' },                            \
	{ "tasks", required_argument, NULL, 'k' },                           \
	{ "warmup", required_argument, NULL, 'w' },                          \
	{ "period-us", required_argument, NULL, 'p' },                       \
	{ "jitter-pct", required_argument, NULL, 'j' },                      \
	{ "seed", required_argument, NULL, 's' },                            \
	{ "deadline-us", required_argument, NULL, 'D' },                     \
	{ "flood", no_argument, NULL, 'f' },                                 \
	{ "duration-s", required_argument, NULL, 'd' },                      \
	{ "start-at-ms", required_argument, NULL, 'a' },                     \
	{ "lat-file", required_argument, NULL, 'L' },                        \
	{ "trace-file", required_argument, NULL, 'T' }

static inline void bench_load_defaults(struct bench_load_opts *o)
{
	*o = (struct bench_load_opts){ .cmds = 1, .tasks = 100, .cmd_ns = 500000,
				       .jitter = 0.5, .seed = 1 };
}

/* Takes option @c of BENCH_LOAD_LONGOPTS; false if @c is not one of them. */
static inline bool bench_load_option(struct bench_load_opts *o, int c, const char *arg)
{
	switch (c) {
	case 't': o->cmd_ns = (uint64_t)(atof(arg) * 1e3); break;
	case 'n': o->cmds = atoi(arg); break;
	case 'k': o->tasks = atoi(arg); break;
	case 'w': o->warmup = atoi(arg); break;
	case 'p': o->period_ns = (uint64_t)(atof(arg) * 1e3); break;
	case 'j': o->jitter = atof(arg) / 100.0; break;
	case 's': o->seed = (unsigned)strtoul(arg, NULL, 10); break;
	case 'D': o->deadline_ns = (uint64_t)(atof(arg) * 1e3); break;
	case 'f': o->flood = true; break;
	case 'd': o->duration_ns = (uint64_t)(atof(arg) * 1e9); break;
	case 'a': o->start_at_ms = strtoull(arg, NULL, 10); break;
	case 'L': o->lat_file = arg; break;
	case 'T': o->trace_file = arg; break;
	default: return false;
	}
	return true;
}

static inline bool bench_load_valid(const struct bench_load_opts *o)
{
	return o->cmds >= 1 && o->tasks >= 1 && o->warmup >= 0 && o->cmd_ns > 0 &&
	       o->jitter >= 0 && o->jitter <= 1;
}

/* Writes @n latencies (ns) to @path in us, one per line; 0 or -1 (errno). */
static inline int bench_write_lat(const char *path, const uint64_t *lat, int n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (int i = 0; i < n; i++)
		fprintf(f, "%.1f\n", (double)lat[i] / 1e3);
	return fclose(f);
}

/* Nearest-rank percentile @p (0..100) of @n samples; sorts @v. */
static inline uint64_t bench_pct(uint64_t *v, size_t n, double p)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/*
 * Creates a private simulated device (RR arbitration, all levels) named
 * @prefix-<pid> into @name and keeps it open in *@keep for the run. Returns
 * 0, or prints why not and returns -1.
 */
static inline int bench_private_device(const char *prefix, char *name, size_t len,
				       struct sim_dev **keep)
{
	struct sim_dev_opts opts = { .arbitration = SIM_ARB_RR, .level_max = 3 };

	snprintf(name, len, "%s-%d", prefix, (int)getpid());
	sim_dev_unlink(name);
	if (sim_dev_open(name, &opts, keep)) {
		fprintf(stderr, "%s: cannot create the simulated device in /dev/shm "
			"(or $XSCHED_SIM_DIR)\n", prefix);
		return -1;
	}
	return 0;
}

static inline void bench_close_device(const char *name, struct sim_dev *keep)
{
	sim_dev_close(keep);
	sim_dev_unlink(name);
}

static inline uint64_t bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in ns: comparable between the processes of a scenario. */
static inline uint64_t bench_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps until CLOCK_REALTIME @ns (returns at once if it has passed). */
static inline void bench_sleep_until_wall(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* What a workload process measured, for bench_result_print(). */
struct bench_result {
	int tasks;              /* measured tasks (0 for a flood) */
	uint64_t *lat;          /* their latencies in ns; sorted by the print */
	uint64_t commands;      /* commands completed in the measured window */
	uint64_t device_ns;     /* device time of those commands */
	uint64_t missed;        /* tasks over their deadline */
	uint64_t t0_ns, t1_ns;  /* the measured window, CLOCK_REALTIME */
};

/*
 * The one-line result of a workload process, the format the scenario
 * scripts parse (bench/scenarios/lib.sh): "tasks= p50_us= p90_us= p99_us=
 * max_us= commands= device_ms= missed= elapsed_ms= t0_ns= t1_ns=".
 */
static inline void bench_result_print(FILE *out, struct bench_result *r)
{
	size_t n = (size_t)(r->tasks > 0 ? r->tasks : 0);

	fprintf(out, "tasks=%zu p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f commands=%llu "
		"device_ms=%.3f missed=%llu elapsed_ms=%.3f t0_ns=%llu t1_ns=%llu\n", n,
		bench_pct(r->lat, n, 50) / 1e3, bench_pct(r->lat, n, 90) / 1e3,
		bench_pct(r->lat, n, 99) / 1e3, bench_pct(r->lat, n, 100) / 1e3,
		(unsigned long long)r->commands, (double)r->device_ns / 1e6,
		(unsigned long long)r->missed, (double)(r->t1_ns - r->t0_ns) / 1e6,
		(unsigned long long)r->t0_ns, (unsigned long long)r->t1_ns);
	fflush(out);
}

static inline void bench_print_machine(FILE *out)
{
	char model[256] = "unknown", line[512];
	double load[3] = { 0 };
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');

				if (p) {
					snprintf(model, sizeof(model), "%s", p + 2);
					model[strcspn(model, "\n")] = '\0';
				}
				break;
			}
		}
		fclose(f);
	}
	getloadavg(load, 3);
	fprintf(out, "machine: %ld online CPUs (%s), load average %.2f %.2f %.2f\n",
		sysconf(_SC_NPROCESSORS_ONLN), model, load[0], load[1], load[2]);
}

/*
 * Forks a child whose stdout is a pipe to the parent. In the parent:
 * returns the child's pid, the pipe's read end in *@in; in the child:
 * returns 0, stdout the pipe's write end, killed when the parent dies.
 * -1 if something failed (no child is left behind).
 */
static inline pid_t bench_fork_piped(FILE **in)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		return 0;
	}
	close(fds[1]);
	*in = fdopen(fds[0], "r");
	if (!*in) {
		close(fds[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/*
 * In a child: runs this program again ("/proc/self/exe") with @argv, the
 * variables @vars (NULL-terminated "NAME=value" strings) added to an
 * environment without LD_PRELOAD and XSCHED_DISABLE. Does not return
 * (_exit(127) if the exec fails).
 */
static inline void __attribute__((noreturn))
bench_exec_self(char *const argv[], char *const vars[])
{
	unsetenv("LD_PRELOAD");
	unsetenv("XSCHED_DISABLE");
	for (; *vars; vars++)
		putenv(*vars);
	execv("/proc/self/exe", argv);
	_exit(127);
}

/*
 * Waits for the child @pid: 0 if it exited with status 0, else prints
 * "@who failed (status 0x...)" and returns -1.
 */
static inline int bench_wait_child(pid_t pid, const char *who)
{
	int st = 0;

	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s failed (status 0x%x)\n", who, st);
		return -1;
	}
	return 0;
}

/*
 * Creates the run's private directory, $TMPDIR (or /tmp)/@prog.XXXXXX,
 * into @dir (@len bytes); 0, or prints why not, prefixed "@prog: ", and
 * returns -1.
 */
static inline int bench_mkdtemp(char *dir, size_t len, const char *prog)
{
	snprintf(dir, len, "%s/%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", prog);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
		return -1;
	}
	return 0;
}

#define BENCH_DAEMON_WAIT_MS 10000      /* for xschedd to say READY=1 */

/*
 * A private xschedd for one run: its files in the run's directory (see
 * bench_daemon_paths) and its pid, 0 while it is not running.
 */
struct bench_daemon {
	char sock[300], ctl[300], conf[300], log[300], notify[300];
	pid_t pid;
};

/*
 * Names @d's files in @dir (shorter than 256 bytes): c.sock, ctl.sock,
 * xschedd.conf, xschedd.log and notify (the socket READY=1 comes to).
 */
static inline void bench_daemon_paths(struct bench_daemon *d, const char *dir)
{
	snprintf(d->sock, sizeof(d->sock), "%s/c.sock", dir);
	snprintf(d->ctl, sizeof(d->ctl), "%s/ctl.sock", dir);
	snprintf(d->conf, sizeof(d->conf), "%s/xschedd.conf", dir);
	snprintf(d->log, sizeof(d->log), "%s/xschedd.log", dir);
	snprintf(d->notify, sizeof(d->notify), "%s/notify", dir);
}

/*
 * Starts the xschedd at @bin with the configuration the caller wrote to
 * @d->conf, on @d's sockets, its stderr into @d->log, killed if we die;
 * returns 0 once it said READY=1 on @d->notify (as to systemd), the pid in
 * @d->pid. Else, when it exits or says nothing for BENCH_DAEMON_WAIT_MS,
 * prints why, prefixed "@prog: ", kills it and returns -1.
 */
static inline int bench_daemon_start(struct bench_daemon *d, const char *bin, const char *prog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t end = bench_clock_ns(CLOCK_MONOTONIC) + BENCH_DAEMON_WAIT_MS * 1000000ull;
	char msg[256];
	int fd;

	if (strlen(d->notify) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "%s: %s: path too long for a socket\n", prog, d->notify);
		return -1;
	}
	memcpy(sa.sun_path, d->notify, strlen(d->notify));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "%s: notify socket: %s\n", prog, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fflush(stdout);
	d->pid = fork();
	if (d->pid == 0) {
		int log = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (log >= 0)
			dup2(log, STDERR_FILENO);
		setenv("NOTIFY_SOCKET", d->notify, 1);
		execl(bin, "xschedd", "--config", d->conf, "--socket", d->sock, "--control-socket",
		      d->ctl, (char *)NULL);
		_exit(127);
	}
	while (d->pid > 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = bench_clock_ns(CLOCK_MONOTONIC);
		ssize_t n;

		if (now >= end || waitpid(d->pid, NULL, WNOHANG) == d->pid)
			break;
		if (poll(&p, 1, (int)((end - now) / 1000000ull) + 1) <= 0)
			continue;
		n = recv(fd, msg, sizeof(msg) - 1, 0);
		if (n > 0) {
			msg[n] = '\0';
			if (strstr(msg, "READY=1")) {
				close(fd);
				return 0;
			}
		}
	}
	close(fd);
	fprintf(stderr, "%s: xschedd did not start (log: %s)\n", prog, d->log);
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
	}
	d->pid = 0;
	return -1;
}

/* Stops @d's xschedd (SIGTERM) and waits for it; nothing if not running. */
static inline void bench_daemon_stop(struct bench_daemon *d)
{
	if (d->pid <= 0)
		return;
	kill(d->pid, SIGTERM);
	waitpid(d->pid, NULL, 0);
	d->pid = 0;
}

#endif
