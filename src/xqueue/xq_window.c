/*
 * The progressive-launching window and what it learns.
 *
 * The window admits the next command while fewer than `threshold` commands
 * are in flight and the estimated device time queued behind the oldest
 * in-flight command (assumed running) plus the new one stays within the
 * budget (spacing-learned estimates discounted by 1/XQ_SPACING_DISCOUNT
 * for their observation delay); an empty window always admits one. So a
 * suspend at Lv1 waits for at most the running command plus about one
 * budget of work, whatever the command size. At Lv2/Lv3 the device stops
 * the queue itself, so the budget only applies there when one was set: by
 * default such a queue hands the device up to `threshold` commands and its
 * progress does not hang on a CPU thread refilling the window every command
 * or two (xq_budget()). Sync points come every `batch` commands or every
 * half budget, so the worker can refill the window while half of it still
 * runs, and at every event command (what applications wait for).
 *
 * Durations are learned per est_key (EWMA, weight 1/4) from the backend's
 * per-command device time, or failing that from the spacing of sync
 * completions (shared among the commands retired together in proportion to
 * their estimates). Without device times these estimates are also what the
 * queue reports as its device time (bandwidth accounting): a spacing
 * includes whatever else the device ran meanwhile, which is why policies
 * that hand a device over wait for the previous holder to drain first
 * (xq_set_run_word(), inflight). Under a budget an unknown command is assumed
 * to exceed it, so a queue starts with one command in flight and opens its
 * window as it learns; commands expected to take under XQ_WORK_MIN_NS are
 * not counted as work in flight.
 */
#include "xqueue/xqueue_internal.h"

#include <errno.h>

static uint64_t xq_est_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

static uint64_t xq_est_key(const struct xal_cmd *cmd)
{
	uint64_t key = cmd->est_key ^ ((uint64_t)cmd->kind << 56);

	return key ? key : 1;
}

static struct xq_est_slot *xq_est_find(struct xq_est *est, uint64_t key, bool insert)
{
	uint64_t h = xq_est_hash(key);
	unsigned i;

	for (i = 0; i < XQ_EST_SLOTS; i++) {
		struct xq_est_slot *s = &est->slot[(h + i) % XQ_EST_SLOTS];

		if (s->key == key)
			return s;
		if (s->key == 0) {
			if (!insert)
				return NULL;
			s->key = key;
			s->ns = 0;
			return s;
		}
	}
	if (!insert)
		return NULL;
	/* Full: reuse the home slot; a stale estimate is only a hint. */
	est->slot[h % XQ_EST_SLOTS].key = key;
	est->slot[h % XQ_EST_SLOTS].ns = 0;
	return &est->slot[h % XQ_EST_SLOTS];
}

static uint64_t ewma(uint64_t old, uint64_t sample)
{
	return old ? (3 * old + sample) / 4 : (sample ? sample : 1);
}

/* The duration expected of @cmd; *@guess: nothing learned of its kind. */
static uint64_t xq_est_lookup(const struct xq *q, const struct xal_cmd *cmd, bool *guess)
{
	const struct xq_est_slot *s;
	uint32_t kind = cmd->kind < XAL_CMD_KIND_MAX ? cmd->kind : XAL_CMD_OTHER;
	int64_t budget;

	*guess = false;
	s = xq_est_find((struct xq_est *)&q->est, xq_est_key(cmd), false);
	if (s && s->ns)
		return s->ns;
	if (q->est.kind_ns[kind])
		return q->est.kind_ns[kind];
	/* Unknown: more than the budget, so it launches alone. */
	*guess = true;
	budget = xq_budget(q);
	return budget > 0 ? (uint64_t)budget + 1 : 0;
}

uint64_t xq_est_known(const struct xq *q, uint32_t kind, uint64_t est_key)
{
	struct xal_cmd probe = { .est_key = est_key, .kind = kind };
	const struct xq_est_slot *s = xq_est_find((struct xq_est *)&q->est, xq_est_key(&probe),
						   false);

	return s ? s->ns : 0;
}

uint64_t xq_est_get(const struct xq *q, const struct xal_cmd *cmd)
{
	bool guess;

	return xq_est_lookup(q, cmd, &guess);
}

void xq_est_learn(struct xq *q, const struct xal_cmd *cmd, uint64_t ns)
{
	struct xq_est_slot *s = xq_est_find(&q->est, xq_est_key(cmd), true);
	uint32_t kind = cmd->kind < XAL_CMD_KIND_MAX ? cmd->kind : XAL_CMD_OTHER;

	s->ns = ewma(s->ns, ns);
	q->est.kind_ns[kind] = ewma(q->est.kind_ns[kind], ns);
}

