/*
 * The agent's daemon mode (see agent_daemon.h, agent_mode.h): connecting
 * to xschedd and mapping the shared slots, the observers' status and
 * counters published there (and the doorbell rung), registrations and
 * hints sent from the agent thread, the daemon's decisions applied when it
 * rings (agent_apply.c), its heartbeat watched (agent_live.c), and
 * fail-open when the connection goes. What leaves the process unscheduled
 * (no daemon, a lost connection, a refused registration, a clamped
 * priority) is said once on stderr (XSCHED_LOG, base/xlog.h).
 */
#include "agent/agent_daemon.h"
#include "agent/agent_apply.h"
#include "agent/agent_floor.h"
#include "agent/agent_live.h"
#include "agent/agent_mem_sync.h"
#include "agent/agent_state.h"
#include "base/compiler.h"
#include "base/xlog.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

union agent_buf {
	char b[IPC_MSG_MAX];
	uint64_t align;
};

/* --- the observers' side: status into the slot, the doorbell ---------- */

/*
 * Writes the daemon's doorbell @bell (-1: none). Callers off the agent
 * thread are counted in ag.users around loading and writing it.
 */
static void agent_bell(int bell)
{
	uint64_t one = 1;

	if (bell >= 0 && write(bell, &one, sizeof(one)) < 0)
		(void)errno;
}

/*
 * Publishes @aq's counters and, with @status, its status, in its slot;
 * then rings, unless the queue is quiet (its flag: see "Lazy doorbells"
 * in ipc_abi.h), or always with @force. In the observer: the slot and the
 * doorbell are used inside ag.users, so a reconnection does not unmap or
 * close them under us.
 */
static void daemon_publish(struct agent_queue *aq, bool status, bool force)
{
	struct ipc_shm *shm;
	struct xq_counters c;
	int bell;

	atomic_fetch_add(&ag.users, 1);
	shm = atomic_load(&ag.shm);
	if (shm && aq->index < shm->nslots) {
		struct ipc_slot *slot = &shm->slot[aq->index];

		xq_counters_locked(aq->q, &c);
		atomic_store(&slot->submitted, c.submitted);
		atomic_store(&slot->completed, c.completed);
		atomic_store(&slot->preemptions, c.preemptions);
		atomic_store(&slot->exec_ns, c.exec_ns);
		bell = atomic_load(&ag.bell_in);
		if (status) {
			atomic_store(&slot->ready_ns, atomic_load(&aq->ready_ns));
			if (atomic_load(&aq->status) == IPC_ST_IDLE)
				atomic_store(&slot->preempt_p99_ns, xq_preempt_p99_locked(aq->q));
			atomic_store(&slot->status, atomic_load(&aq->status));
			/* The daemon reads status after seeing status_seq move. */
			atomic_fetch_add(&slot->status_seq, 1);
			/* Ready: the queues below stop now ("Run floors"). */
			if (atomic_load(&aq->status) == IPC_ST_READY)
				agent_floor_raise(slot);
			/* After the status store: the Dekker pair of ipc_abi.h. */
			if (force || !atomic_load(&slot->quiet))
				agent_bell(bell);
			/* Ready behind a run word the daemon cleared without telling
			 * us (ipc_abi.h, "Lazy suspensions"): the agent watches
			 * the daemon's liveness from now ("Liveness"). */
			if (atomic_load(&aq->status) == IPC_ST_READY &&
			    atomic_load(&slot->run) == 0 && !atomic_load(&ag.watching))
				agent_wake();
		}
	}
	atomic_fetch_sub(&ag.users, 1);
}

/*
 * A floor holds @aq's work (@held) or no longer does: said in its slot,
 * and the daemon rung whatever the queue's quiet flag (the daemon checks
 * the floors then, and rings the queue once they let it go); held, the
 * agent thread watches the daemon's liveness.
 */
static void daemon_floored(struct agent_queue *aq, bool held)
{
	struct ipc_shm *shm;

	atomic_fetch_add(&ag.users, 1);
	shm = atomic_load(&ag.shm);
	if (shm && aq->index < shm->nslots) {
		atomic_store(&shm->slot[aq->index].floored, held);
		atomic_fetch_add(&shm->slot[aq->index].status_seq, 1);
		if (held) {
			agent_bell(atomic_load(&ag.bell_in));
			if (!atomic_load(&ag.watching))
				agent_wake();
		}
	}
	atomic_fetch_sub(&ag.users, 1);
}

