/*
 * The daemon's epoll registrations (see watch.h): one epoll set, the
 * registration's address as the event's data, so the loop dispatches
 * without a lookup.
 */
#include "daemon/watch.h"
#include "daemon/daemon.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

int xsd_watch_add(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

int xsd_watch_ring_timer(struct xsd *d, struct xsd_watch *ring, int ring_fd,
			 void (*ring_fn)(struct xsd *, struct xsd_watch *, uint32_t),
			 struct xsd_watch *timer,
			 void (*timer_fn)(struct xsd *, struct xsd_watch *, uint32_t))
{
	ring->fd = ring_fd;
	ring->fn = ring_fn;
	timer->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	timer->fn = timer_fn;
	if (timer->fd < 0 || xsd_watch_add(d, ring, EPOLLIN) < 0 ||
	    xsd_watch_add(d, timer, EPOLLIN) < 0)
		return -errno;
	return 0;
}

void xsd_watch_del(struct xsd *d, struct xsd_watch *w)
{
	if (w->fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		close(w->fd);
		w->fd = -1;
	}
}
