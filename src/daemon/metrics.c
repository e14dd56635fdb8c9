/*
 * Listings and metrics of the daemon: queue records for IPC_LIST and the
 * Prometheus text exposition (format 0.0.4) for IPC_METRICS and for the
 * textfile that node_exporter's textfile collector reads ([metrics]
 * textfile): no TCP listener of our own.
 *
 * Per-queue series are scoped like listings: a caller on the client
 * socket who is not root sees the series of its own uid's queues only
 * (the daemon-wide series, as in `xschedctl status`, are for everyone).
 * Each queue series is labelled queue, pid, uid, comm, device (the name
 * its process uses, e.g. cuda:0, which differs between processes that see
 * different devices) and domain (the scheduling domain: one per physical
 * device, as `xschedctl devices` lists them); xsched_device_info maps a
 * domain to its identity (UUID or PCI bus id) for joins in queries.
 */
#include "daemon/metrics.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/memory.h"
#include "daemon/enforce.h"
#include "daemon/observe.h"
#include "daemon/prom.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/devid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#ifndef XSCHED_VERSION_STRING
#error "the build defines XSCHED_VERSION_STRING"
#endif

void xsd_queue_record(const struct xsd_host *h, const struct xsd_queue *q,
		      struct ipc_queue_rec *r)
{
	const struct ipc_slot *s = &q->client->shm->slot[q->slot];
	const struct xsd_device *dev = xsd_devices_at(&h->devs, q->sq.pq.device);

	memset(r, 0, sizeof(*r));
	r->queue_id = q->sq.pq.id;
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
	r->running = q->applied != 0 && !q->floor_lazy;
	r->eff_priority = q->sq.pq.priority;
	memcpy(r->hint, q->hint, sizeof(r->hint));
	xsd_mem_queue(h, q, &r->mem_used, &r->mem_limit, &r->mem_evicted);
	r->threshold = q->threshold;
	r->batch = q->batch;
	r->budget_ns = q->budget_ns;
	r->submitted = atomic_load(&s->submitted);
	r->completed = atomic_load(&s->completed);
	r->preemptions = atomic_load(&s->preemptions);
	r->exec_ns = atomic_load(&s->exec_ns);
	r->task_p99_ns = hist_quantile(q->task_lat, 0.99);
	r->preempt_p99_ns = atomic_load(&s->preempt_p99_ns);
	if (dev) {
		r->domain = dev->id;
		r->id_kind = dev->kind;
	}
	r->wait_ns = q->wait_since ? clock_now_ns() - q->wait_since : 0;
	r->guard_runs = q->sq.guard_runs;
	r->level_max = q->level_max;
	r->nspid = q->client->nspid;
	memcpy(r->container, q->client->container, sizeof(r->container));
	memcpy(r->level_why, q->level_why, sizeof(r->level_why));
}

static void put(struct xsd_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct xsd_text *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xsd_text_vprintf(t, fmt, ap);
	va_end(ap);
}

/* Whose queues a reader may see: @uid's, or everyone's if @all. */
struct scope {
	bool all;
	uid_t uid;
};

static void queue_metric(struct xsd_text *t, const char *name, const char *type,
			 const char *help, struct xsd *d, const struct scope *sc,
			 double (*val)(const struct xsd_queue *q))
{
	struct xsd_client *c;
	uint32_t i;

	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	for (c = d->clients; c; c = c->next) {
		if (!sc->all && c->uid != sc->uid)
			continue;
		for (i = 0; c->queue && i < c->nslots; i++) {
			const struct xsd_queue *q = c->queue[i];
			const struct xsd_device *dv;
			char comm[64], dev[80];

			if (!q)
				continue;
			dv = xsd_devices_at(&d->host.devs, q->sq.pq.device);
			xsd_prom_label(comm, sizeof(comm), c->comm);
			xsd_prom_label(dev, sizeof(dev), q->device);
			put(t, "%s{queue=\"%llu\",pid=\"%d\",uid=\"%u\",comm=\"%s\",device=\"%s\","
			    "domain=\"%llu\"} %.9g\n", name, (unsigned long long)q->sq.pq.id,
			    (int)c->pid, (unsigned)c->uid, comm, dev,
			    (unsigned long long)(dv ? dv->id : 0), val(q));
		}
	}
}

/* Whether a reader of scope @sc has a queue on the device at @index. */
static bool scope_sees_device(struct xsd *d, const struct scope *sc, uint32_t index)
{
	const struct xsd_client *c;
	uint32_t i;

	if (sc->all)
		return true;
	for (c = d->clients; c; c = c->next) {
		if (c->uid != sc->uid)
			continue;
		for (i = 0; c->queue && i < c->nslots; i++)
			if (c->queue[i] && c->queue[i]->sq.pq.device == index)
				return true;
	}
	return false;
}

