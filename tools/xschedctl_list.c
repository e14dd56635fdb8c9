/*
 * The listing verbs of xschedctl: status and list, and the formatting of
 * queue records that `top` shares.
 *
 * Each verb parses and validates its whole command line first, then
 * connects, makes its requests through the synchronous IPC client and
 * prints only once everything succeeded, so a failing call writes nothing
 * to stdout and `-o json` output is either complete or absent. Records
 * are copied from the daemon as they are; their strings may lack a NUL
 * and come from clients, so they are printed only through the bounded,
 * escaping helpers of xschedctl_fmt.c.
 */
#include "xschedctl.h"
#include "base/compiler.h"
#include "base/size.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* [enforce] devices, by the status reply's enforce_mode. */
static const char *const ctl_enforce_modes[] = { "off", "audit", "on" };

enum { CTL_OPT_PID = CTL_OPT_VERB };

static const struct ctl_opt ctl_listing_opts[] = {
	CTL_COMMON_OPTS,
	{ "output", 'o', true, CTL_OPT_OUTPUT },
	{ "pid", 'p', true, CTL_OPT_PID },
	{ NULL, 0, false, 0 },
};

int ctl_simple_args(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv,
			   int32_t *pid)
{
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	const char *val;
	int id, rc;

	while ((id = ctl_next(&a, ctl_listing_opts, &val)) != CTL_OPT_END) {
		if (id == CTL_OPT_PID) {
			if (!pid)
				return ctl_usage_error(v, "unknown option '--pid'");
			if (!ctl_parse_pid(val, pid))
				return ctl_usage_error(v, "invalid pid '%s'", val);
		} else if ((rc = ctl_verb_opt(ctl, &a, id, val)) >= 0) {
			return rc;
		}
	}
	return -1;
}

/* --- status ------------------------------------------------------------ */

void ctl_json_status(struct ctl_json *j, const char *key, const struct ctl *ctl,
		     const struct ipc_client *c, const struct ipc_status_reply *st)
{
	ctl_json_open(j, key, '{');
	ctl_json_bool(j, "running", true);
	ctl_json_uint(j, "protocol", st->version);
	ctl_json_str(j, "policy", st->policy, sizeof(st->policy));
	ctl_json_uint(j, "clients", st->clients);
	ctl_json_uint(j, "queues", st->queues);
	ctl_json_uint(j, "ready", st->ready);
	ctl_json_uint(j, "unscheduled", st->unscheduled);
	ctl_json_uint(j, "max_queues_per_client", st->max_queues_per_client);
	ctl_json_uint(j, "uptime_ns", st->uptime_ns);
	ctl_json_uint(j, "decisions", st->decisions);
	ctl_json_uint(j, "events", st->events);
	ctl_json_uint(j, "cpu_ns", st->cpu_ns);
	ctl_json_uint(j, "starvation_guard_pct", st->guard_pct);
	ctl_json_uint(j, "starvation_period_ms", st->guard_period_ms);
	ctl_json_uint(j, "refused_connections", st->refused);
	if (st->reloads) {
		ctl_json_open(j, "last_reload", '{');
		ctl_json_bool(j, "ok", st->reload_status == 0);
		ctl_json_str(j, "error", st->reload_error, sizeof(st->reload_error));
		ctl_json_uint(j, "age_ns", st->reload_age_ns);
		ctl_json_uint(j, "reloads", st->reloads);
		ctl_json_close(j, '}');
	} else {
		ctl_json_null(j, "last_reload");
	}
	ctl_json_open(j, "device_enforcement", '{');
	ctl_json_str(j, "mode", ctl_enforce_modes[st->enforce_mode < 3 ? st->enforce_mode : 0], 8);
	ctl_json_bool(j, "running", st->enforce_hook[0] != '\0');
	ctl_json_str(j, "hook", st->enforce_hook, sizeof(st->enforce_hook));
	ctl_json_str(j, "fail", st->enforce_closed ? "closed" : "open", 8);
	ctl_json_int(j, "error", st->enforce_status);
	ctl_json_uint(j, "refused_processes", st->enforce_listed);
	ctl_json_close(j, '}');
	ctl_json_str(j, "access", c->control ? "control" : "client", 8);
	ctl_json_str(j, "socket", ctl_connected_path(ctl, c), PATH_MAX);
	ctl_json_close(j, '}');
}

