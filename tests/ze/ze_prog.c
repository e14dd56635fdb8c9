/*
 * A Level Zero application for the tests, linked with the real loader
 * (libze_loader.so.1) and run over the simulated driver, natively and
 * under an interposing shim: each phase prints deterministic lines (result
 * codes, checksums and values of device data, never times), so two runs
 * compare line by line, and each phase checks its own expectations: a
 * failed check prints "FAIL ..." to stderr and the program exits 1.
 *
 * The phases exercise what a scheduler in between must keep: the order of
 * commands in a queue and across lists, immediate lists (every kind of
 * append), events signalled on one queue and waited on another or by the
 * host, fences, timeouts that must not block, arguments captured at
 * append, errors of bad input, kernel timestamps, device faults and
 * concurrent threads. Holding work back is done with host-signalled
 * "gate" events, never with timing, so results do not depend on the
 * machine's load: a missing dependency shows up as a wrong value or a
 * query that succeeds while a gate is still closed.
 *
 * Usage: ze_prog [PHASE...]   (no argument: every phase)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096u
#define MS 1000000ull

static const char *phase = "setup";

static void fail(int line, const char *what)
{
	fprintf(stderr, "FAIL %s (line %d): %s\n", phase, line, what);
	exit(1);
}

/* A call that must succeed. */
#define CK(call)                                                               \
	do {                                                                   \
		ze_result_t r_ = (call);                                       \
		if (r_ != ZE_RESULT_SUCCESS) {                                 \
			char m_[256];                                          \
			snprintf(m_, sizeof(m_), "%s = %s", #call, zu_name(r_)); \
			fail(__LINE__, m_);                                    \
		}                                                              \
	} while (0)

/* A call that must return @want; the line printed names the result. */
#define EXPECT(label, call, want)                                              \
	do {                                                                   \
		ze_result_t r_ = (call);                                       \
		printf("%s: %s = %s\n", phase, label, zu_name(r_));            \
		if (r_ != (want)) {                                            \
			char m_[256];                                          \
			snprintf(m_, sizeof(m_), "%s = %s, want %s", #call,    \
				 zu_name(r_), zu_name(want));                  \
			fail(__LINE__, m_);                                    \
		}                                                              \
	} while (0)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			fail(__LINE__, #cond);                                 \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define ZU_CHECK CK
#include "ze_util.h"

static struct zu z;

/* The helpers of ze_util.h, asserting success where the call stands. */
#define execute(q, l, f) CK(zu_exec(q, l, f))
#define bar(l) CK(zu_bar(l))
#define a_fill(l, p, v, sig, nw, w) CK(zu_fill(&z, l, p, v, N, sig, nw, w))
#define a_inc(l, p, sig, nw, w) CK(zu_inc(&z, l, p, N, sig, nw, w))
#define a_scale(l, p, f) CK(zu_scale(&z, l, p, f, N))
#define a_add(l, a, b, c) CK(zu_add(&z, l, a, b, c, N))
#define a_sum(l, p, out) CK(zu_sum(&z, l, p, N * 4, out))
#define a_spin(l, ns, sig, nw, w) CK(zu_spin(&z, l, ns, sig, nw, w))
#define a_copy(l, d, s, n, sig, nw, w) CK(zeCommandListAppendMemoryCopy(l, d, s, n, sig, nw, w))

/*
 * Regular lists on one queue: kernels, fills, a barrier, copies and a
 * device checksum in order, two lists in one execution, and a list
 * executed twice (its commands run again).
 */
static void phase_order(void)
{
	ze_command_queue_handle_t q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t l1 = zu_list_new(&z, z.ctx), l2 = zu_list_new(&z, z.ctx);
	ze_command_list_handle_t both[2] = { l1, l2 };
	uint32_t *a = zu_dev_new(&z, N * 4), *b = zu_dev_new(&z, N * 4), *c = zu_dev_new(&z, N * 4);
	uint32_t *h = zu_host_new(&z, N * 4), *h2 = zu_host_new(&z, N * 4), two = 2;
	uint64_t *sum = zu_host_new(&z, 16);

	a_fill(l1, a, 3, NULL, 0, NULL);
	CK(zeCommandListAppendMemoryFill(l1, b, &two, sizeof(two), N * 4, NULL, 0, NULL));
	bar(l1);
	a_inc(l1, a, NULL, 0, NULL);
	bar(l1);
	a_scale(l1, a, 5);
	bar(l1);
	a_add(l1, a, b, c);
	bar(l1);
	a_copy(l1, h, c, N * 4, NULL, 0, NULL);
	a_sum(l1, c, sum);
	CK(zeCommandListClose(l1));
	bar(l2);
	a_inc(l2, c, NULL, 0, NULL);
	bar(l2);
	a_copy(l2, h2, c, N * 4, NULL, 0, NULL);
	CK(zeCommandListClose(l2));
	CK(zeCommandQueueExecuteCommandLists(q, 2, both, NULL));
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(h, N, 22) && zu_all(h2, N, 23) && *sum == zu_fnv(h, N * 4));
	printf("order: h=%u h2=%u sum=%016" PRIx64 "\n", h[0], h2[N - 1], *sum);
	execute(q, l2, NULL);
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(h2, N, 24));
	printf("order: again h2=%u\n", h2[0]);
	CK(zeCommandListReset(l2));
	a_scale(l2, c, 2);
	bar(l2);
	a_copy(l2, h2, c, N * 4, NULL, 0, NULL);
	CK(zeCommandListClose(l2));
	execute(q, l2, NULL);
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(h2, N, 48));
	printf("order: reset h2=%u\n", h2[0]);
	CK(zeCommandListDestroy(l1));
	CK(zeCommandListDestroy(l2));
	CK(zeCommandQueueDestroy(q));
	CK(zu_free(&z, a, b, c, h, h2, sum, NULL));
}

