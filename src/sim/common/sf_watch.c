/*
 * Device-side waits on host-visible conditions: a queue of the simulated
 * device waits, without holding the engine, until something the device
 * cannot express as "queue Q finished command S" comes true (a memory word
 * meets a condition, a Level Zero event is signalled).
 *
 * Design: a wait must block its queue without holding the simulated
 * engine, or the work that makes it true (on another queue) could never
 * run. So the waiting queue gets a WAIT command on a private "gate" queue
 * for a command the gate does not have yet; a driver thread (started on
 * first use) evaluates each pending watch's condition and, when it holds,
 * launches that command on the gate, which releases the waiter. The
 * thread looks at every watch when a watch is armed or sf_watch_kick() is
 * called (the drivers kick when they change a condition, e.g. signal an
 * event), and, while some watch polls (its condition is plain memory the
 * application writes), also with a backoff from 1 us to 100 us between
 * looks. Conditions are evaluated on the host, so a polled release lags
 * the write by up to the backoff.
 */
#include "sim/common/sf.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define SF_WATCH_BACKOFF_MIN_NS 1000u
#define SF_WATCH_BACKOFF_MAX_NS 100000u

static pthread_mutex_t sf_watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sf_watch_cond;
static struct sf_watch *sf_watches;    /* sf_watch_lock */
static bool sf_watch_started;          /* sf_watch_lock */
static _Atomic unsigned sf_watch_count;/* armed watches, for a cheap kick */

static void sf_watch_release(struct sf_watch *w)
{
	struct sim_cmd cmd = { .kind = SIM_CMD_EVENT };

	sf_hwq_launch(w->gate, &cmd, NULL);
	sf_hwq_put(w->gate);
	free(w);
}

/* Releases every ready watch; whether some remaining watch polls. */
static bool sf_watch_scan(bool *progressed)
{
	struct sf_watch **pp = &sf_watches;
	bool poll = false;

	while (*pp) {
		struct sf_watch *w = *pp;

		if (w->ready(w)) {
			*pp = w->next;
			atomic_fetch_sub(&sf_watch_count, 1);
			sf_watch_release(w);
			*progressed = true;
		} else {
			poll |= w->poll;
			pp = &w->next;
		}
	}
	return poll;
}

static void *sf_watch_main(void *arg)
{
	uint64_t backoff = SF_WATCH_BACKOFF_MIN_NS;

	(void)arg;
	pthread_setname_np(pthread_self(), "xsim-watch");
	pthread_mutex_lock(&sf_watch_lock);
	for (;;) {
		bool progressed = false, poll;
		struct timespec ts;

		/*
		 * The lock is held from the scan to the wait, so a kick (which
		 * signals under it) cannot fall between them and be lost.
		 */
		poll = sf_watch_scan(&progressed);
		if (!poll) {
			pthread_cond_wait(&sf_watch_cond, &sf_watch_lock);
			backoff = SF_WATCH_BACKOFF_MIN_NS;
			continue;
		}
		backoff = progressed ? SF_WATCH_BACKOFF_MIN_NS :
			  backoff * 2 > SF_WATCH_BACKOFF_MAX_NS ? SF_WATCH_BACKOFF_MAX_NS :
			  backoff * 2;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)backoff;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sf_watch_cond, &sf_watch_lock, &ts);
	}
	return NULL;
}

/* Starts the watcher thread once. sf_watch_lock held. */
static int sf_watch_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (sf_watch_started)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sf_watch_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	rc = pthread_create(&t, &attr, sf_watch_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		pthread_cond_destroy(&sf_watch_cond);
		return -rc;
	}
	sf_watch_started = true;
	return 0;
}

/*
 * Prepares @w for a wait on @dev: starts the watcher if needed, takes a
 * gate and fills @cmd with the WAIT command the waiting queue launches.
 * Returns 0, -ENOMEM or the error of starting the thread.
 */
int sf_watch_prepare(struct sim_dev *dev, struct sf_watch *w, struct sim_cmd *cmd)
{
	int rc;

	pthread_mutex_lock(&sf_watch_lock);
	rc = sf_watch_start();
	pthread_mutex_unlock(&sf_watch_lock);
	if (rc == 0)
		rc = sf_hwq_get(dev, &w->gate);
	if (rc < 0)
		return rc;
	*cmd = (struct sim_cmd){ .kind = SIM_CMD_WAIT };
	cmd->wait_hwq = w->gate->index;
	cmd->wait_seq = w->gate->launched + 1;
	return 0;
}

/*
 * Hands prepared @w to the watcher, which owns it from now on: it releases
 * the gate once w->ready() holds, then frees @w. Any thread.
 */
void sf_watch_arm(struct sf_watch *w)
{
	pthread_mutex_lock(&sf_watch_lock);
	w->next = sf_watches;
	sf_watches = w;
	atomic_fetch_add(&sf_watch_count, 1);
	pthread_cond_signal(&sf_watch_cond);
	pthread_mutex_unlock(&sf_watch_lock);
}

/* Undoes sf_watch_prepare() when the WAIT was not launched; @w stays the caller's. */
void sf_watch_cancel(struct sf_watch *w)
{
	sf_hwq_put(w->gate);
	w->gate = NULL;
}

/*
 * Makes the watcher evaluate every watch again: a condition may have come
 * true. Cheap when nothing is armed: the caller's condition store and the
 * count's increment in sf_watch_arm() are both sequentially consistent, so
 * either this sees the watch or the watcher's scan after arming sees the
 * condition. Any thread, the executor's included; takes only the
 * watcher's lock.
 */
void sf_watch_kick(void)
{
	if (!atomic_load(&sf_watch_count))
		return;
	pthread_mutex_lock(&sf_watch_lock);
	pthread_cond_signal(&sf_watch_cond);
	pthread_mutex_unlock(&sf_watch_lock);
}
