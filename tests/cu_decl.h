/*
 * What test_cu_decl compares between our CUDA declarations (cu_decl_ours.c,
 * src/vendor/cuda/cu_api.h) and NVIDIA's (cu_decl_cuda.c, cuda.h): the
 * names of constants, types and struct fields, as X-macros of names only,
 * so that each translation unit evaluates the same list under its own
 * header and neither needs the other's types. Prototypes are not here:
 * cu_decl_cuda.c checks them at compile time against the rows of
 * src/vendor/cuda/cu_functions.def.
 *
 * This is the test's own list, not a copy of cu_api.h kept by hand: the
 * test reads cu_api.h and fails on any constant it defines that is
 * missing here, so the list cannot silently fall behind.
 */
#ifndef XS_TEST_CU_DECL_H
#define XS_TEST_CU_DECL_H

#include <stddef.h>
#include <stdint.h>

/* Integer constants, enumerators and #defines alike: X(name). */
#define XS_CU_DECL_INTS(X)                                                         \
	X(CUDA_SUCCESS)                                                            \
	X(CUDA_ERROR_INVALID_VALUE)                                                \
	X(CUDA_ERROR_OUT_OF_MEMORY)                                                \
	X(CUDA_ERROR_NOT_INITIALIZED)                                              \
	X(CUDA_ERROR_DEINITIALIZED)                                                \
	X(CUDA_ERROR_STUB_LIBRARY)                                                 \
	X(CUDA_ERROR_NO_DEVICE)                                                    \
	X(CUDA_ERROR_INVALID_DEVICE)                                               \
	X(CUDA_ERROR_INVALID_IMAGE)                                                \
	X(CUDA_ERROR_INVALID_CONTEXT)                                              \
	X(CUDA_ERROR_INVALID_SOURCE)                                               \
	X(CUDA_ERROR_FILE_NOT_FOUND)                                               \
	X(CUDA_ERROR_INVALID_HANDLE)                                               \
	X(CUDA_ERROR_ILLEGAL_STATE)                                                \
	X(CUDA_ERROR_NOT_FOUND)                                                    \
	X(CUDA_ERROR_NOT_READY)                                                    \
	X(CUDA_ERROR_ILLEGAL_ADDRESS)                                              \
	X(CUDA_ERROR_LAUNCH_FAILED)                                                \
	X(CUDA_ERROR_NOT_PERMITTED)                                                \
	X(CUDA_ERROR_NOT_SUPPORTED)                                                \
	X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)                                   \
	X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)                                   \
	X(CUDA_ERROR_STREAM_CAPTURE_MERGE)                                         \
	X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)                                     \
	X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED)                                      \
	X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION)                                     \
	X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)                                      \
	X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)                                  \
	X(CUDA_ERROR_INVALID_RESOURCE_TYPE)                                        \
	X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)                               \
	X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)                                    \
	X(CUDA_ERROR_UNKNOWN)                                                      \
	X(CU_STREAM_DEFAULT)                                                       \
	X(CU_STREAM_NON_BLOCKING)                                                  \
	X(CU_EVENT_DEFAULT)                                                        \
	X(CU_EVENT_BLOCKING_SYNC)                                                  \
	X(CU_EVENT_DISABLE_TIMING)                                                 \
	X(CU_EVENT_INTERPROCESS)                                                   \
	X(CU_EVENT_RECORD_DEFAULT)                                                 \
	X(CU_EVENT_RECORD_EXTERNAL)                                                \
	X(CU_EVENT_WAIT_DEFAULT)                                                   \
	X(CU_EVENT_WAIT_EXTERNAL)                                                  \
	X(CU_CTX_SCHED_AUTO)                                                       \
	X(CU_CTX_SCHED_SPIN)                                                       \
	X(CU_CTX_SCHED_YIELD)                                                      \
	X(CU_CTX_SCHED_BLOCKING_SYNC)                                              \
	X(CU_CTX_SCHED_MASK)                                                       \
	X(CU_CTX_FLAGS_MASK)                                                       \
	X(CU_MEMHOSTALLOC_PORTABLE)                                                \
	X(CU_MEMHOSTALLOC_DEVICEMAP)                                               \
	X(CU_MEMHOSTALLOC_WRITECOMBINED)                                           \
	X(CU_MEMORYTYPE_HOST)                                                      \
	X(CU_MEMORYTYPE_DEVICE)                                                    \
	X(CU_MEMORYTYPE_ARRAY)                                                     \
	X(CU_MEMORYTYPE_UNIFIED)                                                   \
	X(CU_POINTER_ATTRIBUTE_CONTEXT)                                            \
	X(CU_POINTER_ATTRIBUTE_MEMORY_TYPE)                                        \
	X(CU_POINTER_ATTRIBUTE_DEVICE_POINTER)                                     \
	X(CU_POINTER_ATTRIBUTE_HOST_POINTER)                                       \
	X(CU_STREAM_WAIT_VALUE_GEQ)                                                \
	X(CU_STREAM_WAIT_VALUE_EQ)                                                 \
	X(CU_STREAM_WAIT_VALUE_AND)                                                \
	X(CU_STREAM_WAIT_VALUE_NOR)                                                \
	X(CU_STREAM_WAIT_VALUE_FLUSH)                                              \
	X(CU_STREAM_WRITE_VALUE_DEFAULT)                                           \
	X(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)                                 \
	X(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)                         \
	X(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)                                      \
	X(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)                               \
	X(CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)                           \
	X(CU_STREAM_CAPTURE_STATUS_NONE)                                           \
	X(CU_STREAM_CAPTURE_STATUS_ACTIVE)                                         \
	X(CU_STREAM_CAPTURE_STATUS_INVALIDATED)                                    \
	X(CU_STREAM_CAPTURE_MODE_GLOBAL)                                           \
	X(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)                                     \
	X(CU_STREAM_CAPTURE_MODE_RELAXED)                                          \
	X(CU_GET_PROC_ADDRESS_DEFAULT)                                             \
	X(CU_GET_PROC_ADDRESS_LEGACY_STREAM)                                       \
	X(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)                           \
	X(CU_GET_PROC_ADDRESS_SUCCESS)                                             \
	X(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)                                    \
	X(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)                              \
	X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)                               \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)                                     \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)                                     \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)                                     \
	X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)                                      \
	X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)                                      \
	X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)                                      \
	X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)                         \
	X(CU_DEVICE_ATTRIBUTE_WARP_SIZE)                                           \
	X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)                                \
	X(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS)                                  \
	X(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)                                  \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)                            \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)                            \
	X(CU_DEVICE_ATTRIBUTE_MAX)                                                 \
	X(CU_DEV_RESOURCE_TYPE_INVALID)                                            \
	X(CU_DEV_RESOURCE_TYPE_SM)                                                 \
	X(CU_GREEN_CTX_DEFAULT_STREAM)                                             \
	X(CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING)                         \
	X(CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE)                     \
	X(CU_GRAPH_NODE_TYPE_KERNEL)                                               \
	X(CU_GRAPH_NODE_TYPE_MEMCPY)                                               \
	X(CU_GRAPH_NODE_TYPE_MEMSET)                                               \
	X(CU_GRAPH_NODE_TYPE_HOST)                                                 \
	X(CU_GRAPH_NODE_TYPE_GRAPH)                                                \
	X(CU_GRAPH_NODE_TYPE_EMPTY)                                                \
	X(CU_GRAPH_NODE_TYPE_WAIT_EVENT)                                           \
	X(CU_GRAPH_NODE_TYPE_EVENT_RECORD)                                         \
	X(CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL)                                     \
	X(CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT)                                       \
	X(CU_GRAPH_NODE_TYPE_MEM_ALLOC)                                            \
	X(CU_GRAPH_NODE_TYPE_MEM_FREE)                                             \
	X(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)                                         \
	X(CU_GRAPH_NODE_TYPE_CONDITIONAL)                                          \
	X(CU_GRAPH_EXEC_UPDATE_SUCCESS)                                            \
	X(CU_GRAPH_EXEC_UPDATE_ERROR)                                              \
	X(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED)                             \
	X(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED)                            \
	X(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED)                           \
	X(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED)                                \
	X(CUDA_GRAPH_INSTANTIATE_SUCCESS)                                          \
	X(CUDA_GRAPH_INSTANTIATE_ERROR)                                            \
	X(CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE)                                \
	X(CU_GRAPH_DEPENDENCY_TYPE_DEFAULT)                                        \
	X(CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC)                                   \
	X(CU_MEM_ALLOCATION_TYPE_PINNED)                                           \
	X(CU_MEM_HANDLE_TYPE_NONE)                                                 \
	X(CU_MEM_LOCATION_TYPE_DEVICE)                                             \
	X(CU_MEM_ACCESS_FLAGS_PROT_NONE)                                           \
	X(CU_MEM_ACCESS_FLAGS_PROT_READ)                                           \
	X(CU_MEM_ACCESS_FLAGS_PROT_READWRITE)                                      \
	X(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES)                         \
	X(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC)                               \
	X(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)                       \
	X(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)                                       \
	X(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)                                    \
	X(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)                                       \
	X(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)                                        \
	X(CU_MEMPOOL_ATTR_USED_MEM_HIGH)                                           \
	X(CU_MEM_ATTACH_GLOBAL)                                                    \
	X(CU_MEM_ATTACH_HOST)                                                      \
	X(CU_AD_FORMAT_UNSIGNED_INT8)                                              \
	X(CU_AD_FORMAT_UNSIGNED_INT16)                                             \
	X(CU_AD_FORMAT_UNSIGNED_INT32)                                             \
	X(CU_AD_FORMAT_SIGNED_INT8)                                                \
	X(CU_AD_FORMAT_SIGNED_INT16)                                               \
	X(CU_AD_FORMAT_SIGNED_INT32)                                               \
	X(CU_AD_FORMAT_HALF)                                                       \
	X(CU_AD_FORMAT_FLOAT)                                                      \
	X(CUDA_ARRAY3D_LAYERED)                                                    \
	X(CUDA_ARRAY3D_SURFACE_LDST)                                               \
	X(CUDA_ARRAY3D_CUBEMAP)                                                    \
	X(CUDA_ARRAY3D_TEXTURE_GATHER)                                             \
	X(CU_MEM_ALLOC_GRANULARITY_MINIMUM)                                        \
	X(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)

