/*
 * Device identity, end to end: a scheduling domain is one device, named by
 * what the device reports (its UUID, else its PCI bus id), whatever API,
 * ordinal or process reaches it (base/devid.h, daemon/devices.h).
 *
 *  - two simulated devices through the CUDA shim and the simulated CUDA
 *    driver: both processes see "cuda:0", yet the flood on one device is
 *    never suspended for the higher priority on the other;
 *  - one simulated device through the CUDA shim and through the xsched
 *    API is one domain: the API queue's priority suspends the CUDA queue,
 *    also when the CUDA driver reports only a PCI bus id; a driver that
 *    reports neither leaves the device unverified, and listings say so;
 *  - two OpenCL devices of one name but different UUIDs (a test double
 *    of the driver, since PoCL has one device) are two domains;
 *  - one simulated device through the Level Zero shim and the simulated
 *    Level Zero driver, and through the API, is one domain;
 *  - the daemon's device table forgets a device with its last queue and
 *    refuses devices beyond its bound, through the daemon's sockets.
 */
#include "test_util.h"
#include "it_util.h"

#include "daemon/devices.h"

#define ID_WAIT_MS 10000

/* The preload list of @shim (sanitizer runtime first, when built so). */
static const char *preload(const char *shim)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, sizeof(buf[0]), "LD_PRELOAD=%s%s%s", XS_SAN_RT, XS_SAN_RT[0] ? " " : "",
		 shim);
	return b;
}

static const char *sim_cuda_var(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "XSCHED_CUDA_LIB=%s/libcuda.so.1", XS_SIM_CUDA_DIR);
	return buf;
}

/* "XSCHED_SIM_DEVICE=<the case's device><suffix>" into @buf. */
static const char *dev_var(char *buf, size_t len, const struct it_env *e, const char *suffix)
{
	snprintf(buf, len, "XSCHED_SIM_DEVICE=%s%s", e->dev, suffix);
	return buf;
}

/* The canonical identity text of simulated device @name (sim_ident.c). */
static void sim_ident(const char *name, char *out, size_t len)
{
	struct devid id = { 0 };
	uint8_t uuid[DEVID_UUID_BYTES];

	sim_dev_uuid(name, uuid);
	assert_true(devid_set_uuid(&id, uuid));
	snprintf(out, len, "%s", id.ident);
}

/* A ready queue of @pid into *@out; false if it has none listed. */
static bool ready_queue(struct it_env *e, pid_t pid, struct ipc_queue_rec *out)
{
	struct ipc_queue_rec *r = NULL;
	size_t n = 0, i;
	bool found = false;

	assert_int_equal(ipc_client_list(&e->c, &r, &n), 0);
	for (i = 0; i < n && !found; i++) {
		if (r[i].pid == pid && r[i].state == IPC_QS_READY) {
			*out = r[i];
			found = true;
		}
	}
	free(r);
	return found;
}

/* The device record of domain @domain; false if not listed. */
static bool device_rec(struct it_env *e, uint64_t domain, struct ipc_device_rec *out)
{
	struct ipc_device_rec *d = NULL;
	size_t n = 0, i;
	bool found = false;

	assert_int_equal(ipc_client_devices(&e->c, &d, &n), 0);
	for (i = 0; i < n; i++) {
		if (d[i].domain == domain) {
			*out = d[i];
			found = true;
		}
	}
	free(d);
	return found;
}

static size_t device_count(struct it_env *e)
{
	struct ipc_device_rec *d = NULL;
	size_t n = 0;

	assert_int_equal(ipc_client_devices(&e->c, &d, &n), 0);
	free(d);
	return n;
}

/* Runs xschedctl with @args against the case's daemon; its stdout, malloc()ed. */
static char *ctl_output(struct it_env *e, const char *const *args)
{
	return it_ctl_output(e, XS_CTL_BIN, args);
}

/* The extra simulated devices a case names, removed however it ends. */
static int id_teardown(void **state)
{
	struct it_env *e = *state;
	char name[96];

	if (e) {
		snprintf(name, sizeof(name), "%sA", e->dev);
		sim_dev_unlink(name);
		snprintf(name, sizeof(name), "%sB", e->dev);
		sim_dev_unlink(name);
	}
	return it_teardown(state);
}

/*
 * The metrics show queue @q on its domain, and @dev's identity in the
 * domain's xsched_device_info series.
 */
