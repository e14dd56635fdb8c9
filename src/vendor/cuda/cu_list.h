/*
 * The lists of driver API functions that xsched declares, as X-macros and
 * nothing else: no types, no declarations. Kept apart from cu_api.h so
 * that a translation unit can include the real cuda.h and then this file,
 * and check each prototype here against NVIDIA's (tests/cu_decl_cuda.c);
 * everything else gets these lists through cu_api.h, which includes this
 * file after the types the parameter lists name.
 */
#ifndef XS_CU_LIST_H
#define XS_CU_LIST_H

/*
 * The functions, one X-macro line each: return type is always CUresult;
 * X(name, (parameters)). Including files pass an X that declares, defines
 * or looks them up.
 */
#define XS_CU_FUNCTIONS(X)                                                         \
	X(cuInit, (unsigned int Flags))                                            \
	X(cuDriverGetVersion, (int *driverVersion))                                \
	X(cuGetErrorString, (CUresult error, const char **pStr))                   \
	X(cuGetErrorName, (CUresult error, const char **pStr))                     \
	X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion,   \
				cuuint64_t flags,                                  \
				CUdriverProcAddressQueryResult *symbolStatus))     \
	X(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion,      \
			     cuuint64_t flags))                                    \
	X(cuGetExportTable, (const void **ppExportTable, const CUuuid *pExportTableId)) \
	X(cuDeviceGet, (CUdevice *device, int ordinal))                            \
	X(cuDeviceGetCount, (int *count))                                          \
	X(cuDeviceGetName, (char *name, int len, CUdevice dev))                    \
	X(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev))                      \
	X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev)) \
	X(cuDeviceComputeCapability, (int *major, int *minor, CUdevice dev))       \
	X(cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev))                           \
	X(cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev))                        \
	X(cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev))            \
	X(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))               \
	X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                            \
	X(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active)) \
	X(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev))     \
	X(cuCtxCreate_v3, (CUcontext *pctx, CUexecAffinityParam *paramsArray,      \
			   int numParams, unsigned int flags, CUdevice dev))       \
	X(cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams,    \
			   unsigned int flags, CUdevice dev))                      \
	X(cuCtxDestroy_v2, (CUcontext ctx))                                        \
	X(cuCtxSetCurrent, (CUcontext ctx))                                        \
	X(cuCtxGetCurrent, (CUcontext *pctx))                                      \
	X(cuCtxPushCurrent_v2, (CUcontext ctx))                                    \
	X(cuCtxPopCurrent_v2, (CUcontext *pctx))                                   \
	X(cuCtxGetDevice, (CUdevice *device))                                      \
	X(cuCtxGetDevice_v2, (CUdevice *device, CUcontext ctx))                    \
	X(cuCtxSynchronize, (void))                                                \
	X(cuCtxSynchronize_v2, (CUcontext ctx))                                    \
	X(cuCtxGetStreamPriorityRange, (int *leastPriority, int *greatestPriority)) \
	X(cuCtxRecordEvent, (CUcontext hCtx, CUevent hEvent))                     \
	X(cuCtxWaitEvent, (CUcontext hCtx, CUevent hEvent))                       \
	X(cuDeviceGetDevResource, (CUdevice device, CUdevResource *resource,       \
				   CUdevResourceType type))                        \
	X(cuDevSmResourceSplitByCount, (CUdevResource *result, unsigned int *nbGroups, \
					const CUdevResource *input, CUdevResource *remaining, \
					unsigned int useFlags, unsigned int minCount)) \
	X(cuDevResourceGenerateDesc, (CUdevResourceDesc *phDesc, CUdevResource *resources, \
				      unsigned int nbResources))                   \
	X(cuGreenCtxCreate, (CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev, \
			     unsigned int flags))                                  \
	X(cuGreenCtxDestroy, (CUgreenCtx hCtx))                                    \
	X(cuCtxFromGreenCtx, (CUcontext *pContext, CUgreenCtx hCtx))               \
	X(cuGreenCtxGetDevResource, (CUgreenCtx hCtx, CUdevResource *resource,     \
				     CUdevResourceType type))                      \
	X(cuGreenCtxRecordEvent, (CUgreenCtx hCtx, CUevent hEvent))                \
	X(cuGreenCtxWaitEvent, (CUgreenCtx hCtx, CUevent hEvent))                  \
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
	X(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N))    \
	X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)) \
	X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)) \
	X(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N,  \
			     CUstream hStream))                                    \
	X(cuMemsetD2D8Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, \
			      size_t Width, size_t Height, CUstream hStream))      \
	X(cuMemcpyBatchAsync_v2, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, \
				  size_t count, CUmemcpyAttributes *attrs,        \
				  size_t *attrsIdxs, size_t numAttrs, CUstream hStream)) \
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
	X(cuStreamGetCtx_v2, (CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)) \
	X(cuStreamGetGreenCtx, (CUstream hStream, CUgreenCtx *phCtx))              \
	X(cuGreenCtxStreamCreate, (CUstream *phStream, CUgreenCtx greenCtx,        \
				   unsigned int flags, int priority))              \
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
	X(cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd)) \
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
	X(cuGraphUpload, (CUgraphExec hGraphExec, CUstream hStream))               \
	X(cuGraphInstantiateWithParams, (CUgraphExec *phGraphExec, CUgraph hGraph, \
					 CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)) \
	X(cuGraphExecGetFlags, (CUgraphExec hGraphExec, cuuint64_t *flags))        \
	X(cuGraphClone, (CUgraph *phGraphClone, CUgraph originalGraph))            \
	X(cuGraphNodeFindInClone, (CUgraphNode *phNode, CUgraphNode hOriginalNode, \
				   CUgraph hClonedGraph))                          \
	X(cuGraphDestroyNode, (CUgraphNode hNode))                                 \
	X(cuGraphGetNodes, (CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)) \
	X(cuGraphGetRootNodes, (CUgraph hGraph, CUgraphNode *rootNodes,           \
				size_t *numRootNodes))                             \
	X(cuGraphNodeGetType, (CUgraphNode hNode, CUgraphNodeType *type))          \
	X(cuGraphNodeGetDependencies, (CUgraphNode hNode, CUgraphNode *dependencies, \
				       size_t *numDependencies))                   \
	X(cuGraphNodeGetDependencies_v2, (CUgraphNode hNode, CUgraphNode *dependencies, \
					  CUgraphEdgeData *edgeData,               \
					  size_t *numDependencies))                \
	X(cuGraphNodeGetDependentNodes, (CUgraphNode hNode, CUgraphNode *dependentNodes, \
					 size_t *numDependentNodes))               \
	X(cuGraphAddEmptyNode, (CUgraphNode *phGraphNode, CUgraph hGraph,          \
				const CUgraphNode *dependencies, size_t numDependencies)) \
	X(cuGraphAddKernelNode_v2, (CUgraphNode *phGraphNode, CUgraph hGraph,      \
				    const CUgraphNode *dependencies, size_t numDependencies, \
				    const CUDA_KERNEL_NODE_PARAMS *nodeParams))    \
	X(cuGraphKernelNodeGetParams_v2, (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)) \
	X(cuGraphKernelNodeSetParams_v2, (CUgraphNode hNode,                      \
					  const CUDA_KERNEL_NODE_PARAMS *nodeParams)) \
	X(cuGraphAddMemcpyNode, (CUgraphNode *phGraphNode, CUgraph hGraph,         \
				 const CUgraphNode *dependencies, size_t numDependencies, \
				 const CUDA_MEMCPY3D *copyParams, CUcontext ctx))  \
	X(cuGraphMemcpyNodeGetParams, (CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)) \
	X(cuGraphMemcpyNodeSetParams, (CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams)) \
	X(cuGraphAddMemsetNode, (CUgraphNode *phGraphNode, CUgraph hGraph,         \
				 const CUgraphNode *dependencies, size_t numDependencies, \
				 const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)) \
	X(cuGraphMemsetNodeGetParams, (CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams)) \
	X(cuGraphMemsetNodeSetParams, (CUgraphNode hNode,                         \
				       const CUDA_MEMSET_NODE_PARAMS *nodeParams)) \
	X(cuGraphAddHostNode, (CUgraphNode *phGraphNode, CUgraph hGraph,           \
			       const CUgraphNode *dependencies, size_t numDependencies, \
			       const CUDA_HOST_NODE_PARAMS *nodeParams))           \
	X(cuGraphHostNodeGetParams, (CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams)) \
	X(cuGraphHostNodeSetParams, (CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams)) \
	X(cuGraphAddChildGraphNode, (CUgraphNode *phGraphNode, CUgraph hGraph,     \
				     const CUgraphNode *dependencies, size_t numDependencies, \
				     CUgraph childGraph))                          \
	X(cuGraphChildGraphNodeGetGraph, (CUgraphNode hNode, CUgraph *phGraph))    \
	X(cuGraphAddEventRecordNode, (CUgraphNode *phGraphNode, CUgraph hGraph,    \
				      const CUgraphNode *dependencies, size_t numDependencies, \
				      CUevent event))                              \
	X(cuGraphAddEventWaitNode, (CUgraphNode *phGraphNode, CUgraph hGraph,      \
				    const CUgraphNode *dependencies, size_t numDependencies, \
				    CUevent event))                                \
	X(cuGraphEventRecordNodeGetEvent, (CUgraphNode hNode, CUevent *event_out)) \
	X(cuGraphEventWaitNodeGetEvent, (CUgraphNode hNode, CUevent *event_out))   \
	X(cuGraphAddMemAllocNode, (CUgraphNode *phGraphNode, CUgraph hGraph,       \
				   const CUgraphNode *dependencies, size_t numDependencies, \
				   CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams))        \
	X(cuGraphAddMemFreeNode, (CUgraphNode *phGraphNode, CUgraph hGraph,        \
				  const CUgraphNode *dependencies, size_t numDependencies, \
				  CUdeviceptr dptr))                               \
	X(cuGraphExecKernelNodeSetParams_v2, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					      const CUDA_KERNEL_NODE_PARAMS *nodeParams)) \
	X(cuGraphExecMemcpyNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					   const CUDA_MEMCPY3D *copyParams, CUcontext ctx)) \
	X(cuGraphExecMemsetNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					   const CUDA_MEMSET_NODE_PARAMS *memsetParams, \
					   CUcontext ctx))                         \
	X(cuGraphExecHostNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					 const CUDA_HOST_NODE_PARAMS *nodeParams)) \
	X(cuGraphExecChildGraphNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					       CUgraph childGraph))                \
	X(cuGraphExecUpdate_v2, (CUgraphExec hGraphExec, CUgraph hGraph,           \
				 CUgraphExecUpdateResultInfo *resultInfo))         \
	X(cuGraphNodeSetEnabled, (CUgraphExec hGraphExec, CUgraphNode hNode,       \
				  unsigned int isEnabled))                         \
	X(cuGraphNodeGetEnabled, (CUgraphExec hGraphExec, CUgraphNode hNode,       \
				  unsigned int *isEnabled))                        \
	X(cuGraphExecEventRecordNodeSetEvent, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					       CUevent event))                     \
	X(cuGraphExecEventWaitNodeSetEvent, (CUgraphExec hGraphExec, CUgraphNode hNode, \
					     CUevent event))

