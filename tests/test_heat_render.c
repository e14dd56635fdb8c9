/*
 * The heat map renderings of xschedctl (tools/heat_render.h) as plain
 * functions over synthetic maps: a CPU map of two rows with a stripe of
 * high latency on cpu1 (columns 40..60) and its hot spot, and a queue map
 * with suspensions and resumptions. The terminal text never passes its
 * width, in colour or plain (plain: printable ASCII only), puts the stripe
 * where it is and names the hog in its hint; JSON totals add up; SVG is a
 * whole document with one rect per cell; sparklines use the documented
 * glyphs; an empty map says so. Names with escape sequences and markup
 * come out harmless everywhere.
 */
#include "test_util.h"

#include "heat_render.h"
#include "base/compiler.h"

#include <errno.h>
#include <sys/stat.h>

#define NCOLS 100u
#define STRIPE_FIRST 40u
#define STRIPE_LAST 60u
#define MS 1000000ull

/* A process name with an escape sequence, markup and a quote. */
static const char hostile[] = "ev\x1b[1m<&\"il";

static void *dup_array(const void *src, size_t n, size_t size)
{
	void *p = malloc(n * size + 1);

	assert_non_null(p);
	if (n)
		memcpy(p, src, n * size);
	return p;
}

static void set_comm(char *dst, const char *comm)
{
	strncpy(dst, comm, 15);
	dst[15] = '\0';
}

static uint64_t sum_cells(const struct ipc_heat_cell *c, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += c[i].b;
	return sum;
}

static bool in_stripe(uint32_t col)
{
	return col >= STRIPE_FIRST && col <= STRIPE_LAST;
}

/* Two CPUs: cpu0 low throughout, cpu1 low but >= 32 ms in columns 40..60. */
static struct ipc_heat_data cpu_map(void)
{
	struct ipc_heat_data d = { 0 };
	struct ipc_heat_cell c[4 * NCOLS];
	struct ipc_heat_row rows[2] = { { .row = 0, .id = 0 }, { .row = 1, .id = 1 } };
	struct ipc_heat_hot hot = { .row = 1, .first_col = STRIPE_FIRST,
				    .ncols = STRIPE_LAST - STRIPE_FIRST + 1, .top_bucket = 16 };
	struct ipc_heat_task tasks[3] = {
		{ .hot = 0, .waited = 0, .pid = 1234, .share_pm = 970 },
		{ .hot = 0, .waited = 1, .pid = 1240, .share_pm = 12 },
		{ .hot = 0, .waited = 0, .pid = 99, .share_pm = 5 },
	};
	size_t n = 0;

	for (uint32_t col = 0; col < NCOLS; col++) {
		c[n++] = (struct ipc_heat_cell){ .row = 0, .col = col, .a = 3, .b = 5 };
		c[n++] = (struct ipc_heat_cell){ .row = 0, .col = col, .a = 5, .b = 1 };
		if (in_stripe(col)) {
			c[n++] = (struct ipc_heat_cell){ .row = 1, .col = col, .a = 15, .b = 4 };
			c[n++] = (struct ipc_heat_cell){ .row = 1, .col = col, .a = 16, .b = 2 };
		} else {
			c[n++] = (struct ipc_heat_cell){ .row = 1, .col = col, .a = 4, .b = 3 };
		}
	}
	set_comm(tasks[0].comm, "xs_hog");
	set_comm(tasks[1].comm, "xs_load");
	set_comm(tasks[2].comm, hostile);
	d.meta = (struct ipc_heat_meta){
		.kind = IPC_HEAT_CPU, .nrows = 2, .ncols = NCOLS, .hot_windows = 3,
		.window_ns = 300 * MS, .base_ns = 10 * MS, .end_age_ns = 50 * MS,
		.kept_ns = 60000 * MS, .threshold_ns = 10 * MS, .memory_bytes = 4096,
	};
	d.rows = dup_array(rows, 2, sizeof(*rows));
	d.nrows = 2;
	d.cells = dup_array(c, n, sizeof(*c));
	d.ncells = n;
	d.meta.events = sum_cells(c, n);
	d.hot = dup_array(&hot, 1, sizeof(hot));
	d.nhot = 1;
	d.tasks = dup_array(tasks, 3, sizeof(*tasks));
	d.ntasks = 3;
	return d;
}

