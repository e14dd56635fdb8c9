#!/usr/bin/env bash
#
# deadline.sh: deadlines on the simulated XPU, after the paper's video
# conference case (a fake-background filter at 25 fps next to speech-to-text
# on one accelerator). Two unmodified CUDA processes (bench/cu_load):
#   frame  a frame every --frame-period-us (40 ms: 25 fps) of --frame-cmds
#          kernels of --frame-cmd-us (5 x 2 ms), deadline = its period;
#   batch  a batch job every --batch-period-us (50 ms) of --batch-cmds
#          kernels of --batch-cmd-us (8 x 4 ms), deadline = its period
#          (it must complete before the next one is due);
# released strictly periodically (no jitter); the periods differ, so their
# phases sweep through every overlap. The device is ~89% busy: tight, but
# feasible for a scheduler that knows the deadlines. The simulated device
# arbitrates first come first served (--arb fcfs, the default: the paper's
# case ran on an NPU whose hardware queues are FCFS), so natively a frame
# waits for the whole batch job queued before it; --arb rr for round-robin
# per command.
#
# Configurations, alternated in rounds (machine drift hits all):
#   native      no xsched: the device's round-robin per command
#   hpf-frame   xschedd hpf, frame priority 10, batch 0
#   hpf-batch   xschedd hpf, batch priority 10, frame 0
#   laxity      xschedd laxity: batch priority 10, frame priority 0 with
#               XSCHED_LAXITY_US (--laxity-us, default frame period minus
#               twice its work): the frame waits for the batch only as long
#               as it can afford, then runs first
#   edf         xschedd edf: XSCHED_DEADLINE_US = each one's period (the
#               policy's deadline is relative to when the queue became
#               ready, i.e. the release, since both go idle between jobs)
#
# Output: table and $XS_OUT/summary.tsv with columns
#   config frames frame_p50_us frame_p99_us frame_max_us frame_missed
#   frame_missed_pct batch_jobs batch_p50_us batch_p99_us batch_max_us
#   batch_missed batch_missed_pct
# and lat_<config>-frame.txt, lat_<config>-batch.txt (latencies, us, from
# release to completion).
#
# Usage: deadline.sh [--smoke] [--frames N] [--rounds N] [--configs LIST]
#                    [--frame-period-us P] [--frame-cmds N] [--frame-cmd-us T]
#                    [--batch-period-us P] [--batch-cmds N] [--batch-cmd-us T]
#                    [--laxity-us L] [--arb fcfs|rr]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

frames=750 rounds=2 configs=native,hpf-frame,hpf-batch,laxity,edf
arb=fcfs f_period=40000 f_cmds=5 f_cmd=2000 b_period=50000 b_cmds=8 b_cmd=4000 laxity='' warm=10
usage() {
	sed -n 's/^# Usage: //p; s/^#                    / /p' "$0" | head -4 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) frames=25 rounds=1 warm=3 ;;
	--frames) frames=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--configs) configs=$2; shift ;;
	--frame-period-us) f_period=$2; shift ;;
	--frame-cmds) f_cmds=$2; shift ;;
	--frame-cmd-us) f_cmd=$2; shift ;;
	--batch-period-us) b_period=$2; shift ;;
	--batch-cmds) b_cmds=$2; shift ;;
	--batch-cmd-us) b_cmd=$2; shift ;;
	--laxity-us) laxity=$2; shift ;;
	--arb) arb=$2; shift ;;
	*) usage ;;
	esac
	shift
done
scn_setup deadline
[[ $arb == fcfs || $arb == rr ]] || scn_die "--arb: fcfs or rr"
# Read by the process that creates each new device (scn_device_new).
export XSCHED_SIM_ARBITRATION=$arb
scn_need "$XS_CU_LOAD" "bench/cu_load"
[[ $configs == native ]] || scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"
laxity=${laxity:-$((f_period - 2 * f_cmds * f_cmd))}
per_round=$(((frames + rounds - 1) / rounds))

