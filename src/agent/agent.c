/*
 * The per-process agent (see agent.h).
 *
 * Threads: XQueue observers run on application threads with the queue's
 * lock held, so they never take the agent's lock; they publish status into
 * the shared slot (or, in local mode, into the agent's view) and ring a
 * doorbell unless the queue is quiet (lazy doorbells, ipc_abi.h).
 * Everything else runs on the agent thread: connecting, sending
 * registrations and hints, and applying decisions, which it does holding
 * the agent lock so that xs_agent_unregister() (which takes it) knows the
 * queue is no longer touched once it returns. Lock order: agent, then queue.
 *
 * The shared mapping and the daemon doorbell are replaced on reconnect;
 * observers announce themselves in `users` while they use them, and the
 * agent thread unmaps an old mapping only once no observer is inside.
 */
#include "agent/agent.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "daemon/policy/policy_builtin.h"
#include "ipc/ipc_msg.h"
#include "ipc/ipc_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define AGENT_SLOTS 256
#define AGENT_BACKOFF_MIN_NS (50 * XS_NSEC_PER_MSEC)
#define AGENT_BACKOFF_MAX_NS (2 * XS_NSEC_PER_SEC)
#define AGENT_REPLY_TIMEOUT_MS 2000
#define AGENT_SEND_TIMEOUT_MS 1000

struct agent_queue {
	struct xq *q;
	uint32_t index;                 /* our table index = the daemon slot */
	/* written by the observer */
	_Atomic uint32_t status;        /* enum ipc_status */
	_Atomic uint64_t ready_ns;
	_Atomic uint32_t status_seq;
	_Atomic bool hints_dirty;
	_Atomic(void *) blocked_on;     /* XQueue our next command waits on */
	_Atomic uint32_t quiet;         /* local mode: may skip waking the agent */
	_Atomic uint32_t inflight;      /* local mode: what the XQueue may still run */
	void *blocked_seen;             /* agent thread: as last published */
	/* agent thread, under the agent lock */
	bool reg_sent, registered;
	bool run;                       /* last decision applied */
	uint32_t decision_seen;
	int32_t threshold, batch, level;
	int64_t budget_ns;
	int32_t cap;                    /* contention-aware in-flight cap; 0: none */
	int32_t own_threshold, own_batch; /* the queue's window while capped */
	int64_t own_budget_ns;
	int64_t ctl_hint[IPC_HINT_KEYS];  /* xschedctl hints last taken over */
	uint32_t ctl_taken;               /* bits of ctl_hint holding a value */
	struct xs_pqueue pq;            /* local mode */
	bool local;                     /* the local policy accepted it */
};

static struct agent {
	pthread_mutex_t lock;
	pthread_once_t once;
	struct agent_queue *tab[AGENT_SLOTS];
	uint32_t unreg[AGENT_SLOTS];    /* slots to unregister at the daemon */
	uint32_t nunreg;
	uint32_t nqueues;
	enum xs_agent_mode mode;
	bool started;
	int wake_fd;
	/* connection: agent thread; observers read shm/bell_in under `users` */
	_Atomic(struct ipc_shm *) shm;
	_Atomic int bell_in;
	_Atomic uint32_t users;
	_Atomic bool connected;
	int sock, bell_out;
	size_t shm_size;
	uint32_t seq;
	uint64_t backoff_ns, next_try_ns;
	/* local mode */
	const struct xs_policy_ops *pops;
	int32_t cwin;                   /* contention-aware cap (XSCHED_CONTENTION_WINDOW) */
	void *pstate;
	uint64_t pwake_ns;
	uint64_t next_id;
} ag = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
	.wake_fd = -1,
	.sock = -1,
	.bell_out = -1,
	.bell_in = -1,
};

enum xs_agent_mode xs_agent_mode(void)
{
	const char *v = getenv("XSCHED_DISABLE");

	if (v && *v && strcmp(v, "0"))
		return XS_AGENT_NONE;
	v = getenv("XSCHED_SCHEDULER");
	if (v && !strcmp(v, "none"))
		return XS_AGENT_NONE;
	if (v && !strcmp(v, "local"))
		return XS_AGENT_LOCAL;
	return XS_AGENT_GLOBAL;
}

