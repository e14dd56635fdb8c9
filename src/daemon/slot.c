/*
 * The daemon's writes into a client's shared memory (see slot.h).
 *
 * Why one module: the ABI (src/ipc/ipc_abi.h) makes the daemon the single
 * writer of half of each slot and pairs some of its stores with the
 * client's loads (Dekker pairs, release/acquire). Kept in one place, each
 * store sits next to the comment that says what it pairs with, and
 * nothing else in the daemon stores into memory a client reads.
 *
 * Orderings, each named after its paragraph of ipc_abi.h:
 * - decision_seq: bumped with a release store after every change of `run`
 *   or a knob or hint; the agent loads it, then the fields it announces.
 * - "Lazy doorbells": `quiet` is stored sequentially consistent; the
 *   scheduler core clears it and then reads the queue's status (host.c,
 *   host_refresh()), against the client's status store then quiet load.
 * - "Lazy suspensions", "Drain": `run` is a release store; the full
 *   barrier between a device's run stores and the in-flight loads that
 *   pair with them is host.c's host_commit(), one per decision.
 * - "Liveness": the heartbeat bump is a release; the agent's load is an
 *   acquire, so an agent that saw a beat sees the decisions before it.
 * - "Run floors": the slot's floor fields are plain stores, read at the
 *   client's next launch or Ready; the floor pages' words are floor.c's.
 * Stores made before the memfd is passed (xsd_slot_map()) need no order:
 * the client maps the memory after receiving it.
 */
#include "daemon/slot.h"
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

int xsd_slot_map(struct xsd_client *c, uint32_t nslots, const struct xsd_slot_mem *mem,
		 int *memfd)
{
	size_t mem_offset = sizeof(struct ipc_shm) + nslots * sizeof(struct ipc_slot);
	size_t size = mem_offset + IPC_MEM_DEVICES * sizeof(struct ipc_mem);
	struct ipc_shm *shm;
	uint32_t i;
	int fd, rc;

	fd = memfd_create("xsched-client", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail;
	shm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED)
		goto fail;
	shm->magic = IPC_SHM_MAGIC;
	shm->version = IPC_VERSION;
	shm->size = (uint32_t)size;
	shm->nslots = nslots;
	shm->client_id = c->id;
	shm->heartbeat_ms = IPC_HEARTBEAT_MS;
	/* The memory records, all unused; the ceiling before the client
	 * maps it, so it applies from the process's first allocation. */
	shm->nmem = IPC_MEM_DEVICES;
	shm->mem_offset = (uint32_t)mem_offset;
	shm->mem_flags = mem->flags;
	shm->mem_wait_ms = mem->wait_ms;
	atomic_store(&shm->mem_ceiling, mem->ceiling);
	/* A slot runs until decided otherwise; waits_on is the client's
	 * field, -1 (waits on none) until it writes one. */
	for (i = 0; i < nslots; i++) {
		atomic_store(&shm->slot[i].run, 1);
		atomic_store(&shm->slot[i].waits_on, -1);
	}
	/* The size can never change under the daemon's mapping. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rc = -errno;
		munmap(shm, size);
		close(fd);
		return rc;
	}
	c->shm = shm;
	c->shm_size = size;
	c->nslots = nslots;
	*memfd = fd;
	return 0;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

void xsd_slot_unmap(struct xsd_client *c)
{
	if (c->shm)
		munmap(c->shm, c->shm_size);
	c->shm = NULL;
}

void xsd_slot_beat(struct xsd_client *c)
{
	/* Release: pairs with the agent's acquire (ipc_abi.h, "Liveness"). */
	atomic_fetch_add_explicit(&c->shm->heartbeat, 1, memory_order_release);
}

/* Announces what was just stored in @q's slot (run, a knob, a hint). */
static void xsd_slot_decided(struct xsd_queue *q)
{
	/* Release: after the stores it announces; the agent loads it first. */
	atomic_store_explicit(&q->sp->decision_seq, ++q->decision_seq, memory_order_release);
}

void xsd_slot_bind(struct xsd_queue *q)
{
	struct ipc_slot *slot = q->sp = &q->client->shm->slot[q->slot];

	/* A slot used before keeps counting: we continue its decision_seq,
	 * and its status, whatever it is, is news (read at the first look). */
	q->decision_seq = atomic_load(&slot->decision_seq);
	q->status_seen = atomic_load(&slot->status_seq) - 1;
}

