/*
 * Level Zero phases for the shim's tests (test_ze_shim.c), beside
 * ze_prog's: what only a scheduler in between can get wrong. Linked with
 * the loader like ze_prog; each phase prints deterministic lines (the
 * same natively and under the shim, except the lines that start with
 * "shim") and checks its own expectations ("FAIL ..." on stderr, exit 1).
 *
 *  - queues: whether the shim is in the process, and how many XQueues it
 *    made (ze_test_queues, looked up in the process);
 *  - dlopen: the loader opened by its development name and by the real
 *    file's path, functions looked up through those handles: under the
 *    shim both lead to it;
 *  - flood: an immediate list holding far more work than an XQueue keeps
 *    in flight, behind a host-signalled gate, while the kernel's
 *    arguments change after every append: zero timeouts answer NOT_READY
 *    at once, finite ones after their time, and every buffered launch
 *    uses the arguments of its own call;
 *  - deps: a high-priority list waits on an event that a low-priority
 *    list signals behind a flood of work: no deadlock, the data arrives;
 *  - regular: a long regular list executed on a queue (sliced when
 *    XSCHED_ZE_SLICE is set), its fence and events, executed again;
 *  - midsignal: an event a list signals before it waits for one the host
 *    signals later: a host wait on the first returns meanwhile;
 *  - memory: device memory as the application sees it, under the limit
 *    XS_MEM_LIMIT_MIB names (the test's variable, not the shim's; unset:
 *    none): the device's memory properties show it, device allocations
 *    fill it to the byte and no further (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
 *    images and physical memory count too, shared allocations are never
 *    refused, every free gives its bytes back (a free the driver refuses
 *    none). The lines it prints are the same with a limit or without.
 *
 * Usage: ze_shim_prog PHASE...
 */
#include "ze_util.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define W 256u                  /* words per buffer */
#define FLOOD 40                /* appends held behind the gate */
#define MS 1000000ull

static struct zu z;
static const char *phase = "setup";

/* Exits with "FAIL" unless @ok; @r is the call's result (for CK). */
static void check(int line, bool ok, const char *what, ze_result_t r)
{
	if (ok)
		return;
	fprintf(stderr, "FAIL %s (line %d): %s%s%s\n", phase, line, what,
		r != ZE_RESULT_SUCCESS ? " = " : "", r != ZE_RESULT_SUCCESS ? zu_name(r) : "");
	exit(1);
}

#define CK(call) ({ ze_result_t ck_ = (call); check(__LINE__, !ck_, #call, ck_); })
#define CHECK(cond) check(__LINE__, (cond), #cond, ZE_RESULT_SUCCESS)

static uint64_t elapsed_ns(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000000000ull + (uint64_t)t.tv_nsec -
	       (uint64_t)t0->tv_nsec;
}

static uint32_t *host_words(void)
{
	uint32_t *p;

	CK(zu_host_alloc(&z, W * 4, &p));
	return p;
}

static ze_command_list_handle_t imm_prio(ze_command_queue_priority_t prio)
{
	ze_command_queue_desc_t d = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
				      .priority = prio };
	ze_command_list_handle_t l;

	CK(zeCommandListCreateImmediate(z.ctx, z.dev, &d, &l));
	return l;
}

/* @n events, of a new host-visible pool. */
static ze_event_pool_handle_t events(uint32_t n, ze_event_handle_t *ev)
{
	ze_event_pool_handle_t pool;

	CK(zu_pool(&z, n, 0, &pool));
	for (uint32_t i = 0; i < n; i++)
		CK(zu_event(pool, i, &ev[i]));
	return pool;
}

/* The shim's queue counter in the process, or NULL without the shim. */
static int (*shim_queues(void *handle))(void)
{
	return (int (*)(void))dlsym(handle, "ze_test_queues");
}

static void phase_queues(void)
{
	int (*queues)(void) = shim_queues(RTLD_DEFAULT);
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;

	CK(zu_queue(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &q));
	CK(zu_imm(&z, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &l));
	CK(zeCommandListDestroy(l));
	CK(zeCommandQueueDestroy(q));
	if (queues)
		printf("shim active queues=%d\n", queues());
	else
		printf("shim absent\n");
}

