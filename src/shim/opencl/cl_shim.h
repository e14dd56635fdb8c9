/*
 * Internals of libxsched-opencl.so, the OpenCL shim.
 *
 * The shim carries the SONAME libOpenCL.so.1 and exports every function
 * of the ICD loader (src/vendor/opencl/cl_functions.def) with the
 * loader's symbol versions: the ones it schedules are C hooks, every other
 * name a trampoline to the real loader (cl_trampolines.S), which is opened
 * by absolute path.
 * dlopen/dlsym hooks hand the shim to applications that open the loader
 * under another name or look functions up through its handle.
 *
 * Every command queue the application creates gets an XQueue (cl_queues.c);
 * enqueues become XQueue commands (cl_hooks.c, cl_cmds.c); a launch the
 * XQueue buffers runs with the kernel arguments of its enqueue, replayed
 * from what the shim recorded of the setters (cl_kernel.c). Kernels of
 * programs built from source carry the guardian, Lv2's cut between
 * work-groups (guard/: the rewriter, the program twin, the guard half of
 * kernels). An event the application
 * asks for is the driver's own when the command launched before the
 * enqueue returned, else a proxy: a user event of the queue's context that
 * completes with the real command and answers queries as the real one
 * (cl_events.c).
 */
#ifndef XS_CL_SHIM_H
#define XS_CL_SHIM_H

#include "vendor/opencl/cl_fns.h"
#include "shim/common/shim_map.h"
#include "shim/common/shim_lib.h"
#include "xal/xal_opencl.h"
#include "xqueue/xqueue.h"

#include <stdbool.h>
#include <stdint.h>

#define XS_CL_HOOK __attribute__((visibility("default")))

/* The real loader's functions (resolved by cl_load()). */
extern struct cl_fns cl_real;

/* Loads the real loader once; 0, or -ENOENT without one. */
int cl_load(void);

/* True when calls go straight to the loader (XSCHED_DISABLE, mode none, a
 * forked child, no loader). */
bool cl_passthrough(void);

/* The shim's own entry point for @name (hook or trampoline), or NULL. */
void *cl_self_sym(const char *name);

/* --- queues (cl_queues.c) ---------------------------------------------------- */

struct cl_q {
	struct shim_map_node node;      /* first; key: queue (the queues' map) */
	cl_command_queue queue;
	cl_context ctx;
	cl_device_id dev;
	bool ooo;
	bool nonuniform;                /* the device takes uneven work-groups */
	size_t max_items[3];            /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
	struct xq *xq;
	struct xal_hwq *hwq;
	_Atomic int app_refs;           /* the application's references */
	_Atomic int lv;                 /* 0, or the level its kernels gave it */
	_Atomic int forcing;            /* threads in cl_q_settle(): no cross-queue gate */
	_Atomic int holds;              /* snapshots holding it (cl_queues.c): not freed */
	struct cl_q *retire_next;       /* released, its work still launching (cl_queues.c) */
	char why[192];                  /* why level 1, once set (cl_q_note_kernel()) */
};

/*
 * Orders a call that goes to the driver at once on @q behind the queue's
 * earlier work (cl_queues.c), without waiting for any of it to complete or
 * for the queue to be resumed. Returns CL_SUCCESS or CL_OUT_OF_RESOURCES.
 * Application thread, no lock held.
 */
cl_int cl_q_settle(struct cl_q *q);

/*
 * Whether a command of @q not launched yet names @obj (a memory object or
 * a sampler: as its own argument, or in its kernel's arguments).
 * Application thread, no lock held.
 */
bool cl_cmd_pending_uses(struct cl_q *q, const void *obj);

/* Counters for $XSCHED_OPENCL_STATS: commands scheduled, proxies made,
 * kernel launches buffered (issued with their recorded arguments). */
extern _Atomic unsigned long cl_stat_cmds, cl_stat_proxies, cl_stat_deferred, cl_stat_guarded;

/*
 * A launch of @kernel (cl_kernel_hidden() @hidden) on @q: a queue with the
 * guardian goes to level 2 with its first instrumented kernel and back to
 * level 1, for good and with the reason, with its first kernel that is
 * not, or whose launch cannot be cut (@uncut: why, static text; else
 * NULL). Enqueuing thread, no lock held.
 */
