/*
 * The guardian rewriter (src/shim/opencl/guard/cl_guard_rw.h) as a plain
 * function over source text: what it rewrites (every plain kernel, with
 * either spelling and any attributes, several per program, `void` and
 * empty parameter lists), what it leaves exactly as it was and why
 * (comments, strings, directives, kernels named elsewhere, prototypes,
 * macros in the signature, programs that redefine the prologue's names,
 * use its reserved ones or make work-group copies), and that a rewrite
 * only inserts: the original text and its line numbers are all still
 * there.
 */
#include "test_util.h"

#include "shim/opencl/guard/cl_guard_rw.h"

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static size_t lines(const char *s)
{
	return count(s, "\n");
}

/* The rewrite of @src, asserting it succeeded. */
static void rewrite(const char *src, struct clg_result *r)
{
	assert_int_equal(clg_rewrite(src, strlen(src), 0, r), 0);
}

static const struct clg_kernel *kernel(const struct clg_result *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->k[i].name, name))
			return &r->k[i];
	fail_msg("kernel %s not found", name);
	return NULL;
}

/* The prologue's first and last bytes (cl_guard_rw.c). */
#define PRO_START " if (" CLG_ATT ") { unsigned int __xsched_g"
#define PRO_END ") return; } } }"

/*
 * Removes what the rewriter inserts (the hidden parameters with their
 * comma, the prologue): what is left must be @orig, byte for byte.
 */
static void assert_only_inserted(const char *out, const char *orig)
{
	char *s = strdup(out), *p;
	const char *params = "__global volatile unsigned int *" CLG_CTL
			     ", __global volatile unsigned int *" CLG_REC ", unsigned int " CLG_ATT;

	assert_non_null(s);
	while ((p = strstr(s, PRO_START))) {
		char *end = strstr(p, PRO_END);

		assert_non_null(end);
		end += strlen(PRO_END);
		memmove(p, end, strlen(end) + 1);
	}
	while ((p = strstr(s, params))) {
		char *from = p;

		if (p >= s + 2 && !strncmp(p - 2, ", ", 2))
			from = p - 2;
		memmove(from, p + strlen(params), strlen(p + strlen(params)) + 1);
	}
	assert_string_equal(s, orig);
	free(s);
}

static void rewrites_plain_kernels(void **state)
{
	const char *src =
		"// a __kernel in a comment: __kernel void no(int a) {}\n"
		"/* and in a block\n   comment __kernel void nope() {} */\n"
		"constant char msg[] = \"__kernel void str(int x) { }\";\n"
		"__kernel void add(__global float *a, __global const float *b, int n)\n"
		"{\n"
		"\tint i = get_global_id(0);\n"
		"\tif (i >= n)\n"
		"\t\treturn;\n"
		"\ta[i] += b[i];\n"
		"}\n"
		"kernel __attribute__((reqd_work_group_size(64, 1, 1))) void scale(global float *a)\n"
		"    __attribute__((vec_type_hint(float))) {\n"
		"\t__local float tile[64];\n"
		"\ttile[get_local_id(0)] = a[get_global_id(0)];\n"
		"\tbarrier(CLK_LOCAL_MEM_FENCE);\n"
		"\ta[get_global_id(0)] = tile[63 - get_local_id(0)] * 2.0f;\n"
		"}\n";
	struct clg_result r;

	(void)state;
	rewrite(src, &r);
	assert_non_null(r.src);
	assert_null(r.reason);
	assert_int_equal(r.n, 2);
	assert_null(kernel(&r, "add")->reason);
	assert_null(kernel(&r, "scale")->reason);
	assert_int_equal(count(r.src, CLG_CTL ", __global volatile unsigned int *" CLG_REC
				", unsigned int " CLG_ATT),
			 2);
	assert_int_equal(count(r.src, PRO_START), 2);
	/* Inserted after the right braces, on the same lines. */
	assert_non_null(strstr(r.src, "int n, __global volatile"));
	assert_non_null(strstr(r.src, "global float *a, __global volatile"));
	assert_non_null(strstr(r.src, "(float))) {" PRO_START));
	assert_int_equal(lines(r.src), lines(src));
	assert_int_equal(r.len, strlen(r.src));
	assert_only_inserted(r.src, src);
	/* The comments and the string are untouched. */
	assert_non_null(strstr(r.src, "__kernel void no(int a) {}"));
	assert_non_null(strstr(r.src, "\"__kernel void str(int x) { }\""));
	clg_result_fini(&r);
}