/* Marked columns of the queue map: a suspension, a resumption, both. */
#define MARK_S 20u
#define MARK_R 50u
#define MARK_BOTH 80u

/* Queue 12: latencies of 64 us mostly, 4 ms now and then, suspensions marked. */
static struct ipc_heat_data queue_map(void)
{
	struct ipc_heat_data d = { 0 };
	struct ipc_heat_cell c[2 * NCOLS];
	struct ipc_heat_cell marks[3] = {
		{ .row = 0, .col = MARK_S, .a = 2, .b = 0 },
		{ .row = 0, .col = MARK_R, .a = 0, .b = 1 },
		{ .row = 0, .col = MARK_BOTH, .a = 1, .b = 1 },
	};
	struct ipc_heat_row row = { .row = 0, .id = 12, .pid = 1240, .uid = 1000 };
	size_t n = 0;

	for (uint32_t col = 0; col < NCOLS; col++) {
		c[n++] = (struct ipc_heat_cell){ .row = 0, .col = col, .a = 7, .b = 10 + col };
		if (col % 10 == 0)
			c[n++] = (struct ipc_heat_cell){ .row = 0, .col = col, .a = 13, .b = 1 };
	}
	set_comm(row.comm, "xs_load");
	strcpy(row.device, "cuda:0");
	d.meta = (struct ipc_heat_meta){
		.kind = IPC_HEAT_QUEUE, .nrows = 1, .ncols = NCOLS, .hot_windows = 3,
		.window_ns = 300 * MS, .base_ns = 10 * MS, .end_age_ns = 50 * MS,
		.kept_ns = 60000 * MS, .threshold_ns = 10 * MS,
	};
	d.rows = dup_array(&row, 1, sizeof(row));
	d.nrows = 1;
	d.cells = dup_array(c, n, sizeof(*c));
	d.ncells = n;
	d.meta.events = sum_cells(c, n);
	d.marks = dup_array(marks, 3, sizeof(*marks));
	d.nmarks = 3;
	return d;
}

/* A buffer the renderers write to. */
struct out {
	char *text;
	size_t len;
};

static struct out render_text(const struct ipc_heat_data *d, int width, bool color)
{
	struct out o = { 0 };
	FILE *f = open_memstream(&o.text, &o.len);

	assert_non_null(f);
	assert_int_equal(heat_render_text(f, d, width, color), 0);
	assert_int_equal(fclose(f), 0);
	return o;
}

static struct out render_with(int (*fn)(FILE *, const struct ipc_heat_data *),
			      const struct ipc_heat_data *d)
{
	struct out o = { 0 };
	FILE *f = open_memstream(&o.text, &o.len);

	assert_non_null(f);
	assert_int_equal(fn(f, d), 0);
	assert_int_equal(fclose(f), 0);
	return o;
}

