/*
 * Broken policy modules for the loader's negative tests.
 *
 * Built twice: as xs_policy_plugin_bad, whose entry point returns a table
 * chosen by the exported variable bad_mode (the test sets it
 * through its own dlopen() handle of the same library before loading it),
 * by default one written for a newer ops version than the daemon serves;
 * and with XS_BAD_NO_ENTRY as xs_policy_plugin_noentry, which has no entry
 * point at all.
 */
#include <stddef.h>

#include "xsched/policy.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef XS_BAD_NO_ENTRY

/* What the entry returns; see the BAD_* values. */
enum {
	BAD_NEWER_VERSION = 0,
	BAD_NULL = 1,
	BAD_VERSION_ZERO = 2,
	BAD_EMPTY_NAME = 3,
	BAD_NO_SCHEDULE = 4,
	BAD_SHORT = 5,
};

EXPORT int bad_mode;
EXPORT const struct xs_policy_ops *xs_policy_entry(uint32_t version);

static uint64_t bad_schedule(void *state, struct xs_pqueue *const *qs,
			     size_t n, uint64_t now)
{
	(void)state;
	(void)qs;
	(void)n;
	(void)now;
	return 0;
}

static const struct xs_policy_ops bad_newer = {
	.version = XS_POLICY_VERSION + 1,
	.size = sizeof(struct xs_policy_ops),
	.name = "newer",
	.schedule = bad_schedule,
};

static const struct xs_policy_ops bad_zero = {
	.version = 0,
	.size = sizeof(struct xs_policy_ops),
	.name = "zero",
	.schedule = bad_schedule,
};

static const struct xs_policy_ops bad_empty_name = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "",
	.schedule = bad_schedule,
};

static const struct xs_policy_ops bad_no_schedule = {
	.version = XS_POLICY_VERSION,
	.size = sizeof(struct xs_policy_ops),
	.name = "noschedule",
};

static const struct xs_policy_ops bad_short = {
	.version = XS_POLICY_VERSION,
	.size = offsetof(struct xs_policy_ops, schedule),
	.name = "short",
	.schedule = bad_schedule,
};

/* Returns the broken table selected by bad_mode. */
const struct xs_policy_ops *xs_policy_entry(uint32_t version)
{
	(void)version;
	switch (bad_mode) {
	case BAD_NULL:
		return NULL;
	case BAD_VERSION_ZERO:
		return &bad_zero;
	case BAD_EMPTY_NAME:
		return &bad_empty_name;
	case BAD_NO_SCHEDULE:
		return &bad_no_schedule;
	case BAD_SHORT:
		return &bad_short;
	default:
		return &bad_newer;
	}
}

#else

/* A module that is a valid library but no policy. */
EXPORT int bad_not_an_entry(void);

int bad_not_an_entry(void)
{
	return 0;
}

#endif