/* Rings the daemon without a status change. */
static void daemon_ring(void)
{
	/* Counted in users, like daemon_publish(): the doorbell is not closed
	 * (and its number reused) under our write. */
	atomic_fetch_add(&ag.users, 1);
	agent_bell(atomic_load(&ag.bell_in));
	atomic_fetch_sub(&ag.users, 1);
}

/* --- the agent thread's side: the connection ---------------------------- */

/*
 * Sends one packet. The socket is non-blocking: a daemon that does not read
 * for AGENT_SEND_TIMEOUT_MS is treated as gone (the caller disconnects and
 * every queue runs), so a hung daemon cannot hang the application.
 */
static int agent_send(uint16_t type, const void *body, size_t len)
{
	union agent_buf buf;
	int n = ipc_build(buf.b, sizeof(buf.b), type, ++ag.seq, body, len), rc;

	if (n < 0)
		return n;
	for (;;) {
		struct pollfd pfd = { .fd = ag.sock, .events = POLLOUT };

		rc = ipc_send(ag.sock, buf.b, (size_t)n, NULL, 0);
		if (rc != -EAGAIN)
			return rc < 0 ? -EPIPE : 0;
		if (poll(&pfd, 1, AGENT_SEND_TIMEOUT_MS) != 1)
			return -ETIMEDOUT;
	}
}

/* Packets the agent thread sends, built under the agent lock, sent after. */
struct agent_out {
	uint16_t type;
	uint16_t len;
	union {
		struct ipc_register reg;
		struct ipc_unregister unreg;
		struct ipc_set_hint hint;
		struct ipc_queue_level level;
		struct ipc_mem_need need;
	} body;
};

struct agent_outq {
	struct agent_out *p;
	size_t n, cap;
};

static struct agent_out *agent_out_add(struct agent_outq *q, uint16_t type, size_t len)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 16;
		struct agent_out *grown = realloc(q->p, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		q->p = grown;
		q->cap = cap;
	}
	memset(&q->p[q->n], 0, sizeof(q->p[q->n]));
	q->p[q->n].type = type;
	q->p[q->n].len = (uint16_t)len;
	return &q->p[q->n++];
}

static void agent_build_hints(struct agent_outq *out, struct agent_queue *aq)
{
	int64_t hint[XQ_HINTS];
	uint32_t set = xq_hints(aq->q, hint), k;

	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++) {
		struct agent_out *o;

		if (!(set & (1u << k)) || !ipc_hint_valid(k, hint[k]))
			continue;
		o = agent_out_add(out, IPC_SET_HINT, sizeof(o->body.hint));
		if (o)
			o->body.hint = (struct ipc_set_hint){
				.slot = aq->index, .key = k, .value = hint[k],
			};
	}
}

_Static_assert((int)DEVID_UNVERIFIED == (int)IPC_ID_UNVERIFIED &&
	       (int)DEVID_PCI == (int)IPC_ID_PCI && (int)DEVID_UUID == (int)IPC_ID_UUID,
	       "identity kinds differ");
_Static_assert(sizeof(((struct devid *)0)->ident) == IPC_IDENT_LEN &&
	       sizeof(((struct devid *)0)->pci) == IPC_PCI_LEN, "identity sizes differ");

/*
 * The device of @hwq as the daemon names its domain (ipc_abi.h, enum
 * ipc_id_kind): its identity as the backend found it, and its API-local
 * name. An identity the daemon would refuse (never produced by
 * base/devid.c) degrades to unverified rather than losing the queue.
 */
static void agent_device_identity(struct ipc_register *r, const struct xal_hwq *hwq)
{
	snprintf(r->device, sizeof(r->device), "%s", hwq->device[0] ? hwq->device : "unknown");
	r->id_kind = hwq->id.kind;
	memcpy(r->ident, hwq->id.ident, sizeof(r->ident));
	memcpy(r->pci, hwq->id.pci, sizeof(r->pci));
	r->ident[sizeof(r->ident) - 1] = r->pci[sizeof(r->pci) - 1] = '\0';
	if (!ipc_ident_valid(r->id_kind, r->ident, r->pci)) {
		r->id_kind = IPC_ID_UNVERIFIED;
		memset(r->ident, 0, sizeof(r->ident));
		memset(r->pci, 0, sizeof(r->pci));
	}
}

