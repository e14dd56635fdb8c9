#!/usr/bin/env bash
#
# dnn_cl.sh: the latency shape of a real inference framework under the
# OpenCL shim with fixed priority (hpf) next to a flooding background, on
# PoCL. The foreground is OpenCV's DNN module on its OpenCL target running
# the small CNN of tests/opencl/cl_dnn.py (about 25 OpenCL commands per
# inference, with the framework's own host work between them), released at
# --load % of its standalone rate with +-50% jitter; the background is
# bench/cl_load flooding 0.5 ms loop kernels on every CPU, 8 in flight.
#
# Configurations, alternated in rounds:
#   standalone  the foreground alone, natively
#   native      both, straight into the ICD loader
#   xsched-nograce  both under the OpenCL shim + a private xschedd (hpf;
#               foreground XSCHED_PRIORITY=10, background 0), idle grace
#               off (idle_grace_us = 0)
#   xsched      the same with the idle grace (the default cap,
#               src/sched/sched_grace.c)
# Besides the per-inference latencies, the xsched rows count the
# background queue's suspensions (xsched_queue_preemptions_total, read from
# the daemon when the foreground starts measuring and when it ends) per
# inference: one per inference is the inference's arrival; what is above
# comes from the foreground going idle inside an inference (host gaps
# between its kernels), letting the background run in between.
#
# Output: table and $XS_OUT/summary.tsv
#   config tasks p50_us p99_us p50_norm p99_norm bg_susp_per_inf
# and lat_<config>.txt (latencies in us). Nothing is asserted.
#
# Usage: dnn_cl.sh [--smoke] [--tasks N] [--rounds N] [--load PCT]
# Environment: BUILD_DIR (default build), XS_RESULTS. Without PoCL, the
# shim, /usr/bin/python3 with OpenCV and onnx, it prints "skipped", exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dnn=$here/../../tests/opencl/cl_dnn.py
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

tasks=300 rounds=3 load=20 warmup=10 size=500
while (($#)); do
	case $1 in
	--smoke) tasks=10 rounds=1 warmup=3 ;;
	--tasks) tasks=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--load) load=$2; shift ;;
	*) sed -n 's/^# Usage: //p' "$0" >&2; exit 2 ;;
	esac
	shift
done
scn_setup dnn_cl
scn_cl_setup
scn_cl_require shim
py=/usr/bin/python3
if ! "$py" -c 'import cv2, onnx' 2>/dev/null; then
	echo "$XS_NAME: skipped: $py cannot import cv2 and onnx (python3-opencv python3-onnx)"
	exit 0
fi
export OPENCV_OPENCL_DEVICE=:CPU: OPENCV_DNN_OPENCL_ALLOW_ALL_DEVICES=1
per_round=$(((tasks + rounds - 1) / rounds))
configs=(standalone native xsched-nograce xsched)

# The background's suspensions so far (0 when the daemon does not list it).
bg_suspensions() {
	XSCHED_CONTROL_SOCKET=$XS_CTL "$XS_XSCHEDCTL" metrics 2>/dev/null |
		awk '/^xsched_queue_preemptions_total\{/ && /comm="cl_load"/ { s += $NF }
		     END { print s + 0 }'
}

