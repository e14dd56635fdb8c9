/*
 * The scheduler core: owns the queues' policy views and every transition,
 * calls the policy (include/xsched/policy.h) and writes its decisions to
 * the clients' shared slots.
 *
 * Around the policy, the core adds what must hold whichever policy runs:
 * dependency-aware priority inheritance (a queue that a ready queue of the
 * same process waits on gets the waiter's priority; processes never lend
 * priority to each other, so neither do users), and the starvation
 * guard (a ready queue suspended for a whole period gets a short grant;
 * see sched_guard()). A hot policy switch moves every queue to the new policy;
 * hints live here, not in the policy, so none is lost.
 */
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/policy/policy_builtin.h"
#include "base/clock.h"
#include "base/compiler.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The daemon runs privileged: a policy file must be as trustworthy as the
 * daemon itself (owned by root or by us, writable by nobody else).
 */
static int sched_file_trusted(const char *path)
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
static const struct xs_policy_ops *sched_lookup(const char *name, void **dl, int *rc,
						char *err, size_t errlen)
{
	const struct xs_policy_ops *ops = NULL;
	uint32_t version = 0;

	*dl = NULL;
	if (name[0] != '/') {
		const char *const *n = xsd_policy_names();
		size_t used;

		ops = xsd_policy_find(name);
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
	*rc = sched_file_trusted(name);
	if (*rc == -EPERM) {
		snprintf(err, errlen, "policy %s: a module must be owned by root and writable "
			 "by no one else", name);
		return NULL;
	}
	if (*rc < 0) {
		snprintf(err, errlen, "policy %s: %s", name, strerror(-*rc));
		return NULL;
	}
	*rc = xsd_policy_load(name, &ops, dl, &version);
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

/* Writes @q's decision (and window cap) to its slot if it changed; marks
 * the client. */
static bool sched_write_run(struct xsd_sched *s, struct xsd_queue *q)
{
	uint32_t run = q->pq.run ? 1 + q->cap : 0;
	struct ipc_slot *slot;

	if (run == q->applied)
		return false;
	slot = &q->client->shm->slot[q->slot];
	atomic_store(&slot->run, run);
	/* The agent reads run after seeing decision_seq change. */
	atomic_fetch_add(&slot->decision_seq, 1);
	q->applied = run;
	xsd_mark_dirty(s, q->client);
	return true;
}

static void sched_set_quiet(struct xsd_queue *q, bool quiet)
{
	if (q->quiet != quiet) {
		atomic_store(&q->client->shm->slot[q->slot].quiet, quiet);
		q->quiet = quiet;
	}
}

void xsd_sched_unquiet(struct xsd_sched *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->q[i]->quiet) {
			/* The flag's store, then the status load: see ipc_abi.h. */
			sched_set_quiet(s->q[i], false);
			xsd_sched_refresh(s, s->q[i], 0);
		}
	}
}

static void sched_detach_all(struct xsd_sched *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->ops->queue_remove)
			s->ops->queue_remove(s->state, &s->q[i]->pq);
		s->q[i]->pq.pdata = NULL;
	}
}

int xsd_sched_set_policy(struct xsd_sched *s, const char *name,
			 const struct xs_policy_conf *pconf, char *err, size_t errlen)
{
	const struct xs_policy_ops *ops;
	void *dl, *state = NULL;
	size_t i;
	int rc;

	s->caps_dirty = true;
	ops = sched_lookup(name, &dl, &rc, err, errlen);
	if (!ops)
		return rc;
	if (ops->init && (rc = ops->init(&state, pconf)) < 0) {
		snprintf(err, errlen, "policy %s: its init failed: %s", name, strerror(-rc));
		xsd_policy_unload(dl);
		return rc;
	}
	xsd_sched_unquiet(s);
	if (s->ops) {
		sched_detach_all(s);
		if (s->ops->fini)
			s->ops->fini(s->state);
		xsd_policy_unload(s->dl);
	}
	s->ops = ops;
	s->state = state;
	s->dl = dl;
	s->guard_exempt = ops == xsd_policy_find("bandwidth") || ops == xsd_policy_find("fair");
	s->pconf = *pconf;
	snprintf(s->policy, sizeof(s->policy), "%s", name);
	for (i = 0; i < s->n;) {
		struct xsd_queue *q = s->q[i];

		if (ops->queue_add && ops->queue_add(state, &q->pq) < 0) {
			/* Refused: it runs unscheduled, as xsd_sched_add() does. */
			xsd_warn("policy %s refused queue %llu: it runs unscheduled", name,
				 (unsigned long long)q->pq.id);
			q->added = false;
			q->pq.run = true;
			q->cap = 0;
			s->n--;
			s->q[i] = s->q[s->n];
			s->pv[i] = s->pv[s->n];
			sched_write_run(s, q);
			continue;
		}
		if (q->pq.ready && ops->queue_ready)
			ops->queue_ready(state, &q->pq, q->pq.ready_ns);
		i++;
	}
	return 0;
}

