// SPDX-License-Identifier: GPL-2.0
/*
 * Run-queue latency of the processes the daemon watches (its registered
 * agents): the time each of their threads spends runnable but not running,
 * from a wakeup (sched_wakeup, sched_wakeup_new) or an involuntary switch
 * away (sched_switch with the task still runnable) to the switch that runs
 * it. It tells "the device was free, the CPU was not": a launcher thread
 * that waits for a CPU delays its commands whatever the scheduler decides.
 *
 * With `node_wide` (the daemon's heat maps, xbpf_abi.h "Run-queue
 * latency per CPU over time") every task's waits are measured too and
 * counted per CPU and window, with the tasks that ran longest and the
 * watched processes that waited; the watched processes' waits are also
 * counted per window (heat_proc).
 *
 * tp_btf programs only (BTF-typed raw tracepoints: cheap, and they load
 * where fentry cannot). When a task became runnable is kept in its task
 * storage (no hash lookup). Without `node_wide` a wakeup of a process not
 * watched returns after one hash lookup. All the threads of a watched
 * process are measured: the shim's application threads and the xsched
 * worker threads among them.
 */
#include "vmlinux.h"
#include "xbpf_abi.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before loading. */
const volatile bool node_wide = false;
const volatile __u64 window_ns = 10000000;

/* tgid -> 1: the processes measured (written by the loader). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} watch SEC(".maps");

/* When a task became runnable (0: it is not waiting), and on which CPU's
 * run queue. */
struct queued_at {
	__u64 ns;
	__u32 cpu;
	__u32 pad;
};

/* task -> struct queued_at. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct queued_at);
} queued SEC(".maps");

/* tgid -> its histogram. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct xbpf_rq_hist);
} hists SEC(".maps");

/* CPU * XBPF_HEAT_SLOTS + window % XBPF_HEAT_SLOTS -> that window's counts
 * (max_entries set by the loader: possible CPUs * XBPF_HEAT_SLOTS). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XBPF_HEAT_SLOTS);
	__type(key, __u32);
	__type(value, struct xbpf_heat_win);
} heat_cpu SEC(".maps");

/* (tgid, window) -> a watched process's waits in it; drained by the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct xbpf_heat_pkey);
	__type(value, struct xbpf_heat_pwin);
} heat_proc SEC(".maps");

/* Per CPU: when its current task was switched in. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} switched_in SEC(".maps");

/* Kernels before 5.14 name the task state `state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool watched(__u32 tgid)
{
	return bpf_map_lookup_elem(&watch, &tgid) != NULL;
}

/* @t became runnable at @now on CPU @cpu's run queue (the idle task never
 * waits). */
