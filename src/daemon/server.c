/*
 * xschedd's sockets and clients: listening, accepting connections,
 * identifying peers (SO_PEERCRED, and a pidfd to notice their exit),
 * receiving packets (requests.c handles them), housekeeping, and dropping
 * clients. A client's shared memory, doorbells and queues are the host's
 * (host.c), which it tells when a client goes; replies go out through
 * send.c.
 *
 * A client is whatever connected; the kernel's credentials, never a value
 * the client sends, decide what it may do (requests.c). Every packet is
 * validated (ipc_decode()) before use; a malformed one gets an error
 * reply, and a client that keeps sending them, or whose packets do not
 * even frame, is disconnected. Nothing a client does can stop the loop.
 */
#include "daemon/server.h"
#include "daemon/daemon.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/memory.h"
#include "daemon/observe.h"
#include "daemon/peer.h"
#include "daemon/requests.h"
#include "daemon/send.h"
#include "daemon/sockfile.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define XSD_MAX_BAD_MSGS 8
/* A connection must say HELLO within this time, or it is closed. */
#define XSD_HELLO_TIMEOUT_NS (2 * NSEC_PER_SEC)

union xsd_buf {
	char b[IPC_MSG_MAX + 1];
	uint64_t align;
};

/*
 * A pidfd of the process that connected on @fd: SO_PEERPIDFD (Linux 6.5)
 * names exactly that process; elsewhere pidfd_open(@pid), which names
 * whoever has the pid now (the peer, unless it exited and the pid was
 * reused between connect and accept).
 */
static int xsd_peer_pidfd(int fd, pid_t pid)
{
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0)
		return pidfd;
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void xsd_accept_pause(struct xsd *d, bool pause);

