/*
 * Internal interface of xschedctl, the command-line client of xschedd.
 *
 * The program is split by concern: xschedctl.c parses the command line,
 * reports errors and maps them to exit codes; xschedctl_list.c (status,
 * list), xschedctl_devices.c (devices), xschedctl_top.c (top),
 * xschedctl_heatmap.c (heatmap, drawn by heat_*.c, see heat_render.h) and
 * xschedctl_verbs.c (set, policy, metrics) talk to the daemon;
 * xschedctl_run.c starts a program under the shims and never needs the
 * daemon; xschedctl_fmt.c formats tables, JSON and durations. Every verb
 * validates its whole command line before it connects, so a usage error
 * never reaches the daemon. Verbs return an exit code (enum ctl_exit), not
 * an errno. Single-threaded throughout.
 */
#ifndef XS_XSCHEDCTL_H
#define XS_XSCHEDCTL_H

#include "ipc/ipc_client.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes (documented in xschedctl(1)). */
enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_ERROR = 1,     /* any error, bad usage included */
	CTL_EXIT_NODAEMON = 3,  /* no daemon listening on the socket */
	CTL_EXIT_DENIED = 4,    /* the socket or the request was refused */
};

enum ctl_output { CTL_OUT_TABLE, CTL_OUT_JSON };

/* Global state: options given before (or after) the verb. */
struct ctl {
	const char *control;    /* --control; NULL: $XSCHED_CONTROL_SOCKET or default */
	const char *socket;     /* --socket; NULL: $XSCHED_SOCKET or default */
	enum ctl_output out;
	bool journal;           /* stderr is the journal: syslog prefixes */
};

