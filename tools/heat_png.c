/*
 * PNG heat maps through gnuplot (heat_render_png()).
 *
 * Encoding images is gnuplot's job, not ours: we write the binned cells as
 * boxes with their exact colours (rgb variable, the colours of the SVG and
 * the terminal) and a script, in a private directory made with mkdtemp(),
 * and run gnuplot on them as a child. The script picks the pngcairo
 * terminal and falls back to the plain png one where gnuplot lacks cairo.
 * gnuplot writes a temporary file beside the output, renamed over it once
 * gnuplot succeeded, so a failure never leaves half an image behind.
 *
 * Names reach the script only as printable ASCII inside single-quoted
 * gnuplot strings (quotes doubled), with enhanced text off: no name can
 * become a gnuplot command.
 */
#include "heat_render.h"
#include "base/compiler.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PNG_CELLS 600           /* cells across, at most */
#define PNG_W 1200
#define PNG_TOP 40              /* title */
#define PNG_BOTTOM 80           /* axis, its label and the legend line */
#define PNG_LINE 16
#define PNG_MIN_PLOT 160
#define PNG_MAX_PLOT 640
#define PNG_HINT_CHARS 170

/* The files of one rendering, in a directory of its own. */
struct png_job {
	char dir[PATH_MAX];
	char data[PATH_MAX + 16];
	char marks[PATH_MAX + 16];
	char script[PATH_MAX + 16];
	char tmp_out[PATH_MAX + 16];
	const struct ipc_heat_data *d;
	struct heat_bins b;
	unsigned lo, hi;        /* one-row maps: the buckets shown */
	size_t nlines;
};

bool heat_png_available(void)
{
	const char *path = getenv("PATH");
	char file[PATH_MAX];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		/* An empty entry is the current directory, as for execvp(). */
		snprintf(file, sizeof(file), "%.*s%sgnuplot", (int)n, n ? path : "",
			 n ? "/" : "");
		if (access(file, X_OK) == 0)
			return true;
		path += n;
		if (*path)
			path++;
	}
	return false;
}

/* @s as a single-quoted gnuplot string. */
static void gp_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* The left and right edges of cell @i in seconds before now (negative). */
static void png_cell_x(const struct png_job *j, size_t i, double *x, double *half)
{
	size_t ncols = j->d->meta.ncols, n = j->b.ncells;
	double left = -(double)heat_col_age_ns(j->d, heat_bin_first(i, ncols, n)) / 1e9;
	double right = -(double)heat_col_age_ns(j->d, heat_bin_first(i + 1, ncols, n)) / 1e9;

	*x = (left + right) / 2;
	/* A little wider than the cell: antialiased edges would leave seams. */
	*half = (right - left) / 2 * 1.02;
}

/* "x y dx dy rgb" per non-empty cell. */
static int png_cells(FILE *f, const struct png_job *j)
{
	unsigned thr = heat_threshold_bucket(j->d), k;
	double x, half;
	size_t r, i;

	for (r = 0; !heat_one_row(j->d->meta.kind) && r < j->b.nrows; r++)
		for (i = 0; i < j->b.ncells; i++) {
			k = j->b.p99[r * j->b.ncells + i];
			if (k == HEAT_EMPTY)
				continue;
			png_cell_x(j, i, &x, &half);
			fprintf(f, "%.6f %zu %.6f 0.51 %u\n", x, r, half,
				heat_rgb(heat_latency_colour(k, thr)));
		}
	for (k = j->lo; heat_one_row(j->d->meta.kind) && k <= j->hi; k++)
		for (i = 0; i < j->b.ncells; i++) {
			unsigned level = heat_count_level(j->b.count[k * j->b.ncells + i],
							  j->b.max_count);

			if (!level)
				continue;
			png_cell_x(j, i, &x, &half);
			fprintf(f, "%.6f %u %.6f 0.51 %u\n", x, k, half,
				heat_rgb(heat_count_colour(level)));
		}
	return 0;
}

/* "x y label" per cell with suspensions or resumptions, above the buckets. */
static int png_marks(FILE *f, const struct png_job *j)
{
	static const char marks[] = " SR*";
	double x, half;
	size_t i;

	for (i = 0; i < j->b.ncells; i++)
		if (j->b.marks[i] & 3) {
			png_cell_x(j, i, &x, &half);
			fprintf(f, "%.6f %u %c\n", x, j->hi + 1, marks[j->b.marks[i] & 3]);
		}
	return 0;
}

