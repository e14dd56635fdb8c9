/*
 * The verbs of xschedctl that change or export the daemon's state: set,
 * policy and metrics.
 *
 * Values are validated here with the range checks the daemon applies
 * (ipc_knob_valid()), before connecting, so a usage error never reaches
 * the daemon; what only the daemon knows (whether a pid has queues, which
 * policies it can load, what the caller may do) comes back as an errno
 * that is reported with the request it answers.
 */
#include "xschedctl.h"
#include "base/compiler.h"
#include "base/size.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { CTL_OPT_PID = CTL_OPT_VERB, CTL_OPT_QUEUE };

/* How a key's value is written. */
enum ctl_unit {
	CTL_INT,                /* an integer */
	CTL_US,                 /* microseconds, unit suffixes allowed */
	CTL_BYTES,              /* a size (base/size.h), or none */
};

struct ctl_key {
	const char *name;
	uint32_t key;           /* enum ipc_key */
	enum ctl_unit unit;
	const char *range;      /* for messages; the check is ipc_knob_valid() */
};

static const struct ctl_key ctl_keys[] = {
	{ "priority", IPC_KEY_PRIORITY, CTL_INT, "-100..100" },
	{ "share", IPC_KEY_SHARE, CTL_INT, "0..1000000" },
	{ "deadline", IPC_KEY_DEADLINE_US, CTL_US, "0..3600000000 us" },
	{ "laxity", IPC_KEY_LAXITY_US, CTL_US, "0..3600000000 us" },
	{ "threshold", IPC_KEY_THRESHOLD, CTL_INT, "1..1024" },
	{ "batch", IPC_KEY_BATCH, CTL_INT, "1..1024" },
	{ "budget", IPC_KEY_BUDGET_US, CTL_US, "1..10000000 us, or -1 for none" },
	{ "level", IPC_KEY_LEVEL, CTL_INT, "1..3" },
	{ "memory-limit", IPC_KEY_MEMORY_LIMIT, CTL_BYTES, "a size per device, or none" },
};

/* @s as @unit says into *@out. */
static bool ctl_parse_value(enum ctl_unit unit, const char *s, int64_t *out)
{
	uint64_t bytes;

	switch (unit) {
	case CTL_US:
		return ctl_parse_us(s, out);
	case CTL_BYTES:
		if (!strcmp(s, "none")) {
			*out = 0;
			return true;
		}
		if (size_parse(s, &bytes) < 0 || !bytes || bytes > INT64_MAX)
			return false;
		*out = (int64_t)bytes;
		return true;
	default:
		return ctl_parse_int(s, out);
	}
}

static const char *const ctl_unit_help[] = {
	[CTL_INT] = " (an integer)",
	[CTL_US] = " (microseconds, or a number with us, ms or s)",
	[CTL_BYTES] = " (a size above zero such as 8G or 512MiB, or none)",
};

/*
 * After `set level`: a queue whose device offers less than @asked runs at
 * the highest level it has; say which, so that nobody believes in Lv3 on
 * a Lv1 device. Listing failures are not the set's: exit 0 regardless.
 */
static int ctl_report_level(const struct ctl *ctl, struct ipc_client *c, uint32_t target,
			    uint64_t id, int64_t asked)
{
	struct ipc_queue_rec *recs = NULL;
	size_t n = 0, i;

	if (ipc_client_list(c, &recs, &n) < 0)
		return CTL_EXIT_OK;
	for (i = 0; i < n; i++) {
		const struct ipc_queue_rec *r = &recs[i];

		if (target == IPC_TARGET_PID ? (uint64_t)r->pid != id : r->queue_id != id)
			continue;
		if ((int64_t)r->level < asked)
			ctl_warn(ctl, "queue %llu (pid %d) runs at level %u, not %lld: its device "
				 "supports up to level %u", (unsigned long long)r->queue_id, r->pid,
				 r->level, (long long)asked, r->level_max);
	}
	free(recs);
	return CTL_EXIT_OK;
}

