#!/usr/bin/env bash
#
# graph.sh: fixed priority (policy hpf) against a background that launches
# whole CUDA graphs, the shape of CUDA-graph inference steps. The
# foreground is priority.sh's periodic task (--cmds kernels of --size us,
# released at --load % of its standalone throughput with +-50% jitter);
# the background floods graphs of --bg-cmds kernels of --size us (40 x
# 0.5 ms: 20 ms per cuGraphLaunch, two launches in flight). Both are
# bench/cu_load on the simulated CUDA driver, natively or under the CUDA
# shim with a private xschedd (hpf; foreground XSCHED_PRIORITY=10,
# background 0). At Lv1 an XQueue stops between commands, so a graph
# launched as one command holds the device for all of it once it started;
# graph slicing (src/shim/cuda/cu_graph.h) cuts it into commands of about
# the queue's in-flight budget.
#
# Configurations, alternated in rounds (machine drift hits all):
#   bg-alone               the background alone: its standalone throughput
#   standalone             the foreground alone
#   native                 both, no xsched: the device's round-robin
#   xsched-lv1-unsliced    both under the shim + xschedd, slicing off in the
#                          background (XSCHED_CUDA_GRAPH_SLICE=0)
#   xsched-lv1             the same with graph slicing (the default)
# The foreground launches kernels, not graphs, in every configuration.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   bg_graph config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm
#   bg_cmd_s bg_norm bg_vs_unsliced lat_source
# (*_norm: the foreground percentile / standalone's; bg_cmd_s: background
# kernels per second during the foreground's window; bg_norm: / bg-alone's;
# bg_vs_unsliced: / xsched-lv1-unsliced's), and lat_<config>.txt
# (foreground latencies, us).
# Goals (issue 18, not asserted): P99 xsched-lv1 <= 1.15 x standalone;
# background throughput within 3% of xsched-lv1-unsliced's.
#
# Usage: graph.sh [--smoke] [--tasks N] [--warmup N] [--rounds N] [--cmds N]
#                 [--bg-cmds N] [--size US] [--load PCT] [--bg-seconds S]
# (--cmd-us US is --size US.)
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

tasks=1000 warmup=20 rounds=4 cmds=20 bg_cmds=40 size=500 load=20 bg_s=2
usage() {
	sed -n 's/^# Usage: //p; s/^#                 / /p' "$0" | head -2 >&2
	exit 2
}
while (($#)); do
	scn_fgbg_option "$@"
	if ((XS_NARGS)); then
		shift "$XS_NARGS"
		continue
	fi
	case $1 in
	--smoke) tasks=20 warmup=5 rounds=1 bg_s=0.5 ;;
	--bg-cmds) [[ $# -ge 2 ]] || usage; bg_cmds=$2; shift ;;
	--size) [[ $# -ge 2 ]] || usage; size=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup graph
scn_need "$XS_CU_LOAD" "bench/cu_load"
scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
per_round=$(((tasks + rounds - 1) / rounds))
bg_args=(--flood --graph --cmds "$bg_cmds" --cmd-us "$size")

# run_cfg CFG: one run of configuration CFG (lib_extra.sh's scn_run_pair).
run_cfg() {
	local cfg=$1 slice=1
	scn_device_new
	case $cfg in
	xsched-lv1-unsliced) slice=0 ;&
	xsched-lv1)
		scn_daemon_start hpf
		scn_env_shim XSCHED_PRIORITY=0 "XSCHED_CUDA_GRAPH_SLICE=$slice"
		;;
	*) scn_env_native ;;
	esac
	XS_BG_CMD=(env "${XS_ENV[@]}" "$XS_CU_LOAD" "${bg_args[@]}")
	if [[ $cfg == bg-alone ]]; then
		XS_BG_CMD+=(--duration-s "$bg_s")
		scn_bg_alone "$cfg" "$cfg"
		return 0
	fi
	XS_BG_CMD+=(--trace-file "$XS_WORK/bg.trace")
	[[ $cfg == standalone ]] && XS_BG_CMD=()
	[[ $cfg == xsched-* ]] && scn_env_shim XSCHED_PRIORITY=10
	XS_FG_CMD=(env "${XS_ENV[@]}" "$XS_CU_LOAD" --cmds "$cmds" --cmd-us "$size"
		--tasks "$per_round" --warmup "$warmup" --period-us "$period"
		--lat-file "$XS_WORK/fg.lat")
	scn_run_pair "$cfg" "$cfg"
	[[ $cfg == xsched-* ]] && scn_daemon_stop
	return 0
}

scn_machine
echo "graph (hpf): foreground $cmds x ${size} us kernels at ${load}% load +-50% jitter," \
	"$tasks tasks after $warmup warm-up per configuration run, $rounds round(s);" \
	"background flooding CUDA graphs of $bg_cmds x ${size} us kernels at lower priority"
echo "build: $BUILD_DIR"

# Standalone task time, back to back, to set the period.
scn_period "$load" --cmds "$cmds" --cmd-us "$size"

configs=(bg-alone standalone native xsched-lv1-unsliced xsched-lv1)
scn_rounds "$rounds" "${configs[@]}"

scn_tsv_header bg_graph config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm \
	bg_cmd_s bg_norm bg_vs_unsliced lat_source
scn_fgbg_rows "${bg_cmds}x${size}us" xsched-lv1-unsliced "${configs[@]}"
echo
scn_table
echo
echo "goals (issue 18): P99 xsched-lv1 / standalone <= 1.15; background throughput of" \
	"xsched-lv1 within 3% of xsched-lv1-unsliced's"
echo "results: $XS_OUT"
