/*
 * The eBPF tools of xsched, as the daemon and xschedctl use them: loaders
 * around the libbpf skeletons of the src/bpf programs (NAME.bpf.c). Each object is opened,
 * loaded and attached in one call and closed in one; events come through
 * a ring buffer whose descriptor goes into the caller's epoll loop, and
 * maps are read on demand. Nothing here logs: errors come back as a
 * negative errno with a sentence in the caller's buffer, and libbpf's own
 * messages go to the function given to xbpf_set_log() (none by default).
 *
 * Built without eBPF (XSCHED_WITH_BPF off), every open returns
 * -EOPNOTSUPP (xbpf_none.c), so callers need no #ifdef.
 * Single-threaded: one thread uses an object at a time.
 */
#ifndef XBPF_H
#define XBPF_H

#include "bpf/xbpf_abi.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Where libbpf's messages go (warnings and, with @debug, debug output);
 * NULL: nowhere. Process-wide, as libbpf's print hook is. */
void xbpf_set_log(void (*fn)(const char *fmt, va_list ap), int debug);

/* --- the bypass detector (bypass.bpf.c) ---------------------------------- */

struct xbpf_bypass;

/*
 * Called for each event from xbpf_bypass_poll(). @what names the use: the
 * device node ("renderD128") or "library:function" of a uprobe; "" for an
 * exit.
 */
typedef void (*xbpf_use_fn)(void *arg, const struct xbpf_use_event *e, const char *what);

/*
 * Loads the detector and attaches it: device-node opens for the whole node,
 * and uprobes on the context-creating functions of each library in @libs
 * (absolute paths; the API is told by the file name: libcuda.so*,
 * libOpenCL.so*, libze_loader.so*). A library that cannot be probed (not
 * found, another API, no such function) is skipped and said in @note
 * (one line each). Returns 0 with *@out, or a negative errno with the
 * reason in @err: -EOPNOTSUPP (built without eBPF), -EPERM (no privilege),
 * others from libbpf.
 */
int xbpf_bypass_open(const char *const *libs, size_t nlibs, xbpf_use_fn fn, void *arg,
		     struct xbpf_bypass **out, char *err, size_t errlen,
		     char *note, size_t notelen);
/* The ring buffer's descriptor, readable when events wait. */
int xbpf_bypass_fd(const struct xbpf_bypass *b);
/* Hands every waiting event to the callback; their number or -errno. */
int xbpf_bypass_poll(struct xbpf_bypass *b);
/* Events the programs dropped for want of ring buffer space. */
uint64_t xbpf_bypass_lost(const struct xbpf_bypass *b);
/* How device opens are seen ("fexit/vfs_open" or "tp_btf/sys_exit") and
 * how many uprobes are attached. */
const char *xbpf_bypass_hook(const struct xbpf_bypass *b);
unsigned xbpf_bypass_uprobes(const struct xbpf_bypass *b);
/* Detaches and frees; NULL is fine. */
void xbpf_bypass_close(struct xbpf_bypass *b);

/* --- run-queue latency (rqlat.bpf.c) ------------------------------------- */

struct xbpf_rqlat;

/* Loads and attaches the programs; 0 with *@out, or -errno with @err as
 * xbpf_bypass_open(). Nothing is measured until a process is watched. */
int xbpf_rqlat_open(struct xbpf_rqlat **out, char *err, size_t errlen);
/* Measures process @pid from now on (its histogram starts empty);
 * unwatch stops and forgets it. 0 or -errno (-E2BIG: 4096 watched). */
int xbpf_rqlat_watch(struct xbpf_rqlat *r, int32_t pid);
void xbpf_rqlat_unwatch(struct xbpf_rqlat *r, int32_t pid);
/* @pid's histogram so far; -ENOENT if it has none yet. */
int xbpf_rqlat_read(const struct xbpf_rqlat *r, int32_t pid, struct xbpf_rq_hist *out);
/* The upper bound, in ns, of the slot holding quantile @q of @h; 0 if empty. */
uint64_t xbpf_rq_quantile(const struct xbpf_rq_hist *h, double q);
void xbpf_rqlat_close(struct xbpf_rqlat *r);

/* --- USDT tracing of one process (trace.bpf.c) ------------------------------ */

struct xbpf_trace;

typedef void (*xbpf_trace_fn)(void *arg, const struct xbpf_trace_event *e);

/*
 * Attaches to the xsched USDT probes of process @pid in every object it
 * maps that has them (its executable, libxsched, the shims), for queue
 * @queue only (0: all). Returns 0 with *@out, or -errno with @err: -ENOENT
 * when the process has no xsched probes (not an xsched process, or a
 * build without USDT), -ESRCH when there is no such process.
 */
int xbpf_trace_open(int32_t pid, uint32_t queue, xbpf_trace_fn fn, void *arg,
		    struct xbpf_trace **out, char *err, size_t errlen);
int xbpf_trace_fd(const struct xbpf_trace *t);
/* Hands waiting events to the callback; their number or -errno. */
int xbpf_trace_poll(struct xbpf_trace *t, int timeout_ms);
uint64_t xbpf_trace_lost(const struct xbpf_trace *t);
/* The objects attached to, one a line. */
const char *xbpf_trace_objects(const struct xbpf_trace *t);
void xbpf_trace_close(struct xbpf_trace *t);

#endif
