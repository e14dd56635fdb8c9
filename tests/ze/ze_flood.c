/*
 * A Level Zero workload for test_identity: floods an immediate command
 * list of the first device with sf_spin kernels of CMD_US microseconds,
 * eight at a time (the last signals an event it waits for), for SECONDS
 * seconds (its queue stays ready throughout).
 * Scheduling comes from the shim (LD_PRELOAD) and the XSCHED_* variables.
 *
 * Usage: ze_flood SECONDS CMD_US
 */
#include "ze_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct zu z;
	ze_command_list_handle_t l;
	ze_event_pool_handle_t pool;
	ze_event_handle_t done;
	double end;
	uint64_t ns;
	ze_result_t r;
	int i;

	if (argc != 3)
		return 2;
	end = now_s() + atof(argv[1]);
	ns = (uint64_t)atoll(argv[2]) * 1000;
	if ((r = zu_open(&z)) != ZE_RESULT_SUCCESS ||
	    (r = zu_imm(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &l)) != ZE_RESULT_SUCCESS ||
	    (r = zu_pool(&z, 1, 0, &pool)) != ZE_RESULT_SUCCESS ||
	    (r = zu_event(pool, 0, &done)) != ZE_RESULT_SUCCESS) {
		fprintf(stderr, "ze_flood: %s\n", zu_name(r));
		return 1;
	}
	while (now_s() < end) {
		for (i = 0; i < 8 && r == ZE_RESULT_SUCCESS; i++)
			r = zu_spin(&z, l, ns, i == 7 ? done : NULL, 0, NULL);
		if (r == ZE_RESULT_SUCCESS)
			r = zeEventHostSynchronize(done, UINT64_MAX);
		if (r == ZE_RESULT_SUCCESS)
			r = zeEventHostReset(done);
		if (r != ZE_RESULT_SUCCESS) {
			fprintf(stderr, "ze_flood: %s\n", zu_name(r));
			return 1;
		}
	}
	zeEventDestroy(done);
	zeEventPoolDestroy(pool);
	zeCommandListDestroy(l);
	zu_close(&z);
	return 0;
}
