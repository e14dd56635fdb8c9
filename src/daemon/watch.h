/*
 * The daemon's epoll registrations (watch.c). The loop (main.c) calls the
 * handler of each ready registration (struct xsd_watch, daemon.h); every
 * module that owns a descriptor registers it here, so none needs the
 * module that owns the loop.
 */
#ifndef XSD_WATCH_H
#define XSD_WATCH_H

#include <stdint.h>

struct xsd;
struct xsd_watch;

/* Watches @w->fd for @events (EPOLLIN ...); its handler @w->fn is called
 * on the loop's thread. 0 or -errno. */
int xsd_watch_add(struct xsd *d, struct xsd_watch *w, uint32_t events);
/*
 * What an eBPF tool's module watches: @ring, the programs' ring buffer
 * (descriptor @ring_fd, libbpf's: never closed here), and @timer, a new
 * timerfd (CLOCK_MONOTONIC, not armed), with their handlers. 0 or -errno;
 * on failure the caller undoes what it holds as for a stop.
 */
int xsd_watch_ring_timer(struct xsd *d, struct xsd_watch *ring, int ring_fd,
			 void (*ring_fn)(struct xsd *, struct xsd_watch *, uint32_t),
			 struct xsd_watch *timer,
			 void (*timer_fn)(struct xsd *, struct xsd_watch *, uint32_t));
/* @w becomes a new timerfd (CLOCK_MONOTONIC, not armed) calling @fn. 0 or
 * -errno (@w's descriptor, if any, for the caller to drop as at a stop). */
int xsd_watch_timer(struct xsd *d, struct xsd_watch *w,
		    void (*fn)(struct xsd *, struct xsd_watch *, uint32_t));
/* Arms timer @w to expire every @period_ns from now. 0 or -errno. */
int xsd_watch_every(struct xsd_watch *w, uint64_t period_ns);
/* Stops watching @w and closes its descriptor (set to -1); none is fine. */
void xsd_watch_del(struct xsd *d, struct xsd_watch *w);

#endif
