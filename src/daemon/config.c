/*
 * Configuration file parsing (see config.h). inih calls one handler per
 * key; each key is matched against a table of its section, name and
 * parser, so adding a key is one line.
 *
 * inih reads the file through our line reader, which counts lines (inih
 * does not tell the handler its line) and refuses what inih would misread
 * or report only once: lines too long for its buffer, indented lines it
 * would append to the previous value, lines that are neither a section, a
 * comment nor a key. Every problem is reported with its line, not only the
 * first, and a key given twice names both lines; when they do not all fit
 * the caller's buffer, the last line says how many more there were.
 *
 * Whatever the file holds may be echoed to a terminal or the journal, so
 * the reader also checks that the file is text (see TEXT_BAD_1_IN): one
 * that is not, a binary given by mistake, gets one line saying so instead
 * of a problem for each of its "lines". Anything echoed from a file is
 * escaped (text_escape()), and a value with control characters is refused, so that
 * code that prints the configuration later prints text.
 */
#include "daemon/config.h"
#include "base/text.h"
#include "base/size.h"
#include "policy/policy_builtin.h"
#include "ipc/ipc_abi.h"
#include "ipc/ipc_msg.h"
#include "xsched/xsched.h"

#include "base/compiler.h"
#include "base/slice.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* A key seen, to refuse it a second time. */
struct seen_key {
	char *name;                        /* "section\nkey" */
	int line;
};

/*
 * A file is not a text configuration when it holds a NUL byte, or when more
 * than 1 byte in TEXT_BAD_1_IN is not text: a control character other
 * than tab, CR and LF, or a byte that is not part of printable UTF-8. A
 * text file with an odd character (an escape sequence pasted into a value,
 * a Latin-1 comment) is parsed as usual, its problems reported (escaped)
 * line by line; random bytes are more than half not text, a binary holds
 * NULs.
 */
#define TEXT_BAD_1_IN 10

/* Room kept in the problems for their last line, "file: and N more problems". */
#define MORE_ROOM 40

struct parse_state {
	struct xsd_config *c;
	const char *path;                  /* escaped, for messages */
	FILE *f;
	char *err;                         /* problems, one a line */
	size_t errlen, errused;
	int dropped;                       /* problems that did not fit in err */
	int rc;                            /* the first problem's error */
	int line;                          /* lines read so far */
	bool line_bad;                     /* the reader refused the current line */
	bool key_in_section;               /* inih continues indented lines then */
	int read_errno;
	int nul_line;                      /* where a NUL byte was; 0: none */
	uint64_t nbytes, nbad;             /* bytes read; bytes not text */
	unsigned char pend[4];             /* a UTF-8 character not yet complete */
	size_t npend;
	struct seen_key *seen;
	size_t nseen;
};

/*
 * Counts byte @ch, read from the file, towards the share that is not text
 * (TEXT_BAD_1_IN). A UTF-8 character is held until it is complete; @ch
 * EOF flushes what is held.
 */
static void text_count(struct parse_state *ps, int ch)
{
	if (ch != EOF) {
		ps->nbytes++;
		ps->pend[ps->npend++] = (unsigned char)ch;
	}
	while (ps->npend) {
		int r = text_char_len(ps->pend, ps->npend);

		if (r < 0 && ch != EOF)
			return;            /* wait for the rest */
		if (r <= 0) {
			unsigned char c = ps->pend[0];

			ps->nbad += c != '\t' && c != '\r' && c != '\n';
			r = 1;
		}
		ps->npend -= (size_t)r;
		memmove(ps->pend, ps->pend + r, ps->npend);
	}
}

