/*
 * Device memory as each shim counts it: what the process holds on each
 * device, and the limit it may hold there (issue "device memory is
 * scheduled too"; docs/memory.md).
 *
 * A shim asks before the driver: shim_mem_reserve() counts the bytes
 * against the device's limit, or refuses them (-ENOMEM: the shim answers
 * with its API's own out-of-memory error, the driver never asked, and one
 * XSCHED_LOG warning names the limit). Then it either tells which handle
 * holds them (shim_mem_commit(), into a map of the shim's: one per kind of
 * handle, as handles of two kinds may be equal numbers) or gives them back
 * (shim_mem_cancel(), the driver refused). The free of a handle gives its
 * bytes back (shim_mem_release()).
 *
 * The limit is per device: a process may hold that much on each device it
 * uses. XSCHED_MEMORY_LIMIT sets the process's own (base/size.h: "8G");
 * unset, there is none. The daemon may cap it (its uid's memory_limit) or
 * replace it (xschedctl set memory-limit), at any time (agent_mem.h).
 * Lowering a limit below what is held frees nothing: the next allocation
 * fails. The figures are published for the daemon after every change.
 *
 * Kinds: device memory counts against the limit; managed (and Level Zero
 * shared) memory is counted apart and never refused, the driver pages it.
 *
 * Compiled into each shim; every function may be called from any thread.
 * Nothing is locked on the counters (atomics); the maps lock as
 * shim_map.h says.
 */
#ifndef XS_SHIM_MEM_H
#define XS_SHIM_MEM_H

#include "agent/agent_mem.h"
#include "base/devid.h"
#include "shim/common/shim_map.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SHIM_MEM_DEVICES 16     /* devices a shim counts for (more: uncounted) */

enum shim_mem_kind {
	SHIM_MEM_DEVICE = 0,    /* counted against the limit */
	SHIM_MEM_MANAGED = 1,   /* managed / shared: counted apart */
	SHIM_MEM_KINDS
};

/* One device of this process, as the shim counts it. */
struct shim_mem_dev {
	char device[32];                /* API-local name, e.g. "cuda:0" */
	struct devid id;                /* node-wide identity (base/devid.h) */
	struct agent_mem_counts c;      /* what it holds, its limit: the daemon reads them */
	int index;                      /* the agent's record (agent_mem.h); < 0: none */
};

/* What a map of shim_mem_commit() holds per handle. */
struct shim_mem_alloc {
	struct shim_map_node node;      /* first: the map's */
	struct shim_mem_dev *dev;
	uint64_t bytes;
	enum shim_mem_kind kind;
	uint32_t gen;                   /* forks before it: older ones' give nothing back */
};

/*
 * The shim's record of the device named @device with identity @id (NULL:
 * unverified), made at first use with the process's limit. NULL when
 * SHIM_MEM_DEVICES devices are counted already (said once): the caller
 * then counts nothing, which every function below accepts.
 */
struct shim_mem_dev *shim_mem_device(const char *device, const struct devid *id);

/*
 * Counts @bytes of @kind on @d before the driver is asked. 0, or -ENOMEM
 * when device bytes would pass @d's limit: nothing counted, and one
 * warning (@api: the function refused, e.g. "cuMemAlloc_v2").
 */
int shim_mem_reserve(struct shim_mem_dev *d, uint64_t bytes, enum shim_mem_kind kind,
		     const char *api);

/*
 * The driver took @to bytes where @from were reserved (a pitch or an
 * alignment the call chose): the difference is counted, never refused.
 */
void shim_mem_resize(struct shim_mem_dev *d, uint64_t from, uint64_t to, enum shim_mem_kind kind);

/* Gives back what shim_mem_reserve() counted: the driver refused. */
void shim_mem_cancel(struct shim_mem_dev *d, uint64_t bytes, enum shim_mem_kind kind);

/*
 * The driver made it: @key (in @m) holds the bytes reserved until
 * shim_mem_release(). Without memory for the record, the bytes are given
 * back (said once): the allocation is the application's either way.
 */
void shim_mem_commit(struct shim_map *m, const void *key, struct shim_mem_dev *d,
		     uint64_t bytes, enum shim_mem_kind kind);

/* @key was freed: its bytes leave the count. Returns them; 0 if unknown. */
uint64_t shim_mem_release(struct shim_map *m, const void *key);

/* Bytes @key holds (0: unknown); its device into *@dev if not NULL. */
uint64_t shim_mem_size(struct shim_map *m, const void *key, struct shim_mem_dev **dev);

/*
 * The application's view of @d's memory: the driver's @total and @free
 * (bytes) as the limit leaves them: total = min(total, limit), free =
 * min(free, limit - held). Unchanged without a limit (or @d NULL). The
 * driver's @total is kept for the daemon's listing of the device.
 */
void shim_mem_view(const struct shim_mem_dev *d, uint64_t *total, uint64_t *free);

/* @d's limit in effect (bytes; 0: none, or @d NULL). */
uint64_t shim_mem_limit(const struct shim_mem_dev *d);

/* The devices counted so far: *@n of them, in the order first used. */
struct shim_mem_dev *shim_mem_devices(unsigned *n);

#endif
