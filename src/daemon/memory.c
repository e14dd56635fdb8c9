/*
 * Device memory at the daemon (see memory.h, and "Device memory" and
 * "Memory preemption" in src/ipc/ipc_abi.h).
 *
 * Nothing here is kept per allocation: listings read the records the
 * processes keep current. The limits the daemon sets go into the header
 * of each client's shared memory through slot.c, the one writer there.
 * Memory preemption keeps its state in the clients (daemon.h): a request
 * per client at most, each victim tied to the request it evicts for, and
 * a timer of its own for time-outs and for offering memory back.
 */
#include "daemon/memory.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/prom.h"
#include "daemon/send.h"
#include "daemon/slot.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/size.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

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
		   uint64_t *limit, uint64_t *evicted)
{
	const struct xsd_device *dev = xsd_devices_at(&h->devs, q->sq.pq.device);
	struct ipc_mem m;
	uint32_t i;

	*used = *limit = *evicted = 0;
	for (i = 0; dev && i < IPC_MEM_DEVICES; i++) {
		if (xsd_mem_read(q->client, i, &m) && xsd_mem_of(&m, dev)) {
			*used += atomic_load(&m.used);
			*limit = atomic_load(&m.limit);
			*evicted += atomic_load(&m.evicted);
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
		/* What is on the device: the evicted part is on the host. */
		r->mem_used += atomic_load(&m.used) - BASE_MIN(atomic_load(&m.evicted),
							       atomic_load(&m.used));
		r->mem_evicted += atomic_load(&m.evicted);
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

/*
 * One sample of metric @name per process (of @uid's, unless @all) and
 * device record: the record's field at @off, labelled with @kind if not
 * NULL.
 */
static void mem_series(struct xsd_text *t, struct xsd *d, bool all, uid_t uid,
		       const char *name, const char *kind, size_t off)
{
	const struct xsd_client *c;
	struct ipc_mem m;
	uint32_t i;

	for (c = d->clients; c; c = c->next) {
		char comm[64], dev[80];

		if (!all && c->uid != uid)
			continue;
		xsd_prom_label(comm, sizeof(comm), c->comm);
		for (i = 0; i < IPC_MEM_DEVICES; i++) {
			if (!xsd_mem_read(c, i, &m))
				continue;
			xsd_prom_label(dev, sizeof(dev), m.device);
			xsd_text_printf(t, "%s{pid=\"%d\",uid=\"%u\",comm=\"%s\",device=\"%s\","
					   "domain=\"%llu\"%s%s%s} %llu\n", name, (int)c->pid,
					(unsigned)c->uid, comm, dev,
					(unsigned long long)mem_domain(&d->host.devs, &m),
					kind ? ",kind=\"" : "", kind ? kind : "", kind ? "\"" : "",
					(unsigned long long)atomic_load(
						(_Atomic uint64_t *)((char *)&m + off)));
		}
	}
}

void xsd_mem_metrics(struct xsd_text *t, struct xsd *d, bool all, uid_t uid)
{
	const struct xsd_devices *devs = &d->host.devs;
	const struct xsd_client *c;
	uint32_t i;

	xsd_text_printf(t, "# HELP xsched_process_device_memory_bytes Device memory a process "
			   "holds on a device (kind: device; managed, or shared, apart; of "
			   "device, evicted to the host by memory preemption).\n"
			   "# TYPE xsched_process_device_memory_bytes gauge\n");
	mem_series(t, d, all, uid, "xsched_process_device_memory_bytes", "device",
		   offsetof(struct ipc_mem, used));
	mem_series(t, d, all, uid, "xsched_process_device_memory_bytes", "managed",
		   offsetof(struct ipc_mem, managed));
	mem_series(t, d, all, uid, "xsched_process_device_memory_bytes", "evicted",
		   offsetof(struct ipc_mem, evicted));
	xsd_text_printf(t, "# HELP xsched_process_device_memory_limit_bytes The limit a process "
			   "allocates under on a device (0: none).\n"
			   "# TYPE xsched_process_device_memory_limit_bytes gauge\n");
	mem_series(t, d, all, uid, "xsched_process_device_memory_limit_bytes", NULL,
		   offsetof(struct ipc_mem, limit));
	xsd_text_printf(t, "# HELP xsched_process_device_memory_refused_total Allocations "
			   "refused at a process's limit.\n"
			   "# TYPE xsched_process_device_memory_refused_total counter\n");
	mem_series(t, d, all, uid, "xsched_process_device_memory_refused_total", NULL,
		   offsetof(struct ipc_mem, refused));
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

/* --- memory preemption ---------------------------------------------------- */

/* How often evicted processes are offered their memory back. */
#define XSD_MEM_TICK_MS 100
/* How long after a request on its device an evicted process is left be:
 * a process that asked for memory is likely to ask again soon. */
#define XSD_MEM_QUIET_MS 500

/* Whether records @a and @b are of one device. */
static bool mem_same(const struct ipc_mem *a, const struct ipc_mem *b)
{
	if (a->id_kind == IPC_ID_UUID && b->id_kind == IPC_ID_UUID)
		return !strcmp(a->ident, b->ident);
	if (a->pci[0] && b->pci[0])
		return !strcmp(a->pci, b->pci);
	return a->id_kind == IPC_ID_UNVERIFIED && b->id_kind == IPC_ID_UNVERIFIED &&
	       !strcmp(a->device, b->device);
}

/* @c's record of device @dev into *@out; false if it has none. */
static bool mem_on(const struct xsd_client *c, const struct ipc_mem *dev, struct ipc_mem *out)
{
	for (uint32_t i = 0; i < IPC_MEM_DEVICES; i++)
		if (xsd_mem_read(c, i, out) && mem_same(out, dev))
			return true;
	return false;
}

/* A process's priority: its queues' highest; the default without one. */
static int32_t mem_prio(const struct xsd *d, const struct xsd_client *c)
{
	int32_t p = (int32_t)d->cfg.def_hint[IPC_KEY_PRIORITY];
	bool any = false;

	for (uint32_t i = 0; c->queue && i < c->nslots; i++) {
		const struct xsd_queue *q = c->queue[i];

		if (q && (!any || q->sq.pq.priority > p))
			p = q->sq.pq.priority;
		any = any || q;
	}
	return p;
}

static void mem_timer(struct xsd *d, struct xsd_watch *w, uint32_t events);

/* The next look in @ms (the timer made at first use); 0: none needed. */
static void mem_arm(struct xsd *d, unsigned ms)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (d->mem_timer.fd < 0 && ms) {
		d->mem_timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		d->mem_timer.fn = mem_timer;
		if (d->mem_timer.fd < 0 || xsd_watch_add(d, &d->mem_timer, EPOLLIN) < 0) {
			xsd_warn("memory preemption: no timer (%s): evicted processes get their "
				 "memory back only when their requester answers", strerror(errno));
			return;
		}
	}
	if (d->mem_timer.fd < 0)
		return;
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
	timerfd_settime(d->mem_timer.fd, 0, &its, NULL);
}

static struct xsd_client *mem_client(struct xsd *d, uint64_t id)
{
	struct xsd_client *c;

	for (c = d->clients; c && c->id != id; c = c->next)
		;
	return c;
}

/* Answers @c's request and forgets it; the processes evicted on its
 * device are left be for a while (XSD_MEM_QUIET_MS). */
static void mem_answer(struct xsd *d, struct xsd_client *c, int status)
{
	uint64_t quiet = clock_now_ns() + XSD_MEM_QUIET_MS * NSEC_PER_MSEC;
	char a[SIZE_TEXT], b[SIZE_TEXT];
	struct xsd_client *o;

	c->need = false;
	for (o = d->clients; o; o = o->next)
		if (o->mem_away && mem_same(&o->mem_dev, &c->mem_dev))
			o->mem_quiet_until_ns = quiet;
	xsd_info("memory for pid %d: %s of %s %s", (int)c->pid,
		 size_format(c->need_freed, a, sizeof(a)),
		 size_format(c->need_bytes, b, sizeof(b)),
		 status == 0 ? "freed" : status == -ETIMEDOUT ? "freed in time: timed out" :
		 "freed: no process of lower priority holds evictable memory there");
	xsd_reply(c, c->need_seq, status);
}

/*
 * Takes memory for @c's request from the next process of lower priority
 * holding evictable memory on its device (the lowest priority, then the
 * most evictable), or answers when there is none left or enough was freed.
 */
static void mem_next(struct xsd *d, struct xsd_client *c)
{
	struct xsd_client *o, *v = NULL;
	uint64_t v_bytes = 0;
	int32_t v_prio = 0;
	struct ipc_mem m;
	struct ipc_mem_evict ev = { 0 };

	if (c->need_freed >= c->need_bytes) {
		mem_answer(d, c, 0);
		return;
	}
	for (o = d->clients; o; o = o->next) {
		uint64_t bytes;
		int32_t p;

		if (o == c || o->role != IPC_ROLE_AGENT || o->mem_held || !mem_on(o, &c->mem_dev, &m))
			continue;
		bytes = atomic_load(&m.evictable) - BASE_MIN(atomic_load(&m.evicted),
							      atomic_load(&m.evictable));
		p = mem_prio(d, o);
		if (!bytes || p >= c->need_prio)
			continue;
		if (!v || p < v_prio || (p == v_prio && bytes > v_bytes)) {
			v = o;
			v_prio = p;
			v_bytes = bytes;
			ev.index = 0;
		}
	}
	if (!v) {
		/* One coming back now can go again once it is back. */
		for (o = d->clients; o; o = o->next)
			if (o != c && o->mem_restoring && mem_prio(d, o) < c->need_prio &&
			    mem_same(&o->mem_dev, &c->mem_dev))
				return;
		mem_answer(d, c, c->need_freed ? 0 : -ENOMEM);
		return;
	}
	mem_on(v, &c->mem_dev, &v->mem_dev);
	v->mem_for = c->id;
	v->mem_evicting = true;
	xsd_host_hold(&d->host, v, true);
	xsd_host_decide(d, NULL, 0);
	ev.bytes = c->need_bytes - c->need_freed;
	xsd_info("memory for pid %d (priority %d): evicting pid %d (priority %d, %llu bytes "
		 "evictable)", (int)c->pid, c->need_prio, (int)v->pid, v_prio,
		 (unsigned long long)v_bytes);
	xsd_send(v, IPC_MEM_EVICT, 0, &ev, sizeof(ev), NULL, 0);
}

int xsd_mem_need(struct xsd *d, struct xsd_client *c, uint32_t seq,
		 const struct ipc_mem_need *n)
{
	if (!d->cfg.memory_preemption)
		return xsd_reply(c, seq, -EOPNOTSUPP);
	if (c->need)
		return xsd_reply(c, seq, -EBUSY);
	if (!xsd_mem_read(c, n->index, &c->mem_dev))
		return xsd_reply(c, seq, -EINVAL);
	c->need = true;
	c->need_seq = seq;
	c->need_bytes = n->bytes;
	c->need_freed = 0;
	c->need_prio = mem_prio(d, c);
	c->need_until_ns = clock_now_ns() + (uint64_t)d->cfg.memory_wait_ms * NSEC_PER_MSEC;
	mem_arm(d, d->cfg.memory_wait_ms);
	mem_next(d, c);
	return 0;
}

/* @v's eviction for its requester ended, having freed @freed (or not). */
static void mem_evicted(struct xsd *d, struct xsd_client *v, int64_t freed)
{
	struct xsd_client *c = mem_client(d, v->mem_for);

	v->mem_evicting = false;
	v->mem_for = 0;
	if (freed > 0) {
		v->mem_away = true;
		mem_arm(d, XSD_MEM_TICK_MS);
	} else if (!v->mem_away) {
		xsd_host_hold(&d->host, v, false);
		xsd_host_decide(d, NULL, 0);
	}
	if (c && c->need) {
		c->need_freed += freed > 0 ? (uint64_t)freed : 0;
		mem_next(d, c);
	}
}

int xsd_mem_evicted_msg(struct xsd *d, struct xsd_client *v, const struct ipc_mem_evicted *e)
{
	if (!v->mem_evicting)
		return 0;
	xsd_info("pid %d evicted %lld bytes of device memory%s", (int)v->pid,
		 (long long)(e->freed > 0 ? e->freed : 0), e->freed < 0 ? " (it failed)" : "");
	mem_evicted(d, v, e->freed);
	return 0;
}

int xsd_mem_restored_msg(struct xsd *d, struct xsd_client *v, const struct ipc_mem_restored *r)
{
	struct xsd_client *c;

	if (!v->mem_restoring)
		return 0;
	v->mem_restoring = false;
	if (r->status == 0) {
		v->mem_away = false;
		xsd_info("pid %d restored its device memory: its queues run again", (int)v->pid);
		xsd_host_hold(&d->host, v, false);
		xsd_host_decide(d, NULL, 0);
	}
	/* Requests that waited for it to be back (mem_next()). */
	for (c = d->clients; c; c = c->next)
		if (c->need && mem_same(&c->mem_dev, &v->mem_dev))
			mem_next(d, c);
	return 0;
}

/*
 * Requests past their time are answered; processes whose memory is away
 * are offered it back, the highest priority first, while no request on
 * their device waits (its requester may still need the room).
 */
static void mem_timer(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	uint64_t v, now = clock_now_ns(), next = 0;
	struct xsd_client *c, *o, *best;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	for (c = d->clients; c; c = c->next) {
		if (c->need && now >= c->need_until_ns)
			mem_answer(d, c, -ETIMEDOUT);
		if (c->need && (!next || c->need_until_ns < next))
			next = c->need_until_ns;
	}
	do {
		best = NULL;
		for (c = d->clients; c; c = c->next) {
			bool waited = false;

			if (!c->mem_away || c->mem_restoring || c->mem_evicting ||
			    now < c->mem_quiet_until_ns)
				continue;
			for (o = d->clients; o && !waited; o = o->next)
				waited = o->need && mem_same(&o->mem_dev, &c->mem_dev);
			if (!waited && (!best || mem_prio(d, c) > mem_prio(d, best)))
				best = c;
		}
		if (best) {
			struct ipc_mem_evict r = { .bytes = 0 };

			best->mem_restoring = true;
			xsd_send(best, IPC_MEM_RESTORE, 0, &r, sizeof(r), NULL, 0);
		}
	} while (best);
	for (c = d->clients; c; c = c->next)
		if (c->mem_away)
			next = !next || now + XSD_MEM_TICK_MS * NSEC_PER_MSEC < next ?
				       now + XSD_MEM_TICK_MS * NSEC_PER_MSEC : next;
	mem_arm(d, next ? (unsigned)((next - now) / NSEC_PER_MSEC) + 1 : 0);
}

void xsd_mem_client_gone(struct xsd *d, struct xsd_client *c)
{
	struct xsd_client *r;

	c->need = false;
	if (!c->mem_evicting)
		return;
	/* A victim that died: the driver freed what it held there. */
	r = mem_client(d, c->mem_for);
	c->mem_evicting = false;
	if (r && r->need) {
		struct ipc_mem m;

		r->need_freed += mem_on(c, &r->mem_dev, &m) ? atomic_load(&m.used) : 0;
		mem_next(d, r);
	}
}

void xsd_mem_stop(struct xsd *d)
{
	xsd_watch_del(d, &d->mem_timer);
}
