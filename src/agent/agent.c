/*
 * The per-process agent (see agent.h).
 *
 * Threads: XQueue observers run on application threads with the queue's
 * lock held, so they never take the agent's lock; they publish status into
 * the shared slot (or, in local mode, into the agent's view) and ring a
 * doorbell unless the queue is quiet (lazy doorbells, ipc_abi.h).
 * Everything else runs on the agent thread: connecting, sending
 * registrations and hints, and applying decisions, which it does holding
 * the agent lock so that agent_unregister() (which takes it) knows the
 * queue is no longer touched once it returns. Lock order: agent, then queue.
 *
 * The shared mapping and the daemon doorbell are replaced on reconnect;
 * observers announce themselves in `users` while they use them, and the
 * agent thread unmaps an old mapping only once no observer is inside.
 *
 * This file holds the state, the observers, the agent thread and
 * registration; agent_daemon.c the daemon connection and its protocol,
 * agent_live.c the watch on a hung daemon's heartbeat, agent_local.c the
 * in-process policy (agent_internal.h).
 */
#include "agent/agent_internal.h"
#include "base/compiler.h"
#include "base/slice.h"
#include "base/xlog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

struct agent ag = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
	.wake_fd = -1,
	.sock = -1,
	.bell_out = -1,
	.bell_in = -1,
};

enum agent_mode agent_mode(void)
{
	const char *v = getenv("XSCHED_DISABLE");

	if (v && *v && strcmp(v, "0"))
		return AGENT_NONE;
	v = getenv("XSCHED_SCHEDULER");
	if (v && !strcmp(v, "none"))
		return AGENT_NONE;
	if (v && !strcmp(v, "local"))
		return AGENT_LOCAL;
	if (v && *v && strcmp(v, "global"))
		XLOG_ONCE(XLOG_WARN, "XSCHED_SCHEDULER=%s is not global, local or none: "
			  "using global (the daemon schedules)", v);
	return AGENT_GLOBAL;
}

bool agent_connected(void)
{
	return atomic_load(&ag.connected);
}

void agent_wake(void)
{
	uint64_t one = 1;

	if (ag.wake_fd >= 0 && write(ag.wake_fd, &one, sizeof(one)) < 0)
		(void)errno;
}

/*
 * Writes the daemon's doorbell @bell (-1: none). Callers off the agent
 * thread are counted in ag.users around loading and writing it.
 */
void agent_bell(int bell)
{
	uint64_t one = 1;

	if (bell >= 0 && write(bell, &one, sizeof(one)) < 0)
		(void)errno;
}

/*
 * Publishes @aq's counters and, with @status, its status; then rings,
 * unless the queue is quiet (its flag: see "Lazy
 * doorbells" in ipc_abi.h), or always with @force.
 */
static void agent_publish(struct agent_queue *aq, bool status, bool force)
{
	struct ipc_shm *shm;
	struct xq_counters c;
	int bell;

	if (ag.mode == AGENT_LOCAL) {
		/* The observer stored the status: the quiet load comes after
		 * it, the Dekker pair of agent_local_schedule(). */
		if (status && (force || !atomic_load(&aq->quiet)))
			agent_wake();
		return;
	}
	atomic_fetch_add(&ag.users, 1);
	shm = atomic_load(&ag.shm);
	if (shm && aq->index < shm->nslots) {
		struct ipc_slot *slot = &shm->slot[aq->index];

		xq_counters_locked(aq->q, &c);
		atomic_store(&slot->submitted, c.submitted);
		atomic_store(&slot->completed, c.completed);
		atomic_store(&slot->preemptions, c.preemptions);
		atomic_store(&slot->exec_ns, c.exec_ns);
		bell = atomic_load(&ag.bell_in);
		if (status) {
			atomic_store(&slot->ready_ns, atomic_load(&aq->ready_ns));
			if (atomic_load(&aq->status) == IPC_ST_IDLE)
				atomic_store(&slot->preempt_p99_ns, xq_preempt_p99_locked(aq->q));
			atomic_store(&slot->status, atomic_load(&aq->status));
			/* The daemon reads status after seeing status_seq move. */
			atomic_fetch_add(&slot->status_seq, 1);
			/* After the status store: the Dekker pair of ipc_abi.h. */
			if (force || !atomic_load(&slot->quiet))
				agent_bell(bell);
			/* Ready behind a gate the daemon closed without telling
			 * us (ipc_abi.h, "Lazy suspensions"): the agent watches
			 * the daemon's liveness from now ("Liveness"). */
			if (atomic_load(&aq->status) == IPC_ST_READY &&
			    atomic_load(&slot->run) == 0 && !atomic_load(&ag.watching))
				agent_wake();
		}
	}
	atomic_fetch_sub(&ag.users, 1);
}