/* Creates and destroys an immediate list through @h; whether the shim saw it. */
static int through_handle(void *h)
{
	__typeof__(&zeCommandListCreateImmediate) create =
		(__typeof__(create))dlsym(h, "zeCommandListCreateImmediate");
	__typeof__(&zeCommandListDestroy) destroy =
		(__typeof__(destroy))dlsym(h, "zeCommandListDestroy");
	int (*queues)(void) = shim_queues(RTLD_DEFAULT);
	ze_command_queue_desc_t d = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC };
	ze_command_list_handle_t l;
	int before = queues ? queues() : 0;

	CHECK(create && destroy);
	CK(create(z.ctx, z.dev, &d, &l));
	CK(destroy(l));
	return queues && queues() > before;
}

static void phase_dlopen(void)
{
	void *dev = dlopen("libze_loader.so", RTLD_NOW | RTLD_LOCAL), *real;
	const char *file = getenv("XS_ZE_LOADER_FILE");
	char path[PATH_MAX];

	CHECK(dev);
	printf("dlopen: development name opened\n");
	printf("shim dlopen: name %s, ze_test_queues %s\n", through_handle(dev) ? "shim" : "loader",
	       shim_queues(dev) ? "found" : "absent");
	/* The loader's file under its real name (no link), as some programs do. */
	if (file && realpath(file, path)) {
		real = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		CHECK(real);
		printf("shim dlopen: loader file %s\n", through_handle(real) ? "shim" : "loader");
		dlclose(real);
	}
	dlclose(dev);
}

/*
 * FLOOD fills behind a closed gate on one immediate list, each with its
 * own buffer and value, the kernel's arguments pointed elsewhere right
 * after each append.
 */
static void phase_flood(void)
{
	ze_command_list_handle_t il = imm_prio(ZE_COMMAND_QUEUE_PRIORITY_NORMAL);
	ze_event_handle_t ev[2], gate, done;
	ze_event_pool_handle_t pool = events(2, ev);
	uint32_t *buf[FLOOD], *decoy = host_words(), junk = 0xdead;
	struct timespec t0;
	uint64_t n = W;
	ze_result_t r1, r2;
	int i;

	gate = ev[0];
	done = ev[1];
	CK(zeCommandListAppendWaitOnEvents(il, 1, &gate));
	for (i = 0; i < FLOOD; i++) {
		buf[i] = host_words();
		CK(zu_fill(&z, il, buf[i], (uint32_t)i + 1, W, NULL, 0, NULL));
		CK(zeKernelSetArgumentValue(z.fill, 0, sizeof(decoy), &decoy));
		CK(zeKernelSetArgumentValue(z.fill, 1, sizeof(junk), &junk));
		CK(zeKernelSetArgumentValue(z.fill, 2, sizeof(n), &n));
	}
	CK(zeCommandListAppendSignalEvent(il, done));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r1 = zeEventQueryStatus(done);
	r2 = zeEventHostSynchronize(done, 0);
	CHECK(elapsed_ns(&t0) < 200 * MS);
	printf("flood: query = %s, sync 0 = %s\n", zu_name(r1), zu_name(r2));
	CHECK(r1 == ZE_RESULT_NOT_READY && r2 == ZE_RESULT_NOT_READY);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r1 = zeEventHostSynchronize(done, 5 * MS);
	printf("flood: sync 5 ms = %s\n", zu_name(r1));
	CHECK(r1 == ZE_RESULT_NOT_READY && elapsed_ns(&t0) >= 5 * MS);
	CK(zeEventHostSignal(gate));
	CK(zeEventHostSynchronize(done, UINT64_MAX));
	for (i = 0; i < FLOOD; i++) {
		CHECK(zu_all(buf[i], W, (uint32_t)i + 1));
		CK(zeMemFree(z.ctx, buf[i]));
	}
	CHECK(zu_all(decoy, W, 0));
	printf("flood: %d buffers with their own values, decoy untouched\n", FLOOD);
	CK(zeCommandListDestroy(il));
	CK(zeEventDestroy(gate));
	CK(zeEventDestroy(done));
	CK(zeEventPoolDestroy(pool));
	CK(zeMemFree(z.ctx, decoy));
}

