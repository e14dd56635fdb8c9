/*
 * The model every heat map rendering draws from (see heat_render.h): the
 * binning of columns into cells, the P99 of a cell, the levels and colours
 * of latencies and counts, the labels, titles and hints, and sparklines.
 *
 * A cell's value is the P99 of the histogram merged over the columns it
 * covers, not the largest of their P99s: a wider cell then says the same
 * thing as a narrower one would for the same time, and one unlucky column
 * among many does not paint the whole cell. Colours are indexes of the
 * xterm 256-colour cube so that the terminal, SVG and PNG share them.
 */
#include "heat_render.h"
#include "xschedctl.h"
#include "base/compiler.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEAT_NS_PER_US 1000ull
#define HEAT_LAST_BUCKET (IPC_HEAT_BUCKETS - 1)
#define HEAT_MIN_LINES 4u       /* bucket lines of a one-row map, at least */
#define HEAT_LEVELS 9u          /* levels 1..9 */

/* Row labels: "cpu1023", "q12 xs_load" (queue id and command), ">=100ms". */
#define HEAT_LABEL_CPU 7
#define HEAT_LABEL_QUEUES 16
#define HEAT_LABEL_BUCKET 7

/* Green to yellow to red, below the threshold's bucket; red at and above. */
static const uint8_t heat_latency_ramp[] = { 28, 34, 40, 76, 112, 148, 184, 220, 214, 208,
					     202 };
#define HEAT_HOT_COLOUR 196u

/* Dark blue to yellow, by count level 1..9. */
static const uint8_t heat_count_ramp[HEAT_LEVELS] = { 17, 19, 25, 31, 37, 43, 85, 155, 226 };

/* The cube's six intensities, as xterm defines them. */
static const uint8_t heat_cube_level[6] = { 0, 95, 135, 175, 215, 255 };

size_t heat_bin_of(uint32_t col, size_t ncols, size_t ncells)
{
	return ncols ? (size_t)((uint64_t)col * ncells / ncols) : 0;
}

size_t heat_bin_first(size_t cell, size_t ncols, size_t ncells)
{
	return ncells ? (size_t)(((uint64_t)cell * ncols + ncells - 1) / ncells) : 0;
}

unsigned heat_p99_bucket(const uint64_t *h)
{
	uint64_t total = 0, cum = 0;
	unsigned k;

	for (k = 0; k < IPC_HEAT_BUCKETS; k++)
		total += h[k];
	if (!total)
		return HEAT_EMPTY;
	for (k = 0; k < HEAT_LAST_BUCKET; k++) {
		cum += h[k];
		/* cum / total >= 0.99, without rounding. */
		if (cum * 100 >= total * 99)
			return k;
	}
	return HEAT_LAST_BUCKET;
}

uint64_t heat_bucket_ns(unsigned bucket)
{
	if (bucket >= IPC_HEAT_BUCKETS)
		return 0;
	if (bucket >= HEAT_LAST_BUCKET - 1)
		return IPC_HEAT_TOP_US * HEAT_NS_PER_US;
	return (1ull << bucket) * HEAT_NS_PER_US;
}

void heat_bins_fini(struct heat_bins *b)
{
	free(b->p99);
	free(b->count);
	free(b->marks);
	memset(b, 0, sizeof(*b));
}

static int heat_cmp_row(const void *pa, const void *pb)
{
	const struct ipc_heat_cell *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return a->col < b->col ? -1 : a->col > b->col;
}

/* The P99 of each cell of the row whose cells are @c[0..@n), into @out. */
static void heat_bin_row(const struct ipc_heat_cell *c, size_t n, size_t ncols, size_t ncells,
			 uint64_t *hist, uint8_t *out)
{
	size_t i;

	memset(hist, 0, ncells * IPC_HEAT_BUCKETS * sizeof(*hist));
	for (i = 0; i < n; i++)
		hist[heat_bin_of(c[i].col, ncols, ncells) * IPC_HEAT_BUCKETS + c[i].a] += c[i].b;
	for (i = 0; i < ncells; i++)
		out[i] = (uint8_t)heat_p99_bucket(hist + i * IPC_HEAT_BUCKETS);
}

