/*
 * Registry of the simulated device's memory: device allocations (which
 * are host memory, 256-byte aligned) and pinned host allocations, by
 * address range.
 *
 * Design: the registry owns the memory; nothing is freed but through it.
 * Every pointer an application passes is classified here (device, pinned
 * host, or pageable = unknown) so copies can pick their semantics and
 * misuse (a freed pointer, a range running past its allocation) becomes
 * CUDA_ERROR_INVALID_VALUE; device commands check their ranges again when
 * they run, so stream-ordered frees turn into CUDA_ERROR_ILLEGAL_ADDRESS
 * faults rather than corrupted memory. A sorted array under one mutex,
 * searched by bisection; the executor thread uses it too (leaf lock).
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sc_alloc {
	uintptr_t base;
	size_t size;                  /* as requested: accesses past it are errors */
	size_t rounded;               /* as allocated and accounted */
	enum sc_mem_kind kind;
	bool freeing;                 /* cuMemFreeAsync pending */
	struct CUctx_st *ctx;
};

static pthread_mutex_t sc_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_alloc *sc_allocs;
static size_t sc_nallocs, sc_cap;
static uint64_t sc_dev_used;

/* Index of the first allocation whose base is above @p. sc_mem_lock held. */
static size_t sc_upper(uintptr_t p)
{
	size_t lo = 0, hi = sc_nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc_allocs[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The allocation containing @p, or NULL. sc_mem_lock held. */
static struct sc_alloc *sc_find(uintptr_t p)
{
	size_t i = sc_upper(p);

	if (i == 0)
		return NULL;
	i--;
	return p - sc_allocs[i].base < sc_allocs[i].size ? &sc_allocs[i] : NULL;
}

static void sc_remove(struct sc_alloc *a)
{
	size_t i = (size_t)(a - sc_allocs);

	if (a->kind == SC_MEM_DEVICE)
		sc_dev_used -= a->rounded;
	memmove(&sc_allocs[i], &sc_allocs[i + 1], (sc_nallocs - i - 1) * sizeof(*a));
	sc_nallocs--;
}

/*
 * Allocates @size bytes (> 0) of @kind memory owned by @ctx. Device
 * allocations count against the modelled device memory. Returns 0 or
 * -ENOMEM.
 */
int sc_mem_alloc(size_t size, enum sc_mem_kind kind, struct CUctx_st *ctx, void **out)
{
	size_t rounded = (size + SC_ALIGN - 1) & ~(size_t)(SC_ALIGN - 1);
	void *p;
	size_t i;
	int rc = 0;

	if (rounded < size)
		return -ENOMEM;
	pthread_mutex_lock(&sc_mem_lock);
	if (kind == SC_MEM_DEVICE && rounded > SC_DEVICE_MEM - sc_dev_used) {
		rc = -ENOMEM;
		goto out;
	}
	if (sc_nallocs == sc_cap) {
		size_t cap = sc_cap ? 2 * sc_cap : 64;
		struct sc_alloc *v = realloc(sc_allocs, cap * sizeof(*v));

		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		sc_allocs = v;
		sc_cap = cap;
	}
	p = aligned_alloc(SC_ALIGN, rounded);
	if (!p) {
		rc = -ENOMEM;
		goto out;
	}
	i = sc_upper((uintptr_t)p);
	memmove(&sc_allocs[i + 1], &sc_allocs[i], (sc_nallocs - i) * sizeof(*sc_allocs));
	sc_allocs[i] = (struct sc_alloc){ .base = (uintptr_t)p, .size = size,
					  .rounded = rounded, .kind = kind, .ctx = ctx };
	sc_nallocs++;
	if (kind == SC_MEM_DEVICE)
		sc_dev_used += rounded;
	*out = p;
out:
	pthread_mutex_unlock(&sc_mem_lock);
	return rc;
}

/*
 * Frees the allocation starting at @base, which must be of @kind and not
 * pending a stream-ordered free. *@owner (optional) receives its context
 * before. Returns 0 or -EINVAL.
 */
int sc_mem_free(void *base, enum sc_mem_kind kind, struct CUctx_st **owner)
{
	struct sc_alloc *a;
	int rc = -EINVAL;

	pthread_mutex_lock(&sc_mem_lock);
	a = sc_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->kind == kind && !a->freeing) {
		if (owner)
			*owner = a->ctx;
		sc_remove(a);
		rc = 0;
	}
	pthread_mutex_unlock(&sc_mem_lock);
	if (rc == 0)
		free(base);
	return rc;
}

/*
 * Whether an allocation of @kind starts at @base and is not pending a
 * stream-ordered free; *@owner receives its context. 0 or -EINVAL.
 */
int sc_mem_owner(void *base, enum sc_mem_kind kind, struct CUctx_st **owner)
{
	struct sc_alloc *a;
	int rc = -EINVAL;

	pthread_mutex_lock(&sc_mem_lock);
	a = sc_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->kind == kind && !a->freeing) {
		*owner = a->ctx;
		rc = 0;
	}
	pthread_mutex_unlock(&sc_mem_lock);
	return rc;
}

