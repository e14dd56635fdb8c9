/*
 * libFuzzer target for ipc_decode(), the code a malicious client reaches
 * first: every packet the daemon (and every reply an agent or xschedctl)
 * receives goes through it before any field is used.
 *
 * Each input is decoded as a packet from a client and as one from the
 * daemon. The checks below restate the decoder's contract (ipc_msg.h,
 * ipc_abi.h) independently of its tables, so a packet it accepts but should
 * not, or a body it describes wrongly, traps: lengths agree with the
 * header, variable replies fit exactly, strings the decoder vouches for
 * end inside their arrays, fields are in range, a type is accepted in one
 * direction only, and ipc_build() of the decoded body gives back the same
 * bytes, which decode identically.
 *
 * The input is copied into a heap buffer of exactly its size (malloc()
 * aligns to 16, the decoder needs 8), so AddressSanitizer sees any read
 * past the packet, by the decoder or by these checks.
 */
#include "ipc/ipc_msg.h"
#include "xsched/xsched.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                      \
	do {                                                             \
		if (!(cond))                                             \
			__builtin_trap();                                \
	} while (0)

/* The expected body of each type, written out again on purpose (an oracle
 * must not share the decoder's table). */
struct fz_type {
	enum ipc_dir dir;
	bool variable;          /* fixed part followed by an array or text */
	size_t size;            /* body size, or its fixed part */
};

static bool fz_type(uint16_t type, struct fz_type *t)
{
	switch (type) {
#define T(type_, dir_, var_, size_) \
	case type_: *t = (struct fz_type){ dir_, var_, size_ }; return true;
	T(IPC_HELLO, IPC_FROM_CLIENT, false, sizeof(struct ipc_hello))
	T(IPC_HELLO_REPLY, IPC_FROM_DAEMON, false, sizeof(struct ipc_hello_reply))
	T(IPC_REGISTER, IPC_FROM_CLIENT, false, sizeof(struct ipc_register))
	T(IPC_REGISTERED, IPC_FROM_DAEMON, false, sizeof(struct ipc_registered))
	T(IPC_UNREGISTER, IPC_FROM_CLIENT, false, sizeof(struct ipc_unregister))
	T(IPC_SET_HINT, IPC_FROM_CLIENT, false, sizeof(struct ipc_set_hint))
	T(IPC_REPLY, IPC_FROM_DAEMON, false, sizeof(struct ipc_reply))
	T(IPC_LIST, IPC_FROM_CLIENT, false, sizeof(struct ipc_list))
	T(IPC_LIST_REPLY, IPC_FROM_DAEMON, true, sizeof(struct ipc_list_reply))
	T(IPC_CTL_SET, IPC_FROM_CLIENT, false, sizeof(struct ipc_ctl_set))
	T(IPC_POLICY_GET, IPC_FROM_CLIENT, false, 0)
	T(IPC_POLICY_SET, IPC_FROM_CLIENT, false, sizeof(struct ipc_policy))
	T(IPC_POLICY_REPLY, IPC_FROM_DAEMON, false, sizeof(struct ipc_policy_reply))
	T(IPC_STATUS, IPC_FROM_CLIENT, false, 0)
	T(IPC_STATUS_REPLY, IPC_FROM_DAEMON, false, sizeof(struct ipc_status_reply))
	T(IPC_METRICS, IPC_FROM_CLIENT, false, 0)
	T(IPC_TEXT_REPLY, IPC_FROM_DAEMON, true, sizeof(struct ipc_text_reply))
	T(IPC_DEVICES, IPC_FROM_CLIENT, false, 0)
	T(IPC_DEVICES_REPLY, IPC_FROM_DAEMON, true, sizeof(struct ipc_devices_reply))
	T(IPC_BYPASS, IPC_FROM_CLIENT, false, 0)
	T(IPC_BYPASS_REPLY, IPC_FROM_DAEMON, true, sizeof(struct ipc_bypass_reply))
	T(IPC_QUEUE_LEVEL, IPC_FROM_CLIENT, false, sizeof(struct ipc_queue_level))
	T(IPC_MEM_NEED, IPC_FROM_CLIENT, false, sizeof(struct ipc_mem_need))
	T(IPC_MEM_EVICT, IPC_FROM_DAEMON, false, sizeof(struct ipc_mem_evict))
	T(IPC_MEM_EVICTED, IPC_FROM_CLIENT, false, sizeof(struct ipc_mem_evicted))
	T(IPC_MEM_RESTORE, IPC_FROM_DAEMON, false, sizeof(struct ipc_mem_evict))
	T(IPC_MEM_RESTORED, IPC_FROM_CLIENT, false, sizeof(struct ipc_mem_restored))
	T(IPC_FLOOR, IPC_FROM_DAEMON, false, sizeof(struct ipc_floor))
	T(IPC_HEATMAP, IPC_FROM_CLIENT, false, sizeof(struct ipc_heatmap))
	T(IPC_HEATMAP_REPLY, IPC_FROM_DAEMON, true, sizeof(struct ipc_heat_reply))
#undef T
	default:
		return false;
	}
}

