/*
 * The driver entry points the CUDA shim schedules (HOOK rows of
 * cu_functions.def). Each one either becomes a command of its stream's XQueue or
 * first brings that queue to the point the driver would have reached
 * (launched or completed), then makes the call itself; nothing a stream
 * takes goes around its queue. A per-thread-default-stream variant (_ptsz,
 * _ptds) shares the implementation of its base, with NULL meaning the
 * calling thread's per-thread stream.
 *
 * Whenever a call cannot be scheduled (no context, an unknown stream, a
 * capture, a kernel whose parameter layout is unknown, pass-through mode)
 * it goes straight to the driver, after flushing the stream's queue where
 * order matters.
 */
#include "shim/cuda/cu_cmds.h"
#include "shim/cuda/cu_events.h"
#include "shim/cuda/cu_graph.h"
#include "shim/cuda/cu_mem.h"

#include <stdatomic.h>
#include <stdint.h>

/* The stream to schedule on, or NULL to pass through. */
static struct cs_stream *sched_stream(CUstream h, bool ptsz)
{
	if (cu_load() < 0 || cu_passthrough())
		return NULL;
	return cs_stream_of(h, ptsz);
}

/*
 * The stream a call that goes straight to the driver receives: the
 * scheduled stream's buffered work is launched first, so the call does not
 * overtake it.
 */
static CUstream direct_stream(struct cs_stream *s, CUstream h, bool ptsz)
{
	return cs_direct(s, h, ptsz);
}

/* --- kernels ---------------------------------------------------------------- */

static CUresult do_cuLaunchKernel(bool ptsz, CUfunction f, unsigned gx, unsigned gy,
				  unsigned gz, unsigned bx, unsigned by, unsigned bz,
				  unsigned shmem, CUstream h, void **params, void **extra)
{
	const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	/* What the driver refuses at once must not become a late error. */
	if (s && (!f || !cmd_kernel_args_valid(f, params, extra)))
		return CUDA_ERROR_INVALID_VALUE;
	if (s && (c = cmd_kernel(s, f, grid, block, shmem, params, extra, false)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuLaunchKernel, "_ptsz")(f, gx, gy, gz, bx, by, bz, shmem,
						   direct_stream(s, h, ptsz), params, extra);
}

#define LAUNCH_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, \
		       unsigned by, unsigned bz, unsigned shmem, CUstream h, void **params, \
		       void **extra)
#define LAUNCH_ARGS f, gx, gy, gz, bx, by, bz, shmem, h, params, extra
XS_CU_PAIR(CUresult, cuLaunchKernel, cuLaunchKernel_ptsz, LAUNCH_PARAMS, LAUNCH_ARGS)

static CUresult do_cuLaunchCooperativeKernel(bool ptsz, CUfunction f, unsigned gx,
					     unsigned gy, unsigned gz, unsigned bx,
					     unsigned by, unsigned bz, unsigned shmem,
					     CUstream h, void **params)
{
	const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (!f || !cmd_kernel_args_valid(f, params, NULL)))
		return CUDA_ERROR_INVALID_VALUE;
	if (s && (c = cmd_kernel(s, f, grid, block, shmem, params, NULL, true)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuLaunchCooperativeKernel, "_ptsz")(f, gx, gy, gz, bx, by, bz,
							      shmem, direct_stream(s, h, ptsz), params);
}

XS_CU_PAIR(CUresult, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz,
	   (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	    unsigned bz, unsigned shmem, CUstream h, void **params),
	   f, gx, gy, gz, bx, by, bz, shmem, h, params)

static CUresult do_cuLaunchKernelEx(bool ptsz, const CUlaunchConfig *cfg, CUfunction f,
				    void **params, void **extra)
{
	struct cs_stream *s = cfg ? sched_stream(cfg->hStream, ptsz) : NULL;
	struct xal_cuda_cmd *c;
	CUlaunchConfig real;

	if (s && (!f || (cfg->numAttrs && !cfg->attrs) ||
		  !cmd_kernel_args_valid(f, params, extra)))
		return CUDA_ERROR_INVALID_VALUE;
	if (s && (c = cmd_kernel_ex(s, cfg, f, params, extra)))
		return cs_submit(s, c, NULL);
	if (!cfg)
		return REAL(ptsz, cuLaunchKernelEx, "_ptsz")(cfg, f, params, extra);
	real = *cfg;
	real.hStream = direct_stream(s, cfg->hStream, ptsz);
	return REAL(ptsz, cuLaunchKernelEx, "_ptsz")(&real, f, params, extra);
}

