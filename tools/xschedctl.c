/*
 * xschedctl: command-line client of xschedd, in the style of systemctl:
 * `xschedctl [OPTIONS] VERB [ARGS]`.
 *
 * This file holds what every verb shares: the argument parser (hand-made
 * rather than getopt, so negative values such as "set budget -1" are
 * arguments and global options may also follow the verb), error reporting
 * and the mapping of errors to the documented exit codes, the table of
 * verbs with their help texts, and main(). The verbs live in their own
 * files (see xschedctl.h).
 */
#include "xschedctl.h"
#include "xsched/xsched.h"
#include "base/compiler.h"
#include "ipc/ipc_sock.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#ifndef XSCHED_VERSION_STRING
#error "the build defines XSCHED_VERSION_STRING"
#endif

/* How long a request waits for the daemon's reply before giving up. */
#define CTL_REPLY_TIMEOUT_S 10

static const struct ctl_verb ctl_verbs[] = {
	{
		"status", "status [-o json]",
		"Show whether xschedd runs, its policy, clients, queues and load.\n"
		"\n"
		"  -o, --output FMT   table (default) or json\n",
		ctl_status,
	},
	{
		"list", "list [--pid PID] [-o json]",
		"List the registered queues with their process (pid, uid, command),\n"
		"device, preemption level, state, hints, counters and P99 task latency.\n"
		"Through the client socket (no access to the control socket) only the\n"
		"caller's own queues are listed. In the table, a priority marked '*' is\n"
		"inherited from a higher-priority queue that waits on this one, and a\n"
		"device marked '(unverified)' is known by its API-local name only (see\n"
		"`xschedctl devices`). Pids are the host's (the daemon's namespace); when\n"
		"a process is in a container, CONTAINER shows its id (from its cgroup\n"
		"path) and NSPID its pid inside its own namespace.\n"
		"\n"
		"      --pid PID      only the queues of process PID\n"
		"  -o, --output FMT   table (default) or json\n",
		ctl_list,
	},
	{ "devices", "devices [-o json]", CTL_DEVICES_HELP, ctl_devices },
	{ "heatmap", CTL_HEATMAP_SYNOPSIS, CTL_HEATMAP_HELP, ctl_heatmap },
	{
		"top", "top [-b] [-n COUNT] [-d SECONDS] [--pid PID] [-o json]",
		"Show the daemon and its queues, refreshed every second, with rates\n"
		"since the previous refresh: completed commands per second and the\n"
		"share of device time (BUSY). Interrupt (Ctrl-C) to quit.\n"
		"\n"
		"  -b, --batch        plain snapshots without terminal control codes\n"
		"  -n, --iterations COUNT  stop after COUNT snapshots\n"
		"  -d, --delay SECONDS     time between snapshots (default 1, may be\n"
		"                          fractional)\n"
		"      --pid PID      only the queues of process PID\n"
		"  -o, --output FMT   table (default) or json: one JSON object per\n"
		"                     snapshot, one per line\n",
		ctl_top,
	},
	{
		"set", "set KEY VALUE (--pid PID | --queue ID)",
		"Set a scheduling hint or a preemption knob of one queue (--queue) or\n"
		"of every queue of a process (--pid). Values are checked here before\n"
		"anything is sent. Times are in microseconds, or with a unit suffix\n"
		"(us, ms, s).\n"
		"\n"
		"  priority N     -100..100, higher runs first\n"
		"  share N        bandwidth weight 1..1000000, 0 unsets it\n"
		"  deadline US    relative deadline of a task, 0 unsets it\n"
		"  laxity US      allowed slack of a task, 0 unsets it\n"
		"  threshold N    most commands in flight, 1..1024\n"
		"  batch N        a sync point every N commands, 1..1024\n"
		"  budget US      device time in flight, 1..10000000 us, -1 turns it off\n"
		"  level N        preemption level 1..3\n"
		"\n"
		"  -p, --pid PID      every queue of process PID\n"
		"  -q, --queue ID     queue ID (as shown by `xschedctl list`)\n",
		ctl_set,
	},
	{
		"policy", "policy get [-o json]\npolicy set NAME|/ABSOLUTE/PATH.so",
		"Show or switch the scheduling policy. Switching keeps every hint.\n"
		"Built-in policies: hpf (fixed priority per device), hhpf (fixed\n"
		"priority across devices), bandwidth, edf, laxity, fair. A policy\n"
		"module is given by the path of its shared object; a relative path is\n"
		"made absolute, and the daemon loads it.\n"
		"\n"
		"  -o, --output FMT   table (default) or json, for `policy get`\n",
		ctl_policy,
	},
	{
		"metrics", "metrics",
		"Print the daemon's metrics in the Prometheus text exposition format,\n"
		"as the daemon produced them (also with -o json).\n",
		ctl_metrics,
	},
	{
		"bypass", "bypass [--all] [-o json]",
		"List the processes that use an accelerator without xsched: they opened\n"
		"a device node (/dev/nvidia*, /dev/dri/renderD*, /dev/accel/*, /dev/kfd)\n"
		"or created a context in a vendor library, and did not register with\n"
		"xschedd within [observe] bypass_grace_ms. Needs the daemon's bypass\n"
		"detector ([observe] bypass = yes; eBPF, as root). Through the client\n"
		"socket only the caller's own processes are listed.\n"
		"\n"
		"  -a, --all          also processes within their grace period (pending)\n"
		"                     and scheduled ones\n"
		"  -o, --output FMT   table (default) or json\n",
		ctl_bypass,
	},
	{
		"trace", "trace --pid PID [--queue N] [--summary] [-d SECONDS] [-o json]",
		"Trace the XQueue events of process PID live, from libxsched's USDT\n"
		"probes (provider xsched: submit, launch, complete, suspend, resume,\n"
		"preempt_done) through eBPF; needs root (or CAP_BPF, CAP_PERFMON and\n"
		"CAP_SYS_ADMIN), not the daemon. Each event is printed as it comes; at\n"
		"the end (Ctrl-C, --duration, or the process's exit) a summary per\n"
		"queue: counts, and submit-to-launch, launch-to-complete, device time\n"
		"and preemption latencies (P50, P99). Queues are numbered per process\n"
		"(1, 2, ... in creation order). While traced, each event costs the\n"
		"process a uprobe hit (microseconds).\n"
		"\n"
		"  -p, --pid PID      the process (required)\n"
		"  -q, --queue N      only its queue N\n"
		"  -s, --summary      no live events, only the summary\n"
		"  -d, --duration T   stop after T seconds (or with a unit: 500ms)\n"
		"  -o, --output FMT   table (default) or json: one object per event,\n"
		"                     then the summary\n",
		ctl_trace,
	},
	{
		"run",
		"run [--priority N] [--share N] [--deadline US] [--laxity US]\n"
		"    [--memory-limit SIZE] [--api LIST | --lib PATH...] [--dry-run]\n"
		"    [--allow-unscheduled] [--] COMMAND [ARGS...]",
		"Run COMMAND under xsched: the hints go into its environment\n"
		"(XSCHED_PRIORITY, XSCHED_SHARE, XSCHED_DEADLINE_US, XSCHED_LAXITY_US)\n"
		"and the shim libraries are put first in LD_PRELOAD. Without --lib, the\n"
		"shims are looked for next to this xschedctl (<prefix>/<libdir>/xsched,\n"
		"<prefix>/lib/xsched, a build tree's src/shim/*/), then in\n"
		"$XSCHED_SHIM_DIR (directories separated by ':'); every one found is\n"
		"preloaded. With none found, run refuses (exit 1) and says where it looked.\n"
		"The daemon is not needed.\n"
		"The exit status is COMMAND's; 126 if it cannot run, 127 if not found.\n"
		"\n"
		"      --priority N   -100..100\n"
		"      --share N      0..1000000\n"
		"      --deadline US  relative deadline (us, or with a unit suffix)\n"
		"      --laxity US    allowed slack (us, or with a unit suffix)\n"
		"      --memory-limit SIZE  device memory per device (XSCHED_MEMORY_LIMIT): 8G\n"
		"      --api LIST     only these shims, each required: cuda,opencl,levelzero\n"
		"      --lib PATH     preload this shim instead (repeatable)\n"
		"  -n, --dry-run      print the environment it would set, run nothing\n"
		"      --allow-unscheduled  run COMMAND even when no shim is found\n",
		ctl_run,
	},
	{ "cdi", CTL_CDI_SYNOPSIS, CTL_CDI_HELP, ctl_cdi },
};

