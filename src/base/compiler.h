/*
 * Small compiler helpers shared by every xsched component.
 *
 * Kept deliberately tiny: branch hints, visibility, container_of and the
 * cleanup attribute. Nothing here allocates or has state.
 */
#ifndef XS_BASE_COMPILER_H
#define XS_BASE_COMPILER_H

#include <stddef.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Symbols that form a library's public ABI; everything else is hidden. */
#define BASE_EXPORT __attribute__((visibility("default")))

#define base_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define BASE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BASE_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
