/*
 * Our CUDA driver API declarations against the toolkit's cuda.h, built only
 * where cuda.h was found at configure time (the build itself never needs
 * it). Prototypes and routes are compared at compile time
 * (cu_decl_cuda.c); here, at run time: the constants and type layouts that
 * cu_decl_ours.c and cu_decl_cuda.c read from each header, entry by entry;
 * that tests/cu_decl.h lists every constant cu_api.h defines; and the
 * generic rows of cu_functions.def against cuda.h's prototypes, which name
 * the argument the generic hooks rely on.
 *
 * The prototypes come from cuda.h preprocessed as NVIDIA builds the driver
 * (-D__CUDA_API_VERSION_INTERNAL: every exported name declared under its
 * own name), by the build into XS_CUDA_INTERNAL_PATH, and are parsed here in
 * C: `CUresult name(parameters);`, parameters split at top-level commas;
 * the parser must find each XS_CU_FN row's function with its number of
 * parameters first. Mismatches are printed one per line, by name, before
 * the case fails.
 */
#include "test_util.h"

#include "cu_decl.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>

/* The values each header gives the constants of tests/cu_decl.h. */
static void cu_constants(void **state)
{
	int bad = 0;
	size_t i;

	(void)state;
	for (i = 0; i < XS_CU_DECL_NCONSTS; i++) {
		const struct cu_decl_const *o = &cu_decl_consts_ours[i];
		const struct cu_decl_const *c = &cu_decl_consts_cuda[i];

		assert_string_equal(o->name, c->name);
		if (o->value != c->value) {
			print_error("%s: cu_api.h %lld, cuda.h %lld\n", o->name, o->value,
				    c->value);
			bad++;
		}
	}
	if (bad)
		fail_msg("%d constants of cu_api.h differ from cuda.h", bad);
}

/* Sizes and alignments of types, sizes and offsets of struct fields. */
static void cu_layouts(void **state)
{
	int bad = 0;
	size_t i;

	(void)state;
	for (i = 0; i < XS_CU_DECL_NLAYOUT; i++) {
		const struct cu_decl_layout *o = &cu_decl_layout_ours[i];
		const struct cu_decl_layout *c = &cu_decl_layout_cuda[i];
		const char *where = o->field ? "offset" : "alignment";

		assert_string_equal(o->type, c->type);
		if (o->size != c->size || o->where != c->where) {
			print_error("%s%s%s: size %zu, %s %zu in cu_api.h; "
				    "size %zu, %s %zu in cuda.h\n",
				    o->type, o->field ? "." : "", o->field ? o->field : "",
				    o->size, where, o->where, c->size, where, c->where);
			bad++;
		}
	}
	if (bad)
		fail_msg("%d layouts of cu_api.h differ from cuda.h", bad);
}

/* A whole file, NUL-terminated; the test fails if it cannot be read. */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t len = 0, cap = 1 << 16, got;
	char *buf;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	buf = malloc(cap);
	assert_non_null(buf);
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (cap - len - 1 == 0) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	assert_false(ferror(f));
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/*
 * C tokens, just enough for declarations: identifiers and numbers, string
 * and character literals, single punctuation characters. Comments,
 * whitespace and line continuations separate tokens.
 */
struct tok {
	const char *p;
	size_t n;
};

struct toks {
	struct tok *v;
	size_t n, cap;
};

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static void lex(const char *s, struct toks *t)
{
	while (*s) {
		const char *start = s;

		if (isspace((unsigned char)*s) || *s == '\\') {
			s++;
			continue;
		}
		if (s[0] == '/' && s[1] == '*') {
			const char *end = strstr(s + 2, "*/");

			s = end ? end + 2 : s + strlen(s);
			continue;
		}
		if (s[0] == '/' && s[1] == '/') {
			s += strcspn(s, "\n");
			continue;
		}
		if (is_word(*s)) {
			while (is_word(*s))
				s++;
		} else if (*s == '"' || *s == '\'') {
			char quote = *s++;

			while (*s && *s != quote)
				s += s[0] == '\\' && s[1] ? 2 : 1;
			if (*s)
				s++;
		} else {
			s++;
		}
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 4096;
			t->v = realloc(t->v, t->cap * sizeof(*t->v));
			assert_non_null(t->v);
		}
		t->v[t->n++] = (struct tok){ start, (size_t)(s - start) };
	}
}

static bool tok_is(const struct tok *t, const char *s)
{
	return t->n == strlen(s) && !memcmp(t->p, s, t->n);
}

static bool tok_is_ident(const struct tok *t)
{
	return (isalpha((unsigned char)t->p[0]) || t->p[0] == '_');
}

