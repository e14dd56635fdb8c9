/*
 * What the OpenCL shim tests share: the environment of a program run
 * under the shim on PoCL (preload list, PoCL's kernel cache, leak
 * suppressions for sanitized builds) and reading a child's output with a
 * deadline, and running one to its end. Needs the test's XS_SAN_RT, XS_SHIM_PATH, XS_POCL_CACHE and
 * XS_LSAN_SUPP definitions, after test_util.h and it_util.h.
 */
#ifndef XS_CL_TEST_UTIL_H
#define XS_CL_TEST_UTIL_H

#include <poll.h>

/* The preload list of the shim (sanitizer runtime first, when built so). */
static const char *shim_preload(void)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s%s%s", XS_SAN_RT, XS_SAN_RT[0] ? " " : "",
		 XS_SHIM_PATH);
	return buf;
}

static const char *pocl_cache_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "POCL_CACHE_DIR=%s", XS_POCL_CACHE);
	return buf;
}

/* PoCL and LLVM keep allocations until exit (sanitized builds). */
static const char *lsan_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "LSAN_OPTIONS=suppressions=%s:print_suppressions=0",
		 XS_LSAN_SUPP);
	return buf;
}

/* Reads @fd to its end (or until @end_ns); malloc()ed, NUL-terminated. */
static char *slurp(int fd, uint64_t end_ns, bool *timed_out)
{
	size_t len = 0, cap = 65536;
	char *s = calloc(1, cap);

	assert_non_null(s);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = clock_now_ns();
		ssize_t n;

		if (now >= end_ns) {
			*timed_out = true;
			break;
		}
		if (poll(&p, 1, (int)((end_ns - now) / IT_MS) + 1) <= 0)
			continue;
		n = read(fd, s + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len + 1 == cap) {
			s = realloc(s, cap *= 2);
			assert_non_null(s);
		}
	}
	s[len] = '\0';
	return s;
}

/* What a program printed, and how it ended. */
struct run_out {
	char *out;
	char *err;
	int status;     /* exit code, 128 + signal, or -1: killed after its time */
};

/*
 * Outputs not yet freed: a failed assertion leaves the case by longjmp,
 * so the teardown frees what is left here (buf_free_all, no leak reports).
 */
static char *cl_bufs[64];

static inline void buf_keep(char *p)
{
	for (size_t i = 0; i < sizeof(cl_bufs) / sizeof(cl_bufs[0]); i++) {
		if (!cl_bufs[i]) {
			cl_bufs[i] = p;
			return;
		}
	}
	fail_msg("too many outputs kept");
}

static inline void buf_free(char *p)
{
	for (size_t i = 0; p && i < sizeof(cl_bufs) / sizeof(cl_bufs[0]); i++)
		if (cl_bufs[i] == p)
			cl_bufs[i] = NULL;
	free(p);
}

static inline void buf_free_all(void)
{
	for (size_t i = 0; i < sizeof(cl_bufs) / sizeof(cl_bufs[0]); i++) {
		free(cl_bufs[i]);
		cl_bufs[i] = NULL;
	}
}

static inline void run_out_free(struct run_out *r)
{
	buf_free(r->out);
	buf_free(r->err);
	r->out = r->err = NULL;
}

/* A program started by run_start(). */
struct run_job {
	pid_t pid;
	int errfd;
};

/* Starts @argv with @vars, its stdout to a pipe, its stderr to a file. */
static inline struct run_job run_start(struct it_env *e, const char *const *argv,
				       const char *const *vars)
{
	char errpath[IT_PATH + 16];
	static unsigned seq;
	struct run_job j;

	/* stderr into an unlinked file: nothing to clean up. */
	snprintf(errpath, sizeof(errpath), "%s/stderr.%u", e->dir, seq++);
	j.errfd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(j.errfd >= 0);
	unlink(errpath);
	j.pid = it_spawn(e, argv, vars, true, j.errfd);
	return j;
}

/* Waits for @j (killed after @ms), keeping its stdout and stderr's tail. */
static inline struct run_out run_finish(struct it_env *e, struct run_job j, unsigned ms)
{
	struct run_out r = { 0 };
	bool timed_out = false;
	int i = it_kid_index(e, j.pid), st = 0;
	off_t size;

	r.out = slurp(e->kid_out[i], clock_now_ns() + (uint64_t)ms * IT_MS, &timed_out);
	if (timed_out || it_wait_pid(j.pid, ms, &st) < 0) {
		kill(j.pid, SIGKILL);
		it_wait_pid(j.pid, 10000, NULL);
		r.status = -1;
	} else {
		r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	e->kid[i] = 0;
	close(e->kid_out[i]);
	e->kid_out[i] = -1;
	size = lseek(j.errfd, 0, SEEK_CUR);
	lseek(j.errfd, size > 4096 ? size - 4096 : 0, SEEK_SET);
	r.err = slurp(j.errfd, clock_now_ns() + 1000 * IT_MS, &timed_out);
	close(j.errfd);
	buf_keep(r.out);
	buf_keep(r.err);
	return r;
}

#endif
