/*
 * The Level Zero shim's pass-through entry points, one per row of
 * ze_functions.def in row order (the slots of xs_ze_real[] and of
 * ze_load.c's name table): a PASS or CALL row gets an exported trampoline
 * that jumps to the real loader's function through xs_ze_real[], resolved
 * on first use; a HOOK row only its slot (its C hook is the export).
 * Jumping forwards every argument untouched whatever the signature, so
 * the rows need no prototypes. Also the dlopen/dlsym hooks.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	xs_idx, 0

#define ZE_T_PASS(name) XS_TRAMP name, xs_ze_real, xs_ze_slow
#define ZE_T_CALL(name) ZE_T_PASS(name)
#define ZE_T_HOOK(name) XS_TRAMP_SKIP
#define XS_ZE_FN(name, how) ZE_T_##how(name)
#include "vendor/ze/ze_functions.def"

	XS_TRAMP_SLOW xs_ze_slow, xs_ze_resolve
	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the Level Zero shim's trampolines are written for x86-64"
#endif
