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
 *
 * Device memory is charged to the simulated device, whose capacity the
 * node's processes share (sim_dev_mem_charge()); the registry charges
 * what it allocates as device or shared memory. Memory the registry does
 * not own can be registered too (a driver's virtual-memory mappings): it
 * is never freed here, and address ranges a driver reserved for such
 * mappings are known, so a pointer into a reserved range without an
 * accessible mapping is a device fault (-EFAULT), not pageable memory.
 * Because such a mapping can be taken away under a running command, the
 * data part of every device command holds the access lock (read side)
 * from its address check to its last access, and unregistering takes it
 * for writing: once sf_mem_unregister() returns, no command touches the
 * range.
 */
#include "sim/common/sf.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct sf_alloc {
	uintptr_t base;
	size_t size;                  /* as requested: accesses past it are errors */
	size_t rounded;               /* as allocated and accounted */
	enum sf_mem_kind kind;
	bool freeing;                 /* a queue-ordered free is pending */
	bool external;                /* registered, not owned: never freed here */
	void *owner;
};

/* An address range reserved for external registrations. */
struct sf_resv {
	uintptr_t base;
	size_t size;
};

static pthread_mutex_t sf_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sf_alloc *sf_allocs;
static size_t sf_nallocs, sf_cap;
static struct sf_resv *sf_resvs;      /* sf_mem_lock; unsorted, few */
static size_t sf_nresvs, sf_resv_cap;
static pthread_rwlock_t sf_access_lock = PTHREAD_RWLOCK_INITIALIZER;
static _Atomic(struct sim_dev *) sf_dev;

void sf_mem_set_device(struct sim_dev *dev)
{
	atomic_store_explicit(&sf_dev, dev, memory_order_release);
}

/* Whether allocations of @kind count against the device's memory. */
static bool sf_charged(enum sf_mem_kind kind)
{
	return kind == SF_MEM_DEVICE || kind == SF_MEM_SHARED;
}

int sf_mem_charge(uint64_t bytes)
{
	struct sim_dev *dev = atomic_load_explicit(&sf_dev, memory_order_acquire);

	return dev ? sim_dev_mem_charge(dev, bytes) : 0;
}

void sf_mem_uncharge(uint64_t bytes)
{
	struct sim_dev *dev = atomic_load_explicit(&sf_dev, memory_order_acquire);

	if (dev)
		sim_dev_mem_uncharge(dev, bytes);
}

void sf_mem_access_begin(void)
{
	pthread_rwlock_rdlock(&sf_access_lock);
}

void sf_mem_access_end(void)
{
	pthread_rwlock_unlock(&sf_access_lock);
}

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

	if (!a->external && sf_charged(a->kind))
		sf_mem_uncharge(a->rounded);
	memmove(&sf_allocs[i], &sf_allocs[i + 1], (sf_nallocs - i - 1) * sizeof(*a));
	sf_nallocs--;
}

