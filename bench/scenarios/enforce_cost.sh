#!/usr/bin/env bash
#
# enforce_cost.sh: what the device gate ([enforce] devices = on;
# src/bpf/gate.bpf.c) costs the node's opens. A private xschedd with the
# gate on (scope uid 65534), kernel.bpf_stats_enabled for the run, then
# per workload the gate program's run count and time (bpftool prog show:
# run_time_ns / run_cnt) and the wall time per open in a tight loop of
# bash redirections, the same loop with the gate off (no daemon) run in
# alternation:
#   null     /dev/null (a character device that is not gated), root
#   exempt   a gated node (mknod 195:0, ENXIO), root (exempt_root)
#   scope    the same node by uid 65534, refused (EPERM)
# Root; the build's xschedd. Prints a table; nothing is asserted.
#   bench/scenarios/enforce_cost.sh [--build DIR] [--opens N] [--rounds R]
set -u
build=build opens=100000 rounds=3
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--opens) opens=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--opens N] [--rounds R]" >&2; exit 2 ;;
	esac
done
[[ $(id -u) == 0 ]] || { echo "enforce_cost.sh: needs root" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "enforce_cost.sh: needs bpftool" >&2; exit 1; }
xsd=$build/src/daemon/xschedd
tmp=$(mktemp -d)
chmod 755 "$tmp"
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
findmnt -t bpf /sys/fs/bpf >/dev/null || mount -t bpf bpf /sys/fs/bpf
cleanup() {
	[[ -n ${dpid:-} ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	rm -rf "$tmp" "/sys/fs/bpf/xsched-cost-$$"
}
trap cleanup EXIT
mknod "$tmp/nvidia0" c 195 0
chmod 666 "$tmp/nvidia0"
printf '[enforce]\ndevices = on\nuids = 65534\npin_path = /sys/fs/bpf/xsched-cost-%s\n' $$ \
	>"$tmp/xschedd.conf"

# loop WHO PATH: seconds for $opens opens of PATH as WHO (root or nobody).
loop() {
	local cmd="s=\$EPOCHREALTIME; for ((i = 0; i < $opens; i++)); do : <>'$2'; done; \
e=\$EPOCHREALTIME; echo \"\$s \$e\""
	local t
	if [[ $1 == root ]]; then
		t=$(bash -c "$cmd" 2>/dev/null)
	else
		t=$(setpriv --reuid 65534 --regid 65534 --clear-groups bash -c "$cmd" 2>/dev/null)
	fi
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.6f", a[2] - a[1] }'
}
# prog_stats: "run_cnt run_time_ns" of the gate's program.
prog_stats() {
	bpftool prog show 2>/dev/null | awk '/name xbpf_gate_(dev|open)/ { found = 1 }
		found && /run_time_ns/ { for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1);
		if ($i == "run_cnt") c = $(i + 1) } print c, t; exit }'
}
start_gate() {
	"$xsd" -c "$tmp/xschedd.conf" -s "$tmp/c.sock" -C "$tmp/ctl.sock" >"$tmp/log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do grep -q 'device enforcement on' "$tmp/log" && break; sleep 0.05; done
	grep -q 'device enforcement on' "$tmp/log" || { cat "$tmp/log"; exit 1; }
}
stop_gate() { kill "$dpid"; wait "$dpid" 2>/dev/null; dpid=; }

sysctl -qw kernel.bpf_stats_enabled=1
declare -A off on cnt ns
for w in null exempt scope; do off[$w]=0 on[$w]=0 cnt[$w]=0 ns[$w]=0; done
hook=
for ((r = 0; r < rounds; r++)); do
	for w in null exempt scope; do
		who=root path=$tmp/nvidia0
		[[ $w == null ]] && path=/dev/null
		[[ $w == scope ]] && who=nobody
		off[$w]=$(awk -v a="${off[$w]}" -v b="$(loop $who "$path")" 'BEGIN { print a + b }')
		start_gate
		hook=$(grep -o 'device enforcement on ([a-z/_]*)' "$tmp/log" | head -n1)
		read -r c0 t0 < <(prog_stats)
		on[$w]=$(awk -v a="${on[$w]}" -v b="$(loop $who "$path")" 'BEGIN { print a + b }')
		read -r c1 t1 < <(prog_stats)
		cnt[$w]=$((cnt[$w] + c1 - c0))
		ns[$w]=$((ns[$w] + t1 - t0))
		stop_gate
	done
done
echo "# $hook; $opens opens x $rounds rounds per workload; $(nproc) CPUs, $(uname -r)"
printf '%-8s %12s %12s %10s %14s %12s\n' workload off_us/open on_us/open added_us \
	prog_runs prog_ns/run
for w in null exempt scope; do
	awk -v w="$w" -v off="${off[$w]}" -v on="${on[$w]}" -v n=$((opens * rounds)) \
		-v c="${cnt[$w]}" -v t="${ns[$w]}" 'BEGIN {
		printf "%-8s %12.3f %12.3f %10.3f %14d %12.0f\n", w, off / n * 1e6, on / n * 1e6,
			(on - off) / n * 1e6, c, c ? t / c : 0 }'
done
