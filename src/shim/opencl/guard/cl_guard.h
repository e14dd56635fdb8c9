/*
 * The guardian inside the OpenCL shim: Lv2 for a device OpenCL gives no
 * preemption, by a check compiled into each kernel (see README.md here).
 *
 * - The rewriter (cl_guard_rw.h) turns a program's source into the same
 *   source with the guardian in every kernel it can instrument with
 *   certainty.
 * - The twin (cl_twin.c): a program the application creates from source
 *   gets an instrumented twin, built with the application's options;
 *   kernels come from it, everything else the application asks of its
 *   program is answered as by its own.
 * - The guard half of kernels (cl_guard_kernel.c): which kernels carry
 *   the guardian, what a launch passes in their hidden arguments (given by
 *   the backend with each issue: struct xal_cl_guard_args), and the
 *   application's view, which never shows them.
 *
 * What the device and the host share (the hidden parameters, the control
 * word, the progress records) is the guardian's ABI, xal/xal_opencl_guard.h,
 * which the backend (src/xal/xal_opencl_lv2.c) includes too.
 */
#ifndef XS_CL_GUARD_H
#define XS_CL_GUARD_H

#include "shim/opencl/cl_shim.h"
#include "xal/xal_opencl_guard.h"

/* --- kernels (cl_guard_kernel.c) ------------------------------------------------- */

/*
 * The index of the guardian's first hidden argument of @k, whose driver
 * count of arguments is @nargs, or -1: its last CLG_HIDDEN arguments have
 * the rewriter's reserved names, which only the rewriter gives (argument
 * information of the build). Any thread.
 */
int32_t cl_guard_hidden_of(cl_kernel k, cl_uint nargs);

/*
 * Sets the guardian's arguments of @k (@hidden: cl_kernel_hidden()) for
 * a launch: @g's, or NULL pointers (guardian off) when @g or its control
 * word is NULL. Nothing to do for @hidden < 0. Returns the driver's
 * result. The caller owns @k's arguments for the launch (the enqueuing
 * thread, or a private kernel).
 */
cl_int cl_guard_set_args(cl_kernel k, int32_t hidden, const struct xal_cl_guard_args *g);

/* --- programs: the instrumented twin (cl_twin.c) ---------------------------------- */

/* Whether programs from source get the guardian ($XSCHED_OPENCL_LV2=0: no; default on). */
bool cl_guard_enabled(void);
/* Whether its control words and records must be buffers, never SVM
 * ($XSCHED_OPENCL_LV2=buffer). */
bool cl_guard_buffers(void);

/* How many instrumented twins of programs of @ctx are alive. */
unsigned cl_twin_count_in(cl_context ctx);

/* The program kernels of the application's @p are made from (its
 * instrumented twin once built), else @p. */
cl_program cl_twin_kernels_of(cl_program p);

/* The application's program whose instrumented twin is @real, or NULL. */
cl_program cl_twin_app_of(cl_program real);

/* Why kernel @kernel of the driver's program @real carries no guardian
 * (static text). */
const char *cl_twin_why(cl_program real, const char *kernel);

/*
 * Whether kernels of the application's @app, built from its twin (which
 * the shim builds with -cl-kernel-arg-info), must not tell their argument
 * information: the application did not ask for it, and the driver gives
 * none without (probed once per platform, with a build). Any thread.
 */
bool cl_twin_hides_arg_info(cl_program app);

#endif
