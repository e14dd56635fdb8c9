/*
 * XQueue internals shared by its files: xqueue.c (the queue: submit,
 * launch, sync, retire), xq_worker.c (the on-demand worker), xq_preempt.c
 * (suspend, resume, level), xq_window.c (progressive-launching window and
 * duration learning) and xq_attr.c (hints, observer, statistics).
 */
#ifndef XS_XQUEUE_INTERNAL_H
#define XS_XQUEUE_INTERNAL_H

#include "xqueue/xqueue.h"
#include "base/compiler.h"
#include "base/hist.h"

#include <pthread.h>
#include <stdatomic.h>

/*
 * A command expected to take less device time than this (an event record, a
 * marker) is not counted as work the device still has to run (struct xq,
 * inflight_work; xq_set_run_word()).
 */
#define XQ_WORK_MIN_NS 10000

/*
 * Estimates learned from completion spacings (backends without per-command
 * device times) are taken as (1 - 1/this) of themselves when the window
 * checks its budget (xq_window.c).
 */
#define XQ_SPACING_DISCOUNT 16

/* xal_cmd.xq_flags */
enum {
	XQ_F_SYNC_POINT = 1u << 0,  /* launched with XAL_LAUNCH_SYNC_POINT */
	XQ_F_LOCAL_DONE = 1u << 1,  /* launch failed: complete without the device */
	XQ_F_EST_GUESS = 1u << 2,   /* launched with a guessed, not learned, duration */
	XQ_F_WORK = 1u << 3,        /* counted in inflight_work */
};

#define XQ_EST_SLOTS 64

struct xq_est_slot {
	uint64_t key;   /* 0: empty */
	uint64_t ns;
};

/* Learned command durations (EWMA), per est_key and per kind. */
struct xq_est {
	struct xq_est_slot slot[XQ_EST_SLOTS];
	uint64_t kind_ns[XAL_CMD_KIND_MAX];
};

struct xq_list {
	struct xal_cmd *head, *tail;
	uint64_t n;
};

struct xq {
	struct xal_hwq *hwq;
	uint32_t trace_id;            /* process-local number, for the USDT probes */
	const struct xal_ops *ops;
	pthread_mutex_t lock;         /* everything below unless noted */
	pthread_cond_t cond;          /* completions, resumes, launches */
	pthread_cond_t wcond;         /* wakes the worker */
	pthread_mutex_t ctl_lock;     /* serialises suspend/resume with backend ops */

	int32_t level, level_req, level_max;
	char level_why[XQ_WHY_LEN];   /* xq_set_level_why(); "" */
	int32_t threshold, batch;
	int64_t budget_ns;            /* < 0: no budget; 0: the level's (xq_budget()) */

	_Atomic bool suspended;       /* written under lock and ctl_lock */
	const _Atomic uint32_t *_Atomic run_word; /* external: 0 stops launches (xq_set_run_word) */
	_Atomic uint32_t *_Atomic inflight_pub; /* external: runnable in-flight count */
	_Atomic xq_floor_fn floor_fn; /* external: a floor holds launches (xq_set_floor) */
	void *_Atomic floor_ctx;
	bool floored;                 /* the floor held the last launch asked */
	uint32_t inflight_said;       /* as last stored there */
	_Atomic uint32_t kick_word;   /* futex: bumped by suspend to cut the worker's sleeps */
	bool stopping;
	bool relaunch_barrier;        /* flush mode: no launch until in-flight resolved */
	void *blocked_on;             /* the head's gate (xal_cmd_ops.blocked_on) */
	_Atomic bool gated;           /* blocked_on != NULL, for xq_gated() */

	struct xq_list pending;       /* submitted, not launched */
	struct xq_list inflight;      /* launched, not retired; ordered by seq */
	struct xq_list garbage;       /* retired, destroyed after unlocking */
	uint64_t inflight_est_ns;
	uint64_t inflight_work;       /* in flight with device work (XQ_WORK_MIN_NS) */
	uint32_t since_sync_n;
	uint64_t since_sync_ns;
	uint64_t last_done_ns;        /* when the last retired batch completed */
	bool spacing_stale;           /* resumed: the next spacing is not learned */

	uint64_t next_seq;            /* last sequence number given */
	uint64_t completed_seq;       /* every command <= this completed */
	uint64_t launched_seq;        /* last command launched */
	_Atomic uint64_t launched_pub;/* launched_seq, readable without the lock */
	uint64_t flush_epoch;         /* bumped when flushed commands are re-pended */
	int32_t error;                /* first unreported command error */
	bool busy;                    /* between READY and IDLE */

