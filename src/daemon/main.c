/*
 * xschedd: the node daemon holding global scheduling policy.
 *
 * One epoll loop serves the sockets, the clients' pidfds and doorbells, a
 * signalfd (SIGTERM/SIGINT stop, SIGHUP reloads the configuration) and a
 * timerfd for the policy's timed decisions and the liveness heartbeat
 * (host.c). There are no other threads and no sleeps. Readiness and reloads are reported with the systemd notify
 * protocol (Type=notify).
 */
#include "daemon/daemon.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/memory.h"
#include "daemon/metrics.h"
#include "daemon/notify.h"
#include "daemon/enforce.h"
#include "daemon/heat.h"
#include "daemon/observe.h"
#include "daemon/requests.h"
#include "daemon/server.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/slice.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef XSCHED_VERSION_STRING
#error "the build defines XSCHED_VERSION_STRING"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xschedd [OPTIONS]\n"
		"       xschedd --check-config [--config PATH] [OPTIONS]\n"
		"Node daemon of xsched: global, policy-driven scheduling of XPU queues.\n\n"
		"  -f, --foreground          stay in the foreground (the only mode; for systemd)\n"
		"  -c, --config PATH         configuration file (default %s)\n"
		"  -s, --socket PATH         client socket (default %s)\n"
		"  -C, --control-socket PATH control socket (default %s)\n"
		"  -p, --policy NAME         policy, overriding the configuration\n"
		"  -v, --verbose             also log registrations and debug messages\n"
		"      --check-config        check the configuration (and options), print\n"
		"                            every problem, exit 0 if it is valid, else 1\n"
		"  -V, --version             print the version\n"
		"  -h, --help                this help\n"
		"\nSignals: SIGHUP reloads the configuration, SIGTERM and SIGINT stop.\n"
		"Exit status: 0 stopped by a signal, or a valid configuration; 1 an\n"
		"error; 2 a usage error. See xschedd(8).\n",
		XSD_DEFAULT_CONFIG, IPC_DEFAULT_SOCKET, IPC_DEFAULT_CONTROL);
}

struct overrides {
	const char *socket, *control, *policy;
};

/* Command-line paths are checked like the configuration's: never cut. */
static int check_option_path(const char *opt, const char *path)
{
	const char *why = xsd_socket_path_problem(path);

	if (why) {
		fprintf(stderr, "xschedd: %s %s: %s\n", opt, path, why);
		return -EINVAL;
	}
	return 0;
}

static void apply_overrides(struct xsd_config *c, const struct overrides *o)
{
	if (o->socket)
		snprintf(c->socket, sizeof(c->socket), "%s", o->socket);
	if (o->control)
		snprintf(c->control_socket, sizeof(c->control_socket), "%s", o->control);
	if (o->policy)
		snprintf(c->policy, sizeof(c->policy), "%s", o->policy);
}

/* Logs each line of @msg at @prio. */
static void log_lines(int prio, const char *msg)
{
	while (*msg) {
		size_t n = strcspn(msg, "\n");

		xsd_log(prio, "%.*s", (int)n, msg);
		msg += n + (msg[n] == '\n');
	}
}

/*
 * Loads the configuration with the command line's overrides into @out and
 * checks what no single key can (the two sockets differ). On error the
 * problems, one a line, are in @err.
 */
static int load_config(struct xsd *d, const struct overrides *o, struct xsd_config *out,
		       char *err, size_t errlen)
{
	int rc;

	xsd_config_defaults(out);
	rc = xsd_config_load(d->config_path, d->config_required, out, err, errlen);
	if (rc < 0) {
		xsd_config_fini(out);
		return rc;
	}
	apply_overrides(out, o);
	if (!strcmp(out->socket, out->control_socket)) {
		snprintf(err, errlen, "the client and control sockets are both %s: they must differ",
			 out->socket);
		xsd_config_fini(out);
		return -EINVAL;
	}
	return 0;
}

/*
 * [daemon] thread_slice_us for the loop's thread (base/slice.h). Under
 * another policy than SCHED_OTHER (chrt, the unit's CPUSchedulingPolicy=)
 * the thread is left as the operator set it.
 */
