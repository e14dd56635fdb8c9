/*
 * The OpenCL shim's diagnostics for the tests, which look them up with
 * dlsym: linked only into the test build of the shim (build tree,
 * src/shim/opencl/test/libxsched-opencl.so, cmake/XschedShim.cmake), never
 * into the installed one, whose exports are the loader's API and the dl
 * hooks.
 */
#include "shim/opencl/cl_shim.h"

/* How many XQueues the shim created. */
XS_CL_HOOK int xs_opencl_queues(void);

int xs_opencl_queues(void)
{
	return cl_q_count();
}
