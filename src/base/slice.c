/*
 * Short slices, and real-time priority when asked, for xsched's threads
 * (see slice.h). sched_getattr() and sched_setattr() are called directly:
 * glibc 2.36 has no wrappers.
 */
#include "base/slice.h"
#include "base/xlog.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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

uint32_t slice_rt_wanted(void)
{
	static _Atomic bool said;

	return (uint32_t)xlog_env_long("XSCHED_THREAD_RTPRIO", 0, SLICE_RT_MAX, 0, &said);
}

int slice_getattr(pid_t tid, struct slice_attr *out)
{
	struct slice_attr at;

	memset(&at, 0, sizeof(at));
	if (syscall(SYS_sched_getattr, tid, &at, (unsigned)sizeof(at), 0))
		return -errno;
	*out = at;
	return 0;
}

int slice_set_thread(uint32_t us)
{
	struct slice_attr at;
	int rc = slice_getattr(0, &at);

	if (rc < 0)
		return rc;
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

int slice_set_rt(uint32_t prio)
{
	struct slice_attr at;
	int rc;

	if (prio > SLICE_RT_MAX)
		return -EINVAL;
	rc = slice_getattr(0, &at);
	if (rc < 0)
		return rc;
	if (!prio) {
		if (at.policy != SCHED_FIFO && at.policy != SCHED_RR)
			return -EAGAIN;
		/* sched_getattr() reports no nice value for a real-time
		 * thread; the kernel kept it, getpriority() tells. */
		errno = 0;
		at.nice = getpriority(PRIO_PROCESS, 0);
		if (errno)
			return -errno;
	}
	at.size = sizeof(at);
	at.policy = prio ? SCHED_FIFO : SCHED_OTHER;
	at.priority = prio;
	at.flags = prio ? SCHED_FLAG_RESET_ON_FORK : (at.flags & SCHED_FLAG_RESET_ON_FORK);
	at.runtime = at.deadline = at.period = 0;
	if (syscall(SYS_sched_setattr, 0, &at, 0))
		return -errno;
	return 0;
}

int slice_apply_agent(void)
{
	static _Atomic bool said;
	uint32_t prio = slice_rt_wanted();
	int rc;

	if (!prio)
		return slice_apply();
	rc = slice_set_rt(prio);
	if (rc < 0) {
		xlog_once(&said, XLOG_WARN, "XSCHED_THREAD_RTPRIO=%u: the agent thread cannot "
			  "have real-time priority (sched_setattr: %s; it needs CAP_SYS_NICE or "
			  "an RLIMIT_RTPRIO of %u): it keeps the normal policy", prio,
			  strerror(-rc), prio);
		slice_apply();
	}
	return rc;
}

int slice_apply(void)
{
	static _Atomic bool said;
	uint32_t us = slice_wanted_us();
	int rc = us ? slice_set_thread(us) : 0;

	/*
	 * Another policy is someone's choice (-EAGAIN), not a failure. A
	 * refusal (a seccomp profile: -EPERM) costs only latency, so it is
	 * a warning where the slice was asked for, else information.
	 */
	if (rc < 0 && rc != -EAGAIN)
		xlog_once(&said, getenv("XSCHED_THREAD_SLICE_US") ? XLOG_WARN : XLOG_INFO,
			  "xsched's threads cannot have a %u us CPU slice (sched_setattr: %s): "
			  "they keep the kernel's", us, strerror(-rc));
	return rc;
}