static const struct ctl_opt ctl_global_opts[] = {
	{ "help", 'h', false, CTL_OPT_HELP },
	{ "version", 'V', false, CTL_OPT_VERB },
	{ "socket", 0, true, CTL_OPT_SOCKET },
	{ "control", 0, true, CTL_OPT_CONTROL },
	{ "output", 'o', true, CTL_OPT_OUTPUT },
	{ NULL, 0, false, 0 },
};

/* "<3>" style prefixes only when stderr is the journal (systemd sets JOURNAL_STREAM). */
static bool ctl_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static __attribute__((format(printf, 3, 0))) void
ctl_vlog(const struct ctl *ctl, int prio, const char *fmt, va_list ap)
{
	if (ctl && ctl->journal)
		fprintf(stderr, "<%d>", prio);
	fputs("xschedctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ctl_err(const struct ctl *ctl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_vlog(ctl, 3, fmt, ap);
	va_end(ap);
}

void ctl_warn(const struct ctl *ctl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_vlog(ctl, 4, fmt, ap);
	va_end(ap);
}

const char *ctl_strerror(int err)
{
	switch (-err) {
	case EPIPE:
		return "the daemon closed the connection";
	case EBADMSG:
		return "malformed reply from the daemon";
	case EPROTO:
		return "the daemon speaks another protocol version";
	case ESRCH:
		return "no such process";
	case ENOENT:
		return "no such process, queue or policy";
	case EMSGSIZE:
		return "request too large";
	case EINTR:
		return "interrupted";
	case EAGAIN:
		return "no answer from the daemon in time; try again";
	default:
		break;
	}
	/* xs_strerror() phrases xsched's own codes; libc knows the others. */
	if (strcmp(xs_strerror(err), "unknown error") != 0)
		return xs_strerror(err);
	return strerror(-err);
}

int ctl_fail(const struct ctl *ctl, const struct ipc_client *c, int err, const char *what)
{
	if (err == -EACCES || err == -EPERM) {
		ctl_err(ctl, "%s: %s%s", what, ctl_strerror(err),
			c && !c->control ?
			" (connected through the client socket: only your own processes;"
			" the control socket needs root or group xsched)" : "");
		return CTL_EXIT_DENIED;
	}
	ctl_err(ctl, "%s: %s", what, ctl_strerror(err));
	return CTL_EXIT_ERROR;
}

const char *ctl_connected_path(const struct ctl *ctl, const struct ipc_client *c)
{
	if (c->control)
		return ctl->control ? ctl->control : ipc_control_path();
	return ctl->socket ? ctl->socket : ipc_socket_path();
}

int ctl_connect(const struct ctl *ctl, struct ipc_client *c)
{
	const char *control = ctl->control ? ctl->control : ipc_control_path();
	const char *client = ctl->socket ? ctl->socket : ipc_socket_path();
	struct stat st;
	bool denied_control;
	int rc;

	rc = ipc_client_open(c, control, client);
	if (rc == 0) {
		/* A wedged daemon must not hang the CLI (or scripts) forever. */
		struct timeval tv = { .tv_sec = CTL_REPLY_TIMEOUT_S };

		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		return CTL_EXIT_OK;
	}
	/*
	 * ipc_client_open() tries the client socket only when the control
	 * socket refused us; find out which path the error is about (only
	 * for the message, so the race with the daemon does not matter).
	 */
	denied_control = stat(control, &st) == 0 && access(control, W_OK) != 0;
	switch (-rc) {
	case ENOENT:
		ctl_err(ctl, "daemon not running (no socket at %s)",
			denied_control ? client : control);
		return CTL_EXIT_NODAEMON;
	case ECONNREFUSED:
		ctl_err(ctl, "daemon not running (nothing listens on %s)",
			denied_control ? client : control);
		return CTL_EXIT_NODAEMON;
	case EACCES:
	case EPERM:
		if (denied_control)
			ctl_err(ctl, "permission denied: cannot connect to %s (needs root or "
				"group xsched) nor to %s", control, client);
		else
			ctl_err(ctl, "the daemon at %s refused the connection: %s",
				control, ctl_strerror(rc));
		return CTL_EXIT_DENIED;
	case ENAMETOOLONG:
		ctl_err(ctl, "socket path too long or empty: %s",
			denied_control ? client : control);
		return CTL_EXIT_ERROR;
	default:
		ctl_err(ctl, "cannot connect to the daemon at %s: %s",
			c->control ? control : client, ctl_strerror(rc));
		return CTL_EXIT_ERROR;
	}
}

bool ctl_parse_int(const char *s, int64_t *out)
{
	long long v;
	char *end;

	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool ctl_parse_pid(const char *s, int32_t *out)
{
	int64_t n;

	if (!ctl_parse_int(s, &n) || n < 1 || n > INT32_MAX)
		return false;
	*out = (int32_t)n;
	return true;
}

bool ctl_parse_us(const char *s, int64_t *out)
{
	static const struct { const char *sfx; int64_t mul; } units[] = {
		{ "", 1 }, { "us", 1 }, { "ms", 1000 }, { "s", 1000000 },
	};
	long long v;
	char *end;
	size_t i;

	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return false;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].sfx) != 0)
			continue;
		if (v > INT64_MAX / units[i].mul || v < INT64_MIN / units[i].mul)
			return false;
		*out = v * units[i].mul;
		return true;
	}
	return false;
}