/* "on (cgroup/dev, fail = open), 2 processes refused", "off", "on: unavailable (...)". */
static void ctl_print_enforce(const struct ipc_status_reply *st)
{
	const char *mode = ctl_enforce_modes[st->enforce_mode < 3 ? st->enforce_mode : 0];
	char hook[sizeof(st->enforce_hook) * 4];

	if (!st->enforce_mode)
		printf("  Devices:    not enforced\n");
	else if (!st->enforce_hook[0])
		printf("  Devices:    enforcement %s configured but unavailable: %s (xschedd's log "
		       "says why)\n", mode, strerror(-st->enforce_status));
	else
		printf("  Devices:    enforced, %s (%s, fail = %s), %u process%s %s\n", mode,
		       ctl_fmt_name(hook, sizeof(hook), st->enforce_hook, sizeof(st->enforce_hook)),
		       st->enforce_closed ? "closed" : "open", st->enforce_listed,
		       st->enforce_listed == 1 ? "" : "es",
		       st->enforce_mode == 2 ? "refused" : "that would be refused");
}

/* "ok, 3m ago", "failed: <reason> (12.0s ago)", "none". */
static void ctl_print_reload(const struct ipc_status_reply *st)
{
	char age[32], why[IPC_REASON_LEN];

	if (!st->reloads) {
		printf("  Last reload: none\n");
		return;
	}
	ctl_fmt_ns(age, sizeof(age), st->reload_age_ns, false);
	if (st->reload_status == 0)
		printf("  Last reload: ok (%s ago)\n", age);
	else
		printf("  Last reload: failed: %s (%s ago; the previous configuration runs)\n",
		       ctl_fmt_name(why, sizeof(why), st->reload_error, sizeof(st->reload_error)),
		       age);
}

int ctl_status(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ipc_status_reply st;
	struct ipc_client c;
	char up[32], cpu[32], name[IPC_POLICY_LEN], over[96] = "";
	int rc;

	rc = ctl_simple_args(ctl, v, argc, argv, NULL);
	if (rc >= 0)
		return rc;
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_status(&c, &st);
	if (rc < 0) {
		rc = ctl_fail(ctl, &c, rc, "cannot get the daemon's status");
		ipc_client_close(&c);
		return rc;
	}
	if (ctl->out == CTL_OUT_JSON) {
		struct ctl_json j;

		ctl_json_init(&j, stdout);
		ctl_json_status(&j, NULL, ctl, &c, &st);
	} else {
		if (st.unscheduled)
			snprintf(over, sizeof(over),
				 "; %u unscheduled: over max_queues_per_client = %u",
				 st.unscheduled, st.max_queues_per_client);
		printf("xschedd is running\n"
		       "  Protocol:   %u\n"
		       "  Policy:     %s\n"
		       "  Clients:    %u\n"
		       "  Queues:     %u (%u ready%s)\n"
		       "  Uptime:     %s\n"
		       "  Decisions:  %llu\n"
		       "  Events:     %llu\n"
		       "  CPU time:   %s\n"
		       "  Access:     %s (%s)\n",
		       st.version, ctl_fmt_name(name, sizeof(name), st.policy, sizeof(st.policy)),
		       st.clients, st.queues, st.ready, over,
		       ctl_fmt_uptime(up, sizeof(up), st.uptime_ns),
		       (unsigned long long)st.decisions, (unsigned long long)st.events,
		       ctl_fmt_ns(cpu, sizeof(cpu), st.cpu_ns, false),
		       c.control ? "control socket, all queues" :
				   "client socket, own processes only",
		       ctl_connected_path(ctl, &c));
		if (st.guard_pct)
			printf("  Starvation: a queue starved %u ms runs %u%% of the next\n",
			       st.guard_period_ms, st.guard_pct);
		else
			printf("  Starvation: guard off\n");
		if (st.refused)
			printf("  Refused:    %llu connections for want of file descriptors\n",
			       (unsigned long long)st.refused);
		ctl_print_enforce(&st);
		ctl_print_reload(&st);
	}
	ipc_client_close(&c);
	return CTL_EXIT_OK;
}