static int png_write(const char *path, int (*fill)(FILE *, const struct png_job *),
		     const struct png_job *j)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return -errno;
	rc = fill(f, j);
	if (rc == 0 && ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* The y axis: the rows (every few when thin) or the buckets shown. */
static void png_ytics(FILE *f, const struct png_job *j, double rh)
{
	size_t every = rh >= 12 ? 1 : (size_t)(12.0 / rh) + 1, i;
	char label[64];
	unsigned k;

	fputs("set ytics (", f);
	if (heat_one_row(j->d->meta.kind)) {
		for (k = j->lo; k <= j->hi; k++) {
			fprintf(f, "%s", k == j->lo ? "" : ", ");
			gp_quoted(f, heat_fmt_bucket(label, sizeof(label), k));
			fprintf(f, " %u", k);
		}
		if (j->d->meta.kind == IPC_HEAT_QUEUE)
			fprintf(f, ", 'marks' %u", j->hi + 1);
		fprintf(f, ")\nset yrange [%g:%g]\n", j->lo - 0.5,
			j->hi + (j->d->meta.kind == IPC_HEAT_QUEUE ? 1.5 : 0.5));
		return;
	}
	for (i = 0; i < j->b.nrows; i += every) {
		fprintf(f, "%s", i ? ", " : "");
		gp_quoted(f, heat_row_label(label, sizeof(label), j->d, i));
		fprintf(f, " %zu", i);
	}
	fprintf(f, ")\nset yrange [%g:-0.5]\n", (double)BASE_MAX(j->b.nrows, (size_t)1) - 0.5);
}

/* The legend line, as a label under the axis. */
static void png_legend(FILE *f, const struct png_job *j, double y)
{
	const struct ipc_heat_data *d = j->d;
	char text[256], cell[24], thr[24];

	heat_fmt_dur(cell, sizeof(cell), j->b.ncells ?
		     (uint64_t)d->meta.ncols * d->meta.window_ns / j->b.ncells : 0, " ");
	heat_fmt_dur(thr, sizeof(thr), heat_threshold_ns(d), " ");
	if (heat_one_row(d->meta.kind))
		snprintf(text, sizeof(text), "colour: events per cell, dark blue (1) to yellow "
			 "(%llu), log scale; cell = %s%s", (unsigned long long)j->b.max_count, cell,
			 d->meta.kind == IPC_HEAT_QUEUE ?
			 "; marks: S suspended, R resumed, * both" : "");
	else
		snprintf(text, sizeof(text), "colour: P99 latency per cell, green (low) to yellow "
			 "to red; red: at or above the threshold, %s; cell = %s", thr, cell);
	fputs("set label ", f);
	gp_quoted(f, text);
	fprintf(f, " at screen 0.01, screen %.4f left\n", y);
}

/* Where note and hint lines go: labels from screen height @y down; @f NULL: counted. */
struct png_notes {
	FILE *f;
	double y, line;
	size_t lines;
};

static void png_note(void *arg, const char *prefix, const char *text)
{
	struct png_notes *n = arg;
	char line[1040], part[PNG_HINT_CHARS + 1];
	const char *p = line;

	snprintf(line, sizeof(line), "%s%s", prefix, text);
	while (*p) {
		size_t k = heat_wrap_len(p, PNG_HINT_CHARS);

		memcpy(part, p, k);
		part[k] = '\0';
		if (n->f) {
			fputs("set label ", n->f);
			gp_quoted(n->f, part);
			fprintf(n->f, " at screen %.4f, screen %.4f left\n", p == line ? 0.01 : 0.03,
				n->y - (double)n->lines * n->line);
		}
		n->lines++;
		for (p += k; *p == ' '; p++)
			;
	}
}

static int png_script(FILE *f, const struct png_job *j)
{
	const struct ipc_heat_data *d = j->d;
	double rh = BASE_MIN(BASE_MAX((double)PNG_MAX_PLOT / (double)j->nlines, 2.0),
			     (double)PNG_LINE);
	double plot = BASE_MAX(rh * (double)j->nlines, (double)PNG_MIN_PLOT);
	struct png_notes notes = { NULL, 0, 0, 0 };
	double bottom, h;
	char title[256];

	if (heat_notes_each(d, png_note, &notes) < 0)
		return -ENOMEM;
	bottom = PNG_BOTTOM + (double)notes.lines * PNG_LINE;
	h = PNG_TOP + plot + bottom;

	fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo size %d,%.0f noenhanced font 'sans,9'\n"
		"} else {\n"
		"  set terminal png size %d,%.0f noenhanced\n"
		"}\nset output ", PNG_W, h, PNG_W, h);
	gp_quoted(f, j->tmp_out);
	fputs("\nset title ", f);
	gp_quoted(f, heat_title(title, sizeof(title), d));
	fprintf(f, "\nset tmargin at screen %.4f\nset bmargin at screen %.4f\n"
		"set lmargin 16\nset rmargin 4\nunset key\nset tics out nomirror\n"
		"set xlabel 'seconds (0 = now)'\nset xrange [%.6f:%.6f]\n",
		1.0 - PNG_TOP / h, bottom / h, -(double)heat_col_age_ns(d, 0) / 1e9,
		-(double)d->meta.end_age_ns / 1e9);
	png_ytics(f, j, rh);
	png_legend(f, j, (bottom - 62) / h);
	notes = (struct png_notes){ f, (bottom - 62 - PNG_LINE) / h, PNG_LINE / h, 0 };
	heat_notes_each(d, png_note, &notes);
	if ((!d->ncells && !d->nmarks) || !d->nrows) {
		fputs("set label 'no data: nothing counted' at graph 0.5, graph 0.5 center\n"
		      "plot NaN\n", f);
		return 0;
	}
	fputs("plot ", f);
	gp_quoted(f, j->data);
	fputs(" using 1:2:3:4:5 with boxxyerror fs solid 1.0 noborder lc rgb variable", f);
	if (d->meta.kind == IPC_HEAT_QUEUE) {
		fputs(", ", f);
		gp_quoted(f, j->marks);
		fputs(" using 1:2:3 with labels textcolor rgb '#c00000'", f);
	}
	fputc('\n', f);
	return 0;
}