/* A verb: its handler parses argv[1..] itself (argv[0] is the verb). */
struct ctl_verb {
	const char *name;
	const char *synopsis;   /* one or more lines, without the program name */
	const char *help;       /* description and options, ends with a newline */
	int (*run)(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
};

/* --- command-line parsing (xschedctl.c) -------------------------------- */

/* Option ids shared by every verb; verbs number their own from CTL_OPT_VERB. */
enum {
	CTL_OPT_END = -1,       /* no more arguments */
	CTL_OPT_ERROR = -2,     /* bad option; the message was printed */
	CTL_OPT_POS = 0,        /* a positional argument */
	CTL_OPT_HELP = 1,
	CTL_OPT_SOCKET,
	CTL_OPT_CONTROL,
	CTL_OPT_OUTPUT,
	CTL_OPT_VERB = 16,
};

struct ctl_opt {
	const char *name;       /* long name without "--"; NULL ends a table */
	char short_name;        /* 0: none */
	bool arg;               /* takes a value */
	int id;
};

/* The options of every verb's table (--help, --socket, --control). */
#define CTL_COMMON_OPTS \
	{ "help", 'h', false, CTL_OPT_HELP }, \
	{ "socket", 0, true, CTL_OPT_SOCKET }, \
	{ "control", 0, true, CTL_OPT_CONTROL }

struct ctl_args {
	int argc;
	char **argv;
	int i;                  /* next argument */
	int sub;                /* position inside bundled short options */
	bool dashdash;          /* "--" seen: the rest is positional */
	bool stop;              /* stop at the first positional (for `run`) */
	const struct ctl_verb *verb; /* for usage hints; NULL: the program */
	const char **pos;       /* ctl_verb_opt() keeps positionals here */
	int max_pos;            /* room in pos; 0: no positional accepted */
	int npos;               /* positionals kept */
};

/*
 * Returns the id of the next option (its value in *@val), CTL_OPT_POS with
 * the argument in *@val, CTL_OPT_END, or CTL_OPT_ERROR after printing what
 * is wrong. Long options take "--name VALUE" or "--name=VALUE", short ones
 * "-o VALUE" or "-oVALUE"; flags may be bundled ("-bn3"). An argument that
 * looks like a negative number is positional, so "set priority -5" works.
 * With @a->stop, the first positional and everything after it are left in
 * argv from index @a->i, and CTL_OPT_END is returned.
 */
int ctl_next(struct ctl_args *a, const struct ctl_opt *opts, const char **val);

/*
 * Handles the options every verb accepts (--socket, --control, -o); false
 * after reporting a bad value or for an id it does not know.
 */
bool ctl_common_opt(struct ctl *ctl, int id, const char *val);

/*
 * What every verb's option loop does alike with the id ctl_next() returned:
 * CTL_OPT_ERROR (already reported), --help, a positional argument (kept in
 * @a->pos while there is room, else a usage error) and the options of
 * ctl_common_opt(). A verb handles its own ids and passes every other one
 * here. Returns -1 when the loop goes on, else the exit code for the verb to
 * return (help printed, or the error reported).
 */
int ctl_verb_opt(struct ctl *ctl, struct ctl_args *a, int id, const char *val);

/* Prints @v's usage and help to stdout (for --help). Returns CTL_EXIT_OK. */
int ctl_verb_help(const struct ctl_verb *v);

/* Reports a usage error about @v (NULL: the program), with a hint to --help. */
int ctl_usage_error(const struct ctl_verb *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- reporting (xschedctl.c) ------------------------------------------- */

/* Logs "xschedctl: MSG" to stderr (with a syslog prefix under journald). */
void ctl_err(const struct ctl *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ctl_warn(const struct ctl *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Describes the negative errno @err of a request to the daemon; never NULL. */
const char *ctl_strerror(int err);

/*
 * Reports the failed request "@what" (e.g. "cannot list queues") with
 * @err and returns the exit code for it: CTL_EXIT_DENIED for -EACCES or
 * -EPERM, else CTL_EXIT_ERROR. @c (may be NULL) tells which socket was
 * used, to explain a refusal.
 */
int ctl_fail(const struct ctl *ctl, const struct ipc_client *c, int err,
	     const char *what);

/*
 * Connects to the daemon (control socket, else client socket) and bounds
 * the wait for each later reply. On failure reports why, naming the
 * socket, and returns the exit code (CTL_EXIT_NODAEMON, CTL_EXIT_DENIED or
 * CTL_EXIT_ERROR); returns CTL_EXIT_OK on success, and the caller closes
 * @c with ipc_client_close().
 */
int ctl_connect(const struct ctl *ctl, struct ipc_client *c);

/* The path of the socket @c is connected to (after ctl_connect() succeeded). */
const char *ctl_connected_path(const struct ctl *ctl, const struct ipc_client *c);

/*
 * Parses the options of a verb that takes none of its own beyond --pid
 * (when @pid is not NULL) and no positional argument (xschedctl_list.c).
 * Returns -1 to go on, else the exit code to return (help printed, or
 * usage error).
 */
int ctl_simple_args(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv,
		    int32_t *pid);

/* Parses a whole decimal integer; false if @s is not one or overflows. */
bool ctl_parse_int(const char *s, int64_t *out);

/* Parses a process id (1..INT32_MAX). */
bool ctl_parse_pid(const char *s, int32_t *out);

/*
 * Parses a time in microseconds: an integer, optionally followed by "us",
 * "ms" or "s" ("20ms" is 20000). Negative values are returned as given
 * (range checks are the caller's). False if malformed or overflowing.
 */
bool ctl_parse_us(const char *s, int64_t *out);

/* --- verbs ------------------------------------------------------------- */

/* Each parses argv[1..] (argv[0] is the verb) and returns an enum ctl_exit. */
int ctl_status(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_list(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_devices(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);

/* The help of `devices`, kept with its implementation's interface. */
#define CTL_DEVICES_HELP                                                         \
	"List the scheduling domains: each device with its node-wide identity\n"  \
	"(its UUID, else its PCI bus id, else only an API-local name, marked\n"    \
	"unverified), its PCI bus id where known, the API-local names processes\n" \
	"reach it by (e.g. 'cuda:0 in pid 123') and its queues. Queues on one\n"  \
	"device are scheduled together whatever API, ordinal or visibility mask\n"\
	"reaches it. Through the client socket only devices with the caller's\n"  \
	"own queues are listed.\n"                                                 \
	"\n"                                                                        \
	"  -o, --output FMT   table (default) or json\n"
int ctl_top(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_set(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_policy(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_metrics(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_run(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_bypass(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_trace(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);
int ctl_cdi(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);

/* The help of `cdi`, kept with its implementation's interface. */
#define CTL_CDI_SYNOPSIS \
	"cdi generate [--config FILE] [--output FILE] [--shim-dir DIR]"
#define CTL_CDI_HELP                                                              \
	"Write a Container Device Interface spec (kind xsched.dev/sched) whose\n"   \
	"devices are the priority classes and numeric levels of the [cdi]\n"       \
	"section of xschedd.conf: `--device xsched.dev/sched=high` mounts the\n"   \
	"shims read-only and the daemon's socket directory into a container and\n" \
	"sets LD_PRELOAD, XSCHED_SOCKET and the class's hints there. The shims\n"  \
	"are those `run` would preload, or those in the [cdi] shim_dir.\n"         \
	"\n"                                                                         \
	"      --config FILE  xschedd.conf to read (default: the daemon's)\n"      \
	"      --output FILE  write FILE atomically (e.g. /etc/cdi/xsched.json);\n"\
	"                     default: standard output\n"                          \
	"      --shim-dir DIR the host directory holding the shims (overrides\n"   \
	"                     the configuration's shim_dir)\n"

int ctl_heatmap(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv);

/* The help of `heatmap`, kept with its implementation's interface. */
#define CTL_HEATMAP_SYNOPSIS                                                      \
	"heatmap [--cpu | --queues | --pid PID | --queue ID] [--last DUR]\n"      \
	"    [--window DUR] [--threshold DUR] [-o FMT] [--out FILE] [--width N]"
#define CTL_HEATMAP_HELP                                                          \
	"Show latency over time as a heat map: time runs left to right, each\n"   \
	"cell a window of it. --cpu (the default): the run-queue latency of every\n"\
	"task on the node (how long runnable threads waited for a CPU), one line\n"\
	"per CPU (needs the daemon's eBPF programs); --queues: the task latency\n" \
	"of each queue, one line per queue. Their cells show the P99 of their\n"  \
	"window, green (low) to red (at or above the threshold). --pid: the\n"    \
	"run-queue latency of the threads of one registered process; --queue:\n"  \
	"the task latency of one queue, with its suspensions (S) and resumptions\n"\
	"(R) under the map. These show one line per latency bucket, each cell\n" \
	"shaded by the events counted there (log scale). CPU maps end with\n"    \
	"hints: the CPUs that stayed at or above the threshold for several\n"   \
	"windows in a row, what ran there and which processes waited. Colour on\n"\
	"a terminal unless NO_COLOR is set; plain ASCII otherwise.\n"             \
	"\n"                                                                       \
	"      --cpu          run-queue latency per CPU (default)\n"             \
	"      --queues       task latency per queue\n"                          \
	"  -p, --pid PID      run-queue latency of process PID\n"               \
	"  -q, --queue ID     task latency of queue ID\n"                        \
	"  -l, --last DUR     the span shown (default 30s); DUR has a unit: us,\n"\
	"                     ms, s or m\n"                                       \
	"  -w, --window DUR   a cell's window (default: the daemon's, or for the\n"\
	"                     terminal what fits the width)\n"                  \
	"  -t, --threshold DUR  red cells and hints from here (default 10ms)\n"  \
	"  -o, --output FMT   table (default), json, svg or png (png: needs\n"   \
	"                     --out and gnuplot)\n"                              \
	"      --out FILE     write FILE instead of standard output\n"           \
	"      --width N      columns of the table (default: the terminal's,\n" \
	"                     else $COLUMNS, else 80)\n"

/* --- the shims `run` preloads (xschedctl_run.c) ------------------------ */

#define CTL_NSHIMS 3            /* CUDA, OpenCL, Level Zero */

/* The file name of shim @i (0..CTL_NSHIMS-1), e.g. "libxsched-cuda.so". */
const char *ctl_shim_file(size_t i);

/*
 * Finds shim @i where `run` would (see xschedctl_run.c); stores its real
 * path, to be freed, in *@found, NULL when there is none. Returns 0, or
 * -ENOMEM.
 */
int ctl_shim_find(size_t i, char **found);

/* --- output (xschedctl_fmt.c) ------------------------------------------ */

/*
 * A streaming JSON writer. Commas and nesting are tracked here; @key is
 * the member name inside an object and NULL inside an array or at the top.
 * Strings are escaped, with bytes that are not valid UTF-8 replaced by
 * U+FFFD, so untrusted names (process names come from clients) always
 * yield valid JSON.
 */
#define CTL_JSON_DEPTH 8

struct ctl_json {
	FILE *f;
	int depth;
	bool first[CTL_JSON_DEPTH];
};

void ctl_json_init(struct ctl_json *j, FILE *f);
void ctl_json_open(struct ctl_json *j, const char *key, char bracket);
void ctl_json_close(struct ctl_json *j, char bracket);
/* A string of at most @max bytes (stops at the first NUL). */
void ctl_json_str(struct ctl_json *j, const char *key, const char *s, size_t max);
void ctl_json_int(struct ctl_json *j, const char *key, int64_t v);
void ctl_json_uint(struct ctl_json *j, const char *key, uint64_t v);
void ctl_json_bool(struct ctl_json *j, const char *key, bool v);
void ctl_json_null(struct ctl_json *j, const char *key);
/* A number with @prec decimals (NaN and infinities become null). */
void ctl_json_double(struct ctl_json *j, const char *key, double v, int prec);

/*
 * A text table: cells are copied, columns sized to their widest cell (in
 * UTF-8 code points: top's sparklines), numbers right-aligned (bit k of @right_mask for
 * column k). Rows are kept until ctl_table_print(); at most CTL_TABLE_COLS
 * columns.
 */
#define CTL_TABLE_COLS 20
#define CTL_CELL_LEN 40

struct ctl_table {
	int ncols;
	uint32_t right_mask;
	const char *head[CTL_TABLE_COLS];
	size_t nrows, cap;
	char (*cells)[CTL_CELL_LEN];
};

void ctl_table_init(struct ctl_table *t, int ncols, const char *const *head,
		    uint32_t right_mask);
/* Starts a new row; returns false on out-of-memory. */
bool ctl_table_row(struct ctl_table *t);
/* Sets cell @col of the current row (truncated to CTL_CELL_LEN - 1 bytes). */
void ctl_table_cell(struct ctl_table *t, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ctl_table_print(const struct ctl_table *t, FILE *f);
void ctl_table_fini(struct ctl_table *t);

/* "850ns", "12.3us", "1.25ms", "2.00s"; "-" for 0 when @dash_zero. */
char *ctl_fmt_ns(char *buf, size_t len, uint64_t ns, bool dash_zero);
/* "3d 04:05:06" style uptime. */
char *ctl_fmt_uptime(char *buf, size_t len, uint64_t ns);
/*
 * Copies the possibly unterminated field @s (@max bytes) into @buf for a
 * table, replacing control and non-ASCII bytes with '?'; "-" if empty.
 */
char *ctl_fmt_name(char *buf, size_t len, const char *s, size_t max);

/* --- queue records, shared by list and top (xschedctl_list.c) ---------- */

/* "running", "suspended", "idle" or "idle/susp". */
const char *ctl_qstate(const struct ipc_queue_rec *r);
/* Keeps the records of process @pid (0: all) in place; returns their count. */
size_t ctl_filter_pid(struct ipc_queue_rec *recs, size_t n, int32_t pid);

/* The members of one queue object (the caller opens and closes it). */
void ctl_json_queue(struct ctl_json *j, const struct ipc_queue_rec *r);
/* The daemon's status as object @key, with the socket @c is connected to. */
void ctl_json_status(struct ctl_json *j, const char *key, const struct ctl *ctl,
		     const struct ipc_client *c, const struct ipc_status_reply *st);
/* Cell @col: the device's API-local name, marked when it is unverified. */
void ctl_device_cell(struct ctl_table *t, int col, const struct ipc_queue_rec *r);
/* Cells @col, @col + 1: how long a suspended queue has waited, and how
 * often the starvation guard ran it. */
void ctl_wait_cells(struct ctl_table *t, int col, const struct ipc_queue_rec *r);
/* Cell @col: the effective priority, with '*' when it is inherited. */
/* A memory cell: held, and the limit where there is one (xschedctl_list.c). */
void ctl_mem_cell(struct ctl_table *t, int col, uint64_t used, uint64_t limit, uint64_t evicted);
void ctl_prio_cell(struct ctl_table *t, int col, const struct ipc_queue_rec *r);

#endif
