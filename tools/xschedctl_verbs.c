/*
 * The verbs of xschedctl that talk to xschedd: status, list, top, set,
 * policy and metrics.
 *
 * Each verb parses and validates its whole command line first (value
 * ranges through ipc_knob_valid(), shared with the daemon), then connects,
 * makes its requests through the synchronous IPC client and prints only
 * once everything succeeded, so a failing call writes nothing to stdout
 * and `-o json` output is either complete or absent.
 */
#include "xschedctl.h"
#include "xsched/xsched.h"
#include "base/compiler.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CTL_NSEC 1000000000ull

/* Options of the listing verbs; the verb-specific ones follow CTL_OPT_VERB. */
enum {
	CTL_OPT_PID = CTL_OPT_VERB,
	CTL_OPT_QUEUE,
	CTL_OPT_BATCH,
	CTL_OPT_ITER,
	CTL_OPT_DELAY,
};

#define CTL_COMMON_OPTS \
	{ "help", 'h', false, CTL_OPT_HELP }, \
	{ "socket", 0, true, CTL_OPT_SOCKET }, \
	{ "control", 0, true, CTL_OPT_CONTROL }

static const struct ctl_opt ctl_listing_opts[] = {
	CTL_COMMON_OPTS,
	{ "output", 'o', true, CTL_OPT_OUTPUT },
	{ "pid", 'p', true, CTL_OPT_PID },
	{ NULL, 0, false, 0 },
};

/*
 * Parses the options of a verb that takes none of its own beyond --pid
 * (when @pid is not NULL) and no positional argument. Returns -1 to go on,
 * else the exit code to return (help printed, or usage error).
 */
static int ctl_simple_args(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv,
			   int32_t *pid)
{
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	const char *val;
	int64_t n;
	int id;

	while ((id = ctl_next(ctl, &a, ctl_listing_opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ERROR:
			return CTL_EXIT_ERROR;
		case CTL_OPT_HELP:
			return ctl_verb_help(v);
		case CTL_OPT_POS:
			return ctl_usage_error(v, "unexpected argument '%s'", val);
		case CTL_OPT_PID:
			if (!pid)
				return ctl_usage_error(v, "unknown option '--pid'");
			if (!ctl_parse_int(val, &n) || n < 1 || n > INT32_MAX)
				return ctl_usage_error(v, "invalid pid '%s'", val);
			*pid = (int32_t)n;
			break;
		default:
			if (!ctl_common_opt(ctl, id, val))
				return CTL_EXIT_ERROR;
		}
	}
	return -1;
}

/* --- status ------------------------------------------------------------ */

static void ctl_json_status(struct ctl_json *j, const char *key, const struct ctl *ctl,
			    const struct ipc_client *c, const struct ipc_status_reply *st)
{
	ctl_json_open(j, key, '{');
	ctl_json_bool(j, "running", true);
	ctl_json_uint(j, "protocol", st->version);
	ctl_json_str(j, "policy", st->policy, sizeof(st->policy));
	ctl_json_uint(j, "clients", st->clients);
	ctl_json_uint(j, "queues", st->queues);
	ctl_json_uint(j, "ready", st->ready);
	ctl_json_uint(j, "uptime_ns", st->uptime_ns);
	ctl_json_uint(j, "decisions", st->decisions);
	ctl_json_uint(j, "events", st->events);
	ctl_json_uint(j, "cpu_ns", st->cpu_ns);
	ctl_json_str(j, "access", c->control ? "control" : "client", 8);
	ctl_json_str(j, "socket", ctl_connected_path(ctl, c), PATH_MAX);
	ctl_json_close(j, '}');
}

int ctl_status(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ipc_status_reply st;
	struct ipc_client c;
	char up[32], cpu[32], name[IPC_POLICY_LEN];
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
		printf("xschedd is running\n"
		       "  Protocol:   %u\n"
		       "  Policy:     %s\n"
		       "  Clients:    %u\n"
		       "  Queues:     %u (%u ready)\n"
		       "  Uptime:     %s\n"
		       "  Decisions:  %llu\n"
		       "  Events:     %llu\n"
		       "  CPU time:   %s\n"
		       "  Access:     %s (%s)\n",
		       st.version, ctl_fmt_name(name, sizeof(name), st.policy, sizeof(st.policy)),
		       st.clients, st.queues, st.ready,
		       ctl_fmt_uptime(up, sizeof(up), st.uptime_ns),
		       (unsigned long long)st.decisions, (unsigned long long)st.events,
		       ctl_fmt_ns(cpu, sizeof(cpu), st.cpu_ns, false),
		       c.control ? "control socket, all queues" :
				   "client socket, own processes only",
		       ctl_connected_path(ctl, &c));
	}
	ipc_client_close(&c);
	return CTL_EXIT_OK;
}

