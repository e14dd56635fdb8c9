/*
 * Hardware queues of the simulated XPU: launch, wait and the Lv2/Lv3
 * controls. A queue's ring lives in its process; only the counters the
 * arbiters of other processes need are in shared memory (sim_abi.h).
 */
#include "sim/sim_internal.h"
#include "base/clock.h"
#include "base/futex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Busy-wait this long before sleeping in a wait: a wakeup costs more. */
#define SIM_WAIT_SPIN_NS (5 * NSEC_PER_USEC)
/* Interrupts take effect within microseconds: poll longer for quiet. */
#define SIM_QUIET_SPIN_NS (50 * NSEC_PER_USEC)

void sim_hwq_notify(struct sim_hwq *hq)
{
	atomic_store(&hq->wake_at, UINT64_MAX);
	atomic_fetch_add(&hq->done_wake, 1);
	if (atomic_load(&hq->waiters))
		futex_wake(&hq->done_wake, INT32_MAX, false);
}

void sim_hwq_notify_done(struct sim_hwq *hq, uint64_t done)
{
	/* Pairs with the fetch-min of wake_at then the load of done in
	 * sim_hwq_block(): one of the two sees the other. */
	if (done >= atomic_load(&hq->wake_at))
		sim_hwq_notify(hq);
}

int sim_hwq_create(struct sim_dev *dev, struct sim_hwq **out)
{
	struct sim_shm_dev *shm;
	struct sim_hwq *hq;
	uint32_t i;
	int rc;

	if (!dev || !out)
		return -EINVAL;
	shm = dev->shm;
	hq = calloc(1, sizeof(*hq));
	if (!hq)
		return -ENOMEM;
	pthread_mutex_lock(&sim_lock);
	rc = sim_engine_start(dev);
	if (rc < 0)
		goto fail;
	for (i = 0; i < SIM_MAX_HWQ; i++) {
		uint32_t expected = SIM_SLOT_FREE;

		if (atomic_compare_exchange_strong(&shm->hwq[i].state, &expected,
						   SIM_SLOT_CLAIMED))
			break;
	}
	if (i == SIM_MAX_HWQ) {
		rc = -ENOSPC;
		goto fail;
	}
	hq->dev = dev;
	hq->index = i;
	hq->shm = &shm->hwq[i];
	hq->tickets = shm->ticket[i];
	pthread_mutex_init(&hq->launch_lock, NULL);
	atomic_store(&hq->wake_at, UINT64_MAX);
	hq->shm->ctx = dev->ctx;
	atomic_store(&hq->shm->ctl, 0);
	atomic_store(&hq->shm->running, 0);
	atomic_store(&hq->shm->submitted, 0);
	atomic_store(&hq->shm->done, 0);
	atomic_store(&hq->shm->busy_ns, 0);
	atomic_store(&hq->shm->executed, 0);
	atomic_store(&hq->shm->interrupts, 0);
	atomic_store(&hq->shm->wait_on, 0);
	atomic_store(&hq->shm->wait_seq, 0);
	atomic_store(&dev->local[i], hq);
	atomic_store(&hq->shm->state, SIM_SLOT_LIVE);
	atomic_fetch_or(&shm->live_mask[i / 64], 1ull << (i % 64));
	dev->nhwq++;
	dev->refs++;
	pthread_mutex_unlock(&sim_lock);
	*out = hq;
	return 0;
fail:
	pthread_mutex_unlock(&sim_lock);
	free(hq);
	return rc;
}

