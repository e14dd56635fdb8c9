#!/usr/bin/env bash
# Latency heat maps (src/daemon/heat.c, `xschedctl heatmap`), on a private
# xschedd with [observe] runqueue_latency = yes:
# 1. CPU map: a registered process (xs_load, periodic: it wakes every
#    millisecond) pinned to the last CPU, then a hog pinned there too
#    (SCHED_FIFO, 150 ms bursts for 1.5 s: each of the process's wakeups
#    meanwhile waits for the end of a burst). That CPU must show a run of
#    hot windows whose hint names the hog (command and pid) as what ran and
#    the process as what waited; CPU 0 never names the hog and is hot for
#    less than half of that time (none, run alone). The hint comes from the
#    JSON (hot spots) and the terminal rendering must name them too.
# 2. Queue maps: a background of long tasks (priority 0) next to a
#    foreground of short periodic ones (priority 10) on one device: the
#    background's map has suspensions and resumptions, the foreground's
#    none; the foreground's tasks land in its buckets, as many as the daemon
#    counted for it; both frozen (SIGSTOP), the totals are the same whatever
#    the window the map is asked in. (A queue alone running on its device
#    rings no doorbell per task, so the daemon sees the background's task
#    ends only while the foreground is busy: its cells are not checked.)
# 3. JSON counts add up: each row's total is the sum of its cells, and the
#    map's events the sum of the rows.
# 4. The terminal rendering fits widths 40, 80 and 200, and has no escape
#    sequence when not a terminal or with NO_COLOR.
# Runs alone (RUN_SERIAL): another test's load on CPU 0 would make it hot.
# Needs root, two CPUs, tp_btf programs and SCHED_FIFO; exits 77 otherwise.
set -u

: "${XSD_BIN:?}" "${XSCTL_BIN:?}" "${XS_LOAD_BIN:?}"
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (eBPF)"; exit 77; }
(($(nproc) >= 2)) || { echo "SKIP: needs two CPUs"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }

# shellcheck source=sh_util.sh
. "$(dirname "$0")/sh_util.sh"
rqlat_daemon
grep -q 'and of every CPU for heat maps' "$tmp/log" ||
	{ echo "FAIL: the daemon did not count every CPU"; cat "$tmp/log"; exit 1; }
chrt -f 1 true 2>/dev/null || { echo "SKIP: SCHED_FIFO refused"; exit 77; }

last=$(($(nproc) - 1))
listed() { "$XSCTL_BIN" list -o json | grep -q "\"pid\":$1,"; }

# --- 1. CPU map ---------------------------------------------------------------

taskset -c "$last" "$XS_LOAD_BIN" --tasks 100000 --cmds 1 --cmd-us 20 --period-us 1000 \
	--priority 0 >/dev/null 2>&1 &
waiter=$!
kids+=("$waiter")
until_ok 10 listed "$waiter" || fail "xs_load (pid $waiter) never registered"
sleep 0.5
# The hog: a copy of bash named xs_hog (its command name), spinning in
# bursts; it ends by itself.
cp "$(command -v bash)" "$tmp/xs_hog"
# shellcheck disable=SC2016
chrt -f 1 taskset -c "$last" "$tmp/xs_hog" -c '
	for _ in $(seq 10); do
		end=$(( ${EPOCHREALTIME/./} + 150000 ))
		while (( ${EPOCHREALTIME/./} < end )); do :; done
		sleep 0.005
	done' &
hog=$!
kids+=("$hog")
wait "$hog"
sleep 0.6                                  # the daemon copies windows every 250 ms
"$XSCTL_BIN" heatmap --cpu --last 10s -o json >"$tmp/cpu.json" ||
	fail "heatmap --cpu -o json failed"
"$XSCTL_BIN" heatmap --pid "$waiter" --last 10s -o json >"$tmp/pid.json" ||
	fail "heatmap --pid failed"
kill "$waiter" 2>/dev/null

# check_json FILE: rows' totals and the map's events add up; prints
# "rows events".
check_json() {
	python3 - "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
total = 0
for r in m["rows"]:
    s = sum(c[2] for c in r["cells"])
    assert s == r["total"], "row %s: cells sum to %d, total says %d" % (r["row"], s, r["total"])
    for c in r["cells"]:
        assert 0 <= c[0] < m["columns"] and 0 <= c[1] < 19 and c[2] > 0, c
    total += s
assert total == m["events"], "rows sum to %d, events says %d" % (total, m["events"])
print(len(m["rows"]), total)
PY
}
read -r rows events < <(check_json "$tmp/cpu.json") || fail "CPU map: counts do not add up"
[[ ${rows:-0} == "$(nproc)" ]] || fail "CPU map: ${rows:-?} rows for $(nproc) CPUs"
((${events:-0} > 0)) || fail "CPU map: no events"
read -r _ pevents < <(check_json "$tmp/pid.json") || fail "pid map: counts do not add up"
((${pevents:-0} > 0)) || fail "pid map of xs_load: no events"

# The hot spots: CPU $last with xs_hog[$hog] that ran and xs_load[$waiter]
# that waited; none on CPU 0.
python3 - "$tmp/cpu.json" "$last" "$hog" "$waiter" <<'PY' || fail "CPU map: hot spots wrong"
import json, sys
m = json.load(open(sys.argv[1]))
last, hog, waiter = (int(x) for x in sys.argv[2:])
hot = m["hot"]
print("hot spots:", json.dumps(hot))
def cols(h):
    return set(range(h["first_column"], h["first_column"] + h["columns"]))