/* --- list -------------------------------------------------------------- */

const char *ctl_qstate(const struct ipc_queue_rec *r)
{
	if (r->state == IPC_QS_READY)
		return r->running ? "running" : "suspended";
	return r->running ? "idle" : "idle/susp";
}

static int ctl_cmp_pid_queue(const void *pa, const void *pb)
{
	const struct ipc_queue_rec *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->queue_id < b->queue_id ? -1 : a->queue_id > b->queue_id;
}

/* Keeps the records of @pid (0: all); returns the new count. */
size_t ctl_filter_pid(struct ipc_queue_rec *recs, size_t n, int32_t pid)
{
	size_t i, k = 0;

	if (!pid)
		return n;
	for (i = 0; i < n; i++)
		if (recs[i].pid == pid)
			recs[k++] = recs[i];
	return k;
}

void ctl_json_queue(struct ctl_json *j, const struct ipc_queue_rec *r)
{
	ctl_json_uint(j, "queue", r->queue_id);
	ctl_json_uint(j, "client", r->client_id);
	ctl_json_int(j, "pid", r->pid);
	ctl_json_uint(j, "uid", r->uid);
	ctl_json_str(j, "command", r->comm, sizeof(r->comm));
	ctl_json_str(j, "device", r->device, sizeof(r->device));
	ctl_json_uint(j, "device_domain", r->domain);
	ctl_json_bool(j, "device_verified", r->id_kind != IPC_ID_UNVERIFIED);
	ctl_json_str(j, "backend", r->backend, sizeof(r->backend));
	ctl_json_uint(j, "level", r->level);
	ctl_json_str(j, "state", r->state == IPC_QS_READY ? "ready" : "idle", 8);
	ctl_json_bool(j, "running", r->running);
	ctl_json_int(j, "priority", r->hint[IPC_KEY_PRIORITY]);
	ctl_json_int(j, "effective_priority", r->eff_priority);
	ctl_json_int(j, "share", r->hint[IPC_KEY_SHARE]);
	ctl_json_int(j, "deadline_us", r->hint[IPC_KEY_DEADLINE_US]);
	ctl_json_int(j, "laxity_us", r->hint[IPC_KEY_LAXITY_US]);
	ctl_json_uint(j, "threshold", r->threshold);
	ctl_json_uint(j, "batch", r->batch);
	ctl_json_int(j, "budget_us", r->budget_ns < 0 ? -1 : r->budget_ns / 1000);
	ctl_json_uint(j, "submitted", r->submitted);
	ctl_json_uint(j, "completed", r->completed);
	ctl_json_uint(j, "preemptions", r->preemptions);
	ctl_json_uint(j, "exec_ns", r->exec_ns);
	ctl_json_uint(j, "task_p99_ns", r->task_p99_ns);
	ctl_json_uint(j, "preempt_p99_ns", r->preempt_p99_ns);
	if (r->cpu_wait_p99_ns)
		ctl_json_uint(j, "cpu_wait_p99_ns", r->cpu_wait_p99_ns);
	else
		ctl_json_null(j, "cpu_wait_p99_ns");
	ctl_json_uint(j, "memory_bytes", r->mem_used);
	ctl_json_uint(j, "memory_evicted_bytes", r->mem_evicted);
	if (r->mem_limit)
		ctl_json_uint(j, "memory_limit_bytes", r->mem_limit);
	else
		ctl_json_null(j, "memory_limit_bytes");
	ctl_json_uint(j, "level_max", r->level_max);
	if (r->level_why[0])
		ctl_json_str(j, "level_why", r->level_why, sizeof(r->level_why));
	else
		ctl_json_null(j, "level_why");
	ctl_json_uint(j, "wait_ns", r->wait_ns);
	ctl_json_uint(j, "guard_runs", r->guard_runs);
	if (r->nspid > 0)
		ctl_json_int(j, "nspid", r->nspid);
	else
		ctl_json_null(j, "nspid");
	if (r->container[0])
		ctl_json_str(j, "container_id", r->container, sizeof(r->container));
	else
		ctl_json_null(j, "container_id");
}

