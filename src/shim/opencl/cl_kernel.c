/*
 * Kernel state for buffered launches (see cl_shim.h).
 *
 * OpenCL captures a kernel's arguments at the enqueue: the application
 * may set others right after. A launch the XQueue buffers reaches the
 * driver later, so the shim must carry the arguments of the enqueue to
 * that moment itself. A clone of the kernel (clCloneKernel) is OpenCL's
 * own way, but not one to trust: PoCL 3.1's clone points every argument
 * at its copy of the argument storage, also those set with a NULL value,
 * so that a NULL buffer argument becomes a pointer to a NULL cl_mem which
 * the enqueue dereferences (hashcat's kernels crash that way), and a
 * local-memory argument a by-value one. Drivers before OpenCL 2.1 have no
 * clone at all.
 *
 * So the shim records what the application sets, as the Level Zero shim
 * does (shim_kargs.h): every accepted clSetKernelArg (bytes, NULL for
 * local memory), clSetKernelArgSVMPointer (the pointer) and
 * clSetKernelExecInfo (the value, per parameter). A buffered launch takes
 * a snapshot of the record; right before the launch is issued the
 * snapshot is replayed onto a private kernel, created from the same
 * program under the same name (clCreateKernel) and kept in a small pool
 * per kernel, which goes back to the pool once the driver has the launch
 * (the driver captured the arguments then). A snapshot also holds a
 * reference on the application's kernel, as the driver holds one on the
 * kernel of an enqueued command, which keeps the program alive until the
 * private kernel exists. Launches the XQueue makes at once use the
 * application's kernel as it is.
 *
 * Records live from the kernel's creation (or its first argument) to the
 * application's last release, counted by the shim (the driver's count
 * includes its own references); snapshots keep theirs alive after that.
 * One mutex per hash bucket guards the chains and the records in it.
 */
#include "shim/common/shim_kargs.h"
#include "shim/opencl/guard/cl_guard.h"
#include "shim/opencl/cl_shim.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CLK_BUCKETS 128
#define CLK_SPARE 2             /* idle private kernels kept per kernel */
#define CLK_EXEC_MAX 8          /* clSetKernelExecInfo parameters recorded */

/* Tags of recorded arguments: the setter to replay them with. */
enum { CLK_VALUE, CLK_SVM };

struct clk_rec {
	struct clk_rec *next;           /* hash chain */
	cl_kernel kernel;               /* the application's */
	_Atomic int refs;               /* the table's and each snapshot's */
	int app_refs;                   /* the application's references */
	int snap_refs;                  /* snapshots' references on @kernel (bucket lock) */
	bool dead;                      /* out of the table */
	cl_program program;
	char *name;
	struct shim_kargs args;
	struct shim_kargs exec;         /* index: slot in exec_param */
	cl_kernel_exec_info exec_param[CLK_EXEC_MAX];
	cl_kernel spare[CLK_SPARE];
	uint32_t nspare;
	int32_t hidden;                 /* index of the guardian's first argument, or -1 */
	cl_program app_prog;            /* the application's program (a reference), when
					 * the kernel comes from its instrumented twin */
};

struct clk_snap {
	struct clk_rec *r;              /* a reference */
	cl_kernel app;                  /* retained */
	cl_kernel priv;                 /* once bound */
	struct shim_kargs_snap *args, *exec;
	cl_kernel_exec_info exec_param[CLK_EXEC_MAX];
};

static struct {
	pthread_mutex_t lock;
	struct clk_rec *head;
} clk_table[CLK_BUCKETS];

static pthread_once_t clk_once = PTHREAD_ONCE_INIT;

static void clk_init(void)
{
	for (int i = 0; i < CLK_BUCKETS; i++)
		pthread_mutex_init(&clk_table[i].lock, NULL);
}

static unsigned clk_hash(const void *p)
{
	uintptr_t x = (uintptr_t)p;

	pthread_once(&clk_once, clk_init);
	return (unsigned)((x >> 4) ^ (x >> 12)) % CLK_BUCKETS;
}

/* Drops the idle private kernels of @r. Its bucket locked, or unreachable. */
static void clk_drop_spares(struct clk_rec *r)
{
	while (r->nspare)
		cl_real.clReleaseKernel(r->spare[--r->nspare]);
}

