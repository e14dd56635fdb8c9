/*
 * Buffered CUDA commands (see cu_cmds.h).
 *
 * Kernel parameters are copied with the layout the driver reports
 * (cuFuncGetParamInfo), cached per function: the application may reuse
 * its argument storage as soon as cuLaunchKernel returns. Pageable host
 * sources of copies are staged for the same reason; page-locked memory is
 * not (the application may not touch it before the copy completes, as
 * with the real driver).
 */
#include "shim/cuda/cu_cmds.h"
#include "shim/cuda/cu_events.h"
#include "shim/cuda/cu_evict.h"
#include "shim/common/shim_map.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* --- kernel parameter layouts -------------------------------------------- */

#define PI_MAX_PARAMS 256

struct param_info {
	struct shim_map_node node; /* first; key: f */
	CUfunction f;
	bool known;             /* the driver reported the layout */
	unsigned n;
	size_t total;           /* bytes of all values, each 8-aligned */
	size_t size[];
};

static struct shim_map pi_table = SHIM_MAP_INIT;

static struct param_info *pi_query(CUfunction f)
{
	size_t sizes[PI_MAX_PARAMS], off, size;
	struct param_info *p;
	unsigned n = 0;
	CUresult rc = CUDA_SUCCESS;

	if (!cu_real.cuFuncGetParamInfo)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	while (rc == CUDA_SUCCESS && n < PI_MAX_PARAMS) {
		rc = cu_real.cuFuncGetParamInfo(f, n, &off, &size);
		if (rc == CUDA_SUCCESS)
			sizes[n++] = size;
	}
	p = calloc(1, sizeof(*p) + n * sizeof(size_t));
	if (!p)
		return NULL;
	p->f = f;
	/* Past the last parameter the driver says INVALID_VALUE. */
	p->known = rc == CUDA_ERROR_INVALID_VALUE;
	p->n = n;
	memcpy(p->size, sizes, n * sizeof(size_t));
	for (unsigned i = 0; i < n; i++)
		p->total += (sizes[i] + 7) & ~(size_t)7;
	return p;
}

static const struct param_info *pi_get(CUfunction f)
{
	struct param_info *p, *other;

	p = (struct param_info *)shim_map_find(&pi_table, f);
	if (p)
		return p;
	p = pi_query(f);
	if (!p)
		return NULL;
	/* Another thread may have asked the driver too: keep the first. */
	other = (struct param_info *)shim_map_add(&pi_table, &p->node, f);
	if (other) {
		free(p);
		return other;
	}
	return p;
}

/* --- kernels --------------------------------------------------------------- */

enum { K_PLAIN, K_COOPERATIVE, K_EX };

struct cmd_kernel {
	struct xal_cuda_cmd c;
	int how;
	CUfunction f;
	unsigned grid[3], block[3], shmem;
	CUlaunchConfig cfg;             /* K_EX; attrs point into the blob */
	void **params;                  /* NULL: extra form */
	void *extra[5];
	size_t extra_size;
	char blob[];
};

/*
 * The memory gate around a command that may touch device memory (memory
 * preemption, cu_evict.h): @name_issue() calls @name_call() inside it.
 */
#define CMD_GATED(name)                                                            \
	static CUresult name##_issue(struct xal_cuda_cmd *c, const struct cu_fns *cu) \
	{                                                                          \
		CUresult rc_;                                                      \
		cu_evict_enter();                                                  \
		rc_ = name##_call(c, cu);                                          \
		cu_evict_leave();                                                  \
		return rc_;                                                        \
	}

static CUresult kernel_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_kernel *k = (struct cmd_kernel *)c;
	void **extra = k->params ? NULL : k->extra;

	switch (k->how) {
	case K_COOPERATIVE:
		return cu->cuLaunchCooperativeKernel(k->f, k->grid[0], k->grid[1], k->grid[2],
						     k->block[0], k->block[1], k->block[2],
						     k->shmem, c->stream, k->params);
	case K_EX:
		k->cfg.hStream = c->stream;
		return cu->cuLaunchKernelEx(&k->cfg, k->f, k->params, extra);
	default:
		return cu->cuLaunchKernel(k->f, k->grid[0], k->grid[1], k->grid[2],
					  k->block[0], k->block[1], k->block[2], k->shmem,
					  c->stream, k->params, extra);
	}
}

CMD_GATED(kernel)

static const struct xal_cuda_cmd_ops kernel_ops = { .issue = kernel_issue };

/* Size of the extra[] buffer argument, or 0 if malformed. */
static size_t extra_buffer(void **extra, void **buf)
{
	size_t size = 0, i;

	*buf = NULL;
	for (i = 0; extra[i] != CU_LAUNCH_PARAM_END && i < 8; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			*buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = *(size_t *)extra[i + 1];
		else
			return 0;
	}
	return *buf ? size : 0;
}

