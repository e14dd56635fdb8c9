/*
 * llm_work.c: the device-independent half of cu_llm and xs_llm (see
 * llm_work.h): options, Poisson arrivals, the serving loop, the offline
 * flood and their result lines. Every random stream has its own erand48()
 * state seeded from --seed, so that the arrivals (and the prefill sizes
 * and gaps) are the same in every configuration of a scenario whatever
 * else each configuration draws.
 */
#include "llm_work.h"
#include "bench_util.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>

static _Atomic bool llm_stop;

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&llm_stop, true);
}

void llm_handle_signals(void)
{
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
}

void llm_defaults(struct llm_opts *o)
{
	*o = (struct llm_opts){
		.rate_per_s = 14, .seed = 1, .requests = 100,
		.prefill_kernels = 4, .prefill_min_ns = 500000, .prefill_max_ns = 2000000,
		.decode_steps = 32, .step_kernels = 30, .step_kernel_ns = 20000,
		.gap_min_ns = 50000, .gap_max_ns = 150000,
		.offline_min_ns = 2000000, .offline_max_ns = 20000000, .inflight = 2,
		.graph_kernels = 10, .graph_kernel_ns = 2000000,
	};
}

/* Microseconds (> 0 unless @zero_ok, below an hour) into *@ns. */
static bool parse_us(const char *arg, uint64_t *ns, bool zero_ok)
{
	char *end;
	double us = strtod(arg, &end);

	if (end == arg || *end || !(us >= 0) || (!zero_ok && us == 0) || us > 3.6e9)
		return false;
	*ns = (uint64_t)(us * 1e3);
	return true;
}

/* "LO,HI" microseconds, 0 <= LO <= HI, HI > 0. */
static bool parse_range(const char *arg, uint64_t *lo, uint64_t *hi)
{
	char buf[64], *comma;

	if (strlen(arg) >= sizeof(buf))
		return false;
	strcpy(buf, arg);
	comma = strchr(buf, ',');
	if (!comma)
		return false;
	*comma = '\0';
	return parse_us(buf, lo, true) && parse_us(comma + 1, hi, false) && *lo <= *hi;
}

static bool parse_int(const char *arg, int *v)
{
	char *end;
	long x = strtol(arg, &end, 10);

	if (end == arg || *end || x < 0 || x > 100000000)
		return false;
	*v = (int)x;
	return true;
}

bool llm_option(struct llm_opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case 1000: o->role = LLM_SERVER; return true;
	case 1001: o->role = LLM_OFFLINE; return true;
	case 1002:
		o->rate_per_s = strtod(arg, &end);
		return end != arg && !*end && o->rate_per_s > 0 && o->rate_per_s < 1e6;
	case 1003:
		o->seed = (unsigned)strtoul(arg, &end, 10);
		return end != arg && !*end;
	case 1004: return parse_int(arg, &o->requests);
	case 1005: return parse_int(arg, &o->warmup);
	case 1006: {
		double s = strtod(arg, &end);

		if (end == arg || *end || !(s > 0) || s > 1e6)
			return false;
		o->duration_ns = (uint64_t)(s * 1e9);
		return true;
	}
	case 1007: return parse_int(arg, &o->prefill_kernels);
	case 1008: return parse_range(arg, &o->prefill_min_ns, &o->prefill_max_ns);
	case 1009: return parse_int(arg, &o->decode_steps);
	case 1010: return parse_int(arg, &o->step_kernels);
	case 1011: return parse_us(arg, &o->step_kernel_ns, false);
	case 1012: return parse_range(arg, &o->gap_min_ns, &o->gap_max_ns);
	case 1013: return parse_us(arg, &o->offline_min_ns, false);
	case 1014: return parse_us(arg, &o->offline_max_ns, false);
	case 1015: return parse_int(arg, &o->inflight);
	case 1016: o->graphs = true; return true;
	case 1017: return parse_int(arg, &o->graph_kernels);
	case 1018: return parse_us(arg, &o->graph_kernel_ns, false);
	case 1019: o->ttft_file = arg; return true;
	case 1020: o->tpot_file = arg; return true;
	case 1021: o->trace_file = arg; return true;
	default: return false;
	}
}

