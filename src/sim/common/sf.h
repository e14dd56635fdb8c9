/*
 * The lower half both simulated drivers share (prefix sf_): the simulated
 * CUDA driver (src/sim/cuda) and the simulated Level Zero driver
 * (src/sim/ze) speak different APIs over the same simulated XPU, and
 * everything below that API is the same: the built-in kernels, the
 * registry of memory the device may touch, the data part of copies, a pool
 * of recycled hardware queues, and device-side waits on host-visible
 * conditions.
 *
 * Design: this is a static library linked into each driver, so each
 * driver has its own registry, pool and watcher thread; nothing here knows
 * about contexts, streams or command lists (an allocation's owner is an
 * opaque pointer). Functions return 0 or a negative errno.
 */
#ifndef XS_SIM_COMMON_SF_H
#define XS_SIM_COMMON_SF_H

#include "sim/sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SF_ALIGN 256u                 /* least allocation alignment */
#define SF_STAMPS 2048u               /* event timestamps kept per queue */
#define SF_PARAM_MAX 64u              /* kernel parameter bytes */

/* ---- built-in kernels (sf_kernels.c) ---- */

struct sf_kernel_def {
	const char *name;
	unsigned nparams;
	uint16_t offset[4], size[4];
	size_t params_size;
	/* On the executor thread: 0, -EFAULT (bad address) or -EIO (fault). */
	int (*run)(const uint8_t *params);
	uint64_t (*duration)(const uint8_t *params);
};

extern const struct sf_kernel_def sf_kernels[];
extern const size_t sf_nkernels;
const struct sf_kernel_def *sf_kernel_find(const char *name);

/* ---- memory registry (sf_memreg.c) ---- */

/*
 * Values are what each driver stores; PAGEABLE means "not registered".
 * DEVICE and SHARED allocations are charged to the device's memory;
 * MANAGED (CUDA's) is host-backed and paged by a real driver, so it is not.
 */
enum sf_mem_kind {
	SF_MEM_PAGEABLE = 0, SF_MEM_DEVICE = 1, SF_MEM_HOST = 2, SF_MEM_SHARED = 3,
	SF_MEM_MANAGED = 4,
};

/*
 * The simulated device whose memory allocations are charged to (each
 * driver's, once it opened it; before, nothing is charged).
 */
void sf_mem_set_device(struct sim_dev *dev);
/* Charges/uncharges memory the registry does not allocate (arrays, a
 * driver's physical allocations): 0 or -ENOMEM, as sim_dev_mem_charge(). */
int sf_mem_charge(uint64_t bytes);
void sf_mem_uncharge(uint64_t bytes);

int sf_mem_alloc(size_t size, size_t align, enum sf_mem_kind kind, void *owner, void **out);
int sf_mem_register(void *base, size_t size, enum sf_mem_kind kind, void *owner);
int sf_mem_unregister(void *base);
int sf_mem_reserve(void *base, size_t size);
void sf_mem_unreserve(void *base);
/*
 * The data part of a device command checks its addresses and touches the
 * memory between these (any number of threads at once; never around a
 * wait), so that sf_mem_unregister() cannot take a range away under it.
 */
void sf_mem_access_begin(void);
void sf_mem_access_end(void);
int sf_mem_free(void *base, enum sf_mem_kind kind, void **owner);
int sf_mem_owner(void *base, enum sf_mem_kind kind, void **owner);
int sf_mem_mark_freeing(void *base);
void sf_mem_release(void *base);
int sf_mem_classify(const void *p, size_t len, enum sf_mem_kind *kind);
int sf_mem_lookup(const void *p, enum sf_mem_kind *kind, void **owner);
int sf_mem_range(const void *p, void **base, size_t *size);
bool sf_mem_accessible(const void *p, size_t len);
void sf_mem_drain(void *owner);

/* ---- data part of copies and fills (sf_data.c) ---- */

/* A copy of depth slices of height rows of width bytes. */
struct sf_region {
	uint8_t *dst;
	const uint8_t *src;
	size_t dpitch, dslice, spitch, sslice;
	size_t width, height, depth;
	bool dst_reg, src_reg;        /* registered memory, checked when it runs */
};

/*
 * Bytes from the first to one past the last byte of a region side of
 * @width x @height x @depth (depth, height >= 1) with row @pitch and
 * @slice pitch.
 */
size_t sf_span(size_t width, size_t height, size_t depth, size_t pitch, size_t slice);

int sf_region_run(const struct sf_region *r);
int sf_pattern_run(uint8_t *dst, bool reg, const void *pattern, size_t psize, size_t bytes);
uint64_t sf_copy_ns(uint64_t bytes);

/* ---- hardware queues (sf_hwq.c) ---- */

struct sf_stamp {
	uint64_t seq;                 /* record this slot belongs to (stamp lock) */
	uint64_t ns;                  /* written by the device's EVENT command */
};

/*
 * A hardware queue of the device, recycled through a pool and never freed:
 * WAIT commands and events may name it after its user is gone.
 */
struct sf_hwq {
	struct sim_hwq *hq;
	struct sim_dev *dev;
	uint32_t index;               /* sim_hwq_index() */
	uint64_t launched;            /* last seq; by its current user, under that user's lock */
	uint32_t stamp_next;          /* same */
	struct sf_hwq *next;          /* pool link */
	struct sf_stamp stamps[SF_STAMPS];
};

int sf_hwq_get(struct sim_dev *dev, struct sf_hwq **out);
void sf_hwq_put(struct sf_hwq *q);
int sf_hwq_launch(struct sf_hwq *q, const struct sim_cmd *cmd, uint64_t *seq);
bool sf_hwq_done(struct sf_hwq *q, uint64_t seq);
void sf_hwq_wait(struct sf_hwq *q, uint64_t seq);
uint64_t *sf_hwq_stamp(struct sf_hwq *q, uint64_t seq, uint32_t *slot);
int sf_hwq_stamp_read(struct sf_hwq *q, uint32_t slot, uint64_t seq, uint64_t *ns);

/* A set of (queue, seq) to wait for outside a driver lock. */
struct sf_waitset {
	size_t n, cap;
	struct sf_wait {
		struct sf_hwq *q;
		uint64_t seq;
	} *v;
};

int sf_waitset_add(struct sf_waitset *w, struct sf_hwq *q, uint64_t seq);
void sf_waitset_wait(struct sf_waitset *w);
bool sf_waitset_done(const struct sf_waitset *w);
void sf_waitset_fini(struct sf_waitset *w);

/* ---- device-side waits on host-visible conditions (sf_watch.c) ---- */

/*
 * A pending wait. A driver embeds it first in a malloc()ed structure,
 * sets the fields above the line and calls sf_watch_prepare(); the
 * waiting queue then launches the WAIT command it got, and
 * sf_watch_arm() hands the watch to the watcher thread, which releases
 * the queue once ready() returns true and then frees the structure.
 */
struct sf_watch {
	/*
	 * Watcher thread, under the watcher's lock (so it must take leaf
	 * locks only and never block): whether the waiting queue may go on.
	 */
	bool (*ready)(struct sf_watch *w);
	/* The condition may come true without sf_watch_kick(): poll it. */
	bool poll;
	/* ---- private ---- */
	struct sf_hwq *gate;          /* its next command releases the waiter */
	struct sf_watch *next;
};

int sf_watch_prepare(struct sim_dev *dev, struct sf_watch *w, struct sim_cmd *cmd);
void sf_watch_arm(struct sf_watch *w);
void sf_watch_cancel(struct sf_watch *w);
void sf_watch_kick(void);

#endif
