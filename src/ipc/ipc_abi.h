/*
 * The xsched IPC ABI: messages on the daemon's SOCK_SEQPACKET sockets and
 * the per-client shared memory. Shared by the agent (in every scheduled
 * process), xschedd and xschedctl, possibly of different builds.
 *
 * Messages: one packet each, a fixed header then a fixed-size body per type
 * (LIST/METRICS replies carry arrays or text and are chunked). Every field
 * has a fixed width, every struct explicit padding; the protocol version
 * grows when anything changes, and the daemon refuses other versions.
 *
 * Shared memory: one memfd per client, created, sized and sealed by the
 * daemon and passed with SCM_RIGHTS together with two eventfds (doorbells:
 * client-to-daemon, daemon-to-client). Each queue has a slot whose fields
 * have a single writer: the daemon writes decisions and configuration, the
 * client writes status and counters. There is no lock in it, so a client
 * killed at any instant cannot block the daemon or other clients.
 */
#ifndef XS_IPC_ABI_H
#define XS_IPC_ABI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define IPC_VERSION 12u
#define IPC_MAGIC 0x58534331u          /* "XSC1" */
#define IPC_SHM_MAGIC 0x31484d5343535358ull /* "XSSCSMH1" */

#define IPC_DEFAULT_SOCKET "/run/xsched/xschedd.sock"
#define IPC_DEFAULT_CONTROL "/run/xsched/xschedctl.sock"

#define IPC_MSG_MAX 4096u              /* largest packet either side sends */
#define IPC_NAME_LEN 32u
#define IPC_POLICY_LEN 128u
#define IPC_IDENT_LEN 40u              /* device identity text (base/devid.h) */
#define IPC_PCI_LEN 24u                /* PCI bus id text */
#define IPC_CONTAINER_LEN 72u          /* container id: 64 hex digits, NUL, padding */

/* Message types. C: client (agent or CLI) to daemon, D: daemon to client. */
enum ipc_type {
	IPC_HELLO = 1,          /* C: first message of a connection */
	IPC_HELLO_REPLY,        /* D: + memfd, bell to daemon, bell to client */
	IPC_REGISTER,           /* C: a queue */
	IPC_REGISTERED,         /* D: its slot and id */
	IPC_UNREGISTER,         /* C */
	IPC_SET_HINT,           /* C: hint of one of the client's own queues */
	IPC_REPLY,              /* D: status of a request without data */
	IPC_LIST,               /* C: list queues (all, or the caller's uid) */
	IPC_LIST_REPLY,         /* D: chunk of queue records; last has IPC_F_LAST */
	IPC_CTL_SET,            /* C: set a hint or knob by pid or queue id */
	IPC_POLICY_GET,         /* C */
	IPC_POLICY_SET,         /* C */
	IPC_POLICY_REPLY,       /* D */
	IPC_STATUS,             /* C */
	IPC_STATUS_REPLY,       /* D */
	IPC_METRICS,            /* C */
	IPC_TEXT_REPLY,         /* D: chunk of text; last has IPC_F_LAST */
	IPC_DEVICES,            /* C: list the scheduling domains (devices) */
	IPC_DEVICES_REPLY,      /* D: chunk of device records; last has IPC_F_LAST */
	IPC_BYPASS,             /* C: the processes seen using an XPU (bypass detector) */
	IPC_BYPASS_REPLY,       /* D: chunk of process records; last has IPC_F_LAST;
				 * or an IPC_REPLY: -ENODEV off, -EOPNOTSUPP not
				 * built, -ECANCELED it could not load */
	IPC_QUEUE_LEVEL,        /* C: a queue's level changed, or why it is not higher */
	IPC_MEM_NEED,           /* C: an allocation the device refused; the reply (an
				 * IPC_REPLY) comes once memory was freed for it, or
				 * cannot be ("Memory preemption" below) */
	IPC_MEM_EVICT,          /* D: evict your evictable device memory */
	IPC_MEM_EVICTED,        /* C: what the eviction freed */
	IPC_MEM_RESTORE,        /* D: your evicted memory may come back */
	IPC_MEM_RESTORED,       /* C: whether it did */
	IPC_FLOOR,              /* D: + a memfd: a floor page of a device ("Run
				 * floors" below) */
	IPC_HEATMAP,            /* C: a latency heat map ("Heat maps" below) */
	IPC_HEATMAP_REPLY,      /* D: chunk of one section's records; last has
				 * IPC_F_LAST; or an IPC_REPLY with -errno */
	IPC_TYPE_MAX,
};

#define IPC_F_LAST 0x1u

struct ipc_hdr {
	uint32_t magic;         /* IPC_MAGIC */
	uint16_t version;       /* IPC_VERSION */
	uint16_t type;          /* enum ipc_type */
	uint32_t len;           /* whole packet, header included */
	uint32_t seq;           /* request number; replies echo it */
};

/* Client roles in IPC_HELLO. */
enum ipc_role {
	IPC_ROLE_AGENT = 1,     /* a process with queues: gets shared memory */
	IPC_ROLE_CTL = 2,       /* xschedctl: requests only */
	IPC_ROLE_ENFORCE = 3,   /* registration with the device gate ("Device
				 * enforcement" below): the reply says whether the
				 * process may now open accelerator device nodes */
};

struct ipc_hello {
	uint32_t role;          /* enum ipc_role */
	uint32_t flags;
	char comm[16];          /* process name, for listings (not trusted) */
};

struct ipc_hello_reply {
	uint64_t client_id;
	uint32_t nslots;        /* queues the client may register */
	uint32_t shm_size;
};

