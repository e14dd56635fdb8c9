/*
 * Rendering of the daemon's latency heat maps (struct ipc_heat_data,
 * "Heat maps" in ipc/ipc_abi.h) for `xschedctl heatmap` and the
 * sparklines of `xschedctl top`.
 *
 * Everything here is a plain function of the map it is given: no IPC, no
 * global state, so tests feed it synthetic maps. The map's columns are
 * binned into as many cells as the output has room for (a cell covers one
 * or more whole columns, never a fraction), and every output draws from one
 * model (struct heat_bins), so the terminal, SVG and PNG pictures agree:
 * maps of several rows (CPUs, queues) show the P99 bucket of each cell;
 * maps of one row (a process, a queue) show one line per latency bucket,
 * shaded by the events counted there. Names in the map come from clients:
 * they are printed as printable ASCII (text, SVG, PNG) or escaped (JSON).
 *
 * Functions return 0 or a negative errno (-ENOMEM, -EINVAL for a width
 * too small, -EIO for a write error of @f); nothing here logs or exits.
 * Single-threaded, like xschedctl.
 */
#ifndef XS_HEAT_RENDER_H
#define XS_HEAT_RENDER_H

#include "ipc/ipc_client.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A cell without events. */
#define HEAT_EMPTY 0xffu

/* The narrowest terminal rendering (a label and a few cells). */
#define HEAT_MIN_WIDTH 20

/*
 * A map binned into @ncells cells across: the P99 bucket of each (row,
 * cell), the events of each (bucket, cell) summed over the rows (what maps
 * of one row draw), and the marks of each cell (bit 0: a suspension, bit
 * 1: a resumption).
 */
struct heat_bins {
	size_t nrows, ncells;
	uint8_t *p99;           /* [row * ncells + cell]: bucket or HEAT_EMPTY */
	uint64_t *count;        /* [bucket * ncells + cell] */
	uint64_t max_count;     /* of count[] */
	uint8_t *marks;         /* [cell] */
};

/*
 * Bins @d into @ncells cells (at most its columns: a map of fewer columns
 * keeps one cell per column; 0: one per column). Returns 0 or -ENOMEM;
 * heat_bins_fini() frees what it holds either way.
 */
int heat_bins_build(struct heat_bins *b, const struct ipc_heat_data *d, size_t ncells);
void heat_bins_fini(struct heat_bins *b);

/* The cell of column @col of @ncols binned into @ncells (<= @ncols). */
size_t heat_bin_of(uint32_t col, size_t ncols, size_t ncells);

/* The first column of cell @cell (@cell = @ncells: @ncols). */
size_t heat_bin_first(size_t cell, size_t ncols, size_t ncells);

/*
 * The P99 bucket of histogram @h (IPC_HEAT_BUCKETS counts): the lowest
 * bucket below which less than 1% of the events lie; HEAT_EMPTY when @h
 * holds none.
 */
unsigned heat_p99_bucket(const uint64_t *h);

/*
 * A bucket as a latency in ns: its upper bound, except the last (>= 100
 * ms, open), given as its lower bound, 100 ms. HEAT_EMPTY gives 0.
 */
uint64_t heat_bucket_ns(unsigned bucket);

/*
 * The cells the terminal rendering of a map of @kind has room for in
 * @width display columns, after its row labels: what to ask the daemon
 * for as max_cols. At least 1.
 */
size_t heat_text_cells(uint32_t kind, int width);

/* The display columns of the row labels (the cells start one further). */
int heat_text_label_width(uint32_t kind);

/*
 * Writes @d for a terminal of @width display columns (>= HEAT_MIN_WIDTH,
 * else -EINVAL): a title, the map, a time axis, a legend and, for CPU
 * maps, one hint per hot spot (wrapped). With @color, ANSI 256-colour
 * sequences and U+2588 blocks; without, printable ASCII only. No line is
 * wider than @width.
 */
int heat_render_text(FILE *f, const struct ipc_heat_data *d, int width, bool color);

/* Writes @d as one JSON object and a newline (documented in xschedctl(1)). */
int heat_render_json(FILE *f, const struct ipc_heat_data *d);

/* Writes @d as a standalone SVG document. */
int heat_render_svg(FILE *f, const struct ipc_heat_data *d);

/*
 * Writes @d as a PNG image to @path through gnuplot, run as a child with a
 * data file and a script in a private temporary directory (removed after).
 * -ECHILD: gnuplot is not installed (no child to run); -EIO: it failed
 * (its messages went to stderr); else -errno of the files (@path's
 * directory included).
 */
