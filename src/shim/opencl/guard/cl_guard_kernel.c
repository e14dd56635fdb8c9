/*
 * The guard half of kernels (see cl_guard.h): which kernels carry the
 * guardian, what a launch passes in their hidden arguments, and the
 * application's view of them, which never shows those arguments (their
 * count, their information) nor the instrumented twin they come from.
 * clGetKernelInfo also answers every kernel's reference count without the
 * references buffered launches hold (cl_kernel_app_refs()).
 * The record of each kernel is cl_kernel.c's (cl_kernel_hidden()).
 */
#include "shim/opencl/guard/cl_guard.h"

#include <string.h>

/* Whether argument @idx of @k is named @name (argument info of the build). */
static bool clk_arg_named(cl_kernel k, cl_uint idx, const char *name)
{
	char buf[32];
	size_t len = 0;

	if (!cl_real.clGetKernelArgInfo ||
	    cl_real.clGetKernelArgInfo(k, idx, CL_KERNEL_ARG_NAME, sizeof(buf), buf, &len) !=
		    CL_SUCCESS)
		return false;
	return len == strlen(name) + 1 && !memcmp(buf, name, len);
}

int32_t cl_guard_hidden_of(cl_kernel k, cl_uint nargs)
{
	if (nargs >= CLG_HIDDEN && clk_arg_named(k, nargs - 3, CLG_CTL) &&
	    clk_arg_named(k, nargs - 2, CLG_REC) && clk_arg_named(k, nargs - 1, CLG_ATT))
		return (int32_t)(nargs - CLG_HIDDEN);
	return -1;
}

cl_int cl_guard_set_args(cl_kernel k, int32_t hidden, const struct xal_cl_guard_args *g)
{
	cl_int rc;

	if (hidden < 0)
		return CL_SUCCESS;
	if (!g || (!g->ctl && !g->ctl_svm)) {
		cl_uint none = 0;

		rc = cl_real.clSetKernelArg(k, (cl_uint)hidden, sizeof(cl_mem), NULL);
		if (rc == CL_SUCCESS)
			rc = cl_real.clSetKernelArg(k, (cl_uint)hidden + 1, sizeof(cl_mem), NULL);
		if (rc == CL_SUCCESS)
			rc = cl_real.clSetKernelArg(k, (cl_uint)hidden + 2, sizeof(none), &none);
		return rc;
	}
	if (g->ctl_svm)
		rc = cl_real.clSetKernelArgSVMPointer(k, (cl_uint)hidden, g->ctl_svm);
	else
		rc = cl_real.clSetKernelArg(k, (cl_uint)hidden, sizeof(cl_mem), &g->ctl);
	if (rc == CL_SUCCESS && g->rec_svm)
		rc = cl_real.clSetKernelArgSVMPointer(k, (cl_uint)hidden + 1, g->rec_svm);
	else if (rc == CL_SUCCESS)
		rc = cl_real.clSetKernelArg(k, (cl_uint)hidden + 1, sizeof(cl_mem), &g->rec);
	if (rc == CL_SUCCESS)
		rc = cl_real.clSetKernelArg(k, (cl_uint)hidden + 2, sizeof(g->attempt), &g->attempt);
	return rc;
}

XS_CL_HOOK cl_int clGetKernelInfo(cl_kernel k, cl_kernel_info param, size_t size, void *value,
				  size_t *ret)
{
	cl_program app = NULL;
	int32_t hidden;
	cl_uint n;
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_KERNEL;
	if (param == CL_KERNEL_REFERENCE_COUNT && !cl_passthrough() && value &&
	    size >= sizeof(n)) {
		rc = cl_kernel_app_refs(k, &n);
		if (rc == CL_SUCCESS) {
			memcpy(value, &n, sizeof(n));
			if (ret)
				*ret = sizeof(n);
		}
		return rc;
	}
	if ((param != CL_KERNEL_NUM_ARGS && param != CL_KERNEL_PROGRAM) ||
	    (hidden = cl_kernel_hidden(k, &app)) < 0)
		return cl_real.clGetKernelInfo(k, param, size, value, ret);
	/* The application's view: its arguments, its program. */
	rc = cl_real.clGetKernelInfo(k, param, size, value, ret);
	if (rc != CL_SUCCESS || !value)
		return rc;
	if (param == CL_KERNEL_NUM_ARGS) {
		n = (cl_uint)hidden;
		memcpy(value, &n, sizeof(n));
	} else if (app) {
		memcpy(value, &app, sizeof(app));
	}
	return rc;
}

XS_CL_HOOK cl_int clGetKernelArgInfo(cl_kernel k, cl_uint index, cl_kernel_arg_info param,
				     size_t size, void *value, size_t *ret)
{
	cl_program app = NULL;
	int32_t hidden;
	cl_int rc;

	if (cl_load() < 0 || !cl_real.clGetKernelArgInfo)
		return CL_INVALID_KERNEL;
	hidden = cl_kernel_hidden(k, &app);
	if (hidden >= 0 && index >= (cl_uint)hidden)
		return CL_INVALID_ARG_INDEX;
	if (hidden < 0 || !app || !cl_twin_hides_arg_info(app))
		return cl_real.clGetKernelArgInfo(k, index, param, size, value, ret);
	/* As the application's own build would answer: its other errors, else none. */
	rc = cl_real.clGetKernelArgInfo(k, index, param, 0, NULL, NULL);
	return rc == CL_SUCCESS ? CL_KERNEL_ARG_INFO_NOT_AVAILABLE : rc;
}
