/*
 * Loader of the device gate (gate.bpf.c) through its libbpf skeleton.
 *
 * Pinning, in a directory of bpffs when one is given: every map, so that
 * the allowed set and the configuration outlive the daemon (a restarted
 * daemon reuses them: processes registered before keep their access), and
 * the links of the exec and exit programs, which keep the allowed set
 * right while no daemon runs. The link of the gate itself is pinned only
 * when the gate must hold without the daemon (fail = closed); otherwise it
 * goes with the daemon's descriptor.
 *
 * A load always attaches its own programs first and only then drops the
 * pins of an older load (the old link is unpinned and closed): both gates
 * read the same maps, so there is no instant without one.
 */
#include "bpf/xbpf.h"
#include "bpf/xbpf_map.h"
#include "gate.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(struct xbpf_gate_event) == 88, "xbpf ABI");
_Static_assert(sizeof(struct xbpf_gate_conf) == 176, "xbpf ABI");

struct xbpf_gate {
	struct gate_bpf *skel;
	const char *hook;                  /* "lsm/file_open" or "cgroup/dev" */
	int lsm_rc;                        /* why not the LSM hook: -errno; 0 it is */
	struct ring_buffer *rb;
	xbpf_gate_fn fn;
	void *arg;
	struct bpf_link *open_link, *exec_link, *exit_link;
	char dir[256];                     /* "": nothing pinned */
	bool gate_pinned;
};

static const char *const xbpf_gate_links[] = { "link_open", "link_exec", "link_exit" };

static int xbpf_gate_on_event(void *ctx, void *data, size_t len)
{
	struct xbpf_gate *g = ctx;

	if (len >= sizeof(struct xbpf_gate_event))
		g->fn(g->arg, data);
	return 0;
}

static void xbpf_gate_path(const struct xbpf_gate *g, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", g->dir, name);
}

/*
 * Pins @link at @name in the directory, in place of what was pinned there
 * (closed once ours is pinned); with @link NULL only removes the old pin.
 */
static int xbpf_gate_repin(const struct xbpf_gate *g, const char *name, struct bpf_link *link)
{
	char path[300];
	struct bpf_link *old;
	int rc = 0;

	xbpf_gate_path(g, name, path, sizeof(path));
	xbpf_quiet = true;                 /* none pinned yet is the usual case */
	old = bpf_link__open(path);
	xbpf_quiet = false;
	if (old || errno != ENOENT)
		unlink(path);
	if (link) {
		/* libbpf refuses to pin a link twice: unpin ours if it was. */
		bpf_link__unpin(link);
		rc = bpf_link__pin(link, path);
	}
	bpf_link__destroy(old);
	return rc;
}

/* Opens the skeleton, its maps pinned in the directory if there is one. */
static struct gate_bpf *xbpf_gate_skel(const struct xbpf_gate *g, bool lsm, int *rc)
{
	struct gate_bpf *s = gate_bpf__open();
	struct bpf_map *map;

	if (!s) {
		*rc = -errno;
		return NULL;
	}
	bpf_program__set_autoload(lsm ? s->progs.xbpf_gate_dev : s->progs.xbpf_gate_open, false);
	bpf_object__for_each_map(map, s->obj) {
		char path[300];

		if (!g->dir[0] || bpf_map__is_internal(map))
			continue;
		xbpf_gate_path(g, bpf_map__name(map), path, sizeof(path));
		*rc = bpf_map__set_pin_path(map, path);
		if (*rc) {
			gate_bpf__destroy(s);
			return NULL;
		}
	}
	*rc = gate_bpf__load(s);
	if (*rc) {
		gate_bpf__destroy(s);
		return NULL;
	}
	return s;
}

/*
 * Loads and attaches the programs: with the LSM hook if the kernel takes
 * it, else with the cgroup device hook on @cgroup_root. Says why not in
 * @err.
 */
