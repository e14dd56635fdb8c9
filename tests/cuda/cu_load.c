/*
 * A CUDA driver-API workload for the priority tests: either floods one
 * stream with xs_spin kernels of --cmd-us, or runs --tasks tasks of --cmds
 * kernels each, waiting for each task, and prints the task latencies.
 * Unmodified driver-API code: scheduling comes from the shim (LD_PRELOAD)
 * and the usual XSCHED_* environment.
 *
 * Usage: cu_load (--flood SECONDS | --tasks N) [--cmds N] [--cmd-us T]
 * Output: tasks=N p50_us=X p99_us=X max_us=X launched=N
 */
#include "cuda/cu_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double flood_s = 0;
	int tasks = 0, cmds = 1, i;
	uint64_t cmd_ns = 1000000, launched = 0, *lat;
	CUfunction spin;
	CUstream s;
	CUcontext ctx;
	CUmodule m;
	CUdevice d;
	void *args[] = { &cmd_ns };

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--flood") && i + 1 < argc)
			flood_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
			tasks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cmds") && i + 1 < argc)
			cmds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cmd-us") && i + 1 < argc)
			cmd_ns = (uint64_t)atoll(argv[++i]) * 1000;
		else
			return 2;
	}
	if ((flood_s <= 0 && tasks <= 0) || cmds < 1)
		return 2;
	if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&ctx, d) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&m, "xs") ||
	    cuModuleGetFunction(&spin, m, "xs_spin") ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
		printf("setup failed\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flood_s > 0) {
		uint64_t end = now_ns() + (uint64_t)(flood_s * 1e9);

		/* Keep the stream busy: a few kernels ahead, synchronising in
		 * between so the flood ends when asked. */
		while (now_ns() < end) {
			for (i = 0; i < 8; i++, launched++)
				if (cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL))
					return 1;
			if (cuStreamSynchronize(s))
				return 1;
		}
		printf("tasks=0 p50_us=0 p99_us=0 max_us=0 launched=%llu\n",
		       (unsigned long long)launched);
		return 0;
	}
	lat = calloc((size_t)tasks, sizeof(*lat));
	if (!lat)
		return 1;
	for (i = 0; i < tasks; i++) {
		uint64_t t0 = now_ns();
		struct timespec gap = { 0, 5000000 };

		for (int k = 0; k < cmds; k++, launched++)
			if (cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL))
				return 1;
		if (cuStreamSynchronize(s))
			return 1;
		lat[i] = now_ns() - t0;
		nanosleep(&gap, NULL);
	}
	qsort(lat, (size_t)tasks, sizeof(*lat), cmp);
	printf("tasks=%d p50_us=%.1f p99_us=%.1f max_us=%.1f launched=%llu\n", tasks,
	       lat[tasks / 2] / 1e3, lat[(tasks * 99) / 100] / 1e3, lat[tasks - 1] / 1e3,
	       (unsigned long long)launched);
	free(lat);
	return 0;
}
