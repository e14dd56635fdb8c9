/*
 * The guardian rewriter (see cl_guard_rw.h): a lexer for OpenCL C tokens,
 * a scan for kernel declarations, and a list of insertions applied to a
 * copy of the source.
 *
 * The prologue makes one decision per work-group, in the group's word of
 * the launch's record (cl_guard_rw.h): the first work-item to arrive finds
 * it undecided for this attempt and sets it, to "ran" when the queue's
 * control word is clear, else to "skipped" (and counts the skip); every
 * later work-item of the group reads the answer there. A group that ran in
 * an earlier attempt returns. Where a group's work-items may run at once
 * the first one sets the word by a compare-and-swap (a loser takes the
 * winner's answer); on devices that run them one after another on one
 * thread (CPU devices, CLG_SERIAL_GROUPS) by a plain store: one locked
 * instruction per group cost copy-like kernels 2-3% there. No barrier: a
 * barrier at kernel entry made the device split every kernel in two (PoCL
 * runs the work-items of a group in loops between barriers), which cost
 * copy-like kernels 14-19% of their device time. A started group always
 * runs to its end, so no kernel has to be idempotent.
 */
#include "shim/opencl/guard/cl_guard_rw.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum tok_kind { T_IDENT, T_NUMBER, T_STRING, T_PUNCT };

struct tok {
	uint32_t kind : 8;
	uint32_t dir : 1;       /* inside a preprocessor directive */
	uint32_t dir_first : 1; /* the directive's name (after '#') */
	uint32_t dir_id;        /* which directive (1..), 0 outside */
	size_t pos, len;
};

struct lex {
	const char *s;
	size_t len;
	struct tok *t;
	size_t n, cap;
};

static int lex_push(struct lex *l, enum tok_kind kind, size_t pos, size_t len, uint32_t dir)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct tok *t = realloc(l->t, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		l->t = t;
		l->cap = cap;
	}
	l->t[l->n++] = (struct tok){ .kind = kind, .dir = dir != 0, .dir_id = dir, .pos = pos,
				     .len = len };
	return 0;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Reads the literal whose quote is at *@i (from @b, a prefix before it). */
static int lex_quoted(struct lex *l, size_t *i, size_t b, uint32_t dir)
{
	const char *s = l->s;
	size_t j = *i + 1, n = l->len;
	char q = s[*i];

	while (j < n && s[j] != q && s[j] != '\n') {
		if (s[j] == '\\' && j + 1 < n)
			j++;
		j++;
	}
	if (j >= n || s[j] != q)
		return -EINVAL;
	*i = j + 1;
	return lex_push(l, T_STRING, b, *i - b, dir);
}

/* Skips the block comment at @i; the index after it, or 0 if it never ends. */
static size_t lex_comment_end(const struct lex *l, size_t i)
{
	for (size_t j = i + 2; j + 1 < l->len; j++)
		if (l->s[j] == '*' && l->s[j + 1] == '/')
			return j + 2;
	return 0;
}

