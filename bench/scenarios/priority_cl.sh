#!/usr/bin/env bash
#
# priority_cl.sh: fixed priority (policy hpf) on a real OpenCL device, PoCL
# on this machine's CPUs, through the OpenCL shim: the sim-XPU scenario
# priority.sh on a device xsched does not simulate. A foreground task of
# --cmds loop kernels of about --cmd-us each (one work-item) is released at
# --load % of its standalone throughput with +-50% jitter, next to a
# background process flooding kernels of the same loop on --bg-width
# work-items (default: every CPU) at lower priority. Both are the
# unmodified OpenCL program bench/cl_load, natively or under the OpenCL
# shim (LD_PRELOAD) with a private xschedd (hpf; foreground
# XSCHED_PRIORITY=10, background 0).
#
# What to expect: the shim works at Lv1 (PoCL cannot stop a running
# kernel), and PoCL runs kernels on OS threads that the kernel time-slices,
# so natively the foreground is slowed down (its kernels share the CPUs)
# rather than blocked as on a GPU, and under xsched the background kernels
# already launched when the foreground arrives keep competing until they
# end (the XQueue's in-flight window bounds how many).
#
# Configurations, alternated in rounds (machine drift hits all):
#   bg-alone    the background flooding alone: its standalone throughput
#   standalone  the foreground alone
#   native      both, straight into the ICD loader
#   xsched      both under the OpenCL shim + xschedd (hpf)
# The kernel's iteration count is calibrated once, on the idle machine, and
# passed to every process; the standalone task time is measured next (back
# to back), and the period is task_time / load.
#
# Output: table and $XS_OUT/summary.tsv with priority.sh's columns
#   size_us config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm
#   bg_cmd_s bg_norm lat_source
# (*_norm: the foreground percentile / standalone's; bg_cmd_s: background
# kernels per second inside the foreground's window; bg_norm: / bg-alone's;
# lat_source always "exact"), and lat_<config>.txt (foreground task
# latencies, us, release to clFinish's return).
# Goal (DESIGN.md, not asserted): a clear win over native on PoCL.
#
# Usage: priority_cl.sh [--smoke] [--tasks N] [--warmup N] [--rounds N]
#                       [--cmds N] [--cmd-us US] [--load PCT]
#                       [--bg-width N] [--bg-seconds S] [--policy NAME]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results). Without an OpenCL device (PoCL) or the OpenCL shim
# it prints "skipped" and exits 0.
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

tasks=1000 warmup=20 rounds=4 cmds=20 size=500 load=20 bg_width=$(nproc) bg_s=2 policy=hpf
usage() {
	sed -n 's/^# Usage: //p; s/^#                       / /p' "$0" | head -3 >&2
	exit 2
}
while (($#)); do
	xs_fgbg_option "$@"
	if ((XS_NARGS)); then
		shift "$XS_NARGS"
		continue
	fi
	case $1 in
	--smoke) tasks=20 warmup=3 rounds=1 bg_s=0.5 ;;
	--policy) policy=$2; shift ;;
	*) usage ;;
	esac
	shift
done
xs_setup priority_cl
xs_cl_setup
xs_cl_require shim
per_round=$(((tasks + rounds - 1) / rounds))
configs=(bg-alone standalone native xsched)

# bg_cmd MODE [ARGS...]: the background into XS_BG_CMD: one kernel per
# event, 8 in flight, a background that keeps the device's queue full as a
# flooding GPU application does.
bg_cmd() {
	if [[ $1 == xsched ]]; then xs_env_cl_shim XSCHED_PRIORITY=0; else xs_env_cl_native; fi
	shift
	XS_BG_CMD=(env "${XS_ENV[@]}" "$XS_CL_LOAD" --flood --iters "$iters" --width "$bg_width"
		--cmds 1 --depth 8 --cmd-us "$size" "$@")
}

# run_cfg CFG: one configuration run; xsched with a fresh private daemon.
run_cfg() {
	local cfg=$1 mode=native
	XS_BG_CMD=()
	if [[ $cfg == bg-alone ]]; then
		bg_cmd native --duration-s "$bg_s"
		xs_bg_alone "$cfg" "$cfg"
		return 0
	fi
	if [[ $cfg == xsched ]]; then
		xs_daemon_start "$policy"
		mode=xsched
	fi
	[[ $cfg != standalone ]] && bg_cmd "$mode" --trace-file "$XS_WORK/bg.trace"
	if [[ $mode == xsched ]]; then xs_env_cl_shim XSCHED_PRIORITY=10; else xs_env_cl_native; fi
	XS_FG_CMD=(env "${XS_ENV[@]}" "$XS_CL_LOAD" --iters "$iters" --cmd-us "$size" --cmds "$cmds"
		--tasks "$per_round" --warmup "$warmup" --period-us "$period"
		--lat-file "$XS_WORK/fg.lat")
	xs_run_pair "$cfg" "$cfg"
	[[ $mode == xsched ]] && xs_daemon_stop
	return 0
}

xs_machine
iters=$(xs_cl_calibrate "$size")
xs_env_cl_native
line=$(env "${XS_ENV[@]}" "$XS_CL_LOAD" --iters "$iters" --cmd-us "$size" --cmds "$cmds" \
	--tasks 30 --warmup 5 --period-us 0) || xs_die "standalone task time: cl_load failed"
task_us=$(xs_field "$line" p50_us)
period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
echo "device: $(clinfo 2>/dev/null | sed -n 's/^ *Device Name *//p' | head -1) (PoCL; POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE)"
echo "priority_cl ($policy): foreground $cmds x ${size} us kernels (1 work-item, $iters iterations)," \
	"standalone task ${task_us} us, at ${load}% load -> period ${period} us +-50%;" \
	"$tasks tasks after $warmup warm-up per configuration, $rounds round(s)"
echo "background: the same loop on $bg_width work-items per kernel, 8 kernels in flight;" \
	"xsched: OpenCL shim (Lv1) + xschedd $policy, priorities 10 / 0"

for ((r = 1; r <= rounds; r++)); do
	for cfg in "${configs[@]}"; do run_cfg "$cfg"; done
	echo "  round $r/$rounds done"
done

xs_tsv_header size_us config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm \
	bg_cmd_s bg_norm lat_source
for cfg in "${configs[@]}"; do
	src=-
	[[ -s $XS_WORK/$cfg.lat ]] && { cp "$XS_WORK/$cfg.lat" "$XS_OUT/lat_$cfg.txt"; src=exact; }
	# shellcheck disable=SC2046
	xs_tsv_row "$size" "$cfg" $(xs_fg_summary "$cfg" standalone bg-alone) "$src"
done
echo
xs_table
echo
echo "goal: a clear win over native on PoCL (P99 / standalone); PoCL is Lv1 and time-sliced by the OS"
echo "results: $XS_OUT"
