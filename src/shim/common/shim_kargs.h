/*
 * A kernel's argument values as the application set them, for shims that
 * launch a kernel later than the application asked (a buffered launch).
 *
 * A buffered launch must run with the arguments the kernel had at the
 * enqueue, while the application is free to set others right after. A
 * driver's own way to freeze them (OpenCL's clCloneKernel) cannot be
 * trusted everywhere (PoCL 3.1's clone turns arguments set with a NULL
 * value into pointers to zeroes), and Level Zero has none. So the shims
 * watch the setters: every accepted value is copied into a record
 * (struct shim_kargs), a launch that is buffered takes a snapshot of the
 * record, and the shim replays the snapshot onto a kernel of its own
 * right before it issues the launch.
 *
 * Values are opaque bytes; a NULL value (OpenCL local memory, Level Zero
 * local memory) is kept as such, with its size. Each value carries a tag
 * the vendor's shim defines (e.g. which setter it came through). Nothing
 * here locks: the owner of a record serialises access to it; a snapshot
 * is immutable once taken.
 */
#ifndef XS_SHIM_KARGS_H
#define XS_SHIM_KARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Highest argument count a record accepts (more: the record is lost). */
#define SHIM_KARGS_MAX 4096

struct shim_karg {
	void *value;            /* a private copy; NULL: set with a NULL value */
	size_t size;
	uint8_t tag;
	bool set;
};

struct shim_kargs {
	struct shim_karg *v;
	uint32_t cap;
	uint32_t nargs;         /* the driver's count, else the highest set + 1 */
	bool nargs_known;
	bool lost;              /* a value could not be recorded */
};

/* An empty record for a kernel of @nargs arguments (@known: the driver said so). */
void shim_kargs_init(struct shim_kargs *a, uint32_t nargs, bool known);

/* Frees what @a holds (the record itself is the caller's). */
void shim_kargs_fini(struct shim_kargs *a);

/*
 * Records argument @idx = @size bytes at @value (NULL: a NULL value), with
 * @tag. Returns 0; -E2BIG (@idx >= SHIM_KARGS_MAX) or -ENOMEM, after which
 * the record is lost: snapshots fail until shim_kargs_fini().
 */
int shim_kargs_set(struct shim_kargs *a, uint32_t idx, size_t size, const void *value,
		   uint8_t tag);

/* Makes @dst (initialised) a copy of @src. 0 or -ENOMEM (@dst then lost). */
int shim_kargs_copy(struct shim_kargs *dst, const struct shim_kargs *src);

/* Whether every argument below nargs is set (and nothing was lost). */
bool shim_kargs_complete(const struct shim_kargs *a);

struct shim_kargs_snap;

/*
 * A snapshot of @a (one allocation, freed with free()). Arguments never
 * set are left out when the count is not known; with a known count a
 * missing one fails the snapshot. Returns NULL with *@err = -ENOENT (an
 * argument missing), -EIO (the record was lost) or -ENOMEM.
 */
struct shim_kargs_snap *shim_kargs_snapshot(const struct shim_kargs *a, int *err);

/*
 * Calls @fn(@ctx, index, size, value, tag) for each argument of @s in
 * index order (value NULL for a NULL value), stopping at the first
 * non-zero answer, which it returns; 0 if none.
 */
int shim_kargs_apply(const struct shim_kargs_snap *s,
		     int (*fn)(void *ctx, uint32_t idx, size_t size, const void *value,
			       uint8_t tag),
		     void *ctx);

#endif
