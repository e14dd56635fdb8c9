/*
 * Heat maps for other programs: JSON (the raw counts, nothing binned, so a
 * script can compute what it likes) and SVG (the picture the terminal
 * shows, at a finer grain, written by hand: a few element kinds need no
 * library).
 *
 * Both write only what the map holds, with names as the JSON writer
 * escapes them or as printable ASCII escaped for XML, so a hostile process
 * name yields valid JSON and well-formed XML.
 */
#include "heat_render.h"
#include "xschedctl.h"
#include "base/compiler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- JSON ---------------------------------------------------------------- */

static int heat_cmp_cell(const void *pa, const void *pb)
{
	const struct ipc_heat_cell *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
}

/* A copy of @n records @c sorted by row, column and bucket; NULL: -ENOMEM. */
static struct ipc_heat_cell *heat_sorted(const struct ipc_heat_cell *c, size_t n)
{
	struct ipc_heat_cell *s = malloc((n + 1) * sizeof(*s));

	if (!s)
		return NULL;
	if (n)
		memcpy(s, c, n * sizeof(*s));
	qsort(s, n, sizeof(*s), heat_cmp_cell);
	return s;
}

/* The end of the records of row @row in @c[@from..@n). */
static size_t heat_row_end(const struct ipc_heat_cell *c, size_t from, size_t n, uint32_t row)
{
	while (from < n && c[from].row == row)
		from++;
	return from;
}

/* Member @name: records [@from, @to) of @c as [column, a, b] (a cell's
 * bucket and count, a mark's suspensions and resumptions). */
static void heat_json_triples(struct ctl_json *j, const char *name, const struct ipc_heat_cell *c,
			      size_t from, size_t to)
{
	ctl_json_open(j, name, '[');
	for (size_t i = from; i < to; i++) {
		ctl_json_open(j, NULL, '[');
		ctl_json_uint(j, NULL, c[i].col);
		ctl_json_uint(j, NULL, c[i].a);
		ctl_json_uint(j, NULL, c[i].b);
		ctl_json_close(j, ']');
	}
	ctl_json_close(j, ']');
}

static void heat_json_row(struct ctl_json *j, const struct ipc_heat_data *d, size_t r,
			  const struct ipc_heat_cell *cells, size_t c0, size_t c1,
			  const struct ipc_heat_cell *marks, size_t m0, size_t m1)
{
	const struct ipc_heat_row *row = &d->rows[r];
	uint64_t total = 0;
	size_t i;

	for (i = c0; i < c1; i++)
		total += cells[i].b;
	ctl_json_open(j, NULL, '{');
	ctl_json_uint(j, "row", row->row);
	ctl_json_uint(j, heat_kind_name(d->meta.kind == IPC_HEAT_QUEUES ? IPC_HEAT_QUEUE :
					d->meta.kind), row->id);
	if (d->meta.kind != IPC_HEAT_PID)
		ctl_json_int(j, "pid", row->pid);
	ctl_json_uint(j, "uid", row->uid);
	ctl_json_str(j, "command", row->comm, sizeof(row->comm));
	ctl_json_str(j, "device", row->device, sizeof(row->device));
	ctl_json_uint(j, "total", total);
	if (d->meta.kind == IPC_HEAT_QUEUE || d->meta.kind == IPC_HEAT_QUEUES)
		ctl_json_uint(j, "tasks_seen", row->seen);
	heat_json_triples(j, "cells", cells, c0, c1);
	if (d->meta.kind == IPC_HEAT_QUEUE || d->meta.kind == IPC_HEAT_QUEUES)
		heat_json_triples(j, "marks", marks, m0, m1);
	ctl_json_close(j, '}');
}

static void heat_json_rows(struct ctl_json *j, const struct ipc_heat_data *d,
			   const struct ipc_heat_cell *cells, const struct ipc_heat_cell *marks)
{
	size_t r, c0 = 0, m0 = 0;

	ctl_json_open(j, "rows", '[');
	for (r = 0; r < d->nrows; r++) {
		/* Rows are numbered 0..nrows-1 (checked by the client). */
		size_t c1 = heat_row_end(cells, c0, d->ncells, (uint32_t)r);
		size_t m1 = heat_row_end(marks, m0, d->nmarks, (uint32_t)r);

		heat_json_row(j, d, r, cells, c0, c1, marks, m0, m1);
		c0 = c1;
		m0 = m1;
	}
	ctl_json_close(j, ']');
}

