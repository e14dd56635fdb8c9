/*
 * XSCHED_LOG: the one way xsched's libraries speak (see xlog.c for why
 * they speak at all). A message is one line on stderr, "xsched: " then
 * the cause and what happens instead, said once per process per cause
 * (XLOG_ONCE) when its level is within XSCHED_LOG=error|warn|info|debug
 * (default warn).
 */
#ifndef XS_BASE_XLOG_H
#define XS_BASE_XLOG_H

#include <stdatomic.h>
#include <stdbool.h>

enum xlog_level {
	XLOG_ERROR = 1,   /* xsched cannot work at all here (no driver) */
	XLOG_WARN = 2,    /* it works, not as asked (unscheduled, ignored setting) */
	XLOG_INFO = 3,    /* state changes worth knowing (connected again) */
	XLOG_DEBUG = 4,   /* events (each registration, each connection attempt) */
};

/* The level in effect; XSCHED_LOG is read at the first call. */
extern _Atomic int xlog_max;
int xlog_init(void);

/*
 * Whether messages of @level are written: one relaxed load once
 * initialised. Any thread; the check for hot paths.
 */
static inline bool xlog_on(enum xlog_level level)
{
	int max = atomic_load_explicit(&xlog_max, memory_order_relaxed);

	return (int)level <= (max ? max : xlog_init());
}

/*
 * Writes "xsched: <message>\n" to stderr (one write(2), so lines of
 * several threads do not mix; cut at 1 KiB) if @level is on. errno is
 * preserved. Any thread, any locks held (it takes none).
 */
void xlog(enum xlog_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The same, at most once per process for @said (a flag of the caller's,
 * zero-initialised). Returns whether it wrote.
 */
bool xlog_once(_Atomic bool *said, enum xlog_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The integer in environment variable @name, within @lo..@hi, or @dflt
 * when unset or empty; anything else is said at XLOG_WARN ("NAME=VALUE is
 * not an integer from LO to HI: using DFLT"), once per process for @said,
 * and gives @dflt too.
 */
long xlog_env_long(const char *name, long lo, long hi, long dflt, _Atomic bool *said);

/* xlog_once() with a flag of its own at the call site: one cause. */
#define XLOG_ONCE(level, ...)                                                \
	do {                                                                 \
		static _Atomic bool xlog_said_;                              \
		xlog_once(&xlog_said_, (level), __VA_ARGS__);                \
	} while (0)

#endif
