/*
 * The bypass detector in the daemon (observe.h): the eBPF programs of
 * src/bpf/bypass.bpf.c report, once per process, each accelerator device
 * node it opens and each context it creates through a vendor library, and
 * the end of those processes. This file keeps a bounded table of them and
 * cross-checks it against the daemon's clients: a process that used an
 * XPU for [observe] bypass_grace_ms without ever connecting as an agent
 * (which a shimmed process does at its first queue) is a bypass, logged
 * once at info level, listed by IPC_BYPASS and counted in the metrics.
 *
 * The table is an array searched linearly: at most bypass_max entries
 * (1024 by default), touched once per process event and per timer tick,
 * not per command. A full table refuses new processes (counted, warned
 * about at most every ten minutes) rather than evicting known ones. One
 * timerfd serves the grace deadlines and a sweep every two seconds that
 * drops processes whose exit event was lost (ring buffer full, or the
 * programs' LRU map evicted them).
 *
 * Run-queue latency (src/bpf/rqlat.bpf.c) is measured for the processes
 * of the agents connected: watched at HELLO, forgotten when the client
 * goes; their histograms are read from the programs' map when listed.
 *
 * Vendor libraries to probe: libcuda.so.1, libOpenCL.so.1 and
 * libze_loader.so.1 found in the system's library directories (the
 * multiarch and lib64 ones, and those of /etc/ld.so.conf.d), plus the
 * paths of [observe] libraries. A library inside a container's own root
 * is another file: such processes are seen by their device opens only.
 */
#include "daemon/observe.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/heat.h"
#include "daemon/log.h"
#include "daemon/peer.h"
#include "daemon/prom.h"
#include "daemon/send.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "bpf/xbpf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#ifndef XSD_LIB_DIRS
#define XSD_LIB_DIRS "/usr/lib64:/usr/lib:/lib64:/lib"
#endif

#define OBS_SWEEP_NS (2 * NSEC_PER_SEC)
#define OBS_MAX_LIBS 32

static const char *const obs_lib_names[] = {
	"libcuda.so.1", "libOpenCL.so.1", "libze_loader.so.1",
};

struct obs_proc {
	int32_t pid;
	uint32_t uid;
	uint64_t start_ns;                 /* CLOCK_BOOTTIME: tells a reused pid */
	uint64_t cgroup_id;
	uint64_t seen_ns;                  /* first use, daemon clock */
	uint32_t uses;
	uint32_t state;                    /* enum ipc_bypass_state */
	char comm[16];
	char what[48];
	char cgroup[128];
};

struct xsd_observe {
	struct xbpf_bypass *bp;            /* NULL: not running */
	struct xsd_watch rb;               /* the programs' ring buffer */
	struct xsd_watch timer;
	struct obs_proc *proc;
	size_t n, max;
	uint64_t dropped;                  /* processes refused, table full */
	uint64_t bypasses;                 /* processes found bypassing, ever */
	struct xsd_ratelimit full_warn;
	int rc;                            /* why not running: 0 or -errno */
	char why[256];
	char libs[sizeof(((struct xsd_config *)0)->observe_libraries)]; /* as loaded */
	struct xbpf_rqlat *rq;             /* NULL: run-queue latency not measured */
	struct xbpf_rqlat_opts rq_opts;    /* as loaded */
	int rq_rc;
	char rq_why[256];
};

static bool obs_registered(const struct xsd *d, int32_t pid)
{
	const struct xsd_client *c;

	for (c = d->clients; c; c = c->next)
		if (c->pid == pid && c->role == IPC_ROLE_AGENT && c->hello && !c->dead)
			return true;
	return false;
}

static void obs_remove(struct xsd_observe *o, size_t i)
{
	o->proc[i] = o->proc[--o->n];
}