/* A NUL inside the array (the string cannot run past it). */
static bool fz_terminated(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

static bool fz_hint_ok(uint32_t key, int64_t v)
{
	switch (key) {
	case IPC_KEY_PRIORITY:
		return v >= XS_PRIORITY_MIN && v <= XS_PRIORITY_MAX;
	case IPC_KEY_SHARE:
		return v >= 0 && v <= XS_SHARE_MAX;
	case IPC_KEY_DEADLINE_US:
	case IPC_KEY_LAXITY_US:
		return v >= 0 && v <= XS_TIME_HINT_MAX_US;
	default:
		return false;
	}
}

static bool fz_knob_ok(uint32_t key, int64_t v)
{
	switch (key) {
	case IPC_KEY_THRESHOLD:
	case IPC_KEY_BATCH:
		return v >= 1 && v <= XS_MAX_THRESHOLD;
	case IPC_KEY_BUDGET_US:
		return (v >= 1 && v <= 10000000) || v == -1;
	case IPC_KEY_LEVEL:
		return v >= 1 && v <= 3;
	case IPC_KEY_MEMORY_LIMIT:
		return v >= 0;
	default:
		return fz_hint_ok(key, v);
	}
}

static void fz_check_register(const struct ipc_register *r)
{
	uint32_t k;

	CHECK(r->level >= 1 && r->level <= r->level_max && r->level_max <= 3);
	CHECK((r->hint_set & ~0x1eu) == 0 && r->hint[0] == 0);
	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++)
		CHECK(fz_hint_ok(k, r->hint[k]));
	CHECK(r->device[0] != '\0' && fz_terminated(r->device, sizeof(r->device)));
	CHECK(fz_terminated(r->backend, sizeof(r->backend)));
	CHECK(r->threshold >= 1 && r->threshold <= XS_MAX_THRESHOLD);
	CHECK(r->batch >= 1 && r->batch <= r->threshold);
	CHECK(r->budget_ns > 0 || r->budget_ns == XS_BUDGET_NONE);
}

/* The records of a list reply fill the packet exactly, and their strings
 * end inside their arrays (xschedctl prints them). */
static void fz_check_records(const struct ipc_list_reply *l, size_t body_len)
{
	const struct ipc_queue_rec *rec = (const void *)(l + 1);
	uint32_t i;

	CHECK((l->flags & ~IPC_F_LAST) == 0 && l->count <= IPC_LIST_PER_MSG);
	CHECK(body_len == sizeof(*l) + (size_t)l->count * sizeof(*rec));
	for (i = 0; i < l->count; i++) {
		CHECK(fz_terminated(rec[i].comm, sizeof(rec[i].comm)));
		CHECK(fz_terminated(rec[i].device, sizeof(rec[i].device)));
		CHECK(fz_terminated(rec[i].backend, sizeof(rec[i].backend)));
		CHECK(fz_terminated(rec[i].container, sizeof(rec[i].container)));
		CHECK(fz_terminated(rec[i].level_why, sizeof(rec[i].level_why)));
		CHECK(rec[i].nspid >= 0);
	}
}

/* Bypass records: the count fills the body, states known, texts end inside
 * their arrays (xschedctl prints them). */
static void fz_check_bypass(const struct ipc_bypass_reply *l, size_t body_len)
{
	const struct ipc_bypass_rec *rec = (const void *)(l + 1);
	uint32_t i;

	CHECK((l->flags & ~IPC_F_LAST) == 0 && l->count <= IPC_BYPASS_PER_MSG);
	CHECK(body_len == sizeof(*l) + (size_t)l->count * sizeof(*rec));
	for (i = 0; i < l->count; i++) {
		CHECK(rec[i].state < IPC_BYPASS_STATE_MAX);
		CHECK(fz_terminated(rec[i].comm, sizeof(rec[i].comm)));
		CHECK(fz_terminated(rec[i].what, sizeof(rec[i].what)));
		CHECK(fz_terminated(rec[i].cgroup, sizeof(rec[i].cgroup)));
	}
}

