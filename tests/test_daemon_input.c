/*
 * xschedd end to end, malformed input and limits: packets of every wrong
 * shape get an error or close their own connection, and the client and
 * queue limits hold. The conventions and shared helpers are in
 * test_daemon_util.h.
 */
#include "test_daemon_util.h"

/* --- 7. Malformed input and limits ---------------------------------------- */

/* An answer that refuses: an error reply or a closed connection. */
static void assert_refused(int answer, const char *what)
{
	if (answer == -ETIMEDOUT)
		fail_msg("%s: no answer", what);
	if (answer >= 0 && answer != 1)
		fail_msg("%s: accepted", what);
}

/* A connection that got an error reply still works. */
static void assert_alive(int fd, int answer)
{
	if (answer != 1) {
		assert_true(it_raw_send(fd, IPC_STATUS, 77, NULL, 0) > 0);
		assert_int_equal(it_raw_answer(fd, WAIT_MS, NULL), 0);
	}
}

/* Sends a packet of @type with @body, built with header fields overridden. */
static int raw_packet(int fd, uint16_t version, uint16_t type, uint32_t len_field,
		      const void *body, size_t len)
{
	union it_buf buf;
	struct ipc_hdr h = { .magic = IPC_MAGIC, .version = version, .type = type,
			     .len = len_field, .seq = 5 };

	memcpy(buf.b, &h, sizeof(h));
	if (len)
		memcpy(buf.b + sizeof(h), body, len);
	return it_raw_bytes(fd, buf.b, sizeof(h) + len);
}

#define FULL_LEN(body) ((uint32_t)(sizeof(struct ipc_hdr) + sizeof(body)))

/*
 * Garbage, truncated headers, a wrong version, a lying or huge length, a
 * wrong type, requests out of order, out-of-range fields, descriptors
 * attached, a client that never reads: each gets an error reply or its
 * own connection closed, the daemon leaks no descriptor, keeps answering,
 * and a registered client keeps working.
 */
