/*
 * Sizes of memory as people write them: "8G", "512MiB", "1.5g", "4096".
 * Units are binary (K = 1024), with or without "i" and "B", any case; a
 * plain number is bytes. The same text means the same size in every place
 * that takes one (XSCHED_MEMORY_LIMIT, xschedd.conf, xschedctl).
 */
#ifndef XS_BASE_SIZE_H
#define XS_BASE_SIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses @text into *@out (bytes, rounded down to a whole byte).
 * Returns 0, or -EINVAL (not a size: empty, a sign, a fraction without a
 * unit, trailing text) or -ERANGE (above 2^63).
 */
int size_parse(const char *text, uint64_t *out);

/* @bytes for people, in the largest unit that keeps it >= 1 ("7.5 GiB",
 * "512 B"); one decimal where not whole. Returns @buf. */
const char *size_format(uint64_t bytes, char *buf, size_t len);

#define SIZE_TEXT 24            /* enough for size_format() */

#endif