/*
 * A high-priority list waits for an event a low-priority list signals
 * after a flood of 1 ms spins held behind a gate.
 */
static void phase_deps(void)
{
	ze_command_list_handle_t lo = imm_prio(ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW);
	ze_command_list_handle_t hi = imm_prio(ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH);
	ze_event_handle_t ev[3];
	ze_event_pool_handle_t pool = events(3, ev);
	ze_event_handle_t gate = ev[0], made = ev[1], done = ev[2];
	uint32_t *buf = host_words();
	int i;

	CK(zeCommandListAppendWaitOnEvents(lo, 1, &gate));
	for (i = 0; i < FLOOD; i++)
		CK(zu_spin(&z, lo, MS, NULL, 0, NULL));
	CK(zeCommandListAppendSignalEvent(lo, made));
	CK(zu_fill(&z, hi, buf, 5, W, done, 1, &made));
	CK(zeEventHostSignal(gate));
	CK(zeEventHostSynchronize(done, 30000 * MS));
	CHECK(zu_all(buf, W, 5));
	printf("deps: high waited for low, buf=%u\n", buf[0]);
	CK(zeEventHostSynchronize(made, UINT64_MAX));
	CK(zeCommandListDestroy(hi));
	CK(zeCommandListDestroy(lo));
	CK(zeEventDestroy(gate));
	CK(zeEventDestroy(made));
	CK(zeEventDestroy(done));
	CK(zeEventPoolDestroy(pool));
	CK(zeMemFree(z.ctx, buf));
}

/*
 * A regular list of many commands (incs of one buffer, an event signalled
 * half way, a checksum at the end) behind a gate; its fence and events
 * answer for it; executed twice.
 */
static void phase_regular(void)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	ze_fence_handle_t f;
	ze_event_handle_t ev[2];
	ze_event_pool_handle_t pool = events(2, ev);
	ze_event_handle_t gate = ev[0], half = ev[1];
	uint32_t *buf = host_words();
	uint64_t *sum;
	int i;

	CK(zu_host_alloc(&z, 16, &sum));

	CK(zu_queue(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &q));
	CK(zu_list(&z, z.ctx, &l));
	CK(zu_fence(q, 0, &f));
	CK(zu_bar(l));
	CK(zeCommandListAppendWaitOnEvents(l, 1, &gate));
	for (i = 0; i < 20; i++) {
		CK(zu_inc(&z, l, buf, W, i == 9 ? half : NULL, 0, NULL));
		CK(zu_bar(l));
	}
	CK(zu_sum(&z, l, buf, W * 4, sum));
	CK(zeCommandListClose(l));
	CK(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
	printf("regular: fence before gate = %s, half = %s\n", zu_name(zeFenceQueryStatus(f)),
	       zu_name(zeEventQueryStatus(half)));
	CK(zeEventHostSignal(gate));
	CK(zeFenceHostSynchronize(f, UINT64_MAX));
	CHECK(zu_all(buf, W, 20) && *sum == zu_fnv(buf, W * 4));
	printf("regular: buf=%u half=%s\n", buf[0], zu_name(zeEventQueryStatus(half)));
	CK(zeFenceReset(f));
	CK(zeEventHostReset(half));
	CK(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
	CK(zeFenceHostSynchronize(f, UINT64_MAX));
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(buf, W, 40) && *sum == zu_fnv(buf, W * 4));
	printf("regular: again buf=%u half=%s\n", buf[0], zu_name(zeEventQueryStatus(half)));
	CK(zeFenceDestroy(f));
	CK(zeCommandListDestroy(l));
	CK(zeCommandQueueDestroy(q));
	CK(zeEventDestroy(gate));
	CK(zeEventDestroy(half));
	CK(zeEventPoolDestroy(pool));
	CK(zeMemFree(z.ctx, buf));
	CK(zeMemFree(z.ctx, sum));
}