bool cmd_kernel_args_valid(CUfunction f, void **params, void **extra)
{
	const struct param_info *pi;
	void *buf;

	if (params && extra)
		return false;
	if (extra)
		return extra_buffer(extra, &buf) != 0;
	pi = pi_get(f);
	if (!pi || !pi->known)
		return true;
	return params || pi->n == 0;
}

/*
 * Allocates a kernel command with room for @attrs_size bytes of launch
 * attributes and the parameters, and copies the parameters in.
 */
static struct cmd_kernel *kernel_alloc(CUfunction f, void **params, void **extra,
				       size_t attrs_size)
{
	const struct param_info *pi = NULL;
	struct cmd_kernel *k;
	void *buf = NULL;
	size_t bytes;

	if (params) {
		pi = pi_get(f);
		if (!pi || !pi->known)
			return NULL;
		bytes = pi->total + pi->n * sizeof(void *);
	} else if (extra) {
		bytes = extra_buffer(extra, &buf);
		if (!bytes)
			return NULL;
	} else {
		bytes = 0;
	}
	k = calloc(1, sizeof(*k) + attrs_size + bytes + 8);
	if (!k)
		return NULL;
	k->f = f;
	if (params) {
		char *vals = k->blob + attrs_size;
		size_t off = 0;

		k->params = (void **)(vals + pi->total);
		for (unsigned i = 0; i < pi->n; i++) {
			memcpy(vals + off, params[i], pi->size[i]);
			k->params[i] = vals + off;
			off += (pi->size[i] + 7) & ~(size_t)7;
		}
		if (!pi->n)
			k->params = (void **)vals;
	} else if (extra) {
		k->extra_size = bytes;
		memcpy(k->blob + attrs_size, buf, bytes);
		k->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		k->extra[1] = k->blob + attrs_size;
		k->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		k->extra[3] = &k->extra_size;
		k->extra[4] = CU_LAUNCH_PARAM_END;
	}
	return k;
}

struct xal_cuda_cmd *cmd_kernel(struct cs_stream *s, CUfunction f, const unsigned grid[3],
				const unsigned block[3], unsigned shmem,
				void **params, void **extra, bool cooperative)
{
	struct cmd_kernel *k = kernel_alloc(f, params, extra, 0);

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &kernel_ops, s->cuctx, s->real, XAL_CMD_KERNEL,
			  (uint64_t)(uintptr_t)f);
	k->how = cooperative ? K_COOPERATIVE : K_PLAIN;
	memcpy(k->grid, grid, sizeof(k->grid));
	memcpy(k->block, block, sizeof(k->block));
	k->shmem = shmem;
	return &k->c;
}

struct xal_cuda_cmd *cmd_kernel_ex(struct cs_stream *s, const CUlaunchConfig *cfg,
				   CUfunction f, void **params, void **extra)
{
	size_t attrs = cfg->numAttrs * sizeof(CUlaunchAttribute);
	struct cmd_kernel *k = kernel_alloc(f, params, extra, attrs);

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &kernel_ops, s->cuctx, s->real, XAL_CMD_KERNEL,
			  (uint64_t)(uintptr_t)f);
	k->how = K_EX;
	k->cfg = *cfg;
	if (attrs) {
		memcpy(k->blob, cfg->attrs, attrs);
		k->cfg.attrs = (CUlaunchAttribute *)(void *)k->blob;
	}
	return &k->c;
}

/* --- copies and memsets ------------------------------------------------------- */

bool cu_mem_registered(const void *p)
{
	CUmemorytype type = 0;

	return cu_real.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					     (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS;
}

struct cmd_copy {
	struct xal_cuda_cmd c;
	CUdeviceptr dst, src;
	void *stage;
	size_t n;
};

static CUresult copy_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_copy *k = (struct cmd_copy *)c;

	return cu->cuMemcpyAsync(k->dst, k->stage ? (CUdeviceptr)(uintptr_t)k->stage : k->src,
				 k->n, c->stream);
}

static void copy_fini(struct xal_cuda_cmd *c)
{
	free(((struct cmd_copy *)c)->stage);
}

CMD_GATED(copy)

static const struct xal_cuda_cmd_ops copy_ops = { .issue = copy_issue, .fini = copy_fini };

struct xal_cuda_cmd *cmd_copy(struct cs_stream *s, CUdeviceptr dst, CUdeviceptr src,
			      const void *host_src, size_t n)
{
	struct cmd_copy *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &copy_ops, s->cuctx, s->real, XAL_CMD_COPY, n);
	k->dst = dst;
	k->src = src;
	k->n = n;
	if (host_src && n && !cu_mem_registered(host_src)) {
		k->stage = malloc(n);
		if (!k->stage) {
			free(k);
			return NULL;
		}
		memcpy(k->stage, host_src, n);
	}
	return &k->c;
}