/* Hint keys, as enum xs_hint, plus window/level knobs for IPC_CTL_SET. */
enum ipc_key {
	IPC_KEY_PRIORITY = 1,
	IPC_KEY_SHARE = 2,
	IPC_KEY_DEADLINE_US = 3,
	IPC_KEY_LAXITY_US = 4,
	IPC_KEY_THRESHOLD = 5,
	IPC_KEY_BATCH = 6,
	IPC_KEY_BUDGET_US = 7,
	IPC_KEY_LEVEL = 8,
	IPC_KEY_MEMORY_LIMIT = 9, /* IPC_CTL_SET by pid only: bytes per device, 0: none
				   * ("Device memory" below) */
	IPC_KEY_MAX,
};

#define IPC_HINT_KEYS 5         /* keys 1..4 are hints */

/*
 * How a device is identified (base/devid.h): a scheduling domain is one
 * device, named by its UUID, else its PCI bus id, else only by the
 * API-local name in `device` (unverified: queues on devices of equal local
 * names are one domain). Identity texts are canonical: lowercase UUIDs
 * 8-4-4-4-12, PCI bus ids "dddd:bb:dd.f".
 */
enum ipc_id_kind {
	IPC_ID_UNVERIFIED = 0,  /* `ident`, `pci` empty; the domain is named by `device` */
	IPC_ID_PCI = 1,         /* `ident` is the PCI bus id, as `pci` */
	IPC_ID_UUID = 2,        /* `ident` is the UUID; `pci` where known */
};

struct ipc_register {
	uint32_t slot;          /* client-chosen slot, < nslots, unused */
	uint32_t level;         /* level in effect (1..3) */
	uint32_t level_max;     /* highest the device supports */
	uint32_t hint_set;      /* bit k: hint k given explicitly */
	int64_t hint[IPC_HINT_KEYS]; /* by enum ipc_key 1..4; [0] unused */
	char device[IPC_NAME_LEN];   /* API-local device name, e.g. "cuda:0" */
	char backend[16];
	int32_t threshold;      /* window in effect */
	int32_t batch;
	int64_t budget_ns;
	uint32_t id_kind;       /* enum ipc_id_kind */
	uint32_t pad;
	char ident[IPC_IDENT_LEN];   /* node-wide identity; "" when unverified */
	char pci[IPC_PCI_LEN];       /* PCI bus id where known, else "" */
};

struct ipc_registered {
	uint64_t queue_id;      /* daemon-wide, never reused */
	uint32_t slot;
	uint32_t pad;
	int64_t hint[IPC_HINT_KEYS]; /* hints in effect (defaults, ceiling) */
};

struct ipc_unregister {
	uint32_t slot;
	uint32_t pad;
};

struct ipc_set_hint {
	uint32_t slot;
	uint32_t key;           /* IPC_KEY_PRIORITY..IPC_KEY_LAXITY_US */
	int64_t value;
};

#define IPC_WHY_LEN 128

struct ipc_queue_level {
	uint32_t slot;
	uint32_t level;         /* level in effect (1..3) */
	char why[IPC_WHY_LEN];  /* why not higher on its device, e.g. "kernel k not
				 * instrumented: ..."; "" none said */
};

/*
 * Why a request was refused, where the errno alone would point the wrong
 * way (struct ipc_reply): the limit that refused it comes with it.
 */
enum ipc_why {
	IPC_WHY_NONE = 0,
	IPC_WHY_CEILING = 1,    /* a priority above the caller's ceiling; limit: it */
	IPC_WHY_THRESHOLD = 2,  /* a batch above the queue's threshold; limit: it */
	IPC_WHY_MEMORY_CEILING = 3, /* a memory limit above the process's uid's
				 * memory_limit (or none asked under one); limit: it */
	IPC_WHY_MAX,
};

/*
 * Memory preemption ([memory] preemption = yes). A process whose
 * allocation the driver refuses for lack of memory asks (IPC_MEM_NEED,
 * naming its memory record of the device and the bytes); the daemon
 * suspends the queues of a process of lower priority holding evictable
 * memory there (the lowest first, then the largest), and has it evict
 * (IPC_MEM_EVICT; it waits for its launched work, copies its memory to
 * the host and releases it, IPC_MEM_EVICTED with the bytes freed), until
 * the bytes are freed or no such process is left; then it replies, and
 * the allocation is tried again. An evicted process stays suspended until
 * the daemon lets it restore (IPC_MEM_RESTORE; IPC_MEM_RESTORED 0, or
 * -ENOMEM while the device has not the room: asked again later).
 */
struct ipc_mem_need {
	uint32_t index;         /* the memory record of the device */
	uint32_t pad;
	uint64_t bytes;
};

struct ipc_mem_evict {
	uint32_t index;         /* the victim's record of the device */
	uint32_t pad;
	uint64_t bytes;         /* wanted (the process evicts all it can) */
};

struct ipc_mem_evicted {
	int64_t freed;          /* bytes freed on the device, or -errno */
};

struct ipc_mem_restored {
	int32_t status;         /* 0, or -ENOMEM: not the room yet */
	uint32_t pad;
};

struct ipc_reply {
	int32_t status;         /* 0 or a negative errno */
	uint32_t why;           /* enum ipc_why, with a refusal */
	int64_t limit;          /* see enum ipc_why */
};

/* Targets of IPC_CTL_SET. */
enum ipc_target { IPC_TARGET_PID = 1, IPC_TARGET_QUEUE = 2 };

