/*
 * cl_prog phases on buffers: kernels with and without local memory, every
 * kind of transfer (blocking or not, rectangular, fills, maps) and long
 * runs of small kernels. A shim that buffers commands must keep their
 * order with respect to each other and to the blocking calls, and must
 * copy what the application may reuse as soon as a call returns (fill
 * patterns, argument values, the source of a blocking write).
 */
#include "cl_prog.h"

#include <string.h>

/* c = a + b, then again over a window given by a global offset. */
void ph_vecadd(void)
{
	static cl_uint a[N], b[N], c[N], want[N];
	cl_kernel k = clp_kernel("vadd");
	cl_mem ma = clp_buffer(sizeof(a)), mb = clp_buffer(sizeof(b)), mc = clp_buffer(sizeof(c));
	cl_uint poison = 0xdeadbeef;
	size_t off = 1024, n = 1024, local = LOCAL;
	int ok;

	clp_iota(a, N, 1);
	clp_iota(b, N, 77);
	for (size_t i = 0; i < N; i++)
		want[i] = a[i] + b[i];
	CK(clEnqueueWriteBuffer(clp.q, ma, CL_FALSE, 0, sizeof(a), a, 0, NULL, NULL));
	CK(clEnqueueWriteBuffer(clp.q, mb, CL_FALSE, 0, sizeof(b), b, 0, NULL, NULL));
	CK(clSetKernelArg(k, 0, sizeof(ma), &ma));
	CK(clSetKernelArg(k, 1, sizeof(mb), &mb));
	CK(clSetKernelArg(k, 2, sizeof(mc), &mc));
	clp_range(clp.q, k, N, 0, NULL, NULL);
	clp_read(clp.q, mc, c, N);
	ok = clp_same_u32("vecadd", "full", c, want, N);
	/* Only [off, off + n) is written the second time. */
	CK(clEnqueueFillBuffer(clp.q, mc, &poison, sizeof(poison), 0, sizeof(c), 0, NULL, NULL));
	CK(clEnqueueNDRangeKernel(clp.q, k, 1, &off, &n, &local, 0, NULL, NULL));
	clp_read(clp.q, mc, c, N);
	for (size_t i = 0; i < N; i++)
		want[i] = i >= off && i < off + n ? a[i] + b[i] : poison;
	ok &= clp_same_u32("vecadd", "offset", c, want, N);
	if (ok)
		printf("vecadd: ok %016llx\n", (unsigned long long)clp_hash(c, sizeof(c)));
	clReleaseMemObject(ma);
	clReleaseMemObject(mb);
	clReleaseMemObject(mc);
	clReleaseKernel(k);
}

/* Per-group sums through __local memory, two group sizes in flight. */
void ph_reduction(void)
{
	static cl_uint in[N], out64[N / 64], out32[N / 32], want64[N / 64], want32[N / 32];
	cl_kernel k = clp_kernel("reduce");
	cl_mem mi = clp_buffer(sizeof(in)), m64 = clp_buffer(sizeof(out64)),
	       m32 = clp_buffer(sizeof(out32));
	size_t n = N, l64 = 64, l32 = 32;
	unsigned long long total = 0;
	cl_event r[2];
	int ok;

	clp_iota(in, N, 5);
	for (size_t i = 0; i < N; i++) {
		in[i] >>= 8;
		want64[i / 64] = (i % 64 ? want64[i / 64] : 0) + in[i];
		want32[i / 32] = (i % 32 ? want32[i / 32] : 0) + in[i];
		total += in[i];
	}
	CK(clEnqueueWriteBuffer(clp.q, mi, CL_FALSE, 0, sizeof(in), in, 0, NULL, NULL));
	CK(clSetKernelArg(k, 0, sizeof(mi), &mi));
	CK(clSetKernelArg(k, 1, sizeof(m64), &m64));
	CK(clSetKernelArg(k, 2, 64 * sizeof(cl_uint), NULL));
	CK(clEnqueueNDRangeKernel(clp.q, k, 1, NULL, &n, &l64, 0, NULL, NULL));
	CK(clSetKernelArg(k, 1, sizeof(m32), &m32));
	CK(clSetKernelArg(k, 2, 32 * sizeof(cl_uint), NULL));
	CK(clEnqueueNDRangeKernel(clp.q, k, 1, NULL, &n, &l32, 0, NULL, NULL));
	CK(clEnqueueReadBuffer(clp.q, m64, CL_FALSE, 0, sizeof(out64), out64, 0, NULL, &r[0]));
	CK(clEnqueueReadBuffer(clp.q, m32, CL_FALSE, 0, sizeof(out32), out32, 0, NULL, &r[1]));
	CK(clWaitForEvents(2, r));
	ok = clp_same_u32("reduction", "groups of 64", out64, want64, N / 64);
	ok &= clp_same_u32("reduction", "groups of 32", out32, want32, N / 32);
	if (ok)
		printf("reduction: ok %llu\n", total);
	clReleaseEvent(r[0]);
	clReleaseEvent(r[1]);
	clReleaseMemObject(mi);
	clReleaseMemObject(m64);
	clReleaseMemObject(m32);
	clReleaseKernel(k);
}

