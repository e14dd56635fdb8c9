/*
 * An OpenCL application with one command queue on each of the first two
 * devices of the first platform (for test_identity, over the test double
 * cl_fake_uuid): prints "ready" once both exist, then waits for SIGTERM
 * and releases them.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <signal.h>
#include <stdio.h>

int main(void)
{
	cl_platform_id p;
	cl_device_id d[2];
	cl_command_queue q[2];
	cl_context ctx;
	cl_uint n = 0;
	cl_int err;
	sigset_t term;
	int i, sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 2, d, &n) ||
	    n < 2) {
		fprintf(stderr, "cl_two_devices: need two devices\n");
		return 1;
	}
	ctx = clCreateContext(NULL, 2, d, NULL, NULL, &err);
	if (!ctx)
		return 1;
	for (i = 0; i < 2; i++) {
		q[i] = clCreateCommandQueueWithProperties(ctx, d[i], NULL, &err);
		if (!q[i]) {
			fprintf(stderr, "cl_two_devices: queue %d: %d\n", i, err);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	sigwait(&term, &sig);
	for (i = 0; i < 2; i++)
		clReleaseCommandQueue(q[i]);
	clReleaseContext(ctx);
	return 0;
}