static void problem(struct parse_state *ps, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Adds "path:line: what" to the problems. A problem that does not fit is
 * counted instead (and so are all after it, for "and N more" to mean the
 * last N); the first one is rather cut than left out.
 */
static void problem(struct parse_state *ps, int rc, const char *fmt, ...)
{
	char what[640], line[sizeof(what) + 560];
	size_t room = ps->errlen > ps->errused + MORE_ROOM + strlen(ps->path) ?
		      ps->errlen - ps->errused - MORE_ROOM - strlen(ps->path) : 0;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!ps->rc || rc == -ENOMEM)
		ps->rc = rc;
	snprintf(line, sizeof(line), "%s%s:%d: %s", ps->errused ? "\n" : "", ps->path,
		 ps->line, what);
	n = strlen(line);
	if (ps->dropped || (ps->errused && n >= room) || room < 2) {
		ps->dropped++;
		return;
	}
	snprintf(ps->err + ps->errused, room, "%s", line);
	ps->errused += BASE_MIN(n, room - 1);
}

/* Ends the problems with how many did not fit, if any. */
static void problems_end(struct parse_state *ps)
{
	int n;

	if (!ps->dropped || ps->errused + 1 >= ps->errlen)
		return;
	n = snprintf(ps->err + ps->errused, ps->errlen - ps->errused,
		     "%s%s: and %d more problem%s", ps->errused ? "\n" : "", ps->path,
		     ps->dropped, ps->dropped == 1 ? "" : "s");
	if (n > 0)
		ps->errused = BASE_MIN(ps->errused + (size_t)n, ps->errlen - 1);
}

/* Parses an integer in @lo..@hi; else *@why (if not NULL) says what was expected. */
static int parse_i64(const char *v, int64_t lo, int64_t hi, int64_t *out, const char **why)
{
	static char expected[72];          /* one thread; read before the next call */
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		snprintf(expected, sizeof(expected), "expected an integer in %lld..%lld",
			 (long long)lo, (long long)hi);
		if (why)
			*why = expected;
		return -EINVAL;
	}
	*out = x;
	return 0;
}

/* A yes/no value into *@out; -EINVAL (and *@why) if it is neither. */
static int parse_bool(const char *v, bool *out, const char **why)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	if (why)
		*why = "expected yes or no";
	return -EINVAL;
}

static int set_str(char *dst, size_t len, const char *v)
{
	if (!*v || strlen(v) >= len)
		return -EINVAL;
	strcpy(dst, v);
	return 0;
}

const char *xsd_socket_path_problem(const char *path)
{
	size_t n = strlen(path);

	if (!n)
		return "empty path";
	if (path[0] != '/')
		return "not an absolute path";
	if (n >= sizeof(((struct xsd_config *)0)->socket))
		return "longer than 107 bytes (the limit of a Unix socket address)";
	if (path[n - 1] == '/')
		return "names a directory";
	return NULL;
}

static int set_socket(char *dst, const char *v, const char **why)
{
	*why = xsd_socket_path_problem(v);
	if (*why)
		return -EINVAL;
	strcpy(dst, v);
	return 0;
}

/* A size of memory above zero, or "none" (0). */
static int parse_memory(const char *v, uint64_t *out, const char **why)
{
	if (!strcmp(v, "none")) {
		*out = 0;
		return 0;
	}
	if (size_parse(v, out) < 0 || *out == 0 || *out > INT64_MAX) {
		*why = "expected a size (e.g. 8G, 512MiB) or none";
		return -EINVAL;
	}
	return 0;
}

/* The entry of @uid, made if new (both limits unset). */
static struct xsd_uid_limit *uid_entry(struct xsd_config *c, uid_t uid)
{
	struct xsd_uid_limit *l;
	size_t i;

	for (i = 0; i < c->n_uid_limits; i++)
		if (c->uid_limits[i].uid == uid)
			return &c->uid_limits[i];
	l = realloc(c->uid_limits, (c->n_uid_limits + 1) * sizeof(*l));
	if (!l)
		return NULL;
	c->uid_limits = l;
	l = &l[c->n_uid_limits++];
	memset(l, 0, sizeof(*l));
	l->uid = uid;
	return l;
}

