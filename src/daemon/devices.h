/*
 * The daemon's table of devices: the scheduling domains. Every registered
 * queue holds a reference on the device its identity names (ipc_abi.h,
 * enum ipc_id_kind), and the device's dense index is what policies compare
 * (struct xs_pqueue `device`); a device is forgotten, its index free for
 * reuse, when its last queue goes.
 *
 * Matching: a UUID names one device. A PCI bus id names the device of that
 * bus id, so a device that one API knows by UUID and another only by bus id
 * is one domain: a queue identified by UUID joins a device known so far by
 * bus id only (which then takes the UUID), and a queue identified by bus id
 * joins a device of that bus id whatever its UUID. An unverified queue
 * matches by its API-local name among unverified devices only.
 *
 * Lookups hash the identity and the bus id (FNV-1a, chained through the
 * entries, the bucket array a power of two at least twice the entries), so
 * a registration costs O(1) whatever the number of devices. The table is
 * bounded: at most XSD_DEVICES_MAX devices at once, and an unprivileged
 * user may introduce at most XSD_DEVICES_PER_UID of them (a user who sends
 * made-up names cannot lock others out of new devices). One epoll thread
 * uses it; nothing is locked.
 */
#ifndef XSD_DEVICES_H
#define XSD_DEVICES_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define XSD_DEVICES_MAX 1024u
#define XSD_DEVICES_PER_UID 64u

/* A device. Entries with refs == 0 are free. */
struct xsd_device {
	uint64_t id;                    /* daemon-wide, never reused */
	uint32_t refs;                  /* queues on it */
	uint32_t kind;                  /* enum ipc_id_kind */
	char ident[IPC_IDENT_LEN];      /* UUID or bus id; "" unverified */
	char pci[IPC_PCI_LEN];          /* bus id where known */
	char name[IPC_NAME_LEN];        /* first API-local name; the key when unverified */
	uid_t creator;                  /* who registered its first queue */
	bool creator_limited;           /* counted against the creator's quota */
	uint32_t next_key, next_pci;    /* hash chains; UINT32_MAX ends them */
};

struct xsd_devices {
	struct xsd_device *dev;         /* by index */
	uint32_t cap;                   /* entries allocated */
	uint32_t used;                  /* entries with refs > 0 */
	uint32_t hwm;                   /* entries ever used: dev[hwm..cap) never were */
	uint32_t free_head;             /* free entries below hwm, through next_key */
	uint32_t *bucket_key, *bucket_pci;
	uint32_t nbuckets;              /* power of two, 0 before first use */
	uint64_t next_id;
	uint32_t max;                   /* XSD_DEVICES_MAX, lower in tests */
	uint32_t per_uid;               /* XSD_DEVICES_PER_UID, lower in tests */
};

/* An empty table of at most @max devices, @per_uid per unprivileged user. */
void xsd_devices_init(struct xsd_devices *t, uint32_t max, uint32_t per_uid);
void xsd_devices_fini(struct xsd_devices *t);

/*
 * Takes a reference on the device registration @r names (fields device,
 * id_kind, ident, pci, valid per ipc_decode()), creating it if needed on
 * behalf of @uid (@limited: an unprivileged user, subject to the per-user
 * quota). Returns 0 with its index in *@index, -ENOSPC when the table or
 * @uid's quota is full, -ENOMEM.
 */
int xsd_devices_get(struct xsd_devices *t, const struct ipc_register *r, uid_t uid,
		    bool limited, uint32_t *index);

/* Drops a reference taken by xsd_devices_get(); the last forgets the device. */
void xsd_devices_put(struct xsd_devices *t, uint32_t index);

/* The device at @index (which holds a reference), or NULL. */
const struct xsd_device *xsd_devices_at(const struct xsd_devices *t, uint32_t index);

/* Bytes the table holds allocated (for tests and the benchmark). */
size_t xsd_devices_bytes(const struct xsd_devices *t);

#endif
