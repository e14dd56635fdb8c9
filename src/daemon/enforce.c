/*
 * Device enforcement (enforce.h): the daemon's side of the device gate.
 *
 * What the gate guards: the NVIDIA driver's character devices (major 195,
 * and every major /proc/devices names nvidia*), the DRM render nodes (226,
 * minors 128-255), /dev/accel (261, and the "accel" major), /dev/kfd (the
 * "kfd" major), plus [enforce] extra_devices. /proc/devices is read at
 * each apply (start, reload).
 *
 * Who must be scheduled: processes in one of [enforce] cgroups (with their
 * descendants), or of one of [enforce] uids; with neither set, every
 * process. Exempt: the daemon, real uid 0 when exempt_root (the default,
 * so that the node's administrators and root services are never locked
 * out), [enforce] exempt_executables, and the processes of exempt_cgroups
 * (the deepest cgroup listed decides). A configured cgroup that does not
 * exist yet is looked for again every two seconds (kubepods or a Slurm job
 * cgroup made after the daemon started).
 *
 * Registration: a process is allowed by thread group id and start time in
 * clock ticks (field 22 of /proc/PID/stat), read when it registers and
 * checked against its pidfd, so a process that ended and whose pid was
 * reused is never allowed in its place. The gate's own programs forget a
 * process when it executes another program or ends.
 *
 * Failure: the gate's maps and the exec/exit programs are pinned in
 * [enforce] pin_path (bpffs), so a restarted daemon finds the allowed set
 * as it was. With fail = open the gate's link is the daemon's descriptor:
 * a dead daemon refuses nothing, and a hung one neither once it has missed
 * three beats (the time it writes into the gate's configuration every
 * ENF_SWEEP_NS). With fail = closed it is pinned too and
 * keeps refusing unregistered processes until a daemon is back (the shims
 * then find no daemon and do not register). devices = off removes it all.
 *
 * The refused processes are kept in a table like the bypass detector's
 * (bounded by [observe] bypass_max, exited ones dropped every two
 * seconds), logged once each, merged into `xschedctl bypass`, and counted
 * per uid and command by the programs (metrics).
 */
#include "daemon/enforce.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/peer.h"
#include "daemon/prom.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "bpf/xbpf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define ENF_SWEEP_NS (2 * NSEC_PER_SEC)
/* fail = open: the gate opens once the daemon has not beaten (every
 * ENF_SWEEP_NS, on its timer) for this long: three beats missed. */
#define ENF_SILENT_NS (3 * ENF_SWEEP_NS)
#define ENF_MAX_DEVS 512
#define ENF_MAX_CGROUPS 128
#define ENF_MAX_EXES 128
#define ENF_BPF_FS_MAGIC 0xcafe4a11

/* Fixed device numbers (Documentation/admin-guide/devices.txt). */
#define ENF_NVIDIA_MAJOR 195
#define ENF_DRM_MAJOR 226
#define ENF_ACCEL_MAJOR 261

struct enf_devs {
	uint64_t key[ENF_MAX_DEVS];
	size_t n;
};

struct enf_exes {
	struct xbpf_gate_exe exe[ENF_MAX_EXES];
	size_t n;
};

struct enf_proc {
	int32_t pid;
	uint32_t uid;
	uint64_t start_ns;                 /* CLOCK_BOOTTIME */
	uint64_t cgroup_id;
	uint64_t seen_ns;                  /* daemon clock */
	uint32_t state;                    /* IPC_BYPASS_DENIED, _AUDIT or _HELD */
	char comm[16];
	char what[48];                     /* "nvidia0 (195:0)" */
	char cgroup[128];
};

struct xsd_enforce {
	struct xbpf_gate *g;               /* NULL: not loaded */
	struct xsd_watch rb;               /* the gate's ring buffer (libbpf's descriptor) */
	struct xsd_watch timer;
	uint32_t mode;                     /* as applied: enum xsd_enforce_mode */
	bool closed;                       /* the gate's link pinned */
	char pin[sizeof(((struct xsd_config *)0)->enforce_pin_path)]; /* as loaded; "": none */
	char flag[sizeof(((struct xsd_config *)0)->socket) + 8];     /* "": not written */
	char cgroot[PATH_MAX];             /* the cgroup v2 mount */
	bool cg_missing;                   /* a configured cgroup is not there (yet) */
	struct xbpf_gate_conf conf;        /* as last written (the beat rewrites it) */
	struct enf_devs devs;              /* as last written */
	struct enf_exes exes;
	uint64_t ns_per_tick;
	int rc;                            /* why not loaded: 0 or -errno */
	char why[512];
	struct enf_proc *proc;
	size_t n, max;
	uint64_t dropped;                  /* processes not tracked: table full */
	struct xsd_ratelimit full_warn;
};

/* --- identities ---------------------------------------------------------------- */

