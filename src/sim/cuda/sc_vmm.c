/*
 * Virtual memory management of the simulated CUDA driver: address
 * reservations, physical allocations, their mappings and access.
 *
 * Design: the calls do to the process's address space what the real
 * driver does to the GPU's. A reservation is an inaccessible anonymous
 * mapping (PROT_NONE) that holds the range; a physical allocation is a
 * memfd of its size, charged to the device's memory, so it can be mapped
 * at any address and keeps its contents across unmap and map; cuMemMap
 * maps it over part of a reservation (MAP_FIXED | MAP_SHARED), still
 * inaccessible; cuMemSetAccess makes it accessible and registers it with
 * the memory registry (sf_memreg.c), which is what lets copies, memsets
 * and kernels use it; cuMemUnmap unregisters it (waiting for device
 * commands touching registered memory at that moment) and puts the
 * inaccessible reservation back. The registry knows the reservations, so
 * an address inside one that has no accessible mapping is a device fault
 * (CUDA_ERROR_ILLEGAL_ADDRESS: at the call for synchronous copies and
 * memsets, as the context's sticky error for work that runs later), never
 * a silent success. A physical allocation is freed once it is released
 * and no longer mapped, whichever comes last. cuMemUnmap does not wait
 * for work queued before it: such work that touches the range faults.
 *
 * Limits of the model: one device, no shareable handles, mappings at
 * offset 0 (as the API requires today), access granted to whole mappings,
 * and read-only access lets the device write (the registry does not know
 * directions). Everything is under one mutex (sc_vmm_lock), a leaf below
 * the contexts' locks; the registry's locks are taken inside it.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* What real GPUs report for both granularities. */
#define SC_VMM_GRAN (2ull << 20)

struct sc_resv {
	uintptr_t base;
	size_t size;
	struct sc_resv *next;
};

/* A physical allocation; its handle is its address. */
struct sc_phys {
	int fd;
	size_t size;                  /* charged */
	unsigned maps;                /* mappings of it */
	bool released;                /* cuMemRelease'd: the handle is gone */
};

struct sc_map {
	uintptr_t base;
	size_t size;
	struct sc_phys *phys;
	bool access;                  /* registered with sf_memreg */
	struct sc_map *next;
};

static pthread_mutex_t sc_vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_resv *sc_resvs;     /* sc_vmm_lock */
static struct sc_map *sc_maps;       /* sc_vmm_lock */

static bool sc_gran_ok(uint64_t v)
{
	return v % SC_VMM_GRAN == 0;
}

/* The reservation holding all of [@p, @p + @n), or NULL. sc_vmm_lock held. */
static struct sc_resv *sc_resv_find(uintptr_t p, size_t n)
{
	struct sc_resv *r;

	for (r = sc_resvs; r; r = r->next)
		if (p >= r->base && n <= r->size && p - r->base <= r->size - n)
			return r;
	return NULL;
}

/* The mapping starting exactly at @p, or NULL. sc_vmm_lock held. */
static struct sc_map *sc_map_at(uintptr_t p)
{
	struct sc_map *m;

	for (m = sc_maps; m; m = m->next)
		if (m->base == p)
			return m;
	return NULL;
}

/* Whether a mapping overlaps [@p, @p + @n). sc_vmm_lock held. */
static bool sc_map_overlaps(uintptr_t p, size_t n)
{
	struct sc_map *m;

	for (m = sc_maps; m; m = m->next)
		if (m->base < p + n && p < m->base + m->size)
			return true;
	return false;
}

/*
 * Whether [@p, @p + @n) is exactly a run of whole mappings side by side.
 * sc_vmm_lock held.
 */
static bool sc_maps_cover(uintptr_t p, size_t n)
{
	uintptr_t at = p, end = p + n;
	struct sc_map *m;

	if (!n || end < p)
		return false;
	while (at < end) {
		m = sc_map_at(at);
		if (!m || m->size > end - at)
			return false;
		at += m->size;
	}
	return true;
}

/* Closes and uncharges @ph once released and unmapped. sc_vmm_lock held. */
static void sc_phys_put(struct sc_phys *ph)
{
	if (!ph->released || ph->maps)
		return;
	close(ph->fd);
	sf_mem_uncharge(ph->size);
	free(ph);
}

