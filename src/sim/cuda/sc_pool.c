/*
 * Memory pools of the simulated CUDA driver: the stream-ordered allocator
 * behind cuMemAllocAsync and cuMemAllocFromPoolAsync.
 *
 * Design: a pool is two numbers the device's memory is charged by, not an
 * address space. It reserves device memory (charged to the node's
 * capacity, sf_mem_charge()) in chunks of SC_POOL_CHUNK when an allocation
 * does not fit what it has reserved and not handed out (its free reserve);
 * a free hands the block back to the pool at the call (later allocations
 * of any stream may count on its bytes: each block is memory of its own,
 * so no two ever alias), and the pool keeps the reserve. At a
 * synchronization (cuStreamSynchronize, cuCtxSynchronize,
 * cuEventSynchronize: sc_pool_sync()) every pool gives back to the device
 * what it reserves above max(release threshold, used), in whole chunks;
 * cuMemPoolTrimTo gives back down to its argument the same way. A pool
 * never fragments here: any free reserve can hold any block that fits it.
 *
 * Each block is host memory of its own, registered with the memory
 * registry as external device memory (charged by the pool, not by the
 * registry). A stream-ordered free reaches the executor thread, which may
 * not unregister memory (sf_mem_unregister()): it only marks the block
 * idle; the next pool call of an application thread unregisters and frees
 * idle blocks. Until then a freed
 * pointer stays accessible, as a real pool's memory stays mapped.
 *
 * One device (ordinal 0), one default pool; the device's current pool is
 * what cuMemAllocAsync uses. sc_pool_lock guards every pool and block: it
 * is taken inside nothing of the driver's but the executor's command (a
 * leaf there), and it takes only the memory registry's lock and the
 * device's charge inside.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

#define SC_POOL_CHUNK (2ull << 20)   /* reserve grows and shrinks by this */

struct sc_block {
	void *base;
	size_t size;                  /* rounded to SF_ALIGN: what "used" counts */
	struct CUmemPoolHandle_st *pool;
	bool freeing;                 /* a free is ordered (or done) */
	bool idle;                    /* freed: to unregister and release */
	struct sc_block *next;
};

struct CUmemPoolHandle_st {
	uint64_t reserved, reserved_high;
	uint64_t used, used_high;
	uint64_t threshold;           /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
	uint64_t max_size;            /* 0: the device's */
	int reuse[3];                 /* CU_MEMPOOL_ATTR_REUSE_*: stored, no effect */
	bool dead;                    /* destroyed with blocks still out */
	size_t nblocks;
	struct CUmemPoolHandle_st *next;
};

static pthread_mutex_t sc_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUmemPoolHandle_st sc_default_pool = { .reuse = { 1, 1, 1 } };
static struct CUmemPoolHandle_st *sc_pools = &sc_default_pool;   /* live and dead */
static struct CUmemPoolHandle_st *sc_current = &sc_default_pool;
static struct sc_block *sc_blocks;
static bool sc_default_registered;

static uint64_t sc_chunks(uint64_t n)
{
	return (n + SC_POOL_CHUNK - 1) / SC_POOL_CHUNK * SC_POOL_CHUNK;
}

/* Unlinks and frees a dead pool without blocks. sc_pool_lock held. */
static void sc_pool_forget(struct CUmemPoolHandle_st *p)
{
	for (struct CUmemPoolHandle_st **pp = &sc_pools; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			free(p);
			return;
		}
	}
}

/* Unregisters and frees idle blocks. sc_pool_lock held; not the executor. */
static void sc_pool_reap(void)
{
	struct sc_block **bp = &sc_blocks;

	while (*bp) {
		struct sc_block *b = *bp;

		if (!b->idle) {
			bp = &b->next;
			continue;
		}
		*bp = b->next;
		sf_mem_unregister(b->base);
		free(b->base);
		if (--b->pool->nblocks == 0 && b->pool->dead)
			sc_pool_forget(b->pool);
		free(b);
	}
}