/* Start time of @pid in clock ticks (/proc/PID/stat field 22); 0: unknown. */
static uint64_t enf_start_ticks(int32_t pid)
{
	char path[64], buf[1024];
	unsigned long long ticks = 0;
	const char *p;
	ssize_t len;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	/* The command may hold spaces and parentheses: fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field != 22 || sscanf(p, "%llu", &ticks) != 1)
		return 0;
	return ticks;
}

/* Whether the allowed process @tgid started at @ticks is still there. */
static bool enf_alive(uint32_t tgid, uint64_t ticks)
{
	return enf_start_ticks((int32_t)tgid) == ticks;
}

/* The cgroup v2 mount point (the first in /proc/self/mountinfo), or false. */
static bool enf_cgroup_root(char *out, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep, " - cgroup2 ", 11))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(out, len, "%s", mnt);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* The inode numbers of the kernel's initial namespaces (linux/proc_ns.h). */
#define ENF_PID_INIT_INO 0xeffffffcu
#define ENF_CGROUP_INIT_INO 0xeffffffbu

/*
 * Whether the daemon is in the kernel's initial namespace of kind @ns
 * ("pid", "cgroup"): the gate sees pids and cgroups as that one does,
 * whatever the daemon's /proc shows. True when it cannot be read.
 */
static bool enf_initial_ns(const char *ns, unsigned long init_ino)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	return stat(path, &st) < 0 || st.st_ino == init_ino;
}

/* --- what the gate is told ------------------------------------------------------ */

/* @dev in the kernel's encoding (an inode's i_sb->s_dev, what the gate reads). */
static uint64_t enf_kdev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

/* Whether the gate outlives the daemon: fail = closed, and refusing. */
static bool enf_closed(const struct xsd_config *cfg)
{
	return cfg->enforce_fail_closed && cfg->enforce_mode == XSD_ENFORCE_ON;
}

static void enf_dev_add(struct enf_devs *s, uint32_t major, uint32_t minor)
{
	uint64_t k = XBPF_GATE_DEV(major, minor);
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->key[i] == k)
			return;
	if (s->n < ENF_MAX_DEVS)
		s->key[s->n++] = k;
}

static void enf_extra_device(void *arg, const char *item)
{
	struct enf_devs *s = arg;
	unsigned major, minor;
	struct stat st;

	if (item[0] == '/') {
		if (stat(item, &st) < 0)
			xsd_warn("[enforce] extra_devices: %s: %s; not gated", item, strerror(errno));
		else if (!S_ISCHR(st.st_mode))
			xsd_warn("[enforce] extra_devices: %s is not a character device; not gated",
				 item);
		else
			enf_dev_add(s, major(st.st_rdev), minor(st.st_rdev));
	} else if (sscanf(item, "%u:%u", &major, &minor) == 2) {
		enf_dev_add(s, major, minor);
	} else if (sscanf(item, "%u:", &major) == 1) {
		enf_dev_add(s, major, XBPF_GATE_ANY_MINOR);   /* "MAJOR:*" */
	}
}

/* The device numbers to gate: the accelerators' and the configured ones. */
static void enf_devices(const struct xsd_config *cfg, struct enf_devs *s)
{
	char line[256];
	bool chr = false;
	FILE *f;
	unsigned m;

	s->n = 0;
	enf_dev_add(s, ENF_NVIDIA_MAJOR, XBPF_GATE_ANY_MINOR);
	for (m = 128; m < 256; m++)
		enf_dev_add(s, ENF_DRM_MAJOR, m);
	enf_dev_add(s, ENF_ACCEL_MAJOR, XBPF_GATE_ANY_MINOR);
	f = fopen("/proc/devices", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned major;

		if (!strncmp(line, "Character", 9))
			chr = true;
		else if (!strncmp(line, "Block", 5))
			chr = false;
		else if (chr && sscanf(line, "%u %63s", &major, name) == 2 &&
			 (!strncmp(name, "nvidia", 6) || !strcmp(name, "kfd") ||
			  !strcmp(name, "accel")))
			enf_dev_add(s, major, XBPF_GATE_ANY_MINOR);
	}
	if (f)
		fclose(f);
	xsd_config_items(cfg->enforce_extra_devices, enf_extra_device, s);
}

struct enf_cgroups {
	const char *root;
	uint64_t id[ENF_MAX_CGROUPS];
	uint32_t kind[ENF_MAX_CGROUPS];
	size_t n;
	uint32_t adding;                   /* the kind of the list being read */
	bool missing;
};

static void enf_cgroup_add(void *arg, const char *item)
{
	struct enf_cgroups *s = arg;
	char path[PATH_MAX * 2];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", s->root, item);
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		s->missing = true;
		return;
	}
	if (s->n < ENF_MAX_CGROUPS) {
		/* A cgroup v2 directory's inode number is the kernel's cgroup id. */
		s->id[s->n] = st.st_ino;
		s->kind[s->n++] = s->adding;
	}
}

static void enf_cgroups(const struct xsd_config *cfg, const char *root, struct enf_cgroups *s)
{
	memset(s, 0, sizeof(*s));
	s->root = root;
	s->adding = XBPF_GATE_CG_SCOPE;
	xsd_config_items(cfg->enforce_cgroups, enf_cgroup_add, s);
	s->adding = XBPF_GATE_CG_EXEMPT;
	xsd_config_items(cfg->enforce_exempt_cgroups, enf_cgroup_add, s);
}

