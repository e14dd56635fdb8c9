/*
 * XAL: the XPU abstraction layer, one ops table per backend.
 *
 * A backend (one file each: xal_sim.c, xal_cuda.c, xal_ze.c; OpenCL's
 * Lv2 takes two more, xal_opencl_lv2.c and xal_opencl_resolve.c) wraps a
 * hardware queue of its device in a struct xal_hwq whose first member
 * points to its static const ops table. The multi-level hardware model is expressed by
 * which ops are present: Lv1 launch/sync/sync_all are mandatory; Lv2
 * deactivate/reactivate and Lv3 interrupt/restore are NULL when the device
 * cannot do them, and the capability bits are probed per device when the
 * hwq is created, so a level is never assumed.
 *
 * Commands are backend objects embedding struct xal_cmd first. Between
 * xq submit and completion a command belongs to its XQueue, which uses the
 * fields marked "XQueue" below; the backend must not touch them.
 *
 * The table is versioned: XAL_OPS_VERSION grows when ops are appended, and
 * ops->size tells which fields a backend knows.
 */
#ifndef XS_XAL_H
#define XS_XAL_H

#include "base/devid.h"

#include <stddef.h>
#include <stdint.h>

#define XAL_OPS_VERSION 2   /* 2: settle */

/* Capability bits of a hardware queue (struct xal_hwq.caps). */
enum {
	XAL_CAP_LV2 = 1u << 0,       /* deactivate/reactivate work on this device */
	XAL_CAP_LV3 = 1u << 1,       /* interrupt/restore work on this device */
	XAL_CAP_SYNC_ANY = 1u << 2,  /* any launched command can be synced, not only sync points */
	XAL_CAP_FLUSH = 1u << 3,     /* Lv2 flushes launched commands instead of stalling */
};

/* Flags of launch(). */
#define XAL_LAUNCH_SYNC_POINT 0x1u /* the XQueue may sync() on this command */

/* Flags of sync() and sync_all(). */
#define XAL_SYNC_PREEMPTIBLE 0x1u /* give up with -EAGAIN while preempted */

/* Command kinds, used for duration learning and statistics. */
enum xal_cmd_kind {
	XAL_CMD_KERNEL = 1,
	XAL_CMD_COPY,
	XAL_CMD_MEMSET,
	XAL_CMD_EVENT,
	XAL_CMD_HOST_FUNC,
	XAL_CMD_OTHER,
	XAL_CMD_KIND_MAX,
};

struct xal_cmd;
struct xal_hwq;

struct xal_cmd_ops {
	/*
	 * Frees the command and every deep copy it owns. Called by its owner:
	 * the XQueue after completion or discard, or the creator if never
	 * submitted; on any thread, no lock held. Must not be NULL.
	 */
	void (*destroy)(struct xal_cmd *cmd);

	/*
	 * Optional. NULL when @cmd may launch now; otherwise an opaque
	 * pointer naming what it waits for (e.g. another XQueue that must
	 * first launch an event record). Called with the XQueue lock held,
	 * before each launch attempt; must not block or take that XQueue's
	 * lock. The XQueue stops launching (keeping order) until it returns
	 * NULL; whoever makes it NULL calls xq_kick().
	 */
	void *(*blocked_on)(struct xal_cmd *cmd);

	/*
	 * Optional. Called on the submitting thread, XQueue lock held, when
	 * @cmd is buffered instead of launched at once: it will launch later,
	 * from another thread, so it must now capture whatever its submitter
	 * may change once the submit returns (kernel arguments, for one).
	 * Must not block or call into the XQueue.
	 */
	void (*deferred)(struct xal_cmd *cmd);
};

struct xal_cmd {
	const struct xal_cmd_ops *ops;
	/* Commands with equal non-zero keys are expected to take equal time
	 * (e.g. the same kernel function); 0 groups by kind alone. */
	uint64_t est_key;
	uint32_t kind;          /* enum xal_cmd_kind */
	/* --- XQueue --- */
	uint32_t xq_flags;
	int32_t xq_status;
	struct xal_cmd *xq_next;
	uint64_t xq_seq;
	uint64_t xq_est_ns;
	uint64_t xq_launch_ns;
};

/*
 * The backend ops table. "Lock" below is the XQueue lock of the queue that
 * owns the hwq; an hwq is driven by exactly one XQueue. Return values are 0
 * or a negative errno unless stated.
 */
struct xal_ops {
	uint32_t version;       /* XAL_OPS_VERSION the backend was written for */
	uint32_t size;          /* sizeof(struct xal_ops) of that version */
	const char *name;       /* short backend name, e.g. "sim" */

	/*
	 * Lv1. Launches @cmd asynchronously at the end of the hardware queue.
	 * Called with the lock held, on the submitting thread or the XQueue
	 * worker; never concurrently for one hwq. May block only as the device
	 * itself does when its queue is full. The backend may keep @cmd until
	 * sync/sync_all/query reported it complete; the XQueue keeps it alive
	 * until then. @flags: XAL_LAUNCH_SYNC_POINT. An error means @cmd never
	 * reached the device.
	 */
	int (*launch)(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags);

