/*
 * Fixed priority on a real OpenCL device (PoCL): a latency-critical
 * foreground process and a flooding background process, each a plain
 * OpenCL program, in three configurations measured in one run:
 *   standalone  the foreground alone;
 *   native      both, straight into the ICD loader;
 *   xsched      both under the OpenCL shim (LD_PRELOAD), scheduled by a
 *               private xschedd running the fixed-priority policy (hpf),
 *               the foreground with the higher XSCHED_PRIORITY; the
 *               kernels carry the guardian, so the queues are at Lv2;
 *   xsched-lv1  the same with the guardian off (XSCHED_OPENCL_LV2=0): Lv1.
 * The background's throughput alone is measured in each round too, as the
 * reference for its throughput next to the foreground.
 *
 * The foreground issues tasks of --fg-cmds loop kernels (one work-item,
 * about 0.5 ms each) at a period with +-50% uniform jitter (deterministic
 * seed), finishing each with clFinish; its latency is measured from the
 * task's first enqueue to the return of clFinish (so that timer overshoot
 * is not counted). The background keeps --bg-depth loop kernels of about
 * 5 ms in flight on --bg-width work-items (default: every CPU) in
 * work-groups of --bg-local items (default 1: as many groups as items),
 * waiting on each kernel's event, until it is killed; it reports every
 * completion with its time, from which the parent takes its throughput
 * over the foreground's measurement window. --fg-us and --bg-us calibrate
 * the kernels' iteration counts instead (natively, by the parent, at the
 * start: run it on an idle machine).
 *
 * Lv2 needs many work-groups in the background: the guardian cuts a
 * kernel only between groups, so with one group per CPU (the default
 * shape) a started kernel runs whole, as at Lv1; e.g. --bg-width 512
 * --bg-us 5000 gives 5 ms kernels of 512 groups (~20 us each on 2 CPUs).
 *
 * PoCL runs kernels on OS threads that the kernel time-slices, so native
 * sharing shows as a longer tail rather than as a GPU's hard blocking, and
 * at Lv1 the background kernel already running when the foreground arrives
 * keeps competing until it ends.
 *
 * The benchmark re-runs itself for the two programs, and runs the
 * configurations in turn, --rounds times (each round --samples/--rounds
 * tasks), so that drifts of a noisy machine hit them all; one xschedd
 * serves every round. --diag adds a row with both programs under the shim
 * and no scheduler (XSCHED_SCHEDULER=none: the XQueues' own cost) and the
 * background's throughput alone under it. Without a shim or a daemon (none
 * built, or not found) the xsched configuration is left out.
 *
 * Usage: bench_cl_priority [--samples N] [--rounds N] [--period-us P]
 *          [--fg-iters N | --fg-us US] [--bg-iters N | --bg-us US] [--fg-cmds N]
 *          [--bg-width N] [--bg-local N] [--bg-depth N] [--alone-ms MS] [--quick]
 *          [--diag] [--shim PATH] [--daemon PATH] [--policy NAME]
 *          [--thread-slice-us US] [--rt-priority N] [--out DIR]
 *
 * --thread-slice-us sets xsched's threads' CPU slice (xschedd's
 * thread_slice_us and XSCHED_THREAD_SLICE_US; 0: the kernel's), to compare
 * with the default (100 us) in runs that alternate. --rt-priority runs
 * xschedd's loop and each process's agent thread under SCHED_FIFO at N
 * (xschedd's realtime_priority and XSCHED_THREAD_RTPRIO; needs root or
 * CAP_SYS_NICE, else they keep the normal policy and say so). --out DIR
 * writes each configuration's foreground latencies (us, one per line) to
 * DIR/lat_<mode>.txt, the files bench/scenarios/pooled.sh takes together
 * over several runs (a P99 over 4000 tasks rests on its 40 slowest, and
 * the standalone's own P99 moves from run to run on a noisy machine).
 */
