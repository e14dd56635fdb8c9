/*
 * The simulated XPU, process-local API.
 *
 * One device (a file in /dev/shm, see sim_abi.h) is shared by every process
 * that opens it. The device has one engine that executes one command at a
 * time; between hardware queues it arbitrates round-robin per command (the
 * behaviour that doubles tail latency on real XPUs) or first-come-first-
 * served. A command is an exact busy-spin of its duration against
 * CLOCK_MONOTONIC, optionally preceded by a real data operation (copy,
 * memset, a host function standing for a kernel's computation).
 *
 * Commands execute on an executor thread inside the process that launched
 * them, so data operations see that process's memory; the engine (the
 * "turn") passes between processes through shared memory, so one command
 * runs at a time node-wide. All three preemption levels exist natively:
 * Lv2 stalls (or flushes) a queue's dequeue, Lv3 interrupts the running
 * command at its next check, keeps the remaining time and resumes it later.
 *
 * Functions return 0 or a negative errno; they never exit the process.
 */
#ifndef XS_SIM_H
#define XS_SIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_dev;
struct sim_hwq;

/* Native arbitration between hardware queues (values are ABI). */
enum { SIM_ARB_RR = 0, SIM_ARB_FCFS = 1 };

enum sim_cmd_kind {
	SIM_CMD_KERNEL = 1,  /* optional fn(arg), then spin the rest of duration */
	SIM_CMD_COPY,        /* memcpy(dst, src, size), then spin */
	SIM_CMD_MEMSET,      /* memset(dst, value, size), then spin */
	SIM_CMD_EVENT,       /* *timestamp = device time; no duration */
	SIM_CMD_HOLD,        /* spin until *hold != 0: holds the engine (tests) */
	SIM_CMD_WAIT,        /* the queue waits (not holding the engine) until queue
			      * wait_hwq of the same device finished wait_seq */
};

/*
 * Inside a KERNEL command's fn: the CLOCK_MONOTONIC time at which the
 * device started the command (its duration counts from there, whenever
 * fn itself gets the CPU). 0 on any other thread.
 */
uint64_t sim_cmd_started_ns(void);

/* A command descriptor; copied by sim_hwq_launch(). */
struct sim_cmd {
	uint32_t kind;
	uint32_t pad;
	uint64_t duration_ns;
	int (*fn)(void *arg);        /* KERNEL: runs first; < 0 fails the command */
	void *arg;
	void *dst;                   /* COPY, MEMSET */
	const void *src;             /* COPY */
	size_t size;                 /* COPY, MEMSET */
	int value;                   /* MEMSET */
	uint64_t *timestamp;         /* EVENT */
	const _Atomic uint32_t *hold;/* HOLD */
	uint32_t wait_hwq;           /* WAIT: index of the queue (sim_hwq_index()) */
	uint64_t wait_seq;           /* WAIT: its command to wait for */
};

/* Device memory of a device created without a size of its own: 1 GiB. */
#define SIM_MEM_DEFAULT (1ull << 30)

struct sim_dev_opts {
	uint32_t arbitration;  /* SIM_ARB_RR or SIM_ARB_FCFS */
	uint32_t level_max;    /* 1..3 */
	bool lv2_flush;        /* Lv2 discards launched commands instead of stalling */
	uint64_t mem_capacity; /* device memory in bytes, node-wide; 0: SIM_MEM_DEFAULT */
};

struct sim_dev_info {
	uint32_t arbitration;
	uint32_t level_max;
	bool lv2_flush;
	uint64_t busy_ns;
	uint64_t commands;
	uint64_t mem_capacity;
	uint64_t mem_used;     /* node-wide, dead processes' memory included until reaped */
};

struct sim_hwq_info {
	uint32_t index;
	uint64_t submitted;
	uint64_t done;
	uint64_t busy_ns;
	uint64_t executed;
	uint64_t interrupts;
	bool running;
};

/* Flags of sim_hwq_wait(). */
#define SIM_WAIT_PREEMPTIBLE 0x1u /* -EAGAIN while stalled or interrupted */

/*
 * Defaults from the environment: XSCHED_SIM_ARBITRATION=rr|fcfs,
 * XSCHED_SIM_LEVEL=1..3, XSCHED_SIM_LV2=stall|flush,
 * XSCHED_SIM_DEVICE_MEMORY=<size> (base/size.h: "64M", "2GiB"; above 0).
 * -EINVAL if one is malformed, said once per process at XLOG_ERROR.
 */
int sim_dev_opts_from_env(struct sim_dev_opts *opts);

/* Default device name: $XSCHED_SIM_DEVICE, else "xsched-sim0". */
const char *sim_dev_default_name(void);

/*
 * Identity of the device named @name (sim_ident.c): a UUID (16 bytes,
 * never all zero) and a PCI bus id (domain and bus; device and function
 * are 0), both derived from the name and the same in every process.
 */
void sim_dev_uuid(const char *name, uint8_t out[16]);
void sim_dev_pci(const char *name, uint32_t *domain, uint32_t *bus);

/* What the simulated drivers report of it, $XSCHED_SIM_IDENTITY (tests of
 * the shims' fallbacks): "pci" the bus id only, "none" neither, anything
 * else (default) both. The xsched API's sim backend always knows both. */