void xsd_slot_open(struct xsd_queue *q)
{
	struct ipc_slot *slot = q->sp;

	/* No floor until floor.c says otherwise. */
	atomic_store(&slot->floor_prio, q->floor_prio = IPC_FLOOR_EXEMPT);
	atomic_store(&slot->floor_raise, q->floor_raise = IPC_FLOOR_OPEN);
	atomic_store(&slot->floor_mask, q->floor_mask = 0);
	atomic_store(&slot->floor_dev, q->floor_dev = IPC_FLOOR_DEVICES);
	atomic_store(&slot->floor_own, q->floor_own = IPC_FLOOR_PAGES);
	atomic_store(&q->sp->run, 1);
	atomic_store(&q->sp->state, IPC_SLOT_USED);
}

void xsd_slot_close(struct xsd_queue *q)
{
	atomic_store(&q->sp->state, IPC_SLOT_FREE);
	atomic_store(&q->sp->run, 1);
}

void xsd_slot_set_run(struct xsd_queue *q, uint32_t run)
{
	/* A store only: a load from each client's slot would wait for its
	 * cache line (and page walk) one queue after another. The barrier of
	 * the "Drain" pair comes after all of a device's stores (host.c). */
	atomic_store_explicit(&q->sp->run, run, memory_order_release);
	/* The agent reads run after seeing decision_seq change. */
	xsd_slot_decided(q);
}

void xsd_slot_set_quiet(struct xsd_queue *q, bool quiet)
{
	/* Sequentially consistent: the daemon's side of the "Lazy doorbells"
	 * Dekker pair (this store, then the status load of host_refresh()). */
	atomic_store(&q->sp->quiet, quiet);
}

void xsd_slot_set_knob(struct xsd_queue *q, uint32_t key, int64_t value)
{
	struct ipc_slot *slot = q->sp;

	switch (key) {
	case IPC_KEY_THRESHOLD:
		atomic_store(&slot->threshold, (int32_t)value);
		break;
	case IPC_KEY_BATCH:
		atomic_store(&slot->batch, (int32_t)value);
		break;
	case IPC_KEY_BUDGET_US:
		atomic_store(&slot->budget_ns, value);
		break;
	case IPC_KEY_LEVEL:
		atomic_store(&slot->level, (int32_t)value);
		break;
	}
	xsd_slot_decided(q);
}

void xsd_slot_set_hint(struct xsd_queue *q, uint32_t key, int64_t value)
{
	atomic_store(&q->sp->hint[key], value);
	atomic_fetch_or(&q->sp->hint_set, 1u << key);
	xsd_slot_decided(q);
}

void xsd_slot_set_floor(struct xsd_queue *q, int32_t prio, int32_t raise, uint32_t mask,
			uint16_t dev, uint16_t own)
{
	struct ipc_slot *slot = q->sp;

	if (prio != q->floor_prio)
		atomic_store_explicit(&slot->floor_prio, q->floor_prio = prio, memory_order_relaxed);
	if (raise != q->floor_raise)
		atomic_store_explicit(&slot->floor_raise, q->floor_raise = raise,
				      memory_order_relaxed);
	if (mask != q->floor_mask)
		atomic_store_explicit(&slot->floor_mask, q->floor_mask = mask, memory_order_relaxed);
	if (dev != q->floor_dev)
		atomic_store_explicit(&slot->floor_dev, q->floor_dev = dev, memory_order_relaxed);
	if (own != q->floor_own)
		atomic_store_explicit(&slot->floor_own, q->floor_own = own, memory_order_relaxed);
}

void xsd_slot_kick(struct xsd_queue *q)
{
	xsd_slot_decided(q);
}

/*
 * "Device memory": the limit set with xschedctl and the ceiling, then
 * mem_seq bumped with a release (the agent acquires it, then reads them);
 * the caller rings.
 */
void xsd_slot_set_memory(struct xsd_client *c, uint64_t limit, uint64_t ceiling)
{
	atomic_store_explicit(&c->shm->mem_limit, limit, memory_order_relaxed);
	atomic_store_explicit(&c->shm->mem_ceiling, ceiling, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->shm->mem_seq, 1, memory_order_release);
}