#include "cl_work.h"
#include "bench_util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define US 1000ull
#define MS (1000 * US)

struct opts {
	int samples, rounds, round_samples, fg_cmds, bg_width, bg_local, bg_depth;
	unsigned period_us, fg_iters, bg_iters, alone_ms, fg_us, bg_us;
	const char *shim, *daemon, *policy;
	const char *thread_slice;       /* --thread-slice-us; NULL: the defaults */
	const char *rt_prio;            /* --rt-priority; NULL: none */
	const char *out;                /* --out; NULL: none */
};

/* --- the two OpenCL programs (workload in cl_work.c) ---------------------- */

/*
 * The foreground: after a warm-up, @o->round_samples tasks; prints "W start end"
 * (its measurement window, CLOCK_REALTIME ns, as every time exchanged here), then one latency in ns per
 * line.
 */
static int child_fg(const struct opts *o)
{
	uint64_t *lat = calloc((size_t)o->round_samples, sizeof(*lat));
	struct clw_periodic p = { .tasks = o->round_samples, .cmds = o->fg_cmds, .warmup = 3,
				  .period_ns = (uint64_t)o->period_us * US, .jitter = 0.5,
				  .seed = 1 };
	uint64_t w0, w1;
	struct clw e;
	int n;

	if (!lat)
		return 1;
	prctl(PR_SET_TIMERSLACK, 1);
	clw_open(&e, o->fg_iters, 1);
	n = clw_run_periodic(&e, &p, lat, &w0, &w1, NULL);
	printf("W %llu %llu\n", (unsigned long long)w0, (unsigned long long)w1);
	for (int i = 0; i < n; i++)
		printf("%llu\n", (unsigned long long)lat[i]);
	free(lat);
	clw_close(&e);
	return 0;
}

static void bg_report(void *arg, uint64_t t, uint64_t count)
{
	(void)arg;
	printf("C %llu %llu\n", (unsigned long long)t, (unsigned long long)count);
}

/*
 * The background: @o->bg_depth kernels in flight, each waited on through
 * its event; "C time count" per completion, unbuffered, until killed.
 */
static int child_bg(const struct opts *o)
{
	struct clw e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	clw_open(&e, o->bg_iters, (size_t)o->bg_width);
	clw_set_local(&e, (size_t)o->bg_local);
	clw_flood(&e, 1, o->bg_depth, NULL, bg_report, NULL);
	return 0;
}

/* --- the parent ----------------------------------------------------------- */

/* Completions reported by a background child: times and counts. */
struct bg {
	pid_t pid;
	FILE *in;
	pthread_t reader;
	uint64_t *t, *count;
	size_t n, cap;
	pthread_mutex_t lock;
};

/* How a child runs: natively, under the shim and the daemon, or under the
 * shim with no scheduler at all (its XQueues' own cost, no policy). */
/* ENV_XSCHED_LV1: xsched with the OpenCL guardian off (XSCHED_OPENCL_LV2=0). */
enum mode_env { ENV_NATIVE, ENV_XSCHED, ENV_XSCHED_LV1, ENV_SHIM_NONE };

struct run {
	struct opts o;
	char dir[256];
	struct bench_daemon xsd;
};