bool xs_agent_connected(void)
{
	return atomic_load(&ag.connected);
}

static void agent_wake(void)
{
	uint64_t one = 1;

	if (ag.wake_fd >= 0 && write(ag.wake_fd, &one, sizeof(one)) < 0)
		(void)errno;
}

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
 * Publishes @aq's counters and, with @status, its status; then rings,
 * unless the queue is quiet (its flag: see "Lazy
 * doorbells" in ipc_abi.h), or always with @force.
 */
static void agent_publish(struct agent_queue *aq, bool status, bool force)
{
	struct ipc_shm *shm;
	struct xq_counters c;
	int bell;

	if (ag.mode == XS_AGENT_LOCAL) {
		/* The observer stored the status: the quiet load comes after
		 * it, the Dekker pair of agent_local_schedule(). */
		if (status && (force || !atomic_load(&aq->quiet)))
			agent_wake();
		return;
	}
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
			/* After the status store: the Dekker pair of ipc_abi.h. */
			if (force || !atomic_load(&slot->quiet))
				agent_bell(bell);
		}
	}
	atomic_fetch_sub(&ag.users, 1);
}

/* Rings the scheduler without a status change (local mode: the agent). */
static void agent_ring(void)
{
	if (ag.mode == XS_AGENT_LOCAL) {
		agent_wake();
		return;
	}
	/* Counted in users, like agent_publish(): the doorbell is not closed
	 * (and its number reused) under our write. */
	atomic_fetch_add(&ag.users, 1);
	agent_bell(atomic_load(&ag.bell_in));
	atomic_fetch_sub(&ag.users, 1);
}

static void agent_observer(struct xq *q, enum xq_event ev, void *ctx)
{
	struct agent_queue *aq = ctx;

	switch (ev) {
	case XQ_EVENT_READY:
		atomic_store(&aq->ready_ns, xs_now_ns());
		atomic_store(&aq->status, IPC_ST_READY);
		atomic_fetch_add(&aq->status_seq, 1);
		agent_publish(aq, true, false);
		break;
	case XQ_EVENT_IDLE:
		atomic_store(&aq->status, IPC_ST_IDLE);
		atomic_fetch_add(&aq->status_seq, 1);
		agent_publish(aq, true, false);
		break;
	case XQ_EVENT_RESYNC:
		/* A new connection: the status into its slot. */
		agent_publish(aq, true, true);
		break;
	case XQ_EVENT_PROGRESS:
		agent_publish(aq, false, false);
		break;
	case XQ_EVENT_DRAINED:
		/* The XQueue stored the count: a policy may hand over now. */
		agent_ring();
		break;
	case XQ_EVENT_HINT:
		atomic_store(&aq->hints_dirty, true);
		agent_wake();
		break;
	case XQ_EVENT_BLOCKED:
	case XQ_EVENT_UNBLOCKED:
		/* The agent thread tells the daemon which queue we wait on. */
		atomic_store(&aq->blocked_on, ev == XQ_EVENT_BLOCKED ? xq_blocked_on_locked(q) : NULL);
		agent_wake();
		break;
	}
}

/* --- daemon connection (agent thread) ----------------------------------- */

union agent_buf {
	char b[IPC_MSG_MAX];
	uint64_t align;
};

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
	r->slot = aq->index;
	r->hint_set = xq_hints(aq->q, hint) & 0x1eu;
	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++)
		r->hint[k] = hint[k];
	r->level = (uint32_t)info.level;
	r->level_max = (uint32_t)info.level_max;
	/* Its own window, not a cap of the scheduler's. */
	r->threshold = aq->cap ? aq->own_threshold : info.threshold;
	r->batch = aq->cap ? aq->own_batch : info.batch;
	r->budget_ns = info.budget_ns; /* a cap leaves it alone */
	snprintf(r->device, sizeof(r->device), "%s",
		 xq_hwq(aq->q)->device[0] ? xq_hwq(aq->q)->device : "unknown");
	snprintf(r->backend, sizeof(r->backend), "%s", info.backend);
	aq->reg_sent = true;
}

