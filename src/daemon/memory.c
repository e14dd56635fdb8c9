/*
 * Device memory at the daemon (see memory.h and "Device memory" in
 * src/ipc/ipc_abi.h).
 *
 * Nothing here is kept per allocation: listings read the records the
 * processes keep current. The limits the daemon sets go into the header
 * of each client's shared memory through slot.c, the one writer there.
 */
#include "daemon/memory.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/prom.h"
#include "daemon/slot.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <string.h>

bool xsd_mem_read(const struct xsd_client *c, uint32_t i, struct ipc_mem *out)
{
	const struct ipc_mem *m;

	if (!c->shm || i >= c->shm->nmem)
		return false;
	m = (const struct ipc_mem *)((const char *)c->shm + c->shm->mem_offset) + i;
	if (atomic_load_explicit(&((struct ipc_mem *)m)->state, memory_order_acquire) != 1)
		return false;
	memcpy(out, m, sizeof(*out));
	/* The process may rewrite its text at any time: judge the copy. */
	return ipc_str_valid(out->device, sizeof(out->device)) &&
	       memchr(out->backend, '\0', sizeof(out->backend)) &&
	       ipc_ident_valid(out->id_kind, out->ident, out->pci);
}

bool xsd_mem_of(const struct ipc_mem *m, const struct xsd_device *dev)
{
	switch (m->id_kind) {
	case IPC_ID_UUID:
		return !strcmp(m->ident, dev->ident) ||
		       (m->pci[0] && !strcmp(m->pci, dev->pci));
	case IPC_ID_PCI:
		return !strcmp(m->pci, dev->pci);
	default:
		return dev->kind == IPC_ID_UNVERIFIED && !strcmp(m->device, dev->name);
	}
}

void xsd_mem_queue(const struct xsd_host *h, const struct xsd_queue *q, uint64_t *used,
		   uint64_t *limit)
{
	const struct xsd_device *dev = xsd_devices_at(&h->devs, q->sq.pq.device);
	struct ipc_mem m;
	uint32_t i;

	*used = *limit = 0;
	for (i = 0; dev && i < IPC_MEM_DEVICES; i++) {
		if (xsd_mem_read(q->client, i, &m) && xsd_mem_of(&m, dev)) {
			*used += atomic_load(&m.used);
			*limit = atomic_load(&m.limit);
		}
	}
}

void xsd_mem_device_add(const struct xsd_client *c, const struct xsd_device *dev,
			struct ipc_device_rec *r)
{
	struct ipc_mem m;
	bool holds = false, limited = false;
	uint32_t i;

	for (i = 0; i < IPC_MEM_DEVICES; i++) {
		if (!xsd_mem_read(c, i, &m) || !xsd_mem_of(&m, dev))
			continue;
		r->mem_used += atomic_load(&m.used);
		r->mem_managed += atomic_load(&m.managed);
		if (atomic_load(&m.total) > r->mem_total)
			r->mem_total = atomic_load(&m.total);
		holds |= atomic_load(&m.used) || atomic_load(&m.managed);
		limited |= atomic_load(&m.limit) != 0;
	}
	r->mem_procs += holds;
	r->mem_limited += holds && limited;
}

int xsd_mem_set_limit(struct xsd *d, const struct xsd_client *by, const struct ipc_ctl_set *s,
		      uint64_t *ceiling)
{
	struct xsd_client *c;
	uint64_t cap;
	int found = 0;

	if (s->target != IPC_TARGET_PID)
		return -EINVAL;
	/* Check every process of that pid first: all take it, or none. */
	for (c = d->clients; c; c = c->next) {
		if ((uint64_t)c->pid != s->id || c->role != IPC_ROLE_AGENT || !c->shm)
			continue;
		if (by->privileged)
			continue;
		if (c->uid != by->uid)
			return -EPERM;
		cap = xsd_config_memory_ceiling(&d->cfg, c->uid);
		/* No limit at all, or one above the ceiling: not for the user. */
		if (cap && (s->value == 0 || (uint64_t)s->value > cap)) {
			*ceiling = cap;
			return -EPERM;
		}
	}
	for (c = d->clients; c; c = c->next) {
		if ((uint64_t)c->pid != s->id || c->role != IPC_ROLE_AGENT || !c->shm)
			continue;
		c->mem_limit = (uint64_t)s->value;
		xsd_slot_set_memory(c, c->mem_limit, xsd_config_memory_ceiling(&d->cfg, c->uid));
		xsd_host_mark_dirty(&d->host, c);
		found++;
	}
	return found;
}

void xsd_mem_reconfigure(struct xsd *d)
{
	struct xsd_client *c;

	for (c = d->clients; c; c = c->next) {
		uint64_t cap = xsd_config_memory_ceiling(&d->cfg, c->uid);

		if (!c->shm || atomic_load(&c->shm->mem_ceiling) == cap)
			continue;
		xsd_slot_set_memory(c, c->mem_limit, cap);
		xsd_host_mark_dirty(&d->host, c);
	}
}

