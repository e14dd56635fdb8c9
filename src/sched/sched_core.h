/*
 * The scheduler core: what must hold around the policy whoever runs it,
 * shared by xschedd (src/daemon/host.c, over every client's queues) and
 * the agent's local mode (src/agent/agent_local.c, over one process's).
 *
 * The core owns the queues' policy views (struct xs_pqueue, in struct
 * sched_q) and every transition; it calls the policy (include/xsched/
 * policy.h) and adds dependency-aware priority inheritance, the starvation
 * guard, the contention-aware window, the lazy doorbells' quiet flags and
 * the drain re-decide. It knows nothing of sockets, shared memory or
 * threads: its host (the daemon, the agent) reports statuses and hints
 * through the functions below and makes the decisions visible through the
 * callbacks of struct sched_host. The idle grace (sched_grace.c) keeps
 * the background out of a task's host-side gaps. The core is a set of
 * plain functions over arrays of queues, unit-tested without processes
 * (tests/test_sched.c).
 *
 * Decisions are per domain. For a policy that decides each device on its
 * own (XS_POLICY_PER_DEVICE, every built-in but hhpf) a domain is one
 * device's queues; for any other policy one domain holds every queue. An
 * event costs a pass over the queues of its domain only, and the time the
 * policy asks to be called again is kept per domain.
 *
 * Threading: none of its own. The host calls every function from one
 * thread at a time (the daemon's loop; the agent thread under its lock),
 * and the callbacks run on that thread, inside the core's call.
 */
#ifndef SCHED_CORE_H
#define SCHED_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xsched/policy.h"

/*
 * Contention-aware window (DESIGN 3.3): a queue that shares its device with
 * a queue of higher priority keeps at most this many commands in flight, so
 * that a task of the higher one waits for little of its work at Lv1.
 */
#define SCHED_CONTENTION_WINDOW 1

/*
 * Lazy doorbells (src/ipc/ipc_abi.h) are offered while a domain holds at
 * most this many queues: each decision then spends a pass over them, which
 * with hundreds of queues costs more than the doorbells it saves.
 */
#define SCHED_QUIET_MAX 64

/*
 * Starvation guard defaults (sched_guard() in sched_core.c): a queue
 * starved a whole period runs for guard_pct of the next one, as Linux
 * bounds real-time tasks (95% of each second).
 */
#define SCHED_GUARD_PCT_DEFAULT 5
#define SCHED_GUARD_PERIOD_MS_DEFAULT 1000

/*
 * Idle grace (sched_grace.c): after a queue goes idle, the queues it held
 * suspended stay so for a grace learned from its own recent Idle-to-Ready
 * gaps (the host-side gaps between the kernels of one task), at most
 * grace_max_ns: by default 1 ms; what the configuration may set: 100 ms.
 * SCHED_GAPS gaps are kept per queue, and a grace is given only once
 * SCHED_GAPS_MIN of them were seen.
 */
#define SCHED_GRACE_US_DEFAULT 1000
#define SCHED_GRACE_US_MAX 100000
#define SCHED_GAPS 16
#define SCHED_GAPS_MIN 4

/*
 * Preemption cap (sched_cap() in sched_core.c): a queue that a priority
 * policy holds, with work, is held at most preempt_cap times per request of
 * the queues above it; past that it runs beside them until the request
 * ends, i.e. until the policy has not held it for request_gap_ns (the host
 * gaps between one request's steps are shorter). 0: no cap.
 */
#define SCHED_REQUEST_GAP_US_DEFAULT 1000
#define SCHED_REQUEST_GAP_US_MAX 1000000

/* What the host configures; sched_set_conf() changes it at run time. */
struct sched_conf {
	uint32_t guard_pct;          /* starvation guard share; 0: off */
	uint64_t guard_period_ns;    /* its period */
	uint32_t contention_window;  /* in-flight cap below a higher queue; 0: off */
	uint64_t grace_max_ns;       /* idle grace cap; 0: off */
	uint32_t preempt_cap;        /* holds per request; 0: no cap */
	uint64_t request_gap_ns;     /* a request ends after this without a hold */
};

/*
 * One queue. The host embeds it in its own queue object, fills pq.id,
 * pq.client, pq.device, pq.uid, pq.pid, the hint fields and own_priority
 * before sched_add(), and keeps pq.service_ns and pq.inflight current in
 * its load() callback. Everything else is the core's.
 */
