/*
 * The commands the Level Zero shim submits to XQueues: executions of
 * closed command lists on a command queue (struct zc_exec), and appends to
 * an immediate list (struct zc_append), one per kind of append call.
 *
 * An append is described once, by its hook, in a struct zc_append whatever
 * the list: for an immediate list the description becomes the XQueue
 * command (issued when the XQueue launches it); for a regular list it is
 * issued at once on the application's list (the driver records it; the
 * shim only notes the events it signals and waits on, and, when slicing,
 * issues it once more on the slice being filled, ze_lists.h).
 *
 * A description owns copies of what the application may reuse when the
 * call returns: the wait list, a fill pattern, copy regions, range and
 * offset arrays, and the kernel's state (ze_kernels.h). Memory the device
 * reads or writes (copy sources and destinations) is not copied: Level
 * Zero lets the application change it until the command executes.
 */
#ifndef XS_ZE_CMDS_H
#define XS_ZE_CMDS_H

#include "shim/ze/ze_kernels.h"
#include "shim/ze/ze_events.h"

struct zr_list;

enum zc_what {
	ZC_KERNEL,
	ZC_KERNEL_COOPERATIVE,
	ZC_KERNEL_INDIRECT,
	ZC_COPY,
	ZC_COPY_CONTEXT,
	ZC_COPY_REGION,
	ZC_FILL,
	ZC_BARRIER,
	ZC_RANGES_BARRIER,
	ZC_SIGNAL,
	ZC_WAIT,
	ZC_RESET,
	ZC_TIMESTAMP,
	ZC_QUERY_TIMESTAMPS,
	ZC_PREFETCH,
	ZC_ADVISE,
	ZC_IMAGE_COPY,
	ZC_IMAGE_REGION,
	ZC_IMAGE_TO_MEMORY,
	ZC_IMAGE_FROM_MEMORY,
	ZC_IMAGE_TO_MEMORY_EXT,
	ZC_IMAGE_FROM_MEMORY_EXT,
};

struct zc_append {
	struct xal_ze_cmd c;
	enum zc_what what;
	struct zs_queue *q;             /* the immediate list's queue, or NULL */
	struct zr_list *rl;             /* or the regular list's record */
	ze_command_list_handle_t list;  /* the application's list */
	bool now;                       /* issued at the call (regular lists) */
	struct zt_deps deps;            /* immediate: the gate */
	ze_event_handle_t signal;       /* ZC_SIGNAL: the event signalled */
	uint32_t nwait;                 /* ZC_WAIT: the events waited on */
	ze_event_handle_t *waits;
	union {
		struct {
			ze_kernel_handle_t kernel;
			struct zk_snap *snap;   /* immediate lists */
			ze_group_count_t count;
			const ze_group_count_t *indirect;
		} k;
		struct {
			void *dst;
			const void *src;
			size_t size;
			ze_context_handle_t ctx;
		} copy;
		struct {
			void *dst;
			const void *src;
			ze_copy_region_t dst_region, src_region;
			uint32_t dst_pitch, dst_slice, src_pitch, src_slice;
		} region;
		struct {
			void *ptr;
			const void *pattern;    /* a copy */
			size_t pattern_size, size;
		} fill;
		struct {
			uint32_t n;
			const size_t *sizes;    /* copies */
			const void **ranges;
		} ranges;
		struct {
			ze_event_handle_t ev;
		} reset;
		struct {
			uint64_t *dst;
		} ts;
		struct {
			uint32_t n;
			ze_event_handle_t *events;      /* copies */
			void *dst;
			const size_t *offsets;
		} qts;
		struct {
			const void *ptr;
			size_t size;
			ze_device_handle_t dev;
			ze_memory_advice_t advice;
		} mem;
		struct {
			ze_image_handle_t dst, src;
			void *dst_ptr;
			const void *src_ptr;
			const ze_image_region_t *dst_region, *src_region; /* copies or NULL */
			uint32_t row_pitch, slice_pitch;
		} img;
	} u;
	char extra[];                   /* the wait list, then the caller's copies */
};

/*
 * Starts describing an append of kind @what to @list, with its signal and
 * wait events (copied), and @extra bytes of room for the caller's copies
 * (zc_extra()). NULL when the shim leaves the call to the driver: not
 * scheduling, a list it does not know, arguments the driver will refuse.
 */
struct zc_append *zc_begin(ze_command_list_handle_t list, enum zc_what what,
			   ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *waits,
			   size_t extra);

/* The caller's room (8-byte aligned). */
void *zc_extra(struct zc_append *a);

/*
 * Finishes: submits @a to the immediate list's XQueue, or issues it on
 * the regular list. Consumes @a. Returns the call's result.
 */
ze_result_t zc_end(struct zc_append *a);

/* Drops a description that will not be used. */
void zc_abort(struct zc_append *a);

/*
 * Issues @a on @list now (a regular list or one of its slices), with the
 * application's kernel. Returns the driver's result.
 */
ze_result_t zc_issue_on(struct zc_append *a, ze_command_list_handle_t list);

/*
 * Around an append the shim passes to the driver itself: an immediate
 * list's buffered work is launched first, and the call made under its
 * append lock. Returns what zc_pass_end() needs.
 */
struct zs_queue *zc_pass_begin(ze_command_list_handle_t list);
void zc_pass_end(struct zs_queue *q);

/*
 * An execution of @n command lists (copied), with the application's
 * fence @fence (or NULL), waiting on @deps (taken over, also on failure).
 * NULL: out of memory.
 */
struct xal_ze_cmd *zc_exec(uint32_t n, ze_command_list_handle_t *lists, ze_fence_handle_t fence,
			   struct zt_deps *deps);

#endif
