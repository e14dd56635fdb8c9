/*
 * Device identities as plain functions: their canonical texts
 * (base/devid.c) and what the IPC decoder accepts of them (ipc_msg.c);
 * then the daemon's device table (src/daemon/devices.c): which
 * registrations name one device (UUID, PCI bus id, the API-local name of
 * an unverified device, and a device known by bus id that later shows its
 * UUID), that a device is forgotten with its last reference and its memory
 * released, the bounds (the table's and an unprivileged user's), and that
 * lookups stay right across growth and removals.
 */
#include "test_util.h"

#include "base/devid.h"
#include "daemon/devices.h"
#include "ipc/ipc_msg.h"

#include <errno.h>

static void devid_canonical_texts(void **state)
{
	static const uint8_t zero[16], u[16] = { 0x5b, 0x1c, 0x0f, 0x8e, 0x2a, 0x4d, 0x8c, 0x31,
						0x9e, 0x7f, 0x0d, 0x6a, 0x4b, 0x2c, 0x8e, 0xAF };
	struct devid id = { 0 };

	(void)state;
	/* All zero means "unknown": nothing changes. */
	assert_false(devid_set_uuid(&id, zero));
	assert_int_equal(id.kind, DEVID_UNVERIFIED);
	/* Bus ids as CUDA writes them (8-digit domain, upper case) and without
	 * a domain come out as one text; the bus id is the identity until a
	 * UUID is known, and stays beside it. */
	assert_true(devid_set_pci_text(&id, "00000000:3B:00.0"));
	assert_int_equal(id.kind, DEVID_PCI);
	assert_string_equal(id.ident, "0000:3b:00.0");
	assert_string_equal(id.pci, "0000:3b:00.0");
	assert_true(devid_set_pci_text(&id, "3b:00.0"));
	assert_string_equal(id.ident, "0000:3b:00.0");
	assert_true(devid_set_uuid(&id, u));
	assert_int_equal(id.kind, DEVID_UUID);
	assert_string_equal(id.ident, "5b1c0f8e-2a4d-8c31-9e7f-0d6a4b2c8eaf");
	assert_true(devid_set_pci(&id, 0x10000, 0xaf, 0x1f, 7));
	assert_string_equal(id.ident, "5b1c0f8e-2a4d-8c31-9e7f-0d6a4b2c8eaf");
	assert_string_equal(id.pci, "10000:af:1f.7");
	/* Malformed or out of range: refused, nothing changes. */
	assert_false(devid_set_pci_text(&id, "0000:3b:20.0"));  /* device 32 */
	assert_false(devid_set_pci_text(&id, "0000:3b:00.8"));  /* function 8 */
	assert_false(devid_set_pci_text(&id, "0000:13b:00.0")); /* bus 0x13b */
	assert_false(devid_set_pci_text(&id, "3b00.0"));
	assert_false(devid_set_pci_text(&id, "0000:3b:00.0 "));
	assert_false(devid_set_pci_text(&id, ""));
	assert_string_equal(id.pci, "10000:af:1f.7");
	assert_string_equal(devid_kind_name(DEVID_UUID), "uuid");
	assert_string_equal(devid_kind_name(DEVID_PCI), "pci");
	assert_string_equal(devid_kind_name(77), "unverified");
}

