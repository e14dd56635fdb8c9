/*
 * The instrumented twin of programs built from source (see cl_guard.h,
 * cl_guard_rw.h).
 *
 * The application's program stays the driver's program of its own source:
 * its handle, source, context, devices and reference count are the
 * driver's answers. Beside it the shim creates a second program from the
 * rewritten source, the instrumented one, and builds (or compiles) that
 * one with the application's options, plus -cl-kernel-arg-info so that
 * every built kernel can be checked by the names of its last two
 * arguments. Kernels the application creates from its program come from
 * the instrumented one; everything that depends on the build (kernel
 * names and count, build status and log) is answered from it. Binaries
 * are the exception: they are the original source's, built on first
 * request, so a binary an application caches never carries the guardian
 * into a process that would not know of it.
 *
 * If the instrumented build fails, or the options define a name the
 * prologue uses, the application's own program is built instead, exactly
 * as asked: the guardian can cost a second build, never a result. A
 * compile (for a link) compiles the application's program only: objects
 * compiled apart and linked carry no guardian (clCompileProgram()).
 *
 * Records are few (one per program from source) and looked up at kernel
 * creation and program queries only: a list under one mutex.
 */
#include "shim/opencl/guard/cl_guard.h"
#include "shim/opencl/guard/cl_guard_rw.h"
#include "base/xlog.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CLPG_ARG_INFO " -cl-kernel-arg-info"

struct clpg {
	struct clpg *next;
	cl_program app;                 /* the application's (original source) */
	cl_program inst;                /* the rewritten source's, or NULL */
	cl_context ctx;
	struct clg_result rw;
	const char *why;                /* why kernels come from @app (static) */
	bool use_inst;                  /* kernels and build answers from @inst */
	bool app_built;                 /* @app built or compiled too */
	bool compiled;                  /* by clCompileProgram (not built) */
	char *options;                  /* the application's last options */
	cl_uint ndev;
	cl_device_id *devs;
};

static pthread_mutex_t clpg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clpg *clpg_head;

static pthread_once_t clpg_env_once = PTHREAD_ONCE_INIT;
static bool clpg_enabled, clpg_buffers, clpg_atomic;

/*
 * XSCHED_OPENCL_LV2: "0" turns the guardian off; else a comma-separated
 * list of "1" (on: the default), "buffer" (the control word and records
 * never in SVM) and "atomic" (work-groups decide by compare-and-swap on
 * CPU devices too).
 */
static void clpg_env_read(void)
{
	const char *v = getenv("XSCHED_OPENCL_LV2");

	clpg_enabled = true;
	if (!v || !*v)
		return;
	if (!strcmp(v, "0")) {
		clpg_enabled = false;
		return;
	}
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ",");

		if (n == 6 && !strncmp(p, "buffer", n))
			clpg_buffers = true;
		else if (n == 6 && !strncmp(p, "atomic", n))
			clpg_atomic = true;
		else if (n != 1 || *p != '1')
			XLOG_ONCE(XLOG_WARN, "XSCHED_OPENCL_LV2=%s: '%.*s' is not 0, 1, buffer or "
				  "atomic: ignored (the guardian is on)", v, (int)n, p);
		p += n + (p[n] == ',');
	}
}

bool cl_guard_enabled(void)
{
	pthread_once(&clpg_env_once, clpg_env_read);
	return clpg_enabled;
}

bool cl_guard_buffers(void)
{
	pthread_once(&clpg_env_once, clpg_env_read);
	return clpg_buffers;
}

/*
 * The rewriter's flags for a program of @ctx: CLG_SERIAL_GROUPS when every
 * device of the context is a CPU (unless XSCHED_OPENCL_LV2 says atomic),
 * else 0; 0 too when the driver does not say. After cl_guard_enabled()
 * (the environment read).
 */