/* Marks device allocation @base for a stream-ordered free. 0 or -EINVAL. */
int sc_mem_mark_freeing(void *base)
{
	struct sc_alloc *a;
	int rc = -EINVAL;

	pthread_mutex_lock(&sc_mem_lock);
	a = sc_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->kind == SC_MEM_DEVICE && !a->freeing) {
		a->freeing = true;
		rc = 0;
	}
	pthread_mutex_unlock(&sc_mem_lock);
	return rc;
}

/* Frees allocation @base if still registered (executor thread: a stream-ordered free). */
void sc_mem_release(void *base)
{
	struct sc_alloc *a;
	bool found = false;

	pthread_mutex_lock(&sc_mem_lock);
	a = sc_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base) {
		sc_remove(a);
		found = true;
	}
	pthread_mutex_unlock(&sc_mem_lock);
	if (found)
		free(base);
}

/*
 * Classifies [@p, @p + @len): inside one device or pinned allocation, or
 * pageable (overlapping none). Returns 0, or -EINVAL for NULL or a range
 * that runs into or out of an allocation.
 */
int sc_mem_classify(const void *p, size_t len, enum sc_mem_kind *kind)
{
	uintptr_t a = (uintptr_t)p, end = a + (len ? len : 1);
	struct sc_alloc *al;
	size_t i;
	int rc = 0;

	if (!p || end < a)
		return -EINVAL;
	pthread_mutex_lock(&sc_mem_lock);
	al = sc_find(a);
	if (al) {
		if (end - al->base > al->size)
			rc = -EINVAL;
		else
			*kind = al->kind;
	} else {
		i = sc_upper(a);
		if (i < sc_nallocs && sc_allocs[i].base < end)
			rc = -EINVAL;
		else
			*kind = SC_MEM_PAGEABLE;
	}
	pthread_mutex_unlock(&sc_mem_lock);
	return rc;
}

/* Kind and owner of the allocation containing @p: 0 or -ENOENT (pageable). */
int sc_mem_lookup(const void *p, enum sc_mem_kind *kind, struct CUctx_st **ctx)
{
	struct sc_alloc *a;
	int rc = -ENOENT;

	pthread_mutex_lock(&sc_mem_lock);
	a = sc_find((uintptr_t)p);
	if (a) {
		if (kind)
			*kind = a->kind;
		if (ctx)
			*ctx = a->ctx;
		rc = 0;
	}
	pthread_mutex_unlock(&sc_mem_lock);
	return rc;
}

/* Whether the device may access [@p, @p + @len) now (executor thread). */
bool sc_mem_accessible(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	struct sc_alloc *al;
	bool ok;

	if (!len)
		return true;
	if (a + len < a)
		return false;
	pthread_mutex_lock(&sc_mem_lock);
	al = sc_find(a);
	ok = al && a + len - al->base <= al->size;
	pthread_mutex_unlock(&sc_mem_lock);
	return ok;
}

/* Bytes of modelled device memory allocated. */
uint64_t sc_mem_device_used(void)
{
	uint64_t used;

	pthread_mutex_lock(&sc_mem_lock);
	used = sc_dev_used;
	pthread_mutex_unlock(&sc_mem_lock);
	return used;
}

/* Frees every allocation of @ctx (context teardown, after its work). */
void sc_mem_drain(struct CUctx_st *ctx)
{
	size_t i = 0;

	pthread_mutex_lock(&sc_mem_lock);
	while (i < sc_nallocs) {
		if (sc_allocs[i].ctx == ctx) {
			void *p = (void *)sc_allocs[i].base;

			sc_remove(&sc_allocs[i]);
			free(p);
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&sc_mem_lock);
}
