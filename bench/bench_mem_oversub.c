/*
 * Two processes whose working sets do not fit the device together: what a
 * high-priority process that needs memory now gets natively, under static
 * partitioning (per-process limits) and under memory preemption (docs/
 * memory.md; src/shim/cuda/cu_evict.c, src/daemon/memory.c).
 *
 * The background (priority -5) holds a working set of 60% of the device
 * (one cuMemAlloc_v2), fills it with a pattern, then runs a fixed number
 * of iterations (sf_inc over the next 1 MiB of the working set, sf_spin of
 * 1 ms, cuStreamSynchronize), so that its completion time is measurable,
 * and at the end reads the whole working set back and checks it: the
 * pattern plus the increments each 1 MiB received. The foreground
 * (priority 10) serves requests, one every 50 ms (40 by default): each
 * allocates 60% of the device (one cuMemAlloc_v2, timed), runs a short
 * task on it (sf_fill over its first 1 MiB with a value of its own,
 * sf_spin of 2 ms, a 4-byte copy back of the last word filled, checked,
 * cuStreamSynchronize: timed), and frees it. A request that falls behind
 * its release time starts at once; a refused allocation is counted and the
 * request skipped.
 *
 * Five configurations, one after the other in one run, each on a fresh
 * private simulated device (XSCHED_SIM_DIR in a temporary directory,
 * 256 MiB by default): the background alone and the foreground alone
 * (native: the references); both natively (the driver refuses the
 * foreground); both under the CUDA shim with a private xschedd and
 * XSCHED_MEMORY_LIMIT of 50% each (static partitioning: the background's
 * 60% is refused by its limit too, so it falls back to 50%, the largest
 * working set its partition allows; the foreground asks 60% as always);
 * and both under the shim with memory preemption ([memory] preemption =
 * yes in the daemon's configuration, XSCHED_MEMORY_PREEMPTION=1 in the
 * background), where the driver's refusal makes the daemon evict the
 * background to host memory for the foreground.
 *
 * The program re-runs itself in its roles (--bg, --fg); each child's
 * stderr goes to a file in the temporary directory, summarised in the
 * output. A configuration that takes more than two minutes is stopped:
 * the children are killed and the directory (daemon log included) kept.
 * Percentiles are nearest-rank: the P99 of 40 requests is the largest.
 *
 * Usage: bench_mem_oversub [--device-mib N] [--ws-pct N] [--limit-pct N]
 *                          [--requests N] [--period-ms N] [--bg-iters N]
 *                          [--quick] [--verbose] [--keep] [--driver-dir DIR]
 *                          [--shim PATH] [--daemon PATH]
 *
 * --verbose prints each request's line as the foreground prints it (req I
 * RC ALLOC_NS TASK_NS FREE_NS START_NS OK); --keep keeps the temporary
 * directory (the daemon's log, the children's stderr).
 */
#define BENCH_PROG "bench_mem_oversub"
#include "bench_cuda.h"
#include "bench_launch.h"

#include <dirent.h>
#include <fcntl.h>

#define OS_MIB ((size_t)1 << 20)
#define OS_MS 1000000ull
#define OS_CHUNK_WORDS (256 * 1024)     /* 1 MiB: what one kernel touches */
#define OS_FILL_WORDS (2 * 1024 * 1024) /* 8 MiB host buffer for fill and check */
#define OS_BG_SPIN_NS (1 * OS_MS)       /* the background's kernel per iteration */
#define OS_FG_SPIN_NS (2 * OS_MS)       /* the foreground's task */
#define OS_MODE_S 120                   /* one configuration, at most */
#define OS_MAX_REQ 10000

/* --- the roles -------------------------------------------------------------- */

struct dev {
	CUstream s;
	CUfunction inc, spin, fill;
};

