/*
 * What the driver-API test programs (tests/cuda/) share: a call that must
 * succeed, else the program says which, where, and exits 1 (its output is
 * compared natively and under the shim, so the line is the report).
 */
#ifndef XS_TESTS_CU_CHECK_H
#define XS_TESTS_CU_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                   \
	do {                                                                       \
		CUresult rc_ = (call);                                             \
		if (rc_ != CUDA_SUCCESS) {                                         \
			printf("error %s = %d at line %d\n", #call, rc_, __LINE__); \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

#endif
