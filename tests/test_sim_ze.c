/*
 * Tests of the simulated Level Zero driver (libxsched-sim-ze.so over the
 * simulated XPU), through the real loader as applications reach it: the
 * loader is pointed at the driver (ZE_ENABLE_ALT_DRIVERS, the build's
 * unless the environment names another; sz_env()) and each case uses a
 * device of its own. The table getters are also called
 * directly, on the library opened by path, as the loader calls them.
 *
 * Orderings are shown without timing: host-signalled "gate" events hold a
 * queue's work back without holding the device, so a missing dependency
 * shows as work that completes (or a different result) while a gate is
 * still closed. Where a test needs a wait to last, it asserts a lower
 * bound on elapsed time only, never an upper one.
 */
#include "test_util.h"

#include <dlfcn.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#define N 4096u
#define MS 1000000ull

#define CK(call) assert_string_equal(zu_name(call), "ZE_RESULT_SUCCESS")
#define EXPECT(call, want) assert_string_equal(zu_name(call), zu_name(want))
#define ZU_CHECK CK
#include "ze/ze_util.h"

static struct zu z;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void up(void)
{
	setenv("XSCHED_SIM_DEVICE", test_dev("ze"), 1);
	CK(zu_open(&z));
}

static void down(void)
{
	CK(zu_close(&z));
}

/* A pool of @n events, created as ev[0..n-1]. */
static ze_event_pool_handle_t events(uint32_t n, ze_event_pool_flags_t flags,
				     ze_event_handle_t *ev)
{
	ze_event_pool_handle_t pool;
	uint32_t i;

	CK(zu_pool(&z, n, flags, &pool));
	for (i = 0; i < n; i++)
		CK(zu_event(pool, i, &ev[i]));
	return pool;
}

static void events_free(ze_event_pool_handle_t pool, uint32_t n, ze_event_handle_t *ev)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		CK(zeEventDestroy(ev[i]));
	CK(zeEventPoolDestroy(pool));
}

/* Closes @l, executes it on @q and waits for it. */
static void run(ze_command_queue_handle_t q, ze_command_list_handle_t l)
{
	CK(zeCommandListClose(l));
	CK(zu_exec(q, l, NULL));
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
}

/* ---- the table getters, called as the loader calls them ---- */

struct sz_getter {
	const char *name;
	size_t size;
};

static const struct sz_getter getters[] = {
#define SZ_TABLE(prefix, name, type) { #prefix "Get" #name "ProcAddrTable", sizeof(type) },
#include "sim/ze/sz_tables.def"
#undef SZ_TABLE
};

typedef ze_result_t (*getter_fn)(ze_api_version_t, void *);

static void *driver_open(void)
{
	void *h = dlopen(XS_SIM_ZE_PATH, RTLD_NOW | RTLD_LOCAL);

	assert_non_null(h);
	return h;
}