static void dev_open(struct dev *d)
{
	CUmodule m;

	bench_cu_init();
	CK(cuModuleLoadData(&m, "xs"));
	CK(cuModuleGetFunction(&d->inc, m, "sf_inc"));
	CK(cuModuleGetFunction(&d->spin, m, "sf_spin"));
	CK(cuModuleGetFunction(&d->fill, m, "sf_fill"));
	CK(cuStreamCreate(&d->s, 0));
}

static void launch(const struct dev *d, CUfunction f, void **args)
{
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, d->s, args, NULL));
}

static void spin(const struct dev *d, uint64_t ns)
{
	void *args[] = { &ns };

	launch(d, d->spin, args);
}

/* Word @i of the background's pattern. */
static uint32_t pat(uint64_t i)
{
	return (uint32_t)(i * 2654435761u) ^ 0xa5a50000u;
}

/* How many of @iters iterations incremented the 1 MiB chunk of word @i. */
static uint32_t incs(uint64_t i, uint64_t nchunks, uint64_t iters)
{
	uint64_t c = i / OS_CHUNK_WORDS;

	if (c >= nchunks)
		return 0;
	return (uint32_t)(iters / nchunks + (c < iters % nchunks));
}

/*
 * Fills (@check false) or checks @nwords words at @p against the pattern
 * plus the increments of @iters iterations. Returns whether they matched
 * (always true for a fill); a mismatch is said on stderr, once.
 */
static bool bg_data(CUdeviceptr p, uint64_t nwords, uint64_t iters, bool check)
{
	uint32_t *h = malloc(OS_FILL_WORDS * sizeof(*h));
	uint64_t nchunks = nwords / OS_CHUNK_WORDS;
	bool ok = true;

	if (!h)
		exit(1);
	for (uint64_t off = 0; off < nwords; off += OS_FILL_WORDS) {
		uint64_t n = nwords - off < OS_FILL_WORDS ? nwords - off : OS_FILL_WORDS;
		CUdeviceptr at = p + off * sizeof(*h);

		if (check)
			CK(cuMemcpyDtoH_v2(h, at, n * sizeof(*h)));
		for (uint64_t i = 0; i < n; i++) {
			uint32_t want = pat(off + i) + incs(off + i, nchunks, iters);

			if (!check) {
				h[i] = want;
			} else if (h[i] != want && ok) {
				fprintf(stderr, "bench_mem_oversub: background word %llu is 0x%08x, "
					"expected 0x%08x\n", (unsigned long long)(off + i), h[i],
					want);
				ok = false;
			}
		}
		if (!check)
			CK(cuMemcpyHtoD_v2(at, h, n * sizeof(*h)));
	}
	free(h);
	return ok;
}

/*
 * The background: allocates @bytes (@fallback instead if @bytes is
 * refused and @fallback is not 0), fills, says "ready", runs @iters
 * iterations, checks. Its last line: "bg ws= refused_first= iters= ns=
 * end= intact=" (end: CLOCK_MONOTONIC at the last iteration's end).
 */
static int role_bg(size_t bytes, size_t fallback, uint64_t iters)
{
	struct dev d;
	CUdeviceptr p;
	CUresult rc;
	uint64_t nwords, nchunks, t0, t1;
	int refused = 0;
	bool intact;

	dev_open(&d);
	rc = cuMemAlloc_v2(&p, bytes);
	if (rc == CUDA_ERROR_OUT_OF_MEMORY && fallback) {
		refused = 1;
		bytes = fallback;
		rc = cuMemAlloc_v2(&p, bytes);
	}
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "bench_mem_oversub: background cuMemAlloc_v2 of %zu = %d\n", bytes,
			rc);
		return 1;
	}
	nwords = bytes / sizeof(uint32_t);
	nchunks = nwords / OS_CHUNK_WORDS;
	bg_data(p, nwords, 0, false);
	printf("ready\n");
	fflush(stdout);
	t0 = bench_clock_ns(CLOCK_MONOTONIC);
	for (uint64_t i = 0; i < iters; i++) {
		CUdeviceptr at = p + (i % nchunks) * OS_CHUNK_WORDS * sizeof(uint32_t);
		uint64_t n = OS_CHUNK_WORDS;
		void *args[] = { &at, &n };

		launch(&d, d.inc, args);
		spin(&d, OS_BG_SPIN_NS);
		CK(cuStreamSynchronize(d.s));
	}
	t1 = bench_clock_ns(CLOCK_MONOTONIC);
	intact = bg_data(p, nwords, iters, true);
	CK(cuMemFree_v2(p));
	printf("bg ws=%zu refused_first=%d iters=%llu ns=%llu end=%llu intact=%d\n", bytes,
	       refused, (unsigned long long)iters, (unsigned long long)(t1 - t0),
	       (unsigned long long)t1, intact);
	return 0;
}

