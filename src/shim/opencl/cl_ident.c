/*
 * How the OpenCL shim names a device to the scheduler: an API-local name
 * from CL_DEVICE_NAME, which identical devices share, and the node-wide
 * identity (base/devid.h) from the device itself where the driver offers
 * it: CL_DEVICE_UUID_KHR (cl_khr_device_uuid), else the PCI bus id
 * (cl_khr_pci_bus_info); the bus id is kept besides the UUID. A device
 * with neither is unverified: devices of equal names are then one domain.
 *
 * The extensions are looked up in CL_DEVICE_EXTENSIONS as whole words
 * before their queries are made: a driver is asked only what it claims
 * to answer.
 */
#include "shim/opencl/cl_shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From the Khronos registry, for headers that predate the extensions. */
#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif
#ifndef CL_DEVICE_PCI_BUS_INFO_KHR
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
#endif

/* cl_device_pci_bus_info_khr, by its layout in the extension. */
struct cl_pci_bus_info {
	cl_uint domain, bus, device, function;
};

/* True if the space-separated list @list holds the word @ext. */
static bool cl_has_word(const char *list, const char *ext)
{
	size_t n = strlen(ext);
	const char *p = list;

	while ((p = strstr(p, ext)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

/* CL_DEVICE_EXTENSIONS of @dev, malloc()ed; NULL if it cannot be read. */
static char *cl_extensions(cl_device_id dev)
{
	size_t len = 0;
	char *s;

	if (cl_real.clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS ||
	    len == 0 || len > (1u << 20))
		return NULL;
	s = malloc(len + 1);
	if (s && cl_real.clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, len, s, NULL) != CL_SUCCESS) {
		free(s);
		return NULL;
	}
	if (s)
		s[len] = '\0';
	return s;
}

void cl_device_naming(cl_device_id dev, char *name, size_t len, struct devid *id)
{
	char dname[64] = "";
	char *ext;

	if (cl_real.clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof(dname) - 1, dname, NULL))
		dname[0] = '\0';
	snprintf(name, len, "cl:%s", dname);
	memset(id, 0, sizeof(*id));
	ext = cl_extensions(dev);
	if (!ext)
		return;
	if (cl_has_word(ext, "cl_khr_pci_bus_info")) {
		struct cl_pci_bus_info pci;

		if (cl_real.clGetDeviceInfo(dev, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(pci), &pci,
					    NULL) == CL_SUCCESS)
			devid_set_pci(id, pci.domain, pci.bus, pci.device, pci.function);
	}
	if (cl_has_word(ext, "cl_khr_device_uuid")) {
		uint8_t uuid[DEVID_UUID_BYTES];

		if (cl_real.clGetDeviceInfo(dev, CL_DEVICE_UUID_KHR, sizeof(uuid), uuid, NULL) ==
		    CL_SUCCESS)
			devid_set_uuid(id, uuid);
	}
	free(ext);
}

cl_device_id cl_context_first_device(cl_context ctx)
{
	cl_device_id one[8], *devs = one, dev = NULL;
	size_t size = 0;

	/* Room for every device: a smaller buffer is CL_INVALID_VALUE. */
	if (!ctx || cl_real.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, NULL, &size) !=
			    CL_SUCCESS ||
	    size < sizeof(dev))
		return NULL;
	if (size > sizeof(one) && !(devs = malloc(size)))
		return NULL;
	if (cl_real.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, size, devs, NULL) == CL_SUCCESS)
		dev = devs[0];
	if (devs != one)
		free(devs);
	return dev;
}