static int add_uid_limit(struct xsd_config *c, char *name, const char *v, const char **why)
{
	struct xsd_uid_limit *l;
	int64_t uid, ceil = 0;
	uint64_t mem = 0;
	bool prio;
	char *dot;

	/* uid.<N>.priority_ceiling, uid.<N>.memory_limit */
	if (strncmp(name, "uid.", 4))
		return -ENOENT;
	dot = strchr(name + 4, '.');
	if (!dot || (strcmp(dot, ".priority_ceiling") && strcmp(dot, ".memory_limit")))
		return -ENOENT;
	prio = !strcmp(dot, ".priority_ceiling");
	*dot = '\0';
	if (parse_i64(name + 4, 0, UINT32_MAX - 1, &uid, NULL) < 0)
		return -EINVAL;
	if (prio ? parse_i64(v, XS_PRIORITY_MIN, XS_PRIORITY_MAX, &ceil, why) < 0 :
		   parse_memory(v, &mem, why) < 0)
		return -EINVAL;
	l = uid_entry(c, (uid_t)uid);
	if (!l)
		return -ENOMEM;
	if (prio) {
		l->priority_ceiling = (int32_t)ceil;
		l->has_priority = true;
	} else {
		l->memory_limit = mem;
		l->has_memory = true;
	}
	return 0;
}

void xsd_config_items(const char *list, void (*fn)(void *arg, const char *item), void *arg)
{
	const char *p = list;

	while (*p) {
		char item[PATH_MAX];
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (n && n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			fn(arg, item);
		}
		p += n;
	}
}

struct list_check {
	bool (*item)(const char *item);
	bool bad;
};

static void list_check_item(void *arg, const char *item)
{
	struct list_check *c = arg;

	c->bad |= !c->item(item);
}

/*
 * Checks @v as a list (xsd_config_items) whose every item @item accepts,
 * and copies it to @dst (@len bytes); -EINVAL with *@why otherwise.
 */
static int set_list(char *dst, size_t len, const char *v, bool (*item)(const char *),
		    const char *expected, const char **why)
{
	struct list_check c = { item, false };

	if (strlen(v) >= len) {
		*why = "too long";
		return -EINVAL;
	}
	xsd_config_items(v, list_check_item, &c);
	if (c.bad) {
		*why = expected;
		return -EINVAL;
	}
	strcpy(dst, v);
	return 0;
}

static const char expected_paths[] = "expected absolute paths separated by spaces";

static bool item_abs_path(const char *s)
{
	return s[0] == '/' && strlen(s) < 256;
}

/* A number of at most 10 digits, its value in *@out; what follows it, or NULL. */
static const char *item_num(const char *p, uint64_t *out)
{
	const char *q = p;

	*out = 0;
	while (*q >= '0' && *q <= '9' && q - p < 10)
		*out = *out * 10 + (uint64_t)(*q++ - '0');
	return q > p ? q : NULL;
}

/* "UID" or "LO-HI" */
static bool item_uid_range(const char *s)
{
	const char *q;
	uint64_t lo, hi;

	if (!(q = item_num(s, &lo)) || lo > UINT32_MAX - 1)
		return false;
	if (!*q)
		return true;
	if (*q != '-' || !(q = item_num(q + 1, &hi)) || *q)
		return false;
	return hi <= UINT32_MAX - 1 && lo <= hi;
}

/* "MAJOR:MINOR", "MAJOR:*" or an absolute path (a device node) */
static bool item_device(const char *s)
{
	const char *q;
	uint64_t major, minor;

	if (s[0] == '/')
		return item_abs_path(s);
	q = item_num(s, &major);
	if (!q || major > 4095 || *q != ':')
		return false;
	if (!strcmp(q + 1, "*"))
		return true;
	q = item_num(q + 1, &minor);
	return q && !*q && minor <= 1048575;
}

const char *const xsd_enforce_modes[3] = { "off", "audit", "on" };