static void clk_unref(struct clk_rec *r)
{
	if (atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	clk_drop_spares(r);
	if (r->app_prog)
		clReleaseProgram(r->app_prog);
	shim_kargs_fini(&r->args);
	shim_kargs_fini(&r->exec);
	free(r->name);
	free(r);
}

/* The record of @k in bucket @b (locked), or NULL. */
static struct clk_rec *clk_find(unsigned b, cl_kernel k)
{
	struct clk_rec *r;

	for (r = clk_table[b].head; r && r->kernel != k; r = r->next)
		;
	return r;
}

/* Takes @r out of bucket @b (locked); the caller drops the table's reference. */
static void clk_unlink(unsigned b, struct clk_rec *r)
{
	struct clk_rec **pp;

	for (pp = &clk_table[b].head; *pp && *pp != r; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = r->next;
	r->dead = true;
	clk_drop_spares(r);
}

/* A new record of the application's kernel @k, or NULL (out of memory). */
static struct clk_rec *clk_new(cl_kernel k)
{
	struct clk_rec *r = calloc(1, sizeof(*r));
	cl_uint nargs = 0;
	size_t len = 0;

	if (!r)
		return NULL;
	r->kernel = k;
	atomic_init(&r->refs, 1);
	r->app_refs = 1;
	r->hidden = -1;
	if (cl_real.clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL) ==
	    CL_SUCCESS) {
		if ((r->hidden = cl_guard_hidden_of(k, nargs)) >= 0)
			nargs = (cl_uint)r->hidden;
		shim_kargs_init(&r->args, nargs, true);
	} else {
		shim_kargs_init(&r->args, 0, false);
	}
	shim_kargs_init(&r->exec, 0, false);
	if (cl_real.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(r->program), &r->program,
				    NULL) != CL_SUCCESS ||
	    cl_real.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &len) != CL_SUCCESS ||
	    !len || !(r->name = malloc(len)) ||
	    cl_real.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, len, r->name, NULL) !=
		    CL_SUCCESS) {
		/* No way to make private kernels: buffered launches fail. */
		free(r->name);
		r->name = NULL;
		r->args.lost = true;
	}
	if (r->program && (r->app_prog = cl_twin_app_of(r->program)))
		cl_real.clRetainProgram(r->app_prog);
	return r;
}

/* Enters @r into the table, replacing a record left under its handle. */
static void clk_insert(struct clk_rec *r)
{
	unsigned b = clk_hash(r->kernel);
	struct clk_rec *old;

	pthread_mutex_lock(&clk_table[b].lock);
	old = clk_find(b, r->kernel);
	if (old)
		clk_unlink(b, old);
	r->next = clk_table[b].head;
	clk_table[b].head = r;
	pthread_mutex_unlock(&clk_table[b].lock);
	if (old)
		clk_unref(old);
}

/* A kernel the application just created (or cloned, from @from's record). */
static void clk_created(cl_kernel k, cl_kernel from)
{
	struct clk_rec *r = clk_new(k);

	if (!r)
		return;
	if (from) {
		unsigned b = clk_hash(from);
		struct clk_rec *src;

		/* A clone has its source's arguments and execution info. */
		pthread_mutex_lock(&clk_table[b].lock);
		src = clk_find(b, from);
		if (src) {
			if (shim_kargs_copy(&r->args, &src->args) < 0 ||
			    shim_kargs_copy(&r->exec, &src->exec) < 0)
				r->args.lost = true;
			memcpy(r->exec_param, src->exec_param, sizeof(r->exec_param));
		}
		pthread_mutex_unlock(&clk_table[b].lock);
	}
	clk_insert(r);
}

/*
 * Runs @fn on the record of @k, bucket locked, creating the record first
 * if the shim never saw @k created.
 */
static void clk_update(cl_kernel k, void (*fn)(struct clk_rec *r, const void *arg),
		       const void *arg)
{
	unsigned b = clk_hash(k);
	struct clk_rec *r, *fresh = NULL;

	pthread_mutex_lock(&clk_table[b].lock);
	r = clk_find(b, k);
	if (!r) {
		pthread_mutex_unlock(&clk_table[b].lock);
		fresh = clk_new(k);
		if (!fresh)
			return;
		pthread_mutex_lock(&clk_table[b].lock);
		r = clk_find(b, k);
		if (!r) {
			fresh->next = clk_table[b].head;
			clk_table[b].head = r = fresh;
			fresh = NULL;
		}
	}
	fn(r, arg);
	pthread_mutex_unlock(&clk_table[b].lock);
	if (fresh)
		clk_unref(fresh);
}

