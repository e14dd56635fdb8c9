/*
 * `xschedctl run`: executes a command under xsched without the daemon's
 * help. Hints travel in the environment (the shim reads them when a queue
 * is created) and the vendor shims are put first in LD_PRELOAD.
 *
 * The shims are found relative to xschedctl's own executable, never at a
 * path fixed at build time, so one binary works from its build tree and
 * from any prefix it was installed or copied to: for each vendor API the
 * first of <exe>/<libdir>/xsched, <exe>/../lib/xsched, the build tree's
 * <exe>/../src/shim/<api>/ and the directories of $XSCHED_SHIM_DIR that
 * holds its shim is used. Every shim found is preloaded (one whose vendor
 * library the program never loads stays inert), or those of --api. A
 * program that would run unscheduled is refused unless the user says so:
 * silently running without the shim is the failure an operator would not
 * notice.
 */
#include "xschedctl.h"
#include "base/compiler.h"
#include "base/size.h"
#include "ipc/ipc_msg.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef XSCHED_LIBDIR_FROM_BIN
#error "the build defines XSCHED_LIBDIR_FROM_BIN, the libdir relative to the bindir"
#endif

static const struct ctl_shim {
	const char *api;        /* --api name */
	const char *file;
	const char *build;      /* its directory in a build tree */
} ctl_shims[] = {
	{ "cuda", "libxsched-cuda.so", "src/shim/cuda" },
	{ "opencl", "libxsched-opencl.so", "src/shim/opencl" },
	{ "levelzero", "libxsched-levelzero.so", "src/shim/ze" },
};

/* Stands for every shim in messages: its places, never a file. */
static const struct ctl_shim ctl_any_shim = { "any", "libxsched-*.so", "src/shim/*" };

enum {
	CTL_OPT_PRIORITY = CTL_OPT_VERB,
	CTL_OPT_SHARE,
	CTL_OPT_DEADLINE,
	CTL_OPT_LAXITY,
	CTL_OPT_LIB,
	CTL_OPT_API,
	CTL_OPT_DRY_RUN,
	CTL_OPT_ALLOW,
	CTL_OPT_MEMORY,
};

/* A growing ':'-separated list (LD_PRELOAD, or where we looked). */
struct ctl_list {
	char *s;
	size_t len, cap;
	int count;
};

static bool ctl_list_add(struct ctl_list *p, const char *sep, const char *item)
{
	size_t n = strlen(item), m = p->len ? strlen(sep) : 0;

	if (!p->s || p->len + m + n + 1 > p->cap) {
		size_t cap = (p->len + m + n + 1) * 2;
		char *s = realloc(p->s, cap);

		if (!s)
			return false;
		p->s = s;
		p->cap = cap;
	}
	memcpy(p->s + p->len, sep, m);
	memcpy(p->s + p->len + m, item, n + 1);
	p->len += m + n;
	p->count++;
	return true;
}

/* The dynamic loader splits LD_PRELOAD at ':' and blanks. */
static bool ctl_preload_safe(const char *path)
{
	return !strpbrk(path, ": \t\n");
}

/*
 * Writes @dir/@rel to @out, resolving @rel's leading "../" against @dir
 * lexically, so that messages name /usr/lib/xsched rather than
 * /usr/bin/../lib/xsched. False if it does not fit.
 */
static bool ctl_join(char *out, size_t n, const char *dir, const char *rel)
{
	size_t len = strlen(dir);

	while (strncmp(rel, "../", 3) == 0 || strcmp(rel, "..") == 0) {
		while (len > 1 && dir[len - 1] != '/')
			len--;
		if (len > 1)
			len--;
		rel += rel[2] ? 3 : 2;
	}
	if (len == 1 && dir[0] == '/' && *rel)
		len = 0;        /* "/" + "lib/xsched" */
	return (size_t)snprintf(out, n, "%.*s%s%s", (int)len, dir, *rel ? "/" : "", rel) < n;
}

/* The directory of our own executable, or "" when /proc is not there. */
static void ctl_exe_dir(char *out, size_t n)
{
	char *exe = realpath("/proc/self/exe", NULL), *slash;

	out[0] = '\0';
	if (!exe)
		return;
	slash = strrchr(exe, '/');
	if (slash && slash != exe)
		*slash = '\0';
	if (strlen(exe) < n)
		strcpy(out, exe);
	free(exe);
}

/* True if @path is a readable regular file. */
static bool ctl_is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/*
 * Finds @s in the search order (see the file comment). On success stores
 * the real path, to be freed, in *@found (NULL if not found) and returns
 * 0; -ENOMEM on allocation failure. The places searched are appended to
 * @looked when it is not NULL.
 */