/*
 * Blocking and non-blocking reads, writes and copies around kernels: a
 * blocking write's source may be reused at once, a blocking read sees
 * every kernel enqueued before it, a non-blocking read is complete when
 * its event is; a sub-buffer released right after its kernel's enqueue
 * stays valid for that kernel.
 */
void ph_transfers(void)
{
	static cl_uint h[N], got[N], want[N], part[N / 4];
	cl_kernel k = clp_kernel("axpb");
	cl_mem x = clp_buffer(sizeof(h)), y = clp_buffer(sizeof(h));
	cl_event ev[2];
	int ok;

	/* A blocking write copies: the source changes right after. */
	clp_iota(h, N, 9);
	memcpy(want, h, sizeof(h));
	clp_write(clp.q, x, h, N);
	memset(h, 0xab, sizeof(h));
	clp_axpb(clp.q, k, x, 3, 1, 0, NULL, NULL);
	clp_axpb_ref(want, N, 3, 1);
	clp_axpb(clp.q, k, x, 5, 7, 0, NULL, NULL);
	clp_axpb_ref(want, N, 5, 7);
	/* The blocking read waits for both kernels. */
	clp_read(clp.q, x, got, N);
	ok = clp_same_u32("transfers", "blocking", got, want, N);

	/* Non-blocking write, kernel, copy, non-blocking read. */
	clp_iota(h, N, 11);
	memcpy(want, h, sizeof(h));
	CK(clEnqueueWriteBuffer(clp.q, x, CL_FALSE, 0, sizeof(h), h, 0, NULL, &ev[0]));
	clp_axpb(clp.q, k, x, 7, 2, 0, NULL, NULL);
	clp_axpb_ref(want, N, 7, 2);
	CK(clEnqueueCopyBuffer(clp.q, x, y, 0, 0, sizeof(h), 0, NULL, NULL));
	clp_axpb(clp.q, k, x, 0, 0, 0, NULL, NULL);
	CK(clEnqueueReadBuffer(clp.q, y, CL_FALSE, 0, sizeof(got), got, 1, &ev[0], &ev[1]));
	CK(clWaitForEvents(1, &ev[1]));
	ok &= clp_same_u32("transfers", "non-blocking", got, want, N);
	/* A part, with an offset, after a kernel on the other buffer. */
	clp_axpb(clp.q, k, y, 3, 3, 0, NULL, NULL);
	clp_axpb_ref(want, N, 3, 3);
	CK(clEnqueueReadBuffer(clp.q, y, CL_TRUE, N / 2 * sizeof(cl_uint), sizeof(part), part, 0,
			       NULL, NULL));
	ok &= clp_same_u32("transfers", "offset", part, want + N / 2, N / 4);
	/* A kernel on a sub-buffer (the second quarter of y), released at once. */
	{
		cl_buffer_region r = { N / 4 * sizeof(cl_uint), N / 4 * sizeof(cl_uint) };
		cl_uint a = 5, b = 9;
		cl_int err;
		cl_mem sub = clCreateSubBuffer(y, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
					       &r, &err);

		CK(err);
		CK(clSetKernelArg(k, 0, sizeof(sub), &sub));
		CK(clSetKernelArg(k, 1, sizeof(a), &a));
		CK(clSetKernelArg(k, 2, sizeof(b), &b));
		clp_range(clp.q, k, N / 4, 0, NULL, NULL);
		CK(clReleaseMemObject(sub));
		clp_axpb_ref(want + N / 4, N / 4, a, b);
		clp_read(clp.q, y, got, N);
		ok &= clp_same_u32("transfers", "sub-buffer", got, want, N);
	}
	/* Flush, then finish, then a read of the zeroed buffer. */
	CK(clFlush(clp.q));
	CK(clFinish(clp.q));
	clp_read(clp.q, x, got, N);
	memset(want, 0, sizeof(want));
	ok &= clp_same_u32("transfers", "zeroed", got, want, N);
	if (ok)
		printf("transfers: ok %016llx\n", (unsigned long long)clp_hash(part, sizeof(part)));
	clReleaseEvent(ev[0]);
	clReleaseEvent(ev[1]);
	clReleaseMemObject(x);
	clReleaseMemObject(y);
	clReleaseKernel(k);
}

