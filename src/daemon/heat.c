/*
 * Latency heat maps (heat.h). Windows are numbered from the daemon's epoch
 * (its first window), so a sparse cell's window fits 32 bits; the CPU ring
 * keeps the programs' absolute window numbers (CLOCK_MONOTONIC / window).
 *
 * Hot spots of a CPU map: a window is hot when a wait that ended in it, or
 * in a later window but began before its end (the window's longest wait
 * says how far back), reached the threshold's bucket (for 10 ms: 8.2 ms
 * and above), since a thread kept waiting shows only when it finally runs;
 * a run of at least `hot_windows` of them is reported with the tasks that
 * ran longest on that CPU meanwhile and the registered processes whose
 * threads waited there.
 */
#include "daemon/heat.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/send.h"
#include "daemon/watch.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "bpf/xbpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAT_KEY_SUSPEND IPC_HEAT_BUCKETS
#define HEAT_KEY_RESUME (IPC_HEAT_BUCKETS + 1)
#define HEAT_COMMS 1024u
#define HEAT_REPLY_MAX (1536u << 10)    /* of cells in one reply, under XSD_OUT_MAX */
#define HEAT_THRESHOLD_NS (10 * NSEC_PER_MSEC)
#define HEAT_HOT_WINDOWS 3u
#define HEAT_HOT_MAX 64u
#define HEAT_TASKS_PER_HOT 3u

_Static_assert(XBPF_HEAT_BUCKETS == IPC_HEAT_BUCKETS, "one bucket scheme");
_Static_assert(XBPF_HEAT_TOP_NS == IPC_HEAT_TOP_US * NSEC_PER_USEC, "one bucket scheme");

struct heat_cell {
	uint32_t win;                      /* from the epoch */
	uint8_t key;                       /* bucket, or HEAT_KEY_SUSPEND/_RESUME */
	uint8_t pad;
	uint16_t count;
};

/* A ring of non-empty cells, oldest first from `head`. */
struct heat_cells {
	uint32_t head, n, cap;
	struct heat_cell c[];
};

/* One CPU's window, as copied from the programs. */
struct heat_cpu_win {
	uint64_t win;                      /* absolute; another: empty */
	uint16_t slot[IPC_HEAT_BUCKETS];   /* saturating */
	uint16_t pad;
	uint32_t max_us;                   /* the longest wait that ended in it */
	struct { uint32_t tgid, run_us; } ran[2];
	struct { uint32_t tgid, waits; } waited[2];
};

_Static_assert(sizeof(struct heat_cpu_win) == 88, "the memory the docs state");

struct heat_proc {
	int32_t pid;
	struct heat_cells *cells;
};

struct heat_comm {
	uint32_t tgid;
	char comm[16];
};

struct xsd_heat {
	uint64_t window_ns;
	uint64_t epoch;                    /* absolute window number of cell window 0 */
	uint32_t nwin;                     /* windows kept */
	uint64_t budget;                   /* bytes the rings may take */
	uint64_t bytes;                    /* the sparse rings' */
	uint64_t lost;
	/* node */
	struct xbpf_rqlat *rq;
	unsigned ncpus;
	struct heat_cpu_win *cpu;          /* ncpus * nwin, by window % nwin */
	uint64_t drained;                  /* absolute windows below were copied */
	struct xsd_watch timer;
	struct heat_comm comm[HEAT_COMMS];
	/* registered processes */
	struct heat_proc *proc;
	size_t nproc, capproc;
};

/* --- rings ---------------------------------------------------------------- */

static uint32_t heat_win_of(const struct xsd_heat *h, uint64_t ns)
{
	uint64_t w = ns / h->window_ns;

	return w > h->epoch ? (uint32_t)(w - h->epoch) : 0;
}

/* The oldest window the maps still show. */
static uint32_t heat_oldest(const struct xsd_heat *h, uint64_t now)
{
	uint32_t cur = heat_win_of(h, now);

	return cur > h->nwin ? cur - h->nwin : 0;
}

/* What the CPU ring takes. */
static uint64_t heat_cpu_bytes(const struct xsd_heat *h)
{
	return h->cpu ? (uint64_t)h->ncpus * h->nwin * sizeof(struct heat_cpu_win) : 0;
}

