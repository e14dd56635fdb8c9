/*
 * What the eBPF programs of src/bpf and their loaders share: the records
 * the programs write to their ring buffers and maps, with fixed-width
 * types only, since the programs are compiled by clang for the BPF target
 * (seeing vmlinux.h) and the loaders by the host compiler (seeing
 * <linux/types.h>). Sizes are asserted on both sides.
 */
#ifndef XBPF_ABI_H
#define XBPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* What a process was seen using (bits of struct xbpf_use_event `use`). */
enum xbpf_use {
	XBPF_USE_NVIDIA = 1u << 0,      /* /dev/nvidia* */
	XBPF_USE_DRI = 1u << 1,         /* /dev/dri/renderD* */
	XBPF_USE_ACCEL = 1u << 2,       /* any node in /dev/accel */
	XBPF_USE_KFD = 1u << 3,         /* /dev/kfd */
	XBPF_USE_CUDA = 1u << 8,        /* context creation in libcuda */
	XBPF_USE_OPENCL = 1u << 9,      /* ... in the OpenCL ICD loader */
	XBPF_USE_LEVELZERO = 1u << 10,  /* ... in the Level Zero loader */
};

#define XBPF_USE_DEVICES 0xffu          /* the device-node bits */

enum xbpf_event_type {
	XBPF_EV_USE = 1,                /* a process used something new */
	XBPF_EV_EXIT = 2,               /* a process seen before exited */
};

/*
 * One event of the bypass detector (bypass.bpf.c). The programs emit a
 * use at most once per process and kind (a map of what each process was
 * seen using; threads racing may emit one twice), and an exit only for a
 * process they emitted a use for.
 */
struct xbpf_use_event {
	__u32 type;                     /* enum xbpf_event_type */
	__u32 pid;                      /* thread group id, initial namespace */
	__u32 uid;
	__u32 use;                      /* one enum xbpf_use bit; 0 for an exit */
	__u64 start_ns;                 /* process start, CLOCK_BOOTTIME */
	__u64 cgroup_id;                /* cgroup v2 of the thread */
	__u32 attach;                   /* uprobes: the loader's attach index */
	__u32 pad;
	char comm[16];
	char name[32];                  /* device nodes: the node's name */
};

/*
 * Attach cookie of a uprobe: the enum xbpf_use bit number in the low 8
 * bits, the loader's index of the library and function above them.
 */
#define XBPF_COOKIE(bit, index) ((__u64)(bit) | ((__u64)(index) << 8))

/*
 * Run-queue latency of one process (rqlat.bpf.c): how long its threads
 * waited, runnable, between a wakeup (or a preemption) and running, as a
 * log2 histogram: slot k counts waits in [2^k, 2^(k+1)) ns (the last slot
 * everything longer). Written by the programs with atomic adds, read by
 * the loader at any time (a read may straddle an update: count and slots
 * can differ by the waits being added).
 */
#define XBPF_RQ_SLOTS 32

struct xbpf_rq_hist {
	__u64 slot[XBPF_RQ_SLOTS];
	__u64 count;
	__u64 sum_ns;
};

/*
 * Run-queue latency per CPU over time (rqlat.bpf.c, "node-wide"): every
 * wait of every task, counted in the window of the switch that ended it
 * (windows of `window_ns`, by CLOCK_MONOTONIC) on the CPU whose run queue
 * it was put on (a thread migrated after waiting counts where it waited), in
 * XBPF_HEAT_BUCKETS buckets (as IPC_HEAT_BUCKETS: < 1 us, [2^(k-1), 2^k)
 * us for k = 1..17, the last of them ending at 100 ms, then >= 100 ms).
 * Each CPU owns XBPF_HEAT_SLOTS records, a ring indexed by window number,
 * which that CPU's switches write (no atomics), and other CPUs only to add
 * a migrated wait (an atomic add); the daemon maps the
 * array read-only and copies the windows that have ended before the ring
 * comes round (XBPF_HEAT_SLOTS windows: 1.28 s at 10 ms). A record whose
 * `win` is not the window looked for is empty (nothing switched then).
 *
 * Beside the counts: the longest wait, the two processes whose tasks ran
 * longest in the window (time credited at their switch out, so a long run
 * lands in its last window; named by their main thread's command) and two
 * registered processes that waited there.
 */
#define XBPF_HEAT_BUCKETS 19
#define XBPF_HEAT_SLOTS 128
#define XBPF_HEAT_TOP_NS 100000000ull

struct xbpf_heat_ran {
	__u32 tgid;
	__u32 run_us;
	char comm[16];
};

struct xbpf_heat_waited {
	__u32 tgid;
	__u32 waits;
};

