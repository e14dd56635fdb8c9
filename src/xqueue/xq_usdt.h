/*
 * USDT probes of the XQueue (provider "xsched"), for `xschedctl trace` and
 * bpftrace: each is a single nop instruction plus an ELF note (sys/sdt.h)
 * until a tracer attaches a uprobe there, so the per-command path pays
 * nothing measurable without one. Their arguments are values the code has
 * at hand anyway (no clock read, no semaphore test). Built only with
 * XSCHED_WITH_USDT (systemtap-sdt-dev's <sys/sdt.h>); else they vanish.
 *
 *   submit(queue, seq)            a command entered the queue
 *   launch(queue, seq)            it went to the device (or its backend)
 *   complete(queue, seq, ns)      retired; ns: its device time (measured,
 *                                 else estimated)
 *   suspend(queue, level)         the queue was suspended at that level
 *   resume(queue, ns)             resumed after ns suspended
 *   preempt_done(queue, ns)       a suspend took effect after ns
 *
 * queue is the process-local XQueue number (struct xq trace_id, from 1 in
 * creation order), seq the queue's command sequence number.
 */
#ifndef XQ_USDT_H
#define XQ_USDT_H

#ifdef XSCHED_WITH_USDT
#include <sys/sdt.h>
#define XQ_PROBE2(name, a, b) STAP_PROBE2(xsched, name, a, b)
#define XQ_PROBE3(name, a, b, c) STAP_PROBE3(xsched, name, a, b, c)
#else
#define XQ_PROBE2(name, a, b) do { (void)(a); (void)(b); } while (0)
#define XQ_PROBE3(name, a, b, c) do { (void)(a); (void)(b); (void)(c); } while (0)
#endif

#endif
