/*
 * Handle -> record maps, one helper for every shim: the CUDA shim's streams
 * and graph executables, the OpenCL shim's command queues, the Level Zero
 * shim's queues, lists, kernels, events and fences. A record embeds struct
 * shim_map_node first; the key is the application's handle. Chained
 * buckets over the handle's address bits, and a reader-writer lock per
 * map, taken shared by lookups (on every intercepted call) and exclusively
 * by insertions and removals. Records are freed by their owners, never by
 * the map. No allocation: a map is a static object (SHIM_MAP_INIT).
 */
#ifndef XS_SHIM_MAP_H
#define XS_SHIM_MAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define SHIM_MAP_BUCKETS 256

struct shim_map_node {
	struct shim_map_node *next;
	const void *key;
};

struct shim_map {
	pthread_rwlock_t lock;
	struct shim_map_node *b[SHIM_MAP_BUCKETS];
	/* Which buckets hold a record: a walk of a map of a few records
	 * (shim_map_each(), on every event an OpenCL launch binds) reads
	 * four words, not 256 bucket heads. */
	uint64_t used[SHIM_MAP_BUCKETS / 64];
};

_Static_assert(SHIM_MAP_BUCKETS % 64 == 0, "shim_map.used: whole words");

#define SHIM_MAP_INIT { .lock = PTHREAD_RWLOCK_INITIALIZER }

/* The bucket of @key: handles are aligned, their low bits carry nothing. */
static inline unsigned shim_map_hash(const void *key)
{
	uintptr_t x = (uintptr_t)key;

	return (unsigned)((x >> 4) ^ (x >> 12) ^ (x >> 20)) % SHIM_MAP_BUCKETS;
}

/* The record of @key, or NULL. @m->lock held (shared or exclusive). */
static inline struct shim_map_node *shim_map_find_locked(const struct shim_map *m,
							 const void *key)
{
	struct shim_map_node *n;

	for (n = m->b[shim_map_hash(key)]; n && n->key != key; n = n->next)
		;
	return n;
}

/* The record of @key, or NULL; takes the lock shared. */
struct shim_map_node *shim_map_find(struct shim_map *m, const void *key);

/*
 * Inserts @n under @key, replacing (and returning) a record left there for
 * the same key (a handle the driver reused after a destroy we did not
 * see); NULL if none. Takes the lock exclusively.
 */
struct shim_map_node *shim_map_insert(struct shim_map *m, struct shim_map_node *n,
				      const void *key);

/*
 * Inserts @n under @key unless a record is there already: returns that
 * record (and @n is not inserted), else NULL. For two threads racing to
 * record one handle. Takes the lock exclusively.
 */
struct shim_map_node *shim_map_add(struct shim_map *m, struct shim_map_node *n,
				   const void *key);

/* Removes and returns the record of @key, or NULL. Takes the lock exclusively. */
struct shim_map_node *shim_map_remove(struct shim_map *m, const void *key);

/*
 * Calls @fn on every record until it returns false; @m->lock held (shared
 * or exclusive) by the caller. @fn must not insert or remove.
 */
void shim_map_each_locked(const struct shim_map *m,
			  bool (*fn)(struct shim_map_node *n, void *arg), void *arg);

/* shim_map_each_locked() with the lock taken shared. */
void shim_map_each(struct shim_map *m, bool (*fn)(struct shim_map_node *n, void *arg),
		   void *arg);

#endif