/*
 * Contention-aware window (DESIGN 3.3): while a queue of higher priority
 * shares the device, the scheduler caps this queue at @cap commands in
 * flight (0: no cap), so that the higher one's task waits for little of
 * ours at Lv1; the queue's own window is kept aside and comes back. With
 * @own_set, the own window was just changed (daemon knobs): keep that one.
 * Agent lock held.
 */
static void agent_apply_cap(struct agent_queue *aq, int32_t cap, bool own_set)
{
	if (cap == aq->cap && !own_set)
		return;
	/* As set: a budget left to the level stays so when it comes back. */
	if (!aq->cap || own_set)
		xq_window_get(aq->q, &aq->own_threshold, &aq->own_batch, &aq->own_budget_ns);
	if (cap)
		xq_set_window(aq->q, cap, 1, 0);
	else
		xq_set_window(aq->q, aq->own_threshold, aq->own_batch, aq->own_budget_ns);
	aq->cap = cap;
}

/* Fail-open: every queue runs, and the connection is gone. */
static void agent_disconnect(void)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	int bell = atomic_load(&ag.bell_in);
	uint32_t i;

	atomic_store(&ag.connected, false);
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i])
			xq_set_gate(ag.tab[i]->q, NULL, NULL, true);
	pthread_mutex_unlock(&ag.lock);
	atomic_store(&ag.shm, NULL);
	atomic_store(&ag.bell_in, -1);
	while (atomic_load(&ag.users))
		sched_yield();
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
		if (!aq->run) {
			xq_resume(aq->q);
			aq->run = true;
		}
	}
	pthread_mutex_unlock(&ag.lock);
	ag.next_try_ns = xs_now_ns() + ag.backoff_ns;
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
	uint32_t k;

	ag.sock = ipc_connect(ipc_socket_path());
	if (ag.sock < 0)
		return ag.sock;
	agent_comm(hello.comm, sizeof(hello.comm));
	if (agent_send(IPC_HELLO, &hello, sizeof(hello)) < 0)
		goto fail;
	pfd.fd = ag.sock;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, AGENT_REPLY_TIMEOUT_MS) != 1)
		goto fail;
	n = ipc_recv(ag.sock, buf.b, sizeof(buf.b), fds, &nfds, 0);
	if (n <= 0 || ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) < 0 ||
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
	    shm->nslots != r->nslots) {
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
	pthread_mutex_unlock(&ag.lock);
	ag.backoff_ns = 0;
	return 0;
fail_fds:
	for (i = 0; i < nfds; i++)
		close(fds[i]);
fail:
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
	for (i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];

		if (!aq)
			continue;
		if (!aq->reg_sent)
			agent_build_register(&out, aq);
		else if (aq->registered && atomic_exchange(&aq->hints_dirty, false))
			agent_build_hints(&out, aq);
	}
	agent_publish_waits(shm);
	pthread_mutex_unlock(&ag.lock);
	for (i = 0; i < out.n; i++) {
		if (agent_send(out.p[i].type, &out.p[i].body, out.p[i].len) < 0) {
			agent_disconnect();
			break;
		}
	}
	free(out.p);
}

static void agent_apply_run(struct agent_queue *aq, bool run)
{
	if (run == aq->run)
		return;
	if (run)
		xq_resume(aq->q);
	else
		xq_suspend(aq->q, 0);
	aq->run = run;
}

/*
 * Hints set with xschedctl become the queue's own, so they are registered
 * again after a daemon restart. Only new values are taken: a hint the
 * application set since keeps precedence.
 */
static void agent_take_ctl_hints(struct agent_queue *aq, struct ipc_slot *slot)
{
	uint32_t set = atomic_load(&slot->hint_set), k;

	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++) {
		int64_t v = atomic_load(&slot->hint[k]);

		if (!(set & (1u << k)) ||
		    ((aq->ctl_taken & (1u << k)) && v == aq->ctl_hint[k]))
			continue;
		aq->ctl_hint[k] = v;
		aq->ctl_taken |= 1u << k;
		xq_set_hint(aq->q, (enum xs_hint)k, v);
	}
}

