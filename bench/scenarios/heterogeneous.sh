#!/usr/bin/env bash
#
# heterogeneous.sh: a foreground task on one device slowed down by a
# background task on ANOTHER device, through what the two devices share on
# the host. Here the devices are the simulated XPU (bench/cu_load on the
# simulated CUDA driver, whose executor thread busy-spins each command on a
# CPU) and PoCL (bench/cl_load, kernels on CPU threads): both live on this
# machine's CPUs, as a GPU and an NPU share PCIe, memory bandwidth and the
# CPU threads that feed them. A per-device policy cannot help: each device
# has one queue. The cross-device policy can: hhpf (src/daemon/policy/hpf.c)
# takes the highest ready priority over every device, so a ready foreground
# suspends the background wherever it runs.
#
# Directions (--directions, default both):
#   sim-fg  foreground on the sim XPU, background flooding PoCL (every CPU)
#   cl-fg   foreground on PoCL, background flooding the sim XPU
# Configurations, alternated in rounds:
#   bg-alone    the background flooding alone: its standalone throughput
#   standalone  the foreground alone
#   native      both, no xsched
#   hpf         both under their shims (CUDA, OpenCL) + xschedd hpf: per
#               device, so each queue, alone on its device, always runs
#   hhpf        the same with xschedd hhpf: priority across devices
# Priorities under xsched: foreground 10, background 0. The foreground is
# --cmds commands of --cmd-us at --load % of its standalone throughput with
# +-50% jitter (period from its standalone task time, measured first, back
# to back); the background floods commands of the same size.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   direction fg_device bg_device config tasks p50_us p90_us p99_us
#   p50_norm p90_norm p99_norm bg_cmd_s bg_norm
# (*_norm: the foreground percentile / its standalone one; bg_cmd_s:
# background commands per second inside the foreground's window; bg_norm:
# / bg-alone's), and lat_<direction>-<config>.txt (foreground latencies, us).
#
# Usage: heterogeneous.sh [--smoke] [--directions sim-fg,cl-fg] [--tasks N]
#                         [--warmup N] [--rounds N] [--cmds N] [--cmd-us US]
#                         [--load PCT] [--bg-width N] [--bg-seconds S]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results). Without an OpenCL device (PoCL) or the shims it
# prints "skipped" and exits 0.
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_cl.sh
. "$here/lib_cl.sh"

directions=sim-fg,cl-fg tasks=400 warmup=20 rounds=2 cmds=20 size=500 load=20
bg_width=$(nproc) bg_s=2
usage() {
	sed -n 's/^# Usage: //p; s/^#                         / /p' "$0" | head -3 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) tasks=10 warmup=3 rounds=1 bg_s=0.5 ;;
	--directions) directions=$2; shift ;;
	--tasks) tasks=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--cmds) cmds=$2; shift ;;
	--cmd-us) size=$2; shift ;;
	--load) load=$2; shift ;;
	--bg-width) bg_width=$2; shift ;;
	--bg-seconds) bg_s=$2; shift ;;
	*) usage ;;
	esac
	shift
done
xs_setup heterogeneous
xs_cl_setup
xs_cl_require shim
xs_need "$XS_CU_LOAD" "bench/cu_load"
xs_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
per_round=$(((tasks + rounds - 1) / rounds))
configs=(bg-alone standalone native hpf hhpf)

# wl_cmd KIND ROLE MODE PRIO: the command line of a workload into CMD (env
# prefix included). KIND cu (sim XPU) or cl (PoCL); ROLE fg, bg (flood
# until stopped, traced) or bg-alone (flood for --bg-seconds); MODE native
# or shim (the daemon must be running).
wl_cmd() {
	local kind=$1 role=$2 mode=$3 prio=$4 prog args
	if [[ $kind == cu ]]; then
		prog=$XS_CU_LOAD
		if [[ $mode == shim ]]; then xs_env_shim "XSCHED_PRIORITY=$prio"; else xs_env_native; fi
		case $role in
		fg) args=(--cmds "$cmds" --cmd-us "$size") ;;
		*) args=(--flood --cmds 8 --cmd-us "$size") ;;
		esac
	else
		prog=$XS_CL_LOAD
		if [[ $mode == shim ]]; then
			xs_env_cl_shim "XSCHED_PRIORITY=$prio"
		else
			xs_env_cl_native
		fi
		case $role in
		fg) args=(--iters "$iters" --cmds "$cmds" --cmd-us "$size") ;;
		*) args=(--flood --iters "$iters" --width "$bg_width" --cmds 1 --depth 8
			--cmd-us "$size") ;;
		esac
	fi
	case $role in
	fg) args+=(--tasks "$per_round" --warmup "$warmup" --period-us "$period"
		--lat-file "$XS_WORK/fg.lat") ;;
	bg) args+=(--trace-file "$XS_WORK/bg.trace") ;;
	bg-alone) args+=(--duration-s "$bg_s") ;;
	esac
	CMD=(env "${XS_ENV[@]}" "$prog" "${args[@]}")
}

