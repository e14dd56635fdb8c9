/*
 * cl_prog phases on buffered launches and every kind of kernel argument:
 * each launch here waits behind sixteen markers held by a user event, so
 * that a scheduling shim buffers it and issues it later, after the
 * application has set other arguments. Every launch must still run with the arguments of its own
 * enqueue: buffers (also NULL ones, given both ways OpenCL allows), local
 * memory sizes (NULL values), scalars and vectors of every size, a
 * struct by value, images and samplers, kernels of more than 64
 * arguments, clones made by the application, kernels and programs
 * released before their launch ran, tasks, one kernel alternating between
 * two queues, SVM pointers (also
 * into the middle of an allocation) and execution info (SVM pointers a
 * kernel reaches indirectly). Results are checked against host references.
 */
#include "cl_prog.h"

#include <string.h>

#define KA_N 256                /* work-items per launch */
#define KA_MANY 80              /* arguments of the "many" kernel */

static const char ka_src[] =
	"typedef struct { int a; float b; long c; } pair_t;\n"
	/* Every argument of a size the driver knows (PoCL then keeps them
	 * in one block, which its clCloneKernel copies wrongly). */
	"__kernel void ka_mix(__global uint *out, __global const uint *opt,\n"
	"		  __local uint *l1, char c, short s, int i, long l, int4 v4,\n"
	"		  __local ulong *l2, long16 w, uchar3 u3,\n"
	"		  __global const uint *opt2)\n"
	"{\n"
	"	size_t g = get_global_id(0), t = get_local_id(0);\n"
	"	size_t o = (t + 1) % get_local_size(0);\n"
	"	l1[t] = (uint)g * 3u + (uint)c;\n"
	"	l2[t] = (ulong)l + (ulong)t;\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	uint x = l1[o] + (uint)l2[o] + (uint)s * 5u + (uint)i * 7u;\n"
	"	x += (uint)(v4.x + v4.y * 2 + v4.z * 3 + v4.w * 4);\n"
	"	x += (uint)(w.s0 + w.s5 + w.sf) + (uint)u3.x + (uint)u3.y * 2u + (uint)u3.z * 3u;\n"
	"	x += opt ? opt[g] : 1000u;\n"
	"	x += opt2 ? opt2[g] * 2u : 77u;\n"
	"	out[g] = x;\n"
	"}\n"
	/* A struct by value next to a buffer that may be NULL. */
	"__kernel void ka_pair(__global uint *out, pair_t p, __global const uint *opt)\n"
	"{\n"
	"	size_t g = get_global_id(0);\n"
	"	out[g] = (uint)p.a * 11u + (uint)(p.b * 2.0f) + (uint)p.c * 13u + (uint)g +\n"
	"		 (opt ? opt[g] : 5u);\n"
	"}\n"
	"__kernel void task_fill(__global uint *out, uint v, uint n)\n"
	"{\n"
	"	for (uint k = 0; k < n; k++)\n"
	"		out[k] = v + k;\n"
	"}\n"
	"__kernel void svm_add(__global uint *dst, __global const uint *src, uint a)\n"
	"{\n"
	"	size_t g = get_global_id(0);\n"
	"	dst[g] = src[g] + a;\n"
	"}\n"
	/* Reaches its data through a pointer stored in SVM memory. */
	"__kernel void svm_indirect(__global uint *__global *pp, __global uint *out)\n"
	"{\n"
	"	size_t g = get_global_id(0);\n"
	"	out[g] = (*pp)[g] * 3u + 1u;\n"
	"}\n";

typedef struct {
	cl_int a;
	cl_float b;
	cl_long c;
} ka_pair;

struct ka_mix {
	cl_mem opt, opt2;
	int opt2_by_null;               /* opt2 set with arg_value NULL */
	size_t l1, l2;                  /* local sizes, bytes */
	cl_char c;
	cl_short s;
	cl_int i;
	cl_long l;
	cl_int4 v4;
	ka_pair p;
	cl_long16 w;
	cl_uchar3 u3;
	const cl_uint *opt_host, *opt2_host;
};

static cl_event ka_user(void)
{
	cl_int err;
	cl_event u = clCreateUserEvent(clp.ctx, &err);

	CK(err);
	return u;
}

/*
 * Sixteen markers behind @u on @q: a scheduler keeping at most that many
 * commands in flight (xsched's default window) buffers what follows.
 */
static void ka_hold(cl_command_queue q, cl_event u)
{
	for (int i = 0; i < 16; i++)
		CK(clEnqueueMarkerWithWaitList(q, 1, &u, NULL));
}

