/*
 * Configuration file parsing (see config.h). inih calls one handler per
 * key; each key is matched against a table of its section, name and
 * parser, so adding a key is one line.
 */
#include "daemon/config.h"
#include "daemon/policy/policy_builtin.h"
#include "ipc/ipc_abi.h"
#include "ipc/ipc_msg.h"
#include "xsched/xsched.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct parse_state {
	struct xsd_config *c;
	char *err;
	size_t errlen;
	int rc;
};

static int parse_i64(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int set_str(char *dst, size_t len, const char *v)
{
	if (!*v || strlen(v) >= len)
		return -EINVAL;
	strcpy(dst, v);
	return 0;
}

static int add_uid_limit(struct xsd_config *c, char *name, const char *v)
{
	struct xsd_uid_limit *l;
	int64_t uid, ceil;
	char *dot;

	/* uid.<N>.priority_ceiling */
	if (strncmp(name, "uid.", 4))
		return -ENOENT;
	dot = strchr(name + 4, '.');
	if (!dot || strcmp(dot, ".priority_ceiling"))
		return -ENOENT;
	*dot = '\0';
	if (parse_i64(name + 4, 0, UINT32_MAX - 1, &uid) < 0 ||
	    parse_i64(v, XS_PRIORITY_MIN, XS_PRIORITY_MAX, &ceil) < 0)
		return -EINVAL;
	l = realloc(c->uid_limits, (c->n_uid_limits + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	c->uid_limits = l;
	l[c->n_uid_limits].uid = (uid_t)uid;
	l[c->n_uid_limits].priority_ceiling = (int32_t)ceil;
	c->n_uid_limits++;
	return 0;
}

/* Applies one key; -ENOENT if unknown, -EINVAL if the value is bad. */
static int apply_key(struct xsd_config *c, const char *sec, char *name,
		     const char *v)
{
	int64_t x;
	bool b;
	int rc;

#define NUM(s, n, lo, hi, dst)                                          \
	if (!strcmp(sec, s) && !strcmp(name, n)) {                      \
		rc = parse_i64(v, lo, hi, &x);                          \
		if (rc == 0)                                            \
			dst = (__typeof__(dst))x;                       \
		return rc;                                              \
	}
	if (!strcmp(sec, "daemon")) {
		if (!strcmp(name, "socket"))
			return set_str(c->socket, sizeof(c->socket), v);
		if (!strcmp(name, "control_socket"))
			return set_str(c->control_socket, sizeof(c->control_socket), v);
		if (!strcmp(name, "control_group"))
			return set_str(c->control_group, sizeof(c->control_group), v);
		NUM("daemon", "max_clients", 1, 65536, c->max_clients)
		NUM("daemon", "max_clients_per_uid", 1, 65536, c->max_clients_per_uid)
		NUM("daemon", "max_queues_per_client", 1, 4096, c->max_queues_per_client)
		NUM("daemon", "max_message_size", 256, IPC_MSG_MAX, c->max_message_size)
	}
	if (!strcmp(sec, "policy")) {
		if (!strcmp(name, "name"))
			return set_str(c->policy, sizeof(c->policy), v);
		if (!strcmp(name, "per_process")) {
			rc = parse_bool(v, &b);
			if (rc == 0)
				c->pconf.per_process = b;
			return rc;
		}
		if (!strcmp(name, "slice_ms")) {
			rc = parse_i64(v, 1, 60000, &x);
			if (rc == 0)
				c->pconf.slice_ns = (uint64_t)x * 1000000;
			return rc;
		}
		if (!strcmp(name, "drain_ms")) {
			rc = parse_i64(v, 0, (int64_t)(XSD_DRAIN_LIMIT_NS / 1000000), &x);
			if (rc == 0)
				c->pconf.drain_ns = x ? (uint64_t)x * 1000000 : XS_DRAIN_NONE;
			return rc;
		}
		if (!strcmp(name, "starvation_period_ms")) {
			rc = parse_i64(v, 10, 3600000, &x);
			if (rc == 0)
				c->starvation_period_ns = (uint64_t)x * 1000000;
			return rc;
		}
		NUM("policy", "edf_k", 1, 64, c->pconf.edf_k)
		NUM("policy", "default_share", 1, XS_SHARE_MAX, c->pconf.default_share)
		NUM("policy", "starvation_guard_pct", 0, 50, c->starvation_guard_pct)
		NUM("policy", "contention_window", 0, 64, c->contention_window)
	}
	if (!strcmp(sec, "defaults")) {
		static const char *const keys[] = { NULL, "priority", "share",
						     "deadline_us", "laxity_us" };

		for (int k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++) {
			if (strcmp(name, keys[k]))
				continue;
			if (parse_i64(v, INT64_MIN, INT64_MAX, &x) < 0 ||
			    !ipc_hint_valid((uint32_t)k, x))
				return -EINVAL;
			c->def_hint[k] = x;
			return 0;
		}
	}
	if (!strcmp(sec, "limits")) {
		NUM("limits", "priority_ceiling", XS_PRIORITY_MIN, XS_PRIORITY_MAX,
		    c->priority_ceiling)
		return add_uid_limit(c, name, v);
	}
#undef NUM
	return -ENOENT;
}

static int config_ini_key(void *user, const char *sec, const char *name,
		       const char *value)
{
	struct parse_state *ps = user;
	char key[128];
	int rc;

	snprintf(key, sizeof(key), "%s", name);
	rc = apply_key(ps->c, sec, key, value);
	if (rc == 0)
		return 1;
	snprintf(ps->err, ps->errlen, "%s key [%s] %s%s%s",
		 rc == -ENOENT ? "unknown" : "bad value for", sec, name,
		 rc == -ENOENT ? "" : " = ", rc == -ENOENT ? "" : value);
	ps->rc = rc == -ENOMEM ? rc : -EINVAL;
	return 0;
}

void xsd_config_defaults(struct xsd_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->socket, IPC_DEFAULT_SOCKET);
	strcpy(c->control_socket, IPC_DEFAULT_CONTROL);
	strcpy(c->control_group, "xsched");
	c->max_clients = 1024;
	c->max_clients_per_uid = 256;
	c->max_queues_per_client = 64;
	c->max_message_size = IPC_MSG_MAX;
	strcpy(c->policy, "hpf");
	c->pconf.size = sizeof(c->pconf);
	c->starvation_period_ns = 1000000000ull;
	c->contention_window = XSD_CONTENTION_WINDOW;
}

int xsd_config_load(const char *path, bool required, struct xsd_config *c,
		    char *err, size_t errlen)
{
	struct parse_state ps = { .c = c, .err = err, .errlen = errlen };
	FILE *f = fopen(path, "r");
	int line;

	if (!f) {
		if (errno == ENOENT && !required)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	line = ini_parse_file(f, config_ini_key, &ps);
	fclose(f);
	if (line != 0) {
		char what[256];

		snprintf(what, sizeof(what), "%s", ps.rc ? err : "syntax error");
		snprintf(err, errlen, "%s:%d: %s", path, line, what);
		return ps.rc ? ps.rc : -EINVAL;
	}
	return 0;
}

int32_t xsd_config_ceiling(const struct xsd_config *c, uid_t uid)
{
	size_t i;

	if (uid == 0)
		return XS_PRIORITY_MAX;
	for (i = 0; i < c->n_uid_limits; i++)
		if (c->uid_limits[i].uid == uid)
			return c->uid_limits[i].priority_ceiling;
	return c->priority_ceiling;
}

void xsd_config_fini(struct xsd_config *c)
{
	free(c->uid_limits);
	c->uid_limits = NULL;
	c->n_uid_limits = 0;
}