static unsigned clpg_flags(cl_context ctx)
{
	cl_device_id *devs = NULL;
	size_t size = 0, n;
	unsigned flags = 0;

	if (clpg_atomic || !cl_real.clGetContextInfo ||
	    cl_real.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, NULL, &size) != CL_SUCCESS ||
	    !(n = size / sizeof(*devs)) || !(devs = malloc(size)) ||
	    cl_real.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, size, devs, NULL) != CL_SUCCESS)
		goto out;
	flags = CLG_SERIAL_GROUPS;
	for (size_t i = 0; i < n && flags; i++) {
		cl_device_type type = 0;

		if (cl_real.clGetDeviceInfo(devs[i], CL_DEVICE_TYPE, sizeof(type), &type, NULL) !=
			    CL_SUCCESS ||
		    !(type & CL_DEVICE_TYPE_CPU))
			flags = 0;
	}
out:
	free(devs);
	return flags;
}

/* The record of @p (the application's or the instrumented program), lock held. */
static struct clpg *clpg_find(cl_program p)
{
	struct clpg *r;

	for (r = clpg_head; r && r->app != p && r->inst != p; r = r->next)
		;
	return r;
}

static void clpg_free(struct clpg *r)
{
	if (r->inst)
		cl_real.clReleaseProgram(r->inst);
	clg_result_fini(&r->rw);
	free(r->options);
	free(r->devs);
	free(r);
}

cl_program cl_twin_app_of(cl_program real)
{
	struct clpg *r;
	cl_program app = NULL;

	pthread_mutex_lock(&clpg_lock);
	r = clpg_find(real);
	if (r && r->inst == real)
		app = r->app;
	pthread_mutex_unlock(&clpg_lock);
	return app;
}

const char *cl_twin_why(cl_program real, const char *kernel)
{
	const char *why = "its program was not built from source through the shim";
	struct clpg *r;

	pthread_mutex_lock(&clpg_lock);
	r = clpg_find(real);
	if (r && r->inst == real)
		why = clg_reason(&r->rw, kernel);
	else if (r)
		why = r->why ? r->why : "its program was not instrumented";
	pthread_mutex_unlock(&clpg_lock);
	return why;
}

unsigned cl_twin_count_in(cl_context ctx)
{
	unsigned n = 0;

	pthread_mutex_lock(&clpg_lock);
	for (struct clpg *r = clpg_head; r; r = r->next)
		n += r->inst && r->ctx == ctx;
	pthread_mutex_unlock(&clpg_lock);
	return n;
}

/* The program kernels of @p come from. */
cl_program cl_twin_kernels_of(cl_program p)
{
	struct clpg *r;
	cl_program k = p;

	pthread_mutex_lock(&clpg_lock);
	r = clpg_find(p);
	if (r && r->app == p && r->use_inst)
		k = r->inst;
	pthread_mutex_unlock(&clpg_lock);
	return k;
}

/* The record of the application's @p, if it has an instrumented twin; lock held. */
static struct clpg *clpg_twin(cl_program p)
{
	struct clpg *r = clpg_find(p);

	return r && r->app == p && r->inst ? r : NULL;
}

/*
 * Whether build options @opts ask for kernel argument information
 * (-cl-kernel-arg-info as one of their words).
 */
static bool clpg_asks_arg_info(const char *opts)
{
	static const char word[] = "-cl-kernel-arg-info";

	for (const char *o = opts; o && *o;) {
		size_t n;

		o += strspn(o, " \t\n\r\f\v");
		n = strcspn(o, " \t\n\r\f\v");
		if (n == sizeof(word) - 1 && !strncmp(o, word, n))
			return true;
		o += n;
	}
	return false;
}

/*
 * Whether the driver of @dev tells the argument information of a kernel
 * built without -cl-kernel-arg-info (the specification lets it refuse,
 * and PoCL does; others answer anyway). Asked once per platform, by
 * building a program of one empty kernel on @ctx; true when that cannot
 * be done (the twin's answers then stand, as before the question).
 */
