/*
 * Process-local state of the simulated XPU, shared by sim_device.c (files,
 * slots, liveness), sim_engine.c (the executor and the engine's turn) and
 * sim_hwq.c (hardware queues).
 */
#ifndef XS_SIM_INTERNAL_H
#define XS_SIM_INTERNAL_H

#include "sim/sim.h"
#include "sim/sim_abi.h"

#include <pthread.h>
#include <sys/types.h>

#define SIM_RING_MASK (SIM_RING - 1)
#define SIM_NO_HWQ UINT32_MAX

/* Ring entry states. */
enum {
	SIM_E_FREE = 0,
	SIM_E_PENDING,
	SIM_E_DONE,
	SIM_E_FLUSHED,
};

/*
 * One launched command, in the launching process's ring. Written by the
 * launcher before it publishes submitted (release); then read and updated
 * only by the executor; seq, state and exec_ns are atomic because waiters
 * read them while a later launch may be reusing the slot.
 */
struct sim_entry {
	struct sim_cmd cmd;
	uint64_t remaining_ns;
	bool data_done;
	_Atomic uint64_t seq;
	_Atomic uint32_t state;
	_Atomic uint64_t exec_ns;
};

struct sim_hwq {
	struct sim_dev *dev;
	uint32_t index;
	struct sim_shm_hwq *shm;
	_Atomic uint64_t *tickets;
	pthread_mutex_t launch_lock;   /* serialises launchers of this queue */
	_Atomic uint32_t done_wake;    /* private futex: done advanced or ctl changed */
	_Atomic uint32_t waiters;
	_Atomic uint64_t wake_at;      /* smallest done a sleeping waiter needs */
	_Atomic uint64_t err_seq;      /* first failed command not reported yet; 0: none */
	_Atomic int32_t err_code;      /* its error; written before err_seq (release) */
	struct sim_entry ring[SIM_RING];
};

struct sim_dev {
	struct sim_dev *next;          /* the process's open devices (sim_lock) */
	char name[65];
	int refs;                      /* sim_lock */
	struct sim_shm_dev *shm;
	size_t map_size;
	uint32_t ctx;
	pid_t pid;
	uint64_t pidns;                /* inode of our PID namespace; 0: unknown */
	int lock_fd;                   /* the device file, holding byte ctx locked; -1: none */
	pthread_mutex_t reap_lock;     /* one reap at a time in this process: our
					* threads share lock_fd's record locks */
	pthread_t executor;
	bool executor_started;         /* sim_lock */
	_Atomic bool stopping;
	pthread_mutex_t exec_lock;     /* orders queue lookup by the executor with destroy */
	_Atomic(struct sim_hwq *) local[SIM_MAX_HWQ];
	struct sim_hwq *notify_hq;     /* executor only: deferred completion wakeup */
	uint32_t notify_idx;
	uint64_t notify_done;
	uint64_t wd_commands;          /* executor only: the engine's progress at */
	uint32_t wd_turn;              /* the last watchdog timeout, */
	uint64_t wd_period;            /* and the watchdog's period (sim_engine.c) */
	_Atomic uint32_t quiet_word;   /* private futex: some queue stopped running */
	_Atomic uint32_t quiet_waiters;
	unsigned nhwq;                 /* sim_lock */
	pthread_mutex_t trace_lock;
	_Atomic bool tracing;
	uint32_t *trace_hwq;
	uint64_t *trace_seq;
	size_t trace_cap, trace_n;
};

/* Serialises opening/closing devices and creating/destroying queues. */
extern pthread_mutex_t sim_lock;

/* sim_device.c */
bool sim_ctx_alive(const struct sim_dev *dev, uint32_t c);
/*
 * Reaps context @ctx, found LIVE with its process dead, or REAPING by a
 * reaper that died (sim_abi.h, record locks): its queues are freed, the
 * turn taken back from them, its memory given back, the slot freed. Does
 * nothing if another reaper holds it, or if the context is alive after
 * all (looked at again once the reaper's byte is held). Any thread.
 */
void sim_ctx_reap(struct sim_dev *dev, uint32_t ctx);

/* sim_engine.c */
int sim_engine_start(struct sim_dev *dev);
void sim_engine_stop(struct sim_dev *dev);
/* Values of sim_shm_ctx.sleeping: watching (wakes every watchdog period)
 * or deep (nothing of its own pending: sleeps until rung). */
#define SIM_SLEEP_WATCH 1u
#define SIM_SLEEP_DEEP 2u
/* After a launch published its command: rings our executor out of a deep
 * sleep, so that it watches the engine for the new command. */
void sim_engine_wake_own(struct sim_dev *dev);
/* Gives the idle engine to the first eligible queue after @after. */
void sim_engine_kick(struct sim_dev *dev, uint32_t after);
/* Moves the turn away from @cur (which must own it) to the next queue. */
void sim_engine_advance(struct sim_dev *dev, uint32_t cur);
bool sim_hwq_eligible(const struct sim_shm_dev *shm, uint32_t idx);

/* sim_hwq.c */
/* Wakes every waiter of @hwq (state changed). */
void sim_hwq_notify(struct sim_hwq *hwq);
/* Wakes waiters of @hwq if one needs @done or less (done just advanced). */
void sim_hwq_notify_done(struct sim_hwq *hwq, uint64_t done);

static inline bool sim_ctl_blocks(uint32_t ctl)
{
	return (ctl & SIM_CTL_INTERRUPT) ||
	       ((ctl & SIM_CTL_STALL) && !(ctl & SIM_CTL_FLUSH));
}

#endif
