/*
 * What the generic hooks (FLUSH, TRANSLATE and SYNC rows of
 * cu_functions.def; cu_passes.S) ask before the driver gets a call the
 * shim does not turn into a command.
 */
#include "shim/cuda/cu_evict.h"
#include "shim/cuda/cu_queues.h"

#include <stdint.h>

enum { PASS_PTSZ = 1, PASS_FLUSH = 2 };

__attribute__((visibility("hidden"))) CUstream cu_stream_pick(CUstream h, int how,
							      uintptr_t ret);
__attribute__((visibility("hidden"))) CUresult cu_sync_pick(int ptds, uintptr_t ret);

/*
 * A call that takes stream @h: with PASS_FLUSH, what @h's queue buffered is
 * launched first, so the call lands behind it on the driver's stream.
 * Returns the handle the driver knows the stream by. A FLUSH call may
 * touch device memory: with memory preemption the thread enters the
 * memory gate, and cu_passes.S calls the driver and leaves it (@ret: the
 * caller's return address, given back then).
 */
CUstream cu_stream_pick(CUstream h, int how, uintptr_t ret)
{
	bool ptsz = how & PASS_PTSZ;
	struct cs_stream *s;
	CUstream real = h;

	if (cu_load() == 0 && !cu_passthrough()) {
		s = (how & PASS_FLUSH) ? cs_stream_of(h, ptsz) : NULL;
		if (!s) {
			real = cs_real_handle(h, ptsz);
		} else {
			cs_flush(s);
			real = s->real;
		}
	}
	if (how & PASS_FLUSH)
		cu_evict_call(ret);
	return real;
}

/*
 * A synchronous copy or memset on the legacy (or, @ptds, the per-thread)
 * default stream: the work it would observe natively completes first. A
 * launch failure of that work is the call's result, as the driver would
 * report it there. Then, with memory preemption, the memory gate, as for
 * cu_stream_pick().
 */
CUresult cu_sync_pick(int ptds, uintptr_t ret)
{
	struct cs_stream *s;
	CUresult rc = CUDA_SUCCESS;

	if (cu_load() == 0 && !cu_passthrough()) {
		s = cs_stream_of(NULL, ptds != 0);
		rc = s ? cs_sync(s) : CUDA_SUCCESS;
	}
	if (rc == CUDA_SUCCESS)
		cu_evict_call(ret);
	return rc;
}