static bool clpg_driver_tells_arg_info(cl_context ctx, cl_device_id dev)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct {
		cl_platform_id platform;
		bool tells;
	} known[8];
	static unsigned nknown;
	static const char *src = "kernel void xsched_arg_info_probe(global int *a) { }";
	cl_platform_id platform = NULL;
	cl_program prog = NULL;
	cl_kernel k = NULL;
	bool tells = true;
	size_t len = 0;
	cl_int e;

	if (cl_real.clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof(platform), &platform,
				    NULL) != CL_SUCCESS)
		return true;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nknown; i++)
		if (known[i].platform == platform) {
			tells = known[i].tells;
			goto out;
		}
	prog = cl_real.clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
	if (prog && cl_real.clBuildProgram(prog, 1, &dev, "", NULL, NULL) == CL_SUCCESS &&
	    (k = cl_real.clCreateKernel(prog, "xsched_arg_info_probe", &e)))
		tells = cl_real.clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, 0, NULL, &len) !=
			CL_KERNEL_ARG_INFO_NOT_AVAILABLE;
	if (k && nknown < sizeof(known) / sizeof(known[0])) {
		known[nknown].platform = platform;
		known[nknown++].tells = tells;
	}
out:
	pthread_mutex_unlock(&lock);
	if (k)
		cl_real.clReleaseKernel(k);
	if (prog)
		cl_real.clReleaseProgram(prog);
	return tells;
}

bool cl_twin_hides_arg_info(cl_program app)
{
	cl_context ctx = NULL;
	cl_device_id *devs = NULL;
	size_t size = 0;
	struct clpg *r;
	bool asked = true, hides = false;

	pthread_mutex_lock(&clpg_lock);
	r = clpg_twin(app);
	if (r && r->use_inst)
		asked = clpg_asks_arg_info(r->options);
	pthread_mutex_unlock(&clpg_lock);
	if (!asked &&
	    cl_real.clGetProgramInfo(app, CL_PROGRAM_CONTEXT, sizeof(ctx), &ctx, NULL) ==
		    CL_SUCCESS &&
	    cl_real.clGetProgramInfo(app, CL_PROGRAM_DEVICES, 0, NULL, &size) == CL_SUCCESS &&
	    size >= sizeof(*devs) && (devs = malloc(size)) &&
	    cl_real.clGetProgramInfo(app, CL_PROGRAM_DEVICES, size, devs, NULL) == CL_SUCCESS)
		hides = !clpg_driver_tells_arg_info(ctx, devs[0]);
	free(devs);
	return hides;
}

XS_CL_HOOK cl_program clCreateProgramWithSource(cl_context ctx, cl_uint count,
						const char **strings, const size_t *lengths,
						cl_int *err)
{
	struct clpg *r = NULL;
	cl_program p;
	size_t total = 0, at = 0;
	char *src = NULL;
	unsigned flags;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_CONTEXT;
		return NULL;
	}
	p = cl_real.clCreateProgramWithSource(ctx, count, strings, lengths, err);
	if (!p || cl_passthrough() || !cl_guard_enabled())
		return p;
	/* The driver accepted the strings: they are all there. */
	for (cl_uint i = 0; i < count; i++)
		total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
	if (!(src = malloc(total + 1)) || !(r = calloc(1, sizeof(*r))))
		goto out;
	for (cl_uint i = 0; i < count; i++) {
		size_t n = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);

		memcpy(src + at, strings[i], n);
		at += n;
	}
	src[at] = '\0';
	r->app = p;
	r->ctx = ctx;
	flags = clpg_flags(ctx);
	if (clg_rewrite(src, total, flags, &r->rw) < 0) {
		r->why = "the shim ran out of memory rewriting it";
	} else if (!r->rw.src) {
		r->why = r->rw.reason;
	} else {
		const char *s = r->rw.src;
		size_t guarded = 0;
		cl_int e;

		r->inst = cl_real.clCreateProgramWithSource(ctx, 1, &s, &r->rw.len, &e);
		if (!r->inst)
			r->why = "the driver refused the rewritten source";
		for (size_t i = 0; xlog_on(XLOG_DEBUG) && i < r->rw.n; i++)
			guarded += !r->rw.k[i].reason;
		xlog(XLOG_DEBUG, "OpenCL program %p: the guardian in %zu of %zu kernels, work-groups "
		     "deciding by %s", (void *)p, guarded, r->rw.n,
		     flags & CLG_SERIAL_GROUPS ? "a plain store (CPU devices)" : "compare-and-swap");
	}
	pthread_mutex_lock(&clpg_lock);
	r->next = clpg_head;
	clpg_head = r;
	pthread_mutex_unlock(&clpg_lock);
	r = NULL;