static void enf_exe_add(void *arg, const char *item)
{
	struct enf_exes *s = arg;
	struct stat st;

	if (stat(item, &st) < 0) {
		xsd_warn("[enforce] exempt_executables: %s: %s; not exempt", item, strerror(errno));
		return;
	}
	if (s->n < ENF_MAX_EXES) {
		s->exe[s->n].dev = enf_kdev(st.st_dev);
		s->exe[s->n++].ino = st.st_ino;
	}
}

static void enf_uid_add(void *arg, const char *item)
{
	struct xbpf_gate_conf *c = arg;
	unsigned lo, hi;
	int n = sscanf(item, "%u-%u", &lo, &hi);

	if (n < 1 || c->nuid == XBPF_GATE_UID_RANGES)
		return;
	c->uid_lo[c->nuid] = lo;
	c->uid_hi[c->nuid++] = n == 2 ? hi : lo;
}

/* Writes the sets and then the configuration (its mode last). */
static int enf_configure(struct xsd *d, bool quiet)
{
	struct xsd_enforce *e = d->enf;
	const struct xsd_config *cfg = &d->cfg;
	struct enf_devs *devs = &e->devs;
	struct enf_exes *exes = &e->exes;
	struct xbpf_gate_conf conf;
	struct enf_cgroups cgs;
	int rc;

	enf_devices(cfg, devs);
	enf_cgroups(cfg, e->cgroot, &cgs);
	exes->n = 0;
	xsd_config_items(cfg->enforce_exempt_executables, enf_exe_add, exes);
	if (cgs.missing && !e->cg_missing)
		xsd_warn("[enforce]: a configured cgroup is not in %s (yet); looking for it "
			 "every 2 s", e->cgroot);
	e->cg_missing = cgs.missing;
	memset(&conf, 0, sizeof(conf));
	conf.mode = cfg->enforce_mode == XSD_ENFORCE_ON ? XBPF_GATE_ON : XBPF_GATE_AUDIT;
	conf.daemon_tgid = (uint32_t)getpid();
	conf.ns_per_tick = e->ns_per_tick;
	conf.exempt_root = cfg->enforce_exempt_root;
	conf.scope_all = !cfg->enforce_cgroups[0] && !cfg->enforce_uids[0];
	conf.has_cgroups = cgs.n > 0;
	xsd_config_items(cfg->enforce_uids, enf_uid_add, &conf);
	conf.alive_ns = clock_now_ns();
	conf.silent_ns = enf_closed(cfg) ? 0 : ENF_SILENT_NS;
	e->conf = conf;
	rc = xbpf_gate_set_devices(e->g, devs->key, devs->n);
	if (!rc)
		rc = xbpf_gate_set_cgroups(e->g, cgs.id, cgs.kind, cgs.n);
	if (!rc)
		rc = xbpf_gate_set_exes(e->g, exes->exe, exes->n);
	if (!rc)
		rc = xbpf_gate_set_conf(e->g, &conf);
	if (rc < 0)
		xsd_err("device enforcement: cannot configure the gate: %s", strerror(-rc));
	else if (!quiet)
		xsd_info("device enforcement %s (%s): %zu device numbers, scope%s%s%s%s%s, "
			 "%zu cgroups found, %zu exempt executables, root %s, fail = %s",
			 xsd_enforce_modes[cfg->enforce_mode], xbpf_gate_hook(e->g), devs->n,
			 conf.scope_all ? " every process" : "",
			 cfg->enforce_cgroups[0] ? " cgroups " : "", cfg->enforce_cgroups,
			 cfg->enforce_uids[0] ? " uids " : "", cfg->enforce_uids, cgs.n, exes->n,
			 conf.exempt_root ? "exempt" : "in scope",
			 cfg->enforce_fail_closed ? "closed" : "open");
	return rc;
}

/* --- the table of refused processes ------------------------------------------- */

static struct enf_proc *enf_find(const struct xsd_enforce *e, int32_t pid, uint64_t start_ns)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (e->proc[i].pid == pid && (!start_ns || e->proc[i].start_ns == start_ns))
			return &e->proc[i];
	return NULL;
}

static struct enf_proc *enf_add(struct xsd_enforce *e, int32_t pid)
{
	uint64_t missed;
	struct enf_proc *p;

