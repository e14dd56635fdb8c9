/*
 * Sending to a client (see send.h). A packet goes to the socket at once
 * when nothing waits before it; otherwise it waits in the client's queue,
 * in order, until EPOLLOUT (server.c calls xsd_send_flush()).
 */
#include "daemon/send.h"
#include "daemon/daemon.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

union xsd_buf {
	char b[IPC_MSG_MAX + 1];
	uint64_t align;
};

/*
 * Replies that do not fit the socket's buffer (long listings, metrics) wait
 * in a per-client queue flushed on EPOLLOUT, so a slow reader neither
 * stalls the loop nor loses its reply. A client that lets more than
 * XSD_OUT_MAX bytes pile up, or the whole daemon more than
 * XSD_OUT_TOTAL_MAX, is dropped.
 */
#define XSD_OUT_MAX (2u << 20)
#define XSD_OUT_TOTAL_MAX (64u << 20)

struct xsd_outpkt {
	struct xsd_outpkt *next;
	uint32_t len;
	uint32_t pad;
	char data[];
};

static size_t xsd_out_total;

static void xsd_out_interest(struct xsd_client *c, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = &c->sock };

	if (c->want_out != out && epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->sock.fd, &ev) == 0)
		c->want_out = out;
}

void xsd_send_discard(struct xsd_client *c)
{
	while (c->out_head) {
		struct xsd_outpkt *p = c->out_head;

		c->out_head = p->next;
		xsd_out_total -= p->len;
		free(p);
	}
	c->out_tail = NULL;
	c->out_bytes = 0;
}

int xsd_send_flush(struct xsd_client *c)
{
	while (c->out_head) {
		struct xsd_outpkt *p = c->out_head;
		int rc = ipc_send(c->sock.fd, p->data, p->len, NULL, 0);

		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return -EPIPE;
		c->out_head = p->next;
		c->out_bytes -= p->len;
		xsd_out_total -= p->len;
		free(p);
	}
	c->out_tail = NULL;
	xsd_out_interest(c, false);
	return 0;
}

int xsd_send(struct xsd_client *c, uint16_t type, uint32_t seq,
	     const void *body, size_t len, const int *fds, int nfds)
{
	union xsd_buf buf;
	struct xsd_outpkt *p;
	int n = ipc_build(buf.b, sizeof(buf.b), type, seq, body, len), rc;

	if (n < 0)
		return n;
	/* Descriptors cannot wait in the queue: the caller tries again later. */
	if (nfds && c->out_head)
		return -EAGAIN;
	if (!c->out_head) {
		rc = ipc_send(c->sock.fd, buf.b, (size_t)n, fds, nfds);
		if (rc >= 0)
			return 0;
		/* Descriptors are only sent on a fresh connection. */
		if (rc != -EAGAIN || nfds)
			return -EPIPE;
	}
	if (c->out_bytes + (size_t)n > XSD_OUT_MAX ||
	    xsd_out_total + (size_t)n > XSD_OUT_TOTAL_MAX)
		return -ENOBUFS;
	p = malloc(sizeof(*p) + (size_t)n);
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	p->len = (uint32_t)n;
	memcpy(p->data, buf.b, (size_t)n);
	if (c->out_tail)
		c->out_tail->next = p;
	else
		c->out_head = p;
	c->out_tail = p;
	c->out_bytes += (size_t)n;
	xsd_out_total += (size_t)n;
	xsd_out_interest(c, true);
	return 0;
}

int xsd_reply_why(struct xsd_client *c, uint32_t seq, int status, uint32_t why, int64_t limit)
{
	struct ipc_reply r = { .status = status, .why = status < 0 ? why : 0,
			       .limit = status < 0 ? limit : 0 };

	return xsd_send(c, IPC_REPLY, seq, &r, sizeof(r), NULL, 0);
}

int xsd_reply(struct xsd_client *c, uint32_t seq, int status)
{
	return xsd_reply_why(c, seq, status, IPC_WHY_NONE, 0);
}