	/*
	 * Lv1. Waits until @cmd (launched with XAL_LAUNCH_SYNC_POINT, or any
	 * command if XAL_CAP_SYNC_ANY) completed. Called without the lock, on
	 * any thread, possibly concurrently with launch() and other syncs.
	 * Returns 0; the error of @cmd or of an earlier command of the hwq not
	 * reported before (reported once); -ECANCELED if @cmd was flushed by a
	 * Lv2 deactivation (it and every later command launched before the
	 * reactivation did not run and must be launched again); -EAGAIN with
	 * XAL_SYNC_PREEMPTIBLE when the hwq is deactivated or interrupted and
	 * @cmd has not completed.
	 */
	int (*sync)(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags);

	/*
	 * Lv1. Waits until every command launched before the call completed.
	 * Context and returns as sync(), for the last command launched.
	 */
	int (*sync_all)(struct xal_hwq *hwq, unsigned flags);

	/*
	 * Optional. Non-blocking sync(): 0, an error, -ECANCELED as sync(), or
	 * -EBUSY while @cmd has not completed. NULL: the XQueue syncs instead.
	 */
	int (*query)(struct xal_hwq *hwq, struct xal_cmd *cmd);

	/*
	 * Lv2 (NULL if unsupported). After deactivate() returns, the device
	 * starts no further command of the hwq until reactivate(); the one
	 * running may finish. With XAL_CAP_FLUSH, launched commands not yet
	 * started complete as flushed instead (see sync()); a backend with
	 * XAL_CAP_FLUSH must also provide query() and XAL_CAP_SYNC_ANY. Called
	 * without the lock, serialised with reactivate() by the XQueue, on the
	 * thread that suspends or resumes; must not wait for the device.
	 */
	int (*deactivate)(struct xal_hwq *hwq);
	int (*reactivate)(struct xal_hwq *hwq);

	/*
	 * Lv3 (NULL if unsupported). interrupt() also stops the running command
	 * of the hwq at its next preemption point, keeping its progress;
	 * restore() lets it continue where it stopped. Context as deactivate().
	 */
	int (*interrupt)(struct xal_hwq *hwq);
	int (*restore)(struct xal_hwq *hwq);

	/*
	 * Optional. Device time @cmd (completed, not yet destroyed) executed, in
	 * *@ns. NULL or an error: the XQueue estimates from sync timing.
	 */
	int (*cmd_time)(struct xal_hwq *hwq, struct xal_cmd *cmd, uint64_t *ns);

	/*
	 * Optional. Waits until no command of the hwq executes on the device
	 * (after deactivate() or interrupt(): the preemption has taken effect).
	 * Any thread, no lock. NULL: preemption latency is not measured at
	 * Lv2/Lv3.
	 */
	void (*wait_quiet)(struct xal_hwq *hwq);

	/*
	 * Releases the hwq wrapper (not the vendor queue it wraps, which its
	 * creator owns). No XQueue may use @hwq any more. Accepts no NULL.
	 */
	void (*hwq_destroy)(struct xal_hwq *hwq);

	/* --- version 2 --- */

	/*
	 * Optional (NULL: nothing to do). For a creator about to make a call
	 * of its own directly on the vendor queue (one the XQueue does not
	 * carry: an OpenCL map, say): makes every launched command that the
	 * device could still skip and the XQueue launch again (XAL_CAP_FLUSH)
	 * final in the queue's order, so that the call, which lands behind
	 * them, sees their results whatever the hwq's state. Must not wait for
	 * a command to complete or for a reactivation. Called without the
	 * lock, on the creator's thread, after the XQueue launched everything
	 * (xq_flush_now()). Returns 0; -EAGAIN when a command was found flushed
	 * and waits in the XQueue to be launched again (launch, then settle
	 * again); -EIO when the device refused what it takes (the call must
	 * then fail rather than see a command half done).
	 */
	int (*settle)(struct xal_hwq *hwq);
};

struct xal_hwq {
	const struct xal_ops *ops;
	uint32_t caps;          /* XAL_CAP_*, probed at creation */
	char device[32];        /* API-local device name, e.g. "cuda:0" */
	/* Node-wide identity of the device (base/devid.h): filled by the
	 * backend or the hwq's creator before the queue is registered with
	 * the scheduler; all zero means unverified, named by @device only. */
	struct devid id;
};

/* Highest preemption level (1..3) @hwq supports, from its ops and caps. */
int xal_level_max(const struct xal_hwq *hwq);

/*
 * Level granted for @requested (0: the highest supported): clamped to
 * xal_level_max(). Returns the level, or -EINVAL for an unknown level.
 */
int xal_level_grant(const struct xal_hwq *hwq, int requested);

/* Checks that @ops has a known version and the mandatory Lv1 ops. */
int xal_ops_check(const struct xal_ops *ops);

/* @hwq's settle(), where its table has one; else 0. */
int xal_settle(struct xal_hwq *hwq);

static inline void xal_cmd_destroy(struct xal_cmd *cmd)
{
	if (cmd)
		cmd->ops->destroy(cmd);
}

#endif
