/*
 * Events as the shim sees them: for each event, the queue and sequence
 * number of its last record, so that queries, synchronisations, elapsed
 * times and cross-stream waits answer for the record the application
 * made, even while it is still buffered.
 */
#ifndef XS_CU_EVENTS_H
#define XS_CU_EVENTS_H

#include "shim/cuda/cu_shim.h"

/* Notes an event the application created. */
void ev_created(CUevent ev);

/* Whether @ev was created and not destroyed since. */
bool ev_alive(CUevent ev);

/*
 * As ev_alive(), adopting an event the shim did not see created if the
 * driver knows it (it answers a query): such an event is then recorded
 * and waited on in stream order like the others.
 */
bool ev_known(CUevent ev);

/* Notes that @ev's last record is command @seq of @q (if alive). */
void ev_recorded(CUevent ev, struct cs_queue *q, uint64_t seq);

/*
 * The queue of @ev's last record and its sequence number; false if it was
 * never recorded through a scheduled stream.
 */
bool ev_last(CUevent ev, struct cs_queue **q, uint64_t *seq);

/*
 * Launches @ev's last record if it is still buffered (waiting while its
 * queue is suspended), for calls that hand the event to the driver as it
 * is: a wait the driver makes must find the record there.
 */
void ev_launch_record(CUevent ev);

/*
 * For a record the driver made itself (of a stream the shim does not
 * schedule, or of a whole context): when @rc is CUDA_SUCCESS, @ev's state
 * is the driver's from now on, queries and waits ask it. Returns @rc.
 */
CUresult ev_recorded_by_driver(CUresult rc, CUevent ev);

/* Forgets @ev (destroyed). */
void ev_forget(CUevent ev);

/*
 * Forgets records made on @q, whose stream is being destroyed once all its
 * work completed: those events then answer from the driver alone.
 */
void ev_queue_gone(struct cs_queue *q);

#endif
