/*
 * Sending to a client (send.c): packets that do not fit the socket's
 * buffer wait in a per-client queue flushed on EPOLLOUT, with a limit per
 * client and one for the whole daemon. Every module that answers a client
 * sends through here; it calls none of them.
 */
#ifndef XSD_SEND_H
#define XSD_SEND_H

#include <stddef.h>
#include <stdint.h>

struct xsd_client;

/*
 * Sends one packet to @c (with @nfds descriptors, only as its first
 * queued packet); what does not fit the socket waits for EPOLLOUT. 0, or
 * -EPIPE (unreachable) / -ENOBUFS (its backlog is full): drop the client;
 * -EAGAIN: descriptors while packets wait (nothing sent; try later).
 */
int xsd_send(struct xsd_client *c, uint16_t type, uint32_t seq,
	     const void *body, size_t len, const int *fds, int nfds);
/* An IPC_REPLY with @status; as xsd_send(). */
int xsd_reply(struct xsd_client *c, uint32_t seq, int status);
/* The same for a refusal that says why (enum ipc_why) and the limit. */
int xsd_reply_why(struct xsd_client *c, uint32_t seq, int status, uint32_t why, int64_t limit);
/* @c's socket is writable (EPOLLOUT): sends what waits. 0, or -EPIPE if
 * the client is unreachable (drop it). */
int xsd_send_flush(struct xsd_client *c);
/* Discards what waits for @c (it is being dropped). */
void xsd_send_discard(struct xsd_client *c);

#endif