struct ipc_ctl_set {
	uint32_t target;        /* enum ipc_target */
	uint32_t key;           /* enum ipc_key */
	uint64_t id;            /* pid or queue id */
	int64_t value;
};

struct ipc_list {
	uint32_t flags;
	uint32_t pad;
};

/* Queue states in listings. */
enum ipc_qstate { IPC_QS_IDLE = 0, IPC_QS_READY = 1 };

struct ipc_queue_rec {
	uint64_t queue_id;
	uint64_t client_id;
	int32_t pid;
	uint32_t uid;
	char comm[16];
	char device[IPC_NAME_LEN];
	char backend[16];
	uint32_t level;
	uint32_t state;         /* enum ipc_qstate */
	uint32_t running;       /* the daemon's decision: 1 run, 0 suspended */
	int32_t eff_priority;   /* after inheritance */
	int64_t hint[IPC_HINT_KEYS];
	uint32_t threshold, batch;
	int64_t budget_ns;
	uint64_t submitted, completed, preemptions;
	uint64_t exec_ns;       /* device time of completed commands */
	uint64_t task_p99_ns;   /* Ready-to-Idle time, P99 */
	uint64_t preempt_p99_ns;
	uint64_t domain;        /* its device (struct ipc_device_rec), never reused */
	uint32_t id_kind;       /* how that device is identified (enum ipc_id_kind) */
	uint32_t level_max;     /* highest level its device supports */
	uint64_t wait_ns;       /* ready and kept suspended for so long; 0: not */
	uint64_t guard_runs;    /* grants of the starvation guard so far */
	uint64_t cpu_wait_p99_ns; /* its process's run-queue latency, P99 (the
				 * upper bound of a log2 bucket); 0: not measured */
	int32_t nspid;          /* its pid in its own pid namespace; 0: the daemon's */
	uint32_t pad;
	char container[IPC_CONTAINER_LEN]; /* id from its cgroup path; "": none */
	char level_why[IPC_WHY_LEN]; /* why @level is below @level_max; "" none said */
	uint64_t mem_used;      /* device memory its process holds on its device */
	uint64_t mem_limit;     /* the process's limit there; 0: none */
	uint64_t mem_evicted;   /* of mem_used, evicted to the host (memory preemption) */
};

struct ipc_list_reply {
	uint32_t flags;         /* IPC_F_LAST */
	uint32_t count;         /* records following */
	/* struct ipc_queue_rec rec[count]; */
};

#define IPC_LIST_PER_MSG \
	((IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(struct ipc_list_reply)) / \
	 sizeof(struct ipc_queue_rec))

/*
 * A scheduling domain in IPC_DEVICES_REPLY: one device, with the queues on
 * it (all of them, or through the client socket the caller's own; a
 * domain without one of the caller's is not listed to it). The daemon
 * forgets a domain when its last queue goes.
 */
struct ipc_device_rec {
	uint64_t domain;        /* daemon-wide id, never reused (queue records name it) */
	uint32_t id_kind;       /* enum ipc_id_kind */
	uint32_t queues;
	char ident[IPC_IDENT_LEN];   /* "" when unverified */
	char pci[IPC_PCI_LEN];       /* "" when unknown */
	char name[IPC_NAME_LEN];     /* API-local name it was first registered under
				      * (the identity itself when unverified) */
	uint64_t mem_used;      /* device memory the processes listed hold on it */
	uint64_t mem_managed;   /* their managed (shared) memory, apart */
	uint64_t mem_total;     /* its memory as its driver reports it; 0: unknown */
	uint32_t mem_procs;     /* processes holding device memory on it */
	uint32_t mem_limited;   /* of them, those under a memory limit */
	uint64_t mem_evicted;   /* of theirs, evicted to the host (not in mem_used) */
};

struct ipc_devices_reply {
	uint32_t flags;         /* IPC_F_LAST */
	uint32_t count;         /* records following */
	/* struct ipc_device_rec rec[count]; */
};

#define IPC_DEVICES_PER_MSG \
	((IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(struct ipc_devices_reply)) / \
	 sizeof(struct ipc_device_rec))

/*
 * Device enforcement ([enforce] devices = audit | on; src/daemon/enforce.c,
 * src/bpf/gate.bpf.c). The daemon keeps, in an eBPF map only it writes, the
 * processes allowed to open accelerator device nodes, each by thread group
 * id and start time (so a reused pid is not allowed). A process is added
 * when it says IPC_HELLO with role IPC_ROLE_ENFORCE (the shims do so before
 * main when the file "<client socket>.enforce" exists, and again in a child
 * after fork) or with role IPC_ROLE_AGENT; the daemon takes the identity
 * from SO_PEERCRED and the peer's pidfd, never from the message, so a
 * process can register itself only. The reply (IPC_REPLY) is 0 once the
 * process is allowed, -ENODEV when enforcement is off, -ECANCELED when the
 * gate is not loaded. A registration lasts until the process executes
 * another program or ends.
 *
 * A process the bypass detector saw using an accelerator (src/daemon/
 * observe.c): by opening a device node or creating a context in a vendor
 * library. It is a bypass once it has used one for the grace period
 * without ever connecting as an agent. Through the client socket a caller
 * who is not root sees only its own uid's processes.
 */
enum ipc_bypass_state {
	IPC_BYPASS_PENDING = 0, /* seen, within the grace period */
	IPC_BYPASS_YES = 1,     /* used an XPU and never registered */
	IPC_BYPASS_REGISTERED = 2, /* scheduled: connected as an agent */
	IPC_BYPASS_DENIED = 3,  /* the device gate refused it ([enforce] devices = on) */
	IPC_BYPASS_AUDIT = 4,   /* the gate would have ([enforce] devices = audit) */
	IPC_BYPASS_HELD = 5,    /* held a gated device, unregistered, when the gate
				 * started: listed, not stopped */
	IPC_BYPASS_STATE_MAX,
};

