#!/usr/bin/env bash
# Device enforcement end to end (src/daemon/enforce.c, src/bpf/gate.bpf.c,
# src/agent/agent_enforce.c): a private xschedd with [enforce] devices = on
# and a character device node made with mknod with the NVIDIA driver's
# major number (195:0) in a temporary directory. No driver is loaded, so an
# open that gets past the gate fails with ENXIO; one the gate refuses fails
# with EPERM. xs_devopen prints which.
#  - in scope (one uid): unregistered EPERM (logged once, listed as
#    denied with its count, counted in the metrics); under the CUDA shim
#    (registered before main) ENXIO; a child by fork() registers and gets
#    ENXIO, one by the raw system call does not and gets EPERM; exec of a
#    program without the shim loses the registration; a registration by a
#    process without xsched loaded is refused; out of scope (another uid)
#    and an exempt executable get ENXIO;
#  - SIGHUP to cgroup scope with an exempt child cgroup and exempt_root =
#    no; then to audit (nothing refused, listed as would-deny);
#  - a stopped daemon with fail = open (the gate opens after 6 s silent,
#    closes when it beats again);
#  - kill -9 of the daemon with fail = open (the gate goes) and with
#    fail = closed (it stays; a process registered before keeps access; a
#    new daemon finds the allowed set); devices = off removes the pins;
#  - the pinned maps are root's alone (mode 0600);
#  - a process holding the device when the gate starts is listed as held.
# The uids in scope and out of it are picked from the pid (60000-64999), so
# that runs of two builds at once do not refuse each other's processes.
# Needs root, eBPF and a cgroup v2 mount; exits 77 (skipped) otherwise, or
# when the gate cannot load (the daemon's log says why).
#   tests/test_enforce.sh   (paths come from the environment, set by CTest)
set -u

: "${XSD_BIN:?}" "${XSCTL_BIN:?}" "${XS_DEVOPEN:?}" "${XS_CUDA_SHIM:?}"
XS_SAN_RT=${XS_SAN_RT:-}

[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (eBPF)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: needs setpriv (util-linux)"; exit 77; }
cgroot=$(findmnt -t cgroup2 -no TARGET | head -n1)
[[ -n $cgroot ]] || { echo "SKIP: no cgroup v2 mount"; exit 77; }
if ! findmnt -t bpf /sys/fs/bpf >/dev/null; then
	mount -t bpf bpf /sys/fs/bpf || { echo "SKIP: cannot mount bpffs on /sys/fs/bpf"; exit 77; }
fi

# shellcheck source=sh_util.sh
. "$(dirname "$0")/sh_util.sh"
u=$((60000 + $$ % 5000)) u2=$((60000 + ($$ + 1) % 5000))
pin=/sys/fs/bpf/xsched-test-$$
cg=$cgroot/xsched-enforce-$$
conf_base="[enforce]
pin_path = $pin"
private_daemon "$conf_base
devices = on
uids = $u
exempt_executables = /nonexistent/exempt-devopen" -v
cleanup() {
	private_daemon_cleanup
	rm -rf "$pin"
	rmdir "$cg/free" "$cg" 2>/dev/null
}
trap cleanup EXIT
chmod 755 "$tmp"
if grep -q 'device enforcement (on) unavailable' "$tmp/log"; then
	echo "SKIP: $(grep 'unavailable' "$tmp/log")"
	exit 77
fi
grep -q 'device enforcement on (' "$tmp/log" ||
	{ echo "FAIL: the daemon did not start the gate"; cat "$tmp/log"; exit 1; }
hook=$(grep -o 'device enforcement on ([a-z/_]*)' "$tmp/log" | head -n1)
echo "ok: $hook"
node=$tmp/nvidia0
mknod "$node" c 195 0
chmod 666 "$node"
cp "$XS_DEVOPEN" "$tmp/exempt-devopen"

preload() { echo "${XS_SAN_RT:+$XS_SAN_RT }$XS_CUDA_SHIM"; }
as_uid() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups "$@"; }
# devopen UID [--shim] ARGS...: xs_devopen as UID (under the CUDA shim with --shim).
devopen() {
	local u=$1; shift
	if [[ ${1:-} == --shim ]]; then
		shift
		as_uid "$u" env LD_PRELOAD="$(preload)" "$XS_DEVOPEN" "$@" "$node" 2>&1
	else
		as_uid "$u" "$XS_DEVOPEN" "$@" "$node" 2>&1
	fi
}
# expect WHAT OUTPUT LINE: OUTPUT has LINE ("self: EPERM").
expect() {
	if grep -qx "$3" <<<"$2"; then
		echo "ok: $1: $3"
	else
		fail "$1: expected '$3', got: $(tr '\n' '|' <<<"$2")"
	fi
}
# state PID: its state in `xschedctl bypass --all`, or "none".
state() {
	"$XSCTL_BIN" bypass --all -o json 2>/dev/null | grep -o "{\"pid\":$1,[^}]*" |
		grep -o '"state":"[a-z-]*"' | cut -d'"' -f4 | grep . || echo none
}
restart_daemon() {
	"$XSD_BIN" -v -c "$tmp/xschedd.conf" -s "$XSCHED_SOCKET" -C "$XSCHED_CONTROL_SOCKET" \
		>>"$tmp/log" 2>&1 &
	daemon=$!
	until_ok 10 "$XSCTL_BIN" status >/dev/null 2>&1
}
reloads() { grep -c 'configuration reloaded' "$tmp/log"; }
reloaded_since() { (($(reloads) > $1)); }
reload() {
	printf '%s\n' "$1" >"$tmp/xschedd.conf"
	local n
	n=$(reloads)
	kill -HUP "$daemon"
	until_ok 5 reloaded_since "$n" ||
		fail "the daemon did not reload ($n before, $(grep -c "configuration reloaded" "$tmp/log") now)"
}

