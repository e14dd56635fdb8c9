// SPDX-License-Identifier: GPL-2.0
/*
 * The device gate's eBPF programs: accelerator device nodes open only for
 * processes xsched schedules ([enforce] devices, src/daemon/enforce.c).
 *
 *  - the gate: an open of a character device whose number is in `devs`
 *    by a process that is in scope, not exempt and not in `allowed` is
 *    refused with EPERM (mode on) or only counted and reported (audit).
 *    Two hooks run the same decision, and the loader attaches one: the
 *    BPF LSM's file_open where the kernel can attach LSM programs (they
 *    need BPF trampolines), else the cgroup v2 device hook at the root
 *    cgroup (every process's device permission check: open, and also
 *    access(2), of a device node; mknod is let through). Both run before
 *    the driver's open. Every other open costs a load of the inode's mode
 *    (LSM) or nothing (cgroup: only device nodes reach it), then one or two
 *    hash lookups for a device that is not gated.
 *  - tp_btf/sched_process_exec and sched_process_exit: a process that
 *    executes another program, or ends, leaves `allowed`: a registration
 *    is for one process image, and is never inherited (a child is another
 *    thread group, absent from the map until it registers itself).
 *
 * A process is keyed by its thread group id and its start time in the
 * clock ticks of /proc/PID/stat (what the daemon can read of a peer), so
 * a reused pid is a different process. Only the daemon writes the maps
 * (root; pinned maps are root's files in bpffs).
 */
#include "vmlinux.h"
#include "xbpf_abi.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define S_IFMT 00170000
#define S_IFCHR 0020000
#define EPERM 1
#define MINORBITS 20
/* <linux/bpf.h>'s device-hook values (anonymous enums: not in vmlinux.h) */
#define DEVCG_ACC_READ (1u << 1)
#define DEVCG_ACC_WRITE (1u << 2)
#define DEVCG_DEV_CHAR (1u << 1)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xbpf_gate_conf);
} gate_conf SEC(".maps");

/* XBPF_GATE_DEV(major, minor or ANY) -> 1 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} gate_devs SEC(".maps");

/* tgid -> start time in clock ticks: registered with the daemon */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} gate_allowed SEC(".maps");

/* cgroup v2 id -> enum xbpf_gate_cg */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __u32);
} gate_cgroups SEC(".maps");

/* exempt executables */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct xbpf_gate_exe);
	__type(value, __u32);
} gate_exes SEC(".maps");

/* tgid -> start ticks of the process last reported (one event a process) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} gate_told SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct xbpf_gate_who);
	__type(value, struct xbpf_gate_count);
} gate_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} gate_events SEC(".maps");

/* Events lost for want of ring buffer space. */
__u64 gate_lost;

/* Whether the current process is exempt, in scope, or neither. */
static __always_inline bool gate_in_scope(const struct xbpf_gate_conf *c,
					  struct task_struct *task, __u32 uid)
{
	struct xbpf_gate_exe exe = {};
	struct file *exe_file;
	__u32 kind = 0, i, *k;

	if (c->has_cgroups) {
		/* Root first: the deepest cgroup listed decides. */
		for (i = 0; i < XBPF_GATE_CG_DEPTH; i++) {
			__u64 id = bpf_get_current_ancestor_cgroup_id(i);

			if (!id)
				break;
			k = bpf_map_lookup_elem(&gate_cgroups, &id);
			if (k)
				kind = *k;
		}
	}
	if (kind == XBPF_GATE_CG_EXEMPT || (c->exempt_root && uid == 0))
		return false;
	exe_file = BPF_CORE_READ(task, mm, exe_file);
	if (!exe_file)
		return false;              /* a kernel thread */
	exe.ino = BPF_CORE_READ(exe_file, f_inode, i_ino);
	exe.dev = BPF_CORE_READ(exe_file, f_inode, i_sb, s_dev);
	if (bpf_map_lookup_elem(&gate_exes, &exe))
		return false;
	if (c->scope_all || kind == XBPF_GATE_CG_SCOPE)
		return true;
	for (i = 0; i < XBPF_GATE_UID_RANGES && i < c->nuid; i++)
		if (uid >= c->uid_lo[i] && uid <= c->uid_hi[i])
			return true;
	return false;
}

