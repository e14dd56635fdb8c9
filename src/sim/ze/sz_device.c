/*
 * The device of the simulated Level Zero driver: enumeration and the
 * properties it reports.
 *
 * Design: one GPU-typed device whose numbers describe the simulated XPU
 * honestly where the API lets them (one command queue group with compute
 * and copy, since the sim has one engine; timestamps in nanoseconds of
 * CLOCK_MONOTONIC, the device's clock) and are plausible elsewhere. No
 * sub-devices, no images, no peers.
 */
#include "sim/ze/sz_internal.h"
#include "base/clock.h"

#include <string.h>

/* The checks of a query on the device that writes to @out. */
static ze_result_t sz_device_query(ze_device_handle_t h, const void *out)
{
	ze_result_t r;

	if (!sz_get(h, SZ_M_DEVICE, &r))
		return r;
	return out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
}

ze_result_t zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount, ze_device_handle_t *phDevices)
{
	ze_result_t r;

	if (!sz_get(hDriver, SZ_M_DRIVER, &r))
		return r;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (sz_count(pCount, 1, phDevices != NULL))
		phDevices[0] = (ze_device_handle_t)(void *)&sz_dev;
	return ZE_RESULT_SUCCESS;
}

/* A counting query whose answer is an empty list. */
static ze_result_t sz_device_none(ze_device_handle_t h, uint32_t *pCount, const void *out)
{
	ze_result_t r = sz_device_query(h, pCount);

	if (r == ZE_RESULT_SUCCESS)
		sz_count(pCount, 0, out != NULL);
	return r;
}

/* No sub-devices. */
ze_result_t zeDeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t *pCount,
				  ze_device_handle_t *phSubdevices)
{
	return sz_device_none(hDevice, pCount, phSubdevices);
}

/*
 * timerResolution is in nanoseconds per tick for the 1.0 structure and in
 * ticks per second for ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2: one tick
 * is one nanosecond either way.
 */
ze_result_t zeDeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t *p)
{
	ze_result_t r = sz_device_query(hDevice, p);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	p->type = ZE_DEVICE_TYPE_GPU;
	p->vendorId = SZ_VENDOR_ID;
	p->deviceId = 1;
	p->flags = 0;
	p->subdeviceId = 0;
	p->coreClockRate = 1000;
	p->maxMemAllocSize = SZ_MAX_ALLOC;
	p->maxHardwareContexts = 64;
	p->maxCommandQueuePriority = ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
	p->numThreadsPerEU = 8;
	p->physicalEUSimdWidth = 8;
	p->numEUsPerSubslice = 8;
	p->numSubslicesPerSlice = 8;
	p->numSlices = 1;
	p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ?
			     1000000000ull : 1;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 64;
	/* The identity every front-end of the sim reports for this device
	 * (sim_ident.c); all zero, "unknown", when $XSCHED_SIM_IDENTITY
	 * withholds it. */
	memset(p->uuid.id, 0, sizeof(p->uuid.id));
	if (sim_dev_identity() == SIM_ID_UUID)
		sim_dev_uuid(sim_dev_default_name(), p->uuid.id);
	memset(p->name, 0, sizeof(p->name));
	strncpy(p->name, SZ_DEVICE_NAME, sizeof(p->name) - 1);
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t hDevice,
					 ze_device_compute_properties_t *p)
{
	ze_result_t r = sz_device_query(hDevice, p);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	p->maxTotalGroupSize = SZ_GROUP_MAX;
	p->maxGroupSizeX = SZ_GROUP_MAX;
	p->maxGroupSizeY = SZ_GROUP_MAX;
	p->maxGroupSizeZ = 64;
	p->maxGroupCountX = UINT32_MAX;
	p->maxGroupCountY = UINT32_MAX;
	p->maxGroupCountZ = UINT32_MAX;
	p->maxSharedLocalMemory = 64 * 1024;
	memset(p->subGroupSizes, 0, sizeof(p->subGroupSizes));
	p->numSubGroupSizes = 3;
	p->subGroupSizes[0] = 8;
	p->subGroupSizes[1] = 16;
	p->subGroupSizes[2] = 32;
	return ZE_RESULT_SUCCESS;
}

/* One group: the sim's single engine runs kernels and copies alike. */
ze_result_t zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t hDevice, uint32_t *pCount,
						   ze_command_queue_group_properties_t *p)
{
	ze_result_t r = sz_device_query(hDevice, pCount);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	if (sz_count(pCount, 1, p != NULL)) {
		p->flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
			   ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
			   ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
		p->maxMemoryFillPatternSize = SZ_PATTERN_MAX;
		p->numQueues = SZ_NUM_QUEUES;
	}
	return ZE_RESULT_SUCCESS;
}

/* totalSize: the device's memory, which every process attached to it shares. */
ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t *pCount,
					ze_device_memory_properties_t *p)
{
	struct sim_dev_info info;
	ze_result_t r = sz_device_query(hDevice, pCount);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	if (sz_count(pCount, 1, p != NULL)) {
		p->flags = 0;
		p->maxClockRate = 1000;
		p->maxBusWidth = 128;
		sim_dev_info_get(sz_drv.dev, &info);
		p->totalSize = info.mem_capacity;
		memset(p->name, 0, sizeof(p->name));
		strncpy(p->name, "simulated", sizeof(p->name) - 1);
	}
	return ZE_RESULT_SUCCESS;
}

/* Device memory is host memory here, so every kind of access works. */
ze_result_t zeDeviceGetMemoryAccessProperties(ze_device_handle_t hDevice,
					      ze_device_memory_access_properties_t *p)
{
	const ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW |
						 ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
						 ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
						 ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
	ze_result_t r = sz_device_query(hDevice, p);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	p->hostAllocCapabilities = all;
	p->deviceAllocCapabilities = all;
	p->sharedSingleDeviceAllocCapabilities = all;
	p->sharedCrossDeviceAllocCapabilities = 0;
	p->sharedSystemAllocCapabilities = 0;
	return ZE_RESULT_SUCCESS;
}

/* No cache the application could reserve or advise. */
ze_result_t zeDeviceGetCacheProperties(ze_device_handle_t hDevice, uint32_t *pCount,
				       ze_device_cache_properties_t *pCacheProperties)
{
	return sz_device_none(hDevice, pCount, pCacheProperties);
}

/* The device is lost per context (see sz_context.c), never as a whole. */
ze_result_t zeDeviceGetStatus(ze_device_handle_t hDevice)
{
	ze_result_t r;

	sz_get(hDevice, SZ_M_DEVICE, &r);
	return r;
}

/* Host and device share CLOCK_MONOTONIC: one reading serves both. */
ze_result_t zeDeviceGetGlobalTimestamps(ze_device_handle_t hDevice, uint64_t *hostTimestamp,
					uint64_t *deviceTimestamp)
{
	ze_result_t r = sz_device_query(hDevice, hostTimestamp);
	uint64_t now;

	if (r != ZE_RESULT_SUCCESS)
		return r;
	if (!deviceTimestamp)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	now = clock_now_ns();
	*hostTimestamp = now;
	*deviceTimestamp = now;
	return ZE_RESULT_SUCCESS;
}

/* Only the device itself is its peer. */
ze_result_t zeDeviceCanAccessPeer(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
				  ze_bool_t *value)
{
	ze_result_t r = sz_device_query(hDevice, value);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	if (!sz_obj(hPeerDevice, SZ_M_DEVICE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	*value = 1;
	return ZE_RESULT_SUCCESS;
}
