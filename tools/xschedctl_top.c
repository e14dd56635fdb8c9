/*
 * `xschedctl top`: the daemon's status and its queues, refreshed on a
 * fixed period, with rates computed between two snapshots (commands
 * completed per second, share of device time).
 *
 * One connection serves every refresh. Refreshes are paced by absolute
 * CLOCK_MONOTONIC deadlines, so a slow request does not make the period
 * drift. SIGINT and SIGTERM end the loop between requests and exit 0.
 *
 * Each queue also gets a sparkline of its recent P99 task latency, one
 * glyph per second, from one heat map of every queue per refresh
 * (IPC_HEAT_QUEUES). That map travels over a second connection: a map
 * that fails halfway cannot leave replies behind on the one the table
 * needs, and a daemon without heat maps only leaves the column empty.
 */
#include "xschedctl.h"
#include "heat_render.h"
#include "base/compiler.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

/* Glyphs of a sparkline: as many three-byte glyphs as a table cell holds. */
#define CTL_SPARK_COLS ((CTL_CELL_LEN - 1) / 3)

/* The P99 sparklines of one refresh, and the connection they come over. */
struct ctl_spark {
	struct ipc_client c;
	bool connected;
	bool off;               /* the daemon refuses heat maps: stop asking */
	bool have;              /* @d and @bins hold this refresh's map */
	bool plain;             /* ASCII glyphs: the locale is not UTF-8 */
	struct ipc_heat_data d;
	struct heat_bins bins;  /* one cell per column */
	uint64_t max_ns;        /* the top of every queue's sparkline */
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

/* Whether the locale's environment names UTF-8 (we never call setlocale()). */
static bool ctl_utf8_locale(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = getenv(vars[i]);
		char low[64];
		size_t k;

		if (!v || !*v)
			continue;
		for (k = 0; v[k] && k < sizeof(low) - 1; k++)
			low[k] = (char)tolower((unsigned char)v[k]);
		low[k] = '\0';
		return strstr(low, "utf-8") || strstr(low, "utf8");
	}
	return false;
}

static void ctl_spark_drop(struct ctl_spark *s)
{
	if (s->have) {
		heat_bins_fini(&s->bins);
		ipc_heat_data_free(&s->d);
	}
	s->have = false;
}

static void ctl_spark_fini(struct ctl_spark *s)
{
	ctl_spark_drop(s);
	if (s->connected)
		ipc_client_close(&s->c);
	s->connected = false;
}

/* The row of queue @id in the map, or -1. */
static long ctl_spark_row(const struct ctl_spark *s, uint64_t id)
{
	size_t r;

	for (r = 0; s->have && r < s->d.nrows; r++)
		if (s->d.rows[r].id == id)
			return (long)r;
	return -1;
}

/*
 * The P99 of each of the last CTL_SPARK_COLS seconds of queue @id, oldest
 * first, 0 where it had no task; false when the map has no such queue.
 */
static bool ctl_spark_series(const struct ctl_spark *s, uint64_t id, uint64_t *ns)
{
	long row = ctl_spark_row(s, id);
	size_t n, i, skip;

	if (row < 0)
		return false;
	n = BASE_MIN(s->bins.ncells, (size_t)CTL_SPARK_COLS);
	skip = s->bins.ncells - n;
	memset(ns, 0, CTL_SPARK_COLS * sizeof(*ns));
	/* Right-aligned: a daemon that kept less leaves the oldest glyphs blank. */
	for (i = 0; i < n; i++)
		ns[CTL_SPARK_COLS - n + i] =
			heat_bucket_ns(s->bins.p99[(size_t)row * s->bins.ncells + skip + i]);
	return true;
}

/*
 * Asks for this refresh's map. Any failure leaves the sparklines empty, and
 * the connection is dropped (a reply may be left on it); refusals that
 * will not change (an older daemon, permissions) stop the asking.
 */
