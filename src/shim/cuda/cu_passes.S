/*
 * Generic hooks of cu_passes.def: strong definitions that override the
 * weak trampolines of the same names (cu_trampolines.S). Each saves every
 * argument register, asks the shim (cu_passes.c) what to do, restores the
 * registers and jumps to the name's trampoline (xs_t_<name>), so the driver
 * receives the caller's arguments and return address untouched, apart from
 * a translated stream argument.
 *
 * Frame after XS_SAVE (shim/common/shim_asm.h): return address at 184(%rsp), stack
 * arguments from 192.
 */
#if defined(__x86_64__)
#include "shim/common/shim_asm.h"

	.text

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

/* xs_cu_graph_pick(exec) returns the executable the driver gets (the same). */
.macro XS_GRAPH_HOOK name, arg
XS_ENTRY \name
	XS_SAVE
	XS_ARG_OFF \arg
	movq	xs_off(%rsp), %rdi
	call	xs_cu_graph_pick
	movq	%rax, xs_off(%rsp)
	XS_RESTORE
	jmp	xs_t_\name
	.size	\name, .-\name
.endm

/* how: bit 0 per-thread-stream variant, bit 1 flush the queue first. */
#define XS_CU_FLUSH(name, arg, ptsz) XS_STREAM_HOOK name, arg, (2 + ptsz)
#define XS_CU_TRANSLATE(name, arg, ptsz) XS_STREAM_HOOK name, arg, ptsz
#define XS_CU_SYNC(name, ptds) XS_SYNC_HOOK name, ptds
#define XS_CU_GRAPH(name, arg) XS_GRAPH_HOOK name, arg
#include "cu_passes.def"
#undef XS_CU_FLUSH
#undef XS_CU_TRANSLATE
#undef XS_CU_SYNC
#undef XS_CU_GRAPH

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's hooks are written for x86-64"
#endif