/*
 * A regular list signals an event, then waits for one the host signals
 * after waiting on the first (the conformance tests' event signalling
 * case): the first event completes partway through the execution, and a
 * host wait on it returns before the execution ends.
 */
static void phase_midsignal(void)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	ze_event_handle_t ev[2];
	ze_event_pool_handle_t pool = events(2, ev);
	ze_event_handle_t first = ev[0], host = ev[1];
	uint32_t *buf = host_words();

	CK(zu_queue(&z, z.ctx, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, &q));
	CK(zu_list(&z, z.ctx, &l));
	CK(zu_inc(&z, l, buf, W, first, 0, NULL));
	CK(zeCommandListAppendWaitOnEvents(l, 1, &host));
	CK(zu_inc(&z, l, buf, W, NULL, 0, NULL));
	CK(zeCommandListClose(l));
	CK(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL));
	CK(zeEventHostSynchronize(first, 30000 * MS));
	printf("midsignal: first = %s, host = %s\n", zu_name(zeEventQueryStatus(first)),
	       zu_name(zeEventQueryStatus(host)));
	CK(zeEventHostSignal(host));
	CK(zeCommandQueueSynchronize(q, UINT64_MAX));
	CHECK(zu_all(buf, W, 2));
	printf("midsignal: buf=%u\n", buf[0]);
	CK(zeCommandListDestroy(l));
	CK(zeCommandQueueDestroy(q));
	CK(zeEventDestroy(first));
	CK(zeEventDestroy(host));
	CK(zeEventPoolDestroy(pool));
	CK(zeMemFree(z.ctx, buf));
}

#define MIB (1ull << 20)

static uint64_t mem_limit;      /* XS_MEM_LIMIT_MIB, in bytes; 0: none */

static void *dev_alloc(size_t size, ze_result_t *r)
{
	void *p = NULL;

	*r = zu_dev_alloc(&z, size, &p);
	return *r == ZE_RESULT_SUCCESS ? p : NULL;
}

/*
 * @room more device bytes fit and not one more: under a limit an
 * allocation of @room succeeds and one more byte is refused with
 * ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY; without one both succeed.
 */
static void room_is(int line, uint64_t room)
{
	void *a = NULL, *b;
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (room) {
		a = dev_alloc(room, &r);
		check(line, a != NULL, "the room left", r);
	}
	b = dev_alloc(1, &r);
	if (mem_limit)
		check(line, !b && r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
		      "one byte over the limit refused", r);
	else
		check(line, b != NULL, "one byte more without a limit", r);
	CK(zu_free(&z, a ? a : b, a ? b : NULL, NULL));
}

#define ROOM_IS(room) room_is(__LINE__, (room))

