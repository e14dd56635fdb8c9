#!/usr/bin/env bash
#
# hostgap.sh: fixed priority (policy hpf) for a foreground with host gaps
# inside its tasks, the shape of inference frameworks that prepare each
# kernel on the host: tasks of --cmds kernels of --size us with a host gap
# drawn from --gap-us LO,HI between them (cu_load --gap-us: the host waits
# for each kernel, then works), released at --load % of its standalone
# throughput with +-50% jitter, next to a background flooding kernels of
# --size us (groups of --bg-cmds). Both are bench/cu_load on the simulated
# CUDA driver, natively or under the CUDA shim with a private xschedd (hpf;
# foreground XSCHED_PRIORITY=10, background 0). In each gap the foreground
# queue goes idle; without the idle grace (src/sched/sched_grace.c) the
# daemon resumes the background, which launches a window of commands that
# the foreground's next kernel then waits behind.
#
# Configurations, alternated in rounds (machine drift hits all):
#   bg-alone             the background alone: its standalone throughput
#   standalone           the foreground alone
#   native               both, no xsched: the device's round-robin
#   xsched-lv1-nograce   both under the shim + xschedd, idle_grace_us = 0
#   xsched-lv1           the same with the idle grace (the default cap)
#
# Output: table and $XS_OUT/summary.tsv with columns
#   gaps config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm
#   bg_cmd_s bg_norm bg_vs_nograce lat_source
# (*_norm: the foreground percentile / standalone's; bg_cmd_s: background
# kernels per second during the foreground's window; bg_norm: / bg-alone's;
# bg_vs_nograce: / xsched-lv1-nograce's), and lat_<config>.txt
# (foreground latencies, us).
# Goals (issue 18, not asserted): P99 xsched-lv1 <= 1.10 x standalone;
# background throughput (bg_norm) at most 2 points below
# xsched-lv1-nograce's.
#
# Usage: hostgap.sh [--smoke] [--tasks N] [--warmup N] [--rounds N] [--cmds N]
#                   [--bg-cmds N] [--size US] [--gap-us LO,HI] [--load PCT]
#                   [--bg-seconds S]
# (--cmd-us US is --size US.)
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

tasks=1000 warmup=20 rounds=4 cmds=20 bg_cmds=20 size=500 gaps=20,300 load=20 bg_s=2
usage() {
	sed -n 's/^# Usage: //p; s/^#                   / /p' "$0" | head -3 >&2
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
	--gap-us) [[ $# -ge 2 ]] || usage; gaps=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup hostgap
scn_need "$XS_CU_LOAD" "bench/cu_load"
scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
per_round=$(((tasks + rounds - 1) / rounds))
bg_args=(--flood --cmds "$bg_cmds" --cmd-us "$size")
fg_args=(--cmds "$cmds" --cmd-us "$size" --gap-us "$gaps")

# run_cfg CFG: one run of configuration CFG (lib_extra.sh's scn_run_pair).
run_cfg() {
	local cfg=$1
	scn_device_new
	case $cfg in
	xsched-lv1-nograce) scn_daemon_start hpf idle_grace_us=0 ;;
	xsched-lv1) scn_daemon_start hpf ;;
	esac
	if [[ $cfg == xsched-* ]]; then
		scn_env_shim XSCHED_PRIORITY=0
	else
		scn_env_native
	fi
	XS_BG_CMD=(env "${XS_ENV[@]}" "$XS_CU_LOAD" "${bg_args[@]}")
	if [[ $cfg == bg-alone ]]; then
		XS_BG_CMD+=(--duration-s "$bg_s")
		scn_bg_alone "$cfg" "$cfg"
		return 0
	fi
	XS_BG_CMD+=(--trace-file "$XS_WORK/bg.trace")
	[[ $cfg == standalone ]] && XS_BG_CMD=()
	[[ $cfg == xsched-* ]] && scn_env_shim XSCHED_PRIORITY=10
	XS_FG_CMD=(env "${XS_ENV[@]}" "$XS_CU_LOAD" "${fg_args[@]}"
		--tasks "$per_round" --warmup "$warmup" --period-us "$period"
		--lat-file "$XS_WORK/fg.lat")
	scn_run_pair "$cfg" "$cfg"
	[[ $cfg == xsched-* ]] && scn_daemon_stop
	return 0
}

scn_machine
echo "hostgap (hpf): foreground $cmds x ${size} us kernels with host gaps of ${gaps} us" \
	"between them, at ${load}% load +-50% jitter, $tasks tasks after $warmup warm-up per" \
	"configuration run, $rounds round(s); background flooding ${size} us kernels at lower priority"
echo "build: $BUILD_DIR"

# Standalone task time (gaps included), back to back, to set the period.
scn_period "$load" "${fg_args[@]}"

configs=(bg-alone standalone native xsched-lv1-nograce xsched-lv1)
scn_rounds "$rounds" "${configs[@]}"

scn_tsv_header gaps config tasks p50_us p90_us p99_us p50_norm p90_norm p99_norm \
	bg_cmd_s bg_norm bg_vs_nograce lat_source
scn_fgbg_rows "${gaps}us" xsched-lv1-nograce "${configs[@]}"
echo
scn_table
echo
echo "goals (issue 18): P99 xsched-lv1 / standalone <= 1.10; background throughput of" \
	"xsched-lv1 at most 2 points (bg_norm) below xsched-lv1-nograce's"
echo "results: $XS_OUT"
