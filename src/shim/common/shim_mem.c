/*
 * Device memory as each shim counts it (see shim_mem.h).
 *
 * Devices are found by their API-local name in a small table that only
 * grows (a process uses a few devices): lookups read it without a lock,
 * the count published with release after the entry is complete. Counters
 * are atomics; a reservation is a compare-and-swap against the limit, so
 * two threads allocating at once cannot both pass it.
 */
#include "shim/common/shim_mem.h"
#include "base/compiler.h"
#include "base/size.h"
#include "base/xlog.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct shim_mem_dev sm_dev[SHIM_MEM_DEVICES];
static _Atomic unsigned sm_ndev;
static pthread_mutex_t sm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t sm_once = PTHREAD_ONCE_INIT;
static uint64_t sm_env_limit;                   /* the process's own; 0: none */
static uint64_t sm_ctl_limit, sm_ceiling;       /* the daemon's (sm_lock) */
static uint32_t sm_gen;                         /* forks this process descends from */

/* The limit in effect: xschedctl's, else the process's own under the ceiling. */
static uint64_t sm_limit(void)
{
	if (sm_ctl_limit)
		return sm_ctl_limit;
	if (sm_env_limit && sm_ceiling)
		return BASE_MIN(sm_env_limit, sm_ceiling);
	return sm_env_limit ? sm_env_limit : sm_ceiling;
}

/* Where the limit in effect comes from, for the warning of a refusal. */
static const char *sm_limit_source(void)
{
	const char *src;

	pthread_mutex_lock(&sm_lock);
	if (sm_ctl_limit)
		src = "set with xschedctl";
	else if (sm_ceiling && (!sm_env_limit || sm_ceiling < sm_env_limit))
		src = "the memory_limit of its uid in xschedd.conf";
	else
		src = "XSCHED_MEMORY_LIMIT";
	pthread_mutex_unlock(&sm_lock);
	return src;
}

/* The daemon's limits changed (agent thread). */
static void sm_limits(uint64_t limit, uint64_t ceiling)
{
	unsigned n, i;

	pthread_mutex_lock(&sm_lock);
	sm_ctl_limit = limit;
	sm_ceiling = ceiling;
	n = atomic_load_explicit(&sm_ndev, memory_order_relaxed);
	for (i = 0; i < n; i++)
		atomic_store(&sm_dev[i].c.limit, sm_limit());
	pthread_mutex_unlock(&sm_lock);
	/* The agent publishes every record after this. */
}

/*
 * A forked child holds none of its parent's device memory: it counts from
 * zero, under its own limit (the parent's xschedctl limit and ceiling are
 * the parent's; the child's agent learns its own when it connects).
 * Records of handles the parent allocated stay in the maps, from an older
 * generation: their free gives nothing back.
 */
static void sm_atfork_child(void)
{
	memset(sm_dev, 0, sizeof(sm_dev));
	atomic_store(&sm_ndev, 0);
	sm_ctl_limit = sm_ceiling = 0;
	sm_gen++;
	pthread_mutex_init(&sm_lock, NULL);
}

/* XSCHED_MEMORY_LIMIT: a size above zero; anything else is said and ignored. */
static void sm_read_env(void)
{
	const char *v = getenv("XSCHED_MEMORY_LIMIT");
	uint64_t x;

	pthread_atfork(NULL, NULL, sm_atfork_child);
	agent_mem_on_limits(sm_limits);
	if (!v || !*v)
		return;
	if (size_parse(v, &x) == 0 && x > 0) {
		sm_env_limit = x;
		return;
	}
	xlog(XLOG_WARN, "XSCHED_MEMORY_LIMIT=%s is not a size above zero (e.g. 8G, 512MiB): "
	     "ignored, as if unset: no memory limit", v);
}

static struct shim_mem_dev *sm_find(const char *device, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(sm_dev[i].device, device))
			return &sm_dev[i];
	return NULL;
}

struct shim_mem_dev *shim_mem_device(const char *device, const struct devid *id)
{
	struct shim_mem_dev *d;
	unsigned n;

	pthread_once(&sm_once, sm_read_env);
	d = sm_find(device, atomic_load_explicit(&sm_ndev, memory_order_acquire));
	if (d)
		return d;
	pthread_mutex_lock(&sm_lock);
	n = atomic_load_explicit(&sm_ndev, memory_order_relaxed);
	d = sm_find(device, n);
	if (!d && n < SHIM_MEM_DEVICES) {
		d = &sm_dev[n];
		strncpy(d->device, device, sizeof(d->device) - 1);
		if (id)
			d->id = *id;
		atomic_store(&d->c.limit, sm_limit());
		/* Known to the daemon from now on. (Lock order: ours, then the
		 * agent's; its thread applies limits without its lock.) */
		d->index = agent_mem_open(d->device, &d->id, &d->c);
		atomic_store_explicit(&sm_ndev, n + 1, memory_order_release);
	} else if (!d) {
		XLOG_ONCE(XLOG_WARN, "this process uses more than %u devices through one API: "
			  "memory on the others is not counted, nor limited", SHIM_MEM_DEVICES);
	}
	pthread_mutex_unlock(&sm_lock);
	return d;
}

