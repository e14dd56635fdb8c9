/*
 * The simulated device's file, process slots and liveness.
 *
 * The device is a file in a tmpfs directory, created under a temporary name,
 * fully initialised, then published with link(2): a device visible under its
 * name is always complete, and concurrent creators agree on one winner
 * without a lock. A process that dies attached is found by its peers (pid
 * plus start time, so a reused pid is not mistaken for it) and its slots are
 * reclaimed by compare-and-swap.
 *
 * A pid means nothing in another PID namespace (a container, unshare), so
 * each process also holds an open file description of the device file with
 * the byte at its context's index locked (an OFD lock, which the kernel
 * drops when the process dies, whatever its namespace): a peer in another
 * namespace asks whether that byte is still locked instead of reading
 * /proc. Peers in the same namespace keep to /proc, which also sees through
 * fork (a forked child shares the description, and with it the lock).
 * A reaper holds another byte for as long as it reaps (sim_ctx_reap()), so
 * a reap cut short by the reaper's own death is taken over, not lost.
 *
 * The device's memory is one capacity for the node, charged per process
 * slot (sim_dev_mem_charge()), so that the bytes of a process that dies
 * holding memory go back when its slot is reaped, as a real driver frees
 * a process's allocations when it exits.
 */
#include "sim/sim_internal.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/size.h"
#include "base/xlog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_dev *sim_devs;
static pthread_once_t sim_atfork_once = PTHREAD_ONCE_INIT;

static void sim_atfork_prepare(void)
{
	pthread_mutex_lock(&sim_lock);
}

static void sim_atfork_parent(void)
{
	pthread_mutex_unlock(&sim_lock);
}

/*
 * The child has no executor threads and must not act as its parent's
 * context: forget the inherited handles (their memory is leaked on purpose;
 * the parent still owns the slots) so the next open attaches afresh, and
 * let go of the parent's liveness locks.
 */
static void sim_atfork_child(void)
{
	struct sim_dev *dev;

	pthread_mutex_init(&sim_lock, NULL);
	/* The parent's liveness locks must die with the parent, not with us. */
	for (dev = sim_devs; dev; dev = dev->next)
		if (dev->lock_fd >= 0)
			close(dev->lock_fd);
	sim_devs = NULL;
}

static void sim_atfork_register(void)
{
	pthread_atfork(sim_atfork_prepare, sim_atfork_parent, sim_atfork_child);
}

const char *sim_dev_default_name(void)
{
	const char *name = getenv("XSCHED_SIM_DEVICE");

	return name && *name ? name : "xsched-sim0";
}

/* Says once that environment variable @name has a value it cannot take. */
static int sim_env_bad(const char *name, const char *value, const char *want)
{
	XLOG_ONCE(XLOG_ERROR, "%s=%s: not %s; the simulated device is not opened", name,
		  value, want);
	return -EINVAL;
}

int sim_dev_opts_from_env(struct sim_dev_opts *opts)
{
	struct sim_dev_opts o = { .arbitration = SIM_ARB_RR, .level_max = 3 };
	const char *v;

	v = getenv("XSCHED_SIM_ARBITRATION");
	if (v && *v) {
		if (!strcmp(v, "rr"))
			o.arbitration = SIM_ARB_RR;
		else if (!strcmp(v, "fcfs"))
			o.arbitration = SIM_ARB_FCFS;
		else
			return sim_env_bad("XSCHED_SIM_ARBITRATION", v, "rr or fcfs");
	}
	v = getenv("XSCHED_SIM_LEVEL");
	if (v && *v) {
		if (v[1] || v[0] < '1' || v[0] > '3')
			return sim_env_bad("XSCHED_SIM_LEVEL", v, "1, 2 or 3");
		o.level_max = (uint32_t)(v[0] - '0');
	}
	v = getenv("XSCHED_SIM_LV2");
	if (v && *v) {
		if (!strcmp(v, "stall"))
			o.lv2_flush = false;
		else if (!strcmp(v, "flush"))
			o.lv2_flush = true;
		else
			return sim_env_bad("XSCHED_SIM_LV2", v, "stall or flush");
	}
	/* Only the device's creator uses it, but every opener checks it, so
	 * a typo shows wherever it is made. */
	v = getenv("XSCHED_SIM_DEVICE_MEMORY");
	if (v && *v && (size_parse(v, &o.mem_capacity) < 0 || !o.mem_capacity))
		return sim_env_bad("XSCHED_SIM_DEVICE_MEMORY", v,
				   "a size above 0 such as 64M or 8GiB");
	*opts = o;
	return 0;
}

