/*
 * The device table (see devices.h). Entries live in one array indexed by
 * the dense device index; two hash indexes chain through them: by key
 * (the UUID of a UUID device, the API-local name of an unverified one)
 * and by PCI bus id (every device that has one). Devices known by bus id
 * only are on the bus-id chain alone. Free entries below the high-water
 * mark form a list through next_key, so indices are reused before the
 * array grows; when the last device goes, the arrays are released. The
 * IPC_DEVICES listing, which counts the queues each asker may see, is a
 * request (requests.c): the table knows no clients.
 */
#include "daemon/devices.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XSD_DEV_NONE UINT32_MAX
#define XSD_DEV_MIN_CAP 16u

void xsd_devices_init(struct xsd_devices *t, uint32_t max, uint32_t per_uid)
{
	memset(t, 0, sizeof(*t));
	t->free_head = XSD_DEV_NONE;
	t->next_id = 1;
	t->max = max;
	t->per_uid = per_uid;
}

/* Releases the arrays; ids keep counting. */
static void devs_release(struct xsd_devices *t)
{
	free(t->dev);
	free(t->bucket_key);
	free(t->bucket_pci);
	t->dev = NULL;
	t->bucket_key = t->bucket_pci = NULL;
	t->cap = t->used = t->hwm = t->nbuckets = 0;
	t->free_head = XSD_DEV_NONE;
}

void xsd_devices_fini(struct xsd_devices *t)
{
	devs_release(t);
}

static uint32_t devs_hash(uint32_t kind, const char *s)
{
	uint32_t h = 2166136261u ^ kind;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The string an entry of @kind is keyed by: NULL when on no key chain. */
static const char *devs_key(const struct xsd_device *e)
{
	switch (e->kind) {
	case IPC_ID_UUID:
		return e->ident;
	case IPC_ID_UNVERIFIED:
		return e->name;
	default:
		return NULL;
	}
}

static uint32_t *devs_key_head(struct xsd_devices *t, uint32_t kind, const char *key)
{
	return &t->bucket_key[devs_hash(kind, key) & (t->nbuckets - 1)];
}

static uint32_t *devs_pci_head(struct xsd_devices *t, const char *pci)
{
	return &t->bucket_pci[devs_hash(IPC_ID_PCI, pci) & (t->nbuckets - 1)];
}

static void devs_link(struct xsd_devices *t, uint32_t i)
{
	struct xsd_device *e = &t->dev[i];
	const char *key = devs_key(e);
	uint32_t *head;

	if (key) {
		head = devs_key_head(t, e->kind, key);
		e->next_key = *head;
		*head = i;
	} else {
		e->next_key = XSD_DEV_NONE;
	}
	if (e->pci[0]) {
		head = devs_pci_head(t, e->pci);
		e->next_pci = *head;
		*head = i;
	} else {
		e->next_pci = XSD_DEV_NONE;
	}
}

/* Removes entry @i from the chain at @head linked through @field. */
static void devs_unchain(struct xsd_devices *t, uint32_t *head, uint32_t i, size_t field)
{
	while (*head != XSD_DEV_NONE) {
		uint32_t *next = (uint32_t *)(void *)((char *)&t->dev[*head] + field);

		if (*head == i) {
			*head = *next;
			return;
		}
		head = next;
	}
}

static void devs_unlink(struct xsd_devices *t, uint32_t i)
{
	const struct xsd_device *e = &t->dev[i];
	const char *key = devs_key(e);

	if (key)
		devs_unchain(t, devs_key_head(t, e->kind, key), i,
			     offsetof(struct xsd_device, next_key));
	if (e->pci[0])
		devs_unchain(t, devs_pci_head(t, e->pci), i,
			     offsetof(struct xsd_device, next_pci));
}

static uint32_t devs_find_key(struct xsd_devices *t, uint32_t kind, const char *key)
{
	uint32_t i;

	if (!t->nbuckets)
		return XSD_DEV_NONE;
	for (i = *devs_key_head(t, kind, key); i != XSD_DEV_NONE; i = t->dev[i].next_key)
		if (t->dev[i].kind == kind && !strcmp(devs_key(&t->dev[i]), key))
			return i;
	return XSD_DEV_NONE;
}

/* A device of bus id @pci; with @only_pci, one known by bus id alone. */
static uint32_t devs_find_pci(struct xsd_devices *t, const char *pci, bool only_pci)
{
	uint32_t i;

	if (!t->nbuckets)
		return XSD_DEV_NONE;
	for (i = *devs_pci_head(t, pci); i != XSD_DEV_NONE; i = t->dev[i].next_pci)
		if (!strcmp(t->dev[i].pci, pci) && (!only_pci || t->dev[i].kind == IPC_ID_PCI))
			return i;
	return XSD_DEV_NONE;
}

/* Doubles the entries (up to max) and rebuilds both indexes. */
static int devs_grow(struct xsd_devices *t)
{
	uint32_t cap = t->cap ? 2 * t->cap : XSD_DEV_MIN_CAP, nb = 1, i;
	struct xsd_device *dev;
	uint32_t *bk, *bp;

	if (cap > t->max)
		cap = t->max;
	while (nb < 2 * cap)
		nb *= 2;
	dev = realloc(t->dev, (size_t)cap * sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	t->dev = dev;
	bk = malloc((size_t)nb * sizeof(*bk));
	bp = malloc((size_t)nb * sizeof(*bp));
	if (!bk || !bp) {
		free(bk);
		free(bp);
		return -ENOMEM;
	}
	memset(bk, 0xff, (size_t)nb * sizeof(*bk));
	memset(bp, 0xff, (size_t)nb * sizeof(*bp));
	free(t->bucket_key);
	free(t->bucket_pci);
	t->bucket_key = bk;
	t->bucket_pci = bp;
	t->nbuckets = nb;
	t->cap = cap;
	for (i = 0; i < t->hwm; i++)
		if (t->dev[i].refs)
			devs_link(t, i);
	return 0;
}

/* Devices @uid introduced that are counted against its quota. */
static uint32_t devs_count_uid(const struct xsd_devices *t, uid_t uid)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->hwm; i++)
		n += t->dev[i].refs && t->dev[i].creator_limited && t->dev[i].creator == uid;
	return n;
}