/* A 2D or 3D copy: the descriptor is copied into the command. */
struct cmd_copydesc {
	struct xal_cuda_cmd c;
	union {
		CUDA_MEMCPY2D d2;
		CUDA_MEMCPY3D d3;
	} p;
};

static CUresult copy2d_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	return cu->cuMemcpy2DAsync_v2(&((struct cmd_copydesc *)c)->p.d2, c->stream);
}

static CUresult copy3d_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	return cu->cuMemcpy3DAsync_v2(&((struct cmd_copydesc *)c)->p.d3, c->stream);
}

CMD_GATED(copy2d)
CMD_GATED(copy3d)

static const struct xal_cuda_cmd_ops copy2d_ops = { .issue = copy2d_issue };
static const struct xal_cuda_cmd_ops copy3d_ops = { .issue = copy3d_issue };

/*
 * A copy whose host sides (if any) the driver knows, or NULL: host memory
 * the driver does not know needs the caller's semantics (the caller then
 * goes to the driver itself).
 */
static struct xal_cuda_cmd *cmd_copydesc(struct cs_stream *s, const struct xal_cuda_cmd_ops *ops,
					 const void *desc, size_t len, uint64_t bytes,
					 CUmemorytype src_type, const void *src_host,
					 CUmemorytype dst_type, const void *dst_host)
{
	struct cmd_copydesc *k;

	if ((src_type == CU_MEMORYTYPE_HOST && !cu_mem_registered(src_host)) ||
	    (dst_type == CU_MEMORYTYPE_HOST && !cu_mem_registered(dst_host)))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, ops, s->cuctx, s->real, XAL_CMD_COPY, bytes);
	memcpy(&k->p, desc, len);
	return &k->c;
}

struct xal_cuda_cmd *cmd_copy2d(struct cs_stream *s, const CUDA_MEMCPY2D *p)
{
	return cmd_copydesc(s, &copy2d_ops, p, sizeof(*p), p->WidthInBytes * p->Height,
			    p->srcMemoryType, p->srcHost, p->dstMemoryType, p->dstHost);
}

struct xal_cuda_cmd *cmd_copy3d(struct cs_stream *s, const CUDA_MEMCPY3D *p)
{
	return cmd_copydesc(s, &copy3d_ops, p, sizeof(*p),
			    p->WidthInBytes * p->Height * p->Depth, p->srcMemoryType, p->srcHost,
			    p->dstMemoryType, p->dstHost);
}

struct cmd_memset {
	struct xal_cuda_cmd c;
	CUdeviceptr dst;
	unsigned value, elem;
	size_t n;
};

static CUresult memset_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_memset *k = (struct cmd_memset *)c;

	if (k->elem == 4)
		return cu->cuMemsetD32Async(k->dst, k->value, k->n, c->stream);
	return cu->cuMemsetD8Async(k->dst, (unsigned char)k->value, k->n, c->stream);
}

CMD_GATED(memset)

static const struct xal_cuda_cmd_ops memset_ops = { .issue = memset_issue };

struct xal_cuda_cmd *cmd_memset(struct cs_stream *s, CUdeviceptr dst, unsigned value,
				size_t n, unsigned elem)
{
	struct cmd_memset *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &memset_ops, s->cuctx, s->real, XAL_CMD_MEMSET, n * elem);
	k->dst = dst;
	k->value = value;
	k->n = n;
	k->elem = elem;
	return &k->c;
}

/* --- host functions, events, memory, values ----------------------------------- */

struct cmd_host {
	struct xal_cuda_cmd c;
	CUhostFn fn;
	CUstreamCallback cb;
	void *data;
	unsigned flags;
};

static CUresult host_issue(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_host *k = (struct cmd_host *)c;

	if (k->cb)
		return cu->cuStreamAddCallback(c->stream, k->cb, k->data, k->flags);
	return cu->cuLaunchHostFunc(c->stream, k->fn, k->data);
}

static const struct xal_cuda_cmd_ops host_ops = { .issue = host_issue };

static struct xal_cuda_cmd *host_cmd(struct cs_stream *s, CUhostFn fn, CUstreamCallback cb,
				     void *data, unsigned flags)
{
	struct cmd_host *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &host_ops, s->cuctx, s->real, XAL_CMD_HOST_FUNC,
			  (uint64_t)(uintptr_t)(fn ? (void *)fn : (void *)cb));
	k->fn = fn;
	k->cb = cb;
	k->data = data;
	k->flags = flags;
	return &k->c;
}

struct xal_cuda_cmd *cmd_host_fn(struct cs_stream *s, CUhostFn fn, void *data)
{
	return host_cmd(s, fn, NULL, data, 0);
}

