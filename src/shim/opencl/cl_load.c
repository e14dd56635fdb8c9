/*
 * Finding and loading the real ICD loader, the trampolines' table, the
 * dlopen/dlsym hooks and clGetExtensionFunctionAddress (see cl_shim.h).
 *
 * The real loader is $XSCHED_OPENCL_LIB, else libOpenCL.so.1 found in the
 * loader cache, the standard directories or $LD_LIBRARY_PATH (never this
 * file; relative paths from the current directory), opened RTLD_LOCAL by
 * absolute path; not finding it is said once on stderr (XSCHED_LOG).
 * Nothing happens before the
 * first OpenCL call: processes that inherit LD_PRELOAD without using
 * OpenCL (PoCL's linker, for one) see no thread and no connection.
 */
#include "shim/opencl/cl_shim.h"
#include "agent/agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Every row of cl_functions.def, in row order: the trampolines' slots. */
static const char *const cl_export_names[] = {
#define XS_CL_FN(name, version, how) #name,
#include "vendor/opencl/cl_functions.def"
};

#define CL_NEXPORTS (sizeof(cl_export_names) / sizeof(cl_export_names[0]))

/* Read by the trampolines; written once per entry by cl_tramp_resolve(). */
__attribute__((visibility("hidden"))) void *cl_tramp_fn[CL_NEXPORTS];

struct cl_fns cl_real;

static pthread_once_t cl_once = PTHREAD_ONCE_INIT;
static void *cl_handle;
static void *cl_self;
static char cl_path[PATH_MAX];
static int cl_load_rc = -ENOENT;
static _Atomic bool cl_forked;

/* Without a loader every call fails as with an empty one. */
#define CL_INSTEAD "OpenCL calls fail with CL_INVALID_PLATFORM, as without a platform"

static cl_int cl_missing(void)
{
	return CL_INVALID_PLATFORM;
}

static void cl_load_once(void)
{
	void *handle;

	cl_self = shim_lib_self((const void *)cl_load_once);
	if (!shim_lib_find("libOpenCL.so.1", "XSCHED_OPENCL_LIB", NULL,
			   (const void *)cl_load_once, CL_INSTEAD, cl_path, sizeof(cl_path)))
		goto fail;
	handle = shim_lib_open(cl_path, CL_INSTEAD);
	if (!handle)
		goto fail;
	__atomic_store_n(&cl_handle, handle, __ATOMIC_RELAXED);
#define CL_RESOLVE_PASS(name)
#define CL_RESOLVE_CALL(name) cl_real.name = (__typeof__(&name))shim_dl_sym(handle, #name);
#define CL_RESOLVE_HOOK(name) CL_RESOLVE_CALL(name)
#define XS_CL_FN(name, version, how) CL_RESOLVE_##how(name)
#include "vendor/opencl/cl_functions.def"
	cl_load_rc = 0;
	return;
fail:
	cl_path[0] = '\0';
}

int cl_load(void)
{
	pthread_once(&cl_once, cl_load_once);
	return cl_load_rc;
}

void *cl_self_sym(const char *name)
{
	cl_load();
	return cl_self ? shim_dl_sym(cl_self, name) : NULL;
}

/* Called by the trampolines on an entry point's first use. */
__attribute__((visibility("hidden"))) void *cl_tramp_resolve(unsigned idx);

void *cl_tramp_resolve(unsigned idx)
{
	void *fn = NULL;

	if (idx >= CL_NEXPORTS)
		return (void *)cl_missing;
	if (cl_load() == 0)
		fn = shim_dl_sym(cl_handle, cl_export_names[idx]);
	if (!fn)
		fn = (void *)cl_missing;
	__atomic_store_n(&cl_tramp_fn[idx], fn, __ATOMIC_RELEASE);
	return fn;
}

/* --- pass-through ------------------------------------------------------------ */

static void cl_atfork_child(void)
{
	/* A child inherits neither the queues nor their threads. */
	atomic_store(&cl_forked, true);
}

static void cl_register_atfork(void)
{
	pthread_atfork(NULL, NULL, cl_atfork_child);
}

bool cl_passthrough(void)
{
	/* 0: undecided, 1: scheduling, 2: pass-through; decided once. */
	static int mode;
	int m;

	if (atomic_load_explicit(&cl_forked, memory_order_relaxed))
		return true;
	m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
	if (!m) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;

		pthread_once(&once, cl_register_atfork);
		m = cl_load() < 0 || agent_mode() == AGENT_NONE ? 2 : 1;
		__atomic_store_n(&mode, m, __ATOMIC_RELAXED);
	}
	return m == 2;
}

/* --- dlopen / dlsym ----------------------------------------------------------- */

__attribute__((visibility("hidden"))) void *shim_dlopen_pick(const char *name, int flags);
__attribute__((visibility("hidden"))) void *shim_dlsym_pick(void *handle, const char *name);
static void *cl_dlopen_loader(const char *name);
static void *cl_dlsym_loader(void *handle, const char *name);

SHIM_EARLY void *shim_dlopen_pick(const char *name, int flags)
{
	(void)flags;
	shim_dl_init();
	if (!shim_dl_mentions(name, "libOpenCL.so"))
		return NULL;
	return cl_dlopen_loader(name);
}

/* dlopen of a name that may be the loader's: the shim, or NULL to go on. */
static void *cl_dlopen_loader(const char *name)
{
	static const char *const names[] = { "libOpenCL.so", "libOpenCL.so.1", NULL };

	if (!shim_lib_is_name(name, names, cl_load() == 0 ? cl_path : NULL))
		return NULL;
	if (cl_load() < 0 || !cl_self)
		return SHIM_DL_NULL;
	return cl_self;
}

SHIM_EARLY void *shim_dlsym_pick(void *handle, const char *name)
{
	shim_dl_init();
	/* Only lookups in the real loader's handle concern us; decided here,
	 * uninstrumented (a sanitizer looks up names such as "clock_getres"
	 * with RTLD_NEXT while it initialises). */
	if (!name || name[0] != 'c' || name[1] != 'l' || !handle ||
	    handle != __atomic_load_n(&cl_handle, __ATOMIC_RELAXED))
		return NULL;
	return cl_dlsym_loader(handle, name);
}

/* Lookups in the real loader's handle get the shim's entry points. */
static void *cl_dlsym_loader(void *handle, const char *name)
{
	if (handle != cl_handle || !cl_handle)
		return NULL;
	return shim_dl_sym(cl_self ? cl_self : RTLD_DEFAULT, name);
}

/*
 * Extension lookups may name core functions, or extension forms of them
 * that the shim schedules under their core name: answer with the shim's
 * entry point when it has one of that exact name.
 */
static void *cl_ext_address(const char *name, void *real)
{
	void *own;

	if (!name || !real || cl_passthrough())
		return real;
	own = cl_self_sym(name);
	return own ? own : real;
}

XS_CL_HOOK void *clGetExtensionFunctionAddress(const char *name)
{
	void *real = cl_load() == 0 ? cl_real.clGetExtensionFunctionAddress(name) : NULL;

	return cl_ext_address(name, real);
}

XS_CL_HOOK void *clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
							  const char *name)
{
	void *real = NULL;

	if (cl_load() == 0)
		real = cl_real.clGetExtensionFunctionAddressForPlatform(platform, name);
	return cl_ext_address(name, real);
}