static void sz_tables(void **state)
{
	void *h = driver_open();
	uint8_t buf[4096];
	ze_command_list_dditable_t cl;
	ze_global_dditable_t gl;
	size_t i;

	(void)state;
	assert_int_equal(sizeof(getters) / sizeof(getters[0]), 53);
	for (i = 0; i < sizeof(getters) / sizeof(getters[0]); i++) {
		getter_fn fn;

		*(void **)&fn = dlsym(h, getters[i].name);
		assert_non_null(fn);
		assert_true(getters[i].size <= sizeof(buf));
		memset(buf, 0xa5, sizeof(buf));
		EXPECT(fn(ZE_API_VERSION_CURRENT, buf), ZE_RESULT_SUCCESS);
		EXPECT(fn(ZE_API_VERSION_CURRENT, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
		EXPECT(fn(ZE_MAKE_VERSION(2, 0), buf), ZE_RESULT_ERROR_UNSUPPORTED_VERSION);
		if (ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT) > 0)
			EXPECT(fn(ZE_API_VERSION_1_0, buf), ZE_RESULT_ERROR_UNSUPPORTED_VERSION);
	}
	/* Filled where implemented, NULL elsewhere, never left as it was. */
	memset(&cl, 0xa5, sizeof(cl));
	memset(&gl, 0xa5, sizeof(gl));
	CK(((getter_fn)dlsym(h, "zeGetCommandListProcAddrTable"))(ZE_API_VERSION_CURRENT, &cl));
	CK(((getter_fn)dlsym(h, "zeGetGlobalProcAddrTable"))(ZE_API_VERSION_CURRENT, &gl));
	assert_non_null(gl.pfnInit);
	assert_non_null(cl.pfnAppendLaunchKernel);
	assert_non_null(cl.pfnAppendMemoryCopyRegion);
	assert_null(cl.pfnAppendImageCopy);
	assert_null(cl.pfnAppendLaunchKernelIndirect);
	/* The API functions themselves are not exported. */
	assert_null(dlsym(h, "zeInit"));
	assert_null(dlsym(h, "zeCommandListAppendLaunchKernel"));
	assert_null(dlsym(h, "sf_kernel_find"));
	dlclose(h);
}

/* Before zeInit the driver answers nothing; a VPU-only init finds no device. */
static void sz_before_init(void **state)
{
	void *h = driver_open();
	ze_global_dditable_t gl;
	ze_driver_dditable_t dr;
	uint32_t n = 0;

	(void)state;
	setenv("XSCHED_SIM_DEVICE", test_dev("zeb"), 1);
	CK(((getter_fn)dlsym(h, "zeGetGlobalProcAddrTable"))(ZE_API_VERSION_CURRENT, &gl));
	CK(((getter_fn)dlsym(h, "zeGetDriverProcAddrTable"))(ZE_API_VERSION_CURRENT, &dr));
	EXPECT(dr.pfnGet(&n, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
	EXPECT(gl.pfnInit(ZE_INIT_FLAG_VPU_ONLY), ZE_RESULT_ERROR_UNINITIALIZED);
	EXPECT(gl.pfnInit(0x8), ZE_RESULT_ERROR_INVALID_ENUMERATION);
	EXPECT(dr.pfnGet(&n, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
	CK(gl.pfnInit(0));
	CK(dr.pfnGet(&n, NULL));
	assert_int_equal(n, 1);
	dlclose(h);
}

/* ---- through the loader ---- */

static void sz_properties(void **state)
{
	ze_device_properties_t dp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	ze_driver_properties_t drp = { .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES };
	ze_command_queue_group_properties_t gp[2];
	ze_device_memory_properties_t mp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	ze_device_compute_properties_t cp = {
		.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES };
	ze_kernel_properties_t kp = { .stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES };
	ze_api_version_t ver;
	ze_driver_handle_t drivers[4];
	ze_device_handle_t devices[4];
	const char *names[16];
	char kname[32];
	size_t ksize = sizeof(kname);
	uint32_t n = 4, gx, gy, gz;

	(void)state;
	up();
	CK(zeDriverGet(&n, drivers));
	assert_int_equal(n, 1);
	n = 4;
	CK(zeDeviceGet(z.drv, &n, devices));
	assert_int_equal(n, 1);
	CK(zeDriverGetApiVersion(z.drv, &ver));
	assert_int_equal(ver, ZE_API_VERSION_CURRENT);
	CK(zeDriverGetProperties(z.drv, &drp));
	n = 5;
	CK(zeDriverGetExtensionProperties(z.drv, &n, NULL));
	assert_int_equal(n, 0);
	CK(zeDeviceGetProperties(z.dev, &dp));
	assert_string_equal(dp.name, "xsched simulated XPU");
	assert_int_equal(dp.type, ZE_DEVICE_TYPE_GPU);
	assert_int_equal(dp.timerResolution, 1);
	dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
	CK(zeDeviceGetProperties(z.dev, &dp));
	assert_int_equal(dp.timerResolution, 1000000000ull);
	CK(zeDeviceGetComputeProperties(z.dev, &cp));
	assert_int_equal(cp.maxTotalGroupSize, 1024);
	n = 0;
	CK(zeDeviceGetCommandQueueGroupProperties(z.dev, &n, NULL));
	assert_int_equal(n, 1);
	n = 2;
	CK(zeDeviceGetCommandQueueGroupProperties(z.dev, &n, gp));
	assert_int_equal(n, 1);
	assert_true(gp[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
	assert_true(gp[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
	assert_true(gp[0].numQueues >= 1);
	n = 1;
	CK(zeDeviceGetMemoryProperties(z.dev, &n, &mp));
	assert_int_equal(n, 1);
	assert_true(mp.totalSize >= (1ull << 30));
	n = 0;
	CK(zeModuleGetKernelNames(z.mod, &n, NULL));
	assert_int_equal(n, 7);
	CK(zeModuleGetKernelNames(z.mod, &n, names));
	assert_string_equal(names[0], "sf_spin");
	CK(zeKernelGetProperties(z.fill, &kp));
	assert_int_equal(kp.numKernelArgs, 3);
	CK(zeKernelGetName(z.fill, &ksize, kname));
	assert_string_equal(kname, "sf_fill");
	CK(zeKernelSuggestGroupSize(z.add, 1000, 6, 1, &gx, &gy, &gz));
	assert_int_equal(1000 % gx, 0);
	assert_int_equal(6 % gy, 0);
	assert_true(gx * gy * gz <= 1024);
	down();
}

/* What the driver leaves out, the loader answers as unsupported. */
static void sz_unimplemented(void **state)
{
	ze_image_desc_t idesc = { .stype = ZE_STRUCTURE_TYPE_IMAGE_DESC };
	ze_image_handle_t img;

	(void)state;
	up();
	EXPECT(zeImageCreate(z.ctx, z.dev, &idesc, &img), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	EXPECT(zeContextSystemBarrier(z.ctx, z.dev), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	down();
}

/* Every built-in kernel computes what it says, on a regular list. */
static void sz_kernels_data(void **state)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	uint32_t *a, *b, *c, i;
	uint64_t *sum;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	a = zu_dev_new(&z, N * 4);
	b = zu_dev_new(&z, N * 4);
	c = zu_host_new(&z, N * 4);
	sum = zu_host_new(&z, 8);
	CK(zu_fill(&z, l, a, 3, N, NULL, 0, NULL));
	CK(zu_fill(&z, l, b, 10, N, NULL, 0, NULL));
	CK(zu_bar(l));
	CK(zu_inc(&z, l, a, N / 2, NULL, 0, NULL));
	CK(zu_bar(l));
	CK(zu_scale(&z, l, b, 3, N));
	CK(zu_bar(l));
	CK(zu_add(&z, l, a, b, c, N));
	CK(zu_bar(l));
	CK(zu_sum(&z, l, c, N * 4, sum));
	CK(zu_spin(&z, l, 1 * MS, NULL, 0, NULL));
	run(q, l);
	for (i = 0; i < N; i++)
		assert_int_equal(c[i], (i < N / 2 ? 4 : 3) + 30);
	assert_true(*sum == zu_fnv(c, N * 4));
	CK(zeCommandListDestroy(l));
	CK(zeCommandQueueDestroy(q));
	CK(zu_free(&z, a, b, c, sum, NULL));
	down();
}

/* Copies between every kind of memory, 2D/3D regions and fill patterns. */
static void sz_copies_fills(void **state)
{
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	ze_command_list_handle_t il;
	/* 4x3x2 elements of 8 bytes, from (1,2,1) of a 10x6x3 volume to a 4x3x2 box. */
	ze_copy_region_t sreg = { 8, 2, 1, 32, 3, 2 }, dreg = { 0, 0, 0, 32, 3, 2 };
	uint8_t *d, *s, *h, *p = malloc(N), pat[128], vol[80 * 6 * 3], box[32 * 3 * 2];
	uint32_t i, ps, x, y, zz;

	(void)state;
	up();
	il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
	d = zu_dev_new(&z, N);
	h = zu_host_new(&z, N);
	CK(zeMemAllocShared(z.ctx, &dd, &hd, N, 0, z.dev, (void **)&s));
	for (i = 0; i < N; i++)
		p[i] = (uint8_t)(i * 7);
	CK(zeCommandListAppendMemoryCopy(il, d, p, N, NULL, 0, NULL));        /* malloc -> device */
	CK(zeCommandListAppendMemoryCopy(il, s, d, N, NULL, 0, NULL));        /* device -> shared */
	CK(zeCommandListAppendMemoryCopy(il, h, s, N, NULL, 0, NULL));        /* shared -> host */
	memset(p, 0, N);
	CK(zeCommandListAppendMemoryCopy(il, p, h, N, NULL, 0, NULL));        /* host -> malloc */
	for (i = 0; i < N; i++)
		assert_int_equal(p[i], (uint8_t)(i * 7));
	for (i = 0; i < sizeof(vol); i++)
		vol[i] = (uint8_t)i;
	CK(zeCommandListAppendMemoryCopyRegion(il, box, &dreg, 32, 32 * 3, vol, &sreg, 80, 80 * 6,
					       NULL, 0, NULL));
	for (zz = 0; zz < 2; zz++)
		for (y = 0; y < 3; y++)
			for (x = 0; x < 32; x++)
				assert_int_equal(box[zz * 96 + y * 32 + x],
						 vol[(zz + 1) * 480 + (y + 2) * 80 + 8 + x]);
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(0x40 + i);
	for (ps = 1; ps <= 128; ps *= 2) {
		CK(zeCommandListAppendMemoryFill(il, d, pat, ps, N - 3, NULL, 0, NULL));
		CK(zeCommandListAppendMemoryCopy(il, h, d, N, NULL, 0, NULL));
		for (i = 0; i < N - 3; i++)
			assert_int_equal(h[i], pat[i % ps]);
	}
	EXPECT(zeCommandListAppendMemoryCopy(il, d + 8, d, 16, NULL, 0, NULL),
	       ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
	EXPECT(zeCommandListAppendMemoryCopy(il, box, d + N - 8, 16, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT(zeCommandListAppendMemoryFill(il, d, pat, 256, 64, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_SIZE);
	CK(zeCommandListDestroy(il));
	CK(zu_free(&z, d, h, s, NULL));
	free(p);
	down();
}

/*
 * Immediate lists: asynchronous ones run in order once released,
 * synchronous ones are done on return.
 */
static void sz_immediate(void **state)
{
	ze_command_list_handle_t as, sy;
	ze_event_handle_t ev[3];
	ze_event_pool_handle_t pool;
	uint32_t *a, *b;
	uint64_t *ts;

	(void)state;
	up();
	as = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	sy = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
	pool = events(3, 0, ev);
	a = zu_host_new(&z, N * 4);
	b = zu_host_new(&z, N * 4);
	ts = zu_host_new(&z, 8);
	CK(zeCommandListAppendWaitOnEvents(as, 1, &ev[0]));
	CK(zu_fill(&z, as, a, 1, N, NULL, 0, NULL));
	CK(zu_bar(as));
	CK(zu_inc(&z, as, a, N, NULL, 0, NULL));
	CK(zu_bar(as));
	CK(zeCommandListAppendMemoryCopy(as, b, a, N * 4, NULL, 0, NULL));
	CK(zeCommandListAppendWriteGlobalTimestamp(as, ts, NULL, 0, NULL));
	CK(zeCommandListAppendBarrier(as, ev[1], 0, NULL));
	EXPECT(zeEventQueryStatus(ev[1]), ZE_RESULT_NOT_READY);
	assert_true(zu_all(b, N, 0) && *ts == 0);
	CK(zeEventHostSignal(ev[0]));
	CK(zeEventHostSynchronize(ev[1], UINT64_MAX));
	assert_true(zu_all(a, N, 2) && zu_all(b, N, 2) && *ts != 0);
	CK(zu_fill(&z, sy, a, 5, N, NULL, 0, NULL));
	assert_true(zu_all(a, N, 5));
	CK(zeCommandListAppendSignalEvent(sy, ev[2]));
	EXPECT(zeEventQueryStatus(ev[2]), ZE_RESULT_SUCCESS);
	CK(zeCommandListAppendEventReset(sy, ev[2]));
	EXPECT(zeEventQueryStatus(ev[2]), ZE_RESULT_NOT_READY);
	CK(zeCommandListClose(sy));
	CK(zeCommandListReset(as));
	CK(zeCommandListDestroy(as));
	CK(zeCommandListDestroy(sy));
	events_free(pool, 3, ev);
	CK(zu_free(&z, a, b, ts, NULL));
	down();
}

/* A queue waits for an event another queue signals, submitted after the wait. */
static void sz_events_cross_queue(void **state)
{
	ze_command_queue_handle_t q1, q2;
	ze_command_list_handle_t l1, l2;
	ze_event_handle_t ev[4];
	ze_event_pool_handle_t pool;
	uint32_t *a, *h;

	(void)state;
	up();
	q1 = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	q2 = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l1 = zu_list_new(&z, z.ctx);
	l2 = zu_list_new(&z, z.ctx);
	pool = events(4, 0, ev);
	a = zu_dev_new(&z, N * 4);
	h = zu_host_new(&z, N * 4);
	/* l1 (q1): gate ev[0], fill a = 4, signal ev[1]; l2 (q2): wait ev[1], copy, ev[2]. */
	CK(zu_fill(&z, l1, a, 4, N, ev[1], 1, &ev[0]));
	CK(zeCommandListAppendMemoryCopy(l2, h, a, N * 4, ev[2], 1, &ev[1]));
	CK(zeCommandListClose(l1));
	CK(zeCommandListClose(l2));
	CK(zu_exec(q2, l2, NULL));
	CK(zu_exec(q1, l1, NULL));
	EXPECT(zeEventQueryStatus(ev[2]), ZE_RESULT_NOT_READY);
	EXPECT(zeCommandQueueSynchronize(q2, 0), ZE_RESULT_NOT_READY);
	EXPECT(zeCommandQueueSynchronize(q1, 0), ZE_RESULT_NOT_READY);
	assert_true(zu_all(h, N, 0));
	CK(zeEventHostSignal(ev[0]));
	CK(zeEventHostSynchronize(ev[2], UINT64_MAX));
	assert_true(zu_all(h, N, 4));
	CK(zeCommandQueueSynchronize(q1, UINT64_MAX));
	CK(zeCommandQueueSynchronize(q2, UINT64_MAX));
	CK(zeCommandListDestroy(l1));
	CK(zeCommandListDestroy(l2));
	events_free(pool, 4, ev);
	CK(zeCommandQueueDestroy(q1));
	CK(zeCommandQueueDestroy(q2));
	CK(zu_free(&z, a, h, NULL));
	down();
}

/*
 * A wait sees the event as it is when the queue gets there: an event
 * signalled, then reset by an earlier command of the same queue, holds the
 * queue again; a command with two waits needs both.
 */
static void sz_event_state_at_arrival(void **state)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	ze_event_handle_t ev[4];
	ze_event_pool_handle_t pool;
	uint32_t *a;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	pool = events(4, 0, ev);
	a = zu_host_new(&z, N * 4);
	CK(zeEventHostSignal(ev[0]));
	CK(zeCommandListAppendEventReset(l, ev[0]));
	CK(zu_inc(&z, l, a, N, ev[3], 2, (ze_event_handle_t[]){ ev[0], ev[1] }));
	CK(zeCommandListClose(l));
	CK(zu_exec(q, l, NULL));
	EXPECT(zeEventHostSynchronize(ev[3], 20 * MS), ZE_RESULT_NOT_READY);
	CK(zeEventHostSignal(ev[1]));
	EXPECT(zeEventHostSynchronize(ev[3], 20 * MS), ZE_RESULT_NOT_READY);
	assert_true(zu_all(a, N, 0));
	CK(zeEventHostSignal(ev[0]));
	CK(zeEventHostSynchronize(ev[3], UINT64_MAX));
	assert_true(zu_all(a, N, 1));
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CK(zeCommandListDestroy(l));
	events_free(pool, 4, ev);
	CK(zeCommandQueueDestroy(q));
	CK(zeMemFree(z.ctx, a));
	down();
}

static void sz_fences(void **state)
{
	ze_command_queue_handle_t q, q2;
	ze_command_list_handle_t l, l2;
	ze_fence_handle_t f, fs, f2;
	ze_event_handle_t gate;
	ze_event_pool_handle_t pool;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	q2 = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	l2 = zu_list_new(&z, z.ctx);
	pool = events(1, 0, &gate);
	CK(zu_fence(q, 0, &f));
	CK(zu_fence(q, ZE_FENCE_FLAG_SIGNALED, &fs));
	CK(zu_fence(q2, 0, &f2));
	EXPECT(zeFenceQueryStatus(f), ZE_RESULT_NOT_READY);
	EXPECT(zeFenceQueryStatus(fs), ZE_RESULT_SUCCESS);
	CK(zeCommandListAppendWaitOnEvents(l, 1, &gate));
	CK(zeCommandListClose(l));
	CK(zeCommandListClose(l2));
	EXPECT(zu_exec(q, l, f2), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
	CK(zu_exec(q, l, f));
	CK(zu_exec(q2, l2, f2));
	EXPECT(zeFenceHostSynchronize(f, 0), ZE_RESULT_NOT_READY);
	CK(zeFenceHostSynchronize(f2, UINT64_MAX));
	EXPECT(zeFenceQueryStatus(f), ZE_RESULT_NOT_READY);
	CK(zeEventHostSignal(gate));
	CK(zeFenceHostSynchronize(f, UINT64_MAX));
	CK(zeFenceQueryStatus(f));
	CK(zeFenceReset(f));
	EXPECT(zeFenceQueryStatus(f), ZE_RESULT_NOT_READY);
	CK(zeFenceDestroy(f));
	CK(zeFenceDestroy(fs));
	CK(zeFenceDestroy(f2));
	CK(zeCommandListDestroy(l));
	CK(zeCommandListDestroy(l2));
	events_free(pool, 1, &gate);
	CK(zeCommandQueueDestroy(q));
	CK(zeCommandQueueDestroy(q2));
	down();
}

/* Finite timeouts wait at least their time; zero ones not at all; UINT64_MAX until done. */
static void sz_timeouts(void **state)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	ze_fence_handle_t f;
	ze_event_handle_t ev[2];
	ze_event_pool_handle_t pool;
	uint64_t t0;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	pool = events(2, 0, ev);
	CK(zu_fence(q, 0, &f));
	CK(zu_spin(&z, l, 5 * MS, ev[1], 1, &ev[0]));
	CK(zeCommandListClose(l));
	CK(zu_exec(q, l, f));
	EXPECT(zeEventHostSynchronize(ev[1], 0), ZE_RESULT_NOT_READY);
	EXPECT(zeFenceHostSynchronize(f, 0), ZE_RESULT_NOT_READY);
	EXPECT(zeCommandQueueSynchronize(q, 0), ZE_RESULT_NOT_READY);
	t0 = now_ns();
	EXPECT(zeEventHostSynchronize(ev[1], 10 * MS), ZE_RESULT_NOT_READY);
	assert_true(now_ns() - t0 >= 10 * MS);
	t0 = now_ns();
	EXPECT(zeFenceHostSynchronize(f, 10 * MS), ZE_RESULT_NOT_READY);
	assert_true(now_ns() - t0 >= 10 * MS);
	t0 = now_ns();
	EXPECT(zeCommandQueueSynchronize(q, 10 * MS), ZE_RESULT_NOT_READY);
	assert_true(now_ns() - t0 >= 10 * MS);
	t0 = now_ns();   /* the spin starts after the gate opens */
	CK(zeEventHostSignal(ev[0]));
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	assert_true(now_ns() - t0 >= 5 * MS);
	CK(zeEventHostSynchronize(ev[1], 0));
	CK(zeFenceHostSynchronize(f, 0));
	CK(zeCommandQueueSynchronize(q, 0));
	CK(zeFenceDestroy(f));
	CK(zeCommandListDestroy(l));
	events_free(pool, 2, ev);
	CK(zeCommandQueueDestroy(q));
	down();
}

/* Arguments and group size are captured when the command is appended. */
static void sz_args_captured(void **state)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l, il;
	ze_event_handle_t ev[2];
	ze_event_pool_handle_t pool;
	uint32_t *a, *b, v = 99;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	pool = events(2, 0, ev);
	a = zu_host_new(&z, N * 4);
	b = zu_host_new(&z, N * 4);
	CK(zu_fill(&z, l, a, 6, N, NULL, 0, NULL));
	CK(zu_fill(&z, il, b, 8, N, ev[1], 1, &ev[0]));
	CK(zeKernelSetArgumentValue(z.fill, 0, sizeof(a), &b));
	CK(zeKernelSetArgumentValue(z.fill, 1, sizeof(v), &v));
	CK(zeKernelSetArgumentValue(z.fill, 2, sizeof(uint64_t), NULL));
	CK(zeKernelSetGroupSize(z.fill, 32, 2, 1));
	run(q, l);
	CK(zeEventHostSignal(ev[0]));
	CK(zeEventHostSynchronize(ev[1], UINT64_MAX));
	assert_true(zu_all(a, N, 6) && zu_all(b, N, 8));
	CK(zeCommandListDestroy(l));
	CK(zeCommandListDestroy(il));
	events_free(pool, 2, ev);
	CK(zeCommandQueueDestroy(q));
	CK(zu_free(&z, a, b, NULL));
	down();
}

/* The Level Zero error codes a driver returns for bad input. */
static void sz_errors(void **state)
{
	ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC };
	ze_event_pool_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .count = 0 };
	ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0 };
	ze_kernel_desc_t kd = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = NULL };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	ze_command_list_handle_t l, il, ol;
	ze_command_queue_handle_t q, oq;
	ze_event_handle_t ev[1], oe;
	ze_event_pool_handle_t pool, op;
	ze_kernel_handle_t ok;
	uint32_t n = 0, x = 0;
	void *p;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	pool = events(1, 0, ev);
	EXPECT(zeContextCreate(z.drv, NULL, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT(zeCommandQueueCreate(z.ctx, NULL, &qd, &oq), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	qd.mode = 7;
	EXPECT(zeCommandQueueCreate(z.ctx, z.dev, &qd, &oq), ZE_RESULT_ERROR_INVALID_ENUMERATION);
	qd.mode = ZE_COMMAND_QUEUE_MODE_DEFAULT;
	qd.index = 99;
	EXPECT(zeCommandQueueCreate(z.ctx, z.dev, &qd, &oq), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT(zeCommandListCreateImmediate(z.ctx, z.dev, &qd, &ol),
	       ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT(zeEventPoolCreate(z.ctx, &pd, 0, NULL, &op), ZE_RESULT_ERROR_INVALID_SIZE);
	pd.count = 1;
	pd.flags = 0x100;
	EXPECT(zeEventPoolCreate(z.ctx, &pd, 0, NULL, &op), ZE_RESULT_ERROR_INVALID_ENUMERATION);
	EXPECT(zeEventCreate(pool, &ed, &oe), ZE_RESULT_ERROR_INVALID_ARGUMENT);  /* in use */
	EXPECT(zeKernelCreate(z.mod, &kd, &ok), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT(zeMemAllocHost(z.ctx, &hd, 1ull << 40, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
	EXPECT(zeMemAllocHost(NULL, &hd, 64, 0, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeDeviceGet(NULL, &n, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeEventQueryStatus(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeEventHostSignal(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeFenceHostSynchronize(NULL, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeCommandListClose(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeCommandListAppendLaunchKernel(l, NULL, &zu_one, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeCommandListAppendLaunchKernel(l, z.inc, &zu_one, NULL, 1,
					       (ze_event_handle_t[]){ NULL }),
	       ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
	EXPECT(zeCommandListAppendSignalEvent(l, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT(zeCommandListAppendWaitOnEvents(l, 1, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT(zeCommandListAppendMemoryFill(l, &x, NULL, 4, 4, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT(zeKernelSetArgumentValue(z.spin, 1, 8, &x),
	       ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
	EXPECT(zeKernelSetGroupSize(z.spin, 1024, 2, 1),
	       ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
	EXPECT(zeCommandQueueExecuteCommandLists(q, 1, &il, NULL),
	       ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
	EXPECT(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT(zeEventQueryKernelTimestamp(ev[0], &(ze_kernel_timestamp_result_t){ 0 }),
	       ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
	CK(zeCommandListDestroy(l));
	CK(zeCommandListDestroy(il));
	events_free(pool, 1, ev);
	CK(zeCommandQueueDestroy(q));
	down();
}

/* A failing kernel, or one touching freed memory, loses its context only. */
static void sz_fault(void **state)
{
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_context_handle_t c2, c3;
	ze_command_queue_handle_t q2, q3;
	ze_command_list_handle_t l2, l3;
	void *gone;

	(void)state;
	up();
	CK(zeContextCreate(z.drv, &cd, &c2));
	CK(zeContextCreate(z.drv, &cd, &c3));
	CK(zu_queue(&z, c2, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &q2));
	CK(zu_queue(&z, c3, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &q3));
	CK(zu_list(&z, c2, &l2));
	CK(zu_list(&z, c3, &l3));
	CK(zu_launch(l2, z.fail, NULL, 0, NULL));
	CK(zeCommandListClose(l2));
	CK(zu_exec(q2, l2, NULL));
	EXPECT(zeCommandQueueSynchronize(q2, UINT64_MAX), ZE_RESULT_ERROR_DEVICE_LOST);
	EXPECT(zeContextGetStatus(c2), ZE_RESULT_ERROR_DEVICE_LOST);
	EXPECT(zu_exec(q2, l2, NULL), ZE_RESULT_ERROR_DEVICE_LOST);
	CK(zeContextGetStatus(z.ctx));
	CK(zeMemAllocDevice(c3, &dd, 64, 0, z.dev, &gone));
	CK(zu_fill(&z, l3, gone, 1, 16, NULL, 0, NULL));
	CK(zeCommandListClose(l3));
	CK(zeMemFree(c3, gone));
	CK(zu_exec(q3, l3, NULL));
	EXPECT(zeCommandQueueSynchronize(q3, UINT64_MAX), ZE_RESULT_ERROR_DEVICE_LOST);
	CK(zeCommandListDestroy(l2));
	CK(zeCommandListDestroy(l3));
	CK(zeCommandQueueDestroy(q2));
	CK(zeCommandQueueDestroy(q3));
	CK(zeContextDestroy(c2));
	CK(zeContextDestroy(c3));
	down();
}

static void sz_memory(void **state)
{
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	ze_memory_allocation_properties_t ap = {
		.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES };
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_context_handle_t c2;
	ze_device_handle_t owner;
	void *d, *h, *s, *base, *leak;
	size_t size;
	int local;

	(void)state;
	up();
	CK(zeMemAllocDevice(z.ctx, &dd, 1000, 4096, z.dev, &d));
	assert_int_equal((uintptr_t)d % 4096, 0);
	CK(zeMemAllocHost(z.ctx, &hd, 100, 0, &h));
	CK(zeMemAllocShared(z.ctx, &dd, &hd, 100, 0, NULL, &s));
	CK(zeMemGetAllocProperties(z.ctx, (char *)d + 999, &ap, &owner));
	assert_int_equal(ap.type, ZE_MEMORY_TYPE_DEVICE);
	assert_ptr_equal(owner, z.dev);
	CK(zeMemGetAllocProperties(z.ctx, h, &ap, &owner));
	assert_int_equal(ap.type, ZE_MEMORY_TYPE_HOST);
	assert_null(owner);
	CK(zeMemGetAllocProperties(z.ctx, s, &ap, NULL));
	assert_int_equal(ap.type, ZE_MEMORY_TYPE_SHARED);
	CK(zeMemGetAllocProperties(z.ctx, (char *)d + 1000, &ap, NULL));
	assert_int_equal(ap.type, ZE_MEMORY_TYPE_UNKNOWN);
	CK(zeMemGetAllocProperties(z.ctx, &local, &ap, NULL));
	assert_int_equal(ap.type, ZE_MEMORY_TYPE_UNKNOWN);
	CK(zeMemGetAddressRange(z.ctx, (char *)d + 10, &base, &size));
	assert_ptr_equal(base, d);
	assert_int_equal(size, 1000);
	EXPECT(zeMemGetAddressRange(z.ctx, &local, &base, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT(zeMemFree(z.ctx, (char *)d + 1), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	CK(zeContextCreate(z.drv, &cd, &c2));
	EXPECT(zeMemFree(c2, d), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	CK(zeMemAllocHost(c2, &hd, 64, 0, &leak));
	CK(zeContextDestroy(c2));   /* frees leak */
	CK(zeMemFree(z.ctx, d));
	EXPECT(zeMemFree(z.ctx, d), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	CK(zu_free(&z, h, s, NULL));
	down();
}

/*
 * Device and shared allocations share the device's memory
 * (XSCHED_SIM_DEVICE_MEMORY, the node's) and fail with OUT_OF_DEVICE_MEMORY
 * once it is exhausted; host allocations are not the device's.
 */
static void sz_device_memory(void **state)
{
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	ze_device_memory_properties_t mp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	const size_t mib = 1u << 20;
	void *d, *s, *h, *d2;
	uint32_t n = 1;

	(void)state;
	setenv("XSCHED_SIM_DEVICE_MEMORY", "64M", 1);
	up();
	CK(zeDeviceGetMemoryProperties(z.dev, &n, &mp));
	assert_true(mp.totalSize == 64 * mib);
	CK(zeMemAllocDevice(z.ctx, &dd, 40 * mib, 0, z.dev, &d));
	EXPECT(zeMemAllocShared(z.ctx, &dd, &hd, 40 * mib, 0, z.dev, &s),
	       ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
	EXPECT(zeMemAllocDevice(z.ctx, &dd, 40 * mib, 0, z.dev, &d2),
	       ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
	CK(zeMemAllocHost(z.ctx, &hd, 40 * mib, 0, &h));
	CK(zeMemAllocDevice(z.ctx, &dd, 16 * mib, 0, z.dev, &d2));
	CK(zeMemFree(z.ctx, d));
	CK(zeMemAllocShared(z.ctx, &dd, &hd, 40 * mib, 0, z.dev, &s));
	CK(zu_free(&z, s, h, d2, NULL));
	CK(zeMemAllocDevice(z.ctx, &dd, 40 * mib, 0, z.dev, &d));
	CK(zeMemFree(z.ctx, d));
	down();
}

/* Destroying a queue or an immediate list waits for its work. */
static void sz_destroy_waits(void **state)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l, il;
	uint32_t *a, *b;

	(void)state;
	up();
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	a = zu_host_new(&z, N * 4);
	b = zu_host_new(&z, N * 4);
	CK(zu_spin(&z, l, 5 * MS, NULL, 0, NULL));
	CK(zu_bar(l));
	CK(zu_fill(&z, l, a, 3, N, NULL, 0, NULL));
	CK(zeCommandListClose(l));
	CK(zu_exec(q, l, NULL));
	CK(zu_spin(&z, il, 5 * MS, NULL, 0, NULL));
	CK(zu_bar(il));
	CK(zu_fill(&z, il, b, 4, N, NULL, 0, NULL));
	CK(zeCommandQueueDestroy(q));
	CK(zeCommandListDestroy(il));
	assert_true(zu_all(a, N, 3) && zu_all(b, N, 4));
	CK(zeCommandListDestroy(l));
	CK(zu_free(&z, a, b, NULL));
	down();
}

/* Kernel timestamps bracket the command that signalled the event. */
static void sz_timestamps(void **state)
{
	ze_command_list_handle_t il = NULL;
	ze_event_handle_t ev[2];
	ze_event_pool_handle_t pool;
	ze_kernel_timestamp_result_t kt;
	uint64_t host, t0, t1;

	(void)state;
	up();
	il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
	pool = events(2, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, ev);
	EXPECT(zeEventQueryKernelTimestamp(ev[0], &kt), ZE_RESULT_NOT_READY);
	CK(zeDeviceGetGlobalTimestamps(z.dev, &host, &t0));
	CK(zu_spin(&z, il, 3 * MS, ev[0], 0, NULL));
	CK(zeCommandListAppendSignalEvent(il, ev[1]));
	CK(zeDeviceGetGlobalTimestamps(z.dev, &host, &t1));
	CK(zeEventQueryKernelTimestamp(ev[0], &kt));
	assert_true(kt.global.kernelStart >= t0 && kt.global.kernelEnd <= t1);
	assert_true(kt.global.kernelEnd - kt.global.kernelStart >= 3 * MS);
	assert_true(kt.context.kernelStart == kt.global.kernelStart);
	CK(zeEventQueryKernelTimestamp(ev[1], &kt));
	assert_true(kt.global.kernelStart == kt.global.kernelEnd);
	CK(zeCommandListDestroy(il));
	events_free(pool, 2, ev);
	down();
}

/* Threads driving queues at once, one releasing another's queue through an event. */
struct thr {
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	ze_event_handle_t gate;
	uint32_t *p;
	int rounds;
	ze_result_t r;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	int i;

	t->r = ZE_RESULT_SUCCESS;
	for (i = 0; i < t->rounds && t->r == ZE_RESULT_SUCCESS; i++)
		t->r = zu_exec(t->q, t->l, NULL);
	if (t->r == ZE_RESULT_SUCCESS && t->gate)
		t->r = zeEventHostSignal(t->gate);
	if (t->r == ZE_RESULT_SUCCESS)
		t->r = zeCommandQueueSynchronize(t->q, UINT64_MAX);
	return NULL;
}

static void sz_threads(void **state)
{
	enum { T = 4, ROUNDS = 40 };
	struct thr t[T];
	pthread_t tid[T];
	ze_command_queue_handle_t qw;
	ze_command_list_handle_t lw;
	ze_event_handle_t gate;
	ze_event_pool_handle_t pool;
	uint32_t *w;
	int i;

	(void)state;
	up();
	pool = events(1, 0, &gate);
	qw = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	lw = zu_list_new(&z, z.ctx);
	w = zu_host_new(&z, N * 4);
	CK(zu_inc(&z, lw, w, N, NULL, 1, &gate));
	CK(zeCommandListClose(lw));
	CK(zu_exec(qw, lw, NULL));
	for (i = 0; i < T; i++) {
		t[i].q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
		t[i].l = zu_list_new(&z, z.ctx);
		t[i].p = zu_host_new(&z, N * 4);
		t[i].rounds = ROUNDS;
		t[i].gate = i == T - 1 ? gate : NULL;
		CK(zu_inc(&z, t[i].l, t[i].p, N, NULL, 0, NULL));
		CK(zeCommandListClose(t[i].l));
	}
	for (i = 0; i < T; i++)
		assert_int_equal(pthread_create(&tid[i], NULL, thr_main, &t[i]), 0);
	for (i = 0; i < T; i++) {
		pthread_join(tid[i], NULL);
		CK(t[i].r);
		assert_true(zu_all(t[i].p, N, ROUNDS));
		CK(zeCommandListDestroy(t[i].l));
		CK(zeCommandQueueDestroy(t[i].q));
		CK(zeMemFree(z.ctx, t[i].p));
	}
	CK(zeCommandQueueSynchronize(qw, UINT64_MAX));
	assert_true(zu_all(w, N, 1));
	CK(zeCommandListDestroy(lw));
	CK(zeCommandQueueDestroy(qw));
	events_free(pool, 1, &gate);
	CK(zeMemFree(z.ctx, w));
	down();
}

/* A child forked after zeInit cannot use the driver; the parent still can. */
static void sz_fork(void **state)
{
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_context_handle_t c;
	pid_t pid;
	int st;

	(void)state;
	up();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(zeContextCreate(z.drv, &cd, &c) == ZE_RESULT_ERROR_UNINITIALIZED ? 0 : 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CK(zeContextCreate(z.drv, &cd, &c));
	CK(zeContextDestroy(c));
	down();
}

/* ---- ze_prog, run as a child ---- */

/* A running ze_prog: its pid and the read end of its stdout. */
struct child {
	pid_t pid;
	int out;
};

/* Starts ze_prog with @args (NULL-terminated) and @env ("NAME=value", optional). */
static struct child prog_start(const char *const *args, const char *env)
{
	const char *argv[32] = { XS_ZE_PROG };
	struct child c;
	int fd[2], n = 1;

	while (args && *args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	assert_int_equal(pipe(fd), 0);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (env)
			putenv((char *)env);
		execv(XS_ZE_PROG, (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	c.out = fd[0];
	return c;
}

/*
 * Collects @c's stdout into @out (the first @cap - 1 bytes) and returns
 * its exit status, -1 if it did not exit.
 */
static int prog_wait(struct child c, char *out, size_t cap)
{
	char sink[4096];
	size_t len = 0;
	ssize_t r;
	int st;

	for (;;) {
		size_t room = cap - 1 - len;

		r = read(c.out, room ? out + len : sink, room ? room : sizeof(sink));
		if (r <= 0)
			break;
		if (room)
			len += (size_t)r;
	}
	out[len] = '\0';
	close(c.out);
	assert_int_equal(waitpid(c.pid, &st, 0), c.pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int prog(const char *const *args, const char *env, char *out, size_t cap)
{
	return prog_wait(prog_start(args, env), out, cap);
}

/* Every phase passes natively; with the loader wrapping handles, all but errors agree. */
static void sz_prog(void **state)
{
	static const char *const all_but_errors[] = {
		"props", "order", "immediate", "events", "fence", "timeout", "args",
		"timing", "fault", "threads", NULL
	};
	static char full[16384], out1[16384], out2[16384];

	(void)state;
	setenv("XSCHED_SIM_DEVICE", test_dev("zep"), 1);
	assert_int_equal(prog(NULL, NULL, full, sizeof(full)), 0);
	assert_non_null(strstr(full, "order: h=22 h2=23"));
	assert_non_null(strstr(full, "errors: execute immediate = "
				     "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE"));
	assert_non_null(strstr(full, "threads: 4 x 25 executions"));
	assert_int_equal(prog(all_but_errors, NULL, out1, sizeof(out1)), 0);
	assert_int_equal(prog(all_but_errors, "ZE_ENABLE_LOADER_INTERCEPT=1", out2,
			      sizeof(out2)), 0);
	assert_string_equal(out1, out2);
	assert_int_equal(prog((const char *const[]){ "nope", NULL }, NULL, out1, sizeof(out1)), 2);
}

/* Processes share the device $XSCHED_SIM_DEVICE names. */
static void sz_shared_device(void **state)
{
	static const char *const phases[] = { "order", "events", NULL };
	static char o1[8192], o2[8192];
	struct sim_dev_info before, after;
	struct child c1, c2;
	struct sim_dev *d;

	(void)state;
	setenv("XSCHED_SIM_DEVICE", test_dev("zes"), 1);
	assert_int_equal(sim_dev_open(sim_dev_default_name(), NULL, &d), 0);
	sim_dev_info_get(d, &before);
	c1 = prog_start(phases, NULL);
	c2 = prog_start(phases, NULL);
	assert_int_equal(prog_wait(c1, o1, sizeof(o1)), 0);
	assert_int_equal(prog_wait(c2, o2, sizeof(o2)), 0);
	assert_string_equal(o1, o2);
	sim_dev_info_get(d, &after);
	assert_true(after.commands >= before.commands + 40);
	sim_dev_close(d);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(sz_tables),
	cmocka_unit_test(sz_before_init),
	cmocka_unit_test(sz_properties),
	cmocka_unit_test(sz_unimplemented),
	cmocka_unit_test(sz_kernels_data),
	cmocka_unit_test(sz_copies_fills),
	cmocka_unit_test(sz_immediate),
	cmocka_unit_test(sz_events_cross_queue),
	cmocka_unit_test(sz_event_state_at_arrival),
	cmocka_unit_test(sz_fences),
	cmocka_unit_test(sz_timeouts),
	cmocka_unit_test(sz_args_captured),
	cmocka_unit_test(sz_errors),
	cmocka_unit_test(sz_fault),
	cmocka_unit_test(sz_memory),
	cmocka_unit_test(sz_device_memory),
	cmocka_unit_test(sz_destroy_waits),
	cmocka_unit_test(sz_timestamps),
	cmocka_unit_test(sz_threads),
	cmocka_unit_test(sz_fork),
	cmocka_unit_test(sz_prog),
	cmocka_unit_test(sz_shared_device),
};

/* Before anything reaches the loader: the driver it is to load. */
static void sz_env(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	setenv("ZE_ENABLE_ALT_DRIVERS", XS_SIM_ZE_PATH, 0);
}

TU_MAIN_WITH(tests, sz_env)
