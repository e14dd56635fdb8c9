/*
 * What clients ask of the daemon (requests.c): one handler per packet
 * type. server.c hands it each validated packet; it asks the host
 * (host.h) and answers through send.h.
 */
#ifndef XSD_REQUESTS_H
#define XSD_REQUESTS_H

struct ipc_msg;
struct xsd;
struct xsd_client;
struct xsd_queue;

/* Handles one decoded packet of @c. A negative return drops the client. */
int xsd_handle(struct xsd *d, struct xsd_client *c, const struct ipc_msg *m);
/*
 * After a reload: every queue's hints that it did not set take the new
 * defaults, and a priority its user set is clamped to the user's new
 * ceiling (or given back up to what was asked). Priorities set by root or
 * the control group stay. The caller decides again.
 */
void xsd_hints_reconfigure(struct xsd *d);
/* Logs @q's registration or its end (@what) at info level with -v. */
void xsd_log_queue(const struct xsd_queue *q, const char *what);

#endif
