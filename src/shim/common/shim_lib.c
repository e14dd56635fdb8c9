/*
 * The real dlopen/dlsym and finding a vendor library (see shim_lib.h).
 */
#include "shim/common/shim_lib.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tail-called by the dl hooks (shim_asm.h); private to each shim. */
__attribute__((visibility("hidden"))) void *xs_real_dlsym;
__attribute__((visibility("hidden"))) void *xs_real_dlopen;

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);

static bool xs_dl_ready;

XS_EARLY static void *xs_dl_next(const char *name)
{
	void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");

	return p ? p : dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
}

/* No pthread_once: this runs while a sanitizer runtime initialises,
 * before its pthread interceptors work. */
XS_EARLY void xs_dl_init(void)
{
	if (__atomic_load_n(&xs_dl_ready, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&xs_real_dlsym, xs_dl_next("dlsym"), __ATOMIC_RELAXED);
	__atomic_store_n(&xs_real_dlopen, xs_dl_next("dlopen"), __ATOMIC_RELAXED);
	__atomic_store_n(&xs_dl_ready, true, __ATOMIC_RELEASE);
}

void *xs_dl_sym(void *handle, const char *name)
{
	xs_dl_init();
	return ((dlsym_fn)__atomic_load_n(&xs_real_dlsym, __ATOMIC_RELAXED))(handle, name);
}

void *xs_dl_open(const char *path, int flags)
{
	xs_dl_init();
	return ((dlopen_fn)__atomic_load_n(&xs_real_dlopen, __ATOMIC_RELAXED))(path, flags);
}

XS_EARLY static bool xs_dl_starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

XS_EARLY bool xs_dl_mentions(const char *name, const char *what)
{
	for (; name && *name; name++)
		if (*name == what[0] && xs_dl_starts(name, what))
			return true;
	return false;
}

bool xs_lib_is_name(const char *name, const char *const *names, const char *real_path)
{
	const char *base;

	if (!name)
		return false;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (; *names; names++)
		if (!strcmp(base, *names))
			return true;
	return name[0] == '/' && real_path && real_path[0] && !strcmp(name, real_path);
}

/* --- finding the real library ------------------------------------------- */

static bool xs_same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* A candidate is usable if it exists, is not the shim and not a stub. */
static bool xs_candidate(const char *path, const struct stat *self)
{
	struct stat st;

	if (!path || path[0] != '/' || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	if (self && xs_same_file(self, path))
		return false;
	return strstr(path, "/stubs/") == NULL;
}

/*
 * Looks @soname up in /etc/ld.so.cache (the "glibc-ld.so.cache1.1"
 * format: header, entries of flags/key/value/osversion/hwcap, string
 * offsets from the file start). Writes the first usable path.
 */
static bool xs_from_ldcache(const char *soname, char *out, size_t len,
			    const struct stat *self)
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
		if (strcmp(base + key, soname) || !xs_candidate(base + value, self))
			continue;
		found = (size_t)snprintf(out, len, "%s", base + value) < len;
	}
out:
	munmap((void *)base, size);
	return found;
}

static bool xs_from_dirs(const char *soname, const char *dirs, char *out, size_t len,
			 const struct stat *self)
{
	const char *p = dirs;

	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, p, soname) < len &&
		    xs_candidate(out, self))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

bool xs_lib_find(const char *soname, const char *env, const char *extra_dirs,
		 const void *self_addr, char *out, size_t len)
{
	static const char std_dirs[] =
		"/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib64:/lib64:"
		"/usr/lib:/lib";
	const char *val = env ? getenv(env) : NULL;
	struct stat self_st, *self = NULL;
	Dl_info info;

	if (dladdr(self_addr, &info) && info.dli_fname && stat(info.dli_fname, &self_st) == 0)
		self = &self_st;
	if (val && *val) {
		if (!xs_candidate(val, self))
			return false;
		return (size_t)snprintf(out, len, "%s", val) < len;
	}
	return xs_from_ldcache(soname, out, len, self) ||
	       xs_from_dirs(soname, std_dirs, out, len, self) ||
	       xs_from_dirs(soname, extra_dirs, out, len, self) ||
	       xs_from_dirs(soname, getenv("LD_LIBRARY_PATH"), out, len, self);
}

void *xs_lib_self(const void *self_addr)
{
	Dl_info info;

	if (!dladdr(self_addr, &info) || !info.dli_fname)
		return NULL;
	return xs_dl_open(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}
