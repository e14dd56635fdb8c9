/*
 * xschedd's requests: registrations, hints, listings (queues, devices),
 * policy, status and metrics, one handler per packet type behind
 * xsd_handle(). A handler changes the host's state and has it decide
 * (host.c), writes knobs and hints for the client through slot.c, and
 * answers through send.c: requests flow one way, to the host, then out.
 *
 * The kernel's credentials, never a value the client sends, decide what a
 * client may do: on the client socket a process acts only on its own
 * queues and raises priorities only up to its uid's ceiling; root, and
 * anyone who can open the control socket (mode 0660, group xsched), may
 * act on every queue and change the policy. Packets arrive here validated
 * (ipc_decode()); a handler's negative return drops the client.
 */
#include "daemon/requests.h"
#include "daemon/daemon.h"
#include "daemon/host.h"
#include "daemon/enforce.h"
#include "daemon/log.h"
#include "daemon/floor.h"
#include "daemon/heat.h"
#include "daemon/memory.h"
#include "daemon/metrics.h"
#include "daemon/observe.h"
#include "daemon/send.h"
#include "daemon/slot.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A queue past the client's slots (max_queues_per_client): refused with
 * -ENOSPC, counted until it is unregistered, and said once per client, as
 * its process runs it unscheduled. -EINVAL beyond any possible limit,
 * -EBUSY if refused already.
 */
static int xsd_refuse(struct xsd_client *c, uint32_t slot)
{
	if (slot >= XSD_MAX_QUEUES)
		return -EINVAL;
	if (!c->refused && !(c->refused = calloc(XSD_MAX_QUEUES / 8, 1)))
		return -ENOMEM;
	if (c->refused[slot / 8] & (1u << (slot % 8)))
		return -EBUSY;
	c->refused[slot / 8] |= (uint8_t)(1u << (slot % 8));
	if (c->over_limit++ == 0)
		xsd_warn("client %llu (pid %d, %.16s): more queues than "
			 "max_queues_per_client = %u: the others run unscheduled",
			 (unsigned long long)c->id, (int)c->pid, c->comm, c->nslots);
	return -ENOSPC;
}

/* Forgets refused @slot; false if it was not. */
static bool xsd_unrefuse(struct xsd_client *c, uint32_t slot)
{
	if (slot >= XSD_MAX_QUEUES || !c->refused ||
	    !(c->refused[slot / 8] & (1u << (slot % 8))))
		return false;
	c->refused[slot / 8] &= (uint8_t)~(1u << (slot % 8));
	c->over_limit--;
	return true;
}

void xsd_log_queue(const struct xsd_queue *q, const char *what)
{
	char comm[sizeof(q->client->comm) * 4], dev[sizeof(q->device) * 4];

	if (!xsd_verbose)
		return;
	xsd_info("queue %llu %s: pid %d%s%.12s uid %u comm %s device %s (%s, level %u of %u), "
		 "priority %lld share %lld deadline_us %lld laxity_us %lld",
		 (unsigned long long)q->sq.pq.id, what, (int)q->client->pid,
		 q->client->container[0] ? " container " : "", q->client->container,
		 (unsigned)q->client->uid,
		 xsd_printable(comm, sizeof(comm), q->client->comm, sizeof(q->client->comm)),
		 xsd_printable(dev, sizeof(dev), q->device, sizeof(q->device)),
		 q->backend[0] ? q->backend : "?", q->level, q->level_max,
		 (long long)q->hint[IPC_KEY_PRIORITY], (long long)q->hint[IPC_KEY_SHARE],
		 (long long)q->hint[IPC_KEY_DEADLINE_US], (long long)q->hint[IPC_KEY_LAXITY_US]);
}

