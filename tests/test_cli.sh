#!/usr/bin/env bash
# Tests of xschedctl that need no daemon: help and usage, validation of
# every value before anything is sent (a verb that connected first would
# exit 3 here, since the sockets do not exist), the exit codes for "daemon
# not running" and "permission denied", and `run`, which must work alone.
#   tests/test_cli.sh BUILD_DIR|XSCHEDCTL [LIBDIR]
# LIBDIR: the configured libdir relative to the prefix (e.g.
# lib/x86_64-linux-gnu), where `run` also looks for installed shims.
set -u

arg=${1:?usage: test_cli.sh BUILD_DIR|XSCHEDCTL [LIBDIR]}
libdir=${2:-}
if [[ -f $arg && -x $arg ]]; then
	ctl=$(realpath "$arg")
else
	ctl=$(realpath "$arg/tools/xschedctl")
fi
[[ -x $ctl ]] || { echo "FAIL: no xschedctl at $ctl"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Sockets that do not exist; nothing here may reach a real daemon.
export XSCHED_CONTROL_SOCKET=$tmp/none/ctl.sock
export XSCHED_SOCKET=$tmp/none/client.sock
unset LD_PRELOAD XSCHED_SHIM_DIR XSCHED_PRIORITY XSCHED_SHARE XSCHED_DEADLINE_US \
	XSCHED_LAXITY_US JOURNAL_STREAM
out=$tmp/out
err=$tmp/err
failures=0
checks=0

fail() {
	echo "FAIL: $*"
	echo "  stdout: $(head -c 600 "$out")"
	echo "  stderr: $(head -c 600 "$err")"
	failures=$((failures + 1))
}

# expect RC CMD...: runs xschedctl CMD... and checks its exit status.
expect() {
	local want=$1 rc
	shift
	checks=$((checks + 1))
	"$ctl" "$@" >"$out" 2>"$err" </dev/null
	rc=$?
	[[ $rc == "$want" ]] || { fail "xschedctl $* exited $rc, expected $want"; return 1; }
	return 0
}

# Checks on the output of the last expect.
out_has() { grep -qE -- "$1" "$out" || fail "stdout lacks /$1/"; }
err_has() { grep -qE -- "$1" "$err" || fail "stderr lacks /$1/"; }
out_empty() { [[ ! -s $out ]] || fail "stdout not empty"; }
err_empty() { [[ ! -s $err ]] || fail "stderr not empty"; }

# A Unix SOCK_SEQPACKET socket file nobody listens on, with mode $2.
make_socket() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], int(sys.argv[2], 8))
EOF
}

verbs=(status list devices top set policy metrics bypass trace run cdi heatmap)

# --- help and version ----------------------------------------------------
for h in --help -h help; do
	expect 0 "$h" && { out_has '^Usage: xschedctl'; err_empty; }
done
for v in "${verbs[@]}"; do
	expect 0 "$v" --help && { out_has "^Usage: xschedctl $v"; err_empty; }
	expect 0 help "$v" && out_has "^Usage: xschedctl $v"
done
expect 0 set -h && out_has 'priority'
expect 0 --version && out_has '^xschedctl [0-9]'
expect 0 -V && out_has '^xschedctl [0-9]'

