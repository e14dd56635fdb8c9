/*
 * Kernel state, snapshots and private copies (see ze_kernels.h), and the
 * hooks that learn the state: kernel creation and destruction, the
 * setters, module destruction.
 *
 * Every kernel record is on a global list as long as it lives (also after
 * the application destroyed the kernel, while buffered commands still use
 * private copies of it), so that a module's destruction finds them all.
 */
#include "shim/ze/ze_kernels.h"
#include "shim/common/shim_kargs.h"
#include "shim/common/shim_map.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ZK_SPARE 4              /* idle private copies kept per kernel */

/* The settings of a kernel besides its arguments (set: the application set it). */
struct zk_state {
	uint32_t group[3];
	bool group_set;
	ze_kernel_indirect_access_flags_t indirect;
	bool indirect_set;
	ze_cache_config_flags_t cache;
	bool cache_set;
	uint32_t offset[3];
	bool offset_set;
};

struct zk_kernel {
	struct shim_map_node node;            /* key: the application's kernel */
	struct zk_kernel *prev, *next;  /* zk_all */
	_Atomic int refs;               /* the table's, and each snapshot's */
	ze_module_handle_t module;
	ze_kernel_flags_t flags;
	char *name;
	pthread_mutex_t mu;             /* everything below */
	pthread_cond_t returned;        /* a private copy came back */
	struct shim_kargs args;
	struct zk_state st;
	ze_kernel_handle_t spare[ZK_SPARE];
	uint32_t nspare;
	uint32_t lent;                  /* private copies held by snapshots */
	bool dead;                      /* the application destroyed the kernel */
	bool module_gone;
};

struct zk_snap {
	struct zk_kernel *k;            /* a reference */
	ze_kernel_handle_t app;
	ze_kernel_handle_t priv;        /* the private copy, once bound */
	struct zk_state st;
	struct shim_kargs_snap *args;
};

static struct shim_map zk_table = SHIM_MAP_INIT;
static pthread_mutex_t zk_all_mu = PTHREAD_MUTEX_INITIALIZER;
static struct zk_kernel *zk_all;

static void zk_unref(struct zk_kernel *k)
{
	if (atomic_fetch_sub(&k->refs, 1) != 1)
		return;
	pthread_mutex_lock(&zk_all_mu);
	if (k->prev)
		k->prev->next = k->next;
	else
		zk_all = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&zk_all_mu);
	shim_kargs_fini(&k->args);
	free(k->name);
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->returned);
	free(k);
}

/* Destroys the idle private copies of @k. mu held. */
static void zk_drop_spares(struct zk_kernel *k)
{
	while (k->nspare)
		ze_real.zeKernelDestroy(k->spare[--k->nspare]);
}

void zk_created(ze_module_handle_t m, const ze_kernel_desc_t *desc, ze_kernel_handle_t h)
{
	ze_kernel_properties_t props = { .stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES };
	struct zk_kernel *k = calloc(1, sizeof(*k)), *old;

	if (!k)
		return;
	k->name = strdup(desc->pKernelName);
	if (!k->name) {
		free(k);
		return;
	}
	k->module = m;
	k->flags = desc->flags;
	atomic_store(&k->refs, 1);
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->returned, NULL);
	if (ze_real.zeKernelGetProperties &&
	    ze_real.zeKernelGetProperties(h, &props) == ZE_RESULT_SUCCESS)
		shim_kargs_init(&k->args, props.numKernelArgs, true);
	else
		shim_kargs_init(&k->args, 0, false);
	pthread_mutex_lock(&zk_all_mu);
	k->next = zk_all;
	if (zk_all)
		zk_all->prev = k;
	zk_all = k;
	pthread_mutex_unlock(&zk_all_mu);
	old = (struct zk_kernel *)shim_map_insert(&zk_table, &k->node, h);
	if (old)
		zk_unref(old);
}

void zk_destroyed(ze_kernel_handle_t h)
{
	struct zk_kernel *k = (struct zk_kernel *)shim_map_remove(&zk_table, h);

	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	k->dead = true;
	zk_drop_spares(k);
	pthread_mutex_unlock(&k->mu);
	zk_unref(k);
}