static void xsd_client_free(struct xsd *d, struct xsd_client *c)
{
	struct xsd_client **pp;

	for (pp = &d->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	xsd_observe_client_gone(d, c);
	xsd_mem_client_gone(d, c);
	if (!c->hello)
		d->pending_hello--;
	/* Its queues, doorbells and shared memory. */
	xsd_host_client_gone(d, c);
	xsd_send_discard(c);
	xsd_watch_del(d, &c->sock);
	xsd_watch_del(d, &c->pidw);
	free(c->refused);
	c->refused = NULL;
	/* Events of this epoll batch may still name it: freed after the batch. */
	c->dead = true;
	c->next = d->zombies;
	d->zombies = c;
	d->nclients--;
	/* Its descriptors are free: listen again if we had to stop. */
	if (d->accept_paused)
		xsd_accept_pause(d, false);
}

void xsd_reap_zombies(struct xsd *d)
{
	while (d->zombies) {
		struct xsd_client *c = d->zombies;

		d->zombies = c->next;
		free(c);
	}
}

static void xsd_client_drop(struct xsd *d, struct xsd_client *c, const char *why)
{
	char what[64];
	uint32_t i;

	xsd_debug("client %llu (pid %d): %s", (unsigned long long)c->id, (int)c->pid, why);
	snprintf(what, sizeof(what), "removed (%s)", why);
	for (i = 0; c->queue && i < c->nslots; i++)
		if (c->queue[i])
			xsd_log_queue(c->queue[i], what);
	xsd_client_free(d, c);
	xsd_host_decide(d, NULL, 0);
}

static void on_client_sock(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct xsd_client *c = base_container_of(w, struct xsd_client, sock);
	union xsd_buf buf;

	if (c->dead)
		return;
	if ((events & EPOLLOUT) && xsd_send_flush(c) < 0) {
		xsd_client_drop(d, c, "unreachable");
		return;
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	while (!c->dead) {
		size_t cap = BASE_MIN(sizeof(buf.b), (size_t)d->cfg.max_message_size + 1);
		struct ipc_msg m;
		int n = ipc_recv(c->sock.fd, buf.b, cap, NULL, NULL, MSG_DONTWAIT);

		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			xsd_client_drop(d, c, n == 0 ? "disconnected" :
					n == -EMSGSIZE ? "message too large" : "receive error");
			return;
		}
		n = ipc_decode(buf.b, (size_t)n, IPC_FROM_CLIENT, &m);
		if (n < 0) {
			struct ipc_hdr h = { 0 };

			memcpy(&h, buf.b, sizeof(h));
			if (h.magic != IPC_MAGIC || ++c->bad_msgs > XSD_MAX_BAD_MSGS ||
			    xsd_reply(c, h.seq, n) < 0) {
				xsd_client_drop(d, c, "malformed messages");
				return;
			}
			continue;
		}
		c->bad_msgs = 0;
		if (xsd_handle(d, c, &m) < 0) {
			xsd_client_drop(d, c, "protocol error or unreachable");
			return;
		}
	}
}

static void on_client_exit(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct xsd_client *c = base_container_of(w, struct xsd_client, pidw);

	(void)events;
	if (!c->dead)
		xsd_client_drop(d, c, "process exited");
}

static uint32_t xsd_uid_clients(struct xsd *d, uid_t uid)
{
	struct xsd_client *c;
	uint32_t n = 0;

	for (c = d->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* Housekeeping ticks once a second while connections await their HELLO
 * or listening is paused. */
static void xsd_house_arm(struct xsd *d, bool on)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (on) {
		its.it_value.tv_sec = 1;
		its.it_interval.tv_sec = 1;
	}
	timerfd_settime(d->house.fd, 0, &its, NULL);
}

/* Stops (@pause) or resumes listening on both sockets; see xsd_accept_shed(). */
static void xsd_accept_pause(struct xsd *d, bool pause)
{
	struct epoll_event ev = { .events = pause ? 0 : EPOLLIN };

	if (pause == d->accept_paused)
		return;
	if (!pause && d->reserve_fd < 0)
		d->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ev.data.ptr = &d->listen_client;
	epoll_ctl(d->epfd, EPOLL_CTL_MOD, d->listen_client.fd, &ev);
	ev.data.ptr = &d->listen_control;
	epoll_ctl(d->epfd, EPOLL_CTL_MOD, d->listen_control.fd, &ev);
	d->accept_paused = pause;
	if (pause)
		xsd_house_arm(d, true);
}

static void on_house(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	uint64_t now = clock_now_ns(), v;
	struct xsd_client *c, *next;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	for (c = d->clients; c; c = next) {
		next = c->next;
		if (!c->hello && now - c->accepted_ns > XSD_HELLO_TIMEOUT_NS)
			xsd_client_drop(d, c, "no HELLO in time");
	}
	xsd_accept_pause(d, false);
	if (!d->pending_hello && !d->accept_paused)
		xsd_house_arm(d, false);
}

/* A connection closed for want of descriptors: counted, rate-limited log. */
static void xsd_fd_warn(struct xsd *d, int err)
{
	uint64_t missed;

	d->refused_fds++;
	if (xsd_ratelimit_ok(&d->fd_warn, clock_now_ns(), &missed))
		xsd_warn("out of file descriptors (%s): closing new connections (%llu more "
			 "since the last message); raise LimitNOFILE or lower max_clients",
			 strerror(err), (unsigned long long)missed);
}

/*
 * Out of descriptors (EMFILE, ENFILE), a pending connection can be neither
 * accepted nor left pending: the listener would stay readable and the
 * loop spin on it. So the daemon keeps one descriptor in reserve: it
 * frees it, accepts the connection, closes it (the client sees it closed
 * and runs unscheduled, as without a daemon), and takes the reserve back.
 * If even that fails (the whole system is out), listening pauses until
 * the next housekeeping tick or until a client leaves. Clients already
 * connected are served throughout; the message is rate-limited.
 * Returns true if the caller may accept again at once.
 */
static bool xsd_accept_shed(struct xsd *d, int lfd, int err)
{
	int fd;

	xsd_fd_warn(d, err);
	if (d->reserve_fd >= 0) {
		close(d->reserve_fd);
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		err = errno;
		if (fd >= 0)
			close(fd);
		d->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return true;
		if (err == EAGAIN)
			return false;
	}
	xsd_accept_pause(d, true);
	return false;
}

static void xsd_accept(struct xsd *d, int lfd, bool control)
{
	for (;;) {
		struct xsd_client *c;
		struct ucred cred;
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), pidfd;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				if (xsd_accept_shed(d, lfd, errno))
					continue;
			} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				xsd_warn("accept: %s", strerror(errno));
			}
			return;
		}
		if (d->nclients >= d->cfg.max_clients || ipc_peer_cred(fd, &cred) < 0 ||
		    (cred.uid != 0 && xsd_uid_clients(d, cred.uid) >= d->cfg.max_clients_per_uid)) {
			uint64_t missed;

			if (xsd_ratelimit_ok(&d->limit_warn, clock_now_ns(), &missed))
				xsd_warn("refusing a connection: %s (%llu more since the last message)",
					 d->nclients >= d->cfg.max_clients ? "client limit reached" :
					 "per-user client limit reached", (unsigned long long)missed);
			close(fd);
			continue;
		}
		if (cred.pid == 0) {
			/* A peer in a pid namespace that is not ours nor below it. */
			uint64_t missed;

			if (xsd_ratelimit_ok(&d->limit_warn, clock_now_ns(), &missed))
				xsd_warn("refusing a connection from outside the daemon's pid "
					 "namespace (uid %u): run xschedd in the host's pid "
					 "namespace (%llu more since the last message)",
					 (unsigned)cred.uid, (unsigned long long)missed);
			close(fd);
			continue;
		}
		pidfd = xsd_peer_pidfd(fd, cred.pid);
		c = calloc(1, sizeof(*c));
		if (pidfd < 0 || !c) {
			if (pidfd < 0 && (errno == EMFILE || errno == ENFILE))
				xsd_fd_warn(d, errno);
			free(c);
			if (pidfd >= 0)
				close(pidfd);
			close(fd);
			continue;
		}
		c->id = d->next_client_id++;
		c->accepted_ns = clock_now_ns();
		if (d->pending_hello++ == 0)
			xsd_house_arm(d, true);
		c->pid = cred.pid;
		xsd_peer_identify(cred.pid, pidfd, &c->nspid, c->container, sizeof(c->container));
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->privileged = control || cred.uid == 0;
		c->sock.fd = fd;
		c->sock.fn = on_client_sock;
		c->pidw.fd = pidfd;
		c->pidw.fn = on_client_exit;
		c->bell.fd = -1;
		c->bell_out = -1;
		c->epfd = d->epfd;
		c->next = d->clients;
		d->clients = c;
		d->nclients++;
		if (xsd_watch_add(d, &c->sock, EPOLLIN) < 0 ||
		    xsd_watch_add(d, &c->pidw, EPOLLIN) < 0)
			xsd_client_drop(d, c, "cannot watch");
	}
}

