/*
 * xschedctl trace: the XQueue events of one running process, live, from
 * its USDT probes (src/xqueue/xq_usdt.h) through eBPF (src/bpf/trace.bpf.c);
 * no daemon involved. Each event is printed as it comes (unless
 * --summary), and at the end (Ctrl-C, --duration, or the process's exit)
 * a summary per queue: events counted, and the latencies this side
 * derives by matching sequence numbers: submit to launch (time queued in
 * the XQueue), launch to complete (time on the device, as seen by the
 * process), the device time the backend measured, and preemptions.
 *
 * Each probe hit is a uprobe, microseconds of the traced thread: the
 * process runs slower while traced, and only then.
 */
#include "xschedctl.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/hist.h"
#include "bpf/xbpf.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

enum { CTL_OPT_PID = CTL_OPT_VERB, CTL_OPT_QUEUE, CTL_OPT_SUMMARY, CTL_OPT_DURATION };

static const struct ctl_opt ctl_trace_opts[] = {
	CTL_COMMON_OPTS,
	{ "output", 'o', true, CTL_OPT_OUTPUT },
	{ "pid", 'p', true, CTL_OPT_PID },
	{ "queue", 'q', true, CTL_OPT_QUEUE },
	{ "summary", 's', false, CTL_OPT_SUMMARY },
	{ "duration", 'd', true, CTL_OPT_DURATION },
	{ NULL, 0, false, 0 },
};

#define TR_QUEUES 64
#define TR_RING 4096                       /* commands matched per queue */

static const char *const tr_names[XBPF_TR_MAX] = {
	[XBPF_TR_SUBMIT] = "submit", [XBPF_TR_LAUNCH] = "launch",
	[XBPF_TR_COMPLETE] = "complete", [XBPF_TR_SUSPEND] = "suspend",
	[XBPF_TR_RESUME] = "resume", [XBPF_TR_PREEMPT_DONE] = "preempt_done",
};

struct tr_queue {
	uint32_t id;                       /* 0: unused */
	uint64_t count[XBPF_TR_MAX];
	uint64_t first_seq, last_seq;      /* of submits */
	uint64_t seq_submit[TR_RING], t_submit[TR_RING];
	uint64_t seq_launch[TR_RING], t_launch[TR_RING];
	struct hist queued, on_device, device, preempt;
};

struct tr_state {
	const struct ctl *ctl;
	bool live;
	uint64_t t0;
	struct tr_queue *q;                /* TR_QUEUES */
	uint64_t dropped_queues;
};

static volatile sig_atomic_t tr_stop;

static void tr_on_signal(int sig)
{
	(void)sig;
	tr_stop = 1;
}

static struct tr_queue *tr_queue(struct tr_state *s, uint32_t id)
{
	size_t i;

	for (i = 0; i < TR_QUEUES; i++) {
		if (s->q[i].id == id)
			return &s->q[i];
		if (!s->q[i].id) {
			s->q[i].id = id;
			return &s->q[i];
		}
	}
	s->dropped_queues++;
	return NULL;
}

