/*
 * Thin futex wrappers.
 *
 * Futex words may live in memory shared between processes (the simulated
 * device) or in private memory; @shared selects the non-private futex ops,
 * which work for both but are slower, so private callers pass false.
 */
#ifndef XS_BASE_FUTEX_H
#define XS_BASE_FUTEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Sleeps while *@word == @expected, at most @timeout_ns (UINT64_MAX: no
 * limit). Returns 0 when woken or when the word changed, -ETIMEDOUT, or
 * -EINTR. Spurious wakeups are possible; callers re-check their condition.
 */
int futex_wait(_Atomic uint32_t *word, uint32_t expected,
	       uint64_t timeout_ns, bool shared);

/* Wakes up to @n waiters on @word. */
void futex_wake(_Atomic uint32_t *word, int n, bool shared);

#endif