void cl_q_note_kernel(struct cl_q *q, cl_kernel kernel, int32_t hidden, const char *uncut);

/* The scheduled queue of @queue, or NULL (unknown: pass through). */
struct cl_q *cl_q_of(cl_command_queue queue);

/* cl_q_of() for a call to schedule: NULL also without a loader or when
 * calls go straight to it (cl_passthrough()). */
struct cl_q *cl_q_scheduled(cl_command_queue queue);

/* How many XQueues the shim created (diagnostics, cl_testhooks.c). */
int cl_q_count(void);

/*
 * The scheduler's names of @dev (cl_ident.c): the API-local @name
 * ("cl:" and CL_DEVICE_NAME, @len bytes) and the node-wide identity @id
 * (UUID, else PCI bus id, else unverified: all zero).
 */
void cl_device_naming(cl_device_id dev, char *name, size_t len, struct devid *id);

/* The first device of @ctx (whatever the number of its devices), or NULL. */
cl_device_id cl_context_first_device(cl_context ctx);

/* Adds what the hwqs of every queue of @ctx (retiring ones too) hold in it. */
void cl_q_held_in(cl_context ctx, struct xal_cl_held *out);

/* Wakes every queue whose next command may wait for a proxy just bound. */
void cl_q_kick_all(void);

/* --- device memory (cl_memory.c) -------------------------------------------- */

/*
 * clEnqueueSVMFree on the driver, the pointers' bytes given back to the
 * memory count when they are freed (the command's callback, the shim's,
 * calls the application's @fn or frees them itself). Returns the
 * driver's answer, or CL_OUT_OF_HOST_MEMORY. Application thread.
 */
cl_int cl_mem_svm_free_enqueue(cl_command_queue cq, cl_uint n, void *ptrs[],
			       void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[], void *),
			       void *data, cl_uint nwait, const cl_event *wait, cl_event *event);

/* --- proxy events (cl_events.c) ---------------------------------------------- */

struct cl_proxy;

/* The proxy whose user event is @ev, with a reference taken; or NULL. */
struct cl_proxy *cl_proxy_get(cl_event ev);
void cl_proxy_put(struct cl_proxy *p);

/*
 * A proxy for a command of @q of @type not launched yet, which waits for
 * the @nwait events of @wait (@wproxy: the proxies among them, else NULL
 * entries); NULL on failure.
 */
struct cl_proxy *cl_proxy_new(struct cl_q *q, cl_command_type type, cl_uint nwait,
			      const cl_event *wait, struct cl_proxy *const *wproxy);

/* How many proxies of queues of @ctx are alive (each one a user event). */
unsigned cl_proxy_count_in(cl_context ctx);

/* The application's handle of @p. */
cl_event cl_proxy_event(struct cl_proxy *p);

/*
 * The real event of @p once its command launched (borrowed: valid while
 * the caller holds a reference), else NULL; *@failed tells a launch that
 * failed (then the user event carries the error).
 */
cl_event cl_proxy_real(struct cl_proxy *p, bool *failed);

/* The queue of @p's command, to gate on. */
struct cl_q *cl_proxy_queue(struct cl_proxy *p);

/*
 * Ties @p to its command's outcome: @ev (launched, its real event) or the
 * enqueue error @rc. Any thread, XQueue lock possibly held: work that may
 * call application callbacks runs later, on another thread; with
 * @unlocked (a driver's callback, no lock of the shim's held), on this one
 * at cl_jobs_run_local().
 */
void cl_proxy_bind(struct cl_proxy *p, cl_event ev, cl_int rc, bool unlocked);

/* --- work that may call the application (cl_jobs.c) ------------------------------ */

enum cl_jobs_how {
	CL_JOBS_NOW,            /* on the calling thread, at once (the default) */
	CL_JOBS_DEFER,          /* on the helper thread, in order (an XQueue lock held) */
	CL_JOBS_LATER,          /* on this thread at cl_jobs_run_local() (inside a
				 * driver's callback telling of a completion) */
};

struct cl_jobs_mode {
	enum cl_jobs_how how;
};

