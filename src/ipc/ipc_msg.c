/*
 * IPC packet validation and building (see ipc_msg.h). One table gives each
 * type's direction and body size; per-type checks then cover field ranges.
 */
#include "ipc/ipc_msg.h"
#include "base/devid.h"
#include "xsched/xsched.h"

#include <errno.h>
#include <string.h>

struct ipc_type_info {
	uint8_t dir;            /* enum ipc_dir */
	uint8_t variable;       /* body is a fixed part plus an array/text */
	uint16_t size;          /* body size, or its fixed part */
};

static const struct ipc_type_info ipc_types[IPC_TYPE_MAX] = {
	[IPC_HELLO] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_hello) },
	[IPC_HELLO_REPLY] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_hello_reply) },
	[IPC_REGISTER] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_register) },
	[IPC_REGISTERED] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_registered) },
	[IPC_UNREGISTER] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_unregister) },
	[IPC_SET_HINT] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_set_hint) },
	[IPC_REPLY] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_reply) },
	[IPC_LIST] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_list) },
	[IPC_LIST_REPLY] = { IPC_FROM_DAEMON, 1, sizeof(struct ipc_list_reply) },
	[IPC_CTL_SET] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_ctl_set) },
	[IPC_POLICY_GET] = { IPC_FROM_CLIENT, 0, 0 },
	[IPC_POLICY_SET] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_policy) },
	[IPC_POLICY_REPLY] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_policy_reply) },
	[IPC_STATUS] = { IPC_FROM_CLIENT, 0, 0 },
	[IPC_STATUS_REPLY] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_status_reply) },
	[IPC_METRICS] = { IPC_FROM_CLIENT, 0, 0 },
	[IPC_TEXT_REPLY] = { IPC_FROM_DAEMON, 1, sizeof(struct ipc_text_reply) },
	[IPC_DEVICES] = { IPC_FROM_CLIENT, 0, 0 },
	[IPC_DEVICES_REPLY] = { IPC_FROM_DAEMON, 1, sizeof(struct ipc_devices_reply) },
	[IPC_BYPASS] = { IPC_FROM_CLIENT, 0, 0 },
	[IPC_BYPASS_REPLY] = { IPC_FROM_DAEMON, 1, sizeof(struct ipc_bypass_reply) },
	[IPC_QUEUE_LEVEL] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_queue_level) },
	[IPC_MEM_NEED] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_mem_need) },
	[IPC_MEM_EVICT] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_mem_evict) },
	[IPC_MEM_EVICTED] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_mem_evicted) },
	[IPC_MEM_RESTORE] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_mem_evict) },
	[IPC_MEM_RESTORED] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_mem_restored) },
	[IPC_FLOOR] = { IPC_FROM_DAEMON, 0, sizeof(struct ipc_floor) },
	[IPC_HEATMAP] = { IPC_FROM_CLIENT, 0, sizeof(struct ipc_heatmap) },
	[IPC_HEATMAP_REPLY] = { IPC_FROM_DAEMON, 1, sizeof(struct ipc_heat_reply) },
};

/* Size of one record of heat map section @section; 0: no such section. */
size_t ipc_heat_rec_size(uint32_t section)
{
	switch (section) {
	case IPC_HEAT_META: return sizeof(struct ipc_heat_meta);
	case IPC_HEAT_ROW: return sizeof(struct ipc_heat_row);
	case IPC_HEAT_CELL:
	case IPC_HEAT_MARK: return sizeof(struct ipc_heat_cell);
	case IPC_HEAT_HOT: return sizeof(struct ipc_heat_hot);
	case IPC_HEAT_HOT_TASK: return sizeof(struct ipc_heat_task);
	default: return 0;
	}
}

bool ipc_str_valid(const char *s, size_t len)
{
	return s[0] != '\0' && memchr(s, '\0', len) != NULL;
}

