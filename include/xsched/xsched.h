/*
 * xsched public C API.
 *
 * An XQueue is a preemptible command queue wrapped around one hardware queue
 * (a CUDA stream, an OpenCL command queue, a queue of the simulated XPU).
 * Commands submitted to it run in submission order; the XQueue decides when
 * they reach the hardware, so a scheduler can suspend and resume it at any
 * time. The transparent shims use exactly this API internally; applications
 * that want explicit control can use it directly.
 *
 * Conventions: functions return 0 or a negative errno (see xs_strerror());
 * output parameters are written only on success; every object is created by
 * an xs_*_create() and released by the matching xs_*_destroy(), which
 * accepts NULL. All functions are thread-safe unless stated otherwise.
 */
#ifndef XSCHED_XSCHED_H
#define XSCHED_XSCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XSCHED_VERSION_MAJOR 0
#define XSCHED_VERSION_MINOR 1

typedef struct xs_queue xs_queue;
typedef struct xs_hwq xs_hwq;
typedef struct xs_cmd xs_cmd;

/*
 * Preemption levels. Lv1: stop launching buffered commands (every device).
 * Lv2: also stop the device from starting commands already launched.
 * Lv3: also interrupt the running command and restore it later.
 */
enum xs_level {
	XS_LEVEL_DEFAULT = 0, /* the highest level the device supports */
	XS_LEVEL_1 = 1,
	XS_LEVEL_2 = 2,
	XS_LEVEL_3 = 3,
};

#define XS_DEFAULT_THRESHOLD 16
#define XS_DEFAULT_BATCH 8
#define XS_DEFAULT_BUDGET_NS 1000000
/* budget_ns value that disables the in-flight time budget. */
#define XS_BUDGET_NONE (-1)
#define XS_MAX_THRESHOLD 1024

/* Configuration of a new XQueue; initialise with XS_QUEUE_CONFIG_INIT. */
typedef struct xs_queue_config {
	uint32_t size;      /* sizeof(xs_queue_config), for ABI growth */
	int32_t level;      /* requested enum xs_level */
	int32_t threshold;  /* most commands in flight; 0: 16 */
	int32_t batch;      /* a sync point every batch commands; 0: 8, or
			     * half the threshold if that is smaller */
	int64_t budget_ns;  /* estimated device time in flight; 0: 1 ms at
			     * Lv1, none at Lv2/Lv3 (the device stops the
			     * queue there) */
} xs_queue_config;

#define XS_QUEUE_CONFIG_INIT { .size = sizeof(xs_queue_config) }

/* Scheduling hints; policies in the daemon interpret them. */
enum xs_hint {
	XS_HINT_PRIORITY = 1,  /* -100..100, higher runs first; default 0 */
	XS_HINT_SHARE = 2,     /* bandwidth weight 1..1000000; 0: unset */
	XS_HINT_DEADLINE_US = 3, /* relative deadline of a task; 0: unset */
	XS_HINT_LAXITY_US = 4, /* allowed slack of a task; 0: unset */
};

#define XS_PRIORITY_MIN (-100)
#define XS_PRIORITY_MAX 100
#define XS_SHARE_MAX 1000000
#define XS_TIME_HINT_MAX_US 3600000000LL

/* Flags of xs_suspend(). */
#define XS_SUSPEND_SYNC 0x1u /* return once the device stopped running the queue's work */

/* Flags of xs_queue_destroy(). */
#define XS_DESTROY_DRAIN 0x0u   /* run every submitted command first (default) */
#define XS_DESTROY_DISCARD 0x1u /* drop commands not launched yet */

/* What a queue really does, after clamping the requested level. */
typedef struct xs_queue_info {
	int32_t level;           /* level in effect */
	int32_t level_requested; /* as asked (0 if default) */
	int32_t level_max;       /* highest level the device supports */
	int32_t threshold;
	int32_t batch;
	int64_t budget_ns;       /* XS_BUDGET_NONE when disabled */
	char backend[16];        /* "sim", "cuda", ... */
} xs_queue_info;