out:
	free(src);
	free(r);
	return p;
}

/* Remembers the options and devices of a build of @r (lock held). */
static void clpg_note(struct clpg *r, const char *opts, cl_uint ndev, const cl_device_id *devs)
{
	char *o = strdup(opts ? opts : "");
	cl_device_id *d = ndev ? calloc(ndev, sizeof(*d)) : NULL;

	free(r->options);
	free(r->devs);
	r->options = o;
	r->devs = d;
	r->ndev = d ? ndev : 0;
	if (d)
		memcpy(d, devs, ndev * sizeof(*d));
}

/* @opts with the argument-info option appended (malloc), or NULL. */
static char *clpg_inst_options(const char *opts)
{
	size_t n = opts ? strlen(opts) : 0;
	char *o = malloc(n + sizeof(CLPG_ARG_INFO));

	if (!o)
		return NULL;
	memcpy(o, opts ? opts : "", n);
	memcpy(o + n, CLPG_ARG_INFO, sizeof(CLPG_ARG_INFO));
	return o;
}

/*
 * Whether a build or compile call's device list and callback are as the
 * specification allows (a list with its length, user data only with a
 * callback). The shim reads the list; a call that is not goes to the
 * driver untouched, for its error.
 */
static bool clpg_call_valid(cl_uint ndev, const cl_device_id *devs, bool notify, void *data)
{
	return !ndev == !devs && (notify || !data);
}

/*
 * A build or compile of @p begins: its record (NULL when passed through or
 * not from source), and in *@inst the instrumented twin to build first
 * (NULL: build the original only, and *@why says why when there is a twin).
 * Once the application's own build is the current one (the twin's had
 * failed), later builds stay with it: kernels made from it are attached to
 * it, and only its own build tells the application so.
 */
static struct clpg *clpg_build_start(cl_program p, const char *opts, cl_program *inst,
				     const char **why)
{
	struct clpg *r;

	*inst = NULL;
	*why = NULL;
	pthread_mutex_lock(&clpg_lock);
	r = cl_passthrough() ? NULL : clpg_twin(p);
	if (r && clg_options_conflict(opts))
		*why = "the build options define a name the guardian uses";
	else if (r && !(r->app_built && !r->use_inst))
		*inst = r->inst;
	pthread_mutex_unlock(&clpg_lock);
	return r;
}

/*
 * A build or compile of @r's program ended: its options and devices, where
 * kernels now come from, and why not from the twin (@why, NULL: unchanged).
 */
static void clpg_build_end(struct clpg *r, const char *opts, cl_uint ndev,
			   const cl_device_id *devs, bool use_inst, bool compiled, bool app_built,
			   const char *why)
{
	pthread_mutex_lock(&clpg_lock);
	clpg_note(r, opts, ndev, devs);
	r->use_inst = use_inst;
	r->compiled = compiled;
	r->app_built = app_built;
	if (why)
		r->why = why;
	pthread_mutex_unlock(&clpg_lock);
}

XS_CL_HOOK cl_int clBuildProgram(cl_program p, cl_uint ndev, const cl_device_id *devs,
				 const char *opts,
				 void(CL_CALLBACK *notify)(cl_program, void *), void *data)
{
	struct clpg *r = NULL;
	cl_program inst = NULL;
	const char *why = NULL;
	char *o = NULL;
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_PROGRAM;
	if (clpg_call_valid(ndev, devs, notify != NULL, data))
		r = clpg_build_start(p, opts, &inst, &why);
	if (!inst || !(o = clpg_inst_options(opts)))
		goto original;
	/* Synchronous (no callback): then the application's, with its handle. */
	rc = cl_real.clBuildProgram(inst, ndev, devs, o, NULL, NULL);
	free(o);
	if (rc == CL_SUCCESS) {
		clpg_build_end(r, opts, ndev, devs, true, false, false, NULL);
		if (notify)
			notify(p, data);
		return CL_SUCCESS;
	}
	/* The application holds a kernel of its program (the twin's). */
	if (rc == CL_INVALID_OPERATION && cl_kernel_app_holds(inst))
		return rc;
	why = "the rewritten source did not build";
original:
	rc = cl_real.clBuildProgram(p, ndev, devs, opts, notify, data);
	if (r)
		clpg_build_end(r, opts, ndev, devs, false, false, rc == CL_SUCCESS, why);
	return rc;
}

