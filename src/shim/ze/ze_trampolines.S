/*
 * Pass-through entry points for every Level Zero loader function the shim
 * does not schedule: one weak symbol per name of ze_exports.def, jumping to
 * the real loader's function through xs_ze_real[] (resolved on first use).
 * The scheduled functions are strong C definitions that override these at
 * link time. Jumping forwards every argument untouched whatever the
 * signature, so the list needs no prototypes. Also the dlopen/dlsym hooks.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	xs_idx, 0

#define XS_ZE_EXPORT(name) XS_TRAMP name, xs_ze_real, xs_ze_slow
#include "ze_exports.def"
#undef XS_ZE_EXPORT

	XS_TRAMP_SLOW xs_ze_slow, xs_ze_resolve
	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the Level Zero shim's trampolines are written for x86-64"
#endif
