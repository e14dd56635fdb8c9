/*
 * What the agent's files share (agent.c: state, observers, the agent
 * thread, registration; agent_daemon.c: the daemon connection and its
 * protocol; agent_local.c: the in-process policy). Every function here is
 * called on the agent thread unless it says otherwise; the locking rules
 * are in agent.c's opening comment.
 */
#ifndef XS_AGENT_INTERNAL_H
#define XS_AGENT_INTERNAL_H

#include "agent/agent.h"
#include "base/clock.h"
#include "ipc/ipc_abi.h"
#include "sched/sched_core.h"
#include "xsched/policy.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	bool local;                     /* the local policy accepted it */
	bool reg_prio_set;              /* registered with a priority of its own: */
	int64_t reg_prio;               /* that one (a clamp is said) */
};

struct agent {
	pthread_mutex_t lock;
	pthread_once_t once;
	struct agent_queue *tab[AGENT_SLOTS];
	uint32_t unreg[AGENT_SLOTS];    /* slots to unregister at the daemon */
	uint32_t nunreg;
	uint32_t nqueues;
	enum agent_mode mode;
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
	/* local mode */
	struct sched sched;             /* the scheduler core, under the lock */
	uint64_t pwake_ns;
	uint64_t next_id;
};

extern struct agent ag;

/* agent.c */

/* Wakes the agent thread. Any thread. */
void agent_wake(void);

/* Writes the daemon's doorbell @bell (-1: none). Callers off the agent
 * thread are counted in ag.users around loading and writing it. */
void agent_bell(int bell);

/* Caps @aq at @cap commands in flight (0: its own window). Agent lock held. */
void agent_apply_cap(struct agent_queue *aq, int32_t cap, bool own_set);

/* Suspends or resumes @aq as decided. Agent lock held. */
void agent_apply_run(struct agent_queue *aq, bool run);

/* agent_daemon.c */

/* Connects, says hello and maps the shared slots. 0 or -errno. */
int agent_connect(void);

/* Fail-open: every queue runs, and the connection is gone. */
void agent_disconnect(void);

/* Sends what the daemon does not know yet (registrations, hints). */
void agent_sync_daemon(void);

/* Applies the daemon's decisions and knobs. */
void agent_apply(void);

/* Handles the daemon's packets; disconnects on hang-up or garbage. */
void agent_recv(void);

/*
 * Watches the daemon's heartbeat while a queue is held (suspended, capped
 * or gated): fails open when it stays still for the timeout, and takes the
 * daemon's decisions again when it moves. Returns when to look again
 * (CLOCK_MONOTONIC ns), 0 when nothing needs watching.
 */
uint64_t agent_watch(void);

/* Reads XSCHED_DAEMON_TIMEOUT_MS into ag.live_timeout_ns. */
void agent_watch_init(void);

/* agent_local.c */

/* Sets up the in-process scheduler core: XSCHED_POLICY, and
 * XSCHED_CONTENTION_WINDOW, XSCHED_STARVATION_GUARD_PCT,
 * XSCHED_STARVATION_PERIOD_MS, XSCHED_IDLE_GRACE_US as xschedd.conf's
 * [policy] keys. 0 or -ENOMEM. */
int agent_local_init(void);

/* One scheduling pass of the in-process policy. */
void agent_local_schedule(void);

/* Hands @aq (id, client, device set) to the core; false when it runs
 * unscheduled (refused, or out of memory). Agent lock held. */
bool agent_local_add(struct agent_queue *aq);

/* Takes @aq out of the core. Agent lock held. */
void agent_local_remove(struct agent_queue *aq);

#endif
