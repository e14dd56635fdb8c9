/*
 * Registration with the device gate (agent_enforce.h). One connection to
 * the client socket, IPC_HELLO with role IPC_ROLE_ENFORCE, the daemon's
 * IPC_REPLY, closed: the daemon identifies the process by the socket
 * (SO_PEERCRED, its pidfd), so nothing in the message is trusted.
 *
 * The child of a fork() is another process, absent from the allowed set:
 * the pthread_atfork child handler registers it, with system calls only
 * (async-signal-safe, as a child of a multithreaded parent must be), and
 * says nothing on failure (the daemon logs the refusal instead). A child
 * made by vfork() or posix_spawn() runs no handler; it is registered by
 * the constructor of the program it executes, if that has a shim.
 */
#include "agent/agent_enforce.h"
#include "agent/agent.h"
#include "base/xlog.h"
#include "ipc/ipc_abi.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The answer is one round trip on a healthy daemon (~100 us); a stopped or
 * hung one must not hold a program's start for long. */
#define AGENT_ENFORCE_WAIT_MS 2000

static char ae_sock[108];                  /* the client socket, kept for children */
static char ae_flag[sizeof(ae_sock) + 8];  /* "<socket>.enforce" */
static bool ae_global;                     /* the daemon schedules this process */

/* Registers this process: 0, or -errno (the daemon's refusal, or why not). */
static int ae_register(void)
{
	union {
		char b[256];
		uint64_t align;
	} out, in;
	struct ipc_hello h = { .role = IPC_ROLE_ENFORCE };
	struct pollfd pfd = { .events = POLLIN };
	struct ipc_msg m;
	int fd, len, rc;

	prctl(PR_GET_NAME, h.comm);
	len = ipc_build(out.b, sizeof(out.b), IPC_HELLO, 1, &h, sizeof(h));
	if (len < 0)
		return len;
	fd = ipc_connect(ae_sock);
	if (fd < 0)
		return fd;
	pfd.fd = fd;
	rc = ipc_send(fd, out.b, (size_t)len, NULL, 0);
	if (rc >= 0) {
		do
			rc = poll(&pfd, 1, AGENT_ENFORCE_WAIT_MS);
		while (rc < 0 && errno == EINTR);
		rc = rc == 0 ? -ETIMEDOUT : rc < 0 ? -errno : 0;
	}
	if (rc >= 0)
		rc = ipc_recv(fd, in.b, sizeof(in.b), NULL, NULL, 0);
	if (rc == 0)
		rc = -EPIPE;
	if (rc > 0) {
		rc = ipc_decode(in.b, (size_t)rc, IPC_FROM_DAEMON, &m);
		if (rc == 0 && (m.hdr.type != IPC_REPLY || m.hdr.seq != 1))
			rc = -EBADMSG;
		if (rc == 0)
			rc = ((const struct ipc_reply *)m.body)->status;
	}
	close(fd);
	return rc;
}

static void ae_child(void)
{
	if (ae_global && access(ae_flag, F_OK) == 0)
		ae_register();
}

static void ae_init_once(void)
{
	const char *path = ipc_socket_path();
	int rc;

	if (strlen(path) >= sizeof(ae_sock))
		return;
	memcpy(ae_sock, path, strlen(path) + 1);
	snprintf(ae_flag, sizeof(ae_flag), "%s.enforce", ae_sock);
	/* Children check the file themselves: enforcement may start later. */
	pthread_atfork(NULL, NULL, ae_child);
	ae_global = agent_mode() == AGENT_GLOBAL;
	if (access(ae_flag, F_OK) != 0)
		return;
	if (!ae_global) {
		/* A process the daemon does not schedule is not let through. */
		xlog(XLOG_WARN, "xschedd enforces device access (%s) but XSCHED_SCHEDULER or "
		     "XSCHED_DISABLE keeps this process from its scheduling: not registered, its "
		     "opens of accelerator devices will be refused", ae_flag);
		return;
	}
	rc = ae_register();
	if (rc == -ENODEV)
		xlog(XLOG_DEBUG, "%s is left from a daemon that no longer enforces", ae_flag);
	else if (rc < 0)
		xlog(XLOG_WARN, "xschedd enforces device access (%s) but this process could "
		     "not register with it (%s): its opens of accelerator devices will be "
		     "refused", ae_flag, strerror(-rc));
	else
		xlog(XLOG_DEBUG, "registered with the device gate of %s", ae_sock);
}

void agent_enforce_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, ae_init_once);
}