/* Why programs compiled apart and linked carry no guardian. */
static const char clpg_why_linked[] =
	"compiled apart and linked (the guardian cannot see calls across objects)";

/*
 * A compile is for a link with other objects or libraries, where a kernel
 * of one may be called from another: the rewriter, which decides per
 * source whether a kernel is called, cannot see across them, and a link
 * of instrumented objects may fail (an undefined symbol) or hand out
 * kernels whose hidden arguments the shim does not know. So compiled
 * programs, and what is linked from them, stay the application's own
 * (level 1, with this reason).
 */
XS_CL_HOOK cl_int clCompileProgram(cl_program p, cl_uint ndev, const cl_device_id *devs,
				   const char *opts, cl_uint nhdr, const cl_program *hdrs,
				   const char **hdr_names,
				   void(CL_CALLBACK *notify)(cl_program, void *), void *data)
{
	struct clpg *r = NULL;
	bool holds = false;
	cl_int rc;

	if (cl_load() < 0)
		return CL_INVALID_PROGRAM;
	if (clpg_call_valid(ndev, devs, notify != NULL, data) && !cl_passthrough()) {
		pthread_mutex_lock(&clpg_lock);
		if ((r = clpg_twin(p)) && r->use_inst)
			holds = true;
		pthread_mutex_unlock(&clpg_lock);
	}
	/* The application holds a kernel of its program (the twin's). */
	if (holds && cl_kernel_app_holds(r->inst))
		return CL_INVALID_OPERATION;
	rc = cl_real.clCompileProgram(p, ndev, devs, opts, nhdr, hdrs, hdr_names, notify, data);
	if (r)
		clpg_build_end(r, opts, ndev, devs, false, true, rc == CL_SUCCESS, clpg_why_linked);
	return rc;
}

XS_CL_HOOK cl_program clLinkProgram(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
				    const char *opts, cl_uint n, const cl_program *inputs,
				    void(CL_CALLBACK *notify)(cl_program, void *), void *data,
				    cl_int *err)
{
	struct clpg *r;
	cl_program out;

	if (cl_load() < 0) {
		if (err)
			*err = CL_INVALID_CONTEXT;
		return NULL;
	}
	out = cl_real.clLinkProgram(ctx, ndev, devs, opts, n, inputs, notify, data, err);
	/* A record only for the reason its kernels give (cl_twin_why()). */
	if (out && !cl_passthrough() && cl_guard_enabled() && (r = calloc(1, sizeof(*r)))) {
		r->app = out;
		r->why = clpg_why_linked;
		pthread_mutex_lock(&clpg_lock);
		r->next = clpg_head;
		clpg_head = r;
		pthread_mutex_unlock(&clpg_lock);
	}
	return out;
}

/*
 * Builds (or compiles) the application's own program of @r as the last
 * build was asked, for the answers only it can give (binaries). Returns
 * the driver's result.
 */