# --- usage errors: exit 1, a message, and no daemon contacted ------------
expect 1 && err_has 'Usage: xschedctl'
expect 1 frobnicate && err_has "unknown verb 'frobnicate'"
expect 1 help frobnicate && err_has 'unknown verb'
expect 1 --bogus status && err_has "unknown option '--bogus'"
expect 1 list --bogus && err_has "unknown option '--bogus'"
expect 1 list -x && err_has "unknown option '-x'"
expect 1 list extra && err_has 'unexpected argument'
expect 1 devices extra && err_has 'unexpected argument'
expect 1 heatmap --window 10 && err_has "invalid window '10'"
expect 1 heatmap --pid 1 --queue 2 && err_has 'exclude each other'
expect 1 heatmap -o png && err_has 'needs --out FILE'
expect 1 heatmap --width 3 && err_has "invalid width '3'"
expect 1 devices --pid 1 && err_has 'unknown option'
expect 1 status --pid 1 && err_has 'unknown option'
expect 1 -o yaml list && err_has 'unknown output format'
expect 1 list --output && err_has 'needs a value'
expect 1 list --pid 0 && err_has 'invalid pid'
expect 1 list --pid abc && err_has 'invalid pid'
expect 1 set priority 500 --pid 1 && { err_has 'priority 500 is out of range'; out_empty; }
expect 1 set priority -101 --pid 1 && err_has 'out of range'
expect 1 set level 4 --queue 1 && err_has 'level 4 is out of range'
expect 1 set level 0 --queue 1 && err_has 'out of range'
expect 1 set share -1 --pid 1 && err_has 'share -1 is out of range'
expect 1 set memory-limit lots --pid 1 && err_has "invalid memory-limit 'lots' \(a size above zero"
expect 1 set memory-limit 0 --pid 1 && err_has "invalid memory-limit '0'"
expect 1 set memory-limit 8G --queue 1 && err_has "memory-limit is a process's: give --pid PID"
expect 1 set budget 0 --pid 1 && err_has 'out of range'
expect 1 set budget -2 --pid 1 && err_has 'out of range'
expect 1 set threshold 1025 --pid 1 && err_has 'out of range'
expect 1 set batch 0 --pid 1 && err_has 'out of range'
expect 1 set deadline -1 --pid 1 && err_has 'out of range'
expect 1 set deadline 5h --pid 1 && err_has 'invalid deadline'
expect 1 set priority abc --pid 1 && err_has 'invalid priority'
expect 1 set priority 1x --pid 1 && err_has 'invalid priority'
expect 1 set colour 5 --pid 1 && err_has "unknown key 'colour'"
expect 1 set priority 5 && err_has 'exactly one of --pid'
expect 1 set priority 5 --pid 1 --queue 2 && err_has 'exactly one of --pid'
expect 1 set priority 5 --pid -3 && err_has 'invalid pid'
expect 1 set priority && err_has 'missing value'
expect 1 set && err_has 'missing key'
expect 1 set priority 5 6 --pid 1 && err_has 'unexpected argument'
expect 1 policy && err_has "missing 'get' or 'set'"
expect 1 policy frob && err_has 'unknown policy command'
expect 1 policy set && err_has 'missing policy name'
expect 1 policy set 'bad name!' && err_has 'invalid policy name'
expect 1 policy set ./no-such-policy.so && err_has 'cannot resolve'
expect 1 policy get extra && err_has 'unexpected argument'
expect 1 metrics extra && err_has 'unexpected argument'
expect 1 top -n 0 && err_has 'invalid count'
expect 1 top -d 0 && err_has 'invalid delay'
expect 1 top -d x && err_has 'invalid delay'
expect 1 run && err_has 'missing command'
expect 1 run --priority 500 -- true && err_has 'out of range'
expect 1 run --share -1 -- true && err_has 'out of range'
expect 1 run --deadline soon -- true && err_has 'invalid --deadline'
expect 1 run --lib "$tmp/none/libx.so" -- true && err_has 'shim library'

# Valid values pass validation and only then fail to connect.
expect 3 set budget -1 --pid 1
expect 3 set priority -100 --queue 7
expect 3 set deadline 20ms -p 1
expect 3 set laxity 1s -q 1

# --- daemon not running: exit 3, nothing on stdout ------------------------
for cmd in status list devices metrics "policy get" "top -b -n 1" "policy set hpf" \
	   "set priority 1 --pid 1"; do
	# shellcheck disable=SC2086
	expect 3 $cmd && { err_has 'daemon not running'; out_empty; }
	[[ $cmd == metrics ]] && continue
	# shellcheck disable=SC2086
	expect 3 $cmd -o json && out_empty
done
# The exposition format is the only output of metrics.
expect 1 metrics -o json && { err_has 'Prometheus text format only'; out_empty; }
expect 1 -o json metrics && err_has 'not supported'
expect 3 metrics -o table
expect 3 status && err_has "no socket at $XSCHED_CONTROL_SOCKET"
# Options override the environment, before or after the verb.
expect 3 --control "$tmp/ctl2.sock" --socket "$tmp/c2.sock" list -o json &&
	{ err_has "$tmp/ctl2.sock"; out_empty; }
expect 3 list --control "$tmp/ctl3.sock" && err_has "$tmp/ctl3.sock"
# A stale socket file (the daemon died): connection refused.
make_socket "$tmp/stale.sock" 666
expect 3 --control "$tmp/stale.sock" status && err_has 'nothing listens'