/* Display columns of @line (up to its newline): escape sequences skipped, code points counted. */
static int display_width(const char *line)
{
	const unsigned char *p = (const unsigned char *)line;
	int w = 0;

	while (*p && *p != '\n') {
		if (*p == 0x1b) {
			assert_int_equal(p[1], '[');
			for (p += 2; *p && !(*p >= 0x40 && *p <= 0x7e); p++)
				;
			assert_true(*p);
			p++;
			continue;
		}
		if ((*p & 0xc0) != 0x80)
			w++;
		p++;
	}
	return w;
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* Whether @line (up to its newline) holds @c. */
static bool line_has(const char *line, char c)
{
	assert_non_null(line);
	return memchr(line, c, strcspn(line, "\n")) != NULL;
}

/* The line starting with @prefix, or NULL. */
static const char *find_line(const char *text, const char *prefix)
{
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void assert_fits(const struct out *o, int width, bool color)
{
	const char *p = o->text;

	assert_true(o->len > 0);
	assert_int_equal(o->text[o->len - 1], '\n');
	while (*p) {
		int w = display_width(p);

		if (w > width)
			fail_msg("line wider than %d (%d): %.*s", width, w,
				 (int)strcspn(p, "\n"), p);
		p += strcspn(p, "\n") + 1;
	}
	for (size_t i = 0; !color && i < o->len; i++)
		if (o->text[i] != '\n' && (o->text[i] < 0x20 || o->text[i] > 0x7e))
			fail_msg("plain output holds byte 0x%02x at %zu", (unsigned char)o->text[i], i);
}

static const int widths[] = { HEAT_MIN_WIDTH, 40, 80, 200 };

static void text_fits_width(void **state)
{
	struct ipc_heat_data maps[2] = { cpu_map(), queue_map() };

	(void)state;
	for (size_t m = 0; m < 2; m++)
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
			for (int color = 0; color < 2; color++) {
				struct out o = render_text(&maps[m], widths[w], color);

				assert_fits(&o, widths[w], color);
				assert_true((memchr(o.text, 0x1b, o.len) != NULL) == (bool)color);
				free(o.text);
			}
	ipc_heat_data_free(&maps[0]);
	ipc_heat_data_free(&maps[1]);
}

static void text_refuses_narrow(void **state)
{
	struct ipc_heat_data d = cpu_map();
	FILE *f = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(f);
	assert_int_equal(heat_render_text(f, &d, HEAT_MIN_WIDTH - 1, false), -EINVAL);
	fclose(f);
	ipc_heat_data_free(&d);
}

/* Whether the columns cell @i covers lie all (@all) or none (!@all) in the stripe. */
static bool cell_in_stripe(size_t i, size_t ncells, bool all)
{
	size_t c0 = heat_bin_first(i, NCOLS, ncells), c1 = heat_bin_first(i + 1, NCOLS, ncells);

	for (size_t c = c0; c < c1; c++)
		if (in_stripe((uint32_t)c) != all)
			return false;
	return c1 > c0;
}

static void text_stripe_on_cpu1(void **state)
{
	struct ipc_heat_data d = cpu_map();
	int x0 = heat_text_label_width(IPC_HEAT_CPU) + 1;

	(void)state;
	for (size_t w = 1; w < sizeof(widths) / sizeof(widths[0]); w++) {
		struct out o = render_text(&d, widths[w], false);
		const char *cpu0 = find_line(o.text, "cpu0 "), *cpu1 = find_line(o.text, "cpu1 ");
		size_t ncells = heat_text_cells(IPC_HEAT_CPU, widths[w]), hot = 0;

		if (ncells > NCOLS)
			ncells = NCOLS;
		assert_non_null(cpu0);
		assert_non_null(cpu1);
		assert_true(strcspn(cpu1, "\n") == (size_t)x0 + ncells);
		for (size_t i = 0; i < ncells; i++) {
			assert_int_not_equal(cpu0[x0 + i], '@');
			if (cell_in_stripe(i, ncells, true)) {
				assert_int_equal(cpu1[x0 + i], '@');
				hot++;
			} else if (cell_in_stripe(i, ncells, false)) {
				assert_int_not_equal(cpu1[x0 + i], '@');
				assert_int_not_equal(cpu1[x0 + i], ' ');
			}
		}
		assert_true(hot > 0);
		free(o.text);

		/* In colour: the stripe is red, and only on cpu1. */
		o = render_text(&d, widths[w], true);
		cpu0 = find_line(o.text, "cpu0 ");
		cpu1 = find_line(o.text, "cpu1 ");
		assert_non_null(cpu0);
		assert_non_null(cpu1);
		assert_true(strstr(cpu1, "\033[38;5;196m") < strchr(cpu1, '\n'));
		assert_true(strstr(cpu0, "\033[38;5;196m") > strchr(cpu0, '\n'));
		free(o.text);
	}
	ipc_heat_data_free(&d);
}

/* The hint lines of @text joined back into one string (malloc()ed). */
static char *joined_hints(const char *text)
{
	const char *p = find_line(text, "hint: ");
	char *all = calloc(1, strlen(text) + 1);

	assert_non_null(p);
	assert_non_null(all);
	for (bool first = true; p && (first || strncmp(p, "      ", 6) == 0); first = false) {
		size_t n = strcspn(p, "\n");

		if (!first)
			strcat(all, " ");
		strncat(all, p + 6, n - 6);
		p = p[n] ? p + n + 1 : NULL;
	}
	return all;
}

static void text_hint_names_hog(void **state)
{
	struct ipc_heat_data d = cpu_map();

	(void)state;
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		struct out o = render_text(&d, widths[w], widths[w] == 80);
		char *hint = joined_hints(o.text);

		assert_non_null(strstr(hint, "cpu1 "));
		assert_non_null(strstr(hint, "xs_hog[1234] 97%"));
		assert_non_null(strstr(hint, "xs_load[1240] (12 waits)"));
		assert_null(strstr(hint, "cpu0"));
		/* The hostile name, made printable (and cut by the wrap at 20). */
		assert_null(strchr(hint, '\x1b'));
		if (widths[w] >= 40)
			assert_non_null(strstr(hint, "ev?[1m<&\"il[99] 0.5%"));
		free(hint);
		free(o.text);
	}
	ipc_heat_data_free(&d);
}

static void text_no_hot_spot(void **state)
{
	struct ipc_heat_data d = cpu_map();
	struct out o;

	(void)state;
	d.nhot = d.ntasks = 0;
	o = render_text(&d, 80, false);

	assert_non_null(find_line(o.text, "hint: no core stayed >= 10 ms for 3 windows in a row"));
	free(o.text);
	ipc_heat_data_free(&d);
}

/* Eight hot spots: the five longest are hinted, longest first, then a count. */
static void text_hints_capped(void **state)
{
	struct ipc_heat_data d = cpu_map();
	struct ipc_heat_hot hot[8];
	const char *p;
	struct out o;

	(void)state;
	for (uint32_t i = 0; i < 8; i++)
		hot[i] = (struct ipc_heat_hot){ .row = 1, .first_col = 10 * i, .ncols = 3 + i,
						.top_bucket = 15 };
	free(d.hot);
	d.hot = dup_array(hot, 8, sizeof(*hot));
	d.nhot = 8;
	d.ntasks = 0;
	o = render_text(&d, 200, false);
	p = find_line(o.text, "hint: ");
	for (int i = 7; i >= 3; i--) {
		char want[64];

		assert_non_null(p);
		snprintf(want, sizeof(want), "hint: cpu1 stayed >= 10 ms for %.2f s", (3 + i) * 0.3);
		assert_int_equal(strncmp(p, want, strlen(want)), 0);
		p = strchr(p, '\n') + 1;
	}
	assert_non_null(find_line(p, "hint: 3 more hot spots"));
	assert_int_equal(count_of(o.text, "hint: "), 6);
	free(o.text);
	ipc_heat_data_free(&d);
}

/* Maps whose meta record has no threshold are coloured by the default one. */
static void text_default_threshold(void **state)
{
	struct ipc_heat_data d = cpu_map();
	struct out o;

	(void)state;
	d.meta.kind = IPC_HEAT_QUEUES;
	d.meta.threshold_ns = 0;
	o = render_text(&d, 80, false);
	assert_non_null(strstr(o.text, "@ >= 10 ms (threshold)"));
	assert_false(line_has(find_line(o.text, "q0 "), '@'));
	assert_true(line_has(find_line(o.text, "q1 "), '@'));
	free(o.text);
	ipc_heat_data_free(&d);
}

static void text_queue_marks(void **state)
{
	struct ipc_heat_data d = queue_map();
	int x0 = heat_text_label_width(IPC_HEAT_QUEUE) + 1;

	(void)state;
	for (size_t w = 1; w < sizeof(widths) / sizeof(widths[0]); w++) {
		struct out o = render_text(&d, widths[w], false);
		const char *marks = find_line(o.text, "marks");
		size_t ncells = heat_text_cells(IPC_HEAT_QUEUE, widths[w]);

		if (ncells > NCOLS)
			ncells = NCOLS;
		assert_non_null(marks);
		for (size_t i = 0; i < ncells; i++) {
			char want = ' ';

			if (i == heat_bin_of(MARK_S, NCOLS, ncells))
				want = 'S';
			else if (i == heat_bin_of(MARK_R, NCOLS, ncells))
				want = 'R';
			else if (i == heat_bin_of(MARK_BOTH, NCOLS, ncells))
				want = '*';
			assert_int_equal(marks[x0 + i], want);
		}
		/* Bucket lines, labelled by their lower bounds (64 us, 4.1 ms). */
		assert_non_null(find_line(o.text, "  4.1ms "));
		assert_non_null(find_line(o.text, "   64us "));
		free(o.text);
	}
	ipc_heat_data_free(&d);
}

/* Parses "[col,bucket,count],..." at *@p up to its ']'; returns the sum of the counts. */
static uint64_t sum_triples(const char **p)
{
	uint64_t sum = 0;
	unsigned col, bucket;
	unsigned long long count;
	int n;

	while (**p == '[') {
		assert_int_equal(sscanf(*p, "[%u,%u,%llu]%n", &col, &bucket, &count, &n), 3);
		sum += count;
		*p += n;
		if (**p == ',')
			(*p)++;
	}
	assert_int_equal(**p, ']');
	return sum;
}

static void json_totals_add_up(void **state)
{
	struct ipc_heat_data maps[2] = { cpu_map(), queue_map() };

	(void)state;
	for (size_t m = 0; m < 2; m++) {
		struct out o = render_with(heat_render_json, &maps[m]);
		const char *p = o.text;
		unsigned long long events, total, rows_sum = 0;
		size_t rows = 0;

		assert_int_equal(o.text[o.len - 1], '\n');
		assert_null(memchr(o.text, '\n', o.len - 1));
		assert_null(memchr(o.text, 0x1b, o.len));
		assert_non_null(strstr(o.text, "\"bucket_upper_us\":[1,2,4,8,16,32,64,128,256,512,"
					       "1024,2048,4096,8192,16384,32768,65536,100000,null]"));
		p = strstr(o.text, "\"events\":");
		assert_non_null(p);
		assert_int_equal(sscanf(p, "\"events\":%llu", &events), 1);
		while ((p = strstr(p, "\"total\":")) != NULL) {
			assert_int_equal(sscanf(p, "\"total\":%llu", &total), 1);
			p = strstr(p, "\"cells\":[");
			assert_non_null(p);
			p += strlen("\"cells\":[");
			assert_int_equal(sum_triples(&p), total);
			rows_sum += total;
			rows++;
		}
		assert_int_equal(rows, maps[m].nrows);
		assert_int_equal(rows_sum, events);
		assert_int_equal(events, maps[m].meta.events);
		free(o.text);
	}
	ipc_heat_data_free(&maps[0]);
	ipc_heat_data_free(&maps[1]);
}

static void json_hot_and_marks(void **state)
{
	struct ipc_heat_data cpu = cpu_map(), q = queue_map();
	struct out o = render_with(heat_render_json, &cpu);

	(void)state;
	assert_non_null(strstr(o.text, "\"kind\":\"cpu\""));
	assert_non_null(strstr(o.text, "\"hot\":[{\"cpu\":1,\"first_column\":40,\"columns\":21,"
				       "\"top_bucket\":16,"));
	assert_non_null(strstr(o.text, "\"ran\":[{\"pid\":1234,\"command\":\"xs_hog\","
				       "\"share_permille\":970}"));
	assert_non_null(strstr(o.text, "\"waited\":[{\"pid\":1240,\"command\":\"xs_load\","
				       "\"waits\":12}]"));
	assert_non_null(strstr(o.text, "\"command\":\"ev\\u001b[1m<&\\\"il\""));
	free(o.text);
	o = render_with(heat_render_json, &q);
	assert_non_null(strstr(o.text, "\"queue\":12,\"pid\":1240,\"uid\":1000,"
				       "\"command\":\"xs_load\",\"device\":\"cuda:0\""));
	assert_non_null(strstr(o.text, "\"marks\":[[20,2,0],[50,0,1],[80,1,1]]"));
	free(o.text);
	ipc_heat_data_free(&cpu);
	ipc_heat_data_free(&q);
}

/* Distinct (row, column) pairs of a CPU map; (bucket, column) of a queue map. */
static size_t distinct_cells(const struct ipc_heat_data *d)
{
	static bool seen[IPC_HEAT_BUCKETS][NCOLS];
	size_t n = 0;

	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < d->ncells; i++) {
		uint32_t y = heat_one_row(d->meta.kind) ? d->cells[i].a : d->cells[i].row;

		n += !seen[y][d->cells[i].col];
		seen[y][d->cells[i].col] = true;
	}
	return n;
}

