/*
 * Kernel launches of the simulated CUDA driver: cuLaunchKernel,
 * cuLaunchKernelEx, cuLaunchCooperativeKernel and their per-thread-stream
 * variants.
 *
 * Design: the parameters are copied into the operation at the call, from
 * kernelParams (one pointer per parameter, laid out as cuFuncGetParamInfo
 * reports) or from the extra[] buffer form, so the application may reuse
 * its arrays on return, as with the real driver. The launch configuration
 * is validated against the device's limits and otherwise not used (the
 * built-in kernels process their n elements whatever the grid). Launch
 * attributes of cuLaunchKernelEx are accepted and ignored.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <string.h>

#define SC_EXTRA_MAX 64   /* entries of extra[] looked at */

static int sc_params(const struct sf_kernel_def *k, void **kernelParams, void **extra,
		     uint8_t *out)
{
	unsigned i;

	if (kernelParams && extra)
		return -EINVAL;
	if (extra) {
		void *buf = NULL;
		size_t *size = NULL;

		for (i = 0; i < SC_EXTRA_MAX && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				size = extra[i + 1];
			else
				return -EINVAL;
		}
		if (i >= SC_EXTRA_MAX || !buf || !size || *size < k->params_size)
			return k->params_size ? -EINVAL : 0;
		memcpy(out, buf, k->params_size);
		return 0;
	}
	if (!k->nparams)
		return 0;
	if (!kernelParams)
		return -EINVAL;
	for (i = 0; i < k->nparams; i++) {
		if (!kernelParams[i])
			return -EINVAL;
		memcpy(out + k->offset[i], kernelParams[i], k->size[i]);
	}
	return 0;
}

static bool sc_dims_ok(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, unsigned shared)
{
	if (!gx || !gy || !gz || !bx || !by || !bz)
		return false;
	if (gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64)
		return false;
	if ((uint64_t)bx * by * bz > 1024)
		return false;
	return shared <= 48 * 1024;
}

/*
 * Fills @op with the launch of @f (a function or kernel handle) with
 * @dims (grid x, y, z, block x, y, z, shared bytes) and its parameters,
 * copied. Returns 0, -EBADF (no such function), -EINVAL.
 */
int sc_kernel_op(CUfunction f, const unsigned dims[7], void **kernelParams, void **extra,
		 struct sc_op *op)
{
	const struct sf_kernel_def *k = sc_func_def(f);

	if (!k)
		return -EBADF;
	if (!sc_dims_ok(dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6]))
		return -EINVAL;
	memset(op, 0, sizeof(*op));
	op->kind = SC_OP_KERNEL;
	op->u.kernel.def = k;
	op->u.kernel.func = f;
	memcpy(op->u.kernel.grid, dims, 3 * sizeof(dims[0]));
	memcpy(op->u.kernel.block, dims + 3, 3 * sizeof(dims[0]));
	op->u.kernel.shmem = dims[6];
	return sc_params(k, kernelParams, extra, op->u.kernel.params);
}

static CUresult sc_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			  unsigned by, unsigned bz, unsigned shared, CUstream h,
			  void **kernelParams, void **extra, bool pt)
{
	const unsigned dims[7] = { gx, gy, gz, bx, by, bz, shared };
	struct sc_op op;
	struct CUstream_st *s;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_func_def(f))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!sc_dims_ok(gx, gy, gz, bx, by, bz, shared))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_stream_acquire(h, pt, &s);
	if (rc < 0)
		return sc_result(rc);
	rc = sc_kernel_op(f, dims, kernelParams, extra, &op);
	if (rc == 0)
		rc = sc_stream_op(s, &op, NULL);
	sc_stream_release(s);
	return sc_result(rc);
}

SC_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				  unsigned int gridDimZ, unsigned int blockDimX,
				  unsigned int blockDimY, unsigned int blockDimZ,
				  unsigned int sharedMemBytes, CUstream hStream,
				  void **kernelParams, void **extra)
{
	return sc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			 sharedMemBytes, hStream, kernelParams, extra, false);
}

SC_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
				       unsigned int gridDimY, unsigned int gridDimZ,
				       unsigned int blockDimX, unsigned int blockDimY,
				       unsigned int blockDimZ, unsigned int sharedMemBytes,
				       CUstream hStream, void **kernelParams, void **extra)
{
	return sc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			 sharedMemBytes, hStream, kernelParams, extra, true);
}

static CUresult sc_launch_ex(const CUlaunchConfig *c, CUfunction f, void **kernelParams,
			     void **extra, bool pt)
{
	if (!c || (c->numAttrs && !c->attrs))
		return sc_ready() < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
	return sc_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			 c->blockDimZ, c->sharedMemBytes, c->hStream, kernelParams, extra, pt);
}

SC_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				    void **kernelParams, void **extra)
{
	return sc_launch_ex(config, f, kernelParams, extra, false);
}

SC_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
					 void **kernelParams, void **extra)
{
	return sc_launch_ex(config, f, kernelParams, extra, true);
}

/* Every launch is co-resident on the simulated device: as cuLaunchKernel. */
SC_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					     unsigned int gridDimY, unsigned int gridDimZ,
					     unsigned int blockDimX, unsigned int blockDimY,
					     unsigned int blockDimZ, unsigned int sharedMemBytes,
					     CUstream hStream, void **kernelParams)
{
	return sc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			 sharedMemBytes, hStream, kernelParams, NULL, false);
}

SC_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
						  unsigned int gridDimY, unsigned int gridDimZ,
						  unsigned int blockDimX, unsigned int blockDimY,
						  unsigned int blockDimZ,
						  unsigned int sharedMemBytes, CUstream hStream,
						  void **kernelParams)
{
	return sc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			 sharedMemBytes, hStream, kernelParams, NULL, true);
}