static const struct ctl_opt *ctl_find_long(const struct ctl_opt *opts, const char *name,
					   size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

static const struct ctl_opt *ctl_find_short(const struct ctl_opt *opts, char c)
{
	for (; opts->name; opts++)
		if (opts->short_name && opts->short_name == c)
			return opts;
	return NULL;
}

/* "-5" and "-1" are values, not options: no option is a digit. */
static bool ctl_is_negative_number(const char *s)
{
	return s[0] == '-' && isdigit((unsigned char)s[1]);
}

static int ctl_next_short(struct ctl_args *a, const struct ctl_opt *opts, const char **val)
{
	const char *arg = a->argv[a->i];
	const struct ctl_opt *o = ctl_find_short(opts, arg[a->sub]);

	if (!o) {
		ctl_usage_error(a->verb, "unknown option '-%c'", arg[a->sub]);
		return CTL_OPT_ERROR;
	}
	a->sub++;
	if (!o->arg) {
		*val = NULL;
		if (!arg[a->sub]) {
			a->i++;
			a->sub = 0;
		}
		return o->id;
	}
	if (arg[a->sub]) {
		*val = arg + a->sub;
		a->i++;
	} else if (a->i + 1 < a->argc) {
		*val = a->argv[a->i + 1];
		a->i += 2;
	} else {
		ctl_usage_error(a->verb, "option '-%c' needs a value", o->short_name);
		return CTL_OPT_ERROR;
	}
	a->sub = 0;
	return o->id;
}

int ctl_next(struct ctl_args *a, const struct ctl_opt *opts, const char **val)
{
	const struct ctl_opt *o;
	const char *arg, *eq;
	size_t len;

	if (a->sub)
		return ctl_next_short(a, opts, val);
	if (a->i >= a->argc)
		return CTL_OPT_END;
	arg = a->argv[a->i];
	if (!a->dashdash && strcmp(arg, "--") == 0) {
		a->dashdash = true;
		a->i++;
		if (a->stop)
			return CTL_OPT_END;
		return ctl_next(a, opts, val);
	}
	if (a->dashdash || arg[0] != '-' || arg[1] == '\0' || ctl_is_negative_number(arg)) {
		if (a->stop)
			return CTL_OPT_END;
		*val = arg;
		a->i++;
		return CTL_OPT_POS;
	}
	if (arg[1] != '-') {
		a->sub = 1;
		return ctl_next_short(a, opts, val);
	}
	eq = strchr(arg + 2, '=');
	len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	o = ctl_find_long(opts, arg + 2, len);
	if (!o) {
		ctl_usage_error(a->verb, "unknown option '--%.*s'", (int)len, arg + 2);
		return CTL_OPT_ERROR;
	}
	a->i++;
	if (!o->arg) {
		if (eq) {
			ctl_usage_error(a->verb, "option '--%s' takes no value", o->name);
			return CTL_OPT_ERROR;
		}
		*val = NULL;
		return o->id;
	}
	if (eq) {
		*val = eq + 1;
	} else if (a->i < a->argc) {
		*val = a->argv[a->i++];
	} else {
		ctl_usage_error(a->verb, "option '--%s' needs a value", o->name);
		return CTL_OPT_ERROR;
	}
	return o->id;
}

int ctl_verb_opt(struct ctl *ctl, struct ctl_args *a, int id, const char *val)
{
	switch (id) {
	case CTL_OPT_ERROR:
		return CTL_EXIT_ERROR;
	case CTL_OPT_HELP:
		return ctl_verb_help(a->verb);
	case CTL_OPT_POS:
		if (a->npos >= a->max_pos)
			return ctl_usage_error(a->verb, "unexpected argument '%s'", val);
		a->pos[a->npos++] = val;
		return -1;
	default:
		return ctl_common_opt(ctl, id, val) ? -1 : CTL_EXIT_ERROR;
	}
}

bool ctl_common_opt(struct ctl *ctl, int id, const char *val)
{
	switch (id) {
	case CTL_OPT_SOCKET:
		ctl->socket = val;
		return true;
	case CTL_OPT_CONTROL:
		ctl->control = val;
		return true;
	case CTL_OPT_OUTPUT:
		if (strcmp(val, "json") == 0) {
			ctl->out = CTL_OUT_JSON;
		} else if (strcmp(val, "table") == 0) {
			ctl->out = CTL_OUT_TABLE;
		} else {
			ctl_usage_error(NULL, "unknown output format '%s' (table or json)", val);
			return false;
		}
		return true;
	default:
		return false;
	}
}

/* Prints each line of @synopsis prefixed with "Usage: xschedctl " or indentation. */
static void ctl_print_synopsis(FILE *f, const char *synopsis)
{
	const char *p = synopsis;
	bool first = true;

	while (*p) {
		size_t n = strcspn(p, "\n");

		fprintf(f, "%s xschedctl %.*s\n", first ? "Usage:" : "      ", (int)n, p);
		first = false;
		p += n;
		if (*p)
			p++;
	}
}

int ctl_verb_help(const struct ctl_verb *v)
{
	ctl_print_synopsis(stdout, v->synopsis);
	printf("\n%s", v->help);
	printf("\nGlobal options (also accepted after the verb):\n"
	       "      --socket PATH    client socket (default $XSCHED_SOCKET or\n"
	       "                       %s)\n"
	       "      --control PATH   control socket (default $XSCHED_CONTROL_SOCKET or\n"
	       "                       %s)\n"
	       "  -h, --help           show this help\n",
	       IPC_DEFAULT_SOCKET, IPC_DEFAULT_CONTROL);
	return CTL_EXIT_OK;
}

int ctl_usage_error(const struct ctl_verb *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("xschedctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (v)
		fprintf(stderr, "Try 'xschedctl %s --help'.\n", v->name);
	else
		fputs("Try 'xschedctl --help'.\n", stderr);
	return CTL_EXIT_ERROR;
}

static void ctl_usage(FILE *f)
{
	size_t i;

	fputs("Usage: xschedctl [OPTIONS] VERB [ARGS...]\n"
	      "\n"
	      "Control xschedd, the xsched scheduling daemon.\n"
	      "\n"
	      "Verbs:\n", f);
	for (i = 0; i < ARRAY_SIZE(ctl_verbs); i++) {
		const char *p = ctl_verbs[i].synopsis;

		while (*p) {
			size_t n = strcspn(p, "\n");

			fprintf(f, "  %.*s\n", (int)n, p);
			p += n;
			if (*p)
				p++;
		}
	}
	fprintf(f,
		"  help [VERB]\n"
		"\n"
		"Options:\n"
		"      --socket PATH    client socket (default $XSCHED_SOCKET or\n"
		"                       %s)\n"
		"      --control PATH   control socket (default $XSCHED_CONTROL_SOCKET or\n"
		"                       %s)\n"
		"  -o, --output FMT     table (default) or json, for listings\n"
		"  -h, --help           show this help; `xschedctl VERB --help` for a verb\n"
		"  -V, --version        show the version\n"
		"\n"
		"Exit status: 0 success, 1 error or bad usage, 3 daemon not running,\n"
		"4 permission denied. See xschedctl(1).\n",
		IPC_DEFAULT_SOCKET, IPC_DEFAULT_CONTROL);
}

static const struct ctl_verb *ctl_find_verb(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ctl_verbs); i++)
		if (strcmp(ctl_verbs[i].name, name) == 0)
			return &ctl_verbs[i];
	return NULL;
}

