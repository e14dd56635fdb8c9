/*
 * Built-in scheduling policies of xschedd and the loader of policy shared
 * objects (internal to the daemon and the agent's local mode).
 *
 * Every policy is a static const ops table (include/xsched/policy.h) over
 * views of the queues; nothing here has global mutable state, so two
 * instances of one policy never interfere. Queues are grouped by device
 * without allocating: a policy walks the device indices present in the
 * array (xsd_for_each_dev) and, per device, scans the array again. That is
 * O(queues x devices) per call, with devices a handful and queues bounded
 * by the daemon's hard limit, and it keeps schedule() free of failure paths.
 *
 * The small inline helpers below are shared by several policies: device
 * iteration, the resolved tunables and saturating time arithmetic.
 */
#ifndef XSD_POLICY_BUILTIN_H
#define XSD_POLICY_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xsched/policy.h"

/* Name of the policy xschedd runs when its configuration names none. */
#define XSD_POLICY_DEFAULT "hpf"

/* Defaults applied where struct xs_policy_conf holds 0. */
#define XSD_BANDWIDTH_SLICE_NS 20000000ull	/* 20 ms */
#define XSD_FAIR_SLICE_NS 10000000ull		/* 10 ms */
#define XSD_DEFAULT_SHARE 100
#define XSD_SLICE_MIN_NS 100000ull		/* 100 us */
#define XSD_SLICE_MAX_NS 10000000000ull		/* 10 s */
#define XSD_SHARE_MAX 1000000

/*
 * Contention-aware window (DESIGN 3.3): a queue that shares its device with
 * a queue of higher priority keeps at most this many commands in flight, so
 * that a task of the higher one waits for little of its work at Lv1.
 */
#define XSD_CONTENTION_WINDOW 1

/*
 * Lazy doorbells (src/ipc/ipc_abi.h) are offered while the daemon schedules
 * at most this many queues: each decision then spends a pass over them,
 * which on a node with hundreds of queues costs more daemon time than the
 * doorbells it saves.
 */
#define XSD_QUIET_MAX 64

/*
 * Switch-over (src/ipc/ipc_abi.h, "Drain"): by default a policy that hands
 * a device over waits at most this long, from the start of the new turn,
 * for the stopped queues' commands in flight to drain (a Lv1 window is
 * about one budget, 1 ms by default, plus the running command); then it
 * runs the new holder anyway, so a queue whose work cannot finish delays
 * nobody longer. [policy] drain_ms sets it.
 */
#define XSD_DRAIN_MAX_NS 4000000ull		/* 4 ms */
#define XSD_DRAIN_LIMIT_NS 1000000000ull	/* what drain_ms may set: 1 s */

extern const struct xs_policy_ops xsd_policy_hpf;
extern const struct xs_policy_ops xsd_policy_hhpf;
extern const struct xs_policy_ops xsd_policy_bandwidth;
extern const struct xs_policy_ops xsd_policy_edf;
extern const struct xs_policy_ops xsd_policy_laxity;
extern const struct xs_policy_ops xsd_policy_fair;

/*
 * Returns the built-in policy called @name ("hpf", "hhpf", "bandwidth",
 * "edf", "laxity", "fair"), or NULL when @name is NULL or unknown. The
 * table is static; any thread.
 */
const struct xs_policy_ops *xsd_policy_find(const char *name);

/*
 * Returns the NULL-terminated list of built-in policy names, in a stable
 * order, default first. Static storage; any thread.
 */
const char *const *xsd_policy_names(void);

/*
 * Loads the policy shared object at the absolute @path: dlopen() with
 * RTLD_NOW | RTLD_LOCAL, looks up XS_POLICY_ENTRY, calls it with
 * XS_POLICY_VERSION and validates the table it returns (version
 * 1..XS_POLICY_VERSION, size covering at least every field up to
 * `schedule`, a non-empty name, a schedule callback).
 *
 * On success writes the table to *@ops and the library handle to *@handle
 * (release it with xsd_policy_unload() once the policy's state is gone,
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
int xsd_policy_load(const char *path, const struct xs_policy_ops **ops,
		    void **handle, uint32_t *version);

/* Closes a handle from xsd_policy_load(); NULL is a no-op. */
void xsd_policy_unload(void *handle);