/* The P99s, row by row, over a copy of the cells sorted by row. */
static int heat_bins_p99(struct heat_bins *b, const struct ipc_heat_data *d)
{
	size_t ncols = d->meta.ncols, i, start;
	struct ipc_heat_cell *c = malloc((d->ncells + 1) * sizeof(*c));
	uint64_t *hist = malloc((b->ncells * IPC_HEAT_BUCKETS + 1) * sizeof(*hist));

	if (!c || !hist) {
		free(c);
		free(hist);
		return -ENOMEM;
	}
	if (d->ncells)
		memcpy(c, d->cells, d->ncells * sizeof(*c));
	qsort(c, d->ncells, sizeof(*c), heat_cmp_row);
	for (start = 0; start < d->ncells; start = i) {
		for (i = start; i < d->ncells && c[i].row == c[start].row; i++)
			;
		heat_bin_row(c + start, i - start, ncols, b->ncells, hist,
			     b->p99 + (size_t)c[start].row * b->ncells);
	}
	free(c);
	free(hist);
	return 0;
}

/*
 * The cells of a hot run where nothing ended a wait (the waiting threads
 * did not run: the hog held the CPU) show the run's worst wait, so that a
 * stripe is drawn as one: the waits that ended later spanned them.
 */
static void heat_bins_hot(struct heat_bins *b, const struct ipc_heat_data *d)
{
	for (size_t i = 0; i < d->nhot; i++) {
		const struct ipc_heat_hot *h = &d->hot[i];
		size_t k0 = heat_bin_of(h->first_col, d->meta.ncols, b->ncells);
		size_t k1 = heat_bin_of(h->first_col + h->ncols - 1, d->meta.ncols, b->ncells);

		for (size_t k = k0; k <= k1; k++)
			if (b->p99[(size_t)h->row * b->ncells + k] == HEAT_EMPTY)
				b->p99[(size_t)h->row * b->ncells + k] = (uint8_t)h->top_bucket;
	}
}

int heat_bins_build(struct heat_bins *b, const struct ipc_heat_data *d, size_t ncells)
{
	size_t ncols = d->meta.ncols, i;

	memset(b, 0, sizeof(*b));
	if (ncells == 0 || ncells > ncols)
		ncells = ncols;
	b->nrows = d->nrows;
	b->ncells = ncells;
	b->p99 = malloc(d->nrows * ncells + 1);
	b->count = calloc(IPC_HEAT_BUCKETS * ncells + 1, sizeof(*b->count));
	b->marks = calloc(ncells + 1, 1);
	if (b->p99)
		memset(b->p99, HEAT_EMPTY, d->nrows * ncells);
	/* heat_bins_p99() writes only the rows that have cells. */
	if (!b->p99 || !b->count || !b->marks || heat_bins_p99(b, d) < 0) {
		heat_bins_fini(b);
		return -ENOMEM;
	}
	for (i = 0; i < d->ncells; i++) {
		size_t k = heat_bin_of(d->cells[i].col, ncols, ncells);
		uint64_t *n = &b->count[d->cells[i].a * ncells + k];

		*n += d->cells[i].b;
		b->max_count = BASE_MAX(b->max_count, *n);
	}
	heat_bins_hot(b, d);
	for (i = 0; i < d->nmarks; i++) {
		size_t k = heat_bin_of(d->marks[i].col, ncols, ncells);

		b->marks[k] |= (d->marks[i].a ? 1u : 0u) | (d->marks[i].b ? 2u : 0u);
	}
	return 0;
}

const char *heat_kind_name(uint32_t kind)
{
	switch (kind) {
	case IPC_HEAT_CPU:
		return "cpu";
	case IPC_HEAT_PID:
		return "pid";
	case IPC_HEAT_QUEUE:
		return "queue";
	case IPC_HEAT_QUEUES:
		return "queues";
	default:
		return "?";
	}
}

bool heat_one_row(uint32_t kind)
{
	return kind == IPC_HEAT_PID || kind == IPC_HEAT_QUEUE;
}

int heat_text_label_width(uint32_t kind)
{
	if (heat_one_row(kind))
		return HEAT_LABEL_BUCKET;
	return kind == IPC_HEAT_QUEUES ? HEAT_LABEL_QUEUES : HEAT_LABEL_CPU;
}

size_t heat_text_cells(uint32_t kind, int width)
{
	int room = width - heat_text_label_width(kind) - 1;

	return room > 0 ? (size_t)room : 1;
}