/* Gives back what @p reserves above max(@keep, used), in whole chunks. Locked. */
static void sc_pool_shrink(struct CUmemPoolHandle_st *p, uint64_t keep)
{
	uint64_t k = sc_chunks(keep > p->used ? keep : p->used);

	if (k < p->reserved) {
		sf_mem_uncharge(p->reserved - k);
		p->reserved = k;
	}
}

/* A live pool handle (the default one registered at first use). Locked. */
static struct CUmemPoolHandle_st *sc_pool_get(CUmemoryPool h)
{
	if (!sc_default_registered && sc_handle_add(&sc_default_pool, SC_H_POOL, NULL) == 0)
		sc_default_registered = true;
	return h && sc_handle_valid(h, SC_H_POOL) ? h : NULL;
}

static int sc_device_ok(CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	return dev == 0 ? 0 : -ENODEV;
}

int sc_pool_alloc(CUmemoryPool h, CUdeviceptr *dptr, size_t size, struct CUstream_st *s)
{
	struct CUmemPoolHandle_st *p;
	struct sc_block *b = NULL;
	uint64_t grow = 0;
	size_t rounded = (size + SF_ALIGN - 1) & ~(size_t)(SF_ALIGN - 1);
	int rc = 0;

	if (rounded < size)
		return -ENOMEM;
	pthread_mutex_lock(&sc_pool_lock);
	sc_pool_reap();
	p = sc_pool_get(h ? h : sc_current);
	if (!p) {
		rc = -EINVAL;
		goto out;
	}
	if (p->reserved - p->used < rounded) {
		grow = sc_chunks(rounded - (p->reserved - p->used));
		if (p->max_size && p->reserved + grow > p->max_size)
			rc = -ENOMEM;
		else
			rc = sf_mem_charge(grow);
		if (rc < 0)
			goto out;
	}
	b = calloc(1, sizeof(*b));
	if (b)
		b->base = aligned_alloc(SF_ALIGN, rounded);
	if (!b || !b->base || sf_mem_register(b->base, rounded, SF_MEM_DEVICE, s->ctx) < 0) {
		rc = -ENOMEM;
		if (b)
			free(b->base);
		free(b);
		if (grow)
			sf_mem_uncharge(grow);
		goto out;
	}
	b->size = rounded;
	b->pool = p;
	b->next = sc_blocks;
	sc_blocks = b;
	p->nblocks++;
	p->reserved += grow;
	p->used += rounded;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
	if (p->used > p->used_high)
		p->used_high = p->used;
	*dptr = (CUdeviceptr)(uintptr_t)b->base;
out:
	pthread_mutex_unlock(&sc_pool_lock);
	return rc;
}

/* The block starting at @base, not freed yet; NULL. Locked. */
static struct sc_block *sc_block_find(void *base)
{
	for (struct sc_block *b = sc_blocks; b; b = b->next)
		if (b->base == base && !b->freeing)
			return b;
	return NULL;
}

int sc_pool_mark_freeing(void *base)
{
	struct sc_block *b;

	pthread_mutex_lock(&sc_pool_lock);
	b = sc_block_find(base);
	if (b) {
		b->freeing = true;
		b->pool->used -= b->size;
		/* A destroyed pool keeps only what is still out. */
		if (b->pool->dead) {
			b->pool->reserved -= b->size;
			sf_mem_uncharge(b->size);
		}
	}
	pthread_mutex_unlock(&sc_pool_lock);
	return b ? 0 : -EINVAL;
}

bool sc_pool_freed(void *base)
{
	struct sc_block *b;

	pthread_mutex_lock(&sc_pool_lock);
	for (b = sc_blocks; b; b = b->next)
		if (b->base == base && b->freeing && !b->idle)
			break;
	if (b)
		b->idle = true;
	pthread_mutex_unlock(&sc_pool_lock);
	return b != NULL;
}

void sc_pool_sync(void)
{
	pthread_mutex_lock(&sc_pool_lock);
	sc_pool_reap();
	for (struct CUmemPoolHandle_st *p = sc_pools; p; p = p->next)
		if (!p->dead)
			sc_pool_shrink(p, p->threshold);
	pthread_mutex_unlock(&sc_pool_lock);
}