/* Sets how this thread's cl_jobs_run() runs work; returns the mode before. */
struct cl_jobs_mode cl_jobs_enter(enum cl_jobs_how how);
/* Goes back to @prev (cl_jobs_enter()'s answer). */
void cl_jobs_leave(struct cl_jobs_mode prev);

/*
 * Runs @fn(@arg), which may call the application, as this thread's mode
 * says (on the caller's thread if the helper thread cannot start or
 * memory runs out). Any thread.
 */
void cl_jobs_run(void (*fn)(void *), void *arg);

/* Runs the work CL_JOBS_LATER kept on this thread, in order; no lock held. */
void cl_jobs_run_local(void);

/*
 * The status the driver gives a command of @dev whose wait list holds an
 * event that failed with @failed (learned once per device and status,
 * with a marker on a context of the shim's own; drivers differ: PoCL says
 * -1 whatever the event's status). Any thread, no lock held.
 */
cl_int cl_event_failed_status(cl_device_id dev, cl_int failed);

/*
 * What the driver calls the command of a task (CL_EVENT_COMMAND_TYPE: some
 * say CL_COMMAND_NDRANGE_KERNEL), learned from the first task launched,
 * else asked once with a task of the shim's own on @dev. Any thread but
 * one holding an XQueue lock.
 */
cl_command_type cl_cmd_task_type(cl_device_id dev);

/*
 * Waits until no thread is binding the proxy of a guarded launch that
 * just completed for good (cl_cmds.c). A thread that learnt of a
 * completion otherwise (its sync returned, a clFinish) calls it before it
 * reads a proxy still pending. Any thread, no lock held.
 */
void cl_cmd_wait_completing(void);

/* --- kernels (cl_kernel.c) --------------------------------------------------- */

/* The arguments of a kernel at a buffered launch. */
struct clk_snap;

/*
 * A snapshot of @k's arguments and execution info as the application set
 * them, for a launch issued later (*@out, freed with cl_kernel_snap_free()).
 * Returns CL_SUCCESS; CL_INVALID_KERNEL_ARGS if an argument was never set
 * (as the driver answers at the enqueue); CL_OUT_OF_HOST_MEMORY if the
 * shim could not record or copy them. Any thread; may be called with an
 * XQueue lock held.
 */
cl_int cl_kernel_snapshot(cl_kernel k, struct clk_snap **out);

/*
 * The kernel to issue @s's launch with: a private kernel of the same
 * program and name with @s's arguments set, owned by @s. NULL with *@err
 * (the driver's error) if it could not be made or set up. Called once per
 * snapshot, by the thread issuing the launch.
 */
cl_kernel cl_kernel_bind(struct clk_snap *s, cl_int *err);

/* Whether an argument of @s is the handle @obj (an argument of its size
 * holding its value). Any thread. */
bool cl_kernel_snap_names(const struct clk_snap *s, const void *obj);

/* Frees @s (its private kernel goes back to a pool). NULL accepted. */
void cl_kernel_snap_free(struct clk_snap *s);

/*
 * Gives @s's private kernel back to the pool once the driver has the
 * launch, keeping the arguments: a later cl_kernel_bind() (a relaunch)
 * replays them onto another. NULL accepted.
 */
void cl_kernel_snap_unbind(struct clk_snap *s);

/*
 * CL_KERNEL_REFERENCE_COUNT of @k as the application counts it: the
 * driver's count less the references buffered launches hold until they
 * end (which may be a moment after the application's clFinish returns).
 * Into *@out; returns the driver's answer. Any thread.
 */
cl_int cl_kernel_app_refs(cl_kernel k, cl_uint *out);

/*
 * The index of the guardian's first hidden argument of @k, or -1 when @k
 * carries no guardian (or the shim has no record of it); into *@app_prog
 * (if not NULL, and only when instrumented) the application's program to
 * report as the kernel's, or NULL. Any thread.
 */
int32_t cl_kernel_hidden(cl_kernel k, cl_program *app_prog);

/*
 * Whether the application holds a kernel made from the driver's program
 * @prog (one it has not released). The shim's own references (launches in
 * its hands, private kernels) do not count, although the driver counts
 * them as kernels attached to @prog. Any thread; scans every kernel.
 */
bool cl_kernel_app_holds(cl_program prog);


#endif
