/*
 * The shim's own entry points for the cuGetProcAddress route: every row of
 * cu_functions.def whose @how is not PASS (C hooks and generic hooks),
 * with the route that reaches it, plus the aliases. Built by cu_hooktab.c
 * from the rows, so a hooked function cannot be missing from the route;
 * read by cu_procaddr.c. Free of the driver API's declarations on purpose
 * (see cu_hooktab.c).
 */
#ifndef XS_CU_HOOKTAB_H
#define XS_CU_HOOKTAB_H

#include <stdbool.h>
#include <stddef.h>

struct cu_hooked {
	const char *name;       /* the exported function */
	const char *symbol;     /* what cuGetProcAddress is asked for */
	int version;            /* the first cudaVersion it answers @name at */
	bool per_thread;        /* answered with the per-thread-stream flag */
	void *hook;             /* the shim's entry point of that name */
};

extern const struct cu_hooked cu_hooked[];
extern const size_t cu_nhooked;

#endif