/* Device records: the count fills the body; kinds known, texts terminated,
 * an identity only with a kind that has one. */
static void fz_check_devices(const struct ipc_devices_reply *l, size_t body_len)
{
	const struct ipc_device_rec *rec = (const void *)(l + 1);
	uint32_t i;

	CHECK((l->flags & ~IPC_F_LAST) == 0 && l->count <= IPC_DEVICES_PER_MSG);
	CHECK(body_len == sizeof(*l) + (size_t)l->count * sizeof(*rec));
	for (i = 0; i < l->count; i++) {
		CHECK(rec[i].id_kind <= IPC_ID_UUID);
		CHECK(fz_terminated(rec[i].ident, sizeof(rec[i].ident)));
		CHECK(fz_terminated(rec[i].pci, sizeof(rec[i].pci)));
		CHECK(fz_terminated(rec[i].name, sizeof(rec[i].name)));
		CHECK((rec[i].id_kind == IPC_ID_UNVERIFIED) == (rec[i].ident[0] == '\0'));
	}
}

/* The body of an accepted packet of @type: its fields and variable part. */
static void fz_check_body(uint16_t type, const void *b, size_t body_len)
{
	switch (type) {
	case IPC_HELLO: {
		const struct ipc_hello *h = b;

		CHECK(h->role == IPC_ROLE_AGENT || h->role == IPC_ROLE_CTL ||
		      h->role == IPC_ROLE_ENFORCE);
		CHECK(h->flags == 0 && fz_terminated(h->comm, sizeof(h->comm)));
		break;
	}
	case IPC_REGISTER:
		fz_check_register(b);
		break;
	case IPC_UNREGISTER:
		CHECK(((const struct ipc_unregister *)b)->pad == 0);
		break;
	case IPC_SET_HINT: {
		const struct ipc_set_hint *h = b;

		CHECK(fz_hint_ok(h->key, h->value));
		break;
	}
	case IPC_QUEUE_LEVEL: {
		const struct ipc_queue_level *l = b;

		CHECK(l->level >= 1 && l->level <= 3 && fz_terminated(l->why, sizeof(l->why)));
		break;
	}
	case IPC_LIST: {
		const struct ipc_list *l = b;

		CHECK(l->flags == 0 && l->pad == 0);
		break;
	}
	case IPC_CTL_SET: {
		const struct ipc_ctl_set *c = b;

		CHECK(c->target == IPC_TARGET_PID || c->target == IPC_TARGET_QUEUE);
		CHECK(c->key >= IPC_KEY_PRIORITY && c->key < IPC_KEY_MAX);
		CHECK(fz_knob_ok(c->key, c->value));
		break;
	}
	case IPC_POLICY_SET: {
		const struct ipc_policy *p = b;

		CHECK(p->name[0] != '\0' && fz_terminated(p->name, sizeof(p->name)));
		break;
	}
	case IPC_MEM_NEED: {
		const struct ipc_mem_need *n = b;

		CHECK(n->index < IPC_MEM_DEVICES && n->pad == 0 && n->bytes > 0);
		break;
	}
	case IPC_MEM_RESTORED: {
		const struct ipc_mem_restored *r = b;

		CHECK(r->pad == 0 && r->status <= 0);
		break;
	}
	case IPC_REPLY:
		CHECK(((const struct ipc_reply *)b)->status <= 0);
		break;
	case IPC_FLOOR: {
		const struct ipc_floor *f = b;

		CHECK(f->table < IPC_FLOOR_DEVICES && f->page < IPC_FLOOR_PAGES &&
		      f->writable <= 1 && f->pad == 0);
		break;
	}
	case IPC_HEATMAP: {
		const struct ipc_heatmap *h = b;

		CHECK(h->kind >= IPC_HEAT_CPU && h->kind <= IPC_HEAT_QUEUES && h->pad == 0);
		break;
	}
	case IPC_HEATMAP_REPLY: {
		const struct ipc_heat_reply *h = b;
		size_t size = ipc_heat_rec_size(h->section);

		CHECK(size && (h->flags & ~IPC_F_LAST) == 0);
		CHECK(body_len == sizeof(*h) + (size_t)h->count * size);
		break;
	}
	case IPC_LIST_REPLY:
		fz_check_records(b, body_len);
		break;
	case IPC_DEVICES_REPLY:
		fz_check_devices(b, body_len);
		break;
	case IPC_BYPASS_REPLY:
		fz_check_bypass(b, body_len);
		break;
	case IPC_TEXT_REPLY: {
		const struct ipc_text_reply *t = b;
		const unsigned char *text = (const void *)(t + 1);
		volatile unsigned sink = 0;

		CHECK((t->flags & ~IPC_F_LAST) == 0);
		CHECK(body_len == sizeof(*t) + (size_t)t->len);
		if (t->len)
			sink = text[0] + text[t->len - 1];
		(void)sink;
		break;
	}
	case IPC_POLICY_REPLY: {
		const struct ipc_policy_reply *p = b;

		CHECK(fz_terminated(p->name, sizeof(p->name)));
		break;
	}
	case IPC_STATUS_REPLY: {
		const struct ipc_status_reply *s = b;

		CHECK(fz_terminated(s->policy, sizeof(s->policy)));
		break;
	}
	default:
		break;
	}
}

