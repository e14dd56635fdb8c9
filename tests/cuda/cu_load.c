/*
 * A CUDA driver-API workload for the priority tests: either floods its
 * streams with sf_spin kernels of --cmd-us, or runs --tasks tasks of
 * --cmds kernels each, waiting for each task, and prints the task
 * latencies. Unmodified driver-API code: scheduling comes from the shim
 * (LD_PRELOAD) and the usual XSCHED_* environment.
 *
 * --stream says how its non-blocking streams are made: cuStreamCreate
 * (plain), the simulated driver's private table, which a shim does not
 * see (hidden), or cuGreenCtxStreamCreate in a green context (green).
 * --streams N makes N of them, launched on in turn (a flood syncs them all
 * every round).
 *
 * Usage: cu_load (--flood SECONDS | --tasks N) [--cmds N] [--cmd-us T]
 *                [--stream plain|hidden|green] [--streams N]
 * Output: tasks=N p50_us=X p99_us=X max_us=X launched=N
 */
#include "vendor/cuda/cu_api.h"
#include "sim/cuda/sc_private.h"

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

/* A non-blocking stream, made the way @how says. */
static CUresult make_stream(const char *how, CUstream *s)
{
	static CUgreenCtx green;

	if (!strcmp(how, "hidden")) {
		static const CUuuid id = SC_PRIVATE_TABLE_ID;
		const struct sc_private_table *t = NULL;
		CUresult rc = cuGetExportTable((const void **)&t, &id);

		return rc ? rc : t->stream_create(s, CU_STREAM_NON_BLOCKING, 0);
	}
	if (!strcmp(how, "green")) {
		CUdevResource all, group;
		CUdevResourceDesc desc;
		unsigned n = 1;

		if (!green && (cuDeviceGetDevResource(0, &all, CU_DEV_RESOURCE_TYPE_SM) ||
			       cuDevSmResourceSplitByCount(&group, &n, &all, NULL, 0, 16) ||
			       cuDevResourceGenerateDesc(&desc, &group, 1) ||
			       cuGreenCtxCreate(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM)))
			return CUDA_ERROR_UNKNOWN;
		return cuGreenCtxStreamCreate(s, green, CU_STREAM_NON_BLOCKING, 0);
	}
	return strcmp(how, "plain") ? CUDA_ERROR_INVALID_VALUE :
				      cuStreamCreate(s, CU_STREAM_NON_BLOCKING);
}

int main(int argc, char **argv)
{
	double flood_s = 0;
	int tasks = 0, cmds = 1, nstreams = 1, i;
	uint64_t cmd_ns = 1000000, launched = 0, *lat;
	const char *how = "plain";
	CUfunction spin;
	CUstream *ss;
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
		else if (!strcmp(argv[i], "--stream") && i + 1 < argc)
			how = argv[++i];
		else if (!strcmp(argv[i], "--streams") && i + 1 < argc)
			nstreams = atoi(argv[++i]);
		else
			return 2;
	}
	if ((flood_s <= 0 && tasks <= 0) || cmds < 1 || nstreams < 1)
		return 2;
	ss = calloc((size_t)nstreams, sizeof(*ss));
	if (!ss || cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&ctx, d) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&m, "xs") ||
	    cuModuleGetFunction(&spin, m, "sf_spin")) {
		printf("setup failed\n");
		return 1;
	}
	for (i = 0; i < nstreams; i++) {
		if (make_stream(how, &ss[i])) {
			printf("stream %d: setup failed\n", i);
			return 1;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flood_s > 0) {
		uint64_t end = now_ns() + (uint64_t)(flood_s * 1e9);

		/* Keep the stream busy: a few kernels ahead, synchronising in
		 * between so the flood ends when asked. */
		while (now_ns() < end) {
			int rounds = nstreams > 8 ? 1 : 8;

			for (i = 0; i < rounds * nstreams; i++, launched++)
				if (cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, ss[i % nstreams], args,
						   NULL))
					return 1;
			for (i = 0; i < nstreams; i++)
				if (cuStreamSynchronize(ss[i]))
					return 1;
		}
		printf("tasks=0 p50_us=0 p99_us=0 max_us=0 launched=%llu\n",
		       (unsigned long long)launched);
		free(ss);
		return 0;
	}
	lat = calloc((size_t)tasks, sizeof(*lat));
	if (!lat)
		return 1;
	for (i = 0; i < tasks; i++) {
		uint64_t t0 = now_ns();
		struct timespec gap = { 0, 5000000 };

		for (int k = 0; k < cmds; k++, launched++)
			if (cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, ss[k % nstreams], args,
					   NULL))
				return 1;
		for (int k = 0; k < nstreams; k++)
			if (cuStreamSynchronize(ss[k]))
				return 1;
		lat[i] = now_ns() - t0;
		nanosleep(&gap, NULL);
	}
	qsort(lat, (size_t)tasks, sizeof(*lat), cmp);
	printf("tasks=%d p50_us=%.1f p99_us=%.1f max_us=%.1f launched=%llu\n", tasks,
	       lat[tasks / 2] / 1e3, lat[(tasks * 99) / 100] / 1e3, lat[tasks - 1] / 1e3,
	       (unsigned long long)launched);
	free(lat);
	free(ss);
	return 0;
}