static cl_program ka_build(const char *src)
{
	cl_int err;
	cl_program p = clCreateProgramWithSource(clp.ctx, 1, &src, NULL, &err);

	CK(err);
	CK(clBuildProgram(p, 1, &clp.dev, "", NULL, NULL));
	return p;
}

static cl_kernel ka_kernel(cl_program p, const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(p, name, &err);

	CK(err);
	return k;
}

static void ka_set_mix(cl_kernel k, cl_mem out, const struct ka_mix *m)
{
	CK(clSetKernelArg(k, 0, sizeof(out), &out));
	CK(clSetKernelArg(k, 1, sizeof(m->opt), &m->opt));
	CK(clSetKernelArg(k, 2, m->l1, NULL));
	CK(clSetKernelArg(k, 3, sizeof(m->c), &m->c));
	CK(clSetKernelArg(k, 4, sizeof(m->s), &m->s));
	CK(clSetKernelArg(k, 5, sizeof(m->i), &m->i));
	CK(clSetKernelArg(k, 6, sizeof(m->l), &m->l));
	CK(clSetKernelArg(k, 7, sizeof(m->v4), &m->v4));
	CK(clSetKernelArg(k, 8, m->l2, NULL));
	CK(clSetKernelArg(k, 9, sizeof(m->w), &m->w));
	CK(clSetKernelArg(k, 10, sizeof(m->u3), &m->u3));
	if (m->opt2_by_null)
		CK(clSetKernelArg(k, 11, sizeof(cl_mem), NULL));
	else
		CK(clSetKernelArg(k, 11, sizeof(m->opt2), &m->opt2));
}

static void ka_set_pair(cl_kernel k, cl_mem out, const struct ka_mix *m)
{
	CK(clSetKernelArg(k, 0, sizeof(out), &out));
	CK(clSetKernelArg(k, 1, sizeof(m->p), &m->p));
	CK(clSetKernelArg(k, 2, sizeof(m->opt), &m->opt));
}

static void ka_pair_ref(const struct ka_mix *m, cl_uint *out)
{
	for (size_t g = 0; g < KA_N; g++)
		out[g] = (cl_uint)m->p.a * 11u + (cl_uint)(m->p.b * 2.0f) + (cl_uint)m->p.c * 13u +
			 (cl_uint)g + (m->opt_host ? m->opt_host[g] : 5u);
}

/* The host reference of mix with @m over KA_N items in groups of LOCAL. */
static void ka_mix_ref(const struct ka_mix *m, cl_uint *out)
{
	for (size_t g = 0; g < KA_N; g++) {
		size_t base = g - g % LOCAL, o = (g % LOCAL + 1) % LOCAL;
		cl_uint x = (cl_uint)(base + o) * 3u + (cl_uint)m->c;

		x += (cl_uint)((cl_ulong)m->l + o) + (cl_uint)m->s * 5u + (cl_uint)m->i * 7u;
		x += (cl_uint)(m->v4.s[0] + m->v4.s[1] * 2 + m->v4.s[2] * 3 + m->v4.s[3] * 4);
		x += (cl_uint)(m->w.s[0] + m->w.s[5] + m->w.s[15]);
		x += (cl_uint)m->u3.s[0] + (cl_uint)m->u3.s[1] * 2u + (cl_uint)m->u3.s[2] * 3u;
		x += m->opt_host ? m->opt_host[g] : 1000u;
		x += m->opt2_host ? m->opt2_host[g] * 2u : 77u;
		out[g] = x;
	}
}

/* A different set of values for each @n. */
static void ka_mix_values(struct ka_mix *m, int n)
{
	m->c = (cl_char)(5 + n);
	m->s = (cl_short)(300 + 7 * n);
	m->i = 70000 + 11 * n;
	m->l = 5000000000LL + 13 * n;
	for (int j = 0; j < 4; j++)
		m->v4.s[j] = n * 4 + j;
	m->p.a = 9 + n;
	m->p.b = 1.5f + (cl_float)n;
	m->p.c = 123456789LL * (n + 1);
	for (int j = 0; j < 16; j++)
		m->w.s[j] = (cl_long)(j + 1) * (n + 3);
	for (int j = 0; j < 3; j++)
		m->u3.s[j] = (cl_uchar)(200 + n + j);
	m->l1 = LOCAL * sizeof(cl_uint) * (size_t)(1 + n % 3);
	m->l2 = LOCAL * sizeof(cl_ulong) * (size_t)(1 + (n + 1) % 2);
}

