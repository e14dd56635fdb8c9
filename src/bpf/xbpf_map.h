/*
 * What the loaders share about maps (not part of the daemon's interface).
 */
#ifndef XS_XBPF_MAP_H
#define XS_XBPF_MAP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Walks the keys of hash map @fd (@ksize bytes each, at most 64): @fn sees
 * each key and returns true to delete it; the walk goes on safely past a
 * deletion.
 */
void xbpf_map_walk(int fd, size_t ksize, bool (*fn)(void *arg, const void *key), void *arg);

#endif