void sim_hwq_destroy(struct sim_hwq *hq)
{
	struct sim_dev *dev;
	struct sim_shm_dev *shm;
	uint32_t turn;
	uint64_t done, sub;

	if (!hq)
		return;
	dev = hq->dev;
	shm = dev->shm;
	/* Stop the engine from starting more of our commands, let the running
	 * one end, then retire the rest as flushed. */
	atomic_fetch_or(&hq->shm->ctl, SIM_CTL_STALL);
	atomic_fetch_and(&hq->shm->ctl, ~(uint32_t)(SIM_CTL_FLUSH | SIM_CTL_INTERRUPT));
	sim_hwq_wait_quiet(hq);
	pthread_mutex_lock(&dev->exec_lock);
	atomic_fetch_and(&shm->live_mask[hq->index / 64], ~(1ull << (hq->index % 64)));
	atomic_store(&dev->local[hq->index], NULL);
	pthread_mutex_unlock(&dev->exec_lock);
	/* The executor may have picked us just before: wait until it let go. */
	sim_hwq_wait_quiet(hq);
	sub = atomic_load(&hq->shm->submitted);
	for (done = atomic_load(&hq->shm->done); done < sub; done++)
		atomic_store(&hq->ring[done & SIM_RING_MASK].state, SIM_E_FLUSHED);
	atomic_store(&hq->shm->done, sub);
	atomic_store(&hq->shm->state, SIM_SLOT_FREE);
	sim_hwq_notify(hq);
	turn = hq->index + 1;
	if (atomic_compare_exchange_strong(&shm->turn, &turn, 0))
		sim_engine_kick(dev, hq->index);
	pthread_mutex_destroy(&hq->launch_lock);
	free(hq);
	pthread_mutex_lock(&sim_lock);
	dev->nhwq--;
	pthread_mutex_unlock(&sim_lock);
	sim_dev_close(dev);
}

struct sim_dev *sim_hwq_dev(struct sim_hwq *hq)
{
	return hq->dev;
}

uint32_t sim_hwq_index(const struct sim_hwq *hq)
{
	return hq->index;
}