	if (e->n == e->max) {
		e->dropped++;
		if (xsd_ratelimit_ok(&e->full_warn, clock_now_ns(), &missed))
			xsd_warn("device enforcement: the table is full ([observe] bypass_max = "
				 "%zu): pid %d not listed (%llu more since the last message)", e->max,
				 (int)pid, (unsigned long long)missed);
		return NULL;
	}
	p = &e->proc[e->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->seen_ns = clock_now_ns();
	return p;
}

/* One event of the gate (xbpf_gate_fn); @arg is the daemon. */
static void enf_event(void *arg, const struct xbpf_gate_event *ev)
{
	struct xsd *d = arg;
	struct xsd_enforce *e = d->enf;
	char comm[sizeof(ev->comm) * 4], cg[512], name[sizeof(ev->name) * 4];
	struct enf_proc *p = enf_find(e, (int32_t)ev->pid, 0);

	if (p && p->start_ns != ev->start_ns) {
		*p = e->proc[--e->n];      /* a reused pid; the old one's exit was missed */
		p = NULL;
	}
	if (!p)
		p = enf_add(e, (int32_t)ev->pid);
	if (!p)
		return;
	p->uid = ev->uid;
	p->start_ns = ev->start_ns;
	p->cgroup_id = ev->cgroup_id;
	p->state = ev->mode == XBPF_GATE_ON ? IPC_BYPASS_DENIED : IPC_BYPASS_AUDIT;
	memcpy(p->comm, ev->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	xsd_printable(name, sizeof(name), ev->name, sizeof(ev->name));
	snprintf(p->what, sizeof(p->what), "%.24s%s%u:%u%s", name, name[0] ? " (" : "", ev->major,
		 ev->minor, name[0] ? ")" : "");
	xsd_peer_cgroup(p->pid, p->cgroup, sizeof(p->cgroup));
	xsd_info("device enforcement: %s pid %d (%s, uid %u, cgroup %s) opening %s: not "
		 "registered with xschedd", ev->mode == XBPF_GATE_ON ? "refused" :
		 "(audit) would refuse", (int)p->pid,
		 xsd_printable(comm, sizeof(comm), p->comm, sizeof(p->comm)), (unsigned)p->uid,
		 p->cgroup[0] ? xsd_printable(cg, sizeof(cg), p->cgroup, sizeof(p->cgroup)) : "?",
		 p->what);
}

static void enf_on_ring(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	(void)w;
	(void)events;
	xbpf_gate_poll(d->enf->g);
}

/* Every two seconds: the beat, the exited go, and cgroups not there before are looked for. */
static void enf_on_timer(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct xsd_enforce *e = d->enf;
	uint64_t v;
	size_t i = 0;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	/* The beat: under fail = open the gate stays only while it comes. */
	e->conf.alive_ns = clock_now_ns();
	if (e->g && e->conf.ns_per_tick)
		xbpf_gate_set_conf(e->g, &e->conf);
	while (i < e->n) {
		if (kill(e->proc[i].pid, 0) < 0 && errno == ESRCH)
			e->proc[i] = e->proc[--e->n];
		else
			i++;
	}
	if (e->cg_missing && e->g) {
		struct enf_cgroups cgs;

		enf_cgroups(&d->cfg, e->cgroot, &cgs);
		if (!cgs.missing) {
			xsd_info("device enforcement: every configured cgroup is there now");
			enf_configure(d, true);
		}
	}
}

/* @path is @prefix or below it (cgroup paths). */
static bool enf_under(const char *path, const char *prefix, size_t n)
{
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/' ||
					    (n == 1 && prefix[0] == '/'));
}

struct enf_deepest {
	const char *path;                  /* the process's cgroup */
	size_t len;                        /* of the deepest listed cgroup it is in */
	uint32_t kind, adding;
};

static void enf_deepest_item(void *arg, const char *item)
{
	struct enf_deepest *s = arg;
	size_t n = strlen(item);

	while (n > 1 && item[n - 1] == '/')
		n--;
	if (enf_under(s->path, item, n) && n >= s->len) {
		s->len = n;
		s->kind = s->adding;
	}
}

/* The real uid of @pid (the "Uid:" line's first field), or -1. */
static int64_t enf_real_uid(int32_t pid)
{
	char path[64], line[256];
	int64_t uid = -1;
	unsigned u;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u", &u) == 1)
			uid = u;
	if (f)
		fclose(f);
	return uid;
}

/*
 * Whether the gate would refuse process @pid of real uid @uid, as
 * gate.bpf.c decides (gate_in_scope) with what enf_configure() wrote: its
 * cgroup (the deepest listed decides), root, its executable, the scope.
 */
static bool enf_in_scope(const struct xsd *d, int32_t pid, uint32_t uid)
{
	const struct xsd_enforce *e = d->enf;
	const struct xbpf_gate_conf *c = &e->conf;
	struct enf_deepest cg = { 0 };
	char path[64], cgpath[PATH_MAX];
	struct stat exe;
	uint32_t i;

	xsd_peer_cgroup(pid, cgpath, sizeof(cgpath));
	cg.path = cgpath;
	if (cgpath[0]) {
		cg.adding = XBPF_GATE_CG_SCOPE;
		xsd_config_items(d->cfg.enforce_cgroups, enf_deepest_item, &cg);
		cg.adding = XBPF_GATE_CG_EXEMPT;
		xsd_config_items(d->cfg.enforce_exempt_cgroups, enf_deepest_item, &cg);
	}
	if (cg.kind == XBPF_GATE_CG_EXEMPT || (c->exempt_root && uid == 0))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &exe) < 0)
		return false;              /* a kernel thread, or gone */
	for (i = 0; i < e->exes.n; i++)
		if (e->exes.exe[i].ino == exe.st_ino &&
		    e->exes.exe[i].dev == enf_kdev(exe.st_dev))
			return false;
	if (c->scope_all || cg.kind == XBPF_GATE_CG_SCOPE)
		return true;
	for (i = 0; i < c->nuid; i++)
		if (uid >= c->uid_lo[i] && uid <= c->uid_hi[i])
			return true;
	return false;
}