static int xsd_register(struct xsd *d, struct xsd_client *c, uint32_t seq,
			const struct ipc_register *r)
{
	struct ipc_registered out = { 0 };
	int32_t ceiling = xsd_config_ceiling(&d->cfg, c->uid);
	struct xsd_queue *q;
	uint32_t k;
	int rc;

	if (r->slot >= c->nslots)
		return xsd_reply(c, seq, xsd_refuse(c, r->slot));
	if (c->queue[r->slot])
		return xsd_reply(c, seq, -EBUSY);
	q = calloc(1, sizeof(*q));
	if (q)
		q->task_lat = calloc(1, sizeof(*q->task_lat));
	if (!q || !q->task_lat) {
		free(q);
		return xsd_reply(c, seq, -ENOMEM);
	}
	q->client = c;
	q->waits_on = -1;
	q->slot = r->slot;
	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++)
		q->hint[k] = (r->hint_set & (1u << k)) ? r->hint[k] : d->cfg.def_hint[k];
	q->hint_set = r->hint_set;
	/* An explicit priority above the uid's ceiling is clamped to it (and
	 * given back if a reload raises the ceiling). */
	q->asked_priority = q->hint[IPC_KEY_PRIORITY];
	if ((r->hint_set & (1u << IPC_KEY_PRIORITY)) && q->hint[IPC_KEY_PRIORITY] > ceiling)
		q->hint[IPC_KEY_PRIORITY] = ceiling;
	q->level = r->level;
	q->level_max = r->level_max;
	q->threshold = r->threshold;
	q->batch = r->batch;
	q->budget_ns = r->budget_ns;
	memcpy(q->device, r->device, sizeof(q->device));
	memcpy(q->backend, r->backend, sizeof(q->backend));
	q->sq.pq.client = c->id;
	q->sq.pq.uid = c->uid;
	q->sq.pq.pid = c->pid;
	rc = xsd_devices_get(&d->host.devs, r, c->uid, !c->privileged, &q->sq.pq.device);
	if (rc < 0) {
		free(q->task_lat);
		free(q);
		return xsd_reply(c, seq, rc);
	}
	xsd_slot_bind(q);
	xsd_host_hints_changed(&d->host, q);
	rc = xsd_host_add(&d->host, q);
	if (rc < 0) {
		xsd_devices_put(&d->host.devs, q->sq.pq.device);
		free(q->task_lat);
		free(q);
		return xsd_reply(c, seq, rc);
	}
	c->queue[r->slot] = q;
	c->nqueues++;
	xsd_slot_open(q);
	xsd_floor_attach(d, q);
	xsd_host_refresh(&d->host, q, clock_now_ns());
	out.queue_id = q->sq.pq.id;
	out.slot = r->slot;
	memcpy(out.hint, q->hint, sizeof(out.hint));
	xsd_log_queue(q, "registered");
	rc = xsd_send(c, IPC_REGISTERED, seq, &out, sizeof(out), NULL, 0);
	xsd_host_decide(d, NULL, 0);
	return rc;
}

static int xsd_set_hint(struct xsd *d, struct xsd_client *c, uint32_t seq,
			const struct ipc_set_hint *h)
{
	struct xsd_queue *q = h->slot < c->nslots ? c->queue[h->slot] : NULL;

	int32_t ceiling = xsd_config_ceiling(&d->cfg, c->uid);

	if (!q)
		return xsd_reply(c, seq, -EINVAL);
	if (h->key == IPC_KEY_PRIORITY && h->value > ceiling)
		return xsd_reply_why(c, seq, -EPERM, IPC_WHY_CEILING, ceiling);
	q->hint[h->key] = h->value;
	q->hint_set |= 1u << h->key;
	if (h->key == IPC_KEY_PRIORITY) {
		q->asked_priority = h->value;
		q->prio_privileged = false;
	}
	xsd_host_hints_changed(&d->host, q);
	xsd_host_decide(d, NULL, 0);
	return xsd_reply(c, seq, 0);
}

/* IPC_QUEUE_LEVEL: the level the queue runs at now, and why not higher. */
static int xsd_queue_level(struct xsd_client *c, uint32_t seq, const struct ipc_queue_level *l)
{
	struct xsd_queue *q = l->slot < c->nslots ? c->queue[l->slot] : NULL;
	bool said;

	if (!q)
		return xsd_reply(c, seq, -EINVAL);
	said = strcmp(q->level_why, l->why) != 0 && l->why[0];
	q->level = BASE_MIN(l->level, q->level_max);
	memcpy(q->level_why, l->why, sizeof(q->level_why));
	q->level_why[sizeof(q->level_why) - 1] = '\0';
	if (said)
		xsd_info("queue %llu: level %u (%s)", (unsigned long long)q->sq.pq.id, q->level,
			 q->level_why);
	return xsd_reply(c, seq, 0);
}

/* Why a request was refused, for the reply. */
struct xsd_refusal {
	uint32_t why;                      /* enum ipc_why */
	int64_t limit;
};

/*
 * May @c change @key of @q to @value? 0, or -EPERM (another user's queue,
 * or above the caller's ceiling) or -EINVAL (a batch above the queue's
 * threshold), with the limit in @why.
 */
