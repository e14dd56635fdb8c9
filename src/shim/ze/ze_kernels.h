/*
 * Kernels whose launches the shim may defer.
 *
 * A launch appended to an immediate list uses the kernel's arguments and
 * group size as they are at the call; the application may set them again
 * right after it returns. When the XQueue launches the command at once, on
 * the application's thread (a direct launch), the kernel is still in that
 * state and is used as is. When the command was buffered, the kernel may
 * have changed since, so the shim issues it with a private kernel instead:
 * created from the same module under the same name (zeKernelCreate), kept
 * in a small per-kernel pool, with the state the application had set at
 * the call applied to it (arguments, group size, indirect access flags,
 * cache configuration, global offset). The shim learns that state by
 * hooking the setters (zeKernelSetArgumentValue, zeKernelSetGroupSize,
 * ...), which go to the driver as well; a snapshot of it is taken at each
 * append. The application's kernel itself is never touched by the shim,
 * so no lock is needed against the application's threads.
 *
 * Regular command lists need none of this: the driver itself captures the
 * state when the application appends.
 */
#ifndef XS_ZE_KERNELS_H
#define XS_ZE_KERNELS_H

#include "shim/ze/ze_shim.h"

struct zk_snap;

/* Records kernel @k, created from @m with @desc. */
void zk_created(ze_module_handle_t m, const ze_kernel_desc_t *desc, ze_kernel_handle_t k);

/* Forgets @k (the application destroys it; private copies in use stay). */
void zk_destroyed(ze_kernel_handle_t k);

/*
 * Before the application destroys module @m: waits until no buffered
 * command uses a private copy of one of its kernels, then destroys them.
 */
void zk_module_destroyed(ze_module_handle_t m);

/*
 * The state of @k now, for a launch that may be deferred; NULL if the
 * shim cannot reproduce it (unknown kernel, an argument never set, out of
 * memory): the caller then goes to the driver directly.
 */
struct zk_snap *zk_snapshot(ze_kernel_handle_t k);

/*
 * The kernel to issue a launch of @s with: the application's when @direct,
 * else a private copy in @s's state (held until zk_snap_free()). NULL with
 * *@err set if the copy could not be made or set up.
 */
ze_kernel_handle_t zk_bind(struct zk_snap *s, bool direct, ze_result_t *err);


/* Frees @s and returns its private copy, if any. NULL accepted. */
void zk_snap_free(struct zk_snap *s);

#endif