static void tr_event(void *arg, const struct xbpf_trace_event *e)
{
	struct tr_state *s = arg;
	struct tr_queue *q;
	size_t k = e->arg % TR_RING;

	if (e->type == 0 || e->type >= XBPF_TR_MAX)
		return;
	if (s->live && s->ctl->out == CTL_OUT_JSON) {
		printf("{\"t_us\":%.3f,\"mono_ns\":%llu,\"tid\":%u,\"queue\":%u,\"event\":\"%s\","
		       "\"seq\":%llu,\"ns\":%llu}\n", (double)(e->ts_ns - s->t0) / 1e3,
		       (unsigned long long)e->ts_ns, e->tid, e->queue, tr_names[e->type],
		       (unsigned long long)e->arg, (unsigned long long)e->ns);
	} else if (s->live) {
		printf("%12.3f ms  tid %-7u queue %-3u %-12s", (double)(e->ts_ns - s->t0) / 1e6,
		       e->tid, e->queue, tr_names[e->type]);
		if (e->type <= XBPF_TR_COMPLETE)
			printf(" seq %llu", (unsigned long long)e->arg);
		if (e->type == XBPF_TR_SUSPEND)
			printf(" level %llu", (unsigned long long)e->arg);
		if (e->type >= XBPF_TR_COMPLETE && e->type != XBPF_TR_SUSPEND)
			printf(" %.3f us", (double)e->ns / 1e3);
		printf("\n");
	}
	q = tr_queue(s, e->queue);
	if (!q)
		return;
	q->count[e->type]++;
	switch (e->type) {
	case XBPF_TR_SUBMIT:
		if (!q->first_seq)
			q->first_seq = e->arg;
		q->last_seq = e->arg;
		q->seq_submit[k] = e->arg;
		q->t_submit[k] = e->ts_ns;
		break;
	case XBPF_TR_LAUNCH:
		if (q->seq_submit[k] == e->arg)
			hist_record(&q->queued, e->ts_ns - q->t_submit[k]);
		q->seq_launch[k] = e->arg;
		q->t_launch[k] = e->ts_ns;
		break;
	case XBPF_TR_COMPLETE:
		if (q->seq_launch[k] == e->arg)
			hist_record(&q->on_device, e->ts_ns - q->t_launch[k]);
		if (e->ns)
			hist_record(&q->device, e->ns);
		break;
	case XBPF_TR_PREEMPT_DONE:
		hist_record(&q->preempt, e->ns);
		break;
	}
}

static void tr_lat(struct ctl_json *j, const char *key, const struct hist *h)
{
	char a[32], b[32];

	if (j) {
		ctl_json_open(j, key, '{');
		ctl_json_uint(j, "count", h->count);
		ctl_json_uint(j, "p50_ns", h->count ? hist_quantile(h, 0.5) : 0);
		ctl_json_uint(j, "p99_ns", h->count ? hist_quantile(h, 0.99) : 0);
		ctl_json_close(j, '}');
		return;
	}
	if (!h->count)
		return;
	printf("  %-26s %8llu  p50 %9s  p99 %9s\n", key, (unsigned long long)h->count,
	       ctl_fmt_ns(a, sizeof(a), hist_quantile(h, 0.5), false),
	       ctl_fmt_ns(b, sizeof(b), hist_quantile(h, 0.99), false));
}

static void tr_summary(const struct tr_state *s, uint64_t lost)
{
	struct ctl_json j;
	size_t i, k;

	if (s->ctl->out == CTL_OUT_JSON) {
		ctl_json_init(&j, stdout);
		ctl_json_open(&j, NULL, '{');
		ctl_json_open(&j, "summary", '[');
	}
	for (i = 0; i < TR_QUEUES && s->q[i].id; i++) {
		const struct tr_queue *q = &s->q[i];

		if (s->ctl->out == CTL_OUT_JSON) {
			ctl_json_open(&j, NULL, '{');
			ctl_json_uint(&j, "queue", q->id);
			for (k = 1; k < XBPF_TR_MAX; k++)
				ctl_json_uint(&j, tr_names[k], q->count[k]);
			ctl_json_uint(&j, "first_seq", q->first_seq);
			ctl_json_uint(&j, "last_seq", q->last_seq);
			tr_lat(&j, "submit_to_launch", &q->queued);
			tr_lat(&j, "launch_to_complete", &q->on_device);
			tr_lat(&j, "device_time", &q->device);
			tr_lat(&j, "preemption", &q->preempt);
			ctl_json_close(&j, '}');
			continue;
		}
		printf("queue %u: %llu submitted (seq %llu..%llu), %llu launched, %llu completed, "
		       "%llu suspends, %llu resumes\n", q->id,
		       (unsigned long long)q->count[XBPF_TR_SUBMIT],
		       (unsigned long long)q->first_seq, (unsigned long long)q->last_seq,
		       (unsigned long long)q->count[XBPF_TR_LAUNCH],
		       (unsigned long long)q->count[XBPF_TR_COMPLETE],
		       (unsigned long long)q->count[XBPF_TR_SUSPEND],
		       (unsigned long long)q->count[XBPF_TR_RESUME]);
		tr_lat(NULL, "submit to launch", &q->queued);
		tr_lat(NULL, "launch to complete", &q->on_device);
		tr_lat(NULL, "device time (backend)", &q->device);
		tr_lat(NULL, "suspend to quiet", &q->preempt);
	}
	if (s->ctl->out == CTL_OUT_JSON) {
		ctl_json_close(&j, ']');
		ctl_json_uint(&j, "lost_events", lost);
		ctl_json_close(&j, '}');
	} else {
		if (!s->q[0].id)
			printf("No xsched events.\n");
		if (lost)
			printf("%llu events lost (ring buffer full)\n", (unsigned long long)lost);
	}
	if (s->dropped_queues)
		ctl_warn(s->ctl, "more than %d queues: the others are not summarized", TR_QUEUES);
}

