/*
 * Device memory at the agent (agent_mem.c): the figures the shims count
 * (src/shim/common/shim_mem.h), published in the process's memory records
 * for the daemon, and the limits the daemon sets, handed back to the shim
 * ("Device memory" in src/ipc/ipc_abi.h).
 *
 * The shim owns the counters; the agent reads them when it publishes
 * (after each change, from the changing thread, and all of them again at
 * each new connection), so the daemon reads what the process holds
 * without a message per allocation.
 */
#ifndef XS_AGENT_MEM_H
#define XS_AGENT_MEM_H

#include "base/devid.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One device's figures, kept by the shim (bytes, but `refused`). */
struct agent_mem_counts {
	_Atomic uint64_t used;          /* device memory held */
	_Atomic uint64_t managed;       /* managed / shared memory held */
	_Atomic uint64_t peak;          /* highest `used` */
	_Atomic uint64_t refused;       /* allocations refused at the limit */
	_Atomic uint64_t limit;         /* the limit in effect; 0: none */
	_Atomic uint64_t total;         /* the driver's size of the device; 0: not asked */
	_Atomic uint64_t evictable;     /* of `used`, what memory preemption can evict */
	_Atomic uint64_t evicted;       /* evicted now (on the host) */
};

/*
 * Records the device @device (API-local name; its backend is the text
 * before ':') with identity @id (NULL: unverified), whose figures @c
 * holds, for the rest of the process; starts the agent if it is not (so
 * that the process connects to the daemon, queues or not). Returns the
 * record's index, or -ENOSPC past IPC_MEM_DEVICES, or -ENODEV when
 * scheduling is disabled (nothing is published then).
 */
int agent_mem_open(const char *device, const struct devid *id, struct agent_mem_counts *c);

/* Publishes record @index's figures (a negative @index is ignored). Any thread. */
void agent_mem_publish(int index);

/*
 * The limits the daemon set for the process ("Device memory", ipc_abi.h):
 * @fn is called on the agent thread each time they change, with the limit
 * set by xschedctl (0: none) and the ceiling of the process's own (0:
 * none); it applies them to every device and publishes.
 */
void agent_mem_on_limits(void (*fn)(uint64_t limit, uint64_t ceiling));

/*
 * Memory preemption ("Memory preemption" in src/ipc/ipc_abi.h).
 *
 * Whether the daemon this process is connected to does it (its allocations
 * the driver refuses may ask it for memory).
 */
bool agent_mem_preemption(void);

/* How long agent_mem_need() should wait for the daemon (ms). */
unsigned agent_mem_wait_ms(void);

/*
 * Asks the daemon to free @bytes on the device of record @index for an
 * allocation the driver refused, and waits for its answer, at most
 * @timeout_ms: 0 (memory was freed: try again), -ENOMEM (none to take),
 * -ENOTCONN (no daemon that does it), -ETIMEDOUT, -EBUSY (a request of the
 * process is pending). Any thread but the agent's.
 */
int agent_mem_need(int index, uint64_t bytes, unsigned timeout_ms);

/*
 * The shim's side of an eviction, called on the agent thread: @evict
 * evicts all it can and keeps it away until @restore (bytes freed, or
 * -errno); @restore brings it back (0, or -ENOMEM while there is not the
 * room); @release lets the memory come back on its own (the daemon is
 * gone: fail-open).
 */
void agent_mem_on_evict(int64_t (*evict)(void), int (*restore)(void), void (*release)(void));

#endif