int heat_render_png(const struct ipc_heat_data *d, const char *path);

/* Whether gnuplot is found in $PATH (to refuse -o png before any request). */
bool heat_png_available(void);

/*
 * Writes the sparkline of the @n values @ns (latencies; 0: no data) to
 * @buf: one glyph each from "▁▂▃▄▅▆▇█", or from "_.-~=^*#" when @plain, a
 * space for no data. The top glyph is @max_ns (0: the largest value), and
 * each glyph below it is half as much: a log scale, as latencies spread.
 * Glyphs that do not fit in @len bytes are left out; @buf is always
 * terminated (when @len > 0). Returns @buf.
 */
char *heat_sparkline(char *buf, size_t len, const uint64_t *ns, size_t n, uint64_t max_ns,
		     bool plain);

/* --- shared by the renderers (heat_render.c) --------------------------- */

/* "cpu", "pid", "queue", "queues"; "?" for an unknown kind. */
const char *heat_kind_name(uint32_t kind);

/* Whether maps of @kind are drawn one line per bucket (one row). */
bool heat_one_row(uint32_t kind);

/* The buckets a one-row map shows: those with events, at least a few. */
void heat_bucket_range(const struct heat_bins *b, unsigned *lo, unsigned *hi);

/* The daemon's default threshold, for maps whose meta record has none. */
#define HEAT_DEFAULT_THRESHOLD_NS 10000000ull

/* The map's threshold (its meta record's, else the default). */
uint64_t heat_threshold_ns(const struct ipc_heat_data *d);

/* The bucket of the map's threshold: it and those above are "hot". */
unsigned heat_threshold_bucket(const struct ipc_heat_data *d);

/*
 * Levels 1..9 (0: empty) of a P99 bucket against the threshold's (9: at or
 * above it) and of a count against the map's largest (log scale).
 */
unsigned heat_latency_level(unsigned bucket, unsigned thr_bucket);
unsigned heat_count_level(uint64_t count, uint64_t max);

/* The xterm 256-colour index of a latency level and of a count level. */
unsigned heat_latency_colour(unsigned bucket, unsigned thr_bucket);
unsigned heat_count_colour(unsigned level);

/* The RGB value (0xRRGGBB) of an xterm 256-colour index of the 6x6x6 cube. */
uint32_t heat_rgb(unsigned xterm);

/* "10 ms", "0.35 s", "500 us" (@sep between number and unit). */
char *heat_fmt_dur(char *buf, size_t len, uint64_t ns, const char *sep);

/* A bucket's lower bound for a label: "<1us", "8.2ms", ">=100ms". */
char *heat_fmt_bucket(char *buf, size_t len, unsigned bucket);

/* The label of row @row: "cpu3", "q12 xs_load", "pid 1240"; printable ASCII. */
char *heat_row_label(char *buf, size_t len, const struct ipc_heat_data *d, size_t row);

/* The title line of @d ("run-queue latency per CPU: ..."); printable ASCII. */
char *heat_title(char *buf, size_t len, const struct ipc_heat_data *d);

/*
 * The text of hint @i (0 <= @i < d->nhot) without the "hint: " prefix, or,
 * when the map has no hot spot (@i == 0, d->nhot == 0), the sentence that
 * says so. Printable ASCII.
 */
char *heat_hint(char *buf, size_t len, const struct ipc_heat_data *d, size_t i);

/* Hints shown in pictures; JSON has every hot spot. */
#define HEAT_HINTS_SHOWN 5

/*
 * Calls @fn with each line under a picture of @d, with its prefix: a
 * "note: " on uncounted events, and for CPU maps the "hint: " lines, most
 * severe hot spot first (longest, then highest), HEAT_HINTS_SHOWN of them
 * and one saying how many more there are. Returns 0 or -ENOMEM.
 */
int heat_notes_each(const struct ipc_heat_data *d,
		    void (*fn)(void *arg, const char *prefix, const char *text), void *arg);

/* The age in ns of the start of column @col (@col = ncols: the map's end). */
uint64_t heat_col_age_ns(const struct ipc_heat_data *d, size_t col);

/*
 * The bytes of @text that make its next line of at most @room (> 0)
 * characters: up to the last space that fits, else @room (a word cut).
 * The caller skips the spaces after them.
 */
size_t heat_wrap_len(const char *text, size_t room);

#endif
