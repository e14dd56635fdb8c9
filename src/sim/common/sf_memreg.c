/*
 * Registry of the simulated device's memory: device allocations (which
 * are host memory), pinned host and shared allocations, by address range.
 *
 * Design: the registry owns the memory; nothing is freed but through it.
 * Every pointer an application passes is classified here (device, pinned
 * host, shared, or pageable = unknown) so copies can pick their semantics
 * and misuse (a freed pointer, a range running past its allocation)
 * becomes an invalid-value error of the driver's API; device commands
 * check their ranges again when they run, so a free ordered before a
 * command turns into a device fault rather than corrupted memory. Each
 * allocation has an owner (a driver's context, opaque here). A sorted
 * array under one mutex, searched by bisection; the executor thread uses
 * it too (leaf lock).
 */
#include "sim/common/sf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct sf_alloc {
	uintptr_t base;
	size_t size;                  /* as requested: accesses past it are errors */
	size_t rounded;               /* as allocated and accounted */
	enum sf_mem_kind kind;
	bool freeing;                 /* a queue-ordered free is pending */
	void *owner;
};

static pthread_mutex_t sf_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sf_alloc *sf_allocs;
static size_t sf_nallocs, sf_cap;
static uint64_t sf_dev_used;

/* Index of the first allocation whose base is above @p. sf_mem_lock held. */
static size_t sf_upper(uintptr_t p)
{
	size_t lo = 0, hi = sf_nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sf_allocs[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The allocation containing @p, or NULL. sf_mem_lock held. */
static struct sf_alloc *sf_find(uintptr_t p)
{
	size_t i = sf_upper(p);

	if (i == 0)
		return NULL;
	i--;
	return p - sf_allocs[i].base < sf_allocs[i].size ? &sf_allocs[i] : NULL;
}

static void sf_remove(struct sf_alloc *a)
{
	size_t i = (size_t)(a - sf_allocs);

	if (a->kind == SF_MEM_DEVICE)
		sf_dev_used -= a->rounded;
	memmove(&sf_allocs[i], &sf_allocs[i + 1], (sf_nallocs - i - 1) * sizeof(*a));
	sf_nallocs--;
}

/*
 * Allocates @size bytes (> 0) of @kind memory owned by @owner, aligned to
 * @align (a power of two; 0 or less than SF_ALIGN: SF_ALIGN). Device
 * allocations count against the modelled device memory. Returns 0 or
 * -ENOMEM.
 */
int sf_mem_alloc(size_t size, size_t align, enum sf_mem_kind kind, void *owner, void **out)
{
	size_t rounded;
	void *p;
	size_t i;
	int rc = 0;

	if (align < SF_ALIGN)
		align = SF_ALIGN;
	rounded = (size + align - 1) & ~(align - 1);
	if (rounded < size)
		return -ENOMEM;
	pthread_mutex_lock(&sf_mem_lock);
	if (kind == SF_MEM_DEVICE && rounded > SF_DEVICE_MEM - sf_dev_used) {
		rc = -ENOMEM;
		goto out;
	}
	if (sf_nallocs == sf_cap) {
		size_t cap = sf_cap ? 2 * sf_cap : 64;
		struct sf_alloc *v = realloc(sf_allocs, cap * sizeof(*v));

		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		sf_allocs = v;
		sf_cap = cap;
	}
	p = aligned_alloc(align, rounded);
	if (!p) {
		rc = -ENOMEM;
		goto out;
	}
	i = sf_upper((uintptr_t)p);
	memmove(&sf_allocs[i + 1], &sf_allocs[i], (sf_nallocs - i) * sizeof(*sf_allocs));
	sf_allocs[i] = (struct sf_alloc){ .base = (uintptr_t)p, .size = size,
					  .rounded = rounded, .kind = kind, .owner = owner };
	sf_nallocs++;
	if (kind == SF_MEM_DEVICE)
		sf_dev_used += rounded;
	*out = p;
out:
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/*
 * Frees the allocation starting at @base, which must be of @kind and not
 * pending a queue-ordered free. *@owner (optional) receives its owner
 * before. Returns 0 or -EINVAL.
 */
int sf_mem_free(void *base, enum sf_mem_kind kind, void **owner)
{
	struct sf_alloc *a;
	int rc = -EINVAL;

	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->kind == kind && !a->freeing) {
		if (owner)
			*owner = a->owner;
		sf_remove(a);
		rc = 0;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	if (rc == 0)
		free(base);
	return rc;
}

/*
 * Whether an allocation of @kind starts at @base and is not pending a
 * queue-ordered free; *@owner receives its owner. 0 or -EINVAL.
 */
int sf_mem_owner(void *base, enum sf_mem_kind kind, void **owner)
{
	struct sf_alloc *a;
	int rc = -EINVAL;

	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->kind == kind && !a->freeing) {
		*owner = a->owner;
		rc = 0;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/* Marks device allocation @base for a queue-ordered free. 0 or -EINVAL. */
int sf_mem_mark_freeing(void *base)
{
	struct sf_alloc *a;
	int rc = -EINVAL;

	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->kind == SF_MEM_DEVICE && !a->freeing) {
		a->freeing = true;
		rc = 0;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/* Frees allocation @base if still registered (executor thread: a queue-ordered free). */
void sf_mem_release(void *base)
{
	struct sf_alloc *a;
	bool found = false;

	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base) {
		sf_remove(a);
		found = true;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	if (found)
		free(base);
}

/*
 * Classifies [@p, @p + @len): inside one device or pinned allocation, or
 * pageable (overlapping none). Returns 0, or -EINVAL for NULL or a range
 * that runs into or out of an allocation.
 */
int sf_mem_classify(const void *p, size_t len, enum sf_mem_kind *kind)
{
	uintptr_t a = (uintptr_t)p, end = a + (len ? len : 1);
	struct sf_alloc *al;
	size_t i;
	int rc = 0;

	if (!p || end < a)
		return -EINVAL;
	pthread_mutex_lock(&sf_mem_lock);
	al = sf_find(a);
	if (al) {
		if (end - al->base > al->size)
			rc = -EINVAL;
		else
			*kind = al->kind;
	} else {
		i = sf_upper(a);
		if (i < sf_nallocs && sf_allocs[i].base < end)
			rc = -EINVAL;
		else
			*kind = SF_MEM_PAGEABLE;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/* Kind and owner of the allocation containing @p: 0 or -ENOENT (pageable). */
int sf_mem_lookup(const void *p, enum sf_mem_kind *kind, void **owner)
{
	struct sf_alloc *a;
	int rc = -ENOENT;

	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)p);
	if (a) {
		if (kind)
			*kind = a->kind;
		if (owner)
			*owner = a->owner;
		rc = 0;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/*
 * Base and size (as requested) of the allocation containing @p: 0 or
 * -ENOENT (pageable).
 */
int sf_mem_range(const void *p, void **base, size_t *size)
{
	struct sf_alloc *a;
	int rc = -ENOENT;

	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)p);
	if (a) {
		*base = (void *)a->base;
		*size = a->size;
		rc = 0;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/* Whether the device may access [@p, @p + @len) now (executor thread). */
bool sf_mem_accessible(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	struct sf_alloc *al;
	bool ok;

	if (!len)
		return true;
	if (a + len < a)
		return false;
	pthread_mutex_lock(&sf_mem_lock);
	al = sf_find(a);
	ok = al && a + len - al->base <= al->size;
	pthread_mutex_unlock(&sf_mem_lock);
	return ok;
}

/* Bytes of modelled device memory allocated. */
uint64_t sf_mem_device_used(void)
{
	uint64_t used;

	pthread_mutex_lock(&sf_mem_lock);
	used = sf_dev_used;
	pthread_mutex_unlock(&sf_mem_lock);
	return used;
}

/* Frees every allocation of @owner (its teardown, after its work). */
void sf_mem_drain(void *owner)
{
	size_t i = 0;

	pthread_mutex_lock(&sf_mem_lock);
	while (i < sf_nallocs) {
		if (sf_allocs[i].owner == owner) {
			void *p = (void *)sf_allocs[i].base;

			sf_remove(&sf_allocs[i]);
			free(p);
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&sf_mem_lock);
}
