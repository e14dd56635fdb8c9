// SPDX-License-Identifier: GPL-2.0
/*
 * The bypass detector's eBPF programs: which processes on the node use an
 * accelerator, whatever way they reach it. Two kinds of once-per-process
 * events, each sent to user space (the daemon, src/daemon/observe.c) the
 * first time a process shows it:
 *
 *  - a successful open of an accelerator device node: a character device
 *    named nvidia*, renderD* or kfd, or any in a directory named accel.
 *    Seen at fexit of vfs_open() where the kernel allows tracing programs,
 *    else at the exit of the open system calls (tp_btf/sys_exit, which runs
 *    at every system call's exit: the loader picks one, see bypass_load.c);
 *  - a call of a context-creating function of a vendor library, by uprobes
 *    the loader attaches (their cookie says which library and function).
 *    A uprobe hit costs microseconds, so only functions called a few times
 *    per process are probed, never per launch.
 *
 * A map of what each process was seen using keeps the events once per
 * process and kind, and lets sched_process_exit report the end of exactly
 * the processes that were reported. The map is LRU: a process evicted
 * from it is reported again, which the daemon merges.
 */
#include "vmlinux.h"
#include "xbpf_abi.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define S_IFMT 00170000
#define S_IFCHR 0020000

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* tgid -> enum xbpf_use bits already reported (64-bit: the atomics of
 * clang's default BPF target are 64-bit only). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

/* Events lost for want of ring buffer space (the daemon reports them). */
__u64 lost;

/*
 * Reports @use of the current process unless it was reported already.
 * @name: a kernel string (the device node's name), or NULL.
 */
static __always_inline void report(__u32 use, __u32 attach, const unsigned char *name)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;
	struct xbpf_use_event *e;
	__u64 *bits, first = use;

	bits = bpf_map_lookup_elem(&seen, &tgid);
	if (bits) {
		if (*bits & use)
			return;
		__sync_fetch_and_or(bits, use);
	} else {
		bpf_map_update_elem(&seen, &tgid, &first, BPF_ANY);
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return;
	}
	task = bpf_get_current_task_btf();
	e->type = XBPF_EV_USE;
	e->pid = tgid;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->use = use;
	e->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->attach = attach;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->name[0] = '\0';
	if (name)
		bpf_probe_read_kernel_str(e->name, sizeof(e->name), name);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline bool prefix(const char *s, const char *p, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] != p[i])
			return false;
	return true;
}

/* The enum xbpf_use bit of @file if it is an accelerator's node, else 0. */
static __always_inline void check_file(struct file *file)
{
	const unsigned char *name, *dir;
	struct dentry *dentry;
	char n[8] = {}, d[8] = {};
	umode_t mode;
	__u32 use = 0;

	if (!file)
		return;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	if ((mode & S_IFMT) != S_IFCHR)
		return;
	dentry = BPF_CORE_READ(file, f_path.dentry);
	name = BPF_CORE_READ(dentry, d_name.name);
	dir = BPF_CORE_READ(dentry, d_parent, d_name.name);
	if (bpf_probe_read_kernel_str(n, sizeof(n), name) < 0)
		return;
	bpf_probe_read_kernel_str(d, sizeof(d), dir);
	if (prefix(n, "nvidia", 6))
		use = XBPF_USE_NVIDIA;
	else if (prefix(n, "renderD", 7))
		use = XBPF_USE_DRI;
	else if (prefix(n, "kfd", 4))
		use = XBPF_USE_KFD;
	else if (prefix(d, "accel", 6))
		use = XBPF_USE_ACCEL;
	if (use)
		report(use, 0, name);
}

SEC("fexit/vfs_open")
int BPF_PROG(xbpf_vfs_open, const struct path *path, struct file *file, int ret)
{
	if (ret == 0)
		check_file(file);
	return 0;
}

#if defined(__TARGET_ARCH_x86)
#define NR_OPEN 2
#define NR_OPENAT 257
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_OPEN -1
#define NR_OPENAT 56
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, syscallno)
#else
#error "bypass.bpf.c: syscall numbers of this architecture are not known"
#endif
#define NR_OPENAT2 437

SEC("tp_btf/sys_exit")
int BPF_PROG(xbpf_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct file **fds, *file = NULL;
	unsigned int max;
	long nr;

	if (ret < 0)
		return 0;
	nr = SYSCALL_NR(regs);
	if (nr != NR_OPENAT && nr != NR_OPEN && nr != NR_OPENAT2)
		return 0;
	task = bpf_get_current_task_btf();
	max = BPF_CORE_READ(task, files, fdt, max_fds);
	if ((unsigned long)ret >= max)
		return 0;
	fds = BPF_CORE_READ(task, files, fdt, fd);
	bpf_probe_read_kernel(&file, sizeof(file), &fds[ret]);
	check_file(file);
	return 0;
}

SEC("uprobe")
int xbpf_ctx_create(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);

	report(1u << (cookie & 0x1f), (__u32)(cookie >> 8), NULL);
	return 0;
}

/* The end of a reported process: its last thread's exit. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(xbpf_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct xbpf_use_event *e;

	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (!bpf_map_lookup_elem(&seen, &tgid))
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = XBPF_EV_EXIT;
	e->pid = tgid;
	e->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
