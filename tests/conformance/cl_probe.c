/*
 * cl_probe: whether an OpenCL device can be used here, for
 * tests/conformance/opencl_cts.sh, which skips (77) without one rather than
 * report every conformance subtest as failed. Prints the first platform's
 * name and version and its first device's name and version. Linked with the
 * ICD loader (-lOpenCL) and run natively, never under the shim.
 *
 * Exit status: 0 a device was found, 77 no platform or no device.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

int main(void)
{
	cl_platform_id platform;
	cl_device_id device;
	cl_uint n = 0;
	char pname[256] = "", pver[256] = "", dname[256] = "", dver[256] = "";

	if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0) {
		printf("no OpenCL platform\n");
		return 77;
	}
	clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(pname) - 1, pname, NULL);
	clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof(pver) - 1, pver, NULL);
	if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, &n) != CL_SUCCESS ||
	    n == 0) {
		printf("platform %s (%s): no device\n", pname, pver);
		return 77;
	}
	clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(dname) - 1, dname, NULL);
	clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof(dver) - 1, dver, NULL);
	printf("platform %s (%s), device %s (%s)\n", pname, pver, dname, dver);
	return 0;
}
