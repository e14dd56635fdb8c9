/*
 * `xschedctl cdi generate`: a Container Device Interface spec that makes
 * a container scheduled by the host's xschedd, one CDI device per priority
 * class and numeric level of xschedd.conf's [cdi] section.
 *
 * What every device needs goes into the spec's own containerEdits, which
 * a runtime applies once whichever device of the kind is requested: the
 * shims bound read-only into the container's container_dir, LD_PRELOAD
 * naming them there, the directory of the daemon's client socket bound at
 * its host path (a directory, not the socket file, so that a restarted
 * daemon's new socket is seen) and XSCHED_SOCKET. Each device adds only
 * its hints (XSCHED_PRIORITY, ...). The shims are the host files `run`
 * would preload, or those of shim_dir; paths are written as found, never
 * guessed, and a spec without any shim is refused.
 *
 * The configuration is read with the daemon's own parser (so the spec
 * follows what `xschedd --check-config` accepts); a build without inih has
 * no parser and refuses the verb.
 */
#include "xschedctl.h"
#include "base/compiler.h"

#ifdef XSCHED_CTL_WITH_CONFIG
#include "daemon/config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTL_CDI_KIND "xsched.dev/sched"
/* 0.5.0: the first version whose device names may begin with a digit. */
#define CTL_CDI_VERSION "0.5.0"

enum {
	CTL_OPT_CONFIG = CTL_OPT_VERB,
	CTL_OPT_OUT_FILE,
	CTL_OPT_SHIM_DIR,
};

#ifdef XSCHED_CTL_WITH_CONFIG

/* The hints' environment variables, by enum ipc_key 1..4. */
static const char *const ctl_cdi_env[XSD_CLASS_HINTS] = {
	NULL, "XSCHED_PRIORITY", "XSCHED_SHARE", "XSCHED_DEADLINE_US", "XSCHED_LAXITY_US",
};

/* A bind mount of @host at @cont. */
static void ctl_cdi_mount(struct ctl_json *j, const char *host, const char *cont, bool dir)
{
	ctl_json_open(j, NULL, '{');
	ctl_json_str(j, "hostPath", host, PATH_MAX);
	ctl_json_str(j, "containerPath", cont, PATH_MAX);
	ctl_json_open(j, "options", '[');
	ctl_json_str(j, NULL, "ro", 8);
	ctl_json_str(j, NULL, "nosuid", 8);
	ctl_json_str(j, NULL, "nodev", 8);
	if (dir)
		ctl_json_str(j, NULL, "noexec", 8);
	ctl_json_str(j, NULL, "bind", 8);
	ctl_json_close(j, ']');
	ctl_json_close(j, '}');
}

/* One device: its name and the environment of its hints and memory limit. */
static void ctl_cdi_device(struct ctl_json *j, const char *name, const int64_t *hint,
			   uint32_t set, uint64_t memory_limit)
{
	char env[64];

	ctl_json_open(j, NULL, '{');
	ctl_json_str(j, "name", name, XSD_CLASS_NAME_LEN);
	ctl_json_open(j, "containerEdits", '{');
	ctl_json_open(j, "env", '[');
	for (int k = 1; k < XSD_CLASS_HINTS; k++) {
		if (!(set & (1u << k)))
			continue;
		snprintf(env, sizeof(env), "%s=%lld", ctl_cdi_env[k], (long long)hint[k]);
		ctl_json_str(j, NULL, env, sizeof(env));
	}
	if (memory_limit) {
		snprintf(env, sizeof(env), "XSCHED_MEMORY_LIMIT=%llu",
			 (unsigned long long)memory_limit);
		ctl_json_str(j, NULL, env, sizeof(env));
	}
	ctl_json_close(j, ']');
	ctl_json_close(j, '}');
	ctl_json_close(j, '}');
}

/*
 * The shims to bind: @host[i] (to be freed) for each one found, NULL for
 * the others. With @dir, the files of that directory (which must hold at
 * least one), else where `run` finds them. Returns how many were found, or
 * -ENOMEM.
 */
static int ctl_cdi_shims(const char *dir, char *host[CTL_NSHIMS])
{
	char path[PATH_MAX];
	struct stat st;
	int n = 0;

	for (size_t i = 0; i < CTL_NSHIMS; i++) {
		host[i] = NULL;
		if (dir) {
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, ctl_shim_file(i)) >=
			    sizeof(path) || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			host[i] = strdup(path);
			if (!host[i])
				return -ENOMEM;
		} else if (ctl_shim_find(i, &host[i]) < 0) {
			return -ENOMEM;
		}
		n += host[i] != NULL;
	}
	return n;
}