static void metrics_domain(struct it_env *e, const struct ipc_queue_rec *q,
			   const struct ipc_device_rec *dev)
{
	char want[IPC_IDENT_LEN + IPC_PCI_LEN + 160];
	char *text = NULL;

	assert_int_equal(ipc_client_metrics(&e->c, &text), 0);
	snprintf(want, sizeof(want), "xsched_queue_priority{queue=\"%llu\",pid=\"%d\",",
		 (unsigned long long)q->queue_id, (int)q->pid);
	if (!strstr(text, want))
		fail_msg("no priority series of queue %llu:\n%s",
			 (unsigned long long)q->queue_id, text);
	snprintf(want, sizeof(want), ",device=\"%s\",domain=\"%llu\"} ", q->device,
		 (unsigned long long)q->domain);
	if (!strstr(text, want))
		fail_msg("no series of device %s on domain %llu:\n%s", q->device,
			 (unsigned long long)q->domain, text);
	snprintf(want, sizeof(want),
		 "xsched_device_info{domain=\"%llu\",kind=\"uuid\",identity=\"%s\","
		 "pci=\"%s\",", (unsigned long long)dev->domain, dev->ident, dev->pci);
	if (!strstr(text, want))
		fail_msg("no info series \"%s\" of the domain:\n%s", want, text);
	free(text);
}

/*
 * The reproduction of the issue: a priority-0 flood on gpuB and a
 * priority-10 flood on gpuA, both "cuda:0" in their processes. Before
 * device identities they were one domain and the gpuB flood was suspended
 * whenever the other was ready although nothing shares its device.
 */
static void identity_cuda_devices_apart(void **state)
{
	struct it_env *e = *state;
	char va[128], vb[128], name[96], want[IPC_IDENT_LEN];
	const char *low_vars[] = { sim_cuda_var(), preload(XS_CUDA_SHIM), "XSCHED_PRIORITY=0",
				   dev_var(vb, sizeof(vb), e, "B"), NULL };
	const char *high_vars[] = { sim_cuda_var(), preload(XS_CUDA_SHIM), "XSCHED_PRIORITY=10",
				    dev_var(va, sizeof(va), e, "A"), NULL };
	struct ipc_queue_rec lo, hi;
	struct ipc_device_rec dlo, dhi;
	int both = 0, i;
	pid_t low, high;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	low = it_spawn(e, IT_ARGS(XS_CU_LOAD, "--flood", "30", "--cmd-us", "2000"), low_vars,
		       false, -1);
	high = it_spawn(e, IT_ARGS(XS_CU_LOAD, "--flood", "30", "--cmd-us", "2000"), high_vars,
			false, -1);
	assert_true(IT_WAIT_UNTIL(ready_queue(e, low, &lo) && ready_queue(e, high, &hi),
				  ID_WAIT_MS));
	/* One second of samples: whenever both are ready, the flood runs. */
	for (i = 0; i < 100; i++) {
		if (ready_queue(e, low, &lo) && ready_queue(e, high, &hi)) {
			both++;
			if (!lo.running)
				fail_msg("the gpuB flood is suspended for a queue on gpuA "
					 "(domains %llu and %llu)", (unsigned long long)lo.domain,
					 (unsigned long long)hi.domain);
		}
		it_nap_ms(10);
	}
	assert_true(both >= 20);
	/* Both "cuda:0", on two domains named by their devices' UUIDs. */
	assert_string_equal(lo.device, "cuda:0");
	assert_string_equal(hi.device, "cuda:0");
	assert_true(lo.domain != hi.domain);
	assert_true(device_rec(e, lo.domain, &dlo) && device_rec(e, hi.domain, &dhi));
	assert_int_equal(dlo.id_kind, IPC_ID_UUID);
	assert_int_equal(dhi.id_kind, IPC_ID_UUID);
	snprintf(name, sizeof(name), "%sB", e->dev);
	sim_ident(name, want, sizeof(want));
	assert_string_equal(dlo.ident, want);
	snprintf(name, sizeof(name), "%sA", e->dev);
	sim_ident(name, want, sizeof(want));
	assert_string_equal(dhi.ident, want);
	assert_true(dlo.pci[0] && dhi.pci[0] && strcmp(dlo.pci, dhi.pci));
	/* Metrics: each queue series names its domain; device_info its UUID. */
	metrics_domain(e, &lo, &dlo);
	metrics_domain(e, &hi, &dhi);
	it_kill(e, low);
	it_kill(e, high);
	it_daemon_check(e);
	e->ok = true;
}

