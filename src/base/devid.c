/*
 * Device identities in their canonical text forms (see devid.h). The
 * parsing is strict: an identity that two APIs would spell differently
 * must come out as one string, and one that cannot be read is dropped
 * rather than guessed at.
 */
#include "base/devid.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool devid_set_uuid(struct devid *id, const uint8_t uuid[DEVID_UUID_BYTES])
{
	static const char hex[] = "0123456789abcdef";
	char *p = id->ident;
	size_t i;
	uint8_t any = 0;

	for (i = 0; i < DEVID_UUID_BYTES; i++)
		any |= uuid[i];
	if (!any)
		return false;
	for (i = 0; i < DEVID_UUID_BYTES; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[uuid[i] >> 4];
		*p++ = hex[uuid[i] & 15];
	}
	*p = '\0';
	id->kind = DEVID_UUID;
	return true;
}

bool devid_set_pci(struct devid *id, uint32_t domain, uint32_t bus, uint32_t device,
		   uint32_t function)
{
	if (bus > 0xff || device > 0x1f || function > 7)
		return false;
	snprintf(id->pci, sizeof(id->pci), "%04x:%02x:%02x.%x", domain, bus, device, function);
	if (id->kind != DEVID_UUID) {
		memcpy(id->ident, id->pci, sizeof(id->pci));
		id->kind = DEVID_PCI;
	}
	return true;
}

/* Reads one hexadecimal field ended by @end; false if empty or too long. */
static bool devid_field(const char **s, char end, uint32_t *out)
{
	const char *p = *s;
	uint32_t v = 0;
	int n = 0;

	while (isxdigit((unsigned char)*p) && n < 8) {
		v = v * 16 + (uint32_t)(isdigit((unsigned char)*p) ? *p - '0' :
					 tolower((unsigned char)*p) - 'a' + 10);
		p++;
		n++;
	}
	if (!n || *p != end)
		return false;
	*out = v;
	*s = end ? p + 1 : p;
	return true;
}

bool devid_set_pci_text(struct devid *id, const char *busid)
{
	uint32_t f[4] = { 0 };
	const char *p = busid;

	if (!p)
		return false;
	/* With a domain: three fields before the '.', else two. */
	if (strchr(p, ':') != strrchr(p, ':')) {
		if (!devid_field(&p, ':', &f[0]))
			return false;
	}
	if (!devid_field(&p, ':', &f[1]) || !devid_field(&p, '.', &f[2]) ||
	    !devid_field(&p, '\0', &f[3]))
		return false;
	return devid_set_pci(id, f[0], f[1], f[2], f[3]);
}

const char *devid_kind_name(uint32_t kind)
{
	switch (kind) {
	case DEVID_UUID:
		return "uuid";
	case DEVID_PCI:
		return "pci";
	default:
		return "unverified";
	}
}