int ctl_trace(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	struct tr_state s = { .ctl = ctl, .live = true };
	struct sigaction sa = { .sa_handler = tr_on_signal };
	struct xbpf_trace *t = NULL;
	int32_t pid = 0;
	int64_t queue = 0, dur_us = 0;
	uint64_t end = 0;
	const char *val;
	char err[256];
	int id, rc;

	while ((id = ctl_next(&a, ctl_trace_opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_PID:
			if (!ctl_parse_pid(val, &pid))
				return ctl_usage_error(v, "invalid pid '%s'", val);
			break;
		case CTL_OPT_QUEUE:
			if (!ctl_parse_int(val, &queue) || queue < 1 || queue > UINT32_MAX)
				return ctl_usage_error(v, "invalid queue '%s'", val);
			break;
		case CTL_OPT_SUMMARY:
			s.live = false;
			break;
		case CTL_OPT_DURATION:
			/* Plain digits are seconds here; a suffix says otherwise. */
			if (val[strspn(val, "0123456789")] == '\0' && ctl_parse_int(val, &dur_us) &&
			    dur_us <= 86400)
				dur_us *= 1000000;
			else if (!ctl_parse_us(val, &dur_us))
				dur_us = 0;
			if (dur_us <= 0)
				return ctl_usage_error(v, "invalid duration '%s' (seconds, or with "
						       "a unit: 500ms)", val);
			break;
		default:
			rc = ctl_verb_opt(ctl, &a, id, val);
			if (rc >= 0)
				return rc;
		}
	}
	if (!pid)
		return ctl_usage_error(v, "--pid is required");
	s.q = calloc(TR_QUEUES, sizeof(*s.q));
	if (!s.q)
		return ctl_fail(ctl, NULL, -ENOMEM, "cannot trace");
	xbpf_set_log(NULL, 0);             /* libbpf's notes would drown the output */
	rc = xbpf_trace_open(pid, (uint32_t)queue, tr_event, &s, &t, err, sizeof(err));
	if (rc < 0) {
		ctl_err(ctl, "cannot trace: %s", err);
		free(s.q);
		return rc == -EPERM || rc == -EACCES ? CTL_EXIT_DENIED : CTL_EXIT_ERROR;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	s.t0 = clock_now_ns();
	if (dur_us)
		end = s.t0 + (uint64_t)dur_us * 1000;
	if (s.live && ctl->out != CTL_OUT_JSON)
		printf("Tracing pid %d (%s)%s. Ctrl-C to stop.\n", (int)pid,
		       xbpf_trace_objects(t), queue ? ", one queue" : "");
	fflush(stdout);
	while (!tr_stop && (!end || clock_now_ns() < end)) {
		rc = xbpf_trace_poll(t, 100);
		if (rc < 0 && rc != -EINTR) {
			ctl_err(ctl, "trace: %s", strerror(-rc));
			break;
		}
		fflush(stdout);
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			xbpf_trace_poll(t, 0);
			break;
		}
	}
	tr_summary(&s, xbpf_trace_lost(t));
	xbpf_trace_close(t);
	free(s.q);
	return CTL_EXIT_OK;
}
