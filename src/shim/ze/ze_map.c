/*
 * Handle -> record maps (see ze_map.h): chained buckets, the handle's
 * address bits hashed.
 */
#include "shim/ze/ze_map.h"

#include <stddef.h>

static unsigned zm_hash(const void *key)
{
	uintptr_t x = (uintptr_t)key;

	return (unsigned)((x >> 4) ^ (x >> 12) ^ (x >> 20)) % ZM_BUCKETS;
}

static struct zm_node **zm_slot(struct zm_map *m, const void *key)
{
	struct zm_node **pp;

	for (pp = &m->b[zm_hash(key)]; *pp; pp = &(*pp)->next)
		if ((*pp)->key == key)
			break;
	return pp;
}

struct zm_node *zm_find_locked(struct zm_map *m, const void *key)
{
	return *zm_slot(m, key);
}

struct zm_node *zm_find(struct zm_map *m, const void *key)
{
	struct zm_node *n;

	pthread_rwlock_rdlock(&m->lock);
	n = zm_find_locked(m, key);
	pthread_rwlock_unlock(&m->lock);
	return n;
}

struct zm_node *zm_insert(struct zm_map *m, struct zm_node *n, const void *key)
{
	struct zm_node **pp, *old;

	n->key = key;
	pthread_rwlock_wrlock(&m->lock);
	pp = zm_slot(m, key);
	old = *pp;
	if (old)
		*pp = old->next;
	n->next = m->b[zm_hash(key)];
	m->b[zm_hash(key)] = n;
	pthread_rwlock_unlock(&m->lock);
	return old;
}

struct zm_node *zm_remove(struct zm_map *m, const void *key)
{
	struct zm_node **pp, *n;

	pthread_rwlock_wrlock(&m->lock);
	pp = zm_slot(m, key);
	n = *pp;
	if (n)
		*pp = n->next;
	pthread_rwlock_unlock(&m->lock);
	return n;
}

void zm_each(struct zm_map *m, void (*fn)(struct zm_node *n, void *arg), void *arg)
{
	pthread_rwlock_rdlock(&m->lock);
	for (unsigned i = 0; i < ZM_BUCKETS; i++)
		for (struct zm_node *n = m->b[i]; n; n = n->next)
			fn(n, arg);
	pthread_rwlock_unlock(&m->lock);
}