/* Constant-style names of the driver API: CU_ or CUDA_, then capitals, digits, '_'. */
static bool tok_is_cu_constant(const struct tok *t)
{
	size_t i, pre;

	if (t->n > 3 && !memcmp(t->p, "CU_", 3))
		pre = 3;
	else if (t->n > 5 && !memcmp(t->p, "CUDA_", 5))
		pre = 5;
	else
		return false;
	for (i = pre; i < t->n; i++)
		if (!isupper((unsigned char)t->p[i]) && !isdigit((unsigned char)t->p[i]) &&
		    t->p[i] != '_')
			return false;
	return true;
}

static bool listed_constant(const struct tok *t)
{
	size_t i;

	for (i = 0; i < XS_CU_DECL_NCONSTS; i++)
		if (tok_is(t, cu_decl_consts_ours[i].name))
			return true;
	return false;
}

static bool toks_have(const struct toks *t, const struct tok *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].n == name->n && !memcmp(t->v[i].p, name->p, name->n))
			return true;
	return false;
}

/*
 * Every constant cu_api.h defines (#define NAME, or an enumerator) is in
 * tests/cu_decl.h, and so compared with cuda.h by cu_constants. A constant
 * that cuda.h lacks cannot be listed there (cu_decl_cuda.c would not
 * build), so it fails here; for enumerators, the message says whether the
 * preprocessed cuda.h has the name at all.
 */
static void cu_constants_listed(void **state)
{
	char *text = read_file(XS_CU_API_PATH), *cuda_text = read_file(XS_CUDA_INTERNAL_PATH);
	struct toks t = { 0 }, cuda = { 0 };
	int bad = 0, depth = 0;
	size_t i, enum_depth = 0;
	bool in_enum = false;

	(void)state;
	lex(text, &t);
	lex(cuda_text, &cuda);
	for (i = 0; i < t.n; i++) {
		const struct tok *name = NULL;
		bool enumerator = false;

		if (tok_is(&t.v[i], "#") && i + 2 < t.n && tok_is(&t.v[i + 1], "define"))
			name = &t.v[i + 2];
		/* enum [tag] { ... }: not a use of an enum type. */
		if (tok_is(&t.v[i], "enum") && i + 2 < t.n &&
		    (tok_is(&t.v[i + 1], "{") || tok_is(&t.v[i + 2], "{"))) {
			in_enum = true;
			enum_depth = depth + 1;
		}
		if (tok_is(&t.v[i], "{") || tok_is(&t.v[i], "(")) {
			depth++;
		} else if (tok_is(&t.v[i], "}") || tok_is(&t.v[i], ")")) {
			if (in_enum && (size_t)depth == enum_depth)
				in_enum = false;
			depth--;
		}
		/* An enumerator opens the enum's body or follows a comma in it. */
		if (in_enum && (size_t)depth == enum_depth && i + 1 < t.n &&
		    (tok_is(&t.v[i], "{") || tok_is(&t.v[i], ","))) {
			name = &t.v[i + 1];
			enumerator = true;
		}
		if (!name || !tok_is_cu_constant(name) || listed_constant(name))
			continue;
		if (enumerator && !toks_have(&cuda, name))
			print_error("cu_api.h defines %.*s, which cuda.h does not\n",
				    (int)name->n, name->p);
		else
			print_error("cu_api.h defines %.*s, which tests/cu_decl.h does not list\n",
				    (int)name->n, name->p);
		bad++;
	}
	free(cuda.v);
	free(t.v);
	free(cuda_text);
	free(text);
	if (bad)
		fail_msg("%d constants of cu_api.h are not checked against cuda.h", bad);
}

#define CU_MAX_PARAMS 32

/* One prototype of cuda.h: parameter k is tokens [param[k][0], param[k][1]). */
struct proto {
	const struct tok *name;
	unsigned nparams;
	size_t param[CU_MAX_PARAMS][2];
};

struct protos {
	struct toks toks;
	struct proto *v;
	size_t n, cap;
	char *text;
};

