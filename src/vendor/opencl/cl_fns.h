/*
 * The OpenCL functions xsched calls itself (the CALL and HOOK rows of
 * cl_functions.def), resolved from the real ICD loader at run time (never
 * linked): one typed pointer each, of the Khronos headers' prototype.
 */
#ifndef XS_CL_FNS_H
#define XS_CL_FNS_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>
#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

/* Typed pointers to the functions of the CALL and HOOK rows. */
struct cl_fns {
#define XS_CL_FN_PASS(name)
#define XS_CL_FN_CALL(name) __typeof__(&name) name;
#define XS_CL_FN_HOOK(name) __typeof__(&name) name;
#define XS_CL_FN(name, version, how) XS_CL_FN_##how(name)
#include "vendor/opencl/cl_functions.def"
#undef XS_CL_FN_PASS
#undef XS_CL_FN_CALL
#undef XS_CL_FN_HOOK
};

#endif
