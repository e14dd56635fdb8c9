/*
 * The agent's daemon mode (agent_daemon.c): queues scheduled by xschedd,
 * through its socket, the shared slots and the doorbells.
 */
#ifndef XS_AGENT_DAEMON_H
#define XS_AGENT_DAEMON_H

#include "agent/agent_mode.h"

/* XSCHED_SCHEDULER=global (the default). */
extern const struct agent_mode_ops agent_daemon_ops;

#endif