static void devid_ipc_validation(void **state)
{
	char ident[IPC_IDENT_LEN], pci[IPC_PCI_LEN];

	(void)state;
#define ID(kind, i, p)                                                                   \
	(memset(ident, 0, sizeof(ident)), memset(pci, 0, sizeof(pci)),                     \
	 snprintf(ident, sizeof(ident), "%s", i), snprintf(pci, sizeof(pci), "%s", p),      \
	 ipc_ident_valid(kind, ident, pci))
	assert_true(ID(IPC_ID_UNVERIFIED, "", ""));
	assert_true(ID(IPC_ID_UUID, "5b1c0f8e-2a4d-8c31-9e7f-0d6a4b2c8eaf", ""));
	assert_true(ID(IPC_ID_UUID, "5b1c0f8e-2a4d-8c31-9e7f-0d6a4b2c8eaf", "0000:3b:00.0"));
	assert_true(ID(IPC_ID_PCI, "0000:3b:00.0", "0000:3b:00.0"));
	assert_true(ID(IPC_ID_PCI, "10000:af:1f.7", "10000:af:1f.7"));
	/* Not canonical, inconsistent or of no kind. */
	assert_false(ID(IPC_ID_UNVERIFIED, "cuda:0", ""));
	assert_false(ID(IPC_ID_UNVERIFIED, "", "0000:3b:00.0"));
	assert_false(ID(IPC_ID_UUID, "5B1C0F8E-2A4D-8C31-9E7F-0D6A4B2C8EAF", ""));
	assert_false(ID(IPC_ID_UUID, "5b1c0f8e2a4d8c319e7f0d6a4b2c8eaf", ""));
	assert_false(ID(IPC_ID_UUID, "5b1c0f8e-2a4d-8c31-9e7f-0d6a4b2c8ea", ""));
	assert_false(ID(IPC_ID_UUID, "", ""));
	assert_false(ID(IPC_ID_UUID, "5b1c0f8e-2a4d-8c31-9e7f-0d6a4b2c8eaf", "3b:00.0"));
	assert_false(ID(IPC_ID_PCI, "0000:3b:00.0", ""));
	assert_false(ID(IPC_ID_PCI, "0000:3b:00.0", "0000:3b:00.1"));
	assert_false(ID(IPC_ID_PCI, "0000:3B:00.0", "0000:3B:00.0"));
	assert_false(ID(IPC_ID_PCI, "00000:3b:00.0", "00000:3b:00.0"));
	assert_false(ID(IPC_ID_PCI, "0000:3b:20.0", "0000:3b:20.0"));
	assert_false(ID(IPC_ID_PCI, "0000:3b:00.8", "0000:3b:00.8"));
	assert_false(ID(3, "", ""));
	/* Unterminated fields. */
	memset(ident, 'a', sizeof(ident));
	memset(pci, 0, sizeof(pci));
	assert_false(ipc_ident_valid(IPC_ID_UUID, ident, pci));
	memset(ident, 0, sizeof(ident));
	memset(pci, '0', sizeof(pci));
	assert_false(ipc_ident_valid(IPC_ID_UNVERIFIED, ident, pci));
#undef ID
}

static struct ipc_register reg_uuid(const char *name, unsigned n, const char *pci)
{
	struct ipc_register r = { .id_kind = IPC_ID_UUID };

	snprintf(r.device, sizeof(r.device), "%s", name);
	snprintf(r.ident, sizeof(r.ident), "00000000-0000-8000-8000-%012x", n);
	snprintf(r.pci, sizeof(r.pci), "%s", pci ? pci : "");
	return r;
}

static struct ipc_register reg_pci(const char *name, const char *pci)
{
	struct ipc_register r = { .id_kind = IPC_ID_PCI };

	snprintf(r.device, sizeof(r.device), "%s", name);
	snprintf(r.ident, sizeof(r.ident), "%s", pci);
	snprintf(r.pci, sizeof(r.pci), "%s", pci);
	return r;
}

static struct ipc_register reg_local(const char *name)
{
	struct ipc_register r = { .id_kind = IPC_ID_UNVERIFIED };

	snprintf(r.device, sizeof(r.device), "%s", name);
	return r;
}

static uint32_t get(struct xsd_devices *t, struct ipc_register r)
{
	uint32_t i = UINT32_MAX;

	assert_int_equal(xsd_devices_get(t, &r, 0, false, &i), 0);
	assert_non_null(xsd_devices_at(t, i));
	return i;
}

