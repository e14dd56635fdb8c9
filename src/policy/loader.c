/*
 * Loader of user policy modules: a shared object exporting XS_POLICY_ENTRY.
 *
 * The library is opened RTLD_NOW (an unresolved symbol fails the load, not
 * a later schedule() on the event loop) and RTLD_LOCAL (two modules may use
 * the same internal names). The table is checked once here, so the daemon
 * can call a loaded policy exactly like a built-in one. Being a library,
 * the loader reports only an errno; the daemon logs dlerror() itself.
 */
#include "policy/policy_builtin.h"

#include <dlfcn.h>
#include <errno.h>

/* Bytes of struct xs_policy_ops up to and including `schedule`. */
#define OPS_MIN_SIZE                                                          \
	(offsetof(struct xs_policy_ops, schedule) +                           \
	 sizeof(((struct xs_policy_ops *)0)->schedule))

/* 0 if @ops can be used, else the load error it gives. */
static int check_ops(const struct xs_policy_ops *ops)
{
	if (!ops)
		return -EPROTO;
	if (ops->version < 1 || ops->version > XS_POLICY_VERSION)
		return -EPROTO;
	if (ops->size < OPS_MIN_SIZE)
		return -EINVAL;
	if (!ops->name || !ops->name[0] || !ops->schedule)
		return -EINVAL;
	return 0;
}

int policy_load(const char *path, const struct xs_policy_ops **ops,
		    void **handle, uint32_t *version)
{
	const struct xs_policy_ops *table;
	xs_policy_entry_fn entry;
	void *h, *sym;
	int rc;

	if (!path || path[0] != '/' || !ops || !handle)
		return -EINVAL;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -ENOENT;
	sym = dlsym(h, XS_POLICY_ENTRY);
	if (!sym) {
		rc = -ENOEXEC;
		goto fail;
	}
	/* POSIX requires this conversion to work for dlsym() results. */
	entry = (xs_policy_entry_fn)sym;
	table = entry(XS_POLICY_VERSION);
	if (version)
		*version = table ? table->version : 0;
	rc = check_ops(table);
	if (rc)
		goto fail;
	*ops = table;
	*handle = h;
	return 0;
fail:
	dlclose(h);
	return rc;
}

void policy_unload(void *handle)
{
	if (handle)
		dlclose(handle);
}