/* The first gated device @pid holds open, in @what; false if none. */
static bool enf_holds(int32_t pid, const struct enf_devs *devs, char *what, size_t len)
{
	char fdpath[64];
	struct dirent *fe;
	bool gated = false;
	DIR *fds;

	snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd", (int)pid);
	fds = opendir(fdpath);
	while (fds && !gated && (fe = readdir(fds))) {
		struct stat ds;
		uint64_t k1, k2;
		size_t i;

		if (fe->d_name[0] == '.' || fstatat(dirfd(fds), fe->d_name, &ds, 0) < 0 ||
		    !S_ISCHR(ds.st_mode))
			continue;
		k1 = XBPF_GATE_DEV(major(ds.st_rdev), minor(ds.st_rdev));
		k2 = XBPF_GATE_DEV(major(ds.st_rdev), XBPF_GATE_ANY_MINOR);
		for (i = 0; i < devs->n && !gated; i++)
			gated = devs->key[i] == k1 || devs->key[i] == k2;
		if (gated)
			snprintf(what, len, "%u:%u", major(ds.st_rdev), minor(ds.st_rdev));
	}
	if (fds)
		closedir(fds);
	return gated;
}

/*
 * The processes that hold a gated device when the gate starts, unregistered
 * and such that the gate would refuse them now: listed (IPC_BYPASS_HELD)
 * and warned about, not stopped.
 */
static void enf_scan_holders(struct xsd *d)
{
	struct xsd_enforce *e = d->enf;
	DIR *proc = opendir("/proc");
	struct dirent *de;

	while (proc && (de = readdir(proc))) {
		int32_t pid = (int32_t)strtol(de->d_name, NULL, 10);
		char what[sizeof(e->proc[0].what)], path[64];
		struct enf_proc *p;
		uint64_t ticks;
		int64_t uid;
		FILE *f;

		if (pid <= 0 || pid == getpid() || enf_find(e, pid, 0))
			continue;
		uid = enf_real_uid(pid);
		ticks = enf_start_ticks(pid);
		if (uid < 0 || !ticks || xbpf_gate_allowed(e->g, (uint32_t)pid, ticks) ||
		    !enf_in_scope(d, pid, (uint32_t)uid) ||
		    !enf_holds(pid, &e->devs, what, sizeof(what)) || !(p = enf_add(e, pid)))
			continue;
		p->uid = (uint32_t)uid;
		p->state = IPC_BYPASS_HELD;
		p->start_ns = ticks * e->ns_per_tick;
		memcpy(p->what, what, sizeof(p->what));
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		f = fopen(path, "re");
		if (f && fgets(p->comm, sizeof(p->comm), f))
			p->comm[strcspn(p->comm, "\n")] = '\0';
		if (f)
			fclose(f);
		xsd_peer_cgroup(pid, p->cgroup, sizeof(p->cgroup));
		xsd_warn("device enforcement: pid %d (%s, uid %u) held device %s before the gate "
			 "started and has not registered: listed, not stopped", (int)pid, p->comm,
			 (unsigned)p->uid, p->what);
	}
	if (proc)
		closedir(proc);
}

/* --- start, stop ------------------------------------------------------------------- */

static void enf_flag(struct xsd *d, bool on)
{
	struct xsd_enforce *e = d->enf;
	char tmp[sizeof(e->flag) + 8];
	int fd;

	if (!on) {
		if (e->flag[0])
			unlink(e->flag);
		e->flag[0] = '\0';
		return;
	}
	snprintf(e->flag, sizeof(e->flag), "%s.enforce", d->cfg.socket);
	snprintf(tmp, sizeof(tmp), "%s.tmp", e->flag);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dprintf(fd, "%s\n", xsd_enforce_modes[d->cfg.enforce_mode]);
		fchmod(fd, 0644);
		close(fd);
	}
	if (fd < 0 || rename(tmp, e->flag) < 0)
		xsd_err("device enforcement: cannot write %s: %s (the shims will not register "
			"before main)", e->flag, strerror(errno));
}

static void enf_unload(struct xsd *d, bool remove_pins)
{
	struct xsd_enforce *e = d->enf;

	if (e->rb.fd >= 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, e->rb.fd, NULL);
	e->rb.fd = -1;
	xsd_watch_del(d, &e->timer);
	/* Unpinned first: closing our descriptor then detaches the gate. */
	if (remove_pins && e->pin[0])
		xbpf_gate_remove(e->pin);
	xbpf_gate_close(e->g);
	e->g = NULL;
	e->pin[0] = '\0';
	free(e->proc);
	e->proc = NULL;
	e->n = 0;
}

