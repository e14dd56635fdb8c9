/*
 * xschedctl heatmap: a latency heat map from the daemon (IPC_HEATMAP,
 * "Heat maps" in ipc/ipc_abi.h): run-queue latency per CPU (the default),
 * of one process's threads, task latency of one queue or of every queue,
 * drawn for the terminal or written as JSON, SVG or PNG (heat_render.h).
 *
 * For the terminal the daemon bins the columns itself (max_cols = the
 * cells that fit the width), so the reply is as small as the picture; the
 * files get the daemon's own window unless --window says otherwise. As
 * every verb, the whole command line is checked before connecting, and
 * nothing is written until the map has arrived.
 */
#include "xschedctl.h"
#include "heat_render.h"
#include "base/compiler.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define HEAT_NS_PER_S 1000000000ull
#define HEAT_DEFAULT_LAST_NS (30 * HEAT_NS_PER_S)
#define HEAT_MAX_WINDOW_NS (3600 * HEAT_NS_PER_S)
#define HEAT_MAX_LAST_NS (7 * 86400 * HEAT_NS_PER_S)
#define HEAT_MAX_THRESHOLD_NS (10 * HEAT_NS_PER_S)
#define HEAT_MAX_WIDTH 4096
#define HEAT_DEFAULT_WIDTH 80

enum {
	CTL_OPT_CPU = CTL_OPT_VERB,
	CTL_OPT_QUEUE,
	CTL_OPT_PID,
	CTL_OPT_QUEUES,
	CTL_OPT_WINDOW,
	CTL_OPT_LAST,
	CTL_OPT_THRESHOLD,
	CTL_OPT_OUT,
	CTL_OPT_WIDTH,
};

static const struct ctl_opt ctl_heat_opts[] = {
	CTL_COMMON_OPTS,
	{ "output", 'o', true, CTL_OPT_OUTPUT },
	{ "cpu", 0, false, CTL_OPT_CPU },
	{ "queue", 'q', true, CTL_OPT_QUEUE },
	{ "pid", 'p', true, CTL_OPT_PID },
	{ "queues", 0, false, CTL_OPT_QUEUES },
	{ "window", 'w', true, CTL_OPT_WINDOW },
	{ "last", 'l', true, CTL_OPT_LAST },
	{ "threshold", 't', true, CTL_OPT_THRESHOLD },
	{ "out", 0, true, CTL_OPT_OUT },
	{ "width", 0, true, CTL_OPT_WIDTH },
	{ NULL, 0, false, 0 },
};

enum ctl_heat_fmt { CTL_HEAT_TABLE, CTL_HEAT_JSON, CTL_HEAT_SVG, CTL_HEAT_PNG };

/* What the command line asked for. */
struct ctl_heat_args {
	struct ipc_heatmap req;
	int kinds;              /* --cpu, --pid, --queue, --queues given */
	enum ctl_heat_fmt fmt;
	const char *out;        /* --out; NULL: stdout */
	int width;              /* --width; 0: the terminal's */
};

/*
 * Parses a duration with its unit: "500us", "10ms", "1s", "2m". A bare
 * number is refused: here it could mean any of them.
 */
static bool ctl_heat_parse_dur(const char *s, uint64_t *ns)
{
	size_t n = strlen(s);
	char num[32];
	int64_t v;

	if (n >= 2 && s[n - 1] == 'm' && isdigit((unsigned char)s[n - 2])) {
		if (n >= sizeof(num))
			return false;
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (!ctl_parse_int(num, &v) || v <= 0 || v > (int64_t)(UINT64_MAX / 60 /
									HEAT_NS_PER_S))
			return false;
		*ns = (uint64_t)v * 60 * HEAT_NS_PER_S;
		return true;
	}
	if (!n || !isalpha((unsigned char)s[n - 1]) || !ctl_parse_us(s, &v) || v <= 0 ||
	    v > INT64_MAX / 1000)
		return false;
	*ns = (uint64_t)v * 1000;
	return true;
}

static bool ctl_heat_parse_fmt(const char *s, enum ctl_heat_fmt *fmt)
{
	static const char *const names[] = { "table", "json", "svg", "png" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*fmt = (enum ctl_heat_fmt)i;
			return true;
		}
	return false;
}

/* A duration option in (0, @max]; returns -1 to go on, else the exit code. */
static int ctl_heat_dur_opt(const struct ctl_verb *v, const char *name, const char *val,
			    uint64_t max, uint64_t *ns)
{
	char buf[24];

	if (!ctl_heat_parse_dur(val, ns))
		return ctl_usage_error(v, "invalid %s '%s' (a duration with its unit: 500us, "
				       "10ms, 1s, 2m)", name, val);
	if (*ns > max)
		return ctl_usage_error(v, "%s %s is too long (at most %s)", name, val,
				       heat_fmt_dur(buf, sizeof(buf), max, " "));
	return -1;
}