/*
 * Per-thread-default-stream variants, exported by the driver next to their
 * base function with the same prototype: in a _ptsz (stream) or _ptds
 * (synchronous call) variant a NULL stream means the calling thread's
 * per-thread default stream instead of the legacy one. One line each:
 * X(variant, base).
 */
#define XS_CU_PTSZ(X)                                                              \
	X(cuMemcpy_ptds, cuMemcpy)                                                 \
	X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2)                                   \
	X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2)                                   \
	X(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2)                                   \
	X(cuMemcpy2D_v2_ptds, cuMemcpy2D_v2)                                       \
	X(cuMemcpy3D_v2_ptds, cuMemcpy3D_v2)                                       \
	X(cuMemsetD8_v2_ptds, cuMemsetD8_v2)                                       \
	X(cuMemsetD32_v2_ptds, cuMemsetD32_v2)                                     \
	X(cuMemsetD16_v2_ptds, cuMemsetD16_v2)                                     \
	X(cuMemcpyAsync_ptsz, cuMemcpyAsync)                                       \
	X(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2)                         \
	X(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2)                         \
	X(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2)                         \
	X(cuMemcpy2DAsync_v2_ptsz, cuMemcpy2DAsync_v2)                             \
	X(cuMemcpy3DAsync_v2_ptsz, cuMemcpy3DAsync_v2)                             \
	X(cuMemsetD8Async_ptsz, cuMemsetD8Async)                                   \
	X(cuMemsetD32Async_ptsz, cuMemsetD32Async)                                 \
	X(cuMemsetD16Async_ptsz, cuMemsetD16Async)                                 \
	X(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async)                               \
	X(cuMemcpyBatchAsync_v2_ptsz, cuMemcpyBatchAsync_v2)                       \
	X(cuMemAllocAsync_ptsz, cuMemAllocAsync)                                   \
	X(cuMemFreeAsync_ptsz, cuMemFreeAsync)                                     \
	X(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync_v2)                       \
	X(cuStreamGetPriority_ptsz, cuStreamGetPriority)                           \
	X(cuStreamGetFlags_ptsz, cuStreamGetFlags)                                 \
	X(cuStreamGetCtx_ptsz, cuStreamGetCtx)                                     \
	X(cuStreamGetCtx_v2_ptsz, cuStreamGetCtx_v2)                               \
	X(cuStreamSynchronize_ptsz, cuStreamSynchronize)                           \
	X(cuStreamQuery_ptsz, cuStreamQuery)                                       \
	X(cuStreamWaitEvent_ptsz, cuStreamWaitEvent)                               \
	X(cuStreamAddCallback_ptsz, cuStreamAddCallback)                           \
	X(cuLaunchHostFunc_ptsz, cuLaunchHostFunc)                                 \
	X(cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue32_v2)                   \
	X(cuStreamWaitValue32_v2_ptsz, cuStreamWaitValue32_v2)                     \
	X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2)                   \
	X(cuStreamEndCapture_ptsz, cuStreamEndCapture)                             \
	X(cuStreamIsCapturing_ptsz, cuStreamIsCapturing)                           \
	X(cuEventRecord_ptsz, cuEventRecord)                                       \
	X(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags)                     \
	X(cuLaunchKernel_ptsz, cuLaunchKernel)                                     \
	X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx)                                 \
	X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel)               \
	X(cuGraphLaunch_ptsz, cuGraphLaunch)                                       \
	X(cuGraphUpload_ptsz, cuGraphUpload)                                       \
	X(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams)