static void on_listen_client(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	(void)events;
	xsd_accept(d, w->fd, false);
}

static void on_listen_control(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	(void)events;
	xsd_accept(d, w->fd, true);
}

static int xsd_mkdir_parent(const char *path)
{
	char dir[128], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Claims @path and listens on it; 0 or -errno (logged). */
static int xsd_listen(struct xsd_watch *w, struct xsd_sockfile *sf, const char *path,
		      mode_t mode, gid_t gid, int backlog)
{
	char err[512];
	int fd = xsd_mkdir_parent(path);

	if (fd < 0) {
		xsd_err("cannot create the directory of %s: %s", path, strerror(-fd));
		return fd;
	}
	fd = xsd_sockfile_claim(path, sf, err, sizeof(err));
	if (fd < 0) {
		xsd_err("%s", err);
		return fd;
	}
	fd = ipc_listen(path, mode, gid, backlog);
	if (fd < 0) {
		xsd_err("cannot listen on %s: %s", path, strerror(-fd));
		return fd;
	}
	xsd_sockfile_bound(path, sf);
	w->fd = fd;
	return 0;
}

int xsd_server_start(struct xsd *d)
{
	int rc;

	d->file_client.lock_fd = d->file_control.lock_fd = -1;
	d->fd_warn.interval_ns = d->limit_warn.interval_ns = 10 * NSEC_PER_SEC;
	d->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d->house.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->house.fn = on_house;
	if (d->house.fd < 0 || xsd_watch_add(d, &d->house, EPOLLIN) < 0)
		return -errno;
	d->listen_client.fn = on_listen_client;
	d->listen_control.fn = on_listen_control;
	rc = xsd_listen(&d->listen_client, &d->file_client, d->cfg.socket, 0666, (gid_t)-1, 128);
	if (rc < 0)
		return rc;
	rc = xsd_listen(&d->listen_control, &d->file_control, d->cfg.control_socket, 0660,
			d->control_gid, 16);
	if (rc < 0)
		return rc;
	if (xsd_watch_add(d, &d->listen_client, EPOLLIN) < 0 ||
	    xsd_watch_add(d, &d->listen_control, EPOLLIN) < 0)
		return -errno;
	return 0;
}

void xsd_server_stop(struct xsd *d)
{
	while (d->clients)
		xsd_client_free(d, d->clients);
	xsd_reap_zombies(d);
	xsd_watch_del(d, &d->listen_client);
	xsd_watch_del(d, &d->listen_control);
	xsd_sockfile_release(d->cfg.socket, &d->file_client);
	xsd_sockfile_release(d->cfg.control_socket, &d->file_control);
	xsd_watch_del(d, &d->house);
	if (d->reserve_fd >= 0)
		close(d->reserve_fd);
	d->reserve_fd = -1;
}
