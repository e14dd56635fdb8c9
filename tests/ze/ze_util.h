/*
 * Helpers shared by the Level Zero test programs (ze_prog.c) and the
 * simulated driver's tests (test_sim_ze.c): object creation with the
 * descriptors filled in, appenders of the simulated device's built-in
 * kernels, result names and data checks. Each returns the first
 * ze_result_t that is not ZE_RESULT_SUCCESS, for the caller to assert in
 * its own way; an includer that defines ZU_CHECK(result) (its assertion
 * of success) also gets constructors returning the object itself.
 */
#ifndef XS_TESTS_ZE_UTIL_H
#define XS_TESTS_ZE_UTIL_H

#include <level_zero/ze_api.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Everything a test needs to reach the device. */
struct zu {
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_module_handle_t mod;
	ze_kernel_handle_t spin, fill, add, inc, scale, sum, fail;
};

static inline const char *zu_name(ze_result_t r)
{
	switch (r) {
#define ZU_NAME(x) case x: return #x;
	ZU_NAME(ZE_RESULT_SUCCESS) ZU_NAME(ZE_RESULT_NOT_READY)
	ZU_NAME(ZE_RESULT_ERROR_DEVICE_LOST) ZU_NAME(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
	ZU_NAME(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) ZU_NAME(ZE_RESULT_ERROR_UNINITIALIZED)
	ZU_NAME(ZE_RESULT_ERROR_UNSUPPORTED_VERSION) ZU_NAME(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_ARGUMENT) ZU_NAME(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_NULL_POINTER) ZU_NAME(ZE_RESULT_ERROR_INVALID_SIZE)
	ZU_NAME(ZE_RESULT_ERROR_UNSUPPORTED_SIZE) ZU_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_ENUMERATION) ZU_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
	ZU_NAME(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)
	ZU_NAME(ZE_RESULT_ERROR_OVERLAPPING_REGIONS) ZU_NAME(ZE_RESULT_ERROR_UNKNOWN)
#undef ZU_NAME
	default: return "ZE_RESULT_?";
	}
}

/* FNV-1a 64 of @n bytes, as the sf_checksum kernel computes it. */
static inline uint64_t zu_fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Whether the @n words at @p all equal @v. */
static inline int zu_all(const uint32_t *p, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

#define ZU_TRY(call)                                                           \
	do {                                                                   \
		ze_result_t zu_r_ = (call);                                    \
		if (zu_r_ != ZE_RESULT_SUCCESS)                                \
			return zu_r_;                                          \
	} while (0)

static inline ze_result_t zu_kernel(struct zu *z, const char *name, ze_kernel_handle_t *out)
{
	ze_kernel_desc_t d = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name };

	return zeKernelCreate(z->mod, &d, out);
}

/* zeInit, the first driver and device, a context and the built-in kernels. */
static inline ze_result_t zu_open(struct zu *z)
{
	static const uint8_t image[] = "xsched built-in kernels";
	ze_module_desc_t md = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
				.format = ZE_MODULE_FORMAT_IL_SPIRV,
				.inputSize = sizeof(image), .pInputModule = image };
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	uint32_t n = 1;

	ZU_TRY(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	ZU_TRY(zeDriverGet(&n, &z->drv));
	n = 1;
	ZU_TRY(zeDeviceGet(z->drv, &n, &z->dev));
	ZU_TRY(zeContextCreate(z->drv, &cd, &z->ctx));
	ZU_TRY(zeModuleCreate(z->ctx, z->dev, &md, &z->mod, NULL));
	ZU_TRY(zu_kernel(z, "sf_spin", &z->spin));
	ZU_TRY(zu_kernel(z, "sf_fill", &z->fill));
	ZU_TRY(zu_kernel(z, "sf_add", &z->add));
	ZU_TRY(zu_kernel(z, "sf_inc", &z->inc));
	ZU_TRY(zu_kernel(z, "sf_scale", &z->scale));
	ZU_TRY(zu_kernel(z, "sf_checksum", &z->sum));
	return zu_kernel(z, "sf_fail", &z->fail);
}

static inline ze_result_t zu_close(struct zu *z)
{
	ze_kernel_handle_t *k[] = { &z->spin, &z->fill, &z->add, &z->inc, &z->scale, &z->sum,
				    &z->fail };
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		ZU_TRY(zeKernelDestroy(*k[i]));
	ZU_TRY(zeModuleDestroy(z->mod));
	return zeContextDestroy(z->ctx);
}

