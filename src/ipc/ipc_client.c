/*
 * Synchronous CLI requests (see ipc_client.h).
 */
#include "ipc/ipc_client.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"
#include "base/compiler.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Longest wait for any reply. */
#define IPC_CLIENT_TIMEOUT_S 10

union ipc_buf {
	char b[IPC_MSG_MAX];
	uint64_t align;
};

static int ipc_client_send(struct ipc_client *c, uint16_t type, const void *body,
			   size_t len)
{
	union ipc_buf buf;
	int n = ipc_build(buf.b, sizeof(buf.b), type, ++c->seq, body, len);

	if (n < 0)
		return n;
	n = ipc_send(c->fd, buf.b, (size_t)n, NULL, 0);
	return n < 0 ? (n == -ECONNRESET ? -EPIPE : n) : 0;
}

/* Receives the reply to the last request into @buf, decoded into @m. */
static int ipc_client_recv(struct ipc_client *c, union ipc_buf *buf, struct ipc_msg *m)
{
	int n = ipc_recv(c->fd, buf->b, sizeof(buf->b), NULL, NULL, 0);

	c->why = IPC_WHY_NONE;
	c->limit = 0;
	if (n == 0 || n == -ECONNRESET)
		return -EPIPE;
	if (n == -EAGAIN)
		return -ETIMEDOUT;
	if (n < 0)
		return n;
	n = ipc_decode(buf->b, (size_t)n, IPC_FROM_DAEMON, m);
	if (n < 0)
		return -EBADMSG;
	if (m->hdr.seq != c->seq)
		return -EBADMSG;
	if (m->hdr.type == IPC_REPLY) {
		const struct ipc_reply *r = m->body;

		c->why = r->why;
		c->limit = r->limit;
		return r->status;
	}
	return 0;
}

/* Sends a request and expects a reply of @type (or an IPC_REPLY error). */
static int ipc_client_call(struct ipc_client *c, uint16_t type, const void *body,
			   size_t len, uint16_t reply, union ipc_buf *buf,
			   struct ipc_msg *m)
{
	int rc = ipc_client_send(c, type, body, len);

	if (rc < 0)
		return rc;
	rc = ipc_client_recv(c, buf, m);
	if (rc < 0)
		return rc;
	return m->hdr.type == reply ? 0 : -EBADMSG;
}

