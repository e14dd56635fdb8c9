/*
 * The Level Zero functions xsched calls itself, resolved from the real
 * loader at run time (never linked): the shim and the `ze` XAL backend
 * reach them through typed pointers (struct xal_ze_fns), whose types come
 * from the Level Zero headers' own prototypes.
 */
#ifndef XS_VENDOR_ZE_FNS_H
#define XS_VENDOR_ZE_FNS_H

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

/* Every Level Zero function xsched calls itself. */
#define XS_ZE_FUNCTIONS(X)                                                         \
	X(zeCommandListAppendBarrier)                                              \
	X(zeCommandListAppendEventReset)                                           \
	X(zeCommandListAppendImageCopy)                                            \
	X(zeCommandListAppendImageCopyFromMemory)                                  \
	X(zeCommandListAppendImageCopyFromMemoryExt)                               \
	X(zeCommandListAppendImageCopyRegion)                                      \
	X(zeCommandListAppendImageCopyToMemory)                                    \
	X(zeCommandListAppendImageCopyToMemoryExt)                                 \
	X(zeCommandListAppendLaunchCooperativeKernel)                              \
	X(zeCommandListAppendLaunchKernel)                                         \
	X(zeCommandListAppendLaunchKernelIndirect)                                 \
	X(zeCommandListAppendLaunchMultipleKernelsIndirect)                        \
	X(zeCommandListAppendMemAdvise)                                            \
	X(zeCommandListAppendMemoryCopy)                                           \
	X(zeCommandListAppendMemoryCopyFromContext)                                \
	X(zeCommandListAppendMemoryCopyRegion)                                     \
	X(zeCommandListAppendMemoryFill)                                           \
	X(zeCommandListAppendMemoryPrefetch)                                       \
	X(zeCommandListAppendMemoryRangesBarrier)                                  \
	X(zeCommandListAppendQueryKernelTimestamps)                                \
	X(zeCommandListAppendSignalEvent)                                          \
	X(zeCommandListAppendWaitOnEvents)                                         \
	X(zeCommandListAppendWriteGlobalTimestamp)                                 \
	X(zeCommandListClose)                                                      \
	X(zeCommandListCreate)                                                     \
	X(zeCommandListCreateImmediate)                                            \
	X(zeCommandListDestroy)                                                    \
	X(zeCommandListReset)                                                      \
	X(zeCommandQueueCreate)                                                    \
	X(zeCommandQueueDestroy)                                                   \
	X(zeCommandQueueExecuteCommandLists)                                       \
	X(zeCommandQueueSynchronize)                                               \
	X(zeDeviceGetProperties)                                                   \
	X(zeEventCreate)                                                           \
	X(zeEventDestroy)                                                          \
	X(zeEventHostReset)                                                        \
	X(zeEventHostSignal)                                                       \
	X(zeEventHostSynchronize)                                                  \
	X(zeEventPoolCreate)                                                       \
	X(zeEventPoolDestroy)                                                      \
	X(zeEventQueryKernelTimestamp)                                             \
	X(zeEventQueryStatus)                                                      \
	X(zeFenceCreate)                                                           \
	X(zeFenceDestroy)                                                          \
	X(zeFenceHostSynchronize)                                                  \
	X(zeFenceQueryStatus)                                                      \
	X(zeFenceReset)                                                            \
	X(zeKernelCreate)                                                          \
	X(zeKernelDestroy)                                                         \
	X(zeKernelGetProperties)                                                   \
	X(zeKernelSetArgumentValue)                                                \
	X(zeKernelSetCacheConfig)                                                  \
	X(zeKernelSetGlobalOffsetExp)                                              \
	X(zeKernelSetGroupSize)                                                    \
	X(zeKernelSetIndirectAccess)                                               \
	X(zeMemFreeExt)                                                            \
	X(zeModuleDestroy)                                                         \
	X(zetCommandListAppendMetricMemoryBarrier)                                 \
	X(zetCommandListAppendMetricQueryBegin)                                    \
	X(zetCommandListAppendMetricQueryEnd)                                      \
	X(zetCommandListAppendMetricStreamerMarker)

#endif