static int ctl_find_shim(const struct ctl_shim *s, const char *exe_dir, const char *env,
			 char **found, struct ctl_list *looked)
{
	char dir[PATH_MAX], path[PATH_MAX], prev[PATH_MAX] = "", build[64];
	const char *rel[3];
	char *list, *save = NULL, *d;
	size_t i;

	snprintf(build, sizeof(build), "../%s", s->build);
	rel[0] = XSCHED_LIBDIR_FROM_BIN "/xsched";
	rel[1] = "../lib/xsched";
	rel[2] = build;
	*found = NULL;
	for (i = 0; exe_dir[0] && i < ARRAY_SIZE(rel); i++) {
		if (!ctl_join(dir, sizeof(dir), exe_dir, rel[i]) || strcmp(dir, prev) == 0)
			continue;
		strcpy(prev, dir);
		if (looked && !ctl_list_add(looked, ", ", dir))
			return -ENOMEM;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, s->file) < sizeof(path) &&
		    ctl_is_file(path))
			goto hit;
	}
	if (!env || !*env)
		return 0;
	list = strdup(env);
	if (!list)
		return -ENOMEM;
	for (d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (looked && !ctl_list_add(looked, ", ", d)) {
			free(list);
			return -ENOMEM;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", d, s->file) < sizeof(path) &&
		    ctl_is_file(path)) {
			free(list);
			goto hit;
		}
	}
	free(list);
	return 0;
hit:
	*found = realpath(path, NULL);
	return *found || errno != ENOMEM ? 0 : -ENOMEM;
}

/* Parses --api's comma-separated list into a mask over ctl_shims. */
static bool ctl_parse_apis(const struct ctl_verb *v, const char *val, unsigned *mask)
{
	const char *p = val;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ","), i;

		if (n == 0) {
			p++;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(ctl_shims); i++)
			if (strlen(ctl_shims[i].api) == n && strncmp(p, ctl_shims[i].api, n) == 0)
				break;
		if (i == ARRAY_SIZE(ctl_shims)) {
			ctl_usage_error(v, "unknown API '%.*s' in --api (cuda, opencl, levelzero)",
					(int)n, p);
			return false;
		}
		*mask |= 1u << i;
		p += n + (p[n] == ',');
	}
	if (!*mask) {
		ctl_usage_error(v, "--api needs at least one of cuda, opencl, levelzero");
		return false;
	}
	return true;
}

/*
 * Adds the shims of @mask to @pre. Returns 0, 1 when one that @required
 * asks for (or, with @required 0, every one) is missing, after reporting
 * where it looked unless @allow, or -ENOMEM.
 */
