/*
 * A short CPU time slice for xsched's own threads (XSCHED_THREAD_SLICE_US),
 * and real-time priority for two of them when the operator asks (below).
 *
 * The threads that carry a scheduling decision (the daemon's loop, each
 * process's agent, an XQueue's worker) sleep most of the
 * time and run for microseconds when woken. Under Linux's EEVDF scheduler
 * (6.6 and later) a thread woken on a CPU busy with another normal thread
 * waits until that thread has had its slice (~1-3 ms here), and on a
 * kernel with a 250 Hz tick the check happens at the next tick: up to 4 ms
 * per hop. Since 6.12 a thread that asks for a shorter slice
 * (sched_setattr(), SCHED_OTHER with sched_runtime, no privilege needed)
 * preempts such a thread when it wakes. This matters where the device's
 * work runs on the CPUs (PoCL): there the background's kernels keep every
 * CPU busy, and each hop from the foreground's submission to the
 * background's suspension used to wait for a tick. Older kernels ignore
 * the request.
 */
#ifndef XS_BASE_SLICE_H
#define XS_BASE_SLICE_H

#include <stdint.h>
#include <sys/types.h>

/* The default slice, and the range the kernel accepts (it clamps). */
#define SLICE_DEFAULT_US 100u
#define SLICE_MIN_US 100u
#define SLICE_MAX_US 100000u

#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01  /* struct slice_attr flags */
#endif

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER1, 56 bytes). */
struct slice_attr {
	uint32_t size;
	uint32_t policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime;       /* for SCHED_OTHER since 6.12: the slice, ns */
	uint64_t deadline;
	uint64_t period;
	uint32_t util_min;
	uint32_t util_max;
};

/*
 * The scheduling attributes of thread @tid (0: the caller) into *@out.
 * Returns 0 or a negative errno (-ESRCH: no such thread).
 */
int slice_getattr(pid_t tid, struct slice_attr *out);

/*
 * XSCHED_THREAD_SLICE_US: the slice in microseconds (SLICE_MIN_US to
 * SLICE_MAX_US), 0 for the kernel's own. Unset, empty, malformed or out of
 * range (said once, at XLOG_WARN): SLICE_DEFAULT_US. Read at each call.
 */
uint32_t slice_wanted_us(void);

/*
 * Asks the kernel to give the calling thread a slice of @us microseconds
 * (0: the kernel's default again). Only a thread of the normal policy (SCHED_OTHER)
 * is changed, and its nice value is kept: a process run under SCHED_IDLE,
 * SCHED_BATCH or a real-time policy (chrt) keeps what it was given.
 * Returns 0 when asked (a kernel before 6.12 accepts and ignores it),
 * -EPERM where something forbids the call (a seccomp filter), -EAGAIN for
 * a thread of another policy (left alone), or another negative errno.
 */
int slice_set_thread(uint32_t us);

/*
 * slice_set_thread(slice_wanted_us()), nothing when that is 0 (the thread
 * keeps what it inherited): what the libraries' threads call first. A
 * refusal other than -EAGAIN is said once per process: at XLOG_WARN when
 * XSCHED_THREAD_SLICE_US is set, else at XLOG_INFO.
 */
int slice_apply(void);

/*
 * A real-time priority for the threads that carry a decision from one
 * process to another (the daemon's loop, each process's agent), asked for
 * by the operator: where the device's work runs on the host's CPUs
 * (PoCL), a thread preempted while it carries a decision waits behind the
 * device's threads until the next tick, whatever its slice, and a decision
 * takes two such hops (the foreground's Ready to the daemon, the
 * daemon's suspension to the background's agent). SCHED_FIFO at a low
 * priority takes both off the CPU scheduler's queue; those threads sleep
 * between decisions and run for microseconds each. Threads they create go
 * back to the normal policy (SCHED_FLAG_RESET_ON_FORK).
 */
#define SLICE_RT_MAX 99u

/*
 * XSCHED_THREAD_RTPRIO: the SCHED_FIFO priority (1 to SLICE_RT_MAX) for
 * a process's agent thread, 0 or unset for none (the default). Malformed
 * or out of range (said once, at XLOG_WARN): 0.
 */
uint32_t slice_rt_wanted(void);

/*
 * Puts the calling thread under SCHED_FIFO at @prio (1 to SLICE_RT_MAX),
 * reset on fork; @prio 0 puts a thread of a real-time policy back under
 * SCHED_OTHER with the nice value it had (-EAGAIN for one already there).
 * Returns 0 or a negative errno: -EPERM without CAP_SYS_NICE or an
 * RLIMIT_RTPRIO of @prio or more (or a filter), -EINVAL out of range.
 */
int slice_set_rt(uint32_t prio);

/*
 * What the agent thread calls first: slice_set_rt(slice_rt_wanted()) when
 * that is not 0, a refusal said once per process at XLOG_WARN (the thread
 * then has what slice_apply() gives); else slice_apply().
 */
int slice_apply_agent(void);

#endif
