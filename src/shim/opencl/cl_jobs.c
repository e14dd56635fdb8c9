/*
 * Work that may call the application, run where it cannot deadlock (see
 * cl_shim.h: cl_jobs_run()).
 *
 * Binding a proxy may run application callbacks (a driver runs them inside
 * clSetEventCallback or clSetUserEventStatus). Where that happens under an
 * XQueue lock (a launch), the work goes to one helper thread, in order;
 * where it happens inside a driver's callback that is telling the shim a
 * guarded launch completed, it waits on the same thread until the shim is
 * out of that (an application callback asking about a pending proxy there
 * would wait for itself, cl_cmd_wait_completing()); elsewhere it runs at
 * once.
 */
#include "shim/opencl/cl_shim.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct clj_job {
	struct clj_job *next;
	void (*fn)(void *);
	void *arg;
};

/* Jobs in order (the helper thread's; a thread's own, CL_JOBS_LATER). */
struct clj_jobs {
	struct clj_job *head, **tail;   /* tail NULL: &head */
};

static struct clj_job *clj_job_new(void (*fn)(void *), void *arg)
{
	struct clj_job *j = malloc(sizeof(*j));

	if (j) {
		j->fn = fn;
		j->arg = arg;
	}
	return j;
}

static void clj_jobs_push(struct clj_jobs *l, struct clj_job *j)
{
	j->next = NULL;
	*(l->tail ? l->tail : &l->head) = j;
	l->tail = &j->next;
}

static struct clj_job *clj_jobs_pop(struct clj_jobs *l)
{
	struct clj_job *j = l->head;

	if (j && !(l->head = j->next))
		l->tail = NULL;
	return j;
}

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cond = PTHREAD_COND_INITIALIZER;
static struct clj_jobs jobs;
static bool job_thread;

static void *clj_job_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&job_lock);
	for (;;) {
		struct clj_job *j;

		while (!(j = clj_jobs_pop(&jobs)))
			pthread_cond_wait(&job_cond, &job_lock);
		pthread_mutex_unlock(&job_lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&job_lock);
	}
	return NULL;
}

/* Runs @fn(@arg) on the helper thread; on the caller's if none can start. */
static void clj_defer(void (*fn)(void *), void *arg)
{
	struct clj_job *j = clj_job_new(fn, arg);
	pthread_t t;

	if (!j) {
		fn(arg);
		return;
	}
	pthread_mutex_lock(&job_lock);
	if (!job_thread) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		job_thread = pthread_create(&t, &attr, clj_job_main, NULL) == 0;
		pthread_attr_destroy(&attr);
		if (!job_thread) {
			pthread_mutex_unlock(&job_lock);
			free(j);
			fn(arg);
			return;
		}
	}
	clj_jobs_push(&jobs, j);
	pthread_cond_signal(&job_cond);
	pthread_mutex_unlock(&job_lock);
}

/* What cl_jobs_run() does on this thread now (cl_jobs_enter()). */
static _Thread_local enum cl_jobs_how clj_how;
/* The jobs CL_JOBS_LATER keeps for cl_jobs_run_local(), in order. */
static _Thread_local struct clj_jobs clj_local;

struct cl_jobs_mode cl_jobs_enter(enum cl_jobs_how how)
{
	struct cl_jobs_mode prev = { clj_how };

	clj_how = how;
	return prev;
}

void cl_jobs_leave(struct cl_jobs_mode prev)
{
	clj_how = prev.how;
}

void cl_jobs_run(void (*fn)(void *), void *arg)
{
	struct clj_job *j;

	if (clj_how == CL_JOBS_LATER && (j = clj_job_new(fn, arg)))
		clj_jobs_push(&clj_local, j);
	else if (clj_how != CL_JOBS_NOW)
		clj_defer(fn, arg);
	else
		fn(arg);
}

void cl_jobs_run_local(void)
{
	struct clj_job *j;

	while ((j = clj_jobs_pop(&clj_local))) {
		j->fn(j->arg);
		free(j);
	}
}