struct sched_q {
	struct xs_pqueue pq;         /* the policy's view; first */
	/* What every decision of its domain reads (kept on the line after pq). */
	int32_t own_priority;        /* host: its own priority, before inheritance */
	uint32_t cap;                /* in-flight cap decided; 0: none */
	uint32_t shown;              /* as last applied: run ? 1 + cap : 0 */
	bool added;                  /* in a domain (the policy accepted it) */
	bool quiet;                  /* as last set through the host */
	bool waits;                  /* waits on another queue (sched_waits()) */
	bool frozen;                 /* held and drained: nothing to load */
	uint32_t dom, pos;           /* its domain, its index there */
	/* as last summarised (struct sched_summary) */
	bool exempt;                 /* run by the guard or the cap, not the policy */
	bool cap_free;               /* past the preemption cap: runs until the
				      * request ends (sched_cap()) */
	/* Its status as the host reported it: pq.ready stays up during an
	 * idle grace, this does not (hosts compare against these). */
	bool ready;
	int32_t said_priority;
	uint64_t starve_since;       /* ready and held since; 0: not */
	uint64_t guard_until;        /* starvation guard grant end */
	uint64_t grace_until;        /* in a grace until then; 0: not */
	uint64_t ready_ns;
	uint64_t idle_ns;            /* when it went idle; 0: ready */
	/* The rest: counters, and what only some settings read. */
	uint64_t guard_runs;         /* grants of the guard so far */
	bool cap_held;               /* held by the policy at the last decision */
	uint32_t cap_count;          /* holds in the current request */
	uint64_t cap_last;           /* last decision that held it, or let it run free */
	uint64_t graces;             /* graces begun */
	uint64_t grace_hits;         /* ... ended by its next Ready */
	uint32_t gap[SCHED_GAPS];    /* recent Idle-to-Ready gaps, ns */
	uint8_t ngap, gap_next;
};

/*
 * What a domain's decision leaves, for the host's decided(): the lowest
 * priority among its ready queues that run by the policy's will (not by
 * the starvation guard's or the preemption cap's: those are `exempt`), or
 * INT32_MAX if none; whether a queue's priority or exemption, or the
 * domain's queues, changed since the last call (else what the host
 * derives from them per queue is as it was).
 */
struct sched_summary {
	int32_t low;
	bool changed;
};

/*
 * The host's side. Every callback gets the host's @ctx, runs inside a core
 * call on the host's thread, and must not call back into the core except
 * where said.
 */
struct sched_host {
	/*
	 * Mandatory. Makes @q's decision (q->pq.run and q->cap) visible to
	 * its process; called only when it differs from the last one applied.
	 * Returns true when that changed what the process sees. The store
	 * may be a release store: commit() orders it before later loads.
	 */
	bool (*apply)(void *ctx, struct sched_q *q);
	/*
	 * Optional. After a round of apply() calls and before any load that
	 * pairs with their stores (inflight(); the host's own): a full
	 * barrier, and whatever the host deferred until the stores were
	 * visible. NULL: apply() stores are sequentially consistent.
	 */
	void (*commit)(void *ctx);
	/* Mandatory. Sets @q's quiet flag (ipc_abi.h, "Lazy doorbells"). */
	void (*set_quiet)(void *ctx, struct sched_q *q, bool quiet);
	/*
	 * Optional. After @q's quiet flag was cleared: reads its status again
	 * and reports changes (sched_ready(), sched_idle(), sched_waits() may
	 * be called from here).
	 */
	void (*refresh)(void *ctx, struct sched_q *q);
	/*
	 * Optional. Before a decision, for a ready queue that may have run
	 * since the last one: updates q->pq.service_ns and q->pq.inflight.
	 */
	void (*load)(void *ctx, struct sched_q *q);
	/*
	 * Mandatory. Commands @q may still run, read after apply() made a
	 * suspension visible (the Dekker pair of ipc_abi.h, "Drain"): a queue
	 * held with none is frozen until its decision or status changes.
	 */
	uint32_t (*inflight)(void *ctx, struct sched_q *q);
	/* Optional. The queue @q waits on (sched_waits()), or NULL. */
	struct sched_q *(*waits_on)(void *ctx, struct sched_q *q);
	/*
	 * Optional. A domain was decided (q->pq.run and q->cap final for its
	 * @n queues @q), before its apply() calls: what the host publishes
	 * beside the decisions (the daemon's run floors), with @sum.
	 */
	void (*decided)(void *ctx, struct sched_q *const *q, size_t n,
			const struct sched_summary *sum);
	/* Optional. A policy switch-in refused @q: it now runs unscheduled. */
	void (*refused)(void *ctx, struct sched_q *q);
};