int ctl_set(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "output", 'o', true, CTL_OPT_OUTPUT },
		{ "pid", 'p', true, CTL_OPT_PID },
		{ "queue", 'q', true, CTL_OPT_QUEUE },
		{ NULL, 0, false, 0 },
	};
	const char *val, *pos[2] = { NULL, NULL }, *pid_s = NULL, *queue_s = NULL;
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v,
			      .pos = pos, .max_pos = 2 };
	const struct ctl_key *k = NULL;
	struct ipc_client c;
	int64_t value, id = 0;
	int32_t pid = 0;
	char what[128];
	int npos = 0, opt, rc;
	size_t i;

	while ((opt = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		switch (opt) {
		case CTL_OPT_PID:
			pid_s = val;
			break;
		case CTL_OPT_QUEUE:
			queue_s = val;
			break;
		default:
			rc = ctl_verb_opt(ctl, &a, opt, val);
			if (rc >= 0)
				return rc;
		}
	}
	npos = a.npos;
	if (npos < 2)
		return ctl_usage_error(v, npos ? "missing value" : "missing key and value");
	for (i = 0; i < ARRAY_SIZE(ctl_keys); i++)
		if (strcmp(pos[0], ctl_keys[i].name) == 0)
			k = &ctl_keys[i];
	if (!k)
		return ctl_usage_error(v, "unknown key '%s' (priority, share, deadline, laxity, "
				       "threshold, batch, budget, level or memory-limit)", pos[0]);
	if (!ctl_parse_value(k->unit, pos[1], &value))
		return ctl_usage_error(v, "invalid %s '%s'%s", k->name, pos[1],
				       ctl_unit_help[k->unit]);
	if (!ipc_knob_valid(k->key, value))
		return ctl_usage_error(v, "%s %s is out of range (%s)", k->name, pos[1], k->range);
	if (!pid_s == !queue_s)
		return ctl_usage_error(v, "give exactly one of --pid PID and --queue ID");
	if (k->key == IPC_KEY_MEMORY_LIMIT && !pid_s)
		return ctl_usage_error(v, "memory-limit is a process's: give --pid PID");
	if (pid_s && !ctl_parse_pid(pid_s, &pid))
		return ctl_usage_error(v, "invalid pid '%s'", pid_s);
	if (pid_s)
		id = pid;
	if (queue_s && (!ctl_parse_int(queue_s, &id) || id < 0))
		return ctl_usage_error(v, "invalid queue id '%s'", queue_s);

	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_set(&c, pid_s ? IPC_TARGET_PID : IPC_TARGET_QUEUE, (uint64_t)id, k->key,
			    value);
	snprintf(what, sizeof(what), "cannot set %s of %s %lld", k->name,
		 pid_s ? "pid" : "queue", (long long)id);
	if (rc == -ESRCH || rc == -ENOENT) {
		ctl_err(ctl, "cannot set %s: %s %lld", k->name,
			k->key == IPC_KEY_MEMORY_LIMIT ? "no process known to xschedd with pid" :
			pid_s ? "no registered queue of pid" : "no queue", (long long)id);
		rc = CTL_EXIT_ERROR;
	} else if (rc < 0 && c.why == IPC_WHY_CEILING) {
		ctl_err(ctl, "%s: priority %lld is above your priority ceiling (%lld); only "
			"root or the group xsched may set more", what, (long long)value,
			(long long)c.limit);
		rc = CTL_EXIT_DENIED;
	} else if (rc < 0 && c.why == IPC_WHY_MEMORY_CEILING) {
		char cap[SIZE_TEXT];

		ctl_err(ctl, "%s: the memory limit of your processes may be at most %s per "
			"device (memory_limit of your uid in xschedd.conf); only root or the "
			"group xsched may set more, or none", what,
			size_format((uint64_t)c.limit, cap, sizeof(cap)));
		rc = CTL_EXIT_DENIED;
	} else if (rc < 0 && c.why == IPC_WHY_THRESHOLD) {
		ctl_err(ctl, "%s: batch %lld is above the queue's threshold (%lld); a batch is "
			"at most the threshold (set the threshold first)", what, (long long)value,
			(long long)c.limit);
		rc = CTL_EXIT_ERROR;
	} else if (rc < 0) {
		rc = ctl_fail(ctl, &c, rc, what);
	} else if (k->key == IPC_KEY_LEVEL) {
		rc = ctl_report_level(ctl, &c, pid_s ? IPC_TARGET_PID : IPC_TARGET_QUEUE,
				      (uint64_t)id, value);
	}
	ipc_client_close(&c);
	return rc;
}

/* --- policy ------------------------------------------------------------ */

#define CTL_BUILTIN_POLICIES "hpf, hhpf, bandwidth, edf, laxity, fair"

/*
 * Checks the argument of `policy set`: a name of letters, digits, '-' and
 * '_', or a path; a relative path is made absolute (the daemon has another
 * working directory). Writes the name to send into @out.
 */
