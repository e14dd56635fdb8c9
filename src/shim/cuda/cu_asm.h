/*
 * Assembly helpers of the CUDA shim's entry points (x86-64 System V):
 * saving and restoring every register that may carry an argument, so that
 * a hook can call into C and then jump to the driver with the caller's
 * arguments intact.
 *
 * Frame after XS_SAVE (offsets from %rsp): %xmm0-7 at 0..127, %r9 136,
 * %r8 144, %rcx 152, %rdx 160, %rsi 168, %rdi 176; the caller's return
 * address then sits at 184. 8 (entry) + 184 keeps calls 16-byte aligned.
 */
#ifndef XS_CU_ASM_H
#define XS_CU_ASM_H

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

#endif
