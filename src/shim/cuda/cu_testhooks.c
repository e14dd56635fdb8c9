/*
 * The CUDA shim's diagnostics for the tests, which look them up with dlsym:
 * linked only into the test build of the shim (build tree,
 * src/shim/cuda/test/libxsched-cuda.so, cmake/XschedShim.cmake), never into
 * the installed one, whose exports are the driver API and the dl hooks.
 */
#include "shim/cuda/cu_evict.h"
#include "shim/cuda/cu_graph_internal.h"
#include "shim/cuda/cu_queues.h"
#include "shim/cuda/cu_shim.h"

/* How many XQueues the shim created. */
XS_CU_HOOK int cu_test_queues(void);

int cu_test_queues(void)
{
	return cs_queue_count();
}

/* The commands @e's last launch was submitted as (-1: not recorded). */
XS_CU_HOOK int cu_test_graph_split(CUgraphExec e);

int cu_test_graph_split(CUgraphExec e)
{
	struct cg_exec *x = cg_get(e);
	int n = x ? atomic_load(&x->last_split) : -1;

	cg_put(x);
	return n;
}

/* Memory preemption (cu_evict.h) without a scheduler: evict every
 * evictable allocation now (bytes freed, or -errno), restore it, and the
 * bytes away. */
XS_CU_HOOK long long cu_test_evict(void);
XS_CU_HOOK int cu_test_restore(void);
XS_CU_HOOK unsigned long long cu_test_evicted(void);

long long cu_test_evict(void)
{
	return cu_evict_all();
}

int cu_test_restore(void)
{
	return cu_evict_restore();
}

unsigned long long cu_test_evicted(void)
{
	return cu_evict_away();
}
