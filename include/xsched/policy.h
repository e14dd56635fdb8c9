/*
 * xsched scheduling policies: the ops table a policy fills, built in to
 * xschedd or loaded from a shared object (`policy = /path/to/policy.so` in
 * xschedd.conf).
 *
 * In the spirit of Linux sched_ext: a policy only decides. The daemon owns
 * the queues and every state transition; it calls the policy on events and
 * timers with a view of every queue (struct xs_pqueue), or of one device's
 * queues for a policy that says it decides per device (XS_POLICY_PER_DEVICE),
 * and applies what the policy wrote into each view's `run`. A policy is a small module of pure
 * functions over those views, so it can be unit-tested without processes.
 *
 * Threading: all callbacks run on the daemon's single event-loop thread,
 * one at a time; no locks are needed and none may be taken. Callbacks must
 * not block or sleep. Times are CLOCK_MONOTONIC nanoseconds.
 *
 * A shared object exports `xs_policy_entry` (mark it XS_POLICY_EXPORT when
 * building with hidden visibility), a function returning its ops table for
 * the daemon's XS_POLICY_VERSION (or NULL if it cannot serve it). xschedd
 * loads only files owned by root (or its own user) and not writable by
 * group or others.
 * The table is versioned: fields are only ever appended; `size` tells the
 * daemon which ones a policy knows, and NULL optional callbacks are no-ops.
 */
#ifndef XSCHED_POLICY_H
#define XSCHED_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XS_POLICY_VERSION 1

/*
 * One XQueue as a policy sees it. The daemon writes every field but `run`
 * and `pdata` before each callback; the policy reads them, writes `run`
 * in schedule(), and owns `pdata`. On entry to schedule(), `run` is the
 * decision last applied, which the daemon's starvation guard may have
 * overridden: a policy keeps its own state in `pdata`, never in `run`.
 * Ranges: priority XS_PRIORITY_MIN..XS_PRIORITY_MAX (-100..100), share
 * 0..XS_SHARE_MAX, times in microseconds up to XS_TIME_HINT_MAX_US
 * (include/xsched/xsched.h). service_ns is device time as the owning
 * process measured it (sum of its completed commands), so it lags by up to
 * the queue's in-flight window.
 */
struct xs_pqueue {
	uint64_t id;            /* daemon-wide queue id, never reused */
	uint64_t client;        /* the process that owns it (client id) */
	uint32_t device;        /* dense device index: equal means same device */
	uint32_t uid;           /* owner's user id */
	int32_t pid;
	int32_t priority;       /* effective: own hint, raised by inheritance */
	int64_t share;          /* bandwidth weight hint; 0: unset */
	int64_t deadline_us;    /* relative deadline hint; 0: unset */
	int64_t laxity_us;      /* allowed delay hint; 0: unset */
	bool ready;             /* has submitted work not yet completed */
	bool run;               /* in: current decision; out: the new one */
	uint16_t inflight;      /* commands of it the device may still run
				 * (launched, not completed, not mere markers
				 * such as event records; 0 while suspended at
				 * Lv2/Lv3), as its process last said; 0 from
				 * processes that predate the field */
	uint8_t pad[4];
	uint64_t ready_ns;      /* when it last became ready */
	uint64_t service_ns;    /* device time it consumed, cumulative */
	void *pdata;            /* the policy's own per-queue state */
};

/* Tunables from xschedd.conf, section [policy]; 0 means "policy default". */
struct xs_policy_conf {
	uint32_t size;          /* sizeof(struct xs_policy_conf) */
	uint32_t edf_k;         /* K-EDF: queues run at once per device (default 1) */
	uint64_t slice_ns;      /* time slice of bandwidth and fair share */
	int64_t default_share;  /* share of queues without one */
	bool per_process;       /* bandwidth: shares belong to processes */
	uint8_t pad[7];
	/* Switch-over (bandwidth, fair): longest wait of a new turn for the
	 * previous holder's commands in flight; XS_DRAIN_NONE: no wait. */
	uint64_t drain_ns;
};

#define XS_DRAIN_NONE UINT64_MAX

