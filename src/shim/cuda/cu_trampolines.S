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
#include "cu_asm.h"

	.text
	.set	xs_idx, 0

.macro XS_TRAMP name
	.weak	\name
	.type	\name, @function
	.globl	xs_t_\name		/* for cu_passes.S, which overrides \name */
	.hidden	xs_t_\name
	.type	xs_t_\name, @function
	.p2align 4
\name:
xs_t_\name:
	movq	xs_cu_real+(xs_idx*8)(%rip), %rax
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:	movl	$xs_idx, %eax
	jmp	xs_cu_slow
	.size	\name, .-\name
	.set	xs_idx, xs_idx+1
.endm

#define XS_CU_EXPORT(name) XS_TRAMP name
#include "cu_exports.def"
#undef XS_CU_EXPORT

/*
 * First call of an entry point: resolve it with every argument register
 * (integer and vector) saved, then jump to it. %eax holds the index.
 */
	.p2align 4
	.type	xs_cu_slow, @function
xs_cu_slow:
	XS_SAVE
	movl	%eax, %edi
	call	xs_cu_resolve
	XS_RESTORE
	jmp	*%rax
	.size	xs_cu_slow, .-xs_cu_slow

/*
 * dlsym and dlopen: ask the shim first (xs_dl*_pick), and when it has no
 * answer, tail-jump to the real function with the caller's return address
 * still on the stack: glibc resolves RTLD_NEXT (dlsym) and the caller's
 * search path (dlopen) from it, so a call would break other interposers.
 */
.macro XS_DLHOOK name, pick, real
	.globl	\name
	.type	\name, @function
	.p2align 4
\name:
	pushq	%rdi
	pushq	%rsi
	subq	$8, %rsp
	call	\pick
	addq	$8, %rsp
	popq	%rsi
	popq	%rdi
	testq	%rax, %rax
	jz	1f
	cmpq	$1, %rax		/* XS_DL_NULL: answer NULL */
	jne	2f
	xorl	%eax, %eax
2:	ret
1:	jmp	*\real(%rip)
	.size	\name, .-\name
.endm

	XS_DLHOOK dlsym, xs_dlsym_pick, xs_real_dlsym
	XS_DLHOOK dlopen, xs_dlopen_pick, xs_real_dlopen

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's trampolines are written for x86-64"
#endif
