/*
 * Small helpers shared by the benchmarks: sample statistics and a
 * description of the machine, printed with every table because results on
 * these noisy VMs mean little without it.
 */
#ifndef XS_BENCH_UTIL_H
#define XS_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim.h"

static int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile @p (0..100) of @n samples; sorts @v. */
static inline uint64_t bench_pct(uint64_t *v, size_t n, double p)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/*
 * Creates a private simulated device (RR arbitration, all levels) named
 * @prefix-<pid> into @name and keeps it open in *@keep for the run. Returns
 * 0, or prints why not and returns -1.
 */
static inline int bench_private_device(const char *prefix, char *name, size_t len,
				       struct sim_dev **keep)
{
	struct sim_dev_opts opts = { .arbitration = SIM_ARB_RR, .level_max = 3 };

	snprintf(name, len, "%s-%d", prefix, (int)getpid());
	sim_dev_unlink(name);
	if (sim_dev_open(name, &opts, keep)) {
		fprintf(stderr, "%s: cannot create the simulated device in /dev/shm "
			"(or $XSCHED_SIM_DIR)\n", prefix);
		return -1;
	}
	return 0;
}

static inline void bench_close_device(const char *name, struct sim_dev *keep)
{
	sim_dev_close(keep);
	sim_dev_unlink(name);
}

static inline void bench_print_machine(FILE *out)
{
	char model[256] = "unknown", line[512];
	double load[3] = { 0 };
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');

				if (p) {
					snprintf(model, sizeof(model), "%s", p + 2);
					model[strcspn(model, "\n")] = '\0';
				}
				break;
			}
		}
		fclose(f);
	}
	getloadavg(load, 3);
	fprintf(out, "machine: %ld online CPUs (%s), load average %.2f %.2f %.2f\n",
		sysconf(_SC_NPROCESSORS_ONLN), model, load[0], load[1], load[2]);
}

#endif