static void svg_is_a_document(void **state)
{
	struct ipc_heat_data maps[2] = { cpu_map(), queue_map() };

	(void)state;
	for (size_t m = 0; m < 2; m++) {
		struct out o = render_with(heat_render_svg, &maps[m]);
		const char *svg = o.text;

		if (strncmp(svg, "<?xml", 5) == 0)
			svg = strstr(svg, "?>\n") + 3;
		assert_int_equal(strncmp(svg, "<svg", 4), 0);
		assert_true(o.len > 7);
		assert_string_equal(o.text + o.len - 7, "</svg>\n");
		assert_int_equal(count_of(o.text, "<rect class=\"cell\""), distinct_cells(&maps[m]));
		assert_int_equal(count_of(o.text, "<text"), count_of(o.text, "</text>"));
		assert_null(memchr(o.text, 0x1b, o.len));
		free(o.text);
	}
	/* The hostile name in a hint: escaped. */
	struct out o = render_with(heat_render_svg, &maps[0]);

	assert_non_null(strstr(o.text, "ev?[1m&lt;&amp;&quot;il[99]"));
	assert_non_null(strstr(o.text, "hint: cpu1 stayed"));
	free(o.text);
	ipc_heat_data_free(&maps[0]);
	ipc_heat_data_free(&maps[1]);
}

