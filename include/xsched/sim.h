/*
 * The simulated XPU's part of the xsched C API: hardware queues on the
 * simulated device and the commands it runs. The simulated XPU is one
 * backend of libxsched among others (src/sim/, src/xal/xal_sim.c): a
 * device in shared memory, shared by every process of the node, for tests,
 * demos and development without a GPU. Everything else (XQueues,
 * submission, preemption, xs_hwq_destroy(), xs_cmd_destroy()) is in
 * <xsched/xsched.h>, which this header includes; the conventions are that
 * header's.
 */
#ifndef XSCHED_SIM_H
#define XSCHED_SIM_H

#include "xsched/xsched.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Creates a hardware queue on the simulated XPU named @device (NULL:
 * $XSCHED_SIM_DEVICE, else "xsched-sim0"); the device is created on first
 * use and shared by every process of the node. Errors: -EINVAL (bad name),
 * -ENOSPC (too many queues on the device), -ENOMEM, or the errno of the
 * shared-memory calls.
 */
int xs_sim_hwq_create(const char *device, xs_hwq **out);

/* A kernel that occupies the simulated device for @duration_ns (> 0). */
int xs_sim_kernel(uint64_t duration_ns, xs_cmd **out);

/*
 * A kernel that calls @fn(@arg) on the device (the simulated device runs it
 * on its own thread) and then occupies the device for the rest of
 * @duration_ns. A negative return of @fn becomes the command's error,
 * reported at the next xs_wait*(). @arg must stay valid until then.
 */
int xs_sim_kernel_fn(uint64_t duration_ns, int (*fn)(void *arg), void *arg,
		     xs_cmd **out);

/*
 * A copy of @size bytes into @dst. @src is copied when the command is
 * created, so the caller may reuse it at once; @dst must stay valid until
 * the command completes. @duration_ns 0 models a 10 GB/s transfer.
 */
int xs_sim_copy(void *dst, const void *src, size_t size, uint64_t duration_ns,
		xs_cmd **out);

/* A memset of @size bytes at @dst to @value. */
int xs_sim_memset(void *dst, int value, size_t size, xs_cmd **out);

/*
 * An event record: when it completes, *@timestamp_ns holds the device time
 * at which it ran (CLOCK_MONOTONIC).
 */
int xs_sim_event(uint64_t *timestamp_ns, xs_cmd **out);

#ifdef __cplusplus
}
#endif

#endif
