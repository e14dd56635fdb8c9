/*
 * Device memory at the agent (see agent_mem.h and "Device memory" in
 * src/ipc/ipc_abi.h).
 *
 * Records are made by application threads (agent_mem_open(), under the
 * agent lock) and only ever added: ag.nmem counts the complete ones, so
 * publishers and the agent thread read them without the lock. Figures go
 * into the shared memory inside ag.users, like a queue's status
 * (agent_daemon.c), so a reconnection never unmaps it under a publisher.
 * Two threads publishing one record at once may store out of order: each
 * reads the counters again after its stores and stores again if they
 * moved, so the last store of the record is never older than its last
 * change.
 */
#include "agent/agent_mem.h"
#include "agent/agent.h"
#include "agent/agent_mem_sync.h"
#include "agent/agent_state.h"
#include "base/compiler.h"

#include <string.h>

int agent_mem_open(const char *device, const struct devid *id, struct agent_mem_counts *c)
{
	struct agent_mem_rec *r;
	const char *colon;
	uint32_t n;
	int rc = agent_start_once();

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&ag.lock);
	n = atomic_load_explicit(&ag.nmem, memory_order_relaxed);
	if (n == IPC_MEM_DEVICES) {
		pthread_mutex_unlock(&ag.lock);
		return -ENOSPC;
	}
	r = &ag.mem[n];
	memset(r, 0, sizeof(*r));
	strncpy(r->device, device, sizeof(r->device) - 1);
	colon = strchr(device, ':');
	memcpy(r->backend, device,
	       BASE_MIN(colon ? (size_t)(colon - device) : strlen(device), sizeof(r->backend) - 1));
	if (id)
		r->id = *id;
	r->c = c;
	atomic_store_explicit(&ag.nmem, n + 1, memory_order_release);
	pthread_mutex_unlock(&ag.lock);
	/* A new device to tell the daemon of: publishes it, connecting first
	 * if this is the process's first reason to. */
	agent_wake();
	agent_mem_publish((int)n);
	return (int)n;
}

static struct ipc_mem *agent_mem_slot(struct ipc_shm *shm, uint32_t i)
{
	if (i >= shm->nmem)
		return NULL;
	return (struct ipc_mem *)((char *)shm + shm->mem_offset) + i;
}

/* Record @i's device and figures into @shm (inside ag.users). */
static void agent_mem_store(struct ipc_shm *shm, uint32_t i)
{
	const struct agent_mem_rec *r = &ag.mem[i];
	struct ipc_mem *m = agent_mem_slot(shm, i);
	uint64_t used, managed;

	if (!m)
		return;
	if (!atomic_load_explicit(&m->state, memory_order_relaxed)) {
		m->id_kind = r->id.kind;
		memcpy(m->device, r->device, sizeof(m->device));
		memcpy(m->backend, r->backend, sizeof(m->backend));
		memcpy(m->ident, r->id.ident, sizeof(m->ident));
		memcpy(m->pci, r->id.pci, sizeof(m->pci));
		atomic_store_explicit(&m->state, 1, memory_order_release);
	}
	do {
		used = atomic_load(&r->c->used);
		managed = atomic_load(&r->c->managed);
		atomic_store(&m->used, used);
		atomic_store(&m->managed, managed);
		atomic_store(&m->peak, atomic_load(&r->c->peak));
		atomic_store(&m->refused, atomic_load(&r->c->refused));
		atomic_store(&m->limit, atomic_load(&r->c->limit));
		atomic_store(&m->total, atomic_load(&r->c->total));
	} while (used != atomic_load(&r->c->used) || managed != atomic_load(&r->c->managed));
}

void agent_mem_publish(int index)
{
	struct ipc_shm *shm;

	if (index < 0 || (uint32_t)index >= atomic_load_explicit(&ag.nmem, memory_order_acquire))
		return;
	atomic_fetch_add(&ag.users, 1);
	shm = atomic_load(&ag.shm);
	if (shm)
		agent_mem_store(shm, (uint32_t)index);
	atomic_fetch_sub(&ag.users, 1);
}

void agent_mem_on_limits(void (*fn)(uint64_t limit, uint64_t ceiling))
{
	pthread_mutex_lock(&ag.lock);
	ag.mem_limits = fn;
	pthread_mutex_unlock(&ag.lock);
}

bool agent_mem_any(void)
{
	return atomic_load_explicit(&ag.nmem, memory_order_acquire) > 0;
}

void agent_mem_sync(struct ipc_shm *shm, bool all)
{
	uint32_t seq = atomic_load_explicit(&shm->mem_seq, memory_order_acquire);
	uint32_t i, n = atomic_load_explicit(&ag.nmem, memory_order_acquire);
	void (*fn)(uint64_t, uint64_t);

	if (seq != ag.mem_seq_seen) {
		ag.mem_seq_seen = seq;
		pthread_mutex_lock(&ag.lock);
		fn = ag.mem_limits;
		pthread_mutex_unlock(&ag.lock);
		if (fn)
			fn(atomic_load(&shm->mem_limit), atomic_load(&shm->mem_ceiling));
		all = true;
	}
	for (i = 0; all && i < n; i++)
		agent_mem_store(shm, i);
}
