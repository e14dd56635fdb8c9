/*
 * What the daemon sees with eBPF (observe.c): the bypass detector's table
 * of the processes on the node that use an accelerator, checked against
 * the clients that registered ([observe] bypass = yes), and the run-queue
 * latency of the registered processes' threads ([observe]
 * runqueue_latency = yes). A daemon that cannot load the programs (no
 * privilege, no BTF, a build without eBPF) says so once and runs without
 * them. All of it runs on the daemon's epoll thread.
 */
#ifndef XSD_OBSERVE_H
#define XSD_OBSERVE_H

#include <stdint.h>

struct xsd;
struct xsd_client;
struct xsd_text;

/*
 * Starts, stops or restarts the detector as the configuration now says
 * (at start and after each reload). A failure to load is logged (once
 * while its reason stays the same) and remembered for IPC_BYPASS; the
 * daemon runs on. Returns 0, or -ENOMEM.
 */
int xsd_observe_apply(struct xsd *d);
/* Detaches everything and frees the table (at stop). */
void xsd_observe_stop(struct xsd *d);
/* An agent said HELLO: its process is scheduled, not a bypass, and its
 * run-queue latency is measured from now on. */
void xsd_observe_client(struct xsd *d, const struct xsd_client *c);
/* @c is being freed: stop measuring its process. */
void xsd_observe_client_gone(struct xsd *d, const struct xsd_client *c);
/* P99 run-queue latency of @pid's threads in ns; 0: not measured (yet). */
uint64_t xsd_observe_rq_p99(const struct xsd *d, int32_t pid);
/* Answers IPC_BYPASS for @c: the table, or why there is none. */
int xsd_observe_list(struct xsd *d, struct xsd_client *c, uint32_t seq);
/* Appends the detector's series to @t, scoped to @reader as listings
 * (NULL: everything). */
void xsd_observe_metrics(struct xsd *d, const struct xsd_client *reader, struct xsd_text *t);

#endif
