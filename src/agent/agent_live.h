/*
 * Fail-open on a hung daemon (agent_live.c; ipc_abi.h, "Liveness"): the
 * daemon mode's watch on the heartbeat of a daemon that holds one of the
 * process's queues. Agent thread only.
 */
#ifndef XS_AGENT_LIVE_H
#define XS_AGENT_LIVE_H

#include <stdint.h>

/* Reads XSCHED_DAEMON_TIMEOUT_MS into ag.live_timeout_ns. */
void agent_watch_init(void);

/*
 * Watches the daemon's heartbeat while a queue is held (suspended, capped
 * or gated): fails open when it stays still for the timeout, and takes the
 * daemon's decisions again when it moves. Returns when to look again
 * (CLOCK_MONOTONIC ns), 0 when nothing needs watching. Connected only.
 */
uint64_t agent_watch(void);

#endif