/* Tokenises the source; comments and whitespace vanish, line splices too. */
static int lex_run(struct lex *l)
{
	const char *s = l->s;
	size_t i = 0, n = l->len;
	bool line_start = true;         /* only whitespace since the last newline */
	bool dir_name = false;          /* the next identifier names the directive */
	uint32_t dir = 0, ndir = 0;
	int rc;

	while (i < n) {
		char c = s[i];

		if (c == '\\' && i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
			/* A line splice: the line goes on, in code and directives. */
			i += 2;
			if (s[i - 1] == '\r' && i < n && s[i] == '\n')
				i++;
			continue;
		}
		if (c == '\n') {
			dir = 0;
			line_start = true;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n') {
				if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n')
					i++;
				i++;
			}
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			/* A comment is one space: a directive it spans goes on. */
			if (!(i = lex_comment_end(l, i)))
				return -EINVAL;
			continue;
		}
		if (c == '#' && line_start) {
			dir = ++ndir;
			dir_name = true;
			line_start = false;
			if (lex_push(l, T_PUNCT, i, 1, dir) < 0)
				return -ENOMEM;
			i++;
			continue;
		}
		line_start = false;
		if (is_ident_start(c)) {
			size_t b = i;

			while (i < n && is_ident(s[i]))
				i++;
			if (i < n && (s[i] == '"' || s[i] == '\'') && i - b <= 2) {
				/* A prefixed literal (L"", u8''). */
				if ((rc = lex_quoted(l, &i, b, dir)) < 0)
					return rc;
			} else {
				if (lex_push(l, T_IDENT, b, i - b, dir) < 0)
					return -ENOMEM;
				l->t[l->n - 1].dir_first = dir && dir_name;
			}
			dir_name = false;
			continue;
		}
		dir_name = false;
		if (isdigit((unsigned char)c) ||
		    (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
			size_t b = i;

			/* A preprocessing number: digits, letters, dots, exponent signs. */
			while (i < n && (is_ident(s[i]) || s[i] == '.' ||
					 ((s[i] == '+' || s[i] == '-') && strchr("eEpP", s[i - 1]))))
				i++;
			if (lex_push(l, T_NUMBER, b, i - b, dir) < 0)
				return -ENOMEM;
			continue;
		}
		if (c == '"' || c == '\'') {
			if ((rc = lex_quoted(l, &i, i, dir)) < 0)
				return rc;
			continue;
		}
		if (lex_push(l, T_PUNCT, i, 1, dir) < 0)
			return -ENOMEM;
		i++;
	}
	return 0;
}

static bool tok_is(const struct lex *l, size_t i, const char *text)
{
	size_t n = strlen(text);

	return i < l->n && l->t[i].len == n && !memcmp(l->s + l->t[i].pos, text, n);
}

static bool tok_punct(const struct lex *l, size_t i, char c)
{
	return i < l->n && l->t[i].kind == T_PUNCT && l->s[l->t[i].pos] == c;
}

static bool tok_eq(const struct lex *l, size_t i, size_t j)
{
	return l->t[i].len == l->t[j].len &&
	       !memcmp(l->s + l->t[i].pos, l->s + l->t[j].pos, l->t[i].len);
}

/* Index of the token closing the bracket opened at @i (same directive state), or l->n. */
static size_t tok_match(const struct lex *l, size_t i, char open, char close)
{
	int depth = 0;

	for (size_t j = i; j < l->n; j++) {
		if (l->t[j].dir)
			continue;
		if (tok_punct(l, j, open))
			depth++;
		else if (tok_punct(l, j, close) && --depth == 0)
			return j;
	}
	return l->n;
}

/* Skips `__attribute__((...))` groups from @i; returns the next token. */
static size_t skip_attributes(const struct lex *l, size_t i)
{
	while (tok_is(l, i, "__attribute__") && !l->t[i].dir && tok_punct(l, i + 1, '(')) {
		size_t e = tok_match(l, i + 1, '(', ')');

		if (e >= l->n)
			return l->n;
		i = e + 1;
	}
	return i;
}

/* What the prologue names: redefining any of them changes its meaning. */
static const char *const clg_used[] = {
	"get_group_id", "get_num_groups", "atomic_inc", "atomic_cmpxchg", "__builtin_expect",
	"__global", "global", "volatile", "unsigned", "int", "if", "else", "return",
};

static bool clg_is_used(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(clg_used) / sizeof(clg_used[0]); i++)
		if (strlen(clg_used[i]) == len && !memcmp(clg_used[i], s, len))
			return true;
	return false;
}

#define CLG_PARAMS                                                                  \
	"__global volatile unsigned int *" CLG_CTL ", __global volatile unsigned int *" CLG_REC \
	", unsigned int " CLG_ATT