	uint32_t syncers;             /* threads inside a backend sync */
	uint32_t waiters;             /* threads in pthread_cond_wait(cond) */
	uint32_t completers;          /* threads in xq_complete_through() */
	bool worker_running, worker_idle, worker_zombie;
	bool worker_napping;            /* idle, but looks again within XQ_NAP_MAX_NS */
	uint64_t last_direct_ns;        /* last launch from a submitting thread */
	bool worker_quit;             /* xq_reap(): leave when idle */
	pthread_t worker;

	uint64_t susp_gen;            /* bumped at every suspend and resume */
	uint64_t susp_ns;
	uint64_t measured_gen;        /* suspend generation whose latency is recorded */
	bool susp_had_work;

	xq_observer_fn observer;
	void *observer_ctx;
	int64_t hint[XQ_HINTS];
	uint32_t hint_set;            /* bit h: hint h was set */

	struct xq_est est;
	struct hist preempt_hist;
	xs_queue_stats st;            /* counters; in_flight etc. filled on read */
};

/* xq_window.c; all with q->lock held. */
uint64_t xq_est_get(const struct xq *q, const struct xal_cmd *cmd);
/* What was learned of commands of @kind and @est_key (that key only); 0: nothing. */
uint64_t xq_est_known(const struct xq *q, uint32_t kind, uint64_t est_key);
void xq_est_learn(struct xq *q, const struct xal_cmd *cmd, uint64_t ns);
int64_t xq_budget(const struct xq *q);
bool xq_window_has_room(const struct xq *q, const struct xal_cmd *next);
unsigned xq_window_launch_flags(struct xq *q, struct xal_cmd *cmd);
void xq_window_retired(struct xq *q, const struct xal_cmd *cmd);
void xq_window_reset(struct xq *q);
/*
 * Sets @q's window from @threshold, @batch, @budget_ns (0: the default at
 * creation, else unchanged); an unspecified batch follows a small
 * threshold. -EINVAL if the result is not a valid window (nothing set).
 * Lock held, or at creation.
 */
int xq_window_resolve(struct xq *q, int32_t threshold, int32_t batch, int64_t budget_ns,
		      bool create);

/* xqueue.c; all with q->lock held. */
/* Unlocks @q, then destroys retired commands if no sync can still use them. */
void xq_unlock(struct xq *q);
void xq_notify(struct xq *q, enum xq_event ev);
/* Whether launches are stopped: suspended, or the run word (xq_set_run_word())
 * closed, applied by the owner or not yet. */
bool xq_stopped(struct xq *q);
/* Publishes the runnable in-flight count (xq_set_run_word()); may raise DRAINED. */
void xq_pub_inflight(struct xq *q);
/* Whether a launch may happen now (not stopped, no relaunch barrier). */
bool xq_may_launch(struct xq *q);
/* Launches buffered commands while the window admits them. */
void xq_launch_pending(struct xq *q);
/* Waits on q->cond while the queue is suspended. */
void xq_wait_resumed(struct xq *q);
/*
 * One backend sync towards completing every launched command <= @seq;
 * releases the lock during the sync. -EAGAIN: preempted at Lv2/Lv3 and no
 * progress, else 0.
 */
int xq_sync_step(struct xq *q, uint64_t seq, bool prompt);
/* Oldest in-flight sync point, or the newest command (inflight not empty). */
uint64_t xq_refill_target(struct xq *q);
/* Blocks until every command <= @seq completed; the worker stands aside. */
void xq_complete_through(struct xq *q, uint64_t seq);

/* xq_worker.c */
/* Makes sure a worker will look at the queue. Lock held. */
void xq_worker_kick(struct xq *q);
/* When @target (the newest in flight) is expected to complete, if worth
 * sleeping until just before; else 0. Lock held. */
uint64_t xq_prompt_deadline(struct xq *q, const struct xal_cmd *target);
/* Sleeps until shortly before @deadline, then polls @target; the query's
 * result, -EBUSY if still running. No lock held. */
int xq_poll_until(struct xq *q, struct xal_cmd *target, uint64_t deadline);

/* xq_preempt.c; lock held. */
/* Records the latency of the current suspend in the preemption histogram. */
void xq_record_preemption(struct xq *q);

#endif