/* Applies the daemon's decisions and knobs. Agent thread. */
static void agent_apply(void)
{
	struct ipc_shm *shm = atomic_load(&ag.shm);
	uint32_t i;

	if (!shm)
		return;
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < AGENT_SLOTS && i < shm->nslots; i++) {
		struct agent_queue *aq = ag.tab[i];
		struct ipc_slot *slot = &shm->slot[i];
		uint32_t seq, run;
		int32_t t, b, l;
		bool own_set;
		int64_t g;

		if (!aq || !aq->registered)
			continue;
		seq = atomic_load(&slot->decision_seq);
		if (seq == aq->decision_seen)
			continue;
		aq->decision_seen = seq;
		t = atomic_load(&slot->threshold);
		b = atomic_load(&slot->batch);
		g = atomic_load(&slot->budget_ns);
		l = atomic_load(&slot->level);
		run = atomic_load(&slot->run);
		own_set = false;
		if ((t && t != aq->threshold) || (b && b != aq->batch) ||
		    (g && g != aq->budget_ns)) {
			if (aq->cap)
				xq_set_window(aq->q, aq->own_threshold, aq->own_batch,
					      aq->own_budget_ns);
			if (xq_set_window(aq->q, t, b, g) == 0) {
				aq->threshold = t ? t : aq->threshold;
				aq->batch = b ? b : aq->batch;
				aq->budget_ns = g ? g : aq->budget_ns;
				own_set = true;
			}
		}
		if (l && l != aq->level && xq_set_level(aq->q, l) == 0)
			aq->level = l;
		agent_take_ctl_hints(aq, slot);
		agent_apply_cap(aq, run > 1 ? (int32_t)XS_MIN(run - 1, XS_MAX_THRESHOLD) : 0,
				own_set);
		agent_apply_run(aq, run != 0);
		/* The gate may have closed and opened again meanwhile. */
		if (run)
			xq_kick(aq->q);
	}
	pthread_mutex_unlock(&ag.lock);
}

static void agent_recv(void)
{
	for (;;) {
		union agent_buf buf;
		struct ipc_msg m;
		int n = ipc_recv(ag.sock, buf.b, sizeof(buf.b), NULL, NULL, MSG_DONTWAIT);

		if (n == -EAGAIN)
			return;
		if (n <= 0 || ipc_decode(buf.b, (size_t)n, IPC_FROM_DAEMON, &m) < 0) {
			agent_disconnect();
			return;
		}
		if (m.hdr.type == IPC_REGISTERED) {
			const struct ipc_registered *r = m.body;

			struct ipc_shm *shm = atomic_load(&ag.shm);
			struct agent_queue *aq;

			pthread_mutex_lock(&ag.lock);
			aq = r->slot < AGENT_SLOTS ? ag.tab[r->slot] : NULL;
			if (aq && aq->reg_sent) {
				aq->registered = true;
				/* Decisions stop launches before this thread applies
				 * them; removed before the mapping goes. */
				if (shm && r->slot < shm->nslots)
					xq_set_gate(aq->q, &shm->slot[r->slot].run,
						    &shm->slot[r->slot].inflight, false);
			}
			pthread_mutex_unlock(&ag.lock);
		}
		/* Other replies (hint refusals) need no action. */
	}
}

/* --- local mode ----------------------------------------------------------- */

/*
 * A ready queue whose next command waits for another queue of this process
 * (a CUDA event of another stream, say) lends it its priority, through
 * chains of waits: otherwise the waited-on queue could stay suspended for
 * the very queue that waits on it. ag.lock held; priorities are reloaded
 * from the hints at every scheduling pass.
 */
static void agent_local_inherit(void)
{
	bool changed = true;

	for (int pass = 0; changed && pass < AGENT_SLOTS; pass++) {
		changed = false;
		for (uint32_t i = 0; i < AGENT_SLOTS; i++) {
			struct agent_queue *aq = ag.tab[i];
			void *on;

			if (!aq || !aq->local || !aq->pq.ready ||
			    !(on = atomic_load(&aq->blocked_on)))
				continue;
			for (uint32_t j = 0; j < AGENT_SLOTS; j++) {
				struct agent_queue *t = ag.tab[j];

				if (t && t->local && (void *)t->q == on &&
				    t->pq.priority < aq->pq.priority) {
					t->pq.priority = aq->pq.priority;
					changed = true;
				}
			}
		}
	}
}

