/*
 * Run floors, the process's side (see agent_floor.h).
 *
 * The pages are the agent thread's to map and unmap; the XQueues read them
 * from application threads, under each queue's lock, through the pointers
 * of ag.floor[table].page[k], which change only on the agent thread: a page
 * that replaces another (a table the daemon gave to another device) leaves
 * the old one mapped until the connection goes, when every queue's check
 * was removed first. A queue's check is one load of its slot's mask, and
 * one of each counted page's word: no system call, no lock.
 */
#include "agent/agent_floor.h"
#include "agent/agent_state.h"

#include <sys/mman.h>
#include <sys/stat.h>

#define FLOOR_MAP_LEN sizeof(struct ipc_floor_page)

/* Whether a word of the device of @ctx's slot stops its launches. */
static bool agent_floor_holds(void *ctx)
{
	const struct agent_queue *aq = ctx;
	const struct ipc_slot *slot = aq->floor_slot;
	uint32_t mask = atomic_load_explicit(&slot->floor_mask, memory_order_relaxed);
	int32_t prio;
	uint16_t t;

	if (!mask)
		return false;
	prio = atomic_load_explicit(&slot->floor_prio, memory_order_relaxed);
	t = atomic_load_explicit(&slot->floor_dev, memory_order_relaxed);
	if (prio == IPC_FLOOR_EXEMPT || t >= IPC_FLOOR_DEVICES)
		return false;
	for (uint32_t k = 0; mask && k < IPC_FLOOR_PAGES; k++, mask >>= 1) {
		const struct ipc_floor_page *p;

		if (!(mask & 1))
			continue;
		p = atomic_load_explicit(&ag.floor[t].page[k], memory_order_acquire);
		if (p && ipc_floor_prio(atomic_load_explicit(&p->word, memory_order_relaxed)) > prio)
			return true;
	}
	return false;
}

void agent_floor_install(struct agent_queue *aq, const struct ipc_slot *slot, bool sync)
{
	if (slot) {
		aq->floor_slot = slot;
		xq_set_floor(aq->q, agent_floor_holds, aq, sync);
	} else {
		xq_set_floor(aq->q, NULL, NULL, sync);
	}
}

void agent_floor_raise(const struct ipc_slot *slot)
{
	int32_t v = atomic_load(&slot->floor_raise);
	uint16_t t = atomic_load(&slot->floor_dev), k = atomic_load(&slot->floor_own);
	struct ipc_floor_page *p;
	uint64_t w;

	if (v == IPC_FLOOR_OPEN || t >= IPC_FLOOR_DEVICES || k >= IPC_FLOOR_PAGES)
		return;
	p = atomic_load(&ag.floor[t].rw[k]);
	if (!p)
		return;
	/* After the status store (the caller's): the daemon that sees the raise
	 * sees the status that justifies it. */
	w = atomic_load(&p->word);
	while (ipc_floor_prio(w) < v &&
	       !atomic_compare_exchange_weak(&p->word, &w, ipc_floor_next(w, v)))
		;
}

/* Unmaps the pages replaced so far, once no check can still read them. */
static void agent_floor_retire(void)
{
	pthread_mutex_lock(&ag.lock);
	for (uint32_t i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i])
			xq_floor_barrier(ag.tab[i]->q);
	pthread_mutex_unlock(&ag.lock);
	for (uint32_t i = 0; i < ag.nfloor_old; i++)
		munmap(ag.floor_old[i], FLOOR_MAP_LEN);
	ag.nfloor_old = 0;
}

int agent_floor_page(const struct ipc_floor *m, int fd)
{
	struct agent_floor_tab *tab = &ag.floor[m->table];
	struct ipc_floor_page *p, *old;
	struct stat st;
	void *map;

	if (fd < 0)
		return -EPROTO;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < FLOOR_MAP_LEN) {
		close(fd);
		return -EPROTO;
	}
	map = mmap(NULL, FLOOR_MAP_LEN, PROT_READ | (m->writable ? PROT_WRITE : 0), MAP_SHARED,
		   fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	p = map;
	if (p->magic != IPC_FLOOR_MAGIC || p->domain != m->domain) {
		munmap(map, FLOOR_MAP_LEN);
		return -EPROTO;
	}
	old = atomic_load(&tab->page[m->page]);
	if (old) {
		/* Still read, maybe, by a check that loaded it: kept mapped,
		 * and unmapped once every queue's check has ended since. */
		if (ag.nfloor_old == AGENT_FLOOR_OLD)
			agent_floor_retire();
		ag.floor_old[ag.nfloor_old++] = old;
	}
	tab->domain = m->domain;
	atomic_store(&tab->rw[m->page], m->writable ? p : NULL);
	atomic_store(&tab->page[m->page], p);
	return 0;
}

void agent_floor_unmap(void)
{
	for (uint32_t t = 0; t < IPC_FLOOR_DEVICES; t++) {
		for (uint32_t k = 0; k < IPC_FLOOR_PAGES; k++) {
			struct ipc_floor_page *p = atomic_load(&ag.floor[t].page[k]);

			atomic_store(&ag.floor[t].rw[k], NULL);
			atomic_store(&ag.floor[t].page[k], NULL);
			if (p)
				munmap(p, FLOOR_MAP_LEN);
		}
		ag.floor[t].domain = 0;
	}
	for (uint32_t i = 0; i < ag.nfloor_old; i++)
		munmap(ag.floor_old[i], FLOOR_MAP_LEN);
	ag.nfloor_old = 0;
}
