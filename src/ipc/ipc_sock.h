/*
 * Unix SOCK_SEQPACKET helpers: listening, connecting, sending and receiving
 * one packet with optional file descriptors (SCM_RIGHTS), peer credentials.
 * All return 0 / a length, or a negative errno; none logs.
 */
#ifndef XS_IPC_SOCK_H
#define XS_IPC_SOCK_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#define IPC_MAX_FDS 4

/* The client socket path: $XSCHED_SOCKET, else IPC_DEFAULT_SOCKET. */
const char *ipc_socket_path(void);
/* The control socket path: $XSCHED_CONTROL_SOCKET, else IPC_DEFAULT_CONTROL. */
const char *ipc_control_path(void);

/*
 * Listens on @path, which must not exist (bind() fails with -EADDRINUSE
 * otherwise: removing a stale socket is the caller's decision), with
 * @mode, and group @gid unless it is (gid_t)-1. Non-blocking,
 * close-on-exec. On error after bind() the socket file is removed.
 */
int ipc_listen(const char *path, mode_t mode, gid_t gid, int backlog);

/* Connects to @path (blocking, close-on-exec). -ENOENT/-ECONNREFUSED: no daemon. */
int ipc_connect(const char *path);

/* Sends one packet with up to IPC_MAX_FDS descriptors; never raises SIGPIPE. */
int ipc_send(int fd, const void *buf, size_t len, const int *fds, int nfds);

/*
 * Receives one packet into @buf. Descriptors that came with it are stored
 * in @fds (capacity IPC_MAX_FDS, close-on-exec) and counted in *@nfds; pass
 * NULL to refuse descriptors (any received are closed). Returns the length,
 * 0 at end of stream, -EMSGSIZE for a truncated packet, -errno.
 */
int ipc_recv(int fd, void *buf, size_t cap, int *fds, int *nfds, int flags);

/* Credentials of the peer of @fd, from the kernel (SO_PEERCRED). */
int ipc_peer_cred(int fd, struct ucred *cred);

#endif