static void apply_slice(uint32_t us)
{
	int rc = slice_set_thread(us);

	if (rc == -EAGAIN)
		xsd_info("thread_slice_us: the daemon does not run under SCHED_OTHER; "
			 "its scheduling is left as it is");
	else if (rc < 0)
		xsd_warn("thread_slice_us = %u: sched_setattr: %s; the kernel's slice stays",
			 us, strerror(-rc));
}

/*
 * A runaway loop at real-time priority would keep its CPU from every
 * normal thread: unless the operator set RLIMIT_RTTIME (the unit's
 * LimitRTTIME=), the kernel signals SIGXCPU (fatal: systemd restarts the
 * daemon) after XSD_RTTIME_US of CPU without a blocking call, where the
 * loop blocks every few microseconds, and kills it XSD_RTTIME_US later.
 */
#define XSD_RTTIME_US 500000

static void rt_guard(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_RTTIME, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY) {
		rl.rlim_cur = XSD_RTTIME_US;
		if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 2 * XSD_RTTIME_US)
			rl.rlim_max = 2 * XSD_RTTIME_US;
		if (setrlimit(RLIMIT_RTTIME, &rl) < 0)
			xsd_warn("realtime_priority: setrlimit(RLIMIT_RTTIME): %s", strerror(errno));
	}
}

/*
 * The loop thread's CPU policy from @next ([daemon] realtime_priority, else
 * thread_slice_us), at start (@old NULL) and at a reload; what is in effect
 * into d->rt_priority (the metrics' xsched_daemon_realtime_priority). Real-
 * time priority refused (no CAP_SYS_NICE nor LimitRTPRIO=, the unit's
 * RestrictRealtime=) is a warning, and the slice applies instead.
 */
static void apply_cpu_policy(struct xsd *d, const struct xsd_config *old,
			     const struct xsd_config *next)
{
	uint32_t prio = next->realtime_priority;
	int rc;

	if (old && old->realtime_priority == prio && old->thread_slice_us == next->thread_slice_us)
		return;
	if (prio) {
		rc = slice_set_rt(prio);
		if (rc == 0) {
			d->rt_priority = prio;
			rt_guard();
			xsd_info("realtime_priority = %u: the loop runs under SCHED_FIFO", prio);
			return;
		}
		xsd_warn("realtime_priority = %u: sched_setattr: %s (it needs CAP_SYS_NICE or "
			 "LimitRTPRIO=%u, and RestrictRealtime=no in the unit); the loop keeps "
			 "the normal policy", prio, strerror(-rc), prio);
	} else if (d->rt_priority) {
		rc = slice_set_rt(0);
		if (rc < 0 && rc != -EAGAIN)
			xsd_warn("realtime_priority = 0: sched_setattr: %s", strerror(-rc));
		else
			d->rt_priority = 0;
	}
	if (next->thread_slice_us || (old && old->thread_slice_us))
		apply_slice(next->thread_slice_us);
}

/* First line of @msg, for one-line reports (sd_notify STATUS=, xschedctl). */
static void first_line(char *dst, size_t len, const char *msg)
{
	snprintf(dst, len, "%.*s", (int)strcspn(msg, "\n"), msg);
}

/* Remembers the outcome of the last reload for `xschedctl status`. */
static void reload_outcome(struct xsd *d, int rc, const char *why)
{
	char line[sizeof(d->reload_msg) + 64];

	d->reloads++;
	d->reloads_failed += rc < 0;
	d->reload_ns = clock_now_ns();
	d->reload_rc = rc;
	first_line(d->reload_msg, sizeof(d->reload_msg), rc < 0 ? why : "");
	if (rc < 0) {
		xsd_err("reload failed; keeping the running configuration (policy %s)",
			d->host.policy);
		snprintf(line, sizeof(line), "READY=1\nSTATUS=reload failed: %s", d->reload_msg);
	} else {
		xsd_info("configuration reloaded (policy %s)", d->host.policy);
		snprintf(line, sizeof(line), "READY=1\nSTATUS=scheduling (policy %s)",
			 d->host.policy);
	}
	xsd_notify(line);
}