int xsd_sched_init(struct xsd_sched *s, const struct xsd_config *cfg,
		   char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->next_id = 1;
	xsd_devices_init(&s->devs, XSD_DEVICES_MAX, XSD_DEVICES_PER_UID);
	s->guard_pct = cfg->starvation_guard_pct;
	s->contention_window = cfg->contention_window;
	s->guard_period_ns = cfg->starvation_period_ns;
	return xsd_sched_set_policy(s, cfg->policy, &cfg->pconf, err, errlen);
}

void xsd_sched_fini(struct xsd_sched *s)
{
	xsd_sched_unquiet(s);
	if (s->ops) {
		sched_detach_all(s);
		if (s->ops->fini)
			s->ops->fini(s->state);
		xsd_policy_unload(s->dl);
	}
	free(s->q);
	free(s->pv);
	free(s->quiet);
	xsd_devices_fini(&s->devs);
	memset(s, 0, sizeof(*s));
}

int xsd_sched_add(struct xsd_sched *s, struct xsd_queue *q)
{
	s->caps_dirty = true;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct xsd_queue **grown = realloc(s->q, cap * sizeof(*grown));
		struct xs_pqueue **pv;
		bool *quiet;

		if (!grown)
			return -ENOMEM;
		s->q = grown;
		pv = realloc(s->pv, cap * sizeof(*pv));
		if (!pv)
			return -ENOMEM;
		s->pv = pv;
		quiet = realloc(s->quiet, cap * sizeof(*quiet));
		if (!quiet)
			return -ENOMEM;
		s->quiet = quiet;
		s->cap = cap;
	}
	q->pq.id = s->next_id++;
	q->pq.run = true;
	q->applied = true;
	if (s->ops->queue_add && s->ops->queue_add(s->state, &q->pq) < 0) {
		q->pq.pdata = NULL;
		xsd_warn("policy %s refused queue %llu: it runs unscheduled", s->policy,
			 (unsigned long long)q->pq.id);
		return 0;
	}
	q->added = true;
	s->pv[s->n] = &q->pq;
	s->q[s->n++] = q;
	return 0;
}

/* Counts queues that declare waiting on another (the client bumps
 * status_seq when it changes waits_on). */
static void sched_track_wait(struct xsd_sched *s, struct xsd_queue *q, int32_t w)
{
	if (w < 0 || (uint32_t)w >= q->client->nslots || (uint32_t)w == q->slot)
		w = -1;
	if ((q->waits_on >= 0) != (w >= 0))
		s->waiting += w >= 0 ? 1 : -1;
	q->waits_on = w;
}

void xsd_sched_remove(struct xsd_sched *s, struct xsd_queue *q)
{
	size_t i;

	s->caps_dirty = true;
	sched_track_wait(s, q, -1);
	sched_set_quiet(q, false);
	if (!q->added)
		return;
	for (i = 0; i < s->n; i++) {
		if (s->q[i] == q) {
			s->n--;
			s->q[i] = s->q[s->n];
			s->pv[i] = s->pv[s->n];
			break;
		}
	}
	if (s->ops->queue_remove)
		s->ops->queue_remove(s->state, &q->pq);
	q->added = false;
}

