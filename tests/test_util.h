/*
 * Helpers for the cmocka tests: every test process works on its own
 * simulated device (unique name, removed at exit) so tests run in parallel,
 * and one executable runs one case when CTest passes its name (every case,
 * each in a process of its own, when run without one).
 */
#ifndef XS_TEST_UTIL_H
#define XS_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/sim.h"

static char test_dev_name[64];
/* Every device name test_dev() gave out, for test_dev_cleanup(). */
static char test_dev_names[64][64];
static unsigned test_dev_count;

/* A device name unique to this process and @tag; the file is removed at exit. */
static inline const char *test_dev(const char *tag)
{
	unsigned i;

	snprintf(test_dev_name, sizeof(test_dev_name), "xstest-%d-%s", (int)getpid(), tag);
	sim_dev_unlink(test_dev_name);
	for (i = 0; i < test_dev_count && strcmp(test_dev_names[i], test_dev_name); i++)
		;
	/* A test program uses a few tags; past 64 the rest would be left. */
	if (i == test_dev_count && test_dev_count < 64)
		memcpy(test_dev_names[test_dev_count++], test_dev_name, sizeof(test_dev_name));
	return test_dev_name;
}

static inline void test_dev_cleanup(void)
{
	unsigned i;

	for (i = 0; i < test_dev_count; i++)
		sim_dev_unlink(test_dev_names[i]);
}

/* Whether the running kernel is Linux @major.@minor or later. */
static inline bool tu_kernel_at_least(unsigned major, unsigned minor)
{
	struct utsname u;
	unsigned ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static inline void tu_no_mode(int argc, char **argv)
{
	(void)argc;
	(void)argv;
}

/*
 * Runs only the case named by argv[1] (CTest runs each case so), or every
 * case without one. A name that no case has (renamed, or not built yet)
 * fails instead of "passing" zero cases; cmocka's wildcards still filter.
 */
static inline bool tu_filter(const struct CMUnitTest *tests, size_t n, int argc,
			     char **argv)
{
	size_t i, found = 0;

	if (argc < 2)
		return true;
	for (i = 0; i < n; i++)
		found += !strcmp(tests[i].name, argv[1]);
	if (!found && !strpbrk(argv[1], "*?")) {
		fprintf(stderr, "no test case named %s\n", argv[1]);
		return false;
	}
	cmocka_set_test_filter(argv[1]);
	return true;
}

/*
 * Every case of @tests (@n) in a process of its own, this program run again
 * with the case's name (@argv0 its argv[0]), as CTest runs them: a case may
 * need a fresh process (settings read once per process, a driver set up
 * once). 0 when all passed, else 1 and the failed ones named.
 */
static inline int tu_run_each(const struct CMUnitTest *tests, size_t n, const char *argv0)
{
	size_t failed = 0;

	for (size_t i = 0; i < n; i++) {
		pid_t pid;
		int st;

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			execl("/proc/self/exe", argv0, tests[i].name, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid) {
			perror("waitpid");
			return 1;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("[  FAILED  ] %s (in its own process: %s %d)\n", tests[i].name,
			       WIFSIGNALED(st) ? "signal" : "exit status",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed++;
		}
	}
	printf("[==========] %zu case(s), each in a process of its own: %zu failed\n", n, failed);
	return failed ? 1 : 0;
}

/*
 * What a test program's main runs: without an argument every case, each in
 * a process of its own (tu_run_each()); with a case's name that case here
 * (CTest runs each case so); with a cmocka pattern (* or ?) the cases it
 * matches, all in this process.
 */
#define TU_RUN(tests, argc, argv)                                                        \
	((argc) < 2 ? tu_run_each(tests, sizeof(tests) / sizeof(tests[0]), (argv)[0])    \
	 : !tu_filter(tests, sizeof(tests) / sizeof(tests[0]), argc, argv) ? 1          \
	 : cmocka_run_group_tests(tests, NULL, NULL))

/* A test program's main; TU_MAIN_WITH runs @mode(argc, argv) first,
 * for helper modes a test starts the program in (it must not return then). */
#define TU_MAIN(tests) TU_MAIN_WITH(tests, tu_no_mode)
#define TU_MAIN_WITH(tests, mode)                                             \
	int main(int argc, char **argv)                                       \
	{                                                                     \
		int rc;                                                       \
		mode(argc, argv);                                             \
		rc = TU_RUN(tests, argc, argv);                               \
		test_dev_cleanup();                                           \
		return rc;                                                    \
	}

#endif