void heat_bucket_range(const struct heat_bins *b, unsigned *lo, unsigned *hi)
{
	unsigned k, first = IPC_HEAT_BUCKETS, last = 0;
	size_t i;

	for (k = 0; k < IPC_HEAT_BUCKETS; k++)
		for (i = 0; i < b->ncells; i++)
			if (b->count[k * b->ncells + i]) {
				first = BASE_MIN(first, k);
				last = k;
				break;
			}
	if (first == IPC_HEAT_BUCKETS)
		first = last = 0;
	/* A few lines at least, so one busy bucket still reads as a map. */
	while (last - first + 1 < HEAT_MIN_LINES && last < HEAT_LAST_BUCKET)
		last++;
	while (last - first + 1 < HEAT_MIN_LINES && first > 0)
		first--;
	*lo = first;
	*hi = last;
}

uint64_t heat_threshold_ns(const struct ipc_heat_data *d)
{
	/* The daemon echoes it with the hot spots: CPU maps only. */
	return d->meta.threshold_ns ? d->meta.threshold_ns : HEAT_DEFAULT_THRESHOLD_NS;
}

unsigned heat_threshold_bucket(const struct ipc_heat_data *d)
{
	return ipc_heat_bucket(heat_threshold_ns(d));
}

unsigned heat_latency_level(unsigned bucket, unsigned thr_bucket)
{
	if (bucket >= IPC_HEAT_BUCKETS)
		return 0;
	if (bucket >= thr_bucket)
		return HEAT_LEVELS;
	return 1 + bucket * (HEAT_LEVELS - 1) / thr_bucket;
}

unsigned heat_count_level(uint64_t count, uint64_t max)
{
	if (!count || !max)
		return 0;
	if (count >= max || max == 1)
		return HEAT_LEVELS;
	return 1 + (unsigned)((HEAT_LEVELS - 1) * log((double)count) / log((double)max));
}

unsigned heat_latency_colour(unsigned bucket, unsigned thr_bucket)
{
	if (bucket >= thr_bucket)
		return HEAT_HOT_COLOUR;
	return heat_latency_ramp[bucket * ARRAY_SIZE(heat_latency_ramp) / thr_bucket];
}

unsigned heat_count_colour(unsigned level)
{
	return heat_count_ramp[BASE_MIN(BASE_MAX(level, 1u), HEAT_LEVELS) - 1];
}

uint32_t heat_rgb(unsigned xterm)
{
	unsigned i;

	if (xterm < 16 || xterm > 231)
		return 0x808080;
	i = xterm - 16;
	return (uint32_t)heat_cube_level[i / 36] << 16 | (uint32_t)heat_cube_level[i / 6 % 6] << 8 |
	       heat_cube_level[i % 6];
}

/* @v with two significant digits, no trailing ".0": "8.2", "16", "512". */
static void heat_fmt2(char *buf, size_t len, double v, const char *sep, const char *unit)
{
	if (v < 9.95 && fabs(v - round(v)) >= 0.05)
		snprintf(buf, len, "%.1f%s%s", v, sep, unit);
	else
		snprintf(buf, len, "%.0f%s%s", v, sep, unit);
}

char *heat_fmt_dur(char *buf, size_t len, uint64_t ns, const char *sep)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu%sns", (unsigned long long)ns, sep);
	else if (ns < 1000000)
		heat_fmt2(buf, len, (double)ns / 1e3, sep, "us");
	else if (ns < 1000000000)
		heat_fmt2(buf, len, (double)ns / 1e6, sep, "ms");
	else
		heat_fmt2(buf, len, (double)ns / 1e9, sep, "s");
	return buf;
}

char *heat_fmt_bucket(char *buf, size_t len, unsigned bucket)
{
	char d[16];

	if (bucket == 0)
		snprintf(buf, len, "<1us");
	else if (bucket >= HEAT_LAST_BUCKET)
		snprintf(buf, len, ">=%s", heat_fmt_dur(d, sizeof(d),
							 heat_bucket_ns(HEAT_LAST_BUCKET), ""));
	else
		snprintf(buf, len, "%s", heat_fmt_dur(d, sizeof(d), heat_bucket_ns(bucket - 1), ""));
	return buf;
}

/* Seconds for ages and spans of hints: "0.35", "12.4", "120". */
static char *heat_fmt_secs(char *buf, size_t len, uint64_t ns)
{
	double s = (double)ns / 1e9;

	snprintf(buf, len, "%.*f", s < 10 ? 2 : s < 100 ? 1 : 0, s);
	return buf;
}