/* Rings the scheduler without a status change (local mode: the agent). */
static void agent_ring(void)
{
	if (ag.mode == AGENT_LOCAL) {
		agent_wake();
		return;
	}
	/* Counted in users, like agent_publish(): the doorbell is not closed
	 * (and its number reused) under our write. */
	atomic_fetch_add(&ag.users, 1);
	agent_bell(atomic_load(&ag.bell_in));
	atomic_fetch_sub(&ag.users, 1);
}

static void agent_observer(struct xq *q, enum xq_event ev, void *ctx)
{
	struct agent_queue *aq = ctx;

	switch (ev) {
	case XQ_EVENT_READY:
		atomic_store(&aq->ready_ns, clock_now_ns());
		atomic_store(&aq->status, IPC_ST_READY);
		atomic_fetch_add(&aq->status_seq, 1);
		agent_publish(aq, true, false);
		break;
	case XQ_EVENT_IDLE:
		atomic_store(&aq->status, IPC_ST_IDLE);
		atomic_fetch_add(&aq->status_seq, 1);
		agent_publish(aq, true, false);
		break;
	case XQ_EVENT_RESYNC:
		/* A new connection: the status into its slot. */
		agent_publish(aq, true, true);
		break;
	case XQ_EVENT_PROGRESS:
		agent_publish(aq, false, false);
		break;
	case XQ_EVENT_DRAINED:
		/* The XQueue stored the count: a policy may hand over now. */
		agent_ring();
		break;
	case XQ_EVENT_HINT:
		atomic_store(&aq->hints_dirty, true);
		agent_wake();
		break;
	case XQ_EVENT_LEVEL:
		/* The agent thread tells the daemon (IPC_QUEUE_LEVEL). */
		atomic_store(&aq->level_dirty, true);
		agent_wake();
		break;
	case XQ_EVENT_BLOCKED:
	case XQ_EVENT_UNBLOCKED:
		/* The agent thread tells the daemon which queue we wait on. */
		atomic_store(&aq->blocked_on, ev == XQ_EVENT_BLOCKED ? xq_blocked_on_locked(q) : NULL);
		agent_wake();
		break;
	}
}

/*
 * Contention-aware window (DESIGN 3.3): while a queue of higher priority
 * shares the device, the scheduler caps this queue at @cap commands in
 * flight (0: no cap), so that the higher one's task waits for little of
 * ours at Lv1; the queue's own window is kept aside and comes back. With
 * @own_set, the own window was just changed (daemon knobs): keep that one.
 * Agent lock held.
 */
void agent_apply_cap(struct agent_queue *aq, int32_t cap, bool own_set)
{
	if (cap == aq->cap && !own_set)
		return;
	/* As set: a budget left to the level stays so when it comes back. */
	if (!aq->cap || own_set)
		xq_window_get(aq->q, &aq->own_threshold, &aq->own_batch, &aq->own_budget_ns);
	if (cap)
		xq_set_window(aq->q, cap, 1, 0);
	else
		xq_set_window(aq->q, aq->own_threshold, aq->own_batch, aq->own_budget_ns);
	aq->cap = cap;
}


void agent_apply_run(struct agent_queue *aq, bool run)
{
	if (run == aq->run)
		return;
	if (run)
		xq_resume(aq->q);
	else
		xq_suspend(aq->q, 0);
	aq->run = run;
}

/* --- the agent thread ----------------------------------------------------- */

/* Whether the process has queues, or unregistrations still to send. */
static bool agent_busy(void)
{
	bool busy;

	pthread_mutex_lock(&ag.lock);
	busy = ag.nqueues || ag.nunreg;
	pthread_mutex_unlock(&ag.lock);
	return busy;
}

/* The poll timeout: the next reconnection, policy or @watch_at time (0: none). */
static int agent_timeout_ms(uint64_t watch_at)
{
	uint64_t now = clock_now_ns(), at = 0;

	if (ag.mode == AGENT_GLOBAL && ag.sock < 0 && agent_busy())
		at = ag.next_try_ns;
	else if (ag.mode == AGENT_LOCAL && ag.pwake_ns)
		at = ag.pwake_ns;
	if (watch_at && (!at || watch_at < at))
		at = watch_at;
	if (!at)
		return -1;
	return at <= now ? 0 : (int)((at - now) / NSEC_PER_MSEC) + 1;
}