static void ctl_spark_take(const struct ctl *ctl, struct ctl_spark *s)
{
	struct ipc_heatmap req = {
		.kind = IPC_HEAT_QUEUES, .max_cols = CTL_SPARK_COLS, .window_ns = CTL_NSEC,
		.last_ns = CTL_SPARK_COLS * CTL_NSEC,
	};
	uint64_t ns[CTL_SPARK_COLS];
	size_t r, i;
	int rc;

	ctl_spark_drop(s);
	if (s->off)
		return;
	if (!s->connected && ipc_client_open(&s->c, ctl->control, ctl->socket) < 0)
		return;
	s->connected = true;
	rc = ipc_client_heatmap(&s->c, &req, &s->d);
	if (rc == 0 && heat_bins_build(&s->bins, &s->d, 0) < 0) {
		ipc_heat_data_free(&s->d);
		rc = -ENOMEM;
	}
	if (rc < 0) {
		ipc_client_close(&s->c);
		s->connected = false;
		s->off = rc == -EOPNOTSUPP || rc == -EINVAL || rc == -EPROTO || rc == -EACCES ||
			 rc == -EPERM;
		return;
	}
	s->have = true;
	s->max_ns = 0;
	for (r = 0; r < s->d.nrows; r++)
		if (ctl_spark_series(s, s->d.rows[r].id, ns))
			for (i = 0; i < CTL_SPARK_COLS; i++)
				s->max_ns = BASE_MAX(s->max_ns, ns[i]);
}

/* Cell @col: queue @id's sparkline; empty without one. */
static void ctl_spark_cell(struct ctl_table *t, int col, const struct ctl_spark *s, uint64_t id)
{
	uint64_t ns[CTL_SPARK_COLS];
	char buf[CTL_CELL_LEN];

	if (!ctl_spark_series(s, id, ns))
		return;
	ctl_table_cell(t, col, "%s", heat_sparkline(buf, sizeof(buf), ns, CTL_SPARK_COLS,
						   s->max_ns, s->plain));
}

/* Member "task_p99_series_ns": the sparkline's values, null where no task ran. */
static void ctl_spark_json(struct ctl_json *j, const struct ctl_spark *s, uint64_t id)
{
	uint64_t ns[CTL_SPARK_COLS];
	size_t i;

	if (!ctl_spark_series(s, id, ns)) {
		ctl_json_null(j, "task_p99_series_ns");
		return;
	}
	ctl_json_open(j, "task_p99_series_ns", '[');
	for (i = 0; i < CTL_SPARK_COLS; i++)
		if (ns[i])
			ctl_json_uint(j, NULL, ns[i]);
		else
			ctl_json_null(j, NULL);
	ctl_json_close(j, ']');
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
			 const struct ctl_snap *prev, const struct ctl_snap *cur,
			 const struct ctl_spark *spark)
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
	if (spark->have)
		ctl_json_uint(&j, "series_window_ns", spark->d.meta.window_ns);
	else
		ctl_json_null(&j, "series_window_ns");
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
		ctl_spark_json(&j, spark, cur->recs[i].queue_id);
		ctl_json_close(&j, '}');
	}
	ctl_json_close(&j, ']');
	ctl_json_close(&j, '}');
}

static int ctl_top_table(const struct ctl_snap *prev, const struct ctl_snap *cur,
			 const struct ctl_spark *spark)
{
	static const char *const head[] = {
		"QUEUE", "PID", "COMMAND", "DEVICE", "LV", "STATE", "WAITED", "GUARD", "PRIO",
		"DONE/S", "BUSY%", "P99", "PREEMPT", "PREEMPT-P99", "CPU-P99", "P99-TREND",
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
		ctl_spark_cell(&t, 15, spark, r->queue_id);
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
	struct ctl_spark spark = { .plain = !ctl_utf8_locale() };
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
		ctl_spark_take(ctl, &spark);
		if (ctl->out == CTL_OUT_JSON) {
			ctl_top_json(ctl, &c, prev, cur, &spark);
		} else {
			if (live)
				fputs("\033[H\033[2J", stdout);
			else if (k)
				fputc('\n', stdout);
			rc = ctl_top_table(prev, cur, &spark);
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
	ctl_spark_fini(&spark);
	free(snap[0].recs);
	free(snap[1].recs);
	return rc;
}