/* --- list -------------------------------------------------------------- */

static const char *ctl_qstate(const struct ipc_queue_rec *r)
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
static size_t ctl_filter_pid(struct ipc_queue_rec *recs, size_t n, int32_t pid)
{
	size_t i, k = 0;

	if (!pid)
		return n;
	for (i = 0; i < n; i++)
		if (recs[i].pid == pid)
			recs[k++] = recs[i];
	return k;
}

static void ctl_json_queue(struct ctl_json *j, const struct ipc_queue_rec *r)
{
	ctl_json_uint(j, "queue", r->queue_id);
	ctl_json_uint(j, "client", r->client_id);
	ctl_json_int(j, "pid", r->pid);
	ctl_json_uint(j, "uid", r->uid);
	ctl_json_str(j, "command", r->comm, sizeof(r->comm));
	ctl_json_str(j, "device", r->device, sizeof(r->device));
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
}

/* "5", or "10*" when the effective priority was inherited. */
static void ctl_prio_cell(struct ctl_table *t, int col, const struct ipc_queue_rec *r)
{
	if (r->eff_priority != r->hint[IPC_KEY_PRIORITY])
		ctl_table_cell(t, col, "%d*", r->eff_priority);
	else
		ctl_table_cell(t, col, "%d", r->eff_priority);
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
		"QUEUE", "PID", "UID", "COMMAND", "DEVICE", "LV", "STATE", "PRIO", "SHARE",
		"DEADLINE", "LAXITY", "SUBMITTED", "COMPLETED", "PREEMPT", "P99",
	};
	struct ctl_table t;
	char buf[CTL_CELL_LEN];
	size_t i;

	if (n == 0) {
		printf("No queues.\n");
		return 0;
	}
	/* Right-aligned: QUEUE PID UID LV PRIO SHARE DEADLINE..P99. */
	ctl_table_init(&t, XS_ARRAY_SIZE(head), head, 0x7fa7);
	for (i = 0; i < n; i++) {
		const struct ipc_queue_rec *r = &recs[i];

		if (!ctl_table_row(&t)) {
			ctl_table_fini(&t);
			return -ENOMEM;
		}
		ctl_table_cell(&t, 0, "%llu", (unsigned long long)r->queue_id);
		ctl_table_cell(&t, 1, "%d", r->pid);
		ctl_table_cell(&t, 2, "%u", r->uid);
		ctl_table_cell(&t, 3, "%s", ctl_fmt_name(buf, sizeof(buf), r->comm, sizeof(r->comm)));
		ctl_table_cell(&t, 4, "%s",
			       ctl_fmt_name(buf, sizeof(buf), r->device, sizeof(r->device)));
		ctl_table_cell(&t, 5, "%u", r->level);
		ctl_table_cell(&t, 6, "%s", ctl_qstate(r));
		ctl_prio_cell(&t, 7, r);
		if (r->hint[IPC_KEY_SHARE] > 0)
			ctl_table_cell(&t, 8, "%lld", (long long)r->hint[IPC_KEY_SHARE]);
		else
			ctl_table_cell(&t, 8, "-");
		ctl_us_cell(&t, 9, r->hint[IPC_KEY_DEADLINE_US]);
		ctl_us_cell(&t, 10, r->hint[IPC_KEY_LAXITY_US]);
		ctl_table_cell(&t, 11, "%llu", (unsigned long long)r->submitted);
		ctl_table_cell(&t, 12, "%llu", (unsigned long long)r->completed);
		ctl_table_cell(&t, 13, "%llu", (unsigned long long)r->preemptions);
		ctl_table_cell(&t, 14, "%s", ctl_fmt_ns(buf, sizeof(buf), r->task_p99_ns, true));
	}
	ctl_table_print(&t, stdout);
	ctl_table_fini(&t);
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

