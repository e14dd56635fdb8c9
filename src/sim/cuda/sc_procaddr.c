/*
 * cuGetProcAddress and cuGetExportTable of the simulated CUDA driver.
 *
 * Design: the answers come from the routes of cu_functions.def, the one
 * list of the driver's entry points, so this file holds no names of its
 * own: the XS_CU_FN rows and aliases by symbol and first version, and for a
 * per-thread request the XS_CU_FN_PT variant of the function found, if it
 * has one. The library is linked with -Bsymbolic, so the addresses taken
 * here are this library's own functions even when a shim that defines the
 * same names is preloaded (FACTS.md item 7), and they equal what dlsym()
 * on this library returns.
 *
 * cudart's private export tables are not implemented: cuGetExportTable
 * fails with CUDA_ERROR_NOT_SUPPORTED for them, so programs built with
 * nvcc against cudart cannot run on the simulated driver; driver-API
 * programs can, including those that find the driver the way cudart does
 * (dlopen, then cuGetProcAddress for everything). The one table it has is
 * its own (sc_private.h), which plays the part of those for shim tests.
 */
#include "sim/cuda/sc_internal.h"
#include "sim/cuda/sc_private.h"

#include <string.h>

/* cuGetProcAddress(symbol) from version on answers fn. */
static const struct sc_proc {
	const char *symbol;
	int version;
	void *fn;
} sc_procs[] = {
#define XS_CU_FN(name, how, arg, symbol, version, params) { #symbol, version, (void *)name },
#define XS_CU_ALIAS(symbol, version, name) { #symbol, version, (void *)name },
#include "vendor/cuda/cu_functions.def"
};

/* The per-thread variant of each function that has one. */
static const struct sc_variant {
	void *base, *fn;
} sc_variants[] = {
#define XS_CU_FN_PT(name, how, arg, symbol, version, pt, base) { (void *)base, (void *)name },
#include "vendor/cuda/cu_functions.def"
};

static void *sc_per_thread(void *fn)
{
	size_t i;

	for (i = 0; i < sizeof(sc_variants) / sizeof(sc_variants[0]); i++)
		if (sc_variants[i].base == fn)
			return sc_variants[i].fn;
	return fn;
}

static CUresult sc_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			CUdriverProcAddressQueryResult *status)
{
	const struct sc_proc *best = NULL;
	bool known = false;
	size_t i;

	if (!symbol || !pfn ||
	    (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(sc_procs) / sizeof(sc_procs[0]); i++) {
		const struct sc_proc *p = &sc_procs[i];

		if (strcmp(p->symbol, symbol))
			continue;
		known = true;
		if (p->version <= cudaVersion && (!best || p->version > best->version))
			best = p;
	}
	*pfn = NULL;
	if (!best) {
		if (status)
			*status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
					  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? sc_per_thread(best->fn) :
									 best->fn;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

/*
 * Symbols are base names ("cuMemAlloc"); the answer depends on
 * @cudaVersion (the rows' routes) and on @flags (per-thread default stream
 * variants). Needs no cuInit: it is how cudart finds cuInit.
 */
SC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				       cuuint64_t flags,
				       CUdriverProcAddressQueryResult *symbolStatus)
{
	return sc_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* The CUDA 11.3-11.8 entry point: no query result. */
SC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				    cuuint64_t flags)
{
	return sc_proc(symbol, pfn, cudaVersion, flags, NULL);
}

static const struct sc_private_table sc_private = {
	.size = sizeof(struct sc_private_table),
	.stream_create = cuStreamCreateWithPriority,
	.event_create = cuEventCreate,
};

SC_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	static const CUuuid private_id = SC_PRIVATE_TABLE_ID;

	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	if (!memcmp(pExportTableId->bytes, private_id.bytes, sizeof(private_id.bytes))) {
		*ppExportTable = &sc_private;
		return CUDA_SUCCESS;
	}
	*ppExportTable = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}