/*
 * The foreground: @requests requests of @bytes, one every @period_ns.
 * First a kernel on a word of its own (the process has a queue, and is
 * connected to the daemon, before its first request). One line per
 * request: "req I RC ALLOC_NS TASK_NS FREE_NS START_NS OK".
 */
static int role_fg(size_t bytes, int requests, uint64_t period_ns)
{
	struct dev d;
	CUdeviceptr w;
	uint32_t one = 1;
	uint64_t n1 = 1, t0;

	dev_open(&d);
	CK(cuMemAlloc_v2(&w, sizeof(uint32_t)));
	{
		void *args[] = { &w, &one, &n1 };

		launch(&d, d.fill, args);
		CK(cuStreamSynchronize(d.s));
	}
	t0 = bench_clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < requests; i++) {
		uint64_t rel = t0 + (uint64_t)i * period_ns, a, b, c = 0, e = 0, n = OS_CHUNK_WORDS;
		struct timespec ts = { (time_t)(rel / 1000000000ull),
				       (long)(rel % 1000000000ull) };
		uint32_t v = (uint32_t)i + 1000, got = 0;
		CUdeviceptr p, last;
		CUresult rc;
		int ok = 0;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		a = bench_clock_ns(CLOCK_MONOTONIC);
		rc = cuMemAlloc_v2(&p, bytes);
		b = bench_clock_ns(CLOCK_MONOTONIC);
		if (rc == CUDA_SUCCESS) {
			void *args[] = { &p, &v, &n };

			last = p + (OS_CHUNK_WORDS - 1) * sizeof(uint32_t);
			launch(&d, d.fill, args);
			spin(&d, OS_FG_SPIN_NS);
			CK(cuMemcpyDtoHAsync_v2(&got, last, sizeof(got), d.s));
			CK(cuStreamSynchronize(d.s));
			c = bench_clock_ns(CLOCK_MONOTONIC);
			ok = got == v;
			CK(cuMemFree_v2(p));
			e = bench_clock_ns(CLOCK_MONOTONIC);
		}
		printf("req %d %d %llu %llu %llu %llu %d\n", i, (int)rc,
		       (unsigned long long)(b - a), (unsigned long long)(c ? c - b : 0),
		       (unsigned long long)(e ? e - c : 0), (unsigned long long)a, ok);
	}
	CK(cuMemFree_v2(w));
	return 0;
}

/* --- the parent ------------------------------------------------------------- */

enum mode { M_BG_ALONE, M_FG_ALONE, M_NATIVE, M_LIMIT, M_PREEMPT, M_COUNT };

static const char *const mode_name[M_COUNT] = { "bg alone", "fg alone", "native",
						"xsched limits", "xsched preemption" };

struct opts {
	unsigned device_mib, ws_pct, limit_pct, requests, period_ms;
	uint64_t bg_iters;
	const char *driver_dir, *shim, *daemon;
};

