/*
 * The shim's enqueue command (cl_cmds.c): one struct cl_cmd per scheduled
 * enqueue, made by the thin hooks of cl_hooks.c, which fill in the
 * call's arguments and submit it.
 */
#ifndef XS_CL_CMDS_H
#define XS_CL_CMDS_H

#include "shim/opencl/cl_shim.h"

enum cl_op {
	OP_NDRANGE, OP_TASK, OP_READ, OP_WRITE, OP_COPY, OP_READ_RECT, OP_WRITE_RECT, OP_COPY_RECT,
	OP_FILL, OP_READ_IMAGE, OP_WRITE_IMAGE, OP_COPY_IMAGE, OP_FILL_IMAGE,
	OP_IMAGE_TO_BUFFER, OP_BUFFER_TO_IMAGE, OP_UNMAP, OP_MARKER, OP_BARRIER,
	OP_SVM_MEMCPY, OP_SVM_FILL, OP_SVM_UNMAP,
};

/* Link states of a command: launched, or the proxy waiting for it. */
#define CLC_LAUNCHED ((uintptr_t)1)

struct cl_cmd {
	struct xal_cl_cmd c;
	struct cl_q *q;
	enum cl_op op;
	cl_command_type type;
	cl_uint nwait;
	cl_event *wait;                 /* events referenced (ours) */
	struct cl_proxy **wproxy;       /* the proxies among them, else NULL */
	_Atomic uintptr_t link;         /* 0, CLC_LAUNCHED or the proxy */
	_Atomic bool submitting;        /* cl_cmd_submit() may still read wait, wproxy */
	cl_int reject;                  /* refused when deferred */
	cl_int wait_failed;             /* the status of a wait-list event that had failed
					 * when it was issued (then refused), else 0 */
	bool deferred;                  /* buffered at the enqueue */
	/* the call's arguments */
	cl_kernel kernel;
	struct clk_snap *snap;          /* its arguments, when deferred */
	int32_t hidden;                 /* cl_kernel_hidden() of @kernel */
	cl_uint dim;
	bool has_offset, has_local;
	size_t goff[3], gsize[3], lsize[3];
	cl_mem mem[2];
	size_t off[2], size;
	size_t o1[3], o2[3], region[3];
	size_t pitch[4];                /* row/slice pitches as the call orders them */
	void *ptr;
	const void *cptr;
	unsigned char pattern[128];     /* fill pattern / color */
	size_t pattern_size;
};

/*
 * A command of @q for an enqueue of kind @op (the driver's @type; the
 * XQueue's @kind and estimate key @est_key); NULL when out of memory. The
 * caller fills in the call's arguments, then cl_cmd_submit()s it.
 */
struct cl_cmd *cl_cmd_new(struct cl_q *q, enum cl_op op, cl_command_type type, uint32_t kind,
			  uint64_t est_key);

/*
 * Submits @k (consumed) with the application's wait list and answers as
 * the driver would: the enqueue's result; into *@event (if not NULL) the
 * driver's event when the command launched before the call returns, else
 * a proxy; for @blocking calls, after the command completed.
 */
cl_int cl_cmd_submit(struct cl_cmd *k, cl_uint nwait, const cl_event *wait, cl_event *event,
		     cl_bool blocking);

/*
 * Mappings the application holds (maps go to the driver at once), so that
 * a buffered unmap of a pointer that is not mapped fails at the call with
 * CL_INVALID_VALUE, as the driver's would. cl_map_note() counts one more
 * mapping of @ptr from @mem; cl_map_find() tells whether there is one,
 * and with @take counts one fewer. Any thread.
 */
void cl_map_note(cl_mem mem, void *ptr);
bool cl_map_find(cl_mem mem, void *ptr, bool take);

/* Without a loader, calls on a queue fail as on an unknown queue. */
#define CLC_REAL(call) (cl_load() < 0 ? CL_INVALID_COMMAND_QUEUE : cl_real.call)

#endif