/* --- top --------------------------------------------------------------- */

static volatile sig_atomic_t ctl_interrupted;

static void ctl_on_signal(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* One refresh of `top`: the records sorted by queue id, and when they were taken. */
struct ctl_snap {
	struct ipc_status_reply st;
	struct ipc_queue_rec *recs;
	size_t n;
	uint64_t mono_ns;
};

/* Rates of one queue since the previous snapshot; valid false for the first one. */
struct ctl_rate {
	bool valid;
	double done_per_s;
	double busy_pct;        /* device time of its commands / elapsed time */
};

static int ctl_cmp_queue(const void *pa, const void *pb)
{
	const struct ipc_queue_rec *a = pa, *b = pb;

	return a->queue_id < b->queue_id ? -1 : a->queue_id > b->queue_id;
}

static uint64_t ctl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * CTL_NSEC + (uint64_t)ts.tv_nsec;
}

static int ctl_snap_take(struct ipc_client *c, int32_t pid, struct ctl_snap *s)
{
	int rc = ipc_client_status(c, &s->st);

	if (rc < 0)
		return rc;
	rc = ipc_client_list(c, &s->recs, &s->n);
	if (rc < 0)
		return rc;
	s->mono_ns = ctl_mono_ns();
	s->n = ctl_filter_pid(s->recs, s->n, pid);
	qsort(s->recs, s->n, sizeof(*s->recs), ctl_cmp_queue);
	return 0;
}

static struct ctl_rate ctl_rate_of(const struct ctl_snap *prev, const struct ctl_snap *cur,
				   const struct ipc_queue_rec *r)
{
	struct ctl_rate rate = { 0 };
	const struct ipc_queue_rec *p;
	double dt;

	if (!prev || cur->mono_ns <= prev->mono_ns)
		return rate;
	dt = (double)(cur->mono_ns - prev->mono_ns) / 1e9;
	p = bsearch(r, prev->recs, prev->n, sizeof(*r), ctl_cmp_queue);
	rate.valid = true;
	/* A queue new since the last refresh counts from zero. */
	rate.done_per_s = (double)(r->completed - (p && p->completed <= r->completed ?
						     p->completed : 0)) / dt;
	rate.busy_pct = (double)(r->exec_ns - (p && p->exec_ns <= r->exec_ns ? p->exec_ns : 0)) /
			1e9 / dt * 100.0;
	return rate;
}

static void ctl_top_json(const struct ctl *ctl, const struct ipc_client *c,
			 const struct ctl_snap *prev, const struct ctl_snap *cur)
{
	struct ctl_json j;
	struct timespec now;
	size_t i;

	clock_gettime(CLOCK_REALTIME, &now);
	ctl_json_init(&j, stdout);
	ctl_json_open(&j, NULL, '{');
	ctl_json_uint(&j, "timestamp_ns", (uint64_t)now.tv_sec * CTL_NSEC + (uint64_t)now.tv_nsec);
	if (prev)
		ctl_json_double(&j, "interval_s", (double)(cur->mono_ns - prev->mono_ns) / 1e9, 3);
	else
		ctl_json_null(&j, "interval_s");
	ctl_json_status(&j, "status", ctl, c, &cur->st);
	ctl_json_open(&j, "queues", '[');
	for (i = 0; i < cur->n; i++) {
		struct ctl_rate rate = ctl_rate_of(prev, cur, &cur->recs[i]);

		ctl_json_open(&j, NULL, '{');
		ctl_json_queue(&j, &cur->recs[i]);
		if (rate.valid) {
			ctl_json_double(&j, "completed_per_s", rate.done_per_s, 1);
			ctl_json_double(&j, "busy_pct", rate.busy_pct, 1);
		} else {
			ctl_json_null(&j, "completed_per_s");
			ctl_json_null(&j, "busy_pct");
		}
		ctl_json_close(&j, '}');
	}
	ctl_json_close(&j, ']');
	ctl_json_close(&j, '}');
}