XS_CU_PAIR(CUresult, cuLaunchKernelEx, cuLaunchKernelEx_ptsz,
	   (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra),
	   cfg, f, params, extra)

/* --- asynchronous copies and memsets ------------------------------------------- */

static CUresult do_cuMemcpyAsync(bool ptsz, CUdeviceptr dst, CUdeviceptr src, size_t n,
				 CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	/* With unified addressing either side may be pageable host memory:
	 * a pageable destination makes the copy synchronous, as natively. */
	if (s && cu_mem_registered((void *)(uintptr_t)dst) &&
	    (c = cmd_copy(s, dst, src, (const void *)(uintptr_t)src, n)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemcpyAsync, "_ptsz")(dst, src, n, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemcpyAsync, cuMemcpyAsync_ptsz,
	   (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h), dst, src, n, h)

static CUresult do_cuMemcpyHtoDAsync_v2(bool ptsz, CUdeviceptr dst, const void *src,
					size_t n, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_copy(s, dst, (CUdeviceptr)(uintptr_t)src, src, n)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemcpyHtoDAsync_v2, "_ptsz")(dst, src, n, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
	   (CUdeviceptr dst, const void *src, size_t n, CUstream h), dst, src, n, h)

static CUresult do_cuMemcpyDtoHAsync_v2(bool ptsz, void *dst, CUdeviceptr src, size_t n,
					CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	/* Into pageable memory the copy is complete on return (native). */
	if (s && cu_mem_registered(dst) &&
	    (c = cmd_copy(s, (CUdeviceptr)(uintptr_t)dst, src, NULL, n)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemcpyDtoHAsync_v2, "_ptsz")(dst, src, n, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
	   (void *dst, CUdeviceptr src, size_t n, CUstream h), dst, src, n, h)

static CUresult do_cuMemcpyDtoDAsync_v2(bool ptsz, CUdeviceptr dst, CUdeviceptr src,
					size_t n, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_copy(s, dst, src, NULL, n)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemcpyDtoDAsync_v2, "_ptsz")(dst, src, n, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
	   (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h), dst, src, n, h)

static CUresult do_cuMemcpy2DAsync_v2(bool ptsz, const CUDA_MEMCPY2D *p, CUstream h)
{
	struct cs_stream *s = p ? sched_stream(h, ptsz) : NULL;
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_copy2d(s, p)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemcpy2DAsync_v2, "_ptsz")(p, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz,
	   (const CUDA_MEMCPY2D *p, CUstream h), p, h)

static CUresult do_cuMemcpy3DAsync_v2(bool ptsz, const CUDA_MEMCPY3D *p, CUstream h)
{
	struct cs_stream *s = p ? sched_stream(h, ptsz) : NULL;
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_copy3d(s, p)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemcpy3DAsync_v2, "_ptsz")(p, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz,
	   (const CUDA_MEMCPY3D *p, CUstream h), p, h)

static CUresult do_cuMemsetD8Async(bool ptsz, CUdeviceptr dst, unsigned char v, size_t n,
				   CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_memset(s, dst, v, n, 1)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemsetD8Async, "_ptsz")(dst, v, n, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemsetD8Async, cuMemsetD8Async_ptsz,
	   (CUdeviceptr dst, unsigned char v, size_t n, CUstream h), dst, v, n, h)

static CUresult do_cuMemsetD32Async(bool ptsz, CUdeviceptr dst, unsigned v, size_t n,
				    CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_memset(s, dst, v, n, 4)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemsetD32Async, "_ptsz")(dst, v, n, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemsetD32Async, cuMemsetD32Async_ptsz,
	   (CUdeviceptr dst, unsigned v, size_t n, CUstream h), dst, v, n, h)

/* --- host functions, graphs, stream-ordered memory, values --------------------- */

static CUresult do_cuLaunchHostFunc(bool ptsz, CUstream h, CUhostFn fn, void *data)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && fn && (c = cmd_host_fn(s, fn, data)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuLaunchHostFunc, "_ptsz")(direct_stream(s, h, ptsz), fn, data);
}

XS_CU_PAIR(CUresult, cuLaunchHostFunc, cuLaunchHostFunc_ptsz,
	   (CUstream h, CUhostFn fn, void *data), h, fn, data)

static CUresult do_cuStreamAddCallback(bool ptsz, CUstream h, CUstreamCallback cb,
				       void *data, unsigned flags)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && cb && (c = cmd_callback(s, cb, data, flags)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuStreamAddCallback, "_ptsz")(direct_stream(s, h, ptsz), cb, data, flags);
}

XS_CU_PAIR(CUresult, cuStreamAddCallback, cuStreamAddCallback_ptsz,
	   (CUstream h, CUstreamCallback cb, void *data, unsigned flags), h, cb, data, flags)

/* Sliced into several commands, or one (cu_graph.h). */
static CUresult do_cuGraphLaunch(bool ptsz, CUgraphExec g, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);

	if (s && g)
		return cg_launch(s, g, false);
	return REAL(ptsz, cuGraphLaunch, "_ptsz")(g, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec g, CUstream h), g, h)

static CUresult do_cuGraphUpload(bool ptsz, CUgraphExec g, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);

	if (s && g)
		return cg_launch(s, g, true);
	return REAL(ptsz, cuGraphUpload, "_ptsz")(g, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuGraphUpload, cuGraphUpload_ptsz, (CUgraphExec g, CUstream h), g, h)

static CUresult do_cuMemAllocAsync(bool ptsz, CUdeviceptr *p, size_t n, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);

	/* The pointer is returned now: the call itself goes to the driver,
	 * after the work submitted before it. */
	return cu_mem_alloc_async(p, n, NULL, REAL(ptsz, cuMemAllocAsync, "_ptsz"), NULL,
				  direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemAllocAsync, cuMemAllocAsync_ptsz,
	   (CUdeviceptr *p, size_t n, CUstream h), p, n, h)

static CUresult do_cuMemAllocFromPoolAsync(bool ptsz, CUdeviceptr *p, size_t n,
					   CUmemoryPool pool, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);

	/* As cuMemAllocAsync, from @pool (a NULL pool is the driver's to refuse). */
	if (!pool)
		return REAL(ptsz, cuMemAllocFromPoolAsync, "_ptsz")(p, n, pool,
								   direct_stream(s, h, ptsz));
	return cu_mem_alloc_async(p, n, pool, NULL,
				  REAL(ptsz, cuMemAllocFromPoolAsync, "_ptsz"),
				  direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz,
	   (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream h), p, n, pool, h)

static CUresult do_cuMemFreeAsync(bool ptsz, CUdeviceptr p, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;
	CUresult rc;

	if (s && (c = cmd_free_async(s, p)))
		rc = cs_submit(s, c, NULL);
	else
		rc = REAL(ptsz, cuMemFreeAsync, "_ptsz")(p, direct_stream(s, h, ptsz));
	/* The application's no longer, whenever the stream gets there. */
	if (rc == CUDA_SUCCESS)
		cu_mem_freed(p);
	return rc;
}

XS_CU_PAIR(CUresult, cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream h), p, h)