struct ipc_bypass_rec {
	int32_t pid;
	uint32_t uid;
	uint64_t start_ns;      /* process start, CLOCK_BOOTTIME */
	uint64_t age_ns;        /* since it was first seen using an XPU */
	uint64_t cgroup_id;
	uint32_t uses;          /* what it used: bits of enum xbpf_use (src/bpf) */
	uint32_t state;         /* enum ipc_bypass_state */
	char comm[16];
	char what[48];          /* the first use: "renderD128", "libcuda.so.1:cuInit" */
	char cgroup[128];       /* cgroup v2 path; "" unknown */
	uint64_t denied;        /* its opens the gate refused (or, audit, would have) */
};

struct ipc_bypass_reply {
	uint32_t flags;         /* IPC_F_LAST */
	uint32_t count;         /* records following */
	/* struct ipc_bypass_rec rec[count]; */
};

#define IPC_BYPASS_PER_MSG \
	((IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(struct ipc_bypass_reply)) / \
	 sizeof(struct ipc_bypass_rec))

/*
 * Heat maps: latency over time, in windows (columns) of `window_ns` and
 * log2 buckets (IPC_HEAT_BUCKETS: < 1 us, then [2^(k-1), 2^k) us for k =
 * 1..17 with the last of them ending at 100 ms, then >= 100 ms), counted
 * by the daemon in rings of its last [observe] heatmap_seconds:
 * - IPC_HEAT_CPU: run-queue latency of every task on the node (how long
 *   a runnable thread waited for a CPU), one row per CPU (eBPF);
 * - IPC_HEAT_PID: that of the threads of one registered process (`id`),
 *   one row;
 * - IPC_HEAT_QUEUE: the task latency (ready to idle) of one XQueue (`id`),
 *   one row, with its suspensions and resumptions (IPC_HEAT_MARK);
 * - IPC_HEAT_QUEUES: every queue the asker may see, one row each.
 * The reply is a series of IPC_HEATMAP_REPLY chunks, each a struct
 * ipc_heat_reply and `count` records of its `section`: IPC_HEAT_META (one,
 * first), IPC_HEAT_ROW, IPC_HEAT_CELL (non-zero counts only), IPC_HEAT_MARK,
 * and for IPC_HEAT_CPU the hot spots (IPC_HEAT_HOT, IPC_HEAT_HOT_TASK):
 * CPUs whose windows reached `threshold_ns` for at least `hot_windows`
 * consecutive windows, with the tasks that ran there meanwhile and the
 * registered processes whose threads waited there. Columns count from the
 * oldest; the last ends `end_age_ns` before the reply was made.
 */
#define IPC_HEAT_BUCKETS 19u
#define IPC_HEAT_TOP_US 100000u         /* the last bucket: >= 100 ms */

/* The bucket of a latency of @ns (as the daemon and the eBPF programs count). */
static inline uint32_t ipc_heat_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint32_t k = 0;

	if (us >= IPC_HEAT_TOP_US)
		return IPC_HEAT_BUCKETS - 1;
	for (; us; us >>= 1)
		k++;
	return k;
}

enum ipc_heat_kind {
	IPC_HEAT_CPU = 1,
	IPC_HEAT_PID = 2,
	IPC_HEAT_QUEUE = 3,
	IPC_HEAT_QUEUES = 4,
};

enum ipc_heat_section {
	IPC_HEAT_META = 1,      /* struct ipc_heat_meta */
	IPC_HEAT_ROW = 2,       /* struct ipc_heat_row */
	IPC_HEAT_CELL = 3,      /* struct ipc_heat_cell */
	IPC_HEAT_MARK = 4,      /* struct ipc_heat_cell: a = suspensions, b = resumptions */
	IPC_HEAT_HOT = 5,       /* struct ipc_heat_hot */
	IPC_HEAT_HOT_TASK = 6,  /* struct ipc_heat_task */
};

struct ipc_heatmap {
	uint32_t kind;          /* enum ipc_heat_kind */
	uint32_t max_cols;      /* 0: none; else window_ns grows (a multiple of
				 * the daemon's) until the span fits */
	uint64_t id;            /* pid, or queue id */
	uint64_t window_ns;     /* per column; 0: the daemon's; rounded up to a
				 * multiple of it */
	uint64_t last_ns;       /* span; 0: all it keeps */
	uint64_t threshold_ns;  /* of the hot spots; 0: 10 ms */
	uint32_t hot_windows;   /* consecutive windows; 0: 3 */
	uint32_t pad;
};

struct ipc_heat_reply {
	uint32_t flags;         /* IPC_F_LAST */
	uint16_t section;       /* enum ipc_heat_section */
	uint16_t count;         /* records following */
};

struct ipc_heat_meta {
	uint32_t kind;
	uint32_t nrows;
	uint32_t ncols;
	uint32_t hot_windows;
	uint64_t window_ns;     /* per column */
	uint64_t base_ns;       /* the daemon's window */
	uint64_t end_age_ns;    /* the last column ended so long ago */
	uint64_t kept_ns;       /* what the rings hold at most */
	uint64_t threshold_ns;
	uint64_t events;        /* sum of the cells */
	uint64_t lost;          /* events counted that no ring kept (full) */
	uint64_t memory_bytes;  /* of every heat ring of the daemon */
};

