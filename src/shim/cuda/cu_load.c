/*
 * Finding and loading the real CUDA driver, resolving its entry points,
 * and the dlopen/dlsym hooks (see cu_shim.h).
 *
 * The real driver is looked for, in order, at $XSCHED_CUDA_LIB, in the
 * dynamic loader's cache (/etc/ld.so.cache), in the standard library
 * directories and in $LD_LIBRARY_PATH; a candidate that is this very file
 * (the shim can sit first on LD_LIBRARY_PATH under the name libcuda.so.1)
 * or the toolkit's stub library is skipped. It is opened with the real
 * dlopen, RTLD_LOCAL, by absolute path.
 */
#include "shim/cuda/cu_shim.h"
#include "agent/agent.h"

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

static const char *const cu_export_names[] = {
#define XS_CU_EXPORT(name) #name,
#include "shim/cuda/cu_exports.def"
#undef XS_CU_EXPORT
};

#define CU_NEXPORTS (sizeof(cu_export_names) / sizeof(cu_export_names[0]))

/* Read by the trampolines; written once per entry by cu_resolve(). */
__attribute__((visibility("hidden"))) void *xs_cu_real[CU_NEXPORTS];

/* The real dlsym and dlopen, tail-called by the hooks in the trampolines. */
__attribute__((visibility("hidden"))) void *xs_real_dlsym;
__attribute__((visibility("hidden"))) void *xs_real_dlopen;

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);

struct cu_fns cu_real;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static bool cu_dl_ready;
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

/*
 * The dl hooks run inside everyone's dlsym/dlopen, including a sanitizer
 * runtime's own lookups before it is initialised: that path must not be
 * instrumented, and answers non-CUDA names without touching anything.
 */
#define CU_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

CU_EARLY static void cu_dl_resolve(void)
{
	void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");

	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&xs_real_dlsym, p, __ATOMIC_RELAXED);
	p = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
	if (!p)
		p = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
	__atomic_store_n(&xs_real_dlopen, p, __ATOMIC_RELAXED);
	__atomic_store_n(&cu_dl_ready, true, __ATOMIC_RELEASE);
}

/*
 * Resolves the real dlsym/dlopen once. No pthread_once: the hooks run while
 * a sanitizer runtime initialises, before its pthread interceptors work.
 * Threads that race resolve the same pointers.
 */
CU_EARLY static void cu_dl_init(void)
{
	if (!__atomic_load_n(&cu_dl_ready, __ATOMIC_ACQUIRE))
		cu_dl_resolve();
}

static void *cu_dlsym(void *h, const char *name)
{
	cu_dl_init();
	return ((dlsym_fn)__atomic_load_n(&xs_real_dlsym, __ATOMIC_RELAXED))(h, name);
}

static void *cu_dlopen(const char *path, int flags)
{
	cu_dl_init();
	return ((dlopen_fn)__atomic_load_n(&xs_real_dlopen, __ATOMIC_RELAXED))(path, flags);
}

/* --- finding the real driver -------------------------------------------- */

static bool cu_same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* A candidate is usable if it exists, is not the shim and not a stub. */
static bool cu_candidate(const char *path, const struct stat *self)
{
	struct stat st;

	if (!path || path[0] != '/' || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	if (self && cu_same_file(self, path))
		return false;
	return strstr(path, "/stubs/") == NULL;
}

/*
 * Looks "libcuda.so.1" up in /etc/ld.so.cache (the "glibc-ld.so.cache1.1"
 * format: header, entries of flags/key/value/osversion/hwcap, string
 * offsets from the file start). Writes the first usable path.
 */
static bool cu_from_ldcache(char *out, size_t len, const struct stat *self)
{
	static const char magic[] = "glibc-ld.so.cache1.1";
	struct stat st;
	const char *base;
	size_t size;
	uint32_t n, i;
	bool found = false;
	int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || st.st_size < 48) {
		close(fd);
		return false;
	}
	size = (size_t)st.st_size;
	base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return false;
	if (memcmp(base, magic, sizeof(magic) - 1))
		goto out;
	memcpy(&n, base + 20, sizeof(n));
	for (i = 0; i < n && !found; i++) {
		size_t off = 48 + (size_t)i * 24;
		uint32_t key, value;

		if (off + 24 > size)
			break;
		memcpy(&key, base + off + 4, 4);
		memcpy(&value, base + off + 8, 4);
		if (key >= size || value >= size || !memchr(base + key, 0, size - key) ||
		    !memchr(base + value, 0, size - value))
			continue;
		if (strcmp(base + key, "libcuda.so.1") || !cu_candidate(base + value, self))
			continue;
		found = (size_t)snprintf(out, len, "%s", base + value) < len;
	}
out:
	munmap((void *)base, size);
	return found;
}