/*
 * The prologue, one line inserted right after a kernel's opening brace, in
 * two variants that differ in how the first work-item of a group records
 * its decision. Every work-item reads its group's word; the one that finds
 * no decision of this attempt there reads the control word and writes the
 * decision. Where the work-items of a group may run at once (GPUs), that
 * write is a compare-and-swap and a loser takes the winner's answer; where
 * they run one after another on one thread (CLG_SERIAL_GROUPS), a plain
 * store, which spares every group a locked instruction. The check that
 * every work-item makes is marked unlikely to fail, so that compilers lay
 * the decision out of the work-item's straight path. Whether the launch is
 * guarded at all is a test of the attempt number, an integer, not of the
 * control word's pointer: PoCL's uniformity analysis takes a comparison
 * of a pointer with NULL as varying between work-items, and then compiles
 * everything after it as divergent, which in a kernel with barriers loses
 * the vectorisation across work-items (a tiled GEMM ran 23-43% longer).
 */
#define CLG_PRO_HEAD                                                                      \
	" if (" CLG_ATT ") { unsigned int __xsched_g = 1u + (unsigned int)(get_group_id(0) + " \
	"get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))), "       \
	"__xsched_v = " CLG_REC "[__xsched_g]; if (__builtin_expect(__xsched_v != " CLG_ATT   \
	", 0)) { if (__xsched_v && (__xsched_v == (" CLG_ATT " | 0x80000000u) || "             \
	"!(__xsched_v & 0x80000000u))) return; { unsigned int __xsched_w = *" CLG_CTL " ? ("  \
	CLG_ATT " | 0x80000000u) : " CLG_ATT
#define CLG_PRO_TAIL                                                                  \
	" if (__xsched_w != " CLG_ATT ") atomic_inc(&" CLG_REC "[0]); if (__xsched_w != " \
	CLG_ATT ") return; } } }"

static const char clg_prologue_cas[] =
	CLG_PRO_HEAD ", __xsched_p = atomic_cmpxchg(&" CLG_REC "[__xsched_g], __xsched_v, "
	"__xsched_w); if (__xsched_p != __xsched_v) __xsched_w = __xsched_p; else" CLG_PRO_TAIL;

static const char clg_prologue_serial[] =
	CLG_PRO_HEAD "; " CLG_REC "[__xsched_g] = __xsched_w;" CLG_PRO_TAIL;

_Static_assert(CLG_REC_SKIPPED == 0 && CLG_REC_GROUPS == 1 && CLG_SKIP_BIT == 0x80000000u,
	       "the prologue's record layout");

struct edit {
	size_t pos, cut;        /* replace @cut bytes at @pos */
	const char *text;
};

struct found {
	size_t name;            /* token of the name */
	const char *reason;
	struct edit e[2];       /* parameters, prologue */
	int ne;
};

/*
 * Reads the kernel declaration whose keyword is token @i into @f; returns
 * the token after what it read.
 */
static size_t scan_kernel(const struct lex *l, size_t i, const char *prologue, struct found *f)
{
	size_t j = skip_attributes(l, i + 1), open, close, body, name;

	f->reason = NULL;
	f->ne = 0;
	f->name = SIZE_MAX;
	/* Qualifiers and the return type, then the name and its '('. */
	while (j < l->n && !l->t[j].dir && l->t[j].kind == T_IDENT && !tok_punct(l, j + 1, '('))
		j = skip_attributes(l, j + 1);
	if (j >= l->n || l->t[j].dir || l->t[j].kind != T_IDENT || !tok_punct(l, j + 1, '(') ||
	    l->t[j + 1].dir) {
		f->reason = "its declaration is not plain (a directive or macro in it)";
		return i + 1;
	}
	name = j;
	f->name = name;
	open = j + 1;
	close = tok_match(l, open, '(', ')');
	if (close >= l->n) {
		f->reason = "its parameter list does not end";
		return open;
	}
	for (size_t k = open; k <= close; k++) {
		if (l->t[k].dir || tok_punct(l, k, '{') || tok_punct(l, k, '}') ||
		    tok_punct(l, k, ';')) {
			f->reason = "its parameter list holds a directive or a brace";
			return close + 1;
		}
	}
	body = skip_attributes(l, close + 1);
	if (tok_punct(l, body, ';')) {
		f->reason = "it is declared apart from its definition";
		return body + 1;
	}
	if (!tok_punct(l, body, '{') || l->t[body].dir) {
		f->reason = "its body does not follow its parameter list (a macro?)";
		return body;
	}
	if (close == open + 1) {
		f->e[f->ne++] = (struct edit){ l->t[close].pos, 0, CLG_PARAMS };
	} else if (close == open + 2 && tok_is(l, open + 1, "void")) {
		f->e[f->ne++] = (struct edit){ l->t[open + 1].pos, 4, CLG_PARAMS };
	} else if (close == open + 2) {
		f->reason = "its parameter list is one macro";
		return body + 1;
	} else {
		f->e[f->ne++] = (struct edit){ l->t[close].pos, 0, ", " CLG_PARAMS };
	}
	f->e[f->ne++] = (struct edit){ l->t[body].pos + 1, 0, prologue };
	return body + 1;
}

