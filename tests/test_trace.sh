#!/usr/bin/env bash
# USDT probes of the XQueue (src/xqueue/xq_usdt.h) and `xschedctl trace`:
# readelf -n lists the six probes of provider xsched in libxsched.so, and
# `xschedctl trace` on a running xs_load sees submit, launch and complete
# events whose sequence numbers increase, and summarizes them. Skipped
# (77) in a build without USDT probes, without root, or where the eBPF
# programs do not load.
set -u

: "${XSCTL_BIN:?}" "${XS_LOAD_BIN:?}" "${XS_LIB:?}"
command -v readelf >/dev/null || { echo "SKIP: no readelf"; exit 77; }
notes=$(readelf -n "$XS_LIB" | grep -A3 'stapsdt')
if [[ -z $notes ]]; then
	echo "SKIP: $XS_LIB has no USDT probes (built without XSCHED_WITH_USDT)"
	exit 77
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
for p in submit launch complete suspend resume preempt_done; do
	grep -A2 'Provider: xsched' <<<"$notes" | grep -q "Name: $p\$" ||
		fail "readelf -n $XS_LIB lacks the probe xsched:$p"
done
[[ $(id -u) == 0 ]] || { echo "SKIP: tracing needs root"; exit 77; }

tmp=$(mktemp -d)
load=
cleanup() {
	[[ -n $load ]] && kill -9 "$load" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# A private simulated device: the machine's default one may be another
# build's, of another layout version, or busy with other work.
export XSCHED_SIM_DIR=$tmp
# No daemon: the queue runs unscheduled, which is what is traced here.
export XSCHED_SOCKET=$tmp/none.sock XSCHED_LOG=0
"$XS_LOAD_BIN" --tasks 100000 --cmds 2 --cmd-us 50 --period-us 2000 >/dev/null 2>&1 &
load=$!
sleep 0.3
"$XSCTL_BIN" trace --pid "$load" -d 1 -o json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [[ $rc != 0 ]]; then
	if grep -q 'cannot load the eBPF programs\|without eBPF' "$tmp/err"; then
		echo "SKIP: $(cat "$tmp/err")"
		exit 77
	fi
	fail "xschedctl trace exited $rc: $(cat "$tmp/err")"
fi
for e in submit launch complete; do
	n=$(grep -c "\"event\":\"$e\"" "$tmp/out")
	((n >= 10)) || fail "only $n $e events in 1 s"
	# Sequence numbers increase, event after event of a kind.
	grep "\"event\":\"$e\"" "$tmp/out" | grep -o '"seq":[0-9]*' | cut -d: -f2 |
		awk -v e="$e" 'NR > 1 && $1 <= prev { print "FAIL: " e " seq " $1 " after " prev; bad = 1 }
			{ prev = $1 } END { exit bad }' || failures=$((failures + 1))
done
grep -q '"summary":\[{"queue":1,"submit":[1-9]' "$tmp/out" || fail "no summary of queue 1"
# The table form, and --queue filtering out everything for a queue that does not exist.
"$XSCTL_BIN" trace --pid "$load" -d 300ms --summary >"$tmp/sum" 2>&1 ||
	fail "xschedctl trace --summary failed: $(cat "$tmp/sum")"
grep -qE '^queue 1: [1-9][0-9]* submitted' "$tmp/sum" || fail "summary: $(cat "$tmp/sum")"
"$XSCTL_BIN" trace --pid "$load" --queue 99 -d 300ms --summary >"$tmp/q" 2>&1
grep -q 'No xsched events' "$tmp/q" || fail "--queue 99 saw events: $(cat "$tmp/q")"
# A process without the probes is refused with a reason.
sleep 5 &
"$XSCTL_BIN" trace --pid $! -d 100ms >"$tmp/none" 2>&1 && fail "tracing sleep(1) succeeded"
grep -q 'no xsched USDT probes' "$tmp/none" || fail "no reason given: $(cat "$tmp/none")"
kill $! 2>/dev/null
((failures)) && { head -20 "$tmp/out"; exit 1; }
echo "PASS: $(grep -c '"event"' "$tmp/out") events in 1 s"
