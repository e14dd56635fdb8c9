/*
 * The commands the CUDA shim buffers: one constructor per kind of driver
 * call, each taking the deep copies the call's asynchronous semantics
 * require (kernel parameters, pageable host sources, copy descriptors),
 * and an issue function that makes the same call on the real driver when
 * the XQueue launches it. Constructors return NULL on out-of-memory or when
 * the call cannot be buffered faithfully (e.g. a kernel whose parameter
 * layout the driver does not report); the caller then flushes the stream
 * and passes the call through.
 */
#ifndef XS_CU_CMDS_H
#define XS_CU_CMDS_H

#include "shim/cuda/cu_queues.h"

/*
 * False when the driver would refuse these arguments at the call (no
 * parameters for a kernel that takes some, a malformed extra[]), as far
 * as the reported layout tells; true when unknown.
 */
bool cmd_kernel_args_valid(CUfunction f, void **params, void **extra);

struct xal_cuda_cmd *cmd_kernel(struct cs_stream *s, CUfunction f, const unsigned grid[3],
				const unsigned block[3], unsigned shmem,
				void **params, void **extra, bool cooperative);
struct xal_cuda_cmd *cmd_kernel_ex(struct cs_stream *s, const CUlaunchConfig *cfg,
				   CUfunction f, void **params, void **extra);
/* A copy; @host_src (may be NULL) is staged when it is pageable memory. */
struct xal_cuda_cmd *cmd_copy(struct cs_stream *s, CUdeviceptr dst, CUdeviceptr src,
			      const void *host_src, size_t n);
struct xal_cuda_cmd *cmd_copy2d(struct cs_stream *s, const CUDA_MEMCPY2D *p);
struct xal_cuda_cmd *cmd_copy3d(struct cs_stream *s, const CUDA_MEMCPY3D *p);
struct xal_cuda_cmd *cmd_memset(struct cs_stream *s, CUdeviceptr dst, unsigned value,
				size_t n, unsigned elem);
struct xal_cuda_cmd *cmd_host_fn(struct cs_stream *s, CUhostFn fn, void *data);
struct xal_cuda_cmd *cmd_callback(struct cs_stream *s, CUstreamCallback cb, void *data,
				  unsigned flags);
struct xal_cuda_cmd *cmd_event_record(struct cs_stream *s, CUevent ev, unsigned flags,
				      bool with_flags);
struct xal_cuda_cmd *cmd_wait_event(struct cs_stream *s, CUevent ev, unsigned flags);
struct xal_cuda_cmd *cmd_free_async(struct cs_stream *s, CUdeviceptr p);
struct xal_cuda_cmd *cmd_prefetch(struct cs_stream *s, CUdeviceptr p, size_t n,
				  CUmemLocation loc, unsigned flags);
struct xal_cuda_cmd *cmd_value32(struct cs_stream *s, CUdeviceptr addr, cuuint32_t value,
				 unsigned flags, bool wait);

/* Whether @p is memory the driver knows (device or page-locked host). */
bool cu_mem_registered(const void *p);

#endif