static int xbpf_gate_attach(struct xbpf_gate *g, const char *cgroup_root, char *err,
			    size_t errlen)
{
	int rc, lsm_rc, cgfd;

	/* Kernels without BPF trampolines refuse LSM programs: no warning. */
	xbpf_quiet = true;
	g->skel = xbpf_gate_skel(g, true, &lsm_rc);
	if (g->skel) {
		g->open_link = bpf_program__attach(g->skel->progs.xbpf_gate_open);
		lsm_rc = g->open_link ? 0 : -errno;
		if (!g->open_link) {
			gate_bpf__destroy(g->skel);
			g->skel = NULL;
		}
	}
	xbpf_quiet = false;
	g->lsm_rc = g->skel ? 0 : lsm_rc;
	if (g->skel) {
		g->hook = "lsm/file_open";
	} else {
		g->hook = "cgroup/dev";
		g->skel = xbpf_gate_skel(g, false, &rc);
		if (!g->skel) {
			snprintf(err, errlen, "cannot load the eBPF programs: %s%s", strerror(-rc),
				 rc == -EPERM ? " (needs root, or CAP_BPF, CAP_PERFMON, "
				 "CAP_SYS_ADMIN and CAP_MAC_ADMIN, and a kernel with BTF)" : "");
			return rc;
		}
		cgfd = open(cgroup_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			rc = -errno;
			snprintf(err, errlen, "the LSM hook could not attach (%s) and the cgroup v2 "
				 "root %s cannot be opened: %s", strerror(-lsm_rc), cgroup_root,
				 strerror(-rc));
			return rc;
		}
		g->open_link = bpf_program__attach_cgroup(g->skel->progs.xbpf_gate_dev, cgfd);
		rc = -errno;
		close(cgfd);
		if (!g->open_link) {
			snprintf(err, errlen, "neither hook attaches: lsm/file_open: %s; cgroup/dev "
				 "on %s: %s", strerror(-lsm_rc), cgroup_root, strerror(-rc));
			return rc;
		}
	}
	g->exec_link = bpf_program__attach(g->skel->progs.xbpf_gate_exec);
	g->exit_link = g->exec_link ? bpf_program__attach(g->skel->progs.xbpf_gate_exit) : NULL;
	if (!g->exit_link) {
		rc = -errno;
		snprintf(err, errlen, "cannot attach the exec and exit programs: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

int xbpf_gate_open(const char *pin_dir, bool pin_gate, const char *cgroup_root,
		   xbpf_gate_fn fn, void *arg, struct xbpf_gate **out, char *err, size_t errlen)
{
	struct xbpf_gate *g = calloc(1, sizeof(*g));
	int rc;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->fn = fn;
	g->arg = arg;
	if (pin_dir && pin_dir[0]) {
		if (strlen(pin_dir) >= sizeof(g->dir) - 16) {
			snprintf(err, errlen, "%s: path too long", pin_dir);
			free(g);
			return -ENAMETOOLONG;
		}
		snprintf(g->dir, sizeof(g->dir), "%s", pin_dir);
		if (mkdir(g->dir, 0700) < 0 && errno != EEXIST) {
			rc = -errno;
			snprintf(err, errlen, "cannot make %s: %s", g->dir, strerror(errno));
			free(g);
			return rc;
		}
	}
	rc = xbpf_gate_attach(g, cgroup_root, err, errlen);
	if (rc)
		goto fail;
	if (g->dir[0]) {
		rc = xbpf_gate_repin(g, xbpf_gate_links[1], g->exec_link);
		if (!rc)
			rc = xbpf_gate_repin(g, xbpf_gate_links[2], g->exit_link);
		if (!rc)
			rc = xbpf_gate_repin(g, xbpf_gate_links[0], pin_gate ? g->open_link : NULL);
		if (rc)
			goto fail_pin;
		g->gate_pinned = pin_gate;
	} else if (pin_gate) {
		rc = -EINVAL;
		snprintf(err, errlen, "a gate that outlives the daemon needs a bpffs directory");
		goto fail;
	}
	g->rb = ring_buffer__new(bpf_map__fd(g->skel->maps.gate_events), xbpf_gate_on_event, g,
				 NULL);
	if (!g->rb) {
		rc = -errno;
		snprintf(err, errlen, "cannot map the ring buffer: %s", strerror(-rc));
		goto fail;
	}
	*out = g;
	return 0;
fail_pin:
	snprintf(err, errlen, "cannot pin in %s: %s (is it on a bpffs? mount -t bpf bpf "
		 "/sys/fs/bpf)", g->dir, strerror(-rc));
fail:
	xbpf_gate_close(g);
	return rc < 0 ? rc : -EINVAL;
}

int xbpf_gate_set_pinned(struct xbpf_gate *g, bool pin_gate)
{
	int rc = 0;

	if (pin_gate == g->gate_pinned)
		return 0;
	if (!g->dir[0])
		return -EINVAL;
	if (pin_gate)
		rc = xbpf_gate_repin(g, xbpf_gate_links[0], g->open_link);
	else
		bpf_link__unpin(g->open_link);
	if (!rc)
		g->gate_pinned = pin_gate;
	return rc;
}

const char *xbpf_gate_hook(const struct xbpf_gate *g)
{
	return g->hook;
}

int xbpf_gate_lsm_error(const struct xbpf_gate *g)
{
	return g->lsm_rc;
}

int xbpf_gate_fd(const struct xbpf_gate *g)
{
	return ring_buffer__epoll_fd(g->rb);
}

int xbpf_gate_poll(struct xbpf_gate *g)
{
	return ring_buffer__consume(g->rb);
}

uint64_t xbpf_gate_lost(const struct xbpf_gate *g)
{
	return g->skel->bss->gate_lost;
}

int xbpf_gate_set_conf(struct xbpf_gate *g, const struct xbpf_gate_conf *c)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(bpf_map__fd(g->skel->maps.gate_conf), &zero, c, BPF_ANY) ?
	       -errno : 0;
}

struct xbpf_keep {
	const unsigned char *keys;
	size_t ksize, n;
};

/* Deletes the keys not in the set. */
static bool xbpf_not_kept(void *arg, const void *key)
{
	const struct xbpf_keep *k = arg;
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!memcmp(k->keys + i * k->ksize, key, k->ksize))
			return false;
	return true;
}

/*
 * Makes hash map @fd hold exactly the @n keys of @keys (each @ksize bytes),
 * key i with value @vals + i * @vstride (@vstride 0: one value for all):
 * the new entries first, then the others go, so that a key in both sets is
 * never missing.
 */
static int xbpf_map_replace(int fd, const void *keys, size_t ksize, size_t n,
			    const void *vals, size_t vstride)
{
	struct xbpf_keep keep = { keys, ksize, n };
	const unsigned char *v = vals;
	size_t i;

	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, keep.keys + i * ksize, v + i * vstride, BPF_ANY))
			return -errno;
	xbpf_map_walk(fd, ksize, xbpf_not_kept, &keep);
	return 0;
}

