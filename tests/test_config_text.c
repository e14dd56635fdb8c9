/*
 * xschedd's configuration parser (src/daemon/config.c) on files that are
 * not a configuration, or hold what must not reach a terminal: a binary or
 * random bytes get one line saying the file is not text, and nothing else;
 * whatever a message echoes from a file is escaped; a list of problems
 * too long for its buffer ends with how many were left out; a text file
 * with UTF-8 or Latin-1 comments is still a configuration.
 *
 * Each case checks the parser as a unit (xsd_config_load()) and the
 * daemon's own output (xschedd --check-config, and a start), which is
 * what an operator and the journal see.
 */
#include "test_util.h"

#include "daemon/config.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* A directory of the case's, with its configuration file. */
struct fx {
	char dir[128];
	char conf[160];
	char sock[160];
	char ctl[160];
};

static int fx_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/xstest-cfgtext-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->conf, sizeof(f->conf), "%s/xschedd.conf", f->dir);
	snprintf(f->sock, sizeof(f->sock), "%s/s.sock", f->dir);
	snprintf(f->ctl, sizeof(f->ctl), "%s/c.sock", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	unlink(f->conf);
	unlink(f->sock);
	unlink(f->ctl);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

/* Loads @path over the defaults; the problems in @err. */
static int load(const char *path, char *err, size_t len)
{
	struct xsd_config c;
	int rc;

	xsd_config_defaults(&c);
	rc = xsd_config_load(path, true, &c, err, len);
	xsd_config_fini(&c);
	return rc;
}

/*
 * Runs xschedd with @args (NULL-terminated, after argv[0]); its standard
 * output and error together into @out. Returns its exit status.
 */
static int run_xschedd(char *out, size_t len, const char *const *args)
{
	const char *argv[16] = { XSD_BIN };
	size_t used = 0, i;
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	for (i = 0; args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[i + 1] = args[i];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execv(XSD_BIN, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		char sink[512];

		/* All of it is read, what does not fit too, so the daemon never blocks. */
		if (used + 1 < len)
			n = read(fds[0], out + used, len - 1 - used);
		else
			n = read(fds[0], sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used + 1 < len)
			used += (size_t)n;
	}
	out[used] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* @s holds no control character but newlines, no DEL, nothing past ASCII. */
static void assert_plain_ascii(const char *s)
{
	for (const unsigned char *u = (const unsigned char *)s; *u; u++)
		if (*u != '\n' && (*u < 0x20 || *u >= 0x7f))
			fail_msg("byte 0x%02x at offset %zu of: %s", *u,
				 (size_t)(u - (const unsigned char *)s), s);
}

/*
 * @path as --config: --check-config prints @expect and nothing else, a
 * start logs it (journald's error priority) and nothing else; both exit 1.
 */
static void expect_daemon_says(struct fx *f, const char *path, const char *expect)
{
	char out[8192], line[1024];

	assert_int_equal(run_xschedd(out, sizeof(out), (const char *const[]){
		"--check-config", "--config", path, NULL }), 1);
	snprintf(line, sizeof(line), "%s\n", expect);
	assert_string_equal(out, line);

	assert_int_equal(run_xschedd(out, sizeof(out), (const char *const[]){
		"--config", path, "--socket", f->sock, "--control-socket", f->ctl, NULL }), 1);
	snprintf(line, sizeof(line), "<3>xschedd: %s\n", expect);
	assert_string_equal(out, line);
	assert_int_equal(access(f->sock, F_OK), -1);
}

/* A fixed sequence of pseudo-random bytes (xorshift32). */
static void random_bytes(unsigned char *b, size_t n, uint32_t seed)
{
	uint32_t x = seed;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (unsigned char)(x >> 24);
	}
}

/*
 * 3 KB of random bytes: one line, naming the line of the first NUL byte.
 * The same bytes without NULs: one line too, saying how many of them are
 * not text (of random bytes, more than half).
 */
static void config_text_random_bytes(void **state)
{
	struct fx *f = *state;
	unsigned char b[3072];
	char err[4096], expect[512];
	const char *p;
	int line = 1;
	size_t i;

	random_bytes(b, sizeof(b), 0x9e3779b9u);
	for (i = 0; b[i]; i++)
		line += b[i] == '\n';
	assert_true(i < sizeof(b));        /* this seed gives a NUL */
	write_file(f->conf, b, sizeof(b));
	snprintf(expect, sizeof(expect),
		 "%s: not a text configuration file (a NUL byte at line %d)", f->conf, line);
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, expect);
	expect_daemon_says(f, f->conf, expect);

	for (i = 0; i < sizeof(b); i++)
		if (!b[i])
			b[i] = 0x01;
	write_file(f->conf, b, sizeof(b));
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	snprintf(expect, sizeof(expect), "%s: not a text configuration file (", f->conf);
	assert_memory_equal(err, expect, strlen(expect));
	p = strstr(err, " of its 3072 bytes are control characters or not UTF-8)");
	assert_non_null(p);
	assert_int_equal(p[strlen(p) - 1], ')');
	assert_null(strchr(err, '\n'));
	/* Most of it. */
	assert_true(atoi(err + strlen(expect)) > 3072 / 2);
	memcpy(expect, err, strlen(err) + 1);
	expect_daemon_says(f, f->conf, expect);
}

/* An ELF binary (this daemon, /bin/ls): a NUL in its header, on line 1. */
static void config_text_elf_binary(void **state)
{
	static const char *const bins[] = { XSD_BIN, "/bin/ls" };
	struct fx *f = *state;
	char err[4096], expect[512];

	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		if (access(bins[i], R_OK) < 0)
			continue;
		snprintf(expect, sizeof(expect),
			 "%s: not a text configuration file (a NUL byte at line 1)", bins[i]);
		assert_int_equal(load(bins[i], err, sizeof(err)), -EINVAL);
		assert_string_equal(err, expect);
		expect_daemon_says(f, bins[i], expect);
	}
}

