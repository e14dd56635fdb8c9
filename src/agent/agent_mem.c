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

#include <errno.h>
#include <string.h>
#include <time.h>

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

/* A record's state while one thread writes its device fields (ipc_abi.h:
 * 0 unused, 1 written). */
#define AGENT_MEM_WRITING 2u

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

	uint32_t unused = 0;

	if (!m)
		return;
	/* The device fields are written once, by whichever thread claims the
	 * record first (an allocating thread and the agent thread connecting
	 * may both get here); the daemon reads a record only at 1. */
	if (atomic_compare_exchange_strong(&m->state, &unused, AGENT_MEM_WRITING)) {
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
		atomic_store(&m->evictable, atomic_load(&r->c->evictable));
		atomic_store(&m->evicted, atomic_load(&r->c->evicted));
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

/* --- memory preemption ---------------------------------------------------- */

bool agent_mem_preemption(void)
{
	return atomic_load(&ag.mem_flags) & IPC_MEM_F_PREEMPT;
}

void agent_mem_on_evict(int64_t (*evict)(void), int (*restore)(void), void (*release)(void))
{
	pthread_mutex_lock(&ag.lock);
	ag.mem_evict = evict;
	ag.mem_restore = restore;
	ag.mem_release = release;
	pthread_mutex_unlock(&ag.lock);
}

/* The deadline @ms from now, for pthread_cond_timedwait(). */
static struct timespec agent_mem_deadline(unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

void agent_mem_tried(void)
{
	pthread_mutex_lock(&ag.lock);
	ag.tried = true;
	pthread_cond_broadcast(&ag.need_cv);
	pthread_mutex_unlock(&ag.lock);
}

/* How long an allocation waits for the agent's first connection attempt
 * (a process's first allocations come right after the agent started). */
#define AGENT_MEM_CONNECT_MS 2000

int agent_mem_need(int index, uint64_t bytes, unsigned timeout_ms)
{
	struct timespec until;
	int rc = 0;

	if (index < 0 || agent_mode() != AGENT_GLOBAL)
		return -ENOTCONN;
	if (!agent_mem_preemption()) {
		until = agent_mem_deadline(AGENT_MEM_CONNECT_MS);
		pthread_mutex_lock(&ag.lock);
		while (!ag.tried && rc == 0)
			rc = pthread_cond_timedwait(&ag.need_cv, &ag.lock, &until);
		pthread_mutex_unlock(&ag.lock);
		rc = 0;
		if (!agent_mem_preemption())
			return -ENOTCONN;
	}
	until = agent_mem_deadline(timeout_ms);
	pthread_mutex_lock(&ag.lock);
	if (ag.need_state != AGENT_NEED_NONE) {
		pthread_mutex_unlock(&ag.lock);
		return -EBUSY;
	}
	ag.need = (struct ipc_mem_need){ .index = (uint32_t)index, .bytes = bytes };
	ag.need_state = AGENT_NEED_TO_SEND;
	ag.need_status = -ETIMEDOUT;
	agent_wake();
	while (ag.need_state != AGENT_NEED_DONE && rc == 0)
		rc = pthread_cond_timedwait(&ag.need_cv, &ag.lock, &until);
	rc = ag.need_state == AGENT_NEED_DONE ? ag.need_status : -ETIMEDOUT;
	/* A reply after the time out finds the request gone. */
	ag.need_state = AGENT_NEED_NONE;
	pthread_mutex_unlock(&ag.lock);
	return rc;
}

unsigned agent_mem_wait_ms(void)
{
	/* The daemon's bound, and a second for the answer to come. */
	return atomic_load(&ag.mem_wait_ms) + 1000;
}

void agent_mem_connected(uint32_t flags, uint32_t wait_ms)
{
	void (*release)(void);

	atomic_store(&ag.mem_wait_ms, wait_ms);
	atomic_store(&ag.mem_flags, flags);
	pthread_mutex_lock(&ag.lock);
	release = flags ? NULL : ag.mem_release;
	/* A request of the lost connection fails now. */
	if (!flags && (ag.need_state == AGENT_NEED_TO_SEND || ag.need_state == AGENT_NEED_SENT)) {
		ag.need_status = -ENOTCONN;
		ag.need_state = AGENT_NEED_DONE;
		pthread_cond_broadcast(&ag.need_cv);
	}
	pthread_mutex_unlock(&ag.lock);
	/* Without the daemon, evicted memory comes back on its own (fail-open). */
	if (release)
		release();
}

bool agent_mem_need_take(struct ipc_mem_need *out)
{
	bool take;

	pthread_mutex_lock(&ag.lock);
	take = ag.need_state == AGENT_NEED_TO_SEND;
	if (take) {
		*out = ag.need;
		ag.need_state = AGENT_NEED_SENT;
	}
	pthread_mutex_unlock(&ag.lock);
	return take;
}

void agent_mem_need_sent(uint32_t seq)
{
	pthread_mutex_lock(&ag.lock);
	if (ag.need_state == AGENT_NEED_SENT) {
		ag.need_seq = seq;
		if (!seq) {
			ag.need_status = -ENOTCONN;
			ag.need_state = AGENT_NEED_DONE;
			pthread_cond_broadcast(&ag.need_cv);
		}
	}
	pthread_mutex_unlock(&ag.lock);
}

bool agent_mem_need_reply(uint32_t seq, int status)
{
	bool ours;

	pthread_mutex_lock(&ag.lock);
	ours = ag.need_state == AGENT_NEED_SENT && ag.need_seq == seq;
	if (ours) {
		ag.need_status = status;
		ag.need_state = AGENT_NEED_DONE;
		pthread_cond_broadcast(&ag.need_cv);
	}
	pthread_mutex_unlock(&ag.lock);
	return ours;
}

void agent_mem_fail_open(void)
{
	void (*release)(void);

	pthread_mutex_lock(&ag.lock);
	release = ag.mem_release;
	pthread_mutex_unlock(&ag.lock);
	if (release)
		release();
}

int64_t agent_mem_evict(void)
{
	int64_t (*evict)(void);

	pthread_mutex_lock(&ag.lock);
	evict = ag.mem_evict;
	pthread_mutex_unlock(&ag.lock);
	return evict ? evict() : 0;
}

int agent_mem_restore(void)
{
	int (*restore)(void);

	pthread_mutex_lock(&ag.lock);
	restore = ag.mem_restore;
	pthread_mutex_unlock(&ag.lock);
	return restore ? restore() : 0;
}
