/*
 * The CUDA shim's entry points that are not C hooks, one per row of
 * cu_functions.def, in row order (the slots of xs_cu_real[] and of
 * cu_load.c's name table): a PASS row gets an exported trampoline that
 * jumps to the real driver's function through xs_cu_real[], resolving it
 * on first use; a generic row (FLUSH, TRANSLATE, SYNC, GRAPH) a hidden
 * trampoline xs_t_<name> that its hook in cu_passes.S ends with; a HOOK
 * row only its slot. Jumping instead of calling forwards every argument
 * untouched whatever the signature, so PASS rows need no prototypes.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	xs_idx, 0

#define CU_T_PASS(name) XS_TRAMP name, xs_cu_real, xs_cu_slow
#define CU_T_HOOK(name) XS_TRAMP_SKIP
#define CU_T_FLUSH(name) XS_TRAMP_HIDDEN name, xs_cu_real, xs_cu_slow
#define CU_T_TRANSLATE(name) CU_T_FLUSH(name)
#define CU_T_SYNC(name) CU_T_FLUSH(name)
#define CU_T_GRAPH(name) CU_T_FLUSH(name)
#define XS_CU_FN(name, how, ...) CU_T_##how(name)
#define XS_CU_FN_PT(name, how, ...) CU_T_##how(name)
#define XS_CU_EX(name, how, ...) CU_T_##how(name)
#define XS_CU_EX_PT(name, how, ...) CU_T_##how(name)
#include "vendor/cuda/cu_functions.def"

	XS_TRAMP_SLOW xs_cu_slow, xs_cu_resolve
	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's trampolines are written for x86-64"
#endif
