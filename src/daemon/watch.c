/*
 * The daemon's epoll registrations (see watch.h): one epoll set, the
 * registration's address as the event's data, so the loop dispatches
 * without a lookup.
 */
#include "daemon/watch.h"
#include "daemon/daemon.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

int xsd_watch_add(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

void xsd_watch_del(struct xsd *d, struct xsd_watch *w)
{
	if (w->fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		close(w->fd);
		w->fd = -1;
	}
}
