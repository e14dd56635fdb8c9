/*
 * The OpenCL shim's pass-through entry points, one per row of
 * cl_functions.def in row order (the slots of xs_cl_real[] and of
 * cl_load.c's name table): a PASS or CALL row gets an exported trampoline
 * that jumps to the real loader's function through xs_cl_real[], resolved
 * on first use; a HOOK row only its slot (its C hook is the export).
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	xs_idx, 0

#define CL_T_PASS(name) XS_TRAMP name, xs_cl_real, xs_cl_slow
#define CL_T_CALL(name) CL_T_PASS(name)
#define CL_T_HOOK(name) XS_TRAMP_SKIP
#define XS_CL_FN(name, version, how) CL_T_##how(name)
#include "vendor/opencl/cl_functions.def"

	XS_TRAMP_SLOW xs_cl_slow, xs_cl_resolve
	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the OpenCL shim's trampolines are written for x86-64"
#endif
