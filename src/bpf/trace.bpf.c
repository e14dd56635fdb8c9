// SPDX-License-Identifier: GPL-2.0
/*
 * `xschedctl trace`: the XQueue's USDT probes (src/xqueue/xq_usdt.h) of one
 * process, each hit sent to user space through a ring buffer with the time
 * it happened. The loader attaches one program per probe with libbpf's
 * USDT support (bpf_program__attach_usdt), which finds the probes in the
 * ELF notes and tells each program where the arguments are. A uprobe hit
 * costs microseconds: tracing slows the traced process while attached, and
 * only then.
 */
#include "vmlinux.h"
#include "xbpf_abi.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before loading: only this queue (0: all). */
const volatile __u32 only_queue = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} events SEC(".maps");

__u64 lost;

static __always_inline int emit(__u32 type, __u64 queue, __u64 arg, __u64 ns)
{
	struct xbpf_trace_event *e;

	if (only_queue && queue != only_queue)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->type = type;
	e->queue = (__u32)queue;
	e->arg = arg;
	e->ns = ns;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("usdt")
int BPF_USDT(xbpf_submit, __u64 queue, __u64 seq)
{
	return emit(XBPF_TR_SUBMIT, queue, seq, 0);
}

SEC("usdt")
int BPF_USDT(xbpf_launch, __u64 queue, __u64 seq)
{
	return emit(XBPF_TR_LAUNCH, queue, seq, 0);
}

SEC("usdt")
int BPF_USDT(xbpf_complete, __u64 queue, __u64 seq, __u64 ns)
{
	return emit(XBPF_TR_COMPLETE, queue, seq, ns);
}

SEC("usdt")
int BPF_USDT(xbpf_suspend, __u64 queue, __u64 level)
{
	return emit(XBPF_TR_SUSPEND, queue, level, 0);
}

SEC("usdt")
int BPF_USDT(xbpf_resume, __u64 queue, __u64 ns)
{
	return emit(XBPF_TR_RESUME, queue, 0, ns);
}

SEC("usdt")
int BPF_USDT(xbpf_preempt_done, __u64 queue, __u64 ns)
{
	return emit(XBPF_TR_PREEMPT_DONE, queue, 0, ns);
}
