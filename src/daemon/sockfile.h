/*
 * The daemon's socket files (sockfile.c): one daemon per socket path, and
 * nothing but a stale socket is ever removed. A leaf: it knows no daemon
 * state, only the path and what it claimed there.
 */
#ifndef XSD_SOCKFILE_H
#define XSD_SOCKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A socket file the daemon claimed. */
struct xsd_sockfile {
	int lock_fd;                       /* flock()ed "<path>.lock"; -1: none */
	bool bound;                        /* we created the socket at the path */
	dev_t dev;                         /* ... and this is its inode */
	ino_t ino;
};

/*
 * Makes @path free for bind(): locks "<path>.lock" (held in @sf until
 * xsd_sockfile_release()), refuses if another daemon holds it or answers
 * on @path, and removes @path only if it is a socket nobody listens on.
 * Anything else at @path is an error. Returns 0, or a negative errno with
 * the reason, for an operator, in @err.
 */
int xsd_sockfile_claim(const char *path, struct xsd_sockfile *sf, char *err, size_t errlen);
/* Records the socket just bound at @path as ours. */
void xsd_sockfile_bound(const char *path, struct xsd_sockfile *sf);
/* Removes @path if it is still the socket we bound; drops the lock. */
void xsd_sockfile_release(const char *path, struct xsd_sockfile *sf);

#endif