/* One series per scheduling domain in use: its identity, for joins. */
static void device_info(struct xsd_text *t, struct xsd *d, const struct scope *sc)
{
	const struct xsd_devices *devs = &d->host.devs;
	uint32_t i;

	put(t, "# HELP xsched_device_info A scheduling domain (one device): how it is "
	       "identified.\n# TYPE xsched_device_info gauge\n");
	for (i = 0; i < devs->hwm; i++) {
		const struct xsd_device *dv = xsd_devices_at(devs, i);
		char ident[IPC_IDENT_LEN + 8], pci[IPC_PCI_LEN + 8], name[IPC_NAME_LEN + 8];

		if (!dv || !scope_sees_device(d, sc, i))
			continue;
		xsd_prom_label(ident, sizeof(ident), dv->ident);
		xsd_prom_label(pci, sizeof(pci), dv->pci);
		xsd_prom_label(name, sizeof(name), dv->name);
		put(t, "xsched_device_info{domain=\"%llu\",kind=\"%s\",identity=\"%s\","
		       "pci=\"%s\",name=\"%s\"} 1\n", (unsigned long long)dv->id,
		    devid_kind_name(dv->kind), ident, pci, name);
	}
}

static double v_ready(const struct xsd_queue *q) { return q->sq.pq.ready; }
static double v_running(const struct xsd_queue *q)
{
	return q->applied != 0 && !q->floor_lazy;
}
static double v_prio(const struct xsd_queue *q) { return q->sq.pq.priority; }

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
	return (double)hist_quantile(q->task_lat, 0.99) / 1e9;
}

static double v_preempt_p99(const struct xsd_queue *q)
{
	return slot_u64(q, offsetof(struct ipc_slot, preempt_p99_ns)) / 1e9;
}

static double v_wait(const struct xsd_queue *q)
{
	return q->wait_since ? (double)(clock_now_ns() - q->wait_since) / 1e9 : 0;
}

static double v_grants(const struct xsd_queue *q) { return (double)q->sq.guard_runs; }

static void hist_metric(struct xsd_text *t, const char *name, const char *help,
			const struct hist *h)
{
	put(t, "# HELP %s %s\n# TYPE %s summary\n", name, help, name);
	put(t, "%s{quantile=\"0.5\"} %.9g\n", name, hist_quantile(h, 0.5) / 1e9);
	put(t, "%s{quantile=\"0.99\"} %.9g\n", name, hist_quantile(h, 0.99) / 1e9);
	put(t, "%s_sum %.9g\n%s_count %llu\n", name, (double)h->sum / 1e9, name,
	    (unsigned long long)h->count);
}