struct xal_cuda_cmd *cmd_callback(struct cs_stream *s, CUstreamCallback cb, void *data,
				  unsigned flags)
{
	return host_cmd(s, NULL, cb, data, flags);
}

struct cmd_event {
	struct xal_cuda_cmd c;
	CUevent ev;
	unsigned flags;
	bool with_flags;
	/* wait: the queue and command recording the event */
	struct cs_queue *rec_q;
	uint64_t rec_seq;
	struct cs_queue *own_q;
};

static CUresult record_issue(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_event *k = (struct cmd_event *)c;

	if (k->with_flags)
		return cu->cuEventRecordWithFlags(k->ev, c->stream, k->flags);
	return cu->cuEventRecord(k->ev, c->stream);
}

static const struct xal_cuda_cmd_ops record_ops = { .issue = record_issue };

struct xal_cuda_cmd *cmd_event_record(struct cs_stream *s, CUevent ev, unsigned flags,
				      bool with_flags)
{
	struct cmd_event *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &record_ops, s->cuctx, s->real, XAL_CMD_EVENT, 0);
	k->ev = ev;
	k->flags = flags;
	k->with_flags = with_flags;
	return &k->c;
}

static CUresult wait_issue(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_event *k = (struct cmd_event *)c;

	return cu->cuStreamWaitEvent(c->stream, k->ev, k->flags);
}

/*
 * The wait may reach the driver only after the record it waits for did,
 * or the driver would wait for an older record of the event.
 */
static void *wait_blocked_on(struct xal_cuda_cmd *c)
{
	struct cmd_event *k = (struct cmd_event *)c;

	if (!k->rec_q || k->rec_q == k->own_q || xq_launched(k->rec_q->xq) >= k->rec_seq)
		return NULL;
	return k->rec_q->xq;
}

static const struct xal_cuda_cmd_ops wait_ops = {
	.issue = wait_issue,
	.blocked_on = wait_blocked_on,
};

struct xal_cuda_cmd *cmd_wait_event(struct cs_stream *s, CUevent ev, unsigned flags)
{
	struct cmd_event *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &wait_ops, s->cuctx, s->real, XAL_CMD_OTHER, 0);
	k->ev = ev;
	k->flags = flags;
	k->own_q = s->q;
	if (!ev_last(ev, &k->rec_q, &k->rec_seq))
		k->rec_q = NULL;
	return &k->c;
}

struct cmd_misc {
	struct xal_cuda_cmd c;
	int what;
	CUdeviceptr p;
	size_t n;
	CUmemLocation loc;
	unsigned flags;
	cuuint32_t value;
};

enum { M_FREE, M_PREFETCH, M_WRITE32, M_WAIT32 };

static CUresult misc_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_misc *k = (struct cmd_misc *)c;

	switch (k->what) {
	case M_FREE:
		return cu->cuMemFreeAsync(k->p, c->stream);
	case M_PREFETCH:
		return cu->cuMemPrefetchAsync_v2(k->p, k->n, k->loc, k->flags, c->stream);
	case M_WRITE32:
		return cu->cuStreamWriteValue32_v2(c->stream, k->p, k->value, k->flags);
	default:
		return cu->cuStreamWaitValue32_v2(c->stream, k->p, k->value, k->flags);
	}
}

CMD_GATED(misc)

static const struct xal_cuda_cmd_ops misc_ops = { .issue = misc_issue };

static struct cmd_misc *misc_cmd(struct cs_stream *s, int what, uint32_t kind)
{
	struct cmd_misc *k = calloc(1, sizeof(*k));

	if (k) {
		xal_cuda_cmd_init(&k->c, &misc_ops, s->cuctx, s->real, kind, (uint64_t)what);
		k->what = what;
	}
	return k;
}

struct xal_cuda_cmd *cmd_free_async(struct cs_stream *s, CUdeviceptr p)
{
	struct cmd_misc *k = misc_cmd(s, M_FREE, XAL_CMD_OTHER);

	if (!k)
		return NULL;
	k->p = p;
	return &k->c;
}

struct xal_cuda_cmd *cmd_prefetch(struct cs_stream *s, CUdeviceptr p, size_t n,
				  CUmemLocation loc, unsigned flags)
{
	struct cmd_misc *k = misc_cmd(s, M_PREFETCH, XAL_CMD_COPY);

	if (!k)
		return NULL;
	k->p = p;
	k->n = n;
	k->loc = loc;
	k->flags = flags;
	return &k->c;
}

struct xal_cuda_cmd *cmd_value32(struct cs_stream *s, CUdeviceptr addr, cuuint32_t value,
				 unsigned flags, bool wait)
{
	struct cmd_misc *k = misc_cmd(s, wait ? M_WAIT32 : M_WRITE32, XAL_CMD_OTHER);

	if (!k)
		return NULL;
	k->p = addr;
	k->value = value;
	k->flags = flags;
	return &k->c;
}
