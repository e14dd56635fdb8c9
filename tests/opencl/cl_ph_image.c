/*
 * cl_prog's image phase: 2D RGBA8 (unsigned integer) images written, read
 * in part, filled (the fill color may be reused as soon as the call
 * returns), copied to images and buffers and back, read by a kernel
 * through a sampler given as an argument (image and value arguments
 * changing right after each enqueue), and mapped.
 */
#include "cl_prog.h"

#include <string.h>

enum { W = CLP_IMG_W, H = CLP_IMG_H, PX = 4 };

cl_mem clp_image(void)
{
	cl_image_format fmt = { CL_RGBA, CL_UNSIGNED_INT8 };
	cl_image_desc desc = { .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W,
			       .image_height = H };
	cl_int err;
	cl_mem m = clCreateImage(clp.ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);

	CK(err);
	return m;
}

/* Copies a @w x @h pixel region between two row-major images of width W. */
static void px_copy(unsigned char *dst, size_t dx, size_t dy, const unsigned char *src,
		    size_t sx, size_t sy, size_t w, size_t h)
{
	for (size_t y = 0; y < h; y++)
		memcpy(dst + ((dy + y) * W + dx) * PX, src + ((sy + y) * W + sx) * PX, w * PX);
}

void clp_shift_ref(unsigned char *dst, const unsigned char *src, int dx)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int sx = x + dx < 0 ? 0 : x + dx >= W ? W - 1 : x + dx;

			for (int j = 0; j < PX; j++)
				dst[(y * W + x) * PX + j] =
					(unsigned char)(src[(y * W + sx) * PX + j] + 1 + j);
		}
}

