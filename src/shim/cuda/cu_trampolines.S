/*
 * Pass-through entry points for every CUDA driver function the shim does
 * not schedule: one weak symbol per name of cu_exports.def. Each jumps to
 * the real driver's function through xs_cu_real[], resolving it on first
 * use; the scheduled functions are strong C definitions (cu_hooks.c) that
 * override these at link time. Jumping instead of calling forwards every
 * argument untouched whatever the signature, so the list needs no
 * prototypes (the functions the shim calls itself are typed, cu_api.h).
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	xs_idx, 0

#define XS_CU_EXPORT(name) XS_TRAMP name, xs_cu_real, xs_cu_slow
#include "cu_exports.def"
#undef XS_CU_EXPORT

	XS_TRAMP_SLOW xs_cu_slow, xs_cu_resolve
	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's trampolines are written for x86-64"
#endif
