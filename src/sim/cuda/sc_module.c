/*
 * Modules, libraries, functions and kernels of the simulated CUDA driver.
 *
 * Design: the simulated device runs only its built-in kernels
 * (sf_kernels.c), so loading accepts any image and every module or
 * library offers all of them by name. A module belongs to the current
 * context and holds one function handle per built-in kernel; a library is
 * context-independent and holds one kernel handle per built-in, each with
 * the function handle cuKernelGetFunction returns. As with the real
 * driver, a CUkernel is accepted wherever a CUfunction is (cudart's <<<>>>
 * launches pass one).
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* The kernel behind a function or kernel handle, or NULL if neither. */
const struct sf_kernel_def *sc_func_def(CUfunction f)
{
	if (sc_handle_valid(f, SC_H_FUNC))
		return f->def;
	if (sc_handle_valid(f, SC_H_KERNEL))
		return ((CUkernel)(void *)f)->def;
	return NULL;
}

/* Unregisters and frees module @m and its function handles. */
void sc_module_free(struct CUmod_st *m)
{
	size_t i;

	for (i = 0; i < sf_nkernels; i++)
		sc_handle_del(&m->funcs[i], SC_H_FUNC);
	free(m->funcs);
	free(m);
}

static int sc_module_new(struct CUctx_st *ctx, CUmodule *out)
{
	struct CUmod_st *m = calloc(1, sizeof(*m));
	size_t i, n = 0;
	int rc = -ENOMEM;

	if (!m)
		return -ENOMEM;
	m->funcs = calloc(sf_nkernels, sizeof(*m->funcs));
	if (!m->funcs)
		goto fail;
	for (n = 0; n < sf_nkernels; n++) {
		m->funcs[n].def = &sf_kernels[n];
		rc = sc_handle_add(&m->funcs[n], SC_H_FUNC, NULL);
		if (rc < 0)
			goto fail;
	}
	rc = sc_handle_add(m, SC_H_MODULE, ctx);
	if (rc < 0)
		goto fail;
	*out = m;
	return 0;
fail:
	for (i = 0; i < n; i++)
		sc_handle_del(&m->funcs[i], SC_H_FUNC);
	free(m->funcs);
	free(m);
	return rc;
}

/* Any non-NULL image loads: the device runs its built-in kernels. */
SC_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	struct CUctx_st *ctx;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	return sc_result(sc_module_new(ctx, module));
}

/* The file must exist and be readable; its content is not used. */
SC_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	struct CUctx_st *ctx;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	if (access(fname, R_OK) != 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	return sc_result(sc_module_new(ctx, module));
}

SC_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	const struct sf_kernel_def *k;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc_handle_valid(hmod, SC_H_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	k = sf_kernel_find(name);
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	*hfunc = &hmod->funcs[k - sf_kernels];
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(hmod, SC_H_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	sc_module_free(hmod);
	return CUDA_SUCCESS;
}

static void sc_library_free(struct CUlib_st *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		sc_handle_del(&l->kernels[i], SC_H_KERNEL);
		sc_handle_del(&l->kernels[i].func, SC_H_FUNC);
	}
	free(l->kernels);
	free(l);
}

/* Any non-NULL code loads; JIT and library options are ignored. */
SC_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
				     CUjit_option *jitOptions, void **jitOptionsValues,
				     unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				     void **libraryOptionValues, unsigned int numLibraryOptions)
{
	struct CUlib_st *l;
	size_t n;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (l)
		l->kernels = calloc(sf_nkernels, sizeof(*l->kernels));
	if (!l || !l->kernels) {
		free(l);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (n = 0; n < sf_nkernels; n++) {
		struct CUkern_st *k = &l->kernels[n];

		k->def = &sf_kernels[n];
		k->func.def = k->def;
		rc = sc_handle_add(k, SC_H_KERNEL, NULL);
		if (rc == 0 && (rc = sc_handle_add(&k->func, SC_H_FUNC, NULL)) < 0)
			sc_handle_del(k, SC_H_KERNEL);
		if (rc < 0)
			break;
	}
	if (rc == 0)
		rc = sc_handle_add(l, SC_H_LIBRARY, NULL);
	if (rc < 0) {
		sc_library_free(l, n);
		return sc_result(rc);
	}
	*library = l;
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	const struct sf_kernel_def *k;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc_handle_valid(library, SC_H_LIBRARY))
		return CUDA_ERROR_INVALID_HANDLE;
	k = sf_kernel_find(name);
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	*pKernel = &library->kernels[k - sf_kernels];
	return CUDA_SUCCESS;
}

SC_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	if (!sc_handle_del(library, SC_H_LIBRARY))
		return CUDA_ERROR_INVALID_HANDLE;
	sc_library_free(library, sf_nkernels);
	return CUDA_SUCCESS;
}

/* The function of @kernel in the current context (one per kernel here). */
SC_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	struct CUctx_st *ctx;
	int rc = sc_ctx_current(&ctx);

	if (rc < 0)
		return sc_result(rc);
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc_handle_valid(kernel, SC_H_KERNEL))
		return CUDA_ERROR_INVALID_HANDLE;
	*pFunc = &kernel->func;
	return CUDA_SUCCESS;
}

/* Offset and size of parameter @paramIndex; INVALID_VALUE past the last. */
SC_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
				      size_t *paramSize)
{
	const struct sf_kernel_def *k;
	int rc = sc_ready();

	if (rc < 0)
		return sc_result(rc);
	k = sc_func_def(func);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!paramOffset || !paramSize || paramIndex >= k->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*paramOffset = k->offset[paramIndex];
	*paramSize = k->size[paramIndex];
	return CUDA_SUCCESS;
}
