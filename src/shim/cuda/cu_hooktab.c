/*
 * The table of cu_hooktab.h, expanded from cu_functions.def. A hook's
 * address is taken by name, so each hooked row must have a definition in
 * the shim (a C hook, or a generic one of cu_passes.S): a HOOK row without
 * one fails the link (-Wl,--no-undefined), as no trampoline stands in for
 * it. This file includes no declaration of the driver API, so that every
 * row can be declared here alike, as a function of no particular type
 * whose address alone is taken (it is never called from here).
 */
#include "shim/cuda/cu_hooktab.h"

/* Every row's name, declared alike. */
#define XS_CU_FN(name, ...) void name(void);
#define XS_CU_FN_PT(name, ...) void name(void);
#define XS_CU_EX(name, ...) void name(void);
#define XS_CU_EX_PT(name, ...) void name(void);
#include "vendor/cuda/cu_functions.def"

#define CU_H_PASS(name, symbol, version, pt)
#define CU_H_HOOK(name, symbol, version, pt) { #name, #symbol, version, pt, (void *)name },
#define CU_H_FLUSH(name, symbol, version, pt) CU_H_HOOK(name, symbol, version, pt)
#define CU_H_TRANSLATE(name, symbol, version, pt) CU_H_HOOK(name, symbol, version, pt)
#define CU_H_SYNC(name, symbol, version, pt) CU_H_HOOK(name, symbol, version, pt)
#define CU_H_GRAPH(name, symbol, version, pt) CU_H_HOOK(name, symbol, version, pt)

const struct cu_hooked cu_hooked[] = {
#define XS_CU_FN(name, how, arg, symbol, version, params) CU_H_##how(name, symbol, version, 0)
#define XS_CU_FN_PT(name, how, arg, symbol, version, ...) CU_H_##how(name, symbol, version, 1)
#define XS_CU_EX(name, how, arg, symbol, version) CU_H_##how(name, symbol, version, 0)
#define XS_CU_EX_PT(name, how, arg, symbol, version, pt) CU_H_##how(name, symbol, version, 1)
/* An alias answers with its row's function, which may be a trampoline. */
#define XS_CU_ALIAS(symbol, version, name) { #name, #symbol, version, 0, (void *)name },
#include "vendor/cuda/cu_functions.def"
};

const size_t cu_nhooked = sizeof(cu_hooked) / sizeof(cu_hooked[0]);
