/*
 * How fast the CUDA shim's memory preemption (src/shim/cuda/cu_evict.c)
 * moves device memory out and back, against a plain memcpy of the same
 * bytes in the same process: the goal is eviction and restoration at
 * 80% or more of memcpy's bandwidth (docs/benchmarks.md).
 *
 * The program re-runs itself, one child per working-set size, under the
 * test build of the shim (LD_PRELOAD, XSCHED_SCHEDULER=local,
 * XSCHED_MEMORY_PREEMPTION=1) on the simulated CUDA driver, whose device
 * memory is host memory: there a copy to or from the device is a memcpy,
 * run by the simulated device's engine thread, and the physical memory of
 * the virtual memory management API is a memfd. The child allocates the
 * working set as equal allocations (cuMemAlloc_v2, which the shim backs
 * with that API), fills them with a pattern that differs per allocation,
 * and times rounds of: eviction (cu_test_evict(): host copy malloc'd and
 * written, physical memory unmapped and released) and restoration
 * (cu_test_restore(): physical memory created and mapped, contents copied
 * back, host copy freed), each checked byte for byte afterwards; a first
 * touch after an eviction (a 4-byte cuMemcpyDtoH_v2, whose gate restores
 * everything first: the latency the process sees); and the reference,
 * memcpy between two pre-faulted malloc'd buffers of the same size, in
 * the same chunks. To say where the time goes it also times the parts
 * the two paths are made of, each alone: memcpy into freshly malloc'd
 * memory (page faults of anonymous memory) and the free of it, and the
 * same into fresh memory asking for transparent huge pages; the
 * driver's copies between pre-faulted host memory and resident device
 * memory; and, through the same driver calls the shim makes, mapping new
 * physical memory, a copy into it (page faults of shared memory) and
 * unmapping and releasing it. Minor page faults are counted for each. The
 * steps of a round are rotated from round to round so that drifts of a
 * noisy machine hit them all; one untimed round comes first.
 *
 * The simulated engine also holds each copy for its modelled device time
 * (16 GB/s, src/sim/common/sf_data.c): no copy through the driver can
 * go faster than that here, whatever memcpy does.
 *
 * The children use a private simulated device (XSCHED_SIM_DIR in a
 * temporary directory) big enough for twice the largest working set.
 * Without the test build of the shim (BUILD_TESTING off, no --shim) the
 * program says "skipped" and exits 0.
 *
 * Usage: bench_cuda_evict [--sizes MIB[,MIB...]] [--allocs N] [--rounds N]
 *                         [--quick] [--driver-dir DIR] [--shim PATH]
 */
#define BENCH_PROG "bench_cuda_evict"
#include "bench_cuda.h"
#include "bench_launch.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define BE_MIB (1ull << 20)
#define BE_GIB (1ull << 30)
#define BE_SIM_DEVICE "bench-cuda-evict"
#define BE_MAX_SIZES 16

/* What a round measures: one duration and one count of minor faults each. */
enum what {
	W_MEMCPY,       /* memcpy, pre-faulted to pre-faulted: the reference */
	W_EVICT,        /* cu_test_evict() */
	W_RESTORE,      /* cu_test_restore() */
	W_TOUCH,        /* 4-byte cuMemcpyDtoH_v2 right after an eviction */
	W_ANON,         /* malloc + memcpy into it, per chunk */
	W_FREE,         /* free of those */
	W_THP,          /* the same into fresh memory madvise'd MADV_HUGEPAGE */
	W_DTOH,         /* cuMemcpyDtoH_v2 to pre-faulted host memory */
	W_HTOD,         /* cuMemcpyHtoD_v2 to resident device memory */
	W_MAP,          /* cuMemCreate + cuMemMap + cuMemSetAccess, per chunk */
	W_HTOD_NEW,     /* cuMemcpyHtoD_v2 into that new physical memory */
	W_UNMAP,        /* cuMemUnmap + cuMemRelease of it */
	W_COUNT
};

static const char *const what_name[W_COUNT] = {
	"memcpy (pre-faulted)", "evict", "restore", "first touch", "memcpy to fresh malloc",
	"free of those", "memcpy to fresh THP", "DtoH, pre-faulted", "HtoD, resident",
	"create+map+access", "HtoD to new memory", "unmap+release",
};

