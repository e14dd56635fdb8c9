/*
 * The device-time cost of the OpenCL guardian (the Lv2 prologue that
 * clg_rewrite() puts in every kernel), measured in one process on the
 * first OpenCL device (PoCL here), free of the noise of a whole
 * application under the shim.
 *
 * Each workload's OpenCL C source is built twice: as written (plain) and
 * as clg_rewrite() returns it (guarded). The guarded kernel gets its three
 * hidden arguments after the real ones, as the shim gives them: a control
 * word that stays 0 (the queue runs), a record zeroed before every launch,
 * both fine-grain SVM zeroed by the host where the device has
 * CL_DEVICE_SVM_FINE_GRAIN_BUFFER, else buffers (the record zeroed by a
 * clEnqueueFillBuffer before each launch, which is not timed), and the
 * attempt number 1 (a first launch). So each guarded work-group pays what
 * it pays under the shim: a read of its record word by each work-item,
 * and by the first one a read of the control word and the write of its
 * decision, with the prologue the shim would choose for the device (on a
 * CPU device a plain store, elsewhere a compare-and-swap; --atomic: the
 * compare-and-swap on every device).
 *
 * Workloads, each at local sizes 64 and 256 on the same global size (so
 * the smaller local size has four times the work-groups, and the guardian
 * four times the decisions): copy (out[i] = in[i] on float4, the least
 * work per work-item), bandwidth (each work-item sums 16 float4 loads
 * strided by the global size and writes one float) and compute (a
 * dependent chain of float4 fma, one store at the end), and gemm (a
 * 256 x 256 SGEMM, one element of C per work-item, the row of A through
 * local memory between barriers). The global sizes give launches of a few
 * ms on PoCL on a 2-CPU VM.
 *
 * Per (workload, local size): one launch of each variant whose outputs
 * must match byte for byte (and whose record must show every group
 * started and none skipped), 3 warm-up launches of each, then --reps
 * pairs of one plain and one guarded launch, the order alternating, each
 * launch waited for before the next. A launch's time is its profiling
 * END - START; the ratio guarded/plain is taken within a pair, so that a
 * drift of the machine hits both. Reported: medians of both times, the
 * median ratio with its 10th and 90th percentiles, and the throughput
 * cost (1 - 1/median ratio) x 100 against the goal of 2%. The shim's
 * per-launch host cost is not in these numbers (bench_cl_enqueue).
 *
 * --out DIR writes summary.tsv (the table). Without an OpenCL platform or
 * device it prints "bench_cl_guard_cost: skipped: why" and exits 0; an
 * OpenCL error prints the call and its number and exits 1.
 *
 * Usage: bench_cl_guard_cost [--reps N] [--quick] [--atomic] [--out DIR]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "bench_util.h"
#include "shim/opencl/guard/cl_guard_rw.h"

#include <sys/stat.h>

#define NAME "bench_cl_guard_cost"
#define WARMUP 3
#define GOAL_PCT 2.0

#define CK(call)                                                                   \
	do {                                                                       \
		cl_int rc_ = (call);                                               \
		if (rc_ != CL_SUCCESS)                                             \
			cl_fail(#call, rc_);                                       \
	} while (0)

static void cl_fail(const char *call, cl_int err)
{
	fprintf(stderr, NAME ": %s = %d\n", call, (int)err);
	exit(1);
}

/*
 * The workloads. Every kernel takes (in, out) and nothing else, so that
 * the hidden arguments are 2 and 3. Sizes in float4 elements of @global.
 */
struct workload {
	const char *name;
	const char *src;
	size_t global;          /* work-items, a multiple of 256 */
	size_t in_elems;        /* float4 elements of the input */
	size_t out_bytes;
};

static const char copy_src[] =
	"__kernel void copy(__global const float4 *in, __global float4 *out)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"\n"
	"	out[i] = in[i];\n"
	"}\n";

/* Strided by the global size, so that the work-items running side by side
 * read neighbouring elements at every step. */
static const char bandwidth_src[] =
	"#define LOADS 16\n"
	"__kernel void bandwidth(__global const float4 *in, __global float *out)\n"
	"{\n"
	"	size_t i = get_global_id(0), n = get_global_size(0);\n"
	"	float4 s = (float4)(0.0f);\n"
	"\n"
	"	for (int k = 0; k < LOADS; k++)\n"
	"		s += in[k * n + i];\n"
	"	out[i] = s.x + s.y + s.z + s.w;\n"
	"}\n";

