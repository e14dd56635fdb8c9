/*
 * Shared-memory layout of the simulated XPU: an ABI between every process
 * that opens the device, possibly built from different versions.
 *
 * Design: no lock is shared between processes (each holds a record lock on
 * the file only as a token of its liveness, sim_device.c). Each field has
 * exactly one writer (noted per field), so a process killed at any instant
 * leaves only fields that its peers can recover: ownership of the engine
 * ("turn") moves by compare-and-swap and is taken back from dead owners by
 * any waiter.
 *
 * Record locks (OFD, on bytes of the device file; the kernel drops them
 * when their process dies): byte c < SIM_MAX_CTX is held by the process
 * attached as context c for as long as it lives; byte SIM_REAP_BYTE(c)
 * by whoever reaps context c, for as long as it reaps. A reaper can die
 * too (a process killed while it reaps a dead peer on its way in): a
 * context left REAPING with its byte free is finished by the next reaper,
 * as one left LIVE by a dead owner is, so that the dead queues it still
 * holds (and the turn, if one of them had it) are not kept for good.
 * Fixed-width types, explicit padding and static asserts keep the layout
 * stable; the version grows when it changes, and openers refuse others.
 */
#ifndef XS_SIM_ABI_H
#define XS_SIM_ABI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_ABI_MAGIC 0x3156454d49535358ull /* "XSSIMEV1" little-endian */
#define SIM_ABI_VERSION 5u   /* 5: reaps taken over (SIM_REAP_BYTE) */

#define SIM_MAX_CTX 512u   /* processes attached at once */
#define SIM_MAX_HWQ 2048u  /* hardware queues at once */
#define SIM_RING 1024u     /* commands in flight per hardware queue */

/* The byte of the device file a reaper of context @c holds locked. */
#define SIM_REAP_BYTE(c) (SIM_MAX_CTX + (c))

/* Slot states of contexts and hardware queues. */
enum {
	SIM_SLOT_FREE = 0,
	SIM_SLOT_CLAIMED = 1,   /* being initialised by its claimer */
	SIM_SLOT_LIVE = 2,
	SIM_SLOT_REAPING = 3,   /* owner found dead; one reaper at a time frees
				 * it (its SIM_REAP_BYTE locked) */
};

/* sim_shm_hwq.ctl bits (writer: the owning process's control path). */
enum {
	SIM_CTL_STALL = 1u << 0,     /* Lv2: do not start commands */
	SIM_CTL_FLUSH = 1u << 1,     /* Lv2 flush mode: discard instead of stalling */
	SIM_CTL_INTERRUPT = 1u << 2, /* Lv3: stop the running command, keep progress */
};

/* One attached process. 64 bytes. */
struct sim_shm_ctx {
	_Atomic uint32_t state;     /* writer: claimer, then reaper */
	_Atomic uint32_t doorbell;  /* futex word; any process bumps it to hand over the engine */
	int32_t pid;                /* writer: claimer (before LIVE, release) */
	_Atomic uint32_t sleeping;  /* non-zero while its executor sleeps on doorbell
				     * (SIM_SLEEP_*, sim_internal.h); writer: executor */
	uint64_t start_time;        /* /proc/<pid>/stat starttime, against pid reuse */
	uint64_t pidns;             /* inode of its PID namespace; 0: unknown (writer: claimer) */
	/* Bytes of device memory its process holds (sim_dev_mem_charge()).
	 * Writer: its process (fetch-add/sub); the claimer and the reaper
	 * zero it while the slot is not LIVE, which gives a dead process's
	 * memory back to the node. */
	_Atomic uint64_t mem_used;
	uint64_t pad1[3];
};

/* Hot state of one hardware queue, read by every arbiter. 128 bytes. */
struct sim_shm_hwq {
	_Atomic uint32_t state;     /* writer: claimer, owner at destroy, reaper */
	_Atomic uint32_t ctx;       /* owning context; writer: claimer */
	_Atomic uint32_t ctl;       /* SIM_CTL_*; writer: owner */
	_Atomic uint32_t running;   /* 1 while a command of it executes; writer: owner's executor */
	_Atomic uint64_t submitted; /* commands launched; writer: owner's launcher */
	_Atomic uint64_t done;      /* commands finished or flushed; writer: owner's executor */
	_Atomic uint64_t busy_ns;   /* device time spent on it; writer: owner's executor */
	_Atomic uint64_t executed;  /* commands run to completion; writer: owner's executor */
	_Atomic uint64_t interrupts;/* Lv3 stops of a running command; writer: owner's executor */
	_Atomic uint32_t wait_on;   /* 1 + queue whose progress the head WAIT needs; 0: none;
				     * writer: owner's executor */
	uint32_t pad0;
	_Atomic uint64_t wait_seq;  /* that queue's command to wait for */
	uint64_t pad1[7];
};

struct sim_shm_dev {
	uint64_t magic;             /* SIM_ABI_MAGIC, written last at creation */
	uint32_t version;           /* SIM_ABI_VERSION */
	uint32_t size;              /* total mapping size */
	uint32_t arbitration;       /* SIM_ARB_* (sim.h), fixed at creation */
	uint32_t level_max;         /* 1..3: what this device can do */
	uint32_t lv2_flush;         /* 1: Lv2 flushes instead of stalling */
	uint32_t pad0;
	uint64_t created_ns;
	uint64_t mem_capacity;      /* bytes of device memory, node-wide; fixed at creation */
	uint8_t pad1[16];
	/* --- own cache line --- */
	_Atomic uint32_t turn;      /* 1 + hwq index owning the engine; 0: idle. CAS only */
	uint32_t pad2;
	_Atomic uint64_t tickets;   /* FCFS order of launches (fetch-add) */
	_Atomic uint64_t busy_ns;   /* total device time executed (fetch-add) */
	_Atomic uint64_t commands;  /* total commands executed (fetch-add) */
	uint8_t pad3[32];
	/* Allocated hardware queues, one bit each (fetch-or / fetch-and). */
	_Atomic uint64_t live_mask[SIM_MAX_HWQ / 64];
	struct sim_shm_ctx ctx[SIM_MAX_CTX];
	struct sim_shm_hwq hwq[SIM_MAX_HWQ];
	/* FCFS tickets of the commands in each ring, written by the launcher
	 * before it publishes submitted (release). */
	_Atomic uint64_t ticket[SIM_MAX_HWQ][SIM_RING];
};

_Static_assert(sizeof(struct sim_shm_ctx) == 64, "sim ctx ABI");
_Static_assert(sizeof(struct sim_shm_hwq) == 128, "sim hwq ABI");
_Static_assert(offsetof(struct sim_shm_dev, turn) == 64, "sim dev ABI");
_Static_assert(offsetof(struct sim_shm_dev, live_mask) == 128, "sim dev ABI");
_Static_assert(sizeof(struct sim_shm_dev) ==
	       128 + SIM_MAX_HWQ / 8 + SIM_MAX_CTX * 64 + SIM_MAX_HWQ * 128 +
	       (uint64_t)SIM_MAX_HWQ * SIM_RING * 8, "sim dev ABI");
_Static_assert((SIM_RING & (SIM_RING - 1)) == 0, "ring size is a power of two");

#endif
