/*
 * Run floors (floor.c; src/ipc/ipc_abi.h, "Run floors"): the pages of each
 * device, who gets which, the daemon's own word, the checks of the uids'
 * words, and the queues a floor held that must look again.
 *
 * The host calls in: xsd_floor_attach() when a queue registers (pages sent
 * before its IPC_REGISTERED), xsd_floor_decided() for every decided domain
 * before its decisions are written, xsd_floor_status() when a queue's slot
 * says something new, xsd_floor_covers() when a decision suspends an idle
 * queue, xsd_floor_detach() and xsd_floor_forget() as queues and devices
 * go. One thread, like the rest of the daemon.
 */
#ifndef XSD_FLOOR_H
#define XSD_FLOOR_H

#include "sched/sched_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xsd;
struct xsd_host;
struct xsd_queue;

/* Gives @q's client the floor pages of @q's device (its uid's page made if
 * there is none and room); @q's slot gets its table at the next decision.
 * Without floors, or without room, nothing: @q is scheduled by decisions
 * alone. */
void xsd_floor_attach(struct xsd *d, struct xsd_queue *q);

/* Marks client @c to be rung after the decision (host.c). */
struct xsd_client;
typedef void (*xsd_floor_ring_fn)(struct xsd_host *s, struct xsd_client *c);

/*
 * Before the decisions of the domain of @q[0..@n) are written: the slots'
 * floor fields (when @sum says something they derive from changed), the
 * daemon's word (@sum's low), the uids' words checked (lowered when stale,
 * a page withdrawn when scribbled), the clients of the queues a floor no
 * longer holds marked with @ring. Without a change, no pass over the
 * queues touches more than the scheduler core's own view of them.
 */
void xsd_floor_decided(struct xsd_host *s, struct sched_q *const *q, size_t n,
		       const struct sched_summary *sum, xsd_floor_ring_fn ring);

/* @q's status_seq moved: whether its client says a floor holds it. */
void xsd_floor_status(struct xsd_host *s, struct xsd_queue *q);

/*
 * Whether the daemon's word of @q's device stops @q, so that a suspension
 * of @q, idle, needs no store into its slot. Only on devices of more than
 * XSD_FLOOR_LAZY_MIN queues: below, a store per idle queue costs less
 * than the ring its Ready then needs, and its XQueue is told at once.
 */
#define XSD_FLOOR_LAZY_MIN 16
bool xsd_floor_covers(const struct xsd_host *s, const struct xsd_queue *q);

/* @q goes: its table reference dropped, its uid's word due for a look. */
void xsd_floor_detach(struct xsd_host *s, struct xsd_queue *q);

/* The device at @index was forgotten: its pages go. */
void xsd_floor_forget(struct xsd_host *s, uint32_t index);

/* Every device's pages go (shutdown). */
void xsd_floor_fini(struct xsd_host *s);

#endif
