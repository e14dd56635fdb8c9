/*
 * A connecting process's namespace pid and container id (see peer.h),
 * parsed from /proc text by pure functions so that tests feed them the
 * layouts of every runtime without running one.
 */
#include "daemon/peer.h"

#include <ctype.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XSD_CONTAINER_ID_LEN 64

int32_t xsd_peer_nspid(const char *status)
{
	const char *p = status;
	long last = 0;
	int fields = 0;

	while (p && strncmp(p, "NSpid:", 6)) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return 0;
	p += 6;
	for (;;) {
		char *end;
		long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		v = strtol(p, &end, 10);
		if (v <= 0 || v > INT32_MAX)
			return 0;
		last = v;
		fields++;
		p = end;
	}
	if (*p && *p != '\n')
		return 0;
	return fields > 1 ? (int32_t)last : 0;
}

/* The last run of exactly 64 hex digits in [@s, @e), or NULL. */
static const char *last_id(const char *s, const char *e)
{
	const char *found = NULL, *p = s;

	while (p < e) {
		const char *q = p;

		while (q < e && isxdigit((unsigned char)*q))
			q++;
		if (q - p == XSD_CONTAINER_ID_LEN)
			found = p;
		p = q < e ? q + 1 : q;
	}
	return found;
}

int xsd_peer_container(const char *cgroup, char *out, size_t len)
{
	const char *line = cgroup, *best = NULL;

	out[0] = '\0';
	if (len <= XSD_CONTAINER_ID_LEN)
		return 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *path = memchr(line, ':', (size_t)(end - line)), *id = NULL;

		/* "hierarchy:controllers:path"; the path may hold ':' itself. */
		if (path)
			path = memchr(path + 1, ':', (size_t)(end - path - 1));
		if (path)
			id = last_id(path + 1, end);
		if (id && (!best || !strncmp(line, "0::", 3)))
			best = id;
		if (id && !strncmp(line, "0::", 3))
			break;
		line = nl ? nl + 1 : NULL;
	}
	if (!best)
		return 0;
	for (size_t i = 0; i < XSD_CONTAINER_ID_LEN; i++)
		out[i] = (char)tolower((unsigned char)best[i]);
	out[XSD_CONTAINER_ID_LEN] = '\0';
	return 1;
}

/* Reads /proc/@pid/@name into @buf (NUL-terminated); false on error. */
static bool read_proc(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	size_t used = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (used + 1 < len) {
		ssize_t n = read(fd, buf + used, len - 1 - used);

		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	return used > 0;
}

void xsd_peer_identify(pid_t pid, int pidfd, int32_t *nspid, char *container, size_t len)
{
	/* status is ~1.5 KB; a cgroup file has a line per hierarchy. */
	char buf[4096];
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	*nspid = 0;
	container[0] = '\0';
	if (read_proc(pid, "status", buf, sizeof(buf)))
		*nspid = xsd_peer_nspid(buf);
	if (read_proc(pid, "cgroup", buf, sizeof(buf)))
		xsd_peer_container(buf, container, len);
	/* A pidfd polls readable once its process exited: the pid may be another's. */
	if (pidfd >= 0 && poll(&pfd, 1, 0) != 0) {
		*nspid = 0;
		container[0] = '\0';
	}
}

void xsd_peer_cgroup(pid_t pid, char *out, size_t len)
{
	char path[64], line[256];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, len, "%.*s", (int)(len - 1), line + 3);
		break;
	}
	fclose(f);
}
