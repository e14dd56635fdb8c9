/*
 * llm_work: the LLM-serving workload of bench/scenarios/llm.sh, shared by
 * its two programs: cu_llm (a plain CUDA driver-API application) and
 * xs_llm (the same through the public xsched API on the simulated XPU).
 * This file holds everything but the device: the options, the request
 * arrivals, the serving loop, the offline flood and the result line; each
 * program is one backend that fills a struct llm_dev_ops.
 *
 * Two roles:
 *  - server (--server): requests arrive as a Poisson process (--rate-per-s,
 *    exponential inter-arrival times drawn from --seed) and are served one
 *    at a time in arrival order. A request is a prefill (--prefill-kernels
 *    kernels, each uniformly --prefill-us LO,HI) and --decode-steps steps;
 *    a step is --step-kernels kernels of --step-us launched together (one
 *    CUDA graph in cu_llm), a wait for them, then host work uniformly
 *    --gap-us LO,HI (a busy loop: sampling is CPU work, and a sleep would
 *    overshoot by tens of us). TTFT = arrival to the end of the first step
 *    (queueing included); TPOT = (end of last step - end of first) /
 *    (steps - 1).
 *  - offline (--offline): keeps --inflight submissions on the device for
 *    --duration-s (or until SIGTERM); a submission is one kernel of
 *    uniformly --offline-min-us..--offline-max-us, or with --graphs one
 *    group of --graph-kernels kernels of --graph-kernel-us (a CUDA graph in
 *    cu_llm).
 *
 * Benchmarks may end on a failed call (a failed call voids the
 * measurement): the backends' operations exit the program with a message
 * instead of returning errors.
 */
#ifndef XS_BENCH_LLM_WORK_H
#define XS_BENCH_LLM_WORK_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#define LLM_MAX_INFLIGHT 8

enum llm_role {
	LLM_SERVER = 1,
	LLM_OFFLINE = 2,
};

struct llm_opts {
	enum llm_role role;
	double rate_per_s;                  /* server: mean arrivals per second */
	unsigned seed;
	int requests, warmup;               /* server: measured, then not counted first */
	uint64_t duration_ns;               /* 0: none (server: until @requests) */
	int prefill_kernels;
	uint64_t prefill_min_ns, prefill_max_ns;
	int decode_steps, step_kernels;
	uint64_t step_kernel_ns;
	uint64_t gap_min_ns, gap_max_ns;
	uint64_t offline_min_ns, offline_max_ns;
	int inflight;                       /* offline: submissions in flight */
	bool graphs;                        /* offline: groups instead of kernels */
	int graph_kernels;
	uint64_t graph_kernel_ns;
	const char *ttft_file, *tpot_file, *trace_file;
};

/* The getopt_long() entries of llm_option(), to put first in a table. */
#define LLM_LONGOPTS                                                           \
	{ "server", no_argument, NULL, 1000 },                                 \
	{ "offline", no_argument, NULL, 1001 },                                \
	{ "rate-per-s", required_argument, NULL, 1002 },                       \
	{ "seed", required_argument, NULL, 1003 },                             \
	{ "requests", required_argument, NULL, 1004 },                         \
	{ "warmup", required_argument, NULL, 1005 },                           \
	{ "duration-s", required_argument, NULL, 1006 },                       \
	{ "prefill-kernels", required_argument, NULL, 1007 },                  \
	{ "prefill-us", required_argument, NULL, 1008 },                       \
	{ "decode-steps", required_argument, NULL, 1009 },                     \
	{ "step-kernels", required_argument, NULL, 1010 },                     \
	{ "step-us", required_argument, NULL, 1011 },                          \
	{ "gap-us", required_argument, NULL, 1012 },                           \
	{ "offline-min-us", required_argument, NULL, 1013 },                   \
	{ "offline-max-us", required_argument, NULL, 1014 },                   \
	{ "inflight", required_argument, NULL, 1015 },                         \
	{ "graphs", no_argument, NULL, 1016 },                                 \
	{ "graph-kernels", required_argument, NULL, 1017 },                    \
	{ "graph-kernel-us", required_argument, NULL, 1018 },                  \
	{ "ttft-file", required_argument, NULL, 1019 },                        \
	{ "tpot-file", required_argument, NULL, 1020 },                        \
	{ "trace-file", required_argument, NULL, 1021 }