typedef struct xs_queue_stats {
	uint64_t submitted;
	uint64_t completed;       /* including failed and discarded */
	uint64_t failed;          /* completed with an error */
	uint64_t in_flight;       /* launched, not yet known complete */
	uint64_t pending;         /* submitted, not launched */
	uint64_t direct_launches; /* launched by the submitting thread */
	uint64_t preemptions;     /* suspends that found work in flight or pending */
	uint64_t relaunches;      /* commands flushed by the device and relaunched */
	uint64_t preempt_samples; /* preemptions whose latency was measured */
	uint64_t preempt_p50_ns;  /* suspend to device quiet */
	uint64_t preempt_p99_ns;
	uint64_t preempt_max_ns;
	uint64_t suspended;       /* 1 while suspended: launches stopped by
				   * xs_queue_suspend() or by the scheduler,
				   * whose decision an idle queue may not have
				   * applied yet */
	uint64_t exec_ns;         /* device time of completed commands (measured or learned) */
} xs_queue_stats;

/* --- hardware queues and commands ---------------------------------------- */

/*
 * Hardware queues and commands come from a backend: the simulated XPU's
 * are in <xsched/sim.h>; the shims make them for CUDA, OpenCL and Level
 * Zero. What follows works with any of them.
 */

/* Destroys a hardware queue; every XQueue over it must be destroyed first. */
void xs_hwq_destroy(xs_hwq *hwq);

/* Destroys a command that was never submitted. */
void xs_cmd_destroy(xs_cmd *cmd);

/* --- XQueues ------------------------------------------------------------ */

/*
 * Creates an XQueue over @hwq with @cfg (NULL: defaults). A requested level
 * above the device's is clamped (see xs_queue_info()). Errors: -EINVAL (bad
 * argument: NULL, negative sizes, batch > threshold, unknown level, too
 * small cfg->size), -ENOMEM.
 */
int xs_queue_create(xs_hwq *hwq, const xs_queue_config *cfg, xs_queue **out);

/*
 * Destroys @q. With XS_DESTROY_DRAIN every submitted command runs first
 * (waiting while the queue is suspended); with XS_DESTROY_DISCARD commands
 * not yet launched are dropped and those in flight are awaited. Returns the
 * first unreported command error, or 0.
 */
int xs_queue_destroy(xs_queue *q, unsigned flags);

/*
 * Submits @cmd, which then belongs to the queue (also when an error is
 * returned). Never blocks because the queue is suspended. On success
 * *@seq (if not NULL) receives the command's sequence number (1, 2, ...).
 * Errors: -EINVAL, -ESHUTDOWN (queue being destroyed).
 */
int xs_submit(xs_queue *q, xs_cmd *cmd, uint64_t *seq);

/*
 * Waits until command @seq completed (blocking while the queue is
 * suspended). Device errors are asynchronous, as with a driver: the first
 * error of any command not reported yet is returned by the next wait (of
 * whichever command), once. Returns that error, else 0; -EINVAL if @seq was
 * never submitted.
 */
int xs_wait(xs_queue *q, uint64_t seq);

/* Waits until every submitted command completed; errors as xs_wait(). */
int xs_wait_all(xs_queue *q);

/*
 * Returns 0 if command @seq completed, -EBUSY if not, -EINVAL if unknown.
 * Never reports command errors (the next wait does).
 */
int xs_query(xs_queue *q, uint64_t seq);

/*
 * Suspends @q: no further command of it starts on the device, by the means
 * of the queue's level. Idempotent. With XS_SUSPEND_SYNC, returns once the
 * device has stopped executing the queue's work.
 */
int xs_suspend(xs_queue *q, unsigned flags);

/* Resumes @q. Idempotent. */
int xs_resume(xs_queue *q);

/*
 * Changes the progressive-launching window at run time; arguments as in
 * xs_queue_config (0 keeps the current value).
 */
int xs_queue_set_window(xs_queue *q, int32_t threshold, int32_t batch,
			int64_t budget_ns);

int xs_queue_set_hint(xs_queue *q, enum xs_hint hint, int64_t value);
int xs_queue_get_hint(xs_queue *q, enum xs_hint hint, int64_t *value);

int xs_queue_info_get(xs_queue *q, xs_queue_info *out);
int xs_queue_stats_get(xs_queue *q, xs_queue_stats *out);

/* A static description of @err (negative errno or 0); never NULL. */
const char *xs_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif
