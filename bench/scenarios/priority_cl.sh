#!/usr/bin/env bash
#
# priority_cl.sh: fixed priority (policy hpf) on a real OpenCL device, PoCL
# on this machine's CPUs, through the OpenCL shim: the sim-XPU scenario
# priority.sh on a device xsched does not simulate. A foreground task of
# --cmds loop kernels of about --cmd-us each (one work-item) is released at
# --load % of its standalone throughput with +-50% jitter, next to a
# background process flooding kernels of the same loop of about
# --bg-cmd-us (default 5 ms) on --bg-width work-items (default 512) in
# --bg-groups work-groups (default: one per work-item) at lower priority.
# Both are the unmodified OpenCL program bench/cl_load, natively or under
# the OpenCL shim (LD_PRELOAD) with a private xschedd (hpf; foreground
# XSCHED_PRIORITY=10, background 0).
#
# What to expect: PoCL runs kernels on OS threads that the kernel
# time-slices, so natively the foreground is slowed down (its kernels share
# the CPUs) rather than blocked as on a GPU. At Lv1 (xsched-lv1: the
# guardian off) a background kernel already launched when the foreground
# arrives keeps competing until it ends; at Lv2 (xsched: the guardian, the
# default) it stops between work-groups, so its many short groups (about
# 20 us each with the defaults on 2 CPUs) bound what the foreground waits
# for. With one work-group per CPU (--bg-width 2) Lv2 cannot cut a kernel.
#
# Configurations, alternated in rounds (machine drift hits all):
#   bg-alone    the background flooding alone: its standalone throughput
#   standalone  the foreground alone
#   native      both, straight into the ICD loader
#   xsched      both under the OpenCL shim + xschedd (hpf), Lv2
#   xsched-lv1  the same with XSCHED_OPENCL_LV2=0 (Lv1)
# The kernels' iteration counts (foreground and background, each in its
# shape) are calibrated once, on the idle machine, and passed to every
# process; the standalone task time is measured next (back to back), and
# the period is task_time / load.
#
# Output: table and $XS_OUT/summary.tsv with priority.sh's columns
#   size_us config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm
#   bg_cmd_s bg_norm lat_source
# (*_norm: the foreground percentile / standalone's; bg_cmd_s: background
# kernels per second inside the foreground's window; bg_norm: / bg-alone's;
# lat_source always "exact"), and lat_<config>.txt (foreground task
# latencies, us, release to clFinish's return).
# Goals (not asserted): a clear win over native on PoCL; at Lv2 with many
# short background work-groups, P99 / standalone <= 1.15 (issue 17).
#
# --rt-priority N runs xschedd's thread and both processes' agent threads
# under SCHED_FIFO at N (realtime_priority, XSCHED_THREAD_RTPRIO; root).
#
# Usage: priority_cl.sh [--smoke] [--tasks N] [--warmup N] [--rounds N]
#                       [--cmds N] [--cmd-us US] [--load PCT] [--bg-width N]
#                       [--bg-groups N] [--bg-cmd-us US] [--bg-seconds S] [--policy NAME]
#                       [--rt-priority N]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results). Without an OpenCL device (PoCL) or the OpenCL shim
# it prints "skipped" and exits 0.
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

tasks=1000 warmup=20 rounds=4 cmds=20 size=500 load=20 bg_width=512 bg_s=2 policy=hpf
bg_groups='' bg_us=5000 rt=0
usage() {
	sed -n 's/^# Usage: //p; s/^#                       / /p' "$0" | head -5 >&2
	exit 2
}
while (($#)); do
	scn_fgbg_option "$@"
	if ((XS_NARGS)); then
		shift "$XS_NARGS"
		continue
	fi
	case $1 in
	--smoke) tasks=20 warmup=3 rounds=1 bg_s=0.5 ;;
	--policy) policy=$2; shift ;;
	--bg-groups) bg_groups=$2; shift ;;
	--bg-cmd-us) bg_us=$2; shift ;;
	--rt-priority) rt=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup priority_cl
scn_cl_setup
scn_cl_require shim
per_round=$(((tasks + rounds - 1) / rounds))
bg_groups=${bg_groups:-$bg_width}
((bg_groups >= 1 && bg_width % bg_groups == 0)) ||
	scn_die "--bg-groups $bg_groups does not divide --bg-width $bg_width"
bg_local=$((bg_width / bg_groups))
configs=(bg-alone standalone native xsched xsched-lv1)

