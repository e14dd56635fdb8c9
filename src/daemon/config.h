/*
 * xschedd configuration: /etc/xsched/xschedd.conf (INI, parsed with inih),
 * the documented keys of dist/xschedd.conf. Unknown keys and bad values are
 * errors (a typo must not silently change scheduling).
 */
#ifndef XSD_CONFIG_H
#define XSD_CONFIG_H

#include "xsched/policy.h"

#include <stdint.h>
#include <sys/types.h>

#define XSD_DEFAULT_CONFIG "/etc/xsched/xschedd.conf"

struct xsd_uid_limit {
	uid_t uid;
	int32_t priority_ceiling;
};

struct xsd_config {
	char socket[108];
	char control_socket[108];
	char control_group[64];
	uint32_t max_clients;
	uint32_t max_clients_per_uid;      /* for non-root users */
	uint32_t max_queues_per_client;
	uint32_t max_message_size;
	char policy[128];
	struct xs_policy_conf pconf;
	uint32_t starvation_guard_pct;     /* 0: off */
	uint32_t contention_window;        /* in-flight cap below a higher queue; 0: off */
	uint64_t starvation_period_ns;
	int64_t def_hint[5];               /* by enum ipc_key 1..4 */
	int32_t priority_ceiling;          /* for non-root users */
	struct xsd_uid_limit *uid_limits;
	size_t n_uid_limits;
};

void xsd_config_defaults(struct xsd_config *c);

/*
 * Loads @path over the defaults into @c. A missing file is fine unless
 * @required. On error returns a negative errno and writes a message
 * (file:line: what) to @err.
 */
int xsd_config_load(const char *path, bool required, struct xsd_config *c,
		    char *err, size_t errlen);

/* The highest priority user @uid may ask for (root: XS_PRIORITY_MAX). */
int32_t xsd_config_ceiling(const struct xsd_config *c, uid_t uid);

void xsd_config_fini(struct xsd_config *c);

#endif
