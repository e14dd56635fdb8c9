/*
 * Internals of the simulated CUDA driver: libcuda.so.1 implementing the
 * driver API (src/vendor/cuda/cu_api.h) over the simulated XPU (src/sim/sim.h).
 *
 * Design: each stream is one hardware queue of the simulated device, and
 * every ordering rule of the driver API (events, the legacy default
 * stream's implicit synchronisation, stream-ordered frees, waits on memory
 * values) becomes a WAIT command between queues, launched by the calling
 * thread: a call blocks only where the API says it does. Work is described
 * once, as an operation (struct sc_op), which a capturing stream records
 * and any other stream turns into a device command; the data part of every
 * command runs on the device's executor thread, which is where the
 * simulated "hardware" touches memory.
 *
 * Handles given to applications are pointers to the structures below,
 * looked up in a registry before any use (sc_handle.c), so a destroyed or
 * made-up handle yields CUDA_ERROR_INVALID_HANDLE instead of a crash.
 * Contexts and hardware queues are never freed, only recycled, so stale
 * references held by events, per-thread tables and device commands stay
 * safe to read.
 *
 * Locks, outermost first: sc_drv.lock (context list, primary context) ->
 * the green-context list (sc_green.c) -> ctx->lock (the context's streams,
 * events, captures) -> leaf locks
 * (handle registry, memory registry, queue pool, event stamps, capture
 * list, wait-value list). The executor thread takes leaf locks only.
 *
 * Internal functions return 0 or a negative errno; sc_result() turns them
 * into CUresult values at the API boundary (one table, sc_error.c).
 */
#ifndef XS_SC_INTERNAL_H
#define XS_SC_INTERNAL_H

#include "vendor/cuda/cu_api.h"
#include "sim/common/sf.h"
#include "sim/sim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Only the driver API leaves the library (with the version script). */
#define SC_EXPORT __attribute__((visibility("default")))
#define XS_CU_FN(name, how, arg, symbol, version, params) SC_EXPORT CUresult name params;
#define XS_CU_FN_PT(name, how, arg, symbol, version, pt, base) SC_EXPORT __typeof__(base) name;
#include "vendor/cuda/cu_functions.def"

#define SC_DRIVER_VERSION 13000
#define SC_DEVICE_NAME "xsched simulated XPU"
#define SC_PRIO_LEAST 0
#define SC_PRIO_GREATEST (-5)

/* ---- driver (sc_init.c) ---- */

struct sc_driver {
	pthread_mutex_t lock;         /* contexts, the primary context */
	struct sim_dev *dev;          /* after a successful cuInit */
	_Atomic int state;            /* SC_DRV_* */
	int init_err;                 /* -errno of the first cuInit */
};

enum { SC_DRV_NONE = 0, SC_DRV_READY, SC_DRV_FAILED, SC_DRV_FORKED };

extern struct sc_driver sc_drv;

/* 0 once cuInit succeeded in this process; -ENXIO otherwise. */
int sc_ready(void);

/* ---- errors (sc_error.c) ---- */

/* The CUresult for 0 or a negative errno (CUDA_ERROR_UNKNOWN if unmapped). */
CUresult sc_result(int err);

/* ---- handle registry (sc_handle.c) ---- */

enum sc_htype {
	SC_H_CTX = 1, SC_H_STREAM, SC_H_EVENT, SC_H_MODULE, SC_H_FUNC,
	SC_H_LIBRARY, SC_H_KERNEL, SC_H_GRAPH, SC_H_EXEC, SC_H_GREEN, SC_H_DESC, SC_H_NODE,
	SC_H_ARRAY, SC_H_MIPMAP, SC_H_PHYS, SC_H_POOL,
};

struct CUctx_st;

int sc_handle_add(const void *h, enum sc_htype type, struct CUctx_st *owner);
bool sc_handle_valid(const void *h, enum sc_htype type);
bool sc_handle_del(const void *h, enum sc_htype type);
size_t sc_handle_drain(struct CUctx_st *owner, enum sc_htype type, void **out, size_t cap);