/* The options of heatmap itself; -1 to go on, else the exit code. */
static int ctl_heat_opt(struct ctl *ctl, struct ctl_args *a, struct ctl_heat_args *h, int id,
			const char *val)
{
	const struct ctl_verb *v = a->verb;
	int64_t n;
	int32_t pid;

	switch (id) {
	case CTL_OPT_OUTPUT:
		if (!ctl_heat_parse_fmt(val, &h->fmt))
			return ctl_usage_error(v, "unknown output format '%s' (table, json, svg "
					       "or png)", val);
		return -1;
	case CTL_OPT_CPU:
	case CTL_OPT_QUEUES:
		h->req.kind = id == CTL_OPT_CPU ? IPC_HEAT_CPU : IPC_HEAT_QUEUES;
		h->kinds++;
		return -1;
	case CTL_OPT_QUEUE:
		if (!ctl_parse_int(val, &n) || n < 1)
			return ctl_usage_error(v, "invalid queue '%s' (an id from `xschedctl list`)",
					       val);
		h->req.kind = IPC_HEAT_QUEUE;
		h->req.id = (uint64_t)n;
		h->kinds++;
		return -1;
	case CTL_OPT_PID:
		if (!ctl_parse_pid(val, &pid))
			return ctl_usage_error(v, "invalid pid '%s'", val);
		h->req.kind = IPC_HEAT_PID;
		h->req.id = (uint64_t)pid;
		h->kinds++;
		return -1;
	case CTL_OPT_WINDOW:
		return ctl_heat_dur_opt(v, "window", val, HEAT_MAX_WINDOW_NS, &h->req.window_ns);
	case CTL_OPT_LAST:
		return ctl_heat_dur_opt(v, "span", val, HEAT_MAX_LAST_NS, &h->req.last_ns);
	case CTL_OPT_THRESHOLD:
		return ctl_heat_dur_opt(v, "threshold", val, HEAT_MAX_THRESHOLD_NS,
					&h->req.threshold_ns);
	case CTL_OPT_OUT:
		if (!*val)
			return ctl_usage_error(v, "--out needs a file name");
		h->out = val;
		return -1;
	case CTL_OPT_WIDTH:
		if (!ctl_parse_int(val, &n) || n < HEAT_MIN_WIDTH || n > HEAT_MAX_WIDTH)
			return ctl_usage_error(v, "invalid width '%s' (%d..%d columns)", val,
					       HEAT_MIN_WIDTH, HEAT_MAX_WIDTH);
		h->width = (int)n;
		return -1;
	default:
		return ctl_verb_opt(ctl, a, id, val);
	}
}

static int ctl_heat_args(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv,
			 struct ctl_heat_args *h)
{
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	const char *val;
	int id, rc;

	h->req.kind = IPC_HEAT_CPU;
	h->req.last_ns = HEAT_DEFAULT_LAST_NS;
	/* A global "-o json" before the verb counts too. */
	h->fmt = ctl->out == CTL_OUT_JSON ? CTL_HEAT_JSON : CTL_HEAT_TABLE;
	while ((id = ctl_next(&a, ctl_heat_opts, &val)) != CTL_OPT_END)
		if ((rc = ctl_heat_opt(ctl, &a, h, id, val)) >= 0)
			return rc;
	if (h->kinds > 1)
		return ctl_usage_error(v, "--cpu, --pid, --queue and --queues exclude each other");
	if (h->fmt == CTL_HEAT_PNG && !h->out)
		return ctl_usage_error(v, "-o png needs --out FILE (an image is not for the "
				       "terminal)");
	if (h->fmt == CTL_HEAT_PNG && !heat_png_available()) {
		ctl_err(ctl, "-o png needs gnuplot, which is not installed (or not in $PATH); "
			"-o svg needs nothing");
		return CTL_EXIT_ERROR;
	}
	return -1;
}

/* --width, else the terminal's, else $COLUMNS, else 80. */
static int ctl_heat_width(int given)
{
	const char *cols = getenv("COLUMNS");
	struct winsize ws;
	int64_t n;

	if (given)
		return given;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		n = ws.ws_col;
	else if (!cols || !ctl_parse_int(cols, &n) || n < 1 || n > HEAT_MAX_WIDTH)
		n = HEAT_DEFAULT_WIDTH;
	/* Narrower than that, lines wrap: better than no map at all. */
	return n < HEAT_MIN_WIDTH ? HEAT_MIN_WIDTH : (int)n;
}

/* Colour on a terminal only, and never with NO_COLOR set (https://no-color.org). */
static bool ctl_heat_colour(const struct ctl_heat_args *h)
{
	const char *no = getenv("NO_COLOR");

	return !h->out && isatty(STDOUT_FILENO) && !(no && *no);
}

