/*
 * The daemon's host of the scheduler core (src/sched/sched_core.h): finds
 * and loads policies, reads each queue's status, counters and waits from
 * its client's shared slot, has the core decide, writes its decisions,
 * caps and quiet flags back (through slot.c, the slots' only writer), and
 * rings the clients that must hear of them. Deciding, both doorbells and
 * the timer (the policy's next time, the liveness heartbeat) are here;
 * the sockets are server.c's, so a request flows one way: requests.c asks
 * the host, the host writes the slots and rings, send.c answers.
 *
 * Everything that must hold whichever policy runs (inheritance, the
 * starvation guard, the contention-aware window, quiet flags, the drain
 * re-decide) is the core's; this file only connects it to the slots. A hot
 * policy switch moves every queue to the new policy; hints live in the
 * queues, not in the policy, so none is lost.
 */
#include "daemon/host.h"
#include "daemon/daemon.h"
#include "daemon/floor.h"
#include "daemon/heat.h"
#include "daemon/log.h"
#include "daemon/send.h"
#include "daemon/slot.h"
#include "daemon/watch.h"
#include "policy/policy_builtin.h"
#include "sched/sched_core.h"
#include "base/clock.h"
#include "base/compiler.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

/*
 * The daemon runs privileged: a policy file must be as trustworthy as the
 * daemon itself (owned by root or by us, writable by nobody else).
 */
static int xsd_file_trusted(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return 0;
}

/*
 * Finds policy @name (built-in, or an absolute path of a module); on error
 * says why in @err, in words an operator can act on.
 */
static const struct xs_policy_ops *xsd_lookup(const char *name, void **dl, int *rc,
					      char *err, size_t errlen)
{
	const struct xs_policy_ops *ops = NULL;
	uint32_t version = 0;

	*dl = NULL;
	if (name[0] != '/') {
		const char *const *n = policy_names();
		size_t used;

		ops = policy_find(name);
		*rc = ops ? 0 : -ENOENT;
		if (ops)
			return ops;
		used = (size_t)snprintf(err, errlen, "policy %s: no such built-in policy (", name);
		for (; *n && used < errlen; n++)
			used += (size_t)snprintf(err + used, errlen - used, "%s%s", *n,
						 n[1] ? ", " : "");
		if (used < errlen)
			snprintf(err + used, errlen - used, "; or the absolute path of a module)");
		return NULL;
	}
	*rc = xsd_file_trusted(name);
	if (*rc == -EPERM) {
		snprintf(err, errlen, "policy %s: a module must be owned by root and writable "
			 "by no one else", name);
		return NULL;
	}
	if (*rc < 0) {
		snprintf(err, errlen, "policy %s: %s", name, strerror(-*rc));
		return NULL;
	}
	*rc = policy_load(name, &ops, dl, &version);
	switch (*rc) {
	case 0:
		return ops;
	case -ENOENT:
		snprintf(err, errlen, "policy %s: cannot load it: %s", name, dlerror());
		break;
	case -ENOEXEC:
		snprintf(err, errlen, "policy %s: not a policy module (no %s symbol)", name,
			 XS_POLICY_ENTRY);
		break;
	case -EPROTO:
		if (version)
			snprintf(err, errlen, "policy %s: the module is for policy ops version %u; "
				 "this daemon serves versions 1 to %u", name, version,
				 XS_POLICY_VERSION);
		else
			snprintf(err, errlen, "policy %s: the module serves no policy ops version "
				 "this daemon knows (1 to %u)", name, XS_POLICY_VERSION);
		break;
	default:
		snprintf(err, errlen, "policy %s: invalid ops table (no name or no schedule, or "
			 "too short)", name);
		break;
	}
	return NULL;
}

void xsd_host_mark_dirty(struct xsd_host *s, struct xsd_client *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = s->dirty;
	s->dirty = c;
}

static struct xsd_host *host_of(void *ctx)
{
	return ctx;
}

static struct xsd_queue *host_queue(struct sched_q *sq)
{
	return base_container_of(sq, struct xsd_queue, sq);
}

/* The daemon's heat maps (heat.h); NULL: off. */
static struct xsd_heat *host_heat(struct xsd_host *s)
{
	return base_container_of(s, struct xsd, host)->heat;
}

