/*
 * XAL backend for the simulated XPU (sim/sim.h). The device implements all
 * three levels natively, so this file is a direct mapping; what the device
 * really supports (it may be created with a lower level) is probed when a
 * queue is created.
 */
#include "xal/xal_sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct xal_sim_hwq {
	struct xal_hwq base;
	struct sim_dev *dev;
	struct sim_hwq *hq;
};

struct xal_sim_cmd {
	struct xal_cmd base;
	struct sim_cmd desc;
	uint64_t seq;     /* sequence on the simulated queue, set at launch */
	void *owned;
};

static struct xal_sim_hwq *to_hwq(struct xal_hwq *hwq)
{
	return (struct xal_sim_hwq *)hwq;
}

static struct xal_sim_cmd *to_cmd(struct xal_cmd *cmd)
{
	return (struct xal_sim_cmd *)cmd;
}

static unsigned sim_wait_flags(unsigned flags)
{
	return flags & XAL_SYNC_PREEMPTIBLE ? SIM_WAIT_PREEMPTIBLE : 0;
}

static int xal_sim_launch(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	(void)flags;
	return sim_hwq_launch(to_hwq(hwq)->hq, &to_cmd(cmd)->desc, &to_cmd(cmd)->seq);
}

static int xal_sim_sync(struct xal_hwq *hwq, struct xal_cmd *cmd, unsigned flags)
{
	return sim_hwq_wait(to_hwq(hwq)->hq, to_cmd(cmd)->seq, sim_wait_flags(flags));
}

static int xal_sim_sync_all(struct xal_hwq *hwq, unsigned flags)
{
	return sim_hwq_wait_all(to_hwq(hwq)->hq, sim_wait_flags(flags));
}

static int xal_sim_query(struct xal_hwq *hwq, struct xal_cmd *cmd)
{
	return sim_hwq_query(to_hwq(hwq)->hq, to_cmd(cmd)->seq);
}

static int xal_sim_deactivate(struct xal_hwq *hwq)
{
	return sim_hwq_stall(to_hwq(hwq)->hq, false);
}

static int xal_sim_reactivate(struct xal_hwq *hwq)
{
	return sim_hwq_unstall(to_hwq(hwq)->hq);
}

static int xal_sim_interrupt(struct xal_hwq *hwq)
{
	return sim_hwq_interrupt(to_hwq(hwq)->hq, false);
}

static void xal_sim_wait_quiet(struct xal_hwq *hwq)
{
	sim_hwq_wait_quiet(to_hwq(hwq)->hq);
}

static int xal_sim_restore(struct xal_hwq *hwq)
{
	return sim_hwq_restore(to_hwq(hwq)->hq);
}

static int xal_sim_cmd_time(struct xal_hwq *hwq, struct xal_cmd *cmd, uint64_t *ns)
{
	return sim_hwq_cmd_time(to_hwq(hwq)->hq, to_cmd(cmd)->seq, ns);
}

static void xal_sim_hwq_destroy(struct xal_hwq *hwq)
{
	struct xal_sim_hwq *h = to_hwq(hwq);
	struct sim_dev *dev = h->dev;

	sim_hwq_destroy(h->hq);
	sim_dev_close(dev);
	free(h);
}

static const struct xal_ops xal_sim_ops = {
	.version = XAL_OPS_VERSION,
	.size = sizeof(struct xal_ops),
	.name = "sim",
	.launch = xal_sim_launch,
	.sync = xal_sim_sync,
	.sync_all = xal_sim_sync_all,
	.query = xal_sim_query,
	.deactivate = xal_sim_deactivate,
	.reactivate = xal_sim_reactivate,
	.interrupt = xal_sim_interrupt,
	.restore = xal_sim_restore,
	.cmd_time = xal_sim_cmd_time,
	.wait_quiet = xal_sim_wait_quiet,
	.hwq_destroy = xal_sim_hwq_destroy,
};

/* The identity the simulated drivers report for device @name too. */
static void xal_sim_identity(const char *name, struct devid *id)
{
	uint8_t uuid[16];
	uint32_t domain, bus;

	sim_dev_uuid(name, uuid);
	sim_dev_pci(name, &domain, &bus);
	devid_set_uuid(id, uuid);
	devid_set_pci(id, domain, bus, 0, 0);
}

int xal_sim_hwq_create(const char *name, struct xal_hwq **out)
{
	struct sim_dev_info info;
	struct xal_sim_hwq *h;
	int rc;

	if (!out)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	rc = sim_dev_open(name ? name : sim_dev_default_name(), NULL, &h->dev);
	if (rc < 0)
		goto fail;
	rc = sim_hwq_create(h->dev, &h->hq);
	if (rc < 0)
		goto fail_dev;
	sim_dev_info_get(h->dev, &info);
	if (!name)
		name = sim_dev_default_name();
	snprintf(h->base.device, sizeof(h->base.device), "sim:%s", name);
	xal_sim_identity(name, &h->base.id);
	h->base.ops = &xal_sim_ops;
	h->base.caps = XAL_CAP_SYNC_ANY;
	if (info.level_max >= 2)
		h->base.caps |= XAL_CAP_LV2 | (info.lv2_flush ? XAL_CAP_FLUSH : 0);
	if (info.level_max >= 3)
		h->base.caps |= XAL_CAP_LV3;
	*out = &h->base;
	return 0;
fail_dev:
	sim_dev_close(h->dev);
fail:
	free(h);
	return rc;
}

struct sim_hwq *xal_sim_hwq_sim(struct xal_hwq *hwq)
{
	return to_hwq(hwq)->hq;
}

int xal_is_sim(const struct xal_hwq *hwq)
{
	return hwq && hwq->ops == &xal_sim_ops;
}

static void xal_sim_cmd_destroy(struct xal_cmd *cmd)
{
	free(to_cmd(cmd)->owned);
	free(cmd);
}

static const struct xal_cmd_ops xal_sim_cmd_ops = {
	.destroy = xal_sim_cmd_destroy,
};

static uint32_t xal_kind_of(uint32_t sim_kind)
{
	switch (sim_kind) {
	case SIM_CMD_KERNEL:
		return XAL_CMD_KERNEL;
	case SIM_CMD_COPY:
		return XAL_CMD_COPY;
	case SIM_CMD_MEMSET:
		return XAL_CMD_MEMSET;
	case SIM_CMD_EVENT:
		return XAL_CMD_EVENT;
	default:
		return XAL_CMD_OTHER;
	}
}

int xal_sim_cmd_create(const struct sim_cmd *desc, void *owned,
		       struct xal_cmd **out)
{
	struct xal_sim_cmd *c;

	if (!desc || !out || desc->kind < SIM_CMD_KERNEL || desc->kind > SIM_CMD_WAIT) {
		free(owned);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		free(owned);
		return -ENOMEM;
	}
	c->base.ops = &xal_sim_cmd_ops;
	c->base.kind = xal_kind_of(desc->kind);
	/* Commands of one host function and one duration take equal time. */
	c->base.est_key = (uint64_t)(uintptr_t)desc->fn ^
			  (desc->duration_ns * 0x9e3779b97f4a7c15ull);
	c->desc = *desc;
	c->owned = owned;
	*out = &c->base;
	return 0;
}
