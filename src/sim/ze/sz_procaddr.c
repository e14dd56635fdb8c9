/*
 * The only exports of the simulated Level Zero driver: the
 * ze/zet/zesGet*ProcAddrTable functions through which the loader finds a
 * driver's functions (sz_tables.def lists them, sz_api.def what goes in).
 *
 * Design: one getter per table, generated; each checks the version the
 * loader asks for and fills the table field by field from sz_api.def,
 * zeroing the rest first. The loader passes its own API version; as real
 * drivers do, the driver refuses (ZE_RESULT_ERROR_UNSUPPORTED_VERSION) a
 * loader of another major version or an older minor one, whose tables
 * would be shorter than ours. The tables hold pointers to this library's
 * own functions (it is linked with -Bsymbolic), never to the loader's
 * same-named exports.
 */
#include "sim/ze/sz_internal.h"

#include <string.h>

/* One enumerator and one typedef per table, named by prefix and name. */
enum sz_tab {
#define SZ_TABLE(prefix, name, type) SZ_T_##prefix##name,
#include "sim/ze/sz_tables.def"
#undef SZ_TABLE
	SZ_T_COUNT
};

#define SZ_TABLE(prefix, name, type) typedef type sz_tab_##prefix##name##_t;
#include "sim/ze/sz_tables.def"
#undef SZ_TABLE

_Static_assert(SZ_T_COUNT == 53, "the 1.8 loader knows 53 table getters");

/* Fills table @tab (zeroed) with the functions sz_api.def assigns it. */
static void sz_fill(enum sz_tab tab, void *table)
{
#define SZ_FN(tag, field, fn)                                                \
	if (tab == SZ_T_##tag)                                               \
		((sz_tab_##tag##_t *)table)->field = fn;
#include "sim/ze/sz_api.def"
#undef SZ_FN
}

static ze_result_t sz_get_table(ze_api_version_t version, enum sz_tab tab, void *table,
				size_t size)
{
	if (!table)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(SZ_API_VERSION) ||
	    ZE_MINOR_VERSION(version) < ZE_MINOR_VERSION(SZ_API_VERSION))
		return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
	memset(table, 0, size);
	sz_fill(tab, table);
	return ZE_RESULT_SUCCESS;
}

#define SZ_TABLE(prefix, name, type)                                         \
	SZ_EXPORT ze_result_t ZE_APICALL prefix##Get##name##ProcAddrTable(   \
		ze_api_version_t version, type *pDdiTable)                   \
	{                                                                    \
		return sz_get_table(version, SZ_T_##prefix##name, pDdiTable, \
				    sizeof(*pDdiTable));                     \
	}
#include "sim/ze/sz_tables.def"
#undef SZ_TABLE
