/*
 * What the OpenCL shim tests share: the environment of a program run
 * under the shim on PoCL (preload list, PoCL's kernel cache, leak
 * suppressions for sanitized builds) and reading a child's output with a
 * deadline. Needs the test's XS_SAN_RT, XS_SHIM_PATH, XS_POCL_CACHE and
 * XS_LSAN_SUPP definitions, after test_util.h and it_util.h.
 */
#ifndef XS_CL_TEST_UTIL_H
#define XS_CL_TEST_UTIL_H

#include <poll.h>

/* The preload list of the shim (sanitizer runtime first, when built so). */
static const char *shim_preload(void)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s%s%s", XS_SAN_RT, XS_SAN_RT[0] ? " " : "",
		 XS_SHIM_PATH);
	return buf;
}

static const char *pocl_cache_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "POCL_CACHE_DIR=%s", XS_POCL_CACHE);
	return buf;
}

/* PoCL and LLVM keep allocations until exit (sanitized builds). */
static const char *lsan_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "LSAN_OPTIONS=suppressions=%s:print_suppressions=0",
		 XS_LSAN_SUPP);
	return buf;
}

/* Reads @fd to its end (or until @end_ns); malloc()ed, NUL-terminated. */
static char *slurp(int fd, uint64_t end_ns, bool *timed_out)
{
	size_t len = 0, cap = 65536;
	char *s = calloc(1, cap);

	assert_non_null(s);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = xs_now_ns();
		ssize_t n;

		if (now >= end_ns) {
			*timed_out = true;
			break;
		}
		if (poll(&p, 1, (int)((end_ns - now) / IT_MS) + 1) <= 0)
			continue;
		n = read(fd, s + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len + 1 == cap) {
			s = realloc(s, cap *= 2);
			assert_non_null(s);
		}
	}
	s[len] = '\0';
	return s;
}

#endif