/*
 * A text file with escape sequences (CSI, OSC with BEL, an 8-bit CSI in
 * UTF-8) in values, a key and a section: each problem reported on its
 * line, with those bytes as \xNN; no control character reaches the output.
 * A value that would parse (a policy name, a socket path) is refused.
 */
static void config_text_escape_sequences(void **state)
{
	static const char text[] =
		"# A configuration\n"
		"[policy]\n"
		"name = \x1b[31mred\x1b[0m\n"                                   /* 3 */
		"[daemon]\n"
		"max_clients = 8\x1b]0;title\x07\n"                             /* 5 */
		"socket = /run/x\xc2\x9b" "2J.sock\n"                           /* 6 */
		"bo\x1b[2Jgus = 1\n"                                            /* 7 */
		"[se\x1b[0mc]\n"
		"key = v\\w\n";                                                 /* 9 */
	struct fx *f = *state;
	char err[4096], out[8192], line[1024];

	write_file(f->conf, text, sizeof(text) - 1);
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	assert_plain_ascii(err);
	assert_int_equal(count_lines(err), 4);    /* 5 problems, one a line */
	snprintf(line, sizeof(line), "%s:3: bad value for [policy] name = \\x1b[31mred\\x1b[0m: "
		 "control characters or bytes that are not UTF-8\n", f->conf);
	assert_non_null(strstr(err, line));
	snprintf(line, sizeof(line), "%s:5: bad value for [daemon] max_clients = "
		 "8\\x1b]0;title\\x07: expected an integer", f->conf);
	assert_non_null(strstr(err, line));
	snprintf(line, sizeof(line), "%s:6: bad value for [daemon] socket = "
		 "/run/x\\xc2\\x9b2J.sock: control characters", f->conf);
	assert_non_null(strstr(err, line));
	snprintf(line, sizeof(line), "%s:7: unknown key [daemon] bo\\x1b[2Jgus\n", f->conf);
	assert_non_null(strstr(err, line));
	snprintf(line, sizeof(line), "%s:9: unknown key [se\\x1b[0mc] key", f->conf);
	assert_non_null(strstr(err, line));

	assert_int_equal(run_xschedd(out, sizeof(out), (const char *const[]){
		"--check-config", "--config", f->conf, NULL }), 1);
	assert_plain_ascii(out);
	assert_int_equal(count_lines(out), 5);
	assert_non_null(strstr(out, "\\x1b[31mred\\x1b[0m"));

	/* A long value of escapes (among enough text) is cut with "...". */
	{
		char big[2400];
		size_t n = 0;

		for (int k = 0; k < 20; k++)
			n += (size_t)snprintf(big + n, sizeof(big) - n, "# %096d\n", k);
		n += (size_t)snprintf(big + n, sizeof(big) - n, "[policy]\nname = ");
		memset(big + n, '\x1b', 180);
		n += 180;
		big[n++] = '\n';
		big[n] = '\0';
		write_file(f->conf, big, n);
		assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
		assert_plain_ascii(err);
		assert_non_null(strstr(err, "name = \\x1b\\x1b"));
		assert_string_equal(err + strlen(err) - 7, "\\x1b...");
	}
	/* A backslash is doubled: a file cannot forge an escape ("\\x41", not "\x41"). */
	write_file(f->conf, "[policy]\nname = \\x41\x01\n", 22);
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "name = \\\\x41\\x01: "));
}

