/*
 * `xschedctl run`: executes a command under xsched without the daemon's
 * help. Hints travel in the environment (the shim reads them when a queue
 * is created) and the vendor shims are put first in LD_PRELOAD.
 *
 * The shims are found at run time rather than fixed at build time, so one
 * xschedctl works whichever vendor shims were installed: every known shim
 * present in the shim directory is preloaded, and a shim whose vendor
 * library the program never loads stays inert. $XSCHED_SHIM_DIR (a
 * ':'-separated list) replaces the installed directory, to run from a
 * build tree.
 */
#include "xschedctl.h"
#include "base/compiler.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef XSCHED_SHIM_DIR
#error "the build defines XSCHED_SHIM_DIR, the installed shim directory"
#endif

static const char *const ctl_shims[] = {
	"libxsched-cuda.so",
	"libxsched-opencl.so",
	"libxsched-levelzero.so",
};

enum {
	CTL_OPT_PRIORITY = CTL_OPT_VERB,
	CTL_OPT_SHARE,
	CTL_OPT_DEADLINE,
	CTL_OPT_LAXITY,
	CTL_OPT_LIB,
};

/* A growing LD_PRELOAD value. */
struct ctl_preload {
	char *s;
	size_t len, cap;
	int count;
};

static bool ctl_preload_add(struct ctl_preload *p, const char *path)
{
	size_t n = strlen(path);

	if (!p->s || p->len + n + 2 > p->cap) {
		size_t cap = (p->len + n + 2) * 2;
		char *s = realloc(p->s, cap);

		if (!s)
			return false;
		p->s = s;
		p->cap = cap;
	}
	if (p->len)
		p->s[p->len++] = ':';
	memcpy(p->s + p->len, path, n + 1);
	p->len += n;
	p->count++;
	return true;
}

/* The dynamic loader splits LD_PRELOAD at ':' and blanks. */
static bool ctl_preload_safe(const char *path)
{
	return !strpbrk(path, ": \t\n");
}

/*
 * Adds every known shim found in the directories of @dirs (':'-separated).
 * Returns 0, or -ENOMEM.
 */
static int ctl_find_shims(const struct ctl *ctl, const char *dirs, struct ctl_preload *p)
{
	char *list = strdup(dirs), *save = NULL, *dir;
	char path[PATH_MAX];
	size_t i;
	int rc = 0;

	if (!list)
		return -ENOMEM;
	for (dir = strtok_r(list, ":", &save); dir && !rc; dir = strtok_r(NULL, ":", &save)) {
		for (i = 0; i < XS_ARRAY_SIZE(ctl_shims); i++) {
			struct stat st;
			char *abs;

			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, ctl_shims[i]) >=
			    sizeof(path))
				continue;
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, R_OK) < 0)
				continue;
			abs = realpath(path, NULL);
			if (!abs) {
				rc = errno == ENOMEM ? -ENOMEM : 0;
				continue;
			}
			if (!ctl_preload_safe(abs))
				ctl_warn(ctl, "skipping %s: LD_PRELOAD cannot hold a path with "
					 "':' or blanks", abs);
			else if (!ctl_preload_add(p, abs))
				rc = -ENOMEM;
			free(abs);
		}
	}
	free(list);
	return rc;
}

/* Parses and checks the hint @key; stores its decimal form in @out. */
static bool ctl_run_hint(const struct ctl_verb *v, uint32_t key, const char *name,
			 const char *val, char *out, size_t len)
{
	bool time = key == IPC_KEY_DEADLINE_US || key == IPC_KEY_LAXITY_US;
	int64_t n;

	if (!(time ? ctl_parse_us(val, &n) : ctl_parse_int(val, &n))) {
		ctl_usage_error(v, "invalid --%s '%s'", name, val);
		return false;
	}
	if (!ipc_hint_valid(key, n)) {
		ctl_usage_error(v, "--%s %s is out of range (%s)", name, val,
				key == IPC_KEY_PRIORITY ? "-100..100" :
				key == IPC_KEY_SHARE ? "0..1000000" : "0..3600000000 us");
		return false;
	}
	snprintf(out, len, "%lld", (long long)n);
	return true;
}