/* SIGHUP: re-read the configuration; sockets stay, the rest applies now. */
static void reload(struct xsd *d, const struct overrides *o)
{
	struct xsd_config next;
	char err[1024];
	int rc;

	xsd_notify_reloading();
	rc = load_config(d, o, &next, err, sizeof(err));
	if (rc < 0) {
		log_lines(XSD_ERR, err);
		reload_outcome(d, rc, err);
		return;
	}
	/* The policy first: if it cannot be had, nothing else has changed. */
	if (strcmp(next.policy, d->host.policy) ||
	    memcmp(&next.pconf, &d->cfg.pconf, sizeof(next.pconf))) {
		rc = xsd_host_set_policy(&d->host, next.policy, &next.pconf, err, sizeof(err));
		if (rc < 0) {
			xsd_err("%s", err);
			xsd_config_fini(&next);
			reload_outcome(d, rc, err);
			return;
		}
	}
	xsd_host_reconfigure(&d->host, &next);
	apply_cpu_policy(d, &d->cfg, &next);
	/* Sockets were bound at start: keep their paths. */
	if (strcmp(next.socket, d->cfg.socket) || strcmp(next.control_socket, d->cfg.control_socket))
		xsd_warn("reload: the socket paths change only at the next start");
	memcpy(next.socket, d->cfg.socket, sizeof(next.socket));
	memcpy(next.control_socket, d->cfg.control_socket, sizeof(next.control_socket));
	/* A textfile moved elsewhere (or turned off) leaves nothing stale. */
	if (d->cfg.metrics_textfile[0] && strcmp(d->cfg.metrics_textfile, next.metrics_textfile))
		unlink(d->cfg.metrics_textfile);
	xsd_config_fini(&d->cfg);
	d->cfg = next;
	xsd_hints_reconfigure(d);
	xsd_host_decide(d, NULL, 0);
	rc = xsd_textfile_apply(d);
	if (rc < 0)
		xsd_warn("metrics textfile: %s", strerror(-rc));
	if (xsd_heat_apply(d) < 0)
		xsd_warn("heat maps: out of memory");
	if (xsd_observe_apply(d) < 0)
		xsd_warn("bypass detection: out of memory");
	if (xsd_enforce_apply(d) < 0)
		xsd_err("device enforcement: out of memory");
	reload_outcome(d, 0, NULL);
}

static void on_signal(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			d->reload = true;
		else
			d->stop = true;
	}
}

/*
 * --check-config: everything a start would check before binding its
 * sockets (the file, the options, the policy, which is loaded and
 * initialized once). Problems go to stderr, one a line; 0 if valid.
 */