/* Arms the timer for the next grace deadline, else the sweep, else off. */
static void obs_arm(struct xsd *d)
{
	struct xsd_observe *o = d->obs;
	uint64_t grace = (uint64_t)d->cfg.bypass_grace_ms * NSEC_PER_MSEC;
	uint64_t now = clock_now_ns(), next = 0, wait;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	size_t i;

	for (i = 0; i < o->n; i++) {
		uint64_t t = o->proc[i].seen_ns + grace;

		if (o->proc[i].state == IPC_BYPASS_PENDING && (!next || t < next))
			next = t;
	}
	if (!next && o->n)
		next = now + OBS_SWEEP_NS;
	if (next) {
		wait = next > now ? next - now : 1;
		its.it_value.tv_sec = (time_t)(wait / NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(wait % NSEC_PER_SEC);
	}
	timerfd_settime(o->timer.fd, 0, &its, NULL);
}

/* Decides the pending entries whose grace is over; drops the dead. */
static void obs_check(struct xsd *d)
{
	struct xsd_observe *o = d->obs;
	uint64_t grace = (uint64_t)d->cfg.bypass_grace_ms * NSEC_PER_MSEC;
	uint64_t now = clock_now_ns();
	size_t i = 0;

	while (i < o->n) {
		struct obs_proc *p = &o->proc[i];
		char comm[sizeof(p->comm) * 4], cg[sizeof(p->cgroup) * 4];

		if (kill(p->pid, 0) < 0 && errno == ESRCH) {
			obs_remove(o, i);
			continue;
		}
		if (p->state == IPC_BYPASS_PENDING && now - p->seen_ns >= grace) {
			if (obs_registered(d, p->pid)) {
				p->state = IPC_BYPASS_REGISTERED;
			} else {
				p->state = IPC_BYPASS_YES;
				o->bypasses++;
				xsd_info("bypass: pid %d (%s, uid %u, cgroup %s) uses an accelerator "
					 "(%s) without xsched", (int)p->pid,
					 xsd_printable(comm, sizeof(comm), p->comm, sizeof(p->comm)),
					 (unsigned)p->uid,
					 p->cgroup[0] ? xsd_printable(cg, sizeof(cg), p->cgroup,
								      sizeof(p->cgroup)) : "?",
					 p->what);
			}
		}
		i++;
	}
}

static void obs_on_timer(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	uint64_t v;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	obs_check(d);
	obs_arm(d);
}

static struct obs_proc *obs_find(struct xsd_observe *o, int32_t pid)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (o->proc[i].pid == pid)
			return &o->proc[i];
	return NULL;
}

