/*
 * What the daemon reads about a connecting process (src/daemon/peer.c),
 * as plain functions over the /proc texts of each layout: the namespace
 * pid of /proc/PID/status and the container id of /proc/PID/cgroup for
 * the cgroup paths of podman, Docker, containerd, CRI-O and Kubernetes
 * (systemd and cgroupfs drivers, cgroup v1 and v2), and what is not a
 * container. Then the reader itself on this process and on a child that
 * exited (whose recycled pid must not lend it another's identity).
 */
#include "test_util.h"

#include "daemon/peer.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ID "8cdb83ae3efe0526f6475a27160cf3c591db19695a85c2b2c6c235663e687a42"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void peer_nspid(void **state)
{
	(void)state;
	assert_int_equal(xsd_peer_nspid("Name:\tcu_load\nNSpid:\t4415\t1\nNSpgid:\t4415\t1\n"), 1);
	assert_int_equal(xsd_peer_nspid("Name:\tx\nNSpid:\t900\t77\t3\n"), 3);
	/* In the reader's namespace: one field. */
	assert_int_equal(xsd_peer_nspid("Name:\tx\nPid:\t12\nNSpid:\t12\n"), 0);
	/* Missing (kernels before 4.1) or malformed. */
	assert_int_equal(xsd_peer_nspid("Name:\tx\nPid:\t12\n"), 0);
	assert_int_equal(xsd_peer_nspid("NSpid:\t12\tx\n"), 0);
	assert_int_equal(xsd_peer_nspid("NSpid:\t12\t0\n"), 0);
	assert_int_equal(xsd_peer_nspid("NSpid:\t12\t99999999999\n"), 0);
	assert_int_equal(xsd_peer_nspid(""), 0);
	/* The last line without a newline. */
	assert_int_equal(xsd_peer_nspid("Pid:\t5\nNSpid:\t5\t2"), 2);
}

/* The id found in @cgroup, "" when none. */
static const char *container_of(const char *cgroup)
{
	static char out[72];
	int found = xsd_peer_container(cgroup, out, sizeof(out));

	assert_int_equal(found, out[0] != '\0');
	return out;
}

static void peer_container_runtimes(void **state)
{
	(void)state;
	/* podman, cgroupfs driver, cgroup v1 (every hierarchy) and the v2 line. */
	assert_string_equal(container_of("9:name=systemd:/libpod_parent/libpod-" ID "\n"
					 "4:memory:/libpod_parent/libpod-" ID "\n"
					 "0::/libpod_parent/libpod-" ID "\n"), ID);
	/* podman and Docker with systemd, cgroup v2. */
	assert_string_equal(container_of("0::/machine.slice/libpod-" ID ".scope/container\n"), ID);
	assert_string_equal(container_of("0::/system.slice/docker-" ID ".scope\n"), ID);
	/* Docker, cgroupfs. */
	assert_string_equal(container_of("12:pids:/docker/" ID "\n"), ID);
	/* Kubernetes: containerd and CRI-O with systemd, and cgroupfs; the pod
	 * uid (a UUID) is no container id. */
	assert_string_equal(container_of("0::/kubepods.slice/kubepods-burstable.slice/"
					 "kubepods-burstable-pod1c2d3e4f_aaaa_bbbb_cccc_1234567890ab.slice/"
					 "cri-containerd-" ID ".scope\n"), ID);
	assert_string_equal(container_of("0::/kubepods.slice/kubepods-besteffort.slice/"
					 "kubepods-besteffort-pod1c2d.slice/crio-" ID ".scope\n"), ID);
	assert_string_equal(container_of("0::/kubepods/burstable/"
					 "pod1c2d3e4f-aaaa-bbbb-cccc-1234567890ab/" ID "\n"), ID);
	/* Upper-case digits come out in lower case, as runtimes print ids. */
	assert_string_equal(container_of("0::/docker/8CDB83AE3EFE0526F6475A27160CF3C591DB19695A85C2B2C6C235663E687A42\n"),
			    ID);
	/* The unified line wins over a v1 line naming something else; otherwise
	 * the first line with an id. */
	assert_string_equal(container_of("3:cpu:/docker/" ID2 "\n0::/docker/" ID "\n"), ID);
	assert_string_equal(container_of("3:cpu:/docker/" ID2 "\n2:pids:/docker/" ID "\n"), ID2);
	/* The last id of a path (a container nested in another's cgroup). */
	assert_string_equal(container_of("0::/docker/" ID2 "/docker/" ID "\n"), ID);
	/* A ':' inside the path. */
	assert_string_equal(container_of("0::/a:b/libpod-" ID "\n"), ID);
}

static void peer_container_none(void **state)
{
	char small[64];

	(void)state;
	/* Plain hosts, systemd sessions, Slurm jobs; 32 or 65 hex digits are not an id. */
	assert_string_equal(container_of("0::/\n"), "");
	assert_string_equal(container_of("0::/user.slice/user-1000.slice/session-3.scope\n"), "");
	assert_string_equal(container_of("4:memory:/slurm/uid_0/job_12/step_0/task_0\n"), "");
	assert_string_equal(container_of("4:memory:/process_api/173e458e0fe30fda83f4adaca86e26ac\n"), "");
	assert_string_equal(container_of("0::/docker/" ID "0\n"), "");
	assert_string_equal(container_of("0::/docker/0" ID "\n"), "");
	/* No path field: the hex digits are not in a path. */
	assert_string_equal(container_of(ID "\n"), "");
	assert_string_equal(container_of(""), "");
	/* A buffer too small for an id is left empty. */
	assert_int_equal(xsd_peer_container("0::/docker/" ID "\n", small, sizeof(small)), 0);
	assert_string_equal(small, "");
}

static void peer_identify_live_and_exited(void **state)
{
	char container[72];
	int32_t nspid = -1;
	pid_t child;
	int pidfd, st;

	(void)state;
	/* This process: the test does not run in a namespace of its own. */
	xsd_peer_identify(getpid(), -1, &nspid, container, sizeof(container));
	assert_true(nspid >= 0);
	/* A child that exited: its pidfd says so, and nothing is reported. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	assert_true(pidfd >= 0);
	assert_int_equal(waitpid(child, &st, 0), child);
	strcpy(container, "stale");
	nspid = 7;
	xsd_peer_identify(child, pidfd, &nspid, container, sizeof(container));
	assert_int_equal(nspid, 0);
	assert_string_equal(container, "");
	close(pidfd);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(peer_nspid),
	cmocka_unit_test(peer_container_runtimes),
	cmocka_unit_test(peer_container_none),
	cmocka_unit_test(peer_identify_live_and_exited),
};

TU_MAIN(tests)