static int ctl_top_table(const struct ctl_snap *prev, const struct ctl_snap *cur)
{
	static const char *const head[] = {
		"QUEUE", "PID", "COMMAND", "DEVICE", "LV", "STATE", "PRIO", "DONE/S", "BUSY%",
		"P99", "PREEMPT", "PREEMPT-P99",
	};
	char up[32], buf[CTL_CELL_LEN], now_s[16], name[IPC_POLICY_LEN];
	struct ctl_table t;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	strftime(now_s, sizeof(now_s), "%H:%M:%S", localtime_r(&now, &tm));
	printf("xschedd %s  up %s  policy %s  clients %u  queues %u (%u ready)", now_s,
	       ctl_fmt_uptime(up, sizeof(up), cur->st.uptime_ns),
	       ctl_fmt_name(name, sizeof(name), cur->st.policy, sizeof(cur->st.policy)),
	       cur->st.clients, cur->st.queues, cur->st.ready);
	if (prev && cur->mono_ns > prev->mono_ns && cur->st.cpu_ns >= prev->st.cpu_ns)
		printf("  cpu %.1f%%", (double)(cur->st.cpu_ns - prev->st.cpu_ns) * 100.0 /
				      (double)(cur->mono_ns - prev->mono_ns));
	printf("\n\n");
	ctl_table_init(&t, XS_ARRAY_SIZE(head), head, 0xfd3);
	for (i = 0; i < cur->n; i++) {
		const struct ipc_queue_rec *r = &cur->recs[i];
		struct ctl_rate rate = ctl_rate_of(prev, cur, r);

		if (!ctl_table_row(&t)) {
			ctl_table_fini(&t);
			return -ENOMEM;
		}
		ctl_table_cell(&t, 0, "%llu", (unsigned long long)r->queue_id);
		ctl_table_cell(&t, 1, "%d", r->pid);
		ctl_table_cell(&t, 2, "%s", ctl_fmt_name(buf, sizeof(buf), r->comm, sizeof(r->comm)));
		ctl_table_cell(&t, 3, "%s",
			       ctl_fmt_name(buf, sizeof(buf), r->device, sizeof(r->device)));
		ctl_table_cell(&t, 4, "%u", r->level);
		ctl_table_cell(&t, 5, "%s", ctl_qstate(r));
		ctl_prio_cell(&t, 6, r);
		if (rate.valid) {
			ctl_table_cell(&t, 7, "%.1f", rate.done_per_s);
			ctl_table_cell(&t, 8, "%.1f", rate.busy_pct);
		} else {
			ctl_table_cell(&t, 7, "-");
			ctl_table_cell(&t, 8, "-");
		}
		ctl_table_cell(&t, 9, "%s", ctl_fmt_ns(buf, sizeof(buf), r->task_p99_ns, true));
		ctl_table_cell(&t, 10, "%llu", (unsigned long long)r->preemptions);
		ctl_table_cell(&t, 11, "%s", ctl_fmt_ns(buf, sizeof(buf), r->preempt_p99_ns, true));
	}
	ctl_table_print(&t, stdout);
	ctl_table_fini(&t);
	return 0;
}

/* Parses the delay of `top -d`: seconds, fractional, 0.01 .. 86400. */
static bool ctl_parse_delay(const char *s, uint64_t *ns)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !(d >= 0.01 && d <= 86400))
		return false;
	*ns = (uint64_t)(d * 1e9);
	return true;
}

/* Sleeps until @deadline (CLOCK_MONOTONIC ns); false if interrupted by a signal. */
static bool ctl_sleep_until(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / CTL_NSEC), .tv_nsec = (long)(deadline % CTL_NSEC),
	};

	while (!ctl_interrupted) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (rc == 0)
			return true;
		if (rc != EINTR)
			return false;
	}
	return false;
}

