/*
 * Listings and metrics of the daemon: queue records for IPC_LIST and the
 * Prometheus text exposition (format 0.0.4) for IPC_METRICS.
 */
#include "daemon/daemon.h"
#include "base/clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void xsd_queue_record(const struct xsd_sched *sched, const struct xsd_queue *q,
		      struct ipc_queue_rec *r)
{
	const struct ipc_slot *s = &q->client->shm->slot[q->slot];
	const struct xsd_device *dev = xsd_devices_at(&sched->devs, q->pq.device);

	memset(r, 0, sizeof(*r));
	r->queue_id = q->pq.id;
	r->client_id = q->client->id;
	r->pid = q->client->pid;
	r->uid = q->client->uid;
	memcpy(r->comm, q->client->comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	memcpy(r->device, q->device, sizeof(r->device));
	memcpy(r->backend, q->backend, sizeof(r->backend));
	r->level = q->level;
	/* The slot, not the policy's view: a queue alone does not ring. */
	r->state = atomic_load(&s->status) == IPC_ST_READY ? IPC_QS_READY : IPC_QS_IDLE;
	r->running = q->applied != 0;
	r->eff_priority = q->pq.priority;
	memcpy(r->hint, q->hint, sizeof(r->hint));
	r->threshold = q->threshold;
	r->batch = q->batch;
	r->budget_ns = q->budget_ns;
	r->submitted = atomic_load(&s->submitted);
	r->completed = atomic_load(&s->completed);
	r->preemptions = atomic_load(&s->preemptions);
	r->exec_ns = atomic_load(&s->exec_ns);
	r->task_p99_ns = xs_hist_quantile(q->task_lat, 0.99);
	r->preempt_p99_ns = atomic_load(&s->preempt_p99_ns);
	if (dev) {
		r->domain = dev->id;
		r->id_kind = dev->kind;
	}
}

struct text {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		{
			size_t cap = 2 * t->cap + (size_t)n;
			char *grown = realloc(t->buf, cap);

			if (!grown) {
				t->oom = true;
				return;
			}
			t->buf = grown;
			t->cap = cap;
		}
	}
}

