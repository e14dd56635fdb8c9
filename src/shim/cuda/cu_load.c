/*
 * Finding and loading the real CUDA driver, resolving its entry points,
 * and the dlopen/dlsym hooks (see cu_shim.h).
 *
 * The real driver is looked for, in order, at $XSCHED_CUDA_LIB, in the
 * dynamic loader's cache (/etc/ld.so.cache), in the standard library
 * directories, in the build's driver directories (XS_CUDA_DRIVER_DIRS,
 * below) and in $LD_LIBRARY_PATH; a candidate that is this very file
 * (the shim can sit first on LD_LIBRARY_PATH under the name libcuda.so.1)
 * or the toolkit's stub library is skipped; relative paths are taken from
 * the current directory. It is opened with the real dlopen, RTLD_LOCAL, by
 * absolute path. Not finding it is said once on stderr (XSCHED_LOG).
 */
#include "shim/cuda/cu_shim.h"
#include "agent/agent.h"
#include "shim/common/shim_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- exports table (cu_trampolines.S jumps through it) ----------------- */

/* Every row of cu_functions.def, in row order: the trampolines' slots. */
static const char *const cu_export_names[] = {
#define XS_CU_FN(name, ...) #name,
#define XS_CU_FN_PT(name, ...) #name,
#define XS_CU_EX(name, ...) #name,
#define XS_CU_EX_PT(name, ...) #name,
#include "vendor/cuda/cu_functions.def"
};

#define CU_NEXPORTS (sizeof(cu_export_names) / sizeof(cu_export_names[0]))

/* Read by the trampolines; written once per entry by cu_tramp_resolve(). */
__attribute__((visibility("hidden"))) void *cu_tramp_fn[CU_NEXPORTS];

struct cu_fns cu_real;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static void *cu_handle;          /* the real driver */
static void *cu_self;            /* this library, as dlopen would return it */
static char cu_path[PATH_MAX];
static int cu_load_rc = -ENOENT;
static _Atomic bool cu_forked;
static _Thread_local int cu_in_driver;

static CUresult cu_missing(void)
{
	return CUDA_ERROR_NOT_INITIALIZED;
}

static void *cu_dlsym(void *h, const char *name)
{
	return shim_dl_sym(h, name);
}

/* What the application sees without a driver (XSCHED_LOG messages). */
#define CU_INSTEAD "CUDA calls fail with CUDA_ERROR_NOT_INITIALIZED, as without a driver"

/*
 * Where drivers are installed outside the loader's cache and the standard
 * directories, ':'-separated: the CMake cache variable
 * XSCHED_CUDA_DRIVER_DIRS (src/shim/cuda/CMakeLists.txt; docs/cuda.md),
 * by default the NVIDIA container runtime's mount points and WSL's.
 */
#ifndef XS_CUDA_DRIVER_DIRS
#error "XS_CUDA_DRIVER_DIRS is set by the build (XSCHED_CUDA_DRIVER_DIRS)"
#endif

static bool cu_find(char *out, size_t len)
{
	return shim_lib_find("libcuda.so.1", "XSCHED_CUDA_LIB", XS_CUDA_DRIVER_DIRS,
			     (const void *)cu_find, CU_INSTEAD, out, len);
}

static void cu_load_once(void)
{
	void *handle;

	cu_enter_driver();
	cu_self = shim_lib_self((const void *)cu_load_once);
	if (!cu_find(cu_path, sizeof(cu_path))) {
		cu_path[0] = '\0';
		goto out;
	}
	handle = shim_lib_open(cu_path, CU_INSTEAD);
	if (!handle) {
		cu_path[0] = '\0';
		goto out;
	}
	/* Read, uninstrumented, by the dlsym hook. */
	__atomic_store_n(&cu_handle, handle, __ATOMIC_RELAXED);
#define XS_CU_FN(name, ...) cu_real.name = (__typeof__(&name))cu_dlsym(handle, #name);
#include "vendor/cuda/cu_functions.def"
	cu_load_rc = 0;
out:
	cu_leave_driver();
}

int cu_load(void)
{
	pthread_once(&cu_once, cu_load_once);
	return cu_load_rc;
}

