#!/usr/bin/env bash
# Checks the systemd files in dist/: the unit passes `systemd-analyze
# verify` without a single message (verify only warns about unknown keys
# and still exits 0, so any stderr output fails), its hardening does not
# regress (offline security review), and the sysusers.d file parses.
# PID 1 need not be systemd. Exits 77 (skipped) without systemd-analyze.
#   tests/test_units.sh [XSCHEDD]
# XSCHEDD, the built daemon, replaces /usr/sbin/xschedd in ExecStart (verify
# wants an existing executable); without it /bin/true stands in.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
unit=$src/dist/systemd/xschedd.service
sysusers=$src/dist/sysusers.d/xsched.conf
daemon=${1:-}
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

grep -q '^ExecStart=/usr/sbin/xschedd ' "$unit" || fail "ExecStart is not /usr/sbin/xschedd"
sed "s|^ExecStart=/usr/sbin/xschedd |ExecStart=$daemon |" "$unit" >"$tmp/xschedd.service"

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

[[ $failures == 0 ]] && echo "ok: units"
[[ $failures == 0 ]]
