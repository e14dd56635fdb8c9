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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where libbpf's messages go (warnings and, with @debug, debug output);
 * NULL: nowhere. Process-wide, as libbpf's print hook is. */
void xbpf_set_log(void (*fn)(const char *fmt, va_list ap), int debug);
/* For the loaders: while true, a failure is expected and libbpf says nothing. */
extern bool xbpf_quiet;

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

/* What to measure beyond the watched processes' histograms. */
struct xbpf_rqlat_opts {
	bool node_wide;         /* every task's waits, per CPU and window, and the
				 * watched processes' per window (xbpf_abi.h) */
	uint64_t window_ns;     /* their window; 0: 10 ms */
};

/* Loads and attaches the programs; 0 with *@out, or -errno with @err as
 * xbpf_bypass_open(). Nothing is measured until a process is watched,
 * except the node-wide counts. */
int xbpf_rqlat_open(struct xbpf_rqlat **out, const struct xbpf_rqlat_opts *o, char *err,
		    size_t errlen);
/* Measures process @pid from now on (its histogram starts empty);
 * unwatch stops and forgets it. 0 or -errno (-E2BIG: 4096 watched). */
int xbpf_rqlat_watch(struct xbpf_rqlat *r, int32_t pid);
void xbpf_rqlat_unwatch(struct xbpf_rqlat *r, int32_t pid);
/* @pid's histogram so far; -ENOENT if it has none yet. */
int xbpf_rqlat_read(const struct xbpf_rqlat *r, int32_t pid, struct xbpf_rq_hist *out);
/* The upper bound, in ns, of the slot holding quantile @q of @h; 0 if empty. */
uint64_t xbpf_rq_quantile(const struct xbpf_rq_hist *h, double q);
/* The node-wide CPU windows, mapped read-only: *@ncpus CPUs of
 * XBPF_HEAT_SLOTS records each; NULL without node_wide. */
const struct xbpf_heat_win *xbpf_rqlat_heat(const struct xbpf_rqlat *r, unsigned *ncpus);
/* Hands every watched process's window older than window @before to @fn
 * and deletes it from the programs' map. */
void xbpf_rqlat_drain(struct xbpf_rqlat *r, uint64_t before,
		      void (*fn)(void *arg, const struct xbpf_heat_pkey *k,
				 const struct xbpf_heat_pwin *w),
		      void *arg);
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

/* --- the device gate (gate.bpf.c) ----------------------------------------- */

struct xbpf_gate;

/* Called for each event from xbpf_gate_poll(): a process refused (or,
 * in audit mode, that would be), once per process. */
typedef void (*xbpf_gate_fn)(void *arg, const struct xbpf_gate_event *e);
typedef void (*xbpf_gate_count_fn)(void *arg, const struct xbpf_gate_who *who,
				   const struct xbpf_gate_count *n);

/*
 * Loads the gate and attaches it (the gate, exec and exit). With
 * @pin_dir (a directory in bpffs, made if missing; NULL or "": nothing
 * pinned) its maps are pinned or reused from an earlier load there, and
 * its exec and exit links pinned; with @pin_gate the gate's link too, so
 * that it outlives the caller. A pinned gate of an earlier load is
 * replaced (ours attached first). Returns 0 with *@out, or -errno with the
 * reason in @err: -EOPNOTSUPP (built without eBPF), -EPERM (privilege),
 * others from libbpf (the BPF LSM not active: the attach fails).
 */
int xbpf_gate_open(const char *pin_dir, bool pin_gate, const char *cgroup_root,
		   xbpf_gate_fn fn, void *arg, struct xbpf_gate **out, char *err, size_t errlen);
/* The hook attached: "lsm/file_open", or where the kernel cannot attach LSM
 * programs (no BPF trampolines), "cgroup/dev" on @cgroup_root (the cgroup
 * v2 mount), which refuses access(2) of a gated node as well as its open. */
const char *xbpf_gate_hook(const struct xbpf_gate *g);
/* Why the LSM hook is not the one attached (-errno of its load or attach); 0 if it is. */
int xbpf_gate_lsm_error(const struct xbpf_gate *g);
/* Pins the gate's link (it outlives us) or unpins it (it goes with us). */
int xbpf_gate_set_pinned(struct xbpf_gate *g, bool pin_gate);
int xbpf_gate_fd(const struct xbpf_gate *g);
int xbpf_gate_poll(struct xbpf_gate *g);
uint64_t xbpf_gate_lost(const struct xbpf_gate *g);
int xbpf_gate_set_conf(struct xbpf_gate *g, const struct xbpf_gate_conf *c);
/* Replace the sets (no key of both the old and new set is ever missing). */
int xbpf_gate_set_devices(struct xbpf_gate *g, const uint64_t *keys, size_t n);
int xbpf_gate_set_cgroups(struct xbpf_gate *g, const uint64_t *ids, const uint32_t *kinds,
			  size_t n);
int xbpf_gate_set_exes(struct xbpf_gate *g, const struct xbpf_gate_exe *exes, size_t n);
/* Allows process @tgid started at @ticks (/proc/PID/stat's start time). */
int xbpf_gate_allow(struct xbpf_gate *g, uint32_t tgid, uint64_t ticks);
/* Whether process @tgid started at @ticks is allowed. */
bool xbpf_gate_allowed(const struct xbpf_gate *g, uint32_t tgid, uint64_t ticks);
/* Drops the allowed processes @alive says are gone; how many; *@left kept. */
size_t xbpf_gate_sweep(struct xbpf_gate *g, bool (*alive)(uint32_t tgid, uint64_t ticks),
		       size_t *left);
/* Calls @fn for each (uid, command) the gate refused or would have. */
int xbpf_gate_counts(const struct xbpf_gate *g, xbpf_gate_count_fn fn, void *arg);
/* Closes ours; what is pinned stays. NULL is fine. */
void xbpf_gate_close(struct xbpf_gate *g);
/* Unpins everything in @pin_dir and removes it: what is not held goes. The
 * number of pins removed, or -errno. */
int xbpf_gate_remove(const char *pin_dir);

#endif
