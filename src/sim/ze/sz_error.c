/*
 * Error values of the simulated Level Zero driver: the one table that
 * turns the negative errno of internal functions into ze_result_t values.
 *
 * Design: internal code speaks errno only, one errno per driver condition,
 * so the mapping is a plain switch. Device faults (a kernel that failed or
 * touched memory it may not) are -EIO: Level Zero has no per-launch error
 * and reports a device that faulted as lost, at the next synchronisation.
 */
#include "sim/ze/sz_internal.h"

#include <errno.h>

ze_result_t sz_result(int err)
{
	switch (err) {
	case 0: return ZE_RESULT_SUCCESS;
	case -EBUSY: return ZE_RESULT_NOT_READY;
	case -ENXIO: return ZE_RESULT_ERROR_UNINITIALIZED;
	case -EIO: return ZE_RESULT_ERROR_DEVICE_LOST;
	case -ENOMEM: return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	case -ENOSPC: return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	case -EINVAL: return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	case -EOPNOTSUPP: return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	default: return ZE_RESULT_ERROR_UNKNOWN;
	}
}
