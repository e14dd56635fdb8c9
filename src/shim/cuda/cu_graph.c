/*
 * Graph slicing (see cu_graph.h): the records of executable graphs, the
 * analysis of their private graph, the slice plan and the launch command.
 *
 * Locks: a record's lock serialises its planning, launches and updates
 * and is held while its commands are submitted, so that commands of one
 * executable reach the queues in the order their launches were made; the
 * queue lock is taken inside it, never the reverse. What a command does
 * when the queue launches it (issue) and when it goes (fini) touches only
 * atomics of the record, because both run with the queue lock held or on
 * the queue's worker.
 */
#include "shim/cuda/cu_evict.h"
#include "shim/cuda/cu_graph_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct shim_map cg_table = SHIM_MAP_INIT;

/* XSCHED_CUDA_GRAPH_SLICE (cu_graph_internal.h): -1 off, 0 the budget, else ns. */
static int64_t cg_target_env = 0;
static pthread_once_t cg_env_once = PTHREAD_ONCE_INIT;

static void cg_env_read(void)
{
	static const struct {
		const char *unit;
		long long ns;
	} units[] = { { "", 1000 }, { "us", 1000 }, { "ns", 1 }, { "ms", 1000000 } };
	const char *v = getenv("XSCHED_CUDA_GRAPH_SLICE");
	char *end;
	long long n;

	if (!v || !*v)
		return;
	n = strtoll(v, &end, 10);
	if (end == v || n < 0 || n > 1000000000)
		return;
	if (!*end && n <= 1) {
		cg_target_env = n == 0 ? -1 : 0;
		return;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && n > 0)
			cg_target_env = n * units[i].ns;
}

int64_t cg_target_mode(void)
{
	pthread_once(&cg_env_once, cg_env_read);
	return cg_target_env;
}

/* ---- records ---- */

void cg_instantiated(CUgraphExec e, CUgraph g, unsigned long long flags)
{
	struct cg_exec *x, *old;

	if (!e || cu_load() < 0 || cu_passthrough())
		return;
	x = calloc(1, sizeof(*x));
	if (!x)
		return;
	x->exec = e;
	x->flags = flags;
	atomic_init(&x->refs, 1);
	pthread_mutex_init(&x->lock, NULL);
	cu_real.cuCtxGetCurrent(&x->ctx);
	x->state = CG_WHOLE;
	if (cg_target_mode() >= 0 && !(flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) &&
	    cu_real.cuGraphClone && cu_real.cuGraphClone(&x->priv, g) == CUDA_SUCCESS)
		x->state = CG_NEW;
	/* A record left by a destroy the shim did not see: its handle was reused. */
	old = (struct cg_exec *)shim_map_insert(&cg_table, &x->node, e);
	if (old) {
		atomic_store(&old->orphan, true);       /* not ours to destroy any more */
		cg_put(old);
	}
}

struct cg_exec *cg_get(CUgraphExec e)
{
	struct cg_exec *x;

	if (!e)
		return NULL;
	pthread_rwlock_rdlock(&cg_table.lock);
	x = (struct cg_exec *)shim_map_find_locked(&cg_table, e);
	if (x)
		atomic_fetch_add(&x->refs, 1);
	pthread_rwlock_unlock(&cg_table.lock);
	return x;
}