static void *agent_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "xsched-agent");
	slice_apply_agent();
	for (;;) {
		struct pollfd pfd[3];
		nfds_t n = 0;
		uint64_t v, watch_at = 0;

		/* A process without queues holds no connection (nor daemon slot). */
		if (ag.sock >= 0 && !agent_busy()) {
			agent_disconnect();
			ag.backoff_ns = 0;
			ag.next_try_ns = 0;
		}
		if (ag.mode == AGENT_GLOBAL && ag.sock < 0 && agent_busy() &&
		    clock_now_ns() >= ag.next_try_ns) {
			if (agent_connect() < 0) {
				ag.next_try_ns = clock_now_ns() + ag.backoff_ns;
				ag.backoff_ns = ag.backoff_ns ? 2 * ag.backoff_ns : AGENT_BACKOFF_MIN_NS;
				if (ag.backoff_ns > AGENT_BACKOFF_MAX_NS)
					ag.backoff_ns = AGENT_BACKOFF_MAX_NS;
			}
		}
		if (ag.sock >= 0)
			agent_sync_daemon();
		if (ag.sock >= 0)
			watch_at = agent_watch();
		if (ag.mode == AGENT_LOCAL)
			agent_local_schedule();
		pfd[n++] = (struct pollfd){ .fd = ag.wake_fd, .events = POLLIN };
		if (ag.sock >= 0) {
			pfd[n++] = (struct pollfd){ .fd = ag.sock, .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = ag.bell_out, .events = POLLIN };
		}
		if (poll(pfd, n, agent_timeout_ms(watch_at)) < 0 && errno != EINTR)
			continue;
		if (pfd[0].revents & POLLIN && read(ag.wake_fd, &v, sizeof(v)) < 0)
			(void)errno;
		if (n > 1 && (pfd[2].revents & POLLIN)) {
			if (read(ag.bell_out, &v, sizeof(v)) < 0)
				(void)errno;
			agent_apply();
		}
		if (n > 1 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			agent_recv();
		if (ag.sock >= 0)
			agent_apply();
	}
	return NULL;
}

static void agent_atfork_child(void)
{
	/* The parent's connection and thread are not ours: start afresh. */
	for (uint32_t i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i])
			xq_set_gate(ag.tab[i]->q, NULL, NULL, false);
	memset(ag.tab, 0, sizeof(ag.tab));
	ag.nunreg = 0;
	ag.nqueues = 0;
	ag.started = false;
	if (ag.wake_fd >= 0)
		close(ag.wake_fd);
	if (ag.sock >= 0)
		close(ag.sock);
	if (ag.bell_out >= 0)
		close(ag.bell_out);
	if (atomic_load(&ag.bell_in) >= 0)
		close(atomic_load(&ag.bell_in));
	if (atomic_load(&ag.shm))
		munmap(atomic_load(&ag.shm), ag.shm_size);
	ag.wake_fd = ag.sock = ag.bell_out = -1;
	atomic_store(&ag.bell_in, -1);
	atomic_store(&ag.shm, NULL);

	atomic_store(&ag.users, 0);
	atomic_store(&ag.connected, false);
	ag.backoff_ns = 0;
	ag.next_try_ns = 0;
	pthread_mutex_init(&ag.lock, NULL);
}

static void agent_atfork_prepare(void)
{
	pthread_mutex_lock(&ag.lock);
}

static void agent_atfork_parent(void)
{
	pthread_mutex_unlock(&ag.lock);
}

static void agent_once(void)
{
	pthread_atfork(agent_atfork_prepare, agent_atfork_parent, agent_atfork_child);
}

/* Starts the agent thread. Agent lock held. */
static int agent_start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	ag.mode = agent_mode();
	ag.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ag.wake_fd < 0)
		return -errno;
	if (ag.mode == AGENT_LOCAL && (rc = agent_local_init()) < 0)
		return rc;
	if (ag.mode == AGENT_GLOBAL)
		agent_watch_init();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	rc = pthread_create(&t, &attr, agent_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		close(ag.wake_fd);
		ag.wake_fd = -1;
		return -rc;
	}
	ag.started = true;
	return 0;
}

