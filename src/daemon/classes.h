/*
 * Priority classes: named sets of scheduling hints ("high", "low", ...)
 * and a range of numeric levels, for the places where a workload is given
 * a class rather than a number: the CDI spec of `xschedctl cdi generate`
 * (one CDI device per class and level) and whatever else maps names to
 * hints. They are the [cdi] section of xschedd.conf, parsed with the rest
 * of the configuration so that `xschedd --check-config` checks them too;
 * the daemon itself does not use them.
 *
 * Built-in classes high (priority 10), normal (0) and low (-10) exist
 * unless the configuration defines a class of the same name, which then
 * replaces it whole. Fixed-size storage: a configuration is copied by
 * value on reload.
 */
#ifndef XSD_CLASSES_H
#define XSD_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XSD_CLASSES_MAX 32
#define XSD_CLASS_NAME_LEN 64           /* a name is at most 63 bytes */
#define XSD_CLASS_HINTS 5               /* by enum ipc_key 1..4, as IPC_HINT_KEYS */
#define XSD_CDI_PATH_LEN 256

struct xsd_class {
	char name[XSD_CLASS_NAME_LEN];
	int64_t hint[XSD_CLASS_HINTS];  /* by enum ipc_key 1..4 */
	uint32_t set;                   /* bit k: hint[k] given */
	uint64_t memory_limit;          /* XSCHED_MEMORY_LIMIT of its containers; 0: none */
	bool configured;                /* defined by the file (else built in) */
};

struct xsd_classes {
	struct xsd_class cls[XSD_CLASSES_MAX];
	size_t n;
	bool levels;                    /* numeric levels lo..hi exist */
	int32_t level_lo, level_hi;
	char shim_dir[XSD_CDI_PATH_LEN];      /* host directory of the shims; "": search */
	char container_dir[XSD_CDI_PATH_LEN]; /* where they appear in a container */
};

/* The built-in classes, levels 0..10, no shim directory, /opt/xsched/lib. */
void xsd_classes_defaults(struct xsd_classes *k);

/*
 * Applies the [cdi] key @name = @v: class.NAME.priority, .share,
 * .deadline_us, .laxity_us, .memory_limit (a size: the device memory a
 * container of the class may hold per device); levels = LO..HI or none; shim_dir;
 * container_dir. Returns 0, -ENOENT for an unknown key, -EINVAL for a bad
 * value or name (with *@why saying what was expected when not NULL),
 * -ENOSPC when XSD_CLASSES_MAX classes exist already.
 */
int xsd_classes_key(struct xsd_classes *k, const char *name, const char *v, const char **why);

/*
 * What is wrong with @name as a class name, or NULL. Names are CDI device
 * names (alphanumerics, '-', '_' and '.', beginning and ending with an
 * alphanumeric), at most 63 bytes, and not all digits (those name levels).
 */
const char *xsd_class_name_problem(const char *name);

#endif