static int enforce_key(struct xsd_config *c, const char *name, const char *v, const char **why)
{
	if (!strcmp(name, "devices")) {
		for (uint32_t m = 0; m < ARRAY_SIZE(xsd_enforce_modes); m++)
			if (!strcmp(v, xsd_enforce_modes[m])) {
				c->enforce_mode = m;
				return 0;
			}
		*why = "expected off, audit or on";
		return -EINVAL;
	}
	if (!strcmp(name, "fail")) {
		if (strcmp(v, "open") && strcmp(v, "closed")) {
			*why = "expected open or closed";
			return -EINVAL;
		}
		c->enforce_fail_closed = !strcmp(v, "closed");
		return 0;
	}
	if (!strcmp(name, "exempt_root"))
		return parse_bool(v, &c->enforce_exempt_root, why);
	if (!strcmp(name, "cgroups"))
		return set_list(c->enforce_cgroups, sizeof(c->enforce_cgroups), v, item_abs_path,
				expected_paths, why);
	if (!strcmp(name, "exempt_cgroups"))
		return set_list(c->enforce_exempt_cgroups, sizeof(c->enforce_exempt_cgroups), v,
				item_abs_path, expected_paths, why);
	if (!strcmp(name, "exempt_executables"))
		return set_list(c->enforce_exempt_executables,
				sizeof(c->enforce_exempt_executables), v, item_abs_path,
				expected_paths, why);
	if (!strcmp(name, "uids"))
		return set_list(c->enforce_uids, sizeof(c->enforce_uids), v, item_uid_range,
				"expected uids or ranges LOW-HIGH separated by spaces", why);
	if (!strcmp(name, "extra_devices"))
		return set_list(c->enforce_extra_devices, sizeof(c->enforce_extra_devices), v,
				item_device, "expected MAJOR:MINOR, MAJOR:* or device paths "
				"separated by spaces", why);
	if (!strcmp(name, "pin_path")) {
		if (v[0] != '/' || strlen(v) >= sizeof(c->enforce_pin_path)) {
			*why = "expected an absolute path of at most 199 bytes";
			return -EINVAL;
		}
		strcpy(c->enforce_pin_path, v);
		return 0;
	}
	return -ENOENT;
}

