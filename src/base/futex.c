/*
 * Futex system calls (see futex.h).
 */
#include "base/futex.h"
#include "base/clock.h"

#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

int futex_wait(_Atomic uint32_t *word, uint32_t expected,
	       uint64_t timeout_ns, bool shared)
{
	struct timespec ts, *tsp = NULL;
	int op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;

	if (timeout_ns != UINT64_MAX) {
		ts = clock_ns_to_timespec(timeout_ns);
		tsp = &ts;
	}
	if (syscall(SYS_futex, (uint32_t *)word, op, expected, tsp, NULL, 0) == 0)
		return 0;
	if (errno == EAGAIN)
		return 0;
	return -errno;
}

void futex_wake(_Atomic uint32_t *word, int n, bool shared)
{
	int op = shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;

	syscall(SYS_futex, (uint32_t *)word, op, n, NULL, NULL, 0);
}
