/*
 * The data part of copies and fills, shared by the simulated drivers: a
 * region copy (rows of bytes in slices, any pitches) and a pattern fill as
 * the executor thread runs them, and the device time a copy or fill of
 * some bytes is modelled to take.
 *
 * Design: a side of a copy (or a fill's target) that lies in registered
 * memory is checked against the registry when the command runs, not only
 * when it was submitted, so memory freed in between is a device fault
 * (-EFAULT), not a write into freed memory; unregistered host memory is
 * the application's, used as it is at that moment.
 */
#include "sim/common/sf.h"
#include "base/compiler.h"

#include <errno.h>
#include <string.h>

#define SF_COPY_MIN_NS 1000u
#define SF_COPY_BYTES_PER_NS 16u     /* 16 GB/s */

/* Modelled device time of copying or filling @bytes. */
uint64_t sf_copy_ns(uint64_t bytes)
{
	uint64_t ns = bytes / SF_COPY_BYTES_PER_NS;

	return ns > SF_COPY_MIN_NS ? ns : SF_COPY_MIN_NS;
}

size_t sf_span(size_t width, size_t height, size_t depth, size_t pitch, size_t slice)
{
	return (depth - 1) * slice + (height - 1) * pitch + width;
}

/* Copies @r (executor thread). Returns 0 or -EFAULT. */
int sf_region_run(const struct sf_region *r)
{
	size_t z, y;
	int rc = 0;

	if (!r->width || !r->height || !r->depth)
		return 0;
	sf_mem_access_begin();
	if ((r->dst_reg && !sf_mem_accessible(r->dst, sf_span(r->width, r->height, r->depth, r->dpitch, r->dslice))) ||
	    (r->src_reg && !sf_mem_accessible(r->src, sf_span(r->width, r->height, r->depth, r->spitch, r->sslice))))
		rc = -EFAULT;
	for (z = 0; rc == 0 && z < r->depth; z++)
		for (y = 0; y < r->height; y++)
			memcpy(r->dst + z * r->dslice + y * r->dpitch,
			       r->src + z * r->sslice + y * r->spitch, r->width);
	sf_mem_access_end();
	return rc;
}

/*
 * Fills @bytes at @dst with copies of the @psize-byte @pattern, the last
 * one cut short if @bytes is not a multiple (executor thread). @reg: @dst
 * is registered memory, checked now. Returns 0 or -EFAULT.
 */
int sf_pattern_run(uint8_t *dst, bool reg, const void *pattern, size_t psize, size_t bytes)
{
	size_t off;

	if (!bytes)
		return 0;
	sf_mem_access_begin();
	if (reg && !sf_mem_accessible(dst, bytes)) {
		sf_mem_access_end();
		return -EFAULT;
	}
	if (psize == 1) {
		memset(dst, *(const uint8_t *)pattern, bytes);
	} else {
		for (off = 0; off < bytes; off += psize)
			memcpy(dst + off, pattern, BASE_MIN(psize, bytes - off));
	}
	sf_mem_access_end();
	return 0;
}
