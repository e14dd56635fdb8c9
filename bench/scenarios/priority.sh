#!/usr/bin/env bash
#
# priority.sh: fixed priority (policy hpf) on the simulated XPU, the
# design's headline goal. A foreground task (--cmds kernels of one command
# size) is released at --load % of its standalone throughput with +-50%
# jitter, next to a background process flooding the same kind of task at a
# lower priority. Both are the unmodified CUDA application bench/cu_load on
# the simulated CUDA driver, natively or under the CUDA shim with a private
# xschedd (hpf; foreground XSCHED_PRIORITY=10, background 0).
#
# Configurations, alternated in rounds (machine drift hits all):
#   bg-alone    the background flooding alone: its standalone throughput
#   standalone  the foreground alone
#   native      both, no xsched: the device's round-robin
#   xsched-lv1  both under the CUDA shim + xschedd (the shim's level: Lv1),
#               default settings: the background, below the foreground,
#               is capped at one command in flight (contention_window 1)
#   xsched-lv1-wide  the same with contention_window = 0: the background
#               keeps its own window (threshold 16, 1 ms budget); level
#               token 1w
#   api-lv2/3   both as xs_load (public API, sim backend) at Lv2/Lv3 under
#               xschedd: the CUDA shim offers only Lv1 (src/xal/xal_cuda.c
#               has no deactivate/interrupt ops), so the higher levels of
#               the simulated XPU are measured through its native backend.
#               xs_load releases each task a period after the previous
#               one completed (cu_load: after the previous release), so it
#               gets the period less the standalone task time; its
#               background throughput is over the whole background run.
# The task time is measured first (standalone, back to back); the period is
# task_time / load.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   size_us config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm
#   bg_cmd_s bg_norm lat_source
# (*_norm: the foreground percentile / standalone's; bg_norm: background
# commands per second during the foreground's window / bg-alone's), and
# lat_<config>-<size>us.txt (foreground latencies, us).
# Goals (DESIGN.md, not asserted): P99 native >= 1.6x, Lv1 <= 1.10x,
# Lv2 <= 1.05x, Lv3 <= 1.02x of standalone.
#
# Usage: priority.sh [--smoke] [--sizes US[,US...]] [--levels 1,1w,2,3]
#                    [--tasks N] [--warmup N] [--rounds N] [--cmds N]
#                    [--load PCT] [--bg-seconds S]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

sizes=500 levels=1,1w,2,3 tasks=1000 warmup=20 rounds=4 cmds=20 load=20 bg_s=2
usage() {
	sed -n 's/^# Usage: //p; s/^#                    / /p' "$0" | head -3 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) tasks=20 warmup=5 rounds=1 bg_s=0.5 ;;
	--sizes) sizes=$2; shift ;;
	--levels) levels=$2; shift ;;
	--tasks) tasks=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--cmds) cmds=$2; shift ;;
	--load) load=$2; shift ;;
	--bg-seconds) bg_s=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup priority
scn_need "$XS_CU_LOAD" "bench/cu_load"
[[ $levels == *1* ]] && scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
[[ $levels == *[23]* ]] && scn_need "$XS_XS_LOAD" "bench/xs_load"
per_round=$(((tasks + rounds - 1) / rounds))

# Results of one configuration accumulate over rounds in $XS_WORK/<cfg>.*:
# .lat (latencies), .bg ("commands seconds" lines).

# fg_args: the periodic foreground task of this size.
fg_args() {
	echo "--cmds $cmds --cmd-us $size --tasks $per_round --warmup $warmup --period-us $period"
}

# Appends the background's commands/seconds inside the foreground window.
bg_window() { # cfg fgline trace
	local t0 t1 n
	t0=$(scn_field "$2" t0_ns) t1=$(scn_field "$2" t1_ns)
	n=$(scn_count_window "$3" "$t0" "$t1")
	awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { print n, (b - a) / 1e9 }' >>"$XS_WORK/$1.bg"
}

run_bg_alone() {
	local cfg=$1 line
	scn_device_new
	scn_env_native
	line=$(env "${XS_ENV[@]}" "$XS_CU_LOAD" --flood --cmds "$cmds" --cmd-us "$size" \
		--duration-s "$bg_s") || scn_die "$cfg: cu_load failed"
	echo "$(scn_field "$line" commands) $(scn_div "$(scn_field "$line" elapsed_ms)" 1000 %.6f)" \
		>>"$XS_WORK/$cfg.bg"
}

# run_cu CFG MODE [KEY=VAL...]: cu_load foreground (and background unless
# standalone), MODE native or shim (KEY=VAL: the daemon's [policy] keys).
run_cu() {
	local cfg=$1 mode=$2 bgpid='' line
	scn_device_new
	if [[ $mode == shim ]]; then
		scn_daemon_start hpf "${@:3}"
		scn_env_shim XSCHED_PRIORITY=0
	else
		scn_env_native
	fi
	if [[ $cfg != standalone ]]; then
		scn_spawn "$XS_WORK/bg.out" "$XS_WORK/bg.err" env "${XS_ENV[@]}" "$XS_CU_LOAD" --flood \
			--cmds "$cmds" --cmd-us "$size" --trace-file "$XS_WORK/bg.trace"
		bgpid=$XS_PID
		sleep 0.2
	fi
	[[ $mode == shim ]] && scn_env_shim XSCHED_PRIORITY=10
	# shellcheck disable=SC2046
	line=$(env "${XS_ENV[@]}" "$XS_CU_LOAD" $(fg_args) --lat-file "$XS_WORK/fg.lat" \
		2>"$XS_WORK/fg.err") || scn_die "$cfg: foreground failed: $(tail -3 "$XS_WORK/fg.err")"
	cat "$XS_WORK/fg.lat" >>"$XS_WORK/$cfg.lat"
	if [[ -n $bgpid ]]; then
		scn_stop "$bgpid" "$cfg: background" "$XS_WORK/bg.err"
		bg_window "$cfg" "$line" "$XS_WORK/bg.trace"
	fi
	[[ $mode == shim ]] && scn_daemon_stop
	return 0
}

