/*
 * The daemon's socket files: one daemon per socket path, and nothing but a
 * stale socket is ever removed.
 *
 * Before it binds a path, the daemon takes an exclusive flock() on
 * "<path>.lock" and keeps it until it exits, so two daemons starting at
 * once cannot both remove and bind the same path (the loser of the lock
 * stops). The lock also names its holder: the file holds its pid. A
 * daemon that holds no lock (an older build) is caught by a connection
 * attempt: a socket that accepts a connection, or answers anything but
 * "refused", is alive. Only a socket file nobody listens on is removed;
 * a regular file, a directory, a link or anything else at the path is an
 * error, left as it is. At exit the daemon removes the socket only if the
 * path still names the one it bound. Lock files are never removed: a
 * daemon unlinking its lock while another opens it would let a third one
 * lock a different file of the same name.
 */
#include "daemon/sockfile.h"
#include "daemon/config.h"
#include "daemon/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Reads the pid a lock holder wrote; 0 if none. */
static long sockfile_holder(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static int sockfile_lock(const char *path, struct xsd_sockfile *sf, char *err, size_t errlen)
{
	char lock[sizeof(((struct xsd_config *)0)->socket) + 8], pid[32];
	long holder;
	int fd, n;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot open the lock file %s: %s", lock, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		holder = sockfile_holder(fd);
		close(fd);
		if (e != EWOULDBLOCK) {
			snprintf(err, errlen, "cannot lock %s: %s", lock, strerror(e));
			return -e;
		}
		if (holder == (long)getpid())
			snprintf(err, errlen, "the client and control sockets are the same file %s",
				 path);
		else if (holder > 0)
			snprintf(err, errlen, "another xschedd (pid %ld) serves %s: not starting a "
				 "second one", holder, path);
		else
			snprintf(err, errlen, "another xschedd holds %s: not starting a second one",
				 lock);
		return -EADDRINUSE;
	}
	/* If this fails, only the message a second daemon prints suffers. */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n)
		xsd_debug("cannot write the pid to %s", lock);
	sf->lock_fd = fd;
	return 0;
}

/* @path is a socket: 0 if nobody listens on it (stale), else an error. */
static int sockfile_probe(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc, e;

	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot check %s: %s", path, strerror(e));
		return -e;
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	if (rc < 0 && (e == ECONNREFUSED || e == ENOENT))
		return 0;
	if (rc == 0 || e == EAGAIN || e == EINPROGRESS || e == EPROTOTYPE) {
		snprintf(err, errlen, "a daemon is listening on %s: not starting a second one "
			 "(stop it first)", path);
		return -EADDRINUSE;
	}
	snprintf(err, errlen, "cannot check whether a daemon listens on %s: %s", path,
		 strerror(e));
	return -e;
}

/* The error for @path, which exists and is not a socket. */
static int sockfile_not_socket(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "%s is a directory: give the path of the socket file "
			 "(e.g. %s/xschedd.sock)", path, path);
		return -EISDIR;
	}
	snprintf(err, errlen, "%s exists and is not a socket: not removing it", path);
	return -EEXIST;
}

int xsd_sockfile_claim(const char *path, struct xsd_sockfile *sf, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	sf->lock_fd = -1;
	sf->bound = false;
	/* What is no socket is refused before a lock file appears beside it. */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return sockfile_not_socket(path, &st, err, errlen);
	rc = sockfile_lock(path, sf, err, errlen);
	if (rc < 0)
		return rc;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto fail;
	}
	if (!S_ISSOCK(st.st_mode)) {
		rc = sockfile_not_socket(path, &st, err, errlen);
		goto fail;
	}
	rc = sockfile_probe(path, err, errlen);
	if (rc < 0)
		goto fail;
	/* A socket nobody listens on: left by a daemon that was killed. */
	if (unlink(path) < 0 && errno != ENOENT) {
		rc = -errno;
		snprintf(err, errlen, "cannot remove the stale socket %s: %s", path,
			 strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	close(sf->lock_fd);
	sf->lock_fd = -1;
	return rc;
}

void xsd_sockfile_bound(const char *path, struct xsd_sockfile *sf)
{
	struct stat st;

	if (lstat(path, &st) == 0) {
		sf->dev = st.st_dev;
		sf->ino = st.st_ino;
		sf->bound = true;
	}
}

void xsd_sockfile_release(const char *path, struct xsd_sockfile *sf)
{
	struct stat st;

	if (sf->bound && lstat(path, &st) == 0 && st.st_dev == sf->dev && st.st_ino == sf->ino)
		unlink(path);
	sf->bound = false;
	if (sf->lock_fd >= 0)
		close(sf->lock_fd);
	sf->lock_fd = -1;
}