static int sim_cmd_check(const struct sim_cmd *c)
{
	switch (c->kind) {
	case SIM_CMD_KERNEL:
		return c->duration_ns || c->fn ? 0 : -EINVAL;
	case SIM_CMD_COPY:
		return !c->size || (c->dst && c->src) ? 0 : -EINVAL;
	case SIM_CMD_MEMSET:
		return !c->size || c->dst ? 0 : -EINVAL;
	case SIM_CMD_EVENT:
		return 0;
	case SIM_CMD_HOLD:
		return c->hold ? 0 : -EINVAL;
	case SIM_CMD_WAIT:
		return c->wait_hwq < SIM_MAX_HWQ && c->wait_seq ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

static bool sim_hwq_blocked(struct sim_hwq *hq)
{
	return sim_ctl_blocks(atomic_load(&hq->shm->ctl));
}

static bool sim_block_done(struct sim_hwq *hq, uint64_t target, bool preemptible)
{
	return atomic_load(&hq->shm->done) >= target ||
	       (preemptible && sim_hwq_blocked(hq));
}

/*
 * Waits until done reaches @target, or with @preemptible until the queue
 * is stalled or interrupted. Spins briefly, then sleeps having registered
 * @target, so the executor wakes waiters only when one of them can go on.
 */
static void sim_hwq_block(struct sim_hwq *hq, uint64_t target, bool preemptible)
{
	uint64_t spin_end = clock_now_ns() + SIM_WAIT_SPIN_NS;

	while (!sim_block_done(hq, target, preemptible)) {
		uint64_t cur;
		uint32_t seen;

		if (clock_now_ns() < spin_end) {
			cpu_relax();
			continue;
		}
		seen = atomic_load(&hq->done_wake);
		atomic_fetch_add(&hq->waiters, 1);
		cur = atomic_load(&hq->wake_at);
		while (target < cur &&
		       !atomic_compare_exchange_weak(&hq->wake_at, &cur, target))
			;
		if (!sim_block_done(hq, target, preemptible))
			futex_wait(&hq->done_wake, seen, UINT64_MAX, false);
		atomic_fetch_sub(&hq->waiters, 1);
	}
}

int sim_hwq_launch(struct sim_hwq *hq, const struct sim_cmd *cmd, uint64_t *seq)
{
	struct sim_entry *e;
	uint64_t s;
	int rc;

	if (!hq || !cmd)
		return -EINVAL;
	rc = sim_cmd_check(cmd);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&hq->launch_lock);
	s = atomic_load_explicit(&hq->shm->submitted, memory_order_relaxed) + 1;
	/* Full: wait for a sixteenth of the ring to drain, not one slot, so a
	 * flooding launcher is not woken at every completion. */
	if (s - 1 - atomic_load(&hq->shm->done) >= SIM_RING)
		sim_hwq_block(hq, s - SIM_RING + SIM_RING / 16, false);
	e = &hq->ring[(s - 1) & SIM_RING_MASK];
	e->cmd = *cmd;
	e->remaining_ns = cmd->kind == SIM_CMD_EVENT || cmd->kind == SIM_CMD_WAIT ?
			  0 : cmd->duration_ns;
	e->data_done = false;
	atomic_store(&e->exec_ns, 0);
	atomic_store(&e->seq, s);
	atomic_store(&e->state, SIM_E_PENDING);
	atomic_store(&hq->tickets[(s - 1) & SIM_RING_MASK],
		     atomic_fetch_add(&hq->dev->shm->tickets, 1));
	/* Publish, then look at the engine: pairs with sim_engine_advance();
	 * and at our executor: pairs with its deep sleep (sim_engine.c). */
	atomic_store(&hq->shm->submitted, s);
	pthread_mutex_unlock(&hq->launch_lock);
	if (atomic_load(&hq->dev->shm->turn) == 0)
		sim_engine_kick(hq->dev, hq->index == 0 ? SIM_MAX_HWQ - 1 : hq->index - 1);
	sim_engine_wake_own(hq->dev);
	if (seq)
		*seq = s;
	return 0;
}

static bool sim_done_reached(struct sim_hwq *hq, uint64_t seq)
{
	return atomic_load(&hq->shm->done) >= seq;
}

/* Outcome of finished command @seq: flushed, a pending error, or 0. */
static int sim_hwq_outcome(struct sim_hwq *hq, uint64_t seq)
{
	struct sim_entry *e = &hq->ring[(seq - 1) & SIM_RING_MASK];
	uint64_t s1 = atomic_load(&e->seq);
	uint32_t state = atomic_load(&e->state);
	uint64_t err;

	if (s1 == seq && state == SIM_E_FLUSHED && atomic_load(&e->seq) == seq)
		return -ECANCELED;
	err = atomic_load(&hq->err_seq);
	if (err && err <= seq) {
		int code = atomic_load(&hq->err_code);

		if (atomic_compare_exchange_strong(&hq->err_seq, &err, 0))
			return code;
	}
	return 0;
}

int sim_hwq_wait(struct sim_hwq *hq, uint64_t seq, unsigned flags)
{
	if (!hq || seq == 0 || seq > atomic_load(&hq->shm->submitted))
		return -EINVAL;
	sim_hwq_block(hq, seq, flags & SIM_WAIT_PREEMPTIBLE);
	if (!sim_done_reached(hq, seq))
		return -EAGAIN;
	return sim_hwq_outcome(hq, seq);
}

int sim_hwq_wait_all(struct sim_hwq *hq, unsigned flags)
{
	uint64_t last;

	if (!hq)
		return -EINVAL;
	last = atomic_load(&hq->shm->submitted);
	return last ? sim_hwq_wait(hq, last, flags) : 0;
}

int sim_hwq_query(struct sim_hwq *hq, uint64_t seq)
{
	if (!hq || seq == 0 || seq > atomic_load(&hq->shm->submitted))
		return -EINVAL;
	if (!sim_done_reached(hq, seq))
		return -EBUSY;
	return sim_hwq_outcome(hq, seq);
}

int sim_hwq_cmd_time(struct sim_hwq *hq, uint64_t seq, uint64_t *ns)
{
	struct sim_entry *e;
	uint64_t v;

	if (!hq || !ns || seq == 0)
		return -EINVAL;
	e = &hq->ring[(seq - 1) & SIM_RING_MASK];
	if (atomic_load(&e->seq) != seq || !sim_done_reached(hq, seq))
		return -ENOENT;
	v = atomic_load(&e->exec_ns);
	if (atomic_load(&e->seq) != seq)
		return -ENOENT;
	*ns = v;
	return 0;
}

void sim_hwq_wait_quiet(struct sim_hwq *hq)
{
	struct sim_dev *dev = hq->dev;
	uint64_t spin_end = clock_now_ns() + SIM_QUIET_SPIN_NS;

	while (atomic_load(&hq->shm->running)) {
		uint32_t seen;

		if (clock_now_ns() < spin_end) {
			cpu_relax();
			continue;
		}
		seen = atomic_load(&dev->quiet_word);
		atomic_fetch_add(&dev->quiet_waiters, 1);
		/* Pairs with the store of running then the load of quiet_waiters
		 * in sim_execute_turn(). */
		if (atomic_load(&hq->shm->running))
			futex_wait(&dev->quiet_word, seen, UINT64_MAX, false);
		atomic_fetch_sub(&dev->quiet_waiters, 1);
	}
}

static int sim_hwq_control(struct sim_hwq *hq, uint32_t set, uint32_t level,
			   bool wait_quiet)
{
	if (!hq)
		return -EINVAL;
	if (hq->dev->shm->level_max < level)
		return -EOPNOTSUPP;
	/* Pairs with the store of running in sim_execute_turn(). */
	atomic_fetch_or(&hq->shm->ctl, set);
	sim_hwq_notify(hq);
	if (set & SIM_CTL_FLUSH)
		sim_engine_kick(hq->dev, SIM_NO_HWQ);
	if (wait_quiet)
		sim_hwq_wait_quiet(hq);
	return 0;
}

static int sim_hwq_release(struct sim_hwq *hq, uint32_t clear, uint32_t level)
{
	if (!hq)
		return -EINVAL;
	if (hq->dev->shm->level_max < level)
		return -EOPNOTSUPP;
	atomic_fetch_and(&hq->shm->ctl, ~clear);
	sim_engine_kick(hq->dev, hq->index == 0 ? SIM_MAX_HWQ - 1 : hq->index - 1);
	return 0;
}

int sim_hwq_stall(struct sim_hwq *hq, bool wait_quiet)
{
	uint32_t set = SIM_CTL_STALL;

	if (hq && hq->dev->shm->lv2_flush)
		set |= SIM_CTL_FLUSH;
	return sim_hwq_control(hq, set, 2, wait_quiet);
}

int sim_hwq_unstall(struct sim_hwq *hq)
{
	return sim_hwq_release(hq, SIM_CTL_STALL | SIM_CTL_FLUSH, 2);
}

int sim_hwq_interrupt(struct sim_hwq *hq, bool wait_quiet)
{
	return sim_hwq_control(hq, SIM_CTL_INTERRUPT, 3, wait_quiet);
}

int sim_hwq_restore(struct sim_hwq *hq)
{
	return sim_hwq_release(hq, SIM_CTL_INTERRUPT, 3);
}

void sim_hwq_info_get(struct sim_hwq *hq, struct sim_hwq_info *out)
{
	out->index = hq->index;
	out->submitted = atomic_load(&hq->shm->submitted);
	out->done = atomic_load(&hq->shm->done);
	out->busy_ns = atomic_load(&hq->shm->busy_ns);
	out->executed = atomic_load(&hq->shm->executed);
	out->interrupts = atomic_load(&hq->shm->interrupts);
	out->running = atomic_load(&hq->shm->running) != 0;
}