/* Everything that must hold of a packet ipc_decode() accepted in @dir. */
static void fz_check_accepted(const uint8_t *buf, size_t len, enum ipc_dir dir,
			      const struct ipc_msg *m)
{
	struct ipc_hdr h;
	struct fz_type t;

	memcpy(&h, buf, sizeof(h));
	CHECK(len >= sizeof(h) && len <= IPC_MSG_MAX);
	CHECK(memcmp(&m->hdr, &h, sizeof(h)) == 0);
	CHECK(h.magic == IPC_MAGIC && h.version == IPC_VERSION && h.len == len);
	CHECK(fz_type(h.type, &t) && t.dir == dir);
	CHECK((const uint8_t *)m->body == buf + sizeof(h));
	CHECK(m->body_len == len - sizeof(h));
	CHECK(t.variable ? m->body_len >= t.size : m->body_len == t.size);
	fz_check_body(h.type, m->body, m->body_len);
}

/* ipc_build() of the decoded body is the same packet, decoded the same. */
static void fz_round_trip(const uint8_t *buf, size_t len, enum ipc_dir dir,
			  const struct ipc_msg *m)
{
	uint64_t out[IPC_MSG_MAX / 8];
	struct ipc_msg again;
	int n;

	CHECK(ipc_build(out, len - 1, m->hdr.type, m->hdr.seq, m->body, m->body_len) ==
	      -EMSGSIZE);
	n = ipc_build(out, sizeof(out), m->hdr.type, m->hdr.seq, m->body, m->body_len);
	CHECK(n >= 0 && (size_t)n == len && memcmp(out, buf, len) == 0);
	CHECK(ipc_decode(out, len, dir, &again) == 0);
	CHECK(memcmp(&again.hdr, &m->hdr, sizeof(again.hdr)) == 0);
	CHECK(again.body == (const char *)out + sizeof(struct ipc_hdr));
	CHECK(again.body_len == m->body_len);
	CHECK(memcmp(again.body, m->body, m->body_len) == 0);
}

static int fz_decode(const uint8_t *buf, size_t len, enum ipc_dir dir, struct ipc_msg *m)
{
	struct ipc_msg twice;
	int rc = ipc_decode(buf, len, dir, m), rc2;

	CHECK(rc == 0 || rc == -EBADMSG || rc == -EPROTO || rc == -EOPNOTSUPP);
	rc2 = ipc_decode(buf, len, dir, &twice);
	CHECK(rc2 == rc);
	if (rc == 0) {
		CHECK(memcmp(&twice.hdr, &m->hdr, sizeof(twice.hdr)) == 0);
		CHECK(twice.body == m->body && twice.body_len == m->body_len);
		fz_check_accepted(buf, len, dir, m);
		fz_round_trip(buf, len, dir, m);
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_msg mc, md;
	uint8_t *buf = malloc(size ? size : 1);
	int rc_c, rc_d;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	CHECK(((uintptr_t)buf & 7) == 0);
	rc_c = fz_decode(buf, size, IPC_FROM_CLIENT, &mc);
	rc_d = fz_decode(buf, size, IPC_FROM_DAEMON, &md);
	/* Every type has one direction. */
	CHECK(!(rc_c == 0 && rc_d == 0));
	if (rc_c == 0)
		CHECK(rc_d == -EOPNOTSUPP);
	if (rc_d == 0)
		CHECK(rc_c == -EOPNOTSUPP);
	free(buf);
	return 0;
}
