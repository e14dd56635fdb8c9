/*
 * Absolute-time sleeping (see clock.h for why spinning is preferred when
 * exactness matters).
 */
#include "base/clock.h"

#include <errno.h>

void clock_sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = clock_ns_to_timespec(deadline_ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
