/*
 * xs_devopen: opens a device node and prints how it went, for
 * test_enforce.sh. Lines are "WHO: RESULT" with RESULT "ok" or the errno's
 * name (EPERM: the device gate refused; ENXIO: past the gate, no driver).
 *
 *   xs_devopen [--register] [--fork] [--fork-raw] [--wait FILE] [--hold MS] PATH
 *
 *   --register   registers itself with xschedd as the shims do (IPC_HELLO,
 *                role IPC_ROLE_ENFORCE) and prints "register: RESULT"
 *   --wait FILE  waits (at most 30 s) for FILE to exist before opening
 *   --fork       then a child made by fork() opens PATH ("child: ...")
 *   --fork-raw   the same with the raw system call (no pthread_atfork
 *                handlers run in the child)
 *   --hold MS    sleeps MS ms before exiting (to stay listed)
 *
 * The socket is $XSCHED_SOCKET. Exit status 0 unless the arguments are bad.
 */
#include "ipc/ipc_abi.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *result(int rc)
{
	static char buf[16];

	if (rc >= 0)
		return "ok";
	switch (-rc) {
	case EPERM: return "EPERM";
	case ENXIO: return "ENXIO";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case ECANCELED: return "ECANCELED";
	case ECONNREFUSED: return "ECONNREFUSED";
	default:
		snprintf(buf, sizeof(buf), "E%d", -rc);
		return buf;
	}
}

static int try_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int do_register(void)
{
	union {
		char b[256];
		uint64_t align;
	} out, in;
	struct ipc_hello h = { .role = IPC_ROLE_ENFORCE };
	struct ipc_msg m;
	int fd, len, rc;

	len = ipc_build(out.b, sizeof(out.b), IPC_HELLO, 1, &h, sizeof(h));
	fd = ipc_connect(ipc_socket_path());
	if (fd < 0)
		return fd;
	rc = ipc_send(fd, out.b, (size_t)len, NULL, 0);
	if (rc >= 0)
		rc = ipc_recv(fd, in.b, sizeof(in.b), NULL, NULL, 0);
	if (rc > 0)
		rc = ipc_decode(in.b, (size_t)rc, IPC_FROM_DAEMON, &m) ? -EBADMSG :
		     ((const struct ipc_reply *)m.body)->status;
	close(fd);
	return rc > 0 ? -EBADMSG : rc;
}

static void child_open(const char *path, bool raw)
{
	pid_t pid = raw ? (pid_t)syscall(SYS_fork) : fork();
	int status;

	if (pid == 0) {
		printf("child: %s\n", result(try_open(path)));
		fflush(stdout);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
	bool reg = false, fork_glibc = false, fork_raw = false;
	const char *wait_file = NULL, *path = NULL;
	long hold_ms = 0;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--register"))
			reg = true;
		else if (!strcmp(argv[i], "--fork"))
			fork_glibc = true;
		else if (!strcmp(argv[i], "--fork-raw"))
			fork_raw = true;
		else if (!strcmp(argv[i], "--wait") && i + 1 < argc)
			wait_file = argv[++i];
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold_ms = strtol(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: xs_devopen [--register] [--fork] [--fork-raw] "
				"[--wait FILE] [--hold MS] PATH\n");
			return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "xs_devopen: no PATH\n");
		return 2;
	}
	if (reg)
		printf("register: %s\n", result(do_register()));
	for (i = 0; wait_file && access(wait_file, F_OK) != 0 && i < 3000; i++)
		usleep(10000);
	printf("self: %s\n", result(try_open(path)));
	if (fork_glibc)
		child_open(path, false);
	if (fork_raw)
		child_open(path, true);
	if (hold_ms > 0) {
		struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	return 0;
}
