/*
 * Run floors (see floor.h and src/ipc/ipc_abi.h, "Run floors").
 *
 * Each device gets, at its first queue, page 0 (the daemon's word, sealed
 * against writable mappings) and then one page per uid with queues there,
 * owned by that uid (mode 0644): the kernel lets only that uid (and root)
 * write it, so a word names who wrote it. Each client has IPC_FLOOR_DEVICES
 * tables, one per device it has queues on; a page is sent to it once per
 * table, read-write when it is its uid's.
 *
 * At every decision of a device: each queue's floor_prio (its effective
 * priority; IPC_FLOOR_EXEMPT while the starvation guard grants it, or
 * without floors) and floor_raise; the daemon's word (the lowest priority
 * among the ready queues it runs); each uid's word checked against the
 * queues of that uid (floor_check()); and the queues whose clients said a
 * floor held them and that none holds any more, rung.
 */
#include "daemon/floor.h"
#include "daemon/daemon.h"
#include "daemon/send.h"
#include "daemon/slot.h"
#include "base/compiler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define FLOOR_PAGE_SIZE 4096u
#define FLOOR_NONE ((uint16_t)IPC_FLOOR_PAGES)

struct xsd_floor_page {
	int fd;                         /* read-write; -1: no page */
	int ro_fd;                      /* read-only, for other uids; -1: none */
	struct ipc_floor_page *map;
	uid_t uid;                      /* whose (page 0: the daemon's) */
	uint32_t refs;                  /* queues of that uid on the device */
	bool withdrawn;                 /* scribbled: never made again for its uid */
	bool stale;                     /* a raise of it may be left from a queue
					 * gone or lowered: lowered without blame */
	int32_t moved;                  /* highest priority of its uid's queues whose
					 * status changed since the last check */
};

struct xsd_floor_dev {
	uint64_t domain;
	struct xsd_floor_page page[IPC_FLOOR_PAGES];
	uint32_t live;                  /* pages that count (bits) */
	uint32_t used;                  /* pages ever made, withdrawn ones too */
	struct xsd_queue **held;        /* its queues whose clients say a floor holds them */
	uint32_t nheld, capheld;
	uint32_t nqueues;               /* in its last decision */
	bool off;                       /* words opened for a decision without floors */
	bool resend;                    /* pages or who has them changed: slots to redo */
	bool kick;                      /* a floor went down, or a queue joined `held`:
					 * look at `held` */
	int32_t floor;                  /* the daemon's word as last stored */
};

static struct xsd_queue *floor_queue(struct sched_q *sq)
{
	return base_container_of(sq, struct xsd_queue, sq);
}

static struct xsd_floor_dev *floor_dev_at(const struct xsd_host *s, uint32_t index)
{
	return index < s->nfloor ? s->floor[index] : NULL;
}

static bool floor_on(const struct xsd_host *s)
{
	return s->floor_cfg && s->core.floor;
}

static void floor_page_free(struct xsd_floor_page *p)
{
	if (p->map)
		munmap(p->map, FLOOR_PAGE_SIZE);
	if (p->fd >= 0)
		close(p->fd);
	if (p->ro_fd >= 0)
		close(p->ro_fd);
	p->map = NULL;
	p->fd = p->ro_fd = -1;
}

/*
 * Makes a page of @domain for @uid (@daemon: the daemon's own, which no
 * client may map writable). 0 or -errno (-EPERM: @uid cannot be made its
 * owner: the daemon is not root).
 */
static int floor_page_new(struct xsd_floor_page *p, uint64_t domain, uid_t uid, bool daemon)
{
	char path[64];
	unsigned seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	int rc;

	p->fd = memfd_create("xsched-floor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	p->ro_fd = -1;
	p->map = NULL;
	p->uid = uid;
	p->refs = 0;
	p->withdrawn = false;
	p->stale = false;
	p->moved = IPC_FLOOR_OPEN;
	if (p->fd < 0)
		return -errno;
	if (ftruncate(p->fd, FLOOR_PAGE_SIZE) < 0)
		goto fail;
	p->map = mmap(NULL, FLOOR_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		goto fail;
	}
	p->map->magic = IPC_FLOOR_MAGIC;
	p->map->uid = daemon ? UINT32_MAX : (uint32_t)uid;
	p->map->domain = domain;
	atomic_store(&p->map->word, (uint32_t)IPC_FLOOR_OPEN);
	/* The daemon's own: no writable mapping from now on but ours. */
	if (daemon)
		seals |= F_SEAL_FUTURE_WRITE;
	if (fcntl(p->fd, F_ADD_SEALS, seals) < 0)
		goto fail;
	/* A uid's: that uid may write it, others only read it (0644). */
	if (!daemon && uid != geteuid() && fchown(p->fd, uid, (gid_t)-1) < 0)
		goto fail;
	if (fchmod(p->fd, 0644) < 0)
		goto fail;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p->fd);
	p->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->ro_fd < 0)
		goto fail;
	return 0;
