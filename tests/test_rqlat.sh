#!/usr/bin/env bash
# Run-queue latency of registered processes (src/bpf/rqlat.bpf.c,
# [observe] runqueue_latency = yes): a private xschedd, and xs_load
# (periodic tasks: its threads sleep and wake every period) first alone,
# then next to one CPU hog per CPU at the same nice level. The daemon's P99 (`xschedctl list -o json`,
# cpu_wait_p99_ns) must be there for both, and higher next to the hog: by
# at least 2x, a loose bound (CFS/EEVDF makes a woken thread wait up to a
# slice, milliseconds, behind a hog; alone it waits microseconds). The
# Prometheus histogram must be exported. The figures themselves are
# printed, not asserted (see bench/bench_rqlat for the measurement).
# Needs root and a kernel that loads tp_btf programs; exits 77 otherwise.
set -u

: "${XSD_BIN:?}" "${XSCTL_BIN:?}" "${XS_LOAD_BIN:?}"
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (eBPF)"; exit 77; }

tmp=$(mktemp -d)
daemon=
kids=()
cleanup() {
	local p
	for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done
	if [[ -n $daemon ]]; then
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
unset LD_PRELOAD XSCHED_PRIORITY XSCHED_SHARE XSCHED_DEADLINE_US XSCHED_LAXITY_US
export XSCHED_SOCKET=$tmp/client.sock XSCHED_CONTROL_SOCKET=$tmp/ctl.sock
printf '[observe]\nrunqueue_latency = yes\n' >"$tmp/xschedd.conf"
"$XSD_BIN" -c "$tmp/xschedd.conf" -s "$XSCHED_SOCKET" -C "$XSCHED_CONTROL_SOCKET" \
	>"$tmp/log" 2>&1 &
daemon=$!
for _ in $(seq 200); do
	"$XSCTL_BIN" status >/dev/null 2>&1 && break
	sleep 0.05
done
if grep -q 'run-queue latency unavailable' "$tmp/log"; then
	echo "SKIP: $(grep 'run-queue latency unavailable' "$tmp/log")"
	exit 77
fi
grep -q 'run-queue latency of registered processes on' "$tmp/log" ||
	{ echo "FAIL: the daemon did not turn run-queue latency on"; cat "$tmp/log"; exit 1; }

ncpu=$(nproc)
# p99 PID: cpu_wait_p99_ns of PID's queue, or "null".
p99() {
	"$XSCTL_BIN" list -o json | grep -o "\"pid\":$1,[^}]*" |
		grep -o '"cpu_wait_p99_ns":[0-9a-z]*' | head -1 | cut -d: -f2
}
# measure: runs xs_load for 3 s and prints its P99 (ns).
measure() {
	local pid v
	nice -n -5 "$XS_LOAD_BIN" --tasks 3000 --cmds 1 --cmd-us 20 \
		--period-us 1000 >/dev/null 2>&1 &
	pid=$!
	kids+=("$pid")
	sleep 2.5
	v=$(p99 "$pid")
	if [[ $1 == metrics ]]; then
		"$XSCTL_BIN" metrics | grep -q "^xsched_process_runqueue_latency_seconds_count{pid=\"$pid\"" ||
			echo "FAIL: no runqueue histogram for pid $pid" >&2
	fi
	wait "$pid"
	echo "${v:-null}"
}

alone=$(measure metrics)
hogs=()
for _ in $(seq "$ncpu"); do
	nice -n -5 bash -c 'while :; do :; done' &
	hogs+=($!)
done
kids+=("${hogs[@]}")
loaded=$(measure none)
kill "${hogs[@]}"
wait "${hogs[@]}" 2>/dev/null
echo "run-queue P99 ($ncpu CPUs): alone ${alone} ns, next to $ncpu CPU hogs ${loaded} ns"
[[ $alone =~ ^[0-9]+$ && $alone -gt 0 ]] || { echo "FAIL: no P99 alone"; cat "$tmp/log"; exit 1; }
[[ $loaded =~ ^[0-9]+$ ]] || { echo "FAIL: no P99 next to the hog"; exit 1; }
((loaded >= 2 * alone)) || { echo "FAIL: P99 next to CPU hogs not at least twice alone"; exit 1; }
echo "PASS"
