/*
 * The real dlopen/dlsym and finding a vendor library (see shim_lib.h).
 *
 * A search that finds nothing says so (XSCHED_LOG, base/xlog.h) with the
 * places it looked in: without it the application only sees the vendor's
 * "not initialised" error and its user has nothing to go on.
 */
#include "shim/common/shim_lib.h"
#include "agent/agent_enforce.h"
#include "base/compiler.h"
#include "base/xlog.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tail-called by the dl hooks (shim_asm.h); private to each shim. */
__attribute__((visibility("hidden"))) void *shim_real_dlsym;
__attribute__((visibility("hidden"))) void *shim_real_dlopen;

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);

static bool shim_dl_ready;

SHIM_EARLY static void *shim_dl_next(const char *name)
{
	void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");

	return p ? p : dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
}

/* No pthread_once: this runs while a sanitizer runtime initialises,
 * before its pthread interceptors work. */
SHIM_EARLY void shim_dl_init(void)
{
	if (__atomic_load_n(&shim_dl_ready, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&shim_real_dlsym, shim_dl_next("dlsym"), __ATOMIC_RELAXED);
	__atomic_store_n(&shim_real_dlopen, shim_dl_next("dlopen"), __ATOMIC_RELAXED);
	__atomic_store_n(&shim_dl_ready, true, __ATOMIC_RELEASE);
}

void *shim_dl_sym(void *handle, const char *name)
{
	shim_dl_init();
	return ((dlsym_fn)__atomic_load_n(&shim_real_dlsym, __ATOMIC_RELAXED))(handle, name);
}

void *shim_dl_open(const char *path, int flags)
{
	shim_dl_init();
	return ((dlopen_fn)__atomic_load_n(&shim_real_dlopen, __ATOMIC_RELAXED))(path, flags);
}

SHIM_EARLY static bool shim_dl_starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

SHIM_EARLY bool shim_dl_mentions(const char *name, const char *what)
{
	for (; name && *name; name++)
		if (*name == what[0] && shim_dl_starts(name, what))
			return true;
	return false;
}

bool shim_lib_is_name(const char *name, const char *const *names, const char *real_path)
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

/*
 * What a search tried, for the message when it finds nothing: the places
 * looked in, and the files found there but not taken (with why).
 */
struct shim_search {
	const struct stat *self;
	char tried[768];
	size_t len;
};

static void shim_tried(struct shim_search *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void shim_tried(struct shim_search *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len + 8 >= sizeof(s->tried))
		return;
	if (s->len) {
		memcpy(s->tried + s->len, ", ", 3);
		s->len += 2;
	}
	va_start(ap, fmt);
	n = vsnprintf(s->tried + s->len, sizeof(s->tried) - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len = BASE_MIN(s->len + (size_t)n, sizeof(s->tried) - 1);
}

static bool shim_same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/*
 * Why @path (absolute) cannot be the real library: NULL if it can (it
 * exists, is a regular file, is neither the shim nor a stub), "" if it
 * does not exist, else the reason.
 */
static const char *shim_unusable(const char *path, const struct stat *self)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return "";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (self && shim_same_file(self, path))
		return "the shim itself";
	if (strstr(path, "/stubs/"))
		return "a stub library";
	return NULL;
}

/* A usable candidate; one that exists but is not is noted in @s. */
static bool shim_candidate(const char *path, struct shim_search *s)
{
	const char *why = path && path[0] == '/' ? shim_unusable(path, s->self) : "";

	if (why && *why)
		shim_tried(s, "%s (%s)", path, why);
	return !why;
}

/*
 * @rel made absolute against the current directory (as the dynamic loader
 * takes relative entries of LD_LIBRARY_PATH), symbolic links kept: the
 * application may name the same file. Into @out; false if it does not fit
 * or there is no current directory.
 */
static bool shim_absolute(const char *rel, size_t n, char *out, size_t len)
{
	size_t cl;

	if (n && rel[0] == '/')
		return (size_t)snprintf(out, len, "%.*s", (int)n, rel) < len;
	if (!getcwd(out, len))
		return false;
	cl = strlen(out);
	if (cl && out[cl - 1] == '/')
		cl--;
	return (size_t)snprintf(out + cl, len - cl, "/%.*s", (int)n, rel) < len - cl;
}

/*
 * Looks @soname up in /etc/ld.so.cache (the "glibc-ld.so.cache1.1"
 * format: header, entries of flags/key/value/osversion/hwcap, string
 * offsets from the file start). Writes the first usable path.
 */
static bool shim_from_ldcache(const char *soname, char *out, size_t len, struct shim_search *s)
{
	static const char magic[] = "glibc-ld.so.cache1.1";
	struct stat st;
	const char *base;
	size_t size;
	uint32_t n, i;
	bool found = false;
	int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);

	shim_tried(s, "/etc/ld.so.cache");
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
		if (strcmp(base + key, soname) || !shim_candidate(base + value, s))
			continue;
		found = (size_t)snprintf(out, len, "%s", base + value) < len;
	}
