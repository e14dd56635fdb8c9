/*
 * Host waits of the simulated Level Zero driver: what zeEventHostSynchronize,
 * zeFenceHostSynchronize and zeCommandQueueSynchronize sleep on.
 *
 * Design: each waitable object has a private futex word that changes
 * whenever its condition may have changed (the event's or fence's state
 * itself, a queue's completion counter). A waiter reads the word, then
 * the condition, and sleeps only while the word is unchanged, so a change
 * in between is never lost. A waker changes the condition, then the word,
 * then always makes the wake-up system call: it must not read anything in
 * the object after that store, because the waiter it releases may free the
 * object at once (an application destroys a fence or an event pool as
 * soon as it saw it signalled), and a private futex wake-up does not touch
 * the memory it names. Timeouts follow the API: 0 only polls, UINT64_MAX
 * waits forever, anything else is a budget in nanoseconds from the call.
 */
#include "sim/ze/sz_internal.h"
#include "base/clock.h"
#include "base/futex.h"

#include <errno.h>

/*
 * Waits until @done(@arg) holds, at most @timeout_ns. Returns 0, or -EBUSY
 * when the timeout expired first (at once for 0). Any thread.
 */
int sz_wait(struct sz_waitq *wq, bool (*done)(const void *arg), const void *arg,
	    uint64_t timeout_ns)
{
	uint64_t deadline = UINT64_MAX, now;

	if (done(arg))
		return 0;
	if (timeout_ns == 0)
		return -EBUSY;
	if (timeout_ns != UINT64_MAX) {
		now = clock_now_ns();
		deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
	}
	for (;;) {
		uint32_t v = atomic_load(&wq->word);
		uint64_t left = UINT64_MAX;

		if (done(arg))
			return 0;
		if (deadline != UINT64_MAX) {
			now = clock_now_ns();
			if (now >= deadline)
				return -EBUSY;
			left = deadline - now;
		}
		futex_wait(&wq->word, v, left, false);
	}
}

/*
 * Wakes every sleeper of @wq; the caller changed the word first and must
 * not touch the object afterwards. Any thread.
 */
void sz_wake(struct sz_waitq *wq)
{
	futex_wake(&wq->word, 0x7fffffff, false);
}
