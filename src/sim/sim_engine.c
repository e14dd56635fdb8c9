/*
 * The engine of the simulated XPU: who runs the next command, and running it.
 *
 * The engine is a token, shm->turn, naming the hardware queue whose head
 * command runs next. Only the executor thread of the process owning that
 * queue runs it; when the command ends (or is interrupted) the same thread
 * picks the next eligible queue by the device's arbitration and hands the
 * turn over with compare-and-swap, ringing the new owner's doorbell. An idle
 * engine (turn 0) is claimed by whoever makes a queue eligible.
 *
 * Lost-wakeup freedom: a launcher publishes `submitted` then reads `turn`;
 * an executor going idle publishes turn = 0 then rescans `submitted`. Both
 * are sequentially consistent, so at least one of them sees the other.
 *
 * Dead owners: executors that wait with commands of theirs pending wake
 * every watchdog period (the others sleep until rung: a launch wakes its
 * own executor if it sleeps so); if the turn stayed with one process over
 * a whole period and that process is dead they reap it (or finish a reap
 * its reaper died in, sim_device.c), and an idle engine with eligible work
 * is claimed. The period is SIM_WATCHDOG_NS, doubling up to
 * SIM_WATCHDOG_MAX_NS while the engine is seen moving, so that hundreds of
 * processes waiting on a busy device do not each wake a hundred times a
 * second. So a process killed at any instant delays the others by at most
 * about SIM_WATCHDOG_MAX_NS + SIM_WATCHDOG_NS (90 ms).
 */
#include "sim/sim_internal.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/futex.h"

#include <errno.h>
#include <string.h>

#define SIM_WATCHDOG_NS (10 * NSEC_PER_MSEC)
#define SIM_WATCHDOG_MAX_NS (80 * NSEC_PER_MSEC)
#define SIM_IDLE_POLL_NS (100 * NSEC_PER_USEC)

static _Thread_local struct sim_dev *sim_executor_of;

static void sim_flush_notify(struct sim_dev *dev);

/*
 * A queue whose head WAIT names another queue can run once that queue got
 * far enough, or is gone (a dead queue must not block it forever).
 */
static bool sim_wait_satisfied(const struct sim_shm_dev *shm, const struct sim_shm_hwq *h)
{
	uint32_t on = atomic_load(&h->wait_on);
	const struct sim_shm_hwq *t;

	if (!on || on > SIM_MAX_HWQ)
		return true;
	t = &shm->hwq[on - 1];
	return atomic_load(&t->state) != SIM_SLOT_LIVE ||
	       atomic_load(&t->done) >= atomic_load(&h->wait_seq);
}

bool sim_hwq_eligible(const struct sim_shm_dev *shm, uint32_t idx)
{
	const struct sim_shm_hwq *h = &shm->hwq[idx];

	if (atomic_load(&h->state) != SIM_SLOT_LIVE)
		return false;
	if (sim_ctl_blocks(atomic_load(&h->ctl)))
		return false;
	if (atomic_load(&h->submitted) <= atomic_load(&h->done))
		return false;
	return sim_wait_satisfied(shm, h);
}

/* Next eligible queue after @after in round-robin order, or SIM_NO_HWQ. */
static uint32_t sim_pick_rr(struct sim_shm_dev *shm, uint32_t after)
{
	uint32_t start = after == SIM_NO_HWQ ? 0 : (after + 1) % SIM_MAX_HWQ;
	uint32_t n;

	for (n = 0; n < SIM_MAX_HWQ;) {
		uint32_t i = (start + n) % SIM_MAX_HWQ;
		uint64_t word = atomic_load(&shm->live_mask[i / 64]) >> (i % 64);

		if (!word) {
			n += 64 - i % 64;
			continue;
		}
		n += (uint32_t)__builtin_ctzll(word);
		if (n >= SIM_MAX_HWQ)
			break;
		i = (start + n) % SIM_MAX_HWQ;
		if (sim_hwq_eligible(shm, i))
			return i;
		n++;
	}
	return SIM_NO_HWQ;
}

