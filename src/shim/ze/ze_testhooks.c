/*
 * The Level Zero shim's diagnostics for the tests, which look them up with
 * dlsym: linked only into the test build of the shim (build tree,
 * src/shim/ze/test/libxsched-levelzero.so, cmake/XschedShim.cmake), never
 * into the installed one, whose exports are the loader's API and the dl
 * hooks.
 */
#include "shim/ze/ze_queues.h"
#include "shim/ze/ze_shim.h"

/* How many XQueues the shim created. */
XS_ZE_HOOK int ze_test_queues(void);

int ze_test_queues(void)
{
	return zs_queue_count();
}
