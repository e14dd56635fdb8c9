/*
 * The terminal rendering of a heat map (heat_render_text()).
 *
 * Every byte goes through a line writer that counts display columns and
 * drops what would pass the width, so no line is ever wider than the
 * terminal, whatever the names or the map hold: a wrapped line would tear
 * the map apart. Colour is one foreground sequence per change of colour
 * and a reset at the end of each line; plain mode writes printable ASCII
 * only, for pipes, files and NO_COLOR.
 */
#include "heat_render.h"
#include "base/compiler.h"

#include <errno.h>
#include <string.h>

#define HEAT_BLOCK "\xe2\x96\x88"       /* U+2588 FULL BLOCK */
#define HEAT_HINT_INDENT "      "

/* Plain mode: a level 0..9 as a character (0: no events). */
static const char heat_plain_levels[] = " .:-=+*#%@";

struct heat_line {
	FILE *f;
	int width, used;        /* display columns */
	bool color;
	int fg;                 /* colour in effect; -1: the terminal's */
};

static void hl_reset(struct heat_line *l)
{
	if (l->fg >= 0)
		fputs("\033[0m", l->f);
	l->fg = -1;
}

/* Printable ASCII @s, cut where the line is full. */
static void hl_text(struct heat_line *l, const char *s)
{
	size_t n = strlen(s), room = (size_t)(l->width - l->used);

	hl_reset(l);
	n = BASE_MIN(n, room);
	fwrite(s, 1, n, l->f);
	l->used += (int)n;
}

/* Spaces up to display column @col. */
static void hl_pad(struct heat_line *l, int col)
{
	hl_reset(l);
	while (l->used < col && l->used < l->width) {
		fputc(' ', l->f);
		l->used++;
	}
}

/* One cell: a block of @colour, or @plain in plain mode; blank when @level is 0. */
static void hl_cell(struct heat_line *l, unsigned level, unsigned colour)
{
	if (l->used >= l->width)
		return;
	l->used++;
	if (!level) {
		fputc(' ', l->f);
		return;
	}
	if (!l->color) {
		fputc(heat_plain_levels[BASE_MIN(level, 9u)], l->f);
		return;
	}
	if (l->fg != (int)colour)
		fprintf(l->f, "\033[38;5;%um", colour);
	l->fg = (int)colour;
	fputs(HEAT_BLOCK, l->f);
}

static void hl_end(struct heat_line *l)
{
	hl_reset(l);
	fputc('\n', l->f);
	l->used = 0;
}

/* Prints @text as lines of @l's width, the first after @prefix, the rest indented. */
static void heat_wrap(struct heat_line *l, const char *prefix, const char *text)
{
	const char *p = text;
	bool first = true;

	while (*p) {
		const char *lead = first ? prefix : HEAT_HINT_INDENT;
		size_t room = (size_t)BASE_MAX(l->width - (int)strlen(lead), 1);
		size_t n = heat_wrap_len(p, room);

		hl_text(l, lead);
		fprintf(l->f, "%.*s", (int)n, p);
		l->used += (int)n;
		hl_end(l);
		for (p += n; *p == ' '; p++)
			;
		first = false;
	}
}

/* The time axis under the cells: the age of the left edge, the middle, "now". */
static void heat_axis(struct heat_line *l, const struct ipc_heat_data *d, size_t ncells,
		      int x0)
{
	char axis[1024], left[24], mid[24], right[24], buf[16];
	size_t n = BASE_MIN(ncells, sizeof(axis) - 1), ncols = d->meta.ncols, m = n / 2;
	size_t mid_col = heat_bin_first(m, ncols, ncells), lw, mw, rw;

	snprintf(left, sizeof(left), "-%s", heat_fmt_dur(buf, sizeof(buf),
							 heat_col_age_ns(d, 0), ""));
	snprintf(mid, sizeof(mid), "-%s", heat_fmt_dur(buf, sizeof(buf),
							heat_col_age_ns(d, mid_col), ""));
	if (d->meta.end_age_ns < d->meta.window_ns)
		snprintf(right, sizeof(right), "now");
	else
		snprintf(right, sizeof(right), "-%s", heat_fmt_dur(buf, sizeof(buf),
								   d->meta.end_age_ns, ""));
	lw = strlen(left);
	mw = strlen(mid);
	rw = strlen(right);
	memset(axis, ' ', n);
	axis[n] = '\0';
	if (rw <= n)
		memcpy(axis + n - rw, right, rw);
	if (lw + 1 + rw <= n)
		memcpy(axis, left, lw);
	/* The middle label only where it leaves a space on either side. */
	if (m >= mw / 2 && m - mw / 2 > lw && m - mw / 2 + mw + 1 < n - rw)
		memcpy(axis + m - mw / 2, mid, mw);
	hl_pad(l, x0);
	hl_text(l, axis);
	hl_end(l);
}

/* "cell = 1 s; " (or "~1 s" when cells cover unequal numbers of columns). */
static void heat_legend_cell(struct heat_line *l, const struct ipc_heat_data *d, size_t ncells)
{
	uint64_t ncols = d->meta.ncols;
	char buf[24], text[40];

	heat_fmt_dur(buf, sizeof(buf), ncols * d->meta.window_ns / ncells, " ");
	snprintf(text, sizeof(text), "cell %s %s; ", ncols % ncells ? "~" : "=", buf);
	hl_text(l, text);
}