static void sparkline_glyphs(void **state)
{
	const uint64_t v[] = { 0, 1000, 2000, 4000, 128000, 256000 };
	char buf[64];

	(void)state;
	assert_string_equal(heat_sparkline(buf, sizeof(buf), v, 6, 0, false),
			    " ▁▁▂▇█");
	assert_string_equal(heat_sparkline(buf, sizeof(buf), v, 6, 0, true), " __.*#");
	/* A shared top: the largest here is one step below it. */
	assert_string_equal(heat_sparkline(buf, sizeof(buf), v + 4, 2, 512000, false), "▆▇");
	/* Only whole glyphs fit: a space and two blocks in 8 bytes. */
	assert_string_equal(heat_sparkline(buf, 8, v, 6, 0, false), " ▁▁");
	assert_string_equal(heat_sparkline(buf, 4, v, 6, 0, true), " __");
}

static void buckets_and_p99(void **state)
{
	uint64_t h[IPC_HEAT_BUCKETS] = { 0 };

	(void)state;
	assert_int_equal(heat_p99_bucket(h), HEAT_EMPTY);
	h[3] = 100;
	assert_int_equal(heat_p99_bucket(h), 3);
	h[3] = 99;
	h[10] = 1;
	assert_int_equal(heat_p99_bucket(h), 3);
	h[3] = 98;
	h[10] = 2;
	assert_int_equal(heat_p99_bucket(h), 10);
	assert_int_equal(ipc_heat_bucket(999), 0);
	assert_int_equal(ipc_heat_bucket(1000), 1);
	assert_int_equal(ipc_heat_bucket(10 * MS), 14);
	assert_int_equal(ipc_heat_bucket(100 * MS - 1000), 17);
	assert_int_equal(ipc_heat_bucket(100 * MS), 18);
	assert_int_equal(heat_bucket_ns(0), 1000);
	assert_int_equal(heat_bucket_ns(14), 16384000);
	assert_int_equal(heat_bucket_ns(17), 100 * MS);
	assert_int_equal(heat_bucket_ns(18), 100 * MS);
	assert_int_equal(heat_bucket_ns(HEAT_EMPTY), 0);
}