char *heat_row_label(char *buf, size_t len, const struct ipc_heat_data *d, size_t row)
{
	const struct ipc_heat_row *r = &d->rows[row];
	char comm[sizeof(r->comm) + 1];

	ctl_fmt_name(comm, sizeof(comm), r->comm, sizeof(r->comm));
	switch (d->meta.kind) {
	case IPC_HEAT_CPU:
		snprintf(buf, len, "cpu%llu", (unsigned long long)r->id);
		break;
	case IPC_HEAT_PID:
		snprintf(buf, len, "pid %llu %s", (unsigned long long)r->id, comm);
		break;
	default:
		snprintf(buf, len, "q%llu %s", (unsigned long long)r->id, comm);
	}
	return buf;
}

uint64_t heat_col_age_ns(const struct ipc_heat_data *d, size_t col)
{
	return d->meta.end_age_ns + (d->meta.ncols - col) * d->meta.window_ns;
}

size_t heat_wrap_len(const char *text, size_t room)
{
	size_t n = strlen(text);

	if (n <= room)
		return n;
	for (n = room; n > 0 && text[n] != ' '; n--)
		;
	return n ? n : room;
}

char *heat_title(char *buf, size_t len, const struct ipc_heat_data *d)
{
	const struct ipc_heat_row *r = d->nrows ? &d->rows[0] : NULL;
	char span[16], comm[20], dev[IPC_NAME_LEN + 1];

	heat_fmt_dur(span, sizeof(span), (uint64_t)d->meta.ncols * d->meta.window_ns, " ");
	if (r) {
		ctl_fmt_name(comm, sizeof(comm), r->comm, sizeof(r->comm));
		ctl_fmt_name(dev, sizeof(dev), r->device, sizeof(r->device));
	}
	switch (d->meta.kind) {
	case IPC_HEAT_CPU:
		snprintf(buf, len, "run-queue latency per CPU: P99 per cell, last %s", span);
		break;
	case IPC_HEAT_QUEUES:
		snprintf(buf, len, "task latency per queue: P99 per cell, last %s", span);
		break;
	case IPC_HEAT_PID:
		if (r)
			snprintf(buf, len, "run-queue latency of pid %llu (%s): events per bucket, "
				 "last %s", (unsigned long long)r->id, comm, span);
		else
			snprintf(buf, len, "run-queue latency of a process, last %s", span);
		break;
	case IPC_HEAT_QUEUE:
		if (r)
			snprintf(buf, len, "task latency of queue %llu (%s[%d] on %s): events per "
				 "bucket, last %s", (unsigned long long)r->id, comm, r->pid, dev, span);
		else
			snprintf(buf, len, "task latency of a queue, last %s", span);
		break;
	default:
		snprintf(buf, len, "latency heat map, last %s", span);
	}
	return buf;
}

/* Appends the tasks of hot spot @hot that @waited (or ran) to @buf at *@o. */
static void heat_hint_tasks(char *buf, size_t len, size_t *o, const struct ipc_heat_data *d,
			    size_t hot, bool waited)
{
	char comm[20];
	bool first = true;
	size_t i;

	for (i = 0; i < d->ntasks && *o < len; i++) {
		const struct ipc_heat_task *t = &d->tasks[i];
		unsigned pm = t->share_pm;

		if (t->hot != hot || (bool)t->waited != waited)
			continue;
		ctl_fmt_name(comm, sizeof(comm), t->comm, sizeof(t->comm));
		*o += (size_t)snprintf(buf + *o, len - *o, "%s", first ?
				       (waited ? "; waited there: " : "; ran there: ") : ", ");
		if (*o >= len)
			break;
		if (waited)
			*o += (size_t)snprintf(buf + *o, len - *o, "%s[%d] (%u wait%s)", comm,
					       t->pid, t->share_pm, t->share_pm == 1 ? "" : "s");
		else if (pm >= 100)
			*o += (size_t)snprintf(buf + *o, len - *o, "%s[%d] %u%%", comm, t->pid,
					       pm / 10);
		else
			*o += (size_t)snprintf(buf + *o, len - *o, "%s[%d] %u.%u%%", comm, t->pid,
					       pm / 10, pm % 10);
		first = false;
	}
}

