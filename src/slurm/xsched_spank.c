/*
 * xsched_spank.so: a Slurm SPANK plugin that runs a job's tasks under
 * xsched. srun, sbatch and salloc get --xsched-priority=N|high|normal|low,
 * --xsched-share=N and --xsched-deadline=US; a task of a step given any of
 * them starts with the shims first in LD_PRELOAD and the hints in
 * XSCHED_PRIORITY, XSCHED_SHARE and XSCHED_DEADLINE_US, as `xschedctl
 * run` would set them, and registers its queues with the node's xschedd.
 * A step without them is left exactly as it was (nothing is preloaded),
 * unless the node's xschedd enforces device access ([enforce] devices =
 * audit or on: the file "<socket>.enforce" exists): then every task starts
 * with the shims preloaded, without hints, so that it registers with the
 * daemon before main and may open the node's accelerators.
 *
 * Values are checked where the option is parsed (srun or sbatch on the
 * submitting host, again in slurmstepd), so a bad value makes the command
 * fail with this plugin's message before anything runs. The shims are
 * looked for on the node when each task starts, in the directories of the
 * plugstack.conf argument shim_dir= (default: the installed shim
 * directory); a task that asked for xsched and would run without it fails
 * rather than run unscheduled unnoticed. socket= sets XSCHED_SOCKET for
 * nodes whose daemon listens elsewhere than the default.
 *
 * Only spank.h is used: the plugin links nothing of Slurm's and nothing of
 * xsched's (the classes' priorities are those built into xschedd.conf's
 * [cdi] section: high 10, normal 0, low -10).
 */
#include <errno.h>
#include <limits.h>
#include <slurm/spank.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef XSCHED_SPANK_SHIM_DIR
#error "the build defines XSCHED_SPANK_SHIM_DIR, the installed shim directory"
#endif

SPANK_PLUGIN(xsched, 1);

#define XS_PRIORITY_MIN (-100)
#define XS_PRIORITY_MAX 100
#define XS_SHARE_MAX 1000000
#define XS_TIME_MAX_US 3600000000LL

enum { OPT_PRIORITY = 1, OPT_SHARE, OPT_DEADLINE, OPT_COUNT };

/* The options' values once checked, by option; set: given. */
static struct {
	bool set;
	long long value;
} opt[OPT_COUNT];

static const char *const opt_env[OPT_COUNT] = {
	NULL, "XSCHED_PRIORITY", "XSCHED_SHARE", "XSCHED_DEADLINE_US",
};

/* plugstack.conf arguments. */
static char shim_dirs[PATH_MAX] = XSCHED_SPANK_SHIM_DIR;
static char socket_path[108];

/* xschedd's client socket when socket= is not given (src/ipc/ipc_abi.h). */
#define XS_DEFAULT_SOCKET "/run/xsched/xschedd.sock"

static const char *const shim_files[] = {
	"libxsched-cuda.so", "libxsched-opencl.so", "libxsched-levelzero.so",
};

static const struct {
	const char *name;
	long long priority;
} classes[] = {
	{ "high", 10 }, { "normal", 0 }, { "low", -10 },
};

/* A whole decimal integer in @lo..@hi; false otherwise. */
static bool parse_ll(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Microseconds: an integer with an optional us, ms or s suffix. */
static bool parse_us(const char *s, long long *out)
{
	static const struct { const char *suffix; long long mul; } units[] = {
		{ "us", 1 }, { "ms", 1000 }, { "s", 1000000 },
	};
	char num[32];
	size_t n, i;
	long long v;

	if (!s)
		return false;
	n = strspn(s, "0123456789");
	if (n == 0 || n >= sizeof(num))
		return false;
	memcpy(num, s, n);
	num[n] = '\0';
	if (!parse_ll(num, 0, XS_TIME_MAX_US, &v))
		return false;
	if (s[n]) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(s + n, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]) || v > XS_TIME_MAX_US / units[i].mul)
			return false;
		v *= units[i].mul;
	}
	*out = v;
	return true;
}

static int opt_cb(int val, const char *arg, int remote)
{
	long long v = 0;
	bool ok = false;
	size_t i;

	(void)remote;
	switch (val) {
	case OPT_PRIORITY:
		for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
			if (arg && !strcmp(arg, classes[i].name)) {
				v = classes[i].priority;
				ok = true;
			}
		if (!ok)
			ok = parse_ll(arg, XS_PRIORITY_MIN, XS_PRIORITY_MAX, &v);
		if (!ok) {
			slurm_error("xsched: invalid --xsched-priority '%s': expected an integer "
				    "in -100..100, high, normal or low", arg ? arg : "");
			return -1;
		}
		break;
	case OPT_SHARE:
		if (!parse_ll(arg, 0, XS_SHARE_MAX, &v)) {
			slurm_error("xsched: invalid --xsched-share '%s': expected an integer in "
				    "0..1000000", arg ? arg : "");
			return -1;
		}
		break;
	case OPT_DEADLINE:
		if (!parse_us(arg, &v)) {
			slurm_error("xsched: invalid --xsched-deadline '%s': expected microseconds "
				    "in 0..3600000000, or with a unit (us, ms, s)", arg ? arg : "");
			return -1;
		}
		break;
	default:
		return -1;
	}
	opt[val].set = true;
	opt[val].value = v;
	return 0;
}