/* Grows @r (NULL: new) to hold one more cell, within HEAT_CELLS_MAX;
 * NULL when it cannot grow (full, or out of memory or budget). */
static struct heat_cells *heat_cells_grow(struct xsd_heat *h, struct heat_cells *r)
{
	uint32_t had = r ? r->cap : 0, cap = r ? 2 * r->cap : 16;
	struct heat_cells *g;

	if (had >= HEAT_CELLS_MAX)
		return NULL;
	if (heat_cpu_bytes(h) + h->bytes + (cap - had) * sizeof(struct heat_cell) > h->budget)
		return NULL;
	g = realloc(r, sizeof(*g) + cap * sizeof(struct heat_cell));
	if (!g)
		return NULL;
	if (!had)
		g->head = g->n = 0;
	h->bytes += (cap - had) * sizeof(struct heat_cell);
	g->cap = cap;
	return g;
}

/* Adds @count to cell (@win, @key) of *@rp: to a recent cell of the same
 * window and key, else a new one (the oldest overwritten when full). */
static void heat_cells_add(struct xsd_heat *h, struct heat_cells **rp, uint32_t win, uint8_t key,
			   uint32_t count, uint32_t oldest)
{
	struct heat_cells *r = *rp, *g;
	struct heat_cell *c;
	uint32_t i, k;

	while (count) {
		uint16_t add;

		for (i = 0; r && i < r->n && i < 32; i++) {
			c = &r->c[(r->head + r->n - 1 - i) % r->cap];
			if (c->win != win)
				break;
			if (c->key == key && c->count < UINT16_MAX) {
				add = (uint16_t)BASE_MIN(count, (uint32_t)(UINT16_MAX - c->count));
				c->count += add;
				count -= add;
				break;
			}
		}
		if (!count)
			return;
		if ((!r || r->n == r->cap) && (g = heat_cells_grow(h, r))) {
			/* Grown rings never wrapped: the cells are in order from 0. */
			*rp = r = g;
		}
		if (!r) {
			h->lost += count;          /* no ring: out of memory or budget */
			return;
		}
		if (r->n == r->cap) {
			c = &r->c[r->head];
			if (c->win >= oldest)
				h->lost += c->count;
			r->head = (r->head + 1) % r->cap;
			r->n--;
		}
		k = (r->head + r->n++) % r->cap;
		add = (uint16_t)BASE_MIN(count, (uint32_t)UINT16_MAX);
		r->c[k] = (struct heat_cell){ .win = win, .key = key, .count = add };
		count -= add;
	}
}

static void heat_cells_free(struct xsd_heat *h, struct heat_cells *r)
{
	if (!r)
		return;
	h->bytes -= r->cap * sizeof(struct heat_cell);
	free(r);
}

/* --- queues and processes ---------------------------------------------------- */

void xsd_heat_task(struct xsd_heat *h, struct xsd_queue *q, uint64_t now, uint64_t lat_ns)
{
	if (h)
		heat_cells_add(h, &q->heat, heat_win_of(h, now), ipc_heat_bucket(lat_ns), 1,
			       heat_oldest(h, now));
}

void xsd_heat_mark(struct xsd_heat *h, struct xsd_queue *q, uint64_t now, bool run)
{
	if (h)
		heat_cells_add(h, &q->heat, heat_win_of(h, now),
			       run ? HEAT_KEY_RESUME : HEAT_KEY_SUSPEND, 1, heat_oldest(h, now));
}

void xsd_heat_queue_gone(struct xsd_heat *h, struct xsd_queue *q)
{
	if (h)
		heat_cells_free(h, q->heat);
	else
		free(q->heat);
	q->heat = NULL;
}

static struct heat_proc *heat_proc_find(struct xsd_heat *h, int32_t pid)
{
	for (size_t i = 0; i < h->nproc; i++)
		if (h->proc[i].pid == pid)
			return &h->proc[i];
	return NULL;
}

void xsd_heat_proc_gone(struct xsd *d, int32_t pid)
{
	struct xsd_heat *h = d->heat;
	struct heat_proc *p = h ? heat_proc_find(h, pid) : NULL;

	if (!p)
		return;
	heat_cells_free(h, p->cells);
	*p = h->proc[--h->nproc];
}