/* Label values are process names: escape what the format requires. */
static void label(char *out, size_t len, const char *in)
{
	size_t o = 0;

	for (; *in && o + 3 < len; in++) {
		if (*in == '\\' || *in == '"') {
			out[o++] = '\\';
			out[o++] = *in;
		} else if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if ((unsigned char)*in >= 0x20) {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}

static void queue_metric(struct text *t, const char *name, const char *type,
			 const char *help, struct xsd *d,
			 double (*val)(const struct xsd_queue *q))
{
	struct xsd_client *c;
	uint32_t i;

	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	for (c = d->clients; c; c = c->next) {
		for (i = 0; c->queue && i < c->nslots; i++) {
			const struct xsd_queue *q = c->queue[i];
			char comm[64], dev[80];

			if (!q)
				continue;
			label(comm, sizeof(comm), c->comm);
			label(dev, sizeof(dev), q->device);
			put(t, "%s{queue=\"%llu\",pid=\"%d\",comm=\"%s\",device=\"%s\"} %.9g\n",
			    name, (unsigned long long)q->pq.id, (int)c->pid, comm, dev, val(q));
		}
	}
}

static double v_ready(const struct xsd_queue *q) { return q->pq.ready; }
static double v_running(const struct xsd_queue *q) { return q->applied != 0; }
static double v_prio(const struct xsd_queue *q) { return q->pq.priority; }

static double slot_u64(const struct xsd_queue *q, size_t off)
{
	const char *s = (const char *)&q->client->shm->slot[q->slot];

	return (double)atomic_load((const _Atomic uint64_t *)(s + off));
}

static double v_submitted(const struct xsd_queue *q)
{
	return slot_u64(q, offsetof(struct ipc_slot, submitted));
}

static double v_completed(const struct xsd_queue *q)
{
	return slot_u64(q, offsetof(struct ipc_slot, completed));
}

static double v_preempt(const struct xsd_queue *q)
{
	return slot_u64(q, offsetof(struct ipc_slot, preemptions));
}

static double v_exec(const struct xsd_queue *q)
{
	return slot_u64(q, offsetof(struct ipc_slot, exec_ns)) / 1e9;
}

static double v_task_p99(const struct xsd_queue *q)
{
	return (double)xs_hist_quantile(q->task_lat, 0.99) / 1e9;
}

static double v_preempt_p99(const struct xsd_queue *q)
{
	return slot_u64(q, offsetof(struct ipc_slot, preempt_p99_ns)) / 1e9;
}

static void hist_metric(struct text *t, const char *name, const char *help,
			const struct xs_hist *h)
{
	put(t, "# HELP %s %s\n# TYPE %s summary\n", name, help, name);
	put(t, "%s{quantile=\"0.5\"} %.9g\n", name, xs_hist_quantile(h, 0.5) / 1e9);
	put(t, "%s{quantile=\"0.99\"} %.9g\n", name, xs_hist_quantile(h, 0.99) / 1e9);
	put(t, "%s_sum %.9g\n%s_count %llu\n", name, (double)h->sum / 1e9, name,
	    (unsigned long long)h->count);
}

char *xsd_metrics_text(struct xsd *d, size_t *len)
{
	struct text t = { .cap = 8192 };
	struct timespec cpu;
	struct xsd_client *c;
	uint32_t queues = 0;

	t.buf = malloc(t.cap);
	if (!t.buf)
		return NULL;
	t.buf[0] = '\0';
	for (c = d->clients; c; c = c->next)
		queues += c->nqueues;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	put(&t, "# HELP xsched_clients Connected clients.\n# TYPE xsched_clients gauge\n"
		"xsched_clients %u\n", d->nclients);
	put(&t, "# HELP xsched_queues Registered queues.\n# TYPE xsched_queues gauge\n"
		"xsched_queues %u\n", queues);
	put(&t, "# HELP xsched_decisions_total Run/suspend decisions written.\n"
		"# TYPE xsched_decisions_total counter\nxsched_decisions_total %llu\n",
	    (unsigned long long)d->sched.decisions);
	put(&t, "# HELP xsched_events_total Queue status changes handled.\n"
		"# TYPE xsched_events_total counter\nxsched_events_total %llu\n",
	    (unsigned long long)d->sched.events);
	put(&t, "# HELP xsched_daemon_cpu_seconds_total CPU time of xschedd.\n"
		"# TYPE xsched_daemon_cpu_seconds_total counter\n"
		"xsched_daemon_cpu_seconds_total %.6f\n",
	    (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	hist_metric(&t, "xsched_event_wakeup_seconds",
		    "Client status change to its receipt by the daemon.", &d->sched.wake_lat);
	hist_metric(&t, "xsched_event_decision_seconds",
		    "Receipt of an event to the decisions written.", &d->sched.decide_lat);
	queue_metric(&t, "xsched_queue_ready", "gauge", "1 while the queue has work.", d, v_ready);
	queue_metric(&t, "xsched_queue_running", "gauge", "1 unless suspended by the policy.",
		     d, v_running);
	queue_metric(&t, "xsched_queue_priority", "gauge", "Effective priority.", d, v_prio);
	queue_metric(&t, "xsched_queue_submitted_total", "counter", "Commands submitted.", d,
		     v_submitted);
	queue_metric(&t, "xsched_queue_completed_total", "counter", "Commands completed.", d,
		     v_completed);
	queue_metric(&t, "xsched_queue_preemptions_total", "counter", "Suspends with work.", d,
		     v_preempt);
	queue_metric(&t, "xsched_queue_device_seconds_total", "counter",
		     "Device time of completed commands.", d, v_exec);
	queue_metric(&t, "xsched_queue_task_latency_p99_seconds", "gauge",
		     "P99 of Ready-to-Idle time.", d, v_task_p99);
	queue_metric(&t, "xsched_queue_preempt_latency_p99_seconds", "gauge",
		     "P99 of suspend-to-device-quiet time.", d, v_preempt_p99);
	if (t.oom) {
		free(t.buf);
		return NULL;
	}
	*len = t.len;
	return t.buf;
}