/* Eligible queue whose head command was launched first, or SIM_NO_HWQ. */
static uint32_t sim_pick_fcfs(struct sim_shm_dev *shm)
{
	uint64_t best_ticket = UINT64_MAX;
	uint32_t best = SIM_NO_HWQ, w;

	for (w = 0; w < SIM_MAX_HWQ / 64; w++) {
		uint64_t word = atomic_load(&shm->live_mask[w]);

		while (word) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(word);
			uint64_t head, t;

			word &= word - 1;
			if (!sim_hwq_eligible(shm, i))
				continue;
			head = atomic_load(&shm->hwq[i].done);
			t = atomic_load(&shm->ticket[i][head & SIM_RING_MASK]);
			if (t < best_ticket) {
				best_ticket = t;
				best = i;
			}
		}
	}
	return best;
}

static uint32_t sim_pick(struct sim_shm_dev *shm, uint32_t after)
{
	return shm->arbitration == SIM_ARB_FCFS ? sim_pick_fcfs(shm) :
						  sim_pick_rr(shm, after);
}

static void sim_ring(struct sim_dev *dev, uint32_t idx)
{
	struct sim_shm_dev *shm = dev->shm;
	uint32_t c = shm->hwq[idx].ctx;

	if (c >= SIM_MAX_CTX || (c == dev->ctx && sim_executor_of == dev))
		return;
	/* Pairs with the store of sleeping then the load of turn in
	 * sim_executor_main(). */
	atomic_fetch_add(&shm->ctx[c].doorbell, 1);
	if (atomic_load(&shm->ctx[c].sleeping))
		futex_wake(&shm->ctx[c].doorbell, 1, true);
}

void sim_engine_wake_own(struct sim_dev *dev)
{
	struct sim_shm_ctx *ctx = &dev->shm->ctx[dev->ctx];

	if (atomic_load(&ctx->sleeping) == SIM_SLEEP_DEEP) {
		atomic_fetch_add(&ctx->doorbell, 1);
		futex_wake(&ctx->doorbell, 1, true);
	}
}

void sim_engine_kick(struct sim_dev *dev, uint32_t after)
{
	struct sim_shm_dev *shm = dev->shm;
	uint32_t next, idle = 0;

	if (atomic_load(&shm->turn) != 0)
		return;
	next = sim_pick(shm, after);
	if (next == SIM_NO_HWQ)
		return;
	if (atomic_compare_exchange_strong(&shm->turn, &idle, next + 1))
		sim_ring(dev, next);
}

void sim_engine_advance(struct sim_dev *dev, uint32_t cur)
{
	struct sim_shm_dev *shm = dev->shm;
	uint32_t next = sim_pick(shm, cur), expected = cur + 1;

	if (next != SIM_NO_HWQ) {
		if (atomic_compare_exchange_strong(&shm->turn, &expected, next + 1))
			sim_ring(dev, next);
		return;
	}
	if (atomic_compare_exchange_strong(&shm->turn, &expected, 0))
		sim_engine_kick(dev, cur);
}

static void sim_trace(struct sim_dev *dev, uint32_t idx, uint64_t seq)
{
	if (!atomic_load_explicit(&dev->tracing, memory_order_relaxed))
		return;
	pthread_mutex_lock(&dev->trace_lock);
	if (dev->trace_n < dev->trace_cap) {
		dev->trace_hwq[dev->trace_n] = idx;
		dev->trace_seq[dev->trace_n] = seq;
		dev->trace_n++;
	}
	pthread_mutex_unlock(&dev->trace_lock);
}

/*
 * Completion wakeups are deferred until the next command has started (or
 * the engine leaves this process): a futex wake costs microseconds of the
 * waker's time, which a device's completion interrupt does not take from
 * the device. The queue is looked up again under exec_lock, so a queue
 * destroyed meanwhile is not touched.
 */
static void sim_defer_notify(struct sim_dev *dev, struct sim_hwq *hq, uint64_t done)
{
	if (dev->notify_hq && dev->notify_hq != hq)
		sim_flush_notify(dev);
	dev->notify_hq = hq;
	dev->notify_idx = hq->index;
	dev->notify_done = done;
}

static void sim_flush_notify(struct sim_dev *dev)
{
	if (!dev->notify_hq)
		return;
	pthread_mutex_lock(&dev->exec_lock);
	if (atomic_load(&dev->local[dev->notify_idx]) == dev->notify_hq)
		sim_hwq_notify_done(dev->notify_hq, dev->notify_done);
	pthread_mutex_unlock(&dev->exec_lock);
	dev->notify_hq = NULL;
}