/* fma(), not mad(): exactly rounded, so that both builds must agree to
 * the bit whatever each compiler run contracts. Each step depends on the
 * last; the constants keep the values near 1 (no overflow, no denormals). */
static const char compute_src[] =
	"#define STEPS 512\n"
	"__kernel void compute(__global const float4 *in, __global float4 *out)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	float4 v = in[i];\n"
	"	const float4 m = (float4)(0.9990f, 0.9991f, 0.9992f, 0.9993f);\n"
	"	const float4 a = (float4)(0.0010f, 0.0009f, 0.0008f, 0.0007f);\n"
	"\n"
	"	for (int k = 0; k < STEPS; k++)\n"
	"		v = fma(v, m, a);\n"
	"	out[i] = v;\n"
	"}\n";

/* C = A B for N x N matrices, A then B in @in: each work-item one element
 * of C, a work-group a run of one row of it, which takes the row of A
 * through local memory a tile (its own size) at a time, between barriers:
 * the shape of a tiled GEMM (CLBlast's kernels tile both matrices), with
 * local memory and barriers after the prologue. fma() for bit-equal
 * results, as in compute. */
static const char gemm_src[] =
	"#define N 256\n"
	"__kernel void gemm(__global const float *in, __global float *out)\n"
	"{\n"
	"	__local float a[256];\n"
	"	size_t i = get_global_id(0), r = i / N, c = i % N;\n"
	"	size_t l = get_local_id(0), n = get_local_size(0);\n"
	"	__global const float *b = in + N * N;\n"
	"	float s = 0.0f;\n"
	"\n"
	"	for (size_t k0 = 0; k0 < N; k0 += n) {\n"
	"		a[l] = in[r * N + k0 + l];\n"
	"		barrier(CLK_LOCAL_MEM_FENCE);\n"
	"		for (size_t k = 0; k < n; k++)\n"
	"			s = fma(a[k], b[(k0 + k) * N + c], s);\n"
	"		barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	}\n"
	"	out[i] = s;\n"
	"}\n";

#define F4 (4 * sizeof(cl_float))
#define GEMM_N 256

static const struct workload workloads[] = {
	{ "copy", copy_src, 1u << 22, 1u << 22, (1u << 22) * F4 },
	{ "bandwidth", bandwidth_src, 1u << 19, 16u << 19, (1u << 19) * sizeof(cl_float) },
	{ "compute", compute_src, 1u << 14, 1u << 14, (1u << 14) * F4 },
	{ "gemm", gemm_src, GEMM_N * GEMM_N, 2 * GEMM_N * GEMM_N / 4,
	  GEMM_N * GEMM_N * sizeof(cl_float) },
};

#define NWORK (sizeof(workloads) / sizeof(workloads[0]))

static const size_t locals[] = { 64, 256 };

#define NLOCAL (sizeof(locals) / sizeof(locals[0]))

/* The device and what the guarded launches need on it. */
struct dev {
	cl_device_id id;
	cl_context ctx;
	cl_command_queue q;
	bool svm;               /* fine-grain SVM buffers: the hidden words in SVM */
	unsigned flags;         /* clg_rewrite()'s, as the shim chooses them */
	char name[128];
};

/* One workload set up on the device. */
struct bench {
	const struct workload *w;
	cl_program prog[2];     /* plain, guarded */
	cl_kernel k[2];
	cl_mem in, out;
	cl_uint hidden;         /* index of the first hidden argument */
	/* The hidden words: SVM pointers, or buffers. */
	cl_uint *ctl_svm, *rec_svm;
	cl_mem ctl, rec;
	size_t rec_max;         /* bytes of the record for the most groups */
};

/* One row of the table. */
struct row {
	const char *name;
	size_t local, groups;
	double plain_ms, guarded_ms, r50, r10, r90, cost;
};