/*
 * Immediate lists, asynchronous and synchronous, with every kind of
 * append: kernel, fill, copy, copy region, barrier, signal, wait, event
 * reset, global timestamp.
 */
static void phase_immediate(void)
{
	ze_command_list_handle_t il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t is = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
	ze_event_pool_handle_t pool = zu_pool_new(&z, 8, 0);
	ze_event_handle_t e[5], gate;
	uint32_t *a = zu_dev_new(&z, N * 4), *b = zu_dev_new(&z, N * 4), *c = zu_dev_new(&z, N * 4);
	uint32_t *h = zu_host_new(&z, N * 4), *hb = zu_host_new(&z, N * 4), *s;
	uint64_t *ts = zu_host_new(&z, 16), *sum = zu_host_new(&z, 16);
	ze_copy_region_t reg = { 0, 0, 0, 16 * 4, 16, 1 }, dreg = { 8 * 4, 4, 0, 16 * 4, 16, 1 };
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	uint8_t one_byte = 1;
	unsigned i, inside = 0;

	for (i = 0; i < 5; i++)
		e[i] = zu_event_new(pool, i);
	gate = zu_event_new(pool, 5);
	CK(zeEventHostSignal(e[3]));
	/* Nothing runs before the gate opens; all of it is queued by then. */
	CK(zeCommandListAppendWaitOnEvents(il, 1, &gate));
	a_fill(il, a, 7, e[0], 0, NULL);
	CK(zeCommandListAppendMemoryFill(il, b, &one_byte, 1, N * 4, NULL, 1, &e[0]));
	CK(zeCommandListAppendMemoryFill(il, c, &(uint32_t){ 0 }, 4, N * 4, NULL, 0, NULL));
	bar(il);
	CK(zeCommandListAppendMemoryCopyRegion(il, c, &dreg, 32 * 4, 0, a, &reg, 16 * 4, 0,
					       NULL, 0, NULL));
	CK(zeCommandListAppendBarrier(il, e[1], 0, NULL));
	CK(zeCommandListAppendWaitOnEvents(il, 1, &e[1]));
	CK(zeCommandListAppendEventReset(il, e[3]));
	CK(zeCommandListAppendWriteGlobalTimestamp(il, ts, NULL, 0, NULL));
	a_copy(il, h, c, N * 4, NULL, 0, NULL);
	a_copy(il, hb, b, N * 4, NULL, 0, NULL);
	bar(il);
	CK(zeCommandListAppendSignalEvent(il, e[2]));
	EXPECT("before gate", zeEventQueryStatus(e[2]), ZE_RESULT_NOT_READY);
	EXPECT("e3 before gate", zeEventQueryStatus(e[3]), ZE_RESULT_SUCCESS);
	CK(zeEventHostSignal(gate));
	CK(zeEventHostSynchronize(e[2], UINT64_MAX));
	EXPECT("e0", zeEventQueryStatus(e[0]), ZE_RESULT_SUCCESS);
	EXPECT("e1", zeEventQueryStatus(e[1]), ZE_RESULT_SUCCESS);
	EXPECT("e3 reset", zeEventQueryStatus(e[3]), ZE_RESULT_NOT_READY);
	for (i = 0; i < N; i++) {
		unsigned row = i / 32, col = i % 32;
		int in = row >= 4 && row < 20 && col >= 8 && col < 24;

		inside += in;
		CHECK(h[i] == (in ? 7u : 0u));
	}
	CHECK(inside == 256 && zu_all(hb, N, 0x01010101u) && ts[0] != 0);
	a_sum(is, h, sum);
	printf("immediate: region=%u sum=%016" PRIx64 " fill=%08x ts=%s\n", inside, *sum,
	       hb[0], ts[0] ? "set" : "zero");
	/* Synchronous: done on return, no synchronisation call. */
	CK(zeMemAllocShared(z.ctx, &dd, &hd, N * 4, 0, z.dev, (void **)&s));
	a_fill(is, s, 9, NULL, 0, NULL);
	CHECK(zu_all(s, N, 9));
	a_inc(is, s, NULL, 0, NULL);
	CHECK(zu_all(s, N, 10));
	CK(zeCommandListAppendMemoryCopy(is, h, s, N * 4, NULL, 0, NULL));
	CHECK(zu_all(h, N, 10));
	printf("immediate: sync s=%u h=%u\n", s[0], h[0]);
	CK(zeCommandListReset(il));
	CK(zeCommandListDestroy(il));
	CK(zeCommandListDestroy(is));
	for (i = 0; i < 5; i++)
		CK(zeEventDestroy(e[i]));
	CK(zeEventDestroy(gate));
	CK(zeEventPoolDestroy(pool));
	CK(zu_free(&z, a, b, c, h, hb, s, ts, sum, NULL));
}

