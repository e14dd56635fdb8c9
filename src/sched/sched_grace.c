/*
 * What the idle grace is (sched_core.h, SCHED_GRACE_*): learned per queue
 * from its own recent Idle-to-Ready gaps as the scheduler core saw them,
 * so a foreground whose host prepares the next kernel of a task for
 * 20-300 us keeps the background out of those gaps, while one whose gaps
 * are longer than the cap (between tasks, not inside one) gets no grace.
 *
 * The grace is the longest of the last SCHED_GAPS gaps no longer than the
 * cap, plus half (the next gap is drawn from the same distribution but
 * seen through wakeups that jitter by tens of microseconds), at most the
 * cap, and none before SCHED_GAPS_MIN gaps were seen. Generous on
 * purpose: a task of 20 kernels has 19 gaps, and one gap that outlasts the
 * grace lets the background in for that task; a grace too long costs the
 * background only at the task's real end, once per task.
 * Gaps no longer than the cap between tasks that come that close cannot
 * be told from gaps inside a task: such a foreground is treated as one
 * long task. Plain functions over one queue; the core decides when a
 * grace applies (sched_idle() in sched_core.c).
 */
#include "sched/sched_core.h"

void sched_grace_learn(struct sched_q *q, uint64_t gap_ns, uint64_t max_ns)
{
	if (!max_ns || gap_ns > max_ns)
		return;
	q->gap[q->gap_next] = (uint32_t)gap_ns;
	q->gap_next = (uint8_t)((q->gap_next + 1) % SCHED_GAPS);
	if (q->ngap < SCHED_GAPS)
		q->ngap++;
}

uint64_t sched_grace_of(const struct sched_q *q, uint64_t max_ns)
{
	uint64_t top = 0;

	if (!max_ns || q->ngap < SCHED_GAPS_MIN)
		return 0;
	for (unsigned i = 0; i < q->ngap; i++)
		if (q->gap[i] > top)
			top = q->gap[i];
	top += top / 2;
	return top < max_ns ? top : max_ns;
}
