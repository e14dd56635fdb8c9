/*
 * The built-in kernels of the simulated device: what every simulated
 * driver's modules offer by name, whatever image was loaded.
 *
 * Design: a kernel is a parameter layout (what the drivers report and copy
 * at launch), a host function that really computes on device memory
 * (uint32 elements; it runs on the device's executor thread) and a
 * modelled device time, max(2 us, n ns), that the device spends after the
 * computation. The grid is not used: each kernel handles its n elements
 * whatever the launch configuration. Device pointers are checked against
 * the memory registry when the kernel runs; a bad one is a device fault
 * (-EFAULT), which each driver reports in its own API's terms.
 *
 *   sf_spin(uint64 ns)                          occupies the device ns
 *   sf_fill(ptr p, uint32 v, uint64 n)          p[i] = v
 *   sf_add(ptr a, ptr b, ptr c, uint64 n)       c[i] = a[i] + b[i]
 *   sf_inc(ptr p, uint64 n)                     p[i] += 1
 *   sf_scale(ptr p, uint32 k, uint64 n)         p[i] *= k
 *   sf_checksum(ptr p, uint64 n, ptr out)       *(uint64 *)out = FNV-1a 64
 *                                               of the n BYTES at p
 *   sf_fail()                                   fails (-EIO)
 */
#include "sim/common/sf.h"

#include <errno.h>
#include <string.h>

#define SF_KERNEL_MIN_NS 2000u

static uint64_t sf_u64(const uint8_t *params, size_t off)
{
	uint64_t v;

	memcpy(&v, params + off, sizeof(v));
	return v;
}

static uint32_t sf_u32(const uint8_t *params, size_t off)
{
	uint32_t v;

	memcpy(&v, params + off, sizeof(v));
	return v;
}

/* @n uint32 elements at @p, if the device may access them; else NULL. */
static uint32_t *sf_elems(uint64_t p, uint64_t n)
{
	if (n > SIZE_MAX / 4 || !sf_mem_accessible((const void *)(uintptr_t)p, (size_t)n * 4))
		return NULL;
	return (uint32_t *)(uintptr_t)p;
}

static uint64_t sf_data_ns(uint64_t n)
{
	return n > SF_KERNEL_MIN_NS ? n : SF_KERNEL_MIN_NS;
}

static int sf_spin_run(const uint8_t *params)
{
	(void)params;
	return 0;
}

static uint64_t sf_spin_ns(const uint8_t *params)
{
	return sf_u64(params, 0);
}

static uint64_t sf_min_ns(const uint8_t *params)
{
	(void)params;
	return SF_KERNEL_MIN_NS;
}

/* Device time of the kernels whose element count is their last parameter. */
static uint64_t sf_n_last_ns(const uint8_t *params, size_t off)
{
	return sf_data_ns(sf_u64(params, off));
}

static uint64_t sf_ns_at8(const uint8_t *params)
{
	return sf_n_last_ns(params, 8);
}

static uint64_t sf_ns_at16(const uint8_t *params)
{
	return sf_n_last_ns(params, 16);
}

static uint64_t sf_ns_at24(const uint8_t *params)
{
	return sf_n_last_ns(params, 24);
}

static int sf_fill_run(const uint8_t *params)
{
	uint64_t n = sf_u64(params, 16), i;
	uint32_t v = sf_u32(params, 8), *p = sf_elems(sf_u64(params, 0), n);

	if (!p)
		return -EFAULT;
	for (i = 0; i < n; i++)
		p[i] = v;
	return 0;
}

static int sf_add_run(const uint8_t *params)
{
	uint64_t n = sf_u64(params, 24), i;
	uint32_t *a = sf_elems(sf_u64(params, 0), n), *b = sf_elems(sf_u64(params, 8), n);
	uint32_t *c = sf_elems(sf_u64(params, 16), n);

	if (!a || !b || !c)
		return -EFAULT;
	for (i = 0; i < n; i++)
		c[i] = a[i] + b[i];
	return 0;
}

static int sf_inc_run(const uint8_t *params)
{
	uint64_t n = sf_u64(params, 8), i;
	uint32_t *p = sf_elems(sf_u64(params, 0), n);

	if (!p)
		return -EFAULT;
	for (i = 0; i < n; i++)
		p[i] += 1;
	return 0;
}

static int sf_scale_run(const uint8_t *params)
{
	uint64_t n = sf_u64(params, 16), i;
	uint32_t k = sf_u32(params, 8), *p = sf_elems(sf_u64(params, 0), n);

	if (!p)
		return -EFAULT;
	for (i = 0; i < n; i++)
		p[i] *= k;
	return 0;
}

static int sf_checksum_run(const uint8_t *params)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)sf_u64(params, 0);
	uint64_t n = sf_u64(params, 8), h = 0xcbf29ce484222325ull, i;
	void *out = (void *)(uintptr_t)sf_u64(params, 16);

	if (n > SIZE_MAX || !sf_mem_accessible(p, (size_t)n) ||
	    !sf_mem_accessible(out, sizeof(h)))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	memcpy(out, &h, sizeof(h));
	return 0;
}

static int sf_fail_run(const uint8_t *params)
{
	(void)params;
	return -EIO;
}

const struct sf_kernel_def sf_kernels[] = {
	{ "sf_spin", 1, { 0 }, { 8 }, 8, sf_spin_run, sf_spin_ns },
	{ "sf_fill", 3, { 0, 8, 16 }, { 8, 4, 8 }, 24, sf_fill_run, sf_ns_at16 },
	{ "sf_add", 4, { 0, 8, 16, 24 }, { 8, 8, 8, 8 }, 32, sf_add_run, sf_ns_at24 },
	{ "sf_inc", 2, { 0, 8 }, { 8, 8 }, 16, sf_inc_run, sf_ns_at8 },
	{ "sf_scale", 3, { 0, 8, 16 }, { 8, 4, 8 }, 24, sf_scale_run, sf_ns_at16 },
	{ "sf_checksum", 3, { 0, 8, 16 }, { 8, 8, 8 }, 24, sf_checksum_run, sf_ns_at8 },
	{ "sf_fail", 0, { 0 }, { 0 }, 0, sf_fail_run, sf_min_ns },
};

const size_t sf_nkernels = sizeof(sf_kernels) / sizeof(sf_kernels[0]);

/* The built-in kernel called @name, or NULL. */
const struct sf_kernel_def *sf_kernel_find(const char *name)
{
	size_t i;

	for (i = 0; i < sf_nkernels; i++)
		if (!strcmp(sf_kernels[i].name, name))
			return &sf_kernels[i];
	return NULL;
}
