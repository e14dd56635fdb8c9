/*
 * xschedctl bypass: the processes on the node that use an accelerator
 * without xsched, as the daemon's bypass detector sees them ([observe]
 * bypass = yes; src/daemon/observe.c), and those its device gate refused,
 * would refuse (audit) or found holding a device when it started
 * ([enforce] devices; src/daemon/enforce.c), with their refused opens. By
 * default only those; --all adds the detector's processes within their
 * grace period and the scheduled ones.
 * Through the client socket only the caller's own processes are listed.
 *
 * When the detector is not running, the daemon says why with the reply's
 * errno and this verb turns it into a sentence (exit 1).
 */
#include "xschedctl.h"
#include "base/compiler.h"
#include "bpf/xbpf_abi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { CTL_OPT_ALL = CTL_OPT_VERB };

static const struct ctl_opt ctl_bypass_opts[] = {
	CTL_COMMON_OPTS,
	{ "output", 'o', true, CTL_OPT_OUTPUT },
	{ "all", 'a', false, CTL_OPT_ALL },
	{ NULL, 0, false, 0 },
};

static const char *const ctl_bypass_states[] = {
	[IPC_BYPASS_PENDING] = "pending",
	[IPC_BYPASS_YES] = "bypass",
	[IPC_BYPASS_REGISTERED] = "scheduled",
	[IPC_BYPASS_DENIED] = "denied",
	[IPC_BYPASS_AUDIT] = "would-deny",
	[IPC_BYPASS_HELD] = "held",
};

static const struct { uint32_t bit; const char *name; } ctl_uses[] = {
	{ XBPF_USE_NVIDIA, "nvidia" }, { XBPF_USE_DRI, "dri" }, { XBPF_USE_ACCEL, "accel" },
	{ XBPF_USE_KFD, "kfd" }, { XBPF_USE_CUDA, "cuda" }, { XBPF_USE_OPENCL, "opencl" },
	{ XBPF_USE_LEVELZERO, "levelzero" },
};

static int ctl_cmp_pid(const void *pa, const void *pb)
{
	const struct ipc_bypass_rec *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static char *ctl_uses_text(char *buf, size_t len, uint32_t uses)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(ctl_uses); i++)
		if ((uses & ctl_uses[i].bit) && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "",
					      ctl_uses[i].name);
	return buf;
}

static void ctl_bypass_json(const struct ipc_bypass_rec *r, size_t n)
{
	struct ctl_json j;
	size_t i, k;

	ctl_json_init(&j, stdout);
	ctl_json_open(&j, NULL, '{');
	ctl_json_open(&j, "processes", '[');
	for (i = 0; i < n; i++) {
		ctl_json_open(&j, NULL, '{');
		ctl_json_int(&j, "pid", r[i].pid);
		ctl_json_uint(&j, "uid", r[i].uid);
		ctl_json_str(&j, "command", r[i].comm, sizeof(r[i].comm));
		ctl_json_str(&j, "state", ctl_bypass_states[r[i].state], 16);
		ctl_json_str(&j, "cgroup", r[i].cgroup, sizeof(r[i].cgroup));
		ctl_json_uint(&j, "cgroup_id", r[i].cgroup_id);
		ctl_json_open(&j, "uses", '[');
		for (k = 0; k < ARRAY_SIZE(ctl_uses); k++)
			if (r[i].uses & ctl_uses[k].bit)
				ctl_json_str(&j, NULL, ctl_uses[k].name, 16);
		ctl_json_close(&j, ']');
		ctl_json_str(&j, "first_use", r[i].what, sizeof(r[i].what));
		ctl_json_double(&j, "seen_for_s", (double)r[i].age_ns / 1e9, 3);
		ctl_json_uint(&j, "start_boottime_ns", r[i].start_ns);
		ctl_json_uint(&j, "denied", r[i].denied);
		ctl_json_close(&j, '}');
	}
	ctl_json_close(&j, ']');
	ctl_json_close(&j, '}');
}