/* The data part of a command, done once even if the spin is interrupted. */
static int sim_entry_data(struct sim_entry *e)
{
	const struct sim_cmd *c = &e->cmd;

	switch (c->kind) {
	case SIM_CMD_KERNEL:
		return c->fn ? c->fn(c->arg) : 0;
	case SIM_CMD_COPY:
		if (c->size)
			memcpy(c->dst, c->src, c->size);
		return 0;
	case SIM_CMD_MEMSET:
		if (c->size)
			memset(c->dst, c->value, c->size);
		return 0;
	case SIM_CMD_EVENT:
		if (c->timestamp)
			*c->timestamp = clock_now_ns();
		return 0;
	default:
		return 0;
	}
}

/*
 * Runs the rest of @e. Returns true when it finished, false when a Lv3
 * interrupt stopped it (its remaining time is kept).
 */
/* When the entry whose data part runs on this thread started (sim.h). */
static _Thread_local uint64_t sim_started;

uint64_t sim_cmd_started_ns(void)
{
	return sim_started;
}

static bool sim_entry_run(struct sim_hwq *hq, struct sim_entry *e, int *status)
{
	const _Atomic uint32_t *ctl = &hq->shm->ctl;
	uint64_t start = clock_now_ns(), end, now;
	bool finished = true;

	*status = 0;
	if (!e->data_done) {
		int rc;

		sim_started = start;
		rc = sim_entry_data(e);
		sim_started = 0;
		e->data_done = true;
		if (rc < 0)
			*status = rc;
	}
	end = start + e->remaining_ns;
	sim_flush_notify(hq->dev);
	for (;;) {
		now = clock_now_ns();
		if (e->cmd.kind == SIM_CMD_HOLD) {
			if (atomic_load(e->cmd.hold))
				break;
		} else if (now >= end) {
			break;
		}
		if (atomic_load_explicit(ctl, memory_order_relaxed) & SIM_CTL_INTERRUPT) {
			finished = false;
			break;
		}
		cpu_relax();
	}
	e->remaining_ns = now >= end ? 0 : end - now;
	atomic_fetch_add(&e->exec_ns, now - start);
	atomic_fetch_add(&hq->shm->busy_ns, now - start);
	atomic_fetch_add(&hq->dev->shm->busy_ns, now - start);
	if (!finished)
		atomic_fetch_add(&hq->shm->interrupts, 1);
	return finished;
}

static void sim_entry_finish(struct sim_hwq *hq, struct sim_entry *e,
			     uint64_t done, uint32_t state, int status)
{
	uint64_t none = 0;

	if (status < 0 && atomic_load(&hq->err_seq) == 0) {
		atomic_store(&hq->err_code, status);
		atomic_compare_exchange_strong(&hq->err_seq, &none, done + 1);
	}
	atomic_store(&e->state, state);
	if (state == SIM_E_DONE) {
		atomic_fetch_add(&hq->shm->executed, 1);
		atomic_fetch_add(&hq->dev->shm->commands, 1);
	}
	atomic_store(&hq->shm->done, done + 1);
	sim_defer_notify(hq->dev, hq, done + 1);
}

/*
 * Runs the head command of our queue @idx, which holds the turn. The queue
 * is looked up and marked running under exec_lock, so sim_hwq_destroy(),
 * which unpublishes it under the same lock and then waits for running to
 * drop, never frees a queue the executor still uses; the lock is not held
 * while the command runs.
 */
