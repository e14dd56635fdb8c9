/*
 * sd_notify without libsystemd (see notify.h): a datagram to the Unix
 * socket named by $NOTIFY_SOCKET ("@" means the abstract namespace).
 */
#include "daemon/notify.h"
#include "base/clock.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int xsd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	socklen_t alen;
	int fd, rc = 0;

	if (!path || !*path)
		return 1;
	n = strlen(path);
	if (n >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, alen) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int xsd_notify_reloading(void)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)(clock_now_ns() / 1000));
	return xsd_notify(msg);
}