static int devs_create(struct xsd_devices *t, const struct ipc_register *r, uid_t uid,
		       bool limited, uint32_t *index)
{
	struct xsd_device *e;
	uint32_t i;
	int rc;

	if (t->used >= t->max || (limited && devs_count_uid(t, uid) >= t->per_uid))
		return -ENOSPC;
	if (t->free_head == XSD_DEV_NONE && t->hwm == t->cap && (rc = devs_grow(t)) < 0)
		return rc;
	if (t->free_head != XSD_DEV_NONE) {
		i = t->free_head;
		t->free_head = t->dev[i].next_key;
	} else {
		i = t->hwm++;
	}
	e = &t->dev[i];
	memset(e, 0, sizeof(*e));
	e->id = t->next_id++;
	e->refs = 1;
	e->kind = r->id_kind;
	memcpy(e->ident, r->ident, sizeof(e->ident));
	memcpy(e->pci, r->pci, sizeof(e->pci));
	memcpy(e->name, r->device, sizeof(e->name));
	e->creator = uid;
	e->creator_limited = limited;
	devs_link(t, i);
	t->used++;
	*index = i;
	return 0;
}

int xsd_devices_get(struct xsd_devices *t, const struct ipc_register *r, uid_t uid,
		    bool limited, uint32_t *index)
{
	uint32_t i = XSD_DEV_NONE;

	switch (r->id_kind) {
	case IPC_ID_UUID:
		i = devs_find_key(t, IPC_ID_UUID, r->ident);
		if (i != XSD_DEV_NONE && !t->dev[i].pci[0] && r->pci[0]) {
			/* Its bus id, for queues that will name it by that alone. */
			devs_unlink(t, i);
			memcpy(t->dev[i].pci, r->pci, sizeof(t->dev[i].pci));
			devs_link(t, i);
		} else if (i == XSD_DEV_NONE && r->pci[0]) {
			/* Known so far by its bus id only: now by its UUID too. */
			i = devs_find_pci(t, r->pci, true);
			if (i != XSD_DEV_NONE) {
				devs_unlink(t, i);
				t->dev[i].kind = IPC_ID_UUID;
				memcpy(t->dev[i].ident, r->ident, sizeof(t->dev[i].ident));
				devs_link(t, i);
			}
		}
		break;
	case IPC_ID_PCI:
		i = devs_find_pci(t, r->pci, false);
		break;
	default:
		i = devs_find_key(t, IPC_ID_UNVERIFIED, r->device);
		break;
	}
	if (i == XSD_DEV_NONE)
		return devs_create(t, r, uid, limited, index);
	t->dev[i].refs++;
	*index = i;
	return 0;
}

void xsd_devices_put(struct xsd_devices *t, uint32_t index)
{
	struct xsd_device *e;

	if (index >= t->hwm || !t->dev[index].refs)
		return;
	e = &t->dev[index];
	if (--e->refs)
		return;
	devs_unlink(t, index);
	e->next_key = t->free_head;
	t->free_head = index;
	if (--t->used == 0)
		devs_release(t);
}

const struct xsd_device *xsd_devices_at(const struct xsd_devices *t, uint32_t index)
{
	return index < t->hwm && t->dev[index].refs ? &t->dev[index] : NULL;
}

size_t xsd_devices_bytes(const struct xsd_devices *t)
{
	return (size_t)t->cap * sizeof(*t->dev) + 2 * (size_t)t->nbuckets * sizeof(uint32_t);
}