/*
 * Hardware queues (a pool recycled for the life of the process), wait
 * sets, built-in kernels, the memory registry and copies' data part are
 * shared with the other simulated drivers: src/sim/common/sf.h.
 */

/* ---- operations (sc_submit.c) ---- */

enum sc_op_kind {
	SC_OP_KERNEL = 1, SC_OP_COPY, SC_OP_MEMSET, SC_OP_HOST, SC_OP_CALLBACK,
	SC_OP_WRITE32, SC_OP_WAIT32, SC_OP_FREE,
};

/* One unit of stream work, by value: recorded by capture, run by a queue. */
struct sc_op {
	uint32_t kind;
	union {
		struct {
			const struct sf_kernel_def *def;
			uint8_t params[SF_PARAM_MAX];
			const void *func;     /* the handle launched (graph nodes report it) */
			uint32_t grid[3], block[3], shmem;
		} kernel;
		struct {
			struct sf_region r;
			void *staging;    /* owned: freed once copied */
		} copy;
		struct {
			uint8_t *dst;
			uint32_t value;
			uint32_t elem;    /* 1, 2 or 4 bytes */
			size_t n;
		} memset;
		struct {
			CUhostFn fn;
			void *data;
		} host;
		struct {
			CUstreamCallback fn;
			void *data;
			CUstream handle;
		} callback;
		struct {
			uint32_t *addr;
			uint32_t value;
			uint32_t flags;
		} value;
		struct {
			void *ptr;
		} free;
	} u;
};

void sc_op_fini(struct sc_op *op);

/* ---- contexts (sc_ctx.c) ---- */

struct CUstream_st;
struct CUgreenCtx_st;

struct CUctx_st {
	pthread_mutex_t lock;
	_Atomic bool live;
	bool primary;
	unsigned flags;
	uint64_t gen;                 /* lock; bumped by each teardown */
	_Atomic int sticky;           /* first device fault: -EIO, -EFAULT; 0 */
	struct CUstream_st *legacy;   /* lock; created on first use */
	struct CUstream_st *streams;  /* lock; user, per-thread, join and destroyed-busy */
	struct CUctx_st *next;        /* sc_drv.lock: free list */
	/* A green context's own context: the primary it came from, and it;
	 * both NULL for others. Set before the handle is published. */
	struct CUctx_st *parent;
	struct CUgreenCtx_st *green;
	struct CUstream_st *rec_join; /* lock; context-wide records (sc_green.c) */
	struct CUstream_st *wait_join;/* lock; context-wide waits: the barrier */
};

/* The context whose events and memory @c shares: its primary for a green one. */
static inline struct CUctx_st *sc_ctx_root(struct CUctx_st *c)
{
	return c->parent ? c->parent : c;
}

int sc_ctx_current(struct CUctx_st **out);
int sc_ctx_resolve(CUcontext c, struct CUctx_st **out);
void sc_ctx_fault(struct CUctx_st *ctx, int err);
int sc_ctx_sync(struct CUctx_st *ctx);
int sc_ctx_green_new(struct CUctx_st *parent, struct CUgreenCtx_st *g, struct CUctx_st **out);
void sc_ctx_green_destroy(struct CUctx_st *ctx);

/* ---- streams (sc_stream.c) ---- */

enum { SC_S_USER = 0, SC_S_LEGACY, SC_S_THREAD, SC_S_JOIN };

struct sc_capture;

struct CUstream_st {
	struct CUctx_st *ctx;
	struct sf_hwq *q;
	unsigned flags;
	int priority;
	uint8_t kind;                 /* SC_S_* */
	bool destroyed;               /* handle gone, work still pending */
	uint64_t last;                /* last seq launched through this stream */
	uint64_t legacy_seen;         /* legacy seq this stream already waits for */
	uint64_t synced;              /* own seq the legacy stream already waits for */
	uint64_t barrier_seen;        /* ctx->wait_join seq this stream already waits for */
	struct sc_capture *cap;       /* capture this stream records into */
	struct CUstream_st *next;     /* ctx->streams */
};