struct ipc_heat_row {
	uint32_t row;
	uint32_t seen;          /* queues: tasks the daemon counted since the
				 * queue registered (its task latency histogram;
				 * the cells add up to it while the span covers
				 * the queue's life); else 0 */
	uint64_t id;            /* CPU, pid, or queue id */
	int32_t pid;            /* queue's process; or the process; else 0 */
	uint32_t uid;
	char comm[16];
	char device[IPC_NAME_LEN]; /* queues: its device; "" */
};

struct ipc_heat_cell {
	uint32_t row;
	uint32_t col;
	uint32_t a;             /* IPC_HEAT_CELL: bucket; MARK: suspensions */
	uint32_t b;             /* IPC_HEAT_CELL: count; MARK: resumptions */
};

struct ipc_heat_hot {
	uint32_t row;           /* the CPU's row */
	uint32_t first_col;     /* where the run of hot windows starts */
	uint32_t ncols;         /* its length in columns */
	uint32_t top_bucket;    /* highest bucket reached */
};

struct ipc_heat_task {
	uint32_t hot;           /* index of its IPC_HEAT_HOT record */
	uint32_t waited;        /* 1: a registered process whose threads waited
				 * there; 0: a task that ran there */
	int32_t pid;            /* tgid */
	uint32_t share_pm;      /* ran: its share of the CPU's time then, per
				 * mille; waited: its threads' waits there then */
	char comm[16];
};

#define IPC_HEAT_PER_MSG(rec) \
	((IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(struct ipc_heat_reply)) / sizeof(rec))

struct ipc_policy {
	char name[IPC_POLICY_LEN]; /* built-in name or absolute path of a .so */
};

#define IPC_REASON_LEN 192u

struct ipc_policy_reply {
	int32_t status;
	uint32_t pad;
	char name[IPC_POLICY_LEN];     /* the policy in use */
	char error[IPC_REASON_LEN];    /* why a switch was refused; "" */
};

struct ipc_status_reply {
	uint32_t version;
	uint32_t clients;
	uint32_t queues;
	uint32_t ready;
	uint64_t uptime_ns;
	uint64_t decisions;
	uint64_t events;
	uint64_t cpu_ns;        /* daemon CPU time used */
	char policy[IPC_POLICY_LEN];
	uint32_t unscheduled;   /* queues refused for want of a slot, running unscheduled */
	uint32_t max_queues_per_client;
	uint32_t reloads;       /* reloads (SIGHUP) handled */
	int32_t reload_status;  /* the last one: 0 or a negative errno */
	uint64_t reload_age_ns; /* time since the last one; 0: none */
	uint32_t guard_pct;     /* starvation guard: share of a period; 0: off */
	uint32_t guard_period_ms;
	uint64_t refused;       /* connections closed for want of descriptors */
	char reload_error[IPC_REASON_LEN]; /* why the last reload failed; "" */
	uint32_t enforce_mode;  /* [enforce] devices: 0 off, 1 audit, 2 on */
	int32_t enforce_status; /* 0: the gate runs (or off); else why not (-errno) */
	uint32_t enforce_closed; /* fail = closed */
	uint32_t enforce_listed; /* processes it refused (or would), listed now */
	char enforce_hook[16];  /* "lsm/file_open", "cgroup/dev"; "" not running */
};

struct ipc_text_reply {
	uint32_t flags;         /* IPC_F_LAST */
	uint32_t len;           /* bytes of text following, no NUL */
};

/* --- shared memory ------------------------------------------------------ */

/* Slot states (daemon-written `state`). */
enum ipc_slot_state { IPC_SLOT_FREE = 0, IPC_SLOT_USED = 1 };

/* Client status (client-written `status`). */
enum ipc_status { IPC_ST_IDLE = 0, IPC_ST_READY = 1 };

/*
 * Lazy doorbells. A queue's Ready and Idle matter to the scheduler only if
 * they could change a decision: when another queue could be suspended for
 * it, or is suspended, or it must be suspended itself. After each decision
 * the daemon raises `quiet` in the slots of the queues whose changes cannot
 * matter (the policy's quiet(), include/xsched/policy.h; by default only a
 * single running queue), and their clients then publish status changes
 * without ringing: an application alone on its device pays no system call
 * per task. Every decision of a device (of every device, for a policy
 * that decides across devices) first clears the quiet flags of its queues,
 * then reads the status of each queue that had one (besides the ringing
 * client's); a quiet queue's change cannot matter to other devices. A
 * client's status store
 * then `quiet` load, against the daemon's `quiet` store then status load,
 * is a Dekker pair (all sequentially consistent): either the decision saw
 * the new status, or the client sees `quiet` cleared and rings. A new queue
 * starts with `quiet` clear. Daemons that leave this field zero (it was
 * padding) simply get every doorbell.
 *
 * Lazy suspensions. A decision that suspends a queue the daemon last saw
 * idle (status not READY) rings no doorbell: the queue's run word is `run`,
 * read before every launch, so it launches nothing once it sees the store.
 * If it became ready meanwhile, it rings for that (no queue of a device is
 * quiet while the device is decided: the daemon clears the flags and reads
 * those queues' status first), and the daemon, seeing a queue ready that
 * was not told of its suspension, rings its client, which applies the
 * decision (xq_suspend(): the level's mechanism for what it may have
 * launched just before, statistics), as for any queue that becomes ready
 * just before a decision. A queue run again before it was told is never
 * rung for either decision. Clients need nothing for this: they apply
 * every slot whose decision_seq moved whenever they are rung.
 *
 * Drain. A queue suspended at Lv1 keeps running the commands already on
 * the device. A policy that hands the device over (bandwidth, fair) lets
 * the next queue run only once those are down to one (struct xs_pqueue
 * `inflight`), so that two processes' commands do not alternate on the
 * device, each switch costing a context change, and the next queue's
 * completion spacing does not include the other's work. The client keeps
 * `inflight` current at every launch and retirement and rings when, with
 * launches stopped, it drops from more than one to one or none. The race
 * of a drop before the client saw the decision is closed by another
 * Dekker pair: the client's `inflight` store then `run` load, against the
 * daemon's `run` store then `inflight` load; a daemon that finds a queue
 * it just stopped already drained decides again at once. By the same
 * pair, a queue the daemon finds stopped with nothing in flight launches
 * nothing until it runs again, so its counters are not read meanwhile.
 * Clients that leave the field zero (it was padding) never make anyone
 * wait.
 */

