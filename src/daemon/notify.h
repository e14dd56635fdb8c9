/*
 * The systemd notify protocol (sd_notify(3)), written here because it is a
 * single datagram: the daemon must not depend on libsystemd. Without
 * $NOTIFY_SOCKET every call is a no-op.
 */
#ifndef XSD_NOTIFY_H
#define XSD_NOTIFY_H

/* Sends @state (e.g. "READY=1") to $NOTIFY_SOCKET. Returns 0, 1 if no
 * socket is configured, or a negative errno. */
int xsd_notify(const char *state);

/* RELOADING=1 with the MONOTONIC_USEC systemd expects alongside. */
int xsd_notify_reloading(void);

#endif