void xsd_sched_hints_changed(struct xsd_sched *s, struct xsd_queue *q)
{
	s->caps_dirty = true;
	q->pq.priority = (int32_t)q->hint[IPC_KEY_PRIORITY];
	q->pq.share = q->hint[IPC_KEY_SHARE];
	q->pq.deadline_us = q->hint[IPC_KEY_DEADLINE_US];
	q->pq.laxity_us = q->hint[IPC_KEY_LAXITY_US];
	if (q->added && s->ops->hints_changed)
		s->ops->hints_changed(s->state, &q->pq);
}

static void sched_became_ready(struct xsd_sched *s, struct xsd_queue *q,
			       uint64_t ready_ns, uint64_t now, uint64_t recv_ns)
{
	/* The client's clock stamp orders EDF deadlines; keep it plausible. */
	if (ready_ns == 0 || ready_ns > now || now - ready_ns > XS_NSEC_PER_SEC)
		ready_ns = now;
	q->pq.ready = true;
	q->pq.ready_ns = ready_ns;
	if (recv_ns >= ready_ns)
		xs_hist_record(&s->wake_lat, recv_ns - ready_ns);
	if (q->added && s->ops->queue_ready)
		s->ops->queue_ready(s->state, &q->pq, ready_ns);
}

/* @fresh: the client rang for it, so @now is close to when it happened. */
static void sched_became_idle(struct xsd_sched *s, struct xsd_queue *q, uint64_t now,
			      bool fresh)
{
	q->pq.ready = false;
	if (fresh && now > q->pq.ready_ns)
		xs_hist_record(q->task_lat, now - q->pq.ready_ns);
	if (q->added && s->ops->queue_idle)
		s->ops->queue_idle(s->state, &q->pq, now);
}

void xsd_sched_refresh(struct xsd_sched *s, struct xsd_queue *q, uint64_t recv_ns)
{
	struct ipc_slot *slot = &q->client->shm->slot[q->slot];
	uint32_t seq = atomic_load(&slot->status_seq);
	uint64_t now = xs_now_ns(), ready_ns;
	bool ready;

	if (seq == q->status_seen)
		return;
	q->status_seen = seq;
	sched_track_wait(s, q, atomic_load(&slot->waits_on));
	ready = atomic_load(&slot->status) == IPC_ST_READY;
	ready_ns = atomic_load(&slot->ready_ns);
	s->events++;
	if (ready && q->pq.ready && ready_ns != q->pq.ready_ns) {
		/* Idle and ready again between two looks: both happened. */
		sched_became_idle(s, q, now, false);
		sched_became_ready(s, q, ready_ns, now, recv_ns);
	} else if (ready && !q->pq.ready) {
		sched_became_ready(s, q, ready_ns, now, recv_ns);
	} else if (!ready && q->pq.ready) {
		sched_became_idle(s, q, now, recv_ns != 0);
	}
}

/*
 * Priority inheritance inside a process: a ready queue waiting on another
 * queue of its process lends it its priority, transitively. Priorities
 * only grow, so this ends after at most n rounds, cycles too. Skipped
 * entirely (O(1)) while no queue waits and none inherited last time.
 */
static void sched_inherit(struct xsd_sched *s)
{
	bool changed = true;
	size_t i, round;

	if (!s->waiting && !s->inherited)
		return;
	s->inherited = false;
	for (i = 0; i < s->n; i++)
		s->q[i]->pq.priority = (int32_t)s->q[i]->hint[IPC_KEY_PRIORITY];
	for (round = 0; changed && round < s->n; round++) {
		changed = false;
		for (i = 0; i < s->n; i++) {
			struct xsd_queue *q = s->q[i], *t;

			if (!q->pq.ready || q->waits_on < 0)
				continue;
			t = q->client->queue[q->waits_on];
			if (t && t->pq.priority < q->pq.priority) {
				t->pq.priority = q->pq.priority;
				s->inherited = changed = true;
			}
		}
	}
}

static uint64_t min_time(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : XS_MIN(a, b);
}

/*
 * The starvation guard, on by default (XSD_GUARD_PCT_DEFAULT): a ready
 * queue that a priority policy kept suspended for a whole period runs for
 * guard_pct of the next one, alongside the queues that starved it, as
 * Linux gives non-real-time tasks 5% of each second (RT throttling). The
 * share-based policies (bandwidth, fair) are left alone: their turns
 * already bound every queue's wait, and a grant would skew the shares.
 * Overrides decisions for queues starved a whole period; next check time.
 */