# --- permission denied: exit 4 ---------------------------------------------
# Needs an unprivileged user: root connects to any socket file. As root,
# the checks run as nobody through setpriv when that is possible.
chmod 755 "$tmp"
make_socket "$tmp/denied-ctl.sock" 000
make_socket "$tmp/denied-cli.sock" 000
as_user=()
if [[ $(id -u) == 0 ]]; then
	if command -v setpriv >/dev/null &&
	   setpriv --reuid=65534 --regid=65534 --clear-groups "$ctl" --version >/dev/null 2>&1; then
		as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	else
		as_user=(skip)
	fi
fi
if [[ ${as_user[0]:-} == skip ]]; then
	echo "SKIP: permission checks (root, and cannot run xschedctl as nobody)"
else
	deny() {
		local want=$1 rc
		shift
		checks=$((checks + 1))
		"${as_user[@]}" "$ctl" "$@" >"$out" 2>"$err" </dev/null
		rc=$?
		[[ $rc == "$want" ]] || { fail "xschedctl $* (unprivileged) exited $rc, expected $want"; return 1; }
	}
	deny 4 --control "$tmp/denied-ctl.sock" --socket "$tmp/denied-cli.sock" status &&
		{ err_has 'permission denied'; out_empty; }
	deny 4 --control "$tmp/denied-ctl.sock" --socket "$tmp/denied-cli.sock" list -o json &&
		out_empty
	# The control socket refuses us and no client socket exists: not running.
	deny 3 --control "$tmp/denied-ctl.sock" --socket "$tmp/none.sock" status &&
		err_has "no socket at $tmp/none.sock"
fi

# --- run: no daemon needed ---------------------------------------------------
# A copy of xschedctl with no shim beside it, so that only what a case puts
# in place is found.
mkdir -p "$tmp/noshims" "$tmp/bin"
cp "$ctl" "$tmp/bin/xschedctl"
build_ctl=$ctl
ctl=$tmp/bin/xschedctl
export XSCHED_SHIM_DIR=$tmp/noshims
# No shim anywhere: refused, one line naming where it looked.
places=$tmp/lib/xsched
[[ -n $libdir && $libdir != lib ]] && places="$tmp/$libdir/xsched, $places"
expect 1 run --priority 7 -- env &&
	{ out_empty; err_has "no xsched shim found \(looked in $places, $tmp/src/shim/\*, $tmp/noshims\)";
	  [[ $(wc -l <"$err") == 1 ]] || fail "more than one line on stderr"; }
expect 1 run --dry-run -- env && err_has 'no xsched shim found'
expect 1 run --api opencl -- env && err_has "no libxsched-opencl.so found \(looked in $places, $tmp/src/shim/opencl, $tmp/noshims\)"
unset XSCHED_SHIM_DIR
expect 1 run -- env && err_has '\$XSCHED_SHIM_DIR unset'
export XSCHED_SHIM_DIR=$tmp/noshims
expect 1 run --api cuda,frobnicate -- env && err_has "unknown API 'frobnicate'"
expect 1 run --api , -- env && err_has 'at least one'
expect 1 run --api cuda --lib "$ctl" -- env && err_has 'exclude each other'
# --allow-unscheduled runs it with the hints, no LD_PRELOAD, and a warning.
expect 0 run --allow-unscheduled --priority 7 --share 3 --deadline 2ms --laxity 500 -- env &&
	{ out_has '^XSCHED_PRIORITY=7$'; out_has '^XSCHED_SHARE=3$';
	  out_has '^XSCHED_DEADLINE_US=2000$'; out_has '^XSCHED_LAXITY_US=500$';
	  err_has 'running env unscheduled'; ! grep -q '^LD_PRELOAD=' "$out" ||
	  fail "LD_PRELOAD set without shims"; }
expect 0 run --allow-unscheduled --priority -5 env && out_has '^XSCHED_PRIORITY=-5$'
expect 0 run --allow-unscheduled --memory-limit 8G -- env && out_has '^XSCHED_MEMORY_LIMIT=8G$'
expect 1 run --allow-unscheduled --memory-limit lots -- env &&
	err_has "invalid memory-limit 'lots'"
expect 1 run --allow-unscheduled --memory-limit 0 -- env && err_has "invalid memory-limit '0'"
expect 0 run --allow-unscheduled -- env &&
	{ ! grep -q '^XSCHED_PRIORITY=' "$out" || fail "hint set unasked"; }