int ctl_run(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		{ "help", 'h', false, CTL_OPT_HELP },
		{ "socket", 0, true, CTL_OPT_SOCKET },
		{ "control", 0, true, CTL_OPT_CONTROL },
		{ "priority", 0, true, CTL_OPT_PRIORITY },
		{ "share", 0, true, CTL_OPT_SHARE },
		{ "deadline", 0, true, CTL_OPT_DEADLINE },
		{ "laxity", 0, true, CTL_OPT_LAXITY },
		{ "lib", 0, true, CTL_OPT_LIB },
		{ NULL, 0, false, 0 },
	};
	/* Hints by option, in the order of enum ipc_key. */
	static const struct { const char *opt, *env; uint32_t key; } hints[] = {
		{ "priority", "XSCHED_PRIORITY", IPC_KEY_PRIORITY },
		{ "share", "XSCHED_SHARE", IPC_KEY_SHARE },
		{ "deadline", "XSCHED_DEADLINE_US", IPC_KEY_DEADLINE_US },
		{ "laxity", "XSCHED_LAXITY_US", IPC_KEY_LAXITY_US },
	};
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .stop = true, .verb = v };
	char value[XS_ARRAY_SIZE(hints)][24] = { { 0 } };
	struct ctl_preload pre = { 0 };
	const char *val, *dirs, *old;
	char *abs;
	int id, err, rc = CTL_EXIT_ERROR;
	size_t i;

	while ((id = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ERROR:
			goto out;
		case CTL_OPT_HELP:
			rc = ctl_verb_help(v);
			goto out;
		case CTL_OPT_PRIORITY:
		case CTL_OPT_SHARE:
		case CTL_OPT_DEADLINE:
		case CTL_OPT_LAXITY:
			i = (size_t)(id - CTL_OPT_PRIORITY);
			if (!ctl_run_hint(v, hints[i].key, hints[i].opt, val, value[i],
					  sizeof(value[i])))
				goto out;
			break;
		case CTL_OPT_LIB:
			abs = realpath(val, NULL);
			if (!abs) {
				ctl_usage_error(v, "shim library '%s': %s", val, strerror(errno));
				goto out;
			}
			if (!ctl_preload_safe(abs)) {
				ctl_usage_error(v, "LD_PRELOAD cannot hold a path with ':' or "
						"blanks: %s", abs);
				free(abs);
				goto out;
			}
			if (!ctl_preload_add(&pre, abs)) {
				free(abs);
				ctl_err(ctl, "out of memory");
				goto out;
			}
			free(abs);
			break;
		default:
			if (!ctl_common_opt(ctl, id, val))
				goto out;
		}
	}
	if (a.i >= argc) {
		ctl_usage_error(v, "missing command");
		goto out;
	}

	if (pre.count == 0) {
		dirs = getenv("XSCHED_SHIM_DIR");
		if (!dirs || !*dirs)
			dirs = XSCHED_SHIM_DIR;
		if (ctl_find_shims(ctl, dirs, &pre) < 0) {
			ctl_err(ctl, "out of memory");
			goto out;
		}
		if (pre.count == 0)
			ctl_warn(ctl, "no xsched shim found in %s; running %s without preload",
				 dirs, argv[a.i]);
	}
	for (i = 0; i < XS_ARRAY_SIZE(hints); i++)
		if (value[i][0] && setenv(hints[i].env, value[i], 1) < 0)
			goto nomem;
	/* The shim connects to the daemon on the socket we were told about. */
	if (ctl->socket && setenv("XSCHED_SOCKET", ctl->socket, 1) < 0)
		goto nomem;
	if (pre.count) {
		old = getenv("LD_PRELOAD");
		if (old && *old && !ctl_preload_add(&pre, old))
			goto nomem;
		if (setenv("LD_PRELOAD", pre.s, 1) < 0)
			goto nomem;
	}
	fflush(stdout);
	execvp(argv[a.i], argv + a.i);
	err = errno;
	ctl_err(ctl, "cannot run %s: %s", argv[a.i], strerror(err));
	rc = err == ENOENT ? 127 : 126;
	goto out;
nomem:
	ctl_err(ctl, "cannot set up the environment: %s", strerror(errno));
out:
	free(pre.s);
	return rc;
}