/* The queue's level and why it is not higher, as the XQueue has them. */
static void agent_build_level(struct agent_outq *out, struct agent_queue *aq)
{
	struct agent_out *o = agent_out_add(out, IPC_QUEUE_LEVEL, sizeof(struct ipc_queue_level));
	xs_queue_info info;

	if (!o)
		return;
	xq_info(aq->q, &info);
	memset(&o->body.level, 0, sizeof(o->body.level));
	o->body.level.slot = aq->index;
	o->body.level.level = (uint32_t)info.level;
	xq_level_why(aq->q, o->body.level.why, sizeof(o->body.level.why));
}

static void agent_build_register(struct agent_outq *out, struct agent_queue *aq)
{
	struct agent_out *o = agent_out_add(out, IPC_REGISTER, sizeof(struct ipc_register));
	struct ipc_register *r;
	int64_t hint[XQ_HINTS];
	xs_queue_info info;
	uint32_t k;

	if (!o)
		return;
	r = &o->body.reg;
	/* Cleared first: a hint set while we read them is sent again. */
	atomic_store(&aq->hints_dirty, false);
	xq_info(aq->q, &info);
	{
		char why[XQ_WHY_LEN];

		/* A reason follows the registration, once registered. */
		xq_level_why(aq->q, why, sizeof(why));
		atomic_store(&aq->level_dirty, why[0] != '\0');
	}
	r->slot = aq->index;
	r->hint_set = xq_hints(aq->q, hint) & 0x1eu;
	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++)
		r->hint[k] = hint[k];
	aq->reg_prio_set = r->hint_set & (1u << IPC_KEY_PRIORITY);
	aq->reg_prio = hint[IPC_KEY_PRIORITY];
	r->level = (uint32_t)info.level;
	r->level_max = (uint32_t)info.level_max;
	/* Its own window, not a cap of the scheduler's. */
	r->threshold = aq->cap ? aq->own_threshold : info.threshold;
	r->batch = aq->cap ? aq->own_batch : info.batch;
	r->budget_ns = info.budget_ns; /* a cap leaves it alone */
	agent_device_identity(r, xq_hwq(aq->q));
	snprintf(r->backend, sizeof(r->backend), "%s", info.backend);
	aq->reg_sent = true;
}

/* Fail-open: every queue runs, and the connection is gone. */
static void agent_disconnect(void)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	int bell = atomic_load(&ag.bell_in);
	uint32_t i;

	atomic_store(&ag.connected, false);
	agent_mem_connected(0, 0);
	ag.hung = ag.reapply = false;
	atomic_store(&ag.watching, false);
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < AGENT_SLOTS; i++) {
		if (!ag.tab[i])
			continue;
		xq_set_run_word(ag.tab[i]->q, NULL, NULL, true);
		agent_floor_install(ag.tab[i], NULL, true);
	}
	pthread_mutex_unlock(&ag.lock);
	atomic_store(&ag.shm, NULL);
	atomic_store(&ag.bell_in, -1);
	while (atomic_load(&ag.users))
		sched_yield();
	agent_floor_unmap();
	if (shm)
		munmap(shm, ag.shm_size);
	if (bell >= 0)
		close(bell);
	if (ag.bell_out >= 0)
		close(ag.bell_out);
	if (ag.sock >= 0)
		close(ag.sock);
	ag.sock = ag.bell_out = -1;
	pthread_mutex_lock(&ag.lock);
	ag.nunreg = 0;
	for (i = 0; i < AGENT_SLOTS; i++) {
		struct agent_queue *aq = ag.tab[i];

		if (!aq)
			continue;
		aq->reg_sent = aq->registered = false;
		aq->blocked_seen = NULL;
		agent_apply_cap(aq, 0, false);
		agent_apply_run(aq, true);
	}
	pthread_mutex_unlock(&ag.lock);
	ag.next_try_ns = clock_now_ns() + ag.backoff_ns;
	ag.backoff_ns = ag.backoff_ns ? 2 * ag.backoff_ns : AGENT_BACKOFF_MIN_NS;
	if (ag.backoff_ns > AGENT_BACKOFF_MAX_NS)
		ag.backoff_ns = AGENT_BACKOFF_MAX_NS;
}

static void agent_comm(char *comm, size_t len)
{
	ssize_t n;
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);

	memset(comm, 0, len);
	if (fd < 0)
		return;
	n = read(fd, comm, len - 1);
	close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

