/*
 * Building and validating xsched IPC packets (ipc_abi.h).
 *
 * Every packet received from a peer goes through ipc_decode() before any
 * field is used: length, magic, version, a type allowed in that direction,
 * the exact body size for the type, and the range of every field. The
 * daemon treats a decode error as a malformed client (error reply or
 * disconnect of that client only); it is the surface the fuzz target
 * exercises.
 */
#ifndef XS_IPC_MSG_H
#define XS_IPC_MSG_H

#include "ipc/ipc_abi.h"

#include <stdbool.h>
#include <stddef.h>

enum ipc_dir {
	IPC_FROM_CLIENT = 1,    /* decoded by the daemon */
	IPC_FROM_DAEMON = 2,    /* decoded by agents and xschedctl */
};

/* A decoded packet; pointers point into the caller's buffer. */
struct ipc_msg {
	struct ipc_hdr hdr;
	const void *body;
	size_t body_len;
};

/*
 * Validates the packet @buf of @len bytes from direction @dir and fills
 * @out. @buf must be 8-byte aligned. Returns 0, -EBADMSG (malformed:
 * length, magic, field out of range, missing NUL), -EPROTO (other
 * version), -EOPNOTSUPP (unknown type or not allowed in @dir).
 */
int ipc_decode(const void *buf, size_t len, enum ipc_dir dir, struct ipc_msg *out);

/*
 * Writes a packet of @type with @body (@body_len bytes, may be 0) into
 * @buf (8-byte aligned, @cap bytes). Returns the packet length, or
 * -EMSGSIZE if it does not fit in @cap or IPC_MSG_MAX.
 */
int ipc_build(void *buf, size_t cap, uint16_t type, uint32_t seq,
	      const void *body, size_t body_len);

/* Range checks shared with the daemon and the CLI. */
bool ipc_hint_valid(uint32_t key, int64_t value);
bool ipc_knob_valid(uint32_t key, int64_t value);

/*
 * True if @ident (IPC_IDENT_LEN bytes) and @pci (IPC_PCI_LEN bytes) are a
 * valid identity of kind @kind (enum ipc_id_kind): canonical texts, both
 * empty when unverified, @ident equal to @pci for a PCI identity.
 */
bool ipc_ident_valid(uint32_t kind, const char *ident, const char *pci);

/* True if the NUL-terminated string fits in @len bytes and is not empty. */
bool ipc_str_valid(const char *s, size_t len);
/* Size of one record of heat map section @section (enum ipc_heat_section);
 * 0: no such section. */
size_t ipc_heat_rec_size(uint32_t section);

#endif