/* Copies a rectangle of bytes between two pitched layouts, as the spec defines them. */
static void rect_copy(unsigned char *dst, const size_t *dorg, size_t drow, size_t dslice,
		      const unsigned char *src, const size_t *sorg, size_t srow, size_t sslice,
		      const size_t *region)
{
	for (size_t z = 0; z < region[2]; z++)
		for (size_t y = 0; y < region[1]; y++)
			memcpy(dst + (dorg[2] + z) * dslice + (dorg[1] + y) * drow + dorg[0],
			       src + (sorg[2] + z) * sslice + (sorg[1] + y) * srow + sorg[0],
			       region[0]);
}

/* Write, copy and read rectangles (2D and 3D) with offsets and pitches. */
void ph_rect(void)
{
	enum { BROW = 48, BSLICE = 48 * 40, BSIZE = 48 * 40 * 3, HROW = 64, HSLICE = 64 * 24 };
	static unsigned char host[HSLICE * 3], buf_a[BSIZE], buf_b[BSIZE], got[BSIZE],
		want[BSIZE];
	cl_mem a = clp_buffer(BSIZE), b = clp_buffer(BSIZE);
	unsigned char ka = 0x11, kb = 0x22;
	const size_t horg[3] = { 4, 2, 0 }, aorg[3] = { 8, 3, 1 }, region[3] = { 20, 10, 2 },
		     borg[3] = { 1, 20, 0 }, rorg[3] = { 0, 0, 0 }, region2d[3] = { 33, 17, 1 },
		     horg2[3] = { 5, 1, 1 };
	cl_event ev;
	int ok;

	for (size_t i = 0; i < sizeof(host); i++)
		host[i] = (unsigned char)(i * 31 + 7);
	memset(buf_a, ka, sizeof(buf_a));
	memset(buf_b, kb, sizeof(buf_b));
	memset(got, 0, sizeof(got));
	memset(want, 0, sizeof(want));
	CK(clEnqueueFillBuffer(clp.q, a, &ka, 1, 0, BSIZE, 0, NULL, NULL));
	CK(clEnqueueFillBuffer(clp.q, b, &kb, 1, 0, BSIZE, 0, NULL, NULL));
	/* host -> a (3D), a -> b (3D), b -> host (2D, from slice 0). */
	CK(clEnqueueWriteBufferRect(clp.q, a, CL_FALSE, aorg, horg, region, BROW, BSLICE, HROW,
				    HSLICE, host, 0, NULL, NULL));
	rect_copy(buf_a, aorg, BROW, BSLICE, host, horg, HROW, HSLICE, region);
	CK(clEnqueueCopyBufferRect(clp.q, a, b, aorg, borg, region, BROW, BSLICE, BROW, BSLICE, 0,
				   NULL, NULL));
	rect_copy(buf_b, borg, BROW, BSLICE, buf_a, aorg, BROW, BSLICE, region);
	CK(clEnqueueReadBufferRect(clp.q, b, CL_FALSE, rorg, horg2, region2d, BROW, BSLICE, HROW,
				   HSLICE, got, 0, NULL, &ev));
	rect_copy(want, horg2, HROW, HSLICE, buf_b, rorg, BROW, BSLICE, region2d);
	CK(clWaitForEvents(1, &ev));
	ok = clp_same("rect", "2D read", got, want, HSLICE * 3);
	/* The whole of b, plainly. */
	CK(clEnqueueReadBuffer(clp.q, b, CL_TRUE, 0, BSIZE, got, 0, NULL, NULL));
	ok &= clp_same("rect", "3D copy", got, buf_b, BSIZE);
	if (ok)
		printf("rect: ok %016llx\n", (unsigned long long)clp_hash(buf_b, BSIZE));
	clReleaseEvent(ev);
	clReleaseMemObject(a);
	clReleaseMemObject(b);
}