/* Why a handshake failed, each said once (XSCHED_LOG). */
enum agent_hs { AGENT_HS_CLOSED, AGENT_HS_SILENT, AGENT_HS_FOREIGN, AGENT_HS_N };

static const char *const hs_what[AGENT_HS_N] = {
	[AGENT_HS_CLOSED] = "closed the connection during the handshake (a client limit, "
			    "or it is exiting)",
	[AGENT_HS_SILENT] = "did not answer the handshake within 2 s",
	[AGENT_HS_FOREIGN] = "answered the handshake in a way this process does not "
			     "understand (another protocol version?)",
};
static _Atomic bool hs_said[AGENT_HS_N];

/* Connects, says hello and maps the shared slots. 0 or -errno. */
static int agent_connect(void)
{
	struct ipc_hello hello = { .role = IPC_ROLE_AGENT };
	const struct ipc_hello_reply *r;
	struct pollfd pfd;
	union agent_buf buf;
	struct ipc_shm *shm;
	struct ipc_msg m;
	struct stat st;
	int fds[IPC_MAX_FDS], nfds = 0, n, i;
	enum agent_hs why = AGENT_HS_CLOSED;
	uint32_t k;

	ag.sock = ipc_connect(ipc_socket_path());
	if (ag.sock < 0) {
		int rc = ag.sock;

		xlog(XLOG_DEBUG, "connecting to %s: %s", ipc_socket_path(), strerror(-rc));
		XLOG_ONCE(XLOG_WARN, "no scheduler daemon at %s (%s): queues run "
			  "unscheduled; retrying in the background", ipc_socket_path(),
			  strerror(-rc));
		ag.was_down = true;
		return rc;
	}
	agent_comm(hello.comm, sizeof(hello.comm));
	if (agent_send(IPC_HELLO, &hello, sizeof(hello)) < 0)
		goto fail;
	pfd.fd = ag.sock;
	pfd.events = POLLIN;
	why = AGENT_HS_SILENT;
	if (poll(&pfd, 1, AGENT_REPLY_TIMEOUT_MS) != 1)
		goto fail;
	why = AGENT_HS_CLOSED;
	n = ipc_recv(ag.sock, buf.b, sizeof(buf.b), fds, &nfds, 0);
	if (n <= 0)
		goto fail_fds;
	why = AGENT_HS_FOREIGN;
	if (ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) < 0 ||
	    m.hdr.type != IPC_HELLO_REPLY || nfds != 3)
		goto fail_fds;
	r = m.body;
	if (fstat(fds[0], &st) < 0 || (size_t)st.st_size != r->shm_size ||
	    r->shm_size < sizeof(struct ipc_shm) + (size_t)r->nslots * sizeof(struct ipc_slot))
		goto fail_fds;
	shm = mmap(NULL, r->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (shm == MAP_FAILED)
		goto fail_fds;
	if (shm->magic != IPC_SHM_MAGIC || shm->version != IPC_VERSION ||
	    shm->nslots != r->nslots || shm->mem_offset % 8 ||
	    (shm->nmem && (shm->mem_offset < sizeof(*shm) ||
			   shm->mem_offset > r->shm_size ||
			   (r->shm_size - shm->mem_offset) / sizeof(struct ipc_mem) <
				   shm->nmem))) {
		munmap(shm, r->shm_size);
		goto fail_fds;
	}
	close(fds[0]);
	fcntl(ag.sock, F_SETFL, fcntl(ag.sock, F_GETFL) | O_NONBLOCK);
	ag.shm_size = r->shm_size;
	ag.bell_out = fds[2];
	pthread_mutex_lock(&ag.lock);
	for (k = 0; k < AGENT_SLOTS && k < shm->nslots; k++)
		if (ag.tab[k])
			ag.tab[k]->decision_seen = atomic_load(&shm->slot[k].decision_seq);
	atomic_store(&ag.bell_in, fds[1]);
	atomic_store(&ag.shm, shm);
	atomic_store(&ag.connected, true);
	/*
	 * Each queue's current status into its new slot, under the queue's lock
	 * so that none of its own events interleaves, before any registration
	 * is sent.
	 */
	for (k = 0; k < AGENT_SLOTS && k < shm->nslots; k++)
		if (ag.tab[k])
			xq_resync(ag.tab[k]->q);
	ag.beat_seen = atomic_load_explicit(&shm->heartbeat, memory_order_acquire);
	pthread_mutex_unlock(&ag.lock);
	/* This daemon's memory limits, whatever the last one set, and every
	 * device's figures. */
	ag.mem_seq_seen = UINT32_MAX;
	agent_mem_sync(shm, true);
	agent_mem_connected(shm->mem_flags, shm->mem_wait_ms);
	ag.backoff_ns = 0;
	xlog(XLOG_DEBUG, "connected to %s", ipc_socket_path());
	if (ag.was_down)
		XLOG_ONCE(XLOG_INFO, "connected to the scheduler daemon at %s: queues are "
			  "scheduled", ipc_socket_path());
	ag.was_down = false;
	return 0;
fail_fds:
	for (i = 0; i < nfds; i++)
		close(fds[i]);
fail:
	xlog_once(&hs_said[why], XLOG_WARN, "the scheduler daemon at %s %s: queues run "
		  "unscheduled; retrying in the background", ipc_socket_path(), hs_what[why]);
	ag.was_down = true;
	close(ag.sock);
	ag.sock = -1;
	return -EPROTO;
}

