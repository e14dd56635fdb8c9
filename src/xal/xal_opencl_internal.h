/*
 * The `opencl` XAL backend's inside, shared by its two files: the
 * hardware queue (xal_opencl.c: queues, launches, syncs, commands) and
 * Lv2 through the guardian (xal_opencl_lv2.c: the control word, guarded
 * launches, their resolution and forced passes). See xal_opencl.h.
 */
#ifndef XS_XAL_OPENCL_INTERNAL_H
#define XS_XAL_OPENCL_INTERNAL_H

#include "xal/xal_opencl.h"

#include <pthread.h>
#include <stdatomic.h>

/* States of a guarded launch (xal_cl_guard.state). */
enum { XG_LAUNCHED, XG_FINAL, XG_CUT };

struct xal_cl_hwq {
	struct xal_hwq base;
	const struct cl_fns *cl;
	cl_command_queue queue;
	bool ooo;
	/* --- Lv2 (xg_enable()) --- */
	bool lv2;
	cl_context ctx;
	cl_mem ctl;                     /* the control word as a buffer, or NULL */
	_Atomic uint32_t *ctl_svm;      /* as fine-grain SVM, or NULL */
	cl_command_queue side;          /* writes @ctl, reads records (not SVM) */
	cl_device_id dev;
	pthread_mutex_t glock;          /* below */
	struct xal_cl_cmd *head, *tail; /* guarded launches not resolved, in order */
	_Atomic uint32_t unresolved;
	_Atomic uint32_t unforced;      /* ... of which no forced pass was issued */
	uint32_t launching;             /* guarded launches being issued (not listed yet) */
	bool clear_pending;             /* reactivated: clear once all resolved */
	cl_event last;                  /* the last command launched (a reference) */
	_Atomic uint32_t cut_waiting;   /* resolved cut, not launched again yet (glock; read
	                                 * without it as a hint) */
	/* --- forced passes (xg_settle()) --- */
	pthread_mutex_t settle_lock;    /* held while forced passes are issued */
	cl_mem ctl_zero;                /* a control word never set, as @ctl */
	uint32_t *ctl_zero_svm;         /* ... or as @ctl_svm */
	cl_event forced_last;           /* the newest forced pass (a reference); glock */
	_Atomic uint32_t callbacks;     /* xg_done_cb() registered, not returned */
	_Atomic uint32_t records;       /* progress records alive (buffers or SVM) */
	/* --- profiled queues (CL_QUEUE_PROFILING_ENABLE) --- */
	bool profiled;
	_Atomic uint64_t quiet_end;     /* xal_cl_hwq_quiet_end() */
	_Atomic uint64_t quiet_start;   /* xal_cl_hwq_quiet_start() */
};

static inline struct xal_cl_hwq *to_hwq(struct xal_hwq *h)
{
	return (struct xal_cl_hwq *)h;
}

static inline struct xal_cl_cmd *to_cmd(struct xal_cmd *c)
{
	return (struct xal_cl_cmd *)c;
}

/* xal_opencl.c */
extern const struct xal_ops xal_cl_ops_lv2;
/* 0 once @ev completed, -EIO if it failed, -EBUSY before (@wait: block). */
int xal_cl_event_state(const struct cl_fns *cl, cl_event ev, bool wait);
/* Drops a reference to @c; the last frees it. */
void xal_cl_cmd_release(struct xal_cl_cmd *c);

/* xal_opencl_lv2.c */
/* launch() of an Lv2 queue (every command gets its event). */
int xg_launch(struct xal_cl_hwq *h, struct xal_cl_cmd *c);
/* Replaces the hwq's last event with @ev (a reference taken). glock held. */
void xg_set_last(struct xal_cl_hwq *h, cl_event ev);
/* Takes @c out of the unresolved list. glock held. */
void xg_list_del(struct xal_cl_hwq *h, struct xal_cl_cmd *c);
/* Reads the skip count of @c's launch, which completed: 0, or -EIO. glock held. */
int xg_count(struct xal_cl_hwq *h, struct xal_cl_cmd *c);
/* Tells the creator, once, that guarded @c is complete for good. */
void xg_completed(struct xal_cl_cmd *c, bool unlocked);
/* The guardian arguments of the launch of @c being issued (or a forced pass). */
void xg_guard_args(struct xal_cl_cmd *c, struct xal_cl_guard_args *out);

/* xal_opencl_resolve.c */
/*
 * Whether every command launched on @h completed (-EBUSY before, waiting
 * for it with @wait); @span, if not NULL, gets the device times at which
 * the last one started and ended (0 when unknown).
 */
int xg_drained(struct xal_cl_hwq *h, bool wait, cl_ulong span[2]);
/* sync()/query() of a guarded launch: 0, -EIO, -ECANCELED or -EBUSY. */
int xg_state(struct xal_cl_hwq *h, struct xal_cl_cmd *c, bool wait);
/* ... of any other command of an Lv2 queue: 0, -EIO or -EBUSY. */
int xg_plain_state(struct xal_cl_hwq *h, struct xal_cl_cmd *c, bool wait);
/* sync_all()'s part after clFinish: the newest unresolved launch answers. */
int xg_sync_all(struct xal_cl_hwq *h);
/* Lv2 on @h where the driver allows (@buffers: never SVM): its caps, its table. */
void xg_enable(struct xal_cl_hwq *h, bool buffers);
/* Lv2 ops of the table: see xal.h. */
int xg_settle(struct xal_hwq *hwq);
int xg_deactivate(struct xal_hwq *hwq);
int xg_reactivate(struct xal_hwq *hwq);
void xg_wait_quiet(struct xal_hwq *hwq);
/* What an Lv2 queue holds, freed with it. */
/* Frees what Lv2 made; false (nothing freed: leave @h allocated) if a
 * driver callback still holds it after a second. */
bool xg_hwq_fini(struct xal_cl_hwq *h);
/* What a guarded command leaves in its queue's lists, at its last release. */
void xg_cmd_fini(struct xal_cl_cmd *c);
/* Whether @c must wait for the relaunch of a cut launch (its gate). */
bool xg_behind_cut(struct xal_cl_hwq *h, struct xal_cl_cmd *c);

#endif
