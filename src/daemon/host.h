/*
 * The daemon's host of the scheduler core (host.c): the core (src/sched/)
 * over the clients' shared slots, the policy it runs, deciding, the
 * doorbells both ways and the timer. Its state is struct xsd_host
 * (daemon.h), d->host of the daemon.
 *
 * Everything runs on the daemon's loop thread. The host calls send.c,
 * slot.c and watch.c; requests.c and server.c call it, never the reverse.
 */
#ifndef XSD_HOST_H
#define XSD_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xs_policy_conf;
struct xsd;
struct xsd_client;
struct xsd_config;
struct xsd_host;
struct xsd_queue;

/* --- the core and its policy (also without a loop: --check-config) --- */

/* Starts the scheduler with @cfg's policy; on error @err says why. */
int xsd_host_init(struct xsd_host *s, const struct xsd_config *cfg,
		  char *err, size_t errlen);
void xsd_host_fini(struct xsd_host *s);
/* Switches to @name (built-in or absolute .so path), keeping every queue
 * and hint. On error the previous policy stays, and @err says why (the
 * module's and the daemon's ops versions for a module of another one). */
int xsd_host_set_policy(struct xsd_host *s, const char *name,
			const struct xs_policy_conf *pconf, char *err, size_t errlen);
/* Takes @cfg's starvation guard and contention window (a reload). */
void xsd_host_reconfigure(struct xsd_host *s, const struct xsd_config *cfg);

/* --- queues ------------------------------------------------------------ */

/* Gives @q its id and hands it to the core. 0 (a queue the policy refuses
 * runs unscheduled, logged) or -ENOMEM. */
int xsd_host_add(struct xsd_host *s, struct xsd_queue *q);
/* Takes @c's queue in @slot (if any) out of the core, releases its device
 * and slot (free, running) and frees it. */
void xsd_host_queue_free(struct xsd *d, struct xsd_client *c, uint32_t slot);
/* @q's hints changed: the core takes its priority, share, deadline, laxity. */
void xsd_host_hints_changed(struct xsd_host *s, struct xsd_queue *q);
/* Reads @q's status from its slot and tells the core what changed.
 * @recv_ns: when the daemon learned of it, 0 when @q's client did not ring
 * (a change seen in passing is not timed). */
void xsd_host_refresh(struct xsd_host *s, struct xsd_queue *q, uint64_t recv_ns);
/*
 * Suspends every queue of @c whatever the policy decides (@hold; memory
 * preemption, memory.c), or gives them back to its decisions; the change
 * is rung with the next decision (xsd_host_decide()).
 */
void xsd_host_hold(struct xsd_host *s, struct xsd_client *c, bool hold);

/* Puts @c on the list of clients to ring after the next decision. */
void xsd_host_mark_dirty(struct xsd_host *s, struct xsd_client *c);

/* --- deciding ------------------------------------------------------------ */

/*
 * Decides and tells the clients concerned. Reads the status of the queues
 * of @rang (the client whose doorbell brought us here; NULL: none, as
 * after a request or on the timer) and has their devices decided, with
 * every device whose state changed; each decided device's queues that were
 * quiet are read too, since they ring no doorbell (ipc_abi.h, "Lazy
 * doorbells"): no other slot is touched. Then writes the decisions that
 * changed, rings the clients that must hear of them, and re-arms the
 * timer. @recv_ns: when @rang rang (for the latency histograms).
 */
void xsd_host_decide(struct xsd *d, struct xsd_client *rang, uint64_t recv_ns);

/* --- clients and the loop ------------------------------------------------- */

/* Answers an agent's HELLO: maps its shared memory (slot.c), opens both
 * doorbells, watches the client's, and sends the IPC_HELLO_REPLY with the
 * three descriptors. 0 or -errno (drop the client). */
int xsd_host_hello(struct xsd *d, struct xsd_client *c, uint32_t seq);
/* @c is being dropped: its queues are freed, its doorbells closed, its
 * shared memory unmapped, and it is rung no more. */
void xsd_host_client_gone(struct xsd *d, struct xsd_client *c);
/* Creates the timer (d->timer). 0 or -errno. */
int xsd_host_start(struct xsd *d);
/* Stopping: every queue of every client runs (fail-open), its client rung;
 * the timer is closed. */
void xsd_host_stop(struct xsd *d);

#endif
