/*
 * Daemon logging: one line per message to stderr, prefixed with the syslog
 * priority ("<3>", "<4>", "<6>", "<7>") that journald understands. On a
 * terminal the prefix gives way to a timestamp and a level word, for a
 * person. Debug lines, and the info lines of each registration, are
 * printed only with --verbose. Only the daemon logs; libraries return
 * errors.
 */
#ifndef XSD_LOG_H
#define XSD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern bool xsd_verbose;

void xsd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define XSD_ERR 3
#define XSD_WARN 4
#define XSD_NOTICE 5
#define XSD_INFO 6
#define XSD_DEBUG 7

/*
 * A message that can repeat at the rate of an event (a refused connection)
 * is logged at most once per interval; the next one says how many were
 * left out in between.
 */
struct xsd_ratelimit {
	uint64_t interval_ns;
	uint64_t last_ns;                  /* last logged; 0: never */
	uint64_t missed;                   /* left out since */
};

/* True if the message may be logged now; then *@missed tells how many
 * were left out before it. */
bool xsd_ratelimit_ok(struct xsd_ratelimit *rl, uint64_t now_ns, uint64_t *missed);

/*
 * Copies @in (at most @inlen bytes, maybe unterminated: a client's name)
 * into @out with every byte that is not printable ASCII shown as '?', so a
 * client cannot forge log lines. Returns @out.
 */
char *xsd_printable(char *out, size_t len, const char *in, size_t inlen);

/* libbpf's messages (xbpf_set_log()), one line each at debug level. */
void xsd_libbpf_log(const char *fmt, va_list ap);

#define xsd_err(...) xsd_log(XSD_ERR, __VA_ARGS__)
#define xsd_warn(...) xsd_log(XSD_WARN, __VA_ARGS__)
#define xsd_info(...) xsd_log(XSD_INFO, __VA_ARGS__)
#define xsd_debug(...) \
	do { if (xsd_verbose) xsd_log(XSD_DEBUG, __VA_ARGS__); } while (0)

#endif
