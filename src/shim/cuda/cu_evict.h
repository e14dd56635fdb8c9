/*
 * Preemption that frees memory, the CUDA shim's half (cu_evict.c): device
 * memory that can be taken away from the process and given back at the
 * same addresses, and the gate that keeps the process's own calls off it
 * meanwhile (docs/memory.md).
 *
 * With XSCHED_MEMORY_PREEMPTION=1 (read once, at load), cuMemAlloc_v2 backs
 * each allocation with the virtual memory management API: an address range
 * reserved for good, and physical memory mapped into it. Evicting copies
 * the contents to host memory and releases the physical memory; restoring
 * makes new physical memory, maps it at the same addresses and copies the
 * contents back. Every call of the process that may touch device memory
 * passes the gate (cu_evict_enter(), cu_evict_leave(); cu_passes.S for the
 * generic hooks): while the memory is away, it is restored first (waiting
 * for memory if need be); while an eviction runs, the call waits for it;
 * and an eviction begins only once no such call is inside the driver.
 */
#ifndef XS_CU_EVICT_H
#define XS_CU_EVICT_H

#include "shim/cuda/cu_shim.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether memory preemption is on in this process (constant after load). */
extern bool cu_evict_armed;

struct shim_mem_dev;

/* cuMemAlloc_v2 with memory preemption, on the current context's device
 * whose figures @d keeps (NULL: not counted): *@p, *@taken the bytes the
 * driver took (a multiple of its granularity). */
CUresult cu_evict_alloc(CUdeviceptr *p, size_t n, size_t *taken, struct shim_mem_dev *d);

/* cuMemFree_v2 of @p if it is one of cu_evict_alloc()'s: true, with the
 * driver's answer in *@rc; false otherwise. */
bool cu_evict_free(CUdeviceptr p, CUresult *rc);

/* The gate, around a driver call that may touch device memory. */
void cu_evict_enter(void);
void cu_evict_leave(void);

/* The gate for the generic hooks: enter, and keep @ret (the caller's return
 * address) for cu_evict_return(), called when the driver returned. */
void cu_evict_call(uintptr_t ret);
__attribute__((visibility("hidden"))) uintptr_t cu_evict_return(void);

/*
 * Evicts every allocation of cu_evict_alloc(): waits for the calls inside
 * the gate and for the work the process launched, copies the contents to
 * host memory and releases the physical memory. Returns the bytes freed on
 * the device (0: nothing to evict), or -errno (the driver failed: what
 * was evicted stays so, the rest stays where it is).
 */
int64_t cu_evict_all(void);

/*
 * Restores what cu_evict_all() took away: 0, or -ENOMEM while the device
 * has not the memory (what could be restored is).
 */
int cu_evict_restore(void);

/* Bytes evicted now. */
uint64_t cu_evict_away(void);

/*
 * Whether evicted memory must stay away (the scheduler evicted it for a
 * process of higher priority): a gate then waits instead of restoring.
 */
void cu_evict_hold(bool hold);

#endif
