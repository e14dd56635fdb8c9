/*
 * Latency heat maps (heat.c; "Heat maps" in src/ipc/ipc_abi.h): counts of
 * latencies per time window and log2 bucket, kept for the last [observe]
 * heatmap_seconds, for
 * - every CPU of the node: run-queue latency of every task, from the
 *   run-queue programs' windows (src/bpf/rqlat.bpf.c, node-wide), with the
 *   tasks that ran longest and the registered processes that waited;
 * - every registered process: its threads' run-queue latency;
 * - every queue: its task latency (ready to idle, as the daemon sees it)
 *   with its suspensions and resumptions.
 * Nothing is added on an application's path: the queues' counts are taken
 * where the daemon already records a task's latency and writes a decision,
 * the CPU windows are copied from a read-only mapping every 250 ms.
 *
 * Memory, bounded: the CPU ring is dense (88 bytes per CPU and window: 0.53
 * MB per CPU for 60 s of 10 ms windows), shortened to fit [observe]
 * heatmap_memory_mb with the other rings; a queue's or a process's ring
 * holds at most HEAT_CELLS_MAX non-empty (window, bucket) cells of 8 bytes,
 * grown as used, oldest overwritten when full (counted as lost while still
 * in the span).
 */
#ifndef XSD_HEAT_H
#define XSD_HEAT_H

#include <stdbool.h>
#include <stdint.h>

struct xsd;
struct xsd_client;
struct xsd_queue;
struct xsd_heat;
struct heat_cells;
struct xbpf_rqlat;

#define HEAT_CELLS_MAX 8192u
#define HEAT_DRAIN_NS (250 * 1000000ull)

/* Sets up or re-sizes the rings as the configuration says (at start and
 * after each reload; a new window size starts them afresh). 0 or -ENOMEM. */
int xsd_heat_apply(struct xsd *d);
/* The run-queue programs were (re)loaded, or went (@rq NULL). */
void xsd_heat_rq(struct xsd *d, struct xbpf_rqlat *rq);
void xsd_heat_stop(struct xsd *d);

/* A task of @q went idle after @lat_ns ready, at @now. */
void xsd_heat_task(struct xsd_heat *h, struct xsd_queue *q, uint64_t now, uint64_t lat_ns);
/* A decision suspended (@run false) or resumed @q at @now. */
void xsd_heat_mark(struct xsd_heat *h, struct xsd_queue *q, uint64_t now, bool run);
/* @q is being freed. */
void xsd_heat_queue_gone(struct xsd_heat *h, struct xsd_queue *q);
/* @pid has no agent connection any more: its ring goes. */
void xsd_heat_proc_gone(struct xsd *d, int32_t pid);

/* Answers IPC_HEATMAP for @c. */
int xsd_heat_request(struct xsd *d, struct xsd_client *c, uint32_t seq, const void *body);

#endif