static void heat_legend_latency(struct heat_line *l, const struct ipc_heat_data *d,
				size_t ncells)
{
	unsigned thr = heat_threshold_bucket(d), k;
	char buf[24], text[48];

	heat_legend_cell(l, d, ncells);
	hl_text(l, "P99 ");
	hl_text(l, heat_fmt_bucket(buf, sizeof(buf), 0));
	hl_text(l, " ");
	/* One cell per distinct shade below the threshold, lowest first. */
	for (k = 0; k < thr; k++) {
		unsigned level = heat_latency_level(k, thr), colour = heat_latency_colour(k, thr);

		if (k && (l->color ? colour == heat_latency_colour(k - 1, thr) :
			  level == heat_latency_level(k - 1, thr)))
			continue;
		hl_cell(l, level, colour);
	}
	hl_text(l, " ");
	hl_cell(l, heat_latency_level(thr, thr), heat_latency_colour(thr, thr));
	snprintf(text, sizeof(text), " >= %s (threshold)",
		 heat_fmt_dur(buf, sizeof(buf), heat_threshold_ns(d), " "));
	hl_text(l, text);
	hl_end(l);
}

static void heat_legend_count(struct heat_line *l, const struct ipc_heat_data *d,
			      const struct heat_bins *b)
{
	char text[64];
	unsigned level;

	heat_legend_cell(l, d, b->ncells);
	hl_text(l, "events 1 ");
	for (level = 1; level <= 9; level++)
		hl_cell(l, level, heat_count_colour(level));
	snprintf(text, sizeof(text), " %llu (log)", (unsigned long long)b->max_count);
	hl_text(l, text);
	if (d->meta.kind == IPC_HEAT_QUEUE)
		hl_text(l, "; S suspended, R resumed, * both");
	hl_end(l);
}

static void heat_text_rows(struct heat_line *l, const struct ipc_heat_data *d,
			   const struct heat_bins *b, int lw)
{
	unsigned thr = heat_threshold_bucket(d);
	char label[64];
	size_t r, i;

	for (r = 0; r < b->nrows; r++) {
		heat_row_label(label, sizeof(label), d, r);
		label[lw] = '\0';
		hl_text(l, label);
		hl_pad(l, lw + 1);
		for (i = 0; i < b->ncells; i++) {
			unsigned k = b->p99[r * b->ncells + i];

			hl_cell(l, heat_latency_level(k, thr), heat_latency_colour(k, thr));
		}
		hl_end(l);
	}
}

static void heat_text_buckets(struct heat_line *l, const struct ipc_heat_data *d,
			      const struct heat_bins *b, int lw)
{
	unsigned lo, hi, k;
	char label[24];
	size_t i;

	heat_bucket_range(b, &lo, &hi);
	for (k = hi + 1; k-- > lo;) {
		heat_fmt_bucket(label, sizeof(label), k);
		hl_pad(l, lw - (int)strlen(label));
		hl_text(l, label);
		hl_pad(l, lw + 1);
		for (i = 0; i < b->ncells; i++) {
			unsigned level = heat_count_level(b->count[k * b->ncells + i], b->max_count);

			hl_cell(l, level, heat_count_colour(level));
		}
		hl_end(l);
	}
	if (d->meta.kind != IPC_HEAT_QUEUE)
		return;
	hl_text(l, "marks");
	hl_pad(l, lw + 1);
	for (i = 0; i < b->ncells; i++) {
		static const char marks[] = " SR*";
		char c[2] = { marks[b->marks[i] & 3], '\0' };

		hl_text(l, c);
	}
	hl_end(l);
}

/* What is said of a map without events: its title says what it is of. */
static void heat_text_empty(struct heat_line *l, const struct ipc_heat_data *d)
{
	char span[24], text[64];

	heat_fmt_dur(span, sizeof(span), (uint64_t)d->meta.ncols * d->meta.window_ns, " ");
	snprintf(text, sizeof(text), "no data: nothing counted in the last %s", span);
	hl_text(l, d->nrows || d->meta.kind == IPC_HEAT_PID || d->meta.kind == IPC_HEAT_QUEUE ?
		 text : "no data: no queue to show");
	hl_end(l);
}

static void heat_text_note(void *arg, const char *prefix, const char *text)
{
	heat_wrap(arg, prefix, text);
}

int heat_render_text(FILE *f, const struct ipc_heat_data *d, int width, bool color)
{
	struct heat_line l = { .f = f, .width = width, .color = color, .fg = -1 };
	int lw = heat_text_label_width(d->meta.kind);
	struct heat_bins b;
	char title[256];

	if (width < HEAT_MIN_WIDTH)
		return -EINVAL;
	hl_text(&l, heat_title(title, sizeof(title), d));
	hl_end(&l);
	/* (A queue's marks without a task counted are shown.) */
	if ((!d->ncells && !d->nmarks) || !d->nrows) {
		heat_text_empty(&l, d);
		if (heat_notes_each(d, heat_text_note, &l) < 0)
			return -ENOMEM;
		return ferror(f) ? -EIO : 0;
	}
	if (heat_bins_build(&b, d, heat_text_cells(d->meta.kind, width)) < 0)
		return -ENOMEM;
	if (heat_one_row(d->meta.kind))
		heat_text_buckets(&l, d, &b, lw);
	else
		heat_text_rows(&l, d, &b, lw);
	heat_axis(&l, d, b.ncells, lw + 1);
	if (heat_one_row(d->meta.kind))
		heat_legend_count(&l, d, &b);
	else
		heat_legend_latency(&l, d, b.ncells);
	heat_bins_fini(&b);
	if (heat_notes_each(d, heat_text_note, &l) < 0)
		return -ENOMEM;
	return ferror(f) ? -EIO : 0;
}