static void phase_memory(void)
{
	const char *env = getenv("XS_MEM_LIMIT_MIB");
	ze_device_memory_properties_t mp[4];
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	ze_memory_free_ext_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC };
	ze_image_desc_t id = { .stype = ZE_STRUCTURE_TYPE_IMAGE_DESC, .type = ZE_IMAGE_TYPE_2D,
			       .format = { .layout = ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
					   .type = ZE_IMAGE_FORMAT_TYPE_UINT },
			       .width = 2048, .height = 2048 };
	ze_physical_mem_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC,
				      .size = 16 * MIB };
	ze_physical_mem_handle_t phys;
	ze_image_handle_t img;
	uint32_t n = 0;
	void *big, *b, *s1, *s2;
	ze_result_t r;

	mem_limit = env ? strtoull(env, NULL, 10) * MIB : 0;
	CHECK(!mem_limit || mem_limit >= 64 * MIB);
	CK(zeDeviceGetMemoryProperties(z.dev, &n, NULL));
	CHECK(n >= 1 && n <= 4);
	for (uint32_t i = 0; i < n; i++)
		mp[i] = (ze_device_memory_properties_t){
			.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	CK(zeDeviceGetMemoryProperties(z.dev, &n, mp));
	for (uint32_t i = 0; i < n; i++)
		CHECK(mem_limit ? mp[i].totalSize == mem_limit : mp[i].totalSize > 64 * MIB);
	printf("memory: %u memory properties, the limit's size where set\n", n);

	/* All but 16 MiB for the rest of the phase, then the 16 MiB. */
	big = dev_alloc(mem_limit ? mem_limit - 16 * MIB : 48 * MIB, &r);
	CK(r);
	b = dev_alloc(16 * MIB, &r);
	CK(r);
	ROOM_IS(mem_limit ? 0 : 16 * MIB);
	/* Shared memory, even with the device full: counted apart, never refused. */
	CK(zeMemAllocShared(z.ctx, &dd, &hd, 32 * MIB, 64, z.dev, &s1));
	CK(zeMemAllocShared(z.ctx, &dd, &hd, 32 * MIB, 64, NULL, &s2));
	CK(zu_free(&z, s1, s2, NULL));
	CK(zeMemFree(z.ctx, b));
	ROOM_IS(16 * MIB);
	printf("memory: device allocations fill the device, shared ones pass, frees return\n");

	/* A free the driver refuses (another context's, or one it lacks): still held. */
	b = dev_alloc(16 * MIB, &r);
	CK(r);
	r = zeMemFreeExt(z.ctx, &fd, b);
	printf("memory: zeMemFreeExt = %s\n", zu_name(r));
	if (r != ZE_RESULT_SUCCESS) {
		ROOM_IS(mem_limit ? 0 : 16 * MIB);
		CK(zeMemFree(z.ctx, b));
	}
	ROOM_IS(16 * MIB);

	/* Images and physical memory: counted before the driver answers. */
	r = zeImageCreate(z.ctx, z.dev, &id, &img);
	printf("memory: zeImageCreate 2048x2048 RGBA8 = %s\n", zu_name(r));
	if (r == ZE_RESULT_SUCCESS) {
		ROOM_IS(mem_limit ? 0 : 16 * MIB);
		CK(zeImageDestroy(img));
	}
	ROOM_IS(16 * MIB);
	r = zePhysicalMemCreate(z.ctx, z.dev, &pd, &phys);
	printf("memory: zePhysicalMemCreate 16 MiB = %s\n", zu_name(r));
	if (r == ZE_RESULT_SUCCESS) {
		ROOM_IS(mem_limit ? 0 : 16 * MIB);
		CK(zePhysicalMemDestroy(z.ctx, phys));
	}
	ROOM_IS(16 * MIB);
	/* With the device full they are refused before the driver sees them. */
	b = dev_alloc(16 * MIB, &r);
	CK(r);
	r = zeImageCreate(z.ctx, z.dev, &id, &img);
	if (mem_limit)
		CHECK(r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
	else if (r == ZE_RESULT_SUCCESS)
		CK(zeImageDestroy(img));
	r = zePhysicalMemCreate(z.ctx, z.dev, &pd, &phys);
	if (mem_limit)
		CHECK(r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
	else if (r == ZE_RESULT_SUCCESS)
		CK(zePhysicalMemDestroy(z.ctx, phys));
	CK(zu_free(&z, b, big, NULL));
	/* Nothing left counted: the whole limit fits again. */
	ROOM_IS(mem_limit ? mem_limit : 64 * MIB);
	printf("memory: images and physical memory counted, nothing left over\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} phases[] = {
		{ "queues", phase_queues }, { "dlopen", phase_dlopen }, { "flood", phase_flood },
		{ "deps", phase_deps }, { "regular", phase_regular },
		{ "midsignal", phase_midsignal }, { "memory", phase_memory },
	};
	int j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(zu_open(&z));
	for (j = 1; j < argc; j++) {
		size_t i;

		for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
			if (!strcmp(argv[j], phases[i].name))
				break;
		if (i == sizeof(phases) / sizeof(phases[0])) {
			fprintf(stderr, "ze_shim_prog: unknown phase '%s'\n", argv[j]);
			return 2;
		}
		phase = phases[i].name;
		phases[i].fn();
	}
	phase = "teardown";
	CK(zu_close(&z));
	return 0;
}
