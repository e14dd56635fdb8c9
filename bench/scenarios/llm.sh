#!/usr/bin/env bash
#
# llm.sh: LLM serving co-located with offline batch work on the simulated
# XPU, under fixed priority (policy hpf). The online server (cu_llm
# --server, bench/llm_work.h) takes requests arriving as a Poisson process
# at --rate per second (about a fifth of its time busy standalone at the
# default 8/s; 14/s: a third) one at a time in arrival order: a prefill of 4 kernels of
# 0.5..2 ms, then 32 decode steps, each one CUDA graph of 30 x 20 us
# kernels, a cuStreamSynchronize and 50..150 us of host work. The offline
# job (cu_llm --offline) keeps two kernels of 2..20 ms on the device, or
# with graphs two CUDA graphs of 10 x 2 ms. Both run natively on the
# simulated CUDA driver or unchanged under the CUDA shim with a private
# xschedd (hpf; server XSCHED_PRIORITY=10, offline 0); xs_llm runs the
# same workload through the public API for Lv3, which the CUDA shim does
# not offer (its decode step is 30 commands and a wait: the API has no
# graphs).
#
# Configurations, alternated in rounds (machine drift hits all):
#   server-alone         the server alone, natively: the baseline of TTFT/TPOT
#   offline-alone        the offline job alone: its baseline throughput
#   offline-alone-graphs the same launching graphs
#   native               both, no xsched: the device's round-robin
#   native-graphs        both, the offline job launching graphs
#   xsched-lv1           both under the CUDA shim + xschedd (Lv1)
#   xsched-lv1-graphs    the same, the offline job launching graphs (the
#                        shim slices them, src/shim/cuda/cu_graph.h)
#   xsched-lv1-cap1      xsched-lv1 with [policy] preempt_cap = 1: the
#                        offline job is held at most once per request,
#                        then shares the device until the request ends
#   xsched-lv1-nofloor   xsched-lv1 with [policy] floor = no: every stop
#                        of the offline job waits for the daemon's decision
#   api-alone            xs_llm's server alone under xschedd at Lv3: the
#                        baseline of api-lv3
#   api-offline-alone    xs_llm's offline job alone under xschedd at Lv3
#   api-lv3              both as xs_llm at Lv3 under xschedd
#   api-lv3-cap1         the same with preempt_cap = 1
# Round r draws arrivals, prefill sizes, gaps and offline kernel sizes
# from --seed + r - 1, the same for every configuration of the round.
# A server run stops at --requests after --warmup, or at a cap of 1.5 x
# the time their arrivals take plus 2 s: natively the simulated device
# alternates commands between queues, so each 20 us kernel of a step
# waits behind a 2..20 ms offline kernel and the server falls behind for
# good (a request takes seconds). Requests the cap cut off count as unserved, with their TTFT a
# lower bound (cap - arrival) in the TTFT figures, which then are lower
# bounds too; TPOT is over the requests served.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   config requests unserved ttft_p50_us ttft_p99_us ttft_p50_norm
#   ttft_p99_norm tpot_p50_us tpot_p99_us tpot_p50_norm tpot_p99_norm
#   off_ms_s off_norm
# (*_norm: / the baseline's (server-alone, or api-alone for api-lv3);
# off_ms_s: offline device ms completed per second during the server's
# window (alone: over its run); off_norm: / its offline-alone's), and
# ttft_<config>.txt, tpot_<config>.txt (us, one per request, for CDFs;
# lib.sh has no plotting helper and tools/plots.sh no llm figure yet).
#
# Usage: llm.sh [--smoke] [--requests N] [--warmup N] [--rounds N]
#               [--rate R] [--offline-seconds S] [--seed S] [--configs LIST]
# (--configs: a comma-separated subset of the configurations above; the
# baselines they are divided by are added.)
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"