/* Forks this program as "--child ROLE" with stdout into a pipe. */
static pid_t spawn(const struct run *r, const char *role, enum mode_env env, int prio,
		   FILE **out)
{
	char a[8][32], pre[4200], sock[400], pr[32];
	char *argv[] = { "bench_cl_priority", "--child", (char *)role, a[0], a[1], a[2],
			 a[3], a[4], a[5], a[6], a[7], NULL };
	pid_t pid;

	snprintf(a[0], 32, "%d", r->o.round_samples);
	snprintf(a[1], 32, "%u", r->o.period_us);
	snprintf(a[2], 32, "%u", r->o.fg_iters);
	snprintf(a[3], 32, "%u", r->o.bg_iters);
	snprintf(a[4], 32, "%d", r->o.fg_cmds);
	snprintf(a[5], 32, "%d", r->o.bg_width);
	snprintf(a[6], 32, "%d", r->o.bg_depth);
	snprintf(a[7], 32, "%d", r->o.bg_local);
	pid = bench_fork_piped(out);
	if (pid != 0)
		return pid;
	unsetenv("LD_PRELOAD");
	unsetenv("XSCHED_DISABLE");
	unsetenv("XSCHED_SHARE");
	unsetenv("XSCHED_DEADLINE_US");
	unsetenv("XSCHED_LAXITY_US");
	unsetenv("XSCHED_PRIORITY");
	unsetenv("XSCHED_OPENCL_LV2");
	if (env != ENV_NATIVE) {
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", r->o.shim);
		putenv(pre);
	}
	putenv(env == ENV_XSCHED_LV1 ? "XSCHED_OPENCL_LV2=0" : "XSCHED_OPENCL_LV2=1");
	if (env == ENV_XSCHED || env == ENV_XSCHED_LV1) {
		snprintf(sock, sizeof(sock), "XSCHED_SOCKET=%s", r->xsd.sock);
		snprintf(pr, sizeof(pr), "XSCHED_PRIORITY=%d", prio);
		putenv(sock);
		putenv(pr);
		putenv("XSCHED_SCHEDULER=global");
	} else if (env == ENV_SHIM_NONE) {
		putenv("XSCHED_SCHEDULER=none");
	}
	execv("/proc/self/exe", argv);
	_exit(127);
}

static void *bg_reader(void *arg)
{
	struct bg *b = arg;
	unsigned long long t, c;

	while (fscanf(b->in, " C %llu %llu", &t, &c) == 2) {
		pthread_mutex_lock(&b->lock);
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 4096;
			uint64_t *nt = realloc(b->t, cap * sizeof(*nt));
			uint64_t *nc = nt ? realloc(b->count, cap * sizeof(*nc)) : NULL;

			if (nt)
				b->t = nt;
			if (!nc) {
				pthread_mutex_unlock(&b->lock);
				break;
			}
			b->count = nc;
			b->cap = cap;
		}
		b->t[b->n] = t;
		b->count[b->n] = c;
		b->n++;
		pthread_mutex_unlock(&b->lock);
	}
	return NULL;
}

/* Starts the background and returns once its first kernel completed. */
static int bg_start(const struct run *r, enum mode_env env, struct bg *b)
{
	unsigned long long t, c;

	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->pid = spawn(r, "bg", env, 0, &b->in);
	if (b->pid < 0)
		return -1;
	if (fscanf(b->in, " C %llu %llu", &t, &c) != 2) {
		fprintf(stderr, "bench_cl_priority: the background did not start\n");
		return -1;
	}
	return pthread_create(&b->reader, NULL, bg_reader, b) ? -1 : 0;
}

static void bg_stop(struct bg *b)
{
	kill(b->pid, SIGTERM);
	waitpid(b->pid, NULL, 0);
	pthread_join(b->reader, NULL);
	fclose(b->in);
}

static void bg_free(struct bg *b)
{
	free(b->t);
	free(b->count);
	pthread_mutex_destroy(&b->lock);
}

/* Completions reported at or before @t (0 before the first report). */
static uint64_t bg_count_at(const struct bg *b, uint64_t t)
{
	uint64_t c = 0;

	for (size_t i = 0; i < b->n && b->t[i] <= t; i++)
		c = b->count[i];
	return c;
}