static inline ze_result_t zu_dev_alloc(struct zu *z, size_t size, void *out)
{
	ze_device_mem_alloc_desc_t d = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };

	return zeMemAllocDevice(z->ctx, &d, size, 64, z->dev, (void **)out);
}

/* Host memory, zeroed. */
static inline ze_result_t zu_host_alloc(struct zu *z, size_t size, void *out)
{
	ze_host_mem_alloc_desc_t h = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };

	ZU_TRY(zeMemAllocHost(z->ctx, &h, size, 0, (void **)out));
	memset(*(void **)out, 0, size);
	return ZE_RESULT_SUCCESS;
}

/* zeMemFree of each pointer given, up to a NULL; the first failure. */
static inline ze_result_t zu_free(struct zu *z, ...)
{
	ze_result_t r = ZE_RESULT_SUCCESS;
	va_list ap;
	void *p;

	va_start(ap, z);
	while ((p = va_arg(ap, void *)) != NULL) {
		ze_result_t f = zeMemFree(z->ctx, p);

		if (r == ZE_RESULT_SUCCESS)
			r = f;
	}
	va_end(ap);
	return r;
}

static inline ze_result_t zu_queue(struct zu *z, ze_context_handle_t c,
				   ze_command_queue_mode_t mode, ze_command_queue_handle_t *out)
{
	ze_command_queue_desc_t d = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = mode };

	return zeCommandQueueCreate(c, z->dev, &d, out);
}

static inline ze_result_t zu_list(struct zu *z, ze_context_handle_t c,
				  ze_command_list_handle_t *out)
{
	ze_command_list_desc_t d = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC };

	return zeCommandListCreate(c, z->dev, &d, out);
}

static inline ze_result_t zu_imm(struct zu *z, ze_command_queue_mode_t mode,
				 ze_command_list_handle_t *out)
{
	ze_command_queue_desc_t d = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = mode };

	return zeCommandListCreateImmediate(z->ctx, z->dev, &d, out);
}

/* A host-visible pool of @count events, with @flags added. */
static inline ze_result_t zu_pool(struct zu *z, uint32_t count, ze_event_pool_flags_t flags,
				  ze_event_pool_handle_t *out)
{
	ze_event_pool_desc_t d = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | flags,
				   .count = count };

	return zeEventPoolCreate(z->ctx, &d, 1, &z->dev, out);
}

static inline ze_result_t zu_event(ze_event_pool_handle_t pool, uint32_t index,
				   ze_event_handle_t *out)
{
	ze_event_desc_t d = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = index,
			      .signal = ZE_EVENT_SCOPE_FLAG_HOST,
			      .wait = ZE_EVENT_SCOPE_FLAG_HOST };

	return zeEventCreate(pool, &d, out);
}

static inline ze_result_t zu_fence(ze_command_queue_handle_t q, ze_fence_flags_t flags,
				   ze_fence_handle_t *out)
{
	ze_fence_desc_t d = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC, .flags = flags };

	return zeFenceCreate(q, &d, out);
}

static inline ze_result_t zu_exec(ze_command_queue_handle_t q, ze_command_list_handle_t l,
				  ze_fence_handle_t f)
{
	return zeCommandQueueExecuteCommandLists(q, 1, &l, f);
}

/* Orders what follows after what precedes (lists need not run in order). */
static inline ze_result_t zu_bar(ze_command_list_handle_t l)
{
	return zeCommandListAppendBarrier(l, NULL, 0, NULL);
}

static const ze_group_count_t zu_one = { 1, 1, 1 };

static inline ze_result_t zu_launch(ze_command_list_handle_t l, ze_kernel_handle_t k,
				    ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *wait)
{
	return zeCommandListAppendLaunchKernel(l, k, &zu_one, sig, nwait, wait);
}

/* Appenders of the built-in kernels over @n words; arguments set just before. */
static inline ze_result_t zu_fill(struct zu *z, ze_command_list_handle_t l, void *p, uint32_t v,
				  uint64_t n, ze_event_handle_t sig, uint32_t nwait,
				  ze_event_handle_t *wait)
{
	ZU_TRY(zeKernelSetArgumentValue(z->fill, 0, sizeof(p), &p));
	ZU_TRY(zeKernelSetArgumentValue(z->fill, 1, sizeof(v), &v));
	ZU_TRY(zeKernelSetArgumentValue(z->fill, 2, sizeof(n), &n));
	return zu_launch(l, z->fill, sig, nwait, wait);
}