static void daemon_malformed_input(void **state)
{
	struct it_env *e = *state;
	struct ipc_hello hello = { .role = IPC_ROLE_CTL };
	struct ipc_queue_rec other_rec;
	struct ipc_status_reply st;
	union it_buf big;
	uint64_t done0;
	int fds0, fd, a, i;
	pid_t other;

	it_guard(60);
	other = busy_daemon(e, &other_rec);
	done0 = other_rec.completed;
	fds0 = count_fds(e->daemon);

	/* Garbage that does not even frame. */
	fd = raw_connect(e);
	memset(big.b, 0xa5, 64);
	assert_true(it_raw_bytes(fd, big.b, 64) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "garbage");
	close(fd);

	/* Half a header, then 3 bytes. */
	fd = raw_connect(e);
	{
		struct ipc_hdr h = { .magic = IPC_MAGIC, .version = IPC_VERSION,
				     .type = IPC_HELLO, .len = 8 };

		assert_true(it_raw_bytes(fd, &h, 8) > 0);
		a = it_raw_answer(fd, WAIT_MS, NULL);
		assert_refused(a, "truncated header");
		if (a != 1) {
			assert_true(it_raw_bytes(fd, "abc", 3) > 0);
			assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "3 bytes");
		}
	}
	close(fd);

	/* An empty packet. */
	fd = raw_connect(e);
	assert_true(it_raw_bytes(fd, "", 0) >= 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "empty packet");
	close(fd);

	/* Wrong version. */
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION + 7, IPC_HELLO, FULL_LEN(hello), &hello,
			       sizeof(hello)) > 0);
	a = it_raw_answer(fd, WAIT_MS, NULL);
	assert_refused(a, "wrong version");
	close(fd);

	/* A length field that lies (huge, and short), and a huge packet. */
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION, IPC_HELLO, 0xfffffff0u, &hello,
			       sizeof(hello)) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "huge length field");
	close(fd);
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION, IPC_HELLO, 20, &hello, sizeof(hello)) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "short length field");
	close(fd);
	fd = raw_connect(e);
	{
		static char huge[64 * 1024];
		struct ipc_hdr h = { .magic = IPC_MAGIC, .version = IPC_VERSION,
				     .type = IPC_HELLO, .len = sizeof(huge) };

		memcpy(huge, &h, sizeof(h));
		assert_true(it_raw_bytes(fd, huge, sizeof(huge)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "64 KiB packet");
	}
	close(fd);

	/* Wrong types: unknown, and one only the daemon sends. */
	fd = raw_connect(e);
	assert_true(raw_packet(fd, IPC_VERSION, 99, FULL_LEN(hello), &hello, sizeof(hello)) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "unknown type");
	close(fd);
	fd = raw_connect(e);
	{
		struct ipc_reply r = { 0 };

		assert_true(raw_packet(fd, IPC_VERSION, IPC_REPLY, FULL_LEN(r), &r, sizeof(r)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "daemon-only type");
	}
	close(fd);

	/* Before HELLO; a bad HELLO; a second HELLO. */
	fd = raw_connect(e);
	assert_true(it_raw_send(fd, IPC_STATUS, 3, NULL, 0) > 0);
	assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "request before hello");
	close(fd);
	fd = raw_connect(e);
	{
		struct ipc_hello h = { .role = 7 };

		assert_true(it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "hello with role 7");
	}
	close(fd);
	fd = raw_connect(e);
	{
		struct ipc_hello h = { .role = IPC_ROLE_CTL };

		memset(h.comm, 'x', sizeof(h.comm));            /* no NUL */
		assert_true(it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h)) > 0);
		assert_refused(it_raw_answer(fd, WAIT_MS, NULL), "hello without NUL");
	}
	close(fd);
	fd = raw_ctl(e);
	assert_true(it_raw_send(fd, IPC_HELLO, 2, &hello, sizeof(hello)) > 0);
	a = it_raw_answer(fd, WAIT_MS, NULL);
	assert_refused(a, "second hello");
	assert_alive(fd, a);
	close(fd);

	/* Valid headers, fields out of range, from an agent. */
	fd = raw_agent(e);
	{
		struct ipc_register r = it_reg_body(e->dev, 0, 1);
		struct ipc_set_hint h = { .slot = 0, .key = IPC_KEY_PRIORITY, .value = 1000 };
		struct ipc_ctl_set c = { .target = 9, .key = IPC_KEY_PRIORITY, .id = 1 };
		struct ipc_unregister u = { .slot = 0, .pad = 3 };
		struct ipc_list l = { .flags = 1 };

		r.level = 9;
		assert_true(it_raw_send(fd, IPC_REGISTER, 10, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register level 9");
		assert_alive(fd, a);
		r = it_reg_body(e->dev, 100000, 1);
		assert_true(it_raw_send(fd, IPC_REGISTER, 11, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register slot 100000");
		assert_alive(fd, a);
		r = it_reg_body(e->dev, 0, 1);
		r.batch = r.threshold + 1;
		assert_true(it_raw_send(fd, IPC_REGISTER, 12, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register batch > threshold");
		assert_alive(fd, a);
		r = it_reg_body(e->dev, 0, 1);
		memset(r.device, 'd', sizeof(r.device));
		assert_true(it_raw_send(fd, IPC_REGISTER, 13, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register device no NUL");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_SET_HINT, 14, &h, sizeof(h)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "priority 1000");
		assert_alive(fd, a);
		h.value = 1;
		h.slot = 0;
		assert_true(it_raw_send(fd, IPC_SET_HINT, 15, &h, sizeof(h)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "hint of no queue");
		assert_alive(fd, a);
		h.slot = 0xffffffffu;
		assert_true(it_raw_send(fd, IPC_SET_HINT, 16, &h, sizeof(h)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "hint of slot 2^32-1");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_CTL_SET, 17, &c, sizeof(c)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "ctl set target 9");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_UNREGISTER, 18, &u, sizeof(u)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "unregister pad");
		assert_alive(fd, a);
		u.pad = 0;
		u.slot = 60000;
		assert_true(it_raw_send(fd, IPC_UNREGISTER, 19, &u, sizeof(u)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "unregister slot 60000");
		assert_alive(fd, a);
		assert_true(it_raw_send(fd, IPC_LIST, 20, &l, sizeof(l)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "list flags");
		assert_alive(fd, a);
		/* Body one byte short of the type's size. */
		r = it_reg_body(e->dev, 0, 1);
		assert_true(raw_packet(fd, IPC_VERSION, IPC_REGISTER, FULL_LEN(r) - 1, &r,
				       sizeof(r) - 1) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register body short");
		assert_alive(fd, a);
	}
	close(fd);

	/* A control client registering; descriptors attached to a request. */
	fd = raw_ctl(e);
	{
		struct ipc_register r = it_reg_body(e->dev, 0, 1);
		union it_buf b;
		int pass[3], n;

		assert_true(it_raw_send(fd, IPC_REGISTER, 30, &r, sizeof(r)) > 0);
		assert_refused(a = it_raw_answer(fd, WAIT_MS, NULL), "register by a control client");
		assert_alive(fd, a);
		for (i = 0; i < 3; i++)
			pass[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		n = ipc_build(b.b, sizeof(b.b), IPC_STATUS, 31, NULL, 0);
		assert_true(ipc_send(fd, b.b, (size_t)n, pass, 3) > 0);
		for (i = 0; i < 3; i++)
			close(pass[i]);
		a = it_raw_answer(fd, WAIT_MS, NULL);
		assert_true(a == 0 || a == 1 || (a < 0 && a != -ETIMEDOUT));
	}
	close(fd);

	/* A stream of bad packets: the client is dropped, others are not. */
	fd = raw_agent(e);
	for (i = 0; i < 40; i++) {
		struct ipc_set_hint h = { .slot = 0, .key = 77, .value = 1 };

		if (it_raw_send(fd, IPC_SET_HINT, (uint32_t)i, &h, sizeof(h)) < 0)
			break;
	}
	for (a = 0; a != 1;) {
		a = it_raw_answer(fd, WAIT_MS, NULL);
		if (a == -ETIMEDOUT)
			fail_msg("a client sending only bad packets is never dropped");
	}
	close(fd);

	/* A client that sends requests and never reads: the daemon never blocks. */
	fd = raw_ctl(e);
	{
		int fl = fcntl(fd, F_GETFL);

		assert_int_equal(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
		for (i = 0; i < 20000; i++) {
			struct ipc_list l = { 0 };

			if (it_raw_send(fd, IPC_LIST, (uint32_t)i, &l, sizeof(l)) < 0)
				break;
			if (i % 1000 == 0)
				it_status(e);           /* the daemon keeps answering */
		}
	}
	st = it_status(e);
	close(fd);

	/* Everything refused is gone, nothing leaked, the other client works. */
	if (!IT_WAIT_UNTIL((st = it_status(e), st.clients == 2 && st.queues == 1) &&
			   count_fds(e->daemon) == fds0, WAIT_MS))
		fail_msg("daemon: %u clients, %u queues, %d fds (expected 2, 1, %d)",
			 st.clients, st.queues, count_fds(e->daemon), fds0);
	assert_true(IT_WAIT_UNTIL(it_queues(e, other, &other_rec) == 1 &&
				  other_rec.completed > done0 + 10, WAIT_MS));
	it_kill(e, other);
	case_done(e);
}

/*
 * max_clients = 2: this process's control connection and its agent fill
 * it; a third connection is closed, and the slot comes back once one
 * leaves. max_queues_per_client = 2: a third queue of this process is not
 * registered and runs unscheduled while the daemon suspends a registered
 * one.
 */
static void daemon_limits(void **state)
{
	struct it_env *e = *state;
	struct ipc_status_reply st;
	struct ipc_client extra;
	xs_queue *q1, *q2, *q3;
	uint64_t s2, s3;
	int fd;

	it_guard(60);
	it_config(e, "[daemon]\nmax_clients = 2\nmax_queues_per_client = 2\n");
	it_daemon_start(e, NULL);
	it_ctl_open(e);
	q1 = it_queue(e, 10);
	q2 = it_queue(e, 0);
	q3 = it_queue(e, 0);
	assert_true(IT_WAIT_UNTIL(agent_connected() && it_queues(e, getpid(), NULL) == 2,
				  WAIT_MS));
	st = it_status(e);
	assert_int_equal(st.clients, 2);
	assert_int_equal(st.queues, 2);

	/* A third client: connected by the kernel, closed by the daemon. */
	fd = raw_connect(e);
	{
		struct ipc_hello h = { .role = IPC_ROLE_CTL };

		it_raw_send(fd, IPC_HELLO, 1, &h, sizeof(h));
		assert_int_equal(it_raw_answer(fd, WAIT_MS, NULL), 1);
	}
	close(fd);
	assert_true(ipc_client_open(&extra, e->ctl, e->sock) < 0);
	st = it_status(e);
	assert_int_equal(st.clients, 2);

	/* The extra queue runs while a registered one is suspended. */
	it_submit(q1, 40, 10000);
	assert_true(IT_WAIT_UNTIL(it_suspended(q2), WAIT_MS));
	s2 = it_submit(q2, 1, 1000);
	s3 = it_submit(q3, 1, 1000);
	assert_int_equal(xs_wait(q3, s3), 0);
	assert_false(it_suspended(q3));
	assert_true(it_suspended(q2));
	assert_int_equal(xs_query(q2, s2), -EBUSY);
	assert_true(xs_query(q1, it_qstats(q1).submitted) == -EBUSY);

	/* A freed client slot can be taken again. */
	it_ctl_close(e);
	assert_true(IT_WAIT_UNTIL(ipc_client_open(&e->c, e->ctl, e->sock) == 0, WAIT_MS));
	st = it_status(e);
	assert_int_equal(st.clients, 2);
	assert_int_equal(xs_wait(q2, s2), 0);
	case_done(e);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(daemon_malformed_input, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(daemon_limits, it_setup, it_teardown),
	};

	return TU_RUN(tests, argc, argv);
}
