/*
 * Finding and loading the real Level Zero loader, resolving the entry
 * points, the pass-through decision and the dlopen/dlsym hooks (see
 * ze_shim.h).
 *
 * The real loader is looked for at $XSCHED_ZE_LIB, else in the dynamic
 * loader's cache, the standard library directories and $LD_LIBRARY_PATH,
 * skipping this very file (the shim can sit first on LD_LIBRARY_PATH under
 * the name libze_loader.so.1; relative paths are taken from the current
 * directory); it is opened with the real dlopen, RTLD_LOCAL, by absolute
 * path (shim/common/shim_lib.h). Not finding it is said once on stderr
 * (XSCHED_LOG).
 *
 * The real loader calls a few of its own exports through its PLT (the
 * zeGet*ProcAddrTable functions, zeLoaderInit, ...): those calls land on
 * the shim's trampolines, which jump back into it. The loader's C++
 * internals, which its constructor calls while dlopen() is still running,
 * are not exported by the shim (src/vendor/ze/ze_functions.def), so
 * loading it never re-enters ze_load().
 */
#include "shim/ze/ze_shim.h"
#include "agent/agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* --- the exports (ze_trampolines.S jumps through ze_tramp_fn[]) ------------- */

/* Every row of ze_functions.def, in row order: the trampolines' slots. */
static const char *const ze_export_names[] = {
#define XS_ZE_FN(name, how) #name,
#include "vendor/ze/ze_functions.def"
};

#define ZE_NEXPORTS (sizeof(ze_export_names) / sizeof(ze_export_names[0]))

/* Read by the trampolines; written once per entry by ze_tramp_resolve(). */
__attribute__((visibility("hidden"))) void *ze_tramp_fn[ZE_NEXPORTS];

struct xal_ze_fns ze_real;

static struct {
	pthread_once_t once;
	void *handle;                   /* the real loader */
	int rc;
	char path[PATH_MAX];
} zl = { .once = PTHREAD_ONCE_INIT, .rc = -ENOENT };

/* What the application sees without a loader (XSCHED_LOG messages). */
#define ZE_INSTEAD "Level Zero calls fail with ZE_RESULT_ERROR_UNINITIALIZED, as without a loader"

static _Thread_local int ze_in_driver;
static _Atomic bool ze_forked;

static void ze_load_once(void)
{
	void *h = NULL;

	ze_enter_driver();
	if (shim_lib_find("libze_loader.so.1", "XSCHED_ZE_LIB", NULL, (const void *)ze_load_once,
			  ZE_INSTEAD, zl.path, sizeof(zl.path)))
		h = shim_lib_open(zl.path, ZE_INSTEAD);
	if (h) {
#define ZE_RESOLVE_PASS(name)
#define ZE_RESOLVE_CALL(name) ze_real.name = (__typeof__(&name))shim_dl_sym(h, #name);
#define ZE_RESOLVE_HOOK(name) ZE_RESOLVE_CALL(name)
#define XS_ZE_FN(name, how) ZE_RESOLVE_##how(name)
#include "vendor/ze/ze_functions.def"
		zl.rc = 0;
		/* Pairs with the acquire in shim_dlsym_pick(), which runs outside
		 * pthread_once(). */
		__atomic_store_n(&zl.handle, h, __ATOMIC_RELEASE);
	} else {
		zl.path[0] = '\0';
	}
	ze_leave_driver();
}

int ze_load(void)
{
	pthread_once(&zl.once, ze_load_once);
	return zl.rc;
}

const char *ze_real_path(void)
{
	return zl.path;
}

/* What an entry point does without a real loader. */
static ze_result_t ze_missing(void)
{
	return ZE_RESULT_ERROR_UNINITIALIZED;
}

/* Called by the trampolines on an entry point's first use. */
__attribute__((visibility("hidden"))) void *ze_tramp_resolve(unsigned idx);

void *ze_tramp_resolve(unsigned idx)
{
	void *fn = NULL;

	if (idx < ZE_NEXPORTS && ze_load() == 0)
		fn = shim_dl_sym(__atomic_load_n(&zl.handle, __ATOMIC_ACQUIRE),
				 ze_export_names[idx]);
	if (!fn)
		fn = (void *)ze_missing;
	if (idx < ZE_NEXPORTS)
		__atomic_store_n(&ze_tramp_fn[idx], fn, __ATOMIC_RELEASE);
	return fn;
}