const char *cu_real_path(void)
{
	return cu_path;
}

/* The real driver's function @name, or NULL. */
void *cu_real_sym(const char *name)
{
	return cu_load() == 0 ? cu_dlsym(cu_handle, name) : NULL;
}

/* Called by the trampolines on an entry point's first use. */
__attribute__((visibility("hidden"))) void *cu_tramp_resolve(unsigned idx);

void *cu_tramp_resolve(unsigned idx)
{
	void *fn = NULL;

	if (idx >= CU_NEXPORTS)
		return (void *)cu_missing;
	if (cu_load() == 0)
		fn = cu_dlsym(cu_handle, cu_export_names[idx]);
	if (!fn)
		fn = (void *)cu_missing;
	__atomic_store_n(&cu_tramp_fn[idx], fn, __ATOMIC_RELEASE);
	return fn;
}

/* --- pass-through state --------------------------------------------------- */

static void cu_atfork_child(void)
{
	/* A child does not inherit the parent's queues or threads. */
	atomic_store(&cu_forked, true);
}

static void cu_register_atfork(void)
{
	pthread_atfork(NULL, NULL, cu_atfork_child);
}

bool cu_passthrough(void)
{
	/* 0: not decided yet, 1: scheduling, 2: pass-through (decided once:
	 * this is on every intercepted call). */
	static int mode;
	int m;

	if (cu_in_driver || atomic_load_explicit(&cu_forked, memory_order_relaxed))
		return true;
	m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
	if (!m) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;

		pthread_once(&once, cu_register_atfork);
		m = agent_mode() == AGENT_NONE ? 2 : 1;
		__atomic_store_n(&mode, m, __ATOMIC_RELAXED);
	}
	return m == 2;
}

void cu_enter_driver(void)
{
	cu_in_driver++;
}

void cu_leave_driver(void)
{
	cu_in_driver--;
}

/* --- dlopen / dlsym ------------------------------------------------------- */

/* Names applications use to open the driver. */
static bool cu_is_driver_name(const char *name)
{
	static const char *const names[] = { "libcuda.so", "libcuda.so.1", NULL };

	return shim_lib_is_name(name, names, cu_load() == 0 ? cu_path : NULL);
}

__attribute__((visibility("hidden"))) void *shim_dlopen_pick(const char *name, int flags);
__attribute__((visibility("hidden"))) void *shim_dlsym_pick(void *handle, const char *name);
static void *cu_dlopen_driver(const char *name, int flags);
static void *cu_dlsym_driver(void *handle, const char *name);

SHIM_EARLY void *shim_dlopen_pick(const char *name, int flags)
{
	shim_dl_init();
	if (!shim_dl_mentions(name, "libcuda.so"))
		return NULL;
	return cu_dlopen_driver(name, flags);
}

/* dlopen of a name that may be the driver's: the shim's answer or NULL. */
static void *cu_dlopen_driver(const char *name, int flags)
{
	if (cu_in_driver || !cu_is_driver_name(name))
		return NULL;
	(void)flags;
	/* Without a real driver, answer as the system would: no library. */
	if (cu_load() < 0 || !cu_self)
		return SHIM_DL_NULL;
	return cu_self;
}

SHIM_EARLY void *shim_dlsym_pick(void *handle, const char *name)
{
	shim_dl_init();
	/* Only lookups in the real driver's handle concern us; decided here,
	 * uninstrumented (a sanitizer looks up names such as "cuserid" with
	 * RTLD_NEXT while it initialises). */
	if (!name || name[0] != 'c' || name[1] != 'u' || !handle ||
	    handle != __atomic_load_n(&cu_handle, __ATOMIC_RELAXED))
		return NULL;
	return cu_dlsym_driver(handle, name);
}

/* dlsym of a CUDA name: our entry point when @handle is the driver's. */
static void *cu_dlsym_driver(void *handle, const char *name)
{
	if (cu_in_driver)
		return NULL;
	/* Lookups in the real driver's handle get our entry points too. */
	if (handle && handle == cu_handle)
		return cu_dlsym(cu_self ? cu_self : RTLD_DEFAULT, name);
	return NULL;
}