static int xsd_may_set(struct xsd *d, struct xsd_client *c, struct xsd_queue *q,
		       uint32_t key, int64_t value, struct xsd_refusal *why)
{
	int32_t ceiling = xsd_config_ceiling(&d->cfg, c->uid);

	/* The XQueue refuses such a window (xq_set_window()): say so here. */
	if (key == IPC_KEY_BATCH && value > q->threshold) {
		*why = (struct xsd_refusal){ IPC_WHY_THRESHOLD, q->threshold };
		return -EINVAL;
	}
	if (c->privileged)
		return 0;
	if (q->client->uid != c->uid)
		return -EPERM;
	if (key == IPC_KEY_PRIORITY && value > ceiling) {
		*why = (struct xsd_refusal){ IPC_WHY_CEILING, ceiling };
		return -EPERM;
	}
	return 0;
}

/* A window or level knob: the daemon's copy (for listings), then the
 * slot, for the client to apply. */
static void xsd_apply_knob(struct xsd_queue *q, uint32_t key, int64_t value)
{
	switch (key) {
	case IPC_KEY_THRESHOLD:
		q->threshold = (int32_t)value;
		/* The XQueue halves a batch the new threshold is below. */
		if (q->batch > q->threshold)
			q->batch = q->threshold / 2 ? q->threshold / 2 : 1;
		break;
	case IPC_KEY_BATCH:
		q->batch = (int32_t)value;
		break;
	case IPC_KEY_BUDGET_US:
		q->budget_ns = value < 0 ? -1 : value * 1000;
		value = q->budget_ns;
		break;
	case IPC_KEY_LEVEL:
		/* The agent clamps to what the device supports, as we do here. */
		q->level = (uint32_t)BASE_MIN(value, (int64_t)q->level_max);
		break;
	}
	xsd_slot_set_knob(q, key, value);
}

typedef void (*xsd_queue_fn)(struct xsd_queue *q, void *arg);

/*
 * Calls @fn for every queue @c targets; returns how many. Without @fn,
 * checks that @c may set each of them: a negative errno and @why then.
 */
static int xsd_for_targets(struct xsd *d, struct xsd_client *c, const struct ipc_ctl_set *s,
			   xsd_queue_fn fn, void *arg, struct xsd_refusal *why)
{
	struct xsd_client *o;
	int found = 0, rc;
	uint32_t i;

	for (o = d->clients; o; o = o->next) {
		if (s->target == IPC_TARGET_PID && (uint64_t)o->pid != s->id)
			continue;
		for (i = 0; o->queue && i < o->nslots; i++) {
			struct xsd_queue *q = o->queue[i];

			if (!q || (s->target == IPC_TARGET_QUEUE && q->sq.pq.id != s->id))
				continue;
			if (!fn && (rc = xsd_may_set(d, c, q, s->key, s->value, why)) < 0)
				return rc;
			if (fn)
				fn(q, arg);
			found++;
		}
	}
	return found;
}

struct xsd_set_arg {
	struct xsd *d;
	const struct xsd_client *by;
	const struct ipc_ctl_set *s;
};

static void xsd_set_one(struct xsd_queue *q, void *arg)
{
	struct xsd_set_arg *a = arg;

	if (a->s->key < IPC_HINT_KEYS) {
		q->hint[a->s->key] = a->s->value;
		q->hint_set |= 1u << a->s->key;
		if (a->s->key == IPC_KEY_PRIORITY) {
			/* What root or the control group sets is not clamped. */
			q->asked_priority = a->s->value;
			q->prio_privileged = a->by->privileged;
		}
		xsd_host_hints_changed(&a->d->host, q);
		/* The client keeps it, so a daemon restart does not lose it. */
		xsd_slot_set_hint(q, a->s->key, a->s->value);
	} else {
		xsd_apply_knob(q, a->s->key, a->s->value);
	}
	xsd_host_mark_dirty(&a->d->host, q->client);
}

