/*
 * Internals of libxsched-levelzero.so, the Level Zero shim.
 *
 * The shim carries the SONAME libze_loader.so.1 and exports every C
 * function of the Level Zero loader, one per row of
 * src/vendor/ze/ze_functions.def: the ones it schedules are C hooks
 * (ze_hooks*.c, ze_kernels.c), every other name is a trampoline to the real
 * loader (ze_trampolines.S). The real loader is opened
 * by absolute path (never through the dynamic loader's search, which could
 * return the shim itself); dlopen/dlsym hooks hand the shim to applications
 * that open the loader under another name or look functions up in it.
 *
 * Nothing happens until the first Level Zero call: no thread, no daemon
 * connection, not even the real loader, in processes that never make one.
 */
#ifndef XS_ZE_SHIM_H
#define XS_ZE_SHIM_H

#include "shim/common/shim_lib.h"
#include "xal/xal_ze.h"

#include <stdbool.h>

#define XS_ZE_HOOK __attribute__((visibility("default")))

/* The real loader's functions the shim calls (resolved by ze_load()). */
extern struct xal_ze_fns ze_real;

/*
 * Loads the real loader once (thread-safe). Returns 0, or -ENOENT when
 * none was found (every call then fails as without a loader:
 * ZE_RESULT_ERROR_UNINITIALIZED).
 */
int ze_load(void);

/* Path of the real loader in use ("" before ze_load() or without one). */
const char *ze_real_path(void);

/*
 * True when calls must go straight to the driver: scheduling disabled
 * (XSCHED_DISABLE=1, XSCHED_SCHEDULER=none), a forked child of a process
 * that used Level Zero, no real loader, or a call the shim itself makes
 * while inside the loader.
 */
bool ze_passthrough(void);

/* Whether calls are scheduled (the opposite of ze_passthrough(), which
 * already answers true without a loader). */
static inline bool ze_scheduling(void)
{
	return !ze_passthrough();
}

/*
 * Calls the real loader's @name, or answers as without a loader when
 * there is none (or it lacks the function).
 */
#define ZE_CALL(name, ...)                                                         \
	(ze_load() == 0 && ze_real.name ? ze_real.name(__VA_ARGS__) :              \
					  ZE_RESULT_ERROR_UNINITIALIZED)

/* Marks the current thread as inside the loader on the shim's behalf. */
void ze_enter_driver(void);
void ze_leave_driver(void);

#endif