/* Runs the foreground to its end; fills @lat (o.round_samples) and its window. */
static int fg_run(const struct run *r, enum mode_env env, uint64_t *lat, uint64_t *w0,
		  uint64_t *w1)
{
	unsigned long long a, b, v;
	int n = 0, st = 0;
	FILE *in;
	pid_t pid = spawn(r, "fg", env, 10, &in);

	if (pid < 0)
		return -1;
	if (fscanf(in, " W %llu %llu", &a, &b) == 2) {
		*w0 = a;
		*w1 = b;
		while (n < r->o.round_samples && fscanf(in, "%llu", &v) == 1)
			lat[n++] = v;
	}
	fclose(in);
	waitpid(pid, &st, 0);
	if (n != r->o.round_samples || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_cl_priority: foreground failed (status 0x%x, %d samples)\n",
			st, n);
		return -1;
	}
	return 0;
}

/* The private daemon's configuration: fixed priority, no ceiling in the way. */
static int write_config(const struct run *r)
{
	FILE *f = fopen(r->xsd.conf, "w");

	if (!f)
		return -1;
	fprintf(f, "[policy]\nname = %s\n[limits]\npriority_ceiling = 100\n", r->o.policy);
	if (r->o.thread_slice || r->o.rt_prio)
		fprintf(f, "[daemon]\n");
	if (r->o.thread_slice)
		fprintf(f, "thread_slice_us = %s\n", r->o.thread_slice);
	if (r->o.rt_prio)
		fprintf(f, "realtime_priority = %s\n", r->o.rt_prio);
	return fclose(f);
}

/*
 * One configuration, over all rounds: the foreground's latencies and the
 * background's completions over the foreground's windows.
 */
struct mode {
	const char *name;
	bool with_bg;
	enum mode_env env;
	uint64_t *lat;
	int n;
	double bg_kernels, bg_ns;
};

/* One round of @m: @r->o.round_samples foreground tasks. */
static int measure(struct run *r, struct mode *m)
{
	uint64_t w0 = 0, w1 = 0;
	struct bg b;
	int rc;

	if (m->with_bg && bg_start(r, m->env, &b) < 0)
		return -1;
	rc = fg_run(r, m->env, m->lat + m->n, &w0, &w1);
	if (m->with_bg) {
		bg_stop(&b);
		if (rc == 0 && w1 > w0) {
			m->bg_kernels += (double)(bg_count_at(&b, w1) - bg_count_at(&b, w0));
			m->bg_ns += (double)(w1 - w0);
		}
		bg_free(&b);
	}
	if (rc == 0)
		m->n += r->o.round_samples;
	return rc;
}

/* The background alone for @ms under @env: adds to *@kernels and *@ns. */
static int measure_bg_alone(struct run *r, enum mode_env env, unsigned ms, double *kernels,
			    double *ns)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	uint64_t t0, t1;
	struct bg b;

	if (bg_start(r, env, &b) < 0)
		return -1;
	t0 = bench_wall_ns();
	nanosleep(&ts, NULL);
	t1 = bench_wall_ns();
	bg_stop(&b);
	*kernels += (double)(bg_count_at(&b, t1) - bg_count_at(&b, t0));
	*ns += (double)(t1 - t0);
	bg_free(&b);
	return 0;
}

/*
 * --fg-us, --bg-us: the iteration counts for kernels of that length on
 * this device, natively, each in its shape; prints what it found.
 */
static void calibrate(struct opts *o)
{
	struct clw w;

	if (o->fg_us) {
		clw_open(&w, 1, 1);
		o->fg_iters = clw_calibrate(&w, (uint64_t)o->fg_us * US);
		clw_close(&w);
		printf("calibrated: a %u us foreground kernel = %u iterations\n", o->fg_us,
		       o->fg_iters);
	}
	if (o->bg_us) {
		clw_open(&w, 1, (size_t)o->bg_width);
		clw_set_local(&w, (size_t)o->bg_local);
		o->bg_iters = clw_calibrate(&w, (uint64_t)o->bg_us * US);
		clw_close(&w);
		printf("calibrated: a %u us background kernel = %u iterations\n", o->bg_us,
		       o->bg_iters);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_cl_priority [--samples N] [--rounds N] [--period-us P]\n"
		"         [--fg-iters N | --fg-us US] [--bg-iters N | --bg-us US] [--fg-cmds N]\n"
		"         [--bg-width N] [--bg-local N] [--bg-depth N] [--alone-ms MS] [--quick]\n"
		"         [--diag] [--shim PATH] [--daemon PATH] [--policy NAME]\n"
		"         [--thread-slice-us US] [--rt-priority N] [--out DIR]\n");
	exit(2);
}

