// SPDX-License-Identifier: GPL-2.0
/*
 * Run-queue latency of the processes the daemon watches (its registered
 * agents): the time each of their threads spends runnable but not running,
 * from a wakeup (sched_wakeup, sched_wakeup_new) or an involuntary switch
 * away (sched_switch with the task still runnable) to the switch that runs
 * it. It tells "the device was free, the CPU was not": a launcher thread
 * that waits for a CPU delays its commands whatever the scheduler decides.
 *
 * tp_btf programs only (BTF-typed raw tracepoints: cheap, and they load
 * where fentry cannot). Each runs at every wakeup or switch on the node
 * and returns after one hash lookup for processes not watched. All the
 * threads of a watched process are measured: the shim's application
 * threads and the xsched worker threads among them.
 */
#include "vmlinux.h"
#include "xbpf_abi.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* tgid -> 1: the processes measured (written by the loader). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} watch SEC(".maps");

/* tid -> when it became runnable. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u64);
} runnable SEC(".maps");

/* tgid -> its histogram. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct xbpf_rq_hist);
} hists SEC(".maps");

/* Kernels before 5.14 name the task state `state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool watched(__u32 tgid)
{
	return bpf_map_lookup_elem(&watch, &tgid) != NULL;
}

static __always_inline void mark(struct task_struct *t)
{
	__u32 tid = BPF_CORE_READ(t, pid);
	__u64 now;

	if (!watched(BPF_CORE_READ(t, tgid)))
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&runnable, &tid, &now, BPF_ANY);
}

static __always_inline unsigned log2_u64(__u64 v)
{
	unsigned r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(xbpf_wakeup, struct task_struct *p)
{
	mark(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(xbpf_wakeup_new, struct task_struct *p)
{
	mark(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(xbpf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct xbpf_rq_hist *h, zero = {};
	__u32 tid, tgid;
	__u64 *ts, delta;
	long state;
	unsigned k;

	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___old *)prev, state);
	if (state == 0)                    /* TASK_RUNNING: preempted, still runnable */
		mark(prev);
	tid = BPF_CORE_READ(next, pid);
	ts = bpf_map_lookup_elem(&runnable, &tid);
	if (!ts)
		return 0;
	delta = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&runnable, &tid);
	tgid = BPF_CORE_READ(next, tgid);
	h = bpf_map_lookup_elem(&hists, &tgid);
	if (!h) {
		if (!watched(tgid))
			return 0;
		bpf_map_update_elem(&hists, &tgid, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &tgid);
		if (!h)
			return 0;
	}
	k = delta ? log2_u64(delta) : 0;
	if (k >= XBPF_RQ_SLOTS)
		k = XBPF_RQ_SLOTS - 1;
	__sync_fetch_and_add(&h->slot[k], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum_ns, delta);
	return 0;
}