requests=200 warmup=5 rounds=2 rate=8 off_s=2 seed=1 only=
usage() {
	sed -n 's/^# Usage: //p; s/^#               / /p' "$0" | head -2 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) requests=6 warmup=1 rounds=1 off_s=0.5 ;;
	--requests) [[ $# -ge 2 ]] || usage; requests=$2; shift ;;
	--warmup) [[ $# -ge 2 ]] || usage; warmup=$2; shift ;;
	--rounds) [[ $# -ge 2 ]] || usage; rounds=$2; shift ;;
	--rate) [[ $# -ge 2 ]] || usage; rate=$2; shift ;;
	--offline-seconds) [[ $# -ge 2 ]] || usage; off_s=$2; shift ;;
	--seed) [[ $# -ge 2 ]] || usage; seed=$2; shift ;;
	--configs) [[ $# -ge 2 ]] || usage; only=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup llm
XS_CU_LLM=$BUILD_DIR/bench/cu_llm
XS_XS_LLM=$BUILD_DIR/bench/xs_llm
scn_need "$XS_CU_LLM" "bench/cu_llm"
scn_need "$XS_XS_LLM" "bench/xs_llm"
scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
per_round=$(((requests + rounds - 1) / rounds))
cap_s=$(awk -v n="$((per_round + warmup))" -v r="$rate" 'BEGIN { printf "%.1f\n", 1.5 * n / r + 2 }')
api_args=(--level 3 --wait-connected-ms 2000)

# Results of a configuration accumulate over rounds in $XS_WORK/<cfg>.*:
# .ttft, .tpot (us), .unserved and .busy (one count, one busy_pct per
# run), .off ("device_ms seconds" lines).

# off_record CFG LINE: an offline run's own device time over its run.
off_record() {
	echo "$(scn_field "$2" device_ms) $(scn_div "$(scn_field "$2" elapsed_ms)" 1000 %.6f)" \
		>>"$XS_WORK/$1.off"
}

# pair CFG SERVER_CMD... : the offline command in XS_OFF_CMD (none if
# empty; it writes --trace-file $XS_WORK/off.trace) in the background,
# then the server to its end; records both.
pair() {
	local cfg=$1 offpid='' line t0 t1 us
	shift
	if ((${#XS_OFF_CMD[@]})); then
		rm -f "$XS_WORK/off.trace"
		scn_spawn "$XS_WORK/off.out" "$XS_WORK/off.err" "${XS_OFF_CMD[@]}" \
			--trace-file "$XS_WORK/off.trace"
		offpid=$XS_PID
		# The offline job reaches its flood before the first request
		# (the server's window is measured; this only keeps its first
		# requests from meeting a job still setting up).
		sleep 0.5
	fi
	line=$("$@" --ttft-file "$XS_WORK/ttft" --tpot-file "$XS_WORK/tpot" \
		2>"$XS_WORK/srv.err") || scn_die "$cfg: server failed: $(tail -3 "$XS_WORK/srv.err")"
	[[ -n $line ]] || scn_die "$cfg: server printed no result line"
	cat "$XS_WORK/ttft" >>"$XS_WORK/$cfg.ttft"
	cat "$XS_WORK/tpot" >>"$XS_WORK/$cfg.tpot"
	scn_field "$line" unserved >>"$XS_WORK/$cfg.unserved"
	scn_field "$line" busy_pct >>"$XS_WORK/$cfg.busy"
	[[ -n $offpid ]] || return 0
	scn_stop "$offpid" "$cfg: offline job" "$XS_WORK/off.err"
	t0=$(scn_field "$line" t0_ns) t1=$(scn_field "$line" t1_ns)
	us=$(scn_count_window "$XS_WORK/off.trace" "$t0" "$t1")
	awk -v u="$us" -v a="$t0" -v b="$t1" 'BEGIN { print u / 1e3, (b - a) / 1e9 }' \
		>>"$XS_WORK/$cfg.off"
}

# run_cfg CFG SEED: one run of configuration CFG, its arrivals, prefill
# sizes, gaps and offline sizes drawn from SEED.
run_cfg() {
	local cfg=$1 graphs=() line srv_args
	srv_args=(--server --rate-per-s "$rate" --seed "$2" --requests "$per_round"
		--warmup "$warmup" --duration-s "$cap_s")
	scn_device_new
	[[ $cfg == *-graphs ]] && graphs=(--graphs)
	case $cfg in
	server-alone | native*)
		scn_env_native
		XS_OFF_CMD=(env "${XS_ENV[@]}" "$XS_CU_LLM" --offline --seed "$2" "${graphs[@]}")
		[[ $cfg == server-alone ]] && XS_OFF_CMD=()
		pair "$cfg" env "${XS_ENV[@]}" "$XS_CU_LLM" "${srv_args[@]}"
		;;
	offline-alone*)
		scn_env_native
		line=$(env "${XS_ENV[@]}" "$XS_CU_LLM" --offline --seed "$2" "${graphs[@]}" \
			--duration-s "$off_s") || scn_die "$cfg: cu_llm failed"
		off_record "$cfg" "$line"
		;;
	xsched-lv1*)
		case $cfg in
		*-cap1) scn_daemon_start hpf preempt_cap=1 ;;
		*-nofloor) scn_daemon_start hpf floor=no ;;
		*) scn_daemon_start hpf ;;
		esac
		scn_env_shim XSCHED_PRIORITY=0
		XS_OFF_CMD=(env "${XS_ENV[@]}" "$XS_CU_LLM" --offline --seed "$2" "${graphs[@]}")
		scn_env_shim XSCHED_PRIORITY=10
		pair "$cfg" env "${XS_ENV[@]}" "$XS_CU_LLM" "${srv_args[@]}"
		scn_daemon_stop
		;;
	api-offline-alone)
		scn_daemon_start hpf
		scn_env_api
		line=$(env "${XS_ENV[@]}" "$XS_XS_LLM" "${api_args[@]}" --priority 0 --offline \
			--seed "$2" --duration-s "$off_s" 2>"$XS_WORK/off.err") ||
			scn_die "$cfg: xs_llm failed: $(tail -3 "$XS_WORK/off.err")"
		off_record "$cfg" "$line"
		scn_daemon_stop
		;;
	api-*)
		if [[ $cfg == *-cap1 ]]; then scn_daemon_start hpf preempt_cap=1; else scn_daemon_start hpf; fi
		scn_env_api
		XS_OFF_CMD=(env "${XS_ENV[@]}" "$XS_XS_LLM" "${api_args[@]}" --priority 0 --offline
			--seed "$2")
		[[ $cfg == api-alone ]] && XS_OFF_CMD=()
		pair "$cfg" env "${XS_ENV[@]}" "$XS_XS_LLM" "${api_args[@]}" --priority 10 \
			"${srv_args[@]}"
		scn_daemon_stop
		;;
	*) scn_die "unknown configuration $cfg" ;;
	esac
}

# off_rate CFG: offline device ms per second over all its rounds.
off_rate() {
	[[ -s $XS_WORK/$1.off ]] || { echo "-"; return; }
	awk '{ n += $1; s += $2 } END { if (s > 0) printf "%.1f\n", n / s; else print "-" }' \
		"$XS_WORK/$1.off"
}

# pct CFG KIND P: percentile P of CFG's .ttft or .tpot ("-" if none).
pct() {
	local v=''
	[[ -s $XS_WORK/$1.$2 ]] && v=$(scn_pct "$XS_WORK/$1.$2" "$3")
	echo "${v:--}"
}

scn_machine
echo "llm (hpf): server at $rate requests/s (Poisson; seed $seed, + 1 per round)," \
	"$per_round requests after $warmup warm-up per run (cap ${cap_s} s), $rounds round(s);" \
	"prefill 4 x 0.5..2 ms, 32 decode steps of 30 x 20 us (one CUDA graph each) + 50..150 us" \
	"host work; offline 2..20 ms kernels (or graphs of 10 x 2 ms), two in flight"
echo "build: $BUILD_DIR"

configs=(server-alone offline-alone offline-alone-graphs native native-graphs xsched-lv1
	xsched-lv1-graphs xsched-lv1-cap1 xsched-lv1-nofloor api-alone api-offline-alone api-lv3
	api-lv3-cap1)
if [[ -n $only ]]; then
	# The subset asked for, with the baselines its ratios need, in this order.
	want=",$only,"
	[[ $want == *,api-* ]] && want+="api-alone,api-offline-alone,"
	[[ $want == *-graphs* ]] && want+="offline-alone-graphs,"
	want+="server-alone,offline-alone,"
	sel=()
	for cfg in "${configs[@]}"; do [[ $want == *",$cfg,"* ]] && sel+=("$cfg"); done
	for cfg in ${only//,/ }; do
		[[ " ${configs[*]} " == *" $cfg "* ]] || scn_die "unknown configuration $cfg"
	done
	configs=("${sel[@]}")
fi
for cfg in "${configs[@]}"; do rm -f "$XS_WORK/$cfg".*; done
# Round r draws from seed + r - 1: every configuration of a round sees the
# same arrivals, and the rounds add different ones.
for ((r = 1; r <= rounds; r++)); do
	for cfg in "${configs[@]}"; do run_cfg "$cfg" $((seed + r - 1)); done
	echo "  round $r/$rounds done"
done

scn_tsv_header config requests unserved ttft_p50_us ttft_p99_us ttft_p50_norm ttft_p99_norm \
	tpot_p50_us tpot_p99_us tpot_p50_norm tpot_p99_norm off_ms_s off_norm
for cfg in "${configs[@]}"; do
	base=server-alone off_base=offline-alone
	case $cfg in
	*-graphs) off_base=offline-alone-graphs ;;
	api-*) base=api-alone off_base=api-offline-alone ;;
	esac
	n=0 un=-
	if [[ -f $XS_WORK/$cfg.unserved ]]; then
		n=$(wc -l <"$XS_WORK/$cfg.tpot")
		un=$(awk '{ s += $1 } END { print s + 0 }' "$XS_WORK/$cfg.unserved")
		cp "$XS_WORK/$cfg.ttft" "$XS_OUT/ttft_$cfg.txt"
		cp "$XS_WORK/$cfg.tpot" "$XS_OUT/tpot_$cfg.txt"
	fi
	f50=$(pct "$cfg" ttft 50) f99=$(pct "$cfg" ttft 99)
	p50=$(pct "$cfg" tpot 50) p99=$(pct "$cfg" tpot 99)
	off=$(off_rate "$cfg")
	scn_tsv_row "$cfg" "$n" "$un" "$f50" "$f99" "$(scn_div "$f50" "$(pct "$base" ttft 50)")" \
		"$(scn_div "$f99" "$(pct "$base" ttft 99)")" "$p50" "$p99" \
		"$(scn_div "$p50" "$(pct "$base" tpot 50)")" "$(scn_div "$p99" "$(pct "$base" tpot 99)")" \
		"$off" "$(scn_div "$off" "$(off_rate "$off_base")")"
done
echo
scn_table
echo
echo "server-alone busy serving $(awk '{ s += $1 } END { if (NR) printf "%.1f", s / NR }' \
	"$XS_WORK/server-alone.busy")% of its window (mean over runs; the rate sets it)"
echo "unserved > 0: the cap cut requests off; their TTFT (cap - arrival) makes the TTFT" \
	"figures lower bounds"
echo "results: $XS_OUT"
