/*
 * Pass-through entry points for every loader function the shim does not
 * schedule: one weak symbol per name of cl_exports.def, jumping to the
 * real loader's function through xs_cl_real[] (resolved on first use);
 * the hooks are strong C definitions that override them at link time.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	xs_idx, 0

#define XS_CL_EXPORT(name, version) XS_TRAMP name, xs_cl_real, xs_cl_slow
#include "cl_exports.def"
#undef XS_CL_EXPORT

	XS_TRAMP_SLOW xs_cl_slow, xs_cl_resolve
	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the OpenCL shim's trampolines are written for x86-64"
#endif
