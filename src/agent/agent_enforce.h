/*
 * Registration with the daemon's device gate ([enforce] devices; ipc_abi.h
 * "Device enforcement"): where the daemon enforces, the process must be
 * allowed before its driver first opens an accelerator's device node,
 * which may happen before main. The shims and libxsched call
 * agent_enforce_init() from a constructor.
 */
#ifndef XS_AGENT_ENFORCE_H
#define XS_AGENT_ENFORCE_H

/*
 * If "<client socket>.enforce" exists (the daemon enforces), registers
 * this process and waits for the daemon's answer (at most
 * AGENT_ENFORCE_WAIT_MS); a failure is said at warning level (XSCHED_LOG)
 * and the process runs on, its device opens then refused. Also arranges
 * that a child made by fork() registers itself the same way. Once per
 * process; never fails.
 */
void agent_enforce_init(void);

#endif
