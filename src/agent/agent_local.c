/*
 * Local mode (XSCHED_SCHEDULER=local): a built-in policy run by the agent
 * thread over this process's queues, with the daemon's priority
 * inheritance and contention-aware window, and no daemon at all.
 */
#include "agent/agent_internal.h"
#include "base/compiler.h"
#include "base/xs_log.h"
#include "daemon/policy/policy_builtin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * A ready queue whose next command waits for another queue of this process
 * (a CUDA event of another stream, say) lends it its priority, through
 * chains of waits: otherwise the waited-on queue could stay suspended for
 * the very queue that waits on it. ag.lock held; priorities are reloaded
 * from the hints at every scheduling pass.
 */
static void agent_local_inherit(void)
{
	bool changed = true;

	for (int pass = 0; changed && pass < AGENT_SLOTS; pass++) {
		changed = false;
		for (uint32_t i = 0; i < AGENT_SLOTS; i++) {
			struct agent_queue *aq = ag.tab[i];
			void *on;

			if (!aq || !aq->local || !aq->pq.ready ||
			    !(on = atomic_load(&aq->blocked_on)))
				continue;
			for (uint32_t j = 0; j < AGENT_SLOTS; j++) {
				struct agent_queue *t = ag.tab[j];

				if (t && t->local && (void *)t->q == on &&
				    t->pq.priority < aq->pq.priority) {
					t->pq.priority = aq->pq.priority;
					changed = true;
				}
			}
		}
	}
}

void agent_local_schedule(void)
{
	struct xs_pqueue *pv[AGENT_SLOTS];
	bool quiet[AGENT_SLOTS];
	size_t n = 0;
	uint32_t i;

	pthread_mutex_lock(&ag.lock);
	/* Before reading any status: the Dekker pair of agent_publish(). */
	for (i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i])
			atomic_store(&ag.tab[i]->quiet, 0);
	for (i = 0; i < AGENT_SLOTS; i++) {
		struct agent_queue *aq = ag.tab[i];
		int64_t hint[XQ_HINTS];
		xs_queue_stats st;

		if (!aq || !aq->local)
			continue;
		xq_hints(aq->q, hint);
		xq_stats(aq->q, &st);
		aq->pq.priority = (int32_t)hint[XS_HINT_PRIORITY];
		aq->pq.share = hint[XS_HINT_SHARE];
		aq->pq.deadline_us = hint[XS_HINT_DEADLINE_US];
		aq->pq.laxity_us = hint[XS_HINT_LAXITY_US];
		aq->pq.service_ns = st.exec_ns;
		aq->pq.inflight = 0;
		if (atomic_load(&aq->status) == IPC_ST_READY) {
			uint64_t r = atomic_load(&aq->ready_ns);

			if (!aq->pq.ready || r != aq->pq.ready_ns) {
				aq->pq.ready = true;
				aq->pq.ready_ns = r;
				if (ag.pops->queue_ready)
					ag.pops->queue_ready(ag.pstate, &aq->pq, r);
			}
			aq->pq.inflight = (uint16_t)XS_MIN(atomic_load(&aq->inflight), UINT16_MAX);
		} else if (aq->pq.ready) {
			aq->pq.ready = false;
			if (ag.pops->queue_idle)
				ag.pops->queue_idle(ag.pstate, &aq->pq, xs_now_ns());
		}
		aq->pq.run = aq->run;
		pv[n++] = &aq->pq;
	}
	agent_local_inherit();
	ag.pwake_ns = n ? ag.pops->schedule(ag.pstate, pv, n, xs_now_ns()) : 0;
	for (i = 0; i < n; i++) {
		struct agent_queue *aq = xs_container_of(pv[i], struct agent_queue, pq);
		bool below = false;

		for (size_t j = 0; j < n && ag.cwin; j++)
			below |= pv[j]->device == pv[i]->device && pv[j]->priority > pv[i]->priority;
		agent_apply_cap(aq, below ? ag.cwin : 0, false);
		agent_apply_run(aq, pv[i]->run);
		/* Drained before the suspension: no event came (ipc_abi.h,
		 * "Drain"); decide again at once. */
		if (!pv[i]->run && pv[i]->inflight > 1 && atomic_load(&aq->inflight) <= 1)
			ag.pwake_ns = xsd_wake_min(ag.pwake_ns, xs_now_ns());
	}
	xsd_policy_quiet(ag.pops, ag.pstate, pv, n, quiet);
	for (i = 0; i < n; i++)
		if (quiet[i])
			atomic_store(&xs_container_of(pv[i], struct agent_queue, pq)->quiet, 1);
	pthread_mutex_unlock(&ag.lock);
}

int agent_local_init(void)
{
	const char *name = getenv("XSCHED_POLICY");
	const char *cw = getenv("XSCHED_CONTENTION_WINDOW");
	struct xs_policy_conf conf = { .size = sizeof(conf) };
	char *end;
	long v;

	ag.cwin = XSD_CONTENTION_WINDOW;
	if (cw && *cw) {
		errno = 0;
		v = strtol(cw, &end, 10);
		/* Malformed values are ignored, like the hints'. */
		if (!errno && !*end && v >= 0 && v <= 64)
			ag.cwin = (int32_t)v;
		else
			XS_LOG_ONCE(XS_LOG_WARN, "XSCHED_CONTENTION_WINDOW=%s is not an integer "
				    "from 0 to 64: using %d", cw, XSD_CONTENTION_WINDOW);
	}

	ag.pops = xsd_policy_find(name && *name ? name : "hpf");
	if (!ag.pops) {
		XS_LOG_ONCE(XS_LOG_WARN, "XSCHED_POLICY=%s is not a built-in policy: using hpf",
			    name);
		ag.pops = xsd_policy_find("hpf");
	}
	if (ag.pops->init && ag.pops->init(&ag.pstate, &conf) < 0)
		return -ENOMEM;
	return 0;
}
