/*
 * Writes the fuzzer's seed corpus: one valid packet of every message type
 * (several for types with variants), each built with ipc_build() and
 * checked with ipc_decode() in its direction, so a seed that no longer
 * decodes after an ABI change fails the build instead of silently
 * weakening the fuzzer; a message type without a seed fails it too.
 *
 * Usage: fuzz_make_corpus DIR   (DIR is created if missing)
 */
#include "ipc/ipc_msg.h"
#include "xsched/xsched.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *dir;
static int failed;
static bool seeded[IPC_TYPE_MAX];

union pkt {
	char b[IPC_MSG_MAX];
	uint64_t align;
};

static void seed(const char *name, uint16_t type, enum ipc_dir d, const void *body,
		 size_t len)
{
	static uint32_t seq;
	union pkt p;
	struct ipc_msg m;
	char path[4096];
	FILE *f;
	int n = ipc_build(p.b, sizeof(p.b), type, ++seq, body, len);

	if (n < 0 || ipc_decode(p.b, (size_t)n, d, &m) < 0) {
		fprintf(stderr, "fuzz_make_corpus: seed %s does not decode\n", name);
		failed = 1;
		return;
	}
	seeded[type] = true;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p.b, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "fuzz_make_corpus: %s: %s\n", path, strerror(errno));
		failed = 1;
	}
	if (f && fclose(f) != 0)
		failed = 1;
}

static void rec_fill(struct ipc_queue_rec *r, uint32_t i)
{
	memset(r, 0, sizeof(*r));
	r->queue_id = 100 + i;
	r->client_id = 1 + i / 4;
	r->pid = 4000 + (int32_t)i;
	r->uid = 1000;
	snprintf(r->comm, sizeof(r->comm), "worker%u", i);
	snprintf(r->device, sizeof(r->device), "sim:xsched-sim0");
	snprintf(r->backend, sizeof(r->backend), "sim");
	r->level = 1 + i % 3;
	r->state = i & 1;
	r->running = 1;
	r->eff_priority = (int32_t)(i % 7) - 3;
	r->hint[IPC_KEY_PRIORITY] = r->eff_priority;
	r->threshold = XS_DEFAULT_THRESHOLD;
	r->batch = XS_DEFAULT_BATCH;
	r->budget_ns = XS_DEFAULT_BUDGET_NS;
	r->submitted = 10 * i;
	r->completed = 10 * i;
	r->level_max = 3;
	if (r->level < 3)
		snprintf(r->level_why, sizeof(r->level_why), "kernel k%u not instrumented", i);
	if (i & 2) {
		r->nspid = 1 + (int32_t)i;
		memset(r->container, 'a' + (int)(i % 6), 64);
	}
}

static void seed_list_replies(void)
{
	static union {
		struct {
			struct ipc_list_reply h;
			struct ipc_queue_rec rec[IPC_LIST_PER_MSG];
		} m;
		uint64_t align;
	} l;
	uint32_t i;

	for (i = 0; i < IPC_LIST_PER_MSG; i++)
		rec_fill(&l.m.rec[i], i);
	l.m.h = (struct ipc_list_reply){ .flags = IPC_F_LAST, .count = 0 };
	seed("list_reply_empty", IPC_LIST_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m.h));
	l.m.h.count = 1;
	seed("list_reply_one", IPC_LIST_REPLY, IPC_FROM_DAEMON, &l.m,
	     sizeof(l.m.h) + sizeof(l.m.rec[0]));
	l.m.h = (struct ipc_list_reply){ .flags = 0, .count = IPC_LIST_PER_MSG };
	seed("list_reply_full", IPC_LIST_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m));
}

/* Registrations identified by UUID and by PCI bus id (the shims' kinds). */
static void seed_identities(struct ipc_register reg)
{
	reg.id_kind = IPC_ID_UUID;
	snprintf(reg.ident, sizeof(reg.ident), "0f1e2d3c-4b5a-8978-a6b5-c4d3e2f10a0b");
	snprintf(reg.pci, sizeof(reg.pci), "0000:3b:00.0");
	seed("register_uuid", IPC_REGISTER, IPC_FROM_CLIENT, &reg, sizeof(reg));
	reg.id_kind = IPC_ID_PCI;
	snprintf(reg.ident, sizeof(reg.ident), "0000:3b:00.0");
	seed("register_pci", IPC_REGISTER, IPC_FROM_CLIENT, &reg, sizeof(reg));
}

