/*
 * The simulated XPU's public API (include/xsched/sim.h): hardware queues
 * and commands of the simulated device, checked and handed out under the
 * public opaque names (an xs_hwq is a struct xal_hwq, an xs_cmd a struct
 * xal_cmd, as in src/api/xsched.c). Part of the simulated XPU's target,
 * which libxsched links as one of its backends.
 */
#include "xsched/sim.h"
#include "base/compiler.h"
#include "xal/xal_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Modelled bandwidth of the simulated device's copy engine (bytes/µs). */
#define SIM_COPY_BYTES_PER_US 10000

BASE_EXPORT int xs_sim_hwq_create(const char *device, xs_hwq **out)
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

BASE_EXPORT int xs_sim_kernel(uint64_t duration_ns, xs_cmd **out)
{
	struct sim_cmd d = { .kind = SIM_CMD_KERNEL, .duration_ns = duration_ns };

	if (duration_ns == 0)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

BASE_EXPORT int xs_sim_kernel_fn(uint64_t duration_ns, int (*fn)(void *), void *arg,
				 xs_cmd **out)
{
	struct sim_cmd d = {
		.kind = SIM_CMD_KERNEL, .duration_ns = duration_ns, .fn = fn, .arg = arg,
	};

	if (!fn)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

BASE_EXPORT int xs_sim_copy(void *dst, const void *src, size_t size,
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

BASE_EXPORT int xs_sim_memset(void *dst, int value, size_t size, xs_cmd **out)
{
	struct sim_cmd d = {
		.kind = SIM_CMD_MEMSET, .dst = dst, .value = value, .size = size,
		.duration_ns = 1000 * (size / SIM_COPY_BYTES_PER_US) + 1000,
	};

	if (!dst || size == 0)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}

BASE_EXPORT int xs_sim_event(uint64_t *timestamp_ns, xs_cmd **out)
{
	struct sim_cmd d = { .kind = SIM_CMD_EVENT, .timestamp = timestamp_ns };

	if (!timestamp_ns)
		return -EINVAL;
	return sim_cmd(&d, NULL, out);
}
