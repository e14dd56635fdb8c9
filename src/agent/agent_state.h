/*
 * The agent's state, one per process (`ag`, defined in agent.c), shared by
 * its files: agent.c (registration, observers, the agent thread),
 * agent_daemon.c and agent_local.c (the two modes, agent_mode.h),
 * agent_live.c (the watch on a hung daemon), agent_apply.c (what acts on
 * the XQueues). Types and the wake-up of the agent thread only: each file
 * declares what it provides in its own header, so that the files' include
 * graph is a tree over this one (tools/include_graph.py checks it).
 *
 * Every field is the agent thread's unless it says otherwise; the locking
 * rules are in agent.c's opening comment.
 */
#ifndef XS_AGENT_STATE_H
#define XS_AGENT_STATE_H

#include "base/clock.h"
#include "base/devid.h"
#include "ipc/ipc_abi.h"
#include "sched/sched_core.h"
#include "xqueue/xqueue.h"
#include "xsched/policy.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

struct agent_mem_counts;
struct agent_mode_ops;

#define AGENT_SLOTS 256
#define AGENT_BACKOFF_MIN_NS (50 * NSEC_PER_MSEC)
#define AGENT_BACKOFF_MAX_NS (2 * NSEC_PER_SEC)
#define AGENT_REPLY_TIMEOUT_MS 2000
#define AGENT_SEND_TIMEOUT_MS 1000

struct agent_queue {
	struct xq *q;
	uint32_t index;                 /* our table index = the daemon slot */
	/* written by the observer */
	_Atomic uint32_t status;        /* enum ipc_status */
	_Atomic uint64_t ready_ns;
	_Atomic uint32_t status_seq;
	_Atomic bool hints_dirty;
	_Atomic bool level_dirty;       /* level or its reason to send (IPC_QUEUE_LEVEL) */
	_Atomic(void *) blocked_on;     /* XQueue our next command waits on */
	_Atomic uint32_t quiet;         /* local mode: may skip waking the agent */
	_Atomic uint32_t inflight;      /* local mode: what the XQueue may still run */
	void *blocked_seen;             /* agent thread: as last published */
	/* agent thread, under the agent lock */
	bool reg_sent, registered;
	bool run;                       /* last decision applied */
	uint32_t decision_seen;
	int32_t threshold, batch, level;
	int64_t budget_ns;
	int32_t cap;                    /* contention-aware in-flight cap; 0: none */
	int32_t own_threshold, own_batch; /* the queue's window while capped */
	int64_t own_budget_ns;
	int64_t ctl_hint[IPC_HINT_KEYS];  /* xschedctl hints last taken over */
	uint32_t ctl_taken;               /* bits of ctl_hint holding a value */
	struct sched_q sq;              /* local mode: the scheduler core's */
	bool local;                     /* taken by the mode's add(): local mode's core */
	bool reg_prio_set;              /* registered with a priority of its own: */
	int64_t reg_prio;               /* that one (a clamp is said) */
	const struct ipc_slot *floor_slot; /* whose floor fields its check reads */
};

/* A device's floor pages in this process (agent_floor.c), by page index:
 * written by the agent thread, read by the XQueues' checks. */
struct agent_floor_tab {
	uint64_t domain;
	struct ipc_floor_page *_Atomic page[IPC_FLOOR_PAGES];
	struct ipc_floor_page *_Atomic rw[IPC_FLOOR_PAGES]; /* mapped writable: ours */
};

#define AGENT_FLOOR_OLD (IPC_FLOOR_DEVICES * IPC_FLOOR_PAGES)

/* A device whose memory the shim counts (agent_mem.c): written once, before
 * ag.nmem counts it. */
struct agent_mem_rec {
	char device[IPC_NAME_LEN];
	char backend[16];
	struct devid id;
	struct agent_mem_counts *c;     /* the shim's */
};

struct agent {
	pthread_mutex_t lock;
	pthread_once_t once;
	struct agent_queue *tab[AGENT_SLOTS];
	uint32_t unreg[AGENT_SLOTS];    /* slots to unregister at the daemon */
	uint32_t nunreg;
	uint32_t nqueues;
	const struct agent_mode_ops *ops; /* the mode (agent_mode.h), set at start */
	bool started;
	int wake_fd;
	/* connection: agent thread; observers read shm/bell_in under `users` */
	_Atomic(struct ipc_shm *) shm;
	_Atomic int bell_in;
	_Atomic uint32_t users;
	_Atomic bool connected;
	int sock, bell_out;
	size_t shm_size;
	uint32_t seq;
	uint64_t backoff_ns, next_try_ns;
	uint8_t sent_type[256];         /* enum ipc_type of request number n, at n % 256 */
	bool was_down;                  /* unscheduled since the last connection */
	/* the daemon's liveness (ipc_abi.h, "Liveness"): agent thread */
	uint64_t live_timeout_ns;       /* XSCHED_DAEMON_TIMEOUT_MS; 0: never */
	uint64_t beat_seen;             /* heartbeat as last read */
	uint64_t beat_moved_ns;         /* when it was seen to move, or holding began */
	_Atomic bool watching;          /* a queue is held: the heartbeat is watched
					 * (agent thread; others read it) */
	bool hung;                      /* failed open on a silent daemon */
	bool reapply;                   /* apply every slot's decision again */
	/* device memory (agent_mem.c) */
	struct agent_mem_rec mem[IPC_MEM_DEVICES];
	_Atomic uint32_t nmem;          /* records complete (release) */
	uint32_t mem_seq_seen;          /* the daemon's mem_seq as last applied */
	void (*mem_limits)(uint64_t limit, uint64_t ceiling);
	/* memory preemption (agent_mem.c), under the lock but mem_flags */
	_Atomic uint32_t mem_flags;     /* the connected daemon's IPC_MEM_F_*; 0: none */
	_Atomic uint32_t mem_wait_ms;   /* its mem_wait_ms */
	pthread_cond_t need_cv;         /* also: the first connection attempt is over */
	bool tried;                     /* it is */
	int need_state;                 /* AGENT_NEED_* */
	struct ipc_mem_need need;
	uint32_t need_seq;
	int need_status;
	int64_t (*mem_evict)(void);
	int (*mem_restore)(void);
	void (*mem_release)(void);
	/* run floors (agent_floor.c) */
	struct agent_floor_tab floor[IPC_FLOOR_DEVICES];
	struct ipc_floor_page *floor_old[AGENT_FLOOR_OLD]; /* replaced, still mapped */
	uint32_t nfloor_old;
	/* local mode (agent_local.c) */
	struct sched sched;             /* the scheduler core, under the lock */
	uint64_t pwake_ns;
	uint64_t next_id;
};

/* A request of agent_mem_need(): none, to send, sent, answered. */
enum { AGENT_NEED_NONE, AGENT_NEED_TO_SEND, AGENT_NEED_SENT, AGENT_NEED_DONE };

extern struct agent ag;

/* Wakes the agent thread (its eventfd). Any thread, any lock held. */
static inline void agent_wake(void)
{
	uint64_t one = 1;

	if (ag.wake_fd >= 0 && write(ag.wake_fd, &one, sizeof(one)) < 0)
		(void)errno;
}

#endif
