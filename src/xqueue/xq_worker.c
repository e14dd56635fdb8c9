/*
 * The XQueue's on-demand worker: the thread that launches and syncs when no
 * application thread waits on the queue. It is started by the first launch
 * that needs it (xq_worker_kick()), naps while submitters keep launching
 * directly, sleeps until woken when they stop, leaves after a second idle
 * (or at once on xq_reap()), and polls near an expected completion rather
 * than blocking when refilling an emptying window (xq_poll_until()).
 */
#include "xqueue/xqueue_internal.h"
#include "base/clock.h"
#include "base/futex.h"
#include "base/slice.h"

#include <errno.h>
#include <sys/prctl.h>

#define XQ_WORKER_IDLE_NS (1 * NSEC_PER_SEC)
/*
 * While submitters keep launching directly, an idle worker naps instead of
 * sleeping: it looks at the queue every XQ_NAP_NS on its own, so a direct
 * launch need not wake it (a wakeup is a system call on the submitting
 * thread, more than the launch itself on a fast driver). It naps for
 * XQ_NAP_LINGER_NS after the last direct launch, then sleeps until woken.
 */
#define XQ_NAP_NS (250 * NSEC_PER_USEC)
#define XQ_NAP_LINGER_NS (2 * NSEC_PER_MSEC)
/*
 * A nap that finds nothing to do doubles the next one, up to XQ_NAP_MAX_NS,
 * and commands launched less than a nap ago are left to their submitter,
 * which usually waits for them itself: a worker beside an application that
 * syncs its own short tasks costs a few wakeups per millisecond at most.
 */
#define XQ_NAP_MAX_NS (2 * NSEC_PER_MSEC)
/* Sleep overshoot to allow for when waking up just before a completion;
 * the sleeping thread's timer slack is lowered for that sleep. */
#define XQ_PROMPT_MARGIN_NS (100 * NSEC_PER_USEC)

/*
 * When the worker must refill a window whose last command is @target, the
 * device goes idle as soon as @target completes, and a blocking sync would
 * add a thread wakeup (tens of microseconds here) of idle time per window.
 * Returns when @target is expected to complete if that is far enough ahead
 * to sleep until just before it, else 0. Lock held.
 */
uint64_t xq_prompt_deadline(struct xq *q, const struct xal_cmd *target)
{
	uint64_t start, expected = 0;
	const struct xal_cmd *c;

	/* Only with exact device times: a learned estimate that includes
	 * waiting behind other queues would make us sleep past completion. */
	if (!q->ops->query || !q->ops->cmd_time || target != q->inflight.tail)
		return 0;
	start = BASE_MAX(q->last_done_ns, q->inflight.head->xq_launch_ns);
	for (c = q->inflight.head; c; c = c->xq_next)
		expected += c->xq_est_ns;
	expected += start;
	return expected > clock_now_ns() + 2 * XQ_PROMPT_MARGIN_NS ? expected : 0;
}

/*
 * Sleeps until shortly before @deadline, then polls @target until it is no
 * longer busy or well past the deadline. Returns the query result (-EBUSY
 * if still running). No lock held.
 */
int xq_poll_until(struct xq *q, struct xal_cmd *target, uint64_t deadline)
{
	uint64_t give_up = deadline + 4 * XQ_PROMPT_MARGIN_NS;
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	int rc;

	/* Sleep, unless a suspend (which bumps the word) makes it pointless. */
	if (slack != 1)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		uint32_t seen = atomic_load(&q->kick_word);
		uint64_t now = clock_now_ns();

		if (atomic_load(&q->suspended) || now + XQ_PROMPT_MARGIN_NS >= deadline)
			break;
		futex_wait(&q->kick_word, seen, deadline - XQ_PROMPT_MARGIN_NS - now, false);
	}
	if (slack > 1)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	do {
		rc = q->ops->query(q->hwq, target);
		if (rc != -EBUSY || atomic_load(&q->suspended))
			return rc;
		cpu_relax();
	} while (clock_now_ns() < give_up);
	return -EBUSY;
}

static void *xq_worker_main(void *arg);