/* Whether @pid is a registered process (an agent connected). */
static const struct xsd_client *heat_agent(const struct xsd *d, int32_t pid)
{
	for (const struct xsd_client *c = d->clients; c; c = c->next)
		if (c->pid == pid && c->role == IPC_ROLE_AGENT && c->hello && !c->dead)
			return c;
	return NULL;
}

struct heat_drain {
	struct xsd *d;
	uint32_t oldest;
};

/* A registered process's window from the programs, into its ring. */
static void heat_proc_window(void *arg, const struct xbpf_heat_pkey *k,
			     const struct xbpf_heat_pwin *w)
{
	struct heat_drain *dr = arg;
	struct xsd_heat *h = dr->d->heat;
	struct heat_proc *p = heat_proc_find(h, (int32_t)k->tgid);

	if (!p) {
		struct heat_proc *g;

		if (!heat_agent(dr->d, (int32_t)k->tgid))
			return;
		if (h->nproc == h->capproc) {
			size_t cap = h->capproc ? 2 * h->capproc : 16;

			g = realloc(h->proc, cap * sizeof(*g));
			if (!g)
				return;
			h->proc = g;
			h->capproc = cap;
		}
		p = &h->proc[h->nproc++];
		*p = (struct heat_proc){ .pid = (int32_t)k->tgid };
	}
	if (k->win < h->epoch)
		return;
	for (uint8_t b = 0; b < IPC_HEAT_BUCKETS; b++)
		if (w->slot[b])
			heat_cells_add(h, &p->cells, (uint32_t)(k->win - h->epoch), b, w->slot[b],
				       dr->oldest);
}

/* --- the node's CPUs ----------------------------------------------------------- */

static void heat_comm_keep(struct xsd_heat *h, uint32_t tgid, const char *comm)
{
	struct heat_comm *e = &h->comm[tgid % HEAT_COMMS];

	e->tgid = tgid;
	memcpy(e->comm, comm, sizeof(e->comm));
	e->comm[sizeof(e->comm) - 1] = '\0';
}

static const char *heat_comm(const struct xsd *d, uint32_t tgid)
{
	const struct heat_comm *e = &d->heat->comm[tgid % HEAT_COMMS];
	const struct xsd_client *c;

	if (e->tgid == tgid)
		return e->comm;
	c = heat_agent(d, (int32_t)tgid);
	return c ? c->comm : "?";
}

/* Copies window @w of every CPU from the programs' ring. */
static void heat_copy_window(struct xsd_heat *h, const struct xbpf_heat_win *src, uint64_t w)
{
	for (unsigned cpu = 0; cpu < h->ncpus; cpu++) {
		const struct xbpf_heat_win *s = &src[cpu * XBPF_HEAT_SLOTS + w % XBPF_HEAT_SLOTS];
		struct heat_cpu_win *t = &h->cpu[cpu * (size_t)h->nwin + w % h->nwin];

		memset(t, 0, sizeof(*t));
		t->win = w;
		if (s->win != w)
			continue;
		for (unsigned b = 0; b < IPC_HEAT_BUCKETS; b++)
			t->slot[b] = (uint16_t)BASE_MIN(s->slot[b], (uint32_t)UINT16_MAX);
		t->max_us = s->max_us;
		for (unsigned i = 0; i < 2; i++) {
			t->ran[i].tgid = s->ran[i].tgid;
			t->ran[i].run_us = s->ran[i].run_us;
			if (s->ran[i].tgid)
				heat_comm_keep(h, s->ran[i].tgid, s->ran[i].comm);
			t->waited[i].tgid = s->waited[i].tgid;
			t->waited[i].waits = s->waited[i].waits;
		}
	}
}