/* Reports the daemon's refusal @rc in words; returns the exit code. */
static int ctl_heat_fail(const struct ctl *ctl, const struct ipc_client *c,
			 const struct ctl_heat_args *h, int rc)
{
	switch (-rc) {
	case EOPNOTSUPP:
		if (h->req.kind == IPC_HEAT_CPU || h->req.kind == IPC_HEAT_PID)
			ctl_err(ctl, "the daemon's eBPF programs are not running: %s maps need "
				"them ([observe] runqueue_latency = yes, root; the daemon's log "
				"says why)", h->req.kind == IPC_HEAT_CPU ? "CPU" : "process");
		else
			ctl_err(ctl, "the daemon makes no heat maps (older than this xschedctl?)");
		return CTL_EXIT_ERROR;
	case ENODATA:
		ctl_err(ctl, "the daemon keeps no heat maps ([observe] heatmap = no)");
		return CTL_EXIT_ERROR;
	case ENODEV:
		if (h->req.kind == IPC_HEAT_QUEUE)
			ctl_err(ctl, "no queue %llu (or not yours); `xschedctl list` shows the "
				"queues", (unsigned long long)h->req.id);
		else if (h->req.kind == IPC_HEAT_PID)
			ctl_err(ctl, "process %llu is not registered with xsched (or not yours)",
				(unsigned long long)h->req.id);
		else
			return ctl_fail(ctl, c, rc, "cannot get the heat map");
		return CTL_EXIT_ERROR;
	case E2BIG:
		ctl_err(ctl, "the heat map is too large for one reply: ask for a larger "
			"--window or a shorter --last");
		return CTL_EXIT_ERROR;
	default:
		return ctl_fail(ctl, c, rc, "cannot get the heat map");
	}
}

static int ctl_heat_fetch(struct ctl *ctl, struct ctl_heat_args *h, struct ipc_heat_data *d)
{
	struct ipc_client c;
	int rc;

	if (h->fmt == CTL_HEAT_TABLE)
		h->req.max_cols = (uint32_t)heat_text_cells(h->req.kind, ctl_heat_width(h->width));
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_heatmap(&c, &h->req, d);
	if (rc < 0)
		rc = ctl_heat_fail(ctl, &c, h, rc);
	ipc_client_close(&c);
	return rc;
}

/* Writes @d as asked to @f. */
static int ctl_heat_render(const struct ctl_heat_args *h, const struct ipc_heat_data *d,
			   FILE *f)
{
	switch (h->fmt) {
	case CTL_HEAT_JSON:
		return heat_render_json(f, d);
	case CTL_HEAT_SVG:
		return heat_render_svg(f, d);
	default:
		return heat_render_text(f, d, ctl_heat_width(h->width), ctl_heat_colour(h));
	}
}

/* Writes the map to --out or stdout; returns the exit code. */
static int ctl_heat_write(const struct ctl *ctl, const struct ctl_heat_args *h,
			  const struct ipc_heat_data *d)
{
	FILE *f = stdout;
	int rc;

	if (h->fmt == CTL_HEAT_PNG) {
		rc = heat_render_png(d, h->out);
		if (rc == -ECHILD)
			ctl_err(ctl, "-o png needs gnuplot, which is not installed; -o svg needs "
				"nothing");
		else if (rc == -EIO)
			ctl_err(ctl, "gnuplot could not draw %s (its messages are above); -o svg "
				"needs nothing", h->out);
		else if (rc < 0)
			ctl_err(ctl, "cannot write %s: %s", h->out, strerror(-rc));
		return rc < 0 ? CTL_EXIT_ERROR : CTL_EXIT_OK;
	}
	if (h->out && !(f = fopen(h->out, "w"))) {
		ctl_err(ctl, "cannot write %s: %s", h->out, strerror(errno));
		return CTL_EXIT_ERROR;
	}
	rc = ctl_heat_render(h, d, f);
	if (h->out && fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		ctl_err(ctl, "cannot write %s: %s", h->out ? h->out : "the output",
			strerror(-rc));
		if (h->out)
			unlink(h->out);
		return CTL_EXIT_ERROR;
	}
	return CTL_EXIT_OK;
}

int ctl_heatmap(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ctl_heat_args h = { .fmt = CTL_HEAT_TABLE };
	struct ipc_heat_data d;
	int rc = ctl_heat_args(ctl, v, argc, argv, &h);

	if (rc >= 0)
		return rc;
	rc = ctl_heat_fetch(ctl, &h, &d);
	if (rc)
		return rc;
	/* The daemon echoes the threshold with the hot spots of CPU maps only;
	 * the other maps are coloured by the one asked for. */
	if (!d.meta.threshold_ns)
		d.meta.threshold_ns = h.req.threshold_ns ? h.req.threshold_ns :
				      HEAT_DEFAULT_THRESHOLD_NS;
	rc = ctl_heat_write(ctl, &h, &d);
	ipc_heat_data_free(&d);
	return rc;
}