/* What one configuration measured. */
struct result {
	bool fg, bg;                    /* which processes ran */
	/* The foreground: requests, allocations the driver or shim refused,
	 * tasks whose word came back wrong; per successful request its
	 * allocation and task time, per refused one the time the refusal
	 * took; requests started before the background ended. */
	int reqs, refused, wrong, during;
	size_t nok;
	uint64_t alloc[OS_MAX_REQ], task[OS_MAX_REQ], start[OS_MAX_REQ], refusal[OS_MAX_REQ];
	/* The background. */
	size_t bg_ws;
	int bg_refused_first, bg_intact;
	uint64_t bg_ns, bg_end;
	/* From the daemon's log, during this configuration. */
	int evictions, restores;
};

struct run {
	struct opts o;
	size_t ws, limit;
	char dir[256];
	struct bench_daemon xsd;
};

static volatile sig_atomic_t timed_out;
static bool verbose;    /* --verbose: every request's line, as it comes */

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/*
 * Starts this program as @argv with the variables @vars (NULL-terminated
 * "NAME=value") on top of an environment without LD_PRELOAD and
 * XSCHED_DISABLE, its stdout a pipe (*@out), its stderr the file @err.
 * Returns its pid, or -1.
 */
static pid_t spawn(char *const argv[], char *const vars[], const char *err, FILE **out)
{
	pid_t pid = bench_fork_piped(out);

	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		bench_exec_self(argv, vars);
	}
	return pid;
}

/* Reads @in until a line that starts with @want (NULL: until the end),
 * handing the foreground's lines to @res. False at the end without it, on
 * a timeout, or on a line it cannot read. */
static bool read_lines(FILE *in, const char *want, struct result *res)
{
	char line[512];

	while (fgets(line, sizeof(line), in)) {
		unsigned long long an, tn, fn, sn, ws, it, ns, end;
		int i, rc, ok, rf, in_;

		if (verbose)
			printf("  %s", line);
		if (sscanf(line, "req %d %d %llu %llu %llu %llu %d", &i, &rc, &an, &tn, &fn, &sn,
			   &ok) == 7) {
			if (res->reqs >= OS_MAX_REQ)
				return false;
			res->start[res->reqs++] = sn;
			if (rc != CUDA_SUCCESS) {
				res->refusal[res->refused++] = an;
			} else {
				res->alloc[res->nok] = an;
				res->task[res->nok++] = tn;
				res->wrong += !ok;
			}
		} else if (sscanf(line, "bg ws=%llu refused_first=%d iters=%llu ns=%llu end=%llu "
				  "intact=%d", &ws, &rf, &it, &ns, &end, &in_) == 6) {
			res->bg_ws = ws;
			res->bg_refused_first = rf;
			res->bg_ns = ns;
			res->bg_end = end;
			res->bg_intact = in_;
		}
		if (want && !strncmp(line, want, strlen(want)))
			return true;
	}
	return !want && !timed_out && !ferror(in);
}

static int reap(pid_t pid, const char *who)
{
	if (pid <= 0)
		return -1;
	if (timed_out)
		kill(pid, SIGKILL);
	return bench_wait_child(pid, who);
}

/* Counts the lines of the daemon's log from @from that contain @what. */
static int log_count(const struct run *r, long from, const char *what)
{
	FILE *f = fopen(r->xsd.log, "r");
	char line[1024];
	int n = 0;

	if (!f)
		return 0;
	fseek(f, from, SEEK_SET);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

static long log_size(const struct run *r)
{
	FILE *f = fopen(r->xsd.log, "r");
	long n = 0;

	if (f) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fclose(f);
	}
	return n;
}

/* What child @role of @m said on stderr: its line count and first line. */
static void say_stderr(const struct run *r, enum mode m, const char *role)
{
	char path[400], line[512], first[512] = "";
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d-%s.err", r->dir, (int)m, role);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!n++)
			snprintf(first, sizeof(first), "%s", line);
	fclose(f);
	if (n)
		printf("  %s %s said %d line(s) on stderr, first: %s", mode_name[m], role, n,
		       first);
}