int sc_stream_new(struct CUctx_st *ctx, uint8_t kind, unsigned flags, int prio,
		  struct CUstream_st **out);
int sc_stream_create_in(struct CUctx_st *ctx, CUstream *out, unsigned flags, int prio);
int sc_stream_acquire(CUstream h, bool pt, struct CUstream_st **out);
void sc_stream_release(struct CUstream_st *s);
bool sc_stream_blocking(const struct CUstream_st *s);
int sc_stream_waitset(struct CUstream_st *s, struct sf_waitset *w);
void sc_stream_reap(struct CUctx_st *ctx);
void sc_stream_teardown(struct CUctx_st *ctx);
void sc_stream_thread_exit(void *table);

/* ---- submission (sc_submit.c); ctx->lock held ---- */

int sc_stream_prepare(struct CUstream_st *s);
int sc_stream_launch(struct CUstream_st *s, const struct sim_cmd *cmd, uint64_t *seq);
int sc_stream_op(struct CUstream_st *s, struct sc_op *op, uint64_t *seq);
int sc_wait_cmd(struct CUstream_st *s, struct sf_hwq *q, uint64_t seq);

/* ---- capture (sc_capture.c) ---- */

struct sc_capture {
	uint64_t id;
	int mode;
	pthread_t thread;
	struct CUstream_st *origin;
	struct CUgraph_st *graph;
	struct CUgraphNode_st *last;  /* the node captured last (the next depends on it) */
	bool invalidated;
	struct sc_capture *next;      /* active captures (capture list lock) */
};

int sc_capture_add(struct sc_capture *c, const struct sc_op *op);
void sc_capture_invalidate(struct sc_capture *c);
struct sc_capture *sc_capture_find(struct CUctx_st *ctx, uint64_t id);
void sc_capture_end(struct CUctx_st *ctx, struct sc_capture *c);
int sc_capture_unsafe(void);

/* ---- graphs (sc_graph.c, sc_gnode.c) and executable graphs (sc_gexec.c) ---- */

/*
 * A node: its type, its parameters and the nodes it depends on. Nodes
 * belong to one graph and go with it; a graph of a child-graph node
 * belongs to that node. Graph and node functions are not thread-safe for
 * one graph, as the driver's are not (the application serialises them).
 */
struct CUgraphNode_st {
	struct CUgraph_st *graph;
	int type;                     /* CU_GRAPH_NODE_TYPE_* */
	const struct CUgraphNode_st *orig; /* cloned from (compared, never dereferenced) */
	size_t ndeps, capdeps;
	struct CUgraphNode_st **deps;
	CUgraphEdgeData *edges;       /* one per dependency */
	struct sc_op op;              /* KERNEL, MEMCPY, HOST, BATCH_MEM_OP */
	void *argv[4];                /* KERNEL: kernelParams as GetParams reports them */
	CUDA_MEMCPY3D copy;           /* MEMCPY, as given */
	CUDA_MEMSET_NODE_PARAMS ms;   /* MEMSET */
	struct CUgraph_st *child;     /* GRAPH: owned */
	CUevent event;                /* EVENT_RECORD, WAIT_EVENT */
	CUdeviceptr dptr;             /* MEM_ALLOC (owned memory), MEM_FREE */
	size_t bytes;                 /* MEM_ALLOC */
};

struct CUgraph_st {
	size_t n, cap;
	struct CUgraphNode_st **nodes;  /* in creation order */
	struct CUgraphNode_st *owner;   /* the child-graph node holding it, or NULL */
};

int sc_graph_new(struct CUgraph_st **out, struct CUgraphNode_st *owner);
void sc_graph_free(struct CUgraph_st *g);
int sc_node_new(struct CUgraph_st *g, int type, const CUgraphNode *deps, size_t ndeps,
		struct CUgraphNode_st **out);
struct CUgraphNode_st *sc_node_get(CUgraphNode h);
int sc_graph_clone(const struct CUgraph_st *g, struct CUgraph_st **out,
		   struct CUgraphNode_st *owner);