char *xsd_metrics_text(struct xsd *d, const struct xsd_client *reader, size_t *len)
{
	struct scope sc = { .all = !reader || reader->privileged,
			    .uid = reader ? reader->uid : 0 };
	struct xsd_text t;
	struct timespec cpu;
	struct xsd_client *c;
	uint32_t queues = 0;
	char policy[IPC_POLICY_LEN * 2];

	if (xsd_text_init(&t) < 0)
		return NULL;
	for (c = d->clients; c; c = c->next)
		queues += c->nqueues;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	xsd_prom_label(policy, sizeof(policy), d->host.policy);
	put(&t, "# HELP xsched_info The daemon's version and policy.\n# TYPE xsched_info gauge\n"
		"xsched_info{version=\"%s\",policy=\"%s\"} 1\n", XSCHED_VERSION_STRING, policy);
	put(&t, "# HELP xsched_clients Connected clients.\n# TYPE xsched_clients gauge\n"
		"xsched_clients %u\n", d->nclients);
	put(&t, "# HELP xsched_queues Registered queues.\n# TYPE xsched_queues gauge\n"
		"xsched_queues %u\n", queues);
	put(&t, "# HELP xsched_decisions_total Run/suspend decisions written.\n"
		"# TYPE xsched_decisions_total counter\nxsched_decisions_total %llu\n",
	    (unsigned long long)d->host.core.decisions);
	put(&t, "# HELP xsched_events_total Queue status changes handled.\n"
		"# TYPE xsched_events_total counter\nxsched_events_total %llu\n",
	    (unsigned long long)d->host.events);
	put(&t, "# HELP xsched_daemon_cpu_seconds_total CPU time of xschedd.\n"
		"# TYPE xsched_daemon_cpu_seconds_total counter\n"
		"xsched_daemon_cpu_seconds_total %.6f\n",
	    (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	put(&t, "# HELP xsched_reloads_total Configuration reloads (SIGHUP), by outcome.\n"
		"# TYPE xsched_reloads_total counter\n"
		"xsched_reloads_total{result=\"ok\"} %llu\n"
		"xsched_reloads_total{result=\"failed\"} %llu\n",
	    (unsigned long long)(d->reloads - d->reloads_failed),
	    (unsigned long long)d->reloads_failed);
	put(&t, "# HELP xsched_last_reload_ok 0 while the last reload failed (the previous "
		"configuration runs).\n# TYPE xsched_last_reload_ok gauge\n"
		"xsched_last_reload_ok %d\n", d->reload_rc == 0);
	put(&t, "# HELP xsched_daemon_realtime_priority SCHED_FIFO priority of the daemon's "
		"thread ([daemon] realtime_priority; 0: the normal policy, also when refused).\n"
		"# TYPE xsched_daemon_realtime_priority gauge\n"
		"xsched_daemon_realtime_priority %u\n", d->rt_priority);
	put(&t, "# HELP xsched_refused_connections_total Connections closed for want of file "
		"descriptors.\n# TYPE xsched_refused_connections_total counter\n"
		"xsched_refused_connections_total %llu\n", (unsigned long long)d->refused_fds);
	hist_metric(&t, "xsched_event_wakeup_seconds",
		    "Client status change to its receipt by the daemon.", &d->host.wake_lat);
	hist_metric(&t, "xsched_event_decision_seconds",
		    "Receipt of an event to the decisions written.", &d->host.decide_lat);
	device_info(&t, d, &sc);
	xsd_mem_metrics(&t, d, sc.all, sc.uid);
	queue_metric(&t, "xsched_queue_ready", "gauge", "1 while the queue has work.", d, &sc,
		     v_ready);
	queue_metric(&t, "xsched_queue_running", "gauge", "1 unless suspended by the policy.",
		     d, &sc, v_running);
	queue_metric(&t, "xsched_queue_priority", "gauge", "Effective priority.", d, &sc, v_prio);
	queue_metric(&t, "xsched_queue_submitted_total", "counter", "Commands submitted.", d, &sc,
		     v_submitted);
	queue_metric(&t, "xsched_queue_completed_total", "counter", "Commands completed.", d, &sc,
		     v_completed);
	queue_metric(&t, "xsched_queue_preemptions_total", "counter", "Suspends with work.", d,
		     &sc, v_preempt);
	queue_metric(&t, "xsched_queue_device_seconds_total", "counter",
		     "Device time of completed commands.", d, &sc, v_exec);
	queue_metric(&t, "xsched_queue_task_latency_p99_seconds", "gauge",
		     "P99 of Ready-to-Idle time.", d, &sc, v_task_p99);
	queue_metric(&t, "xsched_queue_preempt_latency_p99_seconds", "gauge",
		     "P99 of suspend-to-device-quiet time.", d, &sc, v_preempt_p99);
	queue_metric(&t, "xsched_queue_wait_seconds", "gauge",
		     "How long the queue has been ready and held suspended (0: not).", d, &sc,
		     v_wait);
	queue_metric(&t, "xsched_queue_starvation_grants_total", "counter",
		     "Times the starvation guard ran the queue.", d, &sc, v_grants);
	xsd_observe_metrics(d, reader, &t);
	xsd_enforce_metrics(d, reader, &t);
	return xsd_text_finish(&t, len);
}

/* --- the textfile ------------------------------------------------------- */

/* Writes the whole exposition to the textfile: a temporary file, renamed. */
static int textfile_write(struct xsd *d)
{
	char tmp[sizeof(d->cfg.metrics_textfile) + 8];
	size_t len, off = 0;
	char *text = xsd_metrics_text(d, NULL, &len);
	int fd, rc = 0;

	if (!text)
		return -ENOMEM;
	/* node_exporter reads *.prom only: it never sees the temporary file. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->cfg.metrics_textfile);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		rc = -errno;
		free(text);
		return rc;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	free(text);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, d->cfg.metrics_textfile) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

static void on_textfile(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	uint64_t v, missed;
	int rc;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	rc = textfile_write(d);
	if (rc < 0 && xsd_ratelimit_ok(&d->textfile_warn, clock_now_ns(), &missed))
		xsd_warn("cannot write the metrics textfile %s: %s (%llu more failures since "
			 "the last message)", d->cfg.metrics_textfile, strerror(-rc),
			 (unsigned long long)missed);
}

int xsd_textfile_apply(struct xsd *d)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (d->textfile.fd < 0) {
		d->textfile.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		d->textfile.fn = on_textfile;
		d->textfile_warn.interval_ns = 600 * NSEC_PER_SEC;
		if (d->textfile.fd < 0 || xsd_watch_add(d, &d->textfile, EPOLLIN) < 0)
			return -errno;
	}
	if (d->cfg.metrics_textfile[0]) {
		/* The first write comes at once, so a bad path shows at start. */
		its.it_value.tv_nsec = 1;
		its.it_interval.tv_sec = d->cfg.metrics_interval_s;
	}
	return timerfd_settime(d->textfile.fd, 0, &its, NULL) < 0 ? -errno : 0;
}

void xsd_textfile_stop(struct xsd *d)
{
	/* A stopped daemon's numbers are gone, not stale (absent(xsched_info)). */
	if (d->textfile.fd >= 0 && d->cfg.metrics_textfile[0])
		unlink(d->cfg.metrics_textfile);
	xsd_watch_del(d, &d->textfile);
}
