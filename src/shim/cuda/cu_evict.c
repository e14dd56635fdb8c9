/*
 * Preemption that frees memory, the CUDA shim's half (see cu_evict.h).
 *
 * State: the allocations on a list, each with its physical memory (h) or,
 * evicted, its contents on the host (host). ce_lock is held for every
 * change of the list and for a whole eviction or restoration, so frees and
 * new allocations wait for one to end. ce_state says whether any memory is
 * away (or moving); the gate reads it without the lock.
 *
 * The gate: a thread about to call the driver with something that may
 * touch device memory counts itself in ce_inside, then reads ce_state; an
 * eviction stores ce_state, then waits for ce_inside to drop to zero. Both
 * sequentially consistent (a Dekker pair): either the eviction sees the
 * thread inside and waits for its call to return, or the thread sees the
 * eviction and steps back, to wait for the memory to come back. A thread
 * inside never waits for anything but the driver, so the eviction's wait
 * is short: the gate is taken after whatever waits for the application's
 * queues (cs_sync(), cs_ctx_sync()), never around it.
 *
 * Held: memory evicted for another process stays away until the scheduler
 * lets it back (cu_evict_hold()); a gate meanwhile waits. Without a
 * scheduler to ask (no daemon, or a test), the gate restores at once.
 */
#include "shim/cuda/cu_evict.h"
#include "shim/common/shim_mem.h"
#include "agent/agent_mem.h"
#include "shim/common/shim_map.h"
#include "base/clock.h"
#include "base/size.h"
#include "base/xlog.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CE_RETURNS 32           /* generic calls nested in one thread, at most */
#define CE_ORDINALS 64          /* devices whose granularity is kept */

enum { CE_RESIDENT, CE_MOVING, CE_AWAY };

struct ce_alloc {
	struct shim_map_node node;      /* first: key the address */
	struct ce_alloc *next;
	CUdeviceptr va;
	size_t size;                    /* reserved and mapped: granularity multiple */
	size_t asked;                   /* the application's: what is copied */
	CUcontext ctx;                  /* current at the allocation */
	CUdevice dev;
	CUmemGenericAllocationHandle h; /* 0 while evicted */
	void *host;                     /* the contents while evicted */
	struct shim_mem_dev *d;         /* its device's figures (NULL: not counted) */
};

bool cu_evict_armed;

static struct shim_map ce_map = SHIM_MAP_INIT;
static pthread_mutex_t ce_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ce_alloc *ce_list;
static _Atomic int ce_state;
static _Atomic int ce_inside;
static _Atomic bool ce_hold;
static _Atomic uint64_t ce_away;
static size_t ce_gran[CE_ORDINALS];

static _Thread_local uintptr_t ce_ret[CE_RETURNS];
static _Thread_local unsigned ce_nret;

static int64_t ce_sched_evict(void);
static int ce_sched_restore(void);
static void ce_sched_release(void);

/* XSCHED_MEMORY_PREEMPTION=1, at load: the generic hooks read the flag
 * before any call could have set it later. */
__attribute__((constructor)) static void ce_init(void)
{
	const char *v = getenv("XSCHED_MEMORY_PREEMPTION");

	cu_evict_armed = v && !strcmp(v, "1");
	if (v && *v && strcmp(v, "0") && strcmp(v, "1"))
		xlog(XLOG_WARN, "XSCHED_MEMORY_PREEMPTION=%s is not 0 or 1: memory preemption "
		     "stays off", v);
	if (cu_evict_armed)
		agent_mem_on_evict(ce_sched_evict, ce_sched_restore, ce_sched_release);
}

/* @a's bytes into (@sign 1) or out of (-1) its device's @field. */
static void ce_count(struct ce_alloc *a, _Atomic uint64_t *field, int sign)
{
	if (!a->d)
		return;
	if (sign > 0)
		atomic_fetch_add(field, a->size);
	else
		atomic_fetch_sub(field, a->size);
	agent_mem_publish(a->d->index);
}