/* A round's figures, as the child prints them on one line. */
struct round {
	uint64_t ns[W_COUNT];
	uint64_t flt[W_COUNT];
};

/* --- the child ------------------------------------------------------------ */

/* The working set and what the child measures it with. */
struct ws {
	int n;                          /* allocations */
	size_t chunk, total;            /* bytes of each, of all */
	size_t gran, span;              /* the driver's granularity; chunk rounded up */
	CUdeviceptr *p;                 /* the allocations */
	CUdeviceptr resv;               /* n * span reserved for the VMM parts */
	CUmemGenericAllocationHandle *h;
	CUdevice dev;
	uint8_t *src, *dst;             /* pre-faulted; src holds the pattern */
	void **fresh;                   /* W_ANON's buffers */
	long long (*evict)(void);
	int (*restore)(void);
	unsigned long long (*evicted)(void);
};

struct mark {
	uint64_t ns;
	long flt;
};

static struct mark mark_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct mark){ bench_clock_ns(CLOCK_MONOTONIC), ru.ru_minflt };
}

/* Stores what happened since @a as @w of @r. */
static void mark_take(struct round *r, enum what w, struct mark a)
{
	struct mark b = mark_now();

	r->ns[w] = b.ns - a.ns;
	r->flt[w] = (uint64_t)(b.flt - a.flt);
}

/* Word @j of allocation @i: differs between allocations and positions. */
static uint64_t pattern(int i, size_t j)
{
	uint64_t x = ((uint64_t)i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)j * 0xbf58476d1ce4e5b9ull;

	return x ^ (x >> 29);
}

/*
 * Whether every allocation holds its pattern: copied back whole into dst
 * and compared with src. Says where it differs and exits 1 if not.
 */
static void verify(struct ws *w, const char *after, int round)
{
	for (int i = 0; i < w->n; i++)
		CK(cuMemcpyDtoH_v2(w->dst + (size_t)i * w->chunk, w->p[i], w->chunk));
	if (!memcmp(w->dst, w->src, w->total))
		return;
	for (size_t k = 0; k < w->total; k++) {
		if (w->dst[k] != w->src[k]) {
			fprintf(stderr, "bench_cuda_evict: contents WRONG after %s (round %d): "
				"allocation %zu, byte %zu is 0x%02x, expected 0x%02x\n", after,
				round, k / w->chunk, k % w->chunk, w->dst[k], w->src[k]);
			break;
		}
	}
	exit(1);
}

