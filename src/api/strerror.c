/*
 * xs_strerror(): messages phrased for what xsched calls mean by each errno.
 * Unknown codes get a generic message; the function never returns NULL and
 * never allocates, so it is safe from any thread.
 */
#include "xsched/xsched.h"
#include "base/compiler.h"

#include <errno.h>

struct api_errmsg {
	int err;
	const char *msg;
};

static const struct api_errmsg api_errmsgs[] = {
	{ 0, "success" },
	{ EINVAL, "invalid argument" },
	{ ENOMEM, "out of memory" },
	{ ENOSPC, "no free slot on the device (too many processes or queues)" },
	{ EBUSY, "command not completed yet" },
	{ EAGAIN, "queue is preempted; try again after resume" },
	{ ECANCELED, "command discarded before it ran" },
	{ ESHUTDOWN, "queue is being destroyed" },
	{ EOPNOTSUPP, "preemption level not supported by the device" },
	{ ERANGE, "hint value out of range" },
	{ EPROTO, "incompatible device or protocol version" },
	{ ENOENT, "no such device or entry" },
	{ ENODEV, "no such device" },
	{ EPERM, "operation not permitted" },
	{ EACCES, "permission denied" },
	{ EIO, "device error" },
	{ ETIMEDOUT, "timed out" },
	{ ECONNREFUSED, "scheduler daemon not running" },
	{ ENAMETOOLONG, "name too long" },
	{ EPIPE, "connection to the scheduler daemon lost" },
	{ EBADMSG, "malformed message" },
	{ ESRCH, "no such queue or process" },
	{ EALREADY, "already done" },
	{ EMSGSIZE, "message too large" },
};

BASE_EXPORT const char *xs_strerror(int err)
{
	long e = err < 0 ? -(long)err : err;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(api_errmsgs); i++)
		if (api_errmsgs[i].err == e)
			return api_errmsgs[i].msg;
	return "unknown error";
}
