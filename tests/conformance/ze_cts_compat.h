/*
 * What oneAPI's Level Zero conformance tests (level-zero-tests) use of the
 * Level Zero API 1.13 to 1.16 that the 1.12 headers they are built with
 * lack; tests/conformance/ze_cts.sh force-includes it into every one of
 * their files (-include), and only there.
 *
 * Design: the tests at the commit ze_cts.sh takes want API 1.16 headers;
 * Debian ships 1.4 (bookworm, libze-dev 1.8.12) and 1.12 (trixie, 1.20.6).
 * Declaring the few missing names here is cheaper than patching the tests'
 * sources, and keeps them unmodified. Nothing here reaches a driver that
 * knows it: the names are the specification's, the values of structure
 * types are placeholders (drivers ignore an extension structure whose type
 * they do not know), and every function declared here is answered by the
 * generated stubs of ze_cts.sh (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE), as
 * is every function the system's loader does not export. Written from the
 * specification's description, not from its headers.
 */
#ifndef XS_ZE_CTS_COMPAT_H
#define XS_ZE_CTS_COMPAT_H

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>
#include <level_zero/zes_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values added to existing enumerations (API 1.13 to 1.16) ---- */

#define ZE_API_VERSION_1_13 ((ze_api_version_t)ZE_MAKE_VERSION(1, 13))
#define ZE_API_VERSION_1_14 ((ze_api_version_t)ZE_MAKE_VERSION(1, 14))
#define ZE_API_VERSION_1_15 ((ze_api_version_t)ZE_MAKE_VERSION(1, 15))
#define ZE_API_VERSION_1_16 ((ze_api_version_t)ZE_MAKE_VERSION(1, 16))

#define ZE_IMAGE_FORMAT_SWIZZLE_D ((ze_image_format_swizzle_t)7)     /* depth */
#define ZE_MEMORY_TYPE_HOST_IMPORTED ((ze_memory_type_t)4)
#define ZE_COMMAND_QUEUE_FLAG_COPY_OFFLOAD_HINT ((ze_command_queue_flag_t)ZE_BIT(2))
#define ZE_IPC_PROPERTY_FLAG_FABRIC_ACCESSIBLE ((ze_ipc_property_flag_t)ZE_BIT(2))

/* Placeholders (see above). */
#define ZE_STRUCTURE_TYPE_EVENT_COUNTER_BASED_DESC ((ze_structure_type_t)0x7f5a0001)
#define ZE_STRUCTURE_TYPE_DEVICE_READONLY_MEMORY_EXT_PROPERTIES ((ze_structure_type_t)0x7f5a0002)

/* ---- read-only memory capability of a device ---- */

typedef enum _ze_device_readonly_memory_capability_t {
	ZE_DEVICE_READONLY_MEMORY_CAPABILITY_NONE = 0,
	ZE_DEVICE_READONLY_MEMORY_CAPABILITY_HINT = 1,
	ZE_DEVICE_READONLY_MEMORY_CAPABILITY_ENFORCED = 2,
	ZE_DEVICE_READONLY_MEMORY_CAPABILITY_FORCE_UINT32 = 0x7fffffff
} ze_device_readonly_memory_capability_t;

typedef struct _ze_device_readonly_memory_ext_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_device_readonly_memory_capability_t readonlyCapability;
} ze_device_readonly_memory_ext_properties_t;

/* ---- counter-based events created without a pool ---- */

typedef uint32_t ze_event_counter_based_flags_t;
typedef enum _ze_event_counter_based_flag_t {
	ZE_EVENT_COUNTER_BASED_FLAG_IMMEDIATE = ZE_BIT(0),
	ZE_EVENT_COUNTER_BASED_FLAG_NON_IMMEDIATE = ZE_BIT(1),
	ZE_EVENT_COUNTER_BASED_FLAG_HOST_VISIBLE = ZE_BIT(2),
	ZE_EVENT_COUNTER_BASED_FLAG_IPC = ZE_BIT(3),
	ZE_EVENT_COUNTER_BASED_FLAG_DEVICE_TIMESTAMP = ZE_BIT(4),
	ZE_EVENT_COUNTER_BASED_FLAG_HOST_TIMESTAMP = ZE_BIT(5),
	ZE_EVENT_COUNTER_BASED_FLAG_FORCE_UINT32 = 0x7fffffff
} ze_event_counter_based_flag_t;

typedef struct _ze_event_counter_based_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	ze_event_counter_based_flags_t flags;
	ze_event_scope_flags_t signal;
	ze_event_scope_flags_t wait;
} ze_event_counter_based_desc_t;

typedef struct _ze_ipc_event_counter_based_handle_t {
	char data[ZE_MAX_IPC_HANDLE_SIZE];
} ze_ipc_event_counter_based_handle_t;

/* ---- functions (all answered by ze_cts.sh's stubs) ---- */

ze_result_t zeEventCounterBasedCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
				      const ze_event_counter_based_desc_t *desc,
				      ze_event_handle_t *phEvent);
ze_result_t zeEventCounterBasedGetDeviceAddress(ze_event_handle_t hEvent,
						uint64_t *completionValue,
						uint64_t *deviceAddress);
ze_result_t zeEventCounterBasedGetIpcHandle(ze_event_handle_t hEvent,
					    ze_ipc_event_counter_based_handle_t *phIpc);
ze_result_t zeEventCounterBasedOpenIpcHandle(ze_context_handle_t hContext,
					     ze_ipc_event_counter_based_handle_t hIpc,
					     ze_event_handle_t *phEvent);
ze_result_t zeEventCounterBasedCloseIpcHandle(ze_event_handle_t hEvent);
ze_result_t zeDeviceGetAggregatedCopyOffloadIncrementValue(ze_device_handle_t hDevice,
							   uint32_t *incrementValue);
ze_result_t zeMemGetIpcHandleWithProperties(ze_context_handle_t hContext, const void *ptr,
					    void *pNext, ze_ipc_mem_handle_t *pIpcHandle);

#ifdef __cplusplus
}
#endif

#endif