static int ctl_add_shims(const struct ctl *ctl, unsigned mask, unsigned required, bool allow,
			 const char *cmd, struct ctl_list *pre)
{
	char exe_dir[PATH_MAX], *found;
	const char *env = getenv("XSCHED_SHIM_DIR"), *where;
	struct ctl_list looked = { 0 };
	unsigned missing = 0;
	size_t i;
	int err;

	ctl_exe_dir(exe_dir, sizeof(exe_dir));
	for (i = 0; i < ARRAY_SIZE(ctl_shims); i++) {
		if (!(mask & (1u << i)))
			continue;
		err = ctl_find_shim(&ctl_shims[i], exe_dir, env, &found, NULL);
		if (err < 0)
			return err;
		if (!found) {
			missing |= 1u << i;
			continue;
		}
		if (!ctl_preload_safe(found))
			ctl_warn(ctl, "skipping %s: LD_PRELOAD cannot hold a path with ':' or blanks",
				 found);
		else if (!ctl_list_add(pre, ":", found))
			err = -ENOMEM;
		free(found);
		if (err < 0)
			return err;
	}
	if (required ? !(missing & required) : pre->count > 0)
		return 0;
	/* Report the places of the first shim asked for, or of any. */
	for (i = 0; required && !(required & missing & (1u << i)); i++)
		;
	err = ctl_find_shim(required ? &ctl_shims[i] : &ctl_any_shim, exe_dir, env, &found,
			    &looked);
	free(found);
	if (err < 0) {
		free(looked.s);
		return err;
	}
	where = looked.s ? looked.s : "no directory";
	if (allow)
		ctl_warn(ctl, "no %s found (looked in %s%s); running %s unscheduled",
			 required ? ctl_shims[i].file : "xsched shim", where,
			 env && *env ? "" : "; $XSCHED_SHIM_DIR unset", cmd);
	else
		ctl_err(ctl, "no %s found (looked in %s%s); give --lib PATH, or "
			"--allow-unscheduled to run %s without it",
			required ? ctl_shims[i].file : "xsched shim", where,
			env && *env ? "" : "; $XSCHED_SHIM_DIR unset", cmd);
	free(looked.s);
	return allow ? 0 : 1;
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

/* Sets @name to @val, or with @dry prints the assignment instead. */
static bool ctl_run_env(bool dry, const char *name, const char *val)
{
	if (dry)
		return printf("%s=%s\n", name, val) >= 0;
	return setenv(name, val, 1) == 0;
}

int ctl_run(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "priority", 0, true, CTL_OPT_PRIORITY },
		{ "share", 0, true, CTL_OPT_SHARE },
		{ "deadline", 0, true, CTL_OPT_DEADLINE },
		{ "laxity", 0, true, CTL_OPT_LAXITY },
		{ "lib", 0, true, CTL_OPT_LIB },
		{ "api", 0, true, CTL_OPT_API },
		{ "dry-run", 'n', false, CTL_OPT_DRY_RUN },
		{ "allow-unscheduled", 0, false, CTL_OPT_ALLOW },
		{ "memory-limit", 0, true, CTL_OPT_MEMORY },
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
	char value[ARRAY_SIZE(hints)][24] = { { 0 } };
	unsigned apis = 0;
	bool dry = false, allow = false;
	struct ctl_list pre = { 0 };
	const char *val, *old, *cmd, *memory = NULL;
	uint64_t bytes;
	char *abs;
	int id, err, rc = CTL_EXIT_ERROR;
	size_t i;

	while ((id = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
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
			if (!ctl_list_add(&pre, ":", abs)) {
				free(abs);
				ctl_err(ctl, "out of memory");
				goto out;
			}
			free(abs);
			break;
		case CTL_OPT_API:
			if (!ctl_parse_apis(v, val, &apis))
				goto out;
			break;
		case CTL_OPT_DRY_RUN:
			dry = true;
			break;
		case CTL_OPT_ALLOW:
			allow = true;
			break;
		case CTL_OPT_MEMORY:
			if (size_parse(val, &bytes) < 0 || !bytes) {
				ctl_usage_error(v, "invalid memory-limit '%s' (a size above zero "
						"such as 8G or 512MiB)", val);
				goto out;
			}
			memory = val;
			break;
		default:
			/* With .stop, no positional comes here. */
			err = ctl_verb_opt(ctl, &a, id, val);
			if (err >= 0) {
				rc = err;
				goto out;
			}
		}
	}
	if (a.i >= argc && !dry) {
		ctl_usage_error(v, "missing command");
		goto out;
	}
	if (apis && pre.count) {
		ctl_usage_error(v, "--api and --lib exclude each other");
		goto out;
	}
	cmd = a.i < argc ? argv[a.i] : "the command";

	if (pre.count == 0) {
		err = ctl_add_shims(ctl, apis ? apis : (1u << ARRAY_SIZE(ctl_shims)) - 1, apis,
				    allow, cmd, &pre);
		if (err < 0) {
			ctl_err(ctl, "out of memory");
			goto out;
		}
		if (err > 0)
			goto out;
	}
	for (i = 0; i < ARRAY_SIZE(hints); i++)
		if (value[i][0] && !ctl_run_env(dry, hints[i].env, value[i]))
			goto nomem;
	if (memory && !ctl_run_env(dry, "XSCHED_MEMORY_LIMIT", memory))
		goto nomem;
	/* The shim connects to the daemon on the socket we were told about. */
	if (ctl->socket && !ctl_run_env(dry, "XSCHED_SOCKET", ctl->socket))
		goto nomem;
	if (pre.count) {
		old = getenv("LD_PRELOAD");
		if (old && *old && !ctl_list_add(&pre, ":", old))
			goto nomem;
		if (!ctl_run_env(dry, "LD_PRELOAD", pre.s))
			goto nomem;
	}
	if (dry) {
		rc = fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR;
		goto out;
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

_Static_assert(ARRAY_SIZE(ctl_shims) == CTL_NSHIMS, "CTL_NSHIMS");

const char *ctl_shim_file(size_t i)
{
	return i < CTL_NSHIMS ? ctl_shims[i].file : NULL;
}

int ctl_shim_find(size_t i, char **found)
{
	char exe_dir[PATH_MAX];

	*found = NULL;
	if (i >= CTL_NSHIMS)
		return -EINVAL;
	ctl_exe_dir(exe_dir, sizeof(exe_dir));
	return ctl_find_shim(&ctl_shims[i], exe_dir, getenv("XSCHED_SHIM_DIR"), found, NULL);
}
