/*
 * Handle -> record maps (see shim_map.h): chained buckets, newest first,
 * so that a lookup of a handle just created is short.
 */
#include "shim/common/shim_map.h"

#include <stddef.h>

/* The link that points at @key's record, or at the end of its chain. */
static struct shim_map_node **shim_map_slot(struct shim_map *m, const void *key)
{
	struct shim_map_node **pp;

	for (pp = &m->b[shim_map_hash(key)]; *pp; pp = &(*pp)->next)
		if ((*pp)->key == key)
			break;
	return pp;
}

static void shim_map_push(struct shim_map *m, struct shim_map_node *n, const void *key)
{
	unsigned b = shim_map_hash(key);

	n->key = key;
	n->next = m->b[b];
	m->b[b] = n;
}

struct shim_map_node *shim_map_find(struct shim_map *m, const void *key)
{
	struct shim_map_node *n;

	pthread_rwlock_rdlock(&m->lock);
	n = shim_map_find_locked(m, key);
	pthread_rwlock_unlock(&m->lock);
	return n;
}

struct shim_map_node *shim_map_insert(struct shim_map *m, struct shim_map_node *n,
				      const void *key)
{
	struct shim_map_node **pp, *old;

	pthread_rwlock_wrlock(&m->lock);
	pp = shim_map_slot(m, key);
	old = *pp;
	if (old)
		*pp = old->next;
	shim_map_push(m, n, key);
	pthread_rwlock_unlock(&m->lock);
	return old;
}

struct shim_map_node *shim_map_add(struct shim_map *m, struct shim_map_node *n,
				   const void *key)
{
	struct shim_map_node *old;

	pthread_rwlock_wrlock(&m->lock);
	old = shim_map_find_locked(m, key);
	if (!old)
		shim_map_push(m, n, key);
	pthread_rwlock_unlock(&m->lock);
	return old;
}

struct shim_map_node *shim_map_remove(struct shim_map *m, const void *key)
{
	struct shim_map_node **pp, *n;

	pthread_rwlock_wrlock(&m->lock);
	pp = shim_map_slot(m, key);
	n = *pp;
	if (n)
		*pp = n->next;
	pthread_rwlock_unlock(&m->lock);
	return n;
}

void shim_map_each_locked(const struct shim_map *m,
			  bool (*fn)(struct shim_map_node *n, void *arg), void *arg)
{
	for (unsigned i = 0; i < SHIM_MAP_BUCKETS; i++)
		for (struct shim_map_node *n = m->b[i]; n; n = n->next)
			if (!fn(n, arg))
				return;
}

void shim_map_each(struct shim_map *m, bool (*fn)(struct shim_map_node *n, void *arg),
		   void *arg)
{
	pthread_rwlock_rdlock(&m->lock);
	shim_map_each_locked(m, fn, arg);
	pthread_rwlock_unlock(&m->lock);
}