/* The checks of an allocation's properties: 0, -EINVAL, -ENODEV, -EOPNOTSUPP. */
static int sc_prop_check(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return -EINVAL;
	if (prop->location.id != 0)
		return -ENODEV;
	/* No shareable handles here: nothing could import them. */
	return prop->requestedHandleTypes == CU_MEM_HANDLE_TYPE_NONE ? 0 : -EOPNOTSUPP;
}

SC_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity,
						 const CUmemAllocationProp *prop,
						 CUmemAllocationGranularity_flags option)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
			     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_prop_check(prop);
	if (rc < 0)
		return sc_result(rc);
	*granularity = SC_VMM_GRAN;
	return CUDA_SUCCESS;
}

/*
 * An inaccessible range of @size bytes aligned to @align, at @hint if it
 * is free there; MAP_FAILED if the address space is exhausted.
 */
static void *sc_reserve_range(size_t size, size_t align, uintptr_t hint)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	uint8_t *p, *a;
	size_t extra;

	if (hint && hint % align == 0) {
		p = mmap((void *)hint, size, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && (uintptr_t)p == hint)
			return p;
		if (p != MAP_FAILED)
			munmap(p, size);    /* a kernel without NOREPLACE moved it */
	}
	if (size + align < size)
		return MAP_FAILED;
	p = mmap(NULL, size + align, PROT_NONE, flags, -1, 0);
	if (p == MAP_FAILED)
		return p;
	a = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	extra = (size_t)(a - p);
	if (extra)
		munmap(p, extra);
	if (align - extra)
		munmap(a + size, align - extra);
	return a;
}

/* @addr is a hint, as with the real driver: another range is no error. */
SC_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				       CUdeviceptr addr, unsigned long long flags)
{
	struct sc_resv *r;
	void *p;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!ptr || !size || !sc_gran_ok(size) || flags || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment < SC_VMM_GRAN)
		alignment = SC_VMM_GRAN;
	r = malloc(sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = sc_reserve_range(size, alignment, (uintptr_t)addr);
	if (p == MAP_FAILED) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rc = sf_mem_reserve(p, size);
	if (rc < 0) {
		munmap(p, size);
		free(r);
		return sc_result(rc);
	}
	r->base = (uintptr_t)p;
	r->size = size;
	pthread_mutex_lock(&sc_vmm_lock);
	r->next = sc_resvs;
	sc_resvs = r;
	pthread_mutex_unlock(&sc_vmm_lock);
	*ptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/* The whole reservation, with nothing mapped in it any more. */
SC_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct sc_resv **pp, *r = NULL;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	pthread_mutex_lock(&sc_vmm_lock);
	for (pp = &sc_resvs; *pp; pp = &(*pp)->next) {
		if ((*pp)->base == (uintptr_t)ptr && (*pp)->size == size) {
			r = *pp;
			break;
		}
	}
	if (r && !sc_map_overlaps(r->base, r->size))
		*pp = r->next;
	else
		r = NULL;
	pthread_mutex_unlock(&sc_vmm_lock);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	sf_mem_unreserve((void *)r->base);
	munmap((void *)r->base, r->size);
	free(r);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			       const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct sc_phys *ph;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!handle || !size || !sc_gran_ok(size) || flags)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_prop_check(prop);
	if (rc == 0)
		rc = sf_mem_charge(size);
	if (rc < 0)
		return sc_result(rc);
	ph = calloc(1, sizeof(*ph));
	if (!ph)
		goto fail;
	ph->size = size;
	ph->fd = memfd_create("xsched-sim-vmm", MFD_CLOEXEC);
	if (ph->fd < 0)
		goto fail;
	if (ftruncate(ph->fd, (off_t)size) < 0 || sc_handle_add(ph, SC_H_PHYS, NULL) < 0) {
		close(ph->fd);
		goto fail;
	}
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)ph;
	return CUDA_SUCCESS;
fail:
	free(ph);
	sf_mem_uncharge(size);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* The memory itself goes when its last mapping does. */