static int check_config(struct xsd *d, const struct overrides *o)
{
	struct xsd_config cfg;
	struct xsd_host s;
	char err[4096];
	struct stat st;
	int rc;

	rc = load_config(d, o, &cfg, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	rc = xsd_host_init(&s, &cfg, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "%s\n", err);
	else
		xsd_host_fini(&s);
	if (!getgrnam(cfg.control_group))
		fprintf(stderr, "warning: group %s does not exist: the control socket would be "
			"for root only\n", cfg.control_group);
	if (cfg.metrics_textfile[0]) {
		char dir[sizeof(cfg.metrics_textfile)];

		snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(cfg.metrics_textfile, '/') -
						     cfg.metrics_textfile), cfg.metrics_textfile);
		if (access(dir[0] ? dir : "/", W_OK) < 0)
			fprintf(stderr, "warning: [metrics] textfile: cannot write in %s: %s\n",
				dir[0] ? dir : "/", strerror(errno));
	}
	if (rc == 0)
		printf("%s: %s (policy %s)\n", d->config_path,
		       stat(d->config_path, &st) == 0 ? "valid" :
		       "not found; the built-in defaults apply", cfg.policy);
	xsd_config_fini(&cfg);
	return rc < 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "control-socket", required_argument, NULL, 'C' },
		{ "policy", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, 'K' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct overrides o = { 0 };
	struct xsd d = { .config_path = XSD_DEFAULT_CONFIG };
	struct epoll_event ev[64];
	bool check = false;
	char err[4096];
	sigset_t mask;
	struct group *grp;
	int opt, rc = 1;

	while ((opt = getopt_long(argc, argv, "fc:s:C:p:vVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			break;
		case 'c':
			d.config_path = optarg;
			d.config_required = true;
			break;
		case 's':
			if (check_option_path("--socket", optarg) < 0)
				return 1;
			o.socket = optarg;
			break;
		case 'C':
			if (check_option_path("--control-socket", optarg) < 0)
				return 1;
			o.control = optarg;
			break;
		case 'p':
			o.policy = optarg;
			break;
		case 'v':
			xsd_verbose = true;
			break;
		case 'K':
			check = true;
			break;
		case 'V':
			printf("xschedd %s (IPC protocol %u, policy ops %u)\n",
			       XSCHED_VERSION_STRING, IPC_VERSION, XS_POLICY_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (check)
		return check_config(&d, &o);
	if (load_config(&d, &o, &d.cfg, err, sizeof(err)) < 0) {
		log_lines(XSD_ERR, err);
		return 1;
	}
	apply_cpu_policy(&d, NULL, &d.cfg);
	grp = getgrnam(d.cfg.control_group);
	d.control_gid = grp ? grp->gr_gid : (gid_t)-1;
	if (!grp)
		xsd_warn("group %s does not exist: the control socket is for root only",
			 d.cfg.control_group);
	if (xsd_host_init(&d.host, &d.cfg, err, sizeof(err)) < 0) {
		xsd_err("%s", err);
		goto out_cfg;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	d.sig.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d.sig.fn = on_signal;
	d.listen_client.fd = d.listen_control.fd = d.timer.fd = d.house.fd = -1;
	d.mem_timer.fd = -1;
	d.textfile.fd = -1;
	d.next_client_id = 1;
	d.start_ns = clock_now_ns();
	if (d.epfd < 0 || d.sig.fd < 0 || xsd_watch_add(&d, &d.sig, EPOLLIN) < 0) {
		xsd_err("event loop: %s", strerror(errno));
		goto out_host;
	}
	if (xsd_server_start(&d) < 0 || xsd_host_start(&d) < 0)
		goto out_server;
	rc = xsd_textfile_apply(&d);
	if (rc < 0) {
		xsd_err("metrics textfile: %s", strerror(-rc));
		rc = 1;
		goto out_server;
	}
	if (xsd_heat_apply(&d) < 0)
		xsd_warn("heat maps: out of memory");
	if (xsd_observe_apply(&d) < 0)
		xsd_warn("bypass detection: out of memory");
	if (xsd_enforce_apply(&d) < 0)
		xsd_err("device enforcement: out of memory");
	xsd_info("listening on %s and %s, policy %s", d.cfg.socket, d.cfg.control_socket,
		 d.host.policy);
	xsd_notify("READY=1\nSTATUS=scheduling");
	while (!d.stop) {
		int n = epoll_wait(d.epfd, ev, 64, -1), i;

		if (n < 0 && errno != EINTR) {
			xsd_err("epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n && !d.stop; i++) {
			struct xsd_watch *w = ev[i].data.ptr;

			w->fn(&d, w, ev[i].events);
		}
		xsd_reap_zombies(&d);
		if (d.reload) {
			d.reload = false;
			reload(&d, &o);
		}
	}
	xsd_notify("STOPPING=1");
	xsd_info("stopping: resuming every queue");
	rc = 0;
out_server:
	xsd_enforce_stop(&d);
	xsd_observe_stop(&d);
	xsd_heat_stop(&d);
	xsd_textfile_stop(&d);
	xsd_mem_stop(&d);
	xsd_host_stop(&d);
	xsd_server_stop(&d);
out_host:
	xsd_watch_del(&d, &d.sig);
	if (d.epfd >= 0)
		close(d.epfd);
	xsd_host_fini(&d.host);
out_cfg:
	xsd_config_fini(&d.cfg);
	return rc;
}
