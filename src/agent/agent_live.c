/*
 * Fail-open on a hung daemon (ipc_abi.h, "Liveness").
 *
 * A daemon that dies closes its socket and the agent runs every queue
 * (agent_daemon.c, agent_disconnect()). A daemon that is stopped
 * (SIGSTOP, a debugger) or stuck keeps its socket open and its last
 * decisions in the slots, gates included: a queue it suspended would wait for good. So while one of its
 * queues is held (suspended, capped, or gated by a `run` of 0 it has not
 * applied yet), the agent thread looks at the daemon's heartbeat every
 * quarter of its timeout; still for the whole timeout, the process runs
 * as if disconnected (gates open, caps off, queues resumed), keeping the
 * connection, and says so once. The first beat after that puts the gates
 * back and applies the slots' decisions as they are then.
 *
 * Known bounds: the queues run at most the timeout plus one check period
 * (a quarter of it, or the heartbeat period if shorter) after the later
 * of the daemon's last beat and the moment a queue became held; a daemon
 * that stops between writing a suspension and ringing the doorbell (a few
 * instructions) leaves the agent thread asleep, so that queue waits for
 * the agent's next wakeup (any event of this process's queues or hints,
 * or the daemon's return).
 */
#include "agent/agent_live.h"
#include "agent/agent_apply.h"
#include "agent/agent_floor.h"
#include "agent/agent_mem_sync.h"
#include "agent/agent_state.h"
#include "base/compiler.h"
#include "base/xlog.h"

#include <errno.h>
#include <stdlib.h>

#define AGENT_LIVE_TIMEOUT_MS 1000

void agent_watch_init(void)
{
	const char *v = getenv("XSCHED_DAEMON_TIMEOUT_MS");
	long long ms = AGENT_LIVE_TIMEOUT_MS;
	char *end;

	if (v && *v) {
		errno = 0;
		ms = strtoll(v, &end, 10);
		if (errno || *end || ms < 0 || ms > 3600 * 1000) {
			XLOG_ONCE(XLOG_WARN, "XSCHED_DAEMON_TIMEOUT_MS=%s is not a number of "
				  "milliseconds (0 to 3600000): using %d", v,
				  AGENT_LIVE_TIMEOUT_MS);
			ms = AGENT_LIVE_TIMEOUT_MS;
		}
	}
	ag.live_timeout_ns = (uint64_t)ms * NSEC_PER_MSEC;
}

/* Whether a registered queue is held by the daemon. Agent lock held. */
static bool agent_held(struct ipc_shm *shm)
{
	for (uint32_t i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];

		if (aq && aq->registered &&
		    (!aq->run || aq->cap || atomic_load(&shm->slot[i].run) != 1 ||
		     atomic_load(&shm->slot[i].floored)))
			return true;
	}
	return false;
}

/* The daemon is silent: every queue runs, the connection stays. */
static void agent_hang(struct ipc_shm *shm, uint64_t timeout_ns)
{
	pthread_mutex_lock(&ag.lock);
	for (uint32_t i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];

		if (!aq || !aq->registered)
			continue;
		/* No run word, no floor; the in-flight count still published. */
		xq_set_run_word(aq->q, NULL, &shm->slot[i].inflight, false);
		agent_floor_install(aq, NULL, false);
		agent_apply_cap(aq, 0, false);
		agent_apply_run(aq, true);
		xq_kick(aq->q);
	}
	ag.hung = true;
	pthread_mutex_unlock(&ag.lock);
	/* Memory evicted for another process comes back too. */
	agent_mem_fail_open();
	XLOG_ONCE(XLOG_WARN, "the scheduler daemon gave no sign of life for %llu ms "
		  "(stopped or stuck): this process's queues run unscheduled until it does",
		  (unsigned long long)(timeout_ns / NSEC_PER_MSEC));
}

/* The daemon beats again: its gates and decisions apply. */
static void agent_unhang(struct ipc_shm *shm)
{
	pthread_mutex_lock(&ag.lock);
	for (uint32_t i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];

		if (aq && aq->registered) {
			xq_set_run_word(aq->q, &shm->slot[i].run, &shm->slot[i].inflight, false);
			agent_floor_install(aq, &shm->slot[i], false);
		}
	}
	ag.hung = false;
	ag.reapply = true;
	pthread_mutex_unlock(&ag.lock);
	XLOG_ONCE(XLOG_INFO, "the scheduler daemon gives signs of life again: its "
		  "decisions apply");
	agent_apply_slots();
}

uint64_t agent_watch(void)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	uint64_t now, beat, timeout, period;
	bool held;

	if (!shm || !shm->heartbeat_ms || !ag.live_timeout_ns)
		return 0;
	period = (uint64_t)shm->heartbeat_ms * NSEC_PER_MSEC;
	/* Shorter would take a daemon between two beats for a hung one. */
	timeout = BASE_MAX(ag.live_timeout_ns, 2 * period);
	if (timeout > ag.live_timeout_ns)
		XLOG_ONCE(XLOG_WARN, "XSCHED_DAEMON_TIMEOUT_MS=%llu is below twice the "
			  "daemon's heartbeat period: using %llu",
			  (unsigned long long)(ag.live_timeout_ns / NSEC_PER_MSEC),
			  (unsigned long long)(timeout / NSEC_PER_MSEC));
	now = clock_now_ns();
	/* Acquire: pairs with the daemon's release bump (ipc_abi.h). */
	beat = atomic_load_explicit(&shm->heartbeat, memory_order_acquire);
	if (beat != ag.beat_seen) {
		ag.beat_seen = beat;
		ag.beat_moved_ns = now;
		if (ag.hung)
			agent_unhang(shm);
	}
	pthread_mutex_lock(&ag.lock);
	held = ag.hung || agent_held(shm);
	pthread_mutex_unlock(&ag.lock);
	if (!held) {
		atomic_store(&ag.watching, false);
		return 0;
	}
	/* The timeout runs from when holding began, if the word moved before. */
	if (!atomic_load(&ag.watching)) {
		atomic_store(&ag.watching, true);
		ag.beat_moved_ns = now;
	}
	if (!ag.hung && now - ag.beat_moved_ns >= timeout)
		agent_hang(shm, timeout);
	return now + BASE_MIN(timeout / 4, period);
}
