#!/usr/bin/env bash
#
# heatmap_pictures.sh: the heat maps of README's Observability section,
# from a real run. A private xschedd (runqueue_latency = yes) and
#   1. a registered process (xs_load, periodic, 1 ms) pinned to the last
#      CPU, and after 2 s a hog pinned there too (a copy of bash named
#      xs_hog, SCHED_FIFO, 150 ms bursts for 3 s): the CPU map;
#   2. a background of long tasks (priority 0) next to a foreground of
#      short periodic ones (priority 10) on one device, and a filler flood
#      below both (priority -5: the background is never the only queue that
#      runs, so the daemon hears each of its task ends): the background's
#      queue map, with its suspensions.
# Writes DIR/heatmap-cpu.png and DIR/heatmap-queue.png (and the terminal
# renderings beside them, .txt). Root and gnuplot. DIR: docs/results.
#   bench/scenarios/heatmap_pictures.sh [--build DIR] [--out DIR]
set -u
build=build out=docs/results
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--out DIR]" >&2; exit 2 ;;
	esac
done
[[ $(id -u) == 0 ]] || { echo "heatmap_pictures.sh: needs root" >&2; exit 1; }
xsd=$build/src/daemon/xschedd ctl=$build/tools/xschedctl load=$build/bench/xs_load
mkdir -p "$out"
tmp=$(mktemp -d)
kids=()
cleanup() {
	for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[[ -n ${dpid:-} ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export XSCHED_SIM_DIR=$tmp XSCHED_SOCKET=$tmp/c.sock XSCHED_CONTROL_SOCKET=$tmp/ctl.sock
printf '[observe]\nrunqueue_latency = yes\n' >"$tmp/xschedd.conf"
"$xsd" -c "$tmp/xschedd.conf" -s "$XSCHED_SOCKET" -C "$XSCHED_CONTROL_SOCKET" >"$tmp/log" 2>&1 &
dpid=$!
for _ in $(seq 100); do "$ctl" status >/dev/null 2>&1 && break; sleep 0.05; done
last=$(($(nproc) - 1))

taskset -c "$last" "$load" --tasks 100000 --cmds 1 --cmd-us 20 --period-us 1000 >/dev/null 2>&1 &
kids+=($!)
sleep 2
cp "$(command -v bash)" "$tmp/xs_hog"
# shellcheck disable=SC2016
chrt -f 1 taskset -c "$last" "$tmp/xs_hog" -c '
	for _ in $(seq 20); do
		end=$(( ${EPOCHREALTIME/./} + 150000 ))
		while (( ${EPOCHREALTIME/./} < end )); do :; done
		sleep 0.005
	done'
sleep 2
"$ctl" heatmap --cpu --last 8s -o png --out "$out/heatmap-cpu.png"
"$ctl" heatmap --cpu --last 8s --width 100 >"$out/heatmap-cpu.txt"
kill "${kids[@]}"

"$load" --tasks 100000 --cmds 8 --cmd-us 2000 --period-us 30000 --priority 0 >/dev/null 2>&1 &
bg=$!
"$load" --tasks 100000 --cmds 1 --cmd-us 500 --period-us 20000 --priority 10 >/dev/null 2>&1 &
kids+=("$bg" $!)
"$load" --flood --cmds 2 --cmd-us 1000 --duration-s 30 --priority -5 >/dev/null 2>&1 &
kids+=($!)
sleep 6
q=$("$ctl" list -o json | grep -o "\"queue\":[0-9]*,[^}]*\"pid\":$bg," | head -1 |
	grep -o '^"queue":[0-9]*' | cut -d: -f2)
"$ctl" heatmap --queue "$q" --last 5s -o png --out "$out/heatmap-queue.png"
"$ctl" heatmap --queue "$q" --last 5s --width 100 >"$out/heatmap-queue.txt"
"$ctl" list >>"$out/heatmap-queue.txt"
echo "wrote $out/heatmap-cpu.png and $out/heatmap-queue.png ($(nproc) CPUs, $(uname -r))"