# run_cfg DIR FG BG CFG: one configuration run of direction DIR; results
# accumulate in $XS_WORK/DIR-CFG.lat (us) and .bg ("commands seconds").
run_cfg() {
	local dir=$1 fg=$2 bg=$3 cfg=$4 mode=native bgpid='' line t0 t1 n
	xs_device_new
	if [[ $cfg == bg-alone ]]; then
		wl_cmd "$bg" bg-alone native 0
		line=$("${CMD[@]}" 2>"$XS_WORK/bg.err") ||
			xs_die "$dir $cfg: background failed: $(tail -3 "$XS_WORK/bg.err")"
		echo "$(xs_field "$line" commands) $(xs_div "$(xs_field "$line" elapsed_ms)" 1000 %.6f)" \
			>>"$XS_WORK/$dir-$cfg.bg"
		return 0
	fi
	if [[ $cfg == hpf || $cfg == hhpf ]]; then
		xs_daemon_start "$cfg"
		mode=shim
	fi
	if [[ $cfg != standalone ]]; then
		wl_cmd "$bg" bg "$mode" 0
		xs_spawn "$XS_WORK/bg.out" "$XS_WORK/bg.err" "${CMD[@]}"
		bgpid=$XS_PID
		sleep 0.5
	fi
	wl_cmd "$fg" fg "$mode" 10
	line=$("${CMD[@]}" 2>"$XS_WORK/fg.err") ||
		xs_die "$dir $cfg: foreground failed: $(tail -3 "$XS_WORK/fg.err")"
	cat "$XS_WORK/fg.lat" >>"$XS_WORK/$dir-$cfg.lat"
	if [[ -n $bgpid ]]; then
		xs_stop "$bgpid" "$dir $cfg: background" "$XS_WORK/bg.err"
		t0=$(xs_field "$line" t0_ns) t1=$(xs_field "$line" t1_ns)
		n=$(xs_count_window "$XS_WORK/bg.trace" "$t0" "$t1")
		awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { print n, (b - a) / 1e9 }' \
			>>"$XS_WORK/$dir-$cfg.bg"
	fi
	[[ $mode == shim ]] && xs_daemon_stop
	return 0
}

norm() {
	[[ -z $1 || $1 == - ]] && { echo "-"; return; }
	xs_div "$@"
}

bg_rate() {
	[[ -s $XS_WORK/$1.bg ]] || { echo "-"; return; }
	awk '{ n += $1; s += $2 } END { if (s > 0) printf "%.1f\n", n / s; else print "-" }' \
		"$XS_WORK/$1.bg"
}

devname() { [[ $1 == cu ]] && echo sim || echo pocl; }

xs_machine
iters=$(xs_cl_calibrate "$size")
echo "heterogeneous: foreground $cmds x ${size} us commands at ${load}% load +-50%," \
	"$tasks tasks after $warmup warm-up per configuration, $rounds round(s);" \
	"background flooding ${size} us commands on the other device"
echo "sim XPU: cu_load on the simulated CUDA driver (CUDA shim under xsched);" \
	"PoCL: cl_load, $iters loop iterations per work-item, background on $bg_width" \
	"work-items (OpenCL shim under xsched); priorities 10 / 0"

xs_tsv_header direction fg_device bg_device config tasks p50_us p90_us p99_us p50_norm \
	p90_norm p99_norm bg_cmd_s bg_norm
for dir in ${directions//,/ }; do
	case $dir in
	sim-fg) fg=cu bg=cl ;;
	cl-fg) fg=cl bg=cu ;;
	*) xs_die "direction $dir: sim-fg or cl-fg" ;;
	esac
	# Standalone task time, back to back, to set the period.
	xs_device_new
	period=0 per_round_save=$per_round per_round=30
	wl_cmd "$fg" fg native 0
	per_round=$per_round_save
	line=$("${CMD[@]}") || xs_die "$dir: standalone task time failed"
	task_us=$(xs_field "$line" p50_us)
	period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
	echo "$dir: standalone task ${task_us} us -> period ${period} us"
	for ((r = 1; r <= rounds; r++)); do
		for cfg in "${configs[@]}"; do
			run_cfg "$dir" "$fg" "$bg" "$cfg"
		done
		echo "  $dir: round $r/$rounds done"
	done
	bg_base=$(bg_rate "$dir-bg-alone")
	s50=$(xs_pct "$XS_WORK/$dir-standalone.lat" 50)
	s90=$(xs_pct "$XS_WORK/$dir-standalone.lat" 90)
	s99=$(xs_pct "$XS_WORK/$dir-standalone.lat" 99)
	for cfg in "${configs[@]}"; do
		n=0 p50=- p90=- p99=-
		f=$XS_WORK/$dir-$cfg.lat
		if [[ -f $f ]]; then
			cp "$f" "$XS_OUT/lat_$dir-$cfg.txt"
			n=$(wc -l <"$f")
			p50=$(xs_pct "$f" 50) p90=$(xs_pct "$f" 90) p99=$(xs_pct "$f" 99)
		fi
		b=$(bg_rate "$dir-$cfg")
		xs_tsv_row "$dir" "$(devname "$fg")" "$(devname "$bg")" "$cfg" "$n" "$p50" "$p90" \
			"$p99" "$(norm "$p50" "$s50")" "$(norm "$p90" "$s90")" "$(norm "$p99" "$s99")" \
			"$b" "$(norm "$b" "$bg_base")"
	done
done
echo
xs_table
echo
echo "expected: hpf ~ native (each device has one queue), hhpf closer to standalone at some background throughput"
echo "results: $XS_OUT"