static void agent_local_schedule(void)
{
	struct xs_pqueue *pv[AGENT_SLOTS];
	bool quiet[AGENT_SLOTS];
	size_t n = 0;
	uint32_t i;

	pthread_mutex_lock(&ag.lock);
	/* Before reading any status: the Dekker pair of agent_publish(). */
	for (i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i])
			atomic_store(&ag.tab[i]->quiet, 0);
	for (i = 0; i < AGENT_SLOTS; i++) {
		struct agent_queue *aq = ag.tab[i];
		int64_t hint[XQ_HINTS];
		xs_queue_stats st;

		if (!aq || !aq->local)
			continue;
		xq_hints(aq->q, hint);
		xq_stats(aq->q, &st);
		aq->pq.priority = (int32_t)hint[XS_HINT_PRIORITY];
		aq->pq.share = hint[XS_HINT_SHARE];
		aq->pq.deadline_us = hint[XS_HINT_DEADLINE_US];
		aq->pq.laxity_us = hint[XS_HINT_LAXITY_US];
		aq->pq.service_ns = st.exec_ns;
		aq->pq.inflight = 0;
		if (atomic_load(&aq->status) == IPC_ST_READY) {
			uint64_t r = atomic_load(&aq->ready_ns);

			if (!aq->pq.ready || r != aq->pq.ready_ns) {
				aq->pq.ready = true;
				aq->pq.ready_ns = r;
				if (ag.pops->queue_ready)
					ag.pops->queue_ready(ag.pstate, &aq->pq, r);
			}
			aq->pq.inflight = (uint16_t)XS_MIN(atomic_load(&aq->inflight), UINT16_MAX);
		} else if (aq->pq.ready) {
			aq->pq.ready = false;
			if (ag.pops->queue_idle)
				ag.pops->queue_idle(ag.pstate, &aq->pq, xs_now_ns());
		}
		aq->pq.run = aq->run;
		pv[n++] = &aq->pq;
	}
	agent_local_inherit();
	ag.pwake_ns = n ? ag.pops->schedule(ag.pstate, pv, n, xs_now_ns()) : 0;
	for (i = 0; i < n; i++) {
		struct agent_queue *aq = xs_container_of(pv[i], struct agent_queue, pq);
		bool below = false;

		for (size_t j = 0; j < n && ag.cwin; j++)
			below |= pv[j]->device == pv[i]->device && pv[j]->priority > pv[i]->priority;
		agent_apply_cap(aq, below ? ag.cwin : 0, false);
		agent_apply_run(aq, pv[i]->run);
		/* Drained before the suspension: no event came (ipc_abi.h,
		 * "Drain"); decide again at once. */
		if (!pv[i]->run && pv[i]->inflight > 1 && atomic_load(&aq->inflight) <= 1)
			ag.pwake_ns = xsd_wake_min(ag.pwake_ns, xs_now_ns());
	}
	xsd_policy_quiet(ag.pops, ag.pstate, pv, n, quiet);
	for (i = 0; i < n; i++)
		if (quiet[i])
			atomic_store(&xs_container_of(pv[i], struct agent_queue, pq)->quiet, 1);
	pthread_mutex_unlock(&ag.lock);
}

static int agent_local_init(void)
{
	const char *name = getenv("XSCHED_POLICY");
	const char *cw = getenv("XSCHED_CONTENTION_WINDOW");
	struct xs_policy_conf conf = { .size = sizeof(conf) };
	char *end;
	long v;

	ag.cwin = XSD_CONTENTION_WINDOW;
	if (cw && *cw) {
		errno = 0;
		v = strtol(cw, &end, 10);
		/* Malformed values are ignored, like the hints'. */
		if (!errno && !*end && v >= 0 && v <= 64)
			ag.cwin = (int32_t)v;
	}

	ag.pops = xsd_policy_find(name && *name ? name : "hpf");
	if (!ag.pops)
		ag.pops = xsd_policy_find("hpf");
	if (ag.pops->init && ag.pops->init(&ag.pstate, &conf) < 0)
		return -ENOMEM;
	return 0;
}

/* --- the agent thread ----------------------------------------------------- */