/* @q's slot, to read: the host stores into it through slot.c only. */
static const struct ipc_slot *host_slot(const struct xsd_queue *q)
{
	return q->sp;
}

/*
 * Whether @q's client must be rung for the decision just written to its
 * slot (ipc_abi.h, "Lazy suspensions"). A suspension of a queue with
 * nothing submitted needs no ring: its gate is the slot's `run`, read
 * before every launch, so it launches nothing until it runs again; its
 * client hears of it when the queue next becomes ready (it rings then: no
 * queue of a device being decided is quiet, see host_set_quiet()), or not
 * at all if it runs again first. So one queue's task on a device of many
 * idle queues costs two decisions, not a wakeup of every process there.
 */
static bool host_must_tell(struct xsd_queue *q)
{
	q->untold = false;
	if (q->applied == q->told)
		return false;
	if (q->applied == 0 && !q->sq.ready) {
		q->untold = true;
		return false;
	}
	return true;
}

/*
 * Writes @q's decision (and window cap) to its slot if it changed; marks
 * the client to ring unless it needs not hear of it yet. Release stores
 * (slot.c): host_commit() puts the barrier of their Dekker pairs after all
 * of a device's stores.
 */
static bool host_apply(void *ctx, struct sched_q *sq)
{
	struct xsd_host *s = host_of(ctx);
	struct xsd_queue *q = host_queue(sq);
	/* A process whose memory was taken runs nothing (memory.c). */
	uint32_t run = sq->pq.run && !q->client->mem_held ? 1 + sq->cap : 0;
	bool changed = run != q->applied;

	/* Idle below its device's floor: the floor stops its next launch, and
	 * its Ready rings for the decision to be written (host_refresh). */
	q->floor_lazy = !run && !sq->pq.ready && !q->client->mem_held &&
			xsd_floor_covers(s, q);
	if (q->floor_lazy)
		changed = false;
	if (changed) {
		if (!run != !q->applied)
			xsd_heat_mark(host_heat(s), q, s->now, run != 0);
		xsd_slot_set_run(q, run);
		s->held += (run != 1) - (q->applied != 1);
		q->applied = run;
		if (host_must_tell(q))
			xsd_host_mark_dirty(s, q->client);
	}
	/* How long it waits, for listings: ready and held suspended (see also
	 * xsd_became_ready(), xsd_became_idle()). */
	if (!sq->pq.ready || q->applied)
		q->wait_since = 0;
	else if (!q->wait_since)
		q->wait_since = s->now;
	return changed;
}

void xsd_host_hold(struct xsd_host *s, struct xsd_client *c, bool hold)
{
	uint32_t i;

	c->mem_held = hold;
	for (i = 0; c->queue && i < c->nslots; i++)
		if (c->queue[i] && host_apply(s, &c->queue[i]->sq))
			xsd_host_mark_dirty(s, c);
	atomic_thread_fence(memory_order_seq_cst);
}

/* The decisions' run stores (xsd_slot_set_run()), then the core's in-flight
 * loads that pair with them (ipc_abi.h, "Drain"): one barrier for a
 * device's decision. */
static void host_commit(void *ctx)
{
	(void)ctx;
	atomic_thread_fence(memory_order_seq_cst);
}

static void host_set_quiet(void *ctx, struct sched_q *sq, bool quiet)
{
	struct xsd_queue *q = host_queue(sq);

	(void)ctx;
	/* An untold queue must ring when it becomes ready (host_must_tell());
	 * while a device is decided none is quiet: the core clears the flags
	 * (and reads those queues' status) first. */
	xsd_slot_set_quiet(q, quiet && !q->untold);
}

static void host_refresh(void *ctx, struct sched_q *sq)
{
	xsd_host_refresh(host_of(ctx), host_queue(sq), 0);
}

static void host_load(void *ctx, struct sched_q *sq)
{
	const struct ipc_slot *slot = host_slot(host_queue(sq));
	uint64_t exec = atomic_load(&slot->exec_ns);

	(void)ctx;
	if (exec > sq->pq.service_ns)
		sq->pq.service_ns = exec;
	sq->pq.inflight = (uint16_t)BASE_MIN(atomic_load(&slot->inflight), UINT16_MAX);
}

