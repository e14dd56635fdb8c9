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
	m->used[b / 64] |= UINT64_C(1) << (b % 64);
}

/* Unlinks the record at *@pp, in @key's bucket. */
static void shim_map_unlink(struct shim_map *m, struct shim_map_node **pp, const void *key)
{
	unsigned b = shim_map_hash(key);

	*pp = (*pp)->next;
	if (!m->b[b])
		m->used[b / 64] &= ~(UINT64_C(1) << (b % 64));
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
		shim_map_unlink(m, pp, key);
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
		shim_map_unlink(m, pp, key);
	pthread_rwlock_unlock(&m->lock);
	return n;
}

void shim_map_each_locked(const struct shim_map *m,
			  bool (*fn)(struct shim_map_node *n, void *arg), void *arg)
{
	for (unsigned w = 0; w < SHIM_MAP_BUCKETS / 64; w++)
		for (uint64_t bits = m->used[w]; bits; bits &= bits - 1)
			for (struct shim_map_node *n = m->b[w * 64 + (unsigned)__builtin_ctzll(bits)];
			     n; n = n->next)
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