static int xsd_ctl_set(struct xsd *d, struct xsd_client *c, uint32_t seq,
		       const struct ipc_ctl_set *s)
{
	struct xsd_set_arg a = { d, c, s };
	struct xsd_refusal why = { IPC_WHY_NONE, 0 };
	uint64_t ceiling = 0;
	int rc;

	/* A process's, not its queues': it may hold memory before any. */
	if (s->key == IPC_KEY_MEMORY_LIMIT) {
		rc = xsd_mem_set_limit(d, c, s, &ceiling);
		if (rc > 0)
			xsd_host_decide(d, NULL, 0);
		return xsd_reply_why(c, seq, rc < 0 ? rc : rc ? 0 : -ESRCH,
				     ceiling ? IPC_WHY_MEMORY_CEILING : IPC_WHY_NONE,
				     (int64_t)ceiling);
	}
	rc = xsd_for_targets(d, c, s, NULL, NULL, &why);

	if (rc <= 0)
		return xsd_reply_why(c, seq, rc < 0 ? rc : -ESRCH, why.why, why.limit);
	xsd_for_targets(d, c, s, xsd_set_one, &a, NULL);
	xsd_host_decide(d, NULL, 0);
	return xsd_reply(c, seq, 0);
}

void xsd_hints_reconfigure(struct xsd *d)
{
	struct xsd_client *c;
	uint32_t i, k, changed = 0;

	for (c = d->clients; c; c = c->next) {
		int32_t ceiling = xsd_config_ceiling(&d->cfg, c->uid);

		for (i = 0; c->queue && i < c->nslots; i++) {
			struct xsd_queue *q = c->queue[i];
			bool moved = false;

			for (k = IPC_KEY_PRIORITY; q && k < IPC_HINT_KEYS; k++) {
				int64_t v;

				if (!(q->hint_set & (1u << k)))
					v = d->cfg.def_hint[k];
				else if (k == IPC_KEY_PRIORITY && !q->prio_privileged)
					v = BASE_MIN(q->asked_priority, (int64_t)ceiling);
				else
					continue;
				if (q->hint[k] != v) {
					q->hint[k] = v;
					moved = true;
				}
			}
			if (moved) {
				xsd_host_hints_changed(&d->host, q);
				changed++;
			}
		}
	}
	if (changed)
		xsd_info("reload: %u queue%s took new defaults or ceilings", changed,
			 changed == 1 ? "" : "s");
	xsd_mem_reconfigure(d);
}

static int xsd_list(struct xsd *d, struct xsd_client *c, uint32_t seq)
{
	union {
		struct {
			struct ipc_list_reply h;
			struct ipc_queue_rec rec[IPC_LIST_PER_MSG];
		} m;
		uint64_t align;
	} out;
	struct xsd_client *o;
	uint32_t i;
	int rc;

	memset(&out, 0, sizeof(out));
	for (o = d->clients; o; o = o->next) {
		for (i = 0; o->queue && i < o->nslots; i++) {
			if (!o->queue[i] || (!c->privileged && o->uid != c->uid))
				continue;
			if (out.m.h.count == IPC_LIST_PER_MSG) {
				rc = xsd_send(c, IPC_LIST_REPLY, seq, &out.m,
					      sizeof(out.m.h) + out.m.h.count * sizeof(out.m.rec[0]),
					      NULL, 0);
				if (rc < 0)
					return rc;
				out.m.h.count = 0;
			}
			xsd_queue_record(&d->host, o->queue[i], &out.m.rec[out.m.h.count]);
			out.m.rec[out.m.h.count++].cpu_wait_p99_ns = xsd_observe_rq_p99(d, o->pid);
		}
	}
	out.m.h.flags = IPC_F_LAST;
	return xsd_send(c, IPC_LIST_REPLY, seq, &out.m,
			sizeof(out.m.h) + out.m.h.count * sizeof(out.m.rec[0]), NULL, 0);
}

/*
 * IPC_DEVICES: the devices with the number of queues on each that @c may
 * see (all, or its own through the client socket, as IPC_LIST); a device
 * without one of them is not listed to it.
 */