/*
 * Events across two queues: a copy on one queue waits for a kernel of the
 * other, submitted later; a queue held by a host-signalled gate; and an
 * event waited again after a reset is waited for again.
 */
static void phase_events(void)
{
	ze_command_queue_handle_t q1 = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_queue_handle_t q2 = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t l1 = zu_list_new(&z, z.ctx), l2 = zu_list_new(&z, z.ctx);
	ze_command_list_handle_t l3 = zu_list_new(&z, z.ctx);
	ze_event_pool_handle_t pool = zu_pool_new(&z, 8, 0);
	ze_event_handle_t made = zu_event_new(pool, 0), copied = zu_event_new(pool, 1);
	ze_event_handle_t gate = zu_event_new(pool, 2), done = zu_event_new(pool, 3);
	uint32_t *a = zu_dev_new(&z, N * 4), *h = zu_host_new(&z, N * 4);

	a_spin(l1, 20 * MS, NULL, 0, NULL);
	a_fill(l1, a, 5, made, 0, NULL);
	CK(zeCommandListClose(l1));
	a_copy(l2, h, a, N * 4, copied, 1, &made);
	CK(zeCommandListClose(l2));
	execute(q2, l2, NULL);
	execute(q1, l1, NULL);
	CK(zeEventHostSynchronize(copied, UINT64_MAX));
	CHECK(zu_all(h, N, 5));
	printf("events: cross-queue h=%u\n", h[0]);

	a_inc(l3, a, NULL, 1, &gate);
	bar(l3);
	a_copy(l3, h, a, N * 4, done, 0, NULL);
	CK(zeCommandListClose(l3));
	execute(q2, l3, NULL);
	EXPECT("gate closed", zeEventQueryStatus(done), ZE_RESULT_NOT_READY);
	EXPECT("queue held", zeCommandQueueSynchronize(q2, 0), ZE_RESULT_NOT_READY);
	CK(zeEventHostSignal(gate));
	CK(zeEventHostSynchronize(done, UINT64_MAX));
	CHECK(zu_all(h, N, 6));
	printf("events: gate h=%u\n", h[0]);
	CK(zeEventHostReset(gate));
	CK(zeEventHostReset(done));
	execute(q2, l3, NULL);
	EXPECT("gate reset", zeEventQueryStatus(done), ZE_RESULT_NOT_READY);
	CK(zeEventHostSignal(gate));
	CK(zeCommandQueueSynchronize(q2, UINT64_MAX));
	EXPECT("done", zeEventQueryStatus(done), ZE_RESULT_SUCCESS);
	CHECK(zu_all(h, N, 7));
	printf("events: again h=%u\n", h[0]);
	CK(zeCommandQueueSynchronize(q1, UINT64_MAX));
	CK(zeCommandListDestroy(l1));
	CK(zeCommandListDestroy(l2));
	CK(zeCommandListDestroy(l3));
	CK(zeEventDestroy(made));
	CK(zeEventDestroy(copied));
	CK(zeEventDestroy(gate));
	CK(zeEventDestroy(done));
	CK(zeEventPoolDestroy(pool));
	CK(zeCommandQueueDestroy(q1));
	CK(zeCommandQueueDestroy(q2));
	CK(zu_free(&z, a, h, NULL));
}