void ph_image(void)
{
	static unsigned char host[W * H * PX], a_sub[20 * 10 * PX], want_sub[20 * 10 * PX],
		b[W * H * PX], want_b[W * H * PX], c[W * H * PX], want_c[W * H * PX],
		d[W * H * PX], want_d[W * H * PX];
	const cl_sampler_properties sp[] = {
		CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
		CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_CLAMP_TO_EDGE,
		CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0,
	};
	cl_mem ia = clp_image(), ib = clp_image(), ic = clp_image(), id = clp_image(),
	       buf = clp_buffer(sizeof(host));
	cl_kernel k = clp_kernel("img_shift");
	cl_uint color[4] = { 9, 8, 7, 6 };
	size_t origin[3] = { 0, 0, 0 }, region[3] = { W, H, 1 }, gsz[2] = { W, H },
	       lsz[2] = { 8, 4 }, pitch = 0;
	cl_int err, dx = 3;
	cl_sampler s;
	cl_event ev;
	unsigned char *p;
	int ok;

	s = clCreateSamplerWithProperties(clp.ctx, sp, &err);
	CK(err);
	for (size_t i = 0; i < sizeof(host); i++)
		host[i] = (unsigned char)((i * 37 + i / 251) % 250);
	CK(clEnqueueWriteImage(clp.q, ia, CL_FALSE, origin, region, 0, 0, host, 0, NULL, &ev));

	/* A part of A, blocking. */
	{
		size_t o[3] = { 5, 3, 0 }, r[3] = { 20, 10, 1 };

		CK(clEnqueueReadImage(clp.q, ia, CL_TRUE, o, r, 0, 0, a_sub, 0, NULL, NULL));
		for (size_t y = 0; y < 10; y++)
			memcpy(want_sub + y * 20 * PX, host + ((3 + y) * W + 5) * PX, 20 * PX);
		ok = clp_same("image", "read part", a_sub, want_sub, sizeof(a_sub));
	}

	/* B: filled, then a part of A copied in. */
	CK(clEnqueueFillImage(clp.q, ib, color, origin, region, 0, NULL, NULL));
	for (size_t i = 0; i < W * H; i++)
		for (size_t j = 0; j < PX; j++)
			want_b[i * PX + j] = (unsigned char)color[j];
	color[0] = color[1] = color[2] = color[3] = 0xff;
	{
		size_t so[3] = { 0, 0, 0 }, dor[3] = { 8, 4, 0 }, r[3] = { 32, 16, 1 };

		CK(clEnqueueCopyImage(clp.q, ia, ib, so, dor, r, 0, NULL, NULL));
		px_copy(want_b, 8, 4, host, 0, 0, 32, 16);
	}
	CK(clEnqueueReadImage(clp.q, ib, CL_TRUE, origin, region, 0, 0, b, 0, NULL, NULL));
	ok &= clp_same("image", "fill and copy", b, want_b, sizeof(b));

	/* C = A shifted left by dx (clamped at the edge) + (1, 2, 3, 4). */
	CK(clSetKernelArg(k, 0, sizeof(ia), &ia));
	CK(clSetKernelArg(k, 1, sizeof(s), &s));
	CK(clSetKernelArg(k, 2, sizeof(ic), &ic));
	CK(clSetKernelArg(k, 3, sizeof(dx), &dx));
	CK(clEnqueueNDRangeKernel(clp.q, k, 2, NULL, gsz, lsz, 0, NULL, NULL));
	clp_shift_ref(want_c, host, dx);
	CK(clEnqueueReadImage(clp.q, ic, CL_TRUE, origin, region, 0, 0, c, 0, NULL, NULL));
	ok &= clp_same("image", "sampler kernel", c, want_c, sizeof(c));

	/* Image and value arguments change after enqueues held by a gate. */
	{
		cl_mem ie = clp_image(), ig = clp_image();
		cl_event u = clCreateUserEvent(clp.ctx, &err);
		cl_int dx2 = -2;

		CK(err);
		CK(clSetKernelArg(k, 2, sizeof(ie), &ie));
		CK(clSetKernelArg(k, 3, sizeof(dx2), &dx2));
		CK(clEnqueueNDRangeKernel(clp.q, k, 2, NULL, gsz, lsz, 1, &u, NULL));
		dx2 = 7;
		CK(clSetKernelArg(k, 2, sizeof(ig), &ig));
		CK(clSetKernelArg(k, 3, sizeof(dx2), &dx2));
		CK(clEnqueueNDRangeKernel(clp.q, k, 2, NULL, gsz, lsz, 0, NULL, NULL));
		CK(clSetKernelArg(k, 0, sizeof(ib), &ib));
		CK(clSetKernelArg(k, 2, sizeof(ic), &ic));
		CK(clSetUserEventStatus(u, CL_COMPLETE));
		CK(clEnqueueReadImage(clp.q, ie, CL_TRUE, origin, region, 0, 0, d, 0, NULL, NULL));
		clp_shift_ref(want_d, host, -2);
		ok &= clp_same("image", "captured arguments, first", d, want_d, sizeof(d));
		CK(clEnqueueReadImage(clp.q, ig, CL_TRUE, origin, region, 0, 0, d, 0, NULL, NULL));
		clp_shift_ref(want_d, host, 7);
		ok &= clp_same("image", "captured arguments, second", d, want_d, sizeof(d));
		clReleaseEvent(u);
		clReleaseMemObject(ie);
		clReleaseMemObject(ig);
	}

	/* C -> buffer -> D (one row down), then D mapped. */
	memset(c, 0, sizeof(c));
	CK(clEnqueueCopyImageToBuffer(clp.q, ic, buf, origin, region, 0, 0, NULL, NULL));
	CK(clEnqueueReadBuffer(clp.q, buf, CL_TRUE, 0, sizeof(c), c, 0, NULL, NULL));
	ok &= clp_same("image", "image to buffer", c, want_c, sizeof(c));
	CK(clEnqueueFillImage(clp.q, id, (cl_uint[4]){ 1, 1, 1, 1 }, origin, region, 0, NULL,
			      NULL));
	memset(want_d, 1, sizeof(want_d));
	{
		size_t r[3] = { W, H - 1, 1 };

		CK(clEnqueueCopyBufferToImage(clp.q, buf, id, W * PX, origin, r, 0, NULL, NULL));
		px_copy(want_d, 0, 0, want_c, 0, 1, W, H - 1);
	}
	p = clEnqueueMapImage(clp.q, id, CL_TRUE, CL_MAP_READ, origin, region, &pitch, NULL, 0,
			      NULL, NULL, &err);
	CK(err);
	for (size_t y = 0; y < H; y++)
		memcpy(d + y * W * PX, p + y * pitch, W * PX);
	CK(clEnqueueUnmapMemObject(clp.q, id, p, 0, NULL, NULL));
	CK(clFinish(clp.q));
	ok &= clp_same("image", "buffer to image, mapped", d, want_d, sizeof(d));
	ok &= clp_check("image", clp_status(ev) == CL_COMPLETE, "write event status %d",
			clp_status(ev));
	if (ok)
		printf("image: ok %016llx %016llx\n", (unsigned long long)clp_hash(b, sizeof(b)),
		       (unsigned long long)clp_hash(d, sizeof(d)));
	clReleaseEvent(ev);
	clReleaseSampler(s);
	clReleaseKernel(k);
	clReleaseMemObject(ia);
	clReleaseMemObject(ib);
	clReleaseMemObject(ic);
	clReleaseMemObject(id);
	clReleaseMemObject(buf);
}