static uint32_t host_inflight(void *ctx, struct sched_q *sq)
{
	(void)ctx;
	return atomic_load(&host_slot(host_queue(sq))->inflight);
}

static struct sched_q *host_waits_on(void *ctx, struct sched_q *sq)
{
	struct xsd_queue *q = host_queue(sq), *t;

	(void)ctx;
	if (q->waits_on < 0)
		return NULL;
	t = q->client->queue[q->waits_on];
	return t ? &t->sq : NULL;
}

static void host_decided(void *ctx, struct sched_q *const *q, size_t n,
			 const struct sched_summary *sum)
{
	xsd_floor_decided(host_of(ctx), q, n, sum, xsd_host_mark_dirty);
}

static void host_refused(void *ctx, struct sched_q *sq)
{
	xsd_warn("policy %s refused queue %llu: it runs unscheduled", host_of(ctx)->policy,
		 (unsigned long long)sq->pq.id);
}

static const struct sched_host xsd_host_ops = {
	.apply = host_apply,
	.commit = host_commit,
	.set_quiet = host_set_quiet,
	.refresh = host_refresh,
	.load = host_load,
	.inflight = host_inflight,
	.waits_on = host_waits_on,
	.decided = host_decided,
	.refused = host_refused,
};

int xsd_host_set_policy(struct xsd_host *s, const char *name,
			const struct xs_policy_conf *pconf, char *err, size_t errlen)
{
	const struct xs_policy_ops *ops;
	void *dl, *state = NULL, *old_dl = s->dl;
	char prev[sizeof(s->policy)];
	int rc;

	ops = xsd_lookup(name, &dl, &rc, err, errlen);
	if (!ops)
		return rc;
	if (ops->init && (rc = ops->init(&state, pconf)) < 0) {
		snprintf(err, errlen, "policy %s: its init failed: %s", name, strerror(-rc));
		policy_unload(dl);
		return rc;
	}
	/* Named before the switch: refusals are logged under the new name. */
	memcpy(prev, s->policy, sizeof(prev));
	snprintf(s->policy, sizeof(s->policy), "%s", name);
	rc = sched_set_policy(&s->core, ops, state);
	if (rc < 0) {
		memcpy(s->policy, prev, sizeof(prev));
		snprintf(err, errlen, "policy %s: %s", name, strerror(-rc));
		if (ops->fini)
			ops->fini(state);
		policy_unload(dl);
		return rc;
	}
	policy_unload(old_dl);
	s->dl = dl;
	s->pconf = *pconf;
	return 0;
}

/* The core's settings in @cfg. */
static struct sched_conf xsd_host_conf(const struct xsd_config *cfg)
{
	struct sched_conf c = {
		.guard_pct = cfg->starvation_guard_pct,
		.guard_period_ns = cfg->starvation_period_ns,
		.contention_window = cfg->contention_window,
		.grace_max_ns = cfg->idle_grace_ns,
		.preempt_cap = cfg->preempt_cap,
		.request_gap_ns = cfg->request_gap_ns,
	};

	return c;
}

int xsd_host_init(struct xsd_host *s, const struct xsd_config *cfg,
		  char *err, size_t errlen)
{
	struct sched_conf conf = xsd_host_conf(cfg);

	memset(s, 0, sizeof(*s));
	s->next_id = 1;
	s->floor_cfg = cfg->floor;
	xsd_devices_init(&s->devs, XSD_DEVICES_MAX, XSD_DEVICES_PER_UID);
	sched_init(&s->core, &xsd_host_ops, s, &conf);
	return xsd_host_set_policy(s, cfg->policy, &cfg->pconf, err, errlen);
}

void xsd_host_reconfigure(struct xsd_host *s, const struct xsd_config *cfg)
{
	struct sched_conf conf = xsd_host_conf(cfg);

	sched_set_conf(&s->core, &conf);
	s->floor_cfg = cfg->floor;
}

void xsd_host_fini(struct xsd_host *s)
{
	sched_fini(&s->core);
	xsd_floor_fini(s);
	policy_unload(s->dl);
	xsd_devices_fini(&s->devs);
	memset(s, 0, sizeof(*s));
}