static int xsd_devices_list(struct xsd *d, struct xsd_client *c, uint32_t seq)
{
	const struct xsd_devices *t = &d->host.devs;
	union {
		struct {
			struct ipc_devices_reply h;
			struct ipc_device_rec rec[IPC_DEVICES_PER_MSG];
		} m;
		uint64_t align;
	} out;
	uint32_t *seen = t->hwm ? calloc(t->hwm, sizeof(*seen)) : NULL;
	const struct xsd_client *o;
	uint32_t i;
	int rc;

	if (t->hwm && !seen)
		return xsd_send(c, IPC_REPLY, seq, &(struct ipc_reply){ .status = -ENOMEM },
				sizeof(struct ipc_reply), NULL, 0);
	for (o = d->clients; o; o = o->next)
		for (i = 0; o->queue && i < o->nslots; i++)
			if (o->queue[i] && (c->privileged || o->uid == c->uid) &&
			    o->queue[i]->sq.pq.device < t->hwm)
				seen[o->queue[i]->sq.pq.device]++;
	memset(&out, 0, sizeof(out));
	for (i = 0; i < t->hwm; i++) {
		const struct xsd_device *e = &t->dev[i];
		struct ipc_device_rec *r;

		if (!e->refs || !seen[i])
			continue;
		if (out.m.h.count == IPC_DEVICES_PER_MSG) {
			rc = xsd_send(c, IPC_DEVICES_REPLY, seq, &out.m, sizeof(out.m), NULL, 0);
			if (rc < 0) {
				free(seen);
				return rc;
			}
			out.m.h.count = 0;
		}
		r = &out.m.rec[out.m.h.count++];
		memset(r, 0, sizeof(*r));
		for (o = d->clients; o; o = o->next)
			if (c->privileged || o->uid == c->uid)
				xsd_mem_device_add(o, e, r);
		r->domain = e->id;
		r->id_kind = e->kind;
		r->queues = seen[i];
		memcpy(r->ident, e->ident, sizeof(r->ident));
		memcpy(r->pci, e->pci, sizeof(r->pci));
		memcpy(r->name, e->name, sizeof(r->name));
	}
	free(seen);
	out.m.h.flags = IPC_F_LAST;
	return xsd_send(c, IPC_DEVICES_REPLY, seq, &out.m,
			sizeof(out.m.h) + out.m.h.count * sizeof(out.m.rec[0]), NULL, 0);
}

static int xsd_policy_reply(struct xsd *d, struct xsd_client *c, uint32_t seq, int status,
			    const char *error)
{
	struct ipc_policy_reply r = { .status = status };

	snprintf(r.name, sizeof(r.name), "%s", d->host.policy);
	snprintf(r.error, sizeof(r.error), "%s", error ? error : "");
	return xsd_send(c, IPC_POLICY_REPLY, seq, &r, sizeof(r), NULL, 0);
}

static int xsd_policy_set(struct xsd *d, struct xsd_client *c, uint32_t seq,
			  const struct ipc_policy *p)
{
	char err[512];
	int rc;

	if (!c->privileged)
		return xsd_policy_reply(d, c, seq, -EPERM, NULL);
	rc = xsd_host_set_policy(&d->host, p->name, &d->cfg.pconf, err, sizeof(err));
	if (rc == 0) {
		xsd_info("policy switched to %s by pid %d", p->name, (int)c->pid);
		xsd_host_decide(d, NULL, 0);
	} else {
		xsd_warn("pid %d asked for %s", (int)c->pid, err);
	}
	return xsd_policy_reply(d, c, seq, rc, rc < 0 ? err : NULL);
}

static uint64_t xsd_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int xsd_status(struct xsd *d, struct xsd_client *c, uint32_t seq)
{
	struct ipc_status_reply r = { .version = IPC_VERSION };
	struct xsd_client *o;
	size_t i;

	for (o = d->clients; o; o = o->next) {
		r.clients++;
		r.queues += o->nqueues;
		r.unscheduled += o->over_limit;
	}
	r.max_queues_per_client = d->cfg.max_queues_per_client;
	/* Live statuses of the scheduled queues: a queue alone publishes
	 * without ringing. */
	for (o = d->clients; o; o = o->next)
		for (i = 0; o->queue && i < o->nslots; i++)
			if (o->queue[i] && o->queue[i]->sq.added)
				r.ready += atomic_load(&o->shm->slot[i].status) == IPC_ST_READY;
	r.uptime_ns = clock_now_ns() - d->start_ns;
	r.decisions = d->host.core.decisions;
	r.events = d->host.events;
	r.cpu_ns = xsd_cpu_ns();
	snprintf(r.policy, sizeof(r.policy), "%s", d->host.policy);
	r.reloads = d->reloads;
	r.reload_status = d->reload_rc;
	r.reload_age_ns = d->reloads ? clock_now_ns() - d->reload_ns : 0;
	snprintf(r.reload_error, sizeof(r.reload_error), "%s", d->reload_msg);
	r.guard_pct = d->host.core.conf.guard_pct;
	r.guard_period_ms = (uint32_t)(d->host.core.conf.guard_period_ns / 1000000);
	r.refused = d->refused_fds;
	xsd_enforce_status(d, &r);
	return xsd_send(c, IPC_STATUS_REPLY, seq, &r, sizeof(r), NULL, 0);
}

