/*
 * xschedd's sockets and clients (server.c): listening, accepting,
 * identifying and dropping clients, reading their packets (requests.h
 * handles them). main.c calls it; nothing else does.
 */
#ifndef XSD_SERVER_H
#define XSD_SERVER_H

struct xsd;

/* Claims both socket paths and listens on them, and arms housekeeping.
 * 0 or -errno (logged where an operator can act on it). */
int xsd_server_start(struct xsd *d);
/* Drops every client (their queues freed) and gives the sockets back. */
void xsd_server_stop(struct xsd *d);
/* Frees the clients dropped while handling the last epoll batch. */
void xsd_reap_zombies(struct xsd *d);

#endif