static void heat_json_tasks(struct ctl_json *j, const struct ipc_heat_data *d, size_t hot,
			    bool waited)
{
	size_t i;

	ctl_json_open(j, waited ? "waited" : "ran", '[');
	for (i = 0; i < d->ntasks; i++) {
		const struct ipc_heat_task *t = &d->tasks[i];

		if (t->hot != hot || (bool)t->waited != waited)
			continue;
		ctl_json_open(j, NULL, '{');
		ctl_json_int(j, "pid", t->pid);
		ctl_json_str(j, "command", t->comm, sizeof(t->comm));
		ctl_json_uint(j, waited ? "waits" : "share_permille", t->share_pm);
		ctl_json_close(j, '}');
	}
	ctl_json_close(j, ']');
}

static void heat_json_hot(struct ctl_json *j, const struct ipc_heat_data *d)
{
	size_t i;

	ctl_json_open(j, "hot", '[');
	for (i = 0; i < d->nhot; i++) {
		const struct ipc_heat_hot *h = &d->hot[i];

		ctl_json_open(j, NULL, '{');
		ctl_json_uint(j, "cpu", d->rows[h->row].id);
		ctl_json_uint(j, "first_column", h->first_col);
		ctl_json_uint(j, "columns", h->ncols);
		ctl_json_uint(j, "top_bucket", h->top_bucket);
		ctl_json_double(j, "from_s_ago", (double)heat_col_age_ns(d, h->first_col) / 1e9, 3);
		ctl_json_double(j, "to_s_ago",
				(double)heat_col_age_ns(d, h->first_col + h->ncols) / 1e9, 3);
		heat_json_tasks(j, d, i, false);
		heat_json_tasks(j, d, i, true);
		ctl_json_close(j, '}');
	}
	ctl_json_close(j, ']');
}

static void heat_json_meta(struct ctl_json *j, const struct ipc_heat_data *d)
{
	const struct ipc_heat_meta *m = &d->meta;
	unsigned k;

	ctl_json_str(j, "kind", heat_kind_name(m->kind), 8);
	ctl_json_uint(j, "window_ns", m->window_ns);
	ctl_json_uint(j, "base_window_ns", m->base_ns);
	ctl_json_uint(j, "columns", m->ncols);
	ctl_json_uint(j, "end_age_ns", m->end_age_ns);
	ctl_json_uint(j, "kept_ns", m->kept_ns);
	ctl_json_uint(j, "threshold_ns", m->threshold_ns);
	ctl_json_uint(j, "hot_windows", m->hot_windows);
	ctl_json_uint(j, "events", m->events);
	ctl_json_uint(j, "lost", m->lost);
	ctl_json_uint(j, "memory_bytes", m->memory_bytes);
	ctl_json_open(j, "bucket_upper_us", '[');
	for (k = 0; k + 1 < IPC_HEAT_BUCKETS; k++)
		ctl_json_uint(j, NULL, heat_bucket_ns(k) / 1000);
	ctl_json_null(j, NULL);
	ctl_json_close(j, ']');
}

int heat_render_json(FILE *f, const struct ipc_heat_data *d)
{
	struct ipc_heat_cell *cells = heat_sorted(d->cells, d->ncells);
	struct ipc_heat_cell *marks = heat_sorted(d->marks, d->nmarks);
	struct ctl_json j;

	if (!cells || !marks) {
		free(cells);
		free(marks);
		return -ENOMEM;
	}
	ctl_json_init(&j, f);
	ctl_json_open(&j, NULL, '{');
	heat_json_meta(&j, d);
	heat_json_rows(&j, d, cells, marks);
	heat_json_hot(&j, d);
	ctl_json_close(&j, '}');
	free(cells);
	free(marks);
	return ferror(f) ? -EIO : 0;
}

/* --- SVG ----------------------------------------------------------------- */

