/*
 * The Level Zero shim's pass-through entry points, one per row of
 * ze_functions.def in row order (the slots of ze_tramp_fn[] and of
 * ze_load.c's name table): a PASS or CALL row gets an exported trampoline
 * that jumps to the real loader's function through ze_tramp_fn[], resolved
 * on first use; a HOOK row only its slot (its C hook is the export).
 * Jumping forwards every argument untouched whatever the signature, so
 * the rows need no prototypes. Also the dlopen/dlsym hooks.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	shim_idx, 0

#define ZE_T_PASS(name) XS_TRAMP name, ze_tramp_fn, ze_tramp_slow
#define ZE_T_CALL(name) ZE_T_PASS(name)
#define ZE_T_HOOK(name) XS_TRAMP_SKIP
#define XS_ZE_FN(name, how) ZE_T_##how(name)
#include "vendor/ze/ze_functions.def"

	XS_TRAMP_SLOW ze_tramp_slow, ze_tramp_resolve
	XS_DLHOOK dlsym, shim_dlsym_pick, shim_real_dlsym
	XS_DLHOOK dlopen, shim_dlopen_pick, shim_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the Level Zero shim's trampolines are written for x86-64"
#endif
