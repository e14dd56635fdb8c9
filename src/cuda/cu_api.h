/*
 * Our own declarations of the part of the CUDA driver API that xsched
 * touches: the simulated driver implements these, the shim intercepts
 * them. Written from the driver API documentation so that the build never
 * needs the CUDA toolkit; when cuda.h is present at build time,
 * tests/test_cu_decl.c checks every type, constant and prototype here
 * against it.
 *
 * Functions are declared under the names the driver exports (cuMemAlloc_v2,
 * not the cuda.h macro cuMemAlloc), because those are the symbols that
 * applications bind to and cuGetProcAddress returns.
 */
#ifndef XS_CU_API_H
#define XS_CU_API_H

#include <stddef.h>
#include <stdint.h>

#define XS_CUDA_VERSION 13000 /* the API version these declarations follow */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUarray_st *CUarray;
typedef struct CUmemPoolHandle_st *CUmemoryPool;

typedef void (*CUhostFn)(void *userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);

typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;

/* CUresult values used by xsched. */
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_DEINITIALIZED = 4,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_SOURCE = 300,
	CUDA_ERROR_FILE_NOT_FOUND = 301,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_ILLEGAL_STATE = 401,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_NOT_PERMITTED = 800,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
	CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
	CUDA_ERROR_UNKNOWN = 999,
};

/* Stream handles with a meaning of their own. */
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_EVENT_DEFAULT = 0x0, CU_EVENT_BLOCKING_SYNC = 0x1, CU_EVENT_DISABLE_TIMING = 0x2 };
enum { CU_EVENT_RECORD_DEFAULT = 0x0 };
enum { CU_CTX_SCHED_AUTO = 0x0 };
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3,
       CU_MEMORYTYPE_UNIFIED = 4 };
enum { CU_POINTER_ATTRIBUTE_CONTEXT = 1, CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2 };
enum { CU_STREAM_WAIT_VALUE_GEQ = 0x0, CU_STREAM_WAIT_VALUE_EQ = 0x1 };
enum { CU_STREAM_CAPTURE_STATUS_NONE = 0, CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
       CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2 };
enum { CU_STREAM_CAPTURE_MODE_GLOBAL = 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
       CU_STREAM_CAPTURE_MODE_RELAXED = 2 };