static void empty_map_says_no_data(void **state)
{
	struct ipc_heat_data d = cpu_map();

	(void)state;
	free(d.cells);
	d.cells = NULL;
	d.ncells = 0;
	d.meta.events = 0;
	d.nhot = d.ntasks = 0;
	for (int kind = IPC_HEAT_CPU; kind <= IPC_HEAT_QUEUES; kind++) {
		d.meta.kind = (uint32_t)kind;
		d.nrows = kind == IPC_HEAT_QUEUES ? 0 : d.nrows;
		for (int color = 0; color < 2; color++) {
			struct out o = render_text(&d, 40, color);

			assert_fits(&o, 40, color);
			assert_non_null(strstr(o.text, "no data"));
			free(o.text);
		}
		struct out o = render_with(heat_render_json, &d);

		assert_non_null(strstr(o.text, "\"events\":0"));
		free(o.text);
		o = render_with(heat_render_svg, &d);
		assert_string_equal(o.text + o.len - 7, "</svg>\n");
		assert_int_equal(count_of(o.text, "<rect class=\"cell\""), 0);
		assert_non_null(strstr(o.text, "no data"));
		free(o.text);
	}
	ipc_heat_data_free(&d);
}

/* A queue held all along: marks and no task counted; the marks are drawn. */
static void marks_without_tasks(void **state)
{
	struct ipc_heat_data d = queue_map();

	(void)state;
	free(d.cells);
	d.cells = NULL;
	d.ncells = 0;
	d.meta.events = 0;
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		for (int color = 0; color < 2; color++) {
			struct out o = render_text(&d, widths[w], color);
			const char *marks = find_line(o.text, "marks");
			size_t ncells = heat_text_cells(IPC_HEAT_QUEUE, widths[w]);
			int x0 = heat_text_label_width(IPC_HEAT_QUEUE) + 1;

			assert_fits(&o, widths[w], color);
			assert_null(strstr(o.text, "no data"));
			assert_non_null(marks);
			if (!color)
				assert_int_equal(marks[x0 + heat_bin_of(MARK_S, NCOLS,
									  BASE_MIN(ncells, (size_t)NCOLS))], 'S');
			free(o.text);
		}
	}
	ipc_heat_data_free(&d);
}

