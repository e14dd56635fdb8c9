/*
 * Shared pieces of cl_prog, the OpenCL application the shim's tests run
 * natively and under the shim: one context on the first device, the
 * program holding every kernel, and helpers that check results against a
 * host reference and print deterministic lines (checksums, statuses and
 * error codes, never times or pointers), so that two runs can be compared
 * line by line.
 */
#ifndef XS_CL_PROG_H
#define XS_CL_PROG_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Elements of the usual buffers, a multiple of every local size used. */
#define N 4096
/* The 1D work-group size (PoCL may serialize a NULL local size). */
#define LOCAL 16

struct clp {
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;             /* in-order, no profiling */
	cl_program prog;
	int failures;                   /* self-check failures so far */
};

extern struct clp clp;

/* A call that must succeed; anything else ends the program. */
#define CK(call)                                                                   \
	do {                                                                       \
		cl_int rc_ = (call);                                               \
		if (rc_ != CL_SUCCESS) {                                           \
			printf("error %s = %d at %s:%d\n", #call, rc_, __FILE__,   \
			       __LINE__);                                          \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

/* The program of every kernel, built for the device in @ctx. */
cl_program clp_program(cl_context ctx);
cl_kernel clp_kernel(const char *name);
cl_mem clp_buffer(size_t size);
cl_command_queue clp_queue(cl_command_queue_properties props);

/* Enqueues @k over @n work-items in groups of LOCAL. */
void clp_range(cl_command_queue q, cl_kernel k, size_t n, cl_uint nw, const cl_event *w,
	       cl_event *ev);
/* Sets the arguments of axpb (x = x * a + b) and enqueues it over N items. */
void clp_axpb(cl_command_queue q, cl_kernel k, cl_mem x, cl_uint a, cl_uint b, cl_uint nw,
	      const cl_event *w, cl_event *ev);
/* Work-item steps of slow_axpb: a few milliseconds over N items. */
#define SLOW_ITERS 4000

/* The same, slowly: slow_axpb (@junk receives the walk's end). */
void clp_slow_axpb(cl_command_queue q, cl_kernel k, cl_mem x, cl_mem junk, cl_uint a,
		   cl_uint b, cl_uint nw, const cl_event *w, cl_event *ev);
/* The host reference of one axpb over @n elements. */
void clp_axpb_ref(cl_uint *x, size_t n, cl_uint a, cl_uint b);
void clp_iota(cl_uint *x, size_t n, cl_uint seed);
/* A blocking read of @n elements of @m. */
void clp_read(cl_command_queue q, cl_mem m, cl_uint *out, size_t n);
void clp_write(cl_command_queue q, cl_mem m, const cl_uint *in, size_t n);

/* A CLP_IMG_W x CLP_IMG_H RGBA8 (unsigned integer) 2D image. */
#define CLP_IMG_W 64
#define CLP_IMG_H 32
cl_mem clp_image(void);
/* img_shift's result: @src read @dx pixels to the right (clamped), + (1, 2, 3, 4). */
void clp_shift_ref(unsigned char *dst, const unsigned char *src, int dx);

/* FNV-1a over @len bytes. */
uint64_t clp_hash(const void *p, size_t len);

/*
 * Compares @n bytes of @got with @want: true if equal, else prints the
 * first difference as "<phase>: MISMATCH <what> ..." and counts a failure.
 */
int clp_same(const char *phase, const char *what, const void *got, const void *want,
	     size_t n);
int clp_same_u32(const char *phase, const char *what, const cl_uint *got, const cl_uint *want,
		 size_t n);
/* Counts a failure and prints "<phase>: MISMATCH <msg>" unless @ok. */
int clp_check(const char *phase, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The status of @e. */
cl_int clp_status(cl_event e);

/* Phases (cl_ph_*.c). */
void ph_vecadd(void);
void ph_reduction(void);
void ph_transfers(void);
void ph_rect(void);
void ph_fill(void);
void ph_map(void);
void ph_many(void);
void ph_image(void);
void ph_callbacks(void);
void ph_callback_asks(void);
void ph_profiling(void);
void ph_eventinfo(void);
void ph_retain(void);
void ph_queues(void);
void ph_markers(void);
void ph_user(void);
void ph_user_error(void);
void ph_ooo(void);
void ph_args(void);
void ph_kargs(void);
void ph_kargs_svm(void);
void ph_svm(void);
void ph_native(void);
void ph_errors(void);
void ph_errors_pending(void);
void ph_builds(void);
void ph_release(void);
void ph_legacy(void);
void ph_threads(void);
void ph_contexts(void);
void ph_user_fail(void);
void ph_gated(void);
void ph_enqueue_errors(void);
void ph_host_flags(void);
void ph_link(void);
void ph_refcounts(void);
void ph_group_copy(void);
void ph_release_race(void);

#endif