static void ws_setup(struct ws *w, size_t total, int n)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };

	w->evict = (long long (*)(void))dlsym(RTLD_DEFAULT, "cu_test_evict");
	w->restore = (int (*)(void))dlsym(RTLD_DEFAULT, "cu_test_restore");
	w->evicted = (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "cu_test_evicted");
	if (!w->evict || !w->restore || !w->evicted) {
		fprintf(stderr, "bench_cuda_evict: cu_test_evict() not found: not the test build "
			"of the CUDA shim\n");
		exit(1);
	}
	w->n = n;
	w->total = total;
	w->chunk = total / (size_t)n;
	w->dev = bench_cu_init();
	prop.location.id = w->dev;
	CK(cuMemGetAllocationGranularity(&w->gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	w->span = (w->chunk + w->gran - 1) / w->gran * w->gran;
	w->p = calloc((size_t)n, sizeof(*w->p));
	w->h = calloc((size_t)n, sizeof(*w->h));
	w->fresh = calloc((size_t)n, sizeof(*w->fresh));
	w->src = malloc(total);
	w->dst = malloc(total);
	if (!w->p || !w->h || !w->fresh || !w->src || !w->dst) {
		fprintf(stderr, "bench_cuda_evict: out of host memory\n");
		exit(1);
	}
	/* Written whole: every page of both faulted in before any timing. */
	for (int i = 0; i < n; i++) {
		uint64_t *s = (uint64_t *)(w->src + (size_t)i * w->chunk);

		for (size_t j = 0; j < w->chunk / 8; j++)
			s[j] = pattern(i, j);
	}
	memset(w->dst, 0, total);
	for (int i = 0; i < n; i++) {
		CK(cuMemAlloc_v2(&w->p[i], w->chunk));
		CK(cuMemcpyHtoD_v2(w->p[i], w->src + (size_t)i * w->chunk, w->chunk));
	}
	CK(cuMemAddressReserve(&w->resv, w->span * (size_t)n, 0, 0, 0));
}

/* The reference: the same chunks, pre-faulted to pre-faulted. */
static void step_memcpy(struct ws *w, struct round *r)
{
	struct mark a = mark_now();

	for (int i = 0; i < w->n; i++)
		memcpy(w->dst + (size_t)i * w->chunk, w->src + (size_t)i * w->chunk, w->chunk);
	mark_take(r, W_MEMCPY, a);
}

/* What the eviction's host copy costs without the driver: malloc, the
 * page faults of writing it; then the restoration's free. */
static void step_anon(struct ws *w, struct round *r)
{
	struct mark a = mark_now();

	for (int i = 0; i < w->n; i++) {
		w->fresh[i] = malloc(w->chunk);
		if (!w->fresh[i]) {
			fprintf(stderr, "bench_cuda_evict: out of host memory\n");
			exit(1);
		}
		memcpy(w->fresh[i], w->src + (size_t)i * w->chunk, w->chunk);
	}
	mark_take(r, W_ANON, a);
	a = mark_now();
	for (int i = 0; i < w->n; i++)
		free(w->fresh[i]);
	mark_take(r, W_FREE, a);
}

/* W_ANON with transparent huge pages asked for (a 2 MiB fault instead of
 * 512 small ones where the kernel has them): what a host copy so made
 * would cost. */
static void step_thp(struct ws *w, struct round *r)
{
	size_t huge = 2 * BE_MIB, len = (w->chunk + huge - 1) / huge * huge;
	struct mark a = mark_now();

	for (int i = 0; i < w->n; i++) {
		w->fresh[i] = aligned_alloc(huge, len);
		if (!w->fresh[i]) {
			fprintf(stderr, "bench_cuda_evict: out of host memory\n");
			exit(1);
		}
		madvise(w->fresh[i], len, MADV_HUGEPAGE);
		memcpy(w->fresh[i], w->src + (size_t)i * w->chunk, w->chunk);
	}
	mark_take(r, W_THP, a);
	for (int i = 0; i < w->n; i++)
		free(w->fresh[i]);
}

/* The driver's copies alone: pre-faulted host memory, resident device memory. */
static void step_driver(struct ws *w, struct round *r)
{
	struct mark a = mark_now();

	for (int i = 0; i < w->n; i++)
		CK(cuMemcpyDtoH_v2(w->dst + (size_t)i * w->chunk, w->p[i], w->chunk));
	mark_take(r, W_DTOH, a);
	a = mark_now();
	for (int i = 0; i < w->n; i++)
		CK(cuMemcpyHtoD_v2(w->p[i], w->src + (size_t)i * w->chunk, w->chunk));
	mark_take(r, W_HTOD, a);
}

/* The VMM calls the shim makes, per chunk, on a reservation of our own. */
static void step_vmm(struct ws *w, struct round *r)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, w->dev } };
	CUmemAccessDesc acc = { .location = { CU_MEM_LOCATION_TYPE_DEVICE, w->dev },
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	struct mark a = mark_now();

	for (int i = 0; i < w->n; i++) {
		CUdeviceptr at = w->resv + (size_t)i * w->span;

		CK(cuMemCreate(&w->h[i], w->span, &prop, 0));
		CK(cuMemMap(at, w->span, 0, w->h[i], 0));
		CK(cuMemSetAccess(at, w->span, &acc, 1));
	}
	mark_take(r, W_MAP, a);
	a = mark_now();
	for (int i = 0; i < w->n; i++)
		CK(cuMemcpyHtoD_v2(w->resv + (size_t)i * w->span, w->src + (size_t)i * w->chunk,
				   w->chunk));
	mark_take(r, W_HTOD_NEW, a);
	a = mark_now();
	for (int i = 0; i < w->n; i++) {
		CK(cuMemUnmap(w->resv + (size_t)i * w->span, w->span));
		CK(cuMemRelease(w->h[i]));
	}
	mark_take(r, W_UNMAP, a);
}

static void evict_checked(struct ws *w, int round)
{
	long long freed = w->evict();

	if (freed != (long long)(w->span * (size_t)w->n) ||
	    w->evicted() != (unsigned long long)freed) {
		fprintf(stderr, "bench_cuda_evict: round %d: evicted %lld bytes (%llu away), "
			"expected %zu\n", round, freed, w->evicted(), w->span * (size_t)w->n);
		exit(1);
	}
}