/*
 * Publishes which queue of the process each queue waits on (cross-stream
 * dependencies), so the daemon lends it the waiter's priority. Agent lock
 * held; the slot's waits_on is ours to write, announced by status_seq.
 */
static void agent_publish_waits(struct ipc_shm *shm)
{
	bool rang = false;
	uint32_t i, j;

	for (i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];
		void *on;
		int32_t w = -1;

		if (!aq || (on = atomic_load(&aq->blocked_on)) == aq->blocked_seen)
			continue;
		aq->blocked_seen = on;
		for (j = 0; on && j < AGENT_SLOTS && j < shm->nslots; j++)
			if (ag.tab[j] && (void *)ag.tab[j]->q == on)
				w = (int32_t)j;
		atomic_store(&shm->slot[i].waits_on, w);
		atomic_fetch_add(&shm->slot[i].status_seq, 1);
		rang = true;
	}
	if (rang)
		agent_bell(atomic_load(&ag.bell_in));
}

/*
 * Sends what the table says the daemon does not know yet. Agent thread. The
 * packets are built under the agent lock and sent without it, so that
 * application threads registering queues never wait for the socket.
 */
static void agent_sync_daemon(void)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	struct agent_outq out = { 0 };
	struct ipc_mem_need need;
	size_t i;

	if (!shm)
		return;
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < ag.nunreg; i++) {
		struct agent_out *o = agent_out_add(&out, IPC_UNREGISTER,
						    sizeof(struct ipc_unregister));

		if (o)
			o->body.unreg.slot = ag.unreg[i];
	}
	ag.nunreg = 0;
	/* Queues past the daemon's slots are offered too: it refuses them
	 * (-ENOSPC), and counts and reports them, as this process does. */
	for (i = 0; i < AGENT_SLOTS; i++) {
		struct agent_queue *aq = ag.tab[i];

		if (!aq)
			continue;
		if (!aq->reg_sent) {
			agent_build_register(&out, aq);
			if (i >= shm->nslots)
				XLOG_ONCE(XLOG_WARN, "xschedd takes %u queues per process "
					  "(max_queues_per_client): the others run unscheduled",
					  shm->nslots);
		} else if (aq->registered) {
			if (atomic_exchange(&aq->hints_dirty, false))
				agent_build_hints(&out, aq);
			if (atomic_exchange(&aq->level_dirty, false))
				agent_build_level(&out, aq);
		}
	}
	agent_publish_waits(shm);
	pthread_mutex_unlock(&ag.lock);
	if (agent_mem_need_take(&need)) {
		struct agent_out *o = agent_out_add(&out, IPC_MEM_NEED, sizeof(need));

		if (o)
			o->body.need = need;
		else
			agent_mem_need_sent(0);
	}
	for (i = 0; i < out.n; i++) {
		int rc = agent_send(out.p[i].type, &out.p[i].body, out.p[i].len);

		if (rc < 0) {
			XLOG_ONCE(XLOG_WARN, "the scheduler daemon %s: disconnected, queues "
				  "run unscheduled; reconnecting in the background",
				  rc == -ETIMEDOUT ? "read nothing for 1 s" : "went away");
			ag.was_down = true;
			agent_disconnect();
			break;
		}
		ag.sent_type[ag.seq % sizeof(ag.sent_type)] = (uint8_t)out.p[i].type;
		if (out.p[i].type == IPC_MEM_NEED)
			agent_mem_need_sent(ag.seq);
	}
	/* A request not sent (the connection went): it fails now. */
	for (; i < out.n; i++)
		if (out.p[i].type == IPC_MEM_NEED)
			agent_mem_need_sent(0);
	free(out.p);
}