/* Every `CUresult name(parameters);` of the preprocessed cuda.h. */
static void protos_load(struct protos *ps, const char *path)
{
	struct tok *v;
	size_t i, j, n;

	memset(ps, 0, sizeof(*ps));
	ps->text = read_file(path);
	lex(ps->text, &ps->toks);
	v = ps->toks.v;
	n = ps->toks.n;
	for (i = 0; i + 2 < n; i++) {
		struct proto *p;
		size_t start;
		int depth = 0;

		if (!tok_is(&v[i], "CUresult") || !tok_is_ident(&v[i + 1]) ||
		    !tok_is(&v[i + 2], "("))
			continue;
		for (j = i + 2; j < n; j++) {
			if (tok_is(&v[j], "(") || tok_is(&v[j], "["))
				depth++;
			else if ((tok_is(&v[j], ")") || tok_is(&v[j], "]")) && --depth == 0)
				break;
		}
		if (j + 1 >= n || !tok_is(&v[j + 1], ";"))
			continue;       /* a definition or something else */
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? 2 * ps->cap : 1024;
			ps->v = realloc(ps->v, ps->cap * sizeof(*ps->v));
			assert_non_null(ps->v);
		}
		p = &ps->v[ps->n++];
		p->name = &v[i + 1];
		p->nparams = 0;
		if (j == i + 4 && tok_is(&v[i + 3], "void"))
			continue;
		depth = 0;
		for (start = i + 3; start < j;) {
			size_t k;

			for (k = start; k < j; k++) {
				if (tok_is(&v[k], "(") || tok_is(&v[k], "["))
					depth++;
				else if (tok_is(&v[k], ")") || tok_is(&v[k], "]"))
					depth--;
				else if (!depth && tok_is(&v[k], ","))
					break;
			}
			if (p->nparams == CU_MAX_PARAMS)
				fail_msg("%.*s: more than %d parameters", (int)p->name->n,
					 p->name->p, CU_MAX_PARAMS);
			p->param[p->nparams][0] = start;
			p->param[p->nparams][1] = k;
			p->nparams++;
			start = k + 1;
		}
	}
	if (!ps->n)
		fail_msg("no prototype found in %s", path);
}

static void protos_free(struct protos *ps)
{
	free(ps->v);
	free(ps->toks.v);
	free(ps->text);
}

static const struct proto *proto_find(const struct protos *ps, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->v[i].name->n == len && !memcmp(ps->v[i].name->p, name, len))
			return &ps->v[i];
	return NULL;
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s && !strcmp(name + n - s, suffix);
}

/*
 * The declaration of @name; a per-thread variant that cuda.h does not
 * declare has its base function's.
 */
static const struct proto *proto_for(const struct protos *ps, const char *name)
{
	const struct proto *p = proto_find(ps, name, strlen(name));

	if (!p && (has_suffix(name, "_ptsz") || has_suffix(name, "_ptds")))
		p = proto_find(ps, name, strlen(name) - 5);
	return p;
}

/* Whether parameter @k of @p is of the one-word type @type, named or not. */
static bool param_is(const struct protos *ps, const struct proto *p, unsigned k,
		     const char *type)
{
	const struct tok *v = ps->toks.v;
	size_t a = p->param[k][0], b = p->param[k][1];

	if (b - a >= 2 && tok_is_ident(&v[b - 1]))
		b--;    /* the parameter's name */
	return b - a == 1 && tok_is(&v[a], type);
}

static bool param_is_stream(const struct protos *ps, const struct proto *p, unsigned k)
{
	return param_is(ps, p, k, "CUstream");
}

/* Parameter @k of @p as written in cuda.h, tokens joined by spaces. */
static const char *param_text(const struct protos *ps, const struct proto *p, unsigned k,
			      char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = p->param[k][0]; i < p->param[k][1] && len < size; i++) {
		int w = snprintf(buf + len, size - len, "%s%.*s", len ? " " : "",
				 (int)ps->toks.v[i].n, ps->toks.v[i].p);

		len += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

/* The number of parameters in a parenthesized list, as a XS_CU_FN row writes them. */
static unsigned count_params(const char *list)
{
	unsigned n = 1;
	int depth = 0;

	if (!strcmp(list, "(void)"))
		return 0;
	for (; *list; list++) {
		if (*list == '(')
			depth++;
		else if (*list == ')')
			depth--;
		else if (*list == ',' && depth == 1)
			n++;
	}
	return n;
}

/*
 * The parser itself, on the prototypes cu_decl_cuda.c compares at compile
 * time: it finds each, with as many parameters, or the checks of the
 * generic rows below would prove nothing.
 */
static int check_parser(const struct protos *ps)
{
	static const struct {
		const char *name, *params;
	} ours[] = {
#define XS_CU_FN(name, how, arg, symbol, version, params) { #name, #params },
#include "vendor/cuda/cu_functions.def"
	};
	int bad = 0;
	size_t i;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		const struct proto *p = proto_find(ps, ours[i].name, strlen(ours[i].name));

		if (!p) {
			print_error("parser: no prototype of %s found in cuda.h\n", ours[i].name);
			bad++;
		} else if (p->nparams != count_params(ours[i].params)) {
			print_error("parser: %u parameters found for %s%s\n", p->nparams,
				    ours[i].name, ours[i].params);
			bad++;
		}
	}
	return bad;
}

