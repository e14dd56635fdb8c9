/*
 * Log-linear latency histogram.
 *
 * Eight sub-buckets per power of two give a relative error under 12.5% over
 * the whole 64-bit range in 4 KiB, with O(1) recording and no allocation,
 * which is what per-queue statistics on the hot path can afford. Not
 * thread-safe: owners serialise access (the XQueue records under its lock).
 */
#ifndef XS_BASE_HIST_H
#define XS_BASE_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 3
#define HIST_BUCKETS  (64 << HIST_SUB_BITS)

struct hist {
	uint64_t count;
	uint64_t sum;
	uint64_t max;
	uint64_t bucket[HIST_BUCKETS];
};

void hist_record(struct hist *h, uint64_t value);

/*
 * Returns the value below which a fraction @q (0..1) of the recorded values
 * lie, as the upper bound of the bucket holding that rank (0 when empty).
 */
uint64_t hist_quantile(const struct hist *h, double q);

/* Bucket index of @value and the smallest value of bucket @idx
 * (UINT64_MAX past the last bucket a value can reach). */
unsigned hist_index(uint64_t value);
uint64_t hist_bucket_low(unsigned idx);

#endif