/* --- pass-through ------------------------------------------------------------ */

static void ze_atfork_child(void)
{
	/* A child inherits neither the parent's queues nor its threads. */
	atomic_store(&ze_forked, true);
}

/* Scheduling or not is decided once, at the first call that asks. */
static bool ze_decide(void)
{
	if (ze_load() < 0 || agent_mode() == AGENT_NONE)
		return false;
	pthread_atfork(NULL, NULL, ze_atfork_child);
	return true;
}

bool ze_passthrough(void)
{
	/* 0: undecided, 1: scheduling, 2: pass-through. */
	static _Atomic int mode;
	static pthread_mutex_t decide = PTHREAD_MUTEX_INITIALIZER;
	int m;

	if (ze_in_driver || atomic_load_explicit(&ze_forked, memory_order_relaxed))
		return true;
	m = atomic_load_explicit(&mode, memory_order_acquire);
	if (m)
		return m == 2;
	pthread_mutex_lock(&decide);
	m = atomic_load(&mode);
	if (!m) {
		m = ze_decide() ? 1 : 2;
		atomic_store_explicit(&mode, m, memory_order_release);
	}
	pthread_mutex_unlock(&decide);
	return m == 2;
}

void ze_enter_driver(void)
{
	ze_in_driver++;
}

void ze_leave_driver(void)
{
	ze_in_driver--;
}

/* --- dlopen / dlsym ------------------------------------------------------------ */

/*
 * This library, as dlopen() returns it, for lookups in it. Found only
 * when an application reaches the loader through dlopen or dlsym: asking
 * the dynamic loader about a preloaded library makes it allocate the
 * library's dependency list, which LeakSanitizer cannot see referenced.
 */
static pthread_once_t ze_self_once = PTHREAD_ONCE_INIT;
static void *ze_self_handle;

static void ze_self_find(void)
{
	ze_self_handle = shim_lib_self((const void *)ze_self_find);
}

static void *ze_self(void)
{
	pthread_once(&ze_self_once, ze_self_find);
	return ze_self_handle;
}

__attribute__((visibility("hidden"))) void *shim_dlopen_pick(const char *name, int flags);
__attribute__((visibility("hidden"))) void *shim_dlsym_pick(void *handle, const char *name);

/* dlopen of a name that may be the loader's: the shim, or NULL (go on). */
static void *ze_dlopen_loader(const char *name)
{
	static const char *const names[] = { "libze_loader.so", "libze_loader.so.1", NULL };
	void *self;

	if (ze_in_driver)
		return NULL;
	if (!shim_lib_is_name(name, names, ze_load() == 0 ? zl.path : NULL))
		return NULL;
	/* Without a real loader, answer as the system would: no library.
	 * Each answer holds a reference of its own, as dlopen's do. */
	self = zl.rc < 0 ? NULL : shim_lib_self((const void *)ze_dlopen_loader);
	return self ? self : SHIM_DL_NULL;
}

SHIM_EARLY void *shim_dlopen_pick(const char *name, int flags)
{
	(void)flags;
	shim_dl_init();
	if (!shim_dl_mentions(name, "libze_loader.so"))
		return NULL;
	return ze_dlopen_loader(name);
}

/* dlsym in the real loader's handle: our entry point of that name. */
static void *ze_dlsym_loader(const char *name)
{
	void *self;

	if (ze_in_driver)
		return NULL;
	self = ze_self();
	return shim_dl_sym(self ? self : RTLD_DEFAULT, name);
}

SHIM_EARLY void *shim_dlsym_pick(void *handle, const char *name)
{
	void *real;

	shim_dl_init();
	if (!name || name[0] != 'z' || name[1] != 'e' || !handle)
		return NULL;
	real = __atomic_load_n(&zl.handle, __ATOMIC_ACQUIRE);
	return real && handle == real ? ze_dlsym_loader(name) : NULL;
}
