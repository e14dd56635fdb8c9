/*
 * cuGetProcAddress and cuGetExportTable of the simulated CUDA driver.
 *
 * Design: the answers come from XS_CU_PROCS (cu_api.h), the one list of
 * the driver's entry points by symbol and version, so this file holds no
 * names of its own. The library is linked with -Bsymbolic, so the
 * addresses taken here are this library's own functions even when a shim
 * that defines the same names is preloaded (FACTS.md item 7), and they
 * equal what dlsym() on this library returns.
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

static const struct sc_proc {
	const char *symbol;
	int version;
	void *fn;
	void *fn_pt;
} sc_procs[] = {
#define SC_PROC(symbol, version, fn, fn_pt) { symbol, version, (void *)fn, (void *)fn_pt },
	XS_CU_PROCS(SC_PROC)
#undef SC_PROC
};

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
	*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? best->fn_pt : best->fn;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

/*
 * Symbols are base names ("cuMemAlloc"); the answer depends on
 * @cudaVersion (XS_CU_PROCS) and on @flags (per-thread default stream
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