/* Loads the gate; on failure logs why (unless it did already). */
static int enf_load(struct xsd *d)
{
	struct xsd_enforce *e = d->enf;
	const struct xsd_config *cfg = &d->cfg;
	bool closed = enf_closed(cfg);
	char err[sizeof(e->why)], parent[sizeof(cfg->enforce_pin_path)], *slash;
	const char *pin = cfg->enforce_pin_path;
	struct statfs fs;
	size_t left, gone;
	int rc;

	snprintf(parent, sizeof(parent), "%s", pin);
	slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = '\0';
	if (!enf_initial_ns("pid", ENF_PID_INIT_INO)) {
		rc = -EINVAL;
		snprintf(err, sizeof(err), "xschedd runs in a pid namespace of its own: the gate "
			 "needs the node's pids (hostPID: true, or no --pid namespace)");
		goto out;
	}
	if (!enf_initial_ns("cgroup", ENF_CGROUP_INIT_INO)) {
		rc = -EINVAL;
		snprintf(err, sizeof(err), "xschedd runs in a cgroup namespace of its own: the gate "
			 "needs the node's cgroups (a privileged container, or --cgroupns=host)");
		goto out;
	}
	if (!enf_cgroup_root(e->cgroot, sizeof(e->cgroot))) {
		rc = -ENOENT;
		snprintf(err, sizeof(err), "no cgroup v2 file system is mounted");
		goto out;
	}
	if (statfs(parent, &fs) < 0 || (uint32_t)fs.f_type != ENF_BPF_FS_MAGIC) {
		if (closed) {
			rc = -ENOTDIR;
			snprintf(err, sizeof(err), "fail = closed needs %s on a bpffs (mount -t bpf "
				 "bpf %s)", parent, parent);
			goto out;
		}
		xsd_warn("device enforcement: %s is not a bpffs: nothing pinned, so "
			 "registrations do not outlive this daemon", parent);
		pin = "";
	}
	e->max = cfg->bypass_max;
	e->proc = calloc(e->max, sizeof(*e->proc));
	if (!e->proc) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	xbpf_set_log(xsd_libbpf_log, 0);
	rc = xbpf_gate_open(pin, closed, e->cgroot, enf_event, d, &e->g, err, sizeof(err));
	if (rc < 0)
		goto out;
	snprintf(e->pin, sizeof(e->pin), "%s", pin);
	e->closed = closed;
	if (xbpf_gate_lsm_error(e->g))
		xsd_info("device enforcement: the BPF LSM hook is not available (%s: the kernel "
			 "attaches no LSM program without BPF trampolines, or bpf is not in "
			 "/sys/kernel/security/lsm); the gate is the cgroup v2 device hook on %s",
			 strerror(-xbpf_gate_lsm_error(e->g)), e->cgroot);
	rc = xsd_watch_ring_timer(d, &e->rb, xbpf_gate_fd(e->g), enf_on_ring, &e->timer,
				  enf_on_timer);
	if (rc < 0) {
		snprintf(err, sizeof(err), "event loop: %s", strerror(-rc));
		goto out;
	}
	xsd_watch_every(&e->timer, ENF_SWEEP_NS);
	gone = xbpf_gate_sweep(e->g, enf_alive, &left);
	if (pin[0])
		xsd_info("device enforcement: allowed set in %s: %zu processes kept, %zu gone "
			 "since", pin, left, gone);
out:
	if (rc < 0) {
		if (rc != e->rc || strcmp(err, e->why))
			xsd_err("device enforcement (%s) unavailable: %s; scheduling without it",
				xsd_enforce_modes[cfg->enforce_mode], err);
		snprintf(e->why, sizeof(e->why), "%s", err);
		enf_unload(d, false);
	} else {
		e->why[0] = '\0';
	}
	e->rc = rc;
	return rc;
}

