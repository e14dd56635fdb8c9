/*
 * libxsched.so: the public C API as a shared library. The code lives in the
 * core archive and the simulated XPU's (both linked whole); this unit only
 * anchors the target, and the version script keeps every symbol but xs_*
 * private.
 */
#include "xsched/xsched.h"
#include "agent/agent_enforce.h"

/* Before main: where xschedd enforces device access, an application of the
 * C API registers (agent_enforce.h), as the shims do. */
__attribute__((constructor)) static void xs_lib_enforce_init(void)
{
	agent_enforce_init();
}
