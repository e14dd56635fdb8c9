/*
 * A CUDA runtime program built by nvcc (cudart static, as nvcc links by
 * default): cudart finds the driver itself (dlopen("libcuda.so.1"), then
 * cuGetProcAddress for every entry point) and launches with <<<>>>. The
 * tests run it natively and under the shim and compare the outputs: with
 * no driver at all both must report the driver's absence the same way.
 * On a GPU machine (tests/gpu/run.sh) it computes for real.
 */
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_one(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += 1;
}

int main()
{
	int count = -1, *d = nullptr, h[256] = { 0 };
	cudaError_t e = cudaGetDeviceCount(&count);

	printf("count %d err %d\n", e == cudaSuccess ? count : -1, (int)e);
	e = cudaMalloc(&d, sizeof(h));
	printf("malloc err %d\n", (int)e);
	if (e != cudaSuccess)
		return 0;
	cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
	add_one<<<1, 256>>>(d, 256);
	add_one<<<2, 128>>>(d, 256);
	printf("launch err %d\n", (int)cudaGetLastError());
	e = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	printf("result err %d h0 %d h255 %d\n", (int)e, h[0], h[255]);
	cudaFree(d);
	return 0;
}
