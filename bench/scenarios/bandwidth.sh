#!/usr/bin/env bash
#
# bandwidth.sh: bandwidth partition (policy bandwidth) on the simulated
# XPU. Two processes A and B, both the unmodified CUDA application
# bench/cu_load flooding its stream with kernels of --cmd-us, start
# together (cu_load --start-at-ms) and run --duration-s; under the CUDA
# shim with a private xschedd (policy bandwidth) they carry XSCHED_SHARE
# hints. The share each achieved is counted over their common window
# (commands each completed inside it, from the floods' trace files; both
# run the same command size, so commands are device time), and the total
# throughput is compared with one process flooding alone, natively.
#
# Configurations, alternated in rounds (machine drift hits all):
#   standalone    A alone, natively: the device's full throughput
#   xsched-alone  A alone under the shim and xschedd (policy bandwidth)
#   native        A and B natively (the device's round-robin)
#   bw-SA-SB      A and B under xsched with shares SA and SB (--shares)
#   api-bw-SA-SB  the same with A and B as xs_load (public API, the sim
#                 backend, which measures each command's device time) in
#                 place of the CUDA application (--api-shares; "" for
#                 none): tells the policy from the CUDA backend's accounting.
#                 xs_load has no trace: its counts are over each process's
#                 whole run (both start within milliseconds of each other
#                 and run --duration-s), window_s is the shorter run.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   config share_a share_b cmds_a cmds_b window_s achieved_a_pct
#   achieved_b_pct error_pts total_cmd_s total_norm
# (share_*: the hints, "-" when none; achieved_*: each process's part of
# the commands completed in the common window, summed over rounds;
# error_pts: |achieved_a - share_a| in percentage points; total_norm:
# total commands per second / standalone's). No latency files: floods have
# no tasks.
# Goals (DESIGN.md, not asserted): each share within +-2 points, total
# >= 98.5% of standalone.
#
# Usage: bandwidth.sh [--smoke] [--shares 75/25,50/50,90/10] [--cmd-us T]
#                     [--cmds N] [--duration-s S] [--rounds N] [--slice-ms MS]
#                     [--api-shares 75/25]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shares=75/25,50/50,90/10 api_shares=75/25 cmd_us=500 cmds=8 dur=5 rounds=3 slice=''
usage() {
	sed -n 's/^# Usage: //p; s/^#                     / /p' "$0" | head -3 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) shares=75/25 dur=1 rounds=1 ;;
	--shares) shares=$2; shift ;;
	--api-shares) api_shares=$2; shift ;;
	--cmd-us) cmd_us=$2; shift ;;
	--cmds) cmds=$2; shift ;;
	--duration-s) dur=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--slice-ms) slice=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup bandwidth
scn_need "$XS_CU_LOAD" "bench/cu_load"
scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
[[ -z $api_shares ]] || scn_need "$XS_XS_LOAD" "bench/xs_load"
daemon_keys=()
[[ -n $slice ]] && daemon_keys=("slice_ms=$slice")

flood_args() { # trace-file start-ms
	echo "--flood --cmds $cmds --cmd-us $cmd_us --duration-s $dur --trace-file $1 --start-at-ms $2"
}

# One run of CFG: appends "cmds_a cmds_b window_s" to $XS_WORK/CFG.res.
run() {
	local cfg=$1 sa=${2:-} sb=${3:-} start pa pb la lb t0 t1 na nb
	scn_device_new
	case $cfg in
	standalone | native) scn_env_native ;;
	*)
		scn_daemon_start bandwidth "${daemon_keys[@]}"
		scn_env_shim ${sa:+XSCHED_SHARE=$sa}
		;;
	esac
	start=$(($(scn_now_ms) + 500))
	# shellcheck disable=SC2046
	scn_spawn "$XS_WORK/a.out" "$XS_WORK/a.err" env "${XS_ENV[@]}" "$XS_CU_LOAD" \
		$(flood_args "$XS_WORK/a.trace" "$start")
	pa=$XS_PID pb=
	if [[ $cfg != standalone && $cfg != xsched-alone ]]; then
		[[ $cfg == bw-* ]] && scn_env_shim "XSCHED_SHARE=$sb"
		# shellcheck disable=SC2046
		scn_spawn "$XS_WORK/b.out" "$XS_WORK/b.err" env "${XS_ENV[@]}" "$XS_CU_LOAD" \
			$(flood_args "$XS_WORK/b.trace" "$start")
		pb=$XS_PID
	fi
	scn_finish "$pa" "$cfg: process A" "$XS_WORK/a.err"
	la=$(cat "$XS_WORK/a.out")
	t0=$(scn_field "$la" t0_ns) t1=$(scn_field "$la" t1_ns) nb=0
	if [[ -n $pb ]]; then
		scn_finish "$pb" "$cfg: process B" "$XS_WORK/b.err"
		lb=$(cat "$XS_WORK/b.out")
		# The common window: both were flooding.
		t0=$(awk -v a="$t0" -v b="$(scn_field "$lb" t0_ns)" 'BEGIN { printf "%.0f\n", (a > b ? a : b) }')
		t1=$(awk -v a="$t1" -v b="$(scn_field "$lb" t1_ns)" 'BEGIN { printf "%.0f\n", (a < b ? a : b) }')
		nb=$(scn_count_window "$XS_WORK/b.trace" "$t0" "$t1")
	fi
	na=$(scn_count_window "$XS_WORK/a.trace" "$t0" "$t1")
	awk -v a="$na" -v b="$nb" -v t0="$t0" -v t1="$t1" 'BEGIN { print a, b, (t1 - t0) / 1e9 }' \
		>>"$XS_WORK/$cfg.res"
	scn_daemon_stop
}

