/*
 * What the per-launch CPU benchmarks share (bench_cuda_launch,
 * bench_cl_enqueue): a child process measures batches of launches and
 * prints one line per batch, "thread wall process" nanoseconds per launch
 * in tenths; the parent alternates native and shim children, collects the
 * lines and prints the table. Thread CPU of the launching thread is the
 * figure the goals are about.
 */
#ifndef XS_BENCH_LAUNCH_H
#define XS_BENCH_LAUNCH_H

#include "bench_util.h"

#include <sys/wait.h>
#include <time.h>

/* Clocks at the start or end of a batch. */
struct bench_clocks {
	uint64_t thread, wall, proc;
};

static inline struct bench_clocks bench_clocks_now(void)
{
	struct bench_clocks c;

	c.proc = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	c.wall = bench_clock_ns(CLOCK_MONOTONIC);
	c.thread = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return c;
}

/* The child's line for a batch of @n launches. */
static inline void bench_batch_print(const struct bench_clocks *a, const struct bench_clocks *b,
				     int n)
{
	printf("%llu %llu %llu\n", (unsigned long long)((b->thread - a->thread) * 10 / (uint64_t)n),
	       (unsigned long long)((b->wall - a->wall) * 10 / (uint64_t)n),
	       (unsigned long long)((b->proc - a->proc) * 10 / (uint64_t)n));
}

struct bench_samples {
	uint64_t *thread, *wall, *proc;
	size_t n, cap;
};

static inline int bench_samples_add(struct bench_samples *s, uint64_t t, uint64_t w, uint64_t p)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		uint64_t *a = realloc(s->thread, cap * sizeof(*a));

		if (!a)
			return -1;
		s->thread = a;
		a = realloc(s->wall, cap * sizeof(*a));
		if (!a)
			return -1;
		s->wall = a;
		a = realloc(s->proc, cap * sizeof(*a));
		if (!a)
			return -1;
		s->proc = a;
		s->cap = cap;
	}
	s->thread[s->n] = t;
	s->wall[s->n] = w;
	s->proc[s->n] = p;
	s->n++;
	return 0;
}

/* Appends a child's lines from @in (closed). */
static inline void bench_samples_read(FILE *in, struct bench_samples *s)
{
	unsigned long long t, w, p;

	while (fscanf(in, "%llu %llu %llu", &t, &w, &p) == 3)
		if (bench_samples_add(s, t, w, p) < 0)
			break;
	fclose(in);
}

static inline void bench_samples_free(struct bench_samples *s)
{
	free(s->thread);
	free(s->wall);
	free(s->proc);
	memset(s, 0, sizeof(*s));
}

/*
 * Runs this program again ("/proc/self/exe") with @argv, the variables
 * @vars (NULL-terminated "NAME=value" strings) added to an environment
 * without LD_PRELOAD and XSCHED_DISABLE, and appends the batches it prints
 * to @out. @who names the child in an error message. Returns 0 or -1.
 */
static inline int bench_run_child(char *const argv[], char *const vars[], const char *who,
				  struct bench_samples *out)
{
	char what[128];
	FILE *in;
	pid_t pid = bench_fork_piped(&in);

	if (pid < 0)
		return -1;
	if (pid == 0)
		bench_exec_self(argv, vars);
	bench_samples_read(in, out);
	snprintf(what, sizeof(what), "%s child", who);
	return bench_wait_child(pid, what);
}

/* Median of the per-launch thread CPU, in ns. */
static inline double bench_thread_p50(struct bench_samples *s)
{
	return bench_pct(s->thread, s->n, 50) / 10.0;
}

static inline void bench_samples_row(const char *name, struct bench_samples *s)
{
	printf("%-8s %8zu  %8.1f %8.1f   %8.1f %8.1f   %8.1f\n", name, s->n,
	       bench_pct(s->thread, s->n, 50) / 10.0, bench_pct(s->thread, s->n, 99) / 10.0,
	       bench_pct(s->wall, s->n, 50) / 10.0, bench_pct(s->wall, s->n, 99) / 10.0,
	       bench_pct(s->proc, s->n, 50) / 10.0);
}

/*
 * The table of one measurement: @what, then native and (if @shim) shim
 * rows per @unit ("launch", "enqueue"); returns the shim's extra median
 * thread CPU (0 without shim).
 */
static inline double bench_samples_table(const char *what, const char *unit, int rounds,
					 int batches, int batch, struct bench_samples *nat,
					 struct bench_samples *shim)
{
	double extra = 0;

	printf("\n%s: %d rounds x %d batches x %d %ss per mode\n", what, rounds, batches, batch,
	       unit);
	printf("ns per %-8s batches  thread-p50 thread-p99   wall-p50  wall-p99   process-p50\n",
	       unit);
	bench_samples_row("native", nat);
	if (shim) {
		double base = bench_thread_p50(nat);

		bench_samples_row("shim", shim);
		extra = bench_thread_p50(shim) - base;
		printf("shim extra CPU per %s on the app thread (median): %.1f ns, ratio %.2f\n",
		       unit, extra, bench_thread_p50(shim) / (base > 0 ? base : 1));
	}
	return extra;
}

#endif