int xsd_host_add(struct xsd_host *s, struct xsd_queue *q)
{
	int rc;

	q->sq.pq.id = s->next_id++;
	q->applied = q->told = 1;
	q->untold = false;
	rc = sched_add(&s->core, &q->sq);
	if (rc == 1)
		xsd_warn("policy %s refused queue %llu: it runs unscheduled", s->policy,
			 (unsigned long long)q->sq.pq.id);
	return rc < 0 ? rc : 0;
}

/* Tells the core whether @q waits on another queue of its client (the
 * client bumps status_seq when it changes waits_on). */
static void xsd_track_wait(struct xsd_host *s, struct xsd_queue *q, int32_t w)
{
	if (w < 0 || (uint32_t)w >= q->client->nslots || (uint32_t)w == q->slot)
		w = -1;
	q->waits_on = w;
	sched_waits(&s->core, &q->sq, w >= 0);
}

static void xsd_host_remove(struct xsd_host *s, struct xsd_queue *q)
{
	q->waits_on = -1;
	sched_remove(&s->core, &q->sq);
	if (q->applied != 1)
		s->held--;
	q->applied = 1;
}

void xsd_host_hints_changed(struct xsd_host *s, struct xsd_queue *q)
{
	q->sq.own_priority = (int32_t)q->hint[IPC_KEY_PRIORITY];
	q->sq.pq.share = q->hint[IPC_KEY_SHARE];
	q->sq.pq.deadline_us = q->hint[IPC_KEY_DEADLINE_US];
	q->sq.pq.laxity_us = q->hint[IPC_KEY_LAXITY_US];
	sched_hints(&s->core, &q->sq);
}

static void xsd_became_ready(struct xsd_host *s, struct xsd_queue *q,
			     uint64_t ready_ns, uint64_t now, uint64_t recv_ns)
{
	/* The client's clock stamp orders EDF deadlines; keep it plausible. */
	if (ready_ns == 0 || ready_ns > now || now - ready_ns > NSEC_PER_SEC)
		ready_ns = now;
	if (recv_ns >= ready_ns)
		hist_record(&s->wake_lat, recv_ns - ready_ns);
	/* Ready and held: it waits (for listings) from now. */
	if (!q->applied && !q->wait_since)
		q->wait_since = now;
	sched_ready(&s->core, &q->sq, ready_ns, now);
}

/* A run floor held @q's work (its client says), or no longer: a
 * suspension or resumption in its heat map, as a decision's are. */
static void host_heat_floored(struct xsd_host *s, struct xsd_queue *q, bool held, uint64_t now)
{
	if (held == q->heat_floored)
		return;
	q->heat_floored = held;
	xsd_heat_mark(host_heat(s), q, now, !held);
}

/* @fresh: the client rang for it, so @now is close to when it happened. */
static void xsd_became_idle(struct xsd_host *s, struct xsd_queue *q, uint64_t now,
			    bool fresh)
{
	if (fresh && now > q->sq.ready_ns) {
		hist_record(q->task_lat, now - q->sq.ready_ns);
		xsd_heat_task(host_heat(s), q, now, now - q->sq.ready_ns);
	}
	q->wait_since = 0;
	sched_idle(&s->core, &q->sq, now);
}

void xsd_host_refresh(struct xsd_host *s, struct xsd_queue *q, uint64_t recv_ns)
{
	const struct ipc_slot *slot = host_slot(q);
	uint32_t seq = atomic_load(&slot->status_seq);
	uint64_t now = clock_now_ns(), ready_ns;
	bool ready;

	if (seq == q->status_seen)
		return;
	q->status_seen = seq;
	xsd_track_wait(s, q, atomic_load(&slot->waits_on));
	xsd_floor_status(s, q);
	host_heat_floored(s, q, atomic_load(&slot->floored) != 0, now);
	ready = atomic_load(&slot->status) == IPC_ST_READY;
	ready_ns = atomic_load(&slot->ready_ns);
	s->events++;
	/* Held without a ring and now ready: its client applies the decision. */
	if (ready && q->untold) {
		q->untold = false;
		xsd_host_mark_dirty(s, q->client);
	}
	/* Against the status as reported (sq.ready), not the policy's view,
	 * which an idle grace holds up. */
	if (ready && q->sq.ready && ready_ns != q->sq.ready_ns) {
		/* Idle and ready again between two looks: both happened. */
		xsd_became_idle(s, q, now, false);
		xsd_became_ready(s, q, ready_ns, now, recv_ns);
	} else if (ready && !q->sq.ready) {
		xsd_became_ready(s, q, ready_ns, now, recv_ns);
	} else if (!ready && q->sq.ready) {
		xsd_became_idle(s, q, now, recv_ns != 0);
	}
	/* Held by the floor alone and ready now: the decision is written and
	 * told (its level's suspension), as for a queue suspended idle. */
	if (ready && q->floor_lazy)
		host_apply(s, &q->sq);
}