/* Applies one key; -ENOENT if unknown, -EINVAL if the value is bad. */
static int apply_key(struct xsd_config *c, const char *sec, char *name,
		     const char *v, const char **why)
{
	int64_t x;
	int rc;

#define NUM(s, n, lo, hi, dst)                                          \
	if (!strcmp(sec, s) && !strcmp(name, n)) {                      \
		rc = parse_i64(v, lo, hi, &x, why);                          \
		if (rc == 0)                                            \
			dst = (__typeof__(dst))x;                       \
		return rc;                                              \
	}
	if (!strcmp(sec, "daemon")) {
		if (!strcmp(name, "socket"))
			return set_socket(c->socket, v, why);
		if (!strcmp(name, "control_socket"))
			return set_socket(c->control_socket, v, why);
		if (!strcmp(name, "control_group"))
			return set_str(c->control_group, sizeof(c->control_group), v);
		NUM("daemon", "max_clients", 1, 65536, c->max_clients)
		NUM("daemon", "max_clients_per_uid", 1, 65536, c->max_clients_per_uid)
		NUM("daemon", "max_queues_per_client", 1, XSD_MAX_QUEUES, c->max_queues_per_client)
		NUM("daemon", "max_message_size", 256, IPC_MSG_MAX, c->max_message_size)
		NUM("daemon", "realtime_priority", 0, SLICE_RT_MAX, c->realtime_priority)
		if (!strcmp(name, "thread_slice_us")) {
			rc = parse_i64(v, 0, SLICE_MAX_US, &x, why);
			if (rc == 0 && x && x < SLICE_MIN_US) {
				*why = "expected 0 or 100 to 100000";
				rc = -EINVAL;
			}
			if (rc == 0)
				c->thread_slice_us = (uint32_t)x;
			return rc;
		}
	}
	if (!strcmp(sec, "policy")) {
		if (!strcmp(name, "name"))
			return set_str(c->policy, sizeof(c->policy), v);
		if (!strcmp(name, "per_process"))
			return parse_bool(v, &c->pconf.per_process, why);
		if (!strcmp(name, "slice_ms")) {
			rc = parse_i64(v, 1, 60000, &x, why);
			if (rc == 0)
				c->pconf.slice_ns = (uint64_t)x * 1000000;
			return rc;
		}
		if (!strcmp(name, "drain_ms")) {
			rc = parse_i64(v, 0, (int64_t)(POLICY_DRAIN_LIMIT_NS / 1000000), &x, why);
			if (rc == 0)
				c->pconf.drain_ns = x ? (uint64_t)x * 1000000 : XS_DRAIN_NONE;
			return rc;
		}
		if (!strcmp(name, "floor"))
			return parse_bool(v, &c->floor, why);
		if (!strcmp(name, "request_gap_us")) {
			rc = parse_i64(v, 1, SCHED_REQUEST_GAP_US_MAX, &x, why);
			if (rc == 0)
				c->request_gap_ns = (uint64_t)x * 1000;
			return rc;
		}
		if (!strcmp(name, "idle_grace_us")) {
			rc = parse_i64(v, 0, SCHED_GRACE_US_MAX, &x, why);
			if (rc == 0)
				c->idle_grace_ns = (uint64_t)x * 1000;
			return rc;
		}
		if (!strcmp(name, "starvation_period_ms")) {
			rc = parse_i64(v, 10, 3600000, &x, why);
			if (rc == 0)
				c->starvation_period_ns = (uint64_t)x * 1000000;
			return rc;
		}
		NUM("policy", "edf_k", 1, 64, c->pconf.edf_k)
		NUM("policy", "default_share", 1, XS_SHARE_MAX, c->pconf.default_share)
		NUM("policy", "starvation_guard_pct", 0, 50, c->starvation_guard_pct)
		NUM("policy", "contention_window", 0, 64, c->contention_window)
		NUM("policy", "preempt_cap", 0, 1000, c->preempt_cap)
	}
	if (!strcmp(sec, "defaults")) {
		static const char *const keys[] = { NULL, "priority", "share",
						     "deadline_us", "laxity_us" };

		for (int k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++) {
			if (strcmp(name, keys[k]))
				continue;
			if (parse_i64(v, INT64_MIN, INT64_MAX, &x, NULL) < 0 ||
			    !ipc_hint_valid((uint32_t)k, x))
				return -EINVAL;
			c->def_hint[k] = x;
			return 0;
		}
	}
	if (!strcmp(sec, "metrics")) {
		if (!strcmp(name, "textfile")) {
			size_t n = strlen(v);

			if (n == 0) {
				c->metrics_textfile[0] = '\0';     /* none */
				return 0;
			}
			if (v[0] != '/') {
				*why = "not an absolute path";
				return -EINVAL;
			}
			/* What node_exporter reads; and no file of another kind is replaced. */
			if (n < 6 || strcmp(v + n - 5, ".prom")) {
				*why = "the name must end in .prom";
				return -EINVAL;
			}
			if (set_str(c->metrics_textfile, sizeof(c->metrics_textfile), v) < 0) {
				*why = "longer than 255 bytes";
				return -EINVAL;
			}
			return 0;
		}
		NUM("metrics", "interval_s", 1, 3600, c->metrics_interval_s)
	}
	if (!strcmp(sec, "observe")) {
		if (!strcmp(name, "bypass"))
			return parse_bool(v, &c->observe_bypass, why);
		if (!strcmp(name, "libraries"))
			return set_list(c->observe_libraries, sizeof(c->observe_libraries), v,
					item_abs_path, expected_paths, why);
		if (!strcmp(name, "runqueue_latency"))
			return parse_bool(v, &c->observe_runqueue, why);
		NUM("observe", "bypass_grace_ms", 0, 600000, c->bypass_grace_ms)
		NUM("observe", "bypass_max", 1, 65536, c->bypass_max)
		if (!strcmp(name, "heatmap"))
			return parse_bool(v, &c->heatmap, why);
		NUM("observe", "heatmap_window_ms", 1, 1000, c->heat_window_ms)
		NUM("observe", "heatmap_seconds", 1, 3600, c->heat_seconds)
		NUM("observe", "heatmap_memory_mb", 1, 4096, c->heat_memory_mb)
	}
	if (!strcmp(sec, "enforce"))
		return enforce_key(c, name, v, why);
	if (!strcmp(sec, "limits")) {
		NUM("limits", "priority_ceiling", XS_PRIORITY_MIN, XS_PRIORITY_MAX,
		    c->priority_ceiling)
		if (!strcmp(name, "memory_limit"))
			return parse_memory(v, &c->memory_limit, why);
		return add_uid_limit(c, name, v, why);
	}
	if (!strcmp(sec, "memory")) {
		if (!strcmp(name, "preemption"))
			return parse_bool(v, &c->memory_preemption, why);
		NUM("memory", "wait_ms", 10, 600000, c->memory_wait_ms)
	}
	if (!strcmp(sec, "cdi"))
		return xsd_classes_key(&c->classes, name, v, why);
#undef NUM
	return -ENOENT;
}