/* Runs configuration @m into @res. Returns 0 or -1. */
static int run_mode(struct run *r, enum mode m, struct result *res)
{
	char a_ws[32], a_fb[32], a_it[32], a_req[32], a_per[32], err_bg[400], err_fg[400];
	char path[4096], lib[4096], pre[4096], sock[400], dev[80], limit[64];
	char *bg_argv[] = { "bench_mem_oversub", "--bg", a_ws, a_fb, a_it, NULL };
	char *fg_argv[] = { "bench_mem_oversub", "--fg", a_ws, a_req, a_per, NULL };
	char *bg_vars[12] = { path, dev }, *fg_vars[12] = { path, dev };
	bool xs = m == M_LIMIT || m == M_PREEMPT;
	FILE *bg_out = NULL, *fg_out = NULL;
	pid_t bg = 0, fg = 0;
	int n = 2, rc = -1;
	long log0 = log_size(r);

	memset(res, 0, sizeof(*res));
	res->bg = m != M_FG_ALONE;
	res->fg = m != M_BG_ALONE;
	snprintf(a_ws, sizeof(a_ws), "%zu", r->ws);
	snprintf(a_fb, sizeof(a_fb), "%zu", m == M_LIMIT ? r->limit : 0);
	snprintf(a_it, sizeof(a_it), "%llu", (unsigned long long)r->o.bg_iters);
	snprintf(a_req, sizeof(a_req), "%u", r->o.requests);
	snprintf(a_per, sizeof(a_per), "%llu", (unsigned long long)r->o.period_ms * OS_MS);
	snprintf(err_bg, sizeof(err_bg), "%s/%d-bg.err", r->dir, (int)m);
	snprintf(err_fg, sizeof(err_fg), "%s/%d-fg.err", r->dir, (int)m);
	snprintf(path, sizeof(path), "LD_LIBRARY_PATH=%s", r->o.driver_dir);
	/* A fresh device each time: nothing one configuration left is seen by
	 * the next. */
	snprintf(dev, sizeof(dev), "XSCHED_SIM_DEVICE=bench-mem-oversub-%d", (int)m);
	snprintf(lib, sizeof(lib), "XSCHED_CUDA_LIB=%s/libcuda.so.1", r->o.driver_dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", r->o.shim);
	snprintf(sock, sizeof(sock), "XSCHED_SOCKET=%s", r->xsd.sock);
	snprintf(limit, sizeof(limit), "XSCHED_MEMORY_LIMIT=%zu", r->limit);
	if (xs) {
		char *common[] = { lib, pre, sock, "XSCHED_SCHEDULER=global" };

		for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
			bg_vars[n] = fg_vars[n] = common[i], n++;
		bg_vars[n] = "XSCHED_PRIORITY=-5";
		fg_vars[n++] = "XSCHED_PRIORITY=10";
		bg_vars[n] = m == M_LIMIT ? limit : "XSCHED_MEMORY_PREEMPTION=1";
		fg_vars[n++] = m == M_LIMIT ? limit : "XSCHED_MEMORY_PREEMPTION=0";
	}
	bg_vars[n] = fg_vars[n] = NULL;

	timed_out = 0;
	alarm(OS_MODE_S);
	if (res->bg) {
		bg = spawn(bg_argv, bg_vars, err_bg, &bg_out);
		if (bg < 0 || !read_lines(bg_out, "ready", res))
			goto out;
	}
	if (res->fg) {
		fg = spawn(fg_argv, fg_vars, err_fg, &fg_out);
		if (fg < 0 || !read_lines(fg_out, NULL, res))
			goto out;
	}
	if (res->bg && !read_lines(bg_out, NULL, res))
		goto out;
	rc = 0;
out:
	alarm(0);
	if (timed_out)
		fprintf(stderr, "bench_mem_oversub: %s: no end after %d s: stopped\n", mode_name[m],
			OS_MODE_S);
	if (res->fg && reap(fg, "bench_mem_oversub: the foreground") < 0)
		rc = -1;
	if (res->bg && reap(bg, "bench_mem_oversub: the background") < 0)
		rc = -1;
	if (fg_out)
		fclose(fg_out);
	if (bg_out)
		fclose(bg_out);
	if (res->fg && (size_t)res->reqs != r->o.requests)
		rc = -1;
	if (res->bg && !res->bg_ns)
		rc = -1;
	for (int i = 0; res->bg && i < res->reqs; i++)
		res->during += res->start[i] < res->bg_end;
	res->evictions = log_count(r, log0, "evicting pid");
	res->restores = log_count(r, log0, "restored its device memory");
	if (rc < 0)
		fprintf(stderr, "bench_mem_oversub: %s failed (children's stderr and the daemon "
			"log in %s)\n", mode_name[m], r->dir);
	return rc;
}

/*
 * The private daemon's configuration: memory preemption on. 0, or prints
 * why not and returns -1.
 */
static int write_config(const struct run *r)
{
	FILE *f = fopen(r->xsd.conf, "w");

	if (f) {
		fprintf(f, "[memory]\npreemption = yes\nwait_ms = 5000\n");
		if (fclose(f) == 0)
			return 0;
	}
	fprintf(stderr, "bench_mem_oversub: cannot set up %s for xschedd\n", r->dir);
	return -1;
}

/* Empties and removes the temporary directory (ours: mkdtemp). */
static void cleanup(const struct run *r)
{
	DIR *d = opendir(r->dir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	if (rmdir(r->dir) < 0)
		fprintf(stderr, "bench_mem_oversub: %s left behind: %s\n", r->dir,
			strerror(errno));
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* One row of the table. */
static void row(enum mode m, struct result *x, struct result *fg0, struct result *bg0)
{
	char ok[32] = "-", al[40] = "-", tk[40] = "-", rt[40] = "-", bg[64] = "-", bgr[16] = "-";
	char data[16] = "-", dur[16] = "-", ev[16] = "-", ref[16] = "-";

	if (x->fg) {
		snprintf(ok, sizeof(ok), "%zu/%d", x->nok, x->reqs);
		snprintf(dur, sizeof(dur), "%d", x->during);
		if (!x->bg)
			snprintf(dur, sizeof(dur), "-");
	}
	if (x->refused)
		snprintf(ref, sizeof(ref), "%.2f", ms(bench_pct(x->refusal, (size_t)x->refused, 50)));
	if (x->nok) {
		double t50, t99, r50, r99;

		snprintf(al, sizeof(al), "%.2f / %.2f", ms(bench_pct(x->alloc, x->nok, 50)),
			 ms(bench_pct(x->alloc, x->nok, 99)));
		t50 = ms(bench_pct(x->task, x->nok, 50));
		t99 = ms(bench_pct(x->task, x->nok, 99));
		snprintf(tk, sizeof(tk), "%.2f / %.2f", t50, t99);
		r50 = ms(bench_pct(fg0->task, fg0->nok, 50));
		r99 = ms(bench_pct(fg0->task, fg0->nok, 99));
		if (fg0->nok)
			snprintf(rt, sizeof(rt), "%.2f / %.2f", t50 / r50, t99 / r99);
		if (x->wrong)
			snprintf(rt + strlen(rt), sizeof(rt) - strlen(rt), " (%d WRONG)", x->wrong);
	}
	if (x->bg) {
		snprintf(bg, sizeof(bg), "%.2f (%zu MiB%s)", (double)x->bg_ns / 1e9,
			 x->bg_ws / OS_MIB, x->bg_refused_first ? " after a refusal" : "");
		if (bg0->bg_ns)
			snprintf(bgr, sizeof(bgr), "%.2f", (double)x->bg_ns / (double)bg0->bg_ns);
		snprintf(data, sizeof(data), "%s", x->bg_intact ? "intact" : "WRONG");
	}
	if (m == M_LIMIT || m == M_PREEMPT)
		snprintf(ev, sizeof(ev), "%d/%d", x->evictions, x->restores);
	printf("%-18s %7s %8s %15s %15s %13s %30s %6s %7s %6s %7s\n", mode_name[m], ok, ref, al,
	       tk, rt, bg, bgr, data, dur, ev);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_mem_oversub [--device-mib N] [--ws-pct N] [--limit-pct N]\n"
			"                         [--requests N] [--period-ms N] [--bg-iters N]\n"
			"                         [--quick] [--verbose] [--keep] [--driver-dir DIR]\n"
			"                         [--shim PATH] [--daemon PATH]\n");
	exit(2);
}

static bool opt_uint(const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || n < lo || n > hi)
		return false;
	*out = (unsigned)n;
	return true;
}

int main(int argc, char **argv)
{
	static struct result res[M_COUNT];
	struct run r = { .o = { .device_mib = 256, .ws_pct = 60, .limit_pct = 50, .requests = 40,
				.period_ms = 50, .bg_iters = 2000, .driver_dir = XS_SIM_CUDA_DIR,
				.shim = XS_SHIM_PATH, .daemon = XSD_BIN } };
	struct sigaction sa = { .sa_handler = on_alarm };
	char mem[32];
	bool keep = false;
	int rc = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "--bg"))
		return role_bg(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10),
			       strtoull(argv[4], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "--fg"))
		return role_fg(strtoull(argv[2], NULL, 10), atoi(argv[3]),
			       strtoull(argv[4], NULL, 10));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned u = 0;
		bool ok = true;

		if (!strcmp(a, "--quick")) {
			r.o.requests = 10;
			r.o.bg_iters = 500;
			continue;
		}
		if (!strcmp(a, "--verbose")) {
			verbose = true;
			continue;
		}
		if (!strcmp(a, "--keep")) {
			keep = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--device-mib"))
			ok = opt_uint(v, 16, 1 << 20, &r.o.device_mib);
		else if (!strcmp(a, "--ws-pct"))
			ok = opt_uint(v, 51, 95, &r.o.ws_pct);
		else if (!strcmp(a, "--limit-pct"))
			ok = opt_uint(v, 5, 50, &r.o.limit_pct);
		else if (!strcmp(a, "--requests"))
			ok = opt_uint(v, 1, OS_MAX_REQ, &r.o.requests);
		else if (!strcmp(a, "--period-ms"))
			ok = opt_uint(v, 1, 10000, &r.o.period_ms);
		else if (!strcmp(a, "--bg-iters"))
			ok = opt_uint(v, 1, 1000000, &u), r.o.bg_iters = u;
		else if (!strcmp(a, "--driver-dir"))
			r.o.driver_dir = v;
		else if (!strcmp(a, "--shim"))
			r.o.shim = v;
		else if (!strcmp(a, "--daemon"))
			r.o.daemon = v;
		else
			usage();
		if (!ok)
			usage();
	}
	if (!r.o.driver_dir[0] || !r.o.shim[0] || !r.o.daemon[0])
		usage();
	/* Whole MiB: at least one 1 MiB chunk for the background's kernels. */
	r.ws = (size_t)r.o.device_mib * r.o.ws_pct / 100 * OS_MIB;
	r.limit = (size_t)r.o.device_mib * r.o.limit_pct / 100 * OS_MIB;
	if (r.ws < OS_MIB || r.limit < OS_MIB)
		usage();
	sigaction(SIGALRM, &sa, NULL);

	if (bench_mkdtemp(r.dir, sizeof(r.dir), "bench_mem_oversub") < 0)
		return 1;
	bench_daemon_paths(&r.xsd, r.dir);
	snprintf(mem, sizeof(mem), "%uM", r.o.device_mib);
	/* Every child (and the daemon) inherits the private device directory
	 * and none of the caller's xsched settings. */
	setenv("XSCHED_SIM_DIR", r.dir, 1);
	setenv("XSCHED_SIM_DEVICE_MEMORY", mem, 1);
	unsetenv("XSCHED_MEMORY_LIMIT");
	unsetenv("XSCHED_MEMORY_PREEMPTION");
	unsetenv("XSCHED_SCHEDULER");
	unsetenv("XSCHED_SOCKET");
	unsetenv("XSCHED_PRIORITY");

	bench_print_machine(stdout);
	printf("simulated CUDA driver %s/libcuda.so.1, shim %s, xschedd %s\n", r.o.driver_dir,
	       r.o.shim, r.o.daemon);
	printf("device %u MiB; working sets %u%% (%zu MiB) each; background (priority -5): %llu "
	       "iterations of sf_inc over 1 MiB + sf_spin 1 ms + sync;\nforeground (priority 10): "
	       "%u requests every %u ms of cuMemAlloc_v2 %zu MiB, task sf_fill 1 MiB + sf_spin "
	       "2 ms + 4-byte copy + sync, cuMemFree_v2\n", r.o.device_mib, r.o.ws_pct,
	       r.ws / OS_MIB, (unsigned long long)r.o.bg_iters, r.o.requests, r.o.period_ms,
	       r.ws / OS_MIB);
	printf("xsched limits: XSCHED_MEMORY_LIMIT=%zu MiB (%u%%) each, the background falls back "
	       "to it when its %u%% is refused;\nxsched preemption: [memory] preemption = yes, "
	       "wait_ms = 5000, XSCHED_MEMORY_PREEMPTION=1 in the background\n",
	       r.limit / OS_MIB, r.o.limit_pct, r.o.ws_pct);
	fflush(stdout);
	if (write_config(&r) < 0 ||
	    bench_daemon_start(&r.xsd, r.o.daemon, "bench_mem_oversub") < 0)
		goto out;
	for (int m = 0; m < M_COUNT; m++) {
		uint64_t t0 = bench_clock_ns(CLOCK_MONOTONIC);

		if (run_mode(&r, (enum mode)m, &res[m]) < 0)
			goto out;
		printf("%s: %.1f s\n", mode_name[m], (double)(bench_clock_ns(CLOCK_MONOTONIC) - t0) /
		       1e9);
	}
	printf("\n%-18s %7s %8s %15s %15s %13s %30s %6s %7s %6s %7s\n", "config", "fg ok",
	       "refused", "alloc p50/p99", "task p50/p99", "task/alone", "bg s (working set)", "bg/al",
	       "bg data", "during", "ev/rest");
	for (int m = 0; m < M_COUNT; m++)
		row((enum mode)m, &res[m], &res[M_FG_ALONE], &res[M_BG_ALONE]);
	printf("\nfg ok: requests whose allocation succeeded; refused: ms a refusal took (p50)\n"
	       "alloc, task: ms of the successful requests (task: the kernels and the copy, "
	       "after the allocation)\n"
	       "task/alone: ratio to the foreground alone (p50, p99; nearest rank: the P99 of 40 "
	       "is the largest)\n"
	       "bg s: the background's iterations; bg/al: ratio to the background alone; bg data: "
	       "its working set\nchecked word for word at the end; during: requests started "
	       "before its last iteration ended\n"
	       "ev/rest: the daemon's evictions and restorations in that configuration (its "
	       "log)\n");
	for (int m = 0; m < M_COUNT; m++) {
		say_stderr(&r, (enum mode)m, "bg");
		say_stderr(&r, (enum mode)m, "fg");
	}
	rc = 0;
out:
	bench_daemon_stop(&r.xsd);
	if (rc == 0 && !keep)
		cleanup(&r);
	else
		fprintf(stderr, "bench_mem_oversub: %s kept\n", r.dir);
	return rc;
}