# One run of api-bw-SA-SB: appends "cmds_a cmds_b window_s".
run_api() {
	local cfg=$1 sa=$2 sb=$3 pa pb la lb
	scn_device_new
	scn_daemon_start bandwidth "${daemon_keys[@]}"
	scn_env_api
	scn_spawn "$XS_WORK/a.out" "$XS_WORK/a.err" env "${XS_ENV[@]}" "$XS_XS_LOAD" --flood \
		--duration-s "$dur" --cmd-us "$cmd_us" --share "$sa" --wait-connected-ms 2000
	pa=$XS_PID
	scn_spawn "$XS_WORK/b.out" "$XS_WORK/b.err" env "${XS_ENV[@]}" "$XS_XS_LOAD" --flood \
		--duration-s "$dur" --cmd-us "$cmd_us" --share "$sb" --wait-connected-ms 2000
	pb=$XS_PID
	scn_finish "$pa" "$cfg: process A" "$XS_WORK/a.err"
	scn_finish "$pb" "$cfg: process B" "$XS_WORK/b.err"
	la=$(cat "$XS_WORK/a.out") lb=$(cat "$XS_WORK/b.out")
	awk -v a="$(scn_field "$la" commands)" -v b="$(scn_field "$lb" commands)" \
		-v ea="$(scn_field "$la" elapsed_ms)" -v eb="$(scn_field "$lb" elapsed_ms)" \
		'BEGIN { print a, b, (ea < eb ? ea : eb) / 1e3 }' >>"$XS_WORK/$cfg.res"
	scn_daemon_stop
}

scn_machine
echo "bandwidth: two processes flooding kernels of $cmd_us us ($cmds per group, two groups in" \
	"flight) for ${dur} s, $rounds round(s); shares $shares${api_shares:+ (xs_load: $api_shares)}${slice:+, slice $slice ms}"
echo "build: $BUILD_DIR"
configs=(standalone xsched-alone native)
for s in ${shares//,/ }; do
	[[ $s =~ ^[0-9]+/[0-9]+$ ]] || scn_die "--shares: A/B pairs of integers, not '$s'"
	configs+=("bw-${s/\//-}")
done
for s in ${api_shares//,/ }; do
	[[ $s =~ ^[0-9]+/[0-9]+$ ]] || scn_die "--api-shares: A/B pairs of integers, not '$s'"
	configs+=("api-bw-${s/\//-}")
done
for ((r = 1; r <= rounds; r++)); do
	for cfg in "${configs[@]}"; do
		case $cfg in
		bw-*) s=${cfg#bw-}; run "$cfg" "${s%-*}" "${s#*-}" ;;
		api-bw-*) s=${cfg#api-bw-}; run_api "$cfg" "${s%-*}" "${s#*-}" ;;
		*) run "$cfg" ;;
		esac
	done
	echo "  round $r/$rounds done"
done

scn_tsv_header config share_a share_b cmds_a cmds_b window_s achieved_a_pct achieved_b_pct \
	error_pts total_cmd_s total_norm
base=
for cfg in "${configs[@]}"; do
	sa=- sb=-
	if [[ $cfg == *bw-* ]]; then
		s=${cfg#*bw-}
		sa=$(awk -v a="${s%-*}" -v b="${s#*-}" 'BEGIN { printf "%.1f\n", 100 * a / (a + b) }')
		sb=$(awk -v a="$sa" 'BEGIN { printf "%.1f\n", 100 - a }')
	fi
	read -r na nb win < <(awk '{ a += $1; b += $2; w += $3 } END { printf "%d %d %.3f\n", a, b, w }' \
		"$XS_WORK/$cfg.res")
	rate=$(scn_div $((na + nb)) "$win" %.1f)
	[[ $cfg == standalone ]] && base=$rate
	pa=- pb=- err=-
	if ((nb > 0)) || [[ $cfg == native || $cfg == *bw-* ]]; then
		pa=$(scn_div $((100 * na)) $((na + nb)) %.1f)
		pb=$(scn_div $((100 * nb)) $((na + nb)) %.1f)
		[[ $sa != - ]] && err=$(awk -v a="$pa" -v s="$sa" 'BEGIN { d = a - s; printf "%.1f\n", d < 0 ? -d : d }')
	fi
	scn_tsv_row "$cfg" "$sa" "$sb" "$na" "$nb" "$win" "$pa" "$pb" "$err" "$rate" \
		"$(scn_div "$rate" "$base")"
done
echo
scn_table
echo
echo "goals: each share within +-2 points of its hint, total >= 0.985 of standalone"
echo "results: $XS_OUT"
