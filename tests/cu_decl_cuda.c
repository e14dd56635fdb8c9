/*
 * test_cu_decl, NVIDIA's side: the constants and layouts of tests/cu_decl.h
 * as cuda.h defines them, and, at compile time, every row of
 * src/vendor/cuda/cu_functions.def against cuda.h and cudaTypedefs.h.
 *
 * Built with -D__CUDA_API_VERSION_INTERNAL, the switch NVIDIA builds the
 * driver with: cuda.h then defines none of its renaming macros (cuMemAlloc
 * to cuMemAlloc_v2, cuLaunchKernel to cuLaunchKernel_ptsz, ...) and
 * declares every exported name under its own name, old versions and
 * per-thread variants included, which is how the rows name them. That the
 * switch did its job is checked below too, name by name: a macro left
 * over would make a name expand to a different spelling.
 *
 * The parameter types of a XS_CU_FN row are read here with cuda.h's typedefs,
 * so this compares our choice of type for each parameter (and their number
 * and order) with NVIDIA's; whether our typedefs have the layout of
 * cuda.h's is cu_decl_ours.c's and the runtime test's part. Each row's
 * route is checked against cudaTypedefs.h: PFN_<symbol>_v<version> (with
 * the row's _ptsz or _ptds) must exist and be a pointer to the row's
 * function as cuda.h declares it, so a symbol, a version or a per-thread
 * kind written wrong fails the build of the test.
 */
#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

#include "cu_decl.h"

#define CU_DECL_STR(x) #x
#define CU_DECL_XSTR(x) CU_DECL_STR(x)

/*
 * Fails when cuda.h still defines a function's name as a macro: every
 * renaming macro of cuda.h appends a suffix, so the expanded spelling is
 * longer. The caller stringifies the name both ways, since an argument
 * passed on to another macro arrives expanded.
 */
#define CU_DECL_NOT_RENAMED(str, expanded)                                         \
	_Static_assert(sizeof(expanded) == sizeof(str), "cuda.h renames " str " to " expanded);

/* The route: NVIDIA's function pointer type of that symbol and version. */
#define CU_DECL_ROUTE(name, pfn)                                                   \
	_Static_assert(__builtin_types_compatible_p(pfn, __typeof__(&name)),       \
		       #name ": the route's " #pfn " is not its type");

#define XS_CU_FN(name, how, arg, symbol, version, params)                             \
	CU_DECL_NOT_RENAMED(#name, CU_DECL_XSTR(name))                             \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), CUresult(*) params), \
		       "cu_functions.def: " #name #params " is not cuda.h's prototype"); \
	CU_DECL_ROUTE(name, PFN_##symbol##_v##version)
#define XS_CU_FN_PT(name, how, arg, symbol, version, pt, base)                        \
	CU_DECL_NOT_RENAMED(#name, CU_DECL_XSTR(name))                             \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), __typeof__(&base)), \
		       "cu_functions.def: cuda.h's " #name " has not the prototype of " #base); \
	CU_DECL_ROUTE(name, PFN_##symbol##_v##version##_##pt)
#define XS_CU_EX(name, how, arg, symbol, version)                                     \
	CU_DECL_NOT_RENAMED(#name, CU_DECL_XSTR(name))                             \
	CU_DECL_ROUTE(name, PFN_##symbol##_v##version)
#define XS_CU_EX_PT(name, how, arg, symbol, version, pt)                              \
	CU_DECL_NOT_RENAMED(#name, CU_DECL_XSTR(name))                             \
	CU_DECL_ROUTE(name, PFN_##symbol##_v##version##_##pt)
/* An alias renames a symbol: its version is no PFN type's, but not newer than cuda.h. */
#define XS_CU_ALIAS(symbol, version, name)                                            \
	_Static_assert((version) <= CUDA_VERSION,                                  \
		       "cu_functions.def: " #symbol " at " #version " is newer than cuda.h");
#include "vendor/cuda/cu_functions.def"

XS_CU_DECL_FNTYPES(XS_CU_DECL_FNTYPE_CHECK)

XS_CU_DECL_TABLES(cuda)