static void empty_and_void_parameter_lists(void **state)
{
	const char *src = "__kernel void a() { }\n__kernel void b(void) { }\n";
	struct clg_result r;

	(void)state;
	rewrite(src, &r);
	assert_non_null(r.src);
	assert_non_null(strstr(r.src, "void a(__global volatile unsigned int *" CLG_CTL));
	assert_non_null(strstr(r.src, "void b(__global volatile unsigned int *" CLG_CTL));
	assert_null(strstr(r.src, "(void"));
	clg_result_fini(&r);
}

static void kernels_named_elsewhere_stay(void **state)
{
	const char *src =
		"__kernel void helper(__global int *p) { p[0] = 1; }\n"
		"__kernel void caller(__global int *p) { helper(p); }\n"
		"__kernel void proto(__global int *p);\n"
		"__kernel void proto(__global int *p) { p[1] = 2; }\n"
		"#define NAME_IT lonely\n"
		"__kernel void lonely(__global int *p) { p[2] = 3; }\n";
	struct clg_result r;

	(void)state;
	rewrite(src, &r);
	assert_non_null(r.src);
	assert_non_null(kernel(&r, "helper")->reason);
	assert_null(kernel(&r, "caller")->reason);
	assert_non_null(kernel(&r, "proto")->reason);
	assert_non_null(kernel(&r, "lonely")->reason);
	/* Only the caller changed; the call still has its one argument. */
	assert_int_equal(count(r.src, PRO_START), 1);
	assert_non_null(strstr(r.src, "__kernel void helper(__global int *p) { p[0] = 1; }"));
	assert_non_null(strstr(r.src, PRO_END " helper(p); }"));
	assert_string_equal(clg_reason(&r, "helper"), kernel(&r, "helper")->reason);
	assert_only_inserted(r.src, src);
	clg_result_fini(&r);
}

static void macros_and_directives(void **state)
{
	const char *src =
		"#define KERNEL(n) __kernel void n(__global int *p) { p[0] = 1; }\n"
		"KERNEL(made)\n"
		"#define ARGS __global int *p\n"
		"__kernel void one_macro(ARGS) { p[0] = 2; }\n"
		"#define BEGIN {\n"
		"__kernel void brace(__global int *p) BEGIN p[0] = 3; }\n"
		"__kernel void cond(__global int *p\n"
		"#ifdef EXTRA\n"
		"  , int x\n"
		"#endif\n"
		") { p[0] = 4; }\n"
		"#define LONG_LINE(x) \\\n  x + \\\n  1\n"
		"__kernel void fine(__global TYPE *p, int n) { p[0] = LONG_LINE(n); }\n";
	struct clg_result r;

	(void)state;
	rewrite(src, &r);
	assert_true(r.macro_kernel);
	assert_non_null(r.src);
	assert_non_null(kernel(&r, "one_macro")->reason);
	assert_non_null(kernel(&r, "brace")->reason);
	assert_non_null(kernel(&r, "cond")->reason);
	assert_null(kernel(&r, "fine")->reason);
	/* The kernel a macro makes is not one the rewriter saw. */
	assert_null(strstr(r.src, "void n(__global int *p, __global"));
	assert_non_null(strstr(clg_reason(&r, "made"), "macro"));
	assert_int_equal(count(r.src, PRO_START), 1);
	assert_int_equal(lines(r.src), lines(src));
	assert_only_inserted(r.src, src);
	clg_result_fini(&r);
}

static void whole_program_refusals(void **state)
{
	static const char *const srcs[] = {
		"#define atomic_cmpxchg(p, a, b) 0\n__kernel void k(__global int *p) { p[0] = 1; }\n",
		"  #  define get_group_id(d) 0\n__kernel void k(__global int *p) { p[0] = 1; }\n",
		"__kernel void k(__global int *__xsched_mine) { __xsched_mine[0] = 1; }\n",
		"__kernel void k(__global int *p) { p[0] = 1; } /* unterminated\n",
		"__kernel void k(__global char *p) { p[0] = 'x; }\n",
		"int f(int x) { return x; }\n",
		/* Work-group copies, in the kernel or in a helper (PoCL 3.1). */
		"__kernel void k(__global int *g, __local int *l) {\n"
		"  event_t e = async_work_group_copy(l, g, 4, 0); wait_group_events(1, &e); }\n",
		"void h(__global int *g, __local int *l) { event_t e =\n"
		"  async_work_group_strided_copy(l, g, 4, 2, 0); }\n"
		"__kernel void k(__global int *g, __local int *l) { h(g, l); }\n",
	};
	struct clg_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		rewrite(srcs[i], &r);
		assert_null(r.src);
		assert_non_null(r.reason);
		assert_string_equal(clg_reason(&r, "k"), r.reason);
		clg_result_fini(&r);
	}
	/* A NUL inside the given length is refused, not read as the end. */
	assert_int_equal(clg_rewrite("__kernel void k() {}\0x", 22, 0, &r), 0);
	assert_null(r.src);
	assert_non_null(r.reason);
	clg_result_fini(&r);
}