/*
 * The work-group copies. PoCL 3.1 miscompiles a kernel that leaves early
 * (a return, even one every work-item of the group takes) before a barrier
 * that precedes one of them: the copy runs past its buffer and the program
 * dies (SIGSEGV; the CTS's test_basic async_copy_local_to_global). A call
 * may sit in a helper function, so a program naming one anywhere is left
 * as it is, on every device: Lv1 still holds its launches back.
 */
static const char *const clg_group_copies[] = {
	"async_work_group_copy", "async_work_group_strided_copy", "wait_group_events",
};

static bool clg_is_group_copy(const struct lex *l, size_t i)
{
	for (size_t k = 0; k < sizeof(clg_group_copies) / sizeof(clg_group_copies[0]); k++)
		if (tok_is(l, i, clg_group_copies[k]))
			return true;
	return false;
}

/* The program-wide reason not to rewrite anything, or NULL. */
static const char *scan_program(const struct lex *l, bool *macro_kernel)
{
	const char *why = NULL;

	*macro_kernel = false;
	for (size_t i = 0; i < l->n; i++) {
		const struct tok *t = &l->t[i];

		if (t->kind != T_IDENT)
			continue;
		if (t->len >= 8 && !memcmp(l->s + t->pos, "__xsched", 8))
			why = "it uses the guardian's reserved names";
		if (t->dir && (tok_is(l, i, "__kernel") || tok_is(l, i, "kernel")))
			*macro_kernel = true;
		if (t->dir_first && tok_is(l, i, "define") && i + 1 < l->n &&
		    l->t[i + 1].dir_id == t->dir_id && l->t[i + 1].kind == T_IDENT &&
		    clg_is_used(l->s + l->t[i + 1].pos, l->t[i + 1].len))
			why = "it redefines a name the guardian uses";
		if (!why && clg_is_group_copy(l, i))
			why = "it makes work-group copies (async_work_group_copy), which PoCL "
			      "miscompiles after an early return";
	}
	return why;
}

static int apply_edits(const char *src, size_t len, const struct edit *e, size_t ne,
		       char **out, size_t *out_len)
{
	size_t total = len, at = 0, o = 0;
	char *buf;

	for (size_t i = 0; i < ne; i++)
		total += strlen(e[i].text) - e[i].cut;
	buf = malloc(total + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < ne; i++) {
		size_t tl = strlen(e[i].text);

		memcpy(buf + o, src + at, e[i].pos - at);
		o += e[i].pos - at;
		memcpy(buf + o, e[i].text, tl);
		o += tl;
		at = e[i].pos + e[i].cut;
	}
	memcpy(buf + o, src + at, len - at);
	o += len - at;
	buf[o] = '\0';
	*out = buf;
	*out_len = o;
	return 0;
}