static int ctl_policy_name(const struct ctl_verb *v, const char *arg, char *out, size_t len)
{
	char *abs;
	size_t i;

	if (!strchr(arg, '/')) {
		for (i = 0; arg[i]; i++)
			if (!(arg[i] == '-' || arg[i] == '_' || (arg[i] >= '0' && arg[i] <= '9') ||
			      (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z')))
				return ctl_usage_error(v, "invalid policy name '%s' (built-in: "
						       CTL_BUILTIN_POLICIES ", or a path to a .so)",
						       arg);
		if (i == 0 || i >= len)
			return ctl_usage_error(v, "invalid policy name '%s'", arg);
		memcpy(out, arg, i + 1);
		return CTL_EXIT_OK;
	}
	abs = arg[0] == '/' ? strdup(arg) : realpath(arg, NULL);
	if (!abs) {
		if (errno == ENOMEM)
			return ctl_usage_error(v, "out of memory");
		return ctl_usage_error(v, "cannot resolve '%s': %s", arg, strerror(errno));
	}
	if (strlen(abs) >= len) {
		ctl_usage_error(v, "policy path too long (at most %zu bytes): %s", len - 1, abs);
		free(abs);
		return CTL_EXIT_ERROR;
	}
	strcpy(out, abs);
	free(abs);
	return CTL_EXIT_OK;
}

static int ctl_policy_set_failed(const struct ctl *ctl, const struct ipc_client *c, int err,
				 const char *name)
{
	char what[IPC_POLICY_LEN + 64];

	snprintf(what, sizeof(what), "cannot switch to policy '%s'", name);
	switch (-err) {
	case ENOENT:
		if (name[0] == '/' && c->error[0])
			ctl_err(ctl, "%s: %s", what, c->error);
		else if (name[0] == '/')
			ctl_err(ctl, "%s: the daemon cannot open the module", what);
		else
			ctl_err(ctl, "%s: unknown policy (built-in: " CTL_BUILTIN_POLICIES ")",
				what);
		return CTL_EXIT_ERROR;
	case ENOEXEC:
	case EINVAL:
	case EPROTO:
		/* The daemon says what is wrong with the module (ops versions...). */
		if (c->error[0])
			ctl_err(ctl, "%s: %s", what, c->error);
		else
			ctl_err(ctl, "%s: not a valid xsched policy (%s)", what, ctl_strerror(err));
		return CTL_EXIT_ERROR;
	default:
		return ctl_fail(ctl, c, err, what);
	}
}

int ctl_policy(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "output", 'o', true, CTL_OPT_OUTPUT },
		{ NULL, 0, false, 0 },
	};
	const char *val, *pos[3] = { NULL, NULL, NULL };
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v,
			      .pos = pos, .max_pos = 3 };
	char name[IPC_POLICY_LEN];
	struct ipc_client c;
	bool set;
	int npos = 0, id, rc;

	while ((id = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		rc = ctl_verb_opt(ctl, &a, id, val);
		if (rc >= 0)
			return rc;
	}
	npos = a.npos;
	if (npos == 0)
		return ctl_usage_error(v, "missing 'get' or 'set'");
	if (strcmp(pos[0], "get") == 0) {
		if (npos > 1)
			return ctl_usage_error(v, "unexpected argument '%s'", pos[1]);
		set = false;
	} else if (strcmp(pos[0], "set") == 0) {
		if (npos != 2)
			return ctl_usage_error(v, npos == 1 ? "missing policy name" :
						      "policy set takes one name");
		rc = ctl_policy_name(v, pos[1], name, sizeof(name));
		if (rc)
			return rc;
		set = true;
	} else {
		return ctl_usage_error(v, "unknown policy command '%s' (get or set)", pos[0]);
	}

	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	if (set) {
		rc = ipc_client_policy_set(&c, name);
		if (rc < 0)
			rc = ctl_policy_set_failed(ctl, &c, rc, name);
	} else {
		rc = ipc_client_policy_get(&c, name, sizeof(name));
		if (rc < 0) {
			rc = ctl_fail(ctl, &c, rc, "cannot get the policy");
		} else if (ctl->out == CTL_OUT_JSON) {
			struct ctl_json j;

			ctl_json_init(&j, stdout);
			ctl_json_open(&j, NULL, '{');
			ctl_json_str(&j, "policy", name, sizeof(name));
			ctl_json_close(&j, '}');
		} else {
			char shown[IPC_POLICY_LEN];

			printf("%s\n", ctl_fmt_name(shown, sizeof(shown), name, sizeof(name)));
		}
	}
	ipc_client_close(&c);
	return rc;
}

/* --- metrics ----------------------------------------------------------- */

int ctl_metrics(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	/* -o is parsed like everywhere, but the exposition format is the only
	 * output: -o json is refused rather than silently ignored. */
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "output", 'o', true, CTL_OPT_OUTPUT },
		{ NULL, 0, false, 0 },
	};
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	struct ipc_client c;
	const char *val;
	char *text;
	int id, rc;

	while ((id = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		rc = ctl_verb_opt(ctl, &a, id, val);
		if (rc >= 0)
			return rc;
	}
	if (ctl->out == CTL_OUT_JSON)
		return ctl_usage_error(v, "metrics are printed in the Prometheus text format "
				       "only: -o json is not supported");
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_metrics(&c, &text);
	if (rc < 0) {
		rc = ctl_fail(ctl, &c, rc, "cannot get metrics");
	} else {
		fputs(text, stdout);
		free(text);
	}
	ipc_client_close(&c);
	return rc;
}