fail:
	rc = -errno;
	floor_page_free(p);
	return rc;
}

/* The floor state of device @index, made with the daemon's page if new. */
static struct xsd_floor_dev *floor_dev_get(struct xsd_host *s, uint32_t index, uint64_t domain)
{
	struct xsd_floor_dev *f = floor_dev_at(s, index);
	int rc;

	if (f && f->domain == domain)
		return f;
	if (f)
		xsd_floor_forget(s, index);
	if (index >= s->nfloor) {
		uint32_t n = BASE_MAX(index + 1, 2 * s->nfloor);
		struct xsd_floor_dev **grown = realloc(s->floor, n * sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + s->nfloor, 0, (n - s->nfloor) * sizeof(*grown));
		s->floor = grown;
		s->nfloor = n;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	for (uint32_t k = 0; k < IPC_FLOOR_PAGES; k++)
		f->page[k].fd = f->page[k].ro_fd = -1;
	f->domain = domain;
	f->floor = IPC_FLOOR_OPEN;
	rc = floor_page_new(&f->page[0], domain, geteuid(), true);
	if (rc < 0) {
		xsd_warn("run floors: cannot make a floor page (%s): queues are scheduled "
			 "by decisions alone", strerror(-rc));
		free(f);
		return NULL;
	}
	f->live = f->used = 1;
	s->floor[index] = f;
	return f;
}

/*
 * @uid's page of @f, made if there is none and an index is free (one whose
 * page went with its uid's last queue, or a new one); FLOOR_NONE: none. A
 * withdrawn page keeps its index and is never made again for its uid.
 */
static uint16_t floor_uid_page(struct xsd_floor_dev *f, uid_t uid, bool *made)
{
	uint32_t k, free_k = f->used;
	int rc;

	*made = false;
	for (k = 1; k < f->used; k++) {
		struct xsd_floor_page *p = &f->page[k];

		if ((p->map || p->withdrawn) && p->uid == uid)
			return f->live & (1u << k) ? (uint16_t)k : FLOOR_NONE;
		if (!p->map && !p->withdrawn && free_k == f->used)
			free_k = k;
	}
	if (free_k == IPC_FLOOR_PAGES)
		return FLOOR_NONE;
	rc = floor_page_new(&f->page[free_k], f->domain, uid, false);
	if (rc < 0) {
		xsd_debug("run floors: no page for uid %u (%s)", (unsigned)uid, strerror(-rc));
		return FLOOR_NONE;
	}
	if (free_k == f->used)
		f->used++;
	f->live |= 1u << free_k;
	*made = true;
	return (uint16_t)free_k;
}

/* The table of @c for @domain, taken if new; IPC_FLOOR_DEVICES: none left. */
static uint16_t floor_table(struct xsd_client *c, uint64_t domain)
{
	uint16_t t, free_t = IPC_FLOOR_DEVICES;

	for (t = 0; t < IPC_FLOOR_DEVICES; t++) {
		if (c->floor_dom[t] == domain)
			return t;
		if (!c->floor_dom[t] && free_t == IPC_FLOOR_DEVICES)
			free_t = t;
	}
	if (free_t < IPC_FLOOR_DEVICES) {
		c->floor_dom[free_t] = domain;
		c->floor_sent[free_t] = 0;
		c->floor_refs[free_t] = 0;
	}
	return free_t;
}

/* Sends @c the pages of @f it has not got in its table @t. */
static void floor_send(struct xsd_client *c, struct xsd_floor_dev *f, uint16_t t)
{
	uint32_t k;

	for (k = 0; k < IPC_FLOOR_PAGES; k++) {
		struct ipc_floor m = { .domain = f->domain, .table = t, .page = k };
		int fd;

		if (!(f->live & (1u << k)) || (c->floor_sent[t] & (1u << k)))
			continue;
		m.writable = k && f->page[k].uid == c->uid;
		fd = m.writable ? f->page[k].fd : f->page[k].ro_fd;
		if (xsd_send(c, IPC_FLOOR, 0, &m, sizeof(m), &fd, 1) == 0)
			c->floor_sent[t] |= 1u << k;
	}
}

void xsd_floor_attach(struct xsd *d, struct xsd_queue *q)
{
	struct xsd_host *s = &d->host;
	struct xsd_client *c = q->client, *o;
	const struct xsd_device *dev = xsd_devices_at(&s->devs, q->sq.pq.device);
	struct xsd_floor_dev *f;
	uint16_t t;
	bool made;

	q->floor_table = IPC_FLOOR_DEVICES;
	q->floor_upage = FLOOR_NONE;
	if (!s->floor_cfg || !dev || !(f = floor_dev_get(s, q->sq.pq.device, dev->id)))
		return;
	t = floor_table(c, f->domain);
	if (t == IPC_FLOOR_DEVICES)
		return;
	q->floor_table = t;
	c->floor_refs[t]++;
	q->floor_upage = floor_uid_page(f, c->uid, &made);
	if (q->floor_upage < IPC_FLOOR_PAGES)
		f->page[q->floor_upage].refs++;
	/* A new uid's page goes to every process with queues there. */
	for (o = made ? d->clients : NULL; o; o = o->next)
		for (uint16_t u = 0; o != c && u < IPC_FLOOR_DEVICES; u++)
			if (o->floor_dom[u] == f->domain && o->floor_refs[u])
				floor_send(o, f, u);
	floor_send(c, f, t);
	/* The slots of the device are redone at its next decision. */
	f->resend = true;
}

/* Whether a counted word of @f is above @q's floor_prio, as last stored. */
static bool floor_holds(const struct xsd_floor_dev *f, const struct xsd_queue *q)
{
	uint32_t m = q->floor_mask & f->live;

	for (uint32_t k = 0; m; k++, m >>= 1)
		if ((m & 1) && ipc_floor_prio(atomic_load(&f->page[k].map->word)) > q->floor_prio)
			return true;
	return false;
}

/* Stores @prio in @p's word unless it holds it; compare-and-swap, so that a
 * raise in between wins (the next decision looks again). */
static void floor_store(struct xsd_floor_page *p, uint64_t seen, int32_t prio)
{
	if (ipc_floor_prio(seen) != prio)
		atomic_compare_exchange_strong(&p->map->word, &seen, ipc_floor_next(seen, prio));
}

/*
 * Page @k of @f, of a uid. Its word is redundant while the daemon's own is
 * at least as high (a ready queue the policy runs is there). Above it, it
 * is justified by a queue of that uid whose priority reaches it and whose
 * status changed since the last check (its task may have ended: lowered;
 * so is a raise left by a queue gone or lowered, `stale`), as the daemon
 * has read them (`moved`, kept by xsd_floor_status()); only a word left
 * unexplained is checked against the slots of that uid's queues (a Ready
 * whose ring is not read yet leaves it; a change not read yet lowers it),
 * and one still unexplained is a scribble: the page is withdrawn. Lowered
 * words open: the daemon's word holds what the decisions hold.
 */
static void floor_check(struct xsd_floor_dev *f, uint32_t k, struct sched_q *const *q, size_t n)
{
	struct xsd_floor_page *p = &f->page[k];
	uint64_t w = atomic_load(&p->map->word);
	int32_t v = ipc_floor_prio(w);
	bool moved = p->stale || p->moved >= v;
	size_t i;

	p->stale = false;
	p->moved = IPC_FLOOR_OPEN;
	if (v == IPC_FLOOR_OPEN || f->floor >= v)
		return;
	for (i = 0; !moved && i < n; i++) {
		struct xsd_queue *x = floor_queue(q[i]);

		if (q[i]->pq.uid != p->uid || x->floor_raise < v)
			continue;
		/* Its Ready stores the status, bumps status_seq, then raises. */
		if (atomic_load(&x->sp->status) == IPC_ST_READY)
			return;
		moved = atomic_load(&x->sp->status_seq) != x->status_seen;
	}
	if (moved) {
		floor_store(p, w, IPC_FLOOR_OPEN);
		f->kick = true;
		return;
	}
	xsd_warn("uid %u wrote priority %d to its run floor of device %llu, which no "
		 "queue of its own can raise it to: the page is withdrawn, and that uid's "
		 "processes no longer raise floors on the device", (unsigned)p->uid, v,
		 (unsigned long long)f->domain);
	f->live &= ~(1u << k);
	f->resend = f->kick = true;
	p->withdrawn = true;
	atomic_store(&p->map->word, ipc_floor_next(w, IPC_FLOOR_OPEN));
}

/* The page of @c's uid in @f that @c has, or FLOOR_NONE. */
static uint16_t floor_own(const struct xsd_floor_dev *f, const struct xsd_client *c, uint16_t t)
{
	for (uint32_t k = 1; k < f->used; k++)
		if (f->page[k].map && f->page[k].uid == c->uid)
			return (f->live & c->floor_sent[t] & (1u << k)) ? (uint16_t)k : FLOOR_NONE;
	return FLOOR_NONE;
}

/* Adds @q to the queues of @f a floor holds, or takes it out. */
static void floor_held(struct xsd_floor_dev *f, struct xsd_queue *q, bool held)
{
	uint32_t i;

	if (q->floored == held)
		return;
	if (held && f->nheld == f->capheld) {
		uint32_t cap = f->capheld ? 2 * f->capheld : 16;
		struct xsd_queue **grown = realloc(f->held, cap * sizeof(*grown));

		/* Without room it is not tracked: its next ring says it again. */
		if (!grown)
			return;
		f->held = grown;
		f->capheld = cap;
	}
	q->floored = held;
	if (held) {
		f->held[f->nheld++] = q;
		f->kick = true;
		return;
	}
	for (i = 0; i < f->nheld && f->held[i] != q; i++)
		;
	if (i < f->nheld)
		f->held[i] = f->held[--f->nheld];
}

/* The queues of @f that no floor holds any more: their clients are marked
 * with @ring to look at them again. */
static void floor_kick(struct xsd_host *s, struct xsd_floor_dev *f, xsd_floor_ring_fn ring)
{
	f->kick = false;
	for (uint32_t i = 0; i < f->nheld;) {
		struct xsd_queue *q = f->held[i];

		if (floor_holds(f, q)) {
			i++;
			continue;
		}
		floor_held(f, q, false);
		xsd_slot_kick(q);
		ring(s, q->client);
	}
}

/* Without floors: every slot exempt, every word open, the held rung. */
static void floor_off(struct xsd_host *s, struct sched_q *const *q, size_t n,
		      const struct sched_summary *sum, xsd_floor_ring_fn ring)
{
	struct xsd_floor_dev *f = floor_dev_at(s, q[0]->pq.device);

	/* Once opened, or never made: the slots say so since their last change. */
	if ((!f || f->off) && !sum->changed)
		return;
	for (size_t i = 0; i < n; i++) {
		struct xsd_queue *x = floor_queue(q[i]);

		xsd_slot_set_floor(x, IPC_FLOOR_EXEMPT, IPC_FLOOR_OPEN, 0, x->floor_table,
				   FLOOR_NONE);
	}
	/* Of every device: a policy without floors may decide them together. */
	for (uint32_t d = 0; d < s->nfloor; d++) {
		struct xsd_floor_dev *g = s->floor[d];

		if (!g || g->off)
			continue;
		for (uint32_t k = 0; k < g->used; k++)
			if (g->page[k].map)
				floor_store(&g->page[k], atomic_load(&g->page[k].map->word),
					    IPC_FLOOR_OPEN);
		g->floor = IPC_FLOOR_OPEN;
		g->off = true;
		floor_kick(s, g, ring);
	}
}

void xsd_floor_decided(struct xsd_host *s, struct sched_q *const *q, size_t n,
		       const struct sched_summary *sum, xsd_floor_ring_fn ring)
{
	struct xsd_floor_dev *f;
	int32_t low;
	size_t i;

	if (!n)
		return;
	if (!floor_on(s)) {
		floor_off(s, q, n, sum, ring);
		return;
	}
	f = floor_dev_at(s, q[0]->pq.device);
	if (!f)
		return;
	/* Per queue only when something it derives from changed. */
	if (sum->changed || f->resend || f->off) {
		f->kick = true;
		for (i = 0; i < n; i++) {
			struct xsd_queue *x = floor_queue(q[i]);
			uint16_t t = x->floor_table;
			int32_t raise = q[i]->pq.priority;

			/* A raise of the old priority is no longer justified by it. */
			if (raise < x->floor_raise && x->floor_own < IPC_FLOOR_PAGES)
				f->page[x->floor_own].stale = true;
			/* What the guard or the preemption cap runs, no floor stops. */
			xsd_slot_set_floor(x, q[i]->exempt ? IPC_FLOOR_EXEMPT : raise, raise,
					   t < IPC_FLOOR_DEVICES ?
						   f->live & x->client->floor_sent[t] : 0,
					   t, t < IPC_FLOOR_DEVICES ? floor_own(f, x->client, t) :
								      FLOOR_NONE);
		}
	}
	f->nqueues = (uint32_t)n;
	f->off = f->resend = false;
	low = sum->low == INT32_MAX ? IPC_FLOOR_OPEN : sum->low;
	if (low != f->floor) {
		floor_store(&f->page[0], atomic_load(&f->page[0].map->word), low);
		f->kick |= low < f->floor;
		f->floor = low;
	}
	for (uint32_t k = 1; k < f->used; k++) {
		if (!(f->live & (1u << k)))
			continue;
		floor_check(f, k, q, n);
		/* Withdrawn: the slots stop reading it now. */
		if (f->resend)
			for (i = 0; i < n; i++) {
				struct xsd_queue *x = floor_queue(q[i]);

				xsd_slot_set_floor(x, x->floor_prio, x->floor_raise,
						   x->floor_mask & f->live, x->floor_dev,
						   (f->live >> x->floor_own) & 1 ? x->floor_own :
										FLOOR_NONE);
			}
		f->resend = false;
	}
	if (f->kick)
		floor_kick(s, f, ring);
}

void xsd_floor_status(struct xsd_host *s, struct xsd_queue *q)
{
	struct xsd_floor_dev *f = floor_dev_at(s, q->sq.pq.device);
	bool floored = atomic_load(&q->sp->floored) != 0;

	if (!f)
		return;
	floor_held(f, q, floored);
	/* Its raise, if any, may be left from a task that ended. */
	for (uint32_t k = 1; k < f->used; k++)
		if (f->page[k].map && f->page[k].uid == q->client->uid &&
		    q->sq.pq.priority > f->page[k].moved)
			f->page[k].moved = q->sq.pq.priority;
}

/*
 * The last queue of page @k's uid left the device: the page goes (its
 * index free for another uid), and no process counts it or has it any
 * more (a new page at that index is sent again). A withdrawn page keeps
 * its index, closed.
 */
static void floor_release(struct xsd_host *s, struct xsd_floor_dev *f, uint32_t k)
{
	struct xsd *d = base_container_of(s, struct xsd, host);
	struct xsd_client *c;

	if (f->page[k].map)
		atomic_store(&f->page[k].map->word,
			     ipc_floor_next(atomic_load(&f->page[k].map->word), IPC_FLOOR_OPEN));
	floor_page_free(&f->page[k]);
	f->live &= ~(1u << k);
	f->resend = f->kick = true;
	for (c = d->clients; c; c = c->next)
		for (uint32_t t = 0; t < IPC_FLOOR_DEVICES; t++)
			if (c->floor_dom[t] == f->domain)
				c->floor_sent[t] &= ~(1u << k);
}

bool xsd_floor_covers(const struct xsd_host *s, const struct xsd_queue *q)
{
	const struct xsd_floor_dev *f = floor_dev_at(s, q->sq.pq.device);

	return f && floor_on(s) && f->nqueues > XSD_FLOOR_LAZY_MIN && (q->floor_mask & f->live & 1u) &&
	       f->floor > q->floor_prio;
}

void xsd_floor_detach(struct xsd_host *s, struct xsd_queue *q)
{
	struct xsd_floor_dev *f = floor_dev_at(s, q->sq.pq.device);
	struct xsd_client *c = q->client;
	uint16_t t = q->floor_table;

	if (f)
		floor_held(f, q, false);
	q->floored = false;
	if (f && q->floor_own < IPC_FLOOR_PAGES)
		f->page[q->floor_own].stale = true;
	if (t < IPC_FLOOR_DEVICES && c->floor_refs[t] && !--c->floor_refs[t]) {
		c->floor_dom[t] = 0;
		c->floor_sent[t] = 0;
	}
	q->floor_table = IPC_FLOOR_DEVICES;
	if (f && q->floor_upage < IPC_FLOOR_PAGES && !--f->page[q->floor_upage].refs)
		floor_release(s, f, q->floor_upage);
	q->floor_upage = FLOOR_NONE;
}

void xsd_floor_forget(struct xsd_host *s, uint32_t index)
{
	struct xsd_floor_dev *f = floor_dev_at(s, index);

	if (!f)
		return;
	for (uint32_t k = 0; k < IPC_FLOOR_PAGES; k++)
		floor_page_free(&f->page[k]);
	free(f->held);
	free(f);
	s->floor[index] = NULL;
}

void xsd_floor_fini(struct xsd_host *s)
{
	for (uint32_t i = 0; i < s->nfloor; i++)
		xsd_floor_forget(s, i);
	free(s->floor);
	s->floor = NULL;
	s->nfloor = 0;
}