enum { SIM_ID_UUID = 0, SIM_ID_PCI = 1, SIM_ID_NONE = 2 };
int sim_dev_identity(void);

/*
 * Opens (creating on first use, with @opts; NULL: from the environment)
 * the device @name ([A-Za-z0-9_.-], at most 64 characters) in
 * $XSCHED_SIM_DIR (default /dev/shm). A process holds one reference-counted
 * handle per device. Errors: -EINVAL (name), -EPROTO (a file of another
 * layout version is there), -ENOSPC (no free process slot), errno of file
 * calls.
 */
int sim_dev_open(const char *name, const struct sim_dev_opts *opts,
		 struct sim_dev **out);
void sim_dev_close(struct sim_dev *dev);

/* Removes device @name's file (tests). Processes still attached keep it. */
int sim_dev_unlink(const char *name);

void sim_dev_info_get(struct sim_dev *dev, struct sim_dev_info *out);

/*
 * Records the (hwq index, sequence number) of each command this process
 * starts into a ring of @cap entries (0 stops recording). Tests only.
 */
int sim_dev_trace_start(struct sim_dev *dev, size_t cap);
/* Copies up to @cap recorded starts; returns how many. */
size_t sim_dev_trace_read(struct sim_dev *dev, uint32_t *hwq, uint64_t *seq,
			  size_t cap);

/* Looks for processes that died attached and frees their slots. */
void sim_dev_reap(struct sim_dev *dev);

/*
 * Device memory, one capacity for every process attached to the device
 * (a real GPU's memory is the node's, not a process's). The simulated
 * drivers charge what they allocate as device memory here and uncharge it
 * when freed; a process's charge goes back to the node when it closes the
 * device or, killed, when a peer reaps its slot.
 *
 * sim_dev_mem_charge() charges @bytes to this process: 0, or -ENOMEM when
 * the node's memory is exhausted (after reaping dead peers once). Two
 * processes charging at once near the capacity may both be refused where
 * one would have fitted (each sees the other's tentative charge), never
 * both granted beyond it. Thread-safe.
 */
int sim_dev_mem_charge(struct sim_dev *dev, uint64_t bytes);
/* Gives back @bytes charged by this process. Thread-safe. */
void sim_dev_mem_uncharge(struct sim_dev *dev, uint64_t bytes);
/*
 * The device's capacity and what all processes hold (dead peers reaped
 * first, so their memory counts as free). Either output may be NULL.
 */
void sim_dev_mem_info(struct sim_dev *dev, uint64_t *capacity, uint64_t *used);

int sim_hwq_create(struct sim_dev *dev, struct sim_hwq **out);

/*
 * Destroys @hwq: commands not yet started are discarded, a running one is
 * awaited. Accepts NULL.
 */
void sim_hwq_destroy(struct sim_hwq *hwq);

struct sim_dev *sim_hwq_dev(struct sim_hwq *hwq);

/* The queue's index on its device, as named by a WAIT command. */
uint32_t sim_hwq_index(const struct sim_hwq *hwq);

/*
 * Launches a copy of @cmd; *@seq receives its sequence number on the queue
 * (1, 2, ...). Blocks while the queue's ring is full. Thread-safe.
 * Errors: -EINVAL (bad descriptor).
 */
int sim_hwq_launch(struct sim_hwq *hwq, const struct sim_cmd *cmd, uint64_t *seq);

/*
 * Waits until command @seq finished. Returns 0; the command's error or that
 * of an earlier command not yet reported (reported once); -ECANCELED if it
 * was flushed; -EAGAIN with SIM_WAIT_PREEMPTIBLE while the queue is stalled
 * or interrupted; -EINVAL if @seq was never launched.
 */
int sim_hwq_wait(struct sim_hwq *hwq, uint64_t seq, unsigned flags);

/* As sim_hwq_wait() for the last command launched (0 if none). */
int sim_hwq_wait_all(struct sim_hwq *hwq, unsigned flags);

/* Non-blocking wait: -EBUSY while command @seq has not finished. */
int sim_hwq_query(struct sim_hwq *hwq, uint64_t seq);

/* Device time command @seq executed, if still remembered (-ENOENT). */
int sim_hwq_cmd_time(struct sim_hwq *hwq, uint64_t seq, uint64_t *ns);

/*
 * Lv2: the device starts no further command of @hwq (in flush mode, it
 * discards them as flushed) until sim_hwq_unstall(). With @wait_quiet,
 * returns once no command of @hwq executes. -EOPNOTSUPP if the device's
 * level is below 2.
 */
int sim_hwq_stall(struct sim_hwq *hwq, bool wait_quiet);
int sim_hwq_unstall(struct sim_hwq *hwq);

/*
 * Lv3: also stops the running command at its next check, keeping its
 * remaining time; sim_hwq_restore() lets it continue. -EOPNOTSUPP below 3.
 */
int sim_hwq_interrupt(struct sim_hwq *hwq, bool wait_quiet);
int sim_hwq_restore(struct sim_hwq *hwq);

/* Waits until no command of @hwq executes on the device. */
void sim_hwq_wait_quiet(struct sim_hwq *hwq);

void sim_hwq_info_get(struct sim_hwq *hwq, struct sim_hwq_info *out);

#endif