bool llm_valid(const struct llm_opts *o)
{
	if (o->role == LLM_SERVER)
		return o->requests >= 1 && o->decode_steps >= 1 && o->step_kernels >= 1;
	if (o->role == LLM_OFFLINE)
		return o->inflight >= 1 && o->inflight <= LLM_MAX_INFLIGHT &&
		       o->offline_min_ns <= o->offline_max_ns && o->graph_kernels >= 1;
	return false;
}

/* A random stream of its own for each use, from --seed. */
static void rng_init(unsigned short x[3], unsigned seed, unsigned short stream)
{
	x[0] = (unsigned short)(0x330e ^ stream);
	x[1] = (unsigned short)seed;
	x[2] = (unsigned short)(seed >> 16);
}

static uint64_t uniform_ns(unsigned short x[3], uint64_t lo, uint64_t hi)
{
	return lo + (uint64_t)((double)(hi - lo) * erand48(x));
}

/* An exponential inter-arrival time of mean 1/rate, in ns. */
static uint64_t exp_ns(unsigned short x[3], double rate)
{
	return (uint64_t)(-log(1.0 - erand48(x)) / rate * 1e9);
}

/* Busy until CLOCK_REALTIME @until: host work, not a sleep. */
static void host_work_until(uint64_t until)
{
	while (bench_wall_ns() < until)
		;
}

static bool out_of_time(uint64_t end)
{
	return atomic_load(&llm_stop) || bench_wall_ns() >= end;
}

/* What the serving loop measured; ttft has room for every request. */
struct serve_stats {
	uint64_t *ttft, *tpot;
	int nttft, ntpot;       /* TTFTs (served and lower bounds), TPOTs (served) */
	int unserved;
	uint64_t busy_ns, commands, device_ns, t0, t1;
};

/*
 * One request: prefill, then the steps. Returns true when every step
 * completed; *@first is the end of the first step (0 if the run ended
 * before it), *@last that of the last step that completed, *@pre_ns the
 * prefill's device time.
 */
static bool serve_one(struct llm_dev *d, const struct llm_opts *o, unsigned short pre[3],
		      unsigned short gap[3], uint64_t end, uint64_t *first, uint64_t *last,
		      uint64_t *pre_ns)
{
	*first = *last = *pre_ns = 0;
	for (int k = 0; k < o->prefill_kernels; k++) {
		uint64_t ns = uniform_ns(pre, o->prefill_min_ns, o->prefill_max_ns);

		d->ops->kernel(d, ns);
		*pre_ns += ns;
	}
	for (int s = 0; s < o->decode_steps; s++) {
		/* No wait between the prefill and the first step: the first
		 * token is the first step's. */
		d->ops->step(d);
		d->ops->sync(d);
		*last = bench_wall_ns();
		if (s == 0)
			*first = *last;
		if (s == o->decode_steps - 1)
			break;
		if (out_of_time(end))
			return false;
		host_work_until(*last + uniform_ns(gap, o->gap_min_ns, o->gap_max_ns));
	}
	return true;
}

/*
 * The server: requests in arrival order until --requests were served
 * after --warmup, the end of --duration-s or a stop. A request cut by
 * the end counts as unserved, with its TTFT if it had one; so does every
 * measured request that arrived before the end and was never started,
 * with TTFT t1 - arrival, a lower bound. So the TTFT figures never leave
 * out the requests that waited longest.
 */