static __always_inline void mark(struct task_struct *t, __u64 now, __u32 cpu)
{
	struct queued_at *q;

	if (!t->pid || (!node_wide && !watched(t->tgid)))
		return;
	q = bpf_task_storage_get(&queued, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (q) {
		q->ns = now;
		q->cpu = cpu;
	}
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

/* The heat bucket of a wait of @ns. */
static __always_inline unsigned heat_bucket(__u64 ns)
{
	__u64 us = ns / 1000;

	if (ns >= XBPF_HEAT_TOP_NS)
		return XBPF_HEAT_BUCKETS - 1;
	return us ? log2_u64(us) + 1 : 0;
}

/* CPU @cpu's record of the window of @now, emptied if it held an older
 * one. Only that CPU's switches write it, but for the waits that began on
 * its run queue and ended on another CPU (counted atomically; one may be
 * lost when it lands at the very start of a window, as the CPU empties it). */
static __always_inline struct xbpf_heat_win *heat_win(__u32 cpu, __u64 now)
{
	__u64 win = now / window_ns;
	__u32 key = cpu * XBPF_HEAT_SLOTS + (__u32)(win % XBPF_HEAT_SLOTS);
	struct xbpf_heat_win *w = bpf_map_lookup_elem(&heat_cpu, &key);

	if (w && w->win != win) {
		__builtin_memset(w, 0, sizeof(*w));
		w->win = win;
	}
	return w;
}

/* Credits the time @prev ran since it was switched in to it, in @w: the
 * two longest runners of the window are kept. */
static __always_inline void heat_ran(struct xbpf_heat_win *w, struct task_struct *prev, __u64 now)
{
	__u32 zero = 0, tgid = prev->tgid, us;
	__u64 *in = bpf_map_lookup_elem(&switched_in, &zero), run;
	struct xbpf_heat_ran t;

	if (!in)
		return;
	run = *in ? now - *in : 0;
	*in = now;
	if (!prev->pid || !run)
		return;
	us = (__u32)(run / 1000);
	if (w->ran[0].tgid == tgid) {
		w->ran[0].run_us += us;
		return;
	}
	if (w->ran[1].tgid == tgid) {
		w->ran[1].run_us += us;
	} else {
		if (us <= w->ran[1].run_us)
			return;
		w->ran[1].tgid = tgid;
		w->ran[1].run_us = us;
		/* The process's name (its main thread's); the thread's own if
		 * that cannot be read (a leader exiting). */
		if (BPF_CORE_READ_STR_INTO(&w->ran[1].comm, prev, group_leader, comm) <= 1)
			BPF_CORE_READ_STR_INTO(&w->ran[1].comm, prev, comm);
	}
	if (w->ran[1].run_us > w->ran[0].run_us) {
		t = w->ran[0];
		w->ran[0] = w->ran[1];
		w->ran[1] = t;
	}
}

/* A watched process @tgid waited there. */
static __always_inline void heat_waited(struct xbpf_heat_win *w, __u32 tgid)
{
	struct xbpf_heat_waited *x = &w->waited[0];

	if (x->tgid && x->tgid != tgid) {
		x = &w->waited[1];
		if (x->tgid && x->tgid != tgid)
			return;
	}
	x->tgid = tgid;
	x->waits++;
}

/* Counts a wait of the watched process @tgid in its window histogram. */
static __always_inline void heat_proc_add(__u32 tgid, __u64 now, unsigned k)
{
	struct xbpf_heat_pkey key = { .tgid = tgid, .win = now / window_ns };
	struct xbpf_heat_pwin *p = bpf_map_lookup_elem(&heat_proc, &key), zero = {};

	if (!p) {
		bpf_map_update_elem(&heat_proc, &key, &zero, BPF_NOEXIST);
		p = bpf_map_lookup_elem(&heat_proc, &key);
		if (!p)
			return;
	}
	if (k < XBPF_HEAT_BUCKETS)
		__sync_fetch_and_add(&p->slot[k], 1);
}

/* Adds a wait of @delta ns to @tgid's histogram (made if watched). */
static __always_inline bool hist_add(__u32 tgid, __u64 delta)
{
	struct xbpf_rq_hist *h = bpf_map_lookup_elem(&hists, &tgid), zero = {};
	unsigned k;

	if (!h) {
		if (!watched(tgid))
			return false;
		bpf_map_update_elem(&hists, &tgid, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &tgid);
		if (!h)
			return false;
	}
	k = delta ? log2_u64(delta) : 0;
	if (k >= XBPF_RQ_SLOTS)
		k = XBPF_RQ_SLOTS - 1;
	__sync_fetch_and_add(&h->slot[k], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum_ns, delta);
	return true;
}

/* The CPU a woken task was queued on. */
static __always_inline __u32 task_cpu(struct task_struct *p)
{
	return (__u32)BPF_CORE_READ(p, wake_cpu);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(xbpf_wakeup, struct task_struct *p)
{
	mark(p, bpf_ktime_get_ns(), task_cpu(p));
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(xbpf_wakeup_new, struct task_struct *p)
{
	mark(p, bpf_ktime_get_ns(), task_cpu(p));
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(xbpf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct xbpf_heat_win *w = NULL, *qw;
	__u64 now = bpf_ktime_get_ns(), delta;
	__u32 tgid, cpu = bpf_get_smp_processor_id();
	struct queued_at *q;
	long state;
	unsigned k;

	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___old *)prev, state);
	if (state == 0)                    /* TASK_RUNNING: preempted, still runnable */
		mark(prev, now, cpu);
	if (node_wide) {
		w = heat_win(cpu, now);
		if (w)
			heat_ran(w, prev, now);
	}
	q = bpf_task_storage_get(&queued, next, 0, 0);
	if (!q || !q->ns)
		return 0;
	delta = now - q->ns;
	q->ns = 0;
	tgid = next->tgid;
	k = heat_bucket(delta);
	/* A wait is the run queue's it began on: a thread migrated after
	 * waiting behind a hog is that CPU's latency, not this one's. */
	qw = w && q->cpu != cpu ? heat_win(q->cpu, now) : w;
	if (qw && k < XBPF_HEAT_BUCKETS) {
		__u64 us = delta / 1000;

		if (qw == w)
			qw->slot[k]++;
		else
			__sync_fetch_and_add(&qw->slot[k], 1);
		if (us > qw->max_us)
			qw->max_us = us > 0xffffffffull ? 0xffffffffu : (__u32)us;
	}
	if (!hist_add(tgid, delta))
		return 0;
	if (qw) {
		heat_waited(qw, tgid);
		heat_proc_add(tgid, now, k);
	}
	return 0;
}