#define SVG_CELLS 480           /* cells across, at most */
#define SVG_LEFT 130            /* room for the row labels */
#define SVG_TOP 44
#define SVG_PLOT_W 960
#define SVG_RIGHT 24
#define SVG_MAX_PLOT_H 640
#define SVG_LINE 16             /* a line of text */
#define SVG_HINT_CHARS 170      /* hint lines wrap here */
#define SVG_KEY_W 14            /* a legend swatch */

/* The geometry of one picture. */
struct svg {
	FILE *f;
	const struct ipc_heat_data *d;
	const struct heat_bins *b;
	unsigned lo, hi;        /* one-row maps: the buckets shown */
	size_t nlines;          /* rows, or buckets shown */
	double cw, rh;          /* cell width, line height */
	double plot_h, axis_y, legend_y, hints_y, height;
};

/* @s (printable ASCII) escaped for XML text and attribute values. */
static void svg_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* <text> at (@x, @y) with extra attributes @attr (trusted). */
static void svg_text(FILE *f, double x, double y, const char *attr, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s>", x, y, attr);
	svg_escaped(f, s);
	fputs("</text>\n", f);
}

/* The lines @text takes wrapped at SVG_HINT_CHARS, and writes them when @f. */
static size_t svg_wrap(FILE *f, double x, double y, const char *text)
{
	char line[SVG_HINT_CHARS + 1];
	size_t lines = 0;

	while (*text) {
		size_t n = heat_wrap_len(text, SVG_HINT_CHARS);

		memcpy(line, text, n);
		line[n] = '\0';
		if (f)
			svg_text(f, x + (lines ? 36 : 0), y + (double)lines * SVG_LINE, "", line);
		lines++;
		for (text += n; *text == ' '; text++)
			;
	}
	return lines;
}

/* Where note and hint lines go; @f NULL: only counted. */
struct svg_notes {
	FILE *f;
	double y;
	size_t lines;
};

static void svg_note(void *arg, const char *prefix, const char *text)
{
	struct svg_notes *n = arg;
	char line[1040];

	snprintf(line, sizeof(line), "%s%s", prefix, text);
	n->lines += svg_wrap(n->f, SVG_LEFT, n->y + (double)n->lines * SVG_LINE, line);
}

static int svg_layout(struct svg *s)
{
	const struct ipc_heat_data *d = s->d;
	struct svg_notes notes = { NULL, 0, 0 };

	s->cw = s->b->ncells ? (double)SVG_PLOT_W / (double)s->b->ncells : SVG_PLOT_W;
	if (heat_one_row(d->meta.kind)) {
		heat_bucket_range(s->b, &s->lo, &s->hi);
		s->nlines = s->hi - s->lo + 1;
		s->rh = SVG_LINE;
	} else {
		s->nlines = BASE_MAX(s->b->nrows, (size_t)1);
		s->rh = BASE_MIN(BASE_MAX((double)SVG_MAX_PLOT_H / (double)s->nlines, 2.0),
				 (double)SVG_LINE);
	}
	s->plot_h = s->rh * (double)s->nlines;
	s->axis_y = SVG_TOP + s->plot_h + (d->meta.kind == IPC_HEAT_QUEUE ? SVG_LINE : 0);
	s->legend_y = s->axis_y + 2.5 * SVG_LINE;
	s->hints_y = s->legend_y + 3 * SVG_LINE;
	if (heat_notes_each(d, svg_note, &notes) < 0)
		return -ENOMEM;
	s->height = s->hints_y + (double)notes.lines * SVG_LINE;
	return 0;
}

static void svg_rect(FILE *f, const char *cls, double x, double y, double w, double h,
		     unsigned xterm)
{
	fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
		"fill=\"#%06x\"/>\n", cls, x, y, w, h, heat_rgb(xterm));
}