/* Makes room for one more entry. sf_mem_lock held. 0 or -ENOMEM. */
static int sf_grow(void)
{
	size_t cap;
	struct sf_alloc *v;

	if (sf_nallocs < sf_cap)
		return 0;
	cap = sf_cap ? 2 * sf_cap : 64;
	v = realloc(sf_allocs, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	sf_allocs = v;
	sf_cap = cap;
	return 0;
}

/* Inserts @a in address order. sf_mem_lock held, room made. */
static void sf_insert(const struct sf_alloc *a)
{
	size_t i = sf_upper(a->base);

	memmove(&sf_allocs[i + 1], &sf_allocs[i], (sf_nallocs - i) * sizeof(*sf_allocs));
	sf_allocs[i] = *a;
	sf_nallocs++;
}

/*
 * Allocates @size bytes (> 0) of @kind memory owned by @owner, aligned to
 * @align (a power of two; 0 or less than SF_ALIGN: SF_ALIGN). Device and
 * shared allocations are charged to the device (sf_mem_set_device()).
 * Returns 0 or -ENOMEM (the device's memory or the host's exhausted).
 */
int sf_mem_alloc(size_t size, size_t align, enum sf_mem_kind kind, void *owner, void **out)
{
	bool charged = sf_charged(kind);
	size_t rounded;
	void *p = NULL;
	int rc;

	if (align < SF_ALIGN)
		align = SF_ALIGN;
	rounded = (size + align - 1) & ~(align - 1);
	if (rounded < size)
		return -ENOMEM;
	/* Outside the lock: charging may reap dead peers. */
	if (charged) {
		rc = sf_mem_charge(rounded);
		if (rc < 0)
			return rc;
	}
	pthread_mutex_lock(&sf_mem_lock);
	rc = sf_grow();
	if (rc == 0) {
		p = aligned_alloc(align, rounded);
		if (!p)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		sf_insert(&(struct sf_alloc){ .base = (uintptr_t)p, .size = size,
					      .rounded = rounded, .kind = kind, .owner = owner });
		*out = p;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	if (rc < 0 && charged)
		sf_mem_uncharge(rounded);
	return rc;
}

/*
 * Registers [@base, @base + @size) as @kind memory of @owner that the
 * registry does not own (charged, if at all, by whoever does). Returns 0,
 * -EINVAL (empty, or overlapping a registered range) or -ENOMEM.
 */
int sf_mem_register(void *base, size_t size, enum sf_mem_kind kind, void *owner)
{
	uintptr_t b = (uintptr_t)base;
	size_t i;
	int rc;

	if (!base || !size || b + size < b)
		return -EINVAL;
	pthread_mutex_lock(&sf_mem_lock);
	i = sf_upper(b);
	if (sf_find(b) || (i < sf_nallocs && sf_allocs[i].base < b + size))
		rc = -EINVAL;
	else
		rc = sf_grow();
	if (rc == 0)
		sf_insert(&(struct sf_alloc){ .base = b, .size = size, .rounded = size,
					      .kind = kind, .external = true, .owner = owner });
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/*
 * Unregisters the external range starting at @base, once no device
 * command accesses registered memory (the access lock): when it returns,
 * the caller may take the memory away. Any thread but the executor's.
 * Returns 0 or -EINVAL.
 */
int sf_mem_unregister(void *base)
{
	struct sf_alloc *a;
	int rc = -EINVAL;

	pthread_rwlock_wrlock(&sf_access_lock);
	pthread_mutex_lock(&sf_mem_lock);
	a = sf_find((uintptr_t)base);
	if (a && a->base == (uintptr_t)base && a->external) {
		sf_remove(a);
		rc = 0;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	pthread_rwlock_unlock(&sf_access_lock);
	return rc;
}

/*
 * Records [@base, @base + @size) as reserved for external registrations:
 * until sf_mem_unreserve(), what in it is not registered is inaccessible
 * (-EFAULT from sf_mem_classify()). 0, -EINVAL (empty) or -ENOMEM.
 */
int sf_mem_reserve(void *base, size_t size)
{
	int rc = 0;

	if (!base || !size)
		return -EINVAL;
	pthread_mutex_lock(&sf_mem_lock);
	if (sf_nresvs == sf_resv_cap) {
		size_t cap = sf_resv_cap ? 2 * sf_resv_cap : 16;
		struct sf_resv *v = realloc(sf_resvs, cap * sizeof(*v));

		if (v) {
			sf_resvs = v;
			sf_resv_cap = cap;
		} else {
			rc = -ENOMEM;
		}
	}
	if (rc == 0)
		sf_resvs[sf_nresvs++] = (struct sf_resv){ (uintptr_t)base, size };
	pthread_mutex_unlock(&sf_mem_lock);
	return rc;
}

/* Forgets the reservation starting at @base. */
void sf_mem_unreserve(void *base)
{
	size_t i;

	pthread_mutex_lock(&sf_mem_lock);
	for (i = 0; i < sf_nresvs; i++) {
		if (sf_resvs[i].base == (uintptr_t)base) {
			sf_resvs[i] = sf_resvs[--sf_nresvs];
			break;
		}
	}
	pthread_mutex_unlock(&sf_mem_lock);
}

/* Whether [@p, @end) overlaps a reservation. sf_mem_lock held. */
static bool sf_reserved(uintptr_t p, uintptr_t end)
{
	size_t i;

	for (i = 0; i < sf_nresvs; i++)
		if (p < sf_resvs[i].base + sf_resvs[i].size && sf_resvs[i].base < end)
			return true;
	return false;
}

/*
 * Where the registered memory from @a on stops: external ranges that
 * follow each other without a gap are one span to the device (mappings
 * side by side in a reservation), an allocation is its own. sf_mem_lock
 * held.
 */
static uintptr_t sf_span_end(const struct sf_alloc *a)
{
	size_t i = (size_t)(a - sf_allocs);
	uintptr_t end = a->base + a->size;

	while (sf_allocs[i].external && i + 1 < sf_nallocs && sf_allocs[i + 1].external &&
	       sf_allocs[i + 1].base == end) {
		i++;
		end = sf_allocs[i].base + sf_allocs[i].size;
	}
	return end;
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
	if (a && a->base == (uintptr_t)base && a->kind == kind && !a->freeing &&
	    !a->external) {
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
	if (a && a->base == (uintptr_t)base && a->kind == kind && !a->freeing &&
	    !a->external) {
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
	if (a && a->base == (uintptr_t)base && a->kind == SF_MEM_DEVICE && !a->freeing &&
	    !a->external) {
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
	if (a && a->base == (uintptr_t)base && !a->external) {
		sf_remove(a);
		found = true;
	}
	pthread_mutex_unlock(&sf_mem_lock);
	if (found)
		free(base);
}

/*
 * Classifies [@p, @p + @len): inside one device or pinned allocation (or
 * side-by-side external ranges), or pageable (overlapping none). Returns
 * 0; -EFAULT for a range that reaches into a reservation where nothing
 * accessible is registered; -EINVAL for NULL or a range that runs into or
 * out of an allocation.
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
		uintptr_t stop = sf_span_end(al);

		if (end > stop)
			rc = sf_reserved(stop, end) ? -EFAULT : -EINVAL;
		else
			*kind = al->kind;
	} else if (sf_reserved(a, end)) {
		/* Also pageable memory running into a reservation: never
		 * touched by a host copy, which would fault the process. */
		rc = -EFAULT;
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

/*
 * Whether the device may access [@p, @p + @len) now (executor thread,
 * between sf_mem_access_begin() and _end(), which keep it so).
 */
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
	ok = al && a + len <= sf_span_end(al);
	pthread_mutex_unlock(&sf_mem_lock);
	return ok;
}

/* Frees every allocation of @owner (its teardown, after its work). */
void sf_mem_drain(void *owner)
{
	size_t i = 0;

	pthread_mutex_lock(&sf_mem_lock);
	while (i < sf_nallocs) {
		if (sf_allocs[i].owner == owner && !sf_allocs[i].external) {
			void *p = (void *)sf_allocs[i].base;

			sf_remove(&sf_allocs[i]);
			free(p);
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&sf_mem_lock);
}