void ctl_wait_cells(struct ctl_table *t, int col, const struct ipc_queue_rec *r)
{
	char buf[32];

	ctl_table_cell(t, col, "%s", ctl_fmt_ns(buf, sizeof(buf), r->wait_ns, true));
	if (r->guard_runs)
		ctl_table_cell(t, col + 1, "%llu", (unsigned long long)r->guard_runs);
	else
		ctl_table_cell(t, col + 1, "-");
}

/* "5", or "10*" when the effective priority was inherited. */
void ctl_prio_cell(struct ctl_table *t, int col, const struct ipc_queue_rec *r)
{
	if (r->eff_priority != r->hint[IPC_KEY_PRIORITY])
		ctl_table_cell(t, col, "%d*", r->eff_priority);
	else
		ctl_table_cell(t, col, "%d", r->eff_priority);
}

/* "cuda:0", or "cuda:0 (unverified)" for a device known by that name only. */
void ctl_device_cell(struct ctl_table *t, int col, const struct ipc_queue_rec *r)
{
	char buf[CTL_CELL_LEN];

	if (r->id_kind == IPC_ID_UNVERIFIED)
		ctl_table_cell(t, col, "%s (unverified)",
			       ctl_fmt_name(buf, CTL_CELL_LEN - 13, r->device, sizeof(r->device)));
	else
		ctl_table_cell(t, col, "%s",
			       ctl_fmt_name(buf, sizeof(buf), r->device, sizeof(r->device)));
}

/* "1.5 GiB", "1.5 GiB/8 GiB" under a limit, "-" for nothing held; "!" after
 * it when some is evicted to the host (memory preemption). */
void ctl_mem_cell(struct ctl_table *t, int col, uint64_t used, uint64_t limit, uint64_t evicted)
{
	char a[SIZE_TEXT], b[SIZE_TEXT];
	const char *away = evicted ? "!" : "";

	if (limit)
		ctl_table_cell(t, col, "%s/%s%s", size_format(used, a, sizeof(a)),
			       size_format(limit, b, sizeof(b)), away);
	else if (used)
		ctl_table_cell(t, col, "%s%s", size_format(used, a, sizeof(a)), away);
	else
		ctl_table_cell(t, col, "-");
}

static void ctl_us_cell(struct ctl_table *t, int col, int64_t us)
{
	char buf[32];

	ctl_table_cell(t, col, "%s",
		       us <= 0 ? "-" : ctl_fmt_ns(buf, sizeof(buf), (uint64_t)us * 1000, true));
}

