/*
 * How the simulated CUDA driver is found and entered: cuGetProcAddress for
 * every row of the function table (versions, per-thread variants), exactly
 * the exports of that table, a loader that finds the driver the way cudart
 * does, and the private export table (standing for those through which
 * NVIDIA's runtime reaches the driver), whose streams and events are the
 * API's.
 */
#include "test_sim_cuda_util.h"
#include "sim/cuda/sc_private.h"

#include <dlfcn.h>

static void sc_procaddr(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW), *fn = (void *)1;
	CUdriverProcAddressQueryResult st;
	const void *table = (void *)1;
	CUuuid id = { { 0 } };

	(void)state;
	assert_non_null(h);
	init_driver();
	CK(cuGetProcAddress_v2("cuMemAlloc", &fn, 3020, 0, &st));
	assert_ptr_equal(fn, dlsym(h, "cuMemAlloc_v2"));
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
	assert_int_equal(cuGetProcAddress_v2("cuMemAlloc", &fn, 3000, 0, &st), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	assert_null(fn);
	CK(cuGetProcAddress_v2("cuEventElapsedTime", &fn, 12000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuEventElapsedTime"));
	CK(cuGetProcAddress_v2("cuEventElapsedTime", &fn, 12080, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuEventElapsedTime_v2"));
	CK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 11030, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuGetProcAddress"));
	CK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 12000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuGetProcAddress_v2"));
	CK(cuGetProcAddress_v2("cuStreamDestroy", &fn, 4000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuStreamDestroy_v2"));
	CK(cuGetProcAddress_v2("cuCtxCreate", &fn, 13000, 0, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuCtxCreate_v4"));
	CK(cuGetProcAddress_v2("cuMemcpyHtoDAsync", &fn, 13000, 2, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuMemcpyHtoDAsync_v2_ptsz"));
	CK(cuGetProcAddress_v2("cuMemcpyHtoDAsync", &fn, 13000, 1, NULL));
	assert_ptr_equal(fn, dlsym(h, "cuMemcpyHtoDAsync_v2"));
	CK(cuGetProcAddress_v2("cuInit", &fn, 13000, 2, NULL));   /* no variant */
	assert_ptr_equal(fn, dlsym(h, "cuInit"));
	CK(cuGetProcAddress("cuMemsetD32", &fn, 12000, 2));
	assert_ptr_equal(fn, dlsym(h, "cuMemsetD32_v2_ptds"));
	assert_int_equal(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st),
			 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_null(fn);
	assert_int_equal(cuGetProcAddress_v2("", &fn, 0, 0, &st), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_int_equal(cuGetProcAddress_v2("cuMemAlloc_v2", &fn, 13000, 0, &st),
			 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(cuGetProcAddress_v2("cuInit", &fn, 13000, 4, &st),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGetProcAddress_v2(NULL, &fn, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
	assert_null(table);
	/*
	 * Each row answers with its export from its version on, and with the
	 * per-thread flag with its _PT variant, at the variant's version too.
	 */
#define XS_CU_FN(name, how, arg, symbol, version, params)                             \
	CK(cuGetProcAddress_v2(#symbol, &fn, version, 0, NULL));                   \
	assert_ptr_equal(fn, dlsym(h, #name));
#define XS_CU_FN_PT(name, how, arg, symbol, version, pt, base)                        \
	CK(cuGetProcAddress_v2(#symbol, &fn, version, 2, NULL));                   \
	assert_ptr_equal(fn, dlsym(h, #name));
#define XS_CU_ALIAS(symbol, version, name)                                            \
	CK(cuGetProcAddress_v2(#symbol, &fn, version, 0, NULL));                   \
	assert_ptr_equal(fn, dlsym(h, #name));
#include "vendor/cuda/cu_functions.def"
	dlclose(h);
}

static void sc_exports(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);

	(void)state;
	assert_non_null(h);
#define CHECK_EXPORT(name)                                                         \
	if (!dlsym(h, #name))                                                      \
		fail_msg("%s is not exported", #name);
#define XS_CU_FN(name, ...) CHECK_EXPORT(name)
#define XS_CU_FN_PT(name, ...) CHECK_EXPORT(name)
#include "vendor/cuda/cu_functions.def"
#undef CHECK_EXPORT
	assert_null(dlsym(h, "sim_dev_open"));
	assert_null(dlsym(h, "sc_result"));
	assert_null(dlsym(h, "clock_now_ns"));
	dlclose(h);
}

/* Finds every entry point the way cudart does (FACTS.md): dlopen, then cuGetProcAddress_v2. */
static void sc_cudart_style_loader(void **state)
{
	void *h = dlopen(XS_SIM_CUDA_PATH, RTLD_NOW | RTLD_LOCAL), *probe;
	__typeof__(&cuGetProcAddress_v2) gpa;
	__typeof__(&cuInit) init;
	__typeof__(&cuDevicePrimaryCtxRetain) retain;
	__typeof__(&cuDevicePrimaryCtxRelease_v2) release;
	__typeof__(&cuCtxSetCurrent) setcur;
	__typeof__(&cuModuleLoadData) load;
	__typeof__(&cuModuleGetFunction) getfn;
	__typeof__(&cuMemAlloc_v2) alloc;
	__typeof__(&cuLaunchKernel) launch;
	__typeof__(&cuStreamSynchronize) ssync;
	__typeof__(&cuMemcpyDtoH_v2) d2h;
	CUdriverProcAddressQueryResult st;
	CUcontext c;
	CUmodule m;
	CUfunction f;
	CUdeviceptr p;
	uint32_t v = 12, out[4] = { 0 };
	uint64_t n = 4;
	void *args[] = { &p, &v, &n };

	(void)state;
	assert_non_null(h);
	gpa = (__typeof__(gpa))dlsym(h, "cuGetProcAddress_v2");
	assert_non_null(gpa);
	assert_int_equal(gpa("", &probe, 0, 0, &st), CUDA_ERROR_NOT_FOUND);
	CK(gpa("cuInit", (void **)&init, 2000, 0, &st));
	if (!inited)
		setenv("XSCHED_SIM_DEVICE", test_dev("cuda"), 1);
	CK(init(0));
	inited = true;
	CK(gpa("cuGetProcAddress", (void **)&gpa, 12000, 0, &st));
	CK(gpa("cuDevicePrimaryCtxRetain", (void **)&retain, 7000, 0, &st));
	CK(gpa("cuDevicePrimaryCtxRelease", (void **)&release, 11000, 0, &st));
	CK(gpa("cuCtxSetCurrent", (void **)&setcur, 4000, 0, &st));
	CK(gpa("cuModuleLoadData", (void **)&load, 2000, 0, &st));
	CK(gpa("cuModuleGetFunction", (void **)&getfn, 2000, 0, &st));
	CK(gpa("cuMemAlloc", (void **)&alloc, 3020, 0, &st));
	CK(gpa("cuLaunchKernel", (void **)&launch, 4000, 2, &st));
	CK(gpa("cuStreamSynchronize", (void **)&ssync, 2000, 2, &st));
	CK(gpa("cuMemcpyDtoH", (void **)&d2h, 3020, 2, &st));
	CK(retain(&c, 0));
	CK(setcur(c));
	CK(load(&m, "image"));
	CK(getfn(&f, m, "sf_fill"));
	CK(alloc(&p, 16));
	CK(launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CK(ssync(NULL));
	CK(d2h(out, p, sizeof(out)));
	assert_int_equal(out[0], 12);
	assert_int_equal(out[3], 12);
	CK(setcur(NULL));
	CK(release(0));
	dlclose(h);
}

/* The private table makes streams and events like the API's. */
static void sc_private_table(void **state)
{
	static const CUuuid id = SC_PRIVATE_TABLE_ID;
	const struct sc_private_table *t = NULL;
	CUdeviceptr p;
	CUstream s;
	CUevent e;
	int prio;

	(void)state;
	up();
	CK(cuGetExportTable((const void **)&t, &id));
	assert_true(t->size >= sizeof(*t));
	CK(t->stream_create(&s, CU_STREAM_NON_BLOCKING, -2));
	CK(t->event_create(&e, CU_EVENT_DISABLE_TIMING));
	CK(cuStreamGetPriority(s, &prio));
	assert_int_equal(prio, -2);
	CK(cuMemAlloc_v2(&p, N * 4));
	k_fill(s, p, 3, N);
	CK(cuEventRecord(e, s));
	CK(cuEventSynchronize(e));
	expect_all(p, 3, N);
	CK(cuEventDestroy_v2(e));
	CK(cuStreamDestroy_v2(s));
	down();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sc_procaddr),
	cmocka_unit_test(sc_exports),
	cmocka_unit_test(sc_cudart_style_loader),
	cmocka_unit_test(sc_private_table),
};

TU_MAIN(tests)