int64_t xq_budget(const struct xq *q)
{
	if (q->budget_ns)
		return q->budget_ns;
	return q->level >= 2 ? XS_BUDGET_NONE : XS_DEFAULT_BUDGET_NS;
}

bool xq_window_has_room(const struct xq *q, const struct xal_cmd *next)
{
	int64_t budget = xq_budget(q);
	uint64_t queued;

	if (q->inflight.n == 0)
		return true;
	if (q->inflight.n >= (uint64_t)q->threshold)
		return false;
	if (budget < 0)
		return true;
	queued = q->inflight_est_ns - q->inflight.head->xq_est_ns + xq_est_get(q, next);
	/* Spacings include each completion's observation delay: without a
	 * discount, a command the size of the budget would never get one
	 * queued behind it, and its every completion would idle the device
	 * for a wakeup. */
	if (!q->ops->cmd_time)
		queued -= queued / XQ_SPACING_DISCOUNT;
	return queued <= (uint64_t)budget;
}

unsigned xq_window_launch_flags(struct xq *q, struct xal_cmd *cmd)
{
	bool sp, guess;
	uint64_t est = xq_est_lookup(q, cmd, &guess);
	int64_t budget = xq_budget(q);

	cmd->xq_est_ns = est;
	cmd->xq_flags &= ~(uint32_t)(XQ_F_EST_GUESS | XQ_F_WORK);
	if (guess)
		cmd->xq_flags |= XQ_F_EST_GUESS;
	if (guess || est >= XQ_WORK_MIN_NS) {
		cmd->xq_flags |= XQ_F_WORK;
		q->inflight_work++;
	}
	q->since_sync_n++;
	q->since_sync_ns += est;
	/* An application's event is what it waits for: syncing on anything
	 * else would wait for more (or, with nothing behind, drain the device
	 * before the window could be refilled). */
	sp = cmd->kind == XAL_CMD_EVENT || q->since_sync_n >= (uint32_t)q->batch ||
	     (budget > 0 && q->since_sync_ns * 2 >= (uint64_t)budget);
	if (!sp)
		return 0;
	q->since_sync_n = 0;
	q->since_sync_ns = 0;
	cmd->xq_flags |= XQ_F_SYNC_POINT;
	return XAL_LAUNCH_SYNC_POINT;
}

void xq_window_retired(struct xq *q, const struct xal_cmd *cmd)
{
	q->inflight_est_ns -= cmd->xq_est_ns;
	if (cmd->xq_flags & XQ_F_WORK)
		q->inflight_work--;
}

void xq_window_reset(struct xq *q)
{
	q->since_sync_n = 0;
	q->since_sync_ns = 0;
}

int xq_window_check(int32_t threshold, int32_t batch, int64_t budget_ns)
{
	if (threshold < 1 || threshold > XS_MAX_THRESHOLD)
		return -EINVAL;
	if (batch < 1 || batch > threshold)
		return -EINVAL;
	if (budget_ns <= 0 && budget_ns != XS_BUDGET_NONE)
		return -EINVAL;
	return 0;
}

int xq_window_resolve(struct xq *q, int32_t threshold, int32_t batch,
			     int64_t budget_ns, bool create)
{
	int32_t t = threshold ? threshold : (create ? XS_DEFAULT_THRESHOLD : q->threshold);
	int32_t b = batch ? batch : (create ? XS_DEFAULT_BATCH : q->batch);

	/* An unspecified batch follows a small threshold: half of it. */
	if (!batch && b > t && t > 0)
		b = t / 2 ? t / 2 : 1;
	int64_t g = budget_ns ? budget_ns : (create ? 0 : q->budget_ns);
	int rc = xq_window_check(t, b, g ? g : XS_DEFAULT_BUDGET_NS);

	if (rc < 0)
		return rc;
	q->threshold = t;
	q->batch = b;
	q->budget_ns = g;
	return 0;
}

int xq_set_window(struct xq *q, int32_t threshold, int32_t batch, int64_t budget_ns)
{
	int rc;

	if (!q)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	rc = xq_window_resolve(q, threshold, batch, budget_ns, false);
	if (rc == 0)
		xq_launch_pending(q);
	xq_unlock(q);
	return rc;
}
