/*
 * Device memory of the CUDA shim (cu_mem.c): what the process holds on each
 * device, its limit there, and the application's view of both
 * (shim/common/shim_mem.h). The hooks of the allocation functions live in
 * cu_mem.c; the frees that other files hook tell it here.
 */
#ifndef XS_CU_MEM_H
#define XS_CU_MEM_H

#include "shim/cuda/cu_shim.h"

/*
 * A stream-ordered allocation of @n bytes: cuMemAllocAsync through @real
 * (@real_pool NULL; from the device's current pool), or
 * cuMemAllocFromPoolAsync from @pool through @real_pool (the variant the
 * call came to, with the stream @h the driver is to get). Refused
 * (CUDA_ERROR_OUT_OF_MEMORY, one warning) when the pool's free reserve
 * cannot hold @n and @n more would pass the limit; afterwards the device
 * counts what the pool reserves. Returns the driver's answer otherwise.
 */
CUresult cu_mem_alloc_async(CUdeviceptr *p, size_t n, CUmemoryPool pool,
			    CUresult (*real)(CUdeviceptr *, size_t, CUstream),
			    CUresult (*real_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream),
			    CUstream h);

/*
 * @p, device memory of cuMemAlloc*, was freed (by the driver's answer);
 * for memory of a pool, the pools' reserves are counted again.
 */
void cu_mem_freed(CUdeviceptr p);

/*
 * Counts again what each pool the process allocated from reserves (after
 * a synchronization, where the driver may give reserve back). Any thread.
 */
void cu_mem_pools_update(void);

#endif
