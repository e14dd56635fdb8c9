/*
 * test_cu_decl, NVIDIA's side: the constants and layouts of tests/cu_decl.h
 * as cuda.h defines them, and, at compile time, every prototype of
 * src/vendor/cuda/cu_list.h against cuda.h's declaration of the same name.
 *
 * Built with -D__CUDA_API_VERSION_INTERNAL, the switch NVIDIA builds the
 * driver with: cuda.h then defines none of its renaming macros (cuMemAlloc
 * to cuMemAlloc_v2, cuLaunchKernel to cuLaunchKernel_ptsz, ...) and
 * declares every exported name under its own name, old versions and
 * per-thread variants included, which is how cu_list.h names them. That
 * the switch did its job is checked below too, name by name: a macro left
 * over would make a name expand to a different spelling.
 *
 * The parameter types of a cu_list.h line are read here with cuda.h's
 * typedefs, so this compares our choice of type for each parameter (and
 * their number and order) with NVIDIA's; whether our typedefs have the
 * layout of cuda.h's is cu_decl_ours.c's and the runtime test's part.
 */
#include <cuda.h>

#include "vendor/cuda/cu_list.h"

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

#define CU_DECL_CHECK_FN(name, params)                                             \
	CU_DECL_NOT_RENAMED(#name, CU_DECL_XSTR(name))                             \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), CUresult(*) params), \
		       "cu_list.h: " #name #params " is not cuda.h's prototype");
XS_CU_FUNCTIONS(CU_DECL_CHECK_FN)

#define CU_DECL_CHECK_PTSZ(variant, base)                                          \
	CU_DECL_NOT_RENAMED(#variant, CU_DECL_XSTR(variant))                       \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&variant), __typeof__(&base)), \
		       "cu_list.h: cuda.h's " #variant " has not the prototype of " #base);
XS_CU_PTSZ(CU_DECL_CHECK_PTSZ)

/*
 * cuGetProcAddress answers: both functions of a line have one prototype,
 * and no line starts at a version above the toolkit's.
 */
#define CU_DECL_CHECK_PROC(symbol, version, fn, fn_pt)                             \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn), __typeof__(&fn_pt)), \
		       "cu_list.h: " symbol ": " #fn " and " #fn_pt " differ");   \
	_Static_assert((version) <= CUDA_VERSION,                                  \
		       "cu_list.h: " symbol " at " #version " is newer than cuda.h");
XS_CU_PROCS(CU_DECL_CHECK_PROC)

XS_CU_DECL_FNTYPES(XS_CU_DECL_FNTYPE_CHECK)

XS_CU_DECL_TABLES(cuda)