/* Local mode tells devices apart by identity, as the daemon (FNV-1a of the
 * identity, or of the API-local name when unverified). */
static uint32_t agent_device_hash(const struct xal_hwq *hwq)
{
	const char *s = hwq->id.kind != DEVID_UNVERIFIED ? hwq->id.ident : hwq->device;
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/*
 * XSCHED_PRIORITY and friends: hints of every queue of the process. A
 * malformed or out-of-range value is ignored, as if unset, and said once.
 */
static void agent_env_hints(struct xq *q)
{
	static const struct {
		const char *var;
		enum xs_hint hint;
		int64_t min, max;
	} env[] = {
		{ "XSCHED_PRIORITY", XS_HINT_PRIORITY, XS_PRIORITY_MIN, XS_PRIORITY_MAX },
		{ "XSCHED_SHARE", XS_HINT_SHARE, 0, XS_SHARE_MAX },
		{ "XSCHED_DEADLINE_US", XS_HINT_DEADLINE_US, 0, XS_TIME_HINT_MAX_US },
		{ "XSCHED_LAXITY_US", XS_HINT_LAXITY_US, 0, XS_TIME_HINT_MAX_US },
	};
	static _Atomic bool said[ARRAY_SIZE(env)];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(env); i++) {
		const char *v = getenv(env[i].var);
		char *end;
		long long x;

		if (!v || !*v)
			continue;
		errno = 0;
		x = strtoll(v, &end, 10);
		if (!errno && !*end && xq_set_hint(q, env[i].hint, x) == 0)
			continue;
		xlog_once(&said[i], XLOG_WARN, "%s=%s is not an integer from %lld to %lld: "
			  "ignored, as if unset", env[i].var, v,
			  (long long)env[i].min, (long long)env[i].max);
	}
}

int agent_register(struct xq *q)
{
	struct agent_queue *aq;
	uint32_t i;
	int rc = 0;

	if (agent_mode() == AGENT_NONE)
		return 0;
	agent_env_hints(q);
	aq = calloc(1, sizeof(*aq));
	if (!aq)
		return -ENOMEM;
	aq->q = q;
	aq->run = true;
	aq->sq.pq.id = 0;
	pthread_once(&ag.once, agent_once);
	pthread_mutex_lock(&ag.lock);
	if (!ag.started && (rc = agent_start()) < 0)
		goto fail;
	for (i = 0; i < AGENT_SLOTS && ag.tab[i]; i++)
		;
	if (i == AGENT_SLOTS) {
		XLOG_ONCE(XLOG_WARN, "this process has more than %u queues: the others "
			  "run unscheduled", AGENT_SLOTS);
		rc = -ENOSPC;
		goto fail;
	}
	aq->index = i;
	aq->sq.pq.id = ++ag.next_id;
	aq->sq.pq.client = (uint64_t)getpid();
	aq->sq.pq.device = agent_device_hash(xq_hwq(q));
	ag.tab[i] = aq;
	ag.nqueues++;
	/* A queue the local policy refuses runs unscheduled. */
	aq->local = ag.mode == AGENT_LOCAL && agent_local_add(aq);
	pthread_mutex_unlock(&ag.lock);
	xq_set_observer(q, agent_observer, aq);
	if (aq->local)
		xq_set_gate(q, NULL, &aq->inflight, true);
	agent_wake();
	return 0;
fail:
	pthread_mutex_unlock(&ag.lock);
	free(aq);
	return rc;
}

void agent_unregister(struct xq *q)
{
	struct agent_queue *aq = NULL;
	uint32_t i;

	if (!q || !ag.started)
		return;
	/* No observer call for @q after this returns, and no gate. */
	xq_set_observer(q, NULL, NULL);
	xq_set_gate(q, NULL, NULL, true);
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < AGENT_SLOTS; i++) {
		if (ag.tab[i] && ag.tab[i]->q == q) {
			aq = ag.tab[i];
			ag.tab[i] = NULL;
			ag.nqueues--;
			break;
		}
	}
	if (aq) {
		if (aq->reg_sent && ag.nunreg < AGENT_SLOTS)
			ag.unreg[ag.nunreg++] = aq->index;
		if (aq->local)
			agent_local_remove(aq);
		if (!aq->run)
			xq_resume(q);
	}
	pthread_mutex_unlock(&ag.lock);
	free(aq);
	agent_wake();
}