/* The domain id of record @m (0: no domain of that device has a queue). */
static uint64_t mem_domain(const struct xsd_devices *devs, const struct ipc_mem *m)
{
	uint32_t i;

	for (i = 0; i < devs->hwm; i++) {
		const struct xsd_device *dv = xsd_devices_at(devs, i);

		if (dv && xsd_mem_of(m, dv))
			return dv->id;
	}
	return 0;
}

void xsd_mem_metrics(struct xsd_text *t, struct xsd *d, bool all, uid_t uid)
{
	const struct xsd_devices *devs = &d->host.devs;
	const struct xsd_client *c;
	struct ipc_mem m;
	uint32_t i;

	xsd_text_printf(t, "# HELP xsched_process_device_memory_bytes Device memory a process "
			   "holds on a device (kind: device, or managed/shared).\n"
			   "# TYPE xsched_process_device_memory_bytes gauge\n");
	for (c = d->clients; c; c = c->next) {
		char comm[64], dev[80];

		if (!all && c->uid != uid)
			continue;
		xsd_prom_label(comm, sizeof(comm), c->comm);
		for (i = 0; i < IPC_MEM_DEVICES; i++) {
			if (!xsd_mem_read(c, i, &m))
				continue;
			xsd_prom_label(dev, sizeof(dev), m.device);
			for (int k = 0; k < 2; k++)
				xsd_text_printf(t, "xsched_process_device_memory_bytes{pid=\"%d\","
						   "uid=\"%u\",comm=\"%s\",device=\"%s\","
						   "domain=\"%llu\",kind=\"%s\"} %llu\n",
						(int)c->pid, (unsigned)c->uid, comm, dev,
						(unsigned long long)mem_domain(devs, &m),
						k ? "managed" : "device",
						(unsigned long long)atomic_load(k ? &m.managed :
										     &m.used));
		}
	}
	xsd_text_printf(t, "# HELP xsched_process_device_memory_limit_bytes The limit a process "
			   "allocates under on a device (0: none).\n"
			   "# TYPE xsched_process_device_memory_limit_bytes gauge\n");
	for (c = d->clients; c; c = c->next) {
		char dev[80];

		if (!all && c->uid != uid)
			continue;
		for (i = 0; i < IPC_MEM_DEVICES; i++) {
			if (!xsd_mem_read(c, i, &m))
				continue;
			xsd_prom_label(dev, sizeof(dev), m.device);
			xsd_text_printf(t, "xsched_process_device_memory_limit_bytes{pid=\"%d\","
					   "uid=\"%u\",device=\"%s\",domain=\"%llu\"} %llu\n",
					(int)c->pid, (unsigned)c->uid, dev,
					(unsigned long long)mem_domain(devs, &m),
					(unsigned long long)atomic_load(&m.limit));
		}
	}
	xsd_text_printf(t, "# HELP xsched_process_device_memory_refused_total Allocations "
			   "refused at a process's limit.\n"
			   "# TYPE xsched_process_device_memory_refused_total counter\n");
	for (c = d->clients; c; c = c->next) {
		char dev[80];

		if (!all && c->uid != uid)
			continue;
		for (i = 0; i < IPC_MEM_DEVICES; i++) {
			if (!xsd_mem_read(c, i, &m))
				continue;
			xsd_prom_label(dev, sizeof(dev), m.device);
			xsd_text_printf(t, "xsched_process_device_memory_refused_total{pid=\"%d\","
					   "uid=\"%u\",device=\"%s\",domain=\"%llu\"} %llu\n",
					(int)c->pid, (unsigned)c->uid, dev,
					(unsigned long long)mem_domain(devs, &m),
					(unsigned long long)atomic_load(&m.refused));
		}
	}
	xsd_text_printf(t, "# HELP xsched_device_memory_bytes Device memory of a scheduling "
			   "domain: used and managed (held by the processes xsched counts), "
			   "total (its size as its driver reports it).\n"
			   "# TYPE xsched_device_memory_bytes gauge\n");
	for (i = 0; i < devs->hwm; i++) {
		const struct xsd_device *dv = xsd_devices_at(devs, i);
		struct ipc_device_rec r = { 0 };

		if (!dv)
			continue;
		for (c = d->clients; c; c = c->next)
			if (all || c->uid == uid)
				xsd_mem_device_add(c, dv, &r);
		if (!r.mem_procs && !r.mem_total)
			continue;
		xsd_text_printf(t, "xsched_device_memory_bytes{domain=\"%llu\",kind=\"used\"} "
				   "%llu\nxsched_device_memory_bytes{domain=\"%llu\",kind=\"managed\"} "
				   "%llu\nxsched_device_memory_bytes{domain=\"%llu\",kind=\"total\"} "
				   "%llu\n",
				(unsigned long long)dv->id, (unsigned long long)r.mem_used,
				(unsigned long long)dv->id, (unsigned long long)r.mem_managed,
				(unsigned long long)dv->id, (unsigned long long)r.mem_total);
	}
}