static void serve(struct llm_dev *d, const struct llm_opts *o, struct serve_stats *st)
{
	unsigned short arr_x[3], pre_x[3], gap_x[3];
	uint64_t start = bench_wall_ns(), end, arr;
	uint64_t step_ns = (uint64_t)o->decode_steps * (uint64_t)o->step_kernels * o->step_kernel_ns;
	int total = o->warmup + o->requests, i;

	rng_init(arr_x, o->seed, 1);
	rng_init(pre_x, o->seed, 2);
	rng_init(gap_x, o->seed, 3);
	end = o->duration_ns ? start + o->duration_ns : UINT64_MAX;
	st->t0 = start;
	arr = start + exp_ns(arr_x, o->rate_per_s);
	for (i = 0; i < total; i++, arr += exp_ns(arr_x, o->rate_per_s)) {
		uint64_t begin, first, last, pre_ns;
		bool measured = i >= o->warmup;

		if (arr >= end || atomic_load(&llm_stop))
			break;
		if (i == o->warmup)
			st->t0 = arr;
		bench_sleep_until_wall(arr);
		begin = bench_wall_ns();
		if (!serve_one(d, o, pre_x, gap_x, end, &first, &last, &pre_ns)) {
			/* Cut after its first token: that TTFT is exact.
			 * Else the loop below takes it (a lower bound). */
			if (measured && first) {
				st->ttft[st->nttft++] = first - arr;
				st->unserved++;
				i++;
				arr += exp_ns(arr_x, o->rate_per_s);
			}
			break;
		}
		if (!measured)
			continue;
		st->ttft[st->nttft++] = first - arr;
		st->tpot[st->ntpot++] = o->decode_steps > 1 ?
			(last - first) / (uint64_t)(o->decode_steps - 1) : 0;
		st->busy_ns += last - begin;
		st->commands += (uint64_t)o->prefill_kernels +
				(uint64_t)o->decode_steps * (uint64_t)o->step_kernels;
		st->device_ns += pre_ns + step_ns;
	}
	d->ops->sync(d);
	st->t1 = bench_wall_ns();
	/* Those that arrived before the end (after it, the server is closed). */
	if (end > st->t1)
		end = st->t1;
	for (; i < total && arr < end; i++, arr += exp_ns(arr_x, o->rate_per_s)) {
		if (i < o->warmup)
			continue;
		if (i == o->warmup)
			st->t0 = arr;
		st->ttft[st->nttft++] = st->t1 - arr;
		st->unserved++;
	}
}

static int write_file(const char *path, const uint64_t *v, int n, const char *prog)
{
	if (!path || bench_write_lat(path, v, n) == 0)
		return 0;
	fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	return -1;
}

static int run_server(struct llm_dev *d, const struct llm_opts *o, const char *prog)
{
	struct serve_stats st = { 0 };
	int rc = 0;

	st.ttft = calloc((size_t)o->requests, sizeof(*st.ttft));
	st.tpot = calloc((size_t)o->requests, sizeof(*st.tpot));
	if (!st.ttft || !st.tpot) {
		fprintf(stderr, "%s: out of memory\n", prog);
		free(st.ttft);
		free(st.tpot);
		return -1;
	}
	serve(d, o, &st);
	/* The files first: bench_pct() sorts. */
	if (write_file(o->ttft_file, st.ttft, st.nttft, prog) < 0 ||
	    write_file(o->tpot_file, st.tpot, st.ntpot, prog) < 0)
		rc = -1;
	printf("requests=%d unserved=%d ttft_p50_us=%.1f ttft_p90_us=%.1f ttft_p99_us=%.1f "
	       "ttft_max_us=%.1f tpot_p50_us=%.1f tpot_p90_us=%.1f tpot_p99_us=%.1f "
	       "tpot_max_us=%.1f busy_pct=%.1f commands=%llu device_ms=%.3f elapsed_ms=%.3f "
	       "t0_ns=%llu t1_ns=%llu\n", st.ntpot, st.unserved,
	       bench_pct(st.ttft, (size_t)st.nttft, 50) / 1e3,
	       bench_pct(st.ttft, (size_t)st.nttft, 90) / 1e3,
	       bench_pct(st.ttft, (size_t)st.nttft, 99) / 1e3,
	       bench_pct(st.ttft, (size_t)st.nttft, 100) / 1e3,
	       bench_pct(st.tpot, (size_t)st.ntpot, 50) / 1e3,
	       bench_pct(st.tpot, (size_t)st.ntpot, 90) / 1e3,
	       bench_pct(st.tpot, (size_t)st.ntpot, 99) / 1e3,
	       bench_pct(st.tpot, (size_t)st.ntpot, 100) / 1e3,
	       st.t1 > st.t0 ? 100.0 * (double)st.busy_ns / (double)(st.t1 - st.t0) : 0.0,
	       (unsigned long long)st.commands, (double)st.device_ns / 1e6,
	       (double)(st.t1 - st.t0) / 1e6, (unsigned long long)st.t0,
	       (unsigned long long)st.t1);
	fflush(stdout);
	free(st.ttft);
	free(st.tpot);
	return rc;
}