/* The first device of the first platform that has one; NULL and why not. */
static const char *dev_open(struct dev *d)
{
	static char why[96];
	cl_platform_id ps[8];
	cl_device_svm_capabilities svm = 0;
	cl_device_type type = 0;
	cl_uint np = 0;
	cl_int err;

	d->id = NULL;
	err = clGetPlatformIDs(8, ps, &np);
	if (err != CL_SUCCESS || !np) {
		snprintf(why, sizeof(why), "no OpenCL platform (clGetPlatformIDs = %d)", (int)err);
		return why;
	}
	for (cl_uint i = 0; i < np && i < 8 && !d->id; i++)
		if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &d->id, NULL) != CL_SUCCESS)
			d->id = NULL;
	if (!d->id)
		return "no OpenCL device";
	CK(clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof(d->name), d->name, NULL));
	d->name[sizeof(d->name) - 1] = '\0';
	/* An OpenCL 1.x device does not know the query: no SVM. */
	if (clGetDeviceInfo(d->id, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL) !=
	    CL_SUCCESS)
		svm = 0;
	d->svm = svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
	if (clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof(type), &type, NULL) != CL_SUCCESS)
		type = 0;
	d->flags = type & CL_DEVICE_TYPE_CPU ? CLG_SERIAL_GROUPS : 0;
	d->ctx = clCreateContext(NULL, 1, &d->id, NULL, NULL, &err);
	CK(err);
	{
		cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE,
						0 };

		d->q = clCreateCommandQueueWithProperties(d->ctx, d->id, props, &err);
		CK(err);
	}
	return NULL;
}

static void dev_close(struct dev *d)
{
	clReleaseCommandQueue(d->q);
	clReleaseContext(d->ctx);
}

/* Builds @src into *@prog and its one kernel @name into *@k; a build log
 * on failure. */
static void build(struct dev *d, const char *src, size_t len, const char *name,
		  cl_program *prog, cl_kernel *k)
{
	cl_int err;

	*prog = clCreateProgramWithSource(d->ctx, 1, &src, &len, &err);
	CK(err);
	err = clBuildProgram(*prog, 1, &d->id, "", NULL, NULL);
	if (err != CL_SUCCESS) {
		char log[4096] = "";

		clGetProgramBuildInfo(*prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log,
				      NULL);
		fprintf(stderr, NAME ": %s: build log:\n%s\n", name, log);
		cl_fail("clBuildProgram", err);
	}
	*k = clCreateKernel(*prog, name, &err);
	CK(err);
}