/* Usage lines of those options, for a program's usage(). */
#define LLM_USAGE                                                              \
	"  --server [--rate-per-s R] [--requests N] [--warmup W] [--duration-s S]\n" \
	"      [--prefill-kernels N] [--prefill-us LO,HI] [--decode-steps N]\n"   \
	"      [--step-kernels N] [--step-us T] [--gap-us LO,HI]\n"               \
	"      [--ttft-file F] [--tpot-file F]\n"                                  \
	"  --offline [--duration-s S] [--offline-min-us T] [--offline-max-us T]\n"  \
	"      [--inflight N] [--graphs [--graph-kernels N] [--graph-kernel-us T]]\n" \
	"      [--trace-file F]\n"                                                 \
	"  --seed S\n"

/* The defaults: 14 requests/s, 100 requests, prefill 4 x 0.5..2 ms, 32
 * steps of 30 x 20 us, gaps 50..150 us; offline 2..20 ms, two in flight,
 * graphs of 10 x 2 ms. */
void llm_defaults(struct llm_opts *o);

/* Takes option @c of LLM_LONGOPTS with @arg; false if @c is none of them
 * or @arg is malformed. */
bool llm_option(struct llm_opts *o, int c, const char *arg);

/* True when @o names a role and its values make sense. */
bool llm_valid(const struct llm_opts *o);

struct llm_dev;

/*
 * A backend's operations, all called on the program's one thread, in the
 * order of a single stream: each runs after everything launched before.
 * They end the program on a failure.
 */
struct llm_dev_ops {
	/* Launches one kernel of @ns (asynchronous). */
	void (*kernel)(struct llm_dev *d, uint64_t ns);
	/* Launches one decode step: o->step_kernels kernels of
	 * o->step_kernel_ns (asynchronous). */
	void (*step)(struct llm_dev *d);
	/* Launches one offline group: o->graph_kernels kernels of
	 * o->graph_kernel_ns (asynchronous). */
	void (*group)(struct llm_dev *d);
	/* Remembers the end of what was launched so far as mark @slot
	 * (0 <= @slot < LLM_MAX_INFLIGHT), replacing the slot's previous mark. */
	void (*mark)(struct llm_dev *d, int slot);
	/* Waits until mark @slot completed. */
	void (*wait)(struct llm_dev *d, int slot);
	/* Waits until everything launched completed. */
	void (*sync)(struct llm_dev *d);
};

/* The base of a backend's device object: its operations first. */
struct llm_dev {
	const struct llm_dev_ops *ops;
};

/*
 * SIGTERM and SIGINT end the run at the next request or submission (what
 * was launched completes; the result line is printed as usual). The flag
 * is atomic: the handler may run on any thread (an agent's, in xs_llm).
 */
void llm_handle_signals(void);

/*
 * Runs @o's role on @d and prints its result line on stdout (and writes
 * @o's files), prefixing messages with @prog. Returns 0, or -1 when a
 * file could not be written or memory ran out (said on stderr).
 *
 * Server line: requests= unserved= ttft_p50_us= ttft_p90_us= ttft_p99_us=
 * ttft_max_us= tpot_p50_us= tpot_p90_us= tpot_p99_us= tpot_max_us=
 * busy_pct= commands= device_ms= elapsed_ms= t0_ns= t1_ns=
 * requests = measured requests served to their last step; unserved =
 * measured requests that arrived before the end (--duration-s, or a stop)
 * but were not served to the end: their TTFT is in the TTFT figures,
 * exact if their first step completed, else end - arrival, a lower bound
 * (so a server that falls behind is not flattered by leaving out those
 * that waited longest); TPOT is over the served ones. busy_pct = time
 * serving (first prefill launch to last step) / the window; the window
 * t0..t1 runs from the first measured arrival to the end. --ttft-file
 * and --tpot-file get those values in us, one per line.
 * Offline line: requests=0 commands= device_ms= elapsed_ms=
 * device_ms_per_s= cmd_per_s= t0_ns= t1_ns= (device time nominal: the
 * kernels' durations; --trace-file: "end_ns device_us" per completed
 * submission).
 * Times are CLOCK_REALTIME (comparable between processes).
 */
int llm_run(struct llm_dev *d, const struct llm_opts *o, const char *prog);

#endif
