/*
 * What the generic hooks (FLUSH, TRANSLATE and SYNC rows of
 * cu_functions.def; cu_passes.S) ask before the driver gets a call the
 * shim does not turn into a command.
 */
#include "shim/cuda/cu_queues.h"

#include <stdint.h>

enum { PASS_PTSZ = 1, PASS_FLUSH = 2 };

__attribute__((visibility("hidden"))) CUstream cu_stream_pick(CUstream h, int how);
__attribute__((visibility("hidden"))) CUresult cu_sync_pick(int ptds);

/*
 * A call that takes stream @h: with PASS_FLUSH, what @h's queue buffered is
 * launched first, so the call lands behind it on the driver's stream.
 * Returns the handle the driver knows the stream by.
 */
CUstream cu_stream_pick(CUstream h, int how)
{
	bool ptsz = how & PASS_PTSZ;
	struct cs_stream *s;

	if (cu_load() < 0 || cu_passthrough())
		return h;
	s = (how & PASS_FLUSH) ? cs_stream_of(h, ptsz) : NULL;
	if (!s)
		return cs_real_handle(h, ptsz);
	cs_flush(s);
	return s->real;
}

/*
 * A synchronous copy or memset on the legacy (or, @ptds, the per-thread)
 * default stream: the work it would observe natively completes first. A
 * launch failure of that work is the call's result, as the driver would
 * report it there.
 */
CUresult cu_sync_pick(int ptds)
{
	struct cs_stream *s;

	if (cu_load() < 0 || cu_passthrough())
		return CUDA_SUCCESS;
	s = cs_stream_of(NULL, ptds != 0);
	return s ? cs_sync(s) : CUDA_SUCCESS;
}
