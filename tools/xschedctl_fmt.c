/*
 * Output formatting of xschedctl: a streaming JSON writer, text tables and
 * human-readable durations.
 *
 * Everything printed here may contain strings a client chose (process
 * names, device names), so the JSON writer emits only valid UTF-8 and
 * escapes control characters, and table cells show such names as printable
 * ASCII. Out-of-memory while building a table is reported to the caller;
 * nothing here logs.
 */
#include "xschedctl.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ctl_json_init(struct ctl_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if invalid. */
static size_t ctl_utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

static void ctl_json_string(FILE *f, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strnlen(str, max), i = 0;

	fputc('"', f);
	while (i < n) {
		size_t len = ctl_utf8_len(s + i, n - i);

		if (len == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (len > 1) {
			fwrite(s + i, 1, len, f);
			i += len;
			continue;
		}
		switch (s[i]) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (s[i] < 0x20)
				fprintf(f, "\\u%04x", s[i]);
			else
				fputc(s[i], f);
		}
		i++;
	}
	fputc('"', f);
}

/* Writes the separator and the member name of the next value. */
static void ctl_json_key(struct ctl_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		ctl_json_string(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

void ctl_json_open(struct ctl_json *j, const char *key, char bracket)
{
	ctl_json_key(j, key);
	fputc(bracket, j->f);
	/* Deeper nesting is a programming error; keep the output well-formed anyway. */
	if (j->depth + 1 < CTL_JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

void ctl_json_close(struct ctl_json *j, char bracket)
{
	fputc(bracket, j->f);
	if (j->depth > 0)
		j->depth--;
	if (j->depth == 0)
		fputc('\n', j->f);
}

void ctl_json_str(struct ctl_json *j, const char *key, const char *s, size_t max)
{
	ctl_json_key(j, key);
	ctl_json_string(j->f, s, max);
}

void ctl_json_int(struct ctl_json *j, const char *key, int64_t v)
{
	ctl_json_key(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void ctl_json_uint(struct ctl_json *j, const char *key, uint64_t v)
{
	ctl_json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void ctl_json_bool(struct ctl_json *j, const char *key, bool v)
{
	ctl_json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void ctl_json_null(struct ctl_json *j, const char *key)
{
	ctl_json_key(j, key);
	fputs("null", j->f);
}

void ctl_json_double(struct ctl_json *j, const char *key, double v, int prec)
{
	if (!isfinite(v)) {
		ctl_json_null(j, key);
		return;
	}
	ctl_json_key(j, key);
	fprintf(j->f, "%.*f", prec, v);
}

void ctl_table_init(struct ctl_table *t, int ncols, const char *const *head,
		    uint32_t right_mask)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->ncols = ncols < CTL_TABLE_COLS ? ncols : CTL_TABLE_COLS;
	t->right_mask = right_mask;
	for (i = 0; i < t->ncols; i++)
		t->head[i] = head[i];
}

bool ctl_table_row(struct ctl_table *t)
{
	size_t ncells = (t->nrows + 1) * (size_t)t->ncols;

	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char (*cells)[CTL_CELL_LEN] = realloc(t->cells,
						      cap * (size_t)t->ncols * sizeof(*cells));

		if (!cells)
			return false;
		t->cells = cells;
		t->cap = cap;
	}
	memset(t->cells + ncells - t->ncols, 0, (size_t)t->ncols * sizeof(*t->cells));
	t->nrows++;
	return true;
}

void ctl_table_cell(struct ctl_table *t, int col, const char *fmt, ...)
{
	va_list ap;

	if (t->nrows == 0 || col < 0 || col >= t->ncols)
		return;
	va_start(ap, fmt);
	vsnprintf(t->cells[(t->nrows - 1) * (size_t)t->ncols + col], CTL_CELL_LEN, fmt, ap);
	va_end(ap);
}

/* Display columns of a cell: its UTF-8 code points (top's sparklines are not ASCII). */
static int ctl_cell_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void ctl_pad(FILE *f, int n)
{
	while (n-- > 0)
		fputc(' ', f);
}

static void ctl_table_line(const struct ctl_table *t, FILE *f, const int *width,
			   const char *const *cell)
{
	int i;

	for (i = 0; i < t->ncols; i++) {
		bool right = t->right_mask & (1u << i);
		bool last = i == t->ncols - 1;
		int pad = width[i] - ctl_cell_width(cell[i]);

		if (i)
			fputs("  ", f);
		if (right)
			ctl_pad(f, pad);
		fputs(cell[i], f);
		if (!right && !last)
			ctl_pad(f, pad);
	}
	fputc('\n', f);
}

void ctl_table_print(const struct ctl_table *t, FILE *f)
{
	int width[CTL_TABLE_COLS];
	const char *cell[CTL_TABLE_COLS];
	size_t r;
	int i;

	for (i = 0; i < t->ncols; i++)
		width[i] = ctl_cell_width(t->head[i]);
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			int w = ctl_cell_width(t->cells[r * (size_t)t->ncols + i]);

			if (w > width[i])
				width[i] = w;
		}
	ctl_table_line(t, f, width, t->head);
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++)
			cell[i] = t->cells[r * (size_t)t->ncols + i];
		ctl_table_line(t, f, width, cell);
	}
}

void ctl_table_fini(struct ctl_table *t)
{
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* @v in @unit with three significant digits ("1.25", "12.5", "125"). */
static char *ctl_fmt3(char *buf, size_t len, double v, const char *unit)
{
	int prec = v < 10 ? 2 : v < 100 ? 1 : 0;

	snprintf(buf, len, "%.*f%s", prec, v, unit);
	return buf;
}

char *ctl_fmt_ns(char *buf, size_t len, uint64_t ns, bool dash_zero)
{
	if (ns == 0 && dash_zero)
		snprintf(buf, len, "-");
	else if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		ctl_fmt3(buf, len, (double)ns / 1e3, "us");
	else if (ns < 1000000000)
		ctl_fmt3(buf, len, (double)ns / 1e6, "ms");
	else
		ctl_fmt3(buf, len, (double)ns / 1e9, "s");
	return buf;
}

char *ctl_fmt_uptime(char *buf, size_t len, uint64_t ns)
{
	uint64_t s = ns / 1000000000u;
	unsigned h = (unsigned)(s / 3600 % 24), m = (unsigned)(s / 60 % 60);
	unsigned sec = (unsigned)(s % 60);

	if (s >= 86400)
		snprintf(buf, len, "%llud %02u:%02u:%02u",
			 (unsigned long long)(s / 86400), h, m, sec);
	else
		snprintf(buf, len, "%02u:%02u:%02u", h, m, sec);
	return buf;
}

char *ctl_fmt_name(char *buf, size_t len, const char *s, size_t max)
{
	size_t n = strnlen(s, max), i;

	if (len == 0)
		return buf;
	if (n == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	buf[n] = '\0';
	return buf;
}