int sc_graph_topo(const struct CUgraph_st *g, struct CUgraphNode_st ***out);
int sc_node_from_op(struct CUgraphNode_st *n, const struct sc_op *op);
void sc_node_fini(struct CUgraphNode_st *n);
int sc_node_copy_params(struct CUgraphNode_st *dst, const struct CUgraphNode_st *src);

/* One operation of an executable graph, in launch order. */
struct sc_xop {
	int type;                     /* CU_GRAPH_NODE_TYPE_* of its node */
	const struct CUgraphNode_st *src; /* top-level node of the instantiated graph */
	bool enabled;
	struct sc_op op;              /* KERNEL, MEMCPY, MEMSET (one row), HOST, BATCH_MEM_OP */
	CUevent event;
};

struct CUgraphExec_st {
	struct CUctx_st *ctx;
	unsigned long long flags;
	size_t n;
	struct sc_xop *v;
	size_t nshape;
	uint64_t *shape;              /* topology, compared by cuGraphExecUpdate */
	struct sf_hwq *last_q;        /* the last launch, which the next one follows */
	uint64_t last_seq;
};

int sc_node_ops(const struct CUgraphNode_st *n, const struct CUgraphNode_st *src,
		struct sc_xop **v, size_t *len, size_t *cap);
void sc_exec_free(struct CUgraphExec_st *e);

/* ---- events (sc_event.c) ---- */

struct CUevent_st {
	struct CUctx_st *ctx;
	unsigned flags;
	struct sf_hwq *q;             /* ctx->lock: last record; NULL: never */
	uint64_t seq;
	uint32_t slot;
	bool have_ts;
	uint64_t ts;
	uint64_t cap_id;              /* recorded in this capture (0: none) */
};

/* An event record: the queue, command and timestamp slot (sc_event.c). */
struct sc_evrec {
	struct sf_hwq *q;
	uint64_t seq;
	uint32_t slot;
};

int sc_event_launch(struct CUstream_st *s, CUevent ev, struct sc_evrec *rec);
void sc_event_set(CUevent ev, const struct sc_evrec *rec);

/* ---- modules (sc_module.c) ---- */

struct CUfunc_st {
	const struct sf_kernel_def *def;
};

struct CUmod_st {
	struct CUfunc_st *funcs;      /* one per built-in kernel */
};

struct CUkern_st {
	const struct sf_kernel_def *def;
	struct CUfunc_st func;        /* cuKernelGetFunction's answer */
};

struct CUlib_st {
	struct CUkern_st *kernels;    /* one per built-in kernel */
};

const struct sf_kernel_def *sc_func_def(CUfunction f);
int sc_kernel_op(CUfunction f, const unsigned dims[7], void **kernelParams, void **extra,
		 struct sc_op *op);
void sc_module_free(struct CUmod_st *m);

/* ---- copies (sc_copy.c) ---- */

int sc_copy3d_region(const CUDA_MEMCPY3D *c, struct sf_region *r);

/* ---- arrays (sc_array.c) ---- */

void sc_array_drain(struct CUctx_st *ctx);

/* ---- memory pools (sc_pool.c) ---- */

/*
 * A block of @size bytes from pool @h (NULL: the device's current pool)
 * for stream @s (acquired), reserving more of the device's memory if its
 * free reserve cannot hold it. 0, -EINVAL (no such pool) or -ENOMEM.
 */
int sc_pool_alloc(CUmemoryPool h, CUdeviceptr *dptr, size_t size, struct CUstream_st *s);
/* Marks the pool block at @base for a free, its bytes its pool's again:
 * 0, or -EINVAL (none such). */
int sc_pool_mark_freeing(void *base);
/* The free of @base ran (any thread, the executor's too): true if it was
 * a pool block (now idle, released by the next pool call). */
bool sc_pool_freed(void *base);
/* A synchronization: every pool gives back its reserve above its release
 * threshold. Application threads only. */
void sc_pool_sync(void);

/* ---- stream memory operations (sc_waitval.c) ---- */

int sc_waitval_launch(struct CUstream_st *s, const struct sc_op *op, uint64_t *seq);

#endif