/* Runs gnuplot on @script, stdin from /dev/null. -ECHILD: no gnuplot. */
static int png_run_gnuplot(const char *script)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	int rc, status;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -ENOMEM;
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == ENOENT)
		return -ECHILD;
	if (rc != 0)
		return -rc;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Makes the private directory and the names of the files in it. */
static int png_job_init(struct png_job *j, const char *out)
{
	const char *tmp = getenv("TMPDIR");
	mode_t mask;
	int fd;

	snprintf(j->dir, sizeof(j->dir), "%s/xschedctl-heat-XXXXXX",
		 tmp && *tmp ? tmp : P_tmpdir);
	if (!mkdtemp(j->dir))
		return -errno;
	snprintf(j->data, sizeof(j->data), "%s/cells.dat", j->dir);
	snprintf(j->marks, sizeof(j->marks), "%s/marks.dat", j->dir);
	snprintf(j->script, sizeof(j->script), "%s/map.gp", j->dir);
	if (snprintf(j->tmp_out, sizeof(j->tmp_out), "%s.XXXXXX", out) >= (int)sizeof(j->tmp_out))
		return -ENAMETOOLONG;
	fd = mkstemp(j->tmp_out);
	if (fd < 0) {
		j->tmp_out[0] = '\0';
		return -errno;
	}
	/* mkstemp() made it 0600; the image gets the mode any new file would. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	close(fd);
	return 0;
}

static void png_job_fini(struct png_job *j)
{
	unlink(j->data);
	unlink(j->marks);
	unlink(j->script);
	rmdir(j->dir);
	if (j->tmp_out[0])
		unlink(j->tmp_out);
	heat_bins_fini(&j->b);
}

int heat_render_png(const struct ipc_heat_data *d, const char *path)
{
	struct png_job j = { .d = d };
	struct stat st;
	int rc;

	if (heat_bins_build(&j.b, d, PNG_CELLS) < 0)
		return -ENOMEM;
	if (heat_one_row(d->meta.kind)) {
		heat_bucket_range(&j.b, &j.lo, &j.hi);
		j.nlines = j.hi - j.lo + 1;
	} else {
		j.nlines = BASE_MAX(j.b.nrows, (size_t)1);
	}
	rc = png_job_init(&j, path);
	if (rc == 0)
		rc = png_write(j.data, png_cells, &j);
	if (rc == 0)
		rc = png_write(j.marks, png_marks, &j);
	if (rc == 0)
		rc = png_write(j.script, png_script, &j);
	if (rc == 0)
		rc = png_run_gnuplot(j.script);
	/* gnuplot may exit 0 after a plot error that left nothing behind. */
	if (rc == 0 && (stat(j.tmp_out, &st) < 0 || st.st_size == 0))
		rc = -EIO;
	if (rc == 0 && rename(j.tmp_out, path) < 0)
		rc = -errno;
	if (rc == 0)
		j.tmp_out[0] = '\0';
	png_job_fini(&j);
	return rc;
}
