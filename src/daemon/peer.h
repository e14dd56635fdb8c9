/*
 * Who a connecting process is beyond SO_PEERCRED: its pid inside its own
 * pid namespace and the container it runs in, read from the daemon's
 * /proc at accept time, for listings only (never for a decision or a
 * permission: a process may rename its cgroup path's parts no more than
 * its runtime lets it, but nothing here is authenticated).
 *
 * SO_PEERCRED already gives the pid as seen in the daemon's namespace
 * (the kernel translates it), so a containerised process is scheduled
 * under its host pid; a peer in no namespace the daemon can see (the
 * daemon inside a container without the host's pid namespace) reports pid
 * 0 and is refused by the caller.
 */
#ifndef XSD_PEER_H
#define XSD_PEER_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The innermost pid of the "NSpid:" line of a /proc/PID/status text
 * @status: the process's pid in its own namespace, or 0 when it is in the
 * reader's namespace (one field) or the line is missing or malformed.
 */
int32_t xsd_peer_nspid(const char *status);

/*
 * The container id in a /proc/PID/cgroup text @cgroup: the last run of
 * exactly 64 hexadecimal digits in a cgroup path, as container runtimes
 * name their cgroups (podman "libpod-ID", Docker "docker-ID.scope" or
 * "/docker/ID", containerd "cri-containerd-ID.scope", CRI-O
 * "crio-ID.scope", Kubernetes with cgroupfs ".../pod<uid>/ID"). The
 * unified (0::) line is preferred, then the first line with an id. Writes
 * it, NUL-terminated, to @out (@len >= 65) and returns 1, or returns 0
 * (out = "") when there is none.
 */
int xsd_peer_container(const char *cgroup, char *out, size_t len);

/*
 * Fills *@nspid and @container (@len >= 65) for process @pid from
 * /proc/@pid/status and /proc/@pid/cgroup; both zero / "" when unknown.
 * @pidfd (the caller's pidfd of @pid, or -1) tells whether the process
 * was still alive once the files were read, so that a recycled pid's
 * files are not taken for the peer's. Never fails.
 */
void xsd_peer_identify(pid_t pid, int pidfd, int32_t *nspid, char *container, size_t len);

/* The cgroup v2 path of @pid ("0::/path" in /proc/PID/cgroup) in @out, or "". */
void xsd_peer_cgroup(pid_t pid, char *out, size_t len);

#endif
