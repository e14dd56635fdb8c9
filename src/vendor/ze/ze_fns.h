/*
 * The Level Zero headers as xsched includes them. The functions xsched
 * calls itself are the CALL and HOOK rows of ze_functions.def, resolved
 * from the real loader at run time (never linked): the shim and the `ze`
 * XAL backend reach them through typed pointers (struct xal_ze_fns,
 * src/xal/xal_ze.h), whose types come from these headers' prototypes.
 */
#ifndef XS_VENDOR_ZE_FNS_H
#define XS_VENDOR_ZE_FNS_H

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#endif
