/*
 * XSCHED_LOG (see xlog.h).
 *
 * Why a library logs here: STYLE.md has libraries return errors and
 * programs log them, but the shims run inside applications that never
 * heard of xsched. When the shim cannot find the vendor driver, the
 * daemon is absent or hung, or a setting is malformed, the application
 * sees at most a vendor error code (a missing driver is cuInit() = 3) and
 * its user sees nothing at all. So the shims and the agent say so
 * themselves, in the narrowest way that still reaches a person: one line
 * on stderr per cause, once per process, naming the cause and what
 * happens instead. Nothing else in xsched writes to stderr, and nothing
 * here is on the per-command path at the default level: hot-path callers
 * test xlog_on() (one relaxed load) before formatting anything.
 */
#include "base/xlog.h"
#include "base/compiler.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XLOG_LINE 1024

_Atomic int xlog_max;

static void xlog_write(const char *fmt, va_list ap)
{
	char buf[XLOG_LINE];
	int n, err = errno;
	size_t len;

	memcpy(buf, "xsched: ", 8);
	n = vsnprintf(buf + 8, sizeof(buf) - 8 - 1, fmt, ap);
	len = n < 0 ? 8 : BASE_MIN(8 + (size_t)n, sizeof(buf) - 2);
	buf[len++] = '\n';
	if (write(STDERR_FILENO, buf, len) < 0)
		(void)errno;
	errno = err;
}

static void xlog_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xlog_write(fmt, ap);
	va_end(ap);
}

int xlog_init(void)
{
	static const char *const names[] = { NULL, "error", "warn", "info", "debug" };
	const char *v = getenv("XSCHED_LOG");
	int level = 0, prev = 0;

	for (int i = XLOG_ERROR; i <= XLOG_DEBUG && v && *v; i++)
		if (!strcmp(v, names[i]))
			level = i;
	/* Threads racing here agree; only the one that sets it complains. */
	if (atomic_compare_exchange_strong(&xlog_max, &prev, level ? level : XLOG_WARN) &&
	    !level && v && *v)
		xlog_say("XSCHED_LOG=%s is not error, warn, info or debug: using warn", v);
	return atomic_load(&xlog_max);
}

void xlog(enum xlog_level level, const char *fmt, ...)
{
	va_list ap;

	if (!xlog_on(level))
		return;
	va_start(ap, fmt);
	xlog_write(fmt, ap);
	va_end(ap);
}

bool xlog_once(_Atomic bool *said, enum xlog_level level, const char *fmt, ...)
{
	va_list ap;

	if (atomic_load_explicit(said, memory_order_relaxed) || !xlog_on(level) ||
	    atomic_exchange(said, true))
		return false;
	va_start(ap, fmt);
	xlog_write(fmt, ap);
	va_end(ap);
	return true;
}

long xlog_env_long(const char *name, long lo, long hi, long dflt, _Atomic bool *said)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtol(v, &end, 10);
	if (!errno && !*end && x >= lo && x <= hi)
		return x;
	xlog_once(said, XLOG_WARN, "%s=%s is not an integer from %ld to %ld: using %ld", name, v,
		  lo, hi, dflt);
	return dflt;
}
