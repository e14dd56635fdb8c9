/*
 * The OpenCL shim's pass-through entry points, one per row of
 * cl_functions.def in row order (the slots of cl_tramp_fn[] and of
 * cl_load.c's name table): a PASS or CALL row gets an exported trampoline
 * that jumps to the real loader's function through cl_tramp_fn[], resolved
 * on first use; a HOOK row only its slot (its C hook is the export).
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	shim_idx, 0

#define CL_T_PASS(name) XS_TRAMP name, cl_tramp_fn, cl_tramp_slow
#define CL_T_CALL(name) CL_T_PASS(name)
#define CL_T_HOOK(name) XS_TRAMP_SKIP
#define XS_CL_FN(name, version, how) CL_T_##how(name)
#include "vendor/opencl/cl_functions.def"

	XS_TRAMP_SLOW cl_tramp_slow, cl_tramp_resolve
	XS_DLHOOK dlsym, shim_dlsym_pick, shim_real_dlsym
	XS_DLHOOK dlopen, shim_dlopen_pick, shim_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the OpenCL shim's trampolines are written for x86-64"
#endif