static void devices_match_by_identity(void **state)
{
	struct xsd_devices t;
	uint32_t a, b, c, d, e, f;

	(void)state;
	xsd_devices_init(&t, 64, 8);
	/* One UUID is one device, whatever local name; another is another. */
	a = get(&t, reg_uuid("cuda:0", 1, NULL));
	b = get(&t, reg_uuid("cl:GPU", 1, NULL));
	c = get(&t, reg_uuid("cuda:0", 2, NULL));
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
	assert_int_equal(t.used, 2);
	/* Unverified: by local name, and never one of the verified ones. */
	d = get(&t, reg_local("cuda:0"));
	e = get(&t, reg_local("cuda:0"));
	f = get(&t, reg_local("cuda:1"));
	assert_int_equal(d, e);
	assert_int_not_equal(d, f);
	assert_int_not_equal(d, a);
	assert_int_not_equal(d, c);
	assert_int_equal(xsd_devices_at(&t, a)->refs, 2);
	assert_int_equal(xsd_devices_at(&t, d)->refs, 2);
	assert_string_equal(xsd_devices_at(&t, a)->name, "cuda:0");
	xsd_devices_fini(&t);
}

static void devices_pci_joins_uuid(void **state)
{
	struct xsd_devices t;
	const struct xsd_device *dev;
	uint32_t a, b, c, d, m;

	(void)state;
	xsd_devices_init(&t, 64, 8);
	/* Known by bus id first; a queue with its UUID and bus id joins it,
	 * and the device is then known by that UUID too. */
	a = get(&t, reg_pci("cl:GPU", "0000:3b:00.0"));
	assert_int_equal(xsd_devices_at(&t, a)->kind, IPC_ID_PCI);
	b = get(&t, reg_uuid("cuda:0", 7, "0000:3b:00.0"));
	assert_int_equal(a, b);
	dev = xsd_devices_at(&t, a);
	assert_int_equal(dev->kind, IPC_ID_UUID);
	assert_string_equal(dev->ident, "00000000-0000-8000-8000-000000000007");
	assert_string_equal(dev->pci, "0000:3b:00.0");
	c = get(&t, reg_uuid("ze:0", 7, NULL));
	assert_int_equal(a, c);
	d = get(&t, reg_pci("cl:GPU", "0000:3b:00.0"));
	assert_int_equal(a, d);
	/* Another UUID on that bus id (a MIG instance) is another device. */
	m = get(&t, reg_uuid("cuda:0", 8, "0000:3b:00.0"));
	assert_int_not_equal(a, m);
	/* Known by UUID only; a queue that also gives the bus id teaches it. */
	a = get(&t, reg_uuid("cuda:1", 9, NULL));
	b = get(&t, reg_uuid("cuda:0", 9, "0000:5e:00.0"));
	assert_int_equal(a, b);
	assert_string_equal(xsd_devices_at(&t, a)->pci, "0000:5e:00.0");
	assert_int_equal(get(&t, reg_pci("cl:GPU", "0000:5e:00.0")), a);
	xsd_devices_fini(&t);
}

static void devices_forgotten_with_last_queue(void **state)
{
	struct xsd_devices t;
	struct ipc_register r;
	uint32_t a, b, i, idx;

	(void)state;
	xsd_devices_init(&t, 64, 8);
	a = get(&t, reg_uuid("cuda:0", 1, "0000:01:00.0"));
	b = get(&t, reg_uuid("cuda:0", 1, NULL));
	assert_int_equal(a, b);
	xsd_devices_put(&t, a);
	assert_non_null(xsd_devices_at(&t, a));
	xsd_devices_put(&t, a);
	assert_null(xsd_devices_at(&t, a));
	assert_int_equal(t.used, 0);
	assert_int_equal(xsd_devices_bytes(&t), 0);
	/* Ids are never reused, indices are. */
	r = reg_uuid("cuda:0", 1, NULL);
	assert_int_equal(xsd_devices_get(&t, &r, 0, false, &idx), 0);
	assert_true(xsd_devices_at(&t, idx)->id > 1);
	/* 30000 names one after the other: the table never grows. */
	for (i = 0; i < 30000; i++) {
		char name[32];
		uint32_t k;

		snprintf(name, sizeof(name), "bench:%u", i);
		k = get(&t, reg_local(name));
		assert_true(k < 2);
		assert_true(xsd_devices_bytes(&t) <= 16 * sizeof(struct xsd_device) + 256);
		xsd_devices_put(&t, k);
	}
	assert_int_equal(t.used, 1);
	xsd_devices_put(&t, idx);
	assert_int_equal(xsd_devices_bytes(&t), 0);
	/* A stale or foreign index is ignored. */
	xsd_devices_put(&t, 12345);
	xsd_devices_fini(&t);
}