/*
 * Gives a priority-10 queue of ours (the xsched API, on the case's device)
 * work, and checks that the queue of process @flood, ready on the same
 * device through another API, is then suspended and on our domain, the
 * simulated device's (identified by UUID). Returns our queue, still busy;
 * its domain's record in *@dev.
 */
static xs_queue *api_suspends(struct it_env *e, pid_t flood, struct ipc_device_rec *dev)
{
	struct ipc_queue_rec other, api;
	char want[IPC_IDENT_LEN];
	xs_queue *q = it_queue(e, 10);

	it_submit(q, 400, 1000);
	assert_true(IT_WAIT_UNTIL(ready_queue(e, getpid(), &api), ID_WAIT_MS));
	assert_true(IT_WAIT_UNTIL(ready_queue(e, flood, &other) && !other.running, ID_WAIT_MS));
	assert_int_equal(other.domain, api.domain);
	assert_true(device_rec(e, api.domain, dev));
	assert_int_equal(dev->id_kind, IPC_ID_UUID);
	sim_ident(e->dev, want, sizeof(want));
	assert_string_equal(dev->ident, want);
	return q;
}

/*
 * A CUDA flood at priority 0 and an xsched API queue at priority 10 on the
 * case's device: the API queue's tasks suspend the CUDA queue, and both
 * are listed on one domain. @identity: what the simulated CUDA driver
 * reports ($XSCHED_SIM_IDENTITY).
 */
static void cuda_and_api_one_domain(struct it_env *e, const char *identity)
{
	char var[64];
	const char *vars[] = { sim_cuda_var(), preload(XS_CUDA_SHIM), "XSCHED_PRIORITY=0", var,
			       NULL };
	struct ipc_queue_rec cu;
	struct ipc_device_rec dev;
	xs_queue *q;
	pid_t flood;

	snprintf(var, sizeof(var), "XSCHED_SIM_IDENTITY=%s", identity);
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	flood = it_spawn(e, IT_ARGS(XS_CU_LOAD, "--flood", "30", "--cmd-us", "2000"), vars, false,
			 -1);
	assert_true(IT_WAIT_UNTIL(ready_queue(e, flood, &cu) && cu.running, ID_WAIT_MS));
	/* The API queue's priority stops the CUDA queue of the same device. */
	q = api_suspends(e, flood, &dev);
	assert_int_equal(dev.queues, 2 + 1);      /* cu_load's two, ours */
	assert_int_equal(xs_wait_all(q), 0);
	/* Our queue idle: the CUDA queue runs again. */
	assert_true(IT_WAIT_UNTIL(ready_queue(e, flood, &cu) && cu.running, ID_WAIT_MS));
	it_kill(e, flood);
	it_daemon_check(e);
	e->ok = true;
}

static void identity_cuda_and_api_one_domain(void **state)
{
	cuda_and_api_one_domain(*state, "uuid");
}

/* A driver that knows only the bus id: the device is still one domain. */
static void identity_cuda_pci_and_api_one_domain(void **state)
{
	cuda_and_api_one_domain(*state, "pci");
}

/* Neither UUID nor bus id: unverified, and `list` and `devices` say so. */
static void identity_cuda_unverified_listed(void **state)
{
	struct it_env *e = *state;
	const char *vars[] = { sim_cuda_var(), preload(XS_CUDA_SHIM), "XSCHED_SIM_IDENTITY=none",
			       NULL };
	struct ipc_queue_rec cu;
	struct ipc_device_rec dev;
	char *out;
	pid_t flood;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	flood = it_spawn(e, IT_ARGS(XS_CU_LOAD, "--flood", "30", "--cmd-us", "2000"), vars, false,
			 -1);
	assert_true(IT_WAIT_UNTIL(ready_queue(e, flood, &cu), ID_WAIT_MS));
	assert_int_equal(cu.id_kind, IPC_ID_UNVERIFIED);
	assert_true(device_rec(e, cu.domain, &dev));
	assert_int_equal(dev.id_kind, IPC_ID_UNVERIFIED);
	assert_string_equal(dev.ident, "");
	assert_string_equal(dev.name, "cuda:0");
	out = ctl_output(e, IT_ARGS("list"));
	if (!strstr(out, "cuda:0 (unverified)"))
		fail_msg("xschedctl list does not mark the device unverified:\n%s", out);
	free(out);
	out = ctl_output(e, IT_ARGS("devices"));
	if (!strstr(out, "unverified cuda:0"))
		fail_msg("xschedctl devices does not mark the device unverified:\n%s", out);
	free(out);
	out = ctl_output(e, IT_ARGS("devices", "-o", "json"));
	if (!strstr(out, "\"kind\":\"unverified\"") || !strstr(out, "\"verified\":false"))
		fail_msg("xschedctl devices -o json:\n%s", out);
	free(out);
	it_kill(e, flood);
	it_daemon_check(e);
	e->ok = true;
}

