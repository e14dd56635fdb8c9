/*
 * The identity a simulated device reports: a UUID and a PCI bus id derived
 * from its name, so every process and every front-end that reaches the
 * device of one name (the xsched API's sim backend, the simulated CUDA
 * and Level Zero drivers) reports the same device, and the scheduler makes
 * it one domain, while devices of different names differ.
 *
 * The UUID is a 128-bit hash of the name (two FNV-1a passes, each mixed
 * by the splitmix64 finaliser) with the RFC 9562 version 8 ("custom") and
 * variant bits set. The PCI bus id takes 24 more bits of it as domain and
 * bus, device 0, function 0: unique enough for a test node, though, unlike
 * the UUID, not collision-proof.
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

static uint64_t sim_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t sim_fnv(const char *s, uint64_t h)
{
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return sim_mix(h);
}

void sim_dev_uuid(const char *name, uint8_t out[16])
{
	uint64_t a = sim_fnv(name, 0xcbf29ce484222325ull);
	uint64_t b = sim_fnv(name, 0x84222325cbf29ce4ull);
	int i;

	for (i = 0; i < 8; i++) {
		out[i] = (uint8_t)(a >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(b >> (56 - 8 * i));
	}
	out[6] = (uint8_t)((out[6] & 0x0f) | 0x80);   /* version 8 */
	out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);   /* variant 10 */
}

void sim_dev_pci(const char *name, uint32_t *domain, uint32_t *bus)
{
	uint8_t u[16];

	sim_dev_uuid(name, u);
	*domain = (uint32_t)u[10] << 8 | u[11];
	*bus = u[12];
}

int sim_dev_identity(void)
{
	const char *v = getenv("XSCHED_SIM_IDENTITY");

	if (v && !strcmp(v, "pci"))
		return SIM_ID_PCI;
	if (v && !strcmp(v, "none"))
		return SIM_ID_NONE;
	return SIM_ID_UUID;
}
