/*
 * The IPC packet validator, the daemon's configuration parser and its
 * systemd notify protocol, as units: valid packets of every type decode,
 * and each way a packet can be malformed is refused with the right error;
 * config files with unknown keys or bad values are refused with their line;
 * notify datagrams arrive as systemd expects them.
 */
#include "test_util.h"
#include "base/compiler.h"
#include "daemon/config.h"
#include "daemon/notify.h"
#include "ipc/ipc_msg.h"
#include "xsched/xsched.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/un.h>

union pkt {
	char b[IPC_MSG_MAX + 64];
	uint64_t align;
};

static int build(union pkt *p, uint16_t type, const void *body, size_t len)
{
	int n = ipc_build(p->b, sizeof(p->b), type, 7, body, len);

	assert_true(n > 0);
	return n;
}

static struct ipc_register good_register(void)
{
	struct ipc_register r = {
		.slot = 3, .level = 2, .level_max = 3, .hint_set = 1u << IPC_KEY_PRIORITY,
		.threshold = 16, .batch = 8, .budget_ns = 1000000,
	};

	r.hint[IPC_KEY_PRIORITY] = 5;
	strcpy(r.device, "sim:dev0");
	strcpy(r.backend, "sim");
	return r;
}

static void ipc_valid_packets_decode(void **state)
{
	struct ipc_hello h = { .role = IPC_ROLE_AGENT, .comm = "app" };
	struct ipc_register r = good_register();
	struct ipc_set_hint sh = { .slot = 1, .key = IPC_KEY_SHARE, .value = 75 };
	struct ipc_ctl_set cs = { .target = IPC_TARGET_PID, .key = IPC_KEY_BUDGET_US,
				  .id = 42, .value = -1 };
	struct ipc_policy pol = { .name = "bandwidth" };
	struct ipc_msg m;
	union pkt p;
	int n;

	(void)state;
	n = build(&p, IPC_HELLO, &h, sizeof(h));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), 0);
	assert_int_equal(m.hdr.type, IPC_HELLO);
	assert_int_equal(m.hdr.seq, 7);
	assert_int_equal(m.body_len, sizeof(h));
	n = build(&p, IPC_REGISTER, &r, sizeof(r));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), 0);
	n = build(&p, IPC_SET_HINT, &sh, sizeof(sh));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), 0);
	n = build(&p, IPC_CTL_SET, &cs, sizeof(cs));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), 0);
	n = build(&p, IPC_POLICY_SET, &pol, sizeof(pol));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), 0);
	n = build(&p, IPC_STATUS, NULL, 0);
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), 0);
	assert_int_equal(m.body_len, 0);
}

static void ipc_framing_errors(void **state)
{
	struct ipc_hello h = { .role = IPC_ROLE_CTL };
	struct ipc_hdr hdr;
	struct ipc_msg m;
	union pkt p;
	int n;

	(void)state;
	n = build(&p, IPC_HELLO, &h, sizeof(h));
	/* Length disagreeing with the header, short, or too long. */
	assert_int_equal(ipc_decode(p.b, (size_t)n - 1, IPC_FROM_CLIENT, &m), -EBADMSG);
	assert_int_equal(ipc_decode(p.b, 8, IPC_FROM_CLIENT, &m), -EBADMSG);
	assert_int_equal(ipc_decode(p.b, IPC_MSG_MAX + 1, IPC_FROM_CLIENT, &m), -EBADMSG);
	assert_int_equal(ipc_decode(NULL, 16, IPC_FROM_CLIENT, &m), -EBADMSG);
	memcpy(&hdr, p.b, sizeof(hdr));
	hdr.magic ^= 1;
	memcpy(p.b, &hdr, sizeof(hdr));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	hdr.magic ^= 1;
	hdr.version = IPC_VERSION + 1;
	memcpy(p.b, &hdr, sizeof(hdr));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EPROTO);
	hdr.version = IPC_VERSION;
	hdr.type = IPC_TYPE_MAX;
	memcpy(p.b, &hdr, sizeof(hdr));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EOPNOTSUPP);
	hdr.type = 0;
	memcpy(p.b, &hdr, sizeof(hdr));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EOPNOTSUPP);
	/* A daemon-only type from a client, and a client type with the wrong size. */
	n = build(&p, IPC_HELLO_REPLY, &h, 16);
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EOPNOTSUPP);
	n = build(&p, IPC_HELLO, &h, sizeof(h) - 4);
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	assert_int_equal(ipc_build(p.b, sizeof(p.b), IPC_HELLO, 1, p.b, IPC_MSG_MAX), -EMSGSIZE);
}