/* Writes the spec to @f. */
static void ctl_cdi_write(FILE *f, const struct xsd_classes *k, const char *socket,
			  char *host[CTL_NSHIMS])
{
	char sockdir[sizeof(((struct xsd_config *)0)->socket)], path[PATH_MAX], *slash;
	struct ctl_json j;
	size_t len = 0, i;
	char *preload;

	snprintf(sockdir, sizeof(sockdir), "%s", socket);
	slash = strrchr(sockdir, '/');
	*slash = '\0';                 /* not the first byte: ctl_cdi_generate() */
	preload = calloc(1, CTL_NSHIMS * (sizeof(k->container_dir) + 32));
	ctl_json_init(&j, f);
	ctl_json_open(&j, NULL, '{');
	ctl_json_str(&j, "cdiVersion", CTL_CDI_VERSION, 16);
	ctl_json_str(&j, "kind", CTL_CDI_KIND, 32);
	ctl_json_open(&j, "containerEdits", '{');
	ctl_json_open(&j, "env", '[');
	if (preload) {
		len = (size_t)sprintf(preload, "LD_PRELOAD=");
		for (i = 0; i < CTL_NSHIMS; i++)
			if (host[i])
				len += (size_t)sprintf(preload + len, "%s%s/%s",
						       len > strlen("LD_PRELOAD=") ? ":" : "",
						       k->container_dir, ctl_shim_file(i));
		ctl_json_str(&j, NULL, preload, len);
	}
	snprintf(path, sizeof(path), "XSCHED_SOCKET=%s", socket);
	ctl_json_str(&j, NULL, path, sizeof(path));
	ctl_json_close(&j, ']');
	ctl_json_open(&j, "mounts", '[');
	for (i = 0; i < CTL_NSHIMS; i++) {
		if (!host[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", k->container_dir, ctl_shim_file(i));
		ctl_cdi_mount(&j, host[i], path, false);
	}
	ctl_cdi_mount(&j, sockdir, sockdir, true);
	ctl_json_close(&j, ']');
	ctl_json_close(&j, '}');
	ctl_json_open(&j, "devices", '[');
	for (i = 0; i < k->n; i++)
		ctl_cdi_device(&j, k->cls[i].name, k->cls[i].hint, k->cls[i].set,
			       k->cls[i].memory_limit);
	for (int32_t l = k->level_lo; k->levels && l <= k->level_hi; l++) {
		int64_t hint[XSD_CLASS_HINTS] = { 0 };
		char name[16];

		hint[IPC_KEY_PRIORITY] = l;
		snprintf(name, sizeof(name), "%d", (int)l);
		ctl_cdi_device(&j, name, hint, 1u << IPC_KEY_PRIORITY, 0);
	}
	ctl_json_close(&j, ']');
	ctl_json_close(&j, '}');
	fputc('\n', f);
	free(preload);
}

/*
 * Replaces @path with @len bytes of @data: a temporary file beside it,
 * mode 0644, flushed, then renamed over it, so that a runtime scanning the
 * directory never reads half a spec (the temporary name does not end in
 * .json). Returns 0 or a negative errno.
 */
static int ctl_cdi_replace(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	int fd, err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0)
		err = -errno;
	while (!err && len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		else {
			data += n;
			len -= (size_t)n;
		}
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* True if paths @a and @b name entries of one directory. */
static bool ctl_cdi_same_dir(const char *a, const char *b)
{
	size_t la = (size_t)(strrchr(a, '/') - a), lb = (size_t)(strrchr(b, '/') - b);

	return la == lb && !strncmp(a, b, la);
}

static int ctl_cdi_generate(struct ctl *ctl, const char *config, const char *out,
			    const char *shim_dir)
{
	static struct xsd_config cfg;   /* large; one call per process */
	char err[2048], *host[CTL_NSHIMS] = { NULL }, *buf = NULL;
	const char *socket, *problem;
	size_t len = 0, i;
	int rc = CTL_EXIT_ERROR, n;
	FILE *f;

	xsd_config_defaults(&cfg);
	n = xsd_config_load(config ? config : XSD_DEFAULT_CONFIG, config != NULL, &cfg, err,
			    sizeof(err));
	if (n < 0) {
		ctl_err(ctl, "bad configuration:\n%s", err);
		goto out;
	}
	socket = ctl->socket ? ctl->socket : cfg.socket;
	problem = xsd_socket_path_problem(socket);
	if (!problem && strrchr(socket, '/') == socket)
		problem = "the spec mounts its directory, which cannot be /";
	if (problem) {
		ctl_err(ctl, "socket '%s': %s", socket, problem);
		goto out;
	}
	if (!shim_dir && cfg.classes.shim_dir[0])
		shim_dir = cfg.classes.shim_dir;
	n = ctl_cdi_shims(shim_dir, host);
	if (n < 0)
		goto nomem;
	if (n == 0) {
		if (shim_dir)
			ctl_err(ctl, "no xsched shim (libxsched-*.so) in %s", shim_dir);
		else
			ctl_err(ctl, "no xsched shim found where `run` looks (see `xschedctl help "
				"run`); give --shim-dir DIR");
		goto out;
	}
	for (i = 0; i < CTL_NSHIMS; i++) {
		if (host[i] && (host[i][0] != '/' || strpbrk(host[i], ": \t\n"))) {
			ctl_err(ctl, "%s: the shim's host path must be absolute, without ':' "
				"or blanks", host[i]);
			goto out;
		}
	}
	if (ctl_cdi_same_dir(cfg.control_socket, socket))
		ctl_warn(ctl, "the control socket %s is in the directory the spec mounts: root "
			 "in a container may use it ([daemon] control_socket elsewhere avoids "
			 "that)", cfg.control_socket);
	f = open_memstream(&buf, &len);
	if (!f)
		goto nomem;
	ctl_cdi_write(f, &cfg.classes, socket, host);
	if (fclose(f) != 0 || !buf)
		goto nomem;
	if (!out) {
		rc = fwrite(buf, 1, len, stdout) == len ? CTL_EXIT_OK : CTL_EXIT_ERROR;
		goto out;
	}
	n = ctl_cdi_replace(out, buf, len);
	if (n < 0) {
		ctl_err(ctl, "cannot write %s: %s", out, strerror(-n));
		goto out;
	}
	rc = CTL_EXIT_OK;
	goto out;
nomem:
	ctl_err(ctl, "out of memory");
out:
	for (i = 0; i < CTL_NSHIMS; i++)
		free(host[i]);
	free(buf);
	xsd_config_fini(&cfg);
	return rc;
}

#endif /* XSCHED_CTL_WITH_CONFIG */

int ctl_cdi(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	static const struct ctl_opt opts[] = {
		CTL_COMMON_OPTS,
		{ "config", 0, true, CTL_OPT_CONFIG },
		{ "output", 0, true, CTL_OPT_OUT_FILE },
		{ "shim-dir", 0, true, CTL_OPT_SHIM_DIR },
		{ NULL, 0, false, 0 },
	};
	const char *val, *pos[1] = { NULL }, *config = NULL, *out = NULL, *shim_dir = NULL;
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v,
			      .pos = pos, .max_pos = 1 };
	int id, rc;

	while ((id = ctl_next(&a, opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_CONFIG:
			config = val;
			break;
		case CTL_OPT_OUT_FILE:
			out = val;
			break;
		case CTL_OPT_SHIM_DIR:
			if (val[0] != '/' || strpbrk(val, ": \t\n"))
				return ctl_usage_error(v, "--shim-dir must be an absolute path "
						       "without ':' or blanks");
			shim_dir = val;
			break;
		default:
			rc = ctl_verb_opt(ctl, &a, id, val);
			if (rc >= 0)
				return rc;
		}
	}
	if (!pos[0])
		return ctl_usage_error(v, "missing 'generate'");
	if (strcmp(pos[0], "generate"))
		return ctl_usage_error(v, "unknown cdi command '%s' (generate)", pos[0]);
#ifdef XSCHED_CTL_WITH_CONFIG
	return ctl_cdi_generate(ctl, config, out, shim_dir);
#else
	(void)config;
	(void)out;
	(void)shim_dir;
	ctl_err(ctl, "this xschedctl was built without inih, so it cannot read "
		"xschedd.conf: cdi generate is unavailable");
	return CTL_EXIT_ERROR;
#endif
}
