/*
 * The agent's scheduler modes: what differs between a process scheduled
 * by xschedd (agent_daemon.c, XSCHED_SCHEDULER=global, the default) and
 * one that runs the scheduler core itself (agent_local.c, =local). The
 * agent picks one table at start (agent.c) and its thread and observers
 * call through it, never testing the mode; a third mode is a third table.
 * (=none has no table: its queues are never registered.)
 *
 * The agent thread's loop is, per turn: turn(), then poll() on its own
 * wake eventfd and the descriptors of poll_fds(), until the time turn()
 * returned, then polled() with what poll() found.
 */
#ifndef XS_AGENT_MODE_H
#define XS_AGENT_MODE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

struct agent_queue;

/* The most descriptors a mode sleeps on besides the agent's wake eventfd. */
#define AGENT_POLL_MAX 2

struct agent_mode_ops {
	/*
	 * Optional. Reads the mode's environment and sets up its state, once
	 * per process (again in a forked child): agent_start(), on the
	 * application thread that registers the first queue, agent lock
	 * held, before the agent thread exists. 0, or a negative errno: the
	 * agent does not start and the queue runs unscheduled. NULL: nothing
	 * to set up.
	 */
	int (*init)(void);
	/*
	 * Mandatory. The mode's work of one turn of the agent thread, before
	 * it sleeps: connecting and sending (daemon mode), deciding (local
	 * mode). Agent thread, no lock held (it takes the agent lock as it
	 * needs). Returns the CLOCK_MONOTONIC time by which the thread must
	 * wake for the next turn, 0: only when something happens.
	 */
	uint64_t (*turn)(void);
	/*
	 * Optional. Right after turn(): writes the descriptors to sleep on
	 * (POLLIN) at @pfd, at most AGENT_POLL_MAX, and returns how many.
	 * Agent thread, no lock held. NULL: none.
	 */
	unsigned (*poll_fds)(struct pollfd *pfd);
	/*
	 * Optional. After the sleep, whatever woke it (also a timeout): @pfd
	 * and @n as poll_fds() wrote them, with poll()'s revents. Agent
	 * thread, no lock held. NULL: nothing to do.
	 */
	void (*polled)(const struct pollfd *pfd, unsigned n);
	/*
	 * Mandatory. @aq's counters changed and, with @status, its status
	 * too (aq->status, aq->ready_ns as the observer just stored them):
	 * makes them visible to the scheduler and wakes it unless the queue
	 * is quiet (ipc_abi.h, "Lazy doorbells"), or always with @force (a
	 * new connection). Application thread, in the XQueue's observer: the
	 * queue's lock held, the agent lock not held and never taken; must
	 * not block.
	 */
	void (*publish)(struct agent_queue *aq, bool status, bool force);
	/*
	 * Optional. A floor began (@held) or stopped holding @aq's launches
	 * (XQ_EVENT_FLOOR): the scheduler hears of it. Context as publish().
	 * NULL: the mode has no floors.
	 */
	void (*floored)(struct agent_queue *aq, bool held);
	/*
	 * Mandatory. Wakes the scheduler without a status change (a queue
	 * drained: a policy may hand the device over now). Context as
	 * publish().
	 */
	void (*ring)(void);
	/*
	 * Optional. agent_register() put @aq in the table: takes it into the
	 * mode's own scheduling. Application thread, agent lock held, @aq's
	 * observer not yet installed. Returns true when the mode schedules
	 * it in-process (aq->local): its XQueue then publishes its in-flight
	 * count in aq->inflight; false: it runs unscheduled (a refusal or no
	 * memory). NULL: the mode registers queues from its own turn() (the
	 * daemon mode).
	 */
	bool (*add)(struct agent_queue *aq);
	/*
	 * Optional (mandatory with add()). agent_unregister() takes @aq,
	 * which add() took, out of the mode's scheduling. Application
	 * thread, agent lock held; its observer and run word already removed.
	 */
	void (*remove)(struct agent_queue *aq);
};

#endif
