/*
 * Generic hooks of cu_passes.def: strong definitions that override the
 * weak trampolines of the same names (cu_trampolines.S). Each saves every
 * argument register, asks the shim (cu_passes.c) what to do, restores the
 * registers and jumps to the name's trampoline (xs_t_<name>), so the driver
 * receives the caller's arguments and return address untouched, apart from
 * a translated stream argument.
 *
 * Frame after XS_SAVE (offsets from %rsp): %xmm0-7 at 0..127, %r9 136,
 * %r8 144, %rcx 152, %rdx 160, %rsi 168, %rdi 176, return address 184,
 * stack arguments from 192. 8 (entry) + 184 keeps the calls 16-byte aligned.
 */
#if defined(__x86_64__)

	.text

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

.macro XS_ENTRY name
	.globl	\name
	.type	\name, @function
	.p2align 4
\name:
.endm

/* Argument @arg's slot in the saved frame. */
.macro XS_ARG_OFF arg
	.if \arg < 6
	.set	xs_off, 176 - 8 * \arg
	.else
	.set	xs_off, 192 + 8 * (\arg - 6)
	.endif
.endm

/* xs_cu_stream_pick(stream, how) returns the stream the driver gets. */
.macro XS_STREAM_HOOK name, arg, how
XS_ENTRY \name
	XS_SAVE
	XS_ARG_OFF \arg
	movq	xs_off(%rsp), %rdi
	movl	$\how, %esi
	call	xs_cu_stream_pick
	movq	%rax, xs_off(%rsp)
	XS_RESTORE
	jmp	xs_t_\name
	.size	\name, .-\name
.endm

/* xs_cu_sync_pick(ptds) returns 0 to go on, else the call's result. */
.macro XS_SYNC_HOOK name, ptds
XS_ENTRY \name
	XS_SAVE
	movl	$\ptds, %edi
	call	xs_cu_sync_pick
	testl	%eax, %eax
	jnz	1f
	XS_RESTORE
	jmp	xs_t_\name
1:	addq	$184, %rsp
	ret
	.size	\name, .-\name
.endm

/* how: bit 0 per-thread-stream variant, bit 1 flush the queue first. */
#define XS_CU_FLUSH(name, arg, ptsz) XS_STREAM_HOOK name, arg, (2 + ptsz)
#define XS_CU_TRANSLATE(name, arg, ptsz) XS_STREAM_HOOK name, arg, ptsz
#define XS_CU_SYNC(name, ptds) XS_SYNC_HOOK name, ptds
#include "cu_passes.def"
#undef XS_CU_FLUSH
#undef XS_CU_TRANSLATE
#undef XS_CU_SYNC

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's hooks are written for x86-64"
#endif