static cl_int clpg_build_app(cl_program p)
{
	struct clpg *r;
	cl_device_id *devs = NULL;
	cl_uint ndev = 0;
	char *opts = NULL;
	bool compiled;
	cl_int rc;

	pthread_mutex_lock(&clpg_lock);
	r = clpg_twin(p);
	if (!r || !r->use_inst || r->app_built) {
		pthread_mutex_unlock(&clpg_lock);
		return CL_SUCCESS;
	}
	compiled = r->compiled;
	opts = r->options ? strdup(r->options) : NULL;
	if (r->ndev && (devs = calloc(r->ndev, sizeof(*devs)))) {
		memcpy(devs, r->devs, r->ndev * sizeof(*devs));
		ndev = r->ndev;
	}
	pthread_mutex_unlock(&clpg_lock);
	rc = compiled ? CL_SUCCESS : cl_real.clBuildProgram(p, ndev, devs, opts, NULL, NULL);
	pthread_mutex_lock(&clpg_lock);
	if ((r = clpg_twin(p)) && rc == CL_SUCCESS)
		r->app_built = true;
	pthread_mutex_unlock(&clpg_lock);
	free(opts);
	free(devs);
	return rc;
}

XS_CL_HOOK cl_int clGetProgramInfo(cl_program p, cl_program_info param, size_t size,
				   void *value, size_t *ret)
{
	cl_program from = p;

	if (cl_load() < 0)
		return CL_INVALID_PROGRAM;
	if (cl_passthrough())
		return cl_real.clGetProgramInfo(p, param, size, value, ret);
	switch (param) {
	case CL_PROGRAM_NUM_KERNELS:
	case CL_PROGRAM_KERNEL_NAMES:
	case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
	case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
		from = cl_twin_kernels_of(p);
		break;
	case CL_PROGRAM_BINARY_SIZES:
	case CL_PROGRAM_BINARIES: {
		cl_int rc = clpg_build_app(p);

		if (rc != CL_SUCCESS)
			return rc == CL_OUT_OF_HOST_MEMORY ? rc : CL_INVALID_PROGRAM_EXECUTABLE;
		break;
	}
	default:
		break;
	}
	return cl_real.clGetProgramInfo(from, param, size, value, ret);
}

XS_CL_HOOK cl_int clGetProgramBuildInfo(cl_program p, cl_device_id dev,
					cl_program_build_info param, size_t size, void *value,
					size_t *ret)
{
	struct clpg *r;
	cl_program from;
	char *opts = NULL;
	cl_int rc = CL_SUCCESS;

	if (cl_load() < 0)
		return CL_INVALID_PROGRAM;
	if (cl_passthrough())
		return cl_real.clGetProgramBuildInfo(p, dev, param, size, value, ret);
	from = cl_twin_kernels_of(p);
	if (from == p || param != CL_PROGRAM_BUILD_OPTIONS)
		return cl_real.clGetProgramBuildInfo(from, dev, param, size, value, ret);
	/* The options as the application gave them, without the shim's. */
	rc = cl_real.clGetProgramBuildInfo(from, dev, param, 0, NULL, NULL);
	if (rc != CL_SUCCESS)
		return rc;
	pthread_mutex_lock(&clpg_lock);
	r = clpg_twin(p);
	opts = strdup(r && r->options ? r->options : "");
	pthread_mutex_unlock(&clpg_lock);
	if (!opts)
		return CL_OUT_OF_HOST_MEMORY;
	if (value && size < strlen(opts) + 1)
		rc = CL_INVALID_VALUE;
	else if (value)
		memcpy(value, opts, strlen(opts) + 1);
	if (rc == CL_SUCCESS && ret)
		*ret = strlen(opts) + 1;
	free(opts);
	return rc;
}

XS_CL_HOOK cl_int clReleaseProgram(cl_program p)
{
	struct clpg *r = NULL, **pp;
	cl_uint refs = 0;

	if (cl_load() < 0)
		return CL_INVALID_PROGRAM;
	/* The last reference: the record goes before the handle can be reused. */
	if (cl_real.clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof(refs), &refs, NULL) ==
		    CL_SUCCESS &&
	    refs == 1) {
		pthread_mutex_lock(&clpg_lock);
		for (pp = &clpg_head; *pp && (*pp)->app != p; pp = &(*pp)->next)
			;
		r = *pp;
		if (r)
			*pp = r->next;
		pthread_mutex_unlock(&clpg_lock);
	}
	if (r)
		clpg_free(r);
	return cl_real.clReleaseProgram(p);
}