/* IPC_REGISTERED: the queue is the daemon's from now on. */
static void agent_registered(const struct ipc_registered *r)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	struct agent_queue *aq;
	int64_t asked = 0, got = r->hint[IPC_KEY_PRIORITY];
	bool clamped = false;

	pthread_mutex_lock(&ag.lock);
	aq = r->slot < AGENT_SLOTS ? ag.tab[r->slot] : NULL;
	if (aq && aq->reg_sent) {
		aq->registered = true;
		/* Decisions stop launches before this thread applies them;
		 * removed before the mapping goes. Not while the daemon is
		 * taken for hung: agent_live.c installs it when it beats. */
		if (shm && r->slot < shm->nslots && !ag.hung) {
			xq_set_run_word(aq->q, &shm->slot[r->slot].run, &shm->slot[r->slot].inflight,
				    false);
			agent_floor_install(aq, &shm->slot[r->slot], false);
		}
		clamped = aq->reg_prio_set && got < aq->reg_prio;
		asked = aq->reg_prio;
	}
	pthread_mutex_unlock(&ag.lock);
	xlog(XLOG_DEBUG, "queue of slot %u registered as %llu, priority %lld", r->slot,
	     (unsigned long long)r->queue_id, (long long)got);
	if (clamped)
		XLOG_ONCE(XLOG_WARN, "priority %lld is above the priority ceiling of uid %u "
			  "(limits in xschedd.conf): the queue runs at priority %lld",
			  (long long)asked, (unsigned)getuid(), (long long)got);
}

/*
 * IPC_REPLY to request @seq: only refusals matter, to say what they leave
 * undone (replies come in request order, so the request's type is known).
 */
static void agent_refused(uint32_t seq, int status)
{
	if (status >= 0)
		return;
	switch (ag.sent_type[seq % sizeof(ag.sent_type)]) {
	case IPC_REGISTER:
		/* -ENOSPC: past max_queues_per_client, said when offered. */
		if (status != -ENOSPC)
			XLOG_ONCE(XLOG_WARN, "xschedd refused to register a queue (%s): it "
				  "runs unscheduled", strerror(-status));
		break;
	case IPC_SET_HINT:
		if (status == -EPERM)
			XLOG_ONCE(XLOG_WARN, "xschedd refused a priority above the priority "
				  "ceiling of uid %u (limits in xschedd.conf): the queue keeps "
				  "the priority it had", (unsigned)getuid());
		else
			XLOG_ONCE(XLOG_WARN, "xschedd refused a hint of this process (%s): "
				  "the queue keeps the value it had", strerror(-status));
		break;
	default:
		break;
	}
}

/*
 * IPC_MEM_EVICT and IPC_MEM_RESTORE: the shim evicts or restores (on this
 * thread: the daemon waits for the answer, the process's queues are
 * suspended meanwhile), and the answer goes back.
 */
static void agent_mem_answer(uint16_t type)
{
	int rc;

	if (type == IPC_MEM_EVICT) {
		struct ipc_mem_evicted e = { .freed = agent_mem_evict() };

		rc = agent_send(IPC_MEM_EVICTED, &e, sizeof(e));
	} else {
		struct ipc_mem_restored r = { .status = agent_mem_restore() };

		rc = agent_send(IPC_MEM_RESTORED, &r, sizeof(r));
	}
	if (rc == 0)
		ag.sent_type[ag.seq % sizeof(ag.sent_type)] = (uint8_t)(type + 1);
}