static int parse_child(int argc, char **argv, struct opts *o)
{
	if (argc != 11)
		return -1;
	o->round_samples = atoi(argv[3]);
	o->period_us = (unsigned)strtoul(argv[4], NULL, 10);
	o->fg_iters = (unsigned)strtoul(argv[5], NULL, 10);
	o->bg_iters = (unsigned)strtoul(argv[6], NULL, 10);
	o->fg_cmds = atoi(argv[7]);
	o->bg_width = atoi(argv[8]);
	o->bg_depth = atoi(argv[9]);
	o->bg_local = atoi(argv[10]);
	return 0;
}

static double rate_of(double kernels, double ns)
{
	return ns > 0 ? kernels * 1e9 / ns : 0;
}

static void print_row(struct mode *sa, struct mode *m, double bg_alone)
{
	uint64_t sa_p99 = bench_pct(sa->lat, (size_t)sa->n, 99);
	uint64_t p99 = bench_pct(m->lat, (size_t)m->n, 99);

	printf("%-11s %6d %8.0f %8.0f %8.0f %8.0f  %6.2f", m->name, m->n,
	       bench_pct(m->lat, (size_t)m->n, 50) / 1e3,
	       bench_pct(m->lat, (size_t)m->n, 90) / 1e3, p99 / 1e3,
	       bench_pct(m->lat, (size_t)m->n, 100) / 1e3,
	       (double)p99 / (double)(sa_p99 ? sa_p99 : 1));
	if (m->with_bg) {
		double rate = rate_of(m->bg_kernels, m->bg_ns);

		printf("   %9.1f  %6.2f\n", rate, bg_alone > 0 ? rate / bg_alone : 0);
	} else {
		printf("   %9s  %6s\n", "-", "-");
	}
}