/* Records [@sec] @name at the current line; false if it was seen before. */
static bool first_time(struct parse_state *ps, const char *sec, const char *name)
{
	struct seen_key *grown;
	char *key;
	size_t i;

	if (asprintf(&key, "%s\n%s", sec, name) < 0) {
		problem(ps, -ENOMEM, "out of memory");
		return false;
	}
	for (i = 0; i < ps->nseen; i++) {
		if (!strcmp(ps->seen[i].name, key)) {
			char esec[80], ename[160];

			problem(ps, -EINVAL, "[%s] %s given twice (first at line %d)",
				text_escape(esec, sizeof(esec), sec, strlen(sec)),
				text_escape(ename, sizeof(ename), name, strlen(name)), ps->seen[i].line);
			free(key);
			return false;
		}
	}
	grown = realloc(ps->seen, (ps->nseen + 1) * sizeof(*grown));
	if (!grown) {
		free(key);
		problem(ps, -ENOMEM, "out of memory");
		return false;
	}
	ps->seen = grown;
	ps->seen[ps->nseen].name = key;
	ps->seen[ps->nseen++].line = ps->line;
	return true;
}

static int config_ini_key(void *user, const char *sec, const char *name,
		       const char *value)
{
	struct parse_state *ps = user;
	char key[128], esec[80], ename[160], evalue[256];
	const char *why = NULL;
	int rc;

	ps->key_in_section = true;
	/* The reader reported this line already. */
	if (ps->line_bad)
		return 0;
	if (!first_time(ps, sec, name))
		return 0;
	snprintf(key, sizeof(key), "%s", name);
	rc = apply_key(ps->c, sec, key, value, &why);
	/* Code that prints a value later (a path, a policy name) prints text. */
	if (rc == 0 && !text_printable(value)) {
		why = "control characters or bytes that are not UTF-8";
		rc = -EINVAL;
	}
	if (rc == 0)
		return 1;
	text_escape(esec, sizeof(esec), sec, strlen(sec));
	text_escape(ename, sizeof(ename), name, strlen(name));
	if (rc == -ENOMEM)
		problem(ps, rc, "out of memory");
	else if (rc == -ENOENT)
		problem(ps, -EINVAL, "unknown key [%s] %s", esec, ename);
	else
		problem(ps, -EINVAL, "bad value for [%s] %s = %s%s%s", esec, ename,
			text_escape(evalue, sizeof(evalue), value, strlen(value)),
			why ? ": " : "", why ? why : "");
	return 0;
}