/* `xschedctl help [VERB]` */
static int ctl_help_verb(int argc, char **argv)
{
	const struct ctl_verb *v;

	if (argc < 2) {
		ctl_usage(stdout);
		return CTL_EXIT_OK;
	}
	if (argc > 2)
		return ctl_usage_error(NULL, "help takes at most one verb");
	v = ctl_find_verb(argv[1]);
	if (!v)
		return ctl_usage_error(NULL, "unknown verb '%s'", argv[1]);
	return ctl_verb_help(v);
}

int main(int argc, char **argv)
{
	struct ctl ctl = { .out = CTL_OUT_TABLE };
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .stop = true };
	const struct ctl_verb *v;
	const char *val;
	int id, rc;

	ctl.journal = ctl_stderr_is_journal();
	while ((id = ctl_next(&a, ctl_global_opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ERROR:
			return CTL_EXIT_ERROR;
		case CTL_OPT_HELP:
			ctl_usage(stdout);
			return CTL_EXIT_OK;
		case CTL_OPT_VERB:
			printf("xschedctl %s (IPC protocol %u)\n", XSCHED_VERSION_STRING,
			       IPC_VERSION);
			return CTL_EXIT_OK;
		default:
			if (!ctl_common_opt(&ctl, id, val))
				return CTL_EXIT_ERROR;
		}
	}
	if (a.i >= argc) {
		ctl_usage(stderr);
		return CTL_EXIT_ERROR;
	}
	if (strcmp(argv[a.i], "help") == 0)
		return ctl_help_verb(argc - a.i, argv + a.i);
	v = ctl_find_verb(argv[a.i]);
	if (!v)
		return ctl_usage_error(NULL, "unknown verb '%s'", argv[a.i]);
	rc = v->run(&ctl, v, argc - a.i, argv + a.i);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		ctl_err(&ctl, "cannot write the output: %s", strerror(errno));
		return CTL_EXIT_ERROR;
	}
	return rc;
}
