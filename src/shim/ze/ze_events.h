/*
 * What the Level Zero shim remembers about events and fences, so that
 * synchronisations answer for work that is still buffered in an XQueue and
 * so that cross-queue waits become gates.
 *
 * For each event: the queue and command that last signal it through the
 * shim (an append with that signal event on an immediate list, or an
 * execution of regular lists that signal it). For each fence: the last
 * execution it was passed to, and the guard under which the backend may
 * wait on it (xal_ze_fence).
 *
 * A command that waits on events gets a dependency on each event whose
 * last signal sits in another XQueue (struct zt_deps): it does not reach
 * the driver before those signals did, so a suspended signaller never
 * leaves a waiter blocking the device, and the scheduler sees the wait
 * (xal_cmd_ops.blocked_on), lending priority to the queue waited on.
 */
#ifndef XS_ZE_EVENTS_H
#define XS_ZE_EVENTS_H

#include "shim/ze/ze_queues.h"

struct zt_dep {
	struct zs_queue *q;             /* a reference */
	uint64_t seq;
};

struct zt_deps {
	uint32_t n, cap;
	struct zt_dep *v;
};

/*
 * Adds to @d the last signallers of @evs (@n of them) that were submitted
 * to a queue other than @own and have not reached the driver yet. On
 * out-of-memory a dependency is dropped (the command may then reach the
 * driver before its signaller, as without the shim).
 */
void zt_deps_add(struct zt_deps *d, struct zs_queue *own, uint32_t n,
		 const ze_event_handle_t *evs);

/*
 * Adds command @seq of @q to @d (taking a reference on @q), keeping the
 * latest command per queue. Out of memory: dropped.
 */
void zt_deps_note(struct zt_deps *d, struct zs_queue *q, uint64_t seq);

/* xal_cmd_ops.blocked_on over @d: the XQueue of a signaller not launched yet. */
void *zt_deps_blocked(const struct zt_deps *d);

void zt_deps_fini(struct zt_deps *d);

/* The two tables: events and their last signal, fences and their last execution. */
enum zt_table { ZT_EVENT, ZT_FENCE };

/*
 * Event @h's last signal (ZT_EVENT; the record is made if needed), or
 * fence @h's last execution (ZT_FENCE; only a fence the shim saw created),
 * is command @seq of @q.
 */
void zt_note(enum zt_table t, const void *h, struct zs_queue *q, uint64_t seq);

/*
 * What zt_note() last recorded for @h, with a reference on *@q; false if
 * nothing is known.
 */
bool zt_last(enum zt_table t, const void *h, struct zs_queue **q, uint64_t *seq);

/* Forgets event @h (destroyed, or signalled from the host). */
void zt_event_forget(ze_event_handle_t h);

/* Records fence @f, created on command queue @queue. */
void zt_fence_created(ze_fence_handle_t f, ze_command_queue_handle_t queue);

/* Whether @f is a fence the shim saw created on @queue. */
bool zt_fence_on(ze_fence_handle_t f, ze_command_queue_handle_t queue);

/*
 * The guard of application fence @f, with a reference for a command. NULL
 * for a fence the shim did not see created, or out of memory.
 */
struct xal_ze_fence *zt_fence_guard(ze_fence_handle_t f);

/*
 * Before the application resets (@destroy false) or destroys @f: its last
 * execution completes, and the backend stops using the handle.
 */
void zt_fence_release(ze_fence_handle_t f, bool destroy);

#endif