/* Eviction and restoration, each timed; the contents checked after. */
static void step_evict(struct ws *w, struct round *r, int round)
{
	struct mark a = mark_now();
	int rc;

	evict_checked(w, round);
	mark_take(r, W_EVICT, a);
	a = mark_now();
	rc = w->restore();
	mark_take(r, W_RESTORE, a);
	if (rc != 0 || w->evicted() != 0) {
		fprintf(stderr, "bench_cuda_evict: round %d: cu_test_restore() = %d, %llu bytes "
			"still away\n", round, rc, w->evicted());
		exit(1);
	}
	verify(w, "cu_test_restore()", round);
}

/* An eviction (not timed), then the call that brings everything back. */
static void step_touch(struct ws *w, struct round *r, int round)
{
	uint32_t word = 0, want = (uint32_t)pattern(0, 0);
	struct mark a;

	evict_checked(w, round);
	a = mark_now();
	CK(cuMemcpyDtoH_v2(&word, w->p[0], sizeof(word)));
	mark_take(r, W_TOUCH, a);
	if (word != want || w->evicted() != 0) {
		fprintf(stderr, "bench_cuda_evict: round %d: first touch read 0x%08x (expected "
			"0x%08x), %llu bytes still away\n", round, word, want, w->evicted());
		exit(1);
	}
	verify(w, "the first touch", round);
}

#define STEPS 6

/* @rounds rounds (one untimed first): one line per round on stdout. */
static int child(size_t total, int n, int rounds)
{
	struct ws w = { 0 };

	ws_setup(&w, total, n);
	for (int k = -1; k < rounds; k++) {
		struct round r = { { 0 }, { 0 } };
		int first = k < 0 ? 0 : k % STEPS;

		for (int s = 0; s < STEPS; s++) {
			switch ((first + s) % STEPS) {
			case 0: step_memcpy(&w, &r); break;
			case 1: step_evict(&w, &r, k); break;
			case 2: step_anon(&w, &r); step_thp(&w, &r); break;
			case 3: step_driver(&w, &r); break;
			case 4: step_vmm(&w, &r); break;
			default: step_touch(&w, &r, k); break;
			}
		}
		if (k < 0)
			continue;
		for (int i = 0; i < W_COUNT; i++)
			printf("%llu ", (unsigned long long)r.ns[i]);
		for (int i = 0; i < W_COUNT; i++)
			printf("%llu%c", (unsigned long long)r.flt[i], i + 1 < W_COUNT ? ' ' : '\n');
		fflush(stdout);
	}
	for (int i = 0; i < n; i++)
		CK(cuMemFree_v2(w.p[i]));
	CK(cuMemAddressFree(w.resv, w.span * (size_t)n));
	free(w.src);
	free(w.dst);
	free(w.p);
	free(w.h);
	free(w.fresh);
	return 0;
}

/* --- the parent ----------------------------------------------------------- */

struct opts {
	uint64_t sizes[BE_MAX_SIZES];   /* MiB */
	int nsizes, allocs, rounds;
	const char *driver_dir, *shim;
};

/*
 * Runs the child of @mib MiB under the test shim and reads its rounds into
 * @r (o->rounds of them). Returns 0 or -1 (said on stderr).
 */
static int run_child(const struct opts *o, uint64_t mib, struct round *r)
{
	char lib[4096], pre[4096], path[4096], bytes[32], allocs[16], rounds[16];
	char *argv[] = { "bench_cuda_evict", "--child", bytes, allocs, rounds, NULL };
	char *vars[] = { path, lib, pre, "XSCHED_SCHEDULER=local", "XSCHED_MEMORY_PREEMPTION=1",
			 NULL };
	int got = 0, st = 0;
	FILE *in;
	pid_t pid;

	snprintf(path, sizeof(path), "LD_LIBRARY_PATH=%s", o->driver_dir);
	snprintf(lib, sizeof(lib), "XSCHED_CUDA_LIB=%s/libcuda.so.1", o->driver_dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", o->shim);
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)(mib * BE_MIB));
	snprintf(allocs, sizeof(allocs), "%d", o->allocs);
	snprintf(rounds, sizeof(rounds), "%d", o->rounds);
	pid = bench_fork_piped(&in);
	if (pid < 0) {
		perror("bench_cuda_evict: fork");
		return -1;
	}
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		unsetenv("XSCHED_DISABLE");
		for (char **v = vars; *v; v++)
			putenv(*v);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	for (; got < o->rounds; got++) {
		unsigned long long v;
		int i;

		for (i = 0; i < 2 * W_COUNT && fscanf(in, "%llu", &v) == 1; i++) {
			if (i < W_COUNT)
				r[got].ns[i] = v;
			else
				r[got].flt[i - W_COUNT] = v;
		}
		if (i < 2 * W_COUNT)
			break;
	}
	fclose(in);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || got < o->rounds) {
		fprintf(stderr, "bench_cuda_evict: the %llu MiB child failed (status 0x%x, %d "
			"rounds of %d)\n", (unsigned long long)mib, st, got, o->rounds);
		return -1;
	}
	return 0;
}