int main(int argc, char **argv)
{
	struct run r = { .o = { .samples = 1000, .rounds = 2, .period_us = 2500,
				.fg_iters = 500000, .bg_iters = 5000000, .fg_cmds = 1,
				.bg_depth = 8, .bg_local = 1, .alone_ms = 2000,
				.shim = XS_SHIM_PATH, .daemon = XSD_BIN, .policy = "hpf" } };
	struct mode modes[] = {
		{ .name = "standalone", .env = ENV_NATIVE },
		{ .name = "native", .with_bg = true, .env = ENV_NATIVE },
		{ .name = "xsched", .with_bg = true, .env = ENV_XSCHED },
		{ .name = "xsched-lv1", .with_bg = true, .env = ENV_XSCHED_LV1 },
		{ .name = "shim-none", .with_bg = true, .env = ENV_SHIM_NONE },
	};
	double alone_k = 0, alone_ns = 0, shim_k = 0, shim_ns = 0, bg_alone;
	int nmodes = 2, rc = 1;
	bool xsched, diag = false;

	if (argc > 2 && !strcmp(argv[1], "--child")) {
		if (parse_child(argc, argv, &r.o) < 0)
			usage();
		return !strcmp(argv[2], "fg") ? child_fg(&r.o) : child_bg(&r.o);
	}
	r.o.bg_width = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			r.o.samples = 100;
			r.o.rounds = 1;
			r.o.alone_ms = 500;
		} else if (!strcmp(a, "--diag")) {
			diag = true;
		} else if (!strcmp(a, "--samples") && v) {
			r.o.samples = atoi(v), i++;
		} else if (!strcmp(a, "--rounds") && v) {
			r.o.rounds = atoi(v), i++;
		} else if (!strcmp(a, "--period-us") && v) {
			r.o.period_us = (unsigned)strtoul(v, NULL, 10), i++;
		} else if (!strcmp(a, "--fg-iters") && v) {
			r.o.fg_iters = (unsigned)strtoul(v, NULL, 10), i++;
		} else if (!strcmp(a, "--bg-iters") && v) {
			r.o.bg_iters = (unsigned)strtoul(v, NULL, 10), i++;
		} else if (!strcmp(a, "--fg-cmds") && v) {
			r.o.fg_cmds = atoi(v), i++;
		} else if (!strcmp(a, "--fg-us") && v) {
			r.o.fg_us = (unsigned)strtoul(v, NULL, 10), i++;
		} else if (!strcmp(a, "--bg-us") && v) {
			r.o.bg_us = (unsigned)strtoul(v, NULL, 10), i++;
		} else if (!strcmp(a, "--bg-local") && v) {
			r.o.bg_local = atoi(v), i++;
		} else if (!strcmp(a, "--bg-width") && v) {
			r.o.bg_width = atoi(v), i++;
		} else if (!strcmp(a, "--bg-depth") && v) {
			r.o.bg_depth = atoi(v), i++;
		} else if (!strcmp(a, "--alone-ms") && v) {
			r.o.alone_ms = (unsigned)strtoul(v, NULL, 10), i++;
		} else if (!strcmp(a, "--shim") && v) {
			r.o.shim = v, i++;
		} else if (!strcmp(a, "--daemon") && v) {
			r.o.daemon = v, i++;
		} else if (!strcmp(a, "--policy") && v) {
			r.o.policy = v, i++;
		} else if (!strcmp(a, "--thread-slice-us") && v) {
			/* xschedd's and the shim's (the children inherit it) */
			r.o.thread_slice = v, i++;
			setenv("XSCHED_THREAD_SLICE_US", v, 1);
		} else if (!strcmp(a, "--rt-priority") && v) {
			/* xschedd's loop and the agents' (the children inherit it) */
			r.o.rt_prio = v, i++;
			setenv("XSCHED_THREAD_RTPRIO", v, 1);
		} else if (!strcmp(a, "--out") && v) {
			r.o.out = v, i++;
		} else {
			usage();
		}
	}
	if (r.o.samples < 1 || r.o.rounds < 1 || r.o.period_us < 2 || r.o.fg_cmds < 1 ||
	    r.o.bg_width < 1 || r.o.bg_depth < 1 || r.o.bg_local < 1 ||
	    r.o.bg_width % r.o.bg_local)
		usage();
	if (r.o.out && mkdir(r.o.out, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "bench_cl_priority: %s: %s\n", r.o.out, strerror(errno));
		return 1;
	}
	r.o.round_samples = (r.o.samples + r.o.rounds - 1) / r.o.rounds;
	if (bench_mkdtemp(r.dir, sizeof(r.dir), "bench_cl_priority") < 0)
		return 1;
	bench_daemon_paths(&r.xsd, r.dir);
	xsched = r.o.shim[0] && access(r.o.shim, R_OK) == 0 && r.o.daemon[0] &&
		 access(r.o.daemon, X_OK) == 0;
	if (xsched)
		nmodes = diag ? 5 : 4;
	for (int m = 0; m < nmodes; m++) {
		modes[m].lat = calloc((size_t)(r.o.round_samples * r.o.rounds),
				      sizeof(*modes[m].lat));
		if (!modes[m].lat) {
			perror("bench_cl_priority");
			goto out;
		}
	}

	bench_print_machine(stdout);
	calibrate(&r.o);
	printf("foreground: %d tasks of %d kernel(s) of %u iterations (1 work-item), period "
	       "%u us +-50%%, in %d rounds\nbackground: kernels of %u iterations on %d "
	       "work-items in %d work-groups (local size %d), %d in flight\n",
	       r.o.round_samples * r.o.rounds, r.o.fg_cmds, r.o.fg_iters, r.o.period_us,
	       r.o.rounds, r.o.bg_iters, r.o.bg_width, r.o.bg_width / r.o.bg_local,
	       r.o.bg_local, r.o.bg_depth);
	if (!xsched)
		printf("xsched: left out (shim '%s', daemon '%s' not both available)\n",
		       r.o.shim, r.o.daemon);
	else
		printf("xsched: %s under xschedd (policy %s), foreground priority 10, "
		       "background 0%s%s\n", r.o.shim, r.o.policy,
		       r.o.rt_prio ? "; xschedd's loop and the agents at SCHED_FIFO " : "",
		       r.o.rt_prio ? r.o.rt_prio : "");
	fflush(stdout);
	if (xsched && (write_config(&r) < 0 ||
		       bench_daemon_start(&r.xsd, r.o.daemon, "bench_cl_priority") < 0))
		goto out;
	/* Rounds of every configuration in turn, so that drifts of a noisy
	 * machine hit them all. */
	for (int round = 0; round < r.o.rounds; round++) {
		if (measure_bg_alone(&r, ENV_NATIVE, r.o.alone_ms / (unsigned)r.o.rounds,
				     &alone_k, &alone_ns) < 0)
			goto out;
		if (diag && xsched &&
		    measure_bg_alone(&r, ENV_SHIM_NONE, r.o.alone_ms / (unsigned)r.o.rounds,
				     &shim_k, &shim_ns) < 0)
			goto out;
		for (int m = 0; m < nmodes; m++)
			if (measure(&r, &modes[m]) < 0)
				goto out;
	}
	bg_alone = rate_of(alone_k, alone_ns);
	printf("\nbackground alone: %.1f kernels/s", bg_alone);
	if (diag && xsched)
		printf(" natively, %.1f under the shim with no scheduler (%.2f)",
		       rate_of(shim_k, shim_ns), bg_alone > 0 ? rate_of(shim_k, shim_ns) /
		       bg_alone : 0);
	printf("\n\n             foreground latency (us)                        background\n");
	printf("mode        tasks      p50      p90      p99      max  p99/sa   kernels/s  "
	       "/alone\n");
	for (int m = 0; m < nmodes; m++)
		print_row(&modes[0], &modes[m], bg_alone);
	if (diag && xsched)
		printf("(shim-none: both under the shim with XSCHED_SCHEDULER=none: the XQueues' "
		       "cost without a policy)\n");
	for (int m = 0; r.o.out && m < nmodes; m++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/lat_%s.txt", r.o.out, modes[m].name);
		if (bench_write_lat(path, modes[m].lat, modes[m].n) < 0) {
			fprintf(stderr, "bench_cl_priority: %s: %s\n", path, strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	bench_daemon_stop(&r.xsd);
	unlink(r.xsd.sock);
	unlink(r.xsd.ctl);
	unlink(r.xsd.conf);
	unlink(r.xsd.notify);
	/* xschedd leaves its sockets' lock files; it has exited, the
	 * directory is ours. */
	for (int i = 0; i < 2; i++) {
		char lock[320];

		snprintf(lock, sizeof(lock), "%s.lock", i ? r.xsd.ctl : r.xsd.sock);
		unlink(lock);
	}
	if (rc == 0)
		unlink(r.xsd.log);
	else if (access(r.xsd.log, F_OK) == 0)
		fprintf(stderr, "bench_cl_priority: daemon log kept in %s\n", r.xsd.log);
	if (rc == 0 || access(r.xsd.log, F_OK) != 0)
		rmdir(r.dir);
	for (int m = 0; m < 4; m++)
		free(modes[m].lat);
	return rc;
}
