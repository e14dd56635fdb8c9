/*
 * The agent thread's side of device memory (agent_mem.c), for the daemon
 * mode (agent_daemon.c).
 */
#ifndef XS_AGENT_MEM_SYNC_H
#define XS_AGENT_MEM_SYNC_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>

/* Whether the process has a memory record (it then stays connected). */
bool agent_mem_any(void);

/*
 * Connected through @shm (agent thread, the mapping in use): applies the
 * daemon's limits when mem_seq moved, and then, or with @all (a new
 * connection), publishes every record.
 */
void agent_mem_sync(struct ipc_shm *shm, bool all);

/* Memory preemption, for the daemon mode's protocol (agent thread). */

/* The daemon's flags (IPC_MEM_F_*) and mem_wait_ms at a new connection;
 * 0 at its loss. */
void agent_mem_connected(uint32_t flags, uint32_t wait_ms);

/* The first attempt to connect is over (whatever its outcome). */
void agent_mem_tried(void);

/* A request of agent_mem_need() to send: true with its body in *@out. */
bool agent_mem_need_take(struct ipc_mem_need *out);

/* It was sent as request @seq (0: could not be, the request fails). */
void agent_mem_need_sent(uint32_t seq);

/* IPC_REPLY @status to request @seq: true if it was the request's. */
bool agent_mem_need_reply(uint32_t seq, int status);

/* A daemon taken for hung: evicted memory may come back on its own. */
void agent_mem_fail_open(void);

/* IPC_MEM_EVICT and IPC_MEM_RESTORE: the shim's answer. */
int64_t agent_mem_evict(void);
int agent_mem_restore(void);

#endif
