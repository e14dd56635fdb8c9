/*
 * The OpenCL functions xsched calls itself, resolved from the real ICD
 * loader at run time (never linked): one typed pointer each, checked
 * against the Khronos headers' prototypes.
 */
#ifndef XS_CL_FNS_H
#define XS_CL_FNS_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>
#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

#define XS_CL_FUNCTIONS(X)                                                         \
	X(clCreateCommandQueue)                                                    \
	X(clCreateCommandQueueWithProperties)                                      \
	X(clRetainCommandQueue)                                                    \
	X(clReleaseCommandQueue)                                                   \
	X(clGetCommandQueueInfo)                                                   \
	X(clFlush)                                                                 \
	X(clFinish)                                                                \
	X(clEnqueueNDRangeKernel)                                                  \
	X(clEnqueueTask)                                                           \
	X(clEnqueueNativeKernel)                                                   \
	X(clEnqueueReadBuffer)                                                     \
	X(clEnqueueWriteBuffer)                                                    \
	X(clEnqueueCopyBuffer)                                                     \
	X(clEnqueueReadBufferRect)                                                 \
	X(clEnqueueWriteBufferRect)                                                \
	X(clEnqueueCopyBufferRect)                                                 \
	X(clEnqueueFillBuffer)                                                     \
	X(clEnqueueReadImage)                                                      \
	X(clEnqueueWriteImage)                                                     \
	X(clEnqueueCopyImage)                                                      \
	X(clEnqueueFillImage)                                                      \
	X(clEnqueueCopyImageToBuffer)                                              \
	X(clEnqueueCopyBufferToImage)                                              \
	X(clEnqueueMapBuffer)                                                      \
	X(clEnqueueMapImage)                                                       \
	X(clEnqueueUnmapMemObject)                                                 \
	X(clEnqueueMigrateMemObjects)                                              \
	X(clEnqueueMarker)                                                         \
	X(clEnqueueMarkerWithWaitList)                                             \
	X(clEnqueueBarrier)                                                        \
	X(clEnqueueBarrierWithWaitList)                                            \
	X(clEnqueueWaitForEvents)                                                  \
	X(clEnqueueSVMFree)                                                        \
	X(clEnqueueSVMMemcpy)                                                      \
	X(clEnqueueSVMMemFill)                                                     \
	X(clEnqueueSVMMap)                                                         \
	X(clEnqueueSVMUnmap)                                                       \
	X(clEnqueueSVMMigrateMem)                                                  \
	X(clEnqueueAcquireGLObjects)                                               \
	X(clEnqueueReleaseGLObjects)                                               \
	X(clEnqueueAcquireEGLObjectsKHR)                                           \
	X(clEnqueueReleaseEGLObjectsKHR)                                           \
	X(clWaitForEvents)                                                         \
	X(clGetEventInfo)                                                          \
	X(clGetEventProfilingInfo)                                                 \
	X(clRetainEvent)                                                           \
	X(clReleaseEvent)                                                          \
	X(clSetEventCallback)                                                      \
	X(clCreateUserEvent)                                                       \
	X(clSetUserEventStatus)                                                    \
	X(clCreateKernel)                                                          \
	X(clCreateKernelsInProgram)                                                \
	X(clCloneKernel)                                                           \
	X(clRetainKernel)                                                          \
	X(clSetKernelArg)                                                          \
	X(clSetKernelArgSVMPointer)                                                \
	X(clSetKernelExecInfo)                                                     \
	X(clGetKernelWorkGroupInfo)                                                \
	X(clReleaseKernel)                                                         \
	X(clReleaseMemObject)                                                      \
	X(clReleaseSampler)                                                        \
	X(clGetKernelInfo)                                                         \
	X(clGetMemObjectInfo)                                                      \
	X(clGetDeviceInfo)                                                         \
	X(clGetExtensionFunctionAddress)                                           \
	X(clGetExtensionFunctionAddressForPlatform)

struct cl_fns {
#define XS_CL_FN_PTR(name) __typeof__(&name) name;
	XS_CL_FUNCTIONS(XS_CL_FN_PTR)
#undef XS_CL_FN_PTR
};

#endif