/* Whether the process has queues, or unregistrations still to send. */
static bool agent_busy(void)
{
	bool busy;

	pthread_mutex_lock(&ag.lock);
	busy = ag.nqueues || ag.nunreg;
	pthread_mutex_unlock(&ag.lock);
	return busy;
}

static int agent_timeout_ms(void)
{
	uint64_t now = xs_now_ns(), at = 0;

	if (ag.mode == XS_AGENT_GLOBAL && ag.sock < 0 && agent_busy())
		at = ag.next_try_ns;
	else if (ag.mode == XS_AGENT_LOCAL && ag.pwake_ns)
		at = ag.pwake_ns;
	if (!at)
		return -1;
	return at <= now ? 0 : (int)((at - now) / XS_NSEC_PER_MSEC) + 1;
}

static void *agent_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "xsched-agent");
	for (;;) {
		struct pollfd pfd[3];
		nfds_t n = 0;
		uint64_t v;

		/* A process without queues holds no connection (nor daemon slot). */
		if (ag.sock >= 0 && !agent_busy()) {
			agent_disconnect();
			ag.backoff_ns = 0;
			ag.next_try_ns = 0;
		}
		if (ag.mode == XS_AGENT_GLOBAL && ag.sock < 0 && agent_busy() &&
		    xs_now_ns() >= ag.next_try_ns) {
			if (agent_connect() < 0) {
				ag.next_try_ns = xs_now_ns() + ag.backoff_ns;
				ag.backoff_ns = ag.backoff_ns ? 2 * ag.backoff_ns : AGENT_BACKOFF_MIN_NS;
				if (ag.backoff_ns > AGENT_BACKOFF_MAX_NS)
					ag.backoff_ns = AGENT_BACKOFF_MAX_NS;
			}
		}
		if (ag.sock >= 0)
			agent_sync_daemon();
		if (ag.mode == XS_AGENT_LOCAL)
			agent_local_schedule();
		pfd[n++] = (struct pollfd){ .fd = ag.wake_fd, .events = POLLIN };
		if (ag.sock >= 0) {
			pfd[n++] = (struct pollfd){ .fd = ag.sock, .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = ag.bell_out, .events = POLLIN };
		}
		if (poll(pfd, n, agent_timeout_ms()) < 0 && errno != EINTR)
			continue;
		if (pfd[0].revents & POLLIN && read(ag.wake_fd, &v, sizeof(v)) < 0)
			(void)errno;
		if (n > 1 && (pfd[2].revents & POLLIN)) {
			if (read(ag.bell_out, &v, sizeof(v)) < 0)
				(void)errno;
			agent_apply();
		}
		if (n > 1 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			agent_recv();
		if (ag.sock >= 0)
			agent_apply();
	}
	return NULL;
}

static void agent_atfork_child(void)
{
	/* The parent's connection and thread are not ours: start afresh. */
	for (uint32_t i = 0; i < AGENT_SLOTS; i++)
		if (ag.tab[i])
			xq_set_gate(ag.tab[i]->q, NULL, NULL, false);
	memset(ag.tab, 0, sizeof(ag.tab));
	ag.nunreg = 0;
	ag.nqueues = 0;
	ag.started = false;
	if (ag.wake_fd >= 0)
		close(ag.wake_fd);
	if (ag.sock >= 0)
		close(ag.sock);
	if (ag.bell_out >= 0)
		close(ag.bell_out);
	if (atomic_load(&ag.bell_in) >= 0)
		close(atomic_load(&ag.bell_in));
	if (atomic_load(&ag.shm))
		munmap(atomic_load(&ag.shm), ag.shm_size);
	ag.wake_fd = ag.sock = ag.bell_out = -1;
	atomic_store(&ag.bell_in, -1);
	atomic_store(&ag.shm, NULL);

	atomic_store(&ag.users, 0);
	atomic_store(&ag.connected, false);
	ag.backoff_ns = 0;
	ag.next_try_ns = 0;
	pthread_mutex_init(&ag.lock, NULL);
}

static void agent_atfork_prepare(void)
{
	pthread_mutex_lock(&ag.lock);
}

static void agent_atfork_parent(void)
{
	pthread_mutex_unlock(&ag.lock);
}

static void agent_once(void)
{
	pthread_atfork(agent_atfork_prepare, agent_atfork_parent, agent_atfork_child);
}

