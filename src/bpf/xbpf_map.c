/*
 * Map helpers shared by the loaders (xbpf_map.h).
 */
#include "bpf/xbpf_map.h"

#include <bpf/bpf.h>
#include <string.h>

void xbpf_map_walk(int fd, size_t ksize, bool (*fn)(void *arg, const void *key), void *arg)
{
	unsigned char cur[64], next[64];
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : cur, next)) {
		if (fn(arg, next) && !bpf_map_delete_elem(fd, next))
			continue;          /* deleted: the same "previous" key again */
		memcpy(cur, next, ksize);
		first = false;
	}
}
