/*
 * Short slices for xsched's threads (see slice.h). sched_setattr() is
 * called directly: glibc 2.36 has no wrapper, and its struct is the
 * kernel's (the first 48 bytes, SCHED_ATTR_SIZE_VER1, are all we use).
 */
#include "base/slice.h"
#include "base/xlog.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

struct slice_attr {
	uint32_t size;
	uint32_t policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime;       /* for SCHED_OTHER since 6.12: the slice, ns */
	uint64_t deadline;
	uint64_t period;
	uint32_t util_min;
	uint32_t util_max;
};

uint32_t slice_wanted_us(void)
{
	static _Atomic bool said;
	const char *v = getenv("XSCHED_THREAD_SLICE_US");
	char *end;
	long long x;

	if (!v || !*v)
		return SLICE_DEFAULT_US;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (!errno && !*end && (x == 0 || (x >= SLICE_MIN_US && x <= SLICE_MAX_US)))
		return (uint32_t)x;
	xlog_once(&said, XLOG_WARN, "XSCHED_THREAD_SLICE_US=%s is neither 0 nor an integer "
		  "from %u to %u: ignored, as if unset (%u)", v, SLICE_MIN_US, SLICE_MAX_US,
		  SLICE_DEFAULT_US);
	return SLICE_DEFAULT_US;
}

int slice_set_thread(uint32_t us)
{
	struct slice_attr at;

	memset(&at, 0, sizeof(at));
	if (syscall(SYS_sched_getattr, 0, &at, (unsigned)sizeof(at), 0))
		return -errno;
	if (at.policy != SCHED_OTHER)
		return -EAGAIN;
	/* Everything else as it was: the nice value above all. */
	at.size = sizeof(at);
	at.flags &= SCHED_FLAG_RESET_ON_FORK;
	at.runtime = (uint64_t)us * 1000;
	if (syscall(SYS_sched_setattr, 0, &at, 0))
		return -errno;
	return 0;
}

int slice_apply(void)
{
	uint32_t us = slice_wanted_us();

	return us ? slice_set_thread(us) : 0;
}