/*
 * One queue. 192 bytes; see the file comment for the writer rule. Every
 * store of the daemon into a slot (and into struct ipc_shm) is in
 * src/daemon/slot.c, each next to the paragraph above it pairs with.
 */
struct ipc_slot {
	/* daemon */
	_Atomic uint32_t state;
	_Atomic uint32_t run;         /* 0: suspended; 1: run; 1 + k: run with at
				       * most k commands in flight (contention-
				       * aware window: a queue of higher priority
				       * shares the device); agents that know only
				       * 0/1 read any non-zero as run */
	_Atomic int32_t floor_prio;   /* launches stop while a counted floor of its
				       * device is above this ("Run floors");
				       * IPC_FLOOR_EXEMPT: never */
	_Atomic uint32_t floor_mask;  /* bit k: page k of its device counts */
	_Atomic uint32_t decision_seq;/* bumped with every change of run or config */
	_Atomic int32_t level;        /* 0: keep; else the level to use */
	_Atomic int32_t threshold;    /* 0: keep */
	_Atomic int32_t batch;        /* 0: keep */
	_Atomic int64_t budget_ns;    /* 0: keep */
	_Atomic uint32_t hint_set;    /* bit k: hint[k] was set by xschedctl */
	_Atomic uint32_t quiet;       /* 1: its Ready and Idle need no doorbell */
	_Atomic int64_t hint[IPC_HINT_KEYS]; /* for the client to keep across restarts */
	_Atomic int32_t floor_raise;  /* the priority its Ready raises its uid's
				       * floor word to; IPC_FLOOR_OPEN: none */
	_Atomic uint16_t floor_dev;   /* its device's floor table (IPC_FLOOR) */
	_Atomic uint16_t floor_own;   /* its uid's page there; IPC_FLOOR_PAGES: none */
	/* client */
	_Atomic uint32_t status;      /* enum ipc_status */
	_Atomic uint32_t status_seq;  /* bumped with every status change */
	_Atomic int32_t waits_on;     /* slot this queue waits on, -1: none; a change
				       * is published by bumping status_seq */
	_Atomic uint32_t inflight;    /* commands the device may still run for it
				       * (xq_set_run_word); with launches stopped, a
				       * drop to <= 1 rings: see "Drain" above */
	_Atomic uint64_t ready_ns;    /* CLOCK_MONOTONIC when it last became ready */
	_Atomic uint64_t submitted;
	_Atomic uint64_t completed;
	_Atomic uint64_t preemptions;
	_Atomic uint64_t exec_ns;
	_Atomic uint64_t preempt_p99_ns;
	_Atomic uint64_t task_p99_ns;  /* Ready-to-Idle time */
	_Atomic uint32_t floored;     /* 1: work waits behind a floor ("Run floors");
				       * a change is published by bumping status_seq */
	uint32_t pad1[5];
};

/*
 * Run floors: decisions at memory speed (policies that opt in with
 * XS_POLICY_FLOOR, include/xsched/policy.h; [policy] floor in xschedd.conf).
 * Each device has a few floor pages, each one 64-bit word: the daemon's own
 * (page 0) and one per uid with queues there (pages 1..). A word holds a
 * priority in its low 32 bits (IPC_FLOOR_OPEN: none) and a sequence in its
 * high 32, bumped by every writer so that a compare-and-swap never mistakes
 * a new raise for an old one. An XQueue launches nothing while any counted
 * word (`floor_mask` of its slot) of its device is above its `floor_prio`:
 * one load per page, no thread of its process woken.
 *
 * The daemon's word is the lowest priority among the ready queues it runs
 * there (none: OPEN), so a queue below it, idle, needs no `run` store when
 * a decision suspends it (a priority flip is one store, not one per slot):
 * it stops at its next launch by the floor, and rings (`floored`) so that
 * the daemon writes the decision then. A uid's word is raised by its own
 * queues: a queue becoming ready stores its status, bumps status_seq, then
 * raises its uid's word of its device to its `floor_raise` (the priority the
 * daemon assigned it: inheritance included), then rings; queues below stop
 * at their next launch, before the daemon has woken. The daemon confirms
 * with its decision and lowers the word (compare-and-swap) once no queue
 * of that uid justifies it.
 *
 * Trust. A process can write any page it maps, so a floor page is writable
 * only where a wrong value harms no one else: the daemon's page is sealed
 * (F_SEAL_FUTURE_WRITE) before it is passed, so clients can only map it
 * read-only; a uid's page is owned by that uid, mode 0644, and passed
 * read-only to the processes of other uids, which the kernel then refuses
 * to reopen or map for writing. A word that no queue of its uid justifies
 * (a queue of that uid whose `floor_raise` reaches the value, ready in the
 * daemon's view or in its slot, or whose status_seq moved since the last
 * look) is a scribble: the daemon withdraws the page at once (clears its
 * bit in every slot of the device, so nothing reads it any more; the uid
 * gets no page on that device again), rings the queues it held, and logs
 * it once. The daemon looks at a device's words at every decision of the
 * device, and a queue stopped by a floor rings (`floored`, whatever its
 * quiet flag), so a scribble holds another uid's queue at most one daemon
 * reaction. Root and CAP_DAC_OVERRIDE can write every page: they are
 * trusted, as they can stop any process anyway. A client can always ignore
 * the floors (and every gate): it only forgoes being scheduled.
 *
 * A uid's page goes with that uid's last queue on the device (its index
 * may then carry another uid's page: IPC_FLOOR sends it again, and the
 * agent unmaps the page it replaces once no check still reads it).
 *
 * Fail-open: a queue stopped by a floor counts as held ("Liveness"): a
 * silent daemon's floors are ignored after the timeout, as its run words;
 * a disconnection unmaps the pages. A new daemon sends new pages.
 *
 * IPC_FLOOR carries one page: the agent maps it (read-write only when
 * `writable`) as page `page` of its floor table `table`, which the daemon
 * assigns to the device per client (`floor_dev` of the slots); a page the
 * agent cannot map makes it disconnect (the daemon relies on every counted
 * page being read).
 */