static int xsd_metrics(struct xsd *d, struct xsd_client *c, uint32_t seq)
{
	enum { CHUNK = IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(struct ipc_text_reply) };
	union {
		struct {
			struct ipc_text_reply h;
			char text[CHUNK];
		} m;
		uint64_t align;
	} out;
	size_t len, off = 0;
	char *text = xsd_metrics_text(d, c, &len);
	int rc = 0;

	if (!text)
		return xsd_reply(c, seq, -ENOMEM);
	do {
		size_t n = BASE_MIN((size_t)CHUNK, len - off);

		out.m.h.len = (uint32_t)n;
		out.m.h.flags = off + n == len ? IPC_F_LAST : 0;
		memcpy(out.m.text, text + off, n);
		off += n;
		rc = xsd_send(c, IPC_TEXT_REPLY, seq, &out.m, sizeof(out.m.h) + n, NULL, 0);
	} while (rc == 0 && off < len);
	free(text);
	return rc;
}

int xsd_handle(struct xsd *d, struct xsd_client *c, const struct ipc_msg *m)
{
	uint32_t seq = m->hdr.seq;
	bool agent = c->role == IPC_ROLE_AGENT;

	if (!c->hello && m->hdr.type != IPC_HELLO) {
		xsd_reply(c, seq, -EPROTO);
		return -EPROTO;
	}
	switch (m->hdr.type) {
	case IPC_HELLO: {
		const struct ipc_hello *h = m->body;

		if (c->hello)
			return xsd_reply(c, seq, -EALREADY);
		c->hello = true;
		d->pending_hello--;
		c->role = h->role;
		memcpy(c->comm, h->comm, sizeof(c->comm));
		if (h->role == IPC_ROLE_ENFORCE)
			return xsd_reply(c, seq, xsd_enforce_register(d, c));
		xsd_observe_client(d, c);
		if (h->role != IPC_ROLE_AGENT)
			return xsd_reply(c, seq, 0);
		/* A process scheduled is allowed through the gate too. */
		xsd_enforce_register(d, c);
		return xsd_host_hello(d, c, seq);
	}
	case IPC_REGISTER:
		return agent ? xsd_register(d, c, seq, m->body) : xsd_reply(c, seq, -EPERM);
	case IPC_UNREGISTER: {
		const struct ipc_unregister *u = m->body;

		if (agent && u->slot >= c->nslots && xsd_unrefuse(c, u->slot))
			return xsd_reply(c, seq, 0);
		if (!agent || u->slot >= c->nslots || !c->queue[u->slot])
			return xsd_reply(c, seq, -EINVAL);
		xsd_log_queue(c->queue[u->slot], "unregistered");
		xsd_host_queue_free(d, c, u->slot);
		xsd_host_decide(d, NULL, 0);
		return xsd_reply(c, seq, 0);
	}
	case IPC_SET_HINT:
		return agent ? xsd_set_hint(d, c, seq, m->body) : xsd_reply(c, seq, -EPERM);
	case IPC_QUEUE_LEVEL:
		return agent ? xsd_queue_level(c, seq, m->body) : xsd_reply(c, seq, -EPERM);
	case IPC_MEM_NEED:
		return agent ? xsd_mem_need(d, c, seq, m->body) : xsd_reply(c, seq, -EPERM);
	case IPC_MEM_EVICTED:
		return agent ? xsd_mem_evicted_msg(d, c, m->body) : 0;
	case IPC_MEM_RESTORED:
		return agent ? xsd_mem_restored_msg(d, c, m->body) : 0;
	case IPC_LIST:
		return xsd_list(d, c, seq);
	case IPC_CTL_SET:
		return xsd_ctl_set(d, c, seq, m->body);
	case IPC_POLICY_GET:
		return xsd_policy_reply(d, c, seq, 0, NULL);
	case IPC_POLICY_SET:
		return xsd_policy_set(d, c, seq, m->body);
	case IPC_STATUS:
		return xsd_status(d, c, seq);
	case IPC_METRICS:
		return xsd_metrics(d, c, seq);
	case IPC_DEVICES:
		return xsd_devices_list(d, c, seq);
	case IPC_BYPASS:
		return xsd_observe_list(d, c, seq);
	case IPC_HEATMAP:
		return xsd_heat_request(d, c, seq, m->body);
	default:
		return xsd_reply(c, seq, -EOPNOTSUPP);
	}
}

