#!/usr/bin/env bash
#
# heterogeneous.sh: a foreground task on one device slowed down by a
# background task on ANOTHER device, through what the two devices share on
# the host. Here the devices are the simulated XPU (bench/cu_load on the
# simulated CUDA driver, whose executor thread busy-spins each command on a
# CPU) and PoCL (bench/cl_load, kernels on CPU threads): both live on this
# machine's CPUs, as a GPU and an NPU share PCIe, memory bandwidth and the
# CPU threads that feed them. A per-device policy cannot help: each device
# has one queue. The cross-device policy can: hhpf (src/policy/hpf.c)
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
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

directions=sim-fg,cl-fg tasks=400 warmup=20 rounds=2 cmds=20 size=500 load=20
bg_width=$(nproc) bg_s=2
usage() {
	sed -n 's/^# Usage: //p; s/^#                         / /p' "$0" | head -3 >&2
	exit 2
}
while (($#)); do
	scn_fgbg_option "$@"
	if ((XS_NARGS)); then
		shift "$XS_NARGS"
		continue
	fi
	case $1 in
	--smoke) tasks=10 warmup=3 rounds=1 bg_s=0.5 ;;
	--directions) directions=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup heterogeneous
scn_cl_setup
scn_cl_require shim
scn_need "$XS_CU_LOAD" "bench/cu_load"
scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
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
		if [[ $mode == shim ]]; then scn_env_shim "XSCHED_PRIORITY=$prio"; else scn_env_native; fi
		case $role in
		fg) args=(--cmds "$cmds" --cmd-us "$size") ;;
		*) args=(--flood --cmds 8 --cmd-us "$size") ;;
		esac
	else
		prog=$XS_CL_LOAD
		if [[ $mode == shim ]]; then
			scn_env_cl_shim "XSCHED_PRIORITY=$prio"
		else
			scn_env_cl_native
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
# in $XS_WORK/DIR-CFG.lat and .bg (lib_extra.sh).
run_cfg() {
	local dir=$1 fg=$2 bg=$3 cfg=$4 mode=native
	scn_device_new
	XS_BG_CMD=()
	if [[ $cfg == bg-alone ]]; then
		wl_cmd "$bg" bg-alone native 0
		XS_BG_CMD=("${CMD[@]}")
		scn_bg_alone "$dir-$cfg" "$dir $cfg"
		return 0
	fi
	if [[ $cfg == hpf || $cfg == hhpf ]]; then
		scn_daemon_start "$cfg"
		mode=shim
	fi
	if [[ $cfg != standalone ]]; then
		wl_cmd "$bg" bg "$mode" 0
		XS_BG_CMD=("${CMD[@]}")
	fi
	wl_cmd "$fg" fg "$mode" 10
	XS_FG_CMD=("${CMD[@]}")
	scn_run_pair "$dir-$cfg" "$dir $cfg"
	[[ $mode == shim ]] && scn_daemon_stop
	return 0
}

devname() { [[ $1 == cu ]] && echo sim || echo pocl; }

scn_machine
iters=$(scn_cl_calibrate "$size")
echo "heterogeneous: foreground $cmds x ${size} us commands at ${load}% load +-50%," \
	"$tasks tasks after $warmup warm-up per configuration, $rounds round(s);" \
	"background flooding ${size} us commands on the other device"
echo "sim XPU: cu_load on the simulated CUDA driver (CUDA shim under xsched);" \
	"PoCL: cl_load, $iters loop iterations per work-item, background on $bg_width" \
	"work-items (OpenCL shim under xsched); priorities 10 / 0"

scn_tsv_header direction fg_device bg_device config tasks p50_us p90_us p99_us p50_norm \
	p90_norm p99_norm bg_cmd_s bg_norm
for dir in ${directions//,/ }; do
	case $dir in
	sim-fg) fg=cu bg=cl ;;
	cl-fg) fg=cl bg=cu ;;
	*) scn_die "direction $dir: sim-fg or cl-fg" ;;
	esac
	# Standalone task time, back to back, to set the period.
	scn_device_new
	period=0 per_round_save=$per_round per_round=30
	wl_cmd "$fg" fg native 0
	per_round=$per_round_save
	line=$("${CMD[@]}") || scn_die "$dir: standalone task time failed"
	task_us=$(scn_field "$line" p50_us)
	period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
	echo "$dir: standalone task ${task_us} us -> period ${period} us"
	for ((r = 1; r <= rounds; r++)); do
		for cfg in "${configs[@]}"; do
			run_cfg "$dir" "$fg" "$bg" "$cfg"
		done
		echo "  $dir: round $r/$rounds done"
	done
	for cfg in "${configs[@]}"; do
		[[ -s $XS_WORK/$dir-$cfg.lat ]] && cp "$XS_WORK/$dir-$cfg.lat" "$XS_OUT/lat_$dir-$cfg.txt"
		# shellcheck disable=SC2046
		scn_tsv_row "$dir" "$(devname "$fg")" "$(devname "$bg")" "$cfg" \
			$(scn_fg_summary "$dir-$cfg" "$dir-standalone" "$dir-bg-alone")
	done
done
echo
scn_table
echo
echo "expected: hpf ~ native (each device has one queue), hhpf closer to standalone at some background throughput"
echo "results: $XS_OUT"