static void sim_execute_turn(struct sim_dev *dev, uint32_t idx)
{
	struct sim_hwq *hq;
	struct sim_shm_hwq *h;
	uint64_t sub, done;
	uint32_t ctl;

	pthread_mutex_lock(&dev->exec_lock);
	hq = atomic_load(&dev->local[idx]);
	if (hq)
		/* Pairs with the fetch_or of ctl in sim_hwq_stall()/interrupt(). */
		atomic_store(&hq->shm->running, 1);
	pthread_mutex_unlock(&dev->exec_lock);
	if (!hq)
		goto out;
	h = hq->shm;
	ctl = atomic_load(&h->ctl);
	sub = atomic_load(&h->submitted);
	done = atomic_load_explicit(&h->done, memory_order_relaxed);
	if (done == sub || (ctl & SIM_CTL_INTERRUPT))
		goto quiet;
	if (ctl & SIM_CTL_FLUSH) {
		for (; done < sub; done++)
			sim_entry_finish(hq, &hq->ring[done & SIM_RING_MASK], done,
					 SIM_E_FLUSHED, 0);
		goto quiet;
	}
	if (ctl & SIM_CTL_STALL)
		goto quiet;
	{
		struct sim_entry *e = &hq->ring[done & SIM_RING_MASK];
		int status;

		if (e->cmd.kind == SIM_CMD_WAIT) {
			/* Publish what the head waits for; arbiters skip us until
			 * then. Done at once if it is already satisfied. */
			atomic_store(&h->wait_seq, e->cmd.wait_seq);
			atomic_store(&h->wait_on, e->cmd.wait_hwq + 1);
			if (!sim_wait_satisfied(dev->shm, h))
				goto quiet;
			atomic_store(&h->wait_on, 0);
			sim_entry_finish(hq, e, done, SIM_E_DONE, 0);
			goto quiet;
		}

		for (;;) {
			sim_trace(dev, idx, done + 1);
			if (!sim_entry_run(hq, e, &status))
				break;
			sim_entry_finish(hq, e, done, SIM_E_DONE, status);
			/* Timestamps right behind complete with it, in the same
			 * turn, as a device's front end retires them: round robin
			 * puts no other queue's work in between. */
			if (++done == atomic_load(&h->submitted) ||
			    (atomic_load(&h->ctl) & (SIM_CTL_INTERRUPT | SIM_CTL_FLUSH | SIM_CTL_STALL)))
				break;
			e = &hq->ring[done & SIM_RING_MASK];
			if (e->cmd.kind != SIM_CMD_EVENT || e->remaining_ns)
				break;
		}
	}
quiet:
	/* Last touch of hq: sim_hwq_destroy() may free it once this is 0, so
	 * quiet waiters are woken through the device-wide path instead. */
	atomic_store(&h->running, 0);
	if (atomic_load(&dev->quiet_waiters)) {
		atomic_fetch_add(&dev->quiet_word, 1);
		futex_wake(&dev->quiet_word, INT32_MAX, false);
	}
out:
	sim_engine_advance(dev, idx);
}

static bool sim_turn_is_ours(struct sim_dev *dev, uint32_t turn)
{
	return turn != 0 && dev->shm->hwq[turn - 1].ctx == dev->ctx &&
	       atomic_load(&dev->local[turn - 1]) != NULL;
}

/*
 * Whether a queue of ours holds commands not done, eligible or not. Reads
 * the shared slots only: a local queue may be freed meanwhile (its slot
 * stays mapped, done = submitted once destroyed).
 */
static bool sim_have_pending(struct sim_dev *dev)
{
	const struct sim_shm_dev *shm = dev->shm;
	uint32_t i;

	for (i = 0; i < SIM_MAX_HWQ; i++)
		if (atomic_load(&dev->local[i]) &&
		    atomic_load(&shm->hwq[i].done) < atomic_load(&shm->hwq[i].submitted))
			return true;
	return false;
}

static bool sim_have_work(struct sim_dev *dev)
{
	uint32_t i;

	for (i = 0; i < SIM_MAX_HWQ; i++) {
		struct sim_hwq *hq = atomic_load(&dev->local[i]);

		if (hq && sim_hwq_eligible(dev->shm, i))
			return true;
	}
	return false;
}

/*
 * Recovers the engine from a dead owner or a lost claim (see file top).
 * An engine that moved since this executor's last timeout (another
 * turn, or more commands done) has a live owner: the owner's liveness is
 * read from /proc only when it held the turn through a whole period, so
 * that hundreds of processes waiting on a busy device do not each read
 * /proc a hundred times a second.
 */