int clg_rewrite(const char *src, size_t len, unsigned flags, struct clg_result *out)
{
	const char *prologue = flags & CLG_SERIAL_GROUPS ? clg_prologue_serial : clg_prologue_cas;
	struct lex l = { .s = src, .len = len };
	struct found *f = NULL;
	struct edit *e = NULL;
	size_t nf = 0, ne = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (memchr(src, '\0', len)) {
		out->reason = "its source holds a NUL byte";
		return 0;
	}
	rc = lex_run(&l);
	if (rc == -ENOMEM)
		goto out;
	if (rc < 0) {
		rc = 0;
		out->reason = "its source does not tokenise (an unterminated comment or string)";
		goto out;
	}
	rc = -ENOMEM;
	out->reason = scan_program(&l, &out->macro_kernel);
	for (size_t i = 0; i < l.n; i++)
		if (!l.t[i].dir && (tok_is(&l, i, "__kernel") || tok_is(&l, i, "kernel")))
			nf++;
	if (nf && !(f = calloc(nf, sizeof(*f))))
		goto out;
	nf = 0;
	for (size_t i = 0; i < l.n;) {
		if (!l.t[i].dir && (tok_is(&l, i, "__kernel") || tok_is(&l, i, "kernel")))
			i = scan_kernel(&l, i, prologue, &f[nf++]);
		else
			i++;
	}
	/* A kernel named anywhere else (a call, a prototype, a macro) keeps its signature. */
	for (size_t k = 0; k < nf; k++) {
		size_t uses = 0;

		if (f[k].name == SIZE_MAX)
			continue;
		for (size_t i = 0; i < l.n; i++)
			if (l.t[i].kind == T_IDENT && tok_eq(&l, i, f[k].name))
				uses++;
		if (uses > 1 && !f[k].reason)
			f[k].reason = "it is named elsewhere in the program (called, declared or "
				      "in a macro)";
	}
	out->k = calloc(nf ? nf : 1, sizeof(*out->k));
	if (!out->k)
		goto out;
	e = calloc(2 * nf + 1, sizeof(*e));
	if (!e)
		goto out;
	for (size_t k = 0; k < nf; k++) {
		struct clg_kernel *ck = &out->k[out->n];

		if (f[k].name == SIZE_MAX)
			continue;
		ck->name = strndup(src + l.t[f[k].name].pos, l.t[f[k].name].len);
		if (!ck->name)
			goto out;
		out->n++;
		ck->reason = out->reason ? out->reason : f[k].reason;
		if (ck->reason)
			continue;
		for (int x = 0; x < f[k].ne; x++)
			e[ne++] = f[k].e[x];
	}
	rc = ne ? apply_edits(src, len, e, ne, &out->src, &out->len) : 0;
	if (!ne && !out->reason)
		out->reason = nf ? "none of its kernels can be rewritten with certainty" :
				   "it has no kernel the rewriter can see";
out:
	free(l.t);
	free(f);
	free(e);
	if (rc < 0)
		clg_result_fini(out);
	return rc;
}

void clg_result_fini(struct clg_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->k[i].name);
	free(r->k);
	free(r->src);
	memset(r, 0, sizeof(*r));
}

const char *clg_reason(const struct clg_result *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->k[i].name, name) && r->k[i].reason)
			return r->k[i].reason;
	if (r->reason)
		return r->reason;
	return r->macro_kernel ? "it is defined through a macro the rewriter does not expand" :
				 "the rewriter did not see it (a macro, an included file)";
}

const char *clg_options_conflict(const char *opts)
{
	const char *p = opts;

	if (!p)
		return NULL;
	while ((p = strstr(p, "-D"))) {
		const char *b;
		size_t n = 0;

		if (p != opts && !isspace((unsigned char)p[-1])) {
			p += 2;
			continue;
		}
		b = p + 2;
		while (*b == ' ' || *b == '\t')
			b++;
		while (is_ident(b[n]))
			n++;
		for (size_t i = 0; i < sizeof(clg_used) / sizeof(clg_used[0]); i++)
			if (strlen(clg_used[i]) == n && !memcmp(clg_used[i], b, n))
				return clg_used[i];
		if (n >= 8 && !memcmp(b, "__xsched", 8))
			return "__xsched";
		p = b + n;
	}
	return NULL;
}
