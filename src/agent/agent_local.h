/*
 * The agent's local mode (agent_local.c): the scheduler core run by the
 * agent thread over this process's queues, with no daemon.
 */
#ifndef XS_AGENT_LOCAL_H
#define XS_AGENT_LOCAL_H

#include "agent/agent_mode.h"

/* XSCHED_SCHEDULER=local: XSCHED_POLICY, and XSCHED_CONTENTION_WINDOW,
 * XSCHED_STARVATION_GUARD_PCT, XSCHED_STARVATION_PERIOD_MS,
 * XSCHED_IDLE_GRACE_US as xschedd.conf's [policy] keys. */
extern const struct agent_mode_ops agent_local_ops;

#endif