static void sim_watchdog(struct sim_dev *dev)
{
	struct sim_shm_dev *shm = dev->shm;
	uint32_t turn = atomic_load(&shm->turn);
	uint64_t done = atomic_load(&shm->commands);

	if (turn != 0 && (turn != dev->wd_turn || done != dev->wd_commands)) {
		dev->wd_turn = turn;
		dev->wd_commands = done;
		dev->wd_period = BASE_MIN(2 * dev->wd_period, SIM_WATCHDOG_MAX_NS);
		return;
	}
	dev->wd_period = SIM_WATCHDOG_NS;
	if (!sim_have_work(dev))
		return;
	if (turn == 0) {
		sim_engine_kick(dev, SIM_NO_HWQ);
		return;
	}
	{
		uint32_t c = shm->hwq[turn - 1].ctx, st;

		st = c < SIM_MAX_CTX ? atomic_load(&shm->ctx[c].state) : SIM_SLOT_FREE;
		/* Its owner dead, or its reaper (sim_ctx_reap() takes over). */
		if (c < SIM_MAX_CTX && c != dev->ctx &&
		    ((st == SIM_SLOT_LIVE && !sim_ctx_alive(dev, c)) || st == SIM_SLOT_REAPING))
			sim_ctx_reap(dev, c);
		else if (atomic_load(&shm->hwq[turn - 1].state) != SIM_SLOT_LIVE) {
			uint32_t expected = turn;

			if (atomic_compare_exchange_strong(&shm->turn, &expected, 0))
				sim_engine_kick(dev, SIM_NO_HWQ);
		}
	}
}

static void *sim_executor_main(void *arg)
{
	struct sim_dev *dev = arg;
	struct sim_shm_ctx *ctx = &dev->shm->ctx[dev->ctx];
	uint64_t ran_at = 0;

	pthread_setname_np(pthread_self(), "xsim-executor");
	sim_executor_of = dev;
	dev->wd_period = SIM_WATCHDOG_NS;
	for (;;) {
		uint32_t turn = atomic_load(&dev->shm->turn), seen;
		bool deep;
		int rc;

		if (sim_turn_is_ours(dev, turn)) {
			sim_execute_turn(dev, turn - 1);
			ran_at = clock_now_ns();
			continue;
		}
		sim_flush_notify(dev);
		if (atomic_load(&dev->stopping))
			break;
		/* An idle device is ready at once, as hardware is: right after
		 * running a turn, poll a little before sleeping, so that the
		 * next launch into an idle engine costs no thread wakeup. Only
		 * then: an executor that polled after every watchdog timeout
		 * would burn a tenth of a CPU per hundred idle processes. */
		if (turn == 0 && ran_at) {
			if (clock_now_ns() - ran_at < SIM_IDLE_POLL_NS) {
				cpu_relax();
				continue;
			}
			ran_at = 0;
		}
		seen = atomic_load(&ctx->doorbell);
		atomic_store(&ctx->sleeping, SIM_SLEEP_DEEP);
		turn = atomic_load(&dev->shm->turn);
		if (sim_turn_is_ours(dev, turn) || atomic_load(&dev->stopping)) {
			atomic_store(&ctx->sleeping, 0);
			continue;
		}
		/* With nothing of ours pending there is nothing to watch for:
		 * sleep until rung. The sleeping store, then the submitted
		 * loads: pairs with sim_hwq_submit()'s submitted store, then
		 * sleeping load (sim_engine_wake_own()). */
		deep = !sim_have_pending(dev);
		if (!deep)
			atomic_store(&ctx->sleeping, SIM_SLEEP_WATCH);
		rc = futex_wait(&ctx->doorbell, seen, deep ? UINT64_MAX : dev->wd_period, true);
		atomic_store(&ctx->sleeping, 0);
		if (rc == -ETIMEDOUT)
			sim_watchdog(dev);
	}
	return NULL;
}

int sim_engine_start(struct sim_dev *dev)
{
	pthread_attr_t attr;
	int rc;

	if (dev->executor_started)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	rc = pthread_create(&dev->executor, &attr, sim_executor_main, dev);
	pthread_attr_destroy(&attr);
	if (rc)
		return -rc;
	dev->executor_started = true;
	return 0;
}

void sim_engine_stop(struct sim_dev *dev)
{
	_Atomic uint32_t *bell = &dev->shm->ctx[dev->ctx].doorbell;

	if (!dev->executor_started)
		return;
	atomic_store(&dev->stopping, true);
	atomic_fetch_add(bell, 1);
	futex_wake(bell, 1, true);
	pthread_join(dev->executor, NULL);
	dev->executor_started = false;
	atomic_store(&dev->stopping, false);
}
