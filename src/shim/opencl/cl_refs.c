/*
 * Reference counts as the application reads them natively.
 *
 * The shim makes objects of its own in the application's contexts: the
 * guardian's control words, second queue and progress records (xal), the
 * user events that stand for buffered commands (cl_events.c), the
 * instrumented twins of programs (cl_program.c). Each may hold a
 * reference on its context that the application never took, so
 * CL_CONTEXT_REFERENCE_COUNT is answered without them: the driver's count
 * less what the shim's objects alive in that context hold. How much one
 * object of each kind holds is the driver's business (the specification
 * does not say), so it is learned once per platform, on a context of the
 * shim's own, by making one of each and reading the count.
 * (CL_QUEUE_REFERENCE_COUNT is cl_queues.c's: one reference of the shim.)
 */
#include "shim/opencl/cl_shim.h"
#include "shim/opencl/guard/cl_guard.h"

#include <pthread.h>
#include <string.h>

/* What one object of each kind holds on its context. */
struct clr_cost {
	cl_platform_id plat;
	cl_uint buffer, svm, queue, user_event, program;
};

#define CLR_PLATFORMS 8
static pthread_mutex_t clr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clr_cost clr_costs[CLR_PLATFORMS];
static unsigned clr_n;

static cl_uint clr_count(cl_context c)
{
	cl_uint n = 0;

	cl_real.clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof(n), &n, NULL);
	return n;
}

/* The count's growth while one object made by @make is alive (@make frees it). */
#define CLR_COST(c, make_expr, free_stmt)                                   \
	({                                                                  \
		cl_uint before_ = clr_count(c), cost_ = 0;                  \
		__auto_type obj_ = (make_expr);                             \
		if (obj_) {                                                 \
			cl_uint after_ = clr_count(c);                      \
			cost_ = after_ > before_ ? after_ - before_ : 0;    \
			free_stmt;                                          \
		}                                                           \
		cost_;                                                      \
	})

/* Learns the costs on a context of @dev's own (private: no other thread uses it). */
static void clr_learn(cl_device_id dev, struct clr_cost *out)
{
	static const char *src = "__kernel void xsched_refs_probe(void) {}";
	cl_int err = CL_SUCCESS;
	cl_context c = cl_real.clCreateContext(NULL, 1, &dev, NULL, NULL, &err);

	if (!c)
		return;
	out->buffer = CLR_COST(c, cl_real.clCreateBuffer(c, CL_MEM_READ_WRITE, 64, NULL, &err),
			       cl_real.clReleaseMemObject(obj_));
	if (cl_real.clSVMAlloc && cl_real.clSVMFree)
		out->svm = CLR_COST(c, cl_real.clSVMAlloc(c, CL_MEM_READ_WRITE, 64, 0),
				    cl_real.clSVMFree(c, obj_));
	out->queue = CLR_COST(c, cl_real.clCreateCommandQueue(c, dev, 0, &err),
			      cl_real.clReleaseCommandQueue(obj_));
	out->user_event = CLR_COST(c, cl_real.clCreateUserEvent(c, &err),
				   cl_real.clReleaseEvent(obj_));
	out->program = CLR_COST(c, cl_real.clCreateProgramWithSource(c, 1, &src, NULL, &err),
				cl_real.clReleaseProgram(obj_));
	cl_real.clReleaseContext(c);
}

/* The costs of the platform of @ctx's first device; NULL if unknown. */
static const struct clr_cost *clr_costs_of(cl_context ctx)
{
	struct clr_cost fresh = { 0 };
	cl_device_id dev;
	cl_platform_id plat;
	const struct clr_cost *found = NULL;

	/* Asked with room for one device, a context of several would answer
	 * CL_INVALID_VALUE. */
	dev = cl_context_first_device(ctx);
	if (!dev ||
	    cl_real.clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof(plat), &plat, NULL) !=
		    CL_SUCCESS)
		return NULL;
	pthread_mutex_lock(&clr_lock);
	for (unsigned i = 0; i < clr_n && !found; i++)
		if (clr_costs[i].plat == plat)
			found = &clr_costs[i];
	pthread_mutex_unlock(&clr_lock);
	if (found)
		return found;
	/* Once per platform, no lock held (the driver is called). */
	fresh.plat = plat;
	clr_learn(dev, &fresh);
	pthread_mutex_lock(&clr_lock);
	for (unsigned i = 0; i < clr_n && !found; i++)
		if (clr_costs[i].plat == plat)
			found = &clr_costs[i];
	if (!found && clr_n < CLR_PLATFORMS) {
		clr_costs[clr_n] = fresh;
		found = &clr_costs[clr_n++];
	}
	pthread_mutex_unlock(&clr_lock);
	return found;
}

/* The references the shim's own objects hold on @ctx now. */
static cl_uint clr_held(cl_context ctx)
{
	const struct clr_cost *cost = clr_costs_of(ctx);
	struct xal_cl_held held = { 0 };

	if (!cost)
		return 0;
	cl_q_held_in(ctx, &held);
	return held.buffers * cost->buffer + held.svm * cost->svm + held.queues * cost->queue +
	       cl_proxy_count_in(ctx) * cost->user_event +
	       cl_twin_count_in(ctx) * cost->program;
}

XS_CL_HOOK cl_int clGetContextInfo(cl_context ctx, cl_context_info param, size_t size,
				   void *value, size_t *ret)
{
	cl_int rc;
	cl_uint held;

	if (cl_load() < 0)
		return CL_INVALID_CONTEXT;
	rc = cl_real.clGetContextInfo(ctx, param, size, value, ret);
	if (rc != CL_SUCCESS || param != CL_CONTEXT_REFERENCE_COUNT || !value ||
	    size < sizeof(cl_uint) || cl_passthrough())
		return rc;
	held = clr_held(ctx);
	/* The application holds one at least, or it could not ask. */
	if (*(cl_uint *)value > held)
		*(cl_uint *)value -= held;
	else
		*(cl_uint *)value = 1;
	return rc;
}
