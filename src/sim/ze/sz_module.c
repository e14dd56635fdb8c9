/*
 * Modules, build logs and kernels of the simulated Level Zero driver.
 *
 * Design: the simulated device runs only its built-in kernels
 * (src/sim/common/sf_kernels.c), so a module accepts any image, SPIR-V or
 * native, and offers all of them by name. A kernel holds its current
 * arguments and group size; appends copy both, so changing them later
 * never affects a command already appended. The group size is checked
 * against the device's limits and otherwise not used (the built-ins
 * process their n elements whatever the launch).
 */
#include "sim/ze/sz_internal.h"
#include "base/compiler.h"

#include <stdlib.h>
#include <string.h>

static const struct sz_log sz_empty_log_proto = { .magic = SZ_M_LOG };

ze_result_t zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
			   const ze_module_desc_t *desc, ze_module_handle_t *phModule,
			   ze_module_build_log_handle_t *phBuildLog)
{
	ze_result_t r;
	struct sz_context *ctx = sz_get(hContext, SZ_M_CONTEXT, &r);
	struct sz_module *m;
	struct sz_log *log = NULL;

	if (!ctx)
		return r;
	if (!sz_obj(hDevice, SZ_M_DEVICE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !desc->pInputModule || !phModule)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->format > ZE_MODULE_FORMAT_NATIVE)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->inputSize == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	m = calloc(1, sizeof(*m));
	if (phBuildLog) {
		log = malloc(sizeof(*log));
		if (log)
			*log = sz_empty_log_proto;
	}
	if (!m || (phBuildLog && !log)) {
		free(m);
		free(log);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	m->magic = SZ_M_MODULE;
	m->ctx = ctx;
	*phModule = (ze_module_handle_t)(void *)m;
	if (phBuildLog)
		*phBuildLog = (ze_module_build_log_handle_t)(void *)log;
	return ZE_RESULT_SUCCESS;
}

/* Its kernels must be destroyed first (the spec's rule; not checked). */
ze_result_t zeModuleDestroy(ze_module_handle_t hModule)
{
	return sz_handle_free(hModule, SZ_M_MODULE);
}

ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog)
{
	return sz_handle_free(hModuleBuildLog, SZ_M_LOG);
}

/* Building never fails: the log is always empty. */
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog,
				      size_t *pSize, char *pBuildLog)
{
	if (!sz_obj(hModuleBuildLog, SZ_M_LOG))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pSize)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (pBuildLog && *pSize)
		pBuildLog[0] = '\0';
	*pSize = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetKernelNames(ze_module_handle_t hModule, uint32_t *pCount,
				   const char **pNames)
{
	ze_result_t r;
	uint32_t i, n;

	if (!sz_get(hModule, SZ_M_MODULE, &r))
		return r;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	n = sz_count(pCount, (uint32_t)sf_nkernels, pNames != NULL);
	for (i = 0; i < n; i++)
		pNames[i] = sf_kernels[i].name;
	return ZE_RESULT_SUCCESS;
}

/* The group size starts as 1x1x1; arguments start zeroed (NULL pointers). */
ze_result_t zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
			   ze_kernel_handle_t *phKernel)
{
	ze_result_t r;
	struct sz_module *m = sz_get(hModule, SZ_M_MODULE, &r);
	const struct sf_kernel_def *def;
	struct sz_kernel *k;

	if (!m)
		return r;
	if (!desc || !desc->pKernelName || !phKernel)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags > 0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	def = sf_kernel_find(desc->pKernelName);
	if (!def)
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	k = calloc(1, sizeof(*k));
	if (!k)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	k->magic = SZ_M_KERNEL;
	k->mod = m;
	k->def = def;
	k->group[0] = k->group[1] = k->group[2] = 1;
	*phKernel = (ze_kernel_handle_t)(void *)k;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelDestroy(ze_kernel_handle_t hKernel)
{
	return sz_handle_free(hKernel, SZ_M_KERNEL);
}

/* Affects later appends only. A NULL value is a NULL pointer (zeroes). */
ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
				     size_t argSize, const void *pArgValue)
{
	ze_result_t r;
	struct sz_kernel *k = sz_get(hKernel, SZ_M_KERNEL, &r);

	if (!k)
		return r;
	if (argIndex >= k->def->nparams)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
	if (argSize != k->def->size[argIndex])
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
	if (pArgValue)
		memcpy(k->params + k->def->offset[argIndex], pArgValue, argSize);
	else
		memset(k->params + k->def->offset[argIndex], 0, argSize);
	return ZE_RESULT_SUCCESS;
}