char *heat_hint(char *buf, size_t len, const struct ipc_heat_data *d, size_t i)
{
	const struct ipc_heat_hot *h;
	char thr[16], dur[16], from[16], to[16], top[16];
	size_t o;

	heat_fmt_dur(thr, sizeof(thr), heat_threshold_ns(d), " ");
	if (i >= d->nhot) {
		snprintf(buf, len, "no core stayed >= %s for %u windows in a row", thr,
			 d->meta.hot_windows);
		return buf;
	}
	h = &d->hot[i];
	heat_fmt_secs(dur, sizeof(dur), (uint64_t)h->ncols * d->meta.window_ns);
	heat_fmt_secs(from, sizeof(from), heat_col_age_ns(d, h->first_col));
	heat_fmt_secs(to, sizeof(to), heat_col_age_ns(d, h->first_col + h->ncols));
	if (h->top_bucket >= HEAT_LAST_BUCKET)
		snprintf(top, sizeof(top), ">= ");
	else
		snprintf(top, sizeof(top), "< ");
	o = strlen(top);
	heat_fmt_dur(top + o, sizeof(top) - o, heat_bucket_ns(h->top_bucket), " ");
	o = (size_t)snprintf(buf, len, "cpu%llu stayed >= %s for %s s (%s s to %s s ago, up to %s)",
			     (unsigned long long)d->rows[h->row].id, thr, dur, from, to, top);
	if (o < len)
		heat_hint_tasks(buf, len, &o, d, i, false);
	if (o < len)
		heat_hint_tasks(buf, len, &o, d, i, true);
	return buf;
}

/* A hot spot's severity, to show the worst first. */
struct heat_rank {
	size_t i;
	uint32_t ncols, top, first;
};

static int heat_cmp_rank(const void *pa, const void *pb)
{
	const struct heat_rank *a = pa, *b = pb;

	if (a->ncols != b->ncols)
		return a->ncols > b->ncols ? -1 : 1;
	if (a->top != b->top)
		return a->top > b->top ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The hint lines: the worst HEAT_HINTS_SHOWN, then how many more. */
static int heat_hints_each(const struct ipc_heat_data *d,
			   void (*fn)(void *arg, const char *prefix, const char *text), void *arg)
{
	struct heat_rank *rank;
	char text[1024];
	size_t i;

	if (!d->nhot) {
		fn(arg, "hint: ", heat_hint(text, sizeof(text), d, 0));
		return 0;
	}
	rank = malloc(d->nhot * sizeof(*rank));
	if (!rank)
		return -ENOMEM;
	for (i = 0; i < d->nhot; i++)
		rank[i] = (struct heat_rank){ .i = i, .ncols = d->hot[i].ncols,
					      .top = d->hot[i].top_bucket,
					      .first = d->hot[i].first_col };
	qsort(rank, d->nhot, sizeof(*rank), heat_cmp_rank);
	for (i = 0; i < d->nhot && i < HEAT_HINTS_SHOWN; i++)
		fn(arg, "hint: ", heat_hint(text, sizeof(text), d, rank[i].i));
	if (d->nhot > HEAT_HINTS_SHOWN) {
		snprintf(text, sizeof(text), "%zu more hot spots, shorter or lower (-o json lists "
			 "them all)", d->nhot - HEAT_HINTS_SHOWN);
		fn(arg, "hint: ", text);
	}
	free(rank);
	return 0;
}

int heat_notes_each(const struct ipc_heat_data *d,
		    void (*fn)(void *arg, const char *prefix, const char *text), void *arg)
{
	char text[160];

	if (d->meta.lost) {
		snprintf(text, sizeof(text), "%llu events were not counted (the daemon's heat "
			 "rings were full)", (unsigned long long)d->meta.lost);
		fn(arg, "note: ", text);
	}
	return d->meta.kind == IPC_HEAT_CPU ? heat_hints_each(d, fn, arg) : 0;
}

char *heat_sparkline(char *buf, size_t len, const uint64_t *ns, size_t n, uint64_t max_ns,
		     bool plain)
{
	static const char *const glyphs[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[8] = { '_', '.', '-', '~', '=', '^', '*', '#' };
	size_t i, o = 0;

	if (!len)
		return buf;
	if (!max_ns)
		for (i = 0; i < n; i++)
			max_ns = BASE_MAX(max_ns, ns[i]);
	for (i = 0; i < n; i++) {
		const char *g = " ";
		char a[2] = " ";
		uint64_t x = ns[i];
		unsigned halvings = 0;

		/* How many times the value doubles before it passes the top. */
		while (x && halvings < 7 && x <= max_ns / 2) {
			x *= 2;
			halvings++;
		}
		if (ns[i]) {
			g = glyphs[7 - halvings];
			a[0] = ascii[7 - halvings];
		}
		if (plain)
			g = a;
		if (o + strlen(g) >= len)
			break;
		memcpy(buf + o, g, strlen(g));
		o += strlen(g);
	}
	buf[o] = '\0';
	return buf;
}