/* Counts the refusal and reports it once per process. */
static __always_inline void gate_report(const struct xbpf_gate_conf *c, const unsigned char *name,
					__u32 tgid, __u64 ticks, __u64 start, __u32 uid,
					__u32 major, __u32 minor)
{
	struct xbpf_gate_who who = { .uid = uid };
	struct xbpf_gate_count *n, zero = {};
	struct xbpf_gate_event *e;
	__u64 *told;

	bpf_get_current_comm(who.comm, sizeof(who.comm));
	n = bpf_map_lookup_elem(&gate_counts, &who);
	if (!n) {
		bpf_map_update_elem(&gate_counts, &who, &zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&gate_counts, &who);
	}
	if (n && c->mode == XBPF_GATE_ON)
		__sync_fetch_and_add(&n->denied, 1);
	else if (n)
		__sync_fetch_and_add(&n->audited, 1);
	told = bpf_map_lookup_elem(&gate_told, &tgid);
	if (told && *told == ticks)
		return;
	bpf_map_update_elem(&gate_told, &tgid, &ticks, BPF_ANY);
	e = bpf_ringbuf_reserve(&gate_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&gate_lost, 1);
		return;
	}
	e->pid = tgid;
	e->uid = uid;
	e->start_ns = start;
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->major = major;
	e->minor = minor;
	e->mode = c->mode;
	e->pad = 0;
	__builtin_memcpy(e->comm, who.comm, sizeof(e->comm));
	e->name[0] = '\0';
	if (name)
		bpf_probe_read_kernel_str(e->name, sizeof(e->name), name);
	bpf_ringbuf_submit(e, 0);
}

/*
 * The decision for an open of character device @major:@minor by the
 * current process: 0 (let it through) or -EPERM. @name: the node's name
 * (a kernel string) when the hook knows it, else NULL.
 */
static __always_inline int gate_decide(__u32 major, __u32 minor, const unsigned char *name)
{
	struct xbpf_gate_conf *c;
	struct task_struct *task;
	__u32 zero = 0, tgid, uid;
	__u64 key, start, ticks, *reg;

	key = XBPF_GATE_DEV(major, minor);
	if (!bpf_map_lookup_elem(&gate_devs, &key)) {
		key = XBPF_GATE_DEV(major, XBPF_GATE_ANY_MINOR);
		if (!bpf_map_lookup_elem(&gate_devs, &key))
			return 0;
	}
	c = bpf_map_lookup_elem(&gate_conf, &zero);
	if (!c || c->mode == XBPF_GATE_OFF || !c->ns_per_tick)
		return 0;
	/* fail = open: a daemon that stopped beating (hung) refuses nothing. */
	if (c->silent_ns && bpf_ktime_get_ns() - c->alive_ns > c->silent_ns)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (tgid == c->daemon_tgid)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	start = BPF_CORE_READ(task, group_leader, start_boottime);
	ticks = start / c->ns_per_tick;
	reg = bpf_map_lookup_elem(&gate_allowed, &tgid);
	if (reg && *reg == ticks)
		return 0;
	uid = (__u32)bpf_get_current_uid_gid();
	if (!gate_in_scope(c, task, uid))
		return 0;
	gate_report(c, name, tgid, ticks, start, uid, major, minor);
	return c->mode == XBPF_GATE_ON ? -EPERM : 0;
}

SEC("lsm/file_open")
int BPF_PROG(xbpf_gate_open, struct file *file, int ret)
{
	dev_t rdev;

	if (ret)
		return ret;
	if ((BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) != S_IFCHR)
		return 0;
	rdev = BPF_CORE_READ(file, f_inode, i_rdev);
	return gate_decide(rdev >> MINORBITS, rdev & ((1u << MINORBITS) - 1),
			   BPF_CORE_READ(file, f_path.dentry, d_name.name));
}

/* The cgroup device hook: 1 lets the access through, 0 refuses (EPERM). */
SEC("cgroup/dev")
int xbpf_gate_dev(struct bpf_cgroup_dev_ctx *ctx)
{
	__u32 type = ctx->access_type & 0xffff, access = ctx->access_type >> 16;

	if (type != DEVCG_DEV_CHAR || !(access & (DEVCG_ACC_READ | DEVCG_ACC_WRITE)))
		return 1;
	return gate_decide(ctx->major, ctx->minor, NULL) == 0;
}

/* A new program image: the registration was the old one's. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(xbpf_gate_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	bpf_map_delete_elem(&gate_allowed, &tgid);
	return 0;
}

/* The last thread of a process: its pid may be given to another. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(xbpf_gate_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	bpf_map_delete_elem(&gate_allowed, &tgid);
	bpf_map_delete_elem(&gate_told, &tgid);
	return 0;
}
