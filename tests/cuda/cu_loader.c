/*
 * Reaches the CUDA driver the way cudart does: dlopen() by name, one
 * dlsym() of cuGetProcAddress_v2, then every entry point through it (with
 * the per-thread-default-stream flag when asked). Runs a small kernel
 * sequence and prints its result and where the launch entry point lives,
 * so the test sees whether the shim caught this path.
 *
 * Usage: cu_loader NAME [ptsz]     NAME: libcuda.so.1, libcuda.so, ...
 */
#include "vendor/cuda/cu_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define N 1024

#define GET(var, sym, flags)                                                       \
	do {                                                                       \
		CUresult rc_ = gpa(sym, (void **)&var, 12000, flags, &st);         \
		if (rc_ != CUDA_SUCCESS || !var) {                                 \
			printf("lookup %s failed: %d\n", sym, rc_);                \
			return 1;                                                  \
		}                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	__typeof__(&cuGetProcAddress_v2) gpa;
	__typeof__(&cuInit) init;
	__typeof__(&cuDeviceGet) dev_get;
	__typeof__(&cuDevicePrimaryCtxRetain) retain;
	__typeof__(&cuCtxSetCurrent) set_ctx;
	__typeof__(&cuModuleLoadData) load;
	__typeof__(&cuModuleGetFunction) get_fn;
	__typeof__(&cuMemAlloc_v2) alloc;
	__typeof__(&cuLaunchKernel) launch;
	__typeof__(&cuStreamSynchronize) ssync;
	__typeof__(&cuMemcpyDtoH_v2) dtoh;
	CUdriverProcAddressQueryResult st;
	cuuint64_t flags = argc > 2 && !strcmp(argv[2], "ptsz") ?
			   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
	unsigned host[N], v = 41;
	uint64_t n = N;
	CUfunction f_fill, f_inc;
	CUdeviceptr p;
	CUcontext ctx;
	CUmodule m;
	CUdevice d;
	Dl_info info;
	void *h, *args[3];

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME [ptsz]\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("dlopen %s: no driver\n", argv[1]);
		return 0;
	}
	gpa = (__typeof__(gpa))dlsym(h, "cuGetProcAddress_v2");
	if (!gpa) {
		printf("no cuGetProcAddress_v2\n");
		return 1;
	}
	GET(init, "cuInit", 0);
	GET(dev_get, "cuDeviceGet", 0);
	GET(retain, "cuDevicePrimaryCtxRetain", 0);
	GET(set_ctx, "cuCtxSetCurrent", 0);
	GET(load, "cuModuleLoadData", 0);
	GET(get_fn, "cuModuleGetFunction", 0);
	GET(alloc, "cuMemAlloc", 0);
	GET(launch, "cuLaunchKernel", flags);
	GET(ssync, "cuStreamSynchronize", flags);
	GET(dtoh, "cuMemcpyDtoH", flags);
	if (init(0) || dev_get(&d, 0) || retain(&ctx, d) || set_ctx(ctx) ||
	    load(&m, "xs") || get_fn(&f_fill, m, "sf_fill") || get_fn(&f_inc, m, "sf_inc") ||
	    alloc(&p, N * 4)) {
		printf("setup failed\n");
		return 1;
	}
	args[0] = &p;
	args[1] = &v;
	args[2] = &n;
	if (launch(f_fill, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL))
		return 1;
	args[1] = &n;
	if (launch(f_inc, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) || ssync(NULL) ||
	    dtoh(host, p, sizeof(host)))
		return 1;
	printf("result %u %u\n", host[0], host[N - 1]);
	/* The shim exports a marker; the launch entry point is the shim's if
	 * it lives in the same object as the marker. */
	{
		void *marker = dlsym(h, "cu_test_queues");
		Dl_info mi;

		if (dladdr((void *)launch, &info) && marker && dladdr(marker, &mi) &&
		    info.dli_fbase == mi.dli_fbase)
			printf("launch via shim\n");
		else
			printf("launch via driver\n");
	}
	return 0;
}
