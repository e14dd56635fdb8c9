/*
 * Monotonic time in nanoseconds, exact busy-waits and absolute sleeps.
 *
 * The simulated device busy-spins against CLOCK_MONOTONIC because sleeping
 * on these machines overshoots by tens of microseconds; sleeps are used only
 * where that jitter is harmless (pacing, watchdogs).
 */
#ifndef XS_BASE_CLOCK_H
#define XS_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC  1000000000ull

static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline struct timespec clock_ns_to_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};
	return ts;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Busy-waits until CLOCK_MONOTONIC reaches @deadline_ns. */
static inline void clock_spin_until(uint64_t deadline_ns)
{
	while (clock_now_ns() < deadline_ns)
		cpu_relax();
}

/*
 * Sleeps until the absolute CLOCK_MONOTONIC time @deadline_ns (restarting
 * after signals). Overshoot of tens of microseconds is normal.
 */
void clock_sleep_until(uint64_t deadline_ns);

#endif