/*
 * Reads the next physical line into @str (at most @n - 1 bytes and a NUL),
 * counting every byte towards the share that is not text; the rest of a
 * longer line is read and counted, not kept. Returns its length; 0 at the
 * end of the file, a read error (ps->read_errno) or a NUL byte
 * (ps->nul_line), each of which ends the parse. *@cut tells a line cut.
 */
static size_t read_line(struct parse_state *ps, char *str, size_t n, bool *cut)
{
	size_t len = 0;
	int ch = EOF;

	*cut = false;
	errno = 0;
	while ((ch = getc(ps->f)) != EOF) {
		if (ch == '\0') {
			ps->nul_line = ps->line + 1;
			return 0;
		}
		text_count(ps, ch);
		if (len + 1 < n)
			str[len++] = (char)ch;
		else
			*cut = true;
		if (ch == '\n')
			break;
	}
	if (ch == EOF && ferror(ps->f)) {
		ps->read_errno = errno ? errno : EIO;
		return 0;
	}
	str[len] = '\0';
	return len;
}

/*
 * inih's reader (fgets semantics), one physical line per call. A line is
 * refused here (line_bad; inih's handler then ignores it) when inih would
 * misread it: too long for its buffer (the rest would become a line of its
 * own), indented after a key (inih appends it to that key's value), or
 * neither blank, comment, section nor key.
 */
static char *config_read_line(char *str, int num, void *stream)
{
	struct parse_state *ps = stream;
	char *p, *start;
	bool cut;

	if (num < 3 || !read_line(ps, str, (size_t)num, &cut))
		return NULL;
	ps->line++;
	ps->line_bad = false;
	if (cut) {
		problem(ps, -EINVAL, "line longer than %d characters", num - 2);
		ps->line_bad = true;
		strcpy(str, "\n");
		return str;
	}
	start = str;
	if (ps->line == 1 && !strncmp(start, "\xef\xbb\xbf", 3))
		start += 3;                /* a UTF-8 byte order mark, as inih */
	for (p = start; *p && isspace((unsigned char)*p); p++)
		;
	if (!*p || *p == '#' || *p == ';')
		return str;
	if (p > start && ps->key_in_section) {
		problem(ps, -EINVAL, "indented line (a value cannot continue on the next line)");
		ps->line_bad = true;
	} else if (*p == '[') {
		if (!strchr(p, ']')) {
			problem(ps, -EINVAL, "syntax error: '[' without ']'");
			ps->line_bad = true;
		}
		ps->key_in_section = false;
	} else if (!strpbrk(p, "=:")) {
		problem(ps, -EINVAL, "syntax error: expected 'key = value'");
		ps->line_bad = true;
	}
	return str;
}

void xsd_config_defaults(struct xsd_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->socket, IPC_DEFAULT_SOCKET);
	strcpy(c->control_socket, IPC_DEFAULT_CONTROL);
	strcpy(c->control_group, "xsched");
	c->max_clients = 1024;
	c->max_clients_per_uid = 256;
	c->max_queues_per_client = 256;
	c->max_message_size = IPC_MSG_MAX;
	c->thread_slice_us = SLICE_DEFAULT_US;
	strcpy(c->policy, "hpf");
	c->pconf.size = sizeof(c->pconf);
	c->starvation_guard_pct = XSD_GUARD_PCT_DEFAULT;
	c->starvation_period_ns = XSD_GUARD_PERIOD_MS_DEFAULT * 1000000ull;
	c->contention_window = SCHED_CONTENTION_WINDOW;
	c->idle_grace_ns = SCHED_GRACE_US_DEFAULT * 1000ull;
	c->floor = true;
	c->request_gap_ns = SCHED_REQUEST_GAP_US_DEFAULT * 1000ull;
	c->metrics_interval_s = XSD_METRICS_INTERVAL_S_DEFAULT;
	c->bypass_grace_ms = XSD_BYPASS_GRACE_MS_DEFAULT;
	c->bypass_max = XSD_BYPASS_MAX_DEFAULT;
	c->heatmap = true;
	c->heat_window_ms = XSD_HEAT_WINDOW_MS_DEFAULT;
	c->heat_seconds = XSD_HEAT_SECONDS_DEFAULT;
	c->heat_memory_mb = XSD_HEAT_MEMORY_MB_DEFAULT;
	c->memory_wait_ms = XSD_MEMORY_WAIT_MS_DEFAULT;
	c->enforce_exempt_root = true;
	strcpy(c->enforce_pin_path, XSD_ENFORCE_PIN_DEFAULT);
	xsd_classes_defaults(&c->classes);
}