mine = [h for h in hot if h["cpu"] == last and
        any(t["pid"] == hog and t["command"] == "xs_hog" for t in h["ran"])]
assert mine, "no hot spot of CPU %d names the hog" % last
assert any(t["pid"] == waiter for h in mine for t in h["waited"]), "xs_load is not named"
assert all(h["columns"] >= m["hot_windows"] for h in mine)
# The other CPU: the hog is never named there, and while it ran there, that
# CPU was hot for less than half of the time (another test's load, were one
# running, could heat it a while: this test runs alone in CTest).
during = set().union(*(cols(h) for h in mine))
other = set().union(set(), *(cols(h) for h in hot if h["cpu"] == 0))
assert not [h for h in hot if h["cpu"] == 0 and
            any(t["pid"] == hog for t in h["ran"])], "CPU 0 names the hog"
print("hot columns while the hog ran: CPU %d %d, CPU 0 %d" %
      (last, len(during), len(other & during)))
assert len(other & during) < len(during) / 2, "CPU 0 was hot too"
PY
"$XSCTL_BIN" heatmap --cpu --last 10s --width 120 >"$tmp/cpu.txt" || fail "heatmap --cpu failed"
grep "hint" "$tmp/cpu.txt" | grep -q "cpu$last" || fail "no hint line names cpu$last"
grep "hint" "$tmp/cpu.txt" | grep -q "xs_hog\[$hog\]" || fail "the hint does not name xs_hog[$hog]"
cat "$tmp/cpu.txt"

# --- 2. Queue maps ----------------------------------------------------------------

"$XS_LOAD_BIN" --tasks 100000 --cmds 8 --cmd-us 2000 --period-us 30000 --priority 0 \
	>/dev/null 2>&1 &
bg=$!
"$XS_LOAD_BIN" --tasks 100000 --cmds 1 --cmd-us 500 --period-us 20000 --priority 10 \
	>/dev/null 2>&1 &
fg=$!
kids+=("$bg" "$fg")
until_ok 10 listed "$bg" || fail "the background never registered"
until_ok 10 listed "$fg" || fail "the foreground never registered"
sleep 2
kill -STOP "$fg" "$bg"
sleep 0.3
qid() { "$XSCTL_BIN" list -o json | grep -o "\"queue\":[0-9]*,[^}]*\"pid\":$1," | head -1 |
	grep -o '^"queue":[0-9]*' | cut -d: -f2; }
bq=$(qid "$bg")
fq=$(qid "$fg")
for w in 10ms 100ms; do
	"$XSCTL_BIN" heatmap --queue "$bq" --window "$w" -o json >"$tmp/bg$w.json" ||
		fail "heatmap --queue $bq failed"
	"$XSCTL_BIN" heatmap --queue "$fq" --window "$w" -o json >"$tmp/fg$w.json" ||
		fail "heatmap --queue $fq failed"
done
python3 - "$tmp" <<'PY' || fail "queue maps wrong"
import json, sys
d = sys.argv[1]
def load(n):
    return json.load(open("%s/%s.json" % (d, n)))
for who in ("bg", "fg"):
    a, b = load(who + "10ms"), load(who + "100ms")
    assert a["events"] == b["events"], (who, a["events"], b["events"])
    ma = [sum(x[i] for x in a["rows"][0]["marks"]) for i in (1, 2)]
    mb = [sum(x[i] for x in b["rows"][0]["marks"]) for i in (1, 2)]
    assert ma == mb, (who, ma, mb)
    print(who, "tasks", a["events"], "suspensions", ma[0], "resumptions", ma[1])
    if who == "bg":
        assert ma[0] > 0 and ma[1] > 0, "the background shows no suspension"
    else:
        assert ma[0] == 0, "the foreground was suspended"
        assert a["events"] > 0, "no task of the foreground counted"
        seen = a["rows"][0]["tasks_seen"]
        assert a["events"] == seen, ("foreground: %d in the map, %d counted" % (a["events"], seen))
PY
"$XSCTL_BIN" heatmap --queue "$bq" --width 80 >"$tmp/bg.txt" || fail "heatmap --queue failed"
grep '^marks' "$tmp/bg.txt" | grep -q '[S*]' || fail "the background's map shows no S mark"
cat "$tmp/bg.txt"
kill -CONT "$fg" "$bg"

# --- 4. widths and colour ------------------------------------------------------------

for w in 40 80 200; do
	for map in --cpu "--queue $bq"; do
		# shellcheck disable=SC2086
		out=$("$XSCTL_BIN" heatmap $map --width "$w") || { fail "heatmap $map --width $w"; continue; }
		wide=$(printf '%s\n' "$out" | python3 -c '
import sys
print(max((len(l.rstrip("\n")) for l in sys.stdin), default=0))')
		((wide <= w)) || fail "heatmap $map --width $w: a line of $wide columns"
		[[ $out != *$'\e'* ]] || fail "heatmap $map: escape sequences without a terminal"
	done
done
out=$(NO_COLOR=1 script -qec "$XSCTL_BIN heatmap --cpu --width 80" /dev/null 2>/dev/null) &&
	[[ $out == *$'\e['* ]] && fail "NO_COLOR: escape sequences on a terminal"

((failures == 0)) || exit 1
echo "PASS"
