/*
 * Listings and metrics of the daemon (metrics.c): the queue records of
 * IPC_LIST, the Prometheus text of IPC_METRICS and of the textfile that
 * node_exporter reads. All on the daemon's loop thread.
 */
#ifndef XSD_METRICS_H
#define XSD_METRICS_H

#include <stddef.h>

struct ipc_queue_rec;
struct xsd;
struct xsd_client;
struct xsd_host;
struct xsd_queue;

/* @q's listing record (the devices of @h name its domain). */
void xsd_queue_record(const struct xsd_host *h, const struct xsd_queue *q,
		      struct ipc_queue_rec *r);
/*
 * Prometheus text of the daemon, as @reader may see it (NULL: everything,
 * for the textfile): malloc()ed, *@len bytes. NULL on out-of-memory.
 */
char *xsd_metrics_text(struct xsd *d, const struct xsd_client *reader, size_t *len);
/*
 * (Re)arms the textfile writer for [metrics] textfile and interval_s (off
 * when the path is empty): a first write at once, then every interval.
 * 0 or -errno. Write errors are logged (rate-limited), never fatal.
 */
int xsd_textfile_apply(struct xsd *d);
/* Stops the writer and removes the textfile (a stopped daemon's numbers
 * are gone, not stale). */
void xsd_textfile_stop(struct xsd *d);

#endif