/* Starts the agent thread. Agent lock held. */
static int agent_start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	ag.mode = xs_agent_mode();
	ag.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ag.wake_fd < 0)
		return -errno;
	if (ag.mode == XS_AGENT_LOCAL && (rc = agent_local_init()) < 0)
		return rc;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	rc = pthread_create(&t, &attr, agent_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		close(ag.wake_fd);
		ag.wake_fd = -1;
		return -rc;
	}
	ag.started = true;
	return 0;
}

/* Local mode tells devices apart by name (FNV-1a). */
static uint32_t agent_device_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* XSCHED_PRIORITY and friends: hints of every queue of the process. */
static void agent_env_hints(struct xq *q)
{
	static const struct {
		const char *var;
		enum xs_hint hint;
	} env[] = {
		{ "XSCHED_PRIORITY", XS_HINT_PRIORITY },
		{ "XSCHED_SHARE", XS_HINT_SHARE },
		{ "XSCHED_DEADLINE_US", XS_HINT_DEADLINE_US },
		{ "XSCHED_LAXITY_US", XS_HINT_LAXITY_US },
	};
	size_t i;

	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = getenv(env[i].var);
		char *end;
		long long x;

		if (!v || !*v)
			continue;
		errno = 0;
		x = strtoll(v, &end, 10);
		/* Malformed or out of range: ignored, as if unset. */
		if (!errno && !*end)
			xq_set_hint(q, env[i].hint, x);
	}
}

int xs_agent_register(struct xq *q)
{
	struct agent_queue *aq;
	uint32_t i;
	int rc = 0;

	if (xs_agent_mode() == XS_AGENT_NONE)
		return 0;
	agent_env_hints(q);
	aq = calloc(1, sizeof(*aq));
	if (!aq)
		return -ENOMEM;
	aq->q = q;
	aq->run = true;
	aq->pq.id = 0;
	pthread_once(&ag.once, agent_once);
	pthread_mutex_lock(&ag.lock);
	if (!ag.started && (rc = agent_start()) < 0)
		goto fail;
	for (i = 0; i < AGENT_SLOTS && ag.tab[i]; i++)
		;
	if (i == AGENT_SLOTS) {
		rc = -ENOSPC;
		goto fail;
	}
	aq->index = i;
	aq->pq.id = ++ag.next_id;
	aq->pq.client = (uint64_t)getpid();
	aq->pq.device = agent_device_hash(xq_hwq(q)->device);
	ag.tab[i] = aq;
	ag.nqueues++;
	/* A queue the local policy refuses runs unscheduled. */
	aq->local = ag.mode == XS_AGENT_LOCAL &&
		    (!ag.pops->queue_add || ag.pops->queue_add(ag.pstate, &aq->pq) == 0);
	pthread_mutex_unlock(&ag.lock);
	xq_set_observer(q, agent_observer, aq);
	if (aq->local)
		xq_set_gate(q, NULL, &aq->inflight, true);
	agent_wake();
	return 0;
fail:
	pthread_mutex_unlock(&ag.lock);
	free(aq);
	return rc;
}

void xs_agent_unregister(struct xq *q)
{
	struct agent_queue *aq = NULL;
	uint32_t i;

	if (!q || !ag.started)
		return;
	/* No observer call for @q after this returns, and no gate. */
	xq_set_observer(q, NULL, NULL);
	xq_set_gate(q, NULL, NULL, true);
	pthread_mutex_lock(&ag.lock);
	for (i = 0; i < AGENT_SLOTS; i++) {
		if (ag.tab[i] && ag.tab[i]->q == q) {
			aq = ag.tab[i];
			ag.tab[i] = NULL;
			ag.nqueues--;
			break;
		}
	}
	if (aq) {
		if (aq->reg_sent && ag.nunreg < AGENT_SLOTS)
			ag.unreg[ag.nunreg++] = aq->index;
		if (aq->local && ag.pops->queue_remove)
			ag.pops->queue_remove(ag.pstate, &aq->pq);
		if (!aq->run)
			xq_resume(q);
	}
	pthread_mutex_unlock(&ag.lock);
	free(aq);
	agent_wake();
}