void cg_put(struct cg_exec *x)
{
	if (!x || atomic_fetch_sub(&x->refs, 1) != 1)
		return;
	cg_slices_drop(x);
	if (x->priv)
		cu_real.cuGraphDestroy(x->priv);
	if (x->done)
		cu_real.cuEventDestroy_v2(x->done);
	if (!atomic_load(&x->orphan))
		cu_real.cuGraphExecDestroy(x->exec);
	free(x->nodes);
	free(x->glued);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

bool cg_forget(CUgraphExec e)
{
	struct cg_exec *x;

	if (!e)
		return false;
	x = (struct cg_exec *)shim_map_remove(&cg_table, e);
	cg_put(x);
	return x != NULL;
}

/* ---- the launch command ---- */

struct cmd_graph {
	struct xal_cuda_cmd c;
	struct cg_exec *x;      /* NULL: an executable the shim has no record of */
	CUgraphExec g;          /* what to launch: the executable or a slice */
	struct cg_slice *slice; /* the slice, if one */
	bool upload;
	bool launch;            /* counted in x->submitted */
	bool issued;
	bool wait_done;         /* first wait for x->done (previous launch, other stream) */
	bool record_done;       /* then record x->done */
	uint64_t need;          /* issue once x->issued reached this */
	void *prev_q;           /* meanwhile it waits for this queue (a token) */
};

static CUresult graph_call(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	struct cmd_graph *k = (struct cmd_graph *)c;
	CUresult rc = CUDA_SUCCESS;

	if (k->wait_done)
		rc = cu->cuStreamWaitEvent(c->stream, k->x->done, 0);
	if (rc == CUDA_SUCCESS)
		rc = k->upload ? cu->cuGraphUpload(k->g, c->stream) :
				 cu->cuGraphLaunch(k->g, c->stream);
	if (rc == CUDA_SUCCESS && k->record_done)
		rc = cu->cuEventRecord(k->x->done, c->stream);
	if (k->launch) {
		k->issued = true;
		if (k->slice)
			atomic_fetch_sub(&k->slice->uses, 1);
		atomic_fetch_add(&k->x->issued, 1);
	}
	return rc;
}

static void graph_fini(struct xal_cuda_cmd *c)
{
	struct cmd_graph *k = (struct cmd_graph *)c;

	if (k->launch && !k->issued) {
		if (k->slice)
			atomic_fetch_sub(&k->slice->uses, 1);
		atomic_fetch_add(&k->x->issued, 1);
	}
	cg_put(k->x);
}

/* Launches of one executable reach the driver in the order they were made. */
static void *graph_blocked_on(struct xal_cuda_cmd *c)
{
	struct cmd_graph *k = (struct cmd_graph *)c;

	if (!k->launch || atomic_load(&k->x->issued) >= k->need)
		return NULL;
	return k->prev_q;
}

/* A graph's kernels and copies touch device memory: the memory gate
 * (cu_evict.h) around its launch. */
static CUresult graph_issue(struct xal_cuda_cmd *c, const struct cu_fns *cu)
{
	CUresult rc;

	cu_evict_enter();
	rc = graph_call(c, cu);
	cu_evict_leave();
	return rc;
}

static const struct xal_cuda_cmd_ops graph_ops = {
	.issue = graph_issue,
	.fini = graph_fini,
	.blocked_on = graph_blocked_on,
};

/* A command launching @g; takes over the reference on @x (NULL accepted). */
static struct cmd_graph *graph_cmd(struct cs_stream *s, struct cg_exec *x, CUgraphExec g,
				   uint32_t kind, uint64_t key)
{
	struct cmd_graph *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	xal_cuda_cmd_init(&k->c, &graph_ops, s->cuctx, s->real, kind, key);
	k->x = x;
	k->g = g;
	return k;
}

/* Submits @x's launch on @s as slices or whole. Lock held. */
static CUresult cg_launch_locked(struct cs_stream *s, struct cg_exec *x)
{
	struct cmd_graph **cmds;
	size_t n = 1;
	bool record;
	int rc;

	if (cg_plan(x, s->q->xq) == 0 && x->nplan > 1)
		n = x->nplan;
	cmds = calloc(n, sizeof(*cmds));
	if (!cmds)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < n; i++) {
		uint32_t kind = XAL_CMD_KERNEL;
		uint64_t key = (uint64_t)(uintptr_t)x->exec;
		CUgraphExec g = x->exec;

		if (n > 1) {
			cg_slice_key(x, x->plan[i], &kind, &key);
			g = x->plan[i]->exec;
		}
		atomic_fetch_add(&x->refs, 1);
		cmds[i] = graph_cmd(s, x, g, kind, key);
		if (!cmds[i]) {
			cg_put(x);
			while (i)
				xal_cmd_destroy(&cmds[--i]->c.base);
			free(cmds);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		cmds[i]->launch = true;
		if (n > 1) {
			cmds[i]->slice = x->plan[i];
			atomic_fetch_add(&x->plan[i]->uses, 1);
		}
	}
	record = x->state != CG_WHOLE;
	if (record && !x->done &&
	    cu_real.cuEventCreate(&x->done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
		x->done = NULL;
		record = false;
	}
	cmds[0]->need = x->submitted;
	cmds[0]->prev_q = x->last_xq;
	cmds[0]->wait_done = x->last_recorded && x->last_stream != s->real;
	cmds[n - 1]->record_done = record;
	x->submitted += n;
	x->last_xq = s->q->xq;
	x->last_stream = s->real;
	x->last_recorded = record;
	atomic_store(&x->last_split, (int)n);
	rc = xq_submit_n(s->q->xq, (struct xal_cmd *const *)cmds, n, NULL);
	free(cmds);
	return rc == 0 ? CUDA_SUCCESS : rc == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY :
							CUDA_ERROR_INVALID_VALUE;
}

CUresult cg_launch(struct cs_stream *s, CUgraphExec e, bool upload)
{
	struct cg_exec *x = cg_get(e);
	struct cmd_graph *k;
	CUresult rc;

	if (x && !upload) {
		pthread_mutex_lock(&x->lock);
		rc = cg_launch_locked(s, x);
		pthread_mutex_unlock(&x->lock);
		cg_put(x);
		return rc;
	}
	k = graph_cmd(s, x, e, XAL_CMD_KERNEL, (uint64_t)(uintptr_t)e);
	if (!k) {
		cg_put(x);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	k->upload = upload;
	return cs_submit(s, &k->c, NULL);
}

void cg_quiesce_lock(struct cg_exec *x)
{
	pthread_mutex_lock(&x->lock);
	if (atomic_load(&x->issued) < x->submitted && x->last_xq)
		xq_flush(x->last_xq);
}

void cg_unlock(struct cg_exec *x)
{
	pthread_mutex_unlock(&x->lock);
}
