/*
 * cuGetProcAddress: how cudart (and anything written like it) obtains
 * every driver entry point. The real driver answers, with its own rules
 * for versions and per-thread-stream variants; the shim then swaps the
 * answer for its own hook when the function returned is one it hooks, so
 * the version logic is never duplicated here.
 */
#include "shim/cuda/cu_shim.h"

#include <pthread.h>
#include <string.h>

static const char *const cu_hooked[] = {
#define XS_CU_HOOKED(name) #name,
#include "shim/cuda/cu_hooks.def"
#undef XS_CU_HOOKED
#define XS_CU_FLUSH(name, arg, ptsz) #name,
#define XS_CU_TRANSLATE(name, arg, ptsz) #name,
#define XS_CU_SYNC(name, ptds) #name,
#define XS_CU_GRAPH(name, arg) #name,
#include "shim/cuda/cu_passes.def"
#undef XS_CU_FLUSH
#undef XS_CU_TRANSLATE
#undef XS_CU_SYNC
#undef XS_CU_GRAPH
};

#define CU_NHOOKED (sizeof(cu_hooked) / sizeof(cu_hooked[0]))

void *cu_self_sym(const char *name);

static void *cu_hook_real[CU_NHOOKED];  /* the driver's function of each name */
static void *cu_hook_ours[CU_NHOOKED];  /* our hook of each name */
static pthread_once_t cu_hooks_once = PTHREAD_ONCE_INIT;

static void cu_hooks_init(void)
{
	size_t i;

	for (i = 0; i < CU_NHOOKED; i++) {
		cu_hook_real[i] = cu_real_sym(cu_hooked[i]);
		cu_hook_ours[i] = cu_self_sym(cu_hooked[i]);
	}
}

void *cu_hook_for_name(const char *name)
{
	size_t i;

	pthread_once(&cu_hooks_once, cu_hooks_init);
	for (i = 0; i < CU_NHOOKED; i++)
		if (!strcmp(cu_hooked[i], name))
			return cu_hook_ours[i];
	return NULL;
}

static bool cu_is_variant(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && (!strcmp(name + n - 5, "_ptsz") || !strcmp(name + n - 5, "_ptds"));
}

void *cu_hook_for_real(void *real, const char *symbol, bool per_thread)
{
	size_t i, n = symbol ? strlen(symbol) : 0;
	void *only = NULL;
	int candidates = 0;

	pthread_once(&cu_hooks_once, cu_hooks_init);
	for (i = 0; i < CU_NHOOKED; i++)
		if (cu_hook_real[i] && cu_hook_real[i] == real)
			return cu_hook_ours[i];
	/*
	 * A driver may hand out other addresses than its exports: fall back
	 * to the name, if exactly one hooked export is that symbol's variant
	 * of the kind asked for (e.g. cuMemcpyHtoDAsync -> _v2 -> _v2_ptsz).
	 */
	for (i = 0; n && i < CU_NHOOKED; i++) {
		const char *h = cu_hooked[i], *rest = h + n;

		if (strncmp(h, symbol, n) || (*rest && *rest != '_'))
			continue;
		if (cu_is_variant(h) != per_thread)
			continue;
		if (*rest && strcmp(rest, "_v2") && strcmp(rest, "_ptsz") &&
		    strcmp(rest, "_ptds") && strcmp(rest, "_v2_ptsz") && strcmp(rest, "_v2_ptds"))
			continue;
		only = cu_hook_ours[i];
		candidates++;
	}
	return candidates == 1 ? only : NULL;
}

XS_CU_HOOK CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
					cuuint64_t flags,
					CUdriverProcAddressQueryResult *status)
{
	CUresult rc;

	if (cu_load() < 0) {
		if (pfn)
			*pfn = NULL;
		if (status)
			*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_NOT_INITIALIZED;
	}
	rc = cu_real.cuGetProcAddress_v2(symbol, pfn, version, flags, status);
	if (rc == CUDA_SUCCESS && pfn && *pfn && !cu_passthrough()) {
		void *hook = cu_hook_for_real(*pfn, symbol,
					      flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);

		if (hook)
			*pfn = hook;
	}
	return rc;
}

/* The CUDA 11.3-11.8 entry point: no query result. */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

XS_CU_HOOK CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
				     cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
