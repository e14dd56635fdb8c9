/*
 * The policy library: built-in scheduling policies, the loader of policy
 * shared objects and the helpers policies share (helpers.c), linked by the
 * scheduler core (src/sched/) that xschedd and the agent's local mode run.
 *
 * Every policy is a static const ops table (include/xsched/policy.h) over
 * views of the queues; nothing here has global mutable state, so two
 * instances of one policy never interfere. Queues are grouped by device
 * without allocating: a policy walks the device indices present in the
 * array (policy_for_each_dev) and, per device, scans the array again. That is
 * O(queues x devices) per call, with devices a handful and queues bounded
 * by the daemon's hard limit, and it keeps schedule() free of failure paths.
 * Every built-in but hhpf decides each device on its own and says so
 * (XS_POLICY_PER_DEVICE): the scheduler core then calls it with one
 * device's queues at a time, so the walk is a single pass.
 *
 * The helpers declared below are shared by several policies: device
 * iteration, the resolved tunables, saturating time arithmetic and the
 * switch-over drain. They are plain functions over the views, any thread.
 */
#ifndef POLICY_BUILTIN_H
#define POLICY_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xsched/policy.h"

/* Name of the policy run when the configuration names none. */
#define POLICY_DEFAULT "hpf"

/* Defaults applied where struct xs_policy_conf holds 0. */
#define POLICY_BANDWIDTH_SLICE_NS 20000000ull	/* 20 ms */
#define POLICY_FAIR_SLICE_NS 10000000ull		/* 10 ms */
#define POLICY_DEFAULT_SHARE 100
#define POLICY_SLICE_MIN_NS 100000ull		/* 100 us */
#define POLICY_SLICE_MAX_NS 10000000000ull		/* 10 s */
#define POLICY_SHARE_MAX 1000000

/*
 * Switch-over (src/ipc/ipc_abi.h, "Drain"): by default a policy that hands
 * a device over waits at most this long, from the start of the new turn,
 * for the stopped queues' commands in flight to drain (a Lv1 window is
 * about one budget, 1 ms by default, plus the running command); then it
 * runs the new holder anyway, so a queue whose work cannot finish delays
 * nobody longer. [policy] drain_ms sets it.
 */
#define POLICY_DRAIN_MAX_NS 4000000ull		/* 4 ms */
#define POLICY_DRAIN_LIMIT_NS 1000000000ull	/* what drain_ms may set: 1 s */

extern const struct xs_policy_ops policy_hpf;
extern const struct xs_policy_ops policy_hhpf;
extern const struct xs_policy_ops policy_bandwidth;
extern const struct xs_policy_ops policy_edf;
extern const struct xs_policy_ops policy_laxity;
extern const struct xs_policy_ops policy_fair;

/*
 * Returns the built-in policy called @name ("hpf", "hhpf", "bandwidth",
 * "edf", "laxity", "fair"), or NULL when @name is NULL or unknown. The
 * table is static; any thread.
 */
const struct xs_policy_ops *policy_find(const char *name);

/*
 * Returns the NULL-terminated list of built-in policy names, in a stable
 * order, default first. Static storage; any thread.
 */
const char *const *policy_names(void);

/*
 * Loads the policy shared object at the absolute @path: dlopen() with
 * RTLD_NOW | RTLD_LOCAL, looks up XS_POLICY_ENTRY, calls it with
 * XS_POLICY_VERSION and validates the table it returns (version
 * 1..XS_POLICY_VERSION, size covering at least every field up to
 * `schedule`, a non-empty name, a schedule callback).
 *
 * On success writes the table to *@ops and the library handle to *@handle
 * (release it with policy_unload() once the policy's state is gone,
 * since the table lives in the library) and returns 0. Nothing is written
 * on error. Errors: -EINVAL (@path not absolute, or an invalid table),
 * -ENOENT (the library cannot be opened; dlerror() is left for the caller
 * to log), -ENOEXEC (no XS_POLICY_ENTRY symbol), -EPROTO (the entry
 * returns NULL or a table of a version this daemon does not serve).
 * *@version (when not NULL) gets the version of the table the entry
 * returned, 0 for none, whatever the outcome once the entry was called.
 *
 * The table may be shorter than this build's struct xs_policy_ops: callers
 * must check ops->size before reading any field appended after `schedule`.
 * Daemon thread only (dlerror() state is per thread, dlopen() runs the
 * library's constructors).
 */