int xbpf_gate_set_devices(struct xbpf_gate *g, const uint64_t *keys, size_t n)
{
	uint32_t one = 1;

	return xbpf_map_replace(bpf_map__fd(g->skel->maps.gate_devs), keys, sizeof(*keys), n,
				&one, 0);
}

int xbpf_gate_set_cgroups(struct xbpf_gate *g, const uint64_t *ids, const uint32_t *kinds,
			  size_t n)
{
	return xbpf_map_replace(bpf_map__fd(g->skel->maps.gate_cgroups), ids, sizeof(*ids), n,
				kinds, sizeof(*kinds));
}

int xbpf_gate_set_exes(struct xbpf_gate *g, const struct xbpf_gate_exe *exes, size_t n)
{
	uint32_t one = 1;

	return xbpf_map_replace(bpf_map__fd(g->skel->maps.gate_exes), exes, sizeof(*exes), n,
				&one, 0);
}

int xbpf_gate_allow(struct xbpf_gate *g, uint32_t tgid, uint64_t ticks)
{
	return bpf_map_update_elem(bpf_map__fd(g->skel->maps.gate_allowed), &tgid, &ticks,
				   BPF_ANY) ? -errno : 0;
}

bool xbpf_gate_allowed(const struct xbpf_gate *g, uint32_t tgid, uint64_t ticks)
{
	uint64_t v;

	return !bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.gate_allowed), &tgid, &v) &&
	       v == ticks;
}

struct xbpf_sweep {
	int fd;
	bool (*alive)(uint32_t tgid, uint64_t ticks);
	size_t gone, kept;
};

static bool xbpf_sweep_one(void *arg, const void *key)
{
	struct xbpf_sweep *s = arg;
	uint64_t ticks;

	if (!bpf_map_lookup_elem(s->fd, key, &ticks) && !s->alive(*(const uint32_t *)key, ticks)) {
		s->gone++;
		return true;
	}
	s->kept++;
	return false;
}

size_t xbpf_gate_sweep(struct xbpf_gate *g, bool (*alive)(uint32_t tgid, uint64_t ticks),
		       size_t *left)
{
	struct xbpf_sweep s = { .fd = bpf_map__fd(g->skel->maps.gate_allowed), .alive = alive };

	xbpf_map_walk(s.fd, sizeof(uint32_t), xbpf_sweep_one, &s);
	if (left)
		*left = s.kept;
	return s.gone;
}

struct xbpf_counts {
	int fd;
	xbpf_gate_count_fn fn;
	void *arg;
};

static bool xbpf_count_one(void *arg, const void *key)
{
	struct xbpf_counts *c = arg;
	struct xbpf_gate_count n;

	if (!bpf_map_lookup_elem(c->fd, key, &n))
		c->fn(c->arg, key, &n);
	return false;
}

int xbpf_gate_counts(const struct xbpf_gate *g, xbpf_gate_count_fn fn, void *arg)
{
	struct xbpf_counts c = { bpf_map__fd(g->skel->maps.gate_counts), fn, arg };

	xbpf_map_walk(c.fd, sizeof(struct xbpf_gate_who), xbpf_count_one, &c);
	return 0;
}

void xbpf_gate_close(struct xbpf_gate *g)
{
	if (!g)
		return;
	ring_buffer__free(g->rb);
	/* A pinned link stays attached: only our descriptor goes. */
	bpf_link__destroy(g->open_link);
	bpf_link__destroy(g->exec_link);
	bpf_link__destroy(g->exit_link);
	gate_bpf__destroy(g->skel);
	free(g);
}

int xbpf_gate_remove(const char *pin_dir)
{
	DIR *dir = opendir(pin_dir);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		char path[512];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		if (unlink(path) == 0)
			n++;
	}
	closedir(dir);
	rmdir(pin_dir);
	return n;
}