/* Problems of line 2, 3, ... of the file, then "and N more" (N right). */
static void check_cut_list(const char *err, const char *path, int nproblems)
{
	char want[256];
	const char *p = err;
	int shown = 0;

	for (;;) {
		const char *nl = strchr(p, '\n');

		snprintf(want, sizeof(want), "%s:%d: unknown key [daemon] bogus%d", path,
			 shown + 2, shown);
		if (!nl || strncmp(p, want, strlen(want)))
			break;
		assert_int_equal(nl - p, (ptrdiff_t)strlen(want));
		shown++;
		p = nl + 1;
	}
	assert_true(shown > 0 && shown < nproblems);
	snprintf(want, sizeof(want), "%s: and %d more problem%s", path, nproblems - shown,
		 nproblems - shown == 1 ? "" : "s");
	assert_string_equal(p, want);
}

/*
 * More problems than the caller's buffer holds (the daemon's are 1 KiB at a
 * reload, 4 KiB at a start and --check-config): whole lines in file order,
 * then "and N more problems". A list that fits has no such line.
 */
static void config_text_many_problems(void **state)
{
	struct fx *f = *state;
	char text[300 * 24], err[4096], out[8192];
	size_t used;
	int i;

	used = (size_t)snprintf(text, sizeof(text), "[daemon]\n");
	for (i = 0; i < 300; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "bogus%d = 1\n", i);
	write_file(f->conf, text, used);

	assert_int_equal(load(f->conf, err, 1024), -EINVAL);
	assert_true(strlen(err) < 1024);
	check_cut_list(err, f->conf, 300);
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	check_cut_list(err, f->conf, 300);

	assert_int_equal(run_xschedd(out, sizeof(out), (const char *const[]){
		"--check-config", "--config", f->conf, NULL }), 1);
	assert_int_equal(out[strlen(out) - 1], '\n');
	out[strlen(out) - 1] = '\0';
	check_cut_list(out, f->conf, 300);

	/* Ten fit: all of them, nothing more. */
	write_file(f->conf, text, (size_t)(strstr(text, "bogus10 ") - text));
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	assert_int_equal(count_lines(err), 9);
	assert_null(strstr(err, "more problem"));
}

/*
 * Text that is not plain ASCII is still a configuration: a UTF-8 byte
 * order mark and comment, a UTF-8 value, CRLF line ends, a Latin-1
 * comment (its bytes are not UTF-8, a few among many). A file that is
 * mostly control characters is not.
 */
static void config_text_utf8_accepted(void **state)
{
	static const char utf8[] =
		"\xef\xbb\xbf# Größe der Zeitscheibe — «fair» 调度 😀\r\n"
		"[policy]\r\n"
		"name = fair\r\n"
		"slice_ms = 7\r\n"
		"[daemon]\n"
		"control_group = gruppe-ü\n";
	static const char latin1[] = "# Gr\xf6\xdf" "e der Zeitscheibe\n[policy]\nname = fair\n";
	struct fx *f = *state;
	struct xsd_config c;
	char err[1024], out[1024], text[256], expect[256];

	write_file(f->conf, utf8, sizeof(utf8) - 1);
	xsd_config_defaults(&c);
	assert_int_equal(xsd_config_load(f->conf, true, &c, err, sizeof(err)), 0);
	assert_string_equal(c.policy, "fair");
	assert_int_equal(c.pconf.slice_ns, 7000000);
	assert_string_equal(c.control_group, "gruppe-ü");
	xsd_config_fini(&c);
	assert_int_equal(run_xschedd(out, sizeof(out), (const char *const[]){
		"--check-config", "--config", f->conf, NULL }), 0);
	assert_non_null(strstr(out, ": valid (policy fair)\n"));

	write_file(f->conf, latin1, sizeof(latin1) - 1);
	assert_int_equal(load(f->conf, err, sizeof(err)), 0);

	/* 10 control characters in 50 bytes: past 1 in 10. */
	snprintf(text, sizeof(text), "[policy]\nname = fair\n# \x1b\x1b\x1b\x1b\x1b"
		 "\x1b\x1b\x1b\x1b\x1bxxxxxxxxxxxxxxxx\n");
	assert_int_equal(strlen(text), 50);
	write_file(f->conf, text, strlen(text));
	assert_int_equal(load(f->conf, err, sizeof(err)), -EINVAL);
	snprintf(expect, sizeof(expect), "%s: not a text configuration file (10 of its 50 "
		 "bytes are control characters or not UTF-8)", f->conf);
	assert_string_equal(err, expect);
	/* 5 of 50, in a comment: text, and valid. */
	memcpy(strchr(text, '\x1b'), "xxxxx", 5);
	write_file(f->conf, text, strlen(text));
	assert_int_equal(load(f->conf, err, sizeof(err)), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(config_text_random_bytes, fx_setup, fx_teardown),
	cmocka_unit_test_setup_teardown(config_text_elf_binary, fx_setup, fx_teardown),
	cmocka_unit_test_setup_teardown(config_text_escape_sequences, fx_setup, fx_teardown),
	cmocka_unit_test_setup_teardown(config_text_many_problems, fx_setup, fx_teardown),
	cmocka_unit_test_setup_teardown(config_text_utf8_accepted, fx_setup, fx_teardown),
};

TU_MAIN(tests)
