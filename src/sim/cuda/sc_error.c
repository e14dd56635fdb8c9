/*
 * Error values of the simulated CUDA driver: the one table that turns the
 * negative errno of internal functions into CUresult values, and the names
 * and descriptions cuGetErrorName/cuGetErrorString give for each CUresult
 * that cu_api.h declares.
 *
 * Design: internal code speaks errno only; each driver condition has its
 * own errno below, so the mapping is a plain switch and no CUresult is
 * produced below the API boundary.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stddef.h>

CUresult sc_result(int err)
{
	switch (err) {
	case 0: return CUDA_SUCCESS;
	case -EINVAL: return CUDA_ERROR_INVALID_VALUE;
	case -ENOMEM: return CUDA_ERROR_OUT_OF_MEMORY;
	case -ENXIO: return CUDA_ERROR_NOT_INITIALIZED;
	case -ENODEV: return CUDA_ERROR_INVALID_DEVICE;
	case -ESRCH: return CUDA_ERROR_INVALID_CONTEXT;
	case -EBADF: return CUDA_ERROR_INVALID_HANDLE;
	case -ENOENT: return CUDA_ERROR_NOT_FOUND;
	case -EBUSY: return CUDA_ERROR_NOT_READY;
	case -EIO: return CUDA_ERROR_LAUNCH_FAILED;
	case -EFAULT: return CUDA_ERROR_ILLEGAL_ADDRESS;
	case -EOPNOTSUPP: return CUDA_ERROR_NOT_SUPPORTED;
	case -EPERM: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	case -ECANCELED: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	case -EMLINK: return CUDA_ERROR_STREAM_CAPTURE_MERGE;
	case -ECHILD: return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	case -EXDEV: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
	case -EDEADLK: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	case -EACCES: return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	case -EBADFD: return CUDA_ERROR_ILLEGAL_STATE;
	case -ESTALE: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	case -EPROTOTYPE: return CUDA_ERROR_INVALID_RESOURCE_TYPE;
	case -EDOM: return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
	default: return CUDA_ERROR_UNKNOWN;
	}
}

static const struct sc_error {
	CUresult code;
	const char *name;
	const char *text;
} sc_errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
	  "driver not initialized" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
	  "stub library loaded instead of a driver" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no device available" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "invalid kernel image" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid context" },
	{ CUDA_ERROR_INVALID_SOURCE, "CUDA_ERROR_INVALID_SOURCE", "invalid source" },
	{ CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
	  "operation not valid in the current state" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
	  "device accessed an illegal address" },
	{ CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
	  "kernel failed while executing" },
	{ CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
	  "operation not permitted while a stream is capturing" },
	{ CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	  "stream capture was invalidated by an earlier error" },
	{ CUDA_ERROR_STREAM_CAPTURE_MERGE, "CUDA_ERROR_STREAM_CAPTURE_MERGE",
	  "operation would merge two independent captures" },
	{ CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	  "capture was not begun in this stream" },
	{ CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
	  "captured work forked and did not join back" },
	{ CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	  "dependency on uncaptured work crosses the capture boundary" },
	{ CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
	  "implicit dependency on a capturing stream" },
	{ CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
	  "capture must be ended in the thread that began it" },
	{ CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
	  "the graph update was not performed because it included changes which violated "
	  "constraints specific to instantiated graph update" },
	{ CUDA_ERROR_INVALID_RESOURCE_TYPE, "CUDA_ERROR_INVALID_RESOURCE_TYPE",
	  "invalid resource type for this operation" },
	{ CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
	  "invalid resource configuration" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static const struct sc_error *sc_error_find(CUresult code)
{
	size_t i;

	for (i = 0; i < sizeof(sc_errors) / sizeof(sc_errors[0]); i++)
		if (sc_errors[i].code == code)
			return &sc_errors[i];
	return NULL;
}

/* Needs no cuInit, as with the real driver. */
SC_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	const struct sc_error *e;

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	e = sc_error_find(error);
	*pStr = e ? e->text : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SC_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	const struct sc_error *e;

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	e = sc_error_find(error);
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
