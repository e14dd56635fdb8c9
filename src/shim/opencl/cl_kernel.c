/*
 * What the shim knows of kernel arguments (see cl_shim.h).
 *
 * A buffered launch runs a clone of the application's kernel, made at the
 * enqueue. Two things are not visible from a clone: whether every argument
 * was set (the driver refuses a launch with CL_INVALID_KERNEL_ARGS at the
 * enqueue, which the application must still get), and local-memory
 * arguments, which some drivers do not carry over to a clone (PoCL 3.1
 * reads past a buffer). So clSetKernelArg is watched: a record per kernel
 * holds which arguments are set and the sizes of the local ones.
 *
 * Records are created by the first successful set and dropped with the
 * application's last reference to the kernel (its handle may be reused).
 * One mutex per hash bucket; the hooks cost one uncontended lock.
 */
#include "shim/opencl/cl_shim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CLK_BUCKETS 128
#define CLK_TRACKED 64          /* arguments beyond are assumed set */

struct clk_local {
	cl_uint index;
	size_t size;
};

struct clk_rec {
	struct clk_rec *next;
	cl_kernel kernel;
	cl_uint nargs;
	uint64_t set;                   /* bit i: argument i set */
	struct clk_local *local;
	size_t nlocal;
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

	return (unsigned)((x >> 4) ^ (x >> 12)) % CLK_BUCKETS;
}

/* The record of @k in bucket @b (locked), created if @create. */
static struct clk_rec *clk_find(unsigned b, cl_kernel k, bool create)
{
	struct clk_rec *r;

	for (r = clk_table[b].head; r && r->kernel != k; r = r->next)
		;
	if (r || !create)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->kernel = k;
	if (cl_real.clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(r->nargs), &r->nargs, NULL))
		r->nargs = 0;
	r->next = clk_table[b].head;
	clk_table[b].head = r;
	return r;
}

static void clk_note(cl_kernel k, cl_uint index, size_t size, bool local)
{
	unsigned b = clk_hash(k);
	struct clk_rec *r;

	pthread_once(&clk_once, clk_init);
	pthread_mutex_lock(&clk_table[b].lock);
	r = clk_find(b, k, true);
	if (r) {
		size_t i;

		if (index < CLK_TRACKED)
			r->set |= 1ull << index;
		for (i = 0; i < r->nlocal && r->local[i].index != index; i++)
			;
		if (local && i == r->nlocal) {
			struct clk_local *grown = realloc(r->local, (i + 1) * sizeof(*grown));

			if (grown) {
				r->local = grown;
				r->nlocal++;
			} else {
				i = SIZE_MAX;
			}
		}
		if (i < r->nlocal) {
			if (local) {
				r->local[i].index = index;
				r->local[i].size = size;
			} else {
				/* No longer a local argument. */
				r->local[i] = r->local[--r->nlocal];
			}
		}
	}
	pthread_mutex_unlock(&clk_table[b].lock);
}

XS_CL_HOOK cl_int clSetKernelArg(cl_kernel k, cl_uint index, size_t size, const void *value)
{
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	rc = cl_real.clSetKernelArg(k, index, size, value);
	if (rc == CL_SUCCESS && !cl_passthrough())
		clk_note(k, index, size, value == NULL);
	return rc;
}

XS_CL_HOOK cl_int clSetKernelArgSVMPointer(cl_kernel k, cl_uint index, const void *value)
{
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	rc = cl_real.clSetKernelArgSVMPointer(k, index, value);
	if (rc == CL_SUCCESS && !cl_passthrough())
		clk_note(k, index, 0, false);
	return rc;
}

/* Copies @from's record to @to (an application's clone inherits its arguments). */
static void clk_copy(cl_kernel from, cl_kernel to)
{
	unsigned bf = clk_hash(from), bt = clk_hash(to);
	struct clk_rec snap = { 0 }, *r;
	struct clk_local *local = NULL;

	pthread_once(&clk_once, clk_init);
	pthread_mutex_lock(&clk_table[bf].lock);
	r = clk_find(bf, from, false);
	if (r) {
		snap = *r;
		local = snap.nlocal ? malloc(snap.nlocal * sizeof(*local)) : NULL;
		if (local)
			memcpy(local, r->local, snap.nlocal * sizeof(*local));
		else
			snap.nlocal = 0;
	}
	pthread_mutex_unlock(&clk_table[bf].lock);
	if (!r)
		return;
	pthread_mutex_lock(&clk_table[bt].lock);
	r = clk_find(bt, to, true);
	if (r) {
		free(r->local);
		r->set = snap.set;
		r->local = local;
		r->nlocal = snap.nlocal;
		local = NULL;
	}
	pthread_mutex_unlock(&clk_table[bt].lock);
	free(local);
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
		clk_copy(k, clone);
	return clone;
}

XS_CL_HOOK cl_int clReleaseKernel(cl_kernel k)
{
	cl_uint refs = 0;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	if (cl_real.clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(refs), &refs, NULL) ==
		    CL_SUCCESS && refs == 1) {
		unsigned b = clk_hash(k);
		struct clk_rec **pp, *r = NULL;

		pthread_once(&clk_once, clk_init);
		pthread_mutex_lock(&clk_table[b].lock);
		for (pp = &clk_table[b].head; *pp && (*pp)->kernel != k; pp = &(*pp)->next)
			;
		if (*pp) {
			r = *pp;
			*pp = r->next;
		}
		pthread_mutex_unlock(&clk_table[b].lock);
		if (r) {
			free(r->local);
			free(r);
		}
	}
	return cl_real.clReleaseKernel(k);
}

cl_int cl_kernel_prepare(cl_kernel k, cl_kernel clone)
{
	unsigned b = clk_hash(k);
	struct clk_rec *r;
	cl_uint nargs = 0;
	cl_int rc = CL_SUCCESS;

	pthread_once(&clk_once, clk_init);
	pthread_mutex_lock(&clk_table[b].lock);
	r = clk_find(b, k, false);
	if (r) {
		nargs = r->nargs;
		for (cl_uint i = 0; i < nargs && i < CLK_TRACKED; i++)
			if (!(r->set & (1ull << i)))
				rc = CL_INVALID_KERNEL_ARGS;
		for (size_t i = 0; clone && rc == CL_SUCCESS && i < r->nlocal; i++)
			cl_real.clSetKernelArg(clone, r->local[i].index, r->local[i].size, NULL);
	}
	pthread_mutex_unlock(&clk_table[b].lock);
	if (!r && cl_real.clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL) ==
			  CL_SUCCESS && nargs)
		rc = CL_INVALID_KERNEL_ARGS;
	return rc;
}