# bg_cmd MODE [ARGS...]: the background into XS_BG_CMD: one kernel per
# event, 8 in flight, a background that keeps the device's queue full as a
# flooding GPU application does.
bg_cmd() {
	case $1 in
	xsched) scn_env_cl_shim XSCHED_PRIORITY=0 XSCHED_OPENCL_LV2=1 XSCHED_THREAD_RTPRIO="$rt" ;;
	xsched-lv1) scn_env_cl_shim XSCHED_PRIORITY=0 XSCHED_OPENCL_LV2=0 XSCHED_THREAD_RTPRIO="$rt" ;;
	*) scn_env_cl_native ;;
	esac
	shift
	XS_BG_CMD=(env "${XS_ENV[@]}" "$XS_CL_LOAD" --flood --iters "$bg_iters" --width "$bg_width"
		--local "$bg_local" --cmds 1 --depth 8 --cmd-us "$bg_us" "$@")
}

# run_cfg CFG: one configuration run; xsched with a fresh private daemon.
run_cfg() {
	local cfg=$1 mode=native
	XS_BG_CMD=()
	if [[ $cfg == bg-alone ]]; then
		bg_cmd native --duration-s "$bg_s"
		scn_bg_alone "$cfg" "$cfg"
		return 0
	fi
	if [[ $cfg == xsched* ]]; then
		scn_daemon_start "$policy" "daemon.realtime_priority=$rt"
		mode=$cfg
	fi
	[[ $cfg != standalone ]] && bg_cmd "$mode" --trace-file "$XS_WORK/bg.trace"
	case $mode in
	xsched) scn_env_cl_shim XSCHED_PRIORITY=10 XSCHED_OPENCL_LV2=1 XSCHED_THREAD_RTPRIO="$rt" ;;
	xsched-lv1) scn_env_cl_shim XSCHED_PRIORITY=10 XSCHED_OPENCL_LV2=0 XSCHED_THREAD_RTPRIO="$rt" ;;
	*) scn_env_cl_native ;;
	esac
	XS_FG_CMD=(env "${XS_ENV[@]}" "$XS_CL_LOAD" --iters "$iters" --cmd-us "$size" --cmds "$cmds"
		--tasks "$per_round" --warmup "$warmup" --period-us "$period"
		--lat-file "$XS_WORK/fg.lat")
	scn_run_pair "$cfg" "$cfg"
	[[ $mode == xsched* ]] && scn_daemon_stop
	return 0
}

scn_machine
iters=$(scn_cl_calibrate "$size")
line=$("$XS_CL_LOAD" --calibrate --cmd-us "$bg_us" --width "$bg_width" --local "$bg_local") ||
	scn_die "cl_load --calibrate (background) failed"
bg_iters=$(scn_field "$line" iters)
scn_env_cl_native
line=$(env "${XS_ENV[@]}" "$XS_CL_LOAD" --iters "$iters" --cmd-us "$size" --cmds "$cmds" \
	--tasks 30 --warmup 5 --period-us 0) || scn_die "standalone task time: cl_load failed"
task_us=$(scn_field "$line" p50_us)
period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
echo "device: $(clinfo 2>/dev/null | sed -n 's/^ *Device Name *//p' | head -1) (PoCL; POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE)"
echo "priority_cl ($policy): foreground $cmds x ${size} us kernels (1 work-item, $iters iterations)," \
	"standalone task ${task_us} us, at ${load}% load -> period ${period} us +-50%;" \
	"$tasks tasks after $warmup warm-up per configuration, $rounds round(s)"
echo "background: the same loop, ${bg_us} us kernels ($bg_iters iterations) on $bg_width" \
	"work-items in $bg_groups work-groups (local size $bg_local), 8 kernels in flight;" \
	"xsched: OpenCL shim + xschedd $policy, priorities 10 / 0, Lv2 (guardian; xsched-lv1: off)"

for ((r = 1; r <= rounds; r++)); do
	for cfg in "${configs[@]}"; do run_cfg "$cfg"; done
	echo "  round $r/$rounds done"
done

scn_tsv_header size_us config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm \
	bg_cmd_s bg_norm lat_source
for cfg in "${configs[@]}"; do
	src=-
	[[ -s $XS_WORK/$cfg.lat ]] && { cp "$XS_WORK/$cfg.lat" "$XS_OUT/lat_$cfg.txt"; src=exact; }
	# shellcheck disable=SC2046
	scn_tsv_row "$size" "$cfg" $(scn_fg_summary "$cfg" standalone bg-alone) "$src"
done
echo
scn_table
echo
echo "goals: a clear win over native on PoCL (P99 / standalone); Lv2 (xsched) P99 / standalone <= 1.15" \
	"with many short background work-groups; PoCL's threads are time-sliced by the OS"
echo "results: $XS_OUT"