# run_api CFG LEVEL: xs_load foreground and background at LEVEL.
run_api() {
	local cfg=$1 lv=$2 bgpid line bgline
	scn_device_new
	scn_daemon_start hpf
	scn_env_api
	scn_spawn "$XS_WORK/bg.out" "$XS_WORK/bg.err" env "${XS_ENV[@]}" "$XS_XS_LOAD" --flood \
		--duration-s 100000 --cmd-us "$size" --level "$lv" --priority 0 --wait-connected-ms 2000
	bgpid=$XS_PID
	sleep 0.2
	line=$(env "${XS_ENV[@]}" "$XS_XS_LOAD" --cmds "$cmds" --cmd-us "$size" \
		--tasks "$per_round" --warmup "$warmup" --period-us "$api_period" --level "$lv" \
		--priority 10 --wait-connected-ms 2000 --lat-file "$XS_WORK/fg.lat" \
		2>"$XS_WORK/fg.err") ||
		scn_die "$cfg: foreground failed: $(tail -3 "$XS_WORK/fg.err")"
	[[ -n $line ]] || scn_die "$cfg: no result line"
	cat "$XS_WORK/fg.lat" >>"$XS_WORK/$cfg.lat"
	scn_stop "$bgpid" "$cfg: background" "$XS_WORK/bg.err"
	bgline=$(cat "$XS_WORK/bg.out")
	echo "$(scn_field "$bgline" commands) $(scn_div "$(scn_field "$bgline" elapsed_ms)" 1000 %.6f)" \
		>>"$XS_WORK/$cfg.bg"
	scn_daemon_stop
}

# bg_rate CFG: commands per second over all its rounds.
bg_rate() {
	[[ -s $XS_WORK/$1.bg ]] || { echo "-"; return; }
	awk '{ n += $1; s += $2 } END { if (s > 0) printf "%.1f\n", n / s; else print "-" }' \
		"$XS_WORK/$1.bg"
}

scn_machine
echo "priority (hpf): foreground $cmds x kernels of each size at ${load}% load +-50% jitter," \
	"$tasks tasks after $warmup warm-up per configuration run, $rounds round(s);" \
	"background flooding the same tasks at lower priority"
echo "sizes (us): $sizes   levels: $levels   build: $BUILD_DIR"
scn_tsv_header size_us config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm \
	bg_cmd_s bg_norm lat_source

for size in ${sizes//,/ }; do
	# Standalone task time, back to back, to set the period.
	scn_device_new
	scn_env_native
	line=$(env "${XS_ENV[@]}" "$XS_CU_LOAD" --cmds "$cmds" --cmd-us "$size" --tasks 30 \
		--warmup 5 --period-us 0) || scn_die "calibration failed"
	task_us=$(scn_field "$line" p50_us)
	period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
	# xs_load releases a task a period after the previous one *completed*:
	# it gets the period less the standalone task time, for the same load.
	api_period=$(awk -v p="$period" -v t="$task_us" 'BEGIN { printf "%d\n", p - t }')
	echo "size ${size} us: standalone task ${task_us} us -> period ${period} us"

	configs=(bg-alone standalone native)
	for lv in ${levels//,/ }; do
		case $lv in
		1) configs+=(xsched-lv1) ;;
		1w) configs+=(xsched-lv1-wide) ;;
		2 | 3) configs+=("api-lv$lv") ;;
		*) scn_die "level $lv: 1, 1w, 2 or 3" ;;
		esac
	done
	for cfg in "${configs[@]}"; do rm -f "$XS_WORK/$cfg".*; done
	for ((r = 1; r <= rounds; r++)); do
		for cfg in "${configs[@]}"; do
			case $cfg in
			bg-alone) run_bg_alone "$cfg" ;;
			standalone | native) run_cu "$cfg" native ;;
			xsched-lv1) run_cu "$cfg" shim ;;
			xsched-lv1-wide) run_cu "$cfg" shim contention_window=0 ;;
			api-lv*) run_api "$cfg" "${cfg#api-lv}" ;;
			esac
		done
		echo "  round $r/$rounds done"
	done

	bg_base=$(bg_rate bg-alone)
	read -r _ s50 s90 s99 _ < <(scn_lat_stats "$XS_WORK/standalone.lat")
	for cfg in "${configs[@]}"; do
		n=0 p50=- p90=- p99=- src=-
		if [[ -f $XS_WORK/$cfg.lat ]]; then
			cp "$XS_WORK/$cfg.lat" "$XS_OUT/lat_$cfg-${size}us.txt"
			read -r n p50 p90 p99 _ < <(scn_lat_stats "$XS_WORK/$cfg.lat")
			src=exact
		fi
		bg=$(bg_rate "$cfg")
		[[ $cfg == standalone ]] && bg=-
		scn_tsv_row "$size" "$cfg" "$n" "$p50" "$p90" "$p99" "$(scn_div "$p50" "$s50")" \
			"$(scn_div "$p90" "$s90")" "$(scn_div "$p99" "$s99")" "$bg" \
			"$(scn_div "$bg" "$bg_base")" "$src"
	done
done
echo
scn_table
echo
echo "goals (P99 / standalone): native >= 1.6, Lv1 <= 1.10, Lv2 <= 1.05, Lv3 <= 1.02"
echo "results: $XS_OUT"