/* Makes sure a worker will look at the queue. Lock held. */
void xq_worker_kick(struct xq *q)
{
	pthread_attr_t attr;

	if (q->worker_running) {
		if (q->worker_idle)
			pthread_cond_signal(&q->wcond);
		return;
	}
	if (q->worker_zombie) {
		pthread_join(q->worker, NULL);
		q->worker_zombie = false;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* On failure, progress still comes from threads that wait. */
	if (pthread_create(&q->worker, &attr, xq_worker_main, q) == 0)
		q->worker_running = true;
	pthread_attr_destroy(&attr);
}

/* Whether the worker has nothing to do but wait. Lock held. */
static bool xq_worker_unneeded(struct xq *q)
{
	return !q->pending.n && !q->inflight.n && !q->stopping && !q->completers;
}

void xq_reap(struct xq *q)
{
	const struct timespec tick = { 0, 100000 };

	pthread_mutex_lock(&q->lock);
	if (q->worker_running && xq_worker_unneeded(q)) {
		q->worker_quit = true;
		pthread_cond_signal(&q->wcond);
		/* Bounded: new work may keep it running, which is fine. */
		for (int i = 0; i < 10000 && q->worker_running; i++) {
			pthread_mutex_unlock(&q->lock);
			nanosleep(&tick, NULL);
			pthread_mutex_lock(&q->lock);
		}
	}
	if (q->worker_zombie && !q->worker_running) {
		pthread_join(q->worker, NULL);
		q->worker_zombie = false;
	}
	pthread_mutex_unlock(&q->lock);
}

/* Whether the worker may nap now rather than sleep until woken. Lock held. */
static bool xq_worker_may_nap(struct xq *q, uint64_t now)
{
	return !q->blocked_on && !q->stopping && now - q->last_direct_ns < XQ_NAP_LINGER_NS;
}

static void *xq_worker_main(void *arg)
{
	struct xq *q = arg;
	uint64_t nap_ns = XQ_NAP_NS;
	bool napped = false;            /* the last wait was a nap that timed out */

	pthread_setname_np(pthread_self(), "xsched-worker");
	slice_apply();
	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (q->garbage.n && q->syncers == 0) {
			xq_unlock(q);
			pthread_mutex_lock(&q->lock);
		}
		xq_launch_pending(q);
		if (atomic_load(&q->suspended) && q->level >= 2 && q->susp_had_work &&
		    q->measured_gen != q->susp_gen && q->ops->wait_quiet) {
			/* Preempted on the device: time until it is quiet. */
			uint64_t gen = q->susp_gen;

			pthread_mutex_unlock(&q->lock);
			q->ops->wait_quiet(q->hwq);
			pthread_mutex_lock(&q->lock);
			if (gen == q->susp_gen && q->measured_gen != gen)
				xq_record_preemption(q);
			continue;
		}
		if (q->inflight.n && !q->completers) {
			bool suspended = atomic_load(&q->suspended);

			uint64_t now = clock_now_ns();

			if (suspended && q->level >= 2) {
				xq_wait_resumed(q);
				continue;
			}
			if (q->pending.n && !suspended) {
				xq_sync_step(q, xq_refill_target(q), true);
				napped = false;
				continue;
			}
			if (q->pending.n || !xq_worker_may_nap(q, now) ||
			    now - q->inflight.tail->xq_launch_ns >= nap_ns) {
				xq_sync_step(q, q->inflight.tail->xq_seq, false);
				napped = false;
				continue;
			}
			/* Young direct launches: their submitter syncs them. */
		}
		if (q->stopping && !q->pending.n && !q->inflight.n)
			break;
		if (q->pending.n && xq_may_launch(q) && !q->completers && !q->blocked_on)
			continue;
		{
			uint64_t now = clock_now_ns();
			bool nap = xq_worker_may_nap(q, now);
			struct timespec ts;
			int rc;

			if (q->worker_quit && xq_worker_unneeded(q))
				break;
			nap_ns = !nap || !napped ? XQ_NAP_NS : BASE_MIN(2 * nap_ns, XQ_NAP_MAX_NS);
			ts = clock_ns_to_timespec(now + (q->blocked_on ? XQ_GATE_POLL_NS :
							 nap ? nap_ns : XQ_WORKER_IDLE_NS));
			q->worker_idle = true;
			q->worker_napping = nap;
			rc = pthread_cond_timedwait(&q->wcond, &q->lock, &ts);
			q->worker_idle = false;
			q->worker_napping = false;
			napped = nap && rc == ETIMEDOUT;
			if ((q->worker_quit || (rc == ETIMEDOUT && !nap)) && xq_worker_unneeded(q))
				break;
		}
	}
	q->worker_running = false;
	q->worker_zombie = true;
	q->worker_quit = false;
	xq_unlock(q);
	return NULL;
}