static void devices_bounded(void **state)
{
	struct xsd_devices t;
	struct ipc_register r;
	uint32_t idx[8], i, k;

	(void)state;
	xsd_devices_init(&t, 8, 3);
	for (i = 0; i < 8; i++)
		idx[i] = get(&t, reg_uuid("cuda:0", i, NULL));
	r = reg_uuid("cuda:0", 100, NULL);
	assert_int_equal(xsd_devices_get(&t, &r, 0, false, &k), -ENOSPC);
	/* Existing devices still take queues. */
	r = reg_uuid("cuda:0", 3, NULL);
	assert_int_equal(xsd_devices_get(&t, &r, 0, false, &k), 0);
	assert_int_equal(k, idx[3]);
	xsd_devices_put(&t, idx[5]);
	r = reg_uuid("cuda:0", 100, NULL);
	assert_int_equal(xsd_devices_get(&t, &r, 0, false, &k), 0);
	assert_int_equal(k, idx[5]);           /* the freed index, reused */
	assert_int_equal(t.cap, 8);
	xsd_devices_fini(&t);

	/* An unprivileged user introduces at most per_uid devices at once. */
	xsd_devices_init(&t, 8, 3);
	for (i = 0; i < 3; i++) {
		r = reg_local("x");
		snprintf(r.device, sizeof(r.device), "junk%u", i);
		assert_int_equal(xsd_devices_get(&t, &r, 1000, true, &idx[i]), 0);
	}
	r = reg_local("junk3");
	assert_int_equal(xsd_devices_get(&t, &r, 1000, true, &k), -ENOSPC);
	/* Joining a device someone introduced costs nothing ... */
	r = reg_local("junk0");
	assert_int_equal(xsd_devices_get(&t, &r, 1000, true, &k), 0);
	/* ... other users and root are not affected ... */
	r = reg_local("junk3");
	assert_int_equal(xsd_devices_get(&t, &r, 1001, true, &k), 0);
	r = reg_local("rootdev");
	assert_int_equal(xsd_devices_get(&t, &r, 0, false, &k), 0);
	/* ... and a forgotten device gives the quota back. */
	xsd_devices_put(&t, idx[1]);
	r = reg_local("junk4");
	assert_int_equal(xsd_devices_get(&t, &r, 1000, true, &k), 0);
	xsd_devices_fini(&t);
}

static void devices_lookups_across_growth(void **state)
{
	enum { N = 1000 };
	static uint32_t idx[N];
	struct xsd_devices t;
	char pci[IPC_PCI_LEN];
	uint32_t i;

	(void)state;
	xsd_devices_init(&t, XSD_DEVICES_MAX, XSD_DEVICES_PER_UID);
	for (i = 0; i < N; i++) {
		snprintf(pci, sizeof(pci), "%04x:%02x:00.0", i >> 8, i & 0xff);
		idx[i] = get(&t, reg_uuid("cuda:0", i, pci));
	}
	assert_int_equal(t.used, N);
	for (i = 0; i < N; i += 2)
		xsd_devices_put(&t, idx[i]);
	for (i = 0; i < N; i++) {
		const struct xsd_device *d = xsd_devices_at(&t, idx[i]);

		if (i % 2 == 0) {
			assert_null(d);
			continue;
		}
		snprintf(pci, sizeof(pci), "%04x:%02x:00.0", i >> 8, i & 0xff);
		assert_int_equal(get(&t, reg_uuid("other", i, NULL)), idx[i]);
		assert_int_equal(get(&t, reg_pci("cl:GPU", pci)), idx[i]);
		assert_int_equal(d->refs, 3);
	}
	xsd_devices_fini(&t);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(devid_canonical_texts),
	cmocka_unit_test(devid_ipc_validation),
	cmocka_unit_test(devices_match_by_identity),
	cmocka_unit_test(devices_pci_joins_uuid),
	cmocka_unit_test(devices_forgotten_with_last_queue),
	cmocka_unit_test(devices_bounded),
	cmocka_unit_test(devices_lookups_across_growth),
};

TU_MAIN(tests)
