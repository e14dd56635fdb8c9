/*
 * Internals of the simulated Level Zero driver: libxsched-sim-ze.so, a
 * driver the real Level Zero loader loads through ZE_ENABLE_ALT_DRIVERS,
 * implementing the core API (level_zero/ze_api.h) over the simulated XPU
 * (src/sim/sim.h).
 *
 * Design: the loader finds a driver's functions only through the
 * ze/zet/zesGet*ProcAddrTable exports (sz_procaddr.c), so those are the
 * library's only exports; the API functions themselves keep their ze*
 * names (their prototypes are checked against ze_api.h) but stay local.
 * Each command queue and each immediate command list is one hardware queue
 * of the simulated device; a regular command list records commands
 * (struct sz_cmd) with their kernel arguments captured at append, and an
 * execution turns each into device commands whose data part runs on the
 * device's executor thread. Level Zero events are host-visible words: a
 * device command signals or resets one, the host may too, and a queue
 * that waits for one waits on a gate released by the shared watcher
 * thread (src/sim/common/sf_watch.c) once the queue reached the wait and
 * the event is signalled, so waits see the event as it is when the queue
 * gets there, as on hardware. Host-side waits (events, fences, queue
 * synchronisation) sleep on futexes with the caller's timeout.
 *
 * Handles are pointers to the structures below, each starting with a
 * magic number that is checked at every entry and cleared at destroy, so
 * a NULL or mistyped handle yields ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
 * a destroyed one remains undefined, as with a real driver (the spec
 * leaves object lifetimes to the application: a command list, event,
 * fence or queue must not be destroyed or reset while the device uses it).
 *
 * Internal functions return 0 or a negative errno; sz_result() turns them
 * into ze_result_t values at the API boundary (one table, sz_error.c).
 * Argument checks at the boundary return ze_result_t directly.
 */
#ifndef XS_SZ_INTERNAL_H
#define XS_SZ_INTERNAL_H

#include "sim/common/sf.h"
#include "sim/sim.h"

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SZ_EXPORT __attribute__((visibility("default")))

#define SZ_API_VERSION ZE_API_VERSION_CURRENT   /* the headers we implement */
#define SZ_DRIVER_VERSION 1u
#define SZ_DEVICE_NAME "xsched simulated XPU"
#define SZ_VENDOR_ID 0x5853u                    /* "XS": no PCI vendor */
#define SZ_MAX_ALLOC (4ull << 30)               /* largest single allocation */
#define SZ_NUM_QUEUES 4u                        /* queue indices of the one group */
#define SZ_PATTERN_MAX 128u                     /* fill pattern bytes */
#define SZ_GROUP_MAX 1024u                      /* work-items per group */

/* Magic numbers opening each handle's structure. */
enum {
	SZ_M_DRIVER = 0x5a5a0001, SZ_M_DEVICE, SZ_M_CONTEXT, SZ_M_QUEUE, SZ_M_LIST,
	SZ_M_FENCE, SZ_M_POOL, SZ_M_EVENT, SZ_M_MODULE, SZ_M_KERNEL, SZ_M_LOG,
};

/* The structure behind handle @h if it carries @magic, else NULL. */
static inline void *sz_obj(const void *h, uint32_t magic)
{
	return h && *(const uint32_t *)h == magic ? (void *)h : NULL;
}

ze_result_t sz_result(int err);       /* sz_error.c */
int sz_ready(void);                   /* sz_init.c: 0 once zeInit succeeded */

/*
 * What every call on a handle starts with: the structure behind @h if the
 * driver is initialised and @h carries @magic; else NULL, and *@r says
 * why (ZE_RESULT_ERROR_UNINITIALIZED, ZE_RESULT_ERROR_INVALID_NULL_HANDLE).
 */
static inline void *sz_get(const void *h, uint32_t magic, ze_result_t *r)
{
	int rc = sz_ready();

	*r = rc < 0 ? sz_result(rc) : sz_obj(h, magic) ? ZE_RESULT_SUCCESS :
	     ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return *r == ZE_RESULT_SUCCESS ? (void *)h : NULL;
}

ze_result_t sz_handle_free(const void *h, uint32_t magic);

/*
 * The counting protocol of Level Zero queries: with *@count 0 or no array
 * (@out false), *@count becomes how many there are; else up to *@count are
 * written and *@count becomes how many. Returns how many to write.
 */
static inline uint32_t sz_count(uint32_t *count, uint32_t have, bool out)
{
	if (*count == 0 || !out || *count > have)
		*count = have;
	return out ? *count : 0;
}

/* ---- driver and device (sz_init.c) ---- */

struct sz_driver {
	uint32_t magic;
	struct sim_dev *dev;          /* after a successful zeInit */
	_Atomic int state;            /* SZ_DRV_* */
};

enum { SZ_DRV_NONE = 0, SZ_DRV_READY, SZ_DRV_FAILED, SZ_DRV_FORKED };

struct sz_device {
	uint32_t magic;
};

extern struct sz_driver sz_drv;
extern struct sz_device sz_dev;

