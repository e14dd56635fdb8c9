/*
 * The public C API (include/xsched/xsched.h): thin, checked wrappers over
 * the XQueue and the XAL backends (the simulated XPU's part,
 * include/xsched/sim.h, is src/sim/sim_api.c). The public handle types are
 * the internal objects under opaque names, so a shim and an application
 * calling this API reach the same code.
 */
#include "xsched/xsched.h"
#include "base/compiler.h"
#include "agent/agent.h"
#include "xal/xal.h"
#include "xqueue/xqueue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct xq *Q(xs_queue *q)
{
	return (struct xq *)q;
}

static struct xal_hwq *H(xs_hwq *h)
{
	return (struct xal_hwq *)h;
}

static struct xal_cmd *C(xs_cmd *c)
{
	return (struct xal_cmd *)c;
}

BASE_EXPORT void xs_hwq_destroy(xs_hwq *hwq)
{
	if (hwq)
		H(hwq)->ops->hwq_destroy(H(hwq));
}

BASE_EXPORT void xs_cmd_destroy(xs_cmd *cmd)
{
	xal_cmd_destroy(C(cmd));
}

BASE_EXPORT int xs_queue_create(xs_hwq *hwq, const xs_queue_config *cfg, xs_queue **out)
{
	struct xq_config c = { 0 };
	struct xq *q;
	int rc;

	if (!hwq || !out)
		return -EINVAL;
	if (cfg) {
		if (cfg->size < sizeof(*cfg))
			return -EINVAL;
		c.level = cfg->level;
		c.threshold = cfg->threshold;
		c.batch = cfg->batch;
		c.budget_ns = cfg->budget_ns;
	}
	rc = xq_create(H(hwq), &c, &q);
	if (rc < 0)
		return rc;
	/* Scheduling is best effort: a queue the agent cannot take runs. */
	agent_register(q);
	*out = (xs_queue *)q;
	return 0;
}

BASE_EXPORT int xs_queue_destroy(xs_queue *q, unsigned flags)
{
	/* Out of scheduling first: a suspended queue would never drain. */
	agent_unregister(Q(q));
	return xq_destroy(Q(q), flags);
}

BASE_EXPORT int xs_submit(xs_queue *q, xs_cmd *cmd, uint64_t *seq)
{
	return xq_submit(Q(q), C(cmd), seq);
}

BASE_EXPORT int xs_wait(xs_queue *q, uint64_t seq)
{
	return xq_wait(Q(q), seq);
}

BASE_EXPORT int xs_wait_all(xs_queue *q)
{
	return xq_wait_all(Q(q));
}

BASE_EXPORT int xs_query(xs_queue *q, uint64_t seq)
{
	return xq_query(Q(q), seq);
}

BASE_EXPORT int xs_suspend(xs_queue *q, unsigned flags)
{
	return xq_suspend(Q(q), flags);
}

BASE_EXPORT int xs_resume(xs_queue *q)
{
	return xq_resume(Q(q));
}

BASE_EXPORT int xs_queue_set_window(xs_queue *q, int32_t threshold, int32_t batch,
				    int64_t budget_ns)
{
	return xq_set_window(Q(q), threshold, batch, budget_ns);
}

BASE_EXPORT int xs_queue_set_hint(xs_queue *q, enum xs_hint hint, int64_t value)
{
	return xq_set_hint(Q(q), hint, value);
}

BASE_EXPORT int xs_queue_get_hint(xs_queue *q, enum xs_hint hint, int64_t *value)
{
	return xq_get_hint(Q(q), hint, value);
}

BASE_EXPORT int xs_queue_info_get(xs_queue *q, xs_queue_info *out)
{
	if (!q || !out)
		return -EINVAL;
	xq_info(Q(q), out);
	return 0;
}

BASE_EXPORT int xs_queue_stats_get(xs_queue *q, xs_queue_stats *out)
{
	if (!q || !out)
		return -EINVAL;
	xq_stats(Q(q), out);
	return 0;
}
