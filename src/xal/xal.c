/*
 * Backend-independent XAL helpers: level probing and clamping.
 *
 * A level counts only when both the ops are present and the device said so
 * at probe time (caps), so a backend compiled with Lv3 ops still reports Lv1
 * on hardware that cannot interrupt.
 */
#include "xal/xal.h"

#include <errno.h>
#include <stddef.h>

int xal_ops_check(const struct xal_ops *ops)
{
	if (!ops || ops->version == 0 || ops->version > XAL_OPS_VERSION)
		return -EPROTO;
	if (ops->size < offsetof(struct xal_ops, hwq_destroy) + sizeof(ops->hwq_destroy))
		return -EPROTO;
	if (!ops->launch || !ops->sync || !ops->sync_all || !ops->hwq_destroy)
		return -EINVAL;
	return 0;
}

int xal_settle(struct xal_hwq *hwq)
{
	const struct xal_ops *ops = hwq->ops;

	if (ops->size < offsetof(struct xal_ops, settle) + sizeof(ops->settle) || !ops->settle)
		return 0;
	return ops->settle(hwq);
}

int xal_level_max(const struct xal_hwq *hwq)
{
	const struct xal_ops *ops = hwq->ops;
	int level = 1;

	if ((hwq->caps & XAL_CAP_LV2) && ops->deactivate && ops->reactivate) {
		level = 2;
		if ((hwq->caps & XAL_CAP_LV3) && ops->interrupt && ops->restore)
			level = 3;
	}
	return level;
}

int xal_level_grant(const struct xal_hwq *hwq, int requested)
{
	int max = xal_level_max(hwq);

	if (requested < 0 || requested > 3)
		return -EINVAL;
	if (requested == 0 || requested > max)
		return max;
	return requested;
}