/* One event of the programs (xbpf_use_fn); @arg is the daemon. */
static void obs_event(void *arg, const struct xbpf_use_event *e, const char *what)
{
	struct xsd *d = arg;
	struct xsd_observe *o = d->obs;
	struct obs_proc *p = obs_find(o, (int32_t)e->pid);
	uint64_t missed;

	if (e->type == XBPF_EV_EXIT) {
		if (p && p->start_ns == e->start_ns)
			obs_remove(o, (size_t)(p - o->proc));
		return;
	}
	if (p && p->start_ns == e->start_ns) {
		p->uses |= e->use;
		return;
	}
	if (p) {
		/* The pid was reused and the old process's exit lost. */
		obs_remove(o, (size_t)(p - o->proc));
	}
	if (o->n == o->max) {
		o->dropped++;
		if (xsd_ratelimit_ok(&o->full_warn, clock_now_ns(), &missed))
			xsd_warn("bypass: the table is full ([observe] bypass_max = %zu): pid %u "
				 "not tracked (%llu more since the last message)", o->max,
				 (unsigned)e->pid, (unsigned long long)missed);
		return;
	}
	p = &o->proc[o->n++];
	memset(p, 0, sizeof(*p));
	p->pid = (int32_t)e->pid;
	p->uid = e->uid;
	p->start_ns = e->start_ns;
	p->cgroup_id = e->cgroup_id;
	p->seen_ns = clock_now_ns();
	p->uses = e->use;
	p->state = obs_registered(d, p->pid) ? IPC_BYPASS_REGISTERED : IPC_BYPASS_PENDING;
	memcpy(p->comm, e->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	snprintf(p->what, sizeof(p->what), "%s", what);
	xsd_peer_cgroup(p->pid, p->cgroup, sizeof(p->cgroup));
	obs_arm(d);
}

static void obs_on_ring(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	(void)w;
	(void)events;
	xbpf_bypass_poll(d->obs->bp);
}

/* Adds @path to @libs unless it is a file already there. */
static void obs_add_lib(char **libs, size_t *n, const char *path)
{
	char real[PATH_MAX];
	size_t i;

	if (*n == OBS_MAX_LIBS || !realpath(path, real))
		return;
	for (i = 0; i < *n; i++)
		if (!strcmp(libs[i], real))
			return;
	libs[*n] = strdup(real);
	if (libs[*n])
		(*n)++;
}

/* Looks for each vendor library in @dir. */
static void obs_scan_dir(char **libs, size_t *n, const char *dir, size_t len)
{
	char path[PATH_MAX];
	size_t k;

	for (k = 0; k < ARRAY_SIZE(obs_lib_names); k++) {
		snprintf(path, sizeof(path), "%.*s/%s", (int)len, dir, obs_lib_names[k]);
		if (access(path, R_OK) == 0)
			obs_add_lib(libs, n, path);
	}
}

/* The directories of /etc/ld.so.conf.d/ *.conf (plain lines; no includes). */
static void obs_scan_ldconf(char **libs, size_t *n)
{
	DIR *dir = opendir("/etc/ld.so.conf.d");
	struct dirent *de;

	while (dir && (de = readdir(dir))) {
		char path[PATH_MAX], line[PATH_MAX];
		size_t len = strlen(de->d_name);
		FILE *f;

		if (len < 6 || strcmp(de->d_name + len - 5, ".conf"))
			continue;
		snprintf(path, sizeof(path), "/etc/ld.so.conf.d/%s", de->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, " \t\n#")] = '\0';
			if (line[0] == '/')
				obs_scan_dir(libs, n, line, strlen(line));
		}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
}

struct obs_libs {
	char **libs;
	size_t n;
};

/* One path of [observe] libraries (xsd_config_items). */
static void obs_configured_lib(void *arg, const char *path)
{
	struct obs_libs *l = arg;

	if (access(path, R_OK) < 0)
		xsd_warn("[observe] libraries: %s: %s", path, strerror(errno));
	else
		obs_add_lib(l->libs, &l->n, path);
}

/* Every library to probe: found, then configured. */
static size_t obs_libraries(const struct xsd_config *cfg, char **libs)
{
	const char *p;
	size_t n = 0;

	for (p = XSD_LIB_DIRS; *p; ) {
		size_t len = strcspn(p, ":");

		if (len)
			obs_scan_dir(libs, &n, p, len);
		p += len + (p[len] == ':');
	}
	obs_scan_ldconf(libs, &n);
	{
		struct obs_libs l = { libs, n };

		xsd_config_items(cfg->observe_libraries, obs_configured_lib, &l);
		n = l.n;
	}
	return n;
}

static void obs_unload(struct xsd *d)
{
	struct xsd_observe *o = d->obs;

	/* The ring buffer's descriptor is libbpf's: closed with the object. */
	if (o->rb.fd >= 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, o->rb.fd, NULL);
	o->rb.fd = -1;
	xsd_watch_del(d, &o->timer);
	xbpf_bypass_close(o->bp);
	o->bp = NULL;
	free(o->proc);
	o->proc = NULL;
	o->n = 0;
}

