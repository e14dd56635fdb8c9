/*
 * test_cu_decl, our side: the constants and layouts of tests/cu_decl.h as
 * src/vendor/cuda/cu_api.h defines them. Kept apart from cu_decl_cuda.c because
 * the two headers declare the same names differently and cannot meet in
 * one translation unit.
 */
#include "vendor/cuda/cu_api.h"

#include "cu_decl.h"

XS_CU_DECL_FNTYPES(XS_CU_DECL_FNTYPE_CHECK)

XS_CU_DECL_TABLES(ours)