static bool sim_name_valid(const char *name)
{
	size_t n = 0;

	if (!name || !*name || name[0] == '.')
		return false;
	for (; name[n]; n++) {
		char c = name[n];

		if (n >= 64)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static int sim_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("XSCHED_SIM_DIR");
	int n;

	if (!dir || !*dir)
		dir = "/dev/shm";
	n = snprintf(buf, len, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Reads field 3 (state) and 22 (starttime) of /proc/<pid>/stat. */
static int sim_proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EIO;
	p += 2;
	*state = *p;
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &st) != 1)
		return -EIO;
	*start = st;
	return 0;
}

/* The inode of this process's PID namespace; 0 if /proc does not say. */
static uint64_t sim_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Whether byte @c of the device file is locked by another description. */
static bool sim_ctx_locked(const struct sim_dev *dev, uint32_t c)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)c, .l_len = 1,
	};

	if (dev->lock_fd < 0 || fcntl(dev->lock_fd, F_OFD_GETLK, &fl) < 0)
		return true;    /* cannot tell: never reap a peer that may live */
	return fl.l_type != F_UNLCK;
}

bool sim_ctx_alive(const struct sim_dev *dev, uint32_t c)
{
	const struct sim_shm_ctx *ctx = &dev->shm->ctx[c];
	char state;
	uint64_t start;

	if (ctx->pidns && dev->pidns && ctx->pidns != dev->pidns)
		return sim_ctx_locked(dev, c);
	if (sim_proc_stat(ctx->pid, &state, &start) < 0)
		return false;
	return state != 'Z' && state != 'X' && start == ctx->start_time;
}

/* Locks byte @c of the device file for this process (see file top). */
static void sim_ctx_lock(struct sim_dev *dev, const char *path, uint32_t c)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)c, .l_len = 1,
	};

	dev->lock_fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->lock_fd >= 0 && fcntl(dev->lock_fd, F_OFD_SETLK, &fl) < 0) {
		close(dev->lock_fd);
		dev->lock_fd = -1;
	}
}

/* Locks (@lock) or unlocks byte SIM_REAP_BYTE(@c): 0 or -errno (-EAGAIN,
 * -EACCES: another description holds it). */
static int sim_reap_byte(struct sim_dev *dev, uint32_t c, bool lock)
{
	struct flock fl = {
		.l_type = lock ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET,
		.l_start = (off_t)SIM_REAP_BYTE(c), .l_len = 1,
	};

	return fcntl(dev->lock_fd, F_OFD_SETLK, &fl) < 0 ? -errno : 0;
}

/*
 * Reaping takes the context's reap byte first (sim_abi.h), so one reaper
 * at a time frees its queues, whatever the processes; a reaper that dies
 * half way (killed while it reaps a dead peer, as its own start does)
 * leaves the context REAPING with the byte free, and the next one finishes
 * the job: before, such a context was never looked at again, and a dead
 * queue of it with work kept the engine (or took it later) for good, every
 * process's commands then waiting forever. Under the byte, no other reaper
 * can free the context and a new process claim it, so a context found
 * LIVE is checked alive again here (the caller's look may be older than a
 * reap and a claim). Without the byte (no descriptor of the file, or a
 * lock that fails for another reason than a holder), only a LIVE context
 * is reaped, as before reaps could be taken over.
 */
void sim_ctx_reap(struct sim_dev *dev, uint32_t c)
{
	struct sim_shm_dev *shm = dev->shm;
	uint32_t expected = SIM_SLOT_LIVE, i;
	bool held;
	int rc;

	pthread_mutex_lock(&dev->reap_lock);
	rc = dev->lock_fd >= 0 ? sim_reap_byte(dev, c, true) : -EBADF;
	held = rc == 0;
	if (rc == -EAGAIN || rc == -EACCES)
		goto out;       /* another process reaps it now */
	if (atomic_load(&shm->ctx[c].state) == SIM_SLOT_LIVE) {
		if ((held && sim_ctx_alive(dev, c)) ||
		    !atomic_compare_exchange_strong(&shm->ctx[c].state, &expected,
						    SIM_SLOT_REAPING))
			goto out;
	} else if (!held || atomic_load(&shm->ctx[c].state) != SIM_SLOT_REAPING) {
		goto out;
	}
	for (i = 0; i < SIM_MAX_HWQ; i++) {
		struct sim_shm_hwq *h = &shm->hwq[i];
		uint32_t turn = i + 1;

		/* Its every live queue, in the mask or not: its owner or an
		 * earlier reaper may have died between the mask and the state.
		 * State first: a claimer writes ctx before it stores LIVE. */
		if (atomic_load(&h->state) != SIM_SLOT_LIVE || atomic_load(&h->ctx) != c)
			continue;
		atomic_fetch_and(&shm->live_mask[i / 64], ~(1ull << (i % 64)));
		atomic_store(&h->running, 0);
		atomic_store(&h->state, SIM_SLOT_FREE);
		atomic_compare_exchange_strong(&shm->turn, &turn, 0);
	}
	/* The dead process's device memory goes back to the node. */
	atomic_store(&shm->ctx[c].mem_used, 0);
	atomic_store(&shm->ctx[c].state, SIM_SLOT_FREE);
	sim_engine_kick(dev, SIM_NO_HWQ);
out:
	if (held)
		sim_reap_byte(dev, c, false);
	pthread_mutex_unlock(&dev->reap_lock);
}

