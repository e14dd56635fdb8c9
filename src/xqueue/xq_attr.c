/*
 * XQueue attributes read and set beside the command path: scheduling hints,
 * the observer, the window's settings, learned estimates, counters, info
 * and statistics. Each takes the queue lock for a moment and never touches
 * the backend.
 */
#include "xqueue/xqueue_internal.h"

#include <errno.h>
#include <string.h>

int64_t xq_est_query(struct xq *q, struct xq_est_req *req, size_t n)
{
	int64_t budget;

	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < n; i++)
		req[i].ns = xq_est_known(q, req[i].kind, req[i].est_key);
	budget = xq_budget(q);
	pthread_mutex_unlock(&q->lock);
	return budget;
}

void xq_window_get(struct xq *q, int32_t *threshold, int32_t *batch, int64_t *budget_ns)
{
	pthread_mutex_lock(&q->lock);
	*threshold = q->threshold;
	*batch = q->batch;
	*budget_ns = q->budget_ns;
	pthread_mutex_unlock(&q->lock);
}

void xq_counters_locked(struct xq *q, struct xq_counters *out)
{
	out->submitted = q->st.submitted;
	out->completed = q->st.completed;
	out->preemptions = q->st.preemptions;
	out->exec_ns = q->st.exec_ns;
}

uint64_t xq_launched(struct xq *q)
{
	return atomic_load_explicit(&q->launched_pub, memory_order_acquire);
}

void *xq_blocked_on_locked(struct xq *q)
{
	return q->blocked_on;
}

bool xq_gated(struct xq *q)
{
	return atomic_load(&q->gated);
}

static int xq_hint_check(enum xs_hint hint, int64_t value)
{
	switch (hint) {
	case XS_HINT_PRIORITY:
		return value >= XS_PRIORITY_MIN && value <= XS_PRIORITY_MAX ? 0 : -ERANGE;
	case XS_HINT_SHARE:
		return value >= 0 && value <= XS_SHARE_MAX ? 0 : -ERANGE;
	case XS_HINT_DEADLINE_US:
	case XS_HINT_LAXITY_US:
		return value >= 0 && value <= XS_TIME_HINT_MAX_US ? 0 : -ERANGE;
	default:
		return -EINVAL;
	}
}

int xq_set_hint(struct xq *q, enum xs_hint hint, int64_t value)
{
	int rc;

	if (!q)
		return -EINVAL;
	rc = xq_hint_check(hint, value);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&q->lock);
	q->hint[hint] = value;
	q->hint_set |= 1u << hint;
	xq_notify(q, XQ_EVENT_HINT);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

int xq_get_hint(struct xq *q, enum xs_hint hint, int64_t *value)
{
	if (!q || !value || xq_hint_check(hint, 0) == -EINVAL)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	*value = q->hint[hint];
	pthread_mutex_unlock(&q->lock);
	return 0;
}

uint32_t xq_hints(struct xq *q, int64_t hint[XQ_HINTS])
{
	uint32_t set;

	pthread_mutex_lock(&q->lock);
	memcpy(hint, q->hint, sizeof(q->hint));
	set = q->hint_set;
	pthread_mutex_unlock(&q->lock);
	return set;
}

void xq_set_observer(struct xq *q, xq_observer_fn fn, void *ctx)
{
	pthread_mutex_lock(&q->lock);
	q->observer = fn;
	q->observer_ctx = ctx;
	pthread_mutex_unlock(&q->lock);
}

void xq_resync(struct xq *q)
{
	pthread_mutex_lock(&q->lock);
	xq_notify(q, XQ_EVENT_RESYNC);
	pthread_mutex_unlock(&q->lock);
}

void xq_info(struct xq *q, xs_queue_info *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->lock);
	out->level = q->level;
	out->level_requested = q->level_req;
	out->level_max = q->level_max;
	out->threshold = q->threshold;
	out->batch = q->batch;
	out->budget_ns = xq_budget(q);
	pthread_mutex_unlock(&q->lock);
	strncpy(out->backend, q->ops->name, sizeof(out->backend) - 1);
}

void xq_stats(struct xq *q, xs_queue_stats *out)
{
	pthread_mutex_lock(&q->lock);
	*out = q->st;
	out->in_flight = q->inflight.n;
	out->pending = q->pending.n;
	out->suspended = xq_stopped(q);
	out->preempt_samples = q->preempt_hist.count;
	out->preempt_p50_ns = hist_quantile(&q->preempt_hist, 0.50);
	out->preempt_p99_ns = hist_quantile(&q->preempt_hist, 0.99);
	out->preempt_max_ns = q->preempt_hist.max;
	pthread_mutex_unlock(&q->lock);
}

struct xal_hwq *xq_hwq(struct xq *q)
{
	return q->hwq;
}
