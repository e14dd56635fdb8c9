/*
 * XQueue: a preemptible command queue over one XAL hardware queue.
 *
 * Commands are submitted in order and reach the hardware queue by
 * progressive launching: at most `threshold` commands and about `budget_ns`
 * of estimated device time are in flight (at least one command), with a sync
 * point every `batch` commands or half a budget. Suspending a queue stops
 * launches (Lv1) and, at Lv2/Lv3, deactivates or interrupts the hardware
 * queue, so preemption latency is bounded by the window at Lv1 whatever the
 * command size, and by the device at Lv2/Lv3 (where, unless one is set,
 * there is no budget).
 *
 * The submit path launches directly from the submitting thread when nothing
 * is buffered and the window has room; otherwise the command is buffered
 * and a per-queue worker thread, started on demand and gone after a second
 * of idleness, drains the buffer. Either way commands launch in submission
 * order. The worker also syncs in-flight work so Idle is noticed and the
 * window refills.
 *
 * This is the internal API behind include/xsched/xsched.h, used by the
 * shims and the agent. Functions return 0 or a negative errno; a command
 * passed to xq_submit() belongs to the queue from then on.
 */
#ifndef XS_XQUEUE_H
#define XS_XQUEUE_H

#include "xal/xal.h"
#include "xsched/xsched.h"

#include <stdbool.h>
#include <stdint.h>

struct xq;

struct xq_config {
	int32_t level;      /* enum xs_level */
	int32_t threshold;  /* 0: XS_DEFAULT_THRESHOLD */
	int32_t batch;      /* 0: XS_DEFAULT_BATCH */
	int64_t budget_ns;  /* 0: XS_DEFAULT_BUDGET_NS at Lv1, off at Lv2/Lv3;
			     * XS_BUDGET_NONE: off */
};

enum xq_event {
	XQ_EVENT_READY = 1, /* first command into an idle queue */
	XQ_EVENT_IDLE = 2,  /* every submitted command completed */
	XQ_EVENT_HINT = 3,  /* a hint changed */
	XQ_EVENT_PROGRESS = 4, /* counters moved: commands completed, a preemption */
	XQ_EVENT_BLOCKED = 5,  /* the next command waits for something (xq_blocked_on_locked) */
	XQ_EVENT_UNBLOCKED = 6,
	XQ_EVENT_RESYNC = 7,   /* on request (xq_resync): publish your state again */
	XQ_EVENT_DRAINED = 8,  /* launches stopped: at most one command left to run */
	XQ_EVENT_LEVEL = 9,    /* the level in effect or its reason changed */
	XQ_EVENT_FLOOR = 10,   /* a floor began or stopped holding a launch
				* (xq_set_floor(); xq_floored_locked() says which) */
};

/* Counters an observer may read with xq_counters_locked(). */
struct xq_counters {
	uint64_t submitted, completed, preemptions, exec_ns;
};

/*
 * Observer of queue events. Called with the queue's lock held, on the thread
 * that caused the event (submitter, waiter or worker): it must be quick and
 * must not call into the same queue. READY and IDLE alternate strictly.
 */
typedef void (*xq_observer_fn)(struct xq *q, enum xq_event ev, void *ctx);

/*
 * Creates an XQueue over @hwq (not owned; it must outlive the queue).
 * @cfg NULL: defaults. Errors: -EINVAL for bad arguments (negative sizes,
 * batch > threshold, threshold above XS_MAX_THRESHOLD, unknown level),
 * -ENOMEM.
 */
int xq_create(struct xal_hwq *hwq, const struct xq_config *cfg, struct xq **out);

/*
 * Destroys @q (NULL accepted: returns 0). XS_DESTROY_DRAIN waits for every
 * submitted command (blocking while suspended); XS_DESTROY_DISCARD drops
 * buffered commands and waits only for those in flight, resuming the
 * hardware queue if needed. No other thread may use @q meanwhile. Returns
 * the first unreported command error or 0.
 */
int xq_destroy(struct xq *q, unsigned flags);

/* See xs_submit(). Never blocks because the queue is suspended. */
int xq_submit(struct xq *q, struct xal_cmd *cmd, uint64_t *seq);

/*
 * Submits @n commands (non-NULL) as one: they get consecutive sequence
 * numbers, no other thread's command among them; *@last_seq (optional)
 * receives the last one's. On error every command is destroyed. Errors:
 * -EINVAL, -ESHUTDOWN (the queue is being destroyed).
 */
