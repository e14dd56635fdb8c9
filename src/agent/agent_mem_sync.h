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

#endif
