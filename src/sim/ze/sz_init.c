/*
 * Initialisation and the driver object of the simulated Level Zero driver:
 * zeInit, zeDriverGet and the driver's properties.
 *
 * Design: nothing happens at load time (the loader loads every driver it
 * is told about, used or not). zeInit opens the simulated device once per
 * process (pthread_once; its name comes from $XSCHED_SIM_DEVICE, as for
 * every other user of the sim, so processes share one device) and
 * registers a fork handler. A child forked after zeInit has no executor
 * thread and shares its parent's device slots, so every call in it fails
 * with ZE_RESULT_ERROR_UNINITIALIZED, as with a real driver; a child of a
 * process that never called zeInit initialises normally. There is one
 * driver and one device, both static objects: their handles never die.
 */
#include "sim/ze/sz_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sz_driver sz_drv = { .magic = SZ_M_DRIVER };
struct sz_device sz_dev = { .magic = SZ_M_DEVICE };

static pthread_once_t sz_init_once_ctl = PTHREAD_ONCE_INIT;

/* Runs in the child of fork(): only marks the driver unusable there. */
static void sz_atfork_child(void)
{
	atomic_store(&sz_drv.state, SZ_DRV_FORKED);
}

static void sz_init_once(void)
{
	int rc = sim_dev_open(sim_dev_default_name(), NULL, &sz_drv.dev);

	if (rc == 0) {
		sf_mem_set_device(sz_drv.dev);
		pthread_atfork(NULL, NULL, sz_atfork_child);
	}
	atomic_store_explicit(&sz_drv.state, rc ? SZ_DRV_FAILED : SZ_DRV_READY,
			      memory_order_release);
}

/* 0 once zeInit succeeded in this process; -ENXIO otherwise. */
int sz_ready(void)
{
	return atomic_load_explicit(&sz_drv.state, memory_order_acquire) == SZ_DRV_READY ?
	       0 : -ENXIO;
}

/*
 * Destroys the plain object behind handle @h (one that owns nothing but
 * its memory) after sz_get()'s checks, clearing its magic first so a
 * second destroy of a recycled address is less likely to pass.
 */
ze_result_t sz_handle_free(const void *h, uint32_t magic)
{
	ze_result_t r;
	uint32_t *o = sz_get(h, magic, &r);

	if (o) {
		*o = 0;
		free(o);
	}
	return r;
}

/*
 * Fills @n bytes at @out with a UUID derived from the device's name (the
 * same in every process sharing it) and @salt: the driver's UUID. The
 * device's own is the sim's (sim_dev_uuid()), as every front-end reports.
 */
void sz_uuid(uint8_t *out, size_t n, uint8_t salt)
{
	const char *p = sim_dev_default_name();
	uint64_t h = 0xcbf29ce484222325ull ^ salt;
	size_t i;

	for (; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	for (i = 0; i < n; i++) {
		h ^= h >> 29;
		h *= 0x100000001b3ull;
		out[i] = (uint8_t)(h >> 56);
	}
}

/* The simulated device is a GPU: a VPU-only initialisation finds nothing. */
ze_result_t zeInit(ze_init_flags_t flags)
{
	if (atomic_load(&sz_drv.state) == SZ_DRV_FORKED)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (flags & ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (flags == ZE_INIT_FLAG_VPU_ONLY)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	pthread_once(&sz_init_once_ctl, sz_init_once);
	return sz_ready() == 0 ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
}

ze_result_t zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
	int rc = sz_ready();

	if (rc < 0)
		return sz_result(rc);
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (sz_count(pCount, 1, phDrivers != NULL))
		phDrivers[0] = (ze_driver_handle_t)(void *)&sz_drv;
	return ZE_RESULT_SUCCESS;
}

/* The checks of a query on the driver that writes to @out. */
static ze_result_t sz_driver_query(ze_driver_handle_t h, const void *out)
{
	ze_result_t r;

	if (!sz_get(h, SZ_M_DRIVER, &r))
		return r;
	return out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
}

ze_result_t zeDriverGetApiVersion(ze_driver_handle_t hDriver, ze_api_version_t *version)
{
	ze_result_t r = sz_driver_query(hDriver, version);

	if (r == ZE_RESULT_SUCCESS)
		*version = SZ_API_VERSION;
	return r;
}

ze_result_t zeDriverGetProperties(ze_driver_handle_t hDriver, ze_driver_properties_t *p)
{
	ze_result_t r = sz_driver_query(hDriver, p);

	if (r == ZE_RESULT_SUCCESS) {
		sz_uuid(p->uuid.id, sizeof(p->uuid.id), 1);
		p->driverVersion = SZ_DRIVER_VERSION;
	}
	return r;
}

/* No IPC: memory and event pools are process-local here. */
ze_result_t zeDriverGetIpcProperties(ze_driver_handle_t hDriver, ze_driver_ipc_properties_t *p)
{
	ze_result_t r = sz_driver_query(hDriver, p);

	if (r == ZE_RESULT_SUCCESS)
		p->flags = 0;
	return r;
}

/* No extensions. */
ze_result_t zeDriverGetExtensionProperties(ze_driver_handle_t hDriver, uint32_t *pCount,
					   ze_driver_extension_properties_t *pExtensionProperties)
{
	ze_result_t r = sz_driver_query(hDriver, pCount);

	if (r == ZE_RESULT_SUCCESS)
		sz_count(pCount, 0, pExtensionProperties != NULL);
	return r;
}

ze_result_t zeDriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver, const char *name,
						void **ppFunctionAddress)
{
	ze_result_t r = sz_driver_query(hDriver, ppFunctionAddress);

	if (r == ZE_RESULT_SUCCESS)
		r = name ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return r;
}
