/*
 * Generic hooks: the exported entry points of the FLUSH, TRANSLATE, SYNC
 * and GRAPH rows of cu_functions.def, whatever their signature. Each saves
 * every argument register, asks the shim (cu_passes.c, cu_graph_hooks.c)
 * what to do, restores the registers and jumps to the row's hidden
 * trampoline (shim_t_<name>, cu_trampolines.S), so the driver receives the
 * caller's arguments and return address untouched, apart from a
 * translated stream argument.
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
	.set	cu_arg_off, 176 - 8 * \arg
	.else
	.set	cu_arg_off, 192 + 8 * (\arg - 6)
	.endif
.endm

/*
 * The driver's call for a row that touches device memory, once the
 * registers are restored. Without memory preemption (cu_evict_armed 0),
 * a jump, as for any row. With it, the call is made from here so that
 * the thread can leave the memory gate (cu_evict.c) when the driver
 * returns: the caller's return address, saved by the pick function, is
 * taken off the stack (stack arguments then sit where the driver expects
 * them behind our own return address, and the stack stays 16-byte
 * aligned), and cu_evict_return() leaves the gate and gives it back.
 */
.macro XS_DRIVER name
	cmpb	$0, cu_evict_armed(%rip)
	jne	2f
	jmp	shim_t_\name
2:	addq	$8, %rsp
	call	shim_t_\name
	subq	$16, %rsp
	movq	%rax, (%rsp)
	call	cu_evict_return
	movq	(%rsp), %rdx
	movq	%rax, 8(%rsp)
	addq	$8, %rsp
	movq	%rdx, %rax
	ret
.endm

/* cu_stream_pick(stream, how, return address) returns the stream the driver gets. */
.macro XS_STREAM_HOOK name, arg, how
XS_ENTRY \name
	XS_SAVE
	XS_ARG_OFF \arg
	movq	cu_arg_off(%rsp), %rdi
	movl	$\how, %esi
	movq	184(%rsp), %rdx
	call	cu_stream_pick
	movq	%rax, cu_arg_off(%rsp)
	XS_RESTORE
	.if \how & 2
	XS_DRIVER \name
	.else
	jmp	shim_t_\name
	.endif
	.size	\name, .-\name
.endm

/* cu_sync_pick(ptds, return address) returns 0 to go on, else the call's result. */
.macro XS_SYNC_HOOK name, ptds
XS_ENTRY \name
	XS_SAVE
	movl	$\ptds, %edi
	movq	184(%rsp), %rsi
	call	cu_sync_pick
	testl	%eax, %eax
	jnz	1f
	XS_RESTORE
	XS_DRIVER \name
1:	addq	$184, %rsp
	ret
	.size	\name, .-\name
.endm

/* cu_graph_pick(exec) returns the executable the driver gets (the same). */
.macro XS_GRAPH_HOOK name, arg
XS_ENTRY \name
	XS_SAVE
	XS_ARG_OFF \arg
	movq	cu_arg_off(%rsp), %rdi
	call	cu_graph_pick
	movq	%rax, cu_arg_off(%rsp)
	XS_RESTORE
	jmp	shim_t_\name
	.size	\name, .-\name
.endm

/*
 * Per row: how = bit 0 per-thread variant (a _PT row), bit 1 flush the
 * queue first; rows of other kinds expand to nothing.
 */
#define CU_G_PASS(name, arg, pt)
#define CU_G_HOOK(name, arg, pt)
#define CU_G_FLUSH(name, arg, pt) XS_STREAM_HOOK name, arg, (2 + pt)
#define CU_G_TRANSLATE(name, arg, pt) XS_STREAM_HOOK name, arg, pt
#define CU_G_SYNC(name, arg, pt) XS_SYNC_HOOK name, pt
#define CU_G_GRAPH(name, arg, pt) XS_GRAPH_HOOK name, arg
#define XS_CU_FN(name, how, arg, ...) CU_G_##how(name, arg, 0)
#define XS_CU_FN_PT(name, how, arg, ...) CU_G_##how(name, arg, 1)
#define XS_CU_EX(name, how, arg, ...) CU_G_##how(name, arg, 0)
#define XS_CU_EX_PT(name, how, arg, ...) CU_G_##how(name, arg, 1)
#include "vendor/cuda/cu_functions.def"

	.section .note.GNU-stack, "", @progbits

#else
#error "the CUDA shim's hooks are written for x86-64"
#endif
