/*
 * The public C API (include/xsched/xsched.h): thin, checked wrappers over
 * the XQueue and the XAL backends. The public handle types are the internal
 * objects under opaque names, so a shim and an application calling this API
 * reach the same code.
 */
#include "xsched/xsched.h"
#include "base/compiler.h"
#include "agent/agent.h"
#include "xal/xal_sim.h"
#include "xqueue/xqueue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Modelled bandwidth of the simulated device's copy engine (bytes/µs). */
#define SIM_COPY_BYTES_PER_US 10000

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

XS_EXPORT int xs_sim_hwq_create(const char *device, xs_hwq **out)
{
	struct xal_hwq *h;
	int rc;

	if (!out)
		return -EINVAL;
	rc = xal_sim_hwq_create(device, &h);
	if (rc == 0)
		*out = (xs_hwq *)h;
	return rc;
}

XS_EXPORT void xs_hwq_destroy(xs_hwq *hwq)
{
	if (hwq)
		H(hwq)->ops->hwq_destroy(H(hwq));
}

static int sim_cmd(const struct sim_cmd *desc, void *owned, xs_cmd **out)
{
	struct xal_cmd *c;
	int rc;

	if (!out) {
		free(owned);
		return -EINVAL;
	}
	rc = xal_sim_cmd_create(desc, owned, &c);
	if (rc == 0)
		*out = (xs_cmd *)c;
	return rc;
}

XS_EXPORT int xs_sim_kernel(uint64_t duration_ns, xs_cmd **out)
{
	struct sim_cmd d = { .kind = SIM_CMD_KERNEL, .duration_ns = duration_ns };

	if (duration_ns == 0)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

XS_EXPORT int xs_sim_kernel_fn(uint64_t duration_ns, int (*fn)(void *), void *arg,
			       xs_cmd **out)
{
	struct sim_cmd d = {
		.kind = SIM_CMD_KERNEL, .duration_ns = duration_ns, .fn = fn, .arg = arg,
	};

	if (!fn)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

XS_EXPORT int xs_sim_copy(void *dst, const void *src, size_t size,
			  uint64_t duration_ns, xs_cmd **out)
{
	struct sim_cmd d = { .kind = SIM_CMD_COPY, .dst = dst, .size = size };
	void *copy;

	if (!dst || !src || size == 0 || !out)
		return -EINVAL;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, src, size);
	d.src = copy;
	d.duration_ns = duration_ns ? duration_ns :
			1000 * (size / SIM_COPY_BYTES_PER_US) + 1000;
	return sim_cmd(&d, copy, out);
}

XS_EXPORT int xs_sim_memset(void *dst, int value, size_t size, xs_cmd **out)
{
	struct sim_cmd d = {
		.kind = SIM_CMD_MEMSET, .dst = dst, .value = value, .size = size,
		.duration_ns = 1000 * (size / SIM_COPY_BYTES_PER_US) + 1000,
	};

	if (!dst || size == 0)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

XS_EXPORT int xs_sim_event(uint64_t *timestamp_ns, xs_cmd **out)
{
	struct sim_cmd d = { .kind = SIM_CMD_EVENT, .timestamp = timestamp_ns };

	if (!timestamp_ns)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

XS_EXPORT void xs_cmd_destroy(xs_cmd *cmd)
{
	xal_cmd_destroy(C(cmd));
}

XS_EXPORT int xs_queue_create(xs_hwq *hwq, const xs_queue_config *cfg, xs_queue **out)
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
	xs_agent_register(q);
	*out = (xs_queue *)q;
	return 0;
}

XS_EXPORT int xs_queue_destroy(xs_queue *q, unsigned flags)
{
	/* Out of scheduling first: a suspended queue would never drain. */
	xs_agent_unregister(Q(q));
	return xq_destroy(Q(q), flags);
}

XS_EXPORT int xs_submit(xs_queue *q, xs_cmd *cmd, uint64_t *seq)
{
	return xq_submit(Q(q), C(cmd), seq);
}

XS_EXPORT int xs_wait(xs_queue *q, uint64_t seq)
{
	return xq_wait(Q(q), seq);
}

XS_EXPORT int xs_wait_all(xs_queue *q)
{
	return xq_wait_all(Q(q));
}

XS_EXPORT int xs_query(xs_queue *q, uint64_t seq)
{
	return xq_query(Q(q), seq);
}

XS_EXPORT int xs_suspend(xs_queue *q, unsigned flags)
{
	return xq_suspend(Q(q), flags);
}

XS_EXPORT int xs_resume(xs_queue *q)
{
	return xq_resume(Q(q));
}

XS_EXPORT int xs_queue_set_window(xs_queue *q, int32_t threshold, int32_t batch,
				  int64_t budget_ns)
{
	return xq_set_window(Q(q), threshold, batch, budget_ns);
}

XS_EXPORT int xs_queue_set_hint(xs_queue *q, enum xs_hint hint, int64_t value)
{
	return xq_set_hint(Q(q), hint, value);
}

XS_EXPORT int xs_queue_get_hint(xs_queue *q, enum xs_hint hint, int64_t *value)
{
	return xq_get_hint(Q(q), hint, value);
}

XS_EXPORT int xs_queue_info_get(xs_queue *q, xs_queue_info *out)
{
	if (!q || !out)
		return -EINVAL;
	xq_info(Q(q), out);
	return 0;
}

XS_EXPORT int xs_queue_stats_get(xs_queue *q, xs_queue_stats *out)
{
	if (!q || !out)
		return -EINVAL;
	xq_stats(Q(q), out);
	return 0;
}