#define IPC_FLOOR_DEVICES 8u     /* floor tables per client: devices */
#define IPC_FLOOR_PAGES 8u       /* pages per device: the daemon's, 7 uids */
#define IPC_FLOOR_OPEN INT32_MIN /* a word with no floor */
#define IPC_FLOOR_EXEMPT INT32_MAX /* a floor_prio that nothing stops */
#define IPC_FLOOR_MAGIC 0x31524c46u /* "FLR1" */

struct ipc_floor_page {
	_Atomic uint64_t word;        /* (sequence << 32) | (uint32_t)priority */
	uint32_t magic;               /* IPC_FLOOR_MAGIC */
	uint32_t uid;                 /* whose page; UINT32_MAX: the daemon's */
	uint64_t domain;              /* its device (struct ipc_device_rec) */
};

struct ipc_floor {
	uint64_t domain;
	uint32_t table;         /* < IPC_FLOOR_DEVICES */
	uint32_t page;          /* < IPC_FLOOR_PAGES */
	uint32_t writable;      /* 1: the client's own uid's page */
	uint32_t pad;
};

/* The priority in a floor word. */
static inline int32_t ipc_floor_prio(uint64_t word)
{
	return (int32_t)(uint32_t)word;
}

/* @word with @prio and the next sequence. */
static inline uint64_t ipc_floor_next(uint64_t word, int32_t prio)
{
	return ((word >> 32) + 1) << 32 | (uint32_t)prio;
}

/*
 * Liveness. A daemon that is stopped or stuck neither rings nor decides,
 * so a queue it suspended would stay suspended for good, its run word (the
 * slot's `run`, read by the XQueue before each launch) closed. While it
 * holds any queue (suspended or capped), the daemon bumps every client's
 * `heartbeat` every `heartbeat_ms` from its timer. An agent with a queue
 * held (suspended, capped or gated; a queue that becomes ready behind a
 * cleared run word it was not told of wakes its agent to watch) that sees the
 * word still for its
 * timeout (XSCHED_DAEMON_TIMEOUT_MS, default 1 s, at least twice the
 * period) runs its queues as if disconnected, gates open, and applies the
 * slots' decisions again once the word moves. No system call on either
 * side beyond the daemon's timer, and no beat when nothing is held.
 * Daemons that leave `heartbeat_ms` zero (both fields were padding) are
 * never taken for hung. The bump is a release, the agent's load an
 * acquire: an agent that saw a beat sees the decisions written before it.
 */
#define IPC_HEARTBEAT_MS 250u

/*
 * Device memory. The process counts what it holds on each device itself,
 * at every allocation and free (src/shim/common/shim_mem.h), and keeps the
 * figures in its records after the slots (`mem_offset`, `nmem` of them),
 * whose every field is the client's: a record is written once with its
 * device, then `state` set with a release; the counters are stores the
 * daemon reads when it lists (no message per allocation). A process uses
 * at most `nmem` devices per shim; more are counted in-process only.
 *
 * The limit a process allocates under is per device, and the process
 * applies it (refusing an allocation before the driver sees it): its own
 * (XSCHED_MEMORY_LIMIT), capped by `mem_ceiling`, its uid's memory_limit in
 * the daemon's configuration; or `mem_limit`, set with xschedctl, which
 * replaces both (the daemon checked the setter against the ceiling). The
 * daemon stores them, then bumps `mem_seq` with a release, then rings; the
 * agent acquires `mem_seq` and applies them. Each record says the limit in
 * effect (`limit`).
 */
#define IPC_MEM_DEVICES 16u
#define IPC_MEM_F_PREEMPT 0x1u  /* memory preemption: ask with IPC_MEM_NEED */