int xsd_enforce_apply(struct xsd *d)
{
	struct xsd_enforce *e = d->enf;
	const struct xsd_config *cfg = &d->cfg;
	bool fresh;

	if (!e) {
		struct stat st;

		if (cfg->enforce_mode == XSD_ENFORCE_OFF) {
			char flag[sizeof(cfg->socket) + 8];

			/* A gate an earlier daemon left pinned (fail = closed) goes now,
			 * and the file that told the shims to register. */
			if (stat(cfg->enforce_pin_path, &st) == 0 &&
			    xbpf_gate_remove(cfg->enforce_pin_path) > 0)
				xsd_info("device enforcement off: removed the gate pinned in %s",
					 cfg->enforce_pin_path);
			snprintf(flag, sizeof(flag), "%s.enforce", cfg->socket);
			unlink(flag);
			return 0;
		}
		e = d->enf = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->rb.fd = e->timer.fd = -1;
		e->full_warn.interval_ns = 600 * NSEC_PER_SEC;
		e->ns_per_tick = NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK);
	}
	if (cfg->enforce_mode == XSD_ENFORCE_OFF) {
		if (e->g)
			xsd_info("device enforcement off: the gate is removed");
		enf_flag(d, false);
		enf_unload(d, true);
		xbpf_gate_remove(cfg->enforce_pin_path);
		e->mode = XSD_ENFORCE_OFF;
		e->rc = 0;
		e->why[0] = '\0';
		return 0;
	}
	if (e->g && strcmp(e->pin, cfg->enforce_pin_path) && e->pin[0]) {
		xsd_info("device enforcement: pin_path changed: the gate moves to %s",
			 cfg->enforce_pin_path);
		enf_unload(d, true);
	}
	fresh = !e->g;
	if (fresh && enf_load(d) < 0) {
		enf_flag(d, false);
		e->mode = cfg->enforce_mode;
		return 0;
	}
	e->mode = cfg->enforce_mode;
	/* The shims are told to register before the gate refuses anyone. */
	enf_flag(d, true);
	if (enf_configure(d, false) == 0) {
		bool closed = enf_closed(cfg);
		int rc = xbpf_gate_set_pinned(e->g, closed && e->pin[0]);

		if (rc < 0)
			xsd_err("device enforcement: cannot %s the gate: %s", closed ? "pin" : "unpin",
				strerror(-rc));
		else
			e->closed = closed;
		/* Processes that held a device before this gate: listed, as it decides. */
		if (fresh)
			enf_scan_holders(d);
	}
	return 0;
}

void xsd_enforce_stop(struct xsd *d)
{
	struct xsd_enforce *e = d->enf;

	if (!e)
		return;
	/* Closed: the file stays with the gate, and the shims keep trying. */
	if (!e->closed)
		enf_flag(d, false);
	if (e->g)
		xsd_info("device enforcement: %s", e->closed ? "the gate stays (fail = closed)" :
			 "the gate goes with the daemon (fail = open)");
	enf_unload(d, false);
	free(e);
	d->enf = NULL;
}

/*
 * Whether @pid has a library of xsched mapped (a shim or libxsched): a
 * process registers through the shim's constructor or its agent, and one
 * that only connects to the socket (a script, a program without the
 * preload) is not let through.
 */
static bool enf_has_xsched(int32_t pid)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		line[strcspn(line, "\n")] = '\0';
		base = strrchr(file, '/') + 1;
		found = !strncmp(base, "libxsched", 9);
	}
	if (f)
		fclose(f);
	return found;
}

int xsd_enforce_register(struct xsd *d, const struct xsd_client *c)
{
	struct xsd_enforce *e = d->enf;
	struct pollfd pfd = { .fd = c->pidw.fd, .events = POLLIN };
	uint64_t ticks;

	if (!e || e->mode == XSD_ENFORCE_OFF)
		return -ENODEV;
	if (!e->g)
		return -ECANCELED;
	ticks = enf_start_ticks(c->pid);
	/* Read, then the pidfd says it is still the process that connected. */
	if (!ticks || c->pidw.fd < 0 || poll(&pfd, 1, 0) != 0)
		return -ESRCH;
	/* Registered before main already (an agent's HELLO, later): done. The
	 * maps are read only otherwise, when they are short. */
	if (xbpf_gate_allowed(e->g, (uint32_t)c->pid, ticks))
		return 0;
	if (!enf_has_xsched(c->pid)) {
		char comm[sizeof(c->comm) * 4];

		xsd_info("device enforcement: pid %d (%s, uid %u) asked to register without an "
			 "xsched library loaded: refused", (int)c->pid,
			 xsd_printable(comm, sizeof(comm), c->comm, sizeof(c->comm)),
			 (unsigned)c->uid);
		return -EPERM;
	}
	return xbpf_gate_allow(e->g, (uint32_t)c->pid, ticks);
}

bool xsd_enforce_running(const struct xsd *d)
{
	return d->enf && d->enf->g;
}

int xsd_enforce_error(const struct xsd *d)
{
	if (!d->enf || d->enf->mode == XSD_ENFORCE_OFF)
		return -ENODEV;
	return d->enf->g ? 0 : d->enf->rc;
}

void xsd_enforce_status(const struct xsd *d, struct ipc_status_reply *r)
{
	const struct xsd_enforce *e = d->enf;
	size_t i;

	r->enforce_mode = d->cfg.enforce_mode;
	r->enforce_closed = d->cfg.enforce_fail_closed;
	if (!e || e->mode == XSD_ENFORCE_OFF)
		return;
	r->enforce_status = e->g ? 0 : (e->rc ? e->rc : -ECANCELED);
	if (!e->g)
		return;
	snprintf(r->enforce_hook, sizeof(r->enforce_hook), "%s", xbpf_gate_hook(e->g));
	for (i = 0; i < e->n; i++)
		r->enforce_listed += e->proc[i].state != IPC_BYPASS_HELD;
}

/* --- listing, metrics ------------------------------------------------------------ */

struct enf_count_sum {
	const struct enf_proc *p;
	uint64_t n;
};

