/*
 * The guardian's ABI: what an instrumented OpenCL kernel and the host
 * share. The rewriter (src/shim/opencl/guard/) writes kernels that read
 * and write these words; the `opencl` backend (xal_opencl_lv2.c) sets the
 * control word and reads the progress records. Both include this header,
 * and nothing else ties them together.
 *
 * A kernel the rewriter instruments takes three hidden trailing
 * parameters, after the application's:
 *
 *   CLG_CTL  __global volatile uint *  the queue's control word
 *   CLG_REC  __global volatile uint *  the launch's progress record
 *   CLG_ATT  uint                      which issue of the record this is
 *
 * The control word is CLG_CTL_RUN or CLG_CTL_SKIP: a work-group that
 * starts while it reads CLG_CTL_SKIP returns at once. A launch the host
 * does not guard gets NULL pointers and attempt 0, which leaves of the
 * prologue one branch not taken.
 *
 * The progress record of one launch is an array of 32-bit words, zeroed
 * before the first launch of the record:
 *
 *   [CLG_REC_SKIPPED]      work-groups that returned because the control
 *                          word said skip, over every launch of the record
 *   [CLG_REC_GROUPS + g]   for linear work-group g: 0 until a launch
 *                          decided for it, then the attempt number that
 *                          ran it, or that number | CLG_SKIP_BIT when that
 *                          attempt skipped it
 *
 * The first work-item of a group to arrive decides (compare-and-swap, or a
 * plain store where a group's work-items run one after another on one
 * thread) and the others read its answer there: one decision per group,
 * no barrier, no local memory. A relaunch (attempt + 1) reuses the record,
 * so groups that ran skip; a launch whose skip count did not grow started
 * every group it had left. Attempt numbers start at 1 and never reach
 * CLG_SKIP_BIT.
 */
#ifndef XS_XAL_OPENCL_GUARD_H
#define XS_XAL_OPENCL_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* Names of the hidden parameters (reserved identifiers: an application
 * may not use them). */
#define CLG_CTL "__xsched_ctl"
#define CLG_REC "__xsched_rec"
#define CLG_ATT "__xsched_att"
/* How many: the control word, the record, the launch's attempt number. */
enum { CLG_HIDDEN = 3 };

/* Values of the control word. */
enum { CLG_CTL_RUN = 0, CLG_CTL_SKIP = 1 };

/* The progress record, in 32-bit words. */
enum { CLG_REC_SKIPPED = 0, CLG_REC_GROUPS = 1 };
#define CLG_SKIP_BIT 0x80000000u

/* Bytes of the record of a launch of @groups work-groups. */
static inline size_t clg_rec_size(uint64_t groups)
{
	return (CLG_REC_GROUPS + (size_t)groups) * sizeof(uint32_t);
}

/* The device's words are OpenCL C's uint: 32 bits, as the host's. */
_Static_assert(sizeof(uint32_t) == 4, "the record's words are 32-bit");
_Static_assert(CLG_REC_SKIPPED == 0 && CLG_REC_GROUPS == 1,
	       "the prologue (guard/cl_guard_rw.c) indexes the record so");
_Static_assert(CLG_SKIP_BIT == 0x80000000u, "the prologue tests this bit");
_Static_assert(CLG_CTL_RUN == 0, "the prologue skips on any non-zero control word");

#endif