static inline ze_result_t zu_inc(struct zu *z, ze_command_list_handle_t l, void *p, uint64_t n,
				 ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *wait)
{
	ZU_TRY(zeKernelSetArgumentValue(z->inc, 0, sizeof(p), &p));
	ZU_TRY(zeKernelSetArgumentValue(z->inc, 1, sizeof(n), &n));
	return zu_launch(l, z->inc, sig, nwait, wait);
}

static inline ze_result_t zu_scale(struct zu *z, ze_command_list_handle_t l, void *p,
				   uint32_t f, uint64_t n)
{
	ZU_TRY(zeKernelSetArgumentValue(z->scale, 0, sizeof(p), &p));
	ZU_TRY(zeKernelSetArgumentValue(z->scale, 1, sizeof(f), &f));
	ZU_TRY(zeKernelSetArgumentValue(z->scale, 2, sizeof(n), &n));
	return zu_launch(l, z->scale, NULL, 0, NULL);
}

/* c[i] = a[i] + b[i]. */
static inline ze_result_t zu_add(struct zu *z, ze_command_list_handle_t l, void *a, void *b,
				 void *c, uint64_t n)
{
	ZU_TRY(zeKernelSetArgumentValue(z->add, 0, sizeof(a), &a));
	ZU_TRY(zeKernelSetArgumentValue(z->add, 1, sizeof(b), &b));
	ZU_TRY(zeKernelSetArgumentValue(z->add, 2, sizeof(c), &c));
	ZU_TRY(zeKernelSetArgumentValue(z->add, 3, sizeof(n), &n));
	return zu_launch(l, z->add, NULL, 0, NULL);
}

/* *@out = FNV-1a of the @bytes at @p, computed by the device. */
static inline ze_result_t zu_sum(struct zu *z, ze_command_list_handle_t l, void *p,
				 uint64_t bytes, uint64_t *out)
{
	ZU_TRY(zeKernelSetArgumentValue(z->sum, 0, sizeof(p), &p));
	ZU_TRY(zeKernelSetArgumentValue(z->sum, 1, sizeof(bytes), &bytes));
	ZU_TRY(zeKernelSetArgumentValue(z->sum, 2, sizeof(out), &out));
	return zu_launch(l, z->sum, NULL, 0, NULL);
}

/* Occupies the device @ns nanoseconds. */
static inline ze_result_t zu_spin(struct zu *z, ze_command_list_handle_t l, uint64_t ns,
				  ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *wait)
{
	ZU_TRY(zeKernelSetArgumentValue(z->spin, 0, sizeof(ns), &ns));
	return zu_launch(l, z->spin, sig, nwait, wait);
}

#ifdef ZU_CHECK
static inline void *zu_dev_new(struct zu *z, size_t size)
{
	void *p;

	ZU_CHECK(zu_dev_alloc(z, size, &p));
	return p;
}

static inline void *zu_host_new(struct zu *z, size_t size)
{
	void *p;

	ZU_CHECK(zu_host_alloc(z, size, &p));
	return p;
}

static inline ze_command_queue_handle_t zu_queue_new(struct zu *z, ze_context_handle_t c,
						     ze_command_queue_mode_t mode)
{
	ze_command_queue_handle_t q;

	ZU_CHECK(zu_queue(z, c, mode, &q));
	return q;
}

static inline ze_command_list_handle_t zu_list_new(struct zu *z, ze_context_handle_t c)
{
	ze_command_list_handle_t l;

	ZU_CHECK(zu_list(z, c, &l));
	return l;
}

static inline ze_command_list_handle_t zu_imm_new(struct zu *z, ze_command_queue_mode_t mode)
{
	ze_command_list_handle_t l;

	ZU_CHECK(zu_imm(z, mode, &l));
	return l;
}

static inline ze_event_pool_handle_t zu_pool_new(struct zu *z, uint32_t count,
						 ze_event_pool_flags_t flags)
{
	ze_event_pool_handle_t p;

	ZU_CHECK(zu_pool(z, count, flags, &p));
	return p;
}

static inline ze_event_handle_t zu_event_new(ze_event_pool_handle_t pool, uint32_t index)
{
	ze_event_handle_t e;

	ZU_CHECK(zu_event(pool, index, &e));
	return e;
}

static inline ze_fence_handle_t zu_fence_new(ze_command_queue_handle_t q, ze_fence_flags_t flags)
{
	ze_fence_handle_t f;

	ZU_CHECK(zu_fence(q, flags, &f));
	return f;
}
#endif

#endif