static void png_through_gnuplot(void **state)
{
	struct ipc_heat_data d = cpu_map();
	char dir[] = "heat-png-XXXXXX", path[64], head[8] = { 0 };
	const char *saved = getenv("PATH");
	char *path_env = saved ? strdup(saved) : NULL;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/map.png", dir);
	/* Without gnuplot: -ECHILD, and nothing left behind. */
	setenv("PATH", "", 1);
	assert_false(heat_png_available());
	assert_int_equal(heat_render_png(&d, path), -ECHILD);
	assert_int_not_equal(stat(path, &st), 0);
	if (path_env)
		setenv("PATH", path_env, 1);
	free(path_env);
	rmdir(dir);
	if (!heat_png_available()) {
		ipc_heat_data_free(&d);
		skip();
	}
	assert_non_null(mkdtemp(strcpy(dir, "heat-png-XXXXXX")));
	snprintf(path, sizeof(path), "%s/none/map.png", dir);
	assert_int_equal(heat_render_png(&d, path), -ENOENT);
	snprintf(path, sizeof(path), "%s/map.png", dir);
	assert_int_equal(heat_render_png(&d, path), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(head, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
	ipc_heat_data_free(&d);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(text_fits_width),
	cmocka_unit_test(text_refuses_narrow),
	cmocka_unit_test(text_stripe_on_cpu1),
	cmocka_unit_test(text_hint_names_hog),
	cmocka_unit_test(text_no_hot_spot),
	cmocka_unit_test(text_hints_capped),
	cmocka_unit_test(text_default_threshold),
	cmocka_unit_test(text_queue_marks),
	cmocka_unit_test(json_totals_add_up),
	cmocka_unit_test(json_hot_and_marks),
	cmocka_unit_test(svg_is_a_document),
	cmocka_unit_test(sparkline_glyphs),
	cmocka_unit_test(buckets_and_p99),
	cmocka_unit_test(empty_map_says_no_data),
	cmocka_unit_test(marks_without_tasks),
	cmocka_unit_test(png_through_gnuplot),
};

TU_MAIN(tests)