/* Constants that are pointers (special stream handles, extra[] markers): X(name). */
#define XS_CU_DECL_PTRS(X)                                                         \
	X(CU_STREAM_LEGACY)                                                        \
	X(CU_STREAM_PER_THREAD)                                                    \
	X(CU_LAUNCH_PARAM_END)                                                     \
	X(CU_LAUNCH_PARAM_BUFFER_POINTER)                                          \
	X(CU_LAUNCH_PARAM_BUFFER_SIZE)

/*
 * Types compared by size and alignment: T(type). Sizes are what the ABI
 * of the functions depends on; signedness is not compared because cuda.h
 * declares CUresult and the like as enums, which GCC makes unsigned int
 * where we say int, with the same size and argument passing. The opaque
 * structs we only ever point to (CUexecAffinityParam, CUctxCigParam,
 * CUmemcpyAttributes) have no size on our side.
 */
#define XS_CU_DECL_TYPES(T)                                                        \
	T(CUresult)                                                                \
	T(CUdevice)                                                                \
	T(CUdeviceptr)                                                             \
	T(cuuint32_t)                                                              \
	T(cuuint64_t)                                                              \
	T(CUcontext)                                                               \
	T(CUmodule)                                                                \
	T(CUfunction)                                                              \
	T(CUlibrary)                                                               \
	T(CUkernel)                                                                \
	T(CUstream)                                                                \
	T(CUevent)                                                                 \
	T(CUgraph)                                                                 \
	T(CUgraphExec)                                                             \
	T(CUarray)                                                                 \
	T(CUmemoryPool)                                                            \
	T(CUgreenCtx)                                                              \
	T(CUhostFn)                                                                \
	T(CUstreamCallback)                                                        \
	T(CUdriverProcAddressQueryResult)                                          \
	T(CUdevice_attribute)                                                      \
	T(CUjit_option)                                                            \
	T(CUlibraryOption)                                                         \
	T(CUpointer_attribute)                                                     \
	T(CUfunction_attribute)                                                    \
	T(CUstreamCaptureMode)                                                     \
	T(CUstreamCaptureStatus)                                                   \
	T(CUmemorytype)                                                            \
	T(CUlaunchAttributeID)                                                     \
	T(CUlaunchAttributeValue)                                                  \
	T(CUmemLocationType)                                                       \
	T(CUdevResourceDesc)                                                       \
	T(CUdevResourceType)                                                       \
	T(CUgraphNode)                                                             \
	T(CUgraphNodeType)                                                         \
	T(CUgraphExecUpdateResult)                                                 \
	T(CUgraphInstantiateResult)                                                \
	T(CUmemAllocationType)                                                     \
	T(CUmemAllocationHandleType)                                               \
	T(CUmemAccess_flags)                                                       \
	T(CUmipmappedArray)                                                        \
	T(CUarray_format)                                                          \
	T(CUmemGenericAllocationHandle)                                            \
	T(CUmemAllocationGranularity_flags)