static void ka_range(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *w)
{
	size_t g = KA_N, l = LOCAL;

	CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, nw, w, NULL));
}

/*
 * ka_mix and ka_pair, buffered, three times with every argument changed
 * in between: NULL buffers (both ways), real ones, other local sizes;
 * then the same kernels alternating between two queues, forty times.
 */
static int ka_mix_phase(cl_program prog, uint64_t *h)
{
	enum { SETS = 3, ALT = 40 };
	static cl_uint host_opt[KA_N], host_opt2[KA_N], got[KA_N], want[2 * (SETS + ALT)][KA_N];
	cl_command_queue q2 = clp_queue(0);
	cl_kernel k = ka_kernel(prog, "ka_mix"), kp = ka_kernel(prog, "ka_pair");
	cl_mem opt = clp_buffer(sizeof(host_opt)), opt2 = clp_buffer(sizeof(host_opt2));
	cl_mem out[2 * (SETS + ALT)];
	cl_event u = ka_user(), u2 = ka_user();
	struct ka_mix m;
	int ok = 1, n;

	clp_iota(host_opt, KA_N, 901);
	clp_iota(host_opt2, KA_N, 902);
	clp_write(clp.q, opt, host_opt, KA_N);
	clp_write(clp.q, opt2, host_opt2, KA_N);
	for (n = 0; n < 2 * (SETS + ALT); n++)
		out[n] = clp_buffer(KA_N * sizeof(cl_uint));
	ka_hold(clp.q, u);
	ka_hold(q2, u2);
	for (n = 0; n < SETS + ALT; n++) {
		cl_command_queue q = n < SETS || n % 2 ? clp.q : q2;

		memset(&m, 0, sizeof(m));
		ka_mix_values(&m, n);
		/* Buffers: both NULL, both real, one NULL each way. */
		if (n % 4 == 1 || n % 4 == 3) {
			m.opt = opt;
			m.opt_host = host_opt;
		}
		if (n % 4 == 1 || n % 4 == 2) {
			m.opt2 = opt2;
			m.opt2_host = host_opt2;
		} else {
			m.opt2_by_null = n % 4 == 3;
		}
		ka_set_mix(k, out[n], &m);
		ka_mix_ref(&m, want[n]);
		ka_range(q, k, 1, q == clp.q ? &u : &u2);
		ka_set_pair(kp, out[SETS + ALT + n], &m);
		ka_pair_ref(&m, want[SETS + ALT + n]);
		ka_range(q, kp, 0, NULL);
	}
	/* Changed once more, never launched. */
	memset(&m, 0, sizeof(m));
	ka_mix_values(&m, 99);
	ka_set_mix(k, opt, &m);
	ka_set_pair(kp, opt, &m);
	CK(clSetUserEventStatus(u2, CL_COMPLETE));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clFinish(q2));
	for (n = 0; n < 2 * (SETS + ALT); n++) {
		char what[32];

		clp_read(clp.q, out[n], got, KA_N);
		snprintf(what, sizeof(what), "%s launch %d", n < SETS + ALT ? "mix" : "pair",
			 n % (SETS + ALT));
		ok &= clp_same_u32("kargs", what, got, want[n], KA_N);
		*h ^= clp_hash(got, sizeof(got)) * (uint64_t)(n + 1);
	}
	for (n = 0; n < 2 * (SETS + ALT); n++)
		clReleaseMemObject(out[n]);
	clReleaseMemObject(opt);
	clReleaseMemObject(opt2);
	clReleaseEvent(u);
	clReleaseEvent(u2);
	clReleaseKernel(k);
	clReleaseKernel(kp);
	clReleaseCommandQueue(q2);
	return ok;
}

/*
 * A kernel of KA_MANY arguments (more than a 64-bit mask holds), from a
 * program and a kernel the application releases before the launch runs;
 * then a clone made by the application, launched with changed arguments.
 */
