/*
 * What the CUDA driver-API benchmarks share (bench_cuda_launch,
 * bench_cuda_mem, bench_cuda_evict, bench_mem_oversub, cu_load): CK(),
 * which ends the program when a driver call fails, and the context every
 * one of them starts with. A benchmark may exit on an error, unlike a
 * library: a failed call voids the measurement.
 *
 * Define BENCH_PROG, the program's name for messages, before including.
 */
#ifndef XS_BENCH_CUDA_H
#define XS_BENCH_CUDA_H

#include "vendor/cuda/cu_api.h"

#include <stdio.h>
#include <stdlib.h>

/* The simulated driver's directory in this build (CMake), else "". */
#ifndef XS_SIM_CUDA_DIR
#define XS_SIM_CUDA_DIR ""
#endif

#ifndef BENCH_PROG
#error "define BENCH_PROG (the program's name, a string) before bench_cuda.h"
#endif

/* Prints "BENCH_PROG: <call> = <CUresult>" and exits 1 unless @call succeeds. */
#define CK(call)                                                                   \
	do {                                                                       \
		CUresult rc_ = (call);                                             \
		if (rc_ != CUDA_SUCCESS) {                                         \
			fprintf(stderr, BENCH_PROG ": %s = %d\n", #call, rc_);     \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

/* cuInit, then device 0's primary context made current; returns device 0. */
static inline CUdevice bench_cu_init(void)
{
	CUcontext ctx;
	CUdevice dev;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	return dev;
}

#endif