/*
 * How cuGetProcAddress answers, one line per (symbol, version) step:
 * X("symbol", first cudaVersion, function, per-thread function). A symbol
 * is the base name without a version suffix; the line with the highest
 * first version not above the caller's cudaVersion gives the function;
 * below the first line of a symbol the answer is "version not
 * sufficient". The per-thread function answers flags =
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM; it is the function itself
 * where no variant exists. Versions are those of the driver API typedefs
 * (PFN_<symbol>_v<version>); older variants that xsched does not declare
 * (cuMemAlloc before _v2, ...) start the symbol at the variant it does.
 */
#define XS_CU_PROCS(X)                                                             \
	X("cuInit", 2000, cuInit, cuInit)                                          \
	X("cuDriverGetVersion", 2020, cuDriverGetVersion, cuDriverGetVersion)      \
	X("cuGetErrorString", 6000, cuGetErrorString, cuGetErrorString)            \
	X("cuGetErrorName", 6000, cuGetErrorName, cuGetErrorName)                  \
	X("cuGetProcAddress", 11030, cuGetProcAddress, cuGetProcAddress)           \
	X("cuGetProcAddress", 12000, cuGetProcAddress_v2, cuGetProcAddress_v2)     \
	X("cuGetExportTable", 3000, cuGetExportTable, cuGetExportTable)            \
	X("cuDeviceGet", 2000, cuDeviceGet, cuDeviceGet)                           \
	X("cuDeviceGetCount", 2000, cuDeviceGetCount, cuDeviceGetCount)            \
	X("cuDeviceGetName", 2000, cuDeviceGetName, cuDeviceGetName)               \
	X("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2, cuDeviceTotalMem_v2)      \
	X("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute, cuDeviceGetAttribute) \
	X("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability,           \
	  cuDeviceComputeCapability)                                               \
	X("cuDeviceGetUuid", 9020, cuDeviceGetUuid, cuDeviceGetUuid)               \
	X("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2, cuDeviceGetUuid_v2)        \
	X("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId, cuDeviceGetPCIBusId)   \
	X("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain,             \
	  cuDevicePrimaryCtxRetain)                                                \
	X("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2,       \
	  cuDevicePrimaryCtxRelease_v2)                                            \
	X("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState,         \
	  cuDevicePrimaryCtxGetState)                                              \
	X("cuCtxCreate", 3020, cuCtxCreate_v2, cuCtxCreate_v2)                     \
	X("cuCtxCreate", 11040, cuCtxCreate_v3, cuCtxCreate_v3)                    \
	X("cuCtxCreate", 12050, cuCtxCreate_v4, cuCtxCreate_v4)                    \
	X("cuCtxDestroy", 4000, cuCtxDestroy_v2, cuCtxDestroy_v2)                  \
	X("cuCtxSetCurrent", 4000, cuCtxSetCurrent, cuCtxSetCurrent)               \
	X("cuCtxGetCurrent", 4000, cuCtxGetCurrent, cuCtxGetCurrent)               \
	X("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2, cuCtxPushCurrent_v2)      \
	X("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2, cuCtxPopCurrent_v2)         \
	X("cuCtxGetDevice", 2000, cuCtxGetDevice, cuCtxGetDevice)                  \
	X("cuCtxGetDevice", 13000, cuCtxGetDevice_v2, cuCtxGetDevice_v2)           \
	X("cuCtxSynchronize", 2000, cuCtxSynchronize, cuCtxSynchronize)            \
	X("cuCtxSynchronize", 13000, cuCtxSynchronize_v2, cuCtxSynchronize_v2)     \
	X("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange,       \
	  cuCtxGetStreamPriorityRange)                                             \
	X("cuCtxRecordEvent", 12050, cuCtxRecordEvent, cuCtxRecordEvent)          \
	X("cuCtxWaitEvent", 12050, cuCtxWaitEvent, cuCtxWaitEvent)                \
	X("cuDeviceGetDevResource", 12040, cuDeviceGetDevResource, cuDeviceGetDevResource) \
	X("cuDevSmResourceSplitByCount", 12040, cuDevSmResourceSplitByCount,      \
	  cuDevSmResourceSplitByCount)                                             \
	X("cuDevResourceGenerateDesc", 12040, cuDevResourceGenerateDesc,          \
	  cuDevResourceGenerateDesc)                                               \
	X("cuGreenCtxCreate", 12040, cuGreenCtxCreate, cuGreenCtxCreate)          \
	X("cuGreenCtxDestroy", 12040, cuGreenCtxDestroy, cuGreenCtxDestroy)       \
	X("cuCtxFromGreenCtx", 12040, cuCtxFromGreenCtx, cuCtxFromGreenCtx)       \
	X("cuGreenCtxGetDevResource", 12040, cuGreenCtxGetDevResource,            \
	  cuGreenCtxGetDevResource)                                                \
	X("cuGreenCtxRecordEvent", 12040, cuGreenCtxRecordEvent, cuGreenCtxRecordEvent) \
	X("cuGreenCtxWaitEvent", 12040, cuGreenCtxWaitEvent, cuGreenCtxWaitEvent) \
	X("cuModuleLoadData", 2000, cuModuleLoadData, cuModuleLoadData)            \
	X("cuModuleLoad", 2000, cuModuleLoad, cuModuleLoad)                        \
	X("cuModuleGetFunction", 2000, cuModuleGetFunction, cuModuleGetFunction)   \
	X("cuModuleUnload", 2000, cuModuleUnload, cuModuleUnload)                  \
	X("cuLibraryLoadData", 12000, cuLibraryLoadData, cuLibraryLoadData)        \
	X("cuLibraryGetKernel", 12000, cuLibraryGetKernel, cuLibraryGetKernel)     \
	X("cuLibraryUnload", 12000, cuLibraryUnload, cuLibraryUnload)              \
	X("cuKernelGetFunction", 12000, cuKernelGetFunction, cuKernelGetFunction)  \
	X("cuFuncGetParamInfo", 12040, cuFuncGetParamInfo, cuFuncGetParamInfo)     \
	X("cuMemAlloc", 3020, cuMemAlloc_v2, cuMemAlloc_v2)                        \
	X("cuMemFree", 3020, cuMemFree_v2, cuMemFree_v2)                           \
	X("cuMemAllocHost", 3020, cuMemAllocHost_v2, cuMemAllocHost_v2)            \
	X("cuMemHostAlloc", 2020, cuMemHostAlloc, cuMemHostAlloc)                  \
	X("cuMemFreeHost", 2000, cuMemFreeHost, cuMemFreeHost)                     \
	X("cuMemGetInfo", 3020, cuMemGetInfo_v2, cuMemGetInfo_v2)                  \
	X("cuPointerGetAttribute", 4000, cuPointerGetAttribute, cuPointerGetAttribute) \
	X("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds)                               \
	X("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds)             \
	X("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds)             \
	X("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds)             \
	X("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz)                \
	X("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz) \
	X("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz) \
	X("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz) \
	X("cuMemcpy2D", 3020, cuMemcpy2D_v2, cuMemcpy2D_v2_ptds)                   \
	X("cuMemcpy2DAsync", 3020, cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz)    \
	X("cuMemcpy3D", 3020, cuMemcpy3D_v2, cuMemcpy3D_v2_ptds)                   \
	X("cuMemcpy3DAsync", 3020, cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz)    \
	X("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds)                   \
	X("cuMemsetD32", 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds)                \
	X("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz)          \
	X("cuMemsetD32Async", 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz)       \
	X("cuMemsetD16", 3020, cuMemsetD16_v2, cuMemsetD16_v2_ptds)                \
	X("cuMemsetD16Async", 3020, cuMemsetD16Async, cuMemsetD16Async_ptsz)       \
	X("cuMemsetD2D8Async", 3020, cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz)    \
	X("cuMemcpyBatchAsync", 13000, cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync_v2_ptsz) \
	X("cuMemAllocAsync", 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz)         \
	X("cuMemFreeAsync", 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz)            \
	X("cuMemPrefetchAsync", 12020, cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz) \
	X("cuStreamCreate", 2000, cuStreamCreate, cuStreamCreate)                  \
	X("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority,         \
	  cuStreamCreateWithPriority)                                              \
	X("cuStreamDestroy", 4000, cuStreamDestroy_v2, cuStreamDestroy_v2)         \
	X("cuStreamGetPriority", 5050, cuStreamGetPriority, cuStreamGetPriority_ptsz) \
	X("cuStreamGetFlags", 5050, cuStreamGetFlags, cuStreamGetFlags_ptsz)       \
	X("cuStreamGetCtx", 9020, cuStreamGetCtx, cuStreamGetCtx_ptsz)             \
	X("cuStreamGetCtx", 12050, cuStreamGetCtx_v2, cuStreamGetCtx_v2_ptsz)      \
	X("cuStreamGetGreenCtx", 12040, cuStreamGetGreenCtx, cuStreamGetGreenCtx) \
	X("cuGreenCtxStreamCreate", 12050, cuGreenCtxStreamCreate, cuGreenCtxStreamCreate) \
	X("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz) \
	X("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz)                \
	X("cuStreamWaitEvent", 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz)    \
	X("cuStreamAddCallback", 5000, cuStreamAddCallback, cuStreamAddCallback_ptsz) \
	X("cuLaunchHostFunc", 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz)      \
	X("cuStreamWriteValue32", 11070, cuStreamWriteValue32_v2,                 \
	  cuStreamWriteValue32_v2_ptsz)                                            \
	X("cuStreamWaitValue32", 11070, cuStreamWaitValue32_v2,                   \
	  cuStreamWaitValue32_v2_ptsz)                                             \
	X("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2,                 \
	  cuStreamBeginCapture_v2_ptsz)                                            \
	X("cuStreamEndCapture", 10000, cuStreamEndCapture, cuStreamEndCapture_ptsz) \
	X("cuStreamIsCapturing", 10000, cuStreamIsCapturing, cuStreamIsCapturing_ptsz) \
	X("cuEventCreate", 2000, cuEventCreate, cuEventCreate)                     \
	X("cuEventDestroy", 4000, cuEventDestroy_v2, cuEventDestroy_v2)            \
	X("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz)                \
	X("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags,                \
	  cuEventRecordWithFlags_ptsz)                                             \
	X("cuEventQuery", 2000, cuEventQuery, cuEventQuery)                        \
	X("cuEventSynchronize", 2000, cuEventSynchronize, cuEventSynchronize)      \
	X("cuEventElapsedTime", 2000, cuEventElapsedTime, cuEventElapsedTime)      \
	X("cuEventElapsedTime", 12080, cuEventElapsedTime_v2, cuEventElapsedTime_v2) \
	X("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz)             \
	X("cuLaunchKernelEx", 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz)      \
	X("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel,           \
	  cuLaunchCooperativeKernel_ptsz)                                          \
	X("cuGraphCreate", 10000, cuGraphCreate, cuGraphCreate)                    \
	X("cuGraphDestroy", 10000, cuGraphDestroy, cuGraphDestroy)                 \
	X("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags,               \
	  cuGraphInstantiateWithFlags)                                             \
	X("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags,      \
	  cuGraphInstantiateWithFlags)                                             \
	X("cuGraphExecDestroy", 10000, cuGraphExecDestroy, cuGraphExecDestroy)     \
	X("cuGraphLaunch", 10000, cuGraphLaunch, cuGraphLaunch_ptsz)               \
	X("cuGraphUpload", 11010, cuGraphUpload, cuGraphUpload_ptsz)               \
	X("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams,    \
	  cuGraphInstantiateWithParams_ptsz)                                       \
	X("cuGraphExecGetFlags", 12000, cuGraphExecGetFlags, cuGraphExecGetFlags)  \
	X("cuGraphClone", 10000, cuGraphClone, cuGraphClone)                       \
	X("cuGraphNodeFindInClone", 10000, cuGraphNodeFindInClone, cuGraphNodeFindInClone) \
	X("cuGraphDestroyNode", 10000, cuGraphDestroyNode, cuGraphDestroyNode)     \
	X("cuGraphGetNodes", 10000, cuGraphGetNodes, cuGraphGetNodes)              \
	X("cuGraphGetRootNodes", 10000, cuGraphGetRootNodes, cuGraphGetRootNodes)  \
	X("cuGraphNodeGetType", 10000, cuGraphNodeGetType, cuGraphNodeGetType)     \
	X("cuGraphNodeGetDependencies", 10000, cuGraphNodeGetDependencies,        \
	  cuGraphNodeGetDependencies)                                              \
	X("cuGraphNodeGetDependencies", 12030, cuGraphNodeGetDependencies_v2,     \
	  cuGraphNodeGetDependencies_v2)                                           \
	X("cuGraphNodeGetDependentNodes", 10000, cuGraphNodeGetDependentNodes,    \
	  cuGraphNodeGetDependentNodes)                                            \
	X("cuGraphAddEmptyNode", 10000, cuGraphAddEmptyNode, cuGraphAddEmptyNode)  \
	X("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2, cuGraphAddKernelNode_v2) \
	X("cuGraphKernelNodeGetParams", 12000, cuGraphKernelNodeGetParams_v2,     \
	  cuGraphKernelNodeGetParams_v2)                                           \
	X("cuGraphKernelNodeSetParams", 12000, cuGraphKernelNodeSetParams_v2,     \
	  cuGraphKernelNodeSetParams_v2)                                           \
	X("cuGraphAddMemcpyNode", 10000, cuGraphAddMemcpyNode, cuGraphAddMemcpyNode) \
	X("cuGraphMemcpyNodeGetParams", 10000, cuGraphMemcpyNodeGetParams,        \
	  cuGraphMemcpyNodeGetParams)                                              \
	X("cuGraphMemcpyNodeSetParams", 10000, cuGraphMemcpyNodeSetParams,        \
	  cuGraphMemcpyNodeSetParams)                                              \
	X("cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode, cuGraphAddMemsetNode) \
	X("cuGraphMemsetNodeGetParams", 10000, cuGraphMemsetNodeGetParams,        \
	  cuGraphMemsetNodeGetParams)                                              \
	X("cuGraphMemsetNodeSetParams", 10000, cuGraphMemsetNodeSetParams,        \
	  cuGraphMemsetNodeSetParams)                                              \
	X("cuGraphAddHostNode", 10000, cuGraphAddHostNode, cuGraphAddHostNode)     \
	X("cuGraphHostNodeGetParams", 10000, cuGraphHostNodeGetParams, cuGraphHostNodeGetParams) \
	X("cuGraphHostNodeSetParams", 10000, cuGraphHostNodeSetParams, cuGraphHostNodeSetParams) \
	X("cuGraphAddChildGraphNode", 10000, cuGraphAddChildGraphNode, cuGraphAddChildGraphNode) \
	X("cuGraphChildGraphNodeGetGraph", 10000, cuGraphChildGraphNodeGetGraph,  \
	  cuGraphChildGraphNodeGetGraph)                                           \
	X("cuGraphAddEventRecordNode", 11010, cuGraphAddEventRecordNode,          \
	  cuGraphAddEventRecordNode)                                               \
	X("cuGraphAddEventWaitNode", 11010, cuGraphAddEventWaitNode, cuGraphAddEventWaitNode) \
	X("cuGraphEventRecordNodeGetEvent", 11010, cuGraphEventRecordNodeGetEvent, \
	  cuGraphEventRecordNodeGetEvent)                                          \
	X("cuGraphEventWaitNodeGetEvent", 11010, cuGraphEventWaitNodeGetEvent,    \
	  cuGraphEventWaitNodeGetEvent)                                            \
	X("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode, cuGraphAddMemAllocNode) \
	X("cuGraphAddMemFreeNode", 11040, cuGraphAddMemFreeNode, cuGraphAddMemFreeNode) \
	X("cuGraphExecKernelNodeSetParams", 12000, cuGraphExecKernelNodeSetParams_v2, \
	  cuGraphExecKernelNodeSetParams_v2)                                       \
	X("cuGraphExecMemcpyNodeSetParams", 10020, cuGraphExecMemcpyNodeSetParams, \
	  cuGraphExecMemcpyNodeSetParams)                                          \
	X("cuGraphExecMemsetNodeSetParams", 10020, cuGraphExecMemsetNodeSetParams, \
	  cuGraphExecMemsetNodeSetParams)                                          \
	X("cuGraphExecHostNodeSetParams", 10020, cuGraphExecHostNodeSetParams,    \
	  cuGraphExecHostNodeSetParams)                                            \
	X("cuGraphExecChildGraphNodeSetParams", 11010, cuGraphExecChildGraphNodeSetParams, \
	  cuGraphExecChildGraphNodeSetParams)                                      \
	X("cuGraphExecUpdate", 12000, cuGraphExecUpdate_v2, cuGraphExecUpdate_v2)  \
	X("cuGraphNodeSetEnabled", 11060, cuGraphNodeSetEnabled, cuGraphNodeSetEnabled) \
	X("cuGraphNodeGetEnabled", 11060, cuGraphNodeGetEnabled, cuGraphNodeGetEnabled) \
	X("cuGraphExecEventRecordNodeSetEvent", 11010, cuGraphExecEventRecordNodeSetEvent, \
	  cuGraphExecEventRecordNodeSetEvent)                                      \
	X("cuGraphExecEventWaitNodeSetEvent", 11010, cuGraphExecEventWaitNodeSetEvent, \
	  cuGraphExecEventWaitNodeSetEvent)

#endif
