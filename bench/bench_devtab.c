/*
 * Cost of the daemon's device table: one client registers and unregisters
 * a queue again and again, each time on a device of a new name (what any
 * unprivileged process can send), and the benchmark reports how long a
 * registration round trip takes early and late in the run and how much the
 * daemon's resident memory grew. A table that keeps every name it ever saw
 * and searches it linearly grows by one entry per name and slows down as
 * it does; one that forgets a device with its last queue stays flat. Round
 * trips include two cross-CPU wakeups and whatever else runs on the
 * machine, so the daemon's own CPU time per registration (from
 * /proc/PID/schedstat; the daemon is one thread) is reported too.
 *
 * The benchmark starts a private xschedd (its own temporary directory and
 * sockets, default configuration), talks to it over raw IPC packets as an
 * agent would, and stops it at the end.
 *
 * Usage: bench_devtab [--daemon PATH] [--names N]
 */
#include "base/clock.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WINDOW 1000

union pkt {
	char b[IPC_MSG_MAX];
	uint64_t align;
};

/* Sends @type with @body and waits for the reply; returns its type or -errno. */
static int request(int fd, uint16_t type, const void *body, size_t len, int *fds, int *nfds)
{
	static uint32_t seq;
	union pkt p;
	struct ipc_msg m;
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int n = ipc_build(p.b, sizeof(p.b), type, ++seq, body, len);

	if (n < 0 || (n = ipc_send(fd, p.b, (size_t)n, NULL, 0)) < 0)
		return n;
	if (poll(&pf, 1, 10000) != 1)
		return -ETIMEDOUT;
	n = ipc_recv(fd, p.b, sizeof(p.b), fds, nfds, 0);
	if (n <= 0)
		return n ? n : -EPIPE;
	if (ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m) < 0)
		return -EBADMSG;
	if (m.hdr.type == IPC_REPLY && ((const struct ipc_reply *)m.body)->status < 0)
		return ((const struct ipc_reply *)m.body)->status;
	return m.hdr.type;
}

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* CPU time the (single-threaded) process @pid has run, in ns; 0 if unknown. */
static uint64_t cpu_ns(pid_t pid)
{
	unsigned long long ns = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

static const char *default_daemon(char *buf, size_t len)
{
	char self[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return "xschedd";
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, len, "%s/../src/daemon/xschedd", self);
	return buf;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "daemon", required_argument, NULL, 'd' },
		{ "names", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	char dbuf[PATH_MAX], dir[96], sock[128], ctl[128], conf[128];
	const char *daemon = NULL, *tmp = getenv("TMPDIR");
	long names = 30000, i, rss0 = 0, rss1;
	uint64_t t, first = 0, last = 0, total = 0, cpu0 = 0, cpu_first = 0, cpu_last = 0;
	struct ipc_hello h = { .role = IPC_ROLE_AGENT, .comm = "bench_devtab" };
	int fds[IPC_MAX_FDS], nfds = 0, fd = -1, c, rc = 1;
	FILE *f;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'd')
			daemon = optarg;
		else if (c == 'n' && (names = atol(optarg)) >= 2 * WINDOW)
			;
		else {
			fprintf(stderr, "usage: bench_devtab [--daemon PATH] [--names N>=%d]\n",
				2 * WINDOW);
			return 2;
		}
	}
	if (!daemon)
		daemon = default_daemon(dbuf, sizeof(dbuf));
	if (snprintf(dir, sizeof(dir), "%s/xs-devtab-XXXXXX", tmp && *tmp ? tmp : P_tmpdir) >=
	    (int)sizeof(dir)) {
		fprintf(stderr, "bench_devtab: $TMPDIR is too long for socket paths\n");
		return 1;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/c.sock", dir);
	snprintf(ctl, sizeof(ctl), "%s/ctl.sock", dir);
	snprintf(conf, sizeof(conf), "%s/xschedd.conf", dir);
	f = fopen(conf, "w");
	if (!f || fclose(f)) {
		perror(conf);
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execl(daemon, "xschedd", "--config", conf, "--socket", sock, "--control-socket",
		      ctl, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", daemon, strerror(errno));
		_exit(127);
	}
	for (i = 0; i < 500 && (fd = ipc_connect(sock)) < 0; i++)
		clock_sleep_until(clock_now_ns() + 10 * NSEC_PER_MSEC);
	if (fd < 0 || request(fd, IPC_HELLO, &h, sizeof(h), fds, &nfds) != IPC_HELLO_REPLY) {
		fprintf(stderr, "bench_devtab: no daemon at %s\n", sock);
		goto out;
	}
	for (i = 0; i < names; i++) {
		struct ipc_register r = {
			.level = 1, .level_max = 1, .threshold = 16, .batch = 8,
			.budget_ns = 1000000,
		};
		struct ipc_unregister u = { 0 };
		uint64_t dt;

		snprintf(r.device, sizeof(r.device), "bench:%ld", i);
		snprintf(r.backend, sizeof(r.backend), "sim");
		if (i == 0 || i == names - WINDOW)
			cpu0 = cpu_ns(pid);
		t = clock_now_ns();
		if (request(fd, IPC_REGISTER, &r, sizeof(r), NULL, NULL) != IPC_REGISTERED ||
		    request(fd, IPC_UNREGISTER, &u, sizeof(u), NULL, NULL) != IPC_REPLY) {
			fprintf(stderr, "bench_devtab: registration %ld failed\n", i);
			goto out;
		}
		dt = clock_now_ns() - t;
		total += dt;
		if (i < WINDOW)
			first += dt;
		else if (i >= names - WINDOW)
			last += dt;
		if (i == WINDOW - 1) {
			rss0 = rss_kb(pid);
			cpu_first = cpu_ns(pid) - cpu0;
		}
	}
	cpu_last = cpu_ns(pid) - cpu0;
	rss1 = rss_kb(pid);
	printf("names=%ld register+unregister mean: first %d %.1f us, last %d %.1f us "
	       "(ratio %.2f), all %.1f us\n",
	       names, WINDOW, first / 1e3 / WINDOW, WINDOW, last / 1e3 / WINDOW,
	       (double)last / (double)first, total / 1e3 / (double)names);
	printf("daemon CPU per register+unregister: first %d %.1f us, last %d %.1f us "
	       "(ratio %.2f)\n",
	       WINDOW, cpu_first / 1e3 / WINDOW, WINDOW, cpu_last / 1e3 / WINDOW,
	       cpu_first ? (double)cpu_last / (double)cpu_first : 0.0);
	printf("daemon VmRSS after %d names: %ld kB, after %ld: %ld kB (+%ld kB)\n", WINDOW, rss0,
	       names, rss1, rss1 - rss0);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	unlink(sock);
	unlink(ctl);
	unlink(conf);
	rmdir(dir);
	return rc;
}
