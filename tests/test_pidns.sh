#!/usr/bin/env bash
# A process in a pid namespace of its own (as in any container) registers
# with the host's xschedd under its host pid: SO_PEERCRED's pid is
# translated into the daemon's namespace, so `xschedctl list` shows the
# pid the host knows (and `set --pid` reaches), with the process's own pid
# beside it (nspid), while a process of the host's namespace has none.
# The namespace comes from unshare(1) (root, or unprivileged user
# namespaces); exits 77 when it cannot make one.
#   tests/test_pidns.sh --ctl XSCHEDCTL --daemon XSCHEDD --load XS_LOAD
set -u

ctl= daemon= load=
while [[ $# -gt 0 ]]; do
	case $1 in
	--ctl) ctl=$2 ;;
	--daemon) daemon=$2 ;;
	--load) load=$2 ;;
	*) echo "usage: $0 --ctl X --daemon X --load X" >&2; exit 2 ;;
	esac
	shift 2
done
for f in "$ctl" "$daemon" "$load"; do
	[[ -n $f && -x $f ]] || { echo "FAIL: missing program '$f'"; exit 1; }
done
userns=()
[[ $(id -u) == 0 ]] || userns=(--user --map-root-user)
if ! unshare "${userns[@]}" --pid --fork --mount-proc true 2>/dev/null; then
	echo "SKIP: cannot create a pid namespace here (unshare --pid)"
	exit 77
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/sh_util.sh"

export XSCHED_SIM_DIR=$tmp XSCHED_SIM_DEVICE=xs-pidns-test
unset LD_PRELOAD XSCHED_PRIORITY XSCHED_SCHEDULER XSCHED_DISABLE
"$daemon" --foreground --config /dev/null --socket "$tmp/c.sock" \
	--control-socket "$tmp/ctl.sock" 2>"$tmp/daemon.log" &
pids+=($!)
until_ok 20 test -S "$tmp/ctl.sock" || { fail "daemon not listening"; cat "$tmp/daemon.log"; exit 1; }
export XSCHED_SOCKET=$tmp/c.sock

# One xs_load on the host, then one as pid 1 of a new namespace (exec, so
# the namespace's first process is xs_load itself).
"$load" --flood --duration-s 30 --priority 3 >"$tmp/host.out" 2>&1 &
host_pid=$!
pids+=("$host_pid")
host_listed() {
	"$ctl" --control "$tmp/ctl.sock" list --pid "$host_pid" -o json 2>/dev/null | grep -q '"queue"'
}
until_ok 20 host_listed || { fail "the host's xs_load never registered"; cat "$tmp/host.out"; }
# A device of its own: the simulated device tracks its users by pid, which
# works within one pid namespace only.
XSCHED_SIM_DEVICE=xs-pidns-test-ns unshare "${userns[@]}" --pid --fork --mount-proc --kill-child \
	"$load" --flood --duration-s 30 --priority 4 >"$tmp/ns.out" 2>&1 &
pids+=($!)
ns_parent=$!

# The namespaced xs_load's host pid: the child of unshare.
ns_pid=
find_child() {
	ns_pid=$(ps -o pid= --ppid "$ns_parent" | tr -d ' ')
	[[ -n $ns_pid ]]
}
until_ok 20 find_child || fail "no child of unshare"

listed() {
	"$ctl" --control "$tmp/ctl.sock" list -o json >"$tmp/list.json" 2>"$tmp/list.err" &&
	/usr/bin/python3 - "$tmp/list.json" "$host_pid" "$ns_pid" <<'PY'
import json, sys
qs = json.load(open(sys.argv[1]))["queues"]
host, ns = int(sys.argv[2]), int(sys.argv[3])
h = [q for q in qs if q["pid"] == host]
n = [q for q in qs if q["pid"] == ns]
if not h or not n:
    sys.exit(1)
bad = []
if any(q["nspid"] is not None for q in h):
    bad.append(f"host process with an nspid: {h}")
if any(q["nspid"] != 1 or q["priority"] != 4 for q in n):
    bad.append(f"namespaced process: {n}")
for b in bad:
    print("  " + b)
sys.exit(2 if bad else 0)
PY
}
until_ok 20 listed
case $? in
0) echo "ok: host pid $host_pid (no nspid) and namespaced pid $ns_pid (nspid 1) listed" ;;
*) fail "the queues are not listed as expected"
   cat "$tmp/list.json" "$tmp/list.err" "$tmp/host.out" "$tmp/ns.out" "$tmp/daemon.log" ;;
esac
# The table shows the namespace pid column then.
"$ctl" --control "$tmp/ctl.sock" list >"$tmp/list.txt" 2>&1 || fail "list: $(cat "$tmp/list.txt")"
grep -q 'NSPID' "$tmp/list.txt" || fail "no NSPID column: $(cat "$tmp/list.txt")"
grep -Eq "^ *[0-9]+ +$ns_pid .* 1$" "$tmp/list.txt" || fail "no row of pid $ns_pid with nspid 1: $(cat "$tmp/list.txt")"
# The host pid is the one control requests take.
"$ctl" --control "$tmp/ctl.sock" set priority 9 --pid "$ns_pid" >"$tmp/set.out" 2>&1 ||
	fail "set --pid $ns_pid: $(cat "$tmp/set.out")"
"$ctl" --control "$tmp/ctl.sock" list --pid "$ns_pid" -o json | grep -q '"priority":9' ||
	fail "the namespaced process did not take priority 9"

[[ $failures == 0 ]] && echo "ok: pid namespaces"
[[ $failures == 0 ]]
