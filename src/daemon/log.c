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