/*
 * The offline flood: o->inflight submissions on the device, each waited
 * for (oldest first) before the next is launched. --trace-file: one line
 * per completed submission, "end_ns device_us" (CLOCK_REALTIME), so that
 * the scenario sums the device time completed inside the server's window.
 */
static int run_offline(struct llm_dev *d, const struct llm_opts *o, const char *prog)
{
	uint64_t dev_ns[LLM_MAX_INFLIGHT], t0 = bench_wall_ns(), t1 = t0, done_ns = 0, cmds = 0, end;
	unsigned short x[3];
	int head = 0, n = 0, rc = 0;
	FILE *tr = NULL;

	if (o->trace_file && !(tr = fopen(o->trace_file, "w"))) {
		fprintf(stderr, "%s: %s: %s\n", prog, o->trace_file, strerror(errno));
		return -1;
	}
	rng_init(x, o->seed, 4);
	end = o->duration_ns ? t0 + o->duration_ns : UINT64_MAX;
	for (;;) {
		if (n < o->inflight && !out_of_time(end)) {
			int slot = (head + n) % o->inflight;

			if (o->graphs) {
				d->ops->group(d);
				dev_ns[slot] = (uint64_t)o->graph_kernels * o->graph_kernel_ns;
			} else {
				dev_ns[slot] = uniform_ns(x, o->offline_min_ns, o->offline_max_ns);
				d->ops->kernel(d, dev_ns[slot]);
			}
			d->ops->mark(d, slot);
			n++;
			continue;
		}
		if (!n)
			break;
		d->ops->wait(d, head);
		t1 = bench_wall_ns();
		done_ns += dev_ns[head];
		cmds += o->graphs ? (uint64_t)o->graph_kernels : 1;
		if (tr)
			fprintf(tr, "%llu %.1f\n", (unsigned long long)t1, (double)dev_ns[head] / 1e3);
		head = (head + 1) % o->inflight;
		n--;
	}
	if (tr && fclose(tr) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, o->trace_file, strerror(errno));
		rc = -1;
	}
	printf("requests=0 commands=%llu device_ms=%.3f elapsed_ms=%.3f device_ms_per_s=%.1f "
	       "cmd_per_s=%.1f t0_ns=%llu t1_ns=%llu\n", (unsigned long long)cmds,
	       (double)done_ns / 1e6, (double)(t1 - t0) / 1e6,
	       t1 > t0 ? (double)done_ns / 1e6 / ((double)(t1 - t0) / 1e9) : 0.0,
	       t1 > t0 ? (double)cmds / ((double)(t1 - t0) / 1e9) : 0.0,
	       (unsigned long long)t0, (unsigned long long)t1);
	fflush(stdout);
	return rc;
}

int llm_run(struct llm_dev *d, const struct llm_opts *o, const char *prog)
{
	return o->role == LLM_SERVER ? run_server(d, o, prog) : run_offline(d, o, prog);
}