static void seed_device_replies(void)
{
	union {
		struct {
			struct ipc_devices_reply h;
			struct ipc_device_rec rec[3];
		} m;
		uint64_t align;
	} l;

	memset(&l, 0, sizeof(l));
	l.m.h = (struct ipc_devices_reply){ .flags = IPC_F_LAST, .count = 3 };
	l.m.rec[0] = (struct ipc_device_rec){ .domain = 1, .id_kind = IPC_ID_UUID, .queues = 2,
					      .ident = "0f1e2d3c-4b5a-8978-a6b5-c4d3e2f10a0b",
					      .pci = "0000:3b:00.0", .name = "cuda:0" };
	l.m.rec[1] = (struct ipc_device_rec){ .domain = 2, .id_kind = IPC_ID_PCI, .queues = 1,
					      .ident = "0001:af:1f.7", .pci = "0001:af:1f.7",
					      .name = "cl:GPU" };
	l.m.rec[2] = (struct ipc_device_rec){ .domain = 3, .id_kind = IPC_ID_UNVERIFIED,
					      .queues = 1, .name = "cuda:1" };
	seed("devices_reply", IPC_DEVICES_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m));
	l.m.h.count = 0;
	seed("devices_reply_empty", IPC_DEVICES_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m.h));
}

static void seed_bypass_replies(void)
{
	union {
		struct {
			struct ipc_bypass_reply h;
			struct ipc_bypass_rec rec[2];
		} m;
		uint64_t align;
	} l;

	memset(&l, 0, sizeof(l));
	l.m.h = (struct ipc_bypass_reply){ .flags = IPC_F_LAST, .count = 2 };
	l.m.rec[0] = (struct ipc_bypass_rec){ .pid = 4242, .uid = 1000, .start_ns = 123456789,
					      .age_ns = 2000000000, .cgroup_id = 77,
					      .uses = 1u << 8, .state = IPC_BYPASS_YES,
					      .comm = "train.py", .what = "libcuda.so.1:cuInit",
					      .cgroup = "/user.slice/user-1000.slice" };
	l.m.rec[1] = (struct ipc_bypass_rec){ .pid = 4343, .uses = 1u << 1,
					      .state = IPC_BYPASS_REGISTERED, .comm = "cu_load",
					      .what = "renderD128" };
	seed("bypass_reply", IPC_BYPASS_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m));
	l.m.h.count = 0;
	seed("bypass_reply_empty", IPC_BYPASS_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m.h));
}

static void seed_text_replies(void)
{
	static const char text[] =
		"# HELP xsched_clients Connected clients.\n"
		"# TYPE xsched_clients gauge\nxsched_clients 3\n"
		"xsched_event_decision_seconds{quantile=\"0.99\"} 4.1e-05\n";
	union {
		struct {
			struct ipc_text_reply h;
			char text[sizeof(text)];
		} m;
		uint64_t align;
	} t;

	memcpy(t.m.text, text, sizeof(text) - 1);
	t.m.h = (struct ipc_text_reply){ .flags = IPC_F_LAST, .len = 0 };
	seed("text_reply_empty", IPC_TEXT_REPLY, IPC_FROM_DAEMON, &t.m, sizeof(t.m.h));
	t.m.h.len = sizeof(text) - 1;
	seed("text_reply", IPC_TEXT_REPLY, IPC_FROM_DAEMON, &t.m, sizeof(t.m.h) + t.m.h.len);
}

/* @s filled with 'x' up to its last byte: one mutation from unterminated. */
static void fill(char *s, size_t len)
{
	memset(s, 'x', len - 1);
	s[len - 1] = '\0';
}

/* Packets whose strings fill their arrays, so that a single mutated byte
 * reaches the decoder's NUL checks. */
static void seed_full_strings(void)
{
	struct ipc_hello hello = { .role = IPC_ROLE_AGENT };
	struct ipc_register reg = {
		.slot = 0, .level = 1, .level_max = 1, .threshold = 1, .batch = 1,
		.budget_ns = XS_BUDGET_NONE,
	};
	struct ipc_policy policy;
	struct ipc_policy_reply policy_reply = { .status = -ENOENT };
	struct ipc_status_reply status = { .version = IPC_VERSION };

	fill(hello.comm, sizeof(hello.comm));
	seed("hello_full", IPC_HELLO, IPC_FROM_CLIENT, &hello, sizeof(hello));
	fill(reg.device, sizeof(reg.device));
	fill(reg.backend, sizeof(reg.backend));
	seed("register_full", IPC_REGISTER, IPC_FROM_CLIENT, &reg, sizeof(reg));
	fill(policy.name, sizeof(policy.name));
	seed("policy_set_full", IPC_POLICY_SET, IPC_FROM_CLIENT, &policy, sizeof(policy));
	fill(policy_reply.name, sizeof(policy_reply.name));
	seed("policy_reply_full", IPC_POLICY_REPLY, IPC_FROM_DAEMON, &policy_reply,
	     sizeof(policy_reply));
	fill(status.policy, sizeof(status.policy));
	seed("status_reply_full", IPC_STATUS_REPLY, IPC_FROM_DAEMON, &status, sizeof(status));
}