static void enf_sum_comm(void *arg, const struct xbpf_gate_who *who, const struct xbpf_gate_count *n)
{
	struct enf_count_sum *s = arg;

	if (who->uid == s->p->uid && !strncmp(who->comm, s->p->comm, sizeof(who->comm)))
		s->n += n->denied + n->audited;
}

/* The refusals counted for @p's uid and command (the programs count by both). */
static uint64_t enf_denied(const struct xsd_enforce *e, const struct enf_proc *p)
{
	struct enf_count_sum s = { .p = p };

	if (p->state == IPC_BYPASS_HELD)
		return 0;
	xbpf_gate_counts(e->g, enf_sum_comm, &s);
	return s.n;
}

bool xsd_enforce_find(const struct xsd *d, int32_t pid, uint64_t start_ns, uint32_t *state,
		      uint64_t *denied)
{
	const struct xsd_enforce *e = d->enf;
	const struct enf_proc *p;

	if (!e || !e->g || !(p = enf_find(e, pid, start_ns)))
		return false;
	*state = p->state;
	*denied = enf_denied(e, p);
	return true;
}

void xsd_enforce_each(const struct xsd *d, const struct xsd_client *reader,
		      void (*fn)(void *arg, const struct ipc_bypass_rec *r), void *arg)
{
	const struct xsd_enforce *e = d->enf;
	uint64_t now = clock_now_ns();
	size_t i;

	if (!e || !e->g)
		return;
	for (i = 0; i < e->n; i++) {
		const struct enf_proc *p = &e->proc[i];
		struct ipc_bypass_rec r;

		if (reader && !reader->privileged && p->uid != reader->uid)
			continue;
		memset(&r, 0, sizeof(r));
		r.pid = p->pid;
		r.uid = p->uid;
		r.start_ns = p->start_ns;
		r.age_ns = now - p->seen_ns;
		r.cgroup_id = p->cgroup_id;
		r.state = p->state;
		r.denied = enf_denied(e, p);
		memcpy(r.comm, p->comm, sizeof(r.comm));
		memcpy(r.what, p->what, sizeof(r.what));
		memcpy(r.cgroup, p->cgroup, sizeof(r.cgroup));
		fn(arg, &r);
	}
}

struct enf_metrics {
	struct xsd_text *t;
	const struct xsd_client *reader;
	bool audit;
};

static void enf_metric_line(void *arg, const struct xbpf_gate_who *who,
			    const struct xbpf_gate_count *n)
{
	struct enf_metrics *m = arg;
	char comm[sizeof(who->comm) + 1], label[64];
	uint64_t v = m->audit ? n->audited : n->denied;

	if (!v || (m->reader && !m->reader->privileged && who->uid != m->reader->uid))
		return;
	memcpy(comm, who->comm, sizeof(who->comm));
	comm[sizeof(who->comm)] = '\0';
	xsd_prom_label(label, sizeof(label), comm);
	xsd_text_printf(m->t, "xsched_enforce_%s_total{uid=\"%u\",comm=\"%s\"} %llu\n",
			m->audit ? "audited" : "denied", (unsigned)who->uid, label,
			(unsigned long long)v);
}

void xsd_enforce_metrics(struct xsd *d, const struct xsd_client *reader, struct xsd_text *t)
{
	const struct xsd_enforce *e = d->enf;
	struct enf_metrics m = { .t = t, .reader = reader };

	xsd_text_printf(t, "# HELP xsched_enforce_up 1 while the device gate is loaded "
			"([enforce] devices = audit or on).\n# TYPE xsched_enforce_up gauge\n");
	if (!e || e->mode == XSD_ENFORCE_OFF) {
		xsd_text_printf(t, "xsched_enforce_up{mode=\"off\",hook=\"\"} 0\n");
		return;
	}
	xsd_text_printf(t, "xsched_enforce_up{mode=\"%s\",hook=\"%s\"} %d\n", xsd_enforce_modes[e->mode],
			e->g ? xbpf_gate_hook(e->g) : "", e->g != NULL);
	if (!e->g)
		return;
	xsd_text_printf(t, "# HELP xsched_enforce_denied_total Opens of accelerator device "
			"nodes the gate refused, by uid and command.\n"
			"# TYPE xsched_enforce_denied_total counter\n");
	xbpf_gate_counts(e->g, enf_metric_line, &m);
	m.audit = true;
	xsd_text_printf(t, "# HELP xsched_enforce_audited_total Opens the gate would have "
			"refused (audit), by uid and command.\n"
			"# TYPE xsched_enforce_audited_total counter\n");
	xbpf_gate_counts(e->g, enf_metric_line, &m);
	xsd_text_printf(t, "# HELP xsched_enforce_untracked_total Refused processes not "
			"listed: the table was full, or the gate's events were lost.\n"
			"# TYPE xsched_enforce_untracked_total counter\n"
			"xsched_enforce_untracked_total %llu\n",
			(unsigned long long)(e->dropped + xbpf_gate_lost(e->g)));
}
