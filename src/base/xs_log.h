/*
 * XSCHED_LOG: the one way xsched's libraries speak (see xs_log.c for why
 * they speak at all). A message is one line on stderr, "xsched: " then
 * the cause and what happens instead, said once per process per cause
 * (XS_LOG_ONCE) when its level is within XSCHED_LOG=error|warn|info|debug
 * (default warn).
 */
#ifndef XS_BASE_XS_LOG_H
#define XS_BASE_XS_LOG_H

#include <stdatomic.h>
#include <stdbool.h>

enum xs_log_level {
	XS_LOG_ERROR = 1,   /* xsched cannot work at all here (no driver) */
	XS_LOG_WARN = 2,    /* it works, not as asked (unscheduled, ignored setting) */
	XS_LOG_INFO = 3,    /* state changes worth knowing (connected again) */
	XS_LOG_DEBUG = 4,   /* events (each registration, each connection attempt) */
};

/* The level in effect; XSCHED_LOG is read at the first call. */
extern _Atomic int xs_log_max;
int xs_log_init(void);

/*
 * Whether messages of @level are written: one relaxed load once
 * initialised. Any thread; the check for hot paths.
 */
static inline bool xs_log_on(enum xs_log_level level)
{
	int max = atomic_load_explicit(&xs_log_max, memory_order_relaxed);

	return (int)level <= (max ? max : xs_log_init());
}

/*
 * Writes "xsched: <message>\n" to stderr (one write(2), so lines of
 * several threads do not mix; cut at 1 KiB) if @level is on. errno is
 * preserved. Any thread, any locks held (it takes none).
 */
void xs_log(enum xs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The same, at most once per process for @said (a flag of the caller's,
 * zero-initialised). Returns whether it wrote.
 */
bool xs_log_once(_Atomic bool *said, enum xs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* xs_log_once() with a flag of its own at the call site: one cause. */
#define XS_LOG_ONCE(level, ...)                                              \
	do {                                                                 \
		static _Atomic bool xs_log_said_;                            \
		xs_log_once(&xs_log_said_, (level), __VA_ARGS__);            \
	} while (0)

#endif
