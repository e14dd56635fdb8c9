/*
 * Device enforcement ([enforce] devices = audit | on; enforce.c): the
 * daemon's side of the device gate (src/bpf/gate.bpf.c). It loads the gate,
 * tells it which devices it guards, which processes are in scope and which
 * are exempt, adds each registered process to the allowed set, logs and
 * lists the processes the gate refused, and publishes the file that tells
 * the shims to register before main ("<client socket>.enforce"). All of it
 * runs on the daemon's epoll thread.
 */
#ifndef XSD_ENFORCE_H
#define XSD_ENFORCE_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>
#include <stdint.h>

struct xsd;
struct xsd_client;
struct xsd_text;

/*
 * Starts, reconfigures or stops the gate as the configuration now says (at
 * start and after each reload). A gate that cannot load is logged at error
 * level (once while its reason stays the same), shown in the metrics, and
 * the daemon schedules on without it. Returns 0, or -ENOMEM.
 */
int xsd_enforce_apply(struct xsd *d);
/*
 * At stop: closes the daemon's hold of the gate. With fail = open the gate
 * goes with it; with fail = closed it stays pinned and keeps refusing
 * unregistered processes, and the registered keep their access.
 */
void xsd_enforce_stop(struct xsd *d);
/* Allows @c's process (HELLO of an agent or of a registration). 0, or
 * -ENODEV (off), -ECANCELED (the gate is not loaded), -ESRCH (it exited). */
int xsd_enforce_register(struct xsd *d, const struct xsd_client *c);
/* The gate's record of process @pid started at @start_ns (CLOCK_BOOTTIME),
 * merged into the bypass listing: its state and refusals; false if none. */
bool xsd_enforce_find(const struct xsd *d, int32_t pid, uint64_t start_ns, uint32_t *state,
		      uint64_t *denied);
/* Calls @fn for each process the gate refused (or held a device before it
 * started) that the bypass detector does not list; @reader scopes them. */
void xsd_enforce_each(const struct xsd *d, const struct xsd_client *reader,
		      void (*fn)(void *arg, const struct ipc_bypass_rec *r), void *arg);
/* Whether the gate is loaded (IPC_BYPASS answers with its table then). */
bool xsd_enforce_running(const struct xsd *d);
/* Why the gate is not running: -ENODEV (off), the load's -errno, or 0 (it runs). */
int xsd_enforce_error(const struct xsd *d);
/* The gate's fields of `xschedctl status`. */
void xsd_enforce_status(const struct xsd *d, struct ipc_status_reply *r);
/* Appends the gate's series to @t, scoped to @reader (NULL: everything). */
void xsd_enforce_metrics(struct xsd *d, const struct xsd_client *reader, struct xsd_text *t);

#endif