void sim_dev_reap(struct sim_dev *dev)
{
	uint32_t c;

	for (c = 0; c < SIM_MAX_CTX; c++) {
		uint32_t state = atomic_load(&dev->shm->ctx[c].state);

		if (c == dev->ctx)
			continue;
		if ((state == SIM_SLOT_LIVE && !sim_ctx_alive(dev, c)) ||
		    state == SIM_SLOT_REAPING)
			sim_ctx_reap(dev, c);
	}
}

static int sim_create_file(const char *path, const char *dir_path,
			   const struct sim_dev_opts *opts)
{
	size_t size = sizeof(struct sim_shm_dev);
	struct sim_shm_dev *shm;
	char tmp[PATH_MAX];
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s/.xsched-sim-XXXXXX", dir_path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0666) < 0 || ftruncate(fd, (off_t)size) < 0) {
		rc = -errno;
		goto out;
	}
	shm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	shm->version = SIM_ABI_VERSION;
	shm->size = (uint32_t)size;
	shm->arbitration = opts->arbitration;
	shm->level_max = opts->level_max;
	shm->lv2_flush = opts->lv2_flush;
	shm->mem_capacity = opts->mem_capacity ? opts->mem_capacity : SIM_MEM_DEFAULT;
	shm->created_ns = clock_now_ns();
	__atomic_store_n(&shm->magic, SIM_ABI_MAGIC, __ATOMIC_RELEASE);
	munmap(shm, size);
	/* Publish atomically; EEXIST means another creator won, which is fine. */
	if (link(tmp, path) < 0 && errno != EEXIST)
		rc = -errno;
out:
	unlink(tmp);
	close(fd);
	return rc;
}