static int ka_many_phase(uint64_t *h)
{
	static char src[KA_MANY * 40 + 256];
	static cl_uint got[KA_N];
	cl_uint want[3] = { 0, 0, 0 }, v, weight = 1;
	cl_mem out[3] = { clp_buffer(sizeof(got)), clp_buffer(sizeof(got)),
			  clp_buffer(sizeof(got)) };
	cl_event u = ka_user();
	cl_program p;
	cl_kernel k, clone;
	cl_int err;
	size_t len;
	int ok = 1;

	len = (size_t)snprintf(src, sizeof(src), "__kernel void many(__global uint *out");
	for (int i = 0; i < KA_MANY; i++)
		len += (size_t)snprintf(src + len, sizeof(src) - len, ", uint a%d", i);
	len += (size_t)snprintf(src + len, sizeof(src) - len, ")\n{\n\tuint s = 0;\n");
	for (int i = 0; i < KA_MANY; i++)
		len += (size_t)snprintf(src + len, sizeof(src) - len, "\ts = s * 3u + a%d;\n", i);
	snprintf(src + len, sizeof(src) - len, "\tout[get_global_id(0)] = s;\n}\n");
	for (int i = 1; i < KA_MANY; i++)
		weight *= 3u;
	p = ka_build(src);
	k = ka_kernel(p, "many");
	CK(clReleaseProgram(p));
	ka_hold(clp.q, u);
	CK(clSetKernelArg(k, 0, sizeof(out[0]), &out[0]));
	for (cl_uint i = 0; i < KA_MANY; i++) {
		v = i * 7 + 1;
		CK(clSetKernelArg(k, i + 1, sizeof(v), &v));
		want[0] = want[0] * 3u + v;
	}
	ka_range(clp.q, k, 1, &u);
	/* The last argument changes: only the second launch sees it. */
	v = 4242;
	CK(clSetKernelArg(k, KA_MANY, sizeof(v), &v));
	CK(clSetKernelArg(k, 0, sizeof(out[1]), &out[1]));
	want[1] = want[0] - (KA_MANY - 1) * 7 - 1 + v;
	ka_range(clp.q, k, 0, NULL);
	/* The clone has the arguments as they are now. */
	clone = clCloneKernel(k, &err);
	CK(err);
	CK(clSetKernelArg(clone, 0, sizeof(out[2]), &out[2]));
	v = 2;          /* was 1, weighs 3^(KA_MANY - 1) */
	CK(clSetKernelArg(clone, 1, sizeof(v), &v));
	want[2] = want[1] + weight;
	ka_range(clp.q, clone, 0, NULL);
	CK(clReleaseKernel(clone));
	CK(clReleaseKernel(k));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	for (int n = 0; n < 3; n++) {
		char what[32];
		cl_uint ref[KA_N];

		for (size_t i = 0; i < KA_N; i++)
			ref[i] = want[n];
		clp_read(clp.q, out[n], got, KA_N);
		snprintf(what, sizeof(what), "many launch %d", n);
		ok &= clp_same_u32("kargs", what, got, ref, KA_N);
		*h ^= clp_hash(got, sizeof(got)) * (uint64_t)(n + 11);
		clReleaseMemObject(out[n]);
	}
	clReleaseEvent(u);
	return ok;
}

/* Tasks (clEnqueueTask) whose arguments change after each enqueue. */
static int ka_task_phase(cl_program prog, uint64_t *h)
{
	static cl_uint got[64], want[64];
	cl_kernel k = ka_kernel(prog, "task_fill");
	cl_mem out = clp_buffer(sizeof(got));
	cl_event u = ka_user();
	cl_uint v = 10, n = 64;
	int ok;

	ka_hold(clp.q, u);
	CK(clSetKernelArg(k, 0, sizeof(out), &out));
	CK(clSetKernelArg(k, 1, sizeof(v), &v));
	CK(clSetKernelArg(k, 2, sizeof(n), &n));
	CK(clEnqueueTask(clp.q, k, 1, &u, NULL));
	v = 500;
	n = 32;
	CK(clSetKernelArg(k, 1, sizeof(v), &v));
	CK(clSetKernelArg(k, 2, sizeof(n), &n));
	CK(clEnqueueTask(clp.q, k, 0, NULL, NULL));
	n = 0;
	CK(clSetKernelArg(k, 2, sizeof(n), &n));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	for (cl_uint i = 0; i < 64; i++)
		want[i] = i < 32 ? 500 + i : 10 + i;
	clp_read(clp.q, out, got, 64);
	ok = clp_same_u32("kargs", "task", got, want, 64);
	*h ^= clp_hash(got, sizeof(got));
	clReleaseMemObject(out);
	clReleaseEvent(u);
	clReleaseKernel(k);
	return ok;
}

/*
 * Images and samplers as arguments (cl_prog's img_shift): two buffered
 * launches with other images, samplers and offsets each.
 */
