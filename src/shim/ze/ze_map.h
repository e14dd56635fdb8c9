/*
 * The shim's tables: handle -> record maps (queues, command lists, events,
 * fences, kernels). A record embeds struct zm_node first; each map has a
 * reader-writer lock, taken shared by lookups (on every intercepted call)
 * and exclusively by insertions and removals. Records are freed by their
 * owners, never by the map.
 */
#ifndef XS_ZE_MAP_H
#define XS_ZE_MAP_H

#include <pthread.h>
#include <stdint.h>

#define ZM_BUCKETS 256

struct zm_node {
	struct zm_node *next;
	const void *key;
};

struct zm_map {
	pthread_rwlock_t lock;
	struct zm_node *b[ZM_BUCKETS];
};

#define ZM_MAP_INIT { .lock = PTHREAD_RWLOCK_INITIALIZER }

/* The record of @key, or NULL. Shared or exclusive lock held. */
struct zm_node *zm_find_locked(struct zm_map *m, const void *key);

/* The record of @key, or NULL; takes the lock shared. */
struct zm_node *zm_find(struct zm_map *m, const void *key);

/*
 * Inserts @n under @key, replacing (and returning) a record left there for
 * the same key (a handle the driver reused after a destroy we did not
 * see); NULL if none. Takes the lock exclusively.
 */
struct zm_node *zm_insert(struct zm_map *m, struct zm_node *n, const void *key);

/* Removes and returns the record of @key, or NULL. Takes the lock exclusively. */
struct zm_node *zm_remove(struct zm_map *m, const void *key);

/* Calls @fn on every record, lock held shared (@fn must not touch @m). */
void zm_each(struct zm_map *m, void (*fn)(struct zm_node *n, void *arg), void *arg);

#endif
