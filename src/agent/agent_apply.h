/*
 * What the agent does to its XQueues (agent_apply.c): suspend or resume,
 * cap the window, and apply the daemon's decisions and knobs from the
 * shared slots. Both modes and the watch on a hung daemon act on queues
 * only through here. Every function is called with the agent lock held,
 * except agent_apply_slots(), which takes it.
 */
#ifndef XS_AGENT_APPLY_H
#define XS_AGENT_APPLY_H

#include <stdbool.h>
#include <stdint.h>

struct agent_queue;

/*
 * Contention-aware window (DESIGN 3.3): caps @aq at @cap commands in
 * flight (0: its own window again). With @own_set, the own window was
 * just changed (daemon knobs): keep that one. Agent lock held.
 */
void agent_apply_cap(struct agent_queue *aq, int32_t cap, bool own_set);

/* Suspends or resumes @aq as decided (nothing if it already is).
 * Agent lock held. */
void agent_apply_run(struct agent_queue *aq, bool run);

/*
 * Applies the daemon's decisions and knobs of every registered queue whose
 * slot's decision_seq moved (all of them after a hang: ag.reapply).
 * Nothing while disconnected or while the daemon is taken for hung
 * (agent_live.c). Agent thread; takes the agent lock.
 */
void agent_apply_slots(void);

#endif