/* Loads the programs; on failure, logs why unless it did already. */
static int obs_load(struct xsd *d)
{
	struct xsd_observe *o = d->obs;
	char *libs[OBS_MAX_LIBS], err[sizeof(o->why)], note[1024];
	size_t nlibs = obs_libraries(&d->cfg, libs), i;
	int rc;

	o->max = d->cfg.bypass_max;
	o->proc = calloc(o->max, sizeof(*o->proc));
	if (!o->proc) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	xbpf_set_log(xsd_libbpf_log, 0);
	rc = xbpf_bypass_open((const char *const *)libs, nlibs, obs_event, d, &o->bp, err,
			      sizeof(err), note, sizeof(note));
	if (rc == 0) {
		rc = xsd_watch_ring_timer(d, &o->rb, xbpf_bypass_fd(o->bp), obs_on_ring,
					  &o->timer, obs_on_timer);
		if (rc < 0)
			snprintf(err, sizeof(err), "event loop: %s", strerror(-rc));
	}
out:
	if (rc == 0) {
		const char *p = note;

		while (*p) {
			size_t len = strcspn(p, "\n");

			xsd_warn("bypass: %.*s", (int)len, p);
			p += len + (p[len] == '\n');
		}
		xsd_info("bypass detection on: device opens by %s, %u uprobes in %zu libraries, "
			 "grace %u ms", xbpf_bypass_hook(o->bp), xbpf_bypass_uprobes(o->bp), nlibs,
			 d->cfg.bypass_grace_ms);
		for (i = 0; i < nlibs; i++)
			xsd_debug("bypass: probing %s", libs[i]);
		o->why[0] = '\0';
		memcpy(o->libs, d->cfg.observe_libraries, sizeof(o->libs));
	} else {
		if (rc != o->rc || strcmp(err, o->why))
			xsd_warn("bypass detection unavailable: %s; running without it", err);
		snprintf(o->why, sizeof(o->why), "%s", err);
		obs_unload(d);
	}
	o->rc = rc;
	for (i = 0; i < nlibs; i++)
		free(libs[i]);
	return rc;
}

/* Starts or stops run-queue latency as configured; watches every agent. */
static void obs_rq_apply(struct xsd *d)
{
	struct xsd_observe *o = d->obs;
	const struct xsd_client *c;
	char err[sizeof(o->rq_why)];
	/* Node-wide with heat maps; the window is theirs. */
	struct xbpf_rqlat_opts opts = {
		.node_wide = d->heat != NULL,
		.window_ns = (uint64_t)d->cfg.heat_window_ms * NSEC_PER_MSEC,
	};
	int rc;

	if (o->rq && d->cfg.observe_runqueue && opts.node_wide == o->rq_opts.node_wide &&
	    opts.window_ns == o->rq_opts.window_ns)
		return;
	if (o->rq) {
		xsd_heat_rq(d, NULL);
		xbpf_rqlat_close(o->rq);
		o->rq = NULL;
		if (!d->cfg.observe_runqueue)
			xsd_info("run-queue latency off");
	}
	if (!d->cfg.observe_runqueue)
		return;
	xbpf_set_log(xsd_libbpf_log, 0);
	rc = xbpf_rqlat_open(&o->rq, &opts, err, sizeof(err));
	if (rc < 0) {
		if (rc != o->rq_rc || strcmp(err, o->rq_why))
			xsd_warn("run-queue latency unavailable: %s; running without it", err);
		o->rq_rc = rc;
		snprintf(o->rq_why, sizeof(o->rq_why), "%s", err);
		return;
	}
	o->rq_rc = 0;
	o->rq_why[0] = '\0';
	o->rq_opts = opts;
	xsd_heat_rq(d, o->rq);
	xsd_info("run-queue latency of registered processes on%s",
		 opts.node_wide ? ", and of every CPU for heat maps" : "");
	for (c = d->clients; c; c = c->next)
		if (c->role == IPC_ROLE_AGENT && c->hello && !c->dead)
			xbpf_rqlat_watch(o->rq, c->pid);
}