static int ctl_bypass_table(const struct ipc_bypass_rec *r, size_t n, bool all)
{
	static const char *const head[] = { "PID", "UID", "COMMAND", "STATE", "DENIED", "USES",
					    "FIRST USE", "SEEN FOR", "CGROUP" };
	struct ctl_table t;
	char buf[160];
	size_t i;

	if (n == 0) {
		printf(all ? "No process seen using an accelerator.\n" :
		       "No process uses an accelerator without xsched, or was refused one.\n");
		return 0;
	}
	ctl_table_init(&t, ARRAY_SIZE(head), head, 0x93);
	for (i = 0; i < n; i++) {
		if (!ctl_table_row(&t)) {
			ctl_table_fini(&t);
			return -ENOMEM;
		}
		ctl_table_cell(&t, 0, "%d", r[i].pid);
		ctl_table_cell(&t, 1, "%u", r[i].uid);
		ctl_table_cell(&t, 2, "%s", ctl_fmt_name(buf, sizeof(buf), r[i].comm,
							 sizeof(r[i].comm)));
		ctl_table_cell(&t, 3, "%s", ctl_bypass_states[r[i].state]);
		ctl_table_cell(&t, 4, "%llu", (unsigned long long)r[i].denied);
		ctl_table_cell(&t, 5, "%s", r[i].uses ? ctl_uses_text(buf, sizeof(buf), r[i].uses) :
			       "-");
		ctl_table_cell(&t, 6, "%s", ctl_fmt_name(buf, sizeof(buf), r[i].what,
							 sizeof(r[i].what)));
		ctl_table_cell(&t, 7, "%s", ctl_fmt_ns(buf, sizeof(buf), r[i].age_ns, false));
		ctl_table_cell(&t, 8, "%s", r[i].cgroup[0] ?
			       ctl_fmt_name(buf, sizeof(buf), r[i].cgroup, sizeof(r[i].cgroup)) : "-");
	}
	ctl_table_print(&t, stdout);
	ctl_table_fini(&t);
	return 0;
}

int ctl_bypass(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ctl_args a = { .argc = argc, .argv = argv, .i = 1, .verb = v };
	struct ipc_bypass_rec *recs = NULL;
	struct ipc_client c;
	size_t n = 0, i, kept = 0;
	bool all = false;
	const char *val;
	int id, rc;

	while ((id = ctl_next(&a, ctl_bypass_opts, &val)) != CTL_OPT_END) {
		switch (id) {
		case CTL_OPT_ALL:
			all = true;
			break;
		default:
			rc = ctl_verb_opt(ctl, &a, id, val);
			if (rc >= 0)
				return rc;
		}
	}
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_bypass(&c, &recs, &n);
	if (rc == -ENODEV || rc == -EOPNOTSUPP || rc == -ECANCELED) {
		ctl_err(ctl, "%s", rc == -ENODEV ?
			"bypass detection and device enforcement are off: set [observe] bypass = "
			"yes or [enforce] devices = audit in xschedd.conf" :
			rc == -EOPNOTSUPP ?
			"xschedd was built without eBPF support: no bypass detection or device "
			"enforcement" :
			"the bypass detector or the device gate could not load its eBPF programs "
			"(xschedd's log says why)");
		ipc_client_close(&c);
		return CTL_EXIT_ERROR;
	}
	if (rc < 0) {
		rc = ctl_fail(ctl, &c, rc, "cannot list processes");
		ipc_client_close(&c);
		return rc;
	}
	ipc_client_close(&c);
	for (i = 0; i < n; i++)
		if (all || (recs[i].state != IPC_BYPASS_PENDING &&
			    recs[i].state != IPC_BYPASS_REGISTERED))
			recs[kept++] = recs[i];
	qsort(recs, kept, sizeof(*recs), ctl_cmp_pid);
	if (ctl->out == CTL_OUT_JSON)
		ctl_bypass_json(recs, kept);
	else
		rc = ctl_bypass_table(recs, kept, all);
	free(recs);
	return rc < 0 ? ctl_fail(ctl, NULL, rc, "cannot print") : CTL_EXIT_OK;
}