static bool ipc_str_or_empty(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

bool ipc_hint_valid(uint32_t key, int64_t value)
{
	switch (key) {
	case IPC_KEY_PRIORITY:
		return value >= XS_PRIORITY_MIN && value <= XS_PRIORITY_MAX;
	case IPC_KEY_SHARE:
		return value >= 0 && value <= XS_SHARE_MAX;
	case IPC_KEY_DEADLINE_US:
	case IPC_KEY_LAXITY_US:
		return value >= 0 && value <= XS_TIME_HINT_MAX_US;
	default:
		return false;
	}
}

bool ipc_knob_valid(uint32_t key, int64_t value)
{
	switch (key) {
	case IPC_KEY_THRESHOLD:
	case IPC_KEY_BATCH:
		return value >= 1 && value <= XS_MAX_THRESHOLD;
	case IPC_KEY_BUDGET_US:
		return (value >= 1 && value <= 10 * 1000 * 1000) || value == -1;
	case IPC_KEY_LEVEL:
		return value >= 1 && value <= 3;
	case IPC_KEY_MEMORY_LIMIT:
		return value >= 0;
	default:
		return ipc_hint_valid(key, value);
	}
}

bool ipc_ident_valid(uint32_t kind, const char *ident, const char *pci)
{
	if (!ipc_str_or_empty(pci, IPC_PCI_LEN) || !ipc_str_or_empty(ident, IPC_IDENT_LEN) ||
	    (pci[0] && !devid_pci_valid(pci, IPC_PCI_LEN)))
		return false;
	switch (kind) {
	case IPC_ID_UNVERIFIED:
		return ident[0] == '\0' && pci[0] == '\0';
	case IPC_ID_PCI:
		return devid_pci_valid(ident, IPC_IDENT_LEN) && !strcmp(ident, pci);
	case IPC_ID_UUID:
		return devid_uuid_valid(ident, IPC_IDENT_LEN);
	default:
		return false;
	}
}

static bool ipc_register_valid(const struct ipc_register *r)
{
	uint32_t k;

	if (r->level < 1 || r->level > 3 || r->level_max < 1 || r->level_max > 3 ||
	    r->level > r->level_max)
		return false;
	if (r->hint_set & ~0x1eu)
		return false;
	for (k = IPC_KEY_PRIORITY; k < IPC_HINT_KEYS; k++)
		if (!ipc_hint_valid(k, r->hint[k]))
			return false;
	if (r->hint[0] != 0)
		return false;
	if (!ipc_str_valid(r->device, sizeof(r->device)) ||
	    !ipc_str_or_empty(r->backend, sizeof(r->backend)))
		return false;
	if (r->threshold < 1 || r->threshold > XS_MAX_THRESHOLD ||
	    r->batch < 1 || r->batch > r->threshold)
		return false;
	if (r->pad != 0 || !ipc_ident_valid(r->id_kind, r->ident, r->pci))
		return false;
	return r->budget_ns > 0 || r->budget_ns == XS_BUDGET_NONE;
}

/* Field checks of packets from clients. */
static bool ipc_client_body_valid(uint16_t type, const void *b)
{
	switch (type) {
	case IPC_HELLO: {
		const struct ipc_hello *h = b;

		return (h->role == IPC_ROLE_AGENT || h->role == IPC_ROLE_CTL ||
			h->role == IPC_ROLE_ENFORCE) &&
		       h->flags == 0 && ipc_str_or_empty(h->comm, sizeof(h->comm));
	}
	case IPC_REGISTER:
		return ipc_register_valid(b);
	case IPC_UNREGISTER:
		return ((const struct ipc_unregister *)b)->pad == 0;
	case IPC_SET_HINT: {
		const struct ipc_set_hint *h = b;

		return ipc_hint_valid(h->key, h->value);
	}
	case IPC_QUEUE_LEVEL: {
		const struct ipc_queue_level *l = b;

		return l->level >= 1 && l->level <= 3 && ipc_str_or_empty(l->why, sizeof(l->why));
	}
	case IPC_LIST: {
		const struct ipc_list *l = b;

		return l->flags == 0 && l->pad == 0;
	}
	case IPC_CTL_SET: {
		const struct ipc_ctl_set *c = b;

		return (c->target == IPC_TARGET_PID || c->target == IPC_TARGET_QUEUE) &&
		       ipc_knob_valid(c->key, c->value);
	}
	case IPC_POLICY_SET: {
		const struct ipc_policy *p = b;

		return ipc_str_valid(p->name, sizeof(p->name));
	}
	case IPC_HEATMAP: {
		const struct ipc_heatmap *h = b;

		return h->kind >= IPC_HEAT_CPU && h->kind <= IPC_HEAT_QUEUES && h->pad == 0;
	}
	case IPC_MEM_NEED: {
		const struct ipc_mem_need *n = b;

		return n->index < IPC_MEM_DEVICES && n->pad == 0 && n->bytes > 0;
	}
	case IPC_MEM_RESTORED: {
		const struct ipc_mem_restored *r = b;

		return r->pad == 0 && r->status <= 0;
	}
	default:
		return true;
	}
}

/* Field checks of packets from the daemon (variable parts included). */
static bool ipc_daemon_body_valid(uint16_t type, const void *b, size_t len)
{
	switch (type) {
	case IPC_LIST_REPLY: {
		const struct ipc_list_reply *l = b;
		const struct ipc_queue_rec *r = (const void *)(l + 1);
		uint32_t i;

		if ((l->flags & ~IPC_F_LAST) || l->count > IPC_LIST_PER_MSG ||
		    len != sizeof(*l) + (size_t)l->count * sizeof(*r))
			return false;
		for (i = 0; i < l->count; i++)
			if (!ipc_str_or_empty(r[i].comm, sizeof(r[i].comm)) ||
			    !ipc_str_or_empty(r[i].device, sizeof(r[i].device)) ||
			    !ipc_str_or_empty(r[i].backend, sizeof(r[i].backend)) ||
			    !ipc_str_or_empty(r[i].container, sizeof(r[i].container)) ||
			    !ipc_str_or_empty(r[i].level_why, sizeof(r[i].level_why)) ||
			    r[i].nspid < 0 || r[i].id_kind > IPC_ID_UUID)
				return false;
		return true;
	}
	case IPC_DEVICES_REPLY: {
		const struct ipc_devices_reply *l = b;
		const struct ipc_device_rec *r = (const void *)(l + 1);
		uint32_t i;

		if ((l->flags & ~IPC_F_LAST) || l->count > IPC_DEVICES_PER_MSG ||
		    len != sizeof(*l) + (size_t)l->count * sizeof(*r))
			return false;
		for (i = 0; i < l->count; i++)
			if (!ipc_ident_valid(r[i].id_kind, r[i].ident, r[i].pci) ||
			    !ipc_str_or_empty(r[i].name, sizeof(r[i].name)))
				return false;
		return true;
	}
	case IPC_BYPASS_REPLY: {
		const struct ipc_bypass_reply *l = b;
		const struct ipc_bypass_rec *r = (const void *)(l + 1);
		uint32_t i;

		if ((l->flags & ~IPC_F_LAST) || l->count > IPC_BYPASS_PER_MSG ||
		    len != sizeof(*l) + (size_t)l->count * sizeof(*r))
			return false;
		for (i = 0; i < l->count; i++)
			if (!ipc_str_or_empty(r[i].comm, sizeof(r[i].comm)) ||
			    !ipc_str_or_empty(r[i].what, sizeof(r[i].what)) ||
			    !ipc_str_or_empty(r[i].cgroup, sizeof(r[i].cgroup)) ||
			    r[i].state >= IPC_BYPASS_STATE_MAX)
				return false;
		return true;
	}
	case IPC_HEATMAP_REPLY: {
		const struct ipc_heat_reply *l = b;
		size_t size = ipc_heat_rec_size(l->section);

		/* (Strings and indexes are checked by the reader, which knows
		 * the rows.) */
		return (l->flags & ~IPC_F_LAST) == 0 && size &&
		       l->count <= (IPC_MSG_MAX - sizeof(struct ipc_hdr) - sizeof(*l)) / size &&
		       len == sizeof(*l) + (size_t)l->count * size;
	}
	case IPC_TEXT_REPLY: {
		const struct ipc_text_reply *t = b;

		return (t->flags & ~IPC_F_LAST) == 0 && len == sizeof(*t) + t->len;
	}
	case IPC_POLICY_REPLY: {
		const struct ipc_policy_reply *p = b;

		return ipc_str_or_empty(p->name, IPC_POLICY_LEN) &&
		       ipc_str_or_empty(p->error, IPC_REASON_LEN);
	}
	case IPC_STATUS_REPLY: {
		const struct ipc_status_reply *s = b;

		return ipc_str_or_empty(s->policy, IPC_POLICY_LEN) &&
		       ipc_str_or_empty(s->reload_error, IPC_REASON_LEN);
	}
	case IPC_REPLY: {
		const struct ipc_reply *r = b;

		return r->status <= 0 && r->why < IPC_WHY_MAX;
	}
	case IPC_FLOOR: {
		const struct ipc_floor *f = b;

		return f->table < IPC_FLOOR_DEVICES && f->page < IPC_FLOOR_PAGES &&
		       f->writable <= 1 && f->pad == 0;
	}
	default:
		return true;
	}
}

int ipc_decode(const void *buf, size_t len, enum ipc_dir dir, struct ipc_msg *out)
{
	const struct ipc_type_info *ti;
	struct ipc_hdr h;
	size_t body;

	if (!buf || !out || len < sizeof(h) || len > IPC_MSG_MAX)
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != IPC_MAGIC || h.len != len)
		return -EBADMSG;
	if (h.version != IPC_VERSION)
		return -EPROTO;
	if (h.type == 0 || h.type >= IPC_TYPE_MAX)
		return -EOPNOTSUPP;
	ti = &ipc_types[h.type];
	if (ti->dir != dir)
		return -EOPNOTSUPP;
	body = len - sizeof(h);
	if (ti->variable ? body < ti->size : body != ti->size)
		return -EBADMSG;
	if (dir == IPC_FROM_CLIENT ? !ipc_client_body_valid(h.type, (const char *)buf + sizeof(h)) :
	    !ipc_daemon_body_valid(h.type, (const char *)buf + sizeof(h), body))
		return -EBADMSG;
	out->hdr = h;
	out->body = (const char *)buf + sizeof(h);
	out->body_len = body;
	return 0;
}

int ipc_build(void *buf, size_t cap, uint16_t type, uint32_t seq,
	      const void *body, size_t body_len)
{
	struct ipc_hdr h = {
		.magic = IPC_MAGIC, .version = IPC_VERSION, .type = type, .seq = seq,
	};
	size_t len = sizeof(h) + body_len;

	if (len > cap || len > IPC_MSG_MAX)
		return -EMSGSIZE;
	h.len = (uint32_t)len;
	memcpy(buf, &h, sizeof(h));
	if (body_len)
		memcpy((char *)buf + sizeof(h), body, body_len);
	return (int)len;
}
