/*
 * Quantiles of a run-queue latency histogram (struct xbpf_rq_hist): the
 * upper bound of the log2 slot that holds the quantile, so a figure is at
 * most twice the true value and never below it (the last slot, open
 * above, is given 2^32 ns). Built with or without
 * eBPF: the histogram is plain data.
 */
#include "bpf/xbpf.h"

uint64_t xbpf_rq_quantile(const struct xbpf_rq_hist *h, double q)
{
	uint64_t total = 0, need, seen = 0;
	unsigned k;

	for (k = 0; k < XBPF_RQ_SLOTS; k++)
		total += h->slot[k];
	if (!total)
		return 0;
	need = (uint64_t)((double)total * q);
	if (need < 1)
		need = 1;
	for (k = 0; k < XBPF_RQ_SLOTS; k++) {
		seen += h->slot[k];
		if (seen >= need)
			break;
	}
	return (uint64_t)1 << (k < XBPF_RQ_SLOTS ? k + 1 : XBPF_RQ_SLOTS);
}
