/*
 * Registry of live handles: every context, stream, event, module,
 * function, library, kernel, graph and executable graph the driver hands
 * out, with its type and owning context.
 *
 * Design: applications pass handles back as raw pointers, possibly stale
 * or made up; the driver dereferences one only after finding it here with
 * the expected type, so misuse becomes CUDA_ERROR_INVALID_HANDLE (or the
 * call's documented error) instead of a crash. A chained hash table under
 * one mutex: lookups are short, and contention is far below the cost of a
 * device command. Using a handle while another thread destroys it remains
 * undefined, as with the real driver.
 */
#include "sim/cuda/sc_internal.h"

#include <errno.h>
#include <stdlib.h>

#define SC_HBITS 10
#define SC_HBUCKETS (1u << SC_HBITS)

struct sc_hnode {
	const void *h;
	struct CUctx_st *owner;
	enum sc_htype type;
	struct sc_hnode *next;
};

static pthread_mutex_t sc_hlock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_hnode *sc_hbucket[SC_HBUCKETS];

static size_t sc_hash(const void *h)
{
	uint64_t x = (uint64_t)(uintptr_t)h >> 4;

	return (size_t)((x * 0x9e3779b97f4a7c15ull) >> (64 - SC_HBITS));
}

/*
 * Registers @h as a live handle of @type owned by @owner (NULL: none).
 * Returns 0 or -ENOMEM.
 */
int sc_handle_add(const void *h, enum sc_htype type, struct CUctx_st *owner)
{
	struct sc_hnode *n = malloc(sizeof(*n));
	size_t b = sc_hash(h);

	if (!n)
		return -ENOMEM;
	n->h = h;
	n->owner = owner;
	n->type = type;
	pthread_mutex_lock(&sc_hlock);
	n->next = sc_hbucket[b];
	sc_hbucket[b] = n;
	pthread_mutex_unlock(&sc_hlock);
	return 0;
}

/* Whether @h is a live handle of @type. Never dereferences @h. */
bool sc_handle_valid(const void *h, enum sc_htype type)
{
	struct sc_hnode *n;
	bool found = false;

	if (!h)
		return false;
	pthread_mutex_lock(&sc_hlock);
	for (n = sc_hbucket[sc_hash(h)]; n; n = n->next) {
		if (n->h == h && n->type == type) {
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&sc_hlock);
	return found;
}

/* Unregisters @h; false if it was not a live handle of @type. */
bool sc_handle_del(const void *h, enum sc_htype type)
{
	struct sc_hnode **pp, *n = NULL;

	if (!h)
		return false;
	pthread_mutex_lock(&sc_hlock);
	for (pp = &sc_hbucket[sc_hash(h)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->h == h && (*pp)->type == type) {
			n = *pp;
			*pp = n->next;
			break;
		}
	}
	pthread_mutex_unlock(&sc_hlock);
	free(n);
	return n != NULL;
}

/*
 * Unregisters up to @cap handles of @type owned by @owner and stores them
 * in @out, for the caller to free. Returns how many; call again until 0.
 */
size_t sc_handle_drain(struct CUctx_st *owner, enum sc_htype type, void **out, size_t cap)
{
	size_t b, n = 0;

	pthread_mutex_lock(&sc_hlock);
	for (b = 0; b < SC_HBUCKETS && n < cap; b++) {
		struct sc_hnode **pp = &sc_hbucket[b];

		while (*pp && n < cap) {
			struct sc_hnode *e = *pp;

			if (e->owner == owner && e->type == type) {
				*pp = e->next;
				out[n++] = (void *)e->h;
				free(e);
			} else {
				pp = &e->next;
			}
		}
	}
	pthread_mutex_unlock(&sc_hlock);
	return n;
}