/* Median, min and max of @w over @n rounds, in ns and in faults. */
struct stat3 {
	uint64_t p50, min, max, flt;
};

static struct stat3 stat_of(const struct round *r, int n, enum what w)
{
	uint64_t v[n], f[n];

	for (int i = 0; i < n; i++) {
		v[i] = r[i].ns[w];
		f[i] = r[i].flt[w];
	}
	return (struct stat3){ bench_pct(v, (size_t)n, 50), bench_pct(v, (size_t)n, 0),
			       bench_pct(v, (size_t)n, 100), bench_pct(f, (size_t)n, 50) };
}

/* Decimal GB/s of @bytes in @ns. */
static double gbs(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / (double)ns : 0;
}

static void table_size(const struct opts *o, uint64_t mib, const struct round *r)
{
	uint64_t bytes = mib * BE_MIB;
	double ref = gbs(bytes, stat_of(r, o->rounds, W_MEMCPY).p50);

	printf("\n%llu MiB working set (%d x %llu KiB), %d rounds: median, min, max; GB/s "
	       "= 1e9 bytes/s of the working set\n", (unsigned long long)mib, o->allocs,
	       (unsigned long long)(bytes / (uint64_t)o->allocs >> 10), o->rounds);
	printf("%-24s %9s %9s %9s %8s %8s %8s %9s %10s\n", "", "ms-p50", "ms-min", "ms-max",
	       "GB/s", "GB/s-min", "GB/s-max", "x memcpy", "faults-p50");
	for (int w = 0; w < W_COUNT; w++) {
		struct stat3 s = stat_of(r, o->rounds, (enum what)w);

		if (w == W_ANON)
			printf("parts:\n");
		printf("%-24s %9.2f %9.2f %9.2f %8.2f %8.2f %8.2f %9.2f %10llu\n", what_name[w],
		       (double)s.p50 / 1e6, (double)s.min / 1e6, (double)s.max / 1e6,
		       gbs(bytes, s.p50), gbs(bytes, s.max), gbs(bytes, s.min),
		       ref > 0 ? gbs(bytes, s.p50) / ref : 0, (unsigned long long)s.flt);
	}
}

static void table_summary(const struct opts *o, struct round *const *r)
{
	printf("\nsummary, medians: GB/s (ratio to memcpy's median)\n");
	printf("%9s %8s %16s %16s %16s\n", "MiB", "memcpy", "evict", "restore",
	       "first touch ms");
	for (int z = 0; z < o->nsizes; z++) {
		uint64_t bytes = o->sizes[z] * BE_MIB;
		double m = gbs(bytes, stat_of(r[z], o->rounds, W_MEMCPY).p50);
		double e = gbs(bytes, stat_of(r[z], o->rounds, W_EVICT).p50);
		double s = gbs(bytes, stat_of(r[z], o->rounds, W_RESTORE).p50);
		char ev[32], rs[32];

		snprintf(ev, sizeof(ev), "%.2f (%.2f)", e, m > 0 ? e / m : 0);
		snprintf(rs, sizeof(rs), "%.2f (%.2f)", s, m > 0 ? s / m : 0);
		printf("%9llu %8.2f %16s %16s %16.2f\n", (unsigned long long)o->sizes[z], m, ev,
		       rs, (double)stat_of(r[z], o->rounds, W_TOUCH).p50 / 1e6);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_cuda_evict [--sizes MIB[,MIB...]] [--allocs N] "
			"[--rounds N] [--quick]\n                        [--driver-dir DIR] "
			"[--shim PATH]\n");
	exit(2);
}