static bool cu_from_dirs(const char *dirs, char sep, char *out, size_t len,
			 const struct stat *self)
{
	const char *p = dirs;

	while (p && *p) {
		const char *end = strchr(p, sep);
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n && (size_t)snprintf(out, len, "%.*s/libcuda.so.1", (int)n, p) < len &&
		    cu_candidate(out, self))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static bool cu_find(char *out, size_t len)
{
	static const char std_dirs[] =
		"/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib64:/lib64:"
		"/usr/lib:/lib:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:/usr/lib/wsl/lib";
	const char *env = getenv("XSCHED_CUDA_LIB");
	struct stat self_st, *self = NULL;
	Dl_info info;

	if (dladdr((void *)cu_find, &info) && info.dli_fname && stat(info.dli_fname, &self_st) == 0)
		self = &self_st;
	if (env && *env) {
		/* An explicit choice is honoured or fails; never searched past. */
		if (!cu_candidate(env, self))
			return false;
		return (size_t)snprintf(out, len, "%s", env) < len;
	}
	return cu_from_ldcache(out, len, self) ||
	       cu_from_dirs(std_dirs, ':', out, len, self) ||
	       cu_from_dirs(getenv("LD_LIBRARY_PATH"), ':', out, len, self);
}

static void cu_load_once(void)
{
	Dl_info info;

	cu_enter_driver();
	if (dladdr((void *)cu_load_once, &info) && info.dli_fname)
		cu_self = cu_dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!cu_find(cu_path, sizeof(cu_path))) {
		cu_path[0] = '\0';
		goto out;
	}
	cu_handle = cu_dlopen(cu_path, RTLD_NOW | RTLD_LOCAL);
	if (!cu_handle) {
		cu_path[0] = '\0';
		goto out;
	}
#define XS_CU_RESOLVE(name, params) cu_real.name = (__typeof__(&name))cu_dlsym(cu_handle, #name);
	XS_CU_FUNCTIONS(XS_CU_RESOLVE)
#undef XS_CU_RESOLVE
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

void *cu_self_sym(const char *name);

/* The real driver's function @name, or NULL. */
void *cu_real_sym(const char *name)
{
	return cu_load() == 0 ? cu_dlsym(cu_handle, name) : NULL;
}

/* This library's own entry point @name (a hook or a trampoline). */
void *cu_self_sym(const char *name)
{
	cu_load();
	return cu_self ? cu_dlsym(cu_self, name) : NULL;
}

/* Called by the trampolines on an entry point's first use. */
__attribute__((visibility("hidden"))) void *xs_cu_resolve(unsigned idx);

void *xs_cu_resolve(unsigned idx)
{
	void *fn = NULL;

	if (idx >= CU_NEXPORTS)
		return (void *)cu_missing;
	if (cu_load() == 0)
		fn = cu_dlsym(cu_handle, cu_export_names[idx]);
	if (!fn)
		fn = (void *)cu_missing;
	__atomic_store_n(&xs_cu_real[idx], fn, __ATOMIC_RELEASE);
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
		m = xs_agent_mode() == XS_AGENT_NONE ? 2 : 1;
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

/* Whether @s starts with @prefix (no library call: see CU_EARLY). */
CU_EARLY static bool cu_starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

/* Whether @name may name the driver: "libcuda.so" somewhere in it. */
CU_EARLY static bool cu_maybe_driver(const char *name)
{
	for (; name && *name; name++)
		if (*name == 'l' && cu_starts(name, "libcuda.so"))
			return true;
	return false;
}

/* Names applications use to open the driver. */
static bool cu_is_driver_name(const char *name)
{
	const char *base;

	if (!name)
		return false;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!strcmp(base, "libcuda.so") || !strcmp(base, "libcuda.so.1"))
		return true;
	/* An absolute path of the real driver itself. */
	return name[0] == '/' && cu_load() == 0 && !strcmp(name, cu_path);
}

__attribute__((visibility("hidden"))) void *xs_dlopen_pick(const char *name, int flags);
__attribute__((visibility("hidden"))) void *xs_dlsym_pick(void *handle, const char *name);
static void *cu_dlopen_driver(const char *name, int flags);
static void *cu_dlsym_driver(void *handle, const char *name);

CU_EARLY void *xs_dlopen_pick(const char *name, int flags)
{
	cu_dl_init();
	if (!cu_maybe_driver(name))
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
		return XS_DL_NULL;
	return cu_self;
}

CU_EARLY void *xs_dlsym_pick(void *handle, const char *name)
{
	cu_dl_init();
	if (!name || name[0] != 'c' || name[1] != 'u' || !handle)
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