out:
	munmap((void *)base, size);
	return found;
}

/*
 * @soname in each of the ':'-separated @dirs, relative ones from the
 * current directory. With @list, each is named in @s; else (a variable's
 * value, named by the caller) only the relative ones, as what they became.
 */
static bool shim_from_dirs(const char *soname, const char *dirs, bool list, char *out,
			   size_t len, struct shim_search *s)
{
	const char *p = dirs;

	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p), dl;

		if (n && shim_absolute(p, n, out, len)) {
			if (list)
				shim_tried(s, "%s", out);
			else if (p[0] != '/')
				shim_tried(s, "%.*s as %s", (int)n, p, out);
			dl = strlen(out);
			if ((size_t)snprintf(out + dl, len - dl, "/%s", soname) < len - dl &&
			    shim_candidate(out, s))
				return true;
		}
		p = end ? end + 1 : NULL;
	}
	return false;
}

bool shim_lib_find(const char *soname, const char *env, const char *extra_dirs,
		   const void *self_addr, const char *instead, char *out, size_t len)
{
	static const char std_dirs[] =
		"/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib64:/lib64:"
		"/usr/lib:/lib";
	const char *val = env ? getenv(env) : NULL, *path;
	struct shim_search s = { .self = NULL };
	struct stat self_st;
	Dl_info info;

	if (dladdr(self_addr, &info) && info.dli_fname && stat(info.dli_fname, &self_st) == 0)
		s.self = &self_st;
	if (val && *val) {
		const char *why;

		/* Honoured or failing: a path given is never searched past. */
		if (!shim_absolute(val, strlen(val), out, len)) {
			xlog(XLOG_ERROR, "%s=%s: cannot make the path absolute: %s", env, val,
			     instead);
			return false;
		}
		why = shim_unusable(out, s.self);
		if (why) {
			xlog(XLOG_ERROR, "%s=%s: %s%s%s: %s", env, val,
			     val[0] == '/' ? "" : out, val[0] == '/' ? "" : ": ",
			     *why ? why : "no such file", instead);
			return false;
		}
		if (val[0] != '/')
			xlog(XLOG_INFO, "%s=%s: taken as %s", env, val, out);
		return true;
	}
	if (shim_from_ldcache(soname, out, len, &s) ||
	    shim_from_dirs(soname, std_dirs, true, out, len, &s) ||
	    shim_from_dirs(soname, extra_dirs, true, out, len, &s))
		return true;
	path = getenv("LD_LIBRARY_PATH");
	if (path && *path)
		shim_tried(&s, "LD_LIBRARY_PATH=%s", path);
	if (shim_from_dirs(soname, path, false, out, len, &s))
		return true;
	xlog(XLOG_ERROR, "%s not found (%s unset; looked in %s): %s", soname, env, s.tried,
	     instead);
	return false;
}

void *shim_lib_open(const char *path, const char *instead)
{
	void *h = shim_dl_open(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		xlog(XLOG_ERROR, "cannot load %s (%s): %s", path, dlerror(), instead);
	else
		xlog(XLOG_INFO, "opened the real library %s", path);
	return h;
}

void *shim_lib_self(const void *self_addr)
{
	Dl_info info;

	if (!dladdr(self_addr, &info) || !info.dli_fname)
		return NULL;
	return shim_dl_open(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

/* Before main, so before the driver's first open: where xschedd enforces
 * device access, this process registers (agent_enforce.h). */
__attribute__((constructor)) static void shim_enforce_init(void)
{
	agent_enforce_init();
}