struct sched_dom;

struct sched {
	const struct xs_policy_ops *ops;
	void *state;                 /* the policy's */
	bool per_device;             /* domains are devices */
	bool floor;                  /* the policy allows run floors (XS_POLICY_FLOOR) */
	bool guard_exempt;           /* the policy bounds waits itself */
	struct sched_conf conf;
	const struct sched_host *host;
	void *ctx;
	struct sched_dom **dom;      /* domains; NULL entries are free */
	uint32_t ndom, domcap;
	size_t n;                    /* queues in domains */
	uint32_t waiting;            /* queues that wait on another */
	uint32_t graces;             /* queues in an idle grace */
	bool inherited;              /* some priority was raised last run */
	bool all_due;                /* decide every domain at the next run */
	uint64_t wakeup_ns;          /* earliest domain time; 0: none */
	uint64_t decisions;          /* apply() calls that changed something */
	uint64_t runs;               /* domain decisions */
};

/* Sets up @s with no policy (sched_set_policy() gives it one). */
void sched_init(struct sched *s, const struct sched_host *host, void *ctx,
		const struct sched_conf *conf);

/*
 * Clears every quiet flag, removes every queue from the policy and frees
 * the policy's state (not a module's library: the host unloads it) and the
 * domains. The host's queues stay its own.
 */
void sched_fini(struct sched *s);

/*
 * Switches to @ops with its initialized @state (NULL ops: none yet),
 * keeping every queue: the previous policy sees every queue removed and
 * its state freed, the new one every queue added (and ready ones made
 * ready). A queue the new policy refuses runs unscheduled (host refused()).
 * Returns 0, or -ENOMEM with nothing changed (the caller frees @state).
 */
int sched_set_policy(struct sched *s, const struct xs_policy_ops *ops, void *state);

/* Takes @conf; every domain is decided again at the next run. */
void sched_set_conf(struct sched *s, const struct sched_conf *conf);

/*
 * Adds @q (see struct sched_q for what the host fills first), running.
 * Returns 0, 1 when the policy refused it (it runs unscheduled, apply()
 * was called, and it is never passed to the policy; sched_remove() is then
 * a no-op), or -ENOMEM (nothing changed).
 */
int sched_add(struct sched *s, struct sched_q *q);

/* Removes @q (its quiet flag cleared); a no-op for a queue not added. */
void sched_remove(struct sched *s, struct sched_q *q);

/* The host changed @q's own_priority or hint fields. */
void sched_hints(struct sched *s, struct sched_q *q);

/*
 * @q became ready at @ready_ns (its process's clock stamp), seen at @now /
 * idle, seen at @now. The policy hears of it at once, except of an Idle
 * that starts an idle grace (it hears of that when the grace ends, and not
 * at all when a Ready comes first); the decision comes at the next run.
 */
void sched_ready(struct sched *s, struct sched_q *q, uint64_t ready_ns, uint64_t now);
void sched_idle(struct sched *s, struct sched_q *q, uint64_t now);

/* Whether @q now waits on another queue (host waits_on() says which). */
void sched_waits(struct sched *s, struct sched_q *q, bool waits);

/* @q's process rang (its in-flight count may have dropped): decide its
 * domain at the next run. */
void sched_touch(struct sched *s, struct sched_q *q);

/*
 * Decides the domains that have something to decide: those touched or with
 * a changed queue since their last decision, those whose time has come at
 * @now, and all of them when @all (or while inheritance is at work).
 * Writes the decisions through the host and returns the earliest time a
 * domain wants deciding again (also in s->wakeup_ns), or 0.
 */
uint64_t sched_run(struct sched *s, uint64_t now, bool all);

/* Clears every queue's quiet flag (shutdown, policy switch). */
void sched_unquiet(struct sched *s);

/* sched_grace.c: records an Idle-to-Ready gap of @q (those over @max_ns
 * are not within a task and are not kept). */
void sched_grace_learn(struct sched_q *q, uint64_t gap_ns, uint64_t max_ns);

/* The grace @q's next Idle gets (0: none yet, or @max_ns 0: off). */
uint64_t sched_grace_of(const struct sched_q *q, uint64_t max_ns);

#endif
