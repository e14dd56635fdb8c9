/*
 * Synchronous requests to xschedd, for xschedctl and tests: one connection,
 * one request at a time, replies validated with ipc_decode().
 *
 * Errors: -ENOENT or -ECONNREFUSED (daemon not running), -EACCES/-EPERM
 * (permission denied), -EPIPE (daemon went away), -EBADMSG (bad reply), or
 * the negative errno the daemon answered.
 */
#ifndef XS_IPC_CLIENT_H
#define XS_IPC_CLIENT_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>
#include <stddef.h>

struct ipc_client {
	int fd;
	uint32_t seq;
	bool control;           /* connected to the control socket */
	uint32_t why;           /* of the last IPC_REPLY: enum ipc_why */
	int64_t limit;          /* ... and the limit it names */
	char error[IPC_REASON_LEN]; /* of the last refused policy switch; "" */
};

/*
 * Connects as a CLI: to @control (NULL: ipc_control_path()) and, if that
 * socket refuses us (-EACCES), to @client (NULL: ipc_socket_path()), where
 * the daemon grants only what a user may do to its own processes.
 */
int ipc_client_open(struct ipc_client *c, const char *control, const char *client);
void ipc_client_close(struct ipc_client *c);

/* All queues (or, for an unprivileged caller, its own); *@recs is malloc()ed. */
int ipc_client_list(struct ipc_client *c, struct ipc_queue_rec **recs, size_t *n);

/*
 * The scheduling domains (devices) with their queue counts (for an
 * unprivileged caller, those holding one of its queues); *@recs is
 * malloc()ed.
 */
int ipc_client_devices(struct ipc_client *c, struct ipc_device_rec **recs, size_t *n);

/*
 * The processes the bypass detector saw using an XPU (for an unprivileged
 * caller, its uid's); *@recs is malloc()ed. -ENODEV: the detector is off;
 * -EOPNOTSUPP: the daemon was built without eBPF; -ECANCELED: it could
 * not load (the daemon's log says why).
 */
int ipc_client_bypass(struct ipc_client *c, struct ipc_bypass_rec **recs, size_t *n);

/* A heat map as the daemon sent it ("Heat maps" in ipc_abi.h): every
 * array malloc()ed (ipc_heat_data_free()); strings NUL-terminated, row and
 * column indexes and buckets checked against the meta record. */
struct ipc_heat_data {
	struct ipc_heat_meta meta;
	struct ipc_heat_row *rows;
	struct ipc_heat_cell *cells, *marks;
	struct ipc_heat_hot *hot;
	struct ipc_heat_task *tasks;
	size_t nrows, ncells, nmarks, nhot, ntasks;
};

/* Asks for the heat map @req into @out. -ENODEV: no such queue or process
 * (or not the caller's); -EOPNOTSUPP: CPU maps need the daemon's eBPF
 * programs, which are not running (the daemon's log says why); -E2BIG: too
 * many cells for one reply (a larger window or a shorter span fits). */
int ipc_client_heatmap(struct ipc_client *c, const struct ipc_heatmap *req,
		       struct ipc_heat_data *out);
void ipc_heat_data_free(struct ipc_heat_data *d);

/* Sets @key (enum ipc_key) to @value on queue @id or every queue of pid @id.
 * A refusal may say why in @c->why and @c->limit. */
int ipc_client_set(struct ipc_client *c, uint32_t target, uint64_t id, uint32_t key,
		   int64_t value);

int ipc_client_policy_get(struct ipc_client *c, char *name, size_t len);
/* A refusal says why in @c->error (when the daemon said). */
int ipc_client_policy_set(struct ipc_client *c, const char *name);
int ipc_client_status(struct ipc_client *c, struct ipc_status_reply *out);

/* Prometheus text exposition; *@text is malloc()ed and NUL-terminated. */
int ipc_client_metrics(struct ipc_client *c, char **text);

#endif
