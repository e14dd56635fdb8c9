# Shared by the shell tests that start processes (test_cdi, test_pidns,
# test_podman, test_slurm, test_k8s, test_bypass, test_rqlat,
# test_heatmap): counting failures, waiting for a condition by polling
# (these tests watch other processes, which give no event to wait on) and
# a private daemon.
# Sourced, never run.
failures=0

# fail MESSAGE: reports a failure and counts it; the test goes on.
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# until_ok SECONDS CMD...: runs CMD every 0.1 s until it succeeds; returns
# CMD's last status once SECONDS have passed without success.
until_ok() {
	local end=$((SECONDS + $1)) rc
	shift
	while :; do
		"$@" && return 0
		rc=$?
		((SECONDS < end)) || return "$rc"
		sleep 0.1
	done
}

# private_daemon CONFIG [XSCHEDD_OPTION...]: a private xschedd (XSD_BIN)
# with configuration text CONFIG, in a new temporary directory $tmp that
# also holds the clients' simulated devices (the machine's default one may
# be another build's, of another layout version, or busy); its sockets are
# exported for clients, the scheduling hints of the caller's environment
# dropped, and its log is $tmp/log. Returns once `xschedctl status`
# (XSCTL_BIN) answers or after 10 s. At exit the pids in kids are killed,
# the daemon stopped and $tmp removed.
kids=()
private_daemon() {
	tmp=$(mktemp -d)
	trap private_daemon_cleanup EXIT
	export XSCHED_SIM_DIR=$tmp
	unset LD_PRELOAD XSCHED_PRIORITY XSCHED_SHARE XSCHED_DEADLINE_US XSCHED_LAXITY_US
	export XSCHED_SOCKET=$tmp/client.sock XSCHED_CONTROL_SOCKET=$tmp/ctl.sock
	printf '%s\n' "$1" >"$tmp/xschedd.conf"
	shift
	"$XSD_BIN" "$@" -c "$tmp/xschedd.conf" -s "$XSCHED_SOCKET" -C "$XSCHED_CONTROL_SOCKET" \
		>"$tmp/log" 2>&1 &
	daemon=$!
	for _ in $(seq 200); do
		"$XSCTL_BIN" status >/dev/null 2>&1 && break
		sleep 0.05
	done
}

# rqlat_daemon: a private daemon measuring run-queue latency; exits 77
# (the daemon's reason printed) where its eBPF programs cannot load.
rqlat_daemon() {
	private_daemon $'[observe]\nrunqueue_latency = yes'
	if grep -q 'run-queue latency unavailable' "$tmp/log"; then
		echo "SKIP: $(grep 'run-queue latency unavailable' "$tmp/log")"
		exit 77
	fi
}

private_daemon_cleanup() {
	local p
	for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done
	if [[ -n ${daemon:-} ]]; then
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	rm -rf "$tmp"
}
