/*
 * cuGetProcAddress: how cudart (and anything written like it) obtains
 * every driver entry point. The real driver answers, with its own rules
 * for versions and per-thread-stream variants; the shim then swaps the
 * answer for its own entry point when the function returned is one it
 * hooks, so the version logic is never duplicated here.
 *
 * Recognising the function returned: the driver may answer with its
 * export of that name or with an internal address. So, once, for every
 * hooked row (cu_hooktab.h) the shim notes both the driver's export of the
 * row's name and the driver's own cuGetProcAddress answer for the row's
 * route (its symbol at its first version, with the per-thread flag for a
 * per-thread row); an answer that is either is the row's function. Where
 * two rows share an address, the one asked with the caller's per-thread
 * flag, then for the caller's symbol, then at the highest version not
 * above the caller's wins.
 */
#include "shim/cuda/cu_hooktab.h"
#include "shim/cuda/cu_shim.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Per row of cu_hooked[]: the driver's export and its route's answer. */
static void **cu_real_export;
static void **cu_real_route;
static pthread_once_t cu_hooks_once = PTHREAD_ONCE_INIT;

static void cu_hooks_init(void)
{
	size_t i;

	cu_real_export = calloc(cu_nhooked, sizeof(void *));
	cu_real_route = calloc(cu_nhooked, sizeof(void *));
	if (!cu_real_export || !cu_real_route) {
		free(cu_real_export);
		free(cu_real_route);
		cu_real_export = cu_real_route = NULL;
		return;
	}
	cu_enter_driver();
	for (i = 0; i < cu_nhooked; i++) {
		const struct cu_hooked *h = &cu_hooked[i];
		cuuint64_t flags = h->per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
		void *fn = NULL;

		cu_real_export[i] = cu_real_sym(h->name);
		if (cu_real.cuGetProcAddress_v2 &&
		    cu_real.cuGetProcAddress_v2(h->symbol, &fn, h->version, flags, NULL) ==
			    CUDA_SUCCESS)
			cu_real_route[i] = fn;
	}
	cu_leave_driver();
}

/* How well row @h fits a request for @symbol at @version (higher: better). */
static int64_t cu_fit(const struct cu_hooked *h, const char *symbol, int version,
		   bool per_thread)
{
	int64_t fit = 0;

	if (h->per_thread == per_thread)
		fit += (int64_t)4 << 32;
	if (symbol && !strcmp(h->symbol, symbol)) {
		fit += (int64_t)2 << 32;
		if (h->version <= version)
			fit += ((int64_t)1 << 32) + h->version;
	}
	return fit;
}

void *cu_hook_for_real(void *real, const char *symbol, int version, bool per_thread)
{
	const struct cu_hooked *best = NULL;
	int64_t best_fit = -1;
	size_t i;

	pthread_once(&cu_hooks_once, cu_hooks_init);
	if (!real || !cu_real_export)
		return NULL;
	for (i = 0; i < cu_nhooked; i++) {
		int64_t fit;

		if (cu_real_export[i] != real && cu_real_route[i] != real)
			continue;
		fit = cu_fit(&cu_hooked[i], symbol, version, per_thread);
		if (fit > best_fit) {
			best = &cu_hooked[i];
			best_fit = fit;
		}
	}
	return best ? best->hook : NULL;
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
		void *hook = cu_hook_for_real(*pfn, symbol, version,
					      flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);

		if (hook)
			*pfn = hook;
	}
	return rc;
}

/* The CUDA 11.3-11.8 entry point: no query result. */
XS_CU_HOOK CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
				     cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