/* Decodes @r as a REGISTER from a client. */
static int decode_register(const struct ipc_register *r)
{
	struct ipc_msg m;
	union pkt p;
	int n = build(&p, IPC_REGISTER, r, sizeof(*r));

	return ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m);
}

static void ipc_register_fields_checked(void **state)
{
	struct ipc_register r;

	(void)state;
#define BAD(stmt)                                                    \
	do {                                                         \
		r = good_register();                                 \
		stmt;                                                \
		assert_int_equal(decode_register(&r), -EBADMSG);     \
	} while (0)
	BAD(r.level = 0);
	BAD(r.level = 4);
	BAD(r.level = 3; r.level_max = 2);
	BAD(r.hint_set = 1u << 7);
	BAD(r.hint[IPC_KEY_PRIORITY] = 101);
	BAD(r.hint[IPC_KEY_SHARE] = -1);
	BAD(r.hint[IPC_KEY_DEADLINE_US] = XS_TIME_HINT_MAX_US + 1);
	BAD(r.hint[0] = 1);
	BAD(memset(r.device, 'x', sizeof(r.device)));
	BAD(r.device[0] = '\0');
	BAD(memset(r.backend, 'x', sizeof(r.backend)));
	BAD(r.threshold = 0);
	BAD(r.threshold = XS_MAX_THRESHOLD + 1);
	BAD(r.batch = 17);
	BAD(r.budget_ns = 0);
	BAD(r.budget_ns = -7);
#undef BAD
	r = good_register();
	r.budget_ns = XS_BUDGET_NONE;
	assert_int_equal(decode_register(&r), 0);
}

static void ipc_other_fields_checked(void **state)
{
	struct ipc_hello h = { .role = 9 };
	struct ipc_set_hint sh = { .key = IPC_KEY_LEVEL, .value = 1 };
	struct ipc_ctl_set cs = { .target = 3, .key = IPC_KEY_PRIORITY };
	struct ipc_policy pol = { .name = "" };
	struct ipc_list l = { .flags = 1 };
	struct ipc_msg m;
	union pkt p;
	int n;

	(void)state;
	n = build(&p, IPC_HELLO, &h, sizeof(h));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	h.role = IPC_ROLE_CTL;
	memset(h.comm, 'a', sizeof(h.comm));
	n = build(&p, IPC_HELLO, &h, sizeof(h));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	/* Knobs are not hints. */
	n = build(&p, IPC_SET_HINT, &sh, sizeof(sh));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	n = build(&p, IPC_CTL_SET, &cs, sizeof(cs));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	cs.target = IPC_TARGET_QUEUE;
	cs.key = IPC_KEY_LEVEL;
	cs.value = 4;
	n = build(&p, IPC_CTL_SET, &cs, sizeof(cs));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	n = build(&p, IPC_POLICY_SET, &pol, sizeof(pol));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
	n = build(&p, IPC_LIST, &l, sizeof(l));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_CLIENT, &m), -EBADMSG);
}