static void sm_peak(struct shim_mem_dev *d, uint64_t used)
{
	uint64_t p = atomic_load_explicit(&d->c.peak, memory_order_relaxed);

	while (p < used && !atomic_compare_exchange_weak(&d->c.peak, &p, used))
		;
}

int shim_mem_reserve(struct shim_mem_dev *d, uint64_t bytes, enum shim_mem_kind kind,
		     const char *api)
{
	uint64_t used, limit;
	char a[SIZE_TEXT], b[SIZE_TEXT], c[SIZE_TEXT];

	if (!d)
		return 0;
	if (kind != SHIM_MEM_DEVICE) {
		atomic_fetch_add(&d->c.managed, bytes);
		agent_mem_publish(d->index);
		return 0;
	}
	used = atomic_load(&d->c.used);
	do {
		limit = atomic_load_explicit(&d->c.limit, memory_order_relaxed);
		if (limit && (bytes > limit || used > limit - bytes)) {
			atomic_fetch_add(&d->c.refused, 1);
			agent_mem_publish(d->index);
			xlog(XLOG_WARN, "%s of %s on %s refused: the process holds %s there, its "
			     "limit is %s (%s)", api, size_format(bytes, a, sizeof(a)), d->device,
			     size_format(used, b, sizeof(b)), size_format(limit, c, sizeof(c)),
			     sm_limit_source());
			return -ENOMEM;
		}
	} while (!atomic_compare_exchange_weak(&d->c.used, &used, used + bytes));
	sm_peak(d, used + bytes);
	agent_mem_publish(d->index);
	return 0;
}

void shim_mem_cancel(struct shim_mem_dev *d, uint64_t bytes, enum shim_mem_kind kind)
{
	if (!d)
		return;
	atomic_fetch_sub(kind == SHIM_MEM_DEVICE ? &d->c.used : &d->c.managed, bytes);
	agent_mem_publish(d->index);
}

void shim_mem_resize(struct shim_mem_dev *d, uint64_t from, uint64_t to, enum shim_mem_kind kind)
{
	_Atomic uint64_t *n;

	if (!d || from == to)
		return;
	n = kind == SHIM_MEM_DEVICE ? &d->c.used : &d->c.managed;
	if (to > from)
		atomic_fetch_add(n, to - from);
	else
		atomic_fetch_sub(n, from - to);
	if (kind == SHIM_MEM_DEVICE)
		sm_peak(d, atomic_load(n));
	agent_mem_publish(d->index);
}

void shim_mem_commit(struct shim_map *m, const void *key, struct shim_mem_dev *d,
		     uint64_t bytes, enum shim_mem_kind kind)
{
	struct shim_mem_alloc *a, *old;

	if (!d)
		return;
	a = calloc(1, sizeof(*a));
	if (!a) {
		XLOG_ONCE(XLOG_WARN, "out of host memory to record a device allocation: "
			  "some device memory of this process is not counted");
		shim_mem_cancel(d, bytes, kind);
		return;
	}
	a->dev = d;
	a->bytes = bytes;
	a->kind = kind;
	a->gen = sm_gen;
	/* A handle the driver gave out again after a free we did not see. */
	old = (struct shim_mem_alloc *)shim_map_insert(m, &a->node, key);
	if (old) {
		if (old->gen == sm_gen)
			shim_mem_cancel(old->dev, old->bytes, old->kind);
		free(old);
	}
}

uint64_t shim_mem_release(struct shim_map *m, const void *key)
{
	struct shim_mem_alloc *a = (struct shim_mem_alloc *)shim_map_remove(m, key);
	uint64_t bytes;

	if (!a)
		return 0;
	bytes = a->gen == sm_gen ? a->bytes : 0;
	if (bytes)
		shim_mem_cancel(a->dev, a->bytes, a->kind);
	free(a);
	return bytes;
}

uint64_t shim_mem_size(struct shim_map *m, const void *key, struct shim_mem_dev **dev)
{
	struct shim_mem_alloc *a;
	uint64_t bytes = 0;

	pthread_rwlock_rdlock(&m->lock);
	a = (struct shim_mem_alloc *)shim_map_find_locked(m, key);
	if (a && a->gen == sm_gen) {
		bytes = a->bytes;
		if (dev)
			*dev = a->dev;
	}
	pthread_rwlock_unlock(&m->lock);
	return bytes;
}

void shim_mem_view(const struct shim_mem_dev *d, uint64_t *total, uint64_t *free)
{
	struct shim_mem_dev *w = (struct shim_mem_dev *)d;
	uint64_t limit, used;

	if (!d)
		return;
	/* The device's size, for the daemon's listing. */
	if (atomic_exchange(&w->c.total, *total) != *total)
		agent_mem_publish(d->index);
	if (!(limit = atomic_load(&d->c.limit)))
		return;
	used = atomic_load(&d->c.used);
	if (*total > limit)
		*total = limit;
	used = used < *total ? *total - used : 0;      /* what the limit leaves */
	if (*free > used)
		*free = used;
}

uint64_t shim_mem_limit(const struct shim_mem_dev *d)
{
	return d ? atomic_load(&d->c.limit) : 0;
}

struct shim_mem_dev *shim_mem_devices(unsigned *n)
{
	*n = atomic_load_explicit(&sm_ndev, memory_order_acquire);
	return sm_dev;
}