/* Every 250 ms: the ended windows of the CPUs and of the processes. */
static void heat_drain(struct xsd *d, struct xsd_watch *w, uint32_t events)
{
	struct xsd_heat *h = d->heat;
	uint64_t now = clock_now_ns(), cur = now / h->window_ns, exp;
	struct heat_drain dr = { d, heat_oldest(h, now) };
	const struct xbpf_heat_win *src;
	unsigned ncpus;

	(void)events;
	if (read(w->fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		xsd_debug("heat maps: timer: %s", strerror(errno));
	if (!h->rq)
		return;
	src = xbpf_rqlat_heat(h->rq, &ncpus);
	/* A window may still be written until the next one has begun on
	 * every CPU: copy up to the one before the current. */
	if (src && h->cpu) {
		if (!h->drained || cur - h->drained > XBPF_HEAT_SLOTS - 2)
			h->drained = cur > XBPF_HEAT_SLOTS - 2 ? cur - (XBPF_HEAT_SLOTS - 2) : 0;
		for (; h->drained + 1 < cur; h->drained++)
			heat_copy_window(h, src, h->drained);
	}
	xbpf_rqlat_drain(h->rq, cur - 1, heat_proc_window, &dr);
}

/* The CPU ring, sized for the processors the programs count. */
static int heat_cpu_alloc(struct xsd *d)
{
	struct xsd_heat *h = d->heat;
	unsigned ncpus = 0;

	free(h->cpu);
	h->cpu = NULL;
	h->drained = 0;
	if (!h->rq || !xbpf_rqlat_heat(h->rq, &ncpus) || !ncpus)
		return 0;
	h->ncpus = ncpus;
	h->cpu = calloc((size_t)ncpus * h->nwin, sizeof(*h->cpu));
	if (!h->cpu)
		return -ENOMEM;
	return 0;
}

void xsd_heat_rq(struct xsd *d, struct xbpf_rqlat *rq)
{
	struct xsd_heat *h = d->heat;
	int rc;

	if (!h)
		return;
	h->rq = rq;
	if (heat_cpu_alloc(d) < 0)
		xsd_warn("heat maps: out of memory for the CPU windows");
	if (!rq) {
		xsd_watch_del(d, &h->timer);
		return;
	}
	if (h->timer.fd >= 0)
		return;
	rc = xsd_watch_timer(d, &h->timer, heat_drain);
	if (!rc)
		rc = xsd_watch_every(&h->timer, HEAT_DRAIN_NS);
	if (rc < 0) {
		xsd_warn("heat maps: no timer (%s): CPU maps are not kept", strerror(-rc));
		xsd_watch_del(d, &h->timer);
	}
}

/* --- setup ----------------------------------------------------------------------- */

static void heat_free_rings(struct xsd *d)
{
	struct xsd_heat *h = d->heat;

	for (struct xsd_client *c = d->clients; c; c = c->next)
		for (uint32_t i = 0; c->queue && i < c->nslots; i++)
			if (c->queue[i])
				xsd_heat_queue_gone(h, c->queue[i]);
	for (size_t i = 0; i < h->nproc; i++)
		heat_cells_free(h, h->proc[i].cells);
	free(h->proc);
	h->proc = NULL;
	h->nproc = h->capproc = 0;
	free(h->cpu);
	h->cpu = NULL;
}

int xsd_heat_apply(struct xsd *d)
{
	const struct xsd_config *cfg = &d->cfg;
	struct xsd_heat *h = d->heat;
	uint64_t window_ns = (uint64_t)cfg->heat_window_ms * NSEC_PER_MSEC;
	uint64_t budget = (uint64_t)cfg->heat_memory_mb << 20;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	uint32_t nwin, fit;

	if (!cfg->heatmap) {
		xsd_heat_stop(d);
		return 0;
	}
	nwin = (uint32_t)((uint64_t)cfg->heat_seconds * NSEC_PER_SEC / window_ns);
	/* The CPU ring takes at most half the budget; the rest is the cells'. */
	fit = (uint32_t)BASE_MIN(budget / 2 / ((n > 0 ? (uint64_t)n : 1) *
					      sizeof(struct heat_cpu_win)), (uint64_t)UINT32_MAX);
	if (fit < nwin) {
		xsd_warn("heat maps: %ld CPUs of %u windows would take more than half of "
			 "[observe] heatmap_memory_mb = %u: they keep %.1f s",
			 n, nwin, cfg->heat_memory_mb, (double)fit * (double)window_ns / 1e9);
		nwin = BASE_MAX(fit, 2u);
	}
	if (h && h->window_ns == window_ns && h->nwin == nwin && h->budget == budget)
		return 0;
	if (h) {
		heat_free_rings(d);
	} else {
		h = d->heat = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->timer.fd = -1;
	}
	h->window_ns = window_ns;
	h->epoch = clock_now_ns() / window_ns;
	h->nwin = nwin;
	h->budget = budget;
	h->bytes = 0;
	return heat_cpu_alloc(d);
}

void xsd_heat_stop(struct xsd *d)
{
	struct xsd_heat *h = d->heat;

	if (!h)
		return;
	heat_free_rings(d);
	xsd_watch_del(d, &h->timer);
	free(h);
	d->heat = NULL;
}

/* --- IPC_HEATMAP ---------------------------------------------------------------- */

/* A reply being built: rows, their cells and marks, hot spots. */
struct heat_map {
	const struct xsd *d;
	uint64_t first, end;               /* absolute windows [first, end) */
	uint32_t f, ncols;                 /* windows per column, columns */
	uint32_t *dense;                   /* ncols * HEAT_KEYS of the row being built */
	struct ipc_heat_meta meta;
	struct ipc_heat_row *rows;
	struct ipc_heat_cell *cells, *marks;
	size_t nrows, ncells, nmarks, caprows, capcells, capmarks;
	struct ipc_heat_hot hot[HEAT_HOT_MAX];
	struct ipc_heat_task tasks[HEAT_HOT_MAX * 2 * HEAT_TASKS_PER_HOT];
	size_t nhot, ntasks;
	size_t bytes;
};

#define HEAT_KEYS (IPC_HEAT_BUCKETS + 2)

/* Appends @rec to the array whose pointer is at @arr (of *@n, room *@cap;
 * the pointer copied in and out with memcpy: its type is the record's). */
static int heat_push(void *arr, size_t *n, size_t *cap, const void *rec, size_t size)
{
	char *a;

	memcpy(&a, arr, sizeof(a));
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		char *g = realloc(a, c * size);

		if (!g)
			return -ENOMEM;
		a = g;
		memcpy(arr, &a, sizeof(a));
		*cap = c;
	}
	memcpy(a + *n * size, rec, size);
	(*n)++;
	return 0;
}

/* Adds @count of @key at absolute window @w to the row being built. */
static void heat_map_add(struct heat_map *m, uint64_t w, uint32_t key, uint32_t count)
{
	if (w < m->first || w >= m->end)
		return;
	m->dense[(size_t)((w - m->first) / m->f) * HEAT_KEYS + key] += count;
}

/* Ends the row being built: a row record, its cells and marks. */
static int heat_map_row(struct heat_map *m, const struct ipc_heat_row *row)
{
	struct ipc_heat_row r = *row;
	int rc;

	r.row = (uint32_t)m->nrows;
	rc = heat_push(&m->rows, &m->nrows, &m->caprows, &r, sizeof(r));
	m->bytes += sizeof(r);
	for (uint32_t col = 0; !rc && col < m->ncols; col++) {
		uint32_t *k = &m->dense[(size_t)col * HEAT_KEYS];
		struct ipc_heat_cell c = { .row = r.row, .col = col };

		for (uint32_t b = 0; !rc && b < IPC_HEAT_BUCKETS; b++) {
			if (!k[b])
				continue;
			c.a = b;
			c.b = k[b];
			m->meta.events += k[b];
			rc = heat_push(&m->cells, &m->ncells, &m->capcells, &c, sizeof(c));
			m->bytes += sizeof(c);
		}
		if (!rc && (k[HEAT_KEY_SUSPEND] || k[HEAT_KEY_RESUME])) {
			c.a = k[HEAT_KEY_SUSPEND];
			c.b = k[HEAT_KEY_RESUME];
			rc = heat_push(&m->marks, &m->nmarks, &m->capmarks, &c, sizeof(c));
			m->bytes += sizeof(c);
		}
	}
	memset(m->dense, 0, (size_t)m->ncols * HEAT_KEYS * sizeof(*m->dense));
	if (!rc && m->bytes > HEAT_REPLY_MAX)
		rc = -E2BIG;
	return rc;
}

/* A row from the sparse ring @r. */
static int heat_map_cells(struct heat_map *m, const struct heat_cells *r,
			  const struct ipc_heat_row *row)
{
	const struct xsd_heat *h = m->d->heat;

	for (uint32_t i = 0; r && i < r->n; i++) {
		const struct heat_cell *c = &r->c[(r->head + i) % r->cap];

		heat_map_add(m, h->epoch + c->win, c->key, c->count);
	}
	return heat_map_row(m, row);
}

static void heat_queue_row(const struct xsd_queue *q, struct ipc_heat_row *row)
{
	memset(row, 0, sizeof(*row));
	row->id = q->sq.pq.id;
	row->seen = (uint32_t)BASE_MIN(q->task_lat->count, (uint64_t)UINT32_MAX);
	row->pid = q->client->pid;
	row->uid = q->client->uid;
	memcpy(row->comm, q->client->comm, sizeof(row->comm));
	snprintf(row->device, sizeof(row->device), "%s", q->device);
}

/* The tasks that ran longest on CPU @cpu in windows [@ws, @we], and the
 * registered processes that waited there, for hot spot @hot. */
static void heat_hot_tasks(struct heat_map *m, unsigned cpu, uint64_t ws, uint64_t we,
			   uint32_t hot)
{
	const struct xsd_heat *h = m->d->heat;
	struct { uint32_t tgid; uint64_t n; } ran[16] = { { 0, 0 } }, waited[16] = { { 0, 0 } };
	uint64_t span_us = (we - ws + 1) * h->window_ns / NSEC_PER_USEC;

	for (uint64_t w = ws; w <= we; w++) {
		const struct heat_cpu_win *t = &h->cpu[cpu * (size_t)h->nwin + w % h->nwin];

		if (t->win != w)
			continue;
		for (unsigned i = 0; i < 2; i++) {
			for (unsigned j = 0; t->ran[i].tgid && j < ARRAY_SIZE(ran); j++)
				if (!ran[j].tgid || ran[j].tgid == t->ran[i].tgid) {
					ran[j].tgid = t->ran[i].tgid;
					ran[j].n += t->ran[i].run_us;
					break;
				}
			for (unsigned j = 0; t->waited[i].tgid && j < ARRAY_SIZE(waited); j++)
				if (!waited[j].tgid || waited[j].tgid == t->waited[i].tgid) {
					waited[j].tgid = t->waited[i].tgid;
					waited[j].n += t->waited[i].waits;
					break;
				}
		}
	}
	for (unsigned kind = 0; kind < 2; kind++) {
		__typeof__(ran[0]) *set = kind ? waited : ran;

		for (unsigned k = 0; k < HEAT_TASKS_PER_HOT; k++) {
			unsigned best = ARRAY_SIZE(ran);
			struct ipc_heat_task *t;

			for (unsigned j = 0; j < ARRAY_SIZE(ran); j++)
				if (set[j].n && (best == ARRAY_SIZE(ran) || set[j].n > set[best].n))
					best = j;
			if (best == ARRAY_SIZE(ran) || m->ntasks == ARRAY_SIZE(m->tasks))
				break;
			t = &m->tasks[m->ntasks++];
			memset(t, 0, sizeof(*t));
			t->hot = hot;
			t->waited = kind;
			t->pid = (int32_t)set[best].tgid;
			t->share_pm = kind ? (uint32_t)BASE_MIN(set[best].n, (uint64_t)UINT32_MAX) :
					     (uint32_t)BASE_MIN(set[best].n * 1000 / BASE_MAX(span_us, 1),
								1000);
			snprintf(t->comm, sizeof(t->comm), "%s", heat_comm(m->d, set[best].tgid));
			set[best].n = 0;
		}
	}
}

/* The hot spots of CPU @cpu (row @row): see the top of this file. */
static void heat_hot_cpu(struct heat_map *m, unsigned cpu, uint32_t row, uint8_t thr,
			 uint32_t need)
{
	const struct xsd_heat *h = m->d->heat;
	uint64_t n = m->end - m->first, run = 0, top = 0;
	uint8_t *hot = calloc(n + 1, 2);

	if (!hot)
		return;
	/* hot[i]: covered by a wait at or above the threshold's bucket;
	 * hot[n + 1 + i]: the highest bucket ending there. */
	for (uint64_t i = 0; i < n; i++) {
		const struct heat_cpu_win *t = &h->cpu[cpu * (size_t)h->nwin +
						       (m->first + i) % h->nwin];
		uint8_t b = IPC_HEAT_BUCKETS;

		for (uint8_t k = IPC_HEAT_BUCKETS; t->win == m->first + i && k-- > 0;)
			if (t->slot[k]) {
				b = k;
				break;
			}
		if (b == IPC_HEAT_BUCKETS || b < thr)
			continue;
		hot[n + 1 + i] = b;
		for (uint64_t back = (uint64_t)t->max_us * NSEC_PER_USEC / h->window_ns; ; back--) {
			if (back <= i)
				hot[i - back] = 1;
			if (!back)
				break;
		}
	}
	/* Runs closer than a column are one: a column shows them as one. */
	for (uint64_t i = 0, gap = 0; m->f > 1 && i < n; i++) {
		if (!hot[i]) {
			gap++;
			continue;
		}
		if (gap && gap < m->f && i > gap)
			memset(&hot[i - gap], 1, gap);
		gap = 0;
	}
	for (uint64_t i = 0; i <= n; i++) {
		if (i < n && hot[i]) {
			run++;
			top = BASE_MAX(top, (uint64_t)hot[n + 1 + i]);
			continue;
		}
		if (run >= need && m->nhot < HEAT_HOT_MAX) {
			uint64_t ws = m->first + i - run, we = m->first + i - 1;
			struct ipc_heat_hot *x = &m->hot[m->nhot];

			x->row = row;
			x->first_col = (uint32_t)((ws - m->first) / m->f);
			x->ncols = (uint32_t)((we - m->first) / m->f) - x->first_col + 1;
			x->top_bucket = (uint32_t)top;
			heat_hot_tasks(m, cpu, ws, we, (uint32_t)m->nhot++);
		}
		run = top = 0;
	}
	free(hot);
}

static int heat_map_cpus(struct heat_map *m, const struct ipc_heatmap *req)
{
	const struct xsd_heat *h = m->d->heat;
	uint64_t thr_ns = req->threshold_ns ? req->threshold_ns : HEAT_THRESHOLD_NS;
	int rc = 0;

	m->meta.threshold_ns = thr_ns;
	m->meta.hot_windows = req->hot_windows ? req->hot_windows : HEAT_HOT_WINDOWS;
	for (unsigned cpu = 0; !rc && cpu < h->ncpus; cpu++) {
		struct ipc_heat_row row = { .id = cpu };

		for (uint64_t w = m->first; w < m->end; w++) {
			const struct heat_cpu_win *t = &h->cpu[cpu * (size_t)h->nwin + w % h->nwin];

			for (uint32_t b = 0; t->win == w && b < IPC_HEAT_BUCKETS; b++)
				if (t->slot[b])
					heat_map_add(m, w, b, t->slot[b]);
		}
		rc = heat_map_row(m, &row);
		if (!rc)
			heat_hot_cpu(m, cpu, (uint32_t)m->nrows - 1, ipc_heat_bucket(thr_ns),
				     m->meta.hot_windows);
	}
	return rc;
}

/* The rows @req asks for, as @c may see them. */
static int heat_map_rows(struct heat_map *m, const struct xsd_client *c,
			 const struct ipc_heatmap *req)
{
	const struct xsd_heat *h = m->d->heat;
	int rc = 0, found = 0;

	switch (req->kind) {
	case IPC_HEAT_CPU:
		return h->cpu ? heat_map_cpus(m, req) : -EOPNOTSUPP;
	case IPC_HEAT_PID: {
		const struct xsd_client *a = heat_agent(m->d, (int32_t)req->id);
		const struct heat_proc *p = heat_proc_find(m->d->heat, (int32_t)req->id);
		struct ipc_heat_row row = { .id = req->id, .pid = (int32_t)req->id };

		if (!h->rq)
			return -EOPNOTSUPP;
		if (!a || (!c->privileged && a->uid != c->uid))
			return -ENODEV;
		row.uid = a->uid;
		memcpy(row.comm, a->comm, sizeof(row.comm));
		return heat_map_cells(m, p ? p->cells : NULL, &row);
	}
	default:
		break;
	}
	for (const struct xsd_client *o = m->d->clients; !rc && o; o = o->next)
		for (uint32_t i = 0; !rc && o->queue && i < o->nslots; i++) {
			const struct xsd_queue *q = o->queue[i];
			struct ipc_heat_row row;

			if (!q || (!c->privileged && o->uid != c->uid) ||
			    (req->kind == IPC_HEAT_QUEUE && q->sq.pq.id != req->id))
				continue;
			heat_queue_row(q, &row);
			rc = heat_map_cells(m, q->heat, &row);
			found++;
		}
	return !rc && req->kind == IPC_HEAT_QUEUE && !found ? -ENODEV : rc;
}

/* Sends @n records of @section from @recs, in chunks; the last of the
 * reply flagged when @last. */
static int heat_send(struct xsd_client *c, uint32_t seq, uint16_t section, const void *recs,
		     size_t n, bool last)
{
	size_t size = ipc_heat_rec_size(section);
	size_t per = (IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(struct ipc_heat_reply)) / size;
	union {
		struct ipc_heat_reply h;
		char b[IPC_MSG_MAX];
		uint64_t align;
	} out;
	size_t i = 0;
	int rc;

	do {
		size_t k = BASE_MIN(per, n - i);

		out.h = (struct ipc_heat_reply){ .flags = last && i + k == n ? IPC_F_LAST : 0,
						 .section = section, .count = (uint16_t)k };
		memcpy(&out.h + 1, (const char *)recs + i * size, k * size);
		rc = xsd_send(c, IPC_HEATMAP_REPLY, seq, &out, sizeof(out.h) + k * size, NULL, 0);
		i += k;
	} while (rc >= 0 && i < n);
	return rc;
}

/* Columns for @req: a multiple of the daemon's window, the span ending
 * with the last window it has. */
static void heat_map_span(struct heat_map *m, const struct ipc_heatmap *req, uint64_t now)
{
	const struct xsd_heat *h = m->d->heat;
	uint64_t span, f;

	m->end = req->kind == IPC_HEAT_CPU ? h->drained : now / h->window_ns + 1;
	span = req->last_ns ? (req->last_ns + h->window_ns - 1) / h->window_ns : h->nwin;
	span = BASE_MAX(BASE_MIN(span, (uint64_t)h->nwin), 1ull);
	f = BASE_MAX((req->window_ns + h->window_ns - 1) / h->window_ns, 1ull);
	if (req->max_cols && (span + f - 1) / f > req->max_cols)
		f = (span + req->max_cols - 1) / req->max_cols;
	m->f = (uint32_t)BASE_MIN(f, (uint64_t)UINT32_MAX);
	m->ncols = (uint32_t)((span + f - 1) / f);
	m->first = m->end > (uint64_t)m->ncols * f ? m->end - (uint64_t)m->ncols * f : 0;
	m->meta.kind = req->kind;
	m->meta.ncols = m->ncols;
	m->meta.window_ns = f * h->window_ns;
	m->meta.base_ns = h->window_ns;
	m->meta.kept_ns = (uint64_t)h->nwin * h->window_ns;
	m->meta.end_age_ns = now > m->end * h->window_ns ? now - m->end * h->window_ns : 0;
}

int xsd_heat_request(struct xsd *d, struct xsd_client *c, uint32_t seq, const void *body)
{
	const struct ipc_heatmap *req = body;
	struct heat_map m = { .d = d };
	int rc;

	if (!d->heat)
		return xsd_reply(c, seq, -ENODATA);
	heat_map_span(&m, req, clock_now_ns());
	m.dense = calloc((size_t)m.ncols * HEAT_KEYS, sizeof(*m.dense));
	rc = m.dense ? heat_map_rows(&m, c, req) : -ENOMEM;
	m.meta.nrows = (uint32_t)m.nrows;
	m.meta.lost = d->heat->lost;
	m.meta.memory_bytes = d->heat->bytes + heat_cpu_bytes(d->heat);
	if (rc < 0) {
		rc = xsd_reply(c, seq, rc);
	} else {
		rc = heat_send(c, seq, IPC_HEAT_META, &m.meta, 1, false);
		if (rc >= 0 && m.nrows)
			rc = heat_send(c, seq, IPC_HEAT_ROW, m.rows, m.nrows, false);
		if (rc >= 0 && m.ncells)
			rc = heat_send(c, seq, IPC_HEAT_CELL, m.cells, m.ncells, false);
		if (rc >= 0 && m.nmarks)
			rc = heat_send(c, seq, IPC_HEAT_MARK, m.marks, m.nmarks, false);
		if (rc >= 0 && m.nhot)
			rc = heat_send(c, seq, IPC_HEAT_HOT, m.hot, m.nhot, false);
		if (rc >= 0)
			rc = heat_send(c, seq, IPC_HEAT_HOT_TASK, m.tasks, m.ntasks, true);
	}
	free(m.dense);
	free(m.rows);
	free(m.cells);
	free(m.marks);
	return rc;
}