static struct spank_option options[] = {
	{ "xsched-priority", "N|high|normal|low",
	  "Schedule the tasks' GPU queues with xsched at priority N (-100..100; "
	  "high 10, normal 0, low -10)", 1, OPT_PRIORITY, opt_cb },
	{ "xsched-share", "N",
	  "Schedule the tasks' GPU queues with xsched with bandwidth share N (0..1000000)",
	  1, OPT_SHARE, opt_cb },
	{ "xsched-deadline", "US",
	  "Schedule the tasks' GPU queues with xsched with relative deadline US "
	  "(microseconds, or with a unit: us, ms, s)", 1, OPT_DEADLINE, opt_cb },
	SPANK_OPTIONS_TABLE_END
};

/* Copies @v into @dst (@len bytes) for the argument @arg; false if too long. */
static bool set_arg(char *dst, size_t len, const char *arg, const char *v)
{
	if (strlen(v) >= len || v[0] != '/') {
		slurm_error("xsched: plugstack.conf argument %s must be absolute and shorter "
			    "than %zu bytes", arg, len);
		return false;
	}
	strcpy(dst, v);
	return true;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	int i;

	for (i = 0; i < ac; i++) {
		if (!strncmp(av[i], "shim_dir=", 9)) {
			if (!set_arg(shim_dirs, sizeof(shim_dirs), "shim_dir", av[i] + 9))
				return -1;
		} else if (!strncmp(av[i], "socket=", 7)) {
			if (!set_arg(socket_path, sizeof(socket_path), "socket", av[i] + 7))
				return -1;
		} else {
			slurm_error("xsched: unknown plugstack.conf argument '%s' (shim_dir=DIR[:DIR...], "
				    "socket=PATH)", av[i]);
			return -1;
		}
	}
	for (i = 0; options[i].name; i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS) {
			slurm_error("xsched: cannot register --%s", options[i].name);
			return -1;
		}
	return 0;
}

/* The first @file in the ':'-separated @dirs, into @out; false if none. */
static bool find_shim(const char *file, char *out, size_t len)
{
	const char *d = shim_dirs;
	struct stat st;

	while (*d) {
		size_t n = strcspn(d, ":");

		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, d, file) < len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode))
			return true;
		d += n + (d[n] == ':');
	}
	return false;
}

/* Whether the node's xschedd enforces device access (its "<socket>.enforce"). */
static bool node_enforces(void)
{
	char flag[sizeof(socket_path) + 16];

	snprintf(flag, sizeof(flag), "%s.enforce", socket_path[0] ? socket_path : XS_DEFAULT_SOCKET);
	return access(flag, F_OK) == 0;
}

/* In the task, just before it executes: the shims and the hints. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char preload[4 * PATH_MAX] = "", path[PATH_MAX], old[2 * PATH_MAX], val[32];
	size_t used = 0, i;
	bool any = false;
	int k;

	(void)ac;
	(void)av;
	for (k = 1; k < OPT_COUNT; k++)
		any = any || opt[k].set;
	if (!any && !node_enforces())
		return 0;
	for (i = 0; i < sizeof(shim_files) / sizeof(shim_files[0]); i++) {
		if (!find_shim(shim_files[i], path, sizeof(path)))
			continue;
		if (strpbrk(path, ": \t\n") || used + strlen(path) + 2 > sizeof(preload))
			continue;
		used += (size_t)sprintf(preload + used, "%s%s", used ? ":" : "", path);
	}
	if (!used && !any) {
		/* Asked for nothing: it runs, and the gate refuses it the devices. */
		slurm_info("xsched: the node enforces device access but no xsched shim "
			   "(libxsched-*.so) is in %s: the task runs unregistered", shim_dirs);
		return 0;
	}
	if (!used) {
		slurm_error("xsched: no xsched shim (libxsched-*.so) in %s: refusing to run the "
			    "task unscheduled", shim_dirs);
		return -1;
	}
	if (spank_getenv(sp, "LD_PRELOAD", old, sizeof(old)) == ESPANK_SUCCESS && old[0]) {
		if (used + strlen(old) + 2 > sizeof(preload)) {
			slurm_error("xsched: LD_PRELOAD too long");
			return -1;
		}
		sprintf(preload + used, ":%s", old);
	}
	if (spank_setenv(sp, "LD_PRELOAD", preload, 1) != ESPANK_SUCCESS)
		goto fail;
	for (k = 1; k < OPT_COUNT; k++) {
		if (!opt[k].set)
			continue;
		snprintf(val, sizeof(val), "%lld", opt[k].value);
		if (spank_setenv(sp, opt_env[k], val, 1) != ESPANK_SUCCESS)
			goto fail;
	}
	if (socket_path[0] && spank_setenv(sp, "XSCHED_SOCKET", socket_path, 1) != ESPANK_SUCCESS)
		goto fail;
	return 0;
fail:
	slurm_error("xsched: cannot set the task's environment");
	return -1;
}