/* Deterministic input in [0, 1): the same for every run and both variants. */
static void fill_input(struct dev *d, cl_mem in, size_t elems)
{
	size_t n = elems * 4;
	cl_float *h = malloc(n * sizeof(*h));

	if (!h) {
		perror(NAME);
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		h[i] = (cl_float)((uint32_t)(i * 2654435761u) >> 8) / 16777216.0f;
	CK(clEnqueueWriteBuffer(d->q, in, CL_TRUE, 0, n * sizeof(*h), h, 0, NULL, NULL));
	free(h);
}

static void bench_setup(struct dev *d, const struct workload *w, struct bench *b)
{
	struct clg_result r;
	cl_uint nargs[2], one = 1;
	cl_int err;

	memset(b, 0, sizeof(*b));
	b->w = w;
	if (clg_rewrite(w->src, strlen(w->src), d->flags, &r) < 0) {
		fprintf(stderr, NAME ": clg_rewrite: out of memory\n");
		exit(1);
	}
	if (!r.src || r.n != 1 || r.k[0].reason) {
		fprintf(stderr, NAME ": %s: the rewriter left the kernel alone: %s\n", w->name,
			r.src ? r.k[0].reason : r.reason ? r.reason : "(no reason)");
		exit(1);
	}
	build(d, w->src, strlen(w->src), w->name, &b->prog[0], &b->k[0]);
	build(d, r.src, r.len, w->name, &b->prog[1], &b->k[1]);
	clg_result_fini(&r);
	for (int v = 0; v < 2; v++)
		CK(clGetKernelInfo(b->k[v], CL_KERNEL_NUM_ARGS, sizeof(nargs[v]), &nargs[v], NULL));
	if (nargs[1] != nargs[0] + CLG_HIDDEN) {
		fprintf(stderr, NAME ": %s: %u arguments guarded, %u plain\n", w->name,
			nargs[1], nargs[0]);
		exit(1);
	}
	b->hidden = nargs[0];

	b->in = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, w->in_elems * F4, NULL, &err);
	CK(err);
	b->out = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, w->out_bytes, NULL, &err);
	CK(err);
	fill_input(d, b->in, w->in_elems);
	for (int v = 0; v < 2; v++) {
		CK(clSetKernelArg(b->k[v], 0, sizeof(b->in), &b->in));
		CK(clSetKernelArg(b->k[v], 1, sizeof(b->out), &b->out));
	}

	b->rec_max = clg_rec_size(w->global / locals[0]);
	for (size_t l = 1; l < NLOCAL; l++)
		if (clg_rec_size(w->global / locals[l]) > b->rec_max)
			b->rec_max = clg_rec_size(w->global / locals[l]);
	if (d->svm) {
		b->ctl_svm = clSVMAlloc(d->ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
					sizeof(cl_uint), 0);
		b->rec_svm = clSVMAlloc(d->ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
					b->rec_max, 0);
		if (!b->ctl_svm || !b->rec_svm)
			cl_fail("clSVMAlloc", CL_OUT_OF_RESOURCES);
		*b->ctl_svm = 0;
		CK(clSetKernelArgSVMPointer(b->k[1], b->hidden, b->ctl_svm));
		CK(clSetKernelArgSVMPointer(b->k[1], b->hidden + 1, b->rec_svm));
		CK(clSetKernelArg(b->k[1], b->hidden + 2, sizeof(one), &one));
	} else {
		cl_uint zero = 0;

		b->ctl = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
		CK(err);
		b->rec = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, b->rec_max, NULL, &err);
		CK(err);
		CK(clEnqueueWriteBuffer(d->q, b->ctl, CL_TRUE, 0, sizeof(zero), &zero, 0, NULL,
					NULL));
		CK(clSetKernelArg(b->k[1], b->hidden, sizeof(b->ctl), &b->ctl));
		CK(clSetKernelArg(b->k[1], b->hidden + 1, sizeof(b->rec), &b->rec));
		CK(clSetKernelArg(b->k[1], b->hidden + 2, sizeof(one), &one));
	}
}

static void bench_teardown(struct dev *d, struct bench *b)
{
	clFinish(d->q);
	if (b->ctl_svm)
		clSVMFree(d->ctx, b->ctl_svm);
	if (b->rec_svm)
		clSVMFree(d->ctx, b->rec_svm);
	if (b->ctl)
		clReleaseMemObject(b->ctl);
	if (b->rec)
		clReleaseMemObject(b->rec);
	clReleaseMemObject(b->in);
	clReleaseMemObject(b->out);
	for (int v = 0; v < 2; v++) {
		clReleaseKernel(b->k[v]);
		clReleaseProgram(b->prog[v]);
	}
}

/*
 * One launch of variant @v (1: guarded) over @local, waited for; its
 * device time in ns. The guarded one starts from a zeroed record, as every
 * first launch under the shim does.
 */
static uint64_t launch(struct dev *d, struct bench *b, int v, size_t local)
{
	size_t global = b->w->global, rec = clg_rec_size(global / local);
	cl_ulong t0, t1;
	cl_event ev;

	if (v && b->rec_svm) {
		memset(b->rec_svm, 0, rec);
	} else if (v) {
		cl_uint zero = 0;

		CK(clEnqueueFillBuffer(d->q, b->rec, &zero, sizeof(zero), 0, rec, 0, NULL, NULL));
	}
	CK(clEnqueueNDRangeKernel(d->q, b->k[v], 1, NULL, &global, &local, 0, NULL, &ev));
	CK(clWaitForEvents(1, &ev));
	CK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL));
	CK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL));
	clReleaseEvent(ev);
	return t1 > t0 ? t1 - t0 : 0;
}

/*
 * The output of a launch of variant @v into @host, from an output buffer
 * first filled with a pattern no kernel writes (0xff bytes: NaNs), so that
 * what a variant did not write cannot pass for its result.
 */
static void output_of(struct dev *d, struct bench *b, int v, size_t local, void *host)
{
	cl_uchar ff = 0xff;

	CK(clEnqueueFillBuffer(d->q, b->out, &ff, 1, 0, b->w->out_bytes, 0, NULL, NULL));
	launch(d, b, v, local);
	CK(clEnqueueReadBuffer(d->q, b->out, CL_TRUE, 0, b->w->out_bytes, host, 0, NULL, NULL));
}

