/*
 * Unix socket helpers (see ipc_sock.h).
 */
#include "ipc/ipc_sock.h"
#include "ipc/ipc_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

const char *ipc_socket_path(void)
{
	const char *p = getenv("XSCHED_SOCKET");

	return p && *p ? p : IPC_DEFAULT_SOCKET;
}

const char *ipc_control_path(void)
{
	const char *p = getenv("XSCHED_CONTROL_SOCKET");

	return p && *p ? p : IPC_DEFAULT_CONTROL;
}

static int ipc_addr(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n);
	return 0;
}

int ipc_listen(const char *path, mode_t mode, gid_t gid, int backlog)
{
	struct sockaddr_un sa;
	int fd, rc;

	rc = ipc_addr(path, &sa);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (chmod(path, mode) < 0 ||
	    (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) ||
	    listen(fd, backlog) < 0) {
		rc = -errno;
		unlink(path);
		close(fd);
		return rc;
	}
	return fd;
}

int ipc_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, rc;

	rc = ipc_addr(path, &sa);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int ipc_send(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds < 0 || nfds > IPC_MAX_FDS)
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? (int)n : -EIO;
}

int ipc_recv(int fd, void *buf, size_t cap, int *fds, int *nfds, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int got = 0;
	ssize_t n;

	if (nfds)
		*nfds = 0;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int i, k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < k; i++) {
			int d;

			memcpy(&d, CMSG_DATA(cm) + (size_t)i * sizeof(int), sizeof(int));
			if (fds && nfds && got < IPC_MAX_FDS)
				fds[got++] = d;
			else
				close(d);
		}
	}
	if (nfds)
		*nfds = got;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		while (got > 0)
			close(fds[--got]);
		if (nfds)
			*nfds = 0;
		return -EMSGSIZE;
	}
	return (int)n;
}

int ipc_peer_cred(int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
		return -errno;
	return 0;
}
