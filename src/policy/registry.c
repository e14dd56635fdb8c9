/*
 * The table of built-in policies, looked up by name, and the resolution of
 * the tunables they share.
 *
 * The built-ins are listed once, in POLICY_BUILTINS below, which expands into
 * both the ops table array and the name list, so the two cannot drift
 * apart (the unit tests check that each name equals its table's name).
 */
#include "policy/policy_builtin.h"
#include "base/compiler.h"

#include <string.h>

/* Every built-in policy, the default first. */
#define POLICY_BUILTINS(X) \
	X(hpf)          \
	X(hhpf)         \
	X(bandwidth)    \
	X(edf)          \
	X(laxity)       \
	X(fair)

#define POLICY_OPS_ENTRY(n) &policy_##n,
#define POLICY_NAME_ENTRY(n) #n,

static const struct xs_policy_ops *const builtin_ops[] = {
	POLICY_BUILTINS(POLICY_OPS_ENTRY)
};

static const char *const builtin_names[] = {
	POLICY_BUILTINS(POLICY_NAME_ENTRY)
	NULL
};

const struct xs_policy_ops *policy_find(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(builtin_ops) / sizeof(builtin_ops[0]); i++)
		if (strcmp(builtin_names[i], name) == 0)
			return builtin_ops[i];
	return NULL;
}

const char *const *policy_names(void)
{
	return builtin_names;
}

/* True when @conf is long enough to hold @field. */
#define CONF_HAS(conf, field)                                                 \
	((conf)->size >= offsetof(struct xs_policy_conf, field) +             \
				 sizeof((conf)->field))

void policy_conf_resolve(struct policy_conf *out, const struct xs_policy_conf *conf,
		       uint64_t default_slice_ns)
{
	out->edf_k = 1;
	out->slice_ns = default_slice_ns;
	out->default_share = POLICY_DEFAULT_SHARE;
	out->per_process = false;
	out->drain_ns = POLICY_DRAIN_MAX_NS;
	if (!conf)
		return;
	if (CONF_HAS(conf, edf_k) && conf->edf_k)
		out->edf_k = conf->edf_k;
	if (CONF_HAS(conf, slice_ns) && conf->slice_ns) {
		out->slice_ns = conf->slice_ns;
		if (out->slice_ns < POLICY_SLICE_MIN_NS)
			out->slice_ns = POLICY_SLICE_MIN_NS;
		if (out->slice_ns > POLICY_SLICE_MAX_NS)
			out->slice_ns = POLICY_SLICE_MAX_NS;
	}
	if (CONF_HAS(conf, default_share) && conf->default_share > 0)
		out->default_share = conf->default_share > POLICY_SHARE_MAX ?
			POLICY_SHARE_MAX : conf->default_share;
	if (CONF_HAS(conf, per_process))
		out->per_process = conf->per_process;
	if (CONF_HAS(conf, drain_ns) && conf->drain_ns)
		out->drain_ns = conf->drain_ns == XS_DRAIN_NONE ? 0 :
				BASE_MIN(conf->drain_ns, POLICY_DRAIN_LIMIT_NS);
}