static void only_the_given_length_is_read(void **state)
{
	/* Not NUL-terminated where it ends: a comment that never closes within it. */
	char buf[64];
	struct clg_result r;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "__kernel void k() { } /*", 24);
	assert_int_equal(clg_rewrite(buf, 24, 0, &r), 0);
	assert_null(r.src);
	clg_result_fini(&r);
	memcpy(buf, "__kernel void k() { }", 21);
	assert_int_equal(clg_rewrite(buf, 21, 0, &r), 0);
	assert_non_null(r.src);
	assert_int_equal(strlen(r.src), r.len);
	clg_result_fini(&r);
}

/*
 * The two ways a group's first work-item records its decision: a
 * compare-and-swap by default, a plain store of the decision into the
 * group's word for CPU devices (CLG_SERIAL_GROUPS); otherwise the same
 * insertions, at the same places.
 */
static void serial_groups_store(void **state)
{
	const char *src = "__kernel void k(__global int *p)\n{\n\tp[get_global_id(0)] = 1;\n}\n";
	const char *store = CLG_REC "[__xsched_g] = __xsched_w;";
	struct clg_result cas, serial;

	(void)state;
	assert_int_equal(clg_rewrite(src, strlen(src), 0, &cas), 0);
	assert_int_equal(clg_rewrite(src, strlen(src), CLG_SERIAL_GROUPS, &serial), 0);
	assert_non_null(cas.src);
	assert_non_null(serial.src);
	assert_int_equal(count(cas.src, "atomic_cmpxchg("), 1);
	assert_int_equal(count(cas.src, store), 0);
	assert_int_equal(count(serial.src, "atomic_cmpxchg("), 0);
	assert_int_equal(count(serial.src, store), 1);
	/* Both still count a skip, and mark the common path as likely. */
	assert_int_equal(count(cas.src, "atomic_inc(&" CLG_REC "[0])"), 1);
	assert_int_equal(count(serial.src, "atomic_inc(&" CLG_REC "[0])"), 1);
	assert_int_equal(count(serial.src, "__builtin_expect("), 1);
	assert_int_equal(lines(serial.src), lines(src));
	assert_only_inserted(cas.src, src);
	assert_only_inserted(serial.src, src);
	clg_result_fini(&cas);
	clg_result_fini(&serial);
}

static void build_options(void **state)
{
	(void)state;
	assert_null(clg_options_conflict(NULL));
	assert_null(clg_options_conflict("-cl-fast-relaxed-math -DTYPE=float -D N=4"));
	assert_null(clg_options_conflict("-I/usr/include/atomic_inc -DMY_atomic_inc"));
	assert_string_equal(clg_options_conflict("-O2 -Datomic_inc(x)=x"), "atomic_inc");
	assert_string_equal(clg_options_conflict("-D get_group_id=foo"), "get_group_id");
	assert_string_equal(clg_options_conflict("-D__builtin_expect(x,y)=x"), "__builtin_expect");
	/* No longer in the prologue: an application may define them. */
	assert_null(clg_options_conflict("-Dbarrier(x)=x -D get_local_id=foo"));
	assert_string_equal(clg_options_conflict("-D__xsched_x"), "__xsched");
}

static void record_size(void **state)
{
	(void)state;
	assert_int_equal(clg_rec_size(1), (CLG_REC_GROUPS + 1) * 4);
	assert_int_equal(clg_rec_size(32), (CLG_REC_GROUPS + 32) * 4);
	assert_int_equal(clg_rec_size(33), (CLG_REC_GROUPS + 33) * 4);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(rewrites_plain_kernels),
	cmocka_unit_test(empty_and_void_parameter_lists),
	cmocka_unit_test(kernels_named_elsewhere_stay),
	cmocka_unit_test(macros_and_directives),
	cmocka_unit_test(whole_program_refusals),
	cmocka_unit_test(only_the_given_length_is_read),
	cmocka_unit_test(serial_groups_store),
	cmocka_unit_test(build_options),
	cmocka_unit_test(record_size),
};

TU_MAIN(tests)