static int ctl_print_list(const struct ipc_queue_rec *recs, size_t n)
{
	static const char *const head[] = {
		"QUEUE", "PID", "UID", "COMMAND", "DEVICE", "LV", "STATE", "WAITED", "GUARD",
		"PRIO", "SHARE", "DEADLINE", "LAXITY", "SUBMITTED", "COMPLETED", "PREEMPT", "P99",
		"MEM", "CONTAINER", "NSPID",
	};
	struct ctl_table t;
	char buf[CTL_CELL_LEN];
	bool contained = false;
	size_t i;

	if (n == 0) {
		printf("No queues.\n");
		return 0;
	}
	/* The container columns only when a process is in one (or in a pid namespace). */
	for (i = 0; i < n; i++)
		contained = contained || recs[i].container[0] || recs[i].nspid > 0;
	/* Right-aligned: QUEUE PID UID LV WAITED GUARD PRIO SHARE DEADLINE..MEM NSPID. */
	ctl_table_init(&t, ARRAY_SIZE(head) - (contained ? 0 : 2), head, 0xbffa7);
	for (i = 0; i < n; i++) {
		const struct ipc_queue_rec *r = &recs[i];

		if (!ctl_table_row(&t)) {
			ctl_table_fini(&t);
			return -ENOMEM;
		}
		ctl_table_cell(&t, 0, "%llu", (unsigned long long)r->queue_id);
		ctl_table_cell(&t, 1, "%d", r->pid);
		ctl_table_cell(&t, 2, "%u", r->uid);
		ctl_table_cell(&t, 3, "%s",
			       ctl_fmt_name(buf, sizeof(buf), r->comm, sizeof(r->comm)));
		ctl_device_cell(&t, 4, r);
		/* A level below the device's with a reason: the reason follows. */
		ctl_table_cell(&t, 5, "%u%s", r->level,
			       r->level < r->level_max && r->level_why[0] ? "*" : "");
		ctl_table_cell(&t, 6, "%s", ctl_qstate(r));
		ctl_wait_cells(&t, 7, r);
		ctl_prio_cell(&t, 9, r);
		if (r->hint[IPC_KEY_SHARE] > 0)
			ctl_table_cell(&t, 10, "%lld", (long long)r->hint[IPC_KEY_SHARE]);
		else
			ctl_table_cell(&t, 10, "-");
		ctl_us_cell(&t, 11, r->hint[IPC_KEY_DEADLINE_US]);
		ctl_us_cell(&t, 12, r->hint[IPC_KEY_LAXITY_US]);
		ctl_table_cell(&t, 13, "%llu", (unsigned long long)r->submitted);
		ctl_table_cell(&t, 14, "%llu", (unsigned long long)r->completed);
		ctl_table_cell(&t, 15, "%llu", (unsigned long long)r->preemptions);
		ctl_table_cell(&t, 16, "%s", ctl_fmt_ns(buf, sizeof(buf), r->task_p99_ns, true));
		ctl_mem_cell(&t, 17, r->mem_used, r->mem_limit, r->mem_evicted);
		if (!contained)
			continue;
		/* The short id, as `podman ps` and `crictl ps` print it. */
		ctl_table_cell(&t, 18, "%.12s", r->container[0] ? r->container : "-");
		if (r->nspid > 0)
			ctl_table_cell(&t, 19, "%d", r->nspid);
		else
			ctl_table_cell(&t, 19, "-");
	}
	ctl_table_print(&t, stdout);
	ctl_table_fini(&t);
	for (i = 0; i < n; i++)
		if (recs[i].level < recs[i].level_max && recs[i].level_why[0])
			printf("* queue %llu: level %u of %u: %s\n",
			       (unsigned long long)recs[i].queue_id, recs[i].level,
			       recs[i].level_max, recs[i].level_why);
	for (i = 0; i < n; i++) {
		char a[SIZE_TEXT];

		if (recs[i].mem_evicted)
			printf("! pid %d: %s of its device memory evicted for a process of "
			       "higher priority; its queues wait until it can come back\n",
			       recs[i].pid, size_format(recs[i].mem_evicted, a, sizeof(a)));
	}
	return 0;
}

int ctl_list(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ipc_queue_rec *recs = NULL;
	struct ipc_client c;
	int32_t pid = 0;
	size_t n, i;
	int rc;

	rc = ctl_simple_args(ctl, v, argc, argv, &pid);
	if (rc >= 0)
		return rc;
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_list(&c, &recs, &n);
	if (rc < 0) {
		rc = ctl_fail(ctl, &c, rc, "cannot list queues");
		ipc_client_close(&c);
		return rc;
	}
	ipc_client_close(&c);
	n = ctl_filter_pid(recs, n, pid);
	qsort(recs, n, sizeof(*recs), ctl_cmp_pid_queue);
	if (ctl->out == CTL_OUT_JSON) {
		struct ctl_json j;

		ctl_json_init(&j, stdout);
		ctl_json_open(&j, NULL, '{');
		ctl_json_open(&j, "queues", '[');
		for (i = 0; i < n; i++) {
			ctl_json_open(&j, NULL, '{');
			ctl_json_queue(&j, &recs[i]);
			ctl_json_close(&j, '}');
		}
		ctl_json_close(&j, ']');
		ctl_json_close(&j, '}');
	} else if (ctl_print_list(recs, n) < 0) {
		rc = ctl_fail(ctl, NULL, -ENOMEM, "cannot list queues");
	}
	free(recs);
	return rc;
}

