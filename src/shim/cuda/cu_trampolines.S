/*
 * The CUDA shim's entry points that are not C hooks, one per row of
 * cu_functions.def, in row order (the slots of cu_tramp_fn[] and of
 * cu_load.c's name table): a PASS row gets an exported trampoline that
 * jumps to the real driver's function through cu_tramp_fn[], resolving it
 * on first use; a generic row (FLUSH, TRANSLATE, SYNC, GRAPH) a hidden
 * trampoline shim_t_<name> that its hook in cu_passes.S ends with; a HOOK
 * row only its slot. Jumping instead of calling forwards every argument
 * untouched whatever the signature, so PASS rows need no prototypes.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text
	.set	shim_idx, 0

#define CU_T_PASS(name) XS_TRAMP name, cu_tramp_fn, cu_tramp_slow
#define CU_T_HOOK(name) XS_TRAMP_SKIP
#define CU_T_FLUSH(name) XS_TRAMP_HIDDEN name, cu_tramp_fn, cu_tramp_slow
#define CU_T_TRANSLATE(name) CU_T_FLUSH(name)
#define CU_T_SYNC(name) CU_T_FLUSH(name)
#define CU_T_GRAPH(name) CU_T_FLUSH(name)
#define XS_CU_FN(name, how, ...) CU_T_##how(name)
#define XS_CU_FN_PT(name, how, ...) CU_T_##how(name)
#define XS_CU_EX(name, how, ...) CU_T_##how(name)
#define XS_CU_EX_PT(name, how, ...) CU_T_##how(name)
#include "vendor/cuda/cu_functions.def"

	XS_TRAMP_SLOW cu_tramp_slow, cu_tramp_resolve
	XS_DLHOOK dlsym, shim_dlsym_pick, shim_real_dlsym
	XS_DLHOOK dlopen, shim_dlopen_pick, shim_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's trampolines are written for x86-64"
#endif