static int sim_map(const char *path, struct sim_shm_dev **out, size_t *size_out)
{
	struct sim_shm_dev *shm;
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if ((size_t)st.st_size != sizeof(struct sim_shm_dev)) {
		XLOG_ONCE(XLOG_ERROR, "simulated device %s: %lld bytes, not the %zu of this "
			  "build's layout (made by another version of xsched?); remove it once "
			  "no process uses it", path, (long long)st.st_size,
			  sizeof(struct sim_shm_dev));
		rc = -EPROTO;
		goto out;
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	if (__atomic_load_n(&shm->magic, __ATOMIC_ACQUIRE) != SIM_ABI_MAGIC ||
	    shm->version != SIM_ABI_VERSION || shm->size != sizeof(*shm)) {
		XLOG_ONCE(XLOG_ERROR, "simulated device %s: layout version %u, this build "
			  "uses %u (made by another version of xsched?); remove it once no "
			  "process uses it", path, shm->version, SIM_ABI_VERSION);
		munmap(shm, sizeof(*shm));
		rc = -EPROTO;
		goto out;
	}
	*out = shm;
	*size_out = sizeof(*shm);
out:
	close(fd);
	return rc;
}

static int sim_ctx_claim(struct sim_dev *dev, const char *path)
{
	struct sim_shm_dev *shm = dev->shm;
	char state;
	uint64_t start;
	uint32_t c;
	int rc;

	rc = sim_proc_stat(dev->pid, &state, &start);
	if (rc < 0)
		return rc;
	for (c = 0; c < SIM_MAX_CTX; c++) {
		struct sim_shm_ctx *ctx = &shm->ctx[c];
		uint32_t expected = SIM_SLOT_FREE;

		if (!atomic_compare_exchange_strong(&ctx->state, &expected,
						    SIM_SLOT_CLAIMED))
			continue;
		ctx->pid = dev->pid;
		ctx->start_time = start;
		sim_ctx_lock(dev, path, c);
		/* Without the lock, peers elsewhere could not see us live. */
		ctx->pidns = dev->lock_fd >= 0 ? dev->pidns : 0;
		atomic_store(&ctx->doorbell, 0);
		atomic_store(&ctx->sleeping, 0);
		atomic_store(&ctx->mem_used, 0);
		atomic_store_explicit(&ctx->state, SIM_SLOT_LIVE, memory_order_release);
		dev->ctx = c;
		return 0;
	}
	return -ENOSPC;
}

static int sim_dev_attach(const char *name, const struct sim_dev_opts *opts,
			  struct sim_dev **out)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;
	struct sim_dev *dev;
	int rc, attempt;

	rc = sim_path(name, path, sizeof(path));
	if (rc < 0)
		return rc;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	/* Before the first reap (a full table reaps before claiming). */
	pthread_mutex_init(&dev->reap_lock, NULL);
	for (attempt = 0; attempt < 2; attempt++) {
		rc = sim_map(path, &dev->shm, &dev->map_size);
		if (rc != -ENOENT)
			break;
		rc = sim_create_file(path, dir[0] ? dir : "/", opts);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		goto fail;
	dev->pid = getpid();
	dev->pidns = sim_pidns();
	dev->lock_fd = -1;
	rc = sim_ctx_claim(dev, path);
	if (rc == -ENOSPC) {
		/* A table full of dead contexts, some maybe left REAPING: a
		 * descriptor to lock reap bytes with while we reap them. */
		dev->ctx = SIM_MAX_CTX;
		dev->lock_fd = open(path, O_RDWR | O_CLOEXEC);
		sim_dev_reap(dev);
		if (dev->lock_fd >= 0)
			close(dev->lock_fd);
		dev->lock_fd = -1;
		rc = sim_ctx_claim(dev, path);
	}
	if (rc < 0)
		goto fail_map;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	pthread_mutex_init(&dev->exec_lock, NULL);
	pthread_mutex_init(&dev->trace_lock, NULL);
	dev->refs = 1;
	*out = dev;
	return 0;
fail_map:
	munmap(dev->shm, dev->map_size);
fail:
	pthread_mutex_destroy(&dev->reap_lock);
	free(dev);
	return rc;
}

int sim_dev_open(const char *name, const struct sim_dev_opts *opts,
		 struct sim_dev **out)
{
	struct sim_dev_opts env_opts;
	struct sim_dev *dev;
	int rc;

	if (!out || !sim_name_valid(name))
		return -EINVAL;
	if (!opts) {
		rc = sim_dev_opts_from_env(&env_opts);
		if (rc < 0)
			return rc;
		opts = &env_opts;
	}
	if (opts->level_max < 1 || opts->level_max > 3 ||
	    opts->arbitration > SIM_ARB_FCFS)
		return -EINVAL;
	pthread_once(&sim_atfork_once, sim_atfork_register);
	pthread_mutex_lock(&sim_lock);
	for (dev = sim_devs; dev; dev = dev->next) {
		if (!strcmp(dev->name, name)) {
			dev->refs++;
			goto found;
		}
	}
	rc = sim_dev_attach(name, opts, &dev);
	if (rc < 0) {
		pthread_mutex_unlock(&sim_lock);
		return rc;
	}
	dev->next = sim_devs;
	sim_devs = dev;
	sim_dev_reap(dev);
found:
	pthread_mutex_unlock(&sim_lock);
	*out = dev;
	return 0;
}

void sim_dev_close(struct sim_dev *dev)
{
	struct sim_dev **pp;

	if (!dev)
		return;
	pthread_mutex_lock(&sim_lock);
	if (--dev->refs > 0) {
		pthread_mutex_unlock(&sim_lock);
		return;
	}
	for (pp = &sim_devs; *pp; pp = &(*pp)->next) {
		if (*pp == dev) {
			*pp = dev->next;
			break;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	sim_engine_stop(dev);
	/* As at process exit: what the drivers still hold goes back. */
	atomic_store(&dev->shm->ctx[dev->ctx].mem_used, 0);
	atomic_store(&dev->shm->ctx[dev->ctx].state, SIM_SLOT_FREE);
	if (dev->lock_fd >= 0)
		close(dev->lock_fd);
	munmap(dev->shm, dev->map_size);
	pthread_mutex_destroy(&dev->exec_lock);
	pthread_mutex_destroy(&dev->trace_lock);
	pthread_mutex_destroy(&dev->reap_lock);
	free(dev->trace_hwq);
	free(dev->trace_seq);
	free(dev);
}

int sim_dev_unlink(const char *name)
{
	char path[PATH_MAX];
	int rc;

	if (!sim_name_valid(name))
		return -EINVAL;
	rc = sim_path(name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return unlink(path) < 0 ? -errno : 0;
}

/*
 * What every slot holds. FREE slots hold 0 (zeroed before they were
 * freed), so no state check is needed; a slot being reaped still counts
 * until zeroed, which can only refuse a charge, never over-grant one.
 */
static uint64_t sim_mem_sum(const struct sim_shm_dev *shm)
{
	uint64_t sum = 0, v;
	uint32_t c;

	for (c = 0; c < SIM_MAX_CTX; c++) {
		v = atomic_load(&shm->ctx[c].mem_used);
		sum = sum + v < sum ? UINT64_MAX : sum + v;
	}
	return sum;
}

void sim_dev_info_get(struct sim_dev *dev, struct sim_dev_info *out)
{
	struct sim_shm_dev *shm = dev->shm;

	out->arbitration = shm->arbitration;
	out->level_max = shm->level_max;
	out->lv2_flush = shm->lv2_flush != 0;
	out->busy_ns = atomic_load(&shm->busy_ns);
	out->commands = atomic_load(&shm->commands);
	out->mem_capacity = shm->mem_capacity;
	out->mem_used = sim_mem_sum(shm);
}

/*
 * Charge first, then look at the sum: with sequentially consistent
 * read-modify-writes and loads, of two processes charging at once at least
 * one sees the other's charge (the store-buffering pattern), so the
 * capacity is never exceeded; the price is that both may back off.
 */
int sim_dev_mem_charge(struct sim_dev *dev, uint64_t bytes)
{
	struct sim_shm_ctx *own = &dev->shm->ctx[dev->ctx];
	uint64_t cap = dev->shm->mem_capacity;
	int attempt;

	if (bytes > cap)
		return -ENOMEM;
	for (attempt = 0; attempt < 2; attempt++) {
		atomic_fetch_add(&own->mem_used, bytes);
		if (sim_mem_sum(dev->shm) <= cap)
			return 0;
		atomic_fetch_sub(&own->mem_used, bytes);
		/* A peer killed while holding memory gives it back when reaped. */
		if (attempt == 0)
			sim_dev_reap(dev);
	}
	return -ENOMEM;
}

void sim_dev_mem_uncharge(struct sim_dev *dev, uint64_t bytes)
{
	struct sim_shm_ctx *own = &dev->shm->ctx[dev->ctx];
	uint64_t v = atomic_load(&own->mem_used);

	/* Never below zero: a driver's bug must not wrap the node's count. */
	while (!atomic_compare_exchange_weak(&own->mem_used, &v, v > bytes ? v - bytes : 0))
		;
}

void sim_dev_mem_info(struct sim_dev *dev, uint64_t *capacity, uint64_t *used)
{
	sim_dev_reap(dev);
	if (capacity)
		*capacity = dev->shm->mem_capacity;
	if (used)
		*used = sim_mem_sum(dev->shm);
}

int sim_dev_trace_start(struct sim_dev *dev, size_t cap)
{
	uint32_t *h = NULL;
	uint64_t *s = NULL;

	if (cap) {
		h = calloc(cap, sizeof(*h));
		s = calloc(cap, sizeof(*s));
		if (!h || !s) {
			free(h);
			free(s);
			return -ENOMEM;
		}
	}
	pthread_mutex_lock(&dev->trace_lock);
	free(dev->trace_hwq);
	free(dev->trace_seq);
	dev->trace_hwq = h;
	dev->trace_seq = s;
	dev->trace_cap = cap;
	dev->trace_n = 0;
	atomic_store(&dev->tracing, cap != 0);
	pthread_mutex_unlock(&dev->trace_lock);
	return 0;
}

size_t sim_dev_trace_read(struct sim_dev *dev, uint32_t *hwq, uint64_t *seq,
			  size_t cap)
{
	size_t n;

	pthread_mutex_lock(&dev->trace_lock);
	n = BASE_MIN(dev->trace_n, cap);
	if (n) {
		memcpy(hwq, dev->trace_hwq, n * sizeof(*hwq));
		memcpy(seq, dev->trace_seq, n * sizeof(*seq));
	}
	pthread_mutex_unlock(&dev->trace_lock);
	return n;
}
