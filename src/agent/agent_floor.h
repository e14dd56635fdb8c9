/*
 * Run floors, the process's side (agent_floor.c; src/ipc/ipc_abi.h, "Run
 * floors"), for the daemon mode (agent_daemon.c, agent_live.c): the pages
 * the daemon sends, mapped by table and page; each registered queue's
 * check before its launches; the raise of its uid's word at its Ready.
 */
#ifndef XS_AGENT_FLOOR_H
#define XS_AGENT_FLOOR_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>

struct agent_queue;

/*
 * IPC_FLOOR @m with its descriptor @fd (closed here): maps the page,
 * read-write only if @m says so. 0, or a negative errno: the agent must
 * disconnect (the daemon counts every page it sent). Agent thread.
 */
int agent_floor_page(const struct ipc_floor *m, int fd);

/* Has @aq's XQueue check the floors of its slot @slot before each launch
 * (NULL: no more; with @sync, returns once no launch can still check). */
void agent_floor_install(struct agent_queue *aq, const struct ipc_slot *slot, bool sync);

/* @slot's queue became ready (its status stored and status_seq bumped):
 * raises its uid's word of its device to its floor_raise. Any thread. */
void agent_floor_raise(const struct ipc_slot *slot);

/* Unmaps every page; no queue checks them any more (removed with sync) and
 * no observer raises (none inside ag.users). Agent thread, or a forked
 * child's only thread. */
void agent_floor_unmap(void);

#endif