struct clk_set {
	cl_uint index;
	size_t size;
	const void *value;
	uint8_t tag;
};

static void clk_set_arg(struct clk_rec *r, const void *arg)
{
	const struct clk_set *s = arg;

	/* A value not recorded fails later buffered launches of the kernel. */
	(void)shim_kargs_set(&r->args, s->index, s->size, s->value, s->tag);
}

struct clk_exec {
	cl_kernel_exec_info param;
	size_t size;
	const void *value;
};

static void clk_set_exec(struct clk_rec *r, const void *arg)
{
	const struct clk_exec *e = arg;
	uint32_t i;

	for (i = 0; i < r->exec.nargs && r->exec_param[i] != e->param; i++)
		;
	if (i == CLK_EXEC_MAX) {
		r->args.lost = true;
		return;
	}
	r->exec_param[i] = e->param;
	if (shim_kargs_set(&r->exec, i, e->size, e->value, 0) < 0)
		r->args.lost = true;
}

int32_t cl_kernel_hidden(cl_kernel k, cl_program *app_prog)
{
	unsigned b;
	struct clk_rec *r;
	int32_t hidden = -1;

	if (!k)
		return -1;
	b = clk_hash(k);
	pthread_mutex_lock(&clk_table[b].lock);
	r = clk_find(b, k);
	if (r) {
		hidden = r->hidden;
		if (app_prog)
			*app_prog = r->app_prog;
	}
	pthread_mutex_unlock(&clk_table[b].lock);
	return hidden;
}

bool cl_kernel_app_holds(cl_program prog)
{
	bool holds = false;

	for (unsigned b = 0; b < CLK_BUCKETS && !holds; b++) {
		pthread_mutex_lock(&clk_table[b].lock);
		for (struct clk_rec *r = clk_table[b].head; r && !holds; r = r->next)
			holds = r->program == prog;
		pthread_mutex_unlock(&clk_table[b].lock);
	}
	return holds;
}

/* Whether @index is one of the guardian's arguments of @k (or past them). */
static bool clk_hidden_arg(cl_kernel k, cl_uint index)
{
	int32_t hidden = cl_kernel_hidden(k, NULL);

	return hidden >= 0 && index >= (cl_uint)hidden;
}

/* --- hooks ------------------------------------------------------------------ */

XS_CL_HOOK cl_kernel clCreateKernel(cl_program program, const char *name, cl_int *err)
{
	cl_kernel k;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_PROGRAM;
		return NULL;
	}
	if (!cl_passthrough())
		program = cl_twin_kernels_of(program);
	k = cl_real.clCreateKernel(program, name, err);
	if (k && !cl_passthrough())
		clk_created(k, NULL);
	return k;
}

XS_CL_HOOK cl_int clCreateKernelsInProgram(cl_program program, cl_uint n, cl_kernel *kernels,
					   cl_uint *n_ret)
{
	cl_uint made = 0;
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_PROGRAM;
	if (!cl_passthrough())
		program = cl_twin_kernels_of(program);
	rc = cl_real.clCreateKernelsInProgram(program, n, kernels, &made);
	if (rc == CL_SUCCESS && n_ret)
		*n_ret = made;
	if (rc == CL_SUCCESS && kernels && !cl_passthrough())
		for (cl_uint i = 0; i < made && i < n; i++)
			clk_created(kernels[i], NULL);
	return rc;
}

XS_CL_HOOK cl_kernel clCloneKernel(cl_kernel k, cl_int *err)
{
	cl_kernel clone;

	if (cl_load() < 0 || !cl_real.clCloneKernel) {
		if (err)
			*err = CL_INVALID_KERNEL;
		return NULL;
	}
	clone = cl_real.clCloneKernel(k, err);
	if (clone && !cl_passthrough())
		clk_created(clone, k);
	return clone;
}

XS_CL_HOOK cl_int clSetKernelArg(cl_kernel k, cl_uint index, size_t size, const void *value)
{
	struct clk_set s = { index, size, value, CLK_VALUE };
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	if (clk_hidden_arg(k, index))
		return CL_INVALID_ARG_INDEX;
	rc = cl_real.clSetKernelArg(k, index, size, value);
	if (rc == CL_SUCCESS && !cl_passthrough())
		clk_update(k, clk_set_arg, &s);
	return rc;
}

