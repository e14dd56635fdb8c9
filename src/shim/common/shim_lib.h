/*
 * What every interposing shim needs to reach the vendor library it stands
 * in front of: the real dlopen/dlsym (the shims hook both), and finding
 * the real library file by absolute path, never through the dynamic
 * loader's search, which may return the shim itself (shims carry the
 * vendor's SONAME).
 *
 * Compiled into each shim: the state below (the real dlopen/dlsym) is
 * private to the shim library that contains it.
 */
#ifndef XS_SHIM_LIB_H
#define XS_SHIM_LIB_H

#include <stdbool.h>
#include <stddef.h>

/* Answer of a shim's dl*_pick functions meaning "return NULL". */
#define SHIM_DL_NULL ((void *)1)

/*
 * The dl hooks run inside everyone's dlsym/dlopen, including a sanitizer
 * runtime's own lookups before it is initialised: that path must not be
 * instrumented, and must answer names of no interest without touching
 * anything (no pthread_once, no libc string functions).
 */
#define SHIM_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

/* Resolves the next dlsym/dlopen once (racing threads find the same). */
SHIM_EARLY void shim_dl_init(void);

/* The real dlsym and dlopen (the next definitions after the shim's). */
void *shim_dl_sym(void *handle, const char *name);
void *shim_dl_open(const char *path, int flags);

/* Whether @name contains @what (SHIM_EARLY: no library call). */
SHIM_EARLY bool shim_dl_mentions(const char *name, const char *what);

/*
 * Whether @name names the vendor library: its base name is one of @names
 * (NULL-terminated), or it is @real_path itself.
 */
bool shim_lib_is_name(const char *name, const char *const *names, const char *real_path);

/*
 * Finds the real library @soname: at $@env if set (honoured or failing,
 * never searched past), else in /etc/ld.so.cache, the standard library
 * directories, @extra_dirs (':'-separated, may be NULL) and
 * $LD_LIBRARY_PATH. Relative paths ($@env, entries of the lists) are
 * taken from the current directory, as the dynamic loader does. Skips the
 * file containing @self_addr (the shim) and stub libraries ("/stubs/" in
 * the path). Writes the absolute path into @out and returns true; when
 * nothing fits, returns false and says so at error level (XSCHED_LOG),
 * with what was tried and @instead (what the application sees then).
 */
bool shim_lib_find(const char *soname, const char *env, const char *extra_dirs,
		   const void *self_addr, const char *instead, char *out, size_t len);

/*
 * dlopen()s @path (absolute) RTLD_NOW | RTLD_LOCAL with the real dlopen;
 * on failure says why at error level, with @instead. The handle or NULL.
 */
void *shim_lib_open(const char *path, const char *instead);

/* The shim containing @self_addr, as dlopen() returns it, or NULL. */
void *shim_lib_self(const void *self_addr);

#endif
