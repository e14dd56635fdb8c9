/*
 * Internals of libxsched-cuda.so, the CUDA driver API shim.
 *
 * The shim carries the SONAME libcuda.so.1 and exports every driver
 * function, one per row of src/vendor/cuda/cu_functions.def, which says
 * what the shim does with it: the ones it schedules are C hooks, some are
 * generic hooks (cu_passes.S), every other name is a trampoline to the
 * real driver (cu_trampolines.S).
 * The real driver is opened by absolute path, never through the loader's
 * search (which could return the shim itself). dlopen/dlsym hooks hand the
 * shim to applications that open libcuda under another name.
 */
#ifndef XS_CU_SHIM_H
#define XS_CU_SHIM_H

#include "vendor/cuda/cu_api.h"
#include "shim/common/shim_lib.h"

#include <stdbool.h>

#define XS_CU_HOOK __attribute__((visibility("default")))

struct xq;
struct xal_hwq;

/* One XQueue and its hardware-queue wrapper: a stream's, or a context
 * group's (cu_queues.h). */
struct cs_queue {
	struct xq *xq;
	struct xal_hwq *hwq;
	_Atomic int holds;      /* collections using it (cu_queues.c): not destroyed */
};

/* The real driver's functions the shim calls (resolved by cu_load()). */
extern struct cu_fns cu_real;

/*
 * Loads the real driver once (thread-safe). Returns 0, or -ENOENT when no
 * real driver was found (every call then fails as without a driver).
 */
int cu_load(void);

/* Path of the real driver in use ("" before cu_load() or without one). */
const char *cu_real_path(void);

/*
 * True when calls must go straight to the driver: scheduling disabled
 * (XSCHED_DISABLE=1, XSCHED_SCHEDULER=none), a forked child of a process
 * that used CUDA, or a call made while the shim itself is inside the
 * driver (reentrancy during initialisation).
 */
bool cu_passthrough(void);

/* Marks the current thread as inside the driver on the shim's behalf. */
void cu_enter_driver(void);
void cu_leave_driver(void);

/*
 * The shim's entry point standing for the driver's function @real, as
 * cuGetProcAddress(@symbol, @version, @per_thread) returned it, or NULL
 * when the shim does not hook that function (cu_procaddr.c).
 */
void *cu_hook_for_real(void *real, const char *symbol, int version, bool per_thread);

/* The real driver's function @name, or NULL (looked up each call). */
void *cu_real_sym(const char *name);

/* The real driver's variant @name of @base, looked up once. */
#define REAL_VARIANT(base, name)                                                   \
	({                                                                         \
		static __typeof__(&base) fp_;                                      \
		__typeof__(&base) f_ = __atomic_load_n(&fp_, __ATOMIC_ACQUIRE);    \
		if (!f_) {                                                         \
			f_ = (__typeof__(&base))cu_real_sym(name);                 \
			__atomic_store_n(&fp_, f_, __ATOMIC_RELEASE);              \
		}                                                                  \
		f_;                                                                \
	})

/* The real entry point for a call of @base, per-thread variant or not. */
#define REAL(ptsz, base, suffix) ((ptsz) ? REAL_VARIANT(base, #base suffix) : cu_real.base)

/*
 * Defines the hook of @base and of its per-thread-stream @variant, both
 * calling do_<base>(ptsz, args...).
 */
#define XS_CU_PAIR(ret, base, variant, params, ...)                                \
	__typeof__(base) variant;                                                  \
	XS_CU_HOOK ret base params { return do_##base(false, __VA_ARGS__); }       \
	XS_CU_HOOK ret variant params { return do_##base(true, __VA_ARGS__); }

#endif