static uint64_t sched_guard(struct xsd_sched *s, uint64_t now)
{
	uint64_t next = 0, grant = s->guard_period_ns * s->guard_pct / 100;
	size_t i;

	if (!s->guard_pct || s->guard_exempt)
		return 0;
	for (i = 0; i < s->n; i++) {
		struct xsd_queue *q = s->q[i];

		if (q->guard_until > now) {
			q->pq.run = true;
			next = min_time(next, q->guard_until);
			continue;
		}
		if (!q->pq.ready || q->pq.run) {
			q->starve_since = 0;
			continue;
		}
		if (!q->starve_since)
			q->starve_since = now;
		if (now - q->starve_since >= s->guard_period_ns) {
			q->guard_until = now + grant;
			q->guard_runs++;
			q->starve_since = 0;
			q->pq.run = true;
			next = min_time(next, q->guard_until);
		} else {
			next = min_time(next, q->starve_since + s->guard_period_ns);
		}
	}
	return next;
}

/*
 * Contention-aware window: queues below the top priority of their device
 * get the in-flight cap (struct ipc_slot, run). O(queues x devices).
 */
static void sched_caps(struct xsd_sched *s)
{
	uint32_t dev = 0;
	size_t i;

	if (!s->contention_window) {
		for (i = 0; i < s->n; i++)
			s->q[i]->cap = 0;
		return;
	}
	xsd_for_each_dev(dev, s->pv, s->n) {
		int32_t top = INT32_MIN;

		for (i = 0; i < s->n; i++)
			if (s->pv[i]->device == dev && s->pv[i]->priority > top)
				top = s->pv[i]->priority;
		for (i = 0; i < s->n; i++)
			if (s->pv[i]->device == dev)
				s->q[i]->cap = s->pv[i]->priority < top ? s->contention_window : 0;
	}
}

void xsd_sched_run(struct xsd_sched *s, uint64_t recv_ns)
{
	uint64_t now = xs_now_ns(), next;
	size_t i;

	s->runs++;
	/* Inheritance moves priorities while queues wait, and once more after. */
	if (s->waiting || s->inherited)
		s->caps_dirty = true;
	sched_inherit(s);
	/* Only ready queues consume device time or have work in flight. */
	for (i = 0; i < s->n; i++) {
		struct xsd_queue *q = s->q[i];
		struct ipc_slot *slot = &q->client->shm->slot[q->slot];
		uint64_t exec;

		if (!q->pq.ready) {
			q->pq.inflight = 0;
			continue;
		}
		exec = atomic_load(&slot->exec_ns);
		if (exec > q->pq.service_ns)
			q->pq.service_ns = exec;
		q->pq.inflight = (uint16_t)XS_MIN(atomic_load(&slot->inflight), UINT16_MAX);
	}
	next = s->ops->schedule(s->state, s->pv, s->n, now);
	next = min_time(next, sched_guard(s, now));
	if (s->caps_dirty) {
		sched_caps(s);
		s->caps_dirty = false;
	}
	for (i = 0; i < s->n; i++) {
		struct xsd_queue *q = s->q[i];

		s->decisions += sched_write_run(s, q);
		/* How long it waits, for listings: ready and held suspended. */
		if (!q->pq.ready || q->applied)
			q->wait_since = 0;
		else if (!q->wait_since)
			q->wait_since = now;
		/* After the run store: a queue stopped with work in flight that
		 * drained before it saw the decision did not ring (ipc_abi.h,
		 * "Drain"), so decide again now. */
		if (!q->pq.run && q->pq.inflight > 1 &&
		    atomic_load(&q->client->shm->slot[q->slot].inflight) <= 1)
			next = min_time(next, now);
	}
	/* Beyond XSD_QUIET_MAX queues the pass costs more than it saves. */
	if (s->n <= XSD_QUIET_MAX) {
		xsd_policy_quiet(s->ops, s->state, s->pv, s->n, s->quiet);
		for (i = 0; i < s->n; i++)
			sched_set_quiet(s->q[i], s->quiet[i]);
	}
	if (recv_ns)
		xs_hist_record(&s->decide_lat, xs_now_ns() - recv_ns);
	s->wakeup_ns = next;
}