void zk_module_destroyed(ze_module_handle_t m)
{
	struct zk_kernel **v = NULL, *k;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&zk_all_mu);
	for (k = zk_all; k; k = k->next) {
		if (k->module != m)
			continue;
		if (n == cap) {
			struct zk_kernel **grown = realloc(v, (cap ? 2 * cap : 8) * sizeof(*v));

			if (!grown)
				break;
			v = grown;
			cap = cap ? 2 * cap : 8;
		}
		atomic_fetch_add(&k->refs, 1);
		v[n++] = k;
	}
	pthread_mutex_unlock(&zk_all_mu);
	for (size_t i = 0; i < n; i++) {
		k = v[i];
		pthread_mutex_lock(&k->mu);
		k->module_gone = true;
		/* Copies in use come back when their commands complete. */
		while (k->lent)
			pthread_cond_wait(&k->returned, &k->mu);
		zk_drop_spares(k);
		pthread_mutex_unlock(&k->mu);
		zk_unref(k);
	}
	free(v);
}

/* The record of @h with a reference, or NULL. */
static struct zk_kernel *zk_get(ze_kernel_handle_t h)
{
	struct zk_kernel *k;

	pthread_rwlock_rdlock(&zk_table.lock);
	k = (struct zk_kernel *)shim_map_find_locked(&zk_table, h);
	if (k)
		atomic_fetch_add(&k->refs, 1);
	pthread_rwlock_unlock(&zk_table.lock);
	return k;
}

struct zk_snap *zk_snapshot(ze_kernel_handle_t h)
{
	struct zk_kernel *k = zk_get(h);
	struct zk_snap *s;
	int err;

	if (!k)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		zk_unref(k);
		return NULL;
	}
	/* What cannot be reproduced (an argument missing or not recorded)
	 * sends the launch to the driver directly. */
	pthread_mutex_lock(&k->mu);
	s->args = shim_kargs_snapshot(&k->args, &err);
	s->st = k->st;
	pthread_mutex_unlock(&k->mu);
	if (!s->args) {
		free(s);
		zk_unref(k);
		return NULL;
	}
	s->app = h;
	s->k = k;
	return s;
}

/* Sets one argument of a private copy (shim_kargs_apply()'s callback). */
static int zk_apply_arg(void *ctx, uint32_t idx, size_t size, const void *value, uint8_t tag)
{
	(void)tag;
	return (int)ze_real.zeKernelSetArgumentValue((ze_kernel_handle_t)ctx, idx, size, value);
}

/* Applies @s to its private copy; the first failure's result. */
static ze_result_t zk_apply(struct zk_snap *s)
{
	ze_kernel_handle_t p = s->priv;
	ze_result_t rc = (ze_result_t)shim_kargs_apply(s->args, zk_apply_arg, p);

	if (rc == ZE_RESULT_SUCCESS && s->st.group_set)
		rc = ze_real.zeKernelSetGroupSize(p, s->st.group[0], s->st.group[1],
						  s->st.group[2]);
	if (rc == ZE_RESULT_SUCCESS && s->st.indirect_set)
		rc = ze_real.zeKernelSetIndirectAccess(p, s->st.indirect);
	if (rc == ZE_RESULT_SUCCESS && s->st.cache_set)
		rc = ze_real.zeKernelSetCacheConfig(p, s->st.cache);
	if (rc == ZE_RESULT_SUCCESS && s->st.offset_set)
		rc = ZE_CALL(zeKernelSetGlobalOffsetExp, p, s->st.offset[0], s->st.offset[1],
			     s->st.offset[2]);
	return rc;
}

ze_kernel_handle_t zk_bind(struct zk_snap *s, bool direct, ze_result_t *err)
{
	ze_kernel_desc_t desc = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC };
	struct zk_kernel *k = s->k;
	ze_kernel_handle_t p = NULL;

	if (direct)
		return s->app;
	pthread_mutex_lock(&k->mu);
	if (k->module_gone) {
		pthread_mutex_unlock(&k->mu);
		*err = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		return NULL;
	}
	/* Counted before it exists: a module destroy waits for it. */
	k->lent++;
	if (k->nspare)
		p = k->spare[--k->nspare];
	pthread_mutex_unlock(&k->mu);
	if (!p) {
		desc.flags = k->flags;
		desc.pKernelName = k->name;
		*err = ze_real.zeKernelCreate(k->module, &desc, &p);
		if (*err != ZE_RESULT_SUCCESS) {
			pthread_mutex_lock(&k->mu);
			if (--k->lent == 0)
				pthread_cond_broadcast(&k->returned);
			pthread_mutex_unlock(&k->mu);
			return NULL;
		}
	}
	s->priv = p;
	*err = zk_apply(s);
	return *err == ZE_RESULT_SUCCESS ? p : NULL;
}