/* Fences: signalled by the execution they were given to, reset, created signalled. */
static void phase_fence(void)
{
	ze_command_queue_handle_t q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_queue_handle_t q2 = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t l = zu_list_new(&z, z.ctx), lg = zu_list_new(&z, z.ctx);
	ze_fence_handle_t f = zu_fence_new(q, 0), fs = zu_fence_new(q, ZE_FENCE_FLAG_SIGNALED);
	ze_fence_handle_t fother = zu_fence_new(q2, 0);
	ze_event_pool_handle_t pool = zu_pool_new(&z, 1, 0);
	ze_event_handle_t gate = zu_event_new(pool, 0);
	uint32_t *a = zu_dev_new(&z, N * 4), *h = zu_host_new(&z, N * 4);

	EXPECT("new", zeFenceQueryStatus(f), ZE_RESULT_NOT_READY);
	EXPECT("created signalled", zeFenceQueryStatus(fs), ZE_RESULT_SUCCESS);
	a_fill(l, a, 11, NULL, 0, NULL);
	bar(l);
	a_copy(l, h, a, N * 4, NULL, 0, NULL);
	CK(zeCommandListClose(l));
	EXPECT("other queue's fence",
	       zeCommandQueueExecuteCommandLists(q, 1, &l, fother),
	       ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
	execute(q, l, f);
	EXPECT("host sync", zeFenceHostSynchronize(f, UINT64_MAX), ZE_RESULT_SUCCESS);
	CHECK(zu_all(h, N, 11));
	EXPECT("query", zeFenceQueryStatus(f), ZE_RESULT_SUCCESS);
	CK(zeFenceReset(f));
	EXPECT("reset", zeFenceQueryStatus(f), ZE_RESULT_NOT_READY);
	CK(zeCommandListAppendBarrier(lg, NULL, 1, &gate));
	CK(zeCommandListClose(lg));
	execute(q, lg, f);
	EXPECT("gated, 1 ms", zeFenceHostSynchronize(f, MS), ZE_RESULT_NOT_READY);
	CK(zeEventHostSignal(gate));
	EXPECT("gate open", zeFenceHostSynchronize(f, UINT64_MAX), ZE_RESULT_SUCCESS);
	printf("fence: h=%u\n", h[0]);
	CK(zeFenceDestroy(f));
	CK(zeFenceDestroy(fs));
	CK(zeFenceDestroy(fother));
	CK(zeCommandListDestroy(l));
	CK(zeCommandListDestroy(lg));
	CK(zeEventDestroy(gate));
	CK(zeEventPoolDestroy(pool));
	CK(zeCommandQueueDestroy(q));
	CK(zeCommandQueueDestroy(q2));
	CK(zu_free(&z, a, h, NULL));
}

/*
 * Timeouts: with the work held by a gate, zero timeouts return NOT_READY
 * (a zero timeout that blocked would hang here) and finite ones return it
 * after at least their time; with a long spin kernel running, zero
 * timeouts return NOT_READY too (checked only while the spin certainly
 * still runs, so a stalled test machine skips the check rather than
 * fail); UINT64_MAX waits for the end. Only lower bounds on elapsed time
 * are asserted.
 */
static void phase_timeout(void)
{
	const uint64_t spin = 300 * MS;
	ze_command_queue_handle_t q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t l = zu_list_new(&z, z.ctx);
	ze_fence_handle_t f = zu_fence_new(q, 0);
	ze_event_pool_handle_t pool = zu_pool_new(&z, 2, 0);
	ze_event_handle_t gate = zu_event_new(pool, 0), done = zu_event_new(pool, 1);
	uint64_t t0;
	ze_result_t r1, r2, r3, r4;

	a_spin(l, spin, done, 1, &gate);
	CK(zeCommandListClose(l));
	execute(q, l, f);
	EXPECT("event query", zeEventQueryStatus(done), ZE_RESULT_NOT_READY);
	EXPECT("event sync 0", zeEventHostSynchronize(done, 0), ZE_RESULT_NOT_READY);
	EXPECT("fence query", zeFenceQueryStatus(f), ZE_RESULT_NOT_READY);
	EXPECT("fence sync 0", zeFenceHostSynchronize(f, 0), ZE_RESULT_NOT_READY);
	EXPECT("queue sync 0", zeCommandQueueSynchronize(q, 0), ZE_RESULT_NOT_READY);
	t0 = now_ns();
	EXPECT("event sync 2ms", zeEventHostSynchronize(done, 2 * MS), ZE_RESULT_NOT_READY);
	EXPECT("fence sync 2ms", zeFenceHostSynchronize(f, 2 * MS), ZE_RESULT_NOT_READY);
	EXPECT("queue sync 2ms", zeCommandQueueSynchronize(q, 2 * MS), ZE_RESULT_NOT_READY);
	CHECK(now_ns() - t0 >= 6 * MS);   /* each waited its time */
	t0 = now_ns();   /* before the spin can start */
	CK(zeEventHostSignal(gate));
	r1 = zeEventQueryStatus(done);
	r2 = zeEventHostSynchronize(done, 0);
	r3 = zeFenceHostSynchronize(f, 0);
	r4 = zeCommandQueueSynchronize(q, 0);
	if (now_ns() - t0 < spin / 2)
		CHECK(r1 == ZE_RESULT_NOT_READY && r2 == ZE_RESULT_NOT_READY &&
		      r3 == ZE_RESULT_NOT_READY && r4 == ZE_RESULT_NOT_READY);
	printf("timeout: while spinning = %s\n", zu_name(ZE_RESULT_NOT_READY));
	EXPECT("event sync forever", zeEventHostSynchronize(done, UINT64_MAX), ZE_RESULT_SUCCESS);
	EXPECT("fence sync forever", zeFenceHostSynchronize(f, UINT64_MAX), ZE_RESULT_SUCCESS);
	EXPECT("queue sync forever", zeCommandQueueSynchronize(q, UINT64_MAX), ZE_RESULT_SUCCESS);
	EXPECT("queue sync 0 after", zeCommandQueueSynchronize(q, 0), ZE_RESULT_SUCCESS);
	CHECK(now_ns() - t0 >= spin);
	CK(zeFenceDestroy(f));
	CK(zeCommandListDestroy(l));
	CK(zeEventDestroy(gate));
	CK(zeEventDestroy(done));
	CK(zeEventPoolDestroy(pool));
	CK(zeCommandQueueDestroy(q));
}

/*
 * Kernel arguments are captured at append: changing them afterwards
 * changes neither a recorded command nor an immediate one still held.
 */
static void phase_args(void)
{
	ze_command_queue_handle_t q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t l = zu_list_new(&z, z.ctx), l2 = zu_list_new(&z, z.ctx);
	ze_command_list_handle_t il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_event_pool_handle_t pool = zu_pool_new(&z, 2, 0);
	ze_event_handle_t gate = zu_event_new(pool, 0), done = zu_event_new(pool, 1);
	uint32_t *a = zu_host_new(&z, N * 4), *b = zu_host_new(&z, N * 4);
	uint32_t *c = zu_host_new(&z, N * 4);
	uint32_t v = 9;

	a_fill(l, a, 7, NULL, 0, NULL);
	CK(zeKernelSetArgumentValue(z.fill, 0, sizeof(b), &b));
	CK(zeKernelSetArgumentValue(z.fill, 1, sizeof(v), &v));
	CK(zeKernelSetGroupSize(z.fill, 64, 1, 1));
	CK(zeCommandListClose(l));
	execute(q, l, NULL);
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(a, N, 7) && zu_all(b, N, 0));
	CK(zu_launch(l2, z.fill, NULL, 0, NULL));
	CK(zeCommandListClose(l2));
	execute(q, l2, NULL);
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(a, N, 7) && zu_all(b, N, 9));
	printf("args: recorded a=%u later b=%u\n", a[0], b[0]);
	a_fill(il, c, 1, done, 1, &gate);
	v = 2;
	CK(zeKernelSetArgumentValue(z.fill, 1, sizeof(v), &v));
	CK(zeKernelSetArgumentValue(z.fill, 0, sizeof(a), &a));
	CK(zeEventHostSignal(gate));
	CK(zeEventHostSynchronize(done, UINT64_MAX));
	CHECK(zu_all(c, N, 1) && zu_all(a, N, 7));
	printf("args: immediate c=%u a=%u\n", c[0], a[0]);
	CK(zeKernelSetGroupSize(z.fill, 1, 1, 1));
	CK(zeCommandListDestroy(l));
	CK(zeCommandListDestroy(l2));
	CK(zeCommandListDestroy(il));
	CK(zeEventDestroy(gate));
	CK(zeEventDestroy(done));
	CK(zeEventPoolDestroy(pool));
	CK(zeCommandQueueDestroy(q));
	CK(zu_free(&z, a, b, c, NULL));
}

