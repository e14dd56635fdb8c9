#!/usr/bin/env bash
# Checks the systemd files: the unit (generated from
# dist/systemd/xschedd.service.in by the build) passes `systemd-analyze
# verify` without a single message (verify only warns about unknown keys
# and still exits 0, so any stderr output fails), its hardening does not
# regress (offline security review), and the sysusers.d file parses.
# Given the built daemon, also plays the service manager's part of
# Type=notify: the daemon, started on dist/xschedd.conf with every key
# enabled, must report READY=1, handle ExecReload's SIGHUP with
# RELOADING=1 then READY=1, and stop on SIGTERM with status 0.
# PID 1 need not be systemd. Exits 77 (skipped) without systemd-analyze.
#   tests/test_units.sh UNIT [XSCHEDD]
# UNIT: the build's xschedd.service. XSCHEDD, the built daemon, replaces the
# installed path in ExecStart (verify wants an existing executable); without
# it /bin/true stands in. tests/test_install.sh checks installed units.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
unit=${1:?usage: test_units.sh UNIT [XSCHEDD]}
sysusers=$src/dist/sysusers.d/xsched.conf
config=$src/dist/xschedd.conf
daemon=${2:-}
[[ -n $daemon ]] || daemon=/bin/true
# Highest acceptable exposure of `systemd-analyze security` (0 best, 10 worst).
max_exposure=2.5

if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: systemd-analyze not found"
	exit 77
fi
[[ -x $daemon ]] || { echo "FAIL: $daemon is not executable"; exit 1; }
daemon=$(realpath "$daemon")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

grep -q '^ExecStart=/[^ ]*/xschedd --foreground$' "$unit" ||
	fail "ExecStart is not an absolute path of xschedd"
sed "s|^ExecStart=/[^ ]*/xschedd |ExecStart=$daemon |" "$unit" >"$tmp/xschedd.service"

# Documentation= names man pages that need not be installed here.
if ! systemd-analyze verify --man=no "$tmp/xschedd.service" >"$tmp/out" 2>"$tmp/err"; then
	fail "systemd-analyze verify failed"
fi
if [[ -s $tmp/err ]]; then
	fail "systemd-analyze verify printed:"
	sed 's/^/  /' "$tmp/err"
fi

if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	# Its exit status says little offline; the level it prints is checked.
	systemd-analyze security --offline=true "$tmp/xschedd.service" >"$tmp/sec" 2>&1
	exposure=$(sed -n 's/.*Overall exposure level for xschedd.service: \([0-9.]*\).*/\1/p' "$tmp/sec")
	if [[ -z $exposure ]]; then
		fail "systemd-analyze security gave no exposure level"
		sed 's/^/  /' "$tmp/sec"
	elif ! awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }'; then
		fail "exposure level $exposure is above $max_exposure"
		grep '✗' "$tmp/sec" | sed 's/^/  /'
	else
		echo "ok: exposure level $exposure"
	fi
else
	echo "SKIP: offline security review (systemd-analyze too old)"
fi

# The sysusers file, against an empty root so the group is always "created".
if command -v systemd-sysusers >/dev/null; then
	mkdir -p "$tmp/root"
	if ! systemd-sysusers --dry-run --root="$tmp/root" "$sysusers" >"$tmp/out" 2>&1; then
		fail "systemd-sysusers rejected $sysusers"
		sed 's/^/  /' "$tmp/out"
	elif ! grep -q "Creating group 'xsched'" "$tmp/out"; then
		fail "systemd-sysusers would not create group xsched"
		sed 's/^/  /' "$tmp/out"
	fi
	if grep -qiE 'warn|fail|error|ignor' "$tmp/out"; then
		fail "systemd-sysusers complained:"
		sed 's/^/  /' "$tmp/out"
	fi
else
	echo "SKIP: systemd-sysusers not found"
fi

# --- the daemon under a stand-in service manager ---------------------------
if [[ -z ${2:-} ]]; then
	echo "SKIP: notify protocol (no daemon given)"
elif ! command -v python3 >/dev/null; then
	echo "SKIP: notify protocol (python3 not found)"
else
	# Every documented key, enabled with its documented value.
	sed -E 's/^#([a-z][a-z0-9_.]* = )/\1/' "$config" >"$tmp/xschedd.conf"
	grep -q '^name = hpf$' "$tmp/xschedd.conf" || fail "could not enable the keys of $config"
	if ! python3 - "$daemon" "$tmp" >"$tmp/notify.log" 2>&1 <<'PY'
import os, select, signal, socket, subprocess, sys, time

daemon, tmp = sys.argv[1], sys.argv[2]
path = os.path.join(tmp, "notify")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
proc = subprocess.Popen(
    [daemon, "--foreground", "--config", os.path.join(tmp, "xschedd.conf"),
     "--socket", os.path.join(tmp, "c.sock"),
     "--control-socket", os.path.join(tmp, "ctl.sock")],
    env=dict(os.environ, NOTIFY_SOCKET=path), stdin=subprocess.DEVNULL,
    stderr=open(os.path.join(tmp, "daemon.err"), "w"))


pidfd = os.pidfd_open(proc.pid)


def expect(field):
    """Waits for a notification that carries field, e.g. READY=1."""
    deadline = time.monotonic() + 20
    while True:
        ready, _, _ = select.select([sock, pidfd], [], [],
                                    max(0, deadline - time.monotonic()))
        if sock in ready:
            msg = sock.recv(4096).decode()
            print("notify:", msg.replace("\n", " "))
            if field in msg.split("\n"):
                return msg
        elif pidfd in ready:
            sys.exit(f"daemon exited {proc.wait()} before {field}")
        else:
            sys.exit(f"no {field} within 20 s")


try:
    expect("READY=1")
    proc.send_signal(signal.SIGHUP)
    if "MONOTONIC_USEC=" not in expect("RELOADING=1"):
        sys.exit("RELOADING=1 without MONOTONIC_USEC")
    expect("READY=1")
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=20)
    if rc != 0:
        sys.exit(f"daemon exited {rc} after SIGTERM")
finally:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
PY
	then
		fail "notify protocol:"
		sed 's/^/  /' "$tmp/notify.log" "$tmp/daemon.err"
	elif grep -qE '^<[0-3]>' "$tmp/daemon.err"; then
		fail "the daemon logged errors with $config:"
		sed 's/^/  /' "$tmp/daemon.err"
	else
		echo "ok: notify protocol and example configuration"
	fi
fi

[[ $failures == 0 ]] && echo "ok: units"
[[ $failures == 0 ]]