/* Handles the daemon's packets; disconnects on hang-up or garbage. */
static void agent_recv(void)
{
	for (;;) {
		union agent_buf buf;
		struct ipc_msg m;
		int fds[IPC_MAX_FDS], nfds = 0;
		int n = ipc_recv(ag.sock, buf.b, sizeof(buf.b), fds, &nfds, MSG_DONTWAIT);

		if (n == -EAGAIN)
			return;
		/* Only a floor page comes with a descriptor (one); one we cannot
		 * map, or any other, ends the connection. */
		if (n > 0 && nfds) {
			bool page = ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) == 0 &&
				    m.hdr.type == IPC_FLOOR && nfds == 1;

			if (page && agent_floor_page(m.body, fds[0]) == 0)
				continue;
			for (int i = 0; !page && i < nfds; i++)
				close(fds[i]);
			n = -EPROTO;
		}
		if (n <= 0 || ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) < 0) {
			XLOG_ONCE(XLOG_WARN, "lost the connection to the scheduler daemon: "
				  "queues run unscheduled; reconnecting in the background");
			ag.was_down = true;
			agent_disconnect();
			return;
		}
		if (m.hdr.type == IPC_REGISTERED)
			agent_registered(m.body);
		else if (m.hdr.type == IPC_REPLY &&
			 !agent_mem_need_reply(m.hdr.seq, ((const struct ipc_reply *)m.body)->status))
			agent_refused(m.hdr.seq, ((const struct ipc_reply *)m.body)->status);
		else if (m.hdr.type == IPC_MEM_EVICT || m.hdr.type == IPC_MEM_RESTORE)
			agent_mem_answer(m.hdr.type);
	}
}

/* --- the mode -------------------------------------------------------------- */

/* Whether the process has queues, unregistrations to send, or device memory. */
static bool agent_busy(void)
{
	bool busy;

	pthread_mutex_lock(&ag.lock);
	busy = ag.nqueues || ag.nunreg;
	pthread_mutex_unlock(&ag.lock);
	return busy || agent_mem_any();
}

static int daemon_init(void)
{
	agent_watch_init();
	return 0;
}

/*
 * Connection upkeep: a process without queues nor device memory holds no
 * connection (nor a daemon slot); one with either connects, with backoff
 * after a failure (the first attempt is announced: agent_mem_tried());
 * connected, it sends what the daemon does not know yet and watches its
 * heartbeat. Wakes for the next attempt or the next look at the beat.
 */
static uint64_t daemon_turn(void)
{
	uint64_t at = 0, watch_at = 0;

	if (ag.sock >= 0 && !agent_busy()) {
		agent_disconnect();
		ag.backoff_ns = 0;
		ag.next_try_ns = 0;
	}
	if (ag.sock < 0 && agent_busy() && clock_now_ns() >= ag.next_try_ns) {
		if (agent_connect() < 0) {
			ag.next_try_ns = clock_now_ns() + ag.backoff_ns;
			ag.backoff_ns = ag.backoff_ns ? 2 * ag.backoff_ns : AGENT_BACKOFF_MIN_NS;
			if (ag.backoff_ns > AGENT_BACKOFF_MAX_NS)
				ag.backoff_ns = AGENT_BACKOFF_MAX_NS;
		}
		agent_mem_tried();
	}
	if (ag.sock >= 0)
		agent_sync_daemon();
	if (ag.sock >= 0 && atomic_load(&ag.shm))
		agent_mem_sync(atomic_load(&ag.shm), false);
	if (ag.sock >= 0)
		watch_at = agent_watch();
	if (ag.sock < 0 && agent_busy())
		at = ag.next_try_ns;
	if (watch_at && (!at || watch_at < at))
		at = watch_at;
	return at;
}

/* Connected: the socket (replies, hang-up) and the daemon's doorbell. */
static unsigned daemon_poll_fds(struct pollfd *pfd)
{
	if (ag.sock < 0)
		return 0;
	pfd[0] = (struct pollfd){ .fd = ag.sock, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = ag.bell_out, .events = POLLIN };
	return 2;
}

/* The daemon rang: its decisions; a packet: read it; and, connected, the
 * decisions again (a reply may have registered a queue). */
static void daemon_polled(const struct pollfd *pfd, unsigned n)
{
	uint64_t v;

	if (n && (pfd[1].revents & POLLIN)) {
		if (read(ag.bell_out, &v, sizeof(v)) < 0)
			(void)errno;
		agent_apply_slots();
	}
	if (n && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
		agent_recv();
	if (ag.sock >= 0)
		agent_apply_slots();
}

const struct agent_mode_ops agent_daemon_ops = {
	.init = daemon_init,
	.turn = daemon_turn,
	.poll_fds = daemon_poll_fds,
	.polled = daemon_polled,
	.publish = daemon_publish,
	.floored = daemon_floored,
	.ring = daemon_ring,
};
