/*
 * The OpenCL workload of the benchmarks (see cl_work.h): the loop kernel,
 * its calibration, the periodic foreground loop and the flooding
 * background. The kernel is a pseudo-random walk per work-item whose
 * result is stored, so no compiler can drop the loop; its duration is
 * linear in the iteration count, which is what calibration relies on.
 */
#include "cl_work.h"
#include "bench_util.h"

#include <errno.h>

#define CK(call)                                                                   \
	do {                                                                       \
		cl_int rc_ = (call);                                               \
		if (rc_ != CL_SUCCESS) {                                           \
			fprintf(stderr, "%s: %s = %d\n", program_invocation_short_name, \
				#call, rc_);                                       \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

static const char *spin_src =
	"__kernel void spin(__global uint *junk, uint iters)\n"
	"{\n"
	"	uint v = (uint)get_global_id(0);\n"
	"	for (uint k = 0; k < iters; k++)\n"
	"		v = v * 1664525u + 1013904223u;\n"
	"	junk[get_global_id(0)] = v;\n"
	"}\n";

void clw_open(struct clw *w, unsigned iters, size_t width)
{
	cl_platform_id ps[8];
	cl_uint np = 0;
	cl_int err;

	w->dev = NULL;
	w->width = width;
	w->local = 1;
	CK(clGetPlatformIDs(8, ps, &np));
	for (cl_uint i = 0; i < np && i < 8 && !w->dev; i++)
		if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &w->dev, NULL) != CL_SUCCESS)
			w->dev = NULL;
	if (!w->dev) {
		fprintf(stderr, "%s: no OpenCL device\n", program_invocation_short_name);
		exit(1);
	}
	w->ctx = clCreateContext(NULL, 1, &w->dev, NULL, NULL, &err);
	CK(err);
	w->q = clCreateCommandQueueWithProperties(w->ctx, w->dev, NULL, &err);
	CK(err);
	w->prog = clCreateProgramWithSource(w->ctx, 1, &spin_src, NULL, &err);
	CK(err);
	CK(clBuildProgram(w->prog, 1, &w->dev, "", NULL, NULL));
	w->k = clCreateKernel(w->prog, "spin", &err);
	CK(err);
	w->junk = clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, width * sizeof(cl_uint), NULL, &err);
	CK(err);
	CK(clSetKernelArg(w->k, 0, sizeof(w->junk), &w->junk));
	clw_set_iters(w, iters);
}

void clw_close(struct clw *w)
{
	clFinish(w->q);
	clReleaseMemObject(w->junk);
	clReleaseKernel(w->k);
	clReleaseProgram(w->prog);
	clReleaseCommandQueue(w->q);
	clReleaseContext(w->ctx);
}

void clw_set_iters(struct clw *w, unsigned iters)
{
	cl_uint v = iters;

	w->iters = iters;
	CK(clSetKernelArg(w->k, 1, sizeof(v), &v));
}

void clw_set_local(struct clw *w, size_t local)
{
	if (!local || w->width % local) {
		fprintf(stderr, "%s: a local size of %zu does not divide %zu work-items\n",
			program_invocation_short_name, local, w->width);
		exit(1);
	}
	w->local = local;
}

unsigned clw_compute_units(const struct clw *w)
{
	cl_uint cu = 1;

	CK(clGetDeviceInfo(w->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL));
	return cu ? cu : 1;
}

void clw_enqueue(struct clw *w, cl_event *ev)
{
	CK(clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &w->width, &w->local, 0, NULL, ev));
}

/* Median of 7 enqueue+finish round trips at the current iteration count. */
static uint64_t clw_median_ns(struct clw *w)
{
	uint64_t t[7];

	for (int i = 0; i < 7; i++) {
		uint64_t t0 = bench_wall_ns();

		clw_enqueue(w, NULL);
		CK(clFinish(w->q));
		t[i] = bench_wall_ns() - t0;
	}
	qsort(t, 7, sizeof(*t), bench_cmp_u64);
	return t[3];
}

unsigned clw_calibrate(struct clw *w, uint64_t target_ns)
{
	double iters = 100000;

	clw_set_iters(w, (unsigned)iters);
	clw_median_ns(w); /* warm-up: first runs pay for thread start-up */
	/* Fixed-point steps on the linear model; the round trip's constant
	 * part makes the first step undershoot, the next ones converge. */
	for (int step = 0; step < 4; step++) {
		uint64_t ns = clw_median_ns(w);

		iters *= (double)target_ns / (double)(ns ? ns : 1);
		if (iters < 1)
			iters = 1;
		if (iters > 4e9)
			iters = 4e9;
		clw_set_iters(w, (unsigned)iters);
	}
	return w->iters;
}

int clw_run_periodic(struct clw *w, const struct clw_periodic *p, uint64_t *lat,
		     uint64_t *t0, uint64_t *t1, const volatile sig_atomic_t *stop)
{
	unsigned short xsubi[3] = { 0x330e, (unsigned short)p->seed,
				    (unsigned short)(p->seed >> 16) };
	uint64_t next = bench_wall_ns();
	int n = 0;

	*t0 = *t1 = next;
	for (int i = 0; i < p->warmup + p->tasks && !(stop && *stop); i++) {
		uint64_t release, start, now;

		if (p->period_ns) {
			double f = 1.0 + p->jitter * (2.0 * erand48(xsubi) - 1.0);

			next += (uint64_t)((double)p->period_ns * f);
			bench_sleep_until_wall(next);
			release = next;
		} else {
			release = bench_wall_ns();
		}
		start = p->from_release ? release : bench_wall_ns();
		if (i == p->warmup)
			*t0 = start;
		for (int c = 0; c < p->cmds; c++)
			clw_enqueue(w, NULL);
		CK(clFinish(w->q));
		now = bench_wall_ns();
		if (i >= p->warmup) {
			lat[n++] = now - start;
			*t1 = now;
		}
		if (p->from_release && now > next)
			next = now;
	}
	return n;
}

uint64_t clw_flood(struct clw *w, int group, int depth, bool (*more)(void *arg),
		   void (*done)(void *arg, uint64_t t_ns, uint64_t count), void *arg)
{
	cl_event *ring = calloc((size_t)depth, sizeof(*ring));
	uint64_t count = 0;
	int head = 0, inflight = 0;

	if (!ring) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(1);
	}
	for (;;) {
		if (inflight < depth && (!more || more(arg))) {
			for (int c = 0; c < group - 1; c++)
				clw_enqueue(w, NULL);
			clw_enqueue(w, &ring[(head + inflight) % depth]);
			inflight++;
			continue;
		}
		if (!inflight)
			break;
		CK(clWaitForEvents(1, &ring[head]));
		CK(clReleaseEvent(ring[head]));
		head = (head + 1) % depth;
		inflight--;
		count += (uint64_t)group;
		if (done)
			done(arg, bench_wall_ns(), count);
	}
	free(ring);
	return count;
}