int xsd_observe_apply(struct xsd *d)
{
	struct xsd_observe *o = d->obs;

	if (!o) {
		if (!d->cfg.observe_bypass && !d->cfg.observe_runqueue)
			return 0;
		o = d->obs = calloc(1, sizeof(*o));
		if (!o)
			return -ENOMEM;
		o->rb.fd = o->timer.fd = -1;
		o->full_warn.interval_ns = 600 * NSEC_PER_SEC;
		o->rc = -ENODEV;
	}
	obs_rq_apply(d);
	if (!d->cfg.observe_bypass) {
		if (o->bp)
			xsd_info("bypass detection off");
		obs_unload(d);
		o->rc = -ENODEV;
		o->why[0] = '\0';
		return 0;
	}
	if (o->bp && !strcmp(o->libs, d->cfg.observe_libraries) && o->max == d->cfg.bypass_max) {
		obs_arm(d);                /* the grace may have changed */
		return 0;
	}
	obs_unload(d);
	obs_load(d);
	return 0;
}

void xsd_observe_stop(struct xsd *d)
{
	if (!d->obs)
		return;
	obs_unload(d);
	xsd_heat_rq(d, NULL);
	xbpf_rqlat_close(d->obs->rq);
	free(d->obs);
	d->obs = NULL;
}

void xsd_observe_client(struct xsd *d, const struct xsd_client *c)
{
	struct obs_proc *p;

	if (!d->obs || c->role != IPC_ROLE_AGENT)
		return;
	if (d->obs->rq)
		xbpf_rqlat_watch(d->obs->rq, c->pid);
	p = d->obs->bp ? obs_find(d->obs, c->pid) : NULL;
	if (p)
		p->state = IPC_BYPASS_REGISTERED;
}

void xsd_observe_client_gone(struct xsd *d, const struct xsd_client *c)
{
	const struct xsd_client *o;

	if (!d->obs || !d->obs->rq || c->role != IPC_ROLE_AGENT || !c->hello)
		return;
	/* Another connection of the process (one that reconnected) keeps it. */
	for (o = d->clients; o; o = o->next)
		if (o != c && o->pid == c->pid && o->role == IPC_ROLE_AGENT && !o->dead)
			return;
	xbpf_rqlat_unwatch(d->obs->rq, c->pid);
	xsd_heat_proc_gone(d, c->pid);
}

uint64_t xsd_observe_rq_p99(const struct xsd *d, int32_t pid)
{
	struct xbpf_rq_hist h;

	if (!d->obs || !d->obs->rq || xbpf_rqlat_read(d->obs->rq, pid, &h) < 0)
		return 0;
	return xbpf_rq_quantile(&h, 0.99);
}

static void obs_record(const struct obs_proc *p, uint64_t now, struct ipc_bypass_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = p->pid;
	r->uid = p->uid;
	r->start_ns = p->start_ns;
	r->age_ns = now - p->seen_ns;
	r->cgroup_id = p->cgroup_id;
	r->uses = p->uses;
	r->state = p->state;
	memcpy(r->comm, p->comm, sizeof(r->comm));
	memcpy(r->what, p->what, sizeof(r->what));
	r->what[sizeof(r->what) - 1] = '\0';
	memcpy(r->cgroup, p->cgroup, sizeof(r->cgroup));
	r->cgroup[sizeof(r->cgroup) - 1] = '\0';
}

/* IPC_BYPASS_REPLY chunks being filled for one listing. */
struct obs_out {
	struct xsd *d;
	struct xsd_client *c;
	uint32_t seq;
	int rc;
	union {
		struct {
			struct ipc_bypass_reply h;
			struct ipc_bypass_rec rec[IPC_BYPASS_PER_MSG];
		} m;
		uint64_t align;
	} out;
};

static void obs_put(void *arg, const struct ipc_bypass_rec *r)
{
	struct obs_out *o = arg;

	if (o->rc < 0)
		return;
	if (o->out.m.h.count == IPC_BYPASS_PER_MSG) {
		o->rc = xsd_send(o->c, IPC_BYPASS_REPLY, o->seq, &o->out.m, sizeof(o->out.m),
				 NULL, 0);
		o->out.m.h.count = 0;
	}
	o->out.m.rec[o->out.m.h.count++] = *r;
}

/* The gate's processes the detector does not list (those it does were merged). */
static void obs_put_gate(void *arg, const struct ipc_bypass_rec *r)
{
	struct obs_out *o = arg;
	const struct xsd_observe *obs = o->d->obs;
	size_t i;

	for (i = 0; obs && obs->bp && i < obs->n; i++)
		if (obs->proc[i].pid == r->pid && obs->proc[i].start_ns == r->start_ns)
			return;
	obs_put(arg, r);
}

