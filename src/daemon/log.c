/*
 * Daemon logging to stderr (see log.h): syslog priority prefixes for
 * journald or a file, timestamps and level words on a terminal.
 */
#include "daemon/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

bool xsd_verbose;

void xsd_log(int prio, const char *fmt, ...)
{
	static int tty = -1;
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (tty < 0)
		tty = isatty(2);
	if (tty) {
		static const char *const word[] = { "", "", "", "error: ", "warning: ", "", "",
						     "debug: " };
		struct timeval tv;
		struct tm tm;
		char when[32];

		gettimeofday(&tv, NULL);
		localtime_r(&tv.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld xschedd: %s%s\n", when, (long)(tv.tv_usec / 1000),
			prio >= 0 && prio <= 7 ? word[prio] : "", line);
		return;
	}
	fprintf(stderr, "<%d>xschedd: %s\n", prio, line);
}

char *xsd_printable(char *out, size_t len, const char *in, size_t inlen)
{
	size_t i, o = 0;

	for (i = 0; i < inlen && in[i] && o + 1 < len; i++)
		out[o++] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[o] = '\0';
	return out;
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

void xsd_libbpf_log(const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	xsd_debug("libbpf: %s", line);
}