static CUresult do_cuMemPrefetchAsync_v2(bool ptsz, CUdeviceptr p, size_t n,
					 CUmemLocation loc, unsigned flags, CUstream h)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_prefetch(s, p, n, loc, flags)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuMemPrefetchAsync_v2, "_ptsz")(p, n, loc, flags, direct_stream(s, h, ptsz));
}

XS_CU_PAIR(CUresult, cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz,
	   (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned flags, CUstream h),
	   p, n, loc, flags, h)

static CUresult do_cuStreamWriteValue32_v2(bool ptsz, CUstream h, CUdeviceptr a,
					   cuuint32_t v, unsigned flags)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_value32(s, a, v, flags, false)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuStreamWriteValue32_v2, "_ptsz")(direct_stream(s, h, ptsz), a, v, flags);
}

XS_CU_PAIR(CUresult, cuStreamWriteValue32_v2, cuStreamWriteValue32_v2_ptsz,
	   (CUstream h, CUdeviceptr a, cuuint32_t v, unsigned flags), h, a, v, flags)

static CUresult do_cuStreamWaitValue32_v2(bool ptsz, CUstream h, CUdeviceptr a,
					  cuuint32_t v, unsigned flags)
{
	struct cs_stream *s = sched_stream(h, ptsz);
	struct xal_cuda_cmd *c;

	if (s && (c = cmd_value32(s, a, v, flags, true)))
		return cs_submit(s, c, NULL);
	return REAL(ptsz, cuStreamWaitValue32_v2, "_ptsz")(direct_stream(s, h, ptsz), a, v, flags);
}

XS_CU_PAIR(CUresult, cuStreamWaitValue32_v2, cuStreamWaitValue32_v2_ptsz,
	   (CUstream h, CUdeviceptr a, cuuint32_t v, unsigned flags), h, a, v, flags)
