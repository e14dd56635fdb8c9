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
 * cuMemAllocAsync through @real (the variant the call came to, with the
 * stream the driver is to get): counted as cuMemAlloc_v2 is.
 */
CUresult cu_mem_alloc_async(CUdeviceptr *p, size_t n,
			    CUresult (*real)(CUdeviceptr *, size_t, CUstream), CUstream h);

/* @p, device memory of cuMemAlloc*, was freed (by the driver's answer). */
void cu_mem_freed(CUdeviceptr p);

#endif