expect 0 --socket "$tmp/s.sock" run --allow-unscheduled -- env &&
	out_has "^XSCHED_SOCKET=$tmp/s.sock\$"
# shellcheck disable=SC2016 # expanded by the inner shell
expect 0 run --allow-unscheduled -- sh -c 'echo "$0 $1"' a -b && out_has '^a -b$'
expect 7 run --allow-unscheduled -- sh -c 'exit 7'
expect 127 run --allow-unscheduled -- "$tmp/none/cmd" && err_has 'cannot run'

# Shims found in $XSCHED_SHIM_DIR go first in LD_PRELOAD. The files are
# empty: the loader warns about them on stderr and goes on.
mkdir -p "$tmp/shims"
: >"$tmp/shims/libxsched-cuda.so"
: >"$tmp/shims/libxsched-levelzero.so"
: >"$tmp/shims/libother.so"
export XSCHED_SHIM_DIR=$tmp/noshims:$tmp/shims
expect 0 run -- env &&
	out_has "^LD_PRELOAD=$tmp/shims/libxsched-cuda.so:$tmp/shims/libxsched-levelzero.so\$"
checks=$((checks + 1))
# (An ASan build would refuse to start with a preload ahead of its runtime.)
ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=libm.so.6 "$ctl" run -- env >"$out" 2>"$err"
out_has "^LD_PRELOAD=$tmp/shims/libxsched-cuda.so:$tmp/shims/libxsched-levelzero.so:libm.so.6\$"
# --api picks among them and requires each one named.
expect 0 run --api levelzero --dry-run -- env &&
	{ out_has "^LD_PRELOAD=$tmp/shims/libxsched-levelzero.so\$"; [[ $(wc -l <"$out") == 1 ]] || fail "more than LD_PRELOAD printed"; }
expect 1 run --api levelzero,opencl -- env && err_has 'no libxsched-opencl.so found'
# --dry-run prints what it would set and runs nothing.
expect 0 --socket "$tmp/s.sock" run -n --priority 3 -- touch "$tmp/ran" &&
	{ out_has '^XSCHED_PRIORITY=3$'; out_has "^XSCHED_SOCKET=$tmp/s.sock\$"; out_has '^LD_PRELOAD=';
	  [[ ! -e $tmp/ran ]] || fail "--dry-run ran the command"; }
expect 0 run --dry-run && out_has '^LD_PRELOAD='
# --lib replaces the search, relative paths become absolute.
checks=$((checks + 1))
(cd "$tmp/shims" && "$ctl" run --lib libother.so -- env >"$out" 2>"$err")
out_has "^LD_PRELOAD=$tmp/shims/libother.so\$"

# Next to the executable: an installed prefix (<prefix>/lib/xsched, or the
# configured libdir) comes before $XSCHED_SHIM_DIR, shim by shim.
mkdir -p "$tmp/pfx/bin" "$tmp/pfx/lib/xsched"
cp "$ctl" "$tmp/pfx/bin/xschedctl"
: >"$tmp/pfx/lib/xsched/libxsched-cuda.so"
ctl=$tmp/pfx/bin/xschedctl
expect 0 run -n -- env &&
	out_has "^LD_PRELOAD=$tmp/pfx/lib/xsched/libxsched-cuda.so:$tmp/shims/libxsched-levelzero.so\$"
if [[ -n $libdir && $libdir != lib ]]; then
	mkdir -p "$tmp/pfx/$libdir/xsched"
	: >"$tmp/pfx/$libdir/xsched/libxsched-cuda.so"
	expect 0 run -n --api cuda -- env &&
		out_has "^LD_PRELOAD=$tmp/pfx/$libdir/xsched/libxsched-cuda.so\$"
fi
# A build tree: tools/xschedctl finds src/shim/*/ (the real shims built).
ctl=$build_ctl
unset XSCHED_SHIM_DIR
build=$(dirname "$(dirname "$ctl")")
if [[ -f $build/src/shim/cuda/libxsched-cuda.so ]]; then
	expect 0 run -n --api cuda -- env &&
		out_has "^LD_PRELOAD=$build/src/shim/cuda/libxsched-cuda.so\$"
fi

echo "$checks checks, $failures failures"
[[ $failures == 0 ]]