int policy_load(const char *path, const struct xs_policy_ops **ops,
		    void **handle, uint32_t *version);

/* Closes a handle from policy_load(); NULL is a no-op. */
void policy_unload(void *handle);

/* Tunables of struct xs_policy_conf with the defaults and limits applied. */
struct policy_conf {
	uint32_t edf_k;
	uint64_t slice_ns;
	int64_t default_share;
	bool per_process;
	uint64_t drain_ns;      /* 0: switches do not wait */
};

/*
 * Fills @out from @conf (NULL: all defaults), reading only the fields that
 * fit in conf->size, and applying @default_slice_ns where slice_ns is 0.
 */
void policy_conf_resolve(struct policy_conf *out, const struct xs_policy_conf *conf,
			 uint64_t default_slice_ns);

/* A share hint clamped to 1..POLICY_SHARE_MAX; unset (<= 0) gives @dflt. */
int64_t policy_share(const struct xs_pqueue *q, int64_t dflt);

/* @ns + @us microseconds, saturating at UINT64_MAX; @us <= 0 adds nothing. */
uint64_t policy_add_us(uint64_t ns, int64_t us);

/* The earlier of two wake-up times, where 0 means "none". */
uint64_t policy_wake_min(uint64_t a, uint64_t b);

/*
 * Which queues may change unannounced after @ops decided (struct
 * xs_policy_ops, quiet), into @quiet[0..n): the policy's answer where it
 * has one, else only a single running queue; never one that does not run.
 */
void policy_quiet(const struct xs_policy_ops *ops, void *state,
		  struct xs_pqueue *const *qs, size_t n, bool *quiet);

/*
 * Whether @ops decides each device on its own (XS_POLICY_PER_DEVICE, for a
 * table long enough to say so): the scheduler core may then pass it one
 * device's queues at a time.
 */
bool policy_per_device(const struct xs_policy_ops *ops);
/* Whether @ops allows run floors (XS_POLICY_FLOOR, per device). */
bool policy_floor(const struct xs_policy_ops *ops);

/*
 * Smallest device index in @qs that is greater than *@dev (or the smallest
 * at all when @first). Writes it to *@dev and returns true; false when
 * there is none.
 */
bool policy_dev_next(struct xs_pqueue *const *qs, size_t n, bool first, uint32_t *dev);

/*
 * Switch-over, after a policy decided @dev for a turn that began at
 * @turn_ns: while a queue of @dev that does not run still has more than
 * one command in flight (Lv1 drains what it launched), and until @turn_ns
 * + @max_ns, nothing of @dev runs. Returns that deadline while holding the
 * device back, else 0. A device where everything runs (nothing ready) has
 * nothing stopped, so it is never held.
 */
uint64_t policy_drain_hold(struct xs_pqueue *const *qs, size_t n, uint32_t dev,
			   uint64_t turn_ns, uint64_t max_ns, uint64_t now);

/* Runs the following statement once per distinct device of @qs, ascending. */
#define policy_for_each_dev(dev, qs, n)                                       \
	for (bool policy_more_ = policy_dev_next((qs), (n), true, &(dev));    \
	     policy_more_; policy_more_ = policy_dev_next((qs), (n), false, &(dev)))

/*
 * Highest priority among ready queues on @dev (every device when @all),
 * or INT32_MIN when none of them is ready.
 */
int32_t policy_max_ready_prio(struct xs_pqueue *const *qs, size_t n, uint32_t dev, bool all);

#endif