int xq_submit_n(struct xq *q, struct xal_cmd *const *cmds, size_t n, uint64_t *last_seq);

/* One question to xq_est_query(): kind and est_key in, ns out. */
struct xq_est_req {
	uint32_t kind;
	uint64_t est_key;
	uint64_t ns;                /* learned duration; 0: nothing learned of that key */
};

/*
 * What the queue learned of commands of each (kind, est_key) of @req
 * (XAL_CMD_*; the key alone, not the kind's average), so that a caller
 * can size work it is about to submit. Returns the in-flight budget the
 * window applies now (ns), or XS_BUDGET_NONE (< 0) when it applies none.
 * Any thread but an observer; takes the queue's lock once.
 */
int64_t xq_est_query(struct xq *q, struct xq_est_req *req, size_t n);

/* See xs_wait()/xs_wait_all()/xs_query(). */
int xq_wait(struct xq *q, uint64_t seq);
int xq_wait_all(struct xq *q);

/*
 * Blocks until every command submitted so far has been launched (not
 * necessarily completed), waiting while the queue is suspended. For calls
 * that must reach the driver after the queue's earlier work, such as the
 * start of a stream capture.
 */
int xq_flush(struct xq *q);

/*
 * Launches every command submitted so far, in order, now, whatever the
 * queue's state: suspended, stopped by the scheduler's word, with a full
 * window or behind a relaunch barrier. It never waits for a command to
 * complete or for a resume, so a call the application makes at once on
 * the driver queue (an OpenCL map) can follow the queue's earlier work
 * even while that work waits for something only the application can do
 * later (a user event): preemption gives way to the application's call.
 * A command whose own gate (xal_cmd_ops.blocked_on) is closed stops it:
 * returns -EAGAIN with it and the rest still buffered (the caller opens
 * the gate, or waits, and calls again); 0 once none is left. Any thread
 * but an observer; takes the queue's lock.
 */
int xq_flush_now(struct xq *q);

/*
 * Calls @fn for each command submitted and not launched yet, in order,
 * until it returns false; with the queue's lock held, so that none of
 * them is launched meanwhile (@fn must not call into the queue).
 */
void xq_pending_each(struct xq *q, bool (*fn)(struct xal_cmd *cmd, void *arg), void *arg);

int xq_query(struct xq *q, uint64_t seq);

/*
 * Stops the worker thread if it only waits for work, and joins it (it is
 * started again when work comes). For libraries that never destroy their
 * queues, at process exit: no finished thread stays unjoined.
 */
void xq_reap(struct xq *q);

/* See xs_suspend()/xs_resume(). */
int xq_suspend(struct xq *q, unsigned flags);
int xq_resume(struct xq *q);
bool xq_suspended(struct xq *q);

/*
 * Changes the preemption level (clamped as at creation); a suspended queue
 * is re-preempted at the new level. Errors: -EINVAL (unknown level).
 * Raises XQ_EVENT_LEVEL when the level in effect changed.
 */
int xq_set_level(struct xq *q, int level);

/* Longest reason xq_set_level_why() keeps (with its NUL). */
#define XQ_WHY_LEN 128

/*
 * xq_set_level() for an owner that knows why the queue cannot go higher
 * than @level on its device (e.g. "kernel k not instrumented: ..."),
 * @why (copied, cut to XQ_WHY_LEN; NULL or "": no reason). Raises
 * XQ_EVENT_LEVEL when the level in effect or the reason changed.
 */
int xq_set_level_why(struct xq *q, int level, const char *why);

/* Copies into @buf (@len > 0) the reason last given, or "". */
void xq_level_why(struct xq *q, char *buf, size_t len);

/* Reads the counters; only from an observer callback (lock held). */
void xq_counters_locked(struct xq *q, struct xq_counters *out);

/* P99 preemption latency (ns); only from an observer callback. */
uint64_t xq_preempt_p99_locked(struct xq *q);

/* What the next command waits for (xal_cmd_ops.blocked_on), or NULL;
 * only from an observer callback. */
void *xq_blocked_on_locked(struct xq *q);

/*
 * The last command launched (sequence number), read without the lock: a
 * gate (xal_cmd_ops.blocked_on) of another queue may call it.
 */
uint64_t xq_launched(struct xq *q);

/*
 * Tells @q that what its next command waited for may have happened. Any
 * thread, any locks held (it takes none): a wakeup lost to a race is
 * made up within XQ_GATE_POLL_NS.
 */