/*
 * Fills with patterns of 1 to 16 bytes at aligned offsets; each pattern is
 * a local that changes right after the call (the spec lets the application
 * reuse it at once).
 */
void ph_fill(void)
{
	static const size_t psize[] = { 1, 2, 4, 8, 16 };
	static unsigned char got[N], want[N];
	cl_mem m = clp_buffer(N);
	unsigned char pat[16];
	size_t i, j, off = 0;
	int ok;

	memset(want, 0x5c, N);
	pat[0] = 0x5c;
	CK(clEnqueueFillBuffer(clp.q, m, pat, 1, 0, N, 0, NULL, NULL));
	pat[0] = 0;
	for (i = 0; i < sizeof(psize) / sizeof(psize[0]); i++) {
		size_t len = psize[i] * (17 + i);

		for (j = 0; j < psize[i]; j++)
			pat[j] = (unsigned char)(0x40 + 16 * i + j);
		off = (off + 300 + psize[i] - 1) / psize[i] * psize[i];
		CK(clEnqueueFillBuffer(clp.q, m, pat, psize[i], off, len, 0, NULL, NULL));
		for (j = 0; j < len; j++)
			want[off + j] = pat[j % psize[i]];
		memset(pat, 0xee, sizeof(pat));
		off += len;
	}
	CK(clEnqueueReadBuffer(clp.q, m, CL_TRUE, 0, N, got, 0, NULL, NULL));
	ok = clp_same("fill", "buffer", got, want, N);
	if (ok)
		printf("fill: ok %016llx\n", (unsigned long long)clp_hash(got, N));
	clReleaseMemObject(m);
}

/*
 * Maps: blocking read maps after kernels, non-blocking write maps (the
 * pointer is valid once the event completes), write-invalidate maps of a
 * part, and unmaps ordered before the kernels that follow.
 */