static void svg_cells(const struct svg *s)
{
	const struct heat_bins *b = s->b;
	unsigned thr = heat_threshold_bucket(s->d), k;
	size_t r, i;

	fputs("<g shape-rendering=\"crispEdges\">\n", s->f);
	for (r = 0; !heat_one_row(s->d->meta.kind) && r < b->nrows; r++)
		for (i = 0; i < b->ncells; i++) {
			k = b->p99[r * b->ncells + i];
			if (k != HEAT_EMPTY)
				svg_rect(s->f, "cell", SVG_LEFT + (double)i * s->cw,
					 SVG_TOP + (double)r * s->rh, s->cw, s->rh,
					 heat_latency_colour(k, thr));
		}
	for (k = s->lo; heat_one_row(s->d->meta.kind) && k <= s->hi; k++)
		for (i = 0; i < b->ncells; i++) {
			unsigned level = heat_count_level(b->count[k * b->ncells + i], b->max_count);

			if (level)
				svg_rect(s->f, "cell", SVG_LEFT + (double)i * s->cw,
					 SVG_TOP + (double)(s->hi - k) * s->rh, s->cw, s->rh,
					 heat_count_colour(level));
		}
	fputs("</g>\n", s->f);
}

/* Row labels: every row's, or every few when rows are thin. */
static void svg_row_labels(const struct svg *s)
{
	size_t every = (size_t)(12.0 / s->rh) + 1, i;
	const char *attr = " text-anchor=\"end\" dominant-baseline=\"middle\"";
	char label[64];

	if (s->rh >= 12)
		every = 1;
	for (i = 0; i < s->nlines; i += every) {
		double y = SVG_TOP + ((double)i + 0.5) * s->rh;

		if (heat_one_row(s->d->meta.kind))
			heat_fmt_bucket(label, sizeof(label), s->hi - (unsigned)i);
		else if (i < s->b->nrows)
			heat_row_label(label, sizeof(label), s->d, i);
		else
			break;
		svg_text(s->f, SVG_LEFT - 6, y, attr, label);
	}
}

static void svg_marks(const struct svg *s)
{
	static const char *const marks[] = { "", "S", "R", "*" };
	double y = SVG_TOP + s->plot_h + SVG_LINE * 0.75;
	size_t i;

	if (s->d->meta.kind != IPC_HEAT_QUEUE)
		return;
	svg_text(s->f, SVG_LEFT - 6, y, " text-anchor=\"end\"", "marks");
	for (i = 0; i < s->b->ncells; i++)
		if (s->b->marks[i] & 3)
			svg_text(s->f, SVG_LEFT + ((double)i + 0.5) * s->cw, y,
				 " class=\"mark\" text-anchor=\"middle\" fill=\"#c00000\"",
				 marks[s->b->marks[i] & 3]);
}

/* A tick step of 1, 2 or 5 times a power of ten giving at most 8 ticks. */
static uint64_t svg_tick_ns(uint64_t span)
{
	static const uint64_t mul[] = { 1, 2, 5 };
	uint64_t p;
	size_t i;

	for (p = 1000000; p < UINT64_MAX / 10; p *= 10)
		for (i = 0; i < ARRAY_SIZE(mul); i++)
			if (span / (mul[i] * p) <= 8)
				return mul[i] * p;
	return span ? span : 1;
}

/* A tick of the time axis at @x, labelled with @age (0: "now"). */
static void svg_tick(const struct svg *s, double x, uint64_t age)
{
	char label[32], buf[24];

	if (age)
		snprintf(label, sizeof(label), "-%s", heat_fmt_dur(buf, sizeof(buf), age, ""));
	else
		snprintf(label, sizeof(label), "now");
	fprintf(s->f, "<path d=\"M%.1f %.1f v4\" stroke=\"#606060\"/>\n", x, s->axis_y);
	svg_text(s->f, x, s->axis_y + SVG_LINE, " text-anchor=\"middle\"", label);
}

/* The time axis: the right edge (the map ends end_age_ns ago, "now" when
 * within a window), then ticks at round ages. */
static void svg_axis(const struct svg *s)
{
	const struct ipc_heat_data *d = s->d;
	uint64_t span = (uint64_t)d->meta.ncols * d->meta.window_ns, end = d->meta.end_age_ns;
	uint64_t step = svg_tick_ns(span), age;
	double px = span ? (double)SVG_PLOT_W / (double)span : 0;

	fprintf(s->f, "<path d=\"M%d %.1f H%d M%d %.1f V%.1f\" stroke=\"#606060\" fill=\"none\"/>\n",
		SVG_LEFT, s->axis_y, SVG_LEFT + SVG_PLOT_W, SVG_LEFT, (double)SVG_TOP, s->axis_y);
	if (!span)
		return;
	svg_tick(s, SVG_LEFT + SVG_PLOT_W, end < d->meta.window_ns ? 0 : end);
	for (age = (end / step + 1) * step; age <= end + span; age += step) {
		double x = SVG_LEFT + SVG_PLOT_W - (double)(age - end) * px;

		/* Not on top of the right edge's label. */
		if (x <= SVG_LEFT + SVG_PLOT_W - 40)
			svg_tick(s, x, age);
	}
}