struct xbpf_heat_win {
	__u64 win;              /* window number (ns / window_ns) */
	__u32 slot[XBPF_HEAT_BUCKETS];
	__u32 max_us;           /* the longest wait that ended in it */
	struct xbpf_heat_ran ran[2];
	struct xbpf_heat_waited waited[2];
};

/* The waits of one watched process in one window (all CPUs). */
struct xbpf_heat_pkey {
	__u32 tgid;
	__u32 pad;
	__u64 win;
};

struct xbpf_heat_pwin {
	__u32 slot[XBPF_HEAT_BUCKETS];
	__u32 pad;
};

/* One event of `xschedctl trace` (trace.bpf.c), a USDT probe of the XQueue
 * (src/xqueue/xq_usdt.h) in the traced process. */
enum xbpf_trace_type {
	XBPF_TR_SUBMIT = 1,
	XBPF_TR_LAUNCH,
	XBPF_TR_COMPLETE,
	XBPF_TR_SUSPEND,
	XBPF_TR_RESUME,
	XBPF_TR_PREEMPT_DONE,
	XBPF_TR_MAX,
};

struct xbpf_trace_event {
	__u64 ts_ns;                    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 type;                     /* enum xbpf_trace_type */
	__u32 queue;                    /* the XQueue's process-local number */
	__u64 arg;                      /* seq (submit, launch, complete), level */
	__u64 ns;                       /* complete, resume, preempt_done: a time */
	__u32 tid;
	__u32 pad;
};

/*
 * The device gate (gate.bpf.c): a BPF-LSM program on file_open that lets
 * an accelerator's device node open only for processes registered with
 * xschedd, exempt, or out of scope. Its configuration is one record of an
 * array map, written by the daemon; the rest are maps the daemon fills
 * (devices, cgroups, executables, the allowed set) and the programs read.
 */
enum xbpf_gate_mode {
	XBPF_GATE_OFF = 0,
	XBPF_GATE_AUDIT = 1,            /* count and report, deny nothing */
	XBPF_GATE_ON = 2,               /* deny with EPERM */
};

#define XBPF_GATE_UID_RANGES 16
#define XBPF_GATE_ANY_MINOR 0xffffffffu /* a device key for every minor */
#define XBPF_GATE_CG_DEPTH 32           /* cgroup levels looked at */

/* Values of the cgroup map: what a cgroup (and what is below it) is. */
enum xbpf_gate_cg {
	XBPF_GATE_CG_SCOPE = 1,         /* must be scheduled */
	XBPF_GATE_CG_EXEMPT = 2,        /* need not be; the deepest listed wins */
};

struct xbpf_gate_conf {
	__u32 mode;                     /* enum xbpf_gate_mode */
	__u32 daemon_tgid;              /* the daemon itself: always allowed */
	__u64 ns_per_tick;              /* of /proc/PID/stat's start time (1e9/USER_HZ) */
	__u32 exempt_root;              /* real uid 0 is exempt */
	__u32 scope_all;                /* every process but the exempt */
	__u32 has_cgroups;              /* the cgroup map is not empty */
	__u32 nuid;                     /* uid ranges in scope */
	__u32 uid_lo[XBPF_GATE_UID_RANGES];
	__u32 uid_hi[XBPF_GATE_UID_RANGES];
	__u64 alive_ns;                 /* the daemon's last beat, CLOCK_MONOTONIC */
	__u64 silent_ns;                /* silent this long, it refuses nothing
					 * (fail = open); 0: it refuses on (closed) */
};

/* The device map's key: major in the high half, minor (or ANY) in the low. */
#define XBPF_GATE_DEV(major, minor) (((__u64)(major) << 32) | (__u32)(minor))

/* The executable map's key: the file's inode and its file system (kernel dev_t). */
struct xbpf_gate_exe {
	__u64 dev;                      /* (major << 20) | minor, the kernel's encoding */
	__u64 ino;
};

/* Opens by process name and uid, for the metrics. */
struct xbpf_gate_who {
	__u32 uid;
	char comm[16];
};

struct xbpf_gate_count {
	__u64 denied;                   /* refused (mode on) */
	__u64 audited;                  /* would have been (mode audit) */
};

/* One event: a process the gate refused (or would have), once per process. */
struct xbpf_gate_event {
	__u32 pid;                      /* thread group id, initial namespace */
	__u32 uid;
	__u64 start_ns;                 /* process start, CLOCK_BOOTTIME */
	__u64 cgroup_id;
	__u32 major, minor;             /* the device */
	__u32 mode;                     /* XBPF_GATE_ON: denied; _AUDIT: would be */
	__u32 pad;
	char comm[16];
	char name[32];                  /* the node's name */
};

#endif
