/*
 * Initialisation and the device of the simulated CUDA driver: cuInit,
 * the driver version, and the one simulated device (ordinal 0) with its
 * properties and identity (UUID, PCI bus id).
 *
 * Design: nothing happens at load time. cuInit opens the simulated device
 * once per process (pthread_once; the device's name comes from
 * $XSCHED_SIM_DEVICE, as for every other user of the sim) and registers a
 * fork handler. A child forked after cuInit has no executor threads and
 * shares its parent's device slots, so, as with a real driver, every call
 * in it (cuInit included) fails with CUDA_ERROR_NOT_INITIALIZED; a child
 * of a process that never called cuInit initialises normally.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct sc_driver sc_drv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t sc_init_once_ctl = PTHREAD_ONCE_INIT;

/* Runs in the child of fork(): only marks the driver unusable there. */
static void sc_atfork_child(void)
{
	atomic_store(&sc_drv.state, SC_DRV_FORKED);
}

static void sc_init_once(void)
{
	int rc = sim_dev_open(sim_dev_default_name(), NULL, &sc_drv.dev);

	sc_drv.init_err = rc;
	if (rc == 0) {
		sf_mem_set_device(sc_drv.dev);
		pthread_atfork(NULL, NULL, sc_atfork_child);
	}
	atomic_store(&sc_drv.state, rc ? SC_DRV_FAILED : SC_DRV_READY);
}

int sc_ready(void)
{
	return atomic_load_explicit(&sc_drv.state, memory_order_acquire) == SC_DRV_READY ?
	       0 : -ENXIO;
}

/* 0 if @dev names the simulated device; -ENXIO before cuInit, -ENODEV. */
static int sc_dev_check(CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return rc;
	return dev == 0 ? 0 : -ENODEV;
}

SC_EXPORT CUresult cuInit(unsigned int Flags)
{
	if (atomic_load(&sc_drv.state) == SC_DRV_FORKED)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&sc_init_once_ctl, sc_init_once);
	switch (atomic_load(&sc_drv.state)) {
	case SC_DRV_READY:
		return CUDA_SUCCESS;
	case SC_DRV_FAILED:
		return CUDA_ERROR_NO_DEVICE;
	default:
		return CUDA_ERROR_NOT_INITIALIZED;
	}
}

/* Needs no cuInit, as with the real driver. */
SC_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SC_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDeviceGetCount(int *count)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_dev_check(dev);
	if (rc < 0)
		return sc_result(rc);
	strncpy(name, SC_DEVICE_NAME, (size_t)len - 1);
	name[len - 1] = '\0';
	return CUDA_SUCCESS;
}

/* The device's memory, which every process attached to it shares. */
SC_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	struct sim_dev_info info;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_dev_check(dev);
	if (rc < 0)
		return sc_result(rc);
	sim_dev_info_get(sc_drv.dev, &info);
	*bytes = (size_t)info.mem_capacity;
	return CUDA_SUCCESS;
}

/* The attributes the simulated device reports; every other valid one is 0. */
static int sc_attribute(CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		return 0x7fffffff;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		return 48 * 1024;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		return 32;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		return 132;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
		return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return 9;
	default:
		return 0;
	}
}

SC_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pi || attrib < 1 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_dev_check(dev);
	if (rc < 0)
		return sc_result(rc);
	*pi = sc_attribute(attrib);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_dev_check(dev);
	if (rc < 0)
		return sc_result(rc);
	*major = sc_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	*minor = sc_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	return CUDA_SUCCESS;
}

/*
 * The device's UUID and PCI bus id: derived from the simulated device's
 * name (sim_ident.c), as every other front-end of the sim reports them;
 * withheld as a driver without them would when $XSCHED_SIM_IDENTITY says
 * so (CUDA_ERROR_NOT_SUPPORTED).
 */
static CUresult sc_uuid(CUuuid *uuid, CUdevice dev)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_dev_check(dev);
	if (rc < 0)
		return sc_result(rc);
	if (sim_dev_identity() != SIM_ID_UUID)
		return CUDA_ERROR_NOT_SUPPORTED;
	sim_dev_uuid(sim_dev_default_name(), (uint8_t *)uuid->bytes);
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return sc_uuid(uuid, dev);
}

/* No MIG instances here: the device's own UUID, as cuDeviceGetUuid. */
SC_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return sc_uuid(uuid, dev);
}

/* "DDDD:BB:00.0" in upper case, the form of NVIDIA's tools. */
SC_EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	uint32_t domain, bus;
	char text[16];
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sc_dev_check(dev);
	if (rc < 0)
		return sc_result(rc);
	if (sim_dev_identity() == SIM_ID_NONE)
		return CUDA_ERROR_NOT_SUPPORTED;
	sim_dev_pci(sim_dev_default_name(), &domain, &bus);
	snprintf(text, sizeof(text), "%04X:%02X:00.0", domain, bus);
	if ((size_t)len <= strlen(text))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(pciBusId, text, strlen(text) + 1);
	return CUDA_SUCCESS;
}