# run_cfg CFG: one configuration run.
run_cfg() {
	local cfg=$1 bgpid='' fgpid s0=0 s1=0 i
	if [[ $cfg == xsched-nograce ]]; then
		scn_daemon_start hpf idle_grace_us=0
		scn_env_cl_shim XSCHED_PRIORITY=0
	elif [[ $cfg == xsched ]]; then
		scn_daemon_start hpf
		scn_env_cl_shim XSCHED_PRIORITY=0
	else
		scn_env_cl_native
	fi
	if [[ $cfg != standalone ]]; then
		scn_spawn "$XS_WORK/bg.out" "$XS_WORK/bg.err" env "${XS_ENV[@]}" "$XS_CL_LOAD" \
			--flood --iters "$iters" --width "$(nproc)" --cmds 1 --depth 8 --cmd-us "$size"
		bgpid=$XS_PID
		sleep 1
	fi
	if [[ $cfg == xsched* ]]; then scn_env_cl_shim XSCHED_PRIORITY=10; else scn_env_cl_native; fi
	scn_spawn "$XS_WORK/fg.out" "$XS_WORK/fg.err" env "${XS_ENV[@]}" "$py" "$dnn" \
		--model "$XS_WORK/m.onnx" bench "$per_round" "$period" "$warmup"
	fgpid=$XS_PID
	for ((i = 0; i < 6000; i++)); do
		grep -q '^measuring' "$XS_WORK/fg.out" 2>/dev/null && break
		kill -0 "$fgpid" 2>/dev/null || break
		sleep 0.01
	done
	[[ $cfg == xsched* ]] && s0=$(bg_suspensions)
	# The run's end: its summary line.
	while kill -0 "$fgpid" 2>/dev/null && ! grep -q '^p50_us' "$XS_WORK/fg.out"; do
		sleep 0.01
	done
	[[ $cfg == xsched* ]] && s1=$(bg_suspensions)
	scn_finish "$fgpid" "$cfg: foreground" "$XS_WORK/fg.err"
	awk '/^[0-9.]+$/' "$XS_WORK/fg.out" >>"$XS_WORK/$cfg.lat"
	[[ -n $bgpid ]] && scn_stop "$bgpid" "$cfg: background" "$XS_WORK/bg.err"
	if [[ $cfg == xsched* ]]; then
		echo "$((s1 - s0)) $per_round" >>"$XS_WORK/$cfg.susp"
		scn_daemon_stop
	fi
	return 0
}

scn_machine
iters=$(scn_cl_calibrate "$size" "$(nproc)")
scn_env_cl_native
env "${XS_ENV[@]}" "$py" "$dnn" --model "$XS_WORK/m.onnx" bench 30 0 5 >"$XS_WORK/cal.out" 2>"$XS_WORK/cal.err" ||
	scn_die "standalone inference time: cl_dnn.py failed"
task_us=$(awk '/^p50_us/ { print $2 }' "$XS_WORK/cal.out")
period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
echo "dnn_cl: OpenCV DNN (OpenCL target) on PoCL, standalone inference ${task_us} us," \
	"at ${load}% load -> period ${period} us +-50%; $tasks inferences per configuration," \
	"$rounds round(s); background: 0.5 ms loop kernels on $(nproc) work-items, 8 in flight"

for ((r = 1; r <= rounds; r++)); do
	for cfg in "${configs[@]}"; do run_cfg "$cfg"; done
	echo "  round $r/$rounds done"
done

std_p50=$(scn_pct "$XS_WORK/standalone.lat" 50)
std_p99=$(scn_pct "$XS_WORK/standalone.lat" 99)
scn_tsv_header config tasks p50_us p99_us p50_norm p99_norm bg_susp_per_inf
for cfg in "${configs[@]}"; do
	f=$XS_WORK/$cfg.lat
	cp "$f" "$XS_OUT/lat_$cfg.txt"
	p50=$(scn_pct "$f" 50) p99=$(scn_pct "$f" 99)
	susp=-
	[[ $cfg == xsched* ]] && susp=$(awk '{ s += $1; n += $2 } END { printf "%.2f", n ? s / n : 0 }' \
		"$XS_WORK/$cfg.susp")
	scn_tsv_row "$cfg" "$(wc -l <"$f")" "$p50" "$p99" "$(scn_div "$p50" "$std_p50")" \
		"$(scn_div "$p99" "$std_p99")" "$susp"
done
echo
scn_table
echo
echo "bg_susp_per_inf: background suspensions per inference (1 = one per arrival; above: host gaps)"
echo "results: $XS_OUT"
