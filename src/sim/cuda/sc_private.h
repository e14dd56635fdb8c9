/*
 * The simulated CUDA driver's private export table, for programs that
 * test a shim: cuGetExportTable(&t, &id) with id SC_PRIVATE_TABLE_ID gives
 * a struct sc_private_table. It stands for the private tables through
 * which NVIDIA's runtime reaches the driver without cuGetProcAddress (a
 * shim passes cuGetExportTable through untouched, so it sees what is made
 * through them only when it is used): streams and events made here are
 * ones the shim never saw created.
 */
#ifndef XS_SC_PRIVATE_H
#define XS_SC_PRIVATE_H

#include "vendor/cuda/cu_api.h"

#define SC_PRIVATE_TABLE_ID                                                        \
	{ { 'x', 's', 'c', 'h', 'e', 'd', '-', 's', 'i', 'm', '-', 'p', 'r', 'i', 'v', '1' } }

struct sc_private_table {
	size_t size;            /* of this struct: later versions only grow */
	/* cuStreamCreateWithPriority and cuEventCreate by other names. */
	CUresult (*stream_create)(CUstream *phStream, unsigned int flags, int priority);
	CUresult (*event_create)(CUevent *phEvent, unsigned int flags);
};

#endif