/*
 * The errors a driver returns for bad input. NULL handles reach the
 * driver only when the loader does not wrap handles (its default with one
 * driver); with ZE_ENABLE_LOADER_INTERCEPT=1 the loader dereferences them
 * itself, so run this phase without it.
 */
static void phase_errors(void)
{
	ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC };
	ze_command_list_desc_t ld = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC };
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 4 };
	ze_kernel_desc_t kd = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "nope" };
	ze_module_desc_t md = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
				.format = ZE_MODULE_FORMAT_IL_SPIRV,
				.pInputModule = (const uint8_t *)"xs", .inputSize = 0 };
	ze_command_queue_handle_t q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_command_list_handle_t l = zu_list_new(&z, z.ctx);
	ze_command_list_handle_t il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_DEFAULT);
	ze_command_list_handle_t out_l;
	ze_command_queue_handle_t out_q;
	ze_event_pool_handle_t pool = zu_pool_new(&z, 4, 0);
	ze_event_handle_t out_e;
	ze_kernel_handle_t out_k;
	ze_module_handle_t out_m;
	uint32_t count = 0, *a = zu_dev_new(&z, 64), local = 0;
	uint64_t x = 0;
	void *p;

	EXPECT("list create NULL context", zeCommandListCreate(NULL, z.dev, &ld, &out_l),
	       ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT("list create NULL desc", zeCommandListCreate(z.ctx, z.dev, NULL, &out_l),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("queue create NULL out", zeCommandQueueCreate(z.ctx, z.dev, &qd, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	qd.ordinal = 5;
	EXPECT("queue create bad ordinal", zeCommandQueueCreate(z.ctx, z.dev, &qd, &out_q),
	       ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT("device get NULL count", zeDeviceGet(z.drv, NULL, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("device get count", zeDeviceGet(z.drv, &count, NULL), ZE_RESULT_SUCCESS);
	printf("%s: devices=%u\n", phase, count);
	EXPECT("alloc size 0", zeMemAllocDevice(z.ctx, &dd, 0, 0, z.dev, &p),
	       ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
	EXPECT("alloc alignment 3", zeMemAllocDevice(z.ctx, &dd, 64, 3, z.dev, &p),
	       ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
	EXPECT("alloc NULL desc", zeMemAllocDevice(z.ctx, NULL, 64, 0, z.dev, &p),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("free NULL", zeMemFree(z.ctx, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("free unknown", zeMemFree(z.ctx, &local), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT("module size 0", zeModuleCreate(z.ctx, z.dev, &md, &out_m, NULL),
	       ZE_RESULT_ERROR_INVALID_SIZE);
	EXPECT("kernel unknown", zeKernelCreate(z.mod, &kd, &out_k),
	       ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
	EXPECT("arg index", zeKernelSetArgumentValue(z.fill, 9, 8, &x),
	       ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
	EXPECT("arg size", zeKernelSetArgumentValue(z.fill, 1, 8, &x),
	       ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
	EXPECT("group size 0", zeKernelSetGroupSize(z.fill, 0, 1, 1),
	       ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
	EXPECT("group size 2048", zeKernelSetGroupSize(z.fill, 2048, 1, 1),
	       ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
	EXPECT("event index", zeEventCreate(pool, &ed, &out_e), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT("event sync NULL", zeEventHostSynchronize(NULL, 0),
	       ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT("queue sync NULL", zeCommandQueueSynchronize(NULL, 0),
	       ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT("fence create NULL", zeFenceCreate(NULL, NULL, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT("launch NULL args", zeCommandListAppendLaunchKernel(l, z.inc, NULL, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("launch NULL waits",
	       zeCommandListAppendLaunchKernel(l, z.inc, &zu_one, NULL, 1, NULL),
	       ZE_RESULT_ERROR_INVALID_SIZE);
	EXPECT("copy NULL dst", zeCommandListAppendMemoryCopy(l, NULL, a, 4, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("copy past end", zeCommandListAppendMemoryCopy(l, &local, a + 15, 8, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT("fill pattern 3", zeCommandListAppendMemoryFill(l, a, &x, 3, 64, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_SIZE);
	EXPECT("execute unclosed", zeCommandQueueExecuteCommandLists(q, 1, &l, NULL),
	       ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT("execute 0 lists", zeCommandQueueExecuteCommandLists(q, 0, &l, NULL),
	       ZE_RESULT_ERROR_INVALID_SIZE);
	EXPECT("execute NULL lists", zeCommandQueueExecuteCommandLists(q, 1, NULL, NULL),
	       ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	EXPECT("execute immediate", zeCommandQueueExecuteCommandLists(q, 1, &il, NULL),
	       ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
	CK(zeCommandListClose(l));
	EXPECT("append after close", zeCommandListAppendBarrier(l, NULL, 0, NULL),
	       ZE_RESULT_ERROR_INVALID_ARGUMENT);
	CK(zeCommandListDestroy(l));
	CK(zeCommandListDestroy(il));
	CK(zeEventPoolDestroy(pool));
	CK(zeCommandQueueDestroy(q));
	CK(zeMemFree(z.ctx, a));
}

/* Kernel timestamps and global timestamps, checked as durations, never printed. */
static void phase_timing(void)
{
	ze_device_properties_t dp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	ze_command_list_handle_t il = zu_imm_new(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_event_pool_handle_t pool = zu_pool_new(&z, 2, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
	ze_event_handle_t ev = zu_event_new(pool, 0), never = zu_event_new(pool, 1);
	ze_kernel_timestamp_result_t kt;
	uint64_t *ts = zu_host_new(&z, 16), host0, dev0, host1, dev1, ns;

	CK(zeDeviceGetProperties(z.dev, &dp));
	CK(zeDeviceGetGlobalTimestamps(z.dev, &host0, &dev0));
	CK(zeCommandListAppendWriteGlobalTimestamp(il, &ts[0], NULL, 0, NULL));
	bar(il);
	a_spin(il, 2 * MS, ev, 0, NULL);
	bar(il);
	CK(zeCommandListAppendWriteGlobalTimestamp(il, &ts[1], NULL, 0, NULL));
	EXPECT("never signalled", zeEventQueryKernelTimestamp(never, &kt), ZE_RESULT_NOT_READY);
	CK(zeEventHostSynchronize(ev, UINT64_MAX));
	CK(zeCommandListReset(il));
	EXPECT("kernel timestamp", zeEventQueryKernelTimestamp(ev, &kt), ZE_RESULT_SUCCESS);
	ns = (kt.global.kernelEnd - kt.global.kernelStart) * dp.timerResolution;
	CHECK(kt.global.kernelEnd >= kt.global.kernelStart && ns >= 2 * MS);
	CHECK(kt.context.kernelStart == kt.global.kernelStart &&
	      kt.context.kernelEnd == kt.global.kernelEnd);
	CHECK((ts[1] - ts[0]) * dp.timerResolution >= 2 * MS);
	CK(zeDeviceGetGlobalTimestamps(z.dev, &host1, &dev1));
	CHECK(host1 >= host0 && dev1 >= dev0 && dev1 >= ts[1]);
	printf("timing: kernel >= 2 ms, timestamps ordered\n");
	CK(zeCommandListDestroy(il));
	CK(zeEventDestroy(ev));
	CK(zeEventDestroy(never));
	CK(zeEventPoolDestroy(pool));
	CK(zeMemFree(z.ctx, ts));
}

/* A failing kernel loses its context (only that one), reported at sync. */
static void phase_fault(void)
{
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_context_handle_t c2;
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;

	CK(zeContextCreate(z.drv, &cd, &c2));
	q = zu_queue_new(&z, c2, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, c2);
	CK(zu_launch(l, z.fail, NULL, 0, NULL));
	CK(zeCommandListClose(l));
	execute(q, l, NULL);
	EXPECT("sync", zeCommandQueueSynchronize(q, UINT64_MAX), ZE_RESULT_ERROR_DEVICE_LOST);
	EXPECT("context", zeContextGetStatus(c2), ZE_RESULT_ERROR_DEVICE_LOST);
	EXPECT("execute after", zeCommandQueueExecuteCommandLists(q, 1, &l, NULL),
	       ZE_RESULT_ERROR_DEVICE_LOST);
	EXPECT("other context", zeContextGetStatus(z.ctx), ZE_RESULT_SUCCESS);
	CK(zeCommandListDestroy(l));
	CK(zeCommandQueueDestroy(q));
	CK(zeContextDestroy(c2));
}

/* What the driver says about itself (deterministic by construction). */
static void phase_props(void)
{
	ze_device_properties_t dp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	ze_device_compute_properties_t cp = {
		.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES };
	ze_command_queue_group_properties_t gp = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES };
	ze_device_memory_properties_t mp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	ze_kernel_properties_t kp = { .stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES };
	ze_memory_allocation_properties_t ap = {
		.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES };
	ze_api_version_t ver;
	uint32_t n = 0, gx, gy, gz;
	ze_device_handle_t owner;
	void *d = zu_dev_new(&z, 100), *h = zu_host_new(&z, 100);

	CK(zeDriverGetApiVersion(z.drv, &ver));
	CK(zeDeviceGetProperties(z.dev, &dp));
	CK(zeDeviceGetComputeProperties(z.dev, &cp));
	printf("props: api=%u.%u name=\"%s\" type=%d maxgroup=%u\n", ZE_MAJOR_VERSION(ver),
	       ZE_MINOR_VERSION(ver), dp.name, (int)dp.type, cp.maxTotalGroupSize);
	CK(zeDeviceGetCommandQueueGroupProperties(z.dev, &n, NULL));
	CHECK(n == 1);
	CK(zeDeviceGetCommandQueueGroupProperties(z.dev, &n, &gp));
	printf("props: groups=%u compute=%d copy=%d queues=%u fill=%zu\n", n,
	       !!(gp.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE),
	       !!(gp.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY), gp.numQueues,
	       gp.maxMemoryFillPatternSize);
	n = 0;
	CK(zeDeviceGetMemoryProperties(z.dev, &n, NULL));
	CK(zeDeviceGetMemoryProperties(z.dev, &n, &mp));
	printf("props: memories=%u total=%" PRIu64 "\n", n, (uint64_t)mp.totalSize);
	CK(zeKernelGetProperties(z.add, &kp));
	CK(zeKernelSuggestGroupSize(z.add, 4096, 3, 1, &gx, &gy, &gz));
	printf("props: add args=%u suggest=%ux%ux%u\n", kp.numKernelArgs, gx, gy, gz);
	CK(zeMemGetAllocProperties(z.ctx, (char *)d + 10, &ap, &owner));
	CHECK(ap.type == ZE_MEMORY_TYPE_DEVICE && owner == z.dev);
	CK(zeMemGetAllocProperties(z.ctx, h, &ap, NULL));
	CHECK(ap.type == ZE_MEMORY_TYPE_HOST);
	CK(zeMemGetAllocProperties(z.ctx, &n, &ap, NULL));
	CHECK(ap.type == ZE_MEMORY_TYPE_UNKNOWN);
	printf("props: alloc types device host unknown\n");
	CK(zu_free(&z, d, h, NULL));
}

/* Threads each driving their own queue at once. */
#define THREADS 4
#define ROUNDS 25

static pthread_mutex_t kernel_lock = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main_locked(void *arg)
{
	/* Kernel objects are not thread-safe: appends are serialised. */
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	uint32_t *p = arg;
	int i;

	pthread_mutex_lock(&kernel_lock);
	q = zu_queue_new(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	l = zu_list_new(&z, z.ctx);
	a_inc(l, p, NULL, 0, NULL);
	CK(zeCommandListClose(l));
	pthread_mutex_unlock(&kernel_lock);
	for (i = 0; i < ROUNDS; i++)
		execute(q, l, NULL);
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CK(zeCommandListDestroy(l));
	CK(zeCommandQueueDestroy(q));
	return NULL;
}

static void phase_threads(void)
{
	pthread_t t[THREADS];
	uint32_t *p[THREADS];
	int i;

	for (i = 0; i < THREADS; i++) {
		p[i] = zu_host_new(&z, N * 4);
		CHECK(pthread_create(&t[i], NULL, thread_main_locked, p[i]) == 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK(zu_all(p[i], N, ROUNDS));
		CK(zeMemFree(z.ctx, p[i]));
	}
	printf("threads: %d x %d executions\n", THREADS, ROUNDS);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} phases[] = {
		{ "props", phase_props }, { "order", phase_order },
		{ "immediate", phase_immediate }, { "events", phase_events },
		{ "fence", phase_fence }, { "timeout", phase_timeout },
		{ "args", phase_args }, { "errors", phase_errors },
		{ "timing", phase_timing }, { "fault", phase_fault },
		{ "threads", phase_threads },
	};
	size_t i;
	int j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (j = 1; j < argc; j++) {
		for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
			if (!strcmp(argv[j], phases[i].name))
				break;
		if (i == sizeof(phases) / sizeof(phases[0])) {
			fprintf(stderr, "ze_prog: unknown phase '%s'\n", argv[j]);
			return 2;
		}
	}
	CK(zu_open(&z));
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		int run = argc == 1;

		for (j = 1; j < argc; j++)
			run |= !strcmp(argv[j], phases[i].name);
		if (!run)
			continue;
		phase = phases[i].name;
		phases[i].fn();
	}
	phase = "teardown";
	CK(zu_close(&z));
	return 0;
}