/*
 * Function-pointer types against the prototype the driver calls them with,
 * written once here and read by each translation unit with its own header's
 * parameter types: X(type, function pointer type). Checked at compile time.
 */
#define XS_CU_DECL_FNTYPES(X)                                                      \
	X(CUhostFn, void (*)(void *userData))                                      \
	X(CUstreamCallback, void (*)(CUstream hStream, CUresult status, void *userData))

#define XS_CU_DECL_FNTYPE_CHECK(type, fn)                                          \
	_Static_assert(__builtin_types_compatible_p(type, fn), #type " is not " #fn);

/*
 * Structs passed by value or by pointer to the driver: S(type) for the
 * struct, then F(type, field) for each of its fields, compared by offset
 * and size. Every field that we declare is listed (padding included),
 * since the driver reads them all.
 */
#define XS_CU_DECL_STRUCTS(S, F)                                                   \
	S(CUuuid)                                                                  \
	F(CUuuid, bytes)                                                           \
	S(CUctxCreateParams)                                                       \
	F(CUctxCreateParams, execAffinityParams)                                   \
	F(CUctxCreateParams, numExecAffinityParams)                                \
	F(CUctxCreateParams, cigParams)                                            \
	S(CUmemLocation)                                                           \
	F(CUmemLocation, type)                                                     \
	F(CUmemLocation, id)                                                       \
	S(CUlaunchAttribute)                                                       \
	F(CUlaunchAttribute, id)                                                   \
	F(CUlaunchAttribute, pad)                                                  \
	F(CUlaunchAttribute, value)                                                \
	S(CUlaunchConfig)                                                          \
	F(CUlaunchConfig, gridDimX)                                                \
	F(CUlaunchConfig, gridDimY)                                                \
	F(CUlaunchConfig, gridDimZ)                                                \
	F(CUlaunchConfig, blockDimX)                                               \
	F(CUlaunchConfig, blockDimY)                                               \
	F(CUlaunchConfig, blockDimZ)                                               \
	F(CUlaunchConfig, sharedMemBytes)                                          \
	F(CUlaunchConfig, hStream)                                                 \
	F(CUlaunchConfig, attrs)                                                   \
	F(CUlaunchConfig, numAttrs)                                                \
	S(CUDA_MEMCPY2D)                                                           \
	F(CUDA_MEMCPY2D, srcXInBytes)                                              \
	F(CUDA_MEMCPY2D, srcY)                                                     \
	F(CUDA_MEMCPY2D, srcMemoryType)                                            \
	F(CUDA_MEMCPY2D, srcHost)                                                  \
	F(CUDA_MEMCPY2D, srcDevice)                                                \
	F(CUDA_MEMCPY2D, srcArray)                                                 \
	F(CUDA_MEMCPY2D, srcPitch)                                                 \
	F(CUDA_MEMCPY2D, dstXInBytes)                                              \
	F(CUDA_MEMCPY2D, dstY)                                                     \
	F(CUDA_MEMCPY2D, dstMemoryType)                                            \
	F(CUDA_MEMCPY2D, dstHost)                                                  \
	F(CUDA_MEMCPY2D, dstDevice)                                                \
	F(CUDA_MEMCPY2D, dstArray)                                                 \
	F(CUDA_MEMCPY2D, dstPitch)                                                 \
	F(CUDA_MEMCPY2D, WidthInBytes)                                             \
	F(CUDA_MEMCPY2D, Height)                                                   \
	S(CUDA_MEMCPY3D)                                                           \
	F(CUDA_MEMCPY3D, srcXInBytes)                                              \
	F(CUDA_MEMCPY3D, srcY)                                                     \
	F(CUDA_MEMCPY3D, srcZ)                                                     \
	F(CUDA_MEMCPY3D, srcLOD)                                                   \
	F(CUDA_MEMCPY3D, srcMemoryType)                                            \
	F(CUDA_MEMCPY3D, srcHost)                                                  \
	F(CUDA_MEMCPY3D, srcDevice)                                                \
	F(CUDA_MEMCPY3D, srcArray)                                                 \
	F(CUDA_MEMCPY3D, reserved0)                                                \
	F(CUDA_MEMCPY3D, srcPitch)                                                 \
	F(CUDA_MEMCPY3D, srcHeight)                                                \
	F(CUDA_MEMCPY3D, dstXInBytes)                                              \
	F(CUDA_MEMCPY3D, dstY)                                                     \
	F(CUDA_MEMCPY3D, dstZ)                                                     \
	F(CUDA_MEMCPY3D, dstLOD)                                                   \
	F(CUDA_MEMCPY3D, dstMemoryType)                                            \
	F(CUDA_MEMCPY3D, dstHost)                                                  \
	F(CUDA_MEMCPY3D, dstDevice)                                                \
	F(CUDA_MEMCPY3D, dstArray)                                                 \
	F(CUDA_MEMCPY3D, reserved1)                                                \
	F(CUDA_MEMCPY3D, dstPitch)                                                 \
	F(CUDA_MEMCPY3D, dstHeight)                                                \
	F(CUDA_MEMCPY3D, WidthInBytes)                                             \
	F(CUDA_MEMCPY3D, Height)                                                   \
	F(CUDA_MEMCPY3D, Depth)                                                    \
	S(CUdevSmResource)                                                         \
	F(CUdevSmResource, smCount)                                                \
	F(CUdevSmResource, minSmPartitionSize)                                     \
	F(CUdevSmResource, smCoscheduledAlignment)                                 \
	S(CUdevResource)                                                           \
	F(CUdevResource, type)                                                     \
	F(CUdevResource, _internal_padding)                                        \
	F(CUdevResource, sm)                                                       \
	F(CUdevResource, _oversize)                                                \
	S(CUDA_KERNEL_NODE_PARAMS)                                                 \
	F(CUDA_KERNEL_NODE_PARAMS, func)                                           \
	F(CUDA_KERNEL_NODE_PARAMS, gridDimX)                                       \
	F(CUDA_KERNEL_NODE_PARAMS, gridDimY)                                       \
	F(CUDA_KERNEL_NODE_PARAMS, gridDimZ)                                       \
	F(CUDA_KERNEL_NODE_PARAMS, blockDimX)                                      \
	F(CUDA_KERNEL_NODE_PARAMS, blockDimY)                                      \
	F(CUDA_KERNEL_NODE_PARAMS, blockDimZ)                                      \
	F(CUDA_KERNEL_NODE_PARAMS, sharedMemBytes)                                 \
	F(CUDA_KERNEL_NODE_PARAMS, kernelParams)                                   \
	F(CUDA_KERNEL_NODE_PARAMS, extra)                                          \
	F(CUDA_KERNEL_NODE_PARAMS, kern)                                           \
	F(CUDA_KERNEL_NODE_PARAMS, ctx)                                            \
	S(CUDA_MEMSET_NODE_PARAMS)                                                 \
	F(CUDA_MEMSET_NODE_PARAMS, dst)                                            \
	F(CUDA_MEMSET_NODE_PARAMS, pitch)                                          \
	F(CUDA_MEMSET_NODE_PARAMS, value)                                          \
	F(CUDA_MEMSET_NODE_PARAMS, elementSize)                                    \
	F(CUDA_MEMSET_NODE_PARAMS, width)                                          \
	F(CUDA_MEMSET_NODE_PARAMS, height)                                         \
	S(CUDA_HOST_NODE_PARAMS)                                                   \
	F(CUDA_HOST_NODE_PARAMS, fn)                                               \
	F(CUDA_HOST_NODE_PARAMS, userData)                                         \
	S(CUgraphEdgeData)                                                         \
	F(CUgraphEdgeData, from_port)                                              \
	F(CUgraphEdgeData, to_port)                                                \
	F(CUgraphEdgeData, type)                                                   \
	F(CUgraphEdgeData, reserved)                                               \
	S(CUgraphExecUpdateResultInfo)                                             \
	F(CUgraphExecUpdateResultInfo, result)                                     \
	F(CUgraphExecUpdateResultInfo, errorNode)                                  \
	F(CUgraphExecUpdateResultInfo, errorFromNode)                              \
	S(CUDA_GRAPH_INSTANTIATE_PARAMS)                                           \
	F(CUDA_GRAPH_INSTANTIATE_PARAMS, flags)                                    \
	F(CUDA_GRAPH_INSTANTIATE_PARAMS, hUploadStream)                            \
	F(CUDA_GRAPH_INSTANTIATE_PARAMS, hErrNode_out)                             \
	F(CUDA_GRAPH_INSTANTIATE_PARAMS, result_out)                               \
	S(CUmemPoolProps)                                                          \
	F(CUmemPoolProps, allocType)                                               \
	F(CUmemPoolProps, handleTypes)                                             \
	F(CUmemPoolProps, location)                                                \
	F(CUmemPoolProps, win32SecurityAttributes)                                 \
	F(CUmemPoolProps, maxSize)                                                 \
	F(CUmemPoolProps, usage)                                                   \
	F(CUmemPoolProps, reserved)                                                \
	S(CUmemAccessDesc)                                                         \
	F(CUmemAccessDesc, location)                                               \
	F(CUmemAccessDesc, flags)                                                  \
	S(CUDA_MEM_ALLOC_NODE_PARAMS)                                              \
	F(CUDA_MEM_ALLOC_NODE_PARAMS, poolProps)                                   \
	F(CUDA_MEM_ALLOC_NODE_PARAMS, accessDescs)                                 \
	F(CUDA_MEM_ALLOC_NODE_PARAMS, accessDescCount)                             \
	F(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize)                                    \
	F(CUDA_MEM_ALLOC_NODE_PARAMS, dptr)                                        \
	S(CUDA_ARRAY_DESCRIPTOR)                                                   \
	F(CUDA_ARRAY_DESCRIPTOR, Width)                                            \
	F(CUDA_ARRAY_DESCRIPTOR, Height)                                           \
	F(CUDA_ARRAY_DESCRIPTOR, Format)                                           \
	F(CUDA_ARRAY_DESCRIPTOR, NumChannels)                                      \
	S(CUDA_ARRAY3D_DESCRIPTOR)                                                 \
	F(CUDA_ARRAY3D_DESCRIPTOR, Width)                                          \
	F(CUDA_ARRAY3D_DESCRIPTOR, Height)                                         \
	F(CUDA_ARRAY3D_DESCRIPTOR, Depth)                                          \
	F(CUDA_ARRAY3D_DESCRIPTOR, Format)                                         \
	F(CUDA_ARRAY3D_DESCRIPTOR, NumChannels)                                    \
	F(CUDA_ARRAY3D_DESCRIPTOR, Flags)                                          \
	S(CUmemAllocationProp)                                                     \
	F(CUmemAllocationProp, type)                                               \
	F(CUmemAllocationProp, requestedHandleTypes)                               \
	F(CUmemAllocationProp, location)                                           \
	F(CUmemAllocationProp, win32HandleMetaData)                                \
	F(CUmemAllocationProp, allocFlags)

/* One constant as one header sees it; pointers as the integer they hold. */
struct cu_decl_const {
	const char *name;
	long long value;
};

/*
 * One line of layout: a type (field NULL: size and alignment) or one of
 * its fields (size and offset).
 */
struct cu_decl_layout {
	const char *type;
	const char *field;
	size_t size;
	size_t where; /* alignment of a type, offset of a field */
};

#define XS_CU_DECL_ONE(...) +1
#define XS_CU_DECL_NCONSTS (0 XS_CU_DECL_INTS(XS_CU_DECL_ONE) XS_CU_DECL_PTRS(XS_CU_DECL_ONE))
#define XS_CU_DECL_NLAYOUT                                                         \
	(0 XS_CU_DECL_TYPES(XS_CU_DECL_ONE) XS_CU_DECL_STRUCTS(XS_CU_DECL_ONE, XS_CU_DECL_ONE))

/* The tables, in list order: cu_decl_ours.c fills the first, cu_decl_cuda.c the second. */
extern const struct cu_decl_const cu_decl_consts_ours[XS_CU_DECL_NCONSTS];
extern const struct cu_decl_const cu_decl_consts_cuda[XS_CU_DECL_NCONSTS];
extern const struct cu_decl_layout cu_decl_layout_ours[XS_CU_DECL_NLAYOUT];
extern const struct cu_decl_layout cu_decl_layout_cuda[XS_CU_DECL_NLAYOUT];

/*
 * The tables' rows, for both translation units: each expands the lists
 * above with its own header's meaning of every name.
 */
#define XS_CU_DECL_INT_ROW(name) { #name, (long long)(name) },
#define XS_CU_DECL_PTR_ROW(name) { #name, (long long)(uintptr_t)(name) },
#define XS_CU_DECL_TYPE_ROW(type) { #type, NULL, sizeof(type), _Alignof(type) },
#define XS_CU_DECL_FIELD_ROW(type, field)                                          \
	{ #type, #field, sizeof(((type *)0)->field), offsetof(type, field) },

#define XS_CU_DECL_TABLES(suffix)                                                  \
	const struct cu_decl_const cu_decl_consts_##suffix[XS_CU_DECL_NCONSTS] = {  \
		XS_CU_DECL_INTS(XS_CU_DECL_INT_ROW)                                \
		XS_CU_DECL_PTRS(XS_CU_DECL_PTR_ROW)                                \
	};                                                                         \
	const struct cu_decl_layout cu_decl_layout_##suffix[XS_CU_DECL_NLAYOUT] = { \
		XS_CU_DECL_TYPES(XS_CU_DECL_TYPE_ROW)                              \
		XS_CU_DECL_STRUCTS(XS_CU_DECL_TYPE_ROW, XS_CU_DECL_FIELD_ROW)       \
	};

#endif
