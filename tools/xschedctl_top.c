/*
 * `xschedctl top`: the daemon's status and its queues, refreshed on a
 * fixed period, with rates computed between two snapshots (commands
 * completed per second, share of device time).
 *
 * One connection serves every refresh. Refreshes are paced by absolute
 * CLOCK_MONOTONIC deadlines, so a slow request does not make the period
 * drift. SIGINT and SIGTERM end the loop between requests and exit 0.
 */
#include "xschedctl.h"
#include "base/compiler.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CTL_NSEC 1000000000ull

enum {
	CTL_OPT_PID = CTL_OPT_VERB,
	CTL_OPT_BATCH,
	CTL_OPT_ITER,
	CTL_OPT_DELAY,
};

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
		"QUEUE", "PID", "COMMAND", "DEVICE", "LV", "STATE", "WAITED", "GUARD", "PRIO",
		"DONE/S", "BUSY%", "P99", "PREEMPT", "PREEMPT-P99", "CPU-P99",
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
	ctl_table_init(&t, ARRAY_SIZE(head), head, 0x7fd3);
	for (i = 0; i < cur->n; i++) {
		const struct ipc_queue_rec *r = &cur->recs[i];
		struct ctl_rate rate = ctl_rate_of(prev, cur, r);

		if (!ctl_table_row(&t)) {
			ctl_table_fini(&t);
			return -ENOMEM;
		}
		ctl_table_cell(&t, 0, "%llu", (unsigned long long)r->queue_id);
		ctl_table_cell(&t, 1, "%d", r->pid);
		ctl_table_cell(&t, 2, "%s",
			       ctl_fmt_name(buf, sizeof(buf), r->comm, sizeof(r->comm)));
		ctl_device_cell(&t, 3, r);
		ctl_table_cell(&t, 4, "%u", r->level);
		ctl_table_cell(&t, 5, "%s", ctl_qstate(r));
		ctl_wait_cells(&t, 6, r);
		ctl_prio_cell(&t, 8, r);
		if (rate.valid) {
			ctl_table_cell(&t, 9, "%.1f", rate.done_per_s);
			ctl_table_cell(&t, 10, "%.1f", rate.busy_pct);
		} else {
			ctl_table_cell(&t, 9, "-");
			ctl_table_cell(&t, 10, "-");
		}
		ctl_table_cell(&t, 11, "%s", ctl_fmt_ns(buf, sizeof(buf), r->task_p99_ns, true));
		ctl_table_cell(&t, 12, "%llu", (unsigned long long)r->preemptions);
		ctl_table_cell(&t, 13, "%s", ctl_fmt_ns(buf, sizeof(buf), r->preempt_p99_ns, true));
		ctl_table_cell(&t, 14, "%s", ctl_fmt_ns(buf, sizeof(buf), r->cpu_wait_p99_ns, true));
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

	while ((id = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_PID:
			if (!ctl_parse_pid(val, &pid))
				return ctl_usage_error(v, "invalid pid '%s'", val);
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
				return ctl_usage_error(v, "invalid delay '%s' (seconds, "
						       "0.01..86400)", val);
			break;
		default:
			rc = ctl_verb_opt(ctl, &a, id, val);
			if (rc >= 0)
				return rc;
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

