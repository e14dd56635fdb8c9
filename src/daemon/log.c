/*
 * Daemon logging to stderr with syslog priority prefixes (see log.h).
 */
#include "daemon/log.h"

#include <stdarg.h>
#include <stdio.h>

bool xsd_verbose;

void xsd_log(int prio, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "<%d>xschedd: %s\n", prio, line);
}

bool xsd_ratelimit_ok(struct xsd_ratelimit *rl, uint64_t now_ns, uint64_t *missed)
{
	if (rl->last_ns && now_ns - rl->last_ns < rl->interval_ns) {
		rl->missed++;
		return false;
	}
	*missed = rl->missed;
	rl->missed = 0;
	rl->last_ns = now_ns;
	return true;
}