int xsd_observe_list(struct xsd *d, struct xsd_client *c, uint32_t seq)
{
	struct xsd_observe *o = d->obs;
	struct obs_out *out;
	uint64_t now = clock_now_ns();
	size_t i;
	int rc;

	if ((!o || !o->bp) && !xsd_enforce_running(d)) {
		/* Why neither runs: the detector's reason, else the gate's. */
		int why = o && o->rc != -ENODEV ? o->rc : xsd_enforce_error(d);

		return xsd_reply(c, seq, why == -ENODEV || why == 0 ? -ENODEV :
				 why == -EOPNOTSUPP ? -EOPNOTSUPP : -ECANCELED);
	}
	out = calloc(1, sizeof(*out));
	if (!out)
		return xsd_reply(c, seq, -ENOMEM);
	out->d = d;
	out->c = c;
	out->seq = seq;
	if (o && o->bp) {
		obs_check(d);              /* the dead go, deadlines passed apply */
		for (i = 0; i < o->n; i++) {
			struct ipc_bypass_rec r;

			if (!c->privileged && o->proc[i].uid != c->uid)
				continue;
			obs_record(&o->proc[i], now, &r);
			/* What the gate did to it says more than the detector's view. */
			xsd_enforce_find(d, r.pid, r.start_ns, &r.state, &r.denied);
			obs_put(out, &r);
		}
	}
	xsd_enforce_each(d, c, obs_put_gate, out);
	rc = out->rc;
	if (rc == 0) {
		out->out.m.h.flags = IPC_F_LAST;
		rc = xsd_send(c, IPC_BYPASS_REPLY, seq, &out->out.m,
			      sizeof(out->out.m.h) + out->out.m.h.count * sizeof(out->out.m.rec[0]),
			      NULL, 0);
	}
	free(out);
	return rc;
}

/* The names of @uses' bits, '+'-separated, for a label. */
static void obs_uses(uint32_t uses, char *out, size_t len)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{ XBPF_USE_NVIDIA, "nvidia" }, { XBPF_USE_DRI, "dri" },
		{ XBPF_USE_ACCEL, "accel" }, { XBPF_USE_KFD, "kfd" },
		{ XBPF_USE_CUDA, "cuda" }, { XBPF_USE_OPENCL, "opencl" },
		{ XBPF_USE_LEVELZERO, "levelzero" },
	};
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (uses & names[i].bit)
			o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s%s", o ? "+" : "",
					      names[i].name);
}

/*
 * One Prometheus histogram series per registered process: buckets of
 * 1 us to about 1 s in powers of two (the programs' log2 slots), then +Inf.
 */
static void obs_rq_metrics(struct xsd *d, const struct xsd_client *reader, struct xsd_text *t)
{
	const struct xsd_client *c;
	bool all = !reader || reader->privileged;

	if (!d->obs || !d->obs->rq)
		return;
	xsd_text_printf(t, "# HELP xsched_process_runqueue_latency_seconds Time the threads of "
			"a registered process waited for a CPU, runnable.\n"
			"# TYPE xsched_process_runqueue_latency_seconds histogram\n");
	for (c = d->clients; c; c = c->next) {
		struct xbpf_rq_hist h;
		uint64_t cum = 0;
		char comm[64];
		unsigned k;

		if (c->role != IPC_ROLE_AGENT || !c->hello || (!all && c->uid != reader->uid) ||
		    xbpf_rqlat_read(d->obs->rq, c->pid, &h) < 0)
			continue;
		xsd_prom_label(comm, sizeof(comm), c->comm);
		for (k = 0; k < XBPF_RQ_SLOTS; k++) {
			cum += h.slot[k];
			/* Slot k ends at 2^(k+1) ns; buckets from 2^10 (1 us) to 2^30. */
			if (k + 1 >= 10 && k + 1 <= 30)
				xsd_text_printf(t, "xsched_process_runqueue_latency_seconds_bucket{"
						"pid=\"%d\",comm=\"%s\",le=\"%.9g\"} %llu\n",
						(int)c->pid, comm, (double)(1ull << (k + 1)) / 1e9,
						(unsigned long long)cum);
		}
		xsd_text_printf(t, "xsched_process_runqueue_latency_seconds_bucket{pid=\"%d\","
				"comm=\"%s\",le=\"+Inf\"} %llu\n", (int)c->pid, comm,
				(unsigned long long)cum);
		xsd_text_printf(t, "xsched_process_runqueue_latency_seconds_sum{pid=\"%d\","
				"comm=\"%s\"} %.9g\n", (int)c->pid, comm, (double)h.sum_ns / 1e9);
		xsd_text_printf(t, "xsched_process_runqueue_latency_seconds_count{pid=\"%d\","
				"comm=\"%s\"} %llu\n", (int)c->pid, comm, (unsigned long long)cum);
	}
}

