/*
 * Priority classes of the [cdi] section (see classes.h). Keys are parsed
 * one at a time, as config.c hands them over; a class exists from its
 * first key on, and a built-in class named again starts empty, so that
 * "class.low.share = 10" alone makes low a share class with no priority.
 */
#include "daemon/classes.h"
#include "base/size.h"
#include "ipc/ipc_abi.h"
#include "ipc/ipc_msg.h"
#include "xsched/xsched.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(XSD_CLASS_HINTS == IPC_HINT_KEYS, "one hint slot per key");

static const char *const hint_key[XSD_CLASS_HINTS] = {
	NULL, "priority", "share", "deadline_us", "laxity_us",
};

static void add_builtin(struct xsd_classes *k, const char *name, int64_t prio)
{
	struct xsd_class *c = &k->cls[k->n++];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->hint[IPC_KEY_PRIORITY] = prio;
	c->set = 1u << IPC_KEY_PRIORITY;
}

void xsd_classes_defaults(struct xsd_classes *k)
{
	memset(k, 0, sizeof(*k));
	add_builtin(k, "high", 10);
	add_builtin(k, "normal", 0);
	add_builtin(k, "low", -10);
	k->levels = true;
	k->level_lo = 0;
	k->level_hi = 10;
	strcpy(k->container_dir, "/opt/xsched/lib");
}

const char *xsd_class_name_problem(const char *name)
{
	size_t n = strlen(name), i;
	bool digits = true;

	if (n == 0)
		return "empty name";
	if (n >= XSD_CLASS_NAME_LEN)
		return "longer than 63 bytes";
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (!isascii(ch) || (!isalnum(ch) && ch != '-' && ch != '_' && ch != '.'))
			return "only letters, digits, '-', '_' and '.' may appear in a name";
		digits = digits && isdigit(ch);
	}
	if (!isalnum((unsigned char)name[0]) || !isalnum((unsigned char)name[n - 1]))
		return "a name begins and ends with a letter or digit";
	if (digits)
		return "names of digits only are the numeric levels";
	return NULL;
}

/* The class @name, created (or emptied, when built in) at its first key. */
static struct xsd_class *class_for_key(struct xsd_classes *k, const char *name)
{
	struct xsd_class *c;
	size_t i;

	for (i = 0; i < k->n; i++) {
		c = &k->cls[i];
		if (strcmp(c->name, name))
			continue;
		if (!c->configured) {
			memset(c->hint, 0, sizeof(c->hint));
			c->set = 0;
			c->configured = true;
		}
		return c;
	}
	if (k->n == XSD_CLASSES_MAX)
		return NULL;
	c = &k->cls[k->n++];
	memset(c, 0, sizeof(*c));
	strcpy(c->name, name);
	c->configured = true;
	return c;
}

/* "LO..HI" with 0 <= LO <= HI <= XS_PRIORITY_MAX, or "none". */
static int parse_levels(struct xsd_classes *k, const char *v, const char **why)
{
	long lo, hi;
	char *end;

	if (!strcmp(v, "none")) {
		k->levels = false;
		return 0;
	}
	*why = "expected LO..HI with 0 <= LO <= HI <= 100, or none";
	errno = 0;
	if (!isdigit((unsigned char)v[0]))
		return -EINVAL;
	lo = strtol(v, &end, 10);
	if (errno || strncmp(end, "..", 2) || !isdigit((unsigned char)end[2]))
		return -EINVAL;
	hi = strtol(end + 2, &end, 10);
	if (errno || *end || lo > hi || hi > XS_PRIORITY_MAX)
		return -EINVAL;
	k->levels = true;
	k->level_lo = (int32_t)lo;
	k->level_hi = (int32_t)hi;
	return 0;
}

static int set_dir(char *dst, const char *v, const char **why)
{
	size_t n = strlen(v);

	if (n == 0) {
		dst[0] = '\0';         /* unset */
		return 0;
	}
	if (v[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	if (n >= XSD_CDI_PATH_LEN) {
		*why = "longer than 255 bytes";
		return -EINVAL;
	}
	if (strpbrk(v, ": \t\n")) {
		*why = "LD_PRELOAD cannot hold a path with ':' or blanks";
		return -EINVAL;
	}
	memcpy(dst, v, n + 1);
	while (n > 1 && dst[n - 1] == '/')
		dst[--n] = '\0';
	return 0;
}

int xsd_classes_key(struct xsd_classes *k, const char *name, const char *v, const char **why)
{
	char cname[XSD_CLASS_NAME_LEN];
	const char *dot, *problem;
	struct xsd_class *c;
	long long x;
	char *end;
	int key;

	if (!strcmp(name, "levels"))
		return parse_levels(k, v, why);
	if (!strcmp(name, "shim_dir"))
		return set_dir(k->shim_dir, v, why);
	if (!strcmp(name, "container_dir"))
		return set_dir(k->container_dir, v, why);
	if (strncmp(name, "class.", 6) || !(dot = strrchr(name + 6, '.')))
		return -ENOENT;
	for (key = IPC_KEY_PRIORITY; key < XSD_CLASS_HINTS; key++)
		if (!strcmp(dot + 1, hint_key[key]))
			break;
	if (key == XSD_CLASS_HINTS && strcmp(dot + 1, "memory_limit"))
		return -ENOENT;
	if ((size_t)(dot - (name + 6)) >= sizeof(cname)) {
		*why = "class name longer than 63 bytes";
		return -EINVAL;
	}
	memcpy(cname, name + 6, (size_t)(dot - (name + 6)));
	cname[dot - (name + 6)] = '\0';
	problem = xsd_class_name_problem(cname);
	if (problem) {
		*why = problem;
		return -EINVAL;
	}
	if (key == XSD_CLASS_HINTS) {
		uint64_t bytes;

		if (size_parse(v, &bytes) < 0 || !bytes || bytes > INT64_MAX) {
			*why = "expected a size above zero (e.g. 8G, 512MiB)";
			return -EINVAL;
		}
		c = class_for_key(k, cname);
		if (!c) {
			*why = "too many classes (at most 32)";
			return -ENOSPC;
		}
		c->memory_limit = bytes;
		return 0;
	}
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || !ipc_hint_valid((uint32_t)key, x)) {
		*why = key == IPC_KEY_PRIORITY ? "expected a priority in -100..100" :
		       key == IPC_KEY_SHARE ? "expected a share in 0..1000000" :
					      "expected microseconds in 0..3600000000";
		return -EINVAL;
	}
	c = class_for_key(k, cname);
	if (!c) {
		*why = "too many classes (at most 32)";
		return -ENOSPC;
	}
	c->hint[key] = x;
	c->set |= 1u << key;
	return 0;
}