static void ipc_daemon_replies_checked(void **state)
{
	union {
		struct {
			struct ipc_list_reply h;
			struct ipc_queue_rec rec[2];
		} m;
		uint64_t align;
	} lr = { .m.h = { .flags = IPC_F_LAST, .count = 2 } };
	struct {
		struct ipc_text_reply h;
		char text[8];
	} tr = { .h = { .flags = IPC_F_LAST, .len = 8 }, .text = "abcdefgh" };
	struct ipc_reply rep = { .status = 1 };
	struct ipc_msg m;
	union pkt p;
	int n;

	(void)state;
	n = build(&p, IPC_LIST_REPLY, &lr.m, sizeof(lr.m));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), 0);
	/* A count the packet does not hold. */
	lr.m.h.count = 3;
	n = build(&p, IPC_LIST_REPLY, &lr.m, sizeof(lr.m));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EBADMSG);
	n = build(&p, IPC_TEXT_REPLY, &tr, sizeof(tr));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), 0);
	tr.h.len = 9;
	n = build(&p, IPC_TEXT_REPLY, &tr, sizeof(tr));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EBADMSG);
	/* Bypass records: the count fills the packet, states are known. */
	{
		union {
			struct {
				struct ipc_bypass_reply h;
				struct ipc_bypass_rec rec[1];
			} m;
			uint64_t align;
		} br;

		memset(&br, 0, sizeof(br));
		br.m.h = (struct ipc_bypass_reply){ .flags = IPC_F_LAST, .count = 1 };
		br.m.rec[0].state = IPC_BYPASS_YES;
		n = build(&p, IPC_BYPASS_REPLY, &br.m, sizeof(br.m));
		assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), 0);
		br.m.rec[0].state = IPC_BYPASS_STATE_MAX;
		n = build(&p, IPC_BYPASS_REPLY, &br.m, sizeof(br.m));
		assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EBADMSG);
		br.m.rec[0].state = IPC_BYPASS_PENDING;
		memset(br.m.rec[0].cgroup, 'x', sizeof(br.m.rec[0].cgroup));
		n = build(&p, IPC_BYPASS_REPLY, &br.m, sizeof(br.m));
		assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EBADMSG);
		br.m.h.count = 2;
		memset(br.m.rec[0].cgroup, 0, sizeof(br.m.rec[0].cgroup));
		n = build(&p, IPC_BYPASS_REPLY, &br.m, sizeof(br.m));
		assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EBADMSG);
	}
	/* Replies carry 0 or a negative errno, nothing else. */
	n = build(&p, IPC_REPLY, &rep, sizeof(rep));
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EBADMSG);
	/* And a client request is not a reply. */
	n = build(&p, IPC_STATUS, NULL, 0);
	assert_int_equal(ipc_decode(p.b, (size_t)n, IPC_FROM_DAEMON, &m), -EOPNOTSUPP);
}

static const char *write_conf(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/xstest-conf-%d.ini", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void config_defaults_and_keys(void **state)
{
	struct xsd_config c;
	char err[256];
	const char *path = write_conf(
		"[daemon]\nsocket = /tmp/a.sock\nmax_clients = 8\nmax_queues_per_client = 4\n"
		"[policy]\nname = bandwidth\nslice_ms = 30\nedf_k = 2\nper_process = yes\n"
		"starvation_guard_pct = 5\ndrain_ms = 7\n"
		"[defaults]\npriority = -3\nshare = 50\n"
		"[limits]\npriority_ceiling = 2\nuid.1000.priority_ceiling = 9\n"
		"memory_limit = 8G\nuid.1000.memory_limit = 1.5G\nuid.1002.memory_limit = none\n"
		"uid.0.memory_limit = 512MiB\n"
		"[observe]\nbypass = yes\nbypass_grace_ms = 250\nbypass_max = 8\n"
		"libraries = /opt/a/libcuda.so.1  /opt/b/libOpenCL.so.1\n");

	(void)state;
	xsd_config_defaults(&c);
	assert_string_equal(c.policy, "hpf");
	assert_int_equal(c.max_queues_per_client, 256);
	assert_false(c.observe_bypass);
	assert_int_equal(c.bypass_grace_ms, XSD_BYPASS_GRACE_MS_DEFAULT);
	assert_int_equal(xsd_config_load(path, true, &c, err, sizeof(err)), 0);
	assert_true(c.observe_bypass);
	assert_int_equal(c.bypass_grace_ms, 250);
	assert_int_equal(c.bypass_max, 8);
	assert_string_equal(c.observe_libraries, "/opt/a/libcuda.so.1  /opt/b/libOpenCL.so.1");
	assert_string_equal(c.socket, "/tmp/a.sock");
	assert_string_equal(c.control_socket, IPC_DEFAULT_CONTROL);
	assert_int_equal(c.max_clients, 8);
	assert_int_equal(c.max_queues_per_client, 4);
	assert_string_equal(c.policy, "bandwidth");
	assert_int_equal(c.pconf.slice_ns, 30000000);
	assert_int_equal(c.pconf.edf_k, 2);
	assert_true(c.pconf.per_process);
	assert_int_equal(c.starvation_guard_pct, 5);
	assert_int_equal(c.pconf.drain_ns, 7000000);
	assert_int_equal(c.def_hint[IPC_KEY_PRIORITY], -3);
	assert_int_equal(c.def_hint[IPC_KEY_SHARE], 50);
	assert_int_equal(xsd_config_ceiling(&c, 0), XS_PRIORITY_MAX);
	assert_int_equal(xsd_config_ceiling(&c, 1000), 9);
	assert_int_equal(xsd_config_ceiling(&c, 1001), 2);
	/* A uid's memory_limit and its priority_ceiling are one entry's. */
	assert_int_equal(xsd_config_memory_ceiling(&c, 1000), 3ull << 29);
	assert_int_equal(xsd_config_memory_ceiling(&c, 1001), 8ull << 30);
	assert_int_equal(xsd_config_memory_ceiling(&c, 1002), 0);
	assert_int_equal(xsd_config_memory_ceiling(&c, 0), 512ull << 20);
	assert_int_equal(xsd_config_ceiling(&c, 1002), 2);
	xsd_config_fini(&c);
	/* Without an entry of its own, root has no memory ceiling. */
	xsd_config_defaults(&c);
	c.memory_limit = 1ull << 30;
	assert_int_equal(xsd_config_memory_ceiling(&c, 0), 0);
	assert_int_equal(xsd_config_memory_ceiling(&c, 7), 1ull << 30);
	unlink(path);
}

static void config_errors_name_the_line(void **state)
{
	static const char *const bad[] = {
		"[daemon]\nsocket = /x\nbogus = 1\n",
		"[policy]\nslice_ms = 0\n",
		"[policy]\nedf_k = two\n",
		"[defaults]\npriority = 500\n",
		"[limits]\nuid.abc.priority_ceiling = 1\n",
		"[limits]\nuid.5.priority_floor = 1\n",
		"[limits]\nmemory_limit = lots\n",
		"[limits]\nmemory_limit = 0\n",
		"[limits]\nuid.5.memory_limit = -1G\n",
		"[nowhere]\nx = 1\n",
		"[policy]\nper_process = perhaps\n",
		"[policy]\ndrain_ms = 1001\n",
		"[observe]\nbypass = maybe\n",
		"[observe]\nbypass_max = 0\n",
		"[observe]\nlibraries = /usr/lib/libcuda.so.1 libOpenCL.so.1\n",
		"not an ini line\n",
	};
	struct xsd_config c;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *path = write_conf(bad[i]);

		xsd_config_defaults(&c);
		assert_int_equal(xsd_config_load(path, true, &c, err, sizeof(err)), -EINVAL);
		/* "file:line: what" */
		assert_non_null(strstr(err, path));
		assert_non_null(strchr(err + strlen(path), ':'));
		xsd_config_fini(&c);
		unlink(path);
	}
	/* A missing file is fine unless it was asked for. */
	xsd_config_defaults(&c);
	assert_int_equal(xsd_config_load("/nonexistent/xschedd.conf", false, &c, err,
					 sizeof(err)), 0);
	assert_int_equal(xsd_config_load("/nonexistent/xschedd.conf", true, &c, err,
					 sizeof(err)), -ENOENT);
}

