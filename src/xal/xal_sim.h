/*
 * The `sim` XAL backend: XQueues over hardware queues of the simulated XPU.
 */
#ifndef XS_XAL_SIM_H
#define XS_XAL_SIM_H

#include "sim/sim.h"
#include "xal/xal.h"

/*
 * Wraps a new hardware queue of the simulated device @name (NULL: the
 * default device) in an xal_hwq. Errors as sim_dev_open()/sim_hwq_create().
 */
int xal_sim_hwq_create(const char *name, struct xal_hwq **out);

/* The simulated queue under @hwq (which must be a sim hwq), for tests. */
struct sim_hwq *xal_sim_hwq_sim(struct xal_hwq *hwq);

/* True if @hwq belongs to the sim backend. */
int xal_is_sim(const struct xal_hwq *hwq);

/*
 * A command from a descriptor. The command owns @owned (freed with it; may
 * be NULL): deep copies the descriptor points into. Returns -EINVAL for a
 * malformed descriptor, -ENOMEM; on error @owned is freed too.
 */
int xal_sim_cmd_create(const struct sim_cmd *desc, void *owned,
		       struct xal_cmd **out);

#endif