run() {
	local cfg=$1 fenv=() benv=() bpid line
	scn_device_new
	case $cfg in
	native) ;;
	hpf-frame) fenv=(XSCHED_PRIORITY=10) benv=(XSCHED_PRIORITY=0) ;;
	hpf-batch) fenv=(XSCHED_PRIORITY=0) benv=(XSCHED_PRIORITY=10) ;;
	laxity) fenv=(XSCHED_PRIORITY=0 "XSCHED_LAXITY_US=$laxity") benv=(XSCHED_PRIORITY=10) ;;
	edf) fenv=("XSCHED_DEADLINE_US=$f_period") benv=("XSCHED_DEADLINE_US=$b_period") ;;
	*) scn_die "unknown configuration $cfg" ;;
	esac
	if [[ $cfg == native ]]; then
		scn_env_native
	else
		scn_daemon_start "${cfg%%-*}"
		scn_env_shim "${benv[@]}"
	fi
	# The batch runs until the frames are done (SIGTERM), at most far more jobs.
	scn_spawn "$XS_WORK/b.out" "$XS_WORK/b.err" env "${XS_ENV[@]}" "$XS_CU_LOAD" \
		--cmds "$b_cmds" --cmd-us "$b_cmd" --period-us "$b_period" --jitter-pct 0 \
		--deadline-us "$b_period" --warmup "$warm" --tasks 1000000 \
		--lat-file "$XS_WORK/b.lat"
	bpid=$XS_PID
	if [[ $cfg == native ]]; then scn_env_native; else scn_env_shim "${fenv[@]}"; fi
	line=$(env "${XS_ENV[@]}" "$XS_CU_LOAD" --cmds "$f_cmds" --cmd-us "$f_cmd" \
		--period-us "$f_period" --jitter-pct 0 --deadline-us "$f_period" --warmup "$warm" \
		--tasks "$per_round" --lat-file "$XS_WORK/f.lat" 2>"$XS_WORK/f.err") ||
		scn_die "$cfg: frame process failed: $(tail -3 "$XS_WORK/f.err")"
	scn_stop "$bpid" "$cfg: batch process" "$XS_WORK/b.err"
	[[ -n $line ]] || scn_die "$cfg: no result from the frame process"
	cat "$XS_WORK/f.lat" >>"$XS_WORK/$cfg-frame.lat"
	cat "$XS_WORK/b.lat" >>"$XS_WORK/$cfg-batch.lat"
	scn_daemon_stop
}

# stats FILE DEADLINE_US: "n p50 p99 max missed missed_pct".
stats() {
	local n p50 p99 max missed
	read -r n p50 _ p99 max missed < <(scn_lat_stats "$1" "$2")
	echo "$n $p50 $p99 $max $missed $(scn_div $((100 * missed)) "$n" %.2f)"
}

scn_machine
echo "deadline: frames of $f_cmds x $f_cmd us every $f_period us (deadline = period)," \
	"batch jobs of $b_cmds x $b_cmd us every $b_period us (deadline = period);" \
	"$frames frames per configuration in $rounds round(s); frame laxity $laxity us;" \
	"device arbitration $arb"
echo "build: $BUILD_DIR"
IFS=, read -r -a cfgs <<<"$configs"
for ((r = 1; r <= rounds; r++)); do
	for cfg in "${cfgs[@]}"; do run "$cfg"; done
	echo "  round $r/$rounds done"
done

scn_tsv_header config frames frame_p50_us frame_p99_us frame_max_us frame_missed \
	frame_missed_pct batch_jobs batch_p50_us batch_p99_us batch_max_us batch_missed \
	batch_missed_pct
for cfg in "${cfgs[@]}"; do
	cp "$XS_WORK/$cfg-frame.lat" "$XS_OUT/lat_$cfg-frame.txt"
	cp "$XS_WORK/$cfg-batch.lat" "$XS_OUT/lat_$cfg-batch.txt"
	# shellcheck disable=SC2046
	scn_tsv_row "$cfg" $(stats "$XS_WORK/$cfg-frame.lat" "$f_period") \
		$(stats "$XS_WORK/$cfg-batch.lat" "$b_period")
done
echo
scn_table
echo
echo "a frame or batch job is missed when its latency exceeds its period (its deadline)"
echo "results: $XS_OUT"
