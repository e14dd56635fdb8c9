/*
 * The guardian rewriter: OpenCL C source in, the same source with a
 * guardian in every kernel it can instrument with certainty out.
 *
 * It works on tokens, never on a parse tree: comments, strings, character
 * literals and preprocessor directives are recognised and left as they
 * are; a kernel is a `__kernel` or `kernel` keyword outside any directive,
 * its name the identifier before its parameter list, its body the `{`
 * that follows (attributes skipped). A kernel it rewrites gets three hidden
 * trailing parameters (CLG_CTL, CLG_REC, CLG_ATT: the guardian's ABI,
 * xal/xal_opencl_guard.h) and, right after its opening brace, the guardian
 * prologue (cl_guard_rw.c); both are inserted on the
 * lines where they go, so line numbers (__LINE__, build logs) do not move.
 * The body itself is never touched: `return` anywhere, barriers, `__local`
 * declarations at kernel scope keep their meaning, and an attempt number
 * of 0 (what the shim passes, with NULL pointers, to a launch it does not
 * guard) leaves of the prologue one branch not taken.
 *
 * Whatever it cannot rewrite with certainty it leaves as it is, with a
 * reason: a kernel whose name appears anywhere else in the program
 * (called by another kernel, declared apart, named in a macro), whose
 * parameter list or body brace comes from a macro, or whose declaration
 * has a directive inside; and the whole program when it uses the
 * guardian's names or redefines what the prologue uses. Kernels defined
 * through a macro are invisible to it and stay unmodified; the shim
 * checks each built kernel's argument names, so nothing it did not
 * rewrite is ever treated as instrumented.
 */
#ifndef XS_CL_GUARD_RW_H
#define XS_CL_GUARD_RW_H

#include "xal/xal_opencl_guard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct clg_kernel {
	char *name;
	const char *reason;     /* NULL: rewritten; else why not (static) */
};

struct clg_result {
	char *src;              /* the rewritten source (NUL-terminated), or NULL */
	size_t len;
	const char *reason;     /* why nothing was rewritten, or NULL (static) */
	bool macro_kernel;      /* a `__kernel` inside a #define */
	size_t n;
	struct clg_kernel *k;   /* every kernel found, in source order */
};

/*
 * How the prologue records a group's decision. CLG_SERIAL_GROUPS: by a
 * plain store, for programs whose every device runs the work-items of a
 * work-group one after another on one thread (CPU devices, as PoCL does:
 * CPU runtimes make barriers by splitting the work-item loop or by
 * switching stacks on that thread; XSCHED_OPENCL_LV2=atomic is the way
 * out for one that would not). Without it, by a compare-and-swap, which
 * is right on any device.
 */
enum { CLG_SERIAL_GROUPS = 1 };

/*
 * Rewrites the @len bytes of @src into *@out (zeroed first; release with
 * clg_result_fini()). out->src is NULL when no kernel was rewritten (then
 * out->reason or each kernel's reason says why); @flags: CLG_SERIAL_GROUPS
 * or 0. Returns 0, or -ENOMEM.
 * Pure function of its input; any thread.
 */
int clg_rewrite(const char *src, size_t len, unsigned flags, struct clg_result *out);

void clg_result_fini(struct clg_result *r);

/*
 * Why kernel @name of a program rewritten into @r runs uninstrumented
 * (static text): its own reason, the program's, or that the rewriter
 * never saw it (a macro, an included file).
 */
const char *clg_reason(const struct clg_result *r, const char *name);

/*
 * A macro that build options @opts define (-D NAME, -DNAME=...) and the
 * prologue uses, or NULL: the build must then use the original source.
 * The returned pointer is static.
 */
const char *clg_options_conflict(const char *opts);

#endif