enum pass_kind { PASS_FLUSH, PASS_TRANSLATE, PASS_SYNC, PASS_GRAPH };

/* The generic rows: those whose @how is not PASS or HOOK. */
static const struct pass {
	const char *name;
	enum pass_kind kind;
	int arg;        /* the stream (PASS_GRAPH: executable graph) argument; -1 for PASS_SYNC */
	int pt;         /* a per-thread row (_PT) */
} cu_passes[] = {
#define CU_P_PASS(name, arg, pt)
#define CU_P_HOOK(name, arg, pt)
#define CU_P_FLUSH(name, arg, pt) { #name, PASS_FLUSH, arg, pt },
#define CU_P_TRANSLATE(name, arg, pt) { #name, PASS_TRANSLATE, arg, pt },
#define CU_P_SYNC(name, arg, pt) { #name, PASS_SYNC, -1, pt },
#define CU_P_GRAPH(name, arg, pt) { #name, PASS_GRAPH, arg, pt },
#define XS_CU_FN(name, how, arg, ...) CU_P_##how(name, arg, 0)
#define XS_CU_FN_PT(name, how, arg, ...) CU_P_##how(name, arg, 1)
#define XS_CU_EX(name, how, arg, ...) CU_P_##how(name, arg, 0)
#define XS_CU_EX_PT(name, how, arg, ...) CU_P_##how(name, arg, 1)
#include "vendor/cuda/cu_functions.def"
};

static const char *const pass_how[] = {
	[PASS_FLUSH] = "FLUSH",
	[PASS_TRANSLATE] = "TRANSLATE",
	[PASS_SYNC] = "SYNC",
	[PASS_GRAPH] = "GRAPH",
};

/*
 * The generic rows against cuda.h: a flush or translate row names a
 * stream parameter of its function, a graph row an executable-graph
 * parameter, a sync row a function without a stream; a _PT row of a
 * stream hook is a _ptsz variant, of a sync hook a _ptds one.
 */
static void cu_pass_streams(void **state)
{
	struct protos ps;
	char text[256];
	int bad = 0;
	size_t i;

	(void)state;
	protos_load(&ps, XS_CUDA_INTERNAL_PATH);
	bad = check_parser(&ps);
	for (i = 0; i < sizeof(cu_passes) / sizeof(cu_passes[0]); i++) {
		const struct pass *e = &cu_passes[i];
		const struct proto *p = proto_for(&ps, e->name);
		const char *suffix = e->kind == PASS_SYNC ? "_ptds" : "_ptsz";
		unsigned k;

		if (e->pt != has_suffix(e->name, suffix)) {
			print_error("%s (%s): %s, but the name %s in %s\n", e->name,
				    pass_how[e->kind], e->pt ? "a _PT row" : "not a _PT row",
				    e->pt ? "does not end" : "ends", suffix);
			bad++;
		}
		if (!p) {
			print_error("%s (%s): cuda.h declares no %s\n", e->name,
				    pass_how[e->kind], e->name);
			bad++;
			continue;
		}
		if (e->kind == PASS_SYNC) {
			for (k = 0; k < p->nparams; k++) {
				if (!param_is_stream(&ps, p, k))
					continue;
				print_error("%s (SYNC): cuda.h's %.*s "
					    "takes a stream, parameter %u `%s`\n",
					    e->name, (int)p->name->n, p->name->p, k,
					    param_text(&ps, p, k, text, sizeof(text)));
				bad++;
			}
		} else if (e->arg < 0 || (unsigned)e->arg >= p->nparams) {
			print_error("%s (%s, %d): cuda.h's %.*s has %u parameters\n", e->name,
				    pass_how[e->kind], e->arg, (int)p->name->n, p->name->p,
				    p->nparams);
			bad++;
		} else if (!param_is(&ps, p, (unsigned)e->arg,
				     e->kind == PASS_GRAPH ? "CUgraphExec" : "CUstream")) {
			print_error("%s (%s, %d): parameter %d of cuda.h's "
				    "%.*s is `%s`, not a %s\n",
				    e->name, pass_how[e->kind], e->arg, e->arg, (int)p->name->n,
				    p->name->p,
				    param_text(&ps, p, (unsigned)e->arg, text, sizeof(text)),
				    e->kind == PASS_GRAPH ? "CUgraphExec" : "CUstream");
			bad++;
		}
	}
	protos_free(&ps);
	if (bad)
		fail_msg("%d generic rows of cu_functions.def disagree with cuda.h", bad);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(cu_constants),
	cmocka_unit_test(cu_constants_listed),
	cmocka_unit_test(cu_layouts),
	cmocka_unit_test(cu_pass_streams),
};

TU_MAIN(tests)