static void svg_legend(const struct svg *s)
{
	const struct ipc_heat_data *d = s->d;
	unsigned thr = heat_threshold_bucket(d), k;
	double y = s->legend_y, x = SVG_LEFT;
	char text[160], cell[24], buf[24];

	heat_fmt_dur(cell, sizeof(cell),
		     s->b->ncells ? (uint64_t)d->meta.ncols * d->meta.window_ns / s->b->ncells : 0,
		     " ");
	if (heat_one_row(d->meta.kind)) {
		for (k = 1; k <= 9; k++)
			svg_rect(s->f, "key", x + (k - 1) * SVG_KEY_W, y, SVG_KEY_W, SVG_KEY_W,
				 heat_count_colour(k));
		snprintf(text, sizeof(text), "events per cell (log scale, 1 to %llu); cell = %s%s",
			 (unsigned long long)s->b->max_count, cell,
			 d->meta.kind == IPC_HEAT_QUEUE ?
			 "; marks: S suspended, R resumed, * both" : "");
		svg_text(s->f, x + 9 * SVG_KEY_W + 8, y + 11, "", text);
		return;
	}
	for (k = 0; k < IPC_HEAT_BUCKETS; k++)
		svg_rect(s->f, "key", x + k * SVG_KEY_W, y, SVG_KEY_W, SVG_KEY_W,
			 heat_latency_colour(k, thr));
	svg_text(s->f, x, y + SVG_KEY_W + 12, "", heat_fmt_bucket(buf, sizeof(buf), 0));
	svg_text(s->f, x + IPC_HEAT_BUCKETS * SVG_KEY_W, y + SVG_KEY_W + 12,
		 " text-anchor=\"end\"", heat_fmt_bucket(buf, sizeof(buf), IPC_HEAT_BUCKETS - 1));
	snprintf(text, sizeof(text), "P99 latency per cell (cell = %s); red: at or above the "
		 "threshold, %s", cell, heat_fmt_dur(buf, sizeof(buf), heat_threshold_ns(d), " "));
	svg_text(s->f, x + IPC_HEAT_BUCKETS * SVG_KEY_W + 8, y + 11, "", text);
}

int heat_render_svg(FILE *f, const struct ipc_heat_data *d)
{
	struct heat_bins b;
	struct svg s = { .f = f, .d = d, .b = &b };
	struct svg_notes notes;
	char title[256];

	if (heat_bins_build(&b, d, SVG_CELLS) < 0)
		return -ENOMEM;
	if (svg_layout(&s) < 0) {
		heat_bins_fini(&b);
		return -ENOMEM;
	}
	heat_title(title, sizeof(title), d);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\" font-size=\"11\" "
		"style=\"background-color:#ffffff\">\n<title>",
		SVG_LEFT + SVG_PLOT_W + SVG_RIGHT, s.height, SVG_LEFT + SVG_PLOT_W + SVG_RIGHT,
		s.height);
	svg_escaped(f, title);
	fputs("</title>\n", f);
	svg_text(f, SVG_LEFT, 24, " font-size=\"14\"", title);
	if (!d->nrows || (!d->ncells && !d->nmarks))
		svg_text(f, SVG_LEFT, SVG_TOP + SVG_LINE, "", "no data: nothing counted");
	svg_cells(&s);
	svg_row_labels(&s);
	svg_marks(&s);
	svg_axis(&s);
	svg_legend(&s);
	/* Laid out above: the same lines again, written. */
	notes = (struct svg_notes){ f, s.hints_y, 0 };
	heat_notes_each(d, svg_note, &notes);
	fputs("</svg>\n", f);
	heat_bins_fini(&b);
	return ferror(f) ? -EIO : 0;
}