static int ka_image_phase(uint64_t *h)
{
	enum { PIX = CLP_IMG_W * CLP_IMG_H * 4 };
	static unsigned char host[PIX], got[PIX], want[2][PIX];
	const cl_sampler_properties sp[] = {
		CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
		CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_CLAMP_TO_EDGE,
		CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0,
	};
	cl_kernel k = clp_kernel("img_shift");
	cl_mem src = clp_image(), dst[2] = { clp_image(), clp_image() }, junk = clp_image();
	size_t origin[3] = { 0, 0, 0 }, region[3] = { CLP_IMG_W, CLP_IMG_H, 1 },
	       gsz[2] = { CLP_IMG_W, CLP_IMG_H }, lsz[2] = { 8, 4 };
	cl_sampler s[2];
	cl_event u = ka_user();
	cl_int err, dx[2] = { 3, -5 };
	int ok = 1;

	for (int i = 0; i < 2; i++) {
		s[i] = clCreateSamplerWithProperties(clp.ctx, sp, &err);
		CK(err);
	}
	for (size_t i = 0; i < sizeof(host); i++)
		host[i] = (unsigned char)((i * 53 + i / 199) % 240);
	CK(clEnqueueWriteImage(clp.q, src, CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL));
	ka_hold(clp.q, u);
	for (int n = 0; n < 2; n++) {
		CK(clSetKernelArg(k, 0, sizeof(src), &src));
		CK(clSetKernelArg(k, 1, sizeof(s[n]), &s[n]));
		CK(clSetKernelArg(k, 2, sizeof(dst[n]), &dst[n]));
		CK(clSetKernelArg(k, 3, sizeof(dx[n]), &dx[n]));
		CK(clEnqueueNDRangeKernel(clp.q, k, 2, NULL, gsz, lsz, 0, NULL, NULL));
		clp_shift_ref(want[n], host, dx[n]);
	}
	CK(clSetKernelArg(k, 2, sizeof(junk), &junk));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	for (int n = 0; n < 2; n++) {
		CK(clEnqueueReadImage(clp.q, dst[n], CL_TRUE, origin, region, 0, 0, got, 0, NULL,
				      NULL));
		ok &= clp_same("kargs", n ? "image launch 1" : "image launch 0", got, want[n],
			       sizeof(got));
		*h ^= clp_hash(got, sizeof(got)) * (uint64_t)(n + 21);
		clReleaseMemObject(dst[n]);
		clReleaseSampler(s[n]);
	}
	clReleaseMemObject(src);
	clReleaseMemObject(junk);
	clReleaseEvent(u);
	clReleaseKernel(k);
	return ok;
}

void ph_kargs(void)
{
	cl_program prog = ka_build(ka_src);
	uint64_t h = 0;
	int ok;

	ok = ka_mix_phase(prog, &h);
	ok &= ka_many_phase(&h);
	ok &= ka_task_phase(prog, &h);
	ok &= ka_image_phase(&h);
	if (ok)
		printf("kargs: ok %016llx\n", (unsigned long long)h);
	clReleaseProgram(prog);
}

/*
 * SVM pointer arguments (one into the middle of an allocation) and
 * execution info: a kernel that reaches its data only through a pointer
 * stored in SVM memory, with CL_KERNEL_EXEC_INFO_SVM_PTRS naming it, the
 * pointer and the info changed after each buffered enqueue.
 */
