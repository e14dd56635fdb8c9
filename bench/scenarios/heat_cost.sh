#!/usr/bin/env bash
#
# heat_cost.sh: what the run-queue programs (src/bpf/rqlat.bpf.c) cost per
# scheduler event, with the heat maps' node-wide counting ([observe]
# heatmap = yes, the default) and without (heatmap = no: the registered
# processes' histograms only). A private xschedd with runqueue_latency =
# yes, kernel.bpf_stats_enabled for the run, one registered process
# (xs_load, periodic, 1 ms) and a switch-heavy load of unregistered
# processes (`yes | head -c BYTES`: a pipe whose ends wake each other),
# run with no daemon, then each mode, alternated for R rounds:
#   none       no daemon: the load and xs_load, unscheduled
#   watched    heatmap = no
#   node-wide  heatmap = yes
# Per mode: the programs' runs and time per run (bpftool prog show:
# run_time_ns / run_cnt) and the load's wall time. Prints a table;
# nothing is asserted.
#   bench/scenarios/heat_cost.sh [--build DIR] [--bytes N] [--rounds R]
set -u
build=build bytes=2000000000 rounds=3
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--bytes) bytes=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--bytes N] [--rounds R]" >&2; exit 2 ;;
	esac
done
[[ $(id -u) == 0 ]] || { echo "heat_cost.sh: needs root" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "heat_cost.sh: needs bpftool" >&2; exit 1; }
xsd=$build/src/daemon/xschedd
load=$build/bench/xs_load
tmp=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	[[ -n ${lpid:-} ]] && kill "$lpid" 2>/dev/null
	[[ -n ${dpid:-} ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	rm -rf "$tmp"
}
trap cleanup EXIT
export XSCHED_SIM_DIR=$tmp XSCHED_SOCKET=$tmp/c.sock XSCHED_CONTROL_SOCKET=$tmp/ctl.sock

# stats NAME: "run_cnt run_time_ns" of program NAME.
stats() {
	bpftool prog show 2>/dev/null | awk -v n="name $1" '$0 ~ n { found = 1 }
		found && /run_time_ns/ { for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1);
		if ($i == "run_cnt") c = $(i + 1) } print c, t; exit }'
}
# wall: seconds of the switch-heavy load.
wall() {
	local s=$EPOCHREALTIME
	yes | head -c "$bytes" >/dev/null
	awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.4f", e - s }'
}
start() {
	printf '[observe]\nrunqueue_latency = yes\nheatmap = %s\n' "$1" >"$tmp/xschedd.conf"
	"$xsd" -c "$tmp/xschedd.conf" -s "$XSCHED_SOCKET" -C "$XSCHED_CONTROL_SOCKET" \
		>"$tmp/log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do grep -q 'run-queue latency.* on' "$tmp/log" && break; sleep 0.05; done
	grep -q 'run-queue latency.* on' "$tmp/log" || { cat "$tmp/log"; exit 1; }
	"$load" --tasks 1000000 --cmds 1 --cmd-us 20 --period-us 1000 >/dev/null 2>&1 &
	lpid=$!
	sleep 0.5
}
stop() {
	kill "$lpid" "$dpid"
	wait "$lpid" "$dpid" 2>/dev/null
	lpid= dpid=
}

sysctl -qw kernel.bpf_stats_enabled=1
declare -A secs runs ns
progs=(xbpf_wakeup xbpf_wakeup_new xbpf_switch)
for m in none watched node-wide; do
	secs[$m]=0
	for p in "${progs[@]}"; do runs[$m.$p]=0 ns[$m.$p]=0; done
done
for ((r = 0; r < rounds; r++)); do
	# The same registered process, unscheduled (no daemon).
	"$load" --tasks 1000000 --cmds 1 --cmd-us 20 --period-us 1000 >/dev/null 2>&1 &
	lpid=$!
	sleep 0.5
	secs[none]=$(awk -v a="${secs[none]}" -v b="$(wall)" 'BEGIN { print a + b }')
	kill "$lpid"
	wait "$lpid" 2>/dev/null
	lpid=
	for m in watched node-wide; do
		start "$([[ $m == watched ]] && echo no || echo yes)"
		declare -A c0 t0
		for p in "${progs[@]}"; do read -r c0[$p] t0[$p] < <(stats "$p"); done
		secs[$m]=$(awk -v a="${secs[$m]}" -v b="$(wall)" 'BEGIN { print a + b }')
		for p in "${progs[@]}"; do
			read -r c1 t1 < <(stats "$p")
			runs[$m.$p]=$((runs[$m.$p] + c1 - c0[$p]))
			ns[$m.$p]=$((ns[$m.$p] + t1 - t0[$p]))
		done
		stop
	done
done
echo "# yes | head -c $bytes, $rounds rounds; one registered process; $(nproc) CPUs, $(uname -r)"
printf '%-10s %10s %14s %10s %14s %10s %14s %10s\n' mode load_s wakeup_runs ns/run \
	wakeup_new_runs ns/run switch_runs ns/run
for m in none watched node-wide; do
	line=$(printf '%-10s %10.3f' "$m" "${secs[$m]}")
	for p in "${progs[@]}"; do
		line+=$(awk -v c="${runs[$m.$p]}" -v t="${ns[$m.$p]}" \
			'BEGIN { printf " %14d %10.0f", c, c ? t / c : 0 }')
	done
	echo "$line"
done