/* Tunables of struct xs_policy_conf with the defaults and limits applied. */
struct xsd_pconf {
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
void xsd_pconf_resolve(struct xsd_pconf *out, const struct xs_policy_conf *conf,
		       uint64_t default_slice_ns);

/* A share hint clamped to 1..XSD_SHARE_MAX; unset (<= 0) gives @dflt. */
static inline int64_t xsd_share(const struct xs_pqueue *q, int64_t dflt)
{
	int64_t s = q->share > 0 ? q->share : dflt;

	return s > XSD_SHARE_MAX ? XSD_SHARE_MAX : s;
}

/* @ns + @us microseconds, saturating at UINT64_MAX; @us <= 0 adds nothing. */
static inline uint64_t xsd_add_us(uint64_t ns, int64_t us)
{
	uint64_t add;

	if (us <= 0)
		return ns;
	if ((uint64_t)us > UINT64_MAX / 1000)
		return UINT64_MAX;
	add = (uint64_t)us * 1000;
	return add > UINT64_MAX - ns ? UINT64_MAX : ns + add;
}

/*
 * Which queues may change unannounced after @ops decided (struct
 * xs_policy_ops, quiet), into @quiet[0..n): the policy's answer where it
 * has one, else only a single running queue; never one that does not run.
 */
static inline void xsd_policy_quiet(const struct xs_policy_ops *ops, void *state,
				    struct xs_pqueue *const *qs, size_t n, bool *quiet)
{
	size_t i;

	for (i = 0; i < n; i++)
		quiet[i] = false;
	if (ops->size >= offsetof(struct xs_policy_ops, quiet) + sizeof(ops->quiet) &&
	    ops->quiet)
		ops->quiet(state, qs, n, quiet);
	else if (n == 1)
		quiet[0] = true;
	for (i = 0; i < n; i++)
		quiet[i] &= qs[i]->run;
}

/* The earlier of two wake-up times, where 0 means "none". */
static inline uint64_t xsd_wake_min(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

/*
 * Smallest device index in @qs that is greater than *@dev (or the smallest
 * at all when @first). Writes it to *@dev and returns true; false when
 * there is none.
 */
static inline bool xsd_dev_next(struct xs_pqueue *const *qs, size_t n,
				bool first, uint32_t *dev)
{
	bool found = false;
	uint32_t best = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t d = qs[i]->device;

		if (!first && d <= *dev)
			continue;
		if (!found || d < best) {
			best = d;
			found = true;
		}
	}
	if (found)
		*dev = best;
	return found;
}

/*
 * Switch-over, after a policy decided @dev for a turn that began at
 * @turn_ns: while a queue of @dev that does not run still has more than
 * one command in flight (Lv1 drains what it launched), and until @turn_ns
 * + @max_ns, nothing of @dev runs. Returns that deadline while holding the
 * device back, else 0. A device where everything runs (nothing ready) has
 * nothing stopped, so it is never held.
 */
static inline uint64_t xsd_drain_hold(struct xs_pqueue *const *qs, size_t n,
				      uint32_t dev, uint64_t turn_ns, uint64_t max_ns,
				      uint64_t now)
{
	uint64_t until = turn_ns + max_ns;
	bool draining = false;
	size_t i;

	if (now >= until)
		return 0;
	for (i = 0; i < n; i++)
		draining |= qs[i]->device == dev && !qs[i]->run && qs[i]->inflight > 1;
	if (!draining)
		return 0;
	for (i = 0; i < n; i++)
		if (qs[i]->device == dev)
			qs[i]->run = false;
	return until;
}

/* Runs the following statement once per distinct device of @qs, ascending. */
#define xsd_for_each_dev(dev, qs, n)                                          \
	for (bool xsd_more_ = xsd_dev_next((qs), (n), true, &(dev));          \
	     xsd_more_; xsd_more_ = xsd_dev_next((qs), (n), false, &(dev)))

/*
 * Highest priority among ready queues on @dev (every device when @all),
 * or INT32_MIN when none of them is ready.
 */
static inline int32_t xsd_max_ready_prio(struct xs_pqueue *const *qs, size_t n,
					 uint32_t dev, bool all)
{
	int32_t p = INT32_MIN;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct xs_pqueue *q = qs[i];

		if (q->ready && (all || q->device == dev) && q->priority > p)
			p = q->priority;
	}
	return p;
}

#endif
