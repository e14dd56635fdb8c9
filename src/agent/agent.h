/*
 * The per-process agent: the link between a process's XQueues and the
 * scheduler.
 *
 * Started lazily by the first XQueue registered (or the first device
 * memory the process counts, agent_mem.h), it connects to xschedd
 * (XSCHED_SOCKET, default /run/xsched/xschedd.sock), registers every queue
 * with its device, level and hints, reports Ready/Idle through the shared
 * slots, and applies the daemon's suspend/resume and window decisions.
 * XSCHED_SCHEDULER=local runs a policy in-process instead (XSCHED_POLICY,
 * default hpf); =none, or XSCHED_DISABLE=1, leaves queues unscheduled.
 *
 * Fail-open: without a daemon, or when it goes away, every queue runs; the
 * agent reconnects with backoff and registers again, hints included, so a
 * daemon restart loses nothing. A daemon that gives no sign of life for
 * XSCHED_DAEMON_TIMEOUT_MS while it holds a queue (agent_live.c) is
 * treated the same until it beats again. What leaves the process
 * unscheduled is said once on stderr (XSCHED_LOG, base/xlog.h). A forked
 * child starts with no agent: its parent's connection is never used by it;
 * queues it creates register through its own agent.
 */
#ifndef XS_AGENT_H
#define XS_AGENT_H

#include "xqueue/xqueue.h"

/*
 * Puts @q under the process's scheduler (starting the agent) and applies
 * the hints of the XSCHED_PRIORITY/_SHARE/_DEADLINE_US/_LAXITY_US
 * environment. Returns 0 (also when scheduling is disabled) or -ENOMEM;
 * -ENOSPC when the agent's table is full (the queue then runs unscheduled).
 * Queues past the table or the daemon's slots are said once on stderr.
 */
int agent_register(struct xq *q);

/*
 * Takes @q out of scheduling and leaves it running. After this returns the
 * agent never touches @q again. NULL or unregistered queues are fine.
 */
void agent_unregister(struct xq *q);

/* Scheduler modes (XSCHED_SCHEDULER). */
enum agent_mode { AGENT_NONE, AGENT_GLOBAL, AGENT_LOCAL };

/* The mode this process uses, from its environment. */
enum agent_mode agent_mode(void);

/*
 * Starts the agent without a queue (a process that holds device memory is
 * known to the daemon before its first queue). 0, or -errno; -ENODEV when
 * scheduling is disabled (XSCHED_DISABLE, XSCHED_SCHEDULER=none).
 */
int agent_start_once(void);

/* True once connected to the daemon (tests and diagnostics). */
bool agent_connected(void);

#endif