XS_CL_HOOK cl_int clSetKernelArgSVMPointer(cl_kernel k, cl_uint index, const void *value)
{
	struct clk_set s = { index, sizeof(value), &value, CLK_SVM };
	cl_int rc;

	if (cl_load() < 0 || !cl_real.clSetKernelArgSVMPointer)
		return CL_INVALID_KERNEL;
	if (clk_hidden_arg(k, index))
		return CL_INVALID_ARG_INDEX;
	rc = cl_real.clSetKernelArgSVMPointer(k, index, value);
	if (rc == CL_SUCCESS && !cl_passthrough())
		clk_update(k, clk_set_arg, &s);
	return rc;
}

XS_CL_HOOK cl_int clSetKernelExecInfo(cl_kernel k, cl_kernel_exec_info param, size_t size,
				      const void *value)
{
	struct clk_exec e = { param, size, value };
	cl_int rc;

	if (cl_load() < 0 || !cl_real.clSetKernelExecInfo)
		return CL_INVALID_KERNEL;
	rc = cl_real.clSetKernelExecInfo(k, param, size, value);
	if (rc == CL_SUCCESS && !cl_passthrough())
		clk_update(k, clk_set_exec, &e);
	return rc;
}

XS_CL_HOOK cl_int clRetainKernel(cl_kernel k)
{
	unsigned b;
	struct clk_rec *r;
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	rc = cl_real.clRetainKernel(k);
	if (rc != CL_SUCCESS || cl_passthrough())
		return rc;
	b = clk_hash(k);
	pthread_mutex_lock(&clk_table[b].lock);
	r = clk_find(b, k);
	if (r)
		r->app_refs++;
	pthread_mutex_unlock(&clk_table[b].lock);
	return rc;
}

XS_CL_HOOK cl_int clReleaseKernel(cl_kernel k)
{
	struct clk_rec *r = NULL;
	cl_uint refs = 0;
	unsigned b;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	/* An invalid handle stays the driver's to answer. */
	if (!cl_passthrough() &&
	    cl_real.clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(refs), &refs, NULL) ==
		    CL_SUCCESS) {
		b = clk_hash(k);
		pthread_mutex_lock(&clk_table[b].lock);
		r = clk_find(b, k);
		if (r && --r->app_refs == 0)
			clk_unlink(b, r);
		else
			r = NULL;
		pthread_mutex_unlock(&clk_table[b].lock);
	}
	/* Out of the table before the handle can be reused. */
	if (r)
		clk_unref(r);
	return cl_real.clReleaseKernel(k);
}

cl_int cl_kernel_app_refs(cl_kernel k, cl_uint *out)
{
	unsigned b = clk_hash(k);
	struct clk_rec *r;
	cl_uint n = 0;
	cl_int rc;

	pthread_mutex_lock(&clk_table[b].lock);
	rc = cl_real.clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(n), &n, NULL);
	r = rc == CL_SUCCESS ? clk_find(b, k) : NULL;
	if (r && n > (cl_uint)r->snap_refs)
		n -= (cl_uint)r->snap_refs;
	pthread_mutex_unlock(&clk_table[b].lock);
	*out = n;
	return rc;
}

/* --- snapshots --------------------------------------------------------------- */

cl_int cl_kernel_snapshot(cl_kernel k, struct clk_snap **out)
{
	unsigned b = clk_hash(k);
	struct clk_snap *s = calloc(1, sizeof(*s));
	struct clk_rec *r, *fresh = NULL;
	cl_int rc = CL_SUCCESS;
	int err = 0;

	if (!s)
		return CL_OUT_OF_HOST_MEMORY;
	pthread_mutex_lock(&clk_table[b].lock);
	r = clk_find(b, k);
	if (!r) {
		/* No argument ever set: fine for a kernel that has none. */
		pthread_mutex_unlock(&clk_table[b].lock);
		fresh = clk_new(k);
		pthread_mutex_lock(&clk_table[b].lock);
		r = clk_find(b, k);
		if (!r && fresh) {
			fresh->next = clk_table[b].head;
			clk_table[b].head = r = fresh;
			fresh = NULL;
		}
	}
	if (!r) {
		rc = CL_OUT_OF_HOST_MEMORY;
	} else if (!(s->args = shim_kargs_snapshot(&r->args, &err))) {
		/* As the driver answers an enqueue with an argument never set. */
		rc = err == -ENOENT ? CL_INVALID_KERNEL_ARGS : CL_OUT_OF_HOST_MEMORY;
	} else if (!(s->exec = shim_kargs_snapshot(&r->exec, &err))) {
		rc = CL_OUT_OF_HOST_MEMORY;
	} else {
		memcpy(s->exec_param, r->exec_param, sizeof(s->exec_param));
		atomic_fetch_add(&r->refs, 1);
		s->r = r;
		/* Under the lock that cl_kernel_app_refs() reads it with. */
		if (cl_real.clRetainKernel(k) == CL_SUCCESS) {
			s->app = k;
			r->snap_refs++;
		}
	}
	pthread_mutex_unlock(&clk_table[b].lock);
	if (fresh)
		clk_unref(fresh);
	if (rc != CL_SUCCESS) {
		cl_kernel_snap_free(s);
		return rc;
	}
	*out = s;
	return CL_SUCCESS;
}