void xsd_observe_metrics(struct xsd *d, const struct xsd_client *reader, struct xsd_text *t)
{
	struct xsd_observe *o = d->obs;
	bool all = !reader || reader->privileged;
	uint32_t n = 0;
	size_t i;

	obs_rq_metrics(d, reader, t);
	xsd_text_printf(t, "# HELP xsched_bypass_detector_up 1 while the bypass detector runs.\n"
			"# TYPE xsched_bypass_detector_up gauge\nxsched_bypass_detector_up %d\n",
			o && o->bp);
	if (!o || !o->bp)
		return;
	for (i = 0; i < o->n; i++)
		n += o->proc[i].state == IPC_BYPASS_YES && (all || o->proc[i].uid == reader->uid);
	xsd_text_printf(t, "# HELP xsched_bypass_processes Processes using an accelerator "
			"without xsched.\n# TYPE xsched_bypass_processes gauge\n"
			"xsched_bypass_processes %u\n", n);
	xsd_text_printf(t, "# HELP xsched_bypass_detected_total Processes found bypassing "
			"xsched since the detector started.\n"
			"# TYPE xsched_bypass_detected_total counter\n"
			"xsched_bypass_detected_total %llu\n", (unsigned long long)o->bypasses);
	xsd_text_printf(t, "# HELP xsched_xpu_processes Processes seen using an accelerator, "
			"scheduled or not.\n# TYPE xsched_xpu_processes gauge\n"
			"xsched_xpu_processes %zu\n", o->n);
	xsd_text_printf(t, "# HELP xsched_bypass_untracked_total Processes not tracked: "
			"the table was full, or the programs' events were lost.\n"
			"# TYPE xsched_bypass_untracked_total counter\n"
			"xsched_bypass_untracked_total %llu\n",
			(unsigned long long)(o->dropped + xbpf_bypass_lost(o->bp)));
	xsd_text_printf(t, "# HELP xsched_bypass_process_info A process using an accelerator "
			"without xsched.\n# TYPE xsched_bypass_process_info gauge\n");
	for (i = 0; i < o->n; i++) {
		const struct obs_proc *p = &o->proc[i];
		char comm[64], cg[sizeof(p->cgroup) * 2], what[sizeof(p->what) * 2], uses[64];

		if (p->state != IPC_BYPASS_YES || (!all && p->uid != reader->uid))
			continue;
		xsd_prom_label(comm, sizeof(comm), p->comm);
		xsd_prom_label(cg, sizeof(cg), p->cgroup);
		xsd_prom_label(what, sizeof(what), p->what);
		obs_uses(p->uses, uses, sizeof(uses));
		xsd_text_printf(t, "xsched_bypass_process_info{pid=\"%d\",uid=\"%u\",comm=\"%s\","
				"cgroup=\"%s\",uses=\"%s\",first=\"%s\"} 1\n", (int)p->pid,
				(unsigned)p->uid, comm, cg, uses, what);
	}
}