void zk_snap_free(struct zk_snap *s)
{
	struct zk_kernel *k;

	if (!s)
		return;
	k = s->k;
	if (s->priv) {
		pthread_mutex_lock(&k->mu);
		if (k->dead || k->module_gone || k->nspare == ZK_SPARE)
			ze_real.zeKernelDestroy(s->priv);
		else
			k->spare[k->nspare++] = s->priv;
		if (--k->lent == 0)
			pthread_cond_broadcast(&k->returned);
		pthread_mutex_unlock(&k->mu);
	}
	zk_unref(k);
	free(s->args);
	free(s);
}

/* --- hooks ------------------------------------------------------------------- */

XS_ZE_HOOK ze_result_t zeKernelCreate(ze_module_handle_t m, const ze_kernel_desc_t *desc,
				      ze_kernel_handle_t *out)
{
	ze_result_t rc = ZE_CALL(zeKernelCreate, m, desc, out);

	if (rc == ZE_RESULT_SUCCESS && desc && desc->pKernelName && ze_scheduling())
		zk_created(m, desc, *out);
	return rc;
}

XS_ZE_HOOK ze_result_t zeKernelDestroy(ze_kernel_handle_t h)
{
	if (ze_scheduling())
		zk_destroyed(h);
	return ZE_CALL(zeKernelDestroy, h);
}

XS_ZE_HOOK ze_result_t zeModuleDestroy(ze_module_handle_t m)
{
	if (ze_scheduling())
		zk_module_destroyed(m);
	return ZE_CALL(zeModuleDestroy, m);
}

/* The settings the shim records besides arguments. */
enum zk_setting { ZK_GROUP, ZK_INDIRECT, ZK_CACHE, ZK_OFFSET };

/* After the driver accepted a setting of @h (@rc), records it. */
static ze_result_t zk_note(ze_kernel_handle_t h, ze_result_t rc, enum zk_setting what,
			   uint32_t x, uint32_t y, uint32_t z)
{
	struct zk_kernel *k;

	if (rc != ZE_RESULT_SUCCESS || !ze_scheduling() || !(k = zk_get(h)))
		return rc;
	pthread_mutex_lock(&k->mu);
	switch (what) {
	case ZK_GROUP:
		k->st.group[0] = x;
		k->st.group[1] = y;
		k->st.group[2] = z;
		k->st.group_set = true;
		break;
	case ZK_INDIRECT:
		k->st.indirect = x;
		k->st.indirect_set = true;
		break;
	case ZK_CACHE:
		k->st.cache = x;
		k->st.cache_set = true;
		break;
	case ZK_OFFSET:
		k->st.offset[0] = x;
		k->st.offset[1] = y;
		k->st.offset[2] = z;
		k->st.offset_set = true;
		break;
	}
	pthread_mutex_unlock(&k->mu);
	zk_unref(k);
	return rc;
}

XS_ZE_HOOK ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t h, uint32_t idx,
						size_t size, const void *value)
{
	ze_result_t rc = ZE_CALL(zeKernelSetArgumentValue, h, idx, size, value);
	struct zk_kernel *k;

	if (rc == ZE_RESULT_SUCCESS && ze_scheduling() && (k = zk_get(h))) {
		pthread_mutex_lock(&k->mu);
		/* A value not recorded fails later snapshots: those launches
		 * then go to the driver directly. */
		(void)shim_kargs_set(&k->args, idx, size, value, 0);
		pthread_mutex_unlock(&k->mu);
		zk_unref(k);
	}
	return rc;
}

XS_ZE_HOOK ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t h, uint32_t x, uint32_t y,
					    uint32_t z)
{
	return zk_note(h, ZE_CALL(zeKernelSetGroupSize, h, x, y, z), ZK_GROUP, x, y, z);
}

XS_ZE_HOOK ze_result_t zeKernelSetIndirectAccess(ze_kernel_handle_t h,
						 ze_kernel_indirect_access_flags_t flags)
{
	return zk_note(h, ZE_CALL(zeKernelSetIndirectAccess, h, flags), ZK_INDIRECT, flags, 0, 0);
}

XS_ZE_HOOK ze_result_t zeKernelSetCacheConfig(ze_kernel_handle_t h, ze_cache_config_flags_t flags)
{
	return zk_note(h, ZE_CALL(zeKernelSetCacheConfig, h, flags), ZK_CACHE, flags, 0, 0);
}

XS_ZE_HOOK ze_result_t zeKernelSetGlobalOffsetExp(ze_kernel_handle_t h, uint32_t x, uint32_t y,
						  uint32_t z)
{
	return zk_note(h, ZE_CALL(zeKernelSetGlobalOffsetExp, h, x, y, z), ZK_OFFSET, x, y, z);
}
