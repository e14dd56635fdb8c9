/*
 * The daemon's writes into a client's shared memory (slot.c): the one
 * place in the daemon that stores into a struct ipc_shm or ipc_slot
 * (src/ipc/ipc_abi.h). The ABI gives each field a single writer; for the
 * daemon's fields this module is that writer, and each function says
 * which of the ABI's orderings its stores take part in ("Lazy doorbells",
 * "Lazy suspensions", "Drain", "Liveness"). Reads of the client's fields
 * (status, counters) stay with their readers (host.c, metrics.c).
 *
 * Every function runs on the daemon's loop thread; none fails but
 * xsd_slot_map().
 */
#ifndef XSD_SLOT_H
#define XSD_SLOT_H

#include <stdbool.h>
#include <stdint.h>

struct xsd_client;
struct xsd_queue;

/* What a client's shared memory says of device memory from the start. */
struct xsd_slot_mem {
	uint64_t ceiling;       /* mem_ceiling */
	uint32_t flags;         /* IPC_MEM_F_* */
	uint32_t wait_ms;       /* mem_wait_ms */
};

/*
 * Creates @c's shared memory for @nslots queues and IPC_MEM_DEVICES memory
 * records (a sealed memfd, mapped into c->shm, c->shm_size, c->nslots),
 * every slot free and running, @mem's settings, and returns the memfd in
 * *@memfd for the HELLO reply (the caller closes it once sent). 0 or
 * -errno; on error nothing is left mapped or open.
 */
int xsd_slot_map(struct xsd_client *c, uint32_t nslots, const struct xsd_slot_mem *mem,
		 int *memfd);
/* Unmaps @c's shared memory (none is fine). */
void xsd_slot_unmap(struct xsd_client *c);
/* Bumps @c's heartbeat ("Liveness"): a release the agent acquires. */
void xsd_slot_beat(struct xsd_client *c);

/* Points @q at its client's slot q->slot and takes the slot's sequence
 * numbers as they stand. Stores nothing: the slot is still free. */
void xsd_slot_bind(struct xsd_queue *q);
/* Opens @q's slot to its client: running, used. After xsd_slot_bind(). */
void xsd_slot_open(struct xsd_queue *q);
/* Gives @q's slot back: free and running, for the queue's next owner. */
void xsd_slot_close(struct xsd_queue *q);

/*
 * The decision for @q: 0 suspended, 1 run, 1 + k run with at most k
 * commands in flight. A release store, then decision_seq bumped (the
 * agent reads `run` after it sees decision_seq move); the Drain barrier
 * after a device's stores is the caller's (host.c, host_commit()).
 */
void xsd_slot_set_run(struct xsd_queue *q, uint32_t run);
/* @q's Ready and Idle need no doorbell ("Lazy doorbells"): sequentially
 * consistent, one side of the Dekker pair with the client's status. */
void xsd_slot_set_quiet(struct xsd_queue *q, bool quiet);
/* A window or level knob (IPC_KEY_THRESHOLD, _BATCH, _BUDGET_US,
 * _LEVEL) for @q's client to apply: @value as the slot holds it (the
 * budget in ns), then decision_seq bumped. */
void xsd_slot_set_knob(struct xsd_queue *q, uint32_t key, int64_t value);
/* A hint set with xschedctl (key 1..IPC_HINT_KEYS-1), for @q's client to
 * keep across daemon restarts; then decision_seq bumped. */
void xsd_slot_set_hint(struct xsd_queue *q, uint32_t key, int64_t value);

/*
 * Run floors (ipc_abi.h): @q's floor_prio, floor_raise, floor_mask and its
 * device's table and own page, each stored only if it changed (the last
 * values stored are @q's: floor.c keeps them). Plain stores: the client
 * reads them at its next launch or Ready; nothing pairs with them.
 */
void xsd_slot_set_floor(struct xsd_queue *q, int32_t prio, int32_t raise, uint32_t mask,
			uint16_t dev, uint16_t own);
/* Has @q's client look at @q again when rung (a floor that held it went):
 * decision_seq bumped, as after a decision. */
void xsd_slot_kick(struct xsd_queue *q);

/* @c's memory limits ("Device memory"): xschedctl's @limit and @ceiling,
 * then mem_seq bumped with a release; the caller rings the client. */
void xsd_slot_set_memory(struct xsd_client *c, uint64_t limit, uint64_t ceiling);

#endif