int ctl_top(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "output", 'o', true, CTL_OPT_OUTPUT },
		{ "pid", 'p', true, CTL_OPT_PID },
		{ "batch", 'b', false, CTL_OPT_BATCH },
		{ "iterations", 'n', true, CTL_OPT_ITER },
		{ "delay", 'd', true, CTL_OPT_DELAY },
		{ NULL, 0, false, 0 },
	};
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	struct ctl_snap snap[2] = { { .recs = NULL } }, *prev = NULL, *cur;
	struct sigaction sa = { .sa_handler = ctl_on_signal };
	uint64_t delay = CTL_NSEC, count = 0, next, k;
	bool batch = false, live;
	struct ipc_client c;
	const char *val;
	int64_t n;
	int32_t pid = 0;
	int id, rc = 0;

	while ((id = ctl_next(ctl, &a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ERROR:
			return CTL_EXIT_ERROR;
		case CTL_OPT_HELP:
			return ctl_verb_help(v);
		case CTL_OPT_POS:
			return ctl_usage_error(v, "unexpected argument '%s'", val);
		case CTL_OPT_PID:
			if (!ctl_parse_int(val, &n) || n < 1 || n > INT32_MAX)
				return ctl_usage_error(v, "invalid pid '%s'", val);
			pid = (int32_t)n;
			break;
		case CTL_OPT_BATCH:
			batch = true;
			break;
		case CTL_OPT_ITER:
			if (!ctl_parse_int(val, &n) || n < 1)
				return ctl_usage_error(v, "invalid count '%s' (a positive integer)",
						       val);
			count = (uint64_t)n;
			break;
		case CTL_OPT_DELAY:
			if (!ctl_parse_delay(val, &delay))
				return ctl_usage_error(v, "invalid delay '%s' (seconds, 0.01..86400)",
						       val);
			break;
		default:
			if (!ctl_common_opt(ctl, id, val))
				return CTL_EXIT_ERROR;
		}
	}
	live = !batch && ctl->out == CTL_OUT_TABLE && isatty(STDOUT_FILENO);
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	/* No SA_RESTART: Ctrl-C ends the sleep and the loop, and we exit 0. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	next = ctl_mono_ns();
	for (k = 0; !count || k < count; k++) {
		cur = &snap[k & 1];
		free(cur->recs);
		cur->recs = NULL;
		rc = ctl_snap_take(&c, pid, cur);
		if (rc < 0)
			break;
		if (ctl->out == CTL_OUT_JSON) {
			ctl_top_json(ctl, &c, prev, cur);
		} else {
			if (live)
				fputs("\033[H\033[2J", stdout);
			else if (k)
				fputc('\n', stdout);
			rc = ctl_top_table(prev, cur);
			if (rc < 0)
				break;
		}
		fflush(stdout);
		prev = cur;
		if (count && k + 1 == count)
			break;
		next += delay;
		if (!ctl_sleep_until(next))
			break;
	}
	if (rc == -EINTR && ctl_interrupted)
		rc = 0;
	if (rc < 0)
		rc = ctl_fail(ctl, &c, rc, "cannot refresh");
	ipc_client_close(&c);
	free(snap[0].recs);
	free(snap[1].recs);
	return rc;
}

/* --- set --------------------------------------------------------------- */

struct ctl_key {
	const char *name;
	uint32_t key;           /* enum ipc_key */
	bool time;              /* microseconds, unit suffixes allowed */
	const char *range;      /* for messages; the check is ipc_knob_valid() */
};

static const struct ctl_key ctl_keys[] = {
	{ "priority", IPC_KEY_PRIORITY, false, "-100..100" },
	{ "share", IPC_KEY_SHARE, false, "0..1000000" },
	{ "deadline", IPC_KEY_DEADLINE_US, true, "0..3600000000 us" },
	{ "laxity", IPC_KEY_LAXITY_US, true, "0..3600000000 us" },
	{ "threshold", IPC_KEY_THRESHOLD, false, "1..1024" },
	{ "batch", IPC_KEY_BATCH, false, "1..1024" },
	{ "budget", IPC_KEY_BUDGET_US, true, "1..10000000 us, or -1 for none" },
	{ "level", IPC_KEY_LEVEL, false, "1..3" },
};

int ctl_set(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "output", 'o', true, CTL_OPT_OUTPUT },
		{ "pid", 'p', true, CTL_OPT_PID },
		{ "queue", 'q', true, CTL_OPT_QUEUE },
		{ NULL, 0, false, 0 },
	};
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	const char *val, *pos[2] = { NULL, NULL }, *pid_s = NULL, *queue_s = NULL;
	const struct ctl_key *k = NULL;
	struct ipc_client c;
	int64_t value, id;
	char what[128];
	int npos = 0, opt, rc;
	size_t i;

	while ((opt = ctl_next(ctl, &a, opts, &val)) != CTL_OPT_END) {
		switch (opt) {
		case CTL_OPT_ERROR:
			return CTL_EXIT_ERROR;
		case CTL_OPT_HELP:
			return ctl_verb_help(v);
		case CTL_OPT_POS:
			if (npos == 2)
				return ctl_usage_error(v, "unexpected argument '%s'", val);
			pos[npos++] = val;
			break;
		case CTL_OPT_PID:
			pid_s = val;
			break;
		case CTL_OPT_QUEUE:
			queue_s = val;
			break;
		default:
			if (!ctl_common_opt(ctl, opt, val))
				return CTL_EXIT_ERROR;
		}
	}
	if (npos < 2)
		return ctl_usage_error(v, npos ? "missing value" : "missing key and value");
	for (i = 0; i < XS_ARRAY_SIZE(ctl_keys); i++)
		if (strcmp(pos[0], ctl_keys[i].name) == 0)
			k = &ctl_keys[i];
	if (!k)
		return ctl_usage_error(v, "unknown key '%s' (priority, share, deadline, laxity, "
				       "threshold, batch, budget or level)", pos[0]);
	if (!(k->time ? ctl_parse_us(pos[1], &value) : ctl_parse_int(pos[1], &value)))
		return ctl_usage_error(v, "invalid %s '%s'%s", k->name, pos[1],
				       k->time ? " (microseconds, or a number with us, ms or s)" :
					         " (an integer)");
	if (!ipc_knob_valid(k->key, value))
		return ctl_usage_error(v, "%s %s is out of range (%s)", k->name, pos[1], k->range);
	if (!pid_s == !queue_s)
		return ctl_usage_error(v, "give exactly one of --pid PID and --queue ID");
	if (pid_s && (!ctl_parse_int(pid_s, &id) || id < 1 || id > INT32_MAX))
		return ctl_usage_error(v, "invalid pid '%s'", pid_s);
	if (queue_s && (!ctl_parse_int(queue_s, &id) || id < 0))
		return ctl_usage_error(v, "invalid queue id '%s'", queue_s);

	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_set(&c, pid_s ? IPC_TARGET_PID : IPC_TARGET_QUEUE, (uint64_t)id, k->key,
			    value);
	if (rc < 0) {
		snprintf(what, sizeof(what), "cannot set %s of %s %lld", k->name,
			 pid_s ? "pid" : "queue", (long long)id);
		rc = ctl_fail(ctl, &c, rc, what);
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
		if (name[0] == '/')
			ctl_err(ctl, "%s: the daemon cannot open the module", what);
		else
			ctl_err(ctl, "%s: unknown policy (built-in: " CTL_BUILTIN_POLICIES ")",
				what);
		return CTL_EXIT_ERROR;
	case ENOEXEC:
	case EINVAL:
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
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	const char *val, *pos[3] = { NULL, NULL, NULL };
	char name[IPC_POLICY_LEN];
	struct ipc_client c;
	bool set;
	int npos = 0, id, rc;

	while ((id = ctl_next(ctl, &a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ERROR:
			return CTL_EXIT_ERROR;
		case CTL_OPT_HELP:
			return ctl_verb_help(v);
		case CTL_OPT_POS:
			if (npos == 3)
				return ctl_usage_error(v, "unexpected argument '%s'", val);
			pos[npos++] = val;
			break;
		default:
			if (!ctl_common_opt(ctl, id, val))
				return CTL_EXIT_ERROR;
		}
	}
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
	/* -o is accepted for uniformity; the exposition format is the output. */
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

	while ((id = ctl_next(ctl, &a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ERROR:
			return CTL_EXIT_ERROR;
		case CTL_OPT_HELP:
			return ctl_verb_help(v);
		case CTL_OPT_POS:
			return ctl_usage_error(v, "unexpected argument '%s'", val);
		default:
			if (!ctl_common_opt(ctl, id, val))
				return CTL_EXIT_ERROR;
		}
	}
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