struct ipc_mem {
	_Atomic uint32_t state;       /* 0: unused; 1: device fields written; other
				       * values: being written (the client's own) */
	uint32_t id_kind;             /* enum ipc_id_kind */
	char device[IPC_NAME_LEN];    /* API-local name, e.g. "cuda:0" */
	char backend[16];             /* "cuda", "opencl", "level_zero" */
	char ident[IPC_IDENT_LEN];    /* as struct ipc_register */
	char pci[IPC_PCI_LEN];
	_Atomic uint64_t used;        /* device memory held, bytes */
	_Atomic uint64_t managed;     /* managed / shared memory held, apart */
	_Atomic uint64_t peak;        /* highest `used` */
	_Atomic uint64_t refused;     /* allocations refused at the limit */
	_Atomic uint64_t limit;       /* the limit in effect; 0: none */
	_Atomic uint64_t total;       /* the device's memory as the driver said; 0: not asked */
	_Atomic uint64_t evictable;   /* of `used`, what memory preemption can evict */
	_Atomic uint64_t evicted;     /* bytes evicted now (on the host, not the device) */
	uint64_t pad[1];
};

struct ipc_shm {
	uint64_t magic;               /* IPC_SHM_MAGIC */
	uint32_t version;             /* IPC_VERSION */
	uint32_t size;
	uint32_t nslots;
	uint32_t heartbeat_ms;        /* daemon, before passing the memfd: period
				       * of `heartbeat`; 0: none */
	uint64_t client_id;
	_Atomic uint64_t heartbeat;   /* daemon: bumped every heartbeat_ms while
				       * it holds a queue ("Liveness" above) */
	uint32_t nmem;                /* daemon, before passing: memory records */
	uint32_t mem_offset;          /* ... at this offset from the start */
	_Atomic uint32_t mem_seq;     /* daemon: bumped after mem_ceiling or mem_limit */
	uint32_t mem_flags;           /* daemon, before passing: IPC_MEM_F_* */
	_Atomic uint64_t mem_ceiling; /* daemon: cap of the process's own limit; 0: none */
	_Atomic uint64_t mem_limit;   /* daemon: limit set with xschedctl; 0: none */
	uint32_t mem_wait_ms;         /* daemon, before passing: how long it may take
				       * to answer an IPC_MEM_NEED */
	uint8_t pad1[52];
	struct ipc_slot slot[];
};

_Static_assert(sizeof(struct ipc_hdr) == 16, "ipc ABI");
_Static_assert(sizeof(struct ipc_hello) == 24, "ipc ABI");
_Static_assert(sizeof(struct ipc_hello_reply) == 16, "ipc ABI");
_Static_assert(sizeof(struct ipc_register) == 192, "ipc ABI");
_Static_assert(sizeof(struct ipc_registered) == 56, "ipc ABI");
_Static_assert(sizeof(struct ipc_set_hint) == 16, "ipc ABI");
_Static_assert(sizeof(struct ipc_reply) == 16, "ipc ABI");
_Static_assert(sizeof(struct ipc_ctl_set) == 24, "ipc ABI");
_Static_assert(sizeof(struct ipc_queue_rec) == 480, "ipc ABI");
_Static_assert(sizeof(struct ipc_queue_level) == 136, "ipc ABI");
_Static_assert(sizeof(struct ipc_device_rec) == 152, "ipc ABI");
_Static_assert(sizeof(struct ipc_devices_reply) == 8, "ipc ABI");
_Static_assert(sizeof(struct ipc_bypass_rec) == 240, "ipc ABI");
_Static_assert(sizeof(struct ipc_bypass_reply) == 8, "ipc ABI");
_Static_assert(sizeof(struct ipc_policy) == 128, "ipc ABI");
_Static_assert(sizeof(struct ipc_policy_reply) == 328, "ipc ABI");
_Static_assert(sizeof(struct ipc_status_reply) == 440, "ipc ABI");
_Static_assert(sizeof(struct ipc_slot) == 192, "ipc ABI");
_Static_assert(sizeof(struct ipc_floor) == 24 && sizeof(struct ipc_floor_page) == 24, "ipc ABI");
_Static_assert(IPC_FLOOR_PAGES <= 32 && IPC_FLOOR_DEVICES < 65536, "floor_mask, floor_dev");
_Static_assert(sizeof(struct ipc_shm) == 128, "ipc ABI");
_Static_assert(sizeof(struct ipc_mem) == 192, "ipc ABI");
_Static_assert(sizeof(struct ipc_mem_need) == 16 && sizeof(struct ipc_mem_evict) == 16 &&
	       sizeof(struct ipc_mem_evicted) == 8 && sizeof(struct ipc_mem_restored) == 8,
	       "ipc ABI");
_Static_assert(offsetof(struct ipc_shm, heartbeat_ms) == 20, "ipc ABI");
_Static_assert(offsetof(struct ipc_shm, heartbeat) == 32, "ipc ABI");
_Static_assert(offsetof(struct ipc_shm, mem_ceiling) == 56, "ipc ABI");
_Static_assert(IPC_LIST_PER_MSG >= 8, "list chunks too small");
_Static_assert(IPC_DEVICES_PER_MSG >= 16, "device chunks too small");
_Static_assert(IPC_BYPASS_PER_MSG >= 16, "bypass chunks too small");
_Static_assert(sizeof(struct ipc_heatmap) == 48 && sizeof(struct ipc_heat_reply) == 8 &&
	       sizeof(struct ipc_heat_meta) == 80 && sizeof(struct ipc_heat_row) == 72 &&
	       sizeof(struct ipc_heat_cell) == 16 && sizeof(struct ipc_heat_hot) == 16 &&
	       sizeof(struct ipc_heat_task) == 32, "ipc ABI");
_Static_assert(IPC_IDENT_LEN == 40 && IPC_PCI_LEN == 24, "base/devid.h text sizes");

#endif
