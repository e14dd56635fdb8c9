/*
 * Regular (non-immediate) command lists and their executions.
 *
 * The shim records, for each regular list, the events its appends signal
 * and wait on, and its last execution on each queue: an
 * execution records its signals as the events' last signallers, gets a
 * gate on the events it waits for, and a reset or destroy of the list
 * waits for its last execution first (the application may only reset a
 * list the device is done with; with the shim it may have been buffered).
 *
 * Slicing (XSCHED_ZE_SLICE=N, N >= 1; off by default): every append to a
 * regular list is also issued on private regular lists of the same
 * context, device, ordinal and flags, N appends each (the "slices"). An
 * execution of lists that were all sliced then becomes one XQueue command
 * per slice, in order, instead of one for the whole call: the XQueue can
 * stop between slices, so a long list is preemptible every N commands.
 * The application's fence goes with the last slice; each event is
 * recorded as signalled by the slice that signals it. A list is executed
 * whole, as without slicing, when one of its appends could not be sliced
 * (an append the shim passes straight to the driver, such as
 * zeCommandListAppendLaunchMultipleKernelsIndirect or the zet metric
 * appends, or a failure on a slice); slices are reset with the list and
 * destroyed with it. Slicing costs a second recording of every regular
 * list in the driver.
 */
#ifndef XS_ZE_LISTS_H
#define XS_ZE_LISTS_H

#include "shim/ze/ze_cmds.h"

/* Records the regular list @l the application created with @desc. */
void zr_created(ze_command_list_handle_t l, ze_context_handle_t ctx, ze_device_handle_t dev,
		const ze_command_list_desc_t *desc);

/* The record of regular list @l, or NULL. */
struct zr_list *zr_of(ze_command_list_handle_t l);

/*
 * After @a was issued on its regular list @l: notes its events and, when
 * slicing, issues it on the slice being filled.
 */
void zr_appended(struct zr_list *l, struct zc_append *a);

/* After an append the shim passed to the driver itself (not sliceable). */
void zr_appended_raw(struct zr_list *l, ze_event_handle_t signal, uint32_t nwait,
		     const ze_event_handle_t *waits);

/* The application closed @l: so are its slices. */
void zr_closed(ze_command_list_handle_t l);

/*
 * Before the application resets @l: its last execution on each queue
 * completes; its notes and slices start afresh.
 */
void zr_reset(ze_command_list_handle_t l);

/* Before the application destroys @l: as zr_reset(), and forgotten. */
void zr_destroyed(ze_command_list_handle_t l);

/*
 * Whether the shim may buffer an execution of @lists: all known to it and
 * closed. Otherwise the call goes to the driver (which reports errors at
 * the call), behind the queue's buffered work.
 */
bool zr_executable(uint32_t n, ze_command_list_handle_t *lists);

/*
 * Submits the execution of @lists (@n of them) with @fence to @q: one
 * XQueue command, or one per slice. Returns the call's result.
 */
ze_result_t zr_execute(struct zs_queue *q, uint32_t n, ze_command_list_handle_t *lists,
		       ze_fence_handle_t fence);

#endif
