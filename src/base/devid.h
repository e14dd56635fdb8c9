/*
 * Device identity: the node-wide name of a physical device. Queues on one
 * device form one scheduling domain whatever API (CUDA, OpenCL, Level
 * Zero, the xsched API), ordinal, visibility mask or container reaches it,
 * so a device is named by what the device itself reports, best first:
 *
 *   uuid        its UUID (CUDA cuDeviceGetUuid_v2, OpenCL
 *               cl_khr_device_uuid, Level Zero device properties): the
 *               same 16 bytes through every API of one vendor's driver;
 *   pci         else its PCI bus id (CUDA cuDeviceGetPCIBusId, OpenCL
 *               cl_khr_pci_bus_info);
 *   unverified  else only the API-local name (e.g. "cuda:0"), which the
 *               scheduler takes for the identity: devices of equal local
 *               names are then one domain, rightly or not.
 *
 * The PCI bus id is kept besides a UUID where known, so that a device one
 * API knows by UUID and another only by bus id is still one domain.
 *
 * Text forms are canonical, so equal devices compare equal as strings:
 * UUIDs as 36 lowercase characters 8-4-4-4-12, PCI bus ids as
 * "dddd:bb:dd.f" in lowercase hex (the domain at least 4 digits).
 * The kinds' values are those of the IPC ABI (enum ipc_id_kind).
 */
#ifndef XS_BASE_DEVID_H
#define XS_BASE_DEVID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEVID_TEXT 40           /* UUID text (36) and NUL, padded */
#define DEVID_PCI_TEXT 24       /* "ffffffff:ff:1f.7" and NUL, padded */
#define DEVID_UUID_BYTES 16

enum devid_kind {
	DEVID_UNVERIFIED = 0,
	DEVID_PCI = 1,
	DEVID_UUID = 2,
};

struct devid {
	uint32_t kind;                  /* enum devid_kind */
	char ident[DEVID_TEXT];         /* UUID or PCI bus id; "" when unverified */
	char pci[DEVID_PCI_TEXT];       /* PCI bus id where known, else "" */
};

/*
 * Makes the 16 bytes @uuid @id's identity. Returns false, leaving @id
 * unchanged, when they are all zero (drivers answer that for "unknown").
 */
bool devid_set_uuid(struct devid *id, const uint8_t uuid[DEVID_UUID_BYTES]);

/*
 * Records the PCI bus id "[domain:]bus:device.function" (hexadecimal, as
 * cuDeviceGetPCIBusId writes it), and makes it the identity unless @id
 * has a UUID. Returns false, leaving @id unchanged, when @busid is
 * malformed or out of range.
 */
bool devid_set_pci_text(struct devid *id, const char *busid);

/* As devid_set_pci_text(), from the four numbers. */
bool devid_set_pci(struct devid *id, uint32_t domain, uint32_t bus, uint32_t device,
		   uint32_t function);

/* "uuid", "pci" or "unverified" (also for an unknown @kind). */
const char *devid_kind_name(uint32_t kind);

static inline bool devid_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* True if @s (at most @len bytes) is a canonical UUID text. */
static inline bool devid_uuid_valid(const char *s, size_t len)
{
	size_t i;

	if (len < 37)
		return false;
	for (i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !devid_hex(s[i]))
			return false;
	}
	return s[36] == '\0';
}

/* True if @s (at most @len bytes) is a canonical PCI bus id text. */
static inline bool devid_pci_valid(const char *s, size_t len)
{
	size_t i, n = 0;

	while (n < len && s[n])
		n++;
	if (n == len || n < 12 || n > 16)
		return false;
	/* ...:bb:dd.f, with at least 4 domain digits before. */
	if (s[n - 8] != ':' || s[n - 5] != ':' || s[n - 2] != '.')
		return false;
	for (i = 0; i < n; i++)
		if (i != n - 8 && i != n - 5 && i != n - 2 && !devid_hex(s[i]))
			return false;
	/* Device 0..31 and function 0..7, as PCI allows; no leading zero
	 * beyond the domain's four digits. */
	return s[n - 4] <= '1' && s[n - 1] <= '7' && (n == 12 || s[0] != '0');
}

#endif
