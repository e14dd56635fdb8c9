/*
 * Command queues and immediate command lists as the Level Zero shim
 * schedules them: each one the application creates gets an XQueue over a
 * `ze` hardware queue (src/xal/xal_ze.h), registered with the process's
 * agent. A queue's priority (ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH/LOW)
 * moves its priority hint one above or below the process's.
 *
 * Waits take a deadline, so that every Level Zero timeout is honoured: a
 * zero timeout only queries (it never blocks, even on a suspended queue or
 * one holding buffered work), a finite one polls the XQueue until the
 * deadline (at most 1 ms between polls, never past the deadline; the
 * XQueue's worker meanwhile drives completion), UINT64_MAX blocks.
 */
#ifndef XS_ZE_QUEUES_H
#define XS_ZE_QUEUES_H

#include "base/devid.h"
#include "shim/common/shim_map.h"
#include "shim/ze/ze_shim.h"
#include "xqueue/xqueue.h"

#include <stdatomic.h>

struct zs_queue {
	struct shim_map_node node;            /* key: the application's handle */
	_Atomic int refs;               /* the table's, and each record or gate holding it */
	bool is_list;                   /* an immediate command list, else a command queue */
	bool synchronous;               /* ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS */
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	struct xq *xq;
	struct xal_hwq *hwq;
	pthread_mutex_t mu;             /* gone, users */
	pthread_cond_t idle;
	bool gone;                      /* destroyed: xq and hwq are no more */
	unsigned users;                 /* threads inside the XQueue through a reference */
};

/* The scheduled command queue or immediate list @h, or NULL. */
struct zs_queue *zs_queue_of(const void *h);

/* How many XQueues the shim created (diagnostics, ze_testhooks.c). */
int zs_queue_count(void);

/*
 * The scheduler's names of @dev: its API-local name into @out (@len bytes)
 * and its node-wide identity into *@id (base/devid.h). The queues' and
 * the memory count's (ze_memory.c). Any thread, no lock held.
 */
void zs_device_name(ze_device_handle_t dev, char *out, size_t len, struct devid *id);

/*
 * Schedules the command queue (@is_list false) or immediate command list
 * @h the application just created with @desc on @ctx and @dev. On failure
 * the handle stays unscheduled: its calls go straight to the driver.
 */
void zs_queue_created(const void *h, bool is_list, ze_context_handle_t ctx,
		      ze_device_handle_t dev, const ze_command_queue_desc_t *desc);

/*
 * Forgets @h before the application destroys it: its buffered work is
 * launched and completes first. Returns the queue's pending error, else
 * ZE_RESULT_SUCCESS (also for handles never scheduled).
 */
ze_result_t zs_queue_destroyed(const void *h);

struct zs_queue *zs_queue_ref(struct zs_queue *q);
void zs_queue_unref(struct zs_queue *q);

/*
 * Submits @c to @q (which owns it from then on, also on failure) and
 * writes its sequence number to *@seq (0 if not submitted; may be NULL).
 * When the XQueue launches @c at once on this thread and the driver
 * refuses it, returns the driver's result, as the call would natively
 * (and the queue does not report it again). For a synchronous queue,
 * waits for @c and returns its result. Errors: out of memory.
 */
ze_result_t zs_submit(struct zs_queue *q, struct xal_ze_cmd *c, uint64_t *seq);

/*
 * Whether @c is being issued by zs_submit() on the submitting thread (a
 * direct launch: the application's objects are in the state they had at
 * the call), as opposed to later, from the XQueue's buffer.
 */
bool zs_issue_is_direct(const struct xal_ze_cmd *c);

/* Called by each issue with the driver's result: see zs_submit(). */
void zs_issued(const struct xal_ze_cmd *c, ze_result_t rc);

/* An absolute deadline for a Level Zero timeout (UINT64_MAX: none). */
uint64_t zs_deadline(uint64_t timeout_ns);

/* What is left of @deadline, as a Level Zero timeout. */
uint64_t zs_remaining(uint64_t deadline);

/*
 * Waits until command @seq of @q (0: everything submitted so far)
 * completed, or @deadline passed. Returns ZE_RESULT_SUCCESS, NOT_READY at
 * the deadline, or with @report the queue's pending error (taken: it is
 * reported once). A destroyed queue has completed everything.
 */
ze_result_t zs_wait(struct zs_queue *q, uint64_t seq, uint64_t deadline, bool report);

/*
 * Waits until command @seq of @q reached the driver (not until it
 * completed), or @deadline passed: for an event the command signals,
 * which the driver may signal before the command ends (an execution of a
 * list that signals it, then waits for another event). Returns
 * ZE_RESULT_SUCCESS, NOT_READY at the deadline, or the queue's pending
 * error (taken).
 */
ze_result_t zs_wait_launched(struct zs_queue *q, uint64_t seq, uint64_t deadline);

/*
 * Launches everything @q buffered and waits until it is (not until it
 * completes), for a call that must reach the driver behind that work.
 */
void zs_flush(struct zs_queue *q);

/*
 * @q's XQueue while its command @seq has not reached the driver yet, else
 * NULL (also once @q is destroyed: all its work reached the driver).
 */
struct xq *zs_unlaunched(struct zs_queue *q, uint64_t seq);

/* Waits for every queue of @ctx (NULL: of every context). */
void zs_wait_context(ze_context_handle_t ctx);

/*
 * Holds @q's append lock around a call the shim makes on its immediate
 * list itself (zs_flush() first), so it never interleaves with the
 * backend's own appends.
 */
void zs_lock(struct zs_queue *q);
void zs_unlock(struct zs_queue *q);

#endif
