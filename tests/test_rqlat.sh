#!/usr/bin/env bash
# Run-queue latency of registered processes (src/bpf/rqlat.bpf.c,
# [observe] runqueue_latency = yes): a private xschedd, and xs_load
# (periodic tasks: its threads sleep and wake every period) first alone,
# at nice -20 (whatever else runs on the machine, such as other tests, it
# runs as soon as it wakes), then at nice 10 next to one CPU hog per CPU at
# nice -10 (about 1% of a CPU's weight: a woken thread waits milliseconds).
# The daemon's P99 (`xschedctl list -o json`, cpu_wait_p99_ns, the upper
# bound of a log2 bucket) must be there for both, and at least 4x higher
# next to the hogs (two buckets: a single bucket's step is only 2x, which a
# loaded machine reaches with the load alone). The Prometheus histogram
# must be exported. The figures themselves are
# printed, not asserted (see bench/bench_rqlat for the measurement).
# Needs root and a kernel that loads tp_btf programs; exits 77 otherwise.
set -u

: "${XSD_BIN:?}" "${XSCTL_BIN:?}" "${XS_LOAD_BIN:?}"
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (eBPF)"; exit 77; }

# shellcheck source=sh_util.sh
. "$(dirname "$0")/sh_util.sh"
rqlat_daemon
grep -q 'run-queue latency of registered processes on' "$tmp/log" ||
	{ echo "FAIL: the daemon did not turn run-queue latency on"; cat "$tmp/log"; exit 1; }

ncpu=$(nproc)
# p99 PID: cpu_wait_p99_ns of PID's queue, or "null".
p99() {
	"$XSCTL_BIN" list -o json | grep -o "\"pid\":$1,[^}]*" |
		grep -o '"cpu_wait_p99_ns":[0-9a-z]*' | head -1 | cut -d: -f2
}
# measure NICE [HOG_NICE]: runs xs_load at NICE, once its queue is listed
# starts one CPU hog per CPU at HOG_NICE if given, and after 2.5 s prints
# its P99 (ns) and checks its Prometheus histogram. The hogs start after
# the registration, which they would otherwise hold up for seconds; they
# and xs_load end by themselves (20 s, 30 s) should the test be killed.
measure() {
	local pid v hogs=() h
	nice -n "$1" "$XS_LOAD_BIN" --tasks 30000 --cmds 1 --cmd-us 20 \
		--period-us 1000 >/dev/null 2>&1 &
	pid=$!
	kids+=("$pid")
	for _ in $(seq 200); do
		[[ -n $(p99 "$pid") ]] && break
		sleep 0.05
	done
	if (($# > 1)); then
		for _ in $(seq "$ncpu"); do
			timeout 20 nice -n "$2" bash -c 'while :; do :; done' &
			hogs+=($!)
		done
		kids+=("${hogs[@]}")
	fi
	sleep 2.5
	v=$(p99 "$pid")
	"$XSCTL_BIN" metrics | grep -q "^xsched_process_runqueue_latency_seconds_count{pid=\"$pid\"" ||
		v="no-histogram"
	for h in "${hogs[@]}" "$pid"; do kill "$h" 2>/dev/null; done
	wait "${hogs[@]}" "$pid" 2>/dev/null
	echo "${v:-null}"
}

alone=$(measure -20)
loaded=$(measure 10 -10)
echo "run-queue P99 ($ncpu CPUs): alone at nice -20 ${alone} ns, at nice 10 next to $ncpu CPU hogs at nice -10 ${loaded} ns"
[[ $alone =~ ^[0-9]+$ && $alone -gt 0 ]] || { echo "FAIL: no P99 alone"; cat "$tmp/log"; exit 1; }
[[ $loaded =~ ^[0-9]+$ ]] || { echo "FAIL: no P99 next to the hog"; exit 1; }
((loaded >= 4 * alone)) || { echo "FAIL: P99 next to CPU hogs not at least 4x alone"; exit 1; }
echo "PASS"