static bool sz_group_ok(uint32_t x, uint32_t y, uint32_t z)
{
	return x && y && z && x <= SZ_GROUP_MAX && y <= SZ_GROUP_MAX && z <= 64 &&
	       (uint64_t)x * y * z <= SZ_GROUP_MAX;
}

ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t groupSizeX,
				 uint32_t groupSizeY, uint32_t groupSizeZ)
{
	ze_result_t r;
	struct sz_kernel *k = sz_get(hKernel, SZ_M_KERNEL, &r);

	if (!k)
		return r;
	if (!sz_group_ok(groupSizeX, groupSizeY, groupSizeZ))
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	k->group[0] = groupSizeX;
	k->group[1] = groupSizeY;
	k->group[2] = groupSizeZ;
	return ZE_RESULT_SUCCESS;
}

/* The largest divisor of @n that is at most @max. */
static uint32_t sz_divisor(uint32_t n, uint32_t max)
{
	uint32_t d;

	for (d = n < max ? n : max; d > 1; d--)
		if (n % d == 0)
			return d;
	return 1;
}

/* Group sizes that divide the global size, X first, within the limits. */
ze_result_t zeKernelSuggestGroupSize(ze_kernel_handle_t hKernel, uint32_t globalSizeX,
				     uint32_t globalSizeY, uint32_t globalSizeZ,
				     uint32_t *groupSizeX, uint32_t *groupSizeY,
				     uint32_t *groupSizeZ)
{
	uint32_t x, y, z;
	ze_result_t r;
	struct sz_kernel *k = sz_get(hKernel, SZ_M_KERNEL, &r);

	if (!k)
		return r;
	if (!groupSizeX || !groupSizeY || !groupSizeZ)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!globalSizeX || !globalSizeY || !globalSizeZ)
		return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
	x = sz_divisor(globalSizeX, 256);
	y = sz_divisor(globalSizeY, SZ_GROUP_MAX / x);
	z = sz_divisor(globalSizeZ, BASE_MIN(64u, SZ_GROUP_MAX / (x * y)));
	*groupSizeX = x;
	*groupSizeY = y;
	*groupSizeZ = z;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelGetProperties(ze_kernel_handle_t hKernel, ze_kernel_properties_t *p)
{
	ze_result_t r;
	struct sz_kernel *k = sz_get(hKernel, SZ_M_KERNEL, &r);

	if (!k)
		return r;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->numKernelArgs = k->def->nparams;
	p->requiredGroupSizeX = 0;
	p->requiredGroupSizeY = 0;
	p->requiredGroupSizeZ = 0;
	p->requiredNumSubGroups = 0;
	p->requiredSubgroupSize = 0;
	p->maxSubgroupSize = 32;
	p->maxNumSubgroups = SZ_GROUP_MAX / 8;
	p->localMemSize = 0;
	p->privateMemSize = 0;
	p->spillMemSize = 0;
	memset(&p->uuid, 0, sizeof(p->uuid));
	return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelGetName(ze_kernel_handle_t hKernel, size_t *pSize, char *pName)
{
	size_t len;
	ze_result_t r;
	struct sz_kernel *k = sz_get(hKernel, SZ_M_KERNEL, &r);

	if (!k)
		return r;
	if (!pSize)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	len = strlen(k->def->name) + 1;
	if (pName && *pSize) {
		size_t n = *pSize < len ? *pSize : len;

		memcpy(pName, k->def->name, n - 1);
		pName[n - 1] = '\0';
	}
	*pSize = len;
	return ZE_RESULT_SUCCESS;
}
