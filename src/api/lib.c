/*
 * libxsched.so: the public C API as a shared library. The code lives in the
 * core archive and the simulated XPU's (both linked whole); this unit only
 * anchors the target, and the version script keeps every symbol but xs_*
 * private.
 */
#include "xsched/xsched.h"