# --- the gate, scope uid $u -------------------------------------------------
devopen $u --hold 4000 >/dev/null &
bg=$!
sleep 0.3
pid=$(pgrep -u $u -f "$XS_DEVOPEN" | head -n1)
is_state() { [[ $(state "$1") == "$2" ]]; }
until_ok 3 is_state "$pid" denied ||
	fail "the refused process (pid $pid) is not listed as denied: $(state "$pid")"
"$XSCTL_BIN" bypass -o json | grep -o "{\"pid\":$pid,[^}]*" | grep -q '"denied":[1-9]' ||
	fail "no refusal counted for pid $pid: $("$XSCTL_BIN" bypass -o json)"
"$XSCTL_BIN" bypass | grep -qE "^ *$pid +$u +xs_devopen +denied" ||
	fail "the table does not show pid $pid denied: $("$XSCTL_BIN" bypass)"
wait "$bg"
out=$(devopen $u)
expect "unregistered, in scope" "$out" "self: EPERM"
grep -q "device enforcement: refused pid [0-9]* (xs_devopen, uid $u" "$tmp/log" ||
	fail "no log line for the refusal"
n=$(grep -c "refused pid $pid " "$tmp/log")
[[ $n == 1 ]] || fail "pid $pid logged $n times, expected once"
"$XSCTL_BIN" metrics | grep -qE "^xsched_enforce_denied_total\\{uid=\"$u\",comm=\"xs_devopen\"\\} [2-9]" ||
	fail "xsched_enforce_denied_total does not count the refusals"
"$XSCTL_BIN" metrics | grep -qE '^xsched_enforce_up\{mode="on",hook="[a-z/_]+"\} 1' ||
	fail "xsched_enforce_up is not 1"

"$XSCTL_BIN" status | grep -qE "^  Devices: +enforced, on \((lsm/file_open|cgroup/dev), fail = open\), [1-9][0-9]* process(es)? refused$" &&
	echo "ok: xschedctl status: $("$XSCTL_BIN" status | grep Devices:)" ||
	fail "xschedctl status: $("$XSCTL_BIN" status | grep Devices:)"
"$XSCTL_BIN" status -o json | grep -q '"device_enforcement":{"mode":"on","running":true' ||
	fail "xschedctl status -o json: $("$XSCTL_BIN" status -o json)"