/*
 * Whether both variants wrote the same bytes, and whether the guarded
 * launch's record says what a launch that ran whole says: no group
 * skipped, each of the @groups words set to attempt 1. 0, or -1 with the reason printed.
 */
static int check(struct dev *d, struct bench *b, size_t local)
{
	size_t groups = b->w->global / local, words = clg_rec_size(groups) / sizeof(cl_uint);
	void *plain = malloc(b->w->out_bytes), *guarded = malloc(b->w->out_bytes);
	cl_uint *rec = malloc(words * sizeof(cl_uint));
	int rc = -1;

	if (!plain || !guarded || !rec) {
		perror(NAME);
		exit(1);
	}
	output_of(d, b, 0, local, plain);
	output_of(d, b, 1, local, guarded);
	if (b->rec_svm)
		memcpy(rec, b->rec_svm, words * sizeof(cl_uint));
	else
		CK(clEnqueueReadBuffer(d->q, b->rec, CL_TRUE, 0, words * sizeof(cl_uint), rec, 0,
				       NULL, NULL));
	if (memcmp(plain, guarded, b->w->out_bytes)) {
		fprintf(stderr, NAME ": %s local %zu: the guarded kernel's output differs from "
			"the plain one's\n", b->w->name, local);
		goto out;
	}
	if (rec[CLG_REC_SKIPPED]) {
		fprintf(stderr, NAME ": %s local %zu: %u groups skipped with the control word "
			"0\n", b->w->name, local, rec[CLG_REC_SKIPPED]);
		goto out;
	}
	for (size_t g = 0; g < groups; g++)
		if (rec[CLG_REC_GROUPS + g] != 1) {
			fprintf(stderr, NAME ": %s local %zu: group %zu of %zu not marked "
				"started in the record\n", b->w->name, local, g, groups);
			goto out;
		}
	rc = 0;
out:
	free(plain);
	free(guarded);
	free(rec);
	return rc;
}

/* Ratios are kept in millionths, so that bench_pct() serves them too. */
#define PPM 1000000.0