/* @q's client rang at @recv_ns: refreshes @q and has its device decided. */
static void xsd_host_rang(struct xsd_host *s, struct xsd_queue *q, uint64_t recv_ns)
{
	xsd_host_refresh(s, q, recv_ns);
	sched_touch(&s->core, &q->sq);
}

/* Decides what changed (the core's sched_run()) and writes every changed
 * decision to its slot (clients marked dirty). @recv_ns: when the
 * triggering event arrived (0: timer, etc.). */
static void xsd_host_run(struct xsd_host *s, uint64_t recv_ns)
{
	s->now = clock_now_ns();
	sched_run(&s->core, s->now, false);
	if (recv_ns)
		hist_record(&s->decide_lat, clock_now_ns() - recv_ns);
}

/* --- the loop's side: deciding, doorbells, the timer ------------------- */

/* Rings every client whose slots changed (xsd_host_mark_dirty()). */
static void xsd_ring_dirty(struct xsd *d)
{
	uint64_t one = 1;
	uint32_t i;

	while (d->host.dirty) {
		struct xsd_client *c = d->host.dirty;

		d->host.dirty = c->dirty_next;
		c->dirty = false;
		/* The agent applies every slot's decision when rung. */
		for (i = 0; i < c->nslots; i++) {
			struct xsd_queue *q = c->queue[i];

			if (q) {
				q->told = q->applied;
				q->untold = false;
			}
		}
		if (write(c->bell_out, &one, sizeof(one)) < 0 && errno != EAGAIN)
			xsd_debug("client %llu: doorbell: %s", (unsigned long long)c->id,
				  strerror(errno));
	}
}

/*
 * The timer serves the policy's next time and, while a queue is held, the
 * liveness heartbeat (ipc_abi.h, "Liveness"), whichever comes first.
 */