out=$(devopen $u --shim)
expect "registered by the shim before main" "$out" "self: ENXIO"
out=$(devopen $u --shim --fork --fork-raw)
expect "child by fork() (registers itself)" "$out" "child: ENXIO"
grep -qx "child: ENXIO" <<<"$out" && grep -qx "child: EPERM" <<<"$out" &&
	echo "ok: child by the raw fork system call (no atfork handler): child: EPERM" ||
	fail "raw fork child: expected one ENXIO and one EPERM child, got: $(tr '\n' '|' <<<"$out")"
out=$(as_uid $u env LD_PRELOAD="$(preload)" bash -c "exec env -u LD_PRELOAD '$XS_DEVOPEN' '$node'" 2>&1)
expect "exec of a program without the shim" "$out" "self: EPERM"
out=$(devopen $u --register)
expect "registration without xsched loaded" "$out" "register: EPERM"
expect "... and it stays refused" "$out" "self: EPERM"
grep -q "asked to register without an xsched library loaded: refused" "$tmp/log" ||
	fail "the refused registration was not logged"
out=$(devopen $u2)
expect "out of scope (uid $u2)" "$out" "self: ENXIO"
out=$(bash -c "exec '$XS_DEVOPEN' '$node'")
expect "root (exempt_root = yes)" "$out" "self: ENXIO"

# Exempt executables by inode, given by a reload.
reload "$conf_base
devices = on
uids = $u
exempt_executables = $tmp/exempt-devopen"
out=$(as_uid $u "$tmp/exempt-devopen" "$node" 2>&1)
expect "exempt executable" "$out" "self: ENXIO"
out=$(devopen $u)
expect "the same program elsewhere is not exempt" "$out" "self: EPERM"

# The pinned maps are root's.
perm=$(stat -c '%a %u' "$pin/gate_allowed" 2>/dev/null)
[[ $perm == "600 0" ]] && echo "ok: the allowed set is pinned mode 600, uid 0" ||
	fail "$pin/gate_allowed: mode and owner '$perm', expected '600 0'"
as_uid $u cat "$pin/gate_allowed" >/dev/null 2>&1 &&
	fail "uid $u could open the pinned allowed set"

