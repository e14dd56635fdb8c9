#!/usr/bin/env bash
#
# scale.sh: one xschedd serving many processes, the design's scale goal
# (DESIGN.md section 4: 256 processes x 4 queues on one daemon,
# event-to-decision P99 <= 100 us, the VM's cross-CPU wakeup reported
# apart). It wraps build/bench/bench_scale, which starts its own private
# daemon and client processes (each with --queues XQueues on one simulated
# device, a steady unsaturated load of short tasks, priorities -10/0/10/20)
# and reports what the daemon measured; this script runs it for each
# process count of --procs, in the scenario conventions, and gathers the
# rows. There is no native counterpart: the daemon is what is measured.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   procs queues events events_s decisions decision_p50_us decision_p99_us
#   wakeup_p50_us wakeup_p99_us daemon_cpu_pct tasks_s offered_s
#   device_busy_pct client_cpu_pct task_p50_us task_p99_us goal
# (decision: receipt of a status change to decisions written, the daemon's
# own work; wakeup: client status change to the daemon's receipt; quantiles
# are upper bounds of log-linear buckets, within 12.5%; goal: "met" or
# "not met" for decision P99 <= 100 us), and bench_scale-<procs>.txt, each
# run's full output. No latency files: bench_scale keeps histograms only.
#
# Usage: scale.sh [--smoke] [--procs N[,N...]] [--queues N] [--duration-s S]
#                 [--period-ms P] [--policy NAME]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

procs=16,64,256 queues=4 secs=10 period='' policy=hpf
usage() {
	sed -n 's/^# Usage: //p; s/^#                 / /p' "$0" | head -2 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) procs=8 secs=2 ;;
	--procs) procs=$2; shift ;;
	--queues) queues=$2; shift ;;
	--duration-s) secs=$2; shift ;;
	--period-ms) period=$2; shift ;;
	--policy) policy=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup scale
bench=$BUILD_DIR/bench/bench_scale
scn_need "$bench" "bench/bench_scale"
scn_need "$XS_XSCHEDD" xschedd

scn_machine
echo "scale: bench_scale, $queues queues per process, processes $procs, ${secs} s each," \
	"policy $policy"
scn_tsv_header procs queues events events_s decisions decision_p50_us decision_p99_us \
	wakeup_p50_us wakeup_p99_us daemon_cpu_pct tasks_s offered_s device_busy_pct \
	client_cpu_pct task_p50_us task_p99_us goal
for n in ${procs//,/ }; do
	out=$XS_OUT/bench_scale-$n.txt
	args=(--daemon "$XS_XSCHEDD" --procs "$n" --queues "$queues" --duration-s "$secs"
		--policy "$policy")
	[[ -n $period ]] && args+=(--period-ms "$period")
	"$bench" "${args[@]}" >"$out" 2>&1 || scn_die "bench_scale --procs $n failed: $(tail -5 "$out")"
	# The table row: | procs | queues | events | events/s | decisions | 4 quantiles | cpu |
	row=$(grep -E '^\| [0-9]+ \| [0-9]+ \|' "$out" | head -1 | tr -d '|')
	[[ -n $row ]] || scn_die "bench_scale --procs $n: no result row (see $out)"
	read -r p q ev evs dec d50 d99 w50 w99 cpu <<<"$row"
	read -r tasks_s offered busy ccpu < <(sed -n \
		's/^tasks [0-9]* (\([0-9.]*\)\/s of \([0-9.]*\)\/s offered), commands [0-9]*, device busy \([0-9.]*\)%, client processes. CPU \([0-9.]*\)%.*/\1 \2 \3 \4/p' "$out")
	read -r t50 t99 < <(sed -n 's/^task latency at the clients.*: P50 \([0-9.]*\) us, P99 \([0-9.]*\) us.*/\1 \2/p' "$out")
	goal=$(sed -n 's/^goal .*: \(met\|not met\|no samples\)$/\1/p' "$out")
	scn_tsv_row "$p" "$q" "$ev" "$evs" "$dec" "$d50" "$d99" "$w50" "$w99" "$cpu" \
		"${tasks_s:--}" "${offered:--}" "${busy:--}" "${ccpu:--}" "${t50:--}" "${t99:--}" \
		"${goal:--}"
	echo "  $n processes done"
done
echo
scn_table
echo
echo "goal: decision P99 <= 100 us at 256 x 4 (wakeup reported apart; see bench_scale-*.txt for context)"
echo "results: $XS_OUT"