/* cuGetProcAddress flags and outcome. */
enum {
	CU_GET_PROC_ADDRESS_DEFAULT = 0,
	CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
	CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1,
};
typedef enum CUdriverProcAddressQueryResult_enum {
	CU_GET_PROC_ADDRESS_SUCCESS = 0,
	CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;

typedef int CUdevice_attribute;
enum {
	CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

typedef int CUjit_option;
typedef int CUlibraryOption;
typedef int CUpointer_attribute;
typedef int CUfunction_attribute;
typedef int CUstreamCaptureMode;
typedef int CUstreamCaptureStatus;
typedef int CUmemorytype;

/* The extra[] array of cuLaunchKernel. */
#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

typedef int CUlaunchAttributeID;
typedef union CUlaunchAttributeValue_union {
	char pad[64];
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute_st {
	CUlaunchAttributeID id;
	char pad[8 - sizeof(CUlaunchAttributeID)];
	CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

typedef int CUmemLocationType;
typedef struct CUmemLocation_st {
	CUmemLocationType type;
	int id;
} CUmemLocation;

typedef struct CUDA_MEMCPY2D_st {
	size_t srcXInBytes, srcY;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	CUmemorytype dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

typedef struct CUDA_MEMCPY3D_st {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	void *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	CUmemorytype dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	void *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

/*
 * The functions, one X-macro line each: return type is always CUresult;
 * XS_CU_FN(name, (parameters)). Including files define XS_CU_FN to
 * declare, define or look them up.
 */
#define XS_CU_FUNCTIONS(X)                                                         \
	X(cuInit, (unsigned int Flags))                                            \
	X(cuDriverGetVersion, (int *driverVersion))                                \
	X(cuGetErrorString, (CUresult error, const char **pStr))                   \
	X(cuGetErrorName, (CUresult error, const char **pStr))                     \
	X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion,   \
				cuuint64_t flags,                                  \
				CUdriverProcAddressQueryResult *symbolStatus))     \
	X(cuGetExportTable, (const void **ppExportTable, const CUuuid *pExportTableId)) \
	X(cuDeviceGet, (CUdevice *device, int ordinal))                            \
	X(cuDeviceGetCount, (int *count))                                          \
	X(cuDeviceGetName, (char *name, int len, CUdevice dev))                    \
	X(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev))                      \
	X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev)) \
	X(cuDeviceComputeCapability, (int *major, int *minor, CUdevice dev))       \
	X(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))               \
	X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                            \
	X(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active)) \
	X(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev))     \
	X(cuCtxDestroy_v2, (CUcontext ctx))                                        \
	X(cuCtxSetCurrent, (CUcontext ctx))                                        \
	X(cuCtxGetCurrent, (CUcontext *pctx))                                      \
	X(cuCtxPushCurrent_v2, (CUcontext ctx))                                    \
	X(cuCtxPopCurrent_v2, (CUcontext *pctx))                                   \
	X(cuCtxGetDevice, (CUdevice *device))                                      \
	X(cuCtxSynchronize, (void))                                                \
	X(cuCtxGetStreamPriorityRange, (int *leastPriority, int *greatestPriority)) \
	X(cuModuleLoadData, (CUmodule *module, const void *image))                 \
	X(cuModuleLoad, (CUmodule *module, const char *fname))                     \
	X(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name)) \
	X(cuModuleUnload, (CUmodule hmod))                                         \
	X(cuLibraryLoadData, (CUlibrary *library, const void *code,                \
			      CUjit_option *jitOptions, void **jitOptionsValues,   \
			      unsigned int numJitOptions, CUlibraryOption *libraryOptions, \
			      void **libraryOptionValues, unsigned int numLibraryOptions)) \
	X(cuLibraryGetKernel, (CUkernel *pKernel, CUlibrary library, const char *name)) \
	X(cuLibraryUnload, (CUlibrary library))                                    \
	X(cuKernelGetFunction, (CUfunction *pFunc, CUkernel kernel))               \
	X(cuFuncGetParamInfo, (CUfunction func, size_t paramIndex, size_t *paramOffset, \
			       size_t *paramSize))                                 \
	X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))                     \
	X(cuMemFree_v2, (CUdeviceptr dptr))                                        \
	X(cuMemAllocHost_v2, (void **pp, size_t bytesize))                         \
	X(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags))        \
	X(cuMemFreeHost, (void *p))                                                \
	X(cuMemGetInfo_v2, (size_t *free, size_t *total))                          \
	X(cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr)) \
	X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount))          \
	X(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)) \
	X(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)) \
	X(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)) \
	X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)) \
	X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost,        \
				 size_t ByteCount, CUstream hStream))              \
	X(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice,              \
				 size_t ByteCount, CUstream hStream))              \
	X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice,      \
				 size_t ByteCount, CUstream hStream))              \
	X(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *pCopy))                             \
	X(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *pCopy, CUstream hStream))      \
	X(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *pCopy))                             \
	X(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *pCopy, CUstream hStream))      \
	X(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N))      \
	X(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N))      \
	X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)) \
	X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)) \
	X(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream)) \
	X(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream))                    \
	X(cuMemPrefetchAsync_v2, (CUdeviceptr devPtr, size_t count, CUmemLocation location, \
				  unsigned int flags, CUstream hStream))           \
	X(cuStreamCreate, (CUstream *phStream, unsigned int Flags))                \
	X(cuStreamCreateWithPriority, (CUstream *phStream, unsigned int flags, int priority)) \
	X(cuStreamDestroy_v2, (CUstream hStream))                                  \
	X(cuStreamGetPriority, (CUstream hStream, int *priority))                  \
	X(cuStreamGetFlags, (CUstream hStream, unsigned int *flags))               \
	X(cuStreamGetCtx, (CUstream hStream, CUcontext *pctx))                     \
	X(cuStreamSynchronize, (CUstream hStream))                                 \
	X(cuStreamQuery, (CUstream hStream))                                       \
	X(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags)) \
	X(cuStreamAddCallback, (CUstream hStream, CUstreamCallback callback,       \
				void *userData, unsigned int flags))               \
	X(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData))       \
	X(cuStreamWriteValue32_v2, (CUstream stream, CUdeviceptr addr, cuuint32_t value, \
				    unsigned int flags))                           \
	X(cuStreamWaitValue32_v2, (CUstream stream, CUdeviceptr addr, cuuint32_t value, \
				   unsigned int flags))                            \
	X(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode))   \
	X(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph))                \
	X(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus)) \
	X(cuEventCreate, (CUevent *phEvent, unsigned int Flags))                   \
	X(cuEventDestroy_v2, (CUevent hEvent))                                     \
	X(cuEventRecord, (CUevent hEvent, CUstream hStream))                       \
	X(cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags)) \
	X(cuEventQuery, (CUevent hEvent))                                          \
	X(cuEventSynchronize, (CUevent hEvent))                                    \
	X(cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd)) \
	X(cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, \
			   unsigned int gridDimZ, unsigned int blockDimX,          \
			   unsigned int blockDimY, unsigned int blockDimZ,         \
			   unsigned int sharedMemBytes, CUstream hStream,          \
			   void **kernelParams, void **extra))                     \
	X(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f,           \
			     void **kernelParams, void **extra))                   \
	X(cuLaunchCooperativeKernel, (CUfunction f, unsigned int gridDimX,         \
				      unsigned int gridDimY, unsigned int gridDimZ, \
				      unsigned int blockDimX, unsigned int blockDimY, \
				      unsigned int blockDimZ, unsigned int sharedMemBytes, \
				      CUstream hStream, void **kernelParams))      \
	X(cuGraphCreate, (CUgraph *phGraph, unsigned int flags))                   \
	X(cuGraphDestroy, (CUgraph hGraph))                                        \
	X(cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph,  \
					unsigned long long flags))                 \
	X(cuGraphExecDestroy, (CUgraphExec hGraphExec))                            \
	X(cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream))               \
	X(cuGraphUpload, (CUgraphExec hGraphExec, CUstream hStream))

#define XS_CU_DECLARE(name, params) CUresult name params;
XS_CU_FUNCTIONS(XS_CU_DECLARE)
#undef XS_CU_DECLARE

/* Typed pointers to one driver's implementation of the functions above. */
struct cu_fns {
#define XS_CU_FN_PTR(name, params) __typeof__(&name) name;
	XS_CU_FUNCTIONS(XS_CU_FN_PTR)
#undef XS_CU_FN_PTR
};

#endif