struct xs_policy_ops {
	uint32_t version;       /* XS_POLICY_VERSION it was written for */
	uint32_t size;          /* sizeof(struct xs_policy_ops) of that version */
	const char *name;       /* short name, e.g. "hpf" */

	/*
	 * Optional. Creates the policy's state in *@state. Returns 0 or a
	 * negative errno (the daemon then keeps its previous policy).
	 */
	int (*init)(void **state, const struct xs_policy_conf *conf);

	/* Optional. Frees the state; every queue was removed before. */
	void (*fini)(void *state);

	/*
	 * Optional. A queue appeared (registered, or present when the policy
	 * was switched in). May set @q->pdata. Returns 0 or a negative errno:
	 * the queue then runs unscheduled and is never passed to this policy
	 * again (neither to schedule() nor to queue_remove()).
	 */
	int (*queue_add)(void *state, struct xs_pqueue *q);

	/* Optional. The queue is gone; free @q->pdata. */
	void (*queue_remove)(void *state, struct xs_pqueue *q);

	/* Optional. @q became ready (its ready_ns is @now) or idle. */
	void (*queue_ready)(void *state, struct xs_pqueue *q, uint64_t now);
	void (*queue_idle)(void *state, struct xs_pqueue *q, uint64_t now);

	/* Optional. A hint of @q changed (fields already updated). */
	void (*hints_changed)(void *state, struct xs_pqueue *q);

	/*
	 * Mandatory. Decides, for each of the @n queues, whether it may run:
	 * sets qs[i]->run. Idle queues may be left running (they have nothing
	 * to launch). Returns the time at which the policy wants to be called
	 * again even without an event (slice expiry, deadline), or 0; each
	 * return replaces the previous one.
	 */
	uint64_t (*schedule)(void *state, struct xs_pqueue *const *qs, size_t n,
			     uint64_t now);
	/*
	 * Optional, after schedule() (check `size`). Called right after
	 * schedule(), with the same queues: may qs[i] become ready or idle
	 * without telling the daemon? Set quiet[i] true only if such a change
	 * would leave every decision as it is, and stays so while any other
	 * queue set quiet changes too (a queue whose change matters must stay
	 * false, so that it announces itself); the daemon ignores it for
	 * queues that do not run. @quiet arrives all false. A quiet queue
	 * costs its process no system call per task; the daemon reads every
	 * queue's status at its next decision. NULL: only a queue that is the
	 * only one and runs is quiet.
	 */
	void (*quiet)(void *state, struct xs_pqueue *const *qs, size_t n, bool *quiet);

	/*
	 * Optional (check `size`): XS_POLICY_* flags. XS_POLICY_PER_DEVICE:
	 * schedule() and quiet() decide each device on its own (a queue's
	 * decision depends only on the queues of its device), so the daemon
	 * may call them with one device's queues at a time, as events on that
	 * device come, and keeps the time schedule() returns per device. A
	 * policy without it is always called with every queue.
	 * XS_POLICY_FLOOR: see below.
	 */
	uint32_t flags;
};

/* struct xs_policy_ops, flags */
#define XS_POLICY_PER_DEVICE (1u << 0)
/*
 * XS_POLICY_FLOOR (with XS_POLICY_PER_DEVICE): on each device, the policy
 * never runs a ready queue while suspending a ready queue of higher
 * priority (the starvation guard's grants aside: the daemon exempts them).
 * The daemon then publishes run floors (src/ipc/ipc_abi.h, "Run floors"):
 * a queue becoming ready stops the lower ones of its device itself, before
 * the daemon decides, and a decision that suspends idle queues below the
 * device's floor needs no store into their slots. hpf sets it.
 */
#define XS_POLICY_FLOOR (1u << 1)

/* Visibility of the entry point of a policy shared object. */
#define XS_POLICY_EXPORT __attribute__((visibility("default")))

/* What a policy shared object exports under this name. */
typedef const struct xs_policy_ops *(*xs_policy_entry_fn)(uint32_t version);
#define XS_POLICY_ENTRY "xs_policy_entry"

#ifdef __cplusplus
}
#endif

#endif