void ph_kargs_svm(void)
{
	cl_device_svm_capabilities caps = 0;
	cl_program prog;
	cl_kernel add, ind;
	cl_uint *a, *b, *c, **pp, *res, *named[2], want[3][KA_N], x = 5;
	cl_bool fine = CL_FALSE;
	cl_event u;
	int ok = 1;
	uint64_t h = 0;

	if (clGetDeviceInfo(clp.dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, NULL) ||
	    !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
		printf("kargs_svm: skipped\n");
		return;
	}
	prog = ka_build(ka_src);
	add = ka_kernel(prog, "svm_add");
	ind = ka_kernel(prog, "svm_indirect");
	a = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, 2 * KA_N * sizeof(cl_uint), 0);
	b = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, KA_N * sizeof(cl_uint), 0);
	c = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, KA_N * sizeof(cl_uint), 0);
	pp = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, sizeof(*pp), 0);
	res = clSVMAlloc(clp.ctx, CL_MEM_READ_WRITE, 2 * KA_N * sizeof(cl_uint), 0);
	if (!a || !b || !c || !pp || !res) {
		printf("error clSVMAlloc\n");
		exit(1);
	}
	CK(clEnqueueSVMMap(clp.q, CL_TRUE, CL_MAP_WRITE, a, 2 * KA_N * sizeof(cl_uint), 0, NULL,
			   NULL));
	clp_iota(a, 2 * KA_N, 70);
	CK(clEnqueueSVMUnmap(clp.q, a, 0, NULL, NULL));
	CK(clEnqueueSVMMap(clp.q, CL_TRUE, CL_MAP_WRITE, pp, sizeof(*pp), 0, NULL, NULL));
	*pp = a;
	CK(clEnqueueSVMUnmap(clp.q, pp, 0, NULL, NULL));
	u = ka_user();
	ka_hold(clp.q, u);
	/* b = a[KA_N..] + 5, behind the user event; then c = a + 9. */
	CK(clSetKernelArgSVMPointer(add, 0, b));
	CK(clSetKernelArgSVMPointer(add, 1, a + KA_N));
	CK(clSetKernelArg(add, 2, sizeof(x), &x));
	ka_range(clp.q, add, 1, &u);
	CK(clSetKernelArgSVMPointer(add, 0, c));
	CK(clSetKernelArgSVMPointer(add, 1, a));
	x = 9;
	CK(clSetKernelArg(add, 2, sizeof(x), &x));
	ka_range(clp.q, add, 0, NULL);
	CK(clSetKernelArgSVMPointer(add, 0, a));
	/* res = a * 3 + 1 through *pp, which names a; the info changes after. */
	CK(clSetKernelExecInfo(ind, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof(a), &a));
	CK(clSetKernelExecInfo(ind, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof(fine),
			       &fine));
	CK(clSetKernelArgSVMPointer(ind, 0, pp));
	CK(clSetKernelArgSVMPointer(ind, 1, res));
	ka_range(clp.q, ind, 0, NULL);
	named[0] = b;
	named[1] = a;
	CK(clSetKernelArgSVMPointer(ind, 1, res + KA_N));
	CK(clSetKernelExecInfo(ind, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof(named), named));
	ka_range(clp.q, ind, 0, NULL);
	CK(clSetKernelExecInfo(ind, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof(b), &b));
	CK(clSetKernelArgSVMPointer(ind, 1, c));
	CK(clSetUserEventStatus(u, CL_COMPLETE));
	CK(clFinish(clp.q));
	for (size_t i = 0; i < KA_N; i++) {
		cl_uint ai = (cl_uint)i * 2654435761u + 70;

		want[0][i] = ((cl_uint)(i + KA_N) * 2654435761u + 70) + 5;
		want[1][i] = ai + 9;
		want[2][i] = ai * 3u + 1u;
	}
	CK(clEnqueueSVMMap(clp.q, CL_TRUE, CL_MAP_READ, b, KA_N * sizeof(cl_uint), 0, NULL, NULL));
	CK(clEnqueueSVMMap(clp.q, CL_TRUE, CL_MAP_READ, c, KA_N * sizeof(cl_uint), 0, NULL, NULL));
	CK(clEnqueueSVMMap(clp.q, CL_TRUE, CL_MAP_READ, res, 2 * KA_N * sizeof(cl_uint), 0, NULL,
			   NULL));
	ok &= clp_same_u32("kargs_svm", "svm pointer", b, want[0], KA_N);
	ok &= clp_same_u32("kargs_svm", "svm pointer changed", c, want[1], KA_N);
	ok &= clp_same_u32("kargs_svm", "indirect", res, want[2], KA_N);
	ok &= clp_same_u32("kargs_svm", "indirect again", res + KA_N, want[2], KA_N);
	h = clp_hash(b, KA_N * sizeof(cl_uint)) ^ clp_hash(c, KA_N * sizeof(cl_uint)) ^
	    clp_hash(res, 2 * KA_N * sizeof(cl_uint));
	CK(clEnqueueSVMUnmap(clp.q, b, 0, NULL, NULL));
	CK(clEnqueueSVMUnmap(clp.q, c, 0, NULL, NULL));
	CK(clEnqueueSVMUnmap(clp.q, res, 0, NULL, NULL));
	CK(clFinish(clp.q));
	if (ok)
		printf("kargs_svm: ok %016llx\n", (unsigned long long)h);
	clSVMFree(clp.ctx, a);
	clSVMFree(clp.ctx, b);
	clSVMFree(clp.ctx, c);
	clSVMFree(clp.ctx, pp);
	clSVMFree(clp.ctx, res);
	clReleaseKernel(add);
	clReleaseKernel(ind);
	clReleaseProgram(prog);
}
