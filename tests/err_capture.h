/*
 * Reading what processes say on stderr (XSCHED_LOG cases): this test
 * process's own fd 2 captured into a memfd while a case runs (the agent
 * lives in it), children's stderr into memfds, and counting lines.
 *
 * A captured fd 2 also swallows cmocka's message of a failed assertion,
 * so the teardown must call err_release(), which puts fd 2 back and
 * replays what the capture held.
 */
#ifndef XS_ERR_CAPTURE_H
#define XS_ERR_CAPTURE_H

#include "test_util.h"

#include <sys/mman.h>

static int err_saved = -1;

/* A memfd for a child's stderr (it_spawn's @err_fd). */
static inline int err_memfd(void)
{
	int fd = memfd_create("stderr", MFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* Everything written to memfd @fd so far (malloc()ed, NUL-terminated). */
static inline char *err_text(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);

	assert_non_null(text);
	if (size > 0 && pread(fd, text, (size_t)size, 0) != size)
		text[0] = '\0';
	return text;
}

/* From now on, this process's fd 2 goes to a memfd. */
static inline void err_capture(void)
{
	int fd = err_memfd();

	fflush(stderr);
	err_saved = dup(2);
	assert_true(err_saved >= 0);
	assert_true(dup2(fd, 2) == 2);
	close(fd);
}

/* What fd 2 received since err_capture(). */
static inline char *err_captured(void)
{
	return err_text(2);
}

/* Puts fd 2 back, replaying what the capture held. No capture: nothing. */
static inline void err_release(void)
{
	char *text;

	if (err_saved < 0)
		return;
	text = err_captured();
	dup2(err_saved, 2);
	close(err_saved);
	err_saved = -1;
	if (text[0])
		fprintf(stderr, "--- this process's stderr ---\n%s--- end ---\n", text);
	free(text);
}

/* How many times @what occurs in @text. */
static inline size_t err_count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

#endif