/* Two OpenCL devices named alike ("Fake GPU") with different UUIDs. */
static void identity_opencl_same_name_two_domains(void **state)
{
#if defined(XS_CL_SHIM) && defined(XS_CL_FAKE) && defined(XS_CL_TWO)
	struct it_env *e = *state;
	const char *vars[] = { preload(XS_CL_SHIM), "XSCHED_OPENCL_LIB=" XS_CL_FAKE, NULL };
	struct ipc_device_rec *d = NULL;
	struct ipc_queue_rec *r = NULL;
	size_t nd = 0, nr = 0, i;
	char line[16] = "";
	pid_t prog;
	int fd, st = 0;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	prog = it_spawn(e, IT_ARGS(XS_CL_TWO), vars, true, -1);
	fd = e->kid_out[it_kid_index(e, prog)];
	assert_true(read(fd, line, sizeof(line) - 1) > 0);
	assert_string_equal(line, "ready\n");
	assert_true(IT_WAIT_UNTIL(it_queues(e, prog, NULL) == 2, ID_WAIT_MS));
	assert_int_equal(ipc_client_list(&e->c, &r, &nr), 0);
	assert_int_equal(nr, 2);
	assert_string_equal(r[0].device, "cl:Fake GPU");
	assert_string_equal(r[1].device, "cl:Fake GPU");
	assert_true(r[0].domain != r[1].domain);
	assert_int_equal(ipc_client_devices(&e->c, &d, &nd), 0);
	assert_int_equal(nd, 2);
	for (i = 0; i < 2; i++) {
		char want[IPC_IDENT_LEN], pci[IPC_PCI_LEN];
		int k = !strcmp(d[i].ident, "00112233-4455-6677-8899-aabbccddee01");

		snprintf(want, sizeof(want), "00112233-4455-6677-8899-aabbccddee0%d", k);
		snprintf(pci, sizeof(pci), "0000:1%d:00.0", k);
		assert_int_equal(d[i].id_kind, IPC_ID_UUID);
		assert_string_equal(d[i].ident, want);
		assert_string_equal(d[i].pci, pci);
		assert_int_equal(d[i].queues, 1);
	}
	assert_string_not_equal(d[0].ident, d[1].ident);
	free(d);
	free(r);
	/* Released through the shim, the queues and their devices go. */
	assert_int_equal(kill(prog, SIGTERM), 0);
	assert_int_equal(it_reap(e, prog, ID_WAIT_MS, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(IT_WAIT_UNTIL(device_count(e) == 0, ID_WAIT_MS));
	it_daemon_check(e);
	e->ok = true;
#else
	(void)state;
	skip();
#endif
}

/* Level Zero (simulated driver, shim) and the xsched API on one device. */
static void identity_ze_and_api_one_domain(void **state)
{
#if defined(XS_ZE_SHIM) && defined(XS_SIM_ZE) && defined(XS_ZE_FLOOD)
	struct it_env *e = *state;
	const char *vars[] = { preload(XS_ZE_SHIM), "ZE_ENABLE_ALT_DRIVERS=" XS_SIM_ZE,
			       "XSCHED_PRIORITY=0", NULL };
	struct ipc_queue_rec zq;
	struct ipc_device_rec dev;
	xs_queue *q;
	pid_t flood;

	it_daemon_start(e, NULL);
	it_ctl_open(e);
	flood = it_spawn(e, IT_ARGS(XS_ZE_FLOOD, "30", "2000"), vars, false, -1);
	assert_true(IT_WAIT_UNTIL(ready_queue(e, flood, &zq) && zq.running, ID_WAIT_MS));
	q = api_suspends(e, flood, &dev);
	assert_int_equal(xs_wait_all(q), 0);
	it_kill(e, flood);
	it_daemon_check(e);
	e->ok = true;
#else
	(void)state;
	skip();
#endif
}

/*
 * The daemon's table through its sockets: a client registering queue
 * after queue on ever new device names leaves no device behind, and at
 * most XSD_DEVICES_MAX devices exist at once (root here: no per-user
 * quota, which test_devices covers).
 */
static void identity_daemon_table_forgets_and_bounds(void **state)
{
	struct it_env *e = *state;
	struct ipc_registered reg;
	struct ipc_unregister u = { 0 };
	struct ipc_register r;
	uint32_t i, nslots;
	int fd, fds[3];
	char name[64];

	it_config(e, "[daemon]\nmax_queues_per_client = 2048\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	fd = ipc_connect(e->sock);
	assert_true(fd >= 0);
	assert_int_equal(it_raw_hello_agent(fd, fds), 2048);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	/* Register and unregister on 2000 names in turn: nothing stays. */
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "gone%u", i);
		r = it_reg_body(name, 0, 0);
		r.id_kind = IPC_ID_UNVERIFIED;
		memset(r.ident, 0, sizeof(r.ident));
		memset(r.pci, 0, sizeof(r.pci));
		assert_true(it_raw_send(fd, IPC_REGISTER, 2, &r, sizeof(r)) > 0);
		assert_int_equal(it_raw_answer(fd, ID_WAIT_MS, NULL), 0);
		assert_true(it_raw_send(fd, IPC_UNREGISTER, 3, &u, sizeof(u)) > 0);
		assert_int_equal(it_raw_answer(fd, ID_WAIT_MS, NULL), 0);
		if (i % 500 == 0)
			assert_int_equal(device_count(e), 0);
	}
	assert_int_equal(device_count(e), 0);
	/* Hold queues on distinct devices up to the bound, then one more. */
	nslots = XSD_DEVICES_MAX + 1;
	for (i = 0; i < nslots; i++) {
		snprintf(name, sizeof(name), "held%u", i);
		r = it_reg_body(name, i, 0);
		assert_true(it_raw_send(fd, IPC_REGISTER, 4, &r, sizeof(r)) > 0);
		assert_int_equal(it_raw_answer(fd, ID_WAIT_MS, NULL),
				 i < XSD_DEVICES_MAX ? 0 : -ENOSPC);
	}
	assert_int_equal(device_count(e), XSD_DEVICES_MAX);
	/* A queue on a device already known still registers. */
	assert_int_equal(it_raw_register(fd, "held7", nslots, 0, &reg), 0);
	assert_int_equal(device_count(e), XSD_DEVICES_MAX);
	/* One device gone, one new fits. */
	u.slot = 9;
	assert_true(it_raw_send(fd, IPC_UNREGISTER, 5, &u, sizeof(u)) > 0);
	assert_int_equal(it_raw_answer(fd, ID_WAIT_MS, NULL), 0);
	assert_int_equal(it_raw_register(fd, "newcomer", 9, 0, &reg), 0);
	/* The client gone, every device goes with it. */
	close(fd);
	assert_true(IT_WAIT_UNTIL(device_count(e) == 0, ID_WAIT_MS));
	it_daemon_check(e);
	e->ok = true;
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(identity_cuda_devices_apart, it_setup, id_teardown),
	cmocka_unit_test_setup_teardown(identity_cuda_and_api_one_domain, it_setup, id_teardown),
	cmocka_unit_test_setup_teardown(identity_cuda_pci_and_api_one_domain, it_setup,
					id_teardown),
	cmocka_unit_test_setup_teardown(identity_cuda_unverified_listed, it_setup, id_teardown),
	cmocka_unit_test_setup_teardown(identity_opencl_same_name_two_domains, it_setup,
					id_teardown),
	cmocka_unit_test_setup_teardown(identity_ze_and_api_one_domain, it_setup, id_teardown),
	cmocka_unit_test_setup_teardown(identity_daemon_table_forgets_and_bounds, it_setup,
					id_teardown),
};

TU_MAIN(tests)