static void parse_sizes(struct opts *o, const char *v)
{
	char *end;

	o->nsizes = 0;
	while (*v && o->nsizes < BE_MAX_SIZES) {
		o->sizes[o->nsizes++] = strtoull(v, &end, 10);
		if (end == v || (*end && *end != ','))
			usage();
		v = *end ? end + 1 : end;
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .sizes = { 64, 256, 1024 }, .nsizes = 3, .allocs = 16, .rounds = 5,
			  .driver_dir = XS_SIM_CUDA_DIR, .shim = XS_TEST_SHIM_PATH };
	struct round *res[BE_MAX_SIZES] = { NULL };
	char dir[256], devfile[320], mem[32];
	uint64_t biggest = 0, dev_mib;
	int rc = 1;

	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child((size_t)strtoull(argv[2], NULL, 10), atoi(argv[3]), atoi(argv[4]));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			o.sizes[0] = 64;
			o.nsizes = 1;
			o.rounds = 3;
		} else if (!strcmp(a, "--sizes") && v) {
			parse_sizes(&o, v), i++;
		} else if (!strcmp(a, "--allocs") && v) {
			o.allocs = atoi(v), i++;
		} else if (!strcmp(a, "--rounds") && v) {
			o.rounds = atoi(v), i++;
		} else if (!strcmp(a, "--driver-dir") && v) {
			o.driver_dir = v, i++;
		} else if (!strcmp(a, "--shim") && v) {
			o.shim = v, i++;
		} else {
			usage();
		}
	}
	if (o.allocs < 1 || o.rounds < 1 || o.nsizes < 1 || !o.driver_dir[0])
		usage();
	for (int z = 0; z < o.nsizes; z++) {
		/* Whole 8-byte words per allocation: the pattern's unit. */
		if (!o.sizes[z] || o.sizes[z] * BE_MIB % ((uint64_t)o.allocs * 8))
			usage();
		if (o.sizes[z] > biggest)
			biggest = o.sizes[z];
	}
	if (!o.shim[0] || access(o.shim, R_OK) < 0) {
		printf("bench_cuda_evict: skipped: the test build of the CUDA shim is missing "
		       "(BUILD_TESTING; or --shim)\n");
		return 0;
	}

	if (bench_mkdtemp(dir, sizeof(dir), "bench_cuda_evict") < 0)
		return 1;
	snprintf(devfile, sizeof(devfile), "%s/%s", dir, BE_SIM_DEVICE);
	/* The working set and the VMM parts' copy of it at once, and room. */
	dev_mib = 2 * biggest + 1024;
	if (dev_mib < 4096)
		dev_mib = 4096;
	snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)dev_mib);
	setenv("XSCHED_SIM_DIR", dir, 1);
	setenv("XSCHED_SIM_DEVICE", BE_SIM_DEVICE, 1);
	setenv("XSCHED_SIM_DEVICE_MEMORY", mem, 1);
	unsetenv("XSCHED_MEMORY_LIMIT");
	unsetenv("XSCHED_SOCKET");

	bench_print_machine(stdout);
	printf("simulated CUDA driver %s/libcuda.so.1, test shim %s\n", o.driver_dir, o.shim);
	printf("XSCHED_SCHEDULER=local XSCHED_MEMORY_PREEMPTION=1, private simulated device of "
	       "%s; one child per size, one untimed round first\n", mem);
	printf("note: device memory is host memory (memfd) here, and the simulated engine holds "
	       "each copy\n      for its modelled time (16 GB/s): no driver copy beats that\n");
	fflush(stdout);
	for (int z = 0; z < o.nsizes; z++) {
		res[z] = calloc((size_t)o.rounds, sizeof(**res));
		if (!res[z] || run_child(&o, o.sizes[z], res[z]) < 0)
			goto out;
		table_size(&o, o.sizes[z], res[z]);
		fflush(stdout);
	}
	table_summary(&o, res);
	rc = 0;
out:
	for (int z = 0; z < o.nsizes; z++)
		free(res[z]);
	unlink(devfile);
	if (rmdir(dir) < 0)
		fprintf(stderr, "bench_cuda_evict: %s left behind: %s\n", dir, strerror(errno));
	return rc;
}