SC_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct sc_phys *ph = (struct sc_phys *)(uintptr_t)handle;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	pthread_mutex_lock(&sc_vmm_lock);
	if (!sc_handle_del(ph, SC_H_PHYS)) {
		pthread_mutex_unlock(&sc_vmm_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	ph->released = true;
	sc_phys_put(ph);
	pthread_mutex_unlock(&sc_vmm_lock);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct sc_phys *ph = (struct sc_phys *)(uintptr_t)handle;
	uintptr_t p = (uintptr_t)ptr;
	struct sc_map *m;
	CUresult r = CUDA_SUCCESS;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!size || !sc_gran_ok(p) || !sc_gran_ok(size) || offset || flags)
		return CUDA_ERROR_INVALID_VALUE;
	m = malloc(sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sc_vmm_lock);
	if (!sc_handle_valid(ph, SC_H_PHYS))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (size > ph->size || !sc_resv_find(p, size) || sc_map_overlaps(p, size))
		r = CUDA_ERROR_INVALID_VALUE;
	/* Inaccessible until cuMemSetAccess, as on the device. */
	else if (mmap((void *)p, size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->fd, 0) == MAP_FAILED)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		*m = (struct sc_map){ .base = p, .size = size, .phys = ph, .next = sc_maps };
		sc_maps = m;
		ph->maps++;
	}
	pthread_mutex_unlock(&sc_vmm_lock);
	if (r != CUDA_SUCCESS)
		free(m);
	return r;
}

/* Puts mapping @m's range back as part of its reservation. sc_vmm_lock held. */
static void sc_map_drop(struct sc_map *m)
{
	struct sc_map **pp;

	/* First out of the registry: afterwards no device command touches it. */
	if (m->access)
		sf_mem_unregister((void *)m->base);
	mmap((void *)m->base, m->size, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	for (pp = &sc_maps; *pp != m; pp = &(*pp)->next)
		;
	*pp = m->next;
	m->phys->maps--;
	sc_phys_put(m->phys);
	free(m);
}

/* Whole mappings only, as the API says. */
SC_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	uintptr_t at = (uintptr_t)ptr, end = at + size;
	struct sc_map *m;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	pthread_mutex_lock(&sc_vmm_lock);
	if (!sc_maps_cover(at, size)) {
		pthread_mutex_unlock(&sc_vmm_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	while (at < end) {
		m = sc_map_at(at);
		at += m->size;
		sc_map_drop(m);
	}
	pthread_mutex_unlock(&sc_vmm_lock);
	return CUDA_SUCCESS;
}

/* Gives mapping @m access @flags (CU_MEM_ACCESS_FLAGS_PROT_*). sc_vmm_lock held. */
static int sc_map_access(struct sc_map *m, CUmemAccess_flags flags)
{
	bool want = flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
	int rc;

	if (want == m->access)
		return 0;
	if (!want) {
		sf_mem_unregister((void *)m->base);
		mprotect((void *)m->base, m->size, PROT_NONE);
		m->access = false;
		return 0;
	}
	if (mprotect((void *)m->base, m->size, PROT_READ | PROT_WRITE) < 0)
		return -ENOMEM;
	rc = sf_mem_register((void *)m->base, m->size, SF_MEM_DEVICE, NULL);
	if (rc < 0) {
		mprotect((void *)m->base, m->size, PROT_NONE);
		return rc;
	}
	m->access = true;
	return 0;
}

/*
 * The range must be whole mappings side by side; the last descriptor of
 * the device decides (the host's access to device memory is not modelled).
 */
SC_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
				  size_t count)
{
	uintptr_t at = (uintptr_t)ptr, end = at + size;
	CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	struct sc_map *m;
	size_t i;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!desc || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
		if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
		flags = desc[i].flags;
	}
	pthread_mutex_lock(&sc_vmm_lock);
	if (!sc_maps_cover(at, size))
		rc = -EINVAL;
	while (rc == 0 && at < end) {
		m = sc_map_at(at);
		at += m->size;
		rc = sc_map_access(m, flags);
	}
	pthread_mutex_unlock(&sc_vmm_lock);
	return sc_result(rc);
}
