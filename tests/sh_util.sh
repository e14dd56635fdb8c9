# Shared by the shell tests that start processes (test_cdi, test_pidns,
# test_podman, test_slurm, test_k8s): counting failures and waiting for a
# condition by polling (these tests watch other processes, which give no
# event to wait on). Sourced, never run.
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