/* Measures one row: @reps pairs of @local launches after the warm-up. */
static int measure(struct dev *d, struct bench *b, size_t local, int reps, struct row *r)
{
	uint64_t *t[2], *ratio;

	if (check(d, b, local) < 0)
		return -1;
	for (int i = 0; i < WARMUP; i++)
		for (int v = 0; v < 2; v++)
			launch(d, b, v, local);
	t[0] = calloc((size_t)reps, sizeof(uint64_t));
	t[1] = calloc((size_t)reps, sizeof(uint64_t));
	ratio = calloc((size_t)reps, sizeof(uint64_t));
	if (!t[0] || !t[1] || !ratio) {
		perror(NAME);
		exit(1);
	}
	for (int p = 0; p < reps; p++) {
		/* Odd pairs launch the guarded kernel first: neither variant
		 * always finds the caches as the other left them. */
		for (int j = 0; j < 2; j++) {
			int v = (j + p) % 2;

			t[v][p] = launch(d, b, v, local);
		}
		ratio[p] = t[0][p] ? (uint64_t)((double)t[1][p] / (double)t[0][p] * PPM) : 0;
	}
	*r = (struct row){ .name = b->w->name, .local = local, .groups = b->w->global / local };
	r->plain_ms = (double)bench_pct(t[0], (size_t)reps, 50) / 1e6;
	r->guarded_ms = (double)bench_pct(t[1], (size_t)reps, 50) / 1e6;
	r->r50 = (double)bench_pct(ratio, (size_t)reps, 50) / PPM;
	r->r10 = (double)bench_pct(ratio, (size_t)reps, 10) / PPM;
	r->r90 = (double)bench_pct(ratio, (size_t)reps, 90) / PPM;
	r->cost = r->r50 > 0 ? (1.0 - 1.0 / r->r50) * 100.0 : 0;
	free(t[0]);
	free(t[1]);
	free(ratio);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: " NAME " [--reps N] [--quick] [--atomic] [--out DIR]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct row rows[NWORK * NLOCAL];
	const char *out = NULL, *why;
	int reps = 100, nrows = 0;
	bool reps_set = false, atomic = false;
	FILE *tsv = NULL;
	struct dev d;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!strcmp(a, "--quick")) {
			if (!reps_set)
				reps = 10;
		} else if (!strcmp(a, "--reps") && val) {
			long n = strtol(val, &end, 10);

			if (end == val || *end || n < 1 || n > 1000000)
				usage();
			reps = (int)n, reps_set = true, i++;
		} else if (!strcmp(a, "--atomic")) {
			atomic = true;
		} else if (!strcmp(a, "--out") && val) {
			out = val, i++;
		} else {
			usage();
		}
	}
	why = dev_open(&d);
	if (why) {
		printf(NAME ": skipped: %s\n", why);
		return 0;
	}
	if (atomic)
		d.flags = 0;
	if (out) {
		char path[4096];

		if (mkdir(out, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, NAME ": %s: %s\n", out, strerror(errno));
			return 1;
		}
		snprintf(path, sizeof(path), "%s/summary.tsv", out);
		if (!(tsv = fopen(path, "w"))) {
			fprintf(stderr, NAME ": %s: %s\n", path, strerror(errno));
			return 1;
		}
	}

	bench_print_machine(stdout);
	printf("device: %s; hidden words in %s; groups decide by %s; %d pairs per row after %d "
	       "warm-up launches of each variant\n", d.name,
	       d.svm ? "fine-grain SVM (record zeroed by the host)" :
		       "buffers (record zeroed by clEnqueueFillBuffer)",
	       d.flags & CLG_SERIAL_GROUPS ? "a plain store (a CPU device)" : "compare-and-swap",
	       reps, WARMUP);
	fflush(stdout);
	for (size_t w = 0; w < NWORK; w++) {
		const struct workload *wl = &workloads[w];
		struct bench b;

		bench_setup(&d, wl, &b);
		printf("%s: global size %zu (%.1f MiB read, %.1f MiB written per launch)\n",
		       wl->name, wl->global, (double)(wl->in_elems * F4) / (1 << 20),
		       (double)wl->out_bytes / (1 << 20));
		fflush(stdout);
		for (size_t l = 0; l < NLOCAL; l++) {
			if (measure(&d, &b, locals[l], reps, &rows[nrows]) < 0) {
				bench_teardown(&d, &b);
				dev_close(&d);
				if (tsv)
					fclose(tsv);
				return 1;
			}
			nrows++;
		}
		bench_teardown(&d, &b);
	}
	dev_close(&d);

	printf("\n| workload | local | work-groups | plain ms | guarded ms | guarded/plain P50 | "
	       "P10 | P90 | cost %% | goal (<= %.0f%%) |\n", GOAL_PCT);
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	if (tsv)
		fprintf(tsv, "workload\tlocal\tgroups\tplain_ms\tguarded_ms\tratio_p50\t"
			"ratio_p10\tratio_p90\tcost_pct\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		printf("| %s | %zu | %zu | %.3f | %.3f | %.4f | %.4f | %.4f | %+.2f | %s |\n",
		       r->name, r->local, r->groups, r->plain_ms, r->guarded_ms, r->r50, r->r10,
		       r->r90, r->cost, r->cost <= GOAL_PCT ? "met" : "**missed**");
		if (tsv)
			fprintf(tsv, "%s\t%zu\t%zu\t%.4f\t%.4f\t%.5f\t%.5f\t%.5f\t%.3f\n", r->name,
				r->local, r->groups, r->plain_ms, r->guarded_ms, r->r50, r->r10,
				r->r90, r->cost);
	}
	printf("(device time: each launch's CL_PROFILING_COMMAND_END - START by the device's "
	       "profiling clock; plain = the source as written, guarded = as clg_rewrite() "
	       "rewrote it, control word 0, record zeroed before each launch, not timed; "
	       "ratio = guarded / plain within a pair, %d pairs, the order alternating; "
	       "cost = (1 - 1 / P50 ratio) x 100, positive = slower with the guardian. Not in "
	       "it: the shim's per-launch host cost, its enqueue path and the record's "
	       "zeroing: bench_cl_enqueue measures that)\n", reps);
	if (tsv && fclose(tsv)) {
		fprintf(stderr, NAME ": summary.tsv: write error\n");
		return 1;
	}
	return 0;
}
