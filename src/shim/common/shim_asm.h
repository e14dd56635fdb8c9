/*
 * Assembly helpers of the shims' entry points (x86-64 System V): saving
 * and restoring every register that may carry an argument, so that a hook
 * can call into C and then jump to the driver with the caller's arguments
 * intact; pass-through trampolines; the dlopen/dlsym hooks. Each shim
 * expands its table of entry points (the .def of its API) into these.
 *
 * Frame after XS_SAVE (offsets from %rsp): %xmm0-7 at 0..127, %r9 136,
 * %r8 144, %rcx 152, %rdx 160, %rsi 168, %rdi 176; the caller's return
 * address then sits at 184. 8 (entry) + 184 keeps calls 16-byte aligned.
 */
#ifndef XS_SHIM_ASM_H
#define XS_SHIM_ASM_H

.macro XS_SAVE
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%r8
	pushq	%r9
	subq	$136, %rsp
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
.endm

.macro XS_RESTORE
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	addq	$136, %rsp
	popq	%r9
	popq	%r8
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
.endm

/*
 * A pass-through entry point: exported symbol \name and hidden alias
 * shim_t_\name. Jumps to \table[shim_idx], or on first use to \slow with the
 * index in %eax; then moves shim_idx to the next row. Define shim_idx
 * (.set shim_idx, 0) before the first use. The slot of a row is its place in
 * the shim's table of entry points, whatever the row does: XS_TRAMP_HIDDEN
 * is the trampoline of a row that a generic hook exports (it jumps to
 * shim_t_\name), XS_TRAMP_SKIP the slot of a row with a C hook, which has
 * no trampoline (the hook must exist, or the shim does not link).
 */
.macro XS_TRAMP_BODY table, slow
	movq	\table+(shim_idx*8)(%rip), %rax
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:	movl	$shim_idx, %eax
	jmp	\slow
	.set	shim_idx, shim_idx+1
.endm

.macro XS_TRAMP name, table, slow
	.globl	\name
	.type	\name, @function
	.globl	shim_t_\name
	.hidden	shim_t_\name
	.type	shim_t_\name, @function
	.p2align 4
\name:
shim_t_\name:
	XS_TRAMP_BODY \table, \slow
	.size	\name, .-\name
.endm

.macro XS_TRAMP_HIDDEN name, table, slow
	.globl	shim_t_\name
	.hidden	shim_t_\name
	.type	shim_t_\name, @function
	.p2align 4
shim_t_\name:
	XS_TRAMP_BODY \table, \slow
	.size	shim_t_\name, .-shim_t_\name
.endm

.macro XS_TRAMP_SKIP
	.set	shim_idx, shim_idx+1
.endm

/*
 * The first-use path of XS_TRAMP: calls \resolve(index) with every argument
 * register saved, then jumps to the function it returns.
 */
.macro XS_TRAMP_SLOW slow, resolve
	.p2align 4
	.type	\slow, @function
\slow:
	XS_SAVE
	movl	%eax, %edi
	call	\resolve
	XS_RESTORE
	jmp	*%rax
	.size	\slow, .-\slow
.endm

/*
 * dlsym and dlopen: ask the shim first (\pick), and when it has no answer,
 * tail-jump to the next definition (\real) with the caller's return
 * address still on the stack: glibc resolves RTLD_NEXT (dlsym) and the
 * caller's search path (dlopen) from it, so a call would break other
 * interposers (another shim's hooks chain the same way).
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
	cmpq	$1, %rax		/* SHIM_DL_NULL: answer NULL */
	jne	2f
	xorl	%eax, %eax
2:	ret
1:	jmp	*\real(%rip)
	.size	\name, .-\name
.endm

#endif