static void xsd_arm_timer(struct xsd *d)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	uint64_t at = d->host.core.wakeup_ns;

	/* Only agents with a queue suspended or capped watch the beat. */
	if (!d->host.held)
		d->beat_ns = 0;
	else if (!d->beat_ns)
		d->beat_ns = clock_now_ns() + IPC_HEARTBEAT_MS * NSEC_PER_MSEC;
	if (d->beat_ns && (!at || d->beat_ns < at))
		at = d->beat_ns;
	if (at)
		its.it_value = clock_ns_to_timespec(at);
	timerfd_settime(d->timer.fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/*
 * The ringing client's queues are read and their devices decided; a quiet
 * queue rings no doorbell (ipc_abi.h, "Lazy doorbells"), so each device's
 * decision also reads the status of its queues that were quiet (reading
 * every slot would touch every client's memory).
 */
void xsd_host_decide(struct xsd *d, struct xsd_client *rang, uint64_t recv_ns)
{
	uint32_t i;

	for (i = 0; rang && !rang->dead && rang->queue && i < rang->nslots; i++)
		if (rang->queue[i])
			xsd_host_rang(&d->host, rang->queue[i], recv_ns);
	xsd_host_run(&d->host, recv_ns);
	xsd_ring_dirty(d);
	xsd_arm_timer(d);
}

void xsd_host_queue_free(struct xsd *d, struct xsd_client *c, uint32_t slot)
{
	struct xsd_queue *q = c->queue[slot];

	if (!q)
		return;
	xsd_host_remove(&d->host, q);
	xsd_floor_detach(&d->host, q);
	xsd_devices_put(&d->host.devs, q->sq.pq.device);
	if (!xsd_devices_at(&d->host.devs, q->sq.pq.device))
		xsd_floor_forget(&d->host, q->sq.pq.device);
	c->queue[slot] = NULL;
	c->nqueues--;
	xsd_slot_close(q);
	free(q->task_lat);
	xsd_heat_queue_gone(d->heat, q);
	free(q);
}

static void on_client_bell(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct xsd_client *c = base_container_of(w, struct xsd_client, bell);
	uint64_t recv_ns = clock_now_ns(), v;

	(void)events;
	if (c->dead)
		return;
	if (read(c->bell.fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	xsd_host_decide(d, c, recv_ns);
}

int xsd_host_hello(struct xsd *d, struct xsd_client *c, uint32_t seq)
{
	struct xsd_slot_mem mem;
	struct ipc_hello_reply r = { .client_id = c->id };
	int memfd, fds[3], rc;

	c->queue = calloc(d->cfg.max_queues_per_client, sizeof(*c->queue));
	if (!c->queue)
		return -ENOMEM;
	mem.ceiling = xsd_config_memory_ceiling(&d->cfg, c->uid);
	mem.flags = d->cfg.memory_preemption ? IPC_MEM_F_PREEMPT : 0;
	mem.wait_ms = d->cfg.memory_wait_ms;
	rc = xsd_slot_map(c, d->cfg.max_queues_per_client, &mem, &memfd);
	if (rc < 0)
		return rc;
	c->bell.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->bell.fd < 0)
		goto fail;
	c->bell_out = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->bell_out < 0)
		goto fail;
	c->bell.fn = on_client_bell;
	if (xsd_watch_add(d, &c->bell, EPOLLIN) < 0)
		goto fail;
	r.nslots = c->nslots;
	r.shm_size = (uint32_t)c->shm_size;
	fds[0] = memfd;
	fds[1] = c->bell.fd;
	fds[2] = c->bell_out;
	rc = xsd_send(c, IPC_HELLO_REPLY, seq, &r, sizeof(r), fds, 3);
	close(memfd);
	return rc;
fail:
	rc = -errno;
	close(memfd);
	return rc;
}

void xsd_host_client_gone(struct xsd *d, struct xsd_client *c)
{
	struct xsd_client **pp;
	uint32_t i;

	for (i = 0; c->queue && i < c->nslots; i++)
		xsd_host_queue_free(d, c, i);
	if (c->dirty) {
		for (pp = &d->host.dirty; *pp; pp = &(*pp)->dirty_next) {
			if (*pp == c) {
				*pp = c->dirty_next;
				break;
			}
		}
		c->dirty = false;
	}
	xsd_watch_del(d, &c->bell);
	if (c->bell_out >= 0)
		close(c->bell_out);
	c->bell_out = -1;
	xsd_slot_unmap(c);
	free(c->queue);
	c->queue = NULL;
}

static void on_timer(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	uint64_t v, now;
	struct xsd_client *c;
	bool beat;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	now = clock_now_ns();
	beat = d->beat_ns && now >= d->beat_ns;
	if (beat) {
		/* Only agents with a queue watch the beat (ipc_abi.h, "Liveness"). */
		for (c = d->clients; c; c = c->next)
			if (c->shm && c->nqueues)
				xsd_slot_beat(c);
		d->beat_ns = now + IPC_HEARTBEAT_MS * NSEC_PER_MSEC;
	}
	if (!beat || (d->host.core.wakeup_ns && now >= d->host.core.wakeup_ns))
		xsd_host_decide(d, NULL, 0);
	else
		xsd_arm_timer(d);
}

/* Resumes every queue of every client (fail-open on stop). */
static void xsd_resume_all(struct xsd *d)
{
	struct xsd_client *c;
	uint32_t i;

	for (c = d->clients; c; c = c->next) {
		for (i = 0; c->queue && i < c->nslots; i++) {
			if (!c->queue[i])
				continue;
			xsd_slot_set_run(c->queue[i], 1);
			xsd_host_mark_dirty(&d->host, c);
		}
	}
	xsd_ring_dirty(d);
}

int xsd_host_start(struct xsd *d)
{
	d->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->timer.fn = on_timer;
	if (d->timer.fd < 0 || xsd_watch_add(d, &d->timer, EPOLLIN) < 0)
		return -errno;
	return 0;
}

void xsd_host_stop(struct xsd *d)
{
	xsd_resume_all(d);
	xsd_watch_del(d, &d->timer);
}