void ph_map(void)
{
	static cl_uint want[N];
	cl_kernel k = clp_kernel("axpb");
	cl_mem m = clp_buffer(N * sizeof(cl_uint));
	cl_event ev[3];
	cl_uint *p;
	cl_int err;
	int ok;

	clp_iota(want, N, 3);
	clp_write(clp.q, m, want, N);
	clp_axpb(clp.q, k, m, 3, 4, 0, NULL, NULL);
	clp_axpb_ref(want, N, 3, 4);
	/* Blocking read map after a buffered kernel. */
	p = clEnqueueMapBuffer(clp.q, m, CL_TRUE, CL_MAP_READ, 0, N * sizeof(cl_uint), 0, NULL,
			       NULL, &err);
	CK(err);
	ok = clp_same_u32("map", "blocking read", p, want, N);
	CK(clEnqueueUnmapMemObject(clp.q, m, p, 0, NULL, NULL));
	/* Non-blocking write map after a kernel: valid after its event. */
	clp_axpb(clp.q, k, m, 5, 6, 0, NULL, NULL);
	clp_axpb_ref(want, N, 5, 6);
	p = clEnqueueMapBuffer(clp.q, m, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0,
			       N * sizeof(cl_uint), 0, NULL, &ev[0], &err);
	CK(err);
	CK(clWaitForEvents(1, &ev[0]));
	ok &= clp_same_u32("map", "non-blocking read/write", p, want, N);
	for (size_t i = 0; i < N; i += 3)
		p[i] = want[i] = (cl_uint)i;
	CK(clEnqueueUnmapMemObject(clp.q, m, p, 0, NULL, &ev[1]));
	clp_axpb(clp.q, k, m, 7, 1, 1, &ev[1], NULL);
	clp_axpb_ref(want, N, 7, 1);
	/* Write-invalidate of the second half, non-blocking. */
	p = clEnqueueMapBuffer(clp.q, m, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION,
			       N / 2 * sizeof(cl_uint), N / 2 * sizeof(cl_uint), 0, NULL, &ev[2],
			       &err);
	CK(err);
	CK(clWaitForEvents(1, &ev[2]));
	for (size_t i = 0; i < N / 2; i++)
		p[i] = want[N / 2 + i] = (cl_uint)(i ^ 0x1234);
	CK(clEnqueueUnmapMemObject(clp.q, m, p, 0, NULL, NULL));
	clp_axpb(clp.q, k, m, 9, 9, 0, NULL, NULL);
	clp_axpb_ref(want, N, 9, 9);
	p = clEnqueueMapBuffer(clp.q, m, CL_TRUE, CL_MAP_READ, 0, N * sizeof(cl_uint), 0, NULL,
			       NULL, &err);
	CK(err);
	ok &= clp_same_u32("map", "after unmaps", p, want, N);
	CK(clEnqueueUnmapMemObject(clp.q, m, p, 0, NULL, NULL));
	CK(clFinish(clp.q));
	if (ok)
		printf("map: ok %016llx\n", (unsigned long long)clp_hash(want, sizeof(want)));
	for (int i = 0; i < 3; i++)
		clReleaseEvent(ev[i]);
	clReleaseMemObject(m);
	clReleaseKernel(k);
}

/*
 * 500 order-sensitive kernels (x = x * 3 + i, i the enqueue number) and
 * 500 increments, all non-blocking, then one read each.
 */
void ph_many(void)
{
	static cl_uint got[N], want[N], ones[N];
	cl_kernel k = clp_kernel("axpb"), ki = clp_kernel("inc");
	cl_mem m = clp_buffer(sizeof(got)), c = clp_buffer(sizeof(got));
	cl_uint zero = 0;
	int ok;

	clp_iota(want, N, 1);
	clp_write(clp.q, m, want, N);
	CK(clEnqueueFillBuffer(clp.q, c, &zero, sizeof(zero), 0, sizeof(got), 0, NULL, NULL));
	CK(clSetKernelArg(ki, 0, sizeof(c), &c));
	for (cl_uint i = 0; i < 500; i++) {
		clp_axpb(clp.q, k, m, 3, i, 0, NULL, NULL);
		clp_axpb_ref(want, N, 3, i);
		clp_range(clp.q, ki, N, 0, NULL, NULL);
	}
	clp_read(clp.q, m, got, N);
	ok = clp_same_u32("many", "axpb", got, want, N);
	for (size_t i = 0; i < N; i++)
		ones[i] = 500;
	clp_read(clp.q, c, got, N);
	ok &= clp_same_u32("many", "inc", got, ones, N);
	if (ok)
		printf("many: ok %016llx\n", (unsigned long long)clp_hash(want, sizeof(want)));
	clReleaseMemObject(m);
	clReleaseMemObject(c);
	clReleaseKernel(k);
	clReleaseKernel(ki);
}
