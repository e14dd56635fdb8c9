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
 * registration, all of them the same in every mode: what differs is the
 * mode's table (agent_mode.h), picked once at start: agent_daemon.c (the
 * daemon connection and its protocol, with agent_live.c, the watch on a
 * hung daemon's heartbeat) or agent_local.c (the in-process policy).
 * Queues are suspended, resumed and re-windowed in agent_apply.c only.
 */
#include "agent/agent.h"
#include "agent/agent_apply.h"
#include "agent/agent_daemon.h"
#include "agent/agent_floor.h"
#include "agent/agent_local.h"
#include "agent/agent_mode.h"
#include "agent/agent_state.h"
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
	.need_cv = PTHREAD_COND_INITIALIZER,
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

static void agent_observer(struct xq *q, enum xq_event ev, void *ctx)
{
	struct agent_queue *aq = ctx;

	switch (ev) {
	case XQ_EVENT_READY:
		atomic_store(&aq->ready_ns, clock_now_ns());
		atomic_store(&aq->status, IPC_ST_READY);
		atomic_fetch_add(&aq->status_seq, 1);
		ag.ops->publish(aq, true, false);
		break;
	case XQ_EVENT_IDLE:
		atomic_store(&aq->status, IPC_ST_IDLE);
		atomic_fetch_add(&aq->status_seq, 1);
		ag.ops->publish(aq, true, false);
		break;
	case XQ_EVENT_RESYNC:
		/* A new connection: the status into its slot. */
		ag.ops->publish(aq, true, true);
		break;
	case XQ_EVENT_PROGRESS:
		ag.ops->publish(aq, false, false);
		break;
	case XQ_EVENT_DRAINED:
		/* The XQueue stored the count: a policy may hand over now. */
		ag.ops->ring();
		break;
	case XQ_EVENT_HINT:
		atomic_store(&aq->hints_dirty, true);
		agent_wake();
		break;
	case XQ_EVENT_FLOOR:
		if (ag.ops->floored)
			ag.ops->floored(aq, xq_floored_locked(q));
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

/* --- the agent thread ----------------------------------------------------- */

/* The poll timeout until @at (CLOCK_MONOTONIC ns; 0: none). */
static int agent_timeout_ms(uint64_t at)
{
	uint64_t now = clock_now_ns();

	if (!at)
		return -1;
	return at <= now ? 0 : (int)((at - now) / NSEC_PER_MSEC) + 1;
}

/*
 * The agent thread: each turn does the mode's work (agent_mode.h), sleeps
 * on its wake eventfd and the mode's descriptors until something happens
 * or the mode's time comes, and lets the mode handle what woke it.
 */
static void *agent_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "xsched-agent");
	slice_apply_agent();
	for (;;) {
		struct pollfd pfd[1 + AGENT_POLL_MAX];
		unsigned n = 1;
		uint64_t v, at;

		at = ag.ops->turn();
		pfd[0] = (struct pollfd){ .fd = ag.wake_fd, .events = POLLIN };
		if (ag.ops->poll_fds)
			n += ag.ops->poll_fds(pfd + 1);
		if (poll(pfd, n, agent_timeout_ms(at)) < 0 && errno != EINTR)
			continue;
		if (pfd[0].revents & POLLIN && read(ag.wake_fd, &v, sizeof(v)) < 0)
			(void)errno;
		if (ag.ops->polled)
			ag.ops->polled(pfd + 1, n - 1);
	}
	return NULL;
}

static void agent_atfork_child(void)
{
	/* The parent's connection and thread are not ours: start afresh. */
	for (uint32_t i = 0; i < AGENT_SLOTS; i++) {
		if (!ag.tab[i])
			continue;
		xq_set_run_word(ag.tab[i]->q, NULL, NULL, false);
		agent_floor_install(ag.tab[i], NULL, false);
	}
	memset(ag.tab, 0, sizeof(ag.tab));
	agent_floor_unmap();
	/* The parent's device memory is not the child's (shim_mem.c forgets
	 * its counts too). */
	atomic_store(&ag.nmem, 0);
	ag.mem_seq_seen = 0;
	atomic_store(&ag.mem_flags, 0);
	ag.need_state = AGENT_NEED_NONE;
	ag.tried = false;
	pthread_cond_init(&ag.need_cv, NULL);
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

	ag.ops = agent_mode() == AGENT_LOCAL ? &agent_local_ops : &agent_daemon_ops;
	ag.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ag.wake_fd < 0)
		return -errno;
	if (ag.ops->init && (rc = ag.ops->init()) < 0)
		return rc;
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

int agent_start_once(void)
{
	int rc = 0;

	if (agent_mode() == AGENT_NONE)
		return -ENODEV;
	pthread_once(&ag.once, agent_once);
	pthread_mutex_lock(&ag.lock);
	if (!ag.started)
		rc = agent_start();
	pthread_mutex_unlock(&ag.lock);
	if (rc == 0)
		agent_wake();
	return rc;
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
	ag.tab[i] = aq;
	ag.nqueues++;
	/* A queue the local policy refuses runs unscheduled. */
	aq->local = ag.ops->add && ag.ops->add(aq);
	pthread_mutex_unlock(&ag.lock);
	xq_set_observer(q, agent_observer, aq);
	/* Scheduled in-process: the core reads its in-flight count. */
	if (aq->local)
		xq_set_run_word(q, NULL, &aq->inflight, true);
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
	/* No observer call for @q after this returns, and no run word. */
	xq_set_observer(q, NULL, NULL);
	xq_set_run_word(q, NULL, NULL, true);
	xq_set_floor(q, NULL, NULL, true);
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
			ag.ops->remove(aq);
		agent_apply_run(aq, true);
	}
	pthread_mutex_unlock(&ag.lock);
	free(aq);
	agent_wake();
}
