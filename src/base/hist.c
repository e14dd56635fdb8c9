/*
 * Log-linear histogram (see hist.h). Values below 2^SUB_BITS get exact
 * buckets; above, the top SUB_BITS bits after the leading one select the
 * sub-bucket.
 */
#include "base/hist.h"

#define SUB (1u << HIST_SUB_BITS)

unsigned hist_index(uint64_t value)
{
	unsigned e;

	if (value < SUB)
		return (unsigned)value;
	e = 63u - (unsigned)__builtin_clzll(value);
	return (e - HIST_SUB_BITS + 1) * SUB +
	       (unsigned)((value >> (e - HIST_SUB_BITS)) & (SUB - 1));
}

uint64_t hist_bucket_low(unsigned idx)
{
	unsigned e, sub;

	if (idx < SUB)
		return idx;
	e = idx / SUB + HIST_SUB_BITS - 1;
	if (e >= 64)
		return UINT64_MAX;
	sub = idx % SUB;
	return (1ull << e) | ((uint64_t)sub << (e - HIST_SUB_BITS));
}

void hist_record(struct hist *h, uint64_t value)
{
	h->bucket[hist_index(value)]++;
	h->count++;
	h->sum += value;
	if (value > h->max)
		h->max = value;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned i;

	if (h->count == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	rank = (uint64_t)(q * (double)h->count);
	if (rank == 0)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			/* The last bucket in use ends at UINT64_MAX. */
			uint64_t hi = i < hist_index(UINT64_MAX) ?
				hist_bucket_low(i + 1) - 1 : UINT64_MAX;
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}