/* A list reply of two records whose strings fill their arrays. */
static void seed_full_records(void)
{
	union {
		struct {
			struct ipc_list_reply h;
			struct ipc_queue_rec rec[2];
		} m;
		uint64_t align;
	} l;
	int i;

	l.m.h = (struct ipc_list_reply){ .flags = IPC_F_LAST, .count = 2 };
	for (i = 0; i < 2; i++) {
		rec_fill(&l.m.rec[i], (uint32_t)i);
		fill(l.m.rec[i].comm, sizeof(l.m.rec[i].comm));
		fill(l.m.rec[i].device, sizeof(l.m.rec[i].device));
		fill(l.m.rec[i].backend, sizeof(l.m.rec[i].backend));
	}
	seed("list_reply_full_strings", IPC_LIST_REPLY, IPC_FROM_DAEMON, &l.m, sizeof(l.m));
}

int main(int argc, char **argv)
{
	struct ipc_hello hello = { .role = IPC_ROLE_AGENT, .comm = "app" };
	struct ipc_hello_reply hello_reply = { .client_id = 7, .nslots = 64,
					       .shm_size = 64 + 64 * 128 };
	struct ipc_register reg = {
		.slot = 3, .level = 2, .level_max = 3,
		.hint_set = 1u << IPC_KEY_PRIORITY | 1u << IPC_KEY_DEADLINE_US,
		.hint = { [IPC_KEY_PRIORITY] = 10, [IPC_KEY_DEADLINE_US] = 5000 },
		.device = "sim:xsched-sim0", .backend = "sim",
		.threshold = XS_DEFAULT_THRESHOLD, .batch = XS_DEFAULT_BATCH,
		.budget_ns = XS_DEFAULT_BUDGET_NS,
	};
	struct ipc_registered registered = { .queue_id = 42, .slot = 3,
					     .hint = { [IPC_KEY_PRIORITY] = 10 } };
	struct ipc_unregister unreg = { .slot = 3 };
	struct ipc_set_hint hint = { .slot = 3, .key = IPC_KEY_SHARE, .value = 300 };
	struct ipc_queue_level level = { .slot = 3, .level = 1,
					 .why = "kernel k not instrumented: called by another" };
	struct ipc_reply ok = { 0 }, err = { .status = -EPERM };
	struct ipc_list list = { 0 };
	struct ipc_ctl_set ctl_pid = { .target = IPC_TARGET_PID, .key = IPC_KEY_PRIORITY,
				       .id = 1234, .value = -5 };
	struct ipc_ctl_set ctl_knob = { .target = IPC_TARGET_QUEUE, .key = IPC_KEY_BUDGET_US,
					.id = 42, .value = -1 };
	struct ipc_policy policy = { .name = "hpf" };
	struct ipc_policy_reply policy_reply = { .name = "bandwidth" };
	struct ipc_status_reply status = { .version = IPC_VERSION, .clients = 2, .queues = 5,
					   .ready = 1, .uptime_ns = 1000000000, .decisions = 9,
					   .events = 20, .cpu_ns = 3000000, .policy = "edf" };

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_make_corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "fuzz_make_corpus: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	seed("hello_agent", IPC_HELLO, IPC_FROM_CLIENT, &hello, sizeof(hello));
	hello.role = IPC_ROLE_CTL;
	seed("hello_ctl", IPC_HELLO, IPC_FROM_CLIENT, &hello, sizeof(hello));
	seed("hello_reply", IPC_HELLO_REPLY, IPC_FROM_DAEMON, &hello_reply,
	     sizeof(hello_reply));
	seed("register", IPC_REGISTER, IPC_FROM_CLIENT, &reg, sizeof(reg));
	seed_identities(reg);
	seed("registered", IPC_REGISTERED, IPC_FROM_DAEMON, &registered, sizeof(registered));
	seed("unregister", IPC_UNREGISTER, IPC_FROM_CLIENT, &unreg, sizeof(unreg));
	seed("set_hint", IPC_SET_HINT, IPC_FROM_CLIENT, &hint, sizeof(hint));
	seed("queue_level", IPC_QUEUE_LEVEL, IPC_FROM_CLIENT, &level, sizeof(level));
	{
		struct ipc_mem_need need = { .index = 1, .bytes = 40ull << 20 };
		struct ipc_mem_evict evict = { .index = 2, .bytes = 40ull << 20 };
		struct ipc_mem_evicted evicted = { .freed = 42ll << 20 };
		struct ipc_mem_restored restored = { .status = -ENOMEM };

		seed("mem_need", IPC_MEM_NEED, IPC_FROM_CLIENT, &need, sizeof(need));
		seed("mem_evict", IPC_MEM_EVICT, IPC_FROM_DAEMON, &evict, sizeof(evict));
		seed("mem_evicted", IPC_MEM_EVICTED, IPC_FROM_CLIENT, &evicted, sizeof(evicted));
		seed("mem_restore", IPC_MEM_RESTORE, IPC_FROM_DAEMON, &evict, sizeof(evict));
		seed("mem_restored", IPC_MEM_RESTORED, IPC_FROM_CLIENT, &restored,
		     sizeof(restored));
	}
	{
		struct ipc_floor floor = { .domain = 3, .table = 1, .page = 2, .writable = 1 };

		seed("floor", IPC_FLOOR, IPC_FROM_DAEMON, &floor, sizeof(floor));
	}
	{
		struct ipc_heatmap heat = { .kind = IPC_HEAT_QUEUE, .id = 7,
					    .window_ns = 10000000, .last_ns = 30000000000ull };
		struct {
			struct ipc_heat_reply h;
			struct ipc_heat_cell c[2];
		} cells = { { IPC_F_LAST, IPC_HEAT_CELL, 2 }, { { 0, 3, 5, 17 }, { 0, 4, 18, 1 } } };
		struct {
			struct ipc_heat_reply h;
			struct ipc_heat_meta m;
		} meta = { { 0, IPC_HEAT_META, 1 }, { .kind = IPC_HEAT_QUEUE, .nrows = 1, .ncols = 5,
						      .window_ns = 10000000, .base_ns = 10000000 } };

		seed("heatmap", IPC_HEATMAP, IPC_FROM_CLIENT, &heat, sizeof(heat));
		seed("heatmap_meta", IPC_HEATMAP_REPLY, IPC_FROM_DAEMON, &meta, sizeof(meta));
		seed("heatmap_cells", IPC_HEATMAP_REPLY, IPC_FROM_DAEMON, &cells, sizeof(cells));
	}
	seed("reply_ok", IPC_REPLY, IPC_FROM_DAEMON, &ok, sizeof(ok));
	seed("reply_err", IPC_REPLY, IPC_FROM_DAEMON, &err, sizeof(err));
	seed("list", IPC_LIST, IPC_FROM_CLIENT, &list, sizeof(list));
	seed_list_replies();
	seed("ctl_set_pid", IPC_CTL_SET, IPC_FROM_CLIENT, &ctl_pid, sizeof(ctl_pid));
	seed("ctl_set_knob", IPC_CTL_SET, IPC_FROM_CLIENT, &ctl_knob, sizeof(ctl_knob));
	seed("policy_get", IPC_POLICY_GET, IPC_FROM_CLIENT, NULL, 0);
	seed("policy_set", IPC_POLICY_SET, IPC_FROM_CLIENT, &policy, sizeof(policy));
	seed("policy_reply", IPC_POLICY_REPLY, IPC_FROM_DAEMON, &policy_reply,
	     sizeof(policy_reply));
	seed("status", IPC_STATUS, IPC_FROM_CLIENT, NULL, 0);
	seed("status_reply", IPC_STATUS_REPLY, IPC_FROM_DAEMON, &status, sizeof(status));
	seed("metrics", IPC_METRICS, IPC_FROM_CLIENT, NULL, 0);
	seed_text_replies();
	seed("devices", IPC_DEVICES, IPC_FROM_CLIENT, NULL, 0);
	seed_device_replies();
	seed("bypass", IPC_BYPASS, IPC_FROM_CLIENT, NULL, 0);
	seed_bypass_replies();
	seed_full_strings();
	seed_full_records();
	/* A type added to the ABI needs a seed here. */
	for (int t = 1; t < IPC_TYPE_MAX; t++) {
		if (!seeded[t]) {
			fprintf(stderr, "fuzz_make_corpus: no seed of message type %d\n", t);
			failed = 1;
		}
	}
	return failed;
}
