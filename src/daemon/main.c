/*
 * xschedd: the node daemon holding global scheduling policy.
 *
 * One epoll loop serves the sockets, the clients' pidfds and doorbells, a
 * signalfd (SIGTERM/SIGINT stop, SIGHUP reloads the configuration) and a
 * timerfd for the policy's timed decisions. There are no other threads and
 * no sleeps. Readiness and reloads are reported with the systemd notify
 * protocol (Type=notify).
 */
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/notify.h"
#include "base/clock.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xschedd [OPTIONS]\n"
		"Node daemon of xsched: global, policy-driven scheduling of XPU queues.\n\n"
		"  -f, --foreground          stay in the foreground (the only mode; for systemd)\n"
		"  -c, --config PATH         configuration file (default %s)\n"
		"  -s, --socket PATH         client socket (default %s)\n"
		"  -C, --control-socket PATH control socket (default %s)\n"
		"  -p, --policy NAME         policy, overriding the configuration\n"
		"  -v, --verbose             debug logging\n"
		"  -h, --help                this help\n",
		XSD_DEFAULT_CONFIG, IPC_DEFAULT_SOCKET, IPC_DEFAULT_CONTROL);
}

struct overrides {
	const char *socket, *control, *policy;
};

static void apply_overrides(struct xsd_config *c, const struct overrides *o)
{
	if (o->socket)
		snprintf(c->socket, sizeof(c->socket), "%s", o->socket);
	if (o->control)
		snprintf(c->control_socket, sizeof(c->control_socket), "%s", o->control);
	if (o->policy)
		snprintf(c->policy, sizeof(c->policy), "%s", o->policy);
}

static int load_config(struct xsd *d, const struct overrides *o, struct xsd_config *out)
{
	char err[512];
	int rc;

	xsd_config_defaults(out);
	rc = xsd_config_load(d->config_path, d->config_required, out, err, sizeof(err));
	if (rc < 0) {
		xsd_err("%s", err);
		xsd_config_fini(out);
		return rc;
	}
	apply_overrides(out, o);
	return 0;
}

/* SIGHUP: re-read the configuration; sockets stay, the rest applies now. */
static void reload(struct xsd *d, const struct overrides *o)
{
	struct xsd_config next;
	int rc;

	xsd_notify_reloading();
	if (load_config(d, o, &next) < 0) {
		xsd_warn("reload failed; keeping the running configuration");
		xsd_notify("READY=1");
		return;
	}
	if (strcmp(next.policy, d->sched.policy) ||
	    memcmp(&next.pconf, &d->cfg.pconf, sizeof(next.pconf))) {
		rc = xsd_sched_set_policy(&d->sched, next.policy, &next.pconf);
		if (rc < 0) {
			xsd_warn("reload: policy %s: %s; keeping %s", next.policy,
				 strerror(-rc), d->sched.policy);
			snprintf(next.policy, sizeof(next.policy), "%s", d->sched.policy);
		}
	}
	d->sched.guard_pct = next.starvation_guard_pct;
	d->sched.guard_period_ns = next.starvation_period_ns;
	d->sched.contention_window = next.contention_window;
	d->sched.caps_dirty = true;
	/* Sockets were bound at start: keep their paths. */
	memcpy(next.socket, d->cfg.socket, sizeof(next.socket));
	memcpy(next.control_socket, d->cfg.control_socket, sizeof(next.control_socket));
	xsd_config_fini(&d->cfg);
	d->cfg = next;
	xsd_decide(d, NULL, 0);
	xsd_info("configuration reloaded (policy %s)", d->sched.policy);
	xsd_notify("READY=1");
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "control-socket", required_argument, NULL, 'C' },
		{ "policy", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct overrides o = { 0 };
	struct xsd d = { .config_path = XSD_DEFAULT_CONFIG };
	struct epoll_event ev[64];
	char err[256];
	sigset_t mask;
	struct group *grp;
	int opt, rc = 1;

	while ((opt = getopt_long(argc, argv, "fc:s:C:p:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			break;
		case 'c':
			d.config_path = optarg;
			d.config_required = true;
			break;
		case 's':
			o.socket = optarg;
			break;
		case 'C':
			o.control = optarg;
			break;
		case 'p':
			o.policy = optarg;
			break;
		case 'v':
			xsd_verbose = true;
			break;
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
	if (load_config(&d, &o, &d.cfg) < 0)
		return 1;
	grp = getgrnam(d.cfg.control_group);
	d.control_gid = grp ? grp->gr_gid : (gid_t)-1;
	if (!grp)
		xsd_warn("group %s does not exist: the control socket is for root only",
			 d.cfg.control_group);
	if (xsd_sched_init(&d.sched, &d.cfg, err, sizeof(err)) < 0) {
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
	d.next_client_id = 1;
	d.start_ns = xs_now_ns();
	if (d.epfd < 0 || d.sig.fd < 0 || xsd_watch_add(&d, &d.sig, EPOLLIN) < 0) {
		xsd_err("event loop: %s", strerror(errno));
		goto out_sched;
	}
	if (xsd_server_start(&d) < 0)
		goto out_server;
	xsd_info("listening on %s and %s, policy %s", d.cfg.socket, d.cfg.control_socket,
		 d.sched.policy);
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
	xsd_server_stop(&d);
out_sched:
	xsd_watch_del(&d, &d.sig);
	if (d.epfd >= 0)
		close(d.epfd);
	xsd_sched_fini(&d.sched);
out_cfg:
	xsd_config_fini(&d.cfg);
	return rc;
}