int ipc_client_open(struct ipc_client *c, const char *control, const char *client)
{
	struct ipc_hello hello = { .role = IPC_ROLE_CTL };
	struct timeval tv = { .tv_sec = IPC_CLIENT_TIMEOUT_S };
	union ipc_buf buf;
	struct ipc_msg m;
	int fd, rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	fd = ipc_connect(control ? control : ipc_control_path());
	c->control = fd >= 0;
	if (fd == -EACCES || fd == -EPERM)
		fd = ipc_connect(client ? client : ipc_socket_path());
	if (fd < 0)
		return fd;
	c->fd = fd;
	/* A wedged daemon must not hang the CLI. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	strncpy(hello.comm, "xschedctl", sizeof(hello.comm) - 1);
	rc = ipc_client_call(c, IPC_HELLO, &hello, sizeof(hello), IPC_REPLY, &buf, &m);
	if (rc < 0)
		ipc_client_close(c);
	return rc;
}

void ipc_client_close(struct ipc_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Receives one chunk of a @reply: 0, or the daemon's refusal (an
 * IPC_REPLY's status), or -EBADMSG for another message. */
static int ipc_client_chunk(struct ipc_client *c, uint16_t reply, union ipc_buf *buf,
			    struct ipc_msg *m)
{
	int rc = ipc_client_recv(c, buf, m);

	if (rc < 0)
		return rc;
	if (m->hdr.type == IPC_REPLY) {
		/* Refused: the status says why. */
		rc = ((const struct ipc_reply *)m->body)->status;
		return rc < 0 ? rc : -EBADMSG;
	}
	return m->hdr.type == reply ? 0 : -EBADMSG;
}

/*
 * Sends @type and gathers the records of its chunked @reply (a struct
 * ipc_list_reply or ipc_devices_reply header, then @size-byte records)
 * into *@recs (malloc()ed), *@n of them.
 */
static int ipc_client_records(struct ipc_client *c, uint16_t type, const void *req,
			      size_t req_len, uint16_t reply, size_t size, void **recs,
			      size_t *n)
{
	_Static_assert(sizeof(struct ipc_list_reply) == sizeof(struct ipc_devices_reply) &&
		       sizeof(struct ipc_list_reply) == sizeof(struct ipc_bypass_reply),
		       "chunk headers differ");
	char *all = NULL;
	size_t have = 0;
	union ipc_buf buf;
	struct ipc_msg m;
	int rc;

	rc = ipc_client_send(c, type, req, req_len);
	for (;;) {
		const struct ipc_list_reply *lr;
		char *grown;

		if (rc < 0)
			break;
		rc = ipc_client_chunk(c, reply, &buf, &m);
		if (rc < 0)
			break;
		lr = m.body;
		grown = realloc(all, (have + lr->count + 1) * size);
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		all = grown;
		memcpy(all + have * size, lr + 1, lr->count * size);
		have += lr->count;
		if (lr->flags & IPC_F_LAST) {
			*recs = all;
			*n = have;
			return 0;
		}
	}
	free(all);
	return rc;
}

int ipc_client_list(struct ipc_client *c, struct ipc_queue_rec **recs, size_t *n)
{
	struct ipc_list req = { 0 };

	return ipc_client_records(c, IPC_LIST, &req, sizeof(req), IPC_LIST_REPLY,
				  sizeof(**recs), (void **)recs, n);
}

int ipc_client_devices(struct ipc_client *c, struct ipc_device_rec **recs, size_t *n)
{
	return ipc_client_records(c, IPC_DEVICES, NULL, 0, IPC_DEVICES_REPLY, sizeof(**recs),
				  (void **)recs, n);
}

int ipc_client_bypass(struct ipc_client *c, struct ipc_bypass_rec **recs, size_t *n)
{
	return ipc_client_records(c, IPC_BYPASS, NULL, 0, IPC_BYPASS_REPLY, sizeof(**recs),
				  (void **)recs, n);
}

void ipc_heat_data_free(struct ipc_heat_data *d)
{
	free(d->rows);
	free(d->cells);
	free(d->marks);
	free(d->hot);
	free(d->tasks);
	memset(d, 0, sizeof(*d));
}

/* Where struct ipc_heat_data keeps each section's records and their count. */
static const struct {
	uint16_t section;
	size_t arr, n;
} ipc_heat_arrays[] = {
	{ IPC_HEAT_ROW, offsetof(struct ipc_heat_data, rows), offsetof(struct ipc_heat_data, nrows) },
	{ IPC_HEAT_CELL, offsetof(struct ipc_heat_data, cells),
	  offsetof(struct ipc_heat_data, ncells) },
	{ IPC_HEAT_MARK, offsetof(struct ipc_heat_data, marks),
	  offsetof(struct ipc_heat_data, nmarks) },
	{ IPC_HEAT_HOT, offsetof(struct ipc_heat_data, hot), offsetof(struct ipc_heat_data, nhot) },
	{ IPC_HEAT_HOT_TASK, offsetof(struct ipc_heat_data, tasks),
	  offsetof(struct ipc_heat_data, ntasks) },
};

/* Appends @n records of @section (not the meta record) to @d's array of
 * them (the array's pointer copied in and out with memcpy: its type is the
 * section's). */
static int ipc_heat_append(struct ipc_heat_data *d, uint16_t section, const void *src, size_t n)
{
	size_t size = ipc_heat_rec_size(section), i, *have;
	char *arr, *grown;

	for (i = 0; i < ARRAY_SIZE(ipc_heat_arrays) && ipc_heat_arrays[i].section != section; i++)
		;
	if (i == ARRAY_SIZE(ipc_heat_arrays))
		return -EBADMSG;
	have = (size_t *)((char *)d + ipc_heat_arrays[i].n);
	memcpy(&arr, (char *)d + ipc_heat_arrays[i].arr, sizeof(arr));
	grown = realloc(arr, (*have + n + 1) * size);
	if (!grown)
		return -ENOMEM;
	memcpy(grown + *have * size, src, n * size);
	memcpy((char *)d + ipc_heat_arrays[i].arr, &grown, sizeof(grown));
	*have += n;
	return 0;
}

/* Whether what @d holds is consistent with its meta record. */
static bool ipc_heat_valid(const struct ipc_heat_data *d)
{
	const struct ipc_heat_meta *m = &d->meta;
	size_t i;

	if (d->nrows != m->nrows || !m->window_ns)
		return false;
	for (i = 0; i < d->nrows; i++)
		if (d->rows[i].row != i || !memchr(d->rows[i].comm, '\0', sizeof(d->rows[i].comm)) ||
		    !memchr(d->rows[i].device, '\0', sizeof(d->rows[i].device)))
			return false;
	for (i = 0; i < d->ncells; i++)
		if (d->cells[i].row >= m->nrows || d->cells[i].col >= m->ncols ||
		    d->cells[i].a >= IPC_HEAT_BUCKETS)
			return false;
	for (i = 0; i < d->nmarks; i++)
		if (d->marks[i].row >= m->nrows || d->marks[i].col >= m->ncols)
			return false;
	for (i = 0; i < d->nhot; i++)
		if (d->hot[i].row >= m->nrows || d->hot[i].first_col >= m->ncols ||
		    d->hot[i].ncols > m->ncols - d->hot[i].first_col ||
		    d->hot[i].top_bucket >= IPC_HEAT_BUCKETS)
			return false;
	for (i = 0; i < d->ntasks; i++)
		if (d->tasks[i].hot >= d->nhot || !memchr(d->tasks[i].comm, '\0', 16))
			return false;
	return true;
}

int ipc_client_heatmap(struct ipc_client *c, const struct ipc_heatmap *req,
		       struct ipc_heat_data *out)
{
	union ipc_buf buf;
	struct ipc_msg m;
	bool meta = false;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ipc_client_send(c, IPC_HEATMAP, req, sizeof(*req));
	while (rc >= 0) {
		const struct ipc_heat_reply *r;
		const void *recs;

		rc = ipc_client_chunk(c, IPC_HEATMAP_REPLY, &buf, &m);
		if (rc < 0)
			break;
		r = m.body;
		recs = r + 1;
		if (r->section == IPC_HEAT_META) {
			if (meta || r->count != 1)
				rc = -EBADMSG;
			else
				memcpy(&out->meta, recs, sizeof(out->meta));
			meta = true;
		} else {
			rc = ipc_heat_append(out, r->section, recs, r->count);
		}
		if (rc >= 0 && !meta)
			rc = -EBADMSG;
		if (rc >= 0 && (r->flags & IPC_F_LAST))
			return ipc_heat_valid(out) ? 0 : -EBADMSG;
	}
	ipc_heat_data_free(out);
	return rc;
}

int ipc_client_set(struct ipc_client *c, uint32_t target, uint64_t id, uint32_t key,
		   int64_t value)
{
	struct ipc_ctl_set req = { .target = target, .key = key, .id = id, .value = value };
	union ipc_buf buf;
	struct ipc_msg m;

	return ipc_client_call(c, IPC_CTL_SET, &req, sizeof(req), IPC_REPLY, &buf, &m);
}

int ipc_client_policy_get(struct ipc_client *c, char *name, size_t len)
{
	const struct ipc_policy_reply *r;
	union ipc_buf buf;
	struct ipc_msg m;
	int rc = ipc_client_call(c, IPC_POLICY_GET, NULL, 0, IPC_POLICY_REPLY, &buf, &m);

	if (rc < 0)
		return rc;
	r = m.body;
	if (r->status < 0)
		return r->status;
	if (strlen(r->name) >= len)
		return -ENAMETOOLONG;
	strcpy(name, r->name);
	return 0;
}

int ipc_client_policy_set(struct ipc_client *c, const char *name)
{
	struct ipc_policy req = { { 0 } };
	union ipc_buf buf;
	struct ipc_msg m;
	int rc;

	if (!name || strlen(name) >= sizeof(req.name) || !*name)
		return -EINVAL;
	strcpy(req.name, name);
	c->error[0] = '\0';
	rc = ipc_client_call(c, IPC_POLICY_SET, &req, sizeof(req), IPC_POLICY_REPLY, &buf, &m);
	if (rc < 0)
		return rc;
	memcpy(c->error, ((const struct ipc_policy_reply *)m.body)->error, sizeof(c->error));
	return ((const struct ipc_policy_reply *)m.body)->status;
}

int ipc_client_status(struct ipc_client *c, struct ipc_status_reply *out)
{
	union ipc_buf buf;
	struct ipc_msg m;
	int rc = ipc_client_call(c, IPC_STATUS, NULL, 0, IPC_STATUS_REPLY, &buf, &m);

	if (rc == 0)
		memcpy(out, m.body, sizeof(*out));
	return rc;
}

int ipc_client_metrics(struct ipc_client *c, char **text)
{
	union ipc_buf buf;
	struct ipc_msg m;
	char *all = NULL;
	size_t have = 0;
	int rc = ipc_client_send(c, IPC_METRICS, NULL, 0);

	while (rc == 0) {
		const struct ipc_text_reply *t;
		char *grown;

		rc = ipc_client_recv(c, &buf, &m);
		if (rc < 0)
			break;
		if (m.hdr.type != IPC_TEXT_REPLY) {
			rc = -EBADMSG;
			break;
		}
		t = m.body;
		grown = realloc(all, have + t->len + 1);
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		all = grown;
		memcpy(all + have, t + 1, t->len);
		have += t->len;
		all[have] = '\0';
		if (t->flags & IPC_F_LAST) {
			*text = all;
			return 0;
		}
	}
	free(all);
	return rc;
}