SC_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	int rc = sc_device_ok(dev);

	if (rc < 0)
		return sc_result(rc);
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sc_pool_lock);
	*pool_out = sc_pool_get(&sc_default_pool);
	pthread_mutex_unlock(&sc_pool_lock);
	return *pool_out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

SC_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	int rc = sc_device_ok(dev);

	if (rc < 0)
		return sc_result(rc);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sc_pool_lock);
	sc_pool_get(NULL);
	*pool = sc_current;
	pthread_mutex_unlock(&sc_pool_lock);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	int rc = sc_device_ok(dev);
	struct CUmemPoolHandle_st *p;

	if (rc < 0)
		return sc_result(rc);
	pthread_mutex_lock(&sc_pool_lock);
	p = sc_pool_get(pool);
	if (p)
		sc_current = p;
	pthread_mutex_unlock(&sc_pool_lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Pinned device memory of device 0, no shareable handle types. */
SC_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	struct CUmemPoolHandle_st *p;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (props->location.id != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return CUDA_ERROR_NOT_SUPPORTED;
	p = calloc(1, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p->max_size = props->maxSize;
	p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
	if (sc_handle_add(p, SC_H_POOL, NULL) < 0) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&sc_pool_lock);
	p->next = sc_pools;
	sc_pools = p;
	pthread_mutex_unlock(&sc_pool_lock);
	*pool = p;
	return CUDA_SUCCESS;
}

/*
 * The default pool cannot be destroyed. A pool with blocks still out goes
 * at once for the application; it keeps reserved only what they hold, and
 * gives each back when freed. The device's current pool becomes its
 * default one again.
 */
SC_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	struct CUmemPoolHandle_st *p;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	pthread_mutex_lock(&sc_pool_lock);
	sc_pool_reap();
	p = sc_pool_get(pool);
	if (!p || p == &sc_default_pool || !sc_handle_del(p, SC_H_POOL)) {
		pthread_mutex_unlock(&sc_pool_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (sc_current == p)
		sc_current = &sc_default_pool;
	sf_mem_uncharge(p->reserved - p->used);
	p->reserved = p->used;
	p->dead = true;
	if (p->nblocks == 0)
		sc_pool_forget(p);
	pthread_mutex_unlock(&sc_pool_lock);
	return CUDA_SUCCESS;
}

/* REUSE_* are int; the others cuuint64_t. */
SC_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
					 void *value)
{
	struct CUmemPoolHandle_st *p;
	CUresult r = CUDA_SUCCESS;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sc_pool_lock);
	sc_pool_reap();
	p = sc_pool_get(pool);
	if (!p) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = p->threshold;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
		*(cuuint64_t *)value = p->reserved;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		*(cuuint64_t *)value = p->reserved_high;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = p->used;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = p->used_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
out:
	pthread_mutex_unlock(&sc_pool_lock);
	return r;
}

/* The _HIGH marks may only be reset (to 0: the current figure). */
SC_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
					 void *value)
{
	struct CUmemPoolHandle_st *p;
	CUresult r = CUDA_SUCCESS;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sc_pool_lock);
	p = sc_pool_get(pool);
	if (!p) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = !!*(int *)value;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->threshold = *(cuuint64_t *)value;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(cuuint64_t *)value != 0) {
			r = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
			p->reserved_high = p->reserved;
		else
			p->used_high = p->used;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
out:
	pthread_mutex_unlock(&sc_pool_lock);
	return r;
}

/* Keeps at least @minBytesToKeep reserved (and what is handed out). */
SC_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	struct CUmemPoolHandle_st *p;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	pthread_mutex_lock(&sc_pool_lock);
	sc_pool_reap();
	p = sc_pool_get(pool);
	if (p)
		sc_pool_shrink(p, minBytesToKeep);
	pthread_mutex_unlock(&sc_pool_lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