/* Loads @text; returns the result, the problems in @err. */
static int load_text(const char *text, char *err, size_t len)
{
	const char *path = write_conf(text);
	struct xsd_config c;
	int rc;

	xsd_config_defaults(&c);
	rc = xsd_config_load(path, true, &c, err, len);
	xsd_config_fini(&c);
	unlink(path);
	return rc;
}

/* Lines of @err that name line @line of the file. */
static bool err_names_line(const char *err, int line)
{
	char tag[32];

	snprintf(tag, sizeof(tag), ".ini:%d: ", line);
	return strstr(err, tag) != NULL;
}

/*
 * What inih lets pass, or reports only once, is refused with its line, and
 * every problem of a file is reported, not only the first: a key given
 * twice (both lines named), an indented line (inih would append it to the
 * previous value), a line too long for inih's buffer (its rest would be
 * parsed as a line of its own), junk, an unterminated section.
 */
static void config_every_problem_reported(void **state)
{
	char err[2048], line[400];
	int rc;

	(void)state;
	rc = load_text("[policy]\nname = hpf\n\n[daemon]\nmax_clients = 9\n"
		       "[policy]\nname = fair\n", err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	assert_true(err_names_line(err, 7));
	assert_non_null(strstr(err, "[policy] name given twice (first at line 2)"));

	rc = load_text("[policy]\nname = hpf\n  slice_ms = 5\n", err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	assert_true(err_names_line(err, 3));
	assert_non_null(strstr(err, "indented"));
	/* Indentation before any key of the section is harmless. */
	assert_int_equal(load_text("[policy]\n  name = hpf\n# x\n   ; y\n", err, sizeof(err)), 0);

	memset(line, 'x', sizeof(line));
	memcpy(line, "name = ", 7);
	line[sizeof(line) - 1] = '\0';
	{
		char text[512];

		snprintf(text, sizeof(text), "[policy]\n%s\nedf_k = 2\n", line);
		assert_int_equal(load_text(text, err, sizeof(err)), -EINVAL);
		assert_true(err_names_line(err, 2));
		assert_non_null(strstr(err, "longer than"));
		/* Its tail is not taken for a line of its own. */
		assert_false(err_names_line(err, 3));
	}

	rc = load_text("[daemon]\nmax_clients = 0\nbogus = 1\njunk\n[limits\n"
		       "[policy]\nedf_k = 99\nper_process = maybe\n", err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	assert_true(err_names_line(err, 2));
	assert_non_null(strstr(err, "expected an integer in 1..65536"));
	assert_true(err_names_line(err, 3));
	assert_non_null(strstr(err, "unknown key [daemon] bogus"));
	assert_true(err_names_line(err, 4));
	assert_true(err_names_line(err, 5));
	assert_true(err_names_line(err, 7));
	assert_true(err_names_line(err, 8));
	assert_non_null(strstr(err, "expected yes or no"));
}

struct bad_line {
	const char *line, *why;
};

/* Each of @bad, alone in section @sec, is refused with its reason. */
static void refused_lines(const char *sec, const struct bad_line *bad, size_t n)
{
	struct xsd_config c;
	char err[512], text[256];

	for (size_t i = 0; i < n; i++) {
		const char *path;

		xsd_config_defaults(&c);
		snprintf(text, sizeof(text), "[%s]\n%s\n", sec, bad[i].line);
		path = write_conf(text);
		assert_int_equal(xsd_config_load(path, true, &c, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("'%s': '%s' does not say '%s'", bad[i].line, err, bad[i].why);
		unlink(path);
	}
}

/* [enforce]: defaults that lock nobody out, every key, and each bad value refused. */
static void config_enforce_keys(void **state)
{
	static const struct bad_line bad[] = {
		{ "devices = yes", "expected off, audit or on" },
		{ "fail = maybe", "expected open or closed" },
		{ "exempt_root = 2", "expected yes or no" },
		{ "uids = 1000-", "expected uids or ranges" },
		{ "uids = 2000-1000", "expected uids or ranges" },
		{ "uids = root", "expected uids or ranges" },
		{ "cgroups = kubepods.slice", "expected absolute paths" },
		{ "exempt_executables = nvidia-smi", "expected absolute paths" },
		{ "extra_devices = 195", "expected MAJOR:MINOR" },
		{ "extra_devices = 195:x", "expected MAJOR:MINOR" },
		{ "extra_devices = 5000:1", "expected MAJOR:MINOR" },
		{ "pin_path = xsched", "expected an absolute path" },
	};
	struct xsd_config c;
	char err[512];
	const char *path;

	(void)state;
	xsd_config_defaults(&c);
	assert_int_equal(c.enforce_mode, XSD_ENFORCE_OFF);
	assert_false(c.enforce_fail_closed);
	assert_true(c.enforce_exempt_root);
	assert_string_equal(c.enforce_pin_path, XSD_ENFORCE_PIN_DEFAULT);
	path = write_conf("[enforce]\ndevices = audit\nfail = closed\nexempt_root = no\n"
			  "cgroups = /kubepods.slice /slurm\nuids = 1000-59999 65534\n"
			  "exempt_executables = /usr/bin/nvidia-smi\nexempt_cgroups = /kubepods.slice/x\n"
			  "extra_devices = 240:0 241:* /dev/foo\npin_path = /sys/fs/bpf/x\n");
	assert_int_equal(xsd_config_load(path, true, &c, err, sizeof(err)), 0);
	assert_int_equal(c.enforce_mode, XSD_ENFORCE_AUDIT);
	assert_true(c.enforce_fail_closed);
	assert_false(c.enforce_exempt_root);
	assert_string_equal(c.enforce_cgroups, "/kubepods.slice /slurm");
	assert_string_equal(c.enforce_uids, "1000-59999 65534");
	assert_string_equal(c.enforce_extra_devices, "240:0 241:* /dev/foo");
	assert_string_equal(c.enforce_pin_path, "/sys/fs/bpf/x");
	refused_lines("enforce", bad, ARRAY_SIZE(bad));
	unlink(path);
}

/* [observe] heat map keys: defaults, every key, and each bad value refused. */
static void config_heatmap_keys(void **state)
{
	static const struct bad_line bad[] = {
		{ "heatmap = sometimes", "expected yes or no" },
		{ "heatmap_window_ms = 0", "expected an integer in 1..1000" },
		{ "heatmap_window_ms = 5000", "expected an integer in 1..1000" },
		{ "heatmap_seconds = 0", "expected an integer in 1..3600" },
		{ "heatmap_seconds = 1h", "expected an integer in 1..3600" },
		{ "heatmap_memory_mb = 0", "expected an integer in 1..4096" },
	};
	struct xsd_config c;
	char err[512];
	const char *path;

	(void)state;
	xsd_config_defaults(&c);
	assert_true(c.heatmap);
	assert_int_equal(c.heat_window_ms, XSD_HEAT_WINDOW_MS_DEFAULT);
	assert_int_equal(c.heat_seconds, XSD_HEAT_SECONDS_DEFAULT);
	assert_int_equal(c.heat_memory_mb, XSD_HEAT_MEMORY_MB_DEFAULT);
	path = write_conf("[observe]\nheatmap = no\nheatmap_window_ms = 100\n"
			  "heatmap_seconds = 600\nheatmap_memory_mb = 8\n");
	assert_int_equal(xsd_config_load(path, true, &c, err, sizeof(err)), 0);
	assert_false(c.heatmap);
	assert_int_equal(c.heat_window_ms, 100);
	assert_int_equal(c.heat_seconds, 600);
	assert_int_equal(c.heat_memory_mb, 8);
	refused_lines("observe", bad, ARRAY_SIZE(bad));
	unlink(path);
}

/* A directory or an unreadable file is an error, never "the defaults". */
static void config_unreadable_is_an_error(void **state)
{
	char dir[64], err[512];
	struct xsd_config c;
	const char *path;
	pid_t pid;
	int st;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/xstest-confdir-%d", (int)getpid());
	assert_int_equal(mkdir(dir, 0755), 0);
	xsd_config_defaults(&c);
	assert_int_equal(xsd_config_load(dir, true, &c, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	/* Not even when the file is optional. */
	assert_int_equal(xsd_config_load(dir, false, &c, err, sizeof(err)), -EISDIR);
	rmdir(dir);

	/* Unreadable: as an unprivileged user (root reads any file). */
	path = write_conf("[policy]\nname = fair\n");
	assert_int_equal(chmod(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc;

		if (getuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(77);
		rc = xsd_config_load(path, false, &c, err, sizeof(err));
		_exit(rc == -EACCES && strstr(err, path) && !strcmp(c.policy, "hpf") ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(path);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
	xsd_config_fini(&c);
}

/* Socket paths: absolute and short enough for a Unix socket address. */
static void config_socket_paths(void **state)
{
	char text[400], err[512], path[120];

	(void)state;
	assert_null(xsd_socket_path_problem("/run/x.sock"));
	assert_non_null(xsd_socket_path_problem("x.sock"));
	assert_non_null(xsd_socket_path_problem(""));
	assert_non_null(xsd_socket_path_problem("/run/"));
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[107] = '\0';
	assert_null(xsd_socket_path_problem(path));      /* 107 bytes: fits */
	path[107] = 'a';
	path[108] = '\0';
	assert_non_null(strstr(xsd_socket_path_problem(path), "107"));
	snprintf(text, sizeof(text), "[daemon]\ncontrol_socket = %s\n", path);
	assert_int_equal(load_text(text, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "107 bytes"));
	assert_int_equal(load_text("[daemon]\nsocket = run/x.sock\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "absolute"));
}

static void notify_protocol(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[256];
	ssize_t n;
	int fd;

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(xsd_notify("READY=1"), 1);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/xstest-notify-%d", (int)getpid());
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	assert_int_equal(xsd_notify("READY=1"), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_int_equal(n, 7);
	buf[n] = '\0';
	assert_string_equal(buf, "READY=1");
	assert_int_equal(xsd_notify_reloading(), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "RELOADING=1\nMONOTONIC_USEC="));
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(xsd_notify("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(sa.sun_path);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(ipc_valid_packets_decode),
	cmocka_unit_test(ipc_framing_errors),
	cmocka_unit_test(ipc_register_fields_checked),
	cmocka_unit_test(ipc_other_fields_checked),
	cmocka_unit_test(ipc_daemon_replies_checked),
	cmocka_unit_test(config_defaults_and_keys),
	cmocka_unit_test(config_errors_name_the_line),
	cmocka_unit_test(config_every_problem_reported),
	cmocka_unit_test(config_enforce_keys),
	cmocka_unit_test(config_heatmap_keys),
	cmocka_unit_test(config_unreadable_is_an_error),
	cmocka_unit_test(config_socket_paths),
	cmocka_unit_test(notify_protocol),
};

TU_MAIN(tests)
