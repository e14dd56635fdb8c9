/*
 * The daemon's epoll registrations (see watch.h): one epoll set, the
 * registration's address as the event's data, so the loop dispatches
 * without a lookup.
 */
#include "daemon/watch.h"
#include "daemon/daemon.h"
#include "base/clock.h"

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
	if (xsd_watch_add(d, ring, EPOLLIN) < 0)
		return -errno;
	return xsd_watch_timer(d, timer, timer_fn);
}

int xsd_watch_timer(struct xsd *d, struct xsd_watch *w,
		    void (*fn)(struct xsd *, struct xsd_watch *, uint32_t))
{
	w->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	w->fn = fn;
	if (w->fd < 0 || xsd_watch_add(d, w, EPOLLIN) < 0)
		return -errno;
	return 0;
}

int xsd_watch_every(struct xsd_watch *w, uint64_t period_ns)
{
	struct timespec t = clock_ns_to_timespec(period_ns);
	struct itimerspec its = { t, t };

	return timerfd_settime(w->fd, 0, &its, NULL) < 0 ? -errno : 0;
}

void xsd_watch_del(struct xsd *d, struct xsd_watch *w)
{
	if (w->fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		close(w->fd);
		w->fd = -1;
	}
}