# --- scope by cgroup, changed by SIGHUP ------------------------------------------
mkdir -p "$cg/free"
reload "$conf_base
devices = on
cgroups = /${cg#"$cgroot"/}
exempt_cgroups = /${cg#"$cgroot"/}/free
exempt_root = no"
incg() { bash -c "echo \$\$ >'$1/cgroup.procs' && exec '$XS_DEVOPEN' '$node'" 2>&1; }
out=$(incg "$cg")
expect "root in a cgroup in scope (exempt_root = no)" "$out" "self: EPERM"
out=$(incg "$cg/free")
expect "root in an exempt child cgroup" "$out" "self: ENXIO"
out=$(bash -c "exec '$XS_DEVOPEN' '$node'")
expect "root out of the cgroups in scope" "$out" "self: ENXIO"
out=$(devopen $u)
expect "uid $u out of scope after the reload" "$out" "self: ENXIO"

# --- audit ------------------------------------------------------------------------
reload "$conf_base
devices = audit
uids = $u"
grep -q 'device enforcement audit (' "$tmp/log" || fail "the reload did not switch to audit"
devopen $u --hold 2500 >"$tmp/audit.out" &
bg=$!
sleep 0.3
pid=$(pgrep -u $u -f "$XS_DEVOPEN" | head -n1)
until_ok 3 is_state "$pid" would-deny ||
	fail "audit: pid $pid not listed as would-deny: $(state "$pid")"
wait "$bg"
expect "audit refuses nothing" "$(cat "$tmp/audit.out")" "self: ENXIO"
grep -q "(audit) would refuse pid $pid " "$tmp/log" || fail "audit: no log line for pid $pid"

# --- kill -9, fail = open ----------------------------------------------------------
reload "$conf_base
devices = on
uids = $u"
expect "on again" "$(devopen $u)" "self: EPERM"
# A hung daemon (stopped): the gate holds, then opens once three of its
# 2 s beats are missed, and closes again when it beats.
kill -STOP "$daemon"
expect "fail = open: a daemon just stopped" "$(devopen $u)" "self: EPERM"
sleep 7
expect "fail = open: a daemon silent for 7 s refuses nothing" "$(devopen $u)" "self: ENXIO"
kill -CONT "$daemon"
gate_back() { [[ $(devopen $u) == "self: EPERM" ]]; }
until_ok 5 gate_back && echo "ok: fail = open: the daemon beats again, the gate refuses again" ||
	fail "the gate did not come back after SIGCONT"
kill -9 "$daemon"
wait "$daemon" 2>/dev/null
out=$(devopen $u)
expect "fail = open: a dead daemon refuses nothing" "$out" "self: ENXIO"

# --- kill -9, fail = closed ------------------------------------------------------------
printf '%s\n' "$conf_base
devices = on
fail = closed
uids = $u" >"$tmp/xschedd.conf"
restart_daemon
grep -q 'fail = closed' "$tmp/log" || fail "the daemon did not start with fail = closed"
go=$tmp/go
devopen $u --shim --wait "$go" >"$tmp/closed.out" &
bg=$!
sleep 0.5
kill -9 "$daemon"
wait "$daemon" 2>/dev/null
out2=$(devopen $u)
expect "fail = closed: unregistered, daemon dead" "$out2" "self: EPERM"
touch "$go"
wait "$bg"
expect "fail = closed: registered before, daemon dead" "$(cat "$tmp/closed.out")" "self: ENXIO"
out=$(devopen $u --shim)
grep -q "could not register" <<<"$out" || fail "the shim did not warn that it could not register"
expect "fail = closed: the shim cannot register, daemon dead" "$out" "self: EPERM"
restart_daemon
grep -qE 'allowed set in .*: [0-9]+ processes kept' "$tmp/log" ||
	fail "the new daemon did not report the allowed set it found"
expect "fail = closed: a new daemon" "$(devopen $u)" "self: EPERM"
expect "fail = closed: a new daemon, registered" "$(devopen $u --shim)" "self: ENXIO"

# --- devices = off removes it all ----------------------------------------------------
reload "$conf_base
devices = off"
expect "devices = off" "$(devopen $u)" "self: ENXIO"
"$XSCTL_BIN" status | grep -qE "^  Devices: +not enforced$" ||
	fail "xschedctl status with devices = off: $("$XSCTL_BIN" status | grep Devices:)"
[[ -e $pin ]] && fail "$pin is still there after devices = off"
[[ -e $XSCHED_SOCKET.enforce ]] && fail "$XSCHED_SOCKET.enforce is still there after devices = off"

# --- a process holding the device when the gate starts: listed, not stopped ---------
# A node that opens without a driver: /dev/full's numbers (few programs open it:
# the gate applies to the whole node), gated as an extra device.
mknod "$tmp/full2" c 1 7
chmod 666 "$tmp/full2"
setpriv --reuid $u --regid $u --clear-groups bash -c "exec 3<>'$tmp/full2'; exec sleep 4" &
holder=$!
kids+=("$holder")
sleep 0.3
reload "$conf_base
devices = on
uids = $u
extra_devices = 1:7"
until_ok 3 is_state "$holder" held ||
	fail "the holder (pid $holder) is not listed as held: $(state "$holder")"
kill -0 "$holder" 2>/dev/null && echo "ok: a process holding the device at the start: held, running" ||
	fail "the holder was stopped"
grep -q "pid $holder (sleep, uid $u) held device 1:7 before the gate started" "$tmp/log" ||
	fail "no warning for the holder"
# A registered holder is not listed when a new daemon starts (the allowed
# set is pinned); the unregistered one is, again.
setpriv --reuid $u --regid $u --clear-groups env LD_PRELOAD="$(preload)" \
	bash -c "exec 3<>'$tmp/full2'; exec sleep 4" &
reg_holder=$!
kids+=("$reg_holder")
sleep 0.3
kill "$daemon"
wait "$daemon" 2>/dev/null
restart_daemon
until_ok 3 is_state "$holder" held ||
	fail "after a restart, the unregistered holder (pid $holder) is not listed: $(state "$holder")"
[[ $(state "$reg_holder") == none ]] && echo "ok: after a restart, a registered holder is not listed" ||
	fail "the registered holder (pid $reg_holder) is listed: $(state "$reg_holder")"

if ((failures)); then
	echo "--- xschedd log"
	grep -v libbpf "$tmp/log"
	exit 1
fi
echo "PASS"
