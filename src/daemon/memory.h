/*
 * Device memory at the daemon (memory.c): the figures each process keeps in
 * its memory records ("Device memory" in src/ipc/ipc_abi.h), read when
 * listing (per queue, per device, metrics), and the limits the daemon sets:
 * the uid's ceiling ([limits] memory_limit, uid.N.memory_limit) and a
 * process's limit set with xschedctl (IPC_KEY_MEMORY_LIMIT).
 *
 * Records are written by their process at any time, so each is copied
 * before it is read, and one whose text is not well formed is skipped.
 */
#ifndef XSD_MEMORY_H
#define XSD_MEMORY_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct xsd;
struct xsd_client;
struct xsd_host;
struct xsd_device;
struct xsd_queue;
struct xsd_text;

/* Record @i of @c, copied into @out; false if unused or malformed. */
bool xsd_mem_read(const struct xsd_client *c, uint32_t i, struct ipc_mem *out);

/* Whether record @m is of device @dev (by identity, as queues match). */
bool xsd_mem_of(const struct ipc_mem *m, const struct xsd_device *dev);

/* What @q's process holds on @q's device, its limit there (0: none), and
 * of what it holds, what is evicted. */
void xsd_mem_queue(const struct xsd_host *h, const struct xsd_queue *q, uint64_t *used,
		   uint64_t *limit, uint64_t *evicted);

/* Adds to @r (mem_* fields) what client @c holds on device @dev. */
void xsd_mem_device_add(const struct xsd_client *c, const struct xsd_device *dev,
			struct ipc_device_rec *r);

/*
 * IPC_CTL_SET of IPC_KEY_MEMORY_LIMIT by @by: the limit of process s->id
 * (bytes per device; 0: none, the process's own under its ceiling). Returns
 * how many clients took it (0: none of that pid), or -EPERM (another
 * user's process; or above its ceiling, or none under one: the ceiling in
 * *@ceiling), -EINVAL (not by pid). Each client's agent is rung.
 */
int xsd_mem_set_limit(struct xsd *d, const struct xsd_client *by, const struct ipc_ctl_set *s,
		      uint64_t *ceiling);

/*
 * The memory series of the metrics (metrics.c): per process and device,
 * and per scheduling domain; of @uid's processes only unless @all.
 */
void xsd_mem_metrics(struct xsd_text *t, struct xsd *d, bool all, uid_t uid);

/*
 * Memory preemption ("Memory preemption" in src/ipc/ipc_abi.h; [memory]
 * preemption = yes): IPC_MEM_NEED of @c (answered once memory was freed,
 * or cannot be, or [memory] wait_ms passed), and its victims' answers.
 * Return 0, or a negative errno to drop the client.
 */
int xsd_mem_need(struct xsd *d, struct xsd_client *c, uint32_t seq,
		 const struct ipc_mem_need *n);
int xsd_mem_evicted_msg(struct xsd *d, struct xsd_client *v, const struct ipc_mem_evicted *e);
int xsd_mem_restored_msg(struct xsd *d, struct xsd_client *v, const struct ipc_mem_restored *r);

/* @c is going: its request is forgotten; as a victim, what it held is freed. */
void xsd_mem_client_gone(struct xsd *d, struct xsd_client *c);

/* At shutdown: the timer goes. */
void xsd_mem_stop(struct xsd *d);

/* The configuration changed: every client's ceiling again. */
void xsd_mem_reconfigure(struct xsd *d);

#endif