/* Replays one recorded argument (shim_kargs_apply()'s callback). */
static int clk_apply_arg(void *ctx, uint32_t idx, size_t size, const void *value, uint8_t tag)
{
	cl_kernel p = ctx;

	if (tag == CLK_SVM) {
		const void *ptr;

		memcpy(&ptr, value, sizeof(ptr));
		return cl_real.clSetKernelArgSVMPointer(p, idx, ptr);
	}
	return cl_real.clSetKernelArg(p, idx, size, value);
}

struct clk_apply_exec {
	cl_kernel kernel;
	const cl_kernel_exec_info *param;
};

static int clk_apply_exec(void *ctx, uint32_t idx, size_t size, const void *value, uint8_t tag)
{
	const struct clk_apply_exec *a = ctx;

	(void)tag;
	return cl_real.clSetKernelExecInfo(a->kernel, a->param[idx], size, value);
}

cl_kernel cl_kernel_bind(struct clk_snap *s, cl_int *err)
{
	struct clk_rec *r = s->r;
	unsigned b = clk_hash(r->kernel);
	struct clk_apply_exec ex;
	cl_kernel p = NULL;
	cl_int rc;

	pthread_mutex_lock(&clk_table[b].lock);
	if (r->nspare)
		p = r->spare[--r->nspare];
	pthread_mutex_unlock(&clk_table[b].lock);
	if (!p) {
		/* The snapshot's reference on the application's kernel keeps
		 * the program built and alive. */
		rc = CL_INVALID_KERNEL;
		if (r->name)
			p = cl_real.clCreateKernel(r->program, r->name, &rc);
		if (!p) {
			*err = rc;
			return NULL;
		}
	}
	s->priv = p;
	ex.kernel = p;
	ex.param = s->exec_param;
	rc = shim_kargs_apply(s->args, clk_apply_arg, p);
	if (rc == CL_SUCCESS)
		rc = shim_kargs_apply(s->exec, clk_apply_exec, &ex);
	*err = rc;
	return rc == CL_SUCCESS ? p : NULL;
}

void cl_kernel_snap_unbind(struct clk_snap *s)
{
	struct clk_rec *r;

	if (!s || !s->priv)
		return;
	r = s->r;
	{
		unsigned b = clk_hash(r->kernel);
		bool keep;

		pthread_mutex_lock(&clk_table[b].lock);
		keep = !r->dead && r->nspare < CLK_SPARE;
		if (keep)
			r->spare[r->nspare++] = s->priv;
		pthread_mutex_unlock(&clk_table[b].lock);
		/* The driver holds its own reference for the launch. */
		if (!keep)
			cl_real.clReleaseKernel(s->priv);
	}
	s->priv = NULL;
}

/* shim_kargs_apply()'s callback: 1 for an argument holding the handle @ctx. */
static int clk_names(void *ctx, uint32_t idx, size_t size, const void *value, uint8_t tag)
{
	(void)idx;
	(void)tag;
	return size == sizeof(ctx) && value && !memcmp(value, &ctx, sizeof(ctx));
}

bool cl_kernel_snap_names(const struct clk_snap *s, const void *obj)
{
	return s->args && shim_kargs_apply(s->args, clk_names, (void *)obj) == 1;
}

void cl_kernel_snap_free(struct clk_snap *s)
{
	if (!s)
		return;
	cl_kernel_snap_unbind(s);
	if (s->app) {
		unsigned b = clk_hash(s->r->kernel);

		pthread_mutex_lock(&clk_table[b].lock);
		s->r->snap_refs--;
		cl_real.clReleaseKernel(s->app);
		pthread_mutex_unlock(&clk_table[b].lock);
	}
	if (s->r)
		clk_unref(s->r);
	free(s->args);
	free(s->exec);
	free(s);
}
