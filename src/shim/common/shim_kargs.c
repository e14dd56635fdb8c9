/*
 * Kernel argument records and their snapshots (see shim_kargs.h).
 *
 * A record is an array indexed by argument, each value in its own small
 * allocation (values change one at a time, in any order). A snapshot
 * packs the values into one allocation, 8-byte aligned each, so that a
 * buffered launch costs one malloc() and a copy however many arguments the
 * kernel has.
 */
#include "shim/common/shim_kargs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SK_UNSET (-2)
#define SK_NULL_VALUE (-1)

struct shim_kargs_snap_arg {
	size_t size;
	long off;               /* into data, or SK_UNSET / SK_NULL_VALUE */
	uint8_t tag;
};

struct shim_kargs_snap {
	uint32_t nargs;
	struct shim_kargs_snap_arg *a;  /* nargs of them, in the same allocation */
	char *data;
};

static size_t sk_round(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

void shim_kargs_init(struct shim_kargs *a, uint32_t nargs, bool known)
{
	memset(a, 0, sizeof(*a));
	a->nargs = known ? nargs : 0;
	a->nargs_known = known;
}

void shim_kargs_fini(struct shim_kargs *a)
{
	for (uint32_t i = 0; i < a->cap; i++)
		free(a->v[i].value);
	free(a->v);
	a->v = NULL;
	a->cap = 0;
}

/* Room for argument @idx. 0 or -ENOMEM. */
static int sk_reserve(struct shim_kargs *a, uint32_t idx)
{
	uint32_t cap = a->cap ? a->cap : 8;
	struct shim_karg *grown;

	if (idx < a->cap)
		return 0;
	while (cap <= idx)
		cap *= 2;
	grown = realloc(a->v, cap * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memset(grown + a->cap, 0, (cap - a->cap) * sizeof(*grown));
	a->v = grown;
	a->cap = cap;
	return 0;
}

int shim_kargs_set(struct shim_kargs *a, uint32_t idx, size_t size, const void *value,
		   uint8_t tag)
{
	void *copy = NULL;

	if (idx >= SHIM_KARGS_MAX) {
		a->lost = true;
		return -E2BIG;
	}
	if (sk_reserve(a, idx) < 0) {
		a->lost = true;
		return -ENOMEM;
	}
	/* The usual case, the same argument set again: in place. */
	if (value && size && a->v[idx].value && a->v[idx].size == size) {
		memcpy(a->v[idx].value, value, size);
		a->v[idx].tag = tag;
		a->v[idx].set = true;
		return 0;
	}
	if (value && size && !(copy = malloc(size))) {
		a->lost = true;
		return -ENOMEM;
	}
	if (copy)
		memcpy(copy, value, size);
	free(a->v[idx].value);
	a->v[idx].value = copy;
	a->v[idx].size = size;
	a->v[idx].tag = tag;
	a->v[idx].set = true;
	if (!a->nargs_known && idx >= a->nargs)
		a->nargs = idx + 1;
	return 0;
}

int shim_kargs_copy(struct shim_kargs *dst, const struct shim_kargs *src)
{
	dst->nargs = src->nargs;
	dst->nargs_known = src->nargs_known;
	dst->lost = src->lost;
	for (uint32_t i = 0; i < src->cap; i++) {
		const struct shim_karg *v = &src->v[i];

		if (v->set && shim_kargs_set(dst, i, v->size, v->value, v->tag) < 0)
			return -ENOMEM;
	}
	return 0;
}

bool shim_kargs_complete(const struct shim_kargs *a)
{
	if (a->lost)
		return false;
	for (uint32_t i = 0; i < a->nargs; i++)
		if (i >= a->cap || !a->v[i].set)
			return false;
	return true;
}

struct shim_kargs_snap *shim_kargs_snapshot(const struct shim_kargs *a, int *err)
{
	struct shim_kargs_snap *s;
	size_t bytes = 0, off = 0;
	uint32_t i;

	if (a->lost) {
		*err = -EIO;
		return NULL;
	}
	for (i = 0; i < a->nargs; i++) {
		if (i >= a->cap || !a->v[i].set) {
			if (a->nargs_known) {
				*err = -ENOENT;
				return NULL;
			}
			continue;
		}
		if (a->v[i].value)
			bytes += sk_round(a->v[i].size);
	}
	s = malloc(sizeof(*s) + a->nargs * sizeof(*s->a) + bytes);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->a = (struct shim_kargs_snap_arg *)(s + 1);
	s->data = (char *)(s->a + a->nargs);
	s->nargs = a->nargs;
	for (i = 0; i < a->nargs; i++) {
		const struct shim_karg *v = i < a->cap ? &a->v[i] : NULL;

		s->a[i].size = v ? v->size : 0;
		s->a[i].tag = v ? v->tag : 0;
		if (!v || !v->set) {
			s->a[i].off = SK_UNSET;
		} else if (!v->value) {
			s->a[i].off = SK_NULL_VALUE;
		} else {
			s->a[i].off = (long)off;
			memcpy(s->data + off, v->value, v->size);
			off += sk_round(v->size);
		}
	}
	return s;
}

int shim_kargs_apply(const struct shim_kargs_snap *s,
		     int (*fn)(void *ctx, uint32_t idx, size_t size, const void *value,
			       uint8_t tag),
		     void *ctx)
{
	for (uint32_t i = 0; i < s->nargs; i++) {
		const struct shim_kargs_snap_arg *a = &s->a[i];
		int rc;

		if (a->off == SK_UNSET)
			continue;
		rc = fn(ctx, i, a->size, a->off == SK_NULL_VALUE ? NULL : s->data + a->off,
			a->tag);
		if (rc)
			return rc;
	}
	return 0;
}