/*
 * Host memory for an evicted allocation's contents: mapped with its pages
 * populated at once (taking a page fault per page while the copy writes
 * them was most of an eviction's time, bench_cuda_evict).
 */
static void *ce_host_get(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void ce_host_put(void *p, size_t n)
{
	munmap(p, n ? n : 1);
}

static CUmemAllocationProp ce_prop(CUdevice dev)
{
	return (CUmemAllocationProp){
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
}

/* Physical memory for @a, mapped at its address and open to its device. */
static CUresult ce_map_in(struct ce_alloc *a)
{
	CUmemAllocationProp prop = ce_prop(a->dev);
	CUmemAccessDesc acc = { .location = { CU_MEM_LOCATION_TYPE_DEVICE, a->dev },
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUresult rc = cu_real.cuMemCreate(&h, a->size, &prop, 0);

	if (rc != CUDA_SUCCESS)
		return rc;
	rc = cu_real.cuMemMap(a->va, a->size, 0, h, 0);
	if (rc == CUDA_SUCCESS) {
		rc = cu_real.cuMemSetAccess(a->va, a->size, &acc, 1);
		if (rc != CUDA_SUCCESS)
			cu_real.cuMemUnmap(a->va, a->size);
	}
	if (rc != CUDA_SUCCESS) {
		cu_real.cuMemRelease(h);
		return rc;
	}
	a->h = h;
	return CUDA_SUCCESS;
}

static void ce_map_out(struct ce_alloc *a)
{
	cu_real.cuMemUnmap(a->va, a->size);
	cu_real.cuMemRelease(a->h);
	a->h = 0;
}

CUresult cu_evict_alloc(CUdeviceptr *p, size_t n, size_t *taken, struct shim_mem_dev *d)
{
	struct ce_alloc *a = calloc(1, sizeof(*a));
	CUmemAllocationProp prop;
	size_t gran = 0;
	CUresult rc;

	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = cu_real.cuCtxGetCurrent(&a->ctx);
	if (rc == CUDA_SUCCESS && !a->ctx)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		rc = cu_real.cuCtxGetDevice(&a->dev);
	if (rc == CUDA_SUCCESS && a->dev >= 0 && a->dev < CE_ORDINALS)
		gran = ce_gran[a->dev];
	prop = ce_prop(a->dev);
	if (rc == CUDA_SUCCESS && !gran)
		rc = cu_real.cuMemGetAllocationGranularity(&gran, &prop,
							    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (rc == CUDA_SUCCESS && !gran)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (rc != CUDA_SUCCESS) {
		free(a);
		return rc;
	}
	if (a->dev < CE_ORDINALS)
		ce_gran[a->dev] = gran;
	a->asked = n;
	a->size = (n + gran - 1) / gran * gran;
	rc = cu_real.cuMemAddressReserve(&a->va, a->size, 0, 0, 0);
	if (rc == CUDA_SUCCESS) {
		rc = ce_map_in(a);
		if (rc != CUDA_SUCCESS)
			cu_real.cuMemAddressFree(a->va, a->size);
	}
	if (rc != CUDA_SUCCESS) {
		free(a);
		return rc;
	}
	a->d = d;
	pthread_mutex_lock(&ce_lock);
	a->next = ce_list;
	ce_list = a;
	shim_map_insert(&ce_map, &a->node, (const void *)(uintptr_t)a->va);
	if (a->d)
		ce_count(a, &a->d->c.evictable, 1);
	pthread_mutex_unlock(&ce_lock);
	*p = a->va;
	*taken = a->size;
	return CUDA_SUCCESS;
}

bool cu_evict_free(CUdeviceptr p, CUresult *rc)
{
	struct ce_alloc *a, **pp;

	if (!cu_evict_armed || !p || !shim_map_find(&ce_map, (const void *)(uintptr_t)p))
		return false;
	pthread_mutex_lock(&ce_lock);
	a = (struct ce_alloc *)shim_map_remove(&ce_map, (const void *)(uintptr_t)p);
	for (pp = &ce_list; a && *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	if (a && a->h)
		ce_map_out(a);
	if (a && a->host) {
		atomic_fetch_sub(&ce_away, a->size);
		if (a->d)
			ce_count(a, &a->d->c.evicted, -1);
	}
	if (a && a->d)
		ce_count(a, &a->d->c.evictable, -1);
	pthread_mutex_unlock(&ce_lock);
	if (!a)
		return false;
	*rc = cu_real.cuMemAddressFree(a->va, a->size);
	if (a->host)
		ce_host_put(a->host, a->asked);
	free(a);
	return true;
}

/* Waits for the work of every context that holds such memory. ce_lock held. */
static void ce_sync_contexts(void)
{
	struct ce_alloc *a, *b;
	CUcontext prev;

	for (a = ce_list; a; a = a->next) {
		for (b = ce_list; b != a && b->ctx != a->ctx; b = b->next)
			;
		if (b != a || cu_real.cuCtxPushCurrent_v2(a->ctx) != CUDA_SUCCESS)
			continue;
		cu_real.cuCtxSynchronize();
		cu_real.cuCtxPopCurrent_v2(&prev);
	}
}

/* A copy between @a's address and the host in @a's context. */
static CUresult ce_copy(struct ce_alloc *a, bool out)
{
	CUcontext prev;
	CUresult rc = cu_real.cuCtxPushCurrent_v2(a->ctx);

	if (rc != CUDA_SUCCESS)
		return rc;
	rc = out ? cu_real.cuMemcpyDtoH_v2(a->host, a->va, a->asked) :
		   cu_real.cuMemcpyHtoD_v2(a->va, a->host, a->asked);
	cu_real.cuCtxPopCurrent_v2(&prev);
	return rc;
}

int64_t cu_evict_all(void)
{
	struct ce_alloc *a;
	int64_t freed = 0;
	CUresult rc = CUDA_SUCCESS;

	if (!cu_evict_armed)
		return 0;
	pthread_mutex_lock(&ce_lock);
	atomic_store(&ce_state, CE_MOVING);
	/* A call inside may wait in the driver for a while (a synchronous
	 * copy behind a stream wait): sleep, not spin, past the first turns. */
	for (unsigned spins = 0; atomic_load(&ce_inside); spins++) {
		if (spins < 64)
			sched_yield();
		else
			usleep(100);
	}
	ce_sync_contexts();
	for (a = ce_list; a && rc == CUDA_SUCCESS; a = a->next) {
		if (!a->h)
			continue;
		a->host = ce_host_get(a->asked);
		if (!a->host) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		rc = ce_copy(a, true);
		if (rc != CUDA_SUCCESS) {
			ce_host_put(a->host, a->asked);
			a->host = NULL;
			break;
		}
		ce_map_out(a);
		freed += (int64_t)a->size;
		atomic_fetch_add(&ce_away, a->size);
		if (a->d)
			ce_count(a, &a->d->c.evicted, 1);
	}
	atomic_store(&ce_state, atomic_load(&ce_away) ? CE_AWAY : CE_RESIDENT);
	pthread_mutex_unlock(&ce_lock);
	if (rc != CUDA_SUCCESS)
		xlog(XLOG_WARN, "evicting device memory failed (CUresult %d): %lld bytes evicted, "
		     "the rest stays on the device", (int)rc, (long long)freed);
	return rc == CUDA_SUCCESS ? freed : -EIO;
}

int cu_evict_restore(void)
{
	struct ce_alloc *a;
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&ce_lock);
	if (atomic_load(&ce_state) != CE_AWAY) {
		pthread_mutex_unlock(&ce_lock);
		return 0;
	}
	atomic_store(&ce_state, CE_MOVING);
	for (a = ce_list; a; a = a->next) {
		if (!a->host)
			continue;
		rc = ce_map_in(a);
		if (rc != CUDA_SUCCESS)
			break;
		rc = ce_copy(a, false);
		if (rc != CUDA_SUCCESS) {
			ce_map_out(a);
			break;
		}
		ce_host_put(a->host, a->asked);
		a->host = NULL;
		atomic_fetch_sub(&ce_away, a->size);
		if (a->d)
			ce_count(a, &a->d->c.evicted, -1);
	}
	atomic_store(&ce_state, atomic_load(&ce_away) ? CE_AWAY : CE_RESIDENT);
	pthread_mutex_unlock(&ce_lock);
	if (rc == CUDA_SUCCESS)
		return 0;
	/* Anything but memory is a driver we cannot help: said, and retried. */
	if (rc != CUDA_ERROR_OUT_OF_MEMORY)
		XLOG_ONCE(XLOG_WARN, "restoring evicted device memory failed (CUresult %d); "
			  "retrying", (int)rc);
	return -ENOMEM;
}

uint64_t cu_evict_away(void)
{
	return atomic_load(&ce_away);
}

void cu_evict_hold(bool hold)
{
	atomic_store(&ce_hold, hold);
}

/* The scheduler evicts for a process of higher priority: kept away until
 * it lets the memory back. On the agent thread (agent_mem.h). */
static int64_t ce_sched_evict(void)
{
	int64_t freed;

	cu_evict_hold(true);
	freed = cu_evict_all();
	if (!atomic_load(&ce_away))
		cu_evict_hold(false);
	return freed;
}

/* Whether the device of the evicted memory has room for all of it now. */
static bool ce_room(void)
{
	struct ce_alloc *a;
	size_t free = 0, total = 0;
	CUcontext prev;
	bool room = true;

	pthread_mutex_lock(&ce_lock);
	for (a = ce_list; a && !a->host; a = a->next)
		;
	if (a && cu_real.cuCtxPushCurrent_v2(a->ctx) == CUDA_SUCCESS) {
		if (cu_real.cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS)
			room = free >= atomic_load(&ce_away);
		cu_real.cuCtxPopCurrent_v2(&prev);
	}
	pthread_mutex_unlock(&ce_lock);
	return room;
}

/* All or nothing, so that a part of it does not take the room the process
 * it was evicted for may want next. */
static int ce_sched_restore(void)
{
	int rc;

	if (!ce_room())
		return -ENOMEM;
	cu_evict_hold(false);
	rc = cu_evict_restore();
	if (rc < 0)
		cu_evict_hold(true);
	return rc;
}

/* No scheduler to ask: the memory comes back at the process's next touch. */
static void ce_sched_release(void)
{
	cu_evict_hold(false);
}

/* The memory is away: waits until the scheduler lets it back and the
 * device has room for it, and restores it. */
static void ce_wait_back(void)
{
	static _Atomic bool said;
	unsigned ms = 1;
	char away[SIZE_TEXT];

	while (atomic_load(&ce_state) != CE_RESIDENT) {
		if (!atomic_load(&ce_hold) && cu_evict_restore() == 0)
			continue;
		if (atomic_load(&ce_state) == CE_AWAY)
			xlog_once(&said, XLOG_INFO, "waiting for %s of device memory to restore what "
				  "the scheduler evicted for a process of higher priority",
				  size_format(atomic_load(&ce_away), away, sizeof(away)));
		usleep(ms * 1000);
		ms = ms < 100 ? ms * 2 : 100;
	}
}

void cu_evict_enter(void)
{
	if (!cu_evict_armed)
		return;
	for (;;) {
		atomic_fetch_add(&ce_inside, 1);
		if (atomic_load(&ce_state) == CE_RESIDENT)
			return;
		atomic_fetch_sub(&ce_inside, 1);
		ce_wait_back();
	}
}

void cu_evict_leave(void)
{
	if (cu_evict_armed)
		atomic_fetch_sub(&ce_inside, 1);
}

void cu_evict_call(uintptr_t ret)
{
	if (!cu_evict_armed)
		return;
	if (ce_nret == CE_RETURNS) {
		xlog(XLOG_ERROR, "more than %d CUDA calls nested in one thread: aborting",
		     CE_RETURNS);
		abort();
	}
	cu_evict_enter();
	ce_ret[ce_nret++] = ret;
}

uintptr_t cu_evict_return(void)
{
	cu_evict_leave();
	return ce_ret[--ce_nret];
}