int xsd_config_load(const char *path, bool required, struct xsd_config *c,
		    char *err, size_t errlen)
{
	struct parse_state ps = { .c = c, .err = err, .errlen = errlen };
	char epath[512];
	struct stat st;
	size_t i;
	int line;

	if (errlen)
		err[0] = '\0';
	ps.path = text_escape(epath, sizeof(epath), path, strlen(path));
	ps.f = fopen(path, "re");
	if (!ps.f) {
		int e = errno;

		if (e == ENOENT && !required)
			return 0;
		snprintf(err, errlen, "%s: %s", ps.path, strerror(e));
		return -e;
	}
	if (fstat(fileno(ps.f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(ps.f);
		snprintf(err, errlen, "%s: is a directory, not a configuration file", ps.path);
		return -EISDIR;
	}
	line = ini_parse_stream(config_read_line, &ps, config_ini_key, &ps);
	fclose(ps.f);
	for (i = 0; i < ps.nseen; i++)
		free(ps.seen[i].name);
	free(ps.seen);
	if (ps.read_errno) {
		snprintf(err, errlen, "%s: read error after line %d: %s", ps.path, ps.line,
			 strerror(ps.read_errno));
		return -ps.read_errno;
	}
	/* Not text: the problems found were those of "lines" it does not have. */
	text_count(&ps, EOF);
	if (ps.nul_line) {
		snprintf(err, errlen, "%s: not a text configuration file (a NUL byte at line %d)",
			 ps.path, ps.nul_line);
		return -EINVAL;
	}
	if (ps.nbad * TEXT_BAD_1_IN > ps.nbytes) {
		snprintf(err, errlen, "%s: not a text configuration file (%llu of its %llu bytes "
			 "are control characters or not UTF-8)", ps.path,
			 (unsigned long long)ps.nbad, (unsigned long long)ps.nbytes);
		return -EINVAL;
	}
	if (line > 0 && !ps.rc) {
		/* Something inih refused that the reader did not foresee. */
		ps.line = line;
		problem(&ps, -EINVAL, "syntax error");
	}
	if (line == -2 && !ps.rc)
		problem(&ps, -ENOMEM, "out of memory");
	problems_end(&ps);
	return ps.rc;
}

int32_t xsd_config_ceiling(const struct xsd_config *c, uid_t uid)
{
	size_t i;

	if (uid == 0)
		return XS_PRIORITY_MAX;
	for (i = 0; i < c->n_uid_limits; i++)
		if (c->uid_limits[i].uid == uid && c->uid_limits[i].has_priority)
			return c->uid_limits[i].priority_ceiling;
	return c->priority_ceiling;
}

uint64_t xsd_config_memory_ceiling(const struct xsd_config *c, uid_t uid)
{
	size_t i;

	for (i = 0; i < c->n_uid_limits; i++)
		if (c->uid_limits[i].uid == uid && c->uid_limits[i].has_memory)
			return c->uid_limits[i].memory_limit;
	return uid == 0 ? 0 : c->memory_limit;
}

void xsd_config_fini(struct xsd_config *c)
{
	free(c->uid_limits);
	c->uid_limits = NULL;
	c->n_uid_limits = 0;
}