void xq_kick(struct xq *q);

/*
 * Whether @q's next command waits at its gate, read without the lock. A
 * thread that opens a gate and then (after a sequentially consistent
 * fence) finds this false need not kick: the gate's owner looks again
 * after it publishes the flag.
 */
bool xq_gated(struct xq *q);

#define XQ_GATE_POLL_NS 1000000

int xq_set_window(struct xq *q, int32_t threshold, int32_t batch, int64_t budget_ns);

/* The window as set: *@budget_ns 0 when it is the level's default. */
void xq_window_get(struct xq *q, int32_t *threshold, int32_t *batch, int64_t *budget_ns);

#define XQ_HINTS 5 /* indexed by enum xs_hint; [0] unused */

int xq_set_hint(struct xq *q, enum xs_hint hint, int64_t value);

/* Copies every hint into @hint; returns the mask of those ever set. */
uint32_t xq_hints(struct xq *q, int64_t hint[XQ_HINTS]);
int xq_get_hint(struct xq *q, enum xs_hint hint, int64_t *value);

/* Installs the observer (NULL removes it). */
void xq_set_observer(struct xq *q, xq_observer_fn fn, void *ctx);

/*
 * Binds the queue to a scheduler's words in shared memory.
 *
 * @run (the run word): while *@run is 0, nothing new is launched, as at
 * Lv1 under xq_suspend(), so that a scheduler's decision written to shared
 * memory takes effect at the queue's next launch, before any thread
 * applies it. The owner still calls xq_suspend()/xq_resume() for the
 * level's own mechanism and statistics, and xq_kick() once *@run is
 * non-zero again. (A gate is something else: what a command waits for,
 * xal_cmd_ops.blocked_on.)
 *
 * @inflight: the queue keeps there how many of its commands the device
 * may still run (launched and not retired, markers expected under
 * XQ_WORK_MIN_NS not counted; 0 while suspended at Lv2/Lv3, whose device
 * holds them), and raises XQ_EVENT_DRAINED when, with
 * launches stopped (suspended or the run word 0), that count drops from more than
 * one to one or none: a scheduler that switches the device over waits for
 * it rather than interleave two queues' work (DESIGN 3.3).
 *
 * NULL removes either; with @sync, returns only once no launch decision
 * can still read the old words (takes the queue's lock; without it, for a
 * forked child's single thread). A new @inflight gets the current count at
 * once (also under the lock). Any thread but an observer.
 */
void xq_set_run_word(struct xq *q, const _Atomic uint32_t *run, _Atomic uint32_t *inflight,
		     bool sync);

/*
 * A floor (ipc_abi.h, "Run floors"): @fn(@ctx) says whether a floor holds
 * the queue's launches now. It is asked before every launch the run word
 * allows, under the queue's lock, so it must be quick and must not block;
 * while it says yes, nothing is launched, and the observer hears
 * XQ_EVENT_FLOOR when that begins (with work to launch) and when it ends.
 * Whoever lowers the floor calls xq_kick(). NULL removes it; with @sync,
 * returns only once no launch decision can still call the old one (as
 * xq_set_run_word()).
 */
typedef bool (*xq_floor_fn)(void *ctx);
void xq_set_floor(struct xq *q, xq_floor_fn fn, void *ctx, bool sync);

/* Returns once no floor check that began before the call is still running
 * (takes the queue's lock): what the old checks read may then go. */
void xq_floor_barrier(struct xq *q);

/* Whether a floor held the last launch it was asked about. Lock held
 * (for an observer of XQ_EVENT_FLOOR). */
bool xq_floored_locked(struct xq *q);

/*
 * Calls the observer with XQ_EVENT_RESYNC under the queue's lock, so that
 * it can publish its view anew (after a reconnection) without racing the
 * queue's own events. Any thread but the observer's.
 */
void xq_resync(struct xq *q);

void xq_info(struct xq *q, xs_queue_info *out);
void xq_stats(struct xq *q, xs_queue_stats *out);

struct xal_hwq *xq_hwq(struct xq *q);

/*
 * Validates a window with no zero (default) left in it: 1 <= batch <=
 * threshold <= XS_MAX_THRESHOLD, budget_ns > 0 or XS_BUDGET_NONE.
 */
int xq_window_check(int32_t threshold, int32_t batch, int64_t budget_ns);

#endif