void sz_uuid(uint8_t *out, size_t n, uint8_t salt);

/* ---- contexts (sz_context.c) ---- */

struct sz_context {
	uint32_t magic;
	_Atomic int fault;            /* 0, or -EIO once a command faulted: device lost */
};

void sz_ctx_fault(struct sz_context *ctx);

/* ---- host waits (sz_wait.c) ---- */

/*
 * A word the host can sleep on: @word changes (and waiters are woken)
 * whenever the condition a waiter checks may have changed.
 */
struct sz_waitq {
	_Atomic uint32_t word;
};

int sz_wait(struct sz_waitq *wq, bool (*done)(const void *arg), const void *arg,
	    uint64_t timeout_ns);
void sz_wake(struct sz_waitq *wq);

/* ---- events (sz_event.c) ---- */

struct sz_pool;

struct sz_event {
	uint32_t magic;
	struct sz_pool *pool;
	struct sz_waitq wq;           /* word: 0 clear, 1 signalled */
	_Atomic uint64_t ts_start;    /* device time of the signalling command; */
	_Atomic uint64_t ts_end;      /* both stored before the word (release) */
};

struct sz_pool {
	uint32_t magic;
	struct sz_context *ctx;
	uint32_t flags;               /* ZE_EVENT_POOL_FLAG_* */
	uint32_t count;
	pthread_mutex_t lock;         /* which slots hold a live event */
	struct sz_event ev[];         /* slot i is live while ev[i].magic is set */
};

void sz_event_signal(struct sz_event *ev, bool instant);
void sz_event_clear(struct sz_event *ev);
bool sz_event_signalled(const struct sz_event *ev);

/* ---- commands (built by sz_list.c) ---- */

enum sz_cmd_kind {
	SZ_C_KERNEL = 1, SZ_C_COPY, SZ_C_FILL, SZ_C_TIMESTAMP, SZ_C_RESET,
	SZ_C_BARRIER, SZ_C_SIGNAL, SZ_C_WAIT,
};

/*
 * One appended command, by value: its waits, its data part and the event
 * it signals when done. A regular list keeps it until reset or destroyed
 * (the device reads it while an execution runs); an immediate list's is
 * copied for the executor and freed there.
 */
struct sz_cmd {
	uint32_t kind;
	bool transient;               /* a heap copy its data part frees */
	struct sz_context *ctx;
	struct sz_event *signal;      /* optional */
	uint32_t nwait;
	struct sz_event **wait;       /* owned */
	union {
		struct {
			const struct sf_kernel_def *def;
			uint8_t params[SF_PARAM_MAX];
			uint32_t group[3];
			ze_group_count_t count;
		} kernel;
		struct sf_region copy;
		struct {
			uint8_t *dst;
			bool reg;
			size_t size, psize;
			uint8_t pattern[SZ_PATTERN_MAX];
		} fill;
		struct {
			uint64_t *dst;
			bool reg;
		} ts;
		struct sz_event *reset;
	} u;
};

/* ---- command queues and fences (sz_queue.c) ---- */

/* A device queue and what host waits on it need; lock held to launch. */
struct sz_queue {
	uint32_t magic;               /* SZ_M_QUEUE for a handle; 0 inside an immediate list */
	struct sz_context *ctx;
	struct sf_hwq *q;
	pthread_mutex_t lock;         /* launches, so one submission's commands stay together */
	ze_command_queue_mode_t mode;
	uint64_t execs;               /* lock: executions launched */
	_Atomic uint64_t execs_done;  /* executor: executions finished */
	struct sz_waitq wq;           /* bumped as executions finish */
};

struct sz_fence {
	uint32_t magic;
	struct sz_queue *queue;
	struct sz_waitq wq;           /* word: 0 not signalled, 1 signalled */
};

ze_result_t sz_queue_new(ze_context_handle_t hContext, ze_device_handle_t hDevice,
			 const ze_command_queue_desc_t *desc, const void *out,
			 struct sz_queue **q);
void sz_queue_free(struct sz_queue *q);

/* ---- submission (sz_submit.c); q->lock held ---- */

void sz_cmd_fini(struct sz_cmd *c);
int sz_cmd_launch(struct sz_queue *q, const struct sz_cmd *c, bool copy);
int sz_queue_mark(struct sz_queue *q, struct sz_fence *f);

/* ---- command lists (sz_list.c) ---- */

struct sz_list {
	uint32_t magic;
	struct sz_context *ctx;
	bool immediate;
	bool closed;                  /* regular: no more appends */
	size_t n, cap;                /* regular: recorded commands */
	struct sz_cmd *cmds;
	struct sz_queue *iq;          /* immediate: its own device queue */
};

/* ---- modules and kernels (sz_module.c) ---- */

struct sz_module {
	uint32_t magic;
	struct sz_context *ctx;
};

struct sz_kernel {
	uint32_t magic;
	struct sz_module *mod;
	const struct sf_kernel_def *def;
	uint8_t params[SF_PARAM_MAX];   /* current arguments, copied at each append */
	uint32_t group[3];
};

struct sz_log {
	uint32_t magic;
};

#endif
