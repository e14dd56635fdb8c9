#!/usr/bin/env bash
#
# overhead.sh: what xsched costs a single task that nothing competes with,
# the design's overhead goals (DESIGN.md section 4): <= 1% throughput at
# default settings for commands of 100 us and more, <= 250 ns of CPU per
# intercepted submit on the application's thread, and xsched's threads
# plus the daemon <= 3% of one core at 10k commands per second.
#
# Three parts, each native against xsched in the same run:
#  1. throughput: bench/cu_load flooding the simulated XPU (groups of
#     --group kernels, two groups in flight) with commands of each --sizes
#     T, natively and under the CUDA shim with a private xschedd (hpf, the
#     only queue); commands per second over the flood after a warm-up,
#     configurations alternated in rounds.
#  2. per-launch CPU: build/bench/bench_cuda_launch (CUDA shim on the
#     simulated driver) and build/bench/bench_cl_enqueue (OpenCL shim on
#     PoCL, when there is an OpenCL device), their "summary:" figures: the
#     extra CPU per call on the application's thread (median shim minus
#     median native) for one-window tasks (16 calls), long tasks (256) and,
#     for OpenCL, calls that ask for an event.
#  3. CPU at ~10k commands/s, natively and under xsched, --cpu-rounds
#     alternated windows of --cpu-seconds, two workloads of cu_load:
#       flood   flooding 100 us commands (the device busy all the time:
#               10k/s; the queue never goes idle, so the daemon sees almost
#               no events: the XQueue's own cost);
#       tasks   one 50 us command per task, a task every 100 us (no
#               jitter): up to 10k tasks/s, each an idle->ready->idle
#               round trip through the agent and the daemon (the worst
#               case for the scheduler's CPU);
#     CPU time over the window from /proc/<pid>/task/*/schedstat (time on
#     CPU in ns, per thread; threads started in the window count from 0,
#     threads that ended in it are lost, which a steady workload does not
#     do): the process, its main thread, the simulated device's executor thread (the
#     busiest other thread: it busy-spins every command), the rest of the
#     process ("other": under xsched the agent and the XQueue's launch
#     worker, which take no names of their own; natively nothing, the
#     baseline) and xschedd. xsched's own cost = other (xsched) - other
#     (native) + daemon, also scaled to exactly 10k commands/s; the main
#     thread's difference (the shim's per-launch work, part 2) is shown for
#     context.
#
# Output: table and $XS_OUT/summary.tsv with columns
#   part param config value unit vs_native
# rows: throughput / <T>us / native|xsched / commands per s / ratio;
#       launch_cpu / cuda-16|cuda-256|opencl-16|opencl-256|opencl-events /
#         xsched / extra ns per call / -;
#       cpu / flood|tasks / native-process|native-main|native-executor|
#         native-other|xsched-process|xsched-main|xsched-executor|
#         xsched-other|daemon|xsched-cost|xsched-cost-at-10k / % of one
#         core / -; cpu / flood|tasks / rate-native|rate-xsched / commands
#         per s / ratio (means over the rounds)
# and runs.tsv (every throughput run: size config round cmd_s) and the
# benchmarks' full output (launch_cuda.txt, launch_cl.txt). No latency
# files: no task latencies here.
#
# Usage: overhead.sh [--smoke] [--sizes US[,US...]] [--seconds S]
#                    [--rounds N] [--group N] [--cpu-seconds S]
#                    [--cpu-rounds N] [--no-launch]
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results).
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

sizes=10,100,1000 secs=3 rounds=3 group=16 cpu_s=5 cpu_rounds=2 launch=1 smoke=0
warm_s=0.5
usage() {
	sed -n 's/^# Usage: //p; s/^#                    / /p' "$0" | head -3 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) secs=1 rounds=1 cpu_s=1.5 cpu_rounds=1 smoke=1 ;;
	--sizes) sizes=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--group) group=$2; shift ;;
	--cpu-seconds) cpu_s=$2; shift ;;
	--cpu-rounds) cpu_rounds=$2; shift ;;
	--no-launch) launch=0 ;;
	*) usage ;;
	esac
	shift
done
scn_setup overhead
scn_cl_setup
scn_need "$XS_CU_LOAD" "bench/cu_load"
scn_need "$XS_SHIM" "the CUDA shim (XSCHED_WITH_CUDA)"

# flood_env MODE: XS_ENV for a lone cu_load (MODE native, or xsched: a
# fresh private daemon must be running).
flood_env() {
	if [[ $1 == xsched ]]; then scn_env_shim; else scn_env_native; fi
}

# run_flood SIZE MODE ROUND: one throughput run; appends to runs.tsv.
run_flood() {
	local size=$1 mode=$2 r=$3 line t0 t1 n
	scn_device_new
	[[ $mode == xsched ]] && scn_daemon_start hpf
	flood_env "$mode"
	line=$(env "${XS_ENV[@]}" "$XS_CU_LOAD" --flood --cmds "$group" --cmd-us "$size" \
		--duration-s "$(awk -v a="$secs" -v b="$warm_s" 'BEGIN { print a + b }')" \
		--trace-file "$XS_WORK/fl.trace" 2>"$XS_WORK/fl.err") ||
		scn_die "throughput $size us $mode: cu_load failed: $(tail -3 "$XS_WORK/fl.err")"
	[[ $mode == xsched ]] && scn_daemon_stop
	t0=$(scn_field "$line" t0_ns) t1=$(scn_field "$line" t1_ns)
	t0=$(awk -v a="$t0" -v w="$warm_s" 'BEGIN { printf "%.0f\n", a + w * 1e9 }')
	n=$(scn_count_window "$XS_WORK/fl.trace" "$t0" "$t1")
	printf '%s\t%s\t%s\t%s\n' "$size" "$mode" "$r" \
		"$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", n * 1e9 / (b - a) }')" \
		>>"$XS_OUT/runs.tsv"
}

# cpu_ns PID: time on CPU (ns) of every thread of PID, "tid ns" lines.
cpu_ns() {
	local t
	for t in /proc/"$1"/task/*; do
		read -r ns _ <"$t/schedstat" 2>/dev/null && echo "${t##*/} $ns"
	done
	return 0
}

# snap PID [DAEMON]: "wall_ns daemon_ns" then PID's "tid ns" lines.
snap() {
	echo "$(date +%s%N) $([[ -n ${2:-} ]] && cpu_ns "$2" | awk '{ s += $2 } END { print s + 0 }' || echo 0)"
	cpu_ns "$1"
}

# run_cpu WORKLOAD MODE: one window; appends "workload mode process main
# executor other daemon rate" (% of one core, commands/s) to cpu.tsv.
run_cpu() {
	local wl=$1 mode=$2 pid dpid='' a b args line rate
	scn_device_new
	if [[ $mode == xsched ]]; then
		scn_daemon_start hpf
		dpid=$XS_DAEMON_PID
	fi
	flood_env "$mode"
	if [[ $wl == flood ]]; then
		args=(--flood --cmds "$group" --cmd-us 100)
	else
		args=(--cmds 1 --cmd-us 50 --period-us 100 --jitter-pct 0 --tasks 100000000)
	fi
	scn_spawn "$XS_WORK/cpu.out" "$XS_WORK/cpu.err" env "${XS_ENV[@]}" "$XS_CU_LOAD" "${args[@]}"
	pid=$XS_PID
	sleep 1
	# env execs cu_load in place: PID is cu_load itself.
	kill -0 "$pid" 2>/dev/null || scn_die "cpu $wl $mode: cu_load exited: $(tail -3 "$XS_WORK/cpu.err")"
	snap "$pid" "$dpid" >"$XS_WORK/cpu.a"
	sleep "$cpu_s"
	snap "$pid" "$dpid" >"$XS_WORK/cpu.b"
	scn_stop "$pid" "cpu $wl $mode: cu_load" "$XS_WORK/cpu.err"
	[[ $mode == xsched ]] && scn_daemon_stop
	# The rate over the whole run (its result line), close enough to the
	# window's for a steady workload.
	line=$(cat "$XS_WORK/cpu.out")
	rate=$(awk -v n="$(scn_field "$line" commands)" -v ms="$(scn_field "$line" elapsed_ms)" \
		'BEGIN { if (ms > 0) printf "%.1f\n", n * 1000 / ms; else print 0 }')
	# Per-thread deltas; the executor is the busiest thread other than main.
	a=$(head -1 "$XS_WORK/cpu.a") b=$(head -1 "$XS_WORK/cpu.b")
	awk -v a="$a" -v b="$b" -v pid="$pid" -v wl="$wl" -v mode="$mode" -v rate="$rate" '
		FNR == 1 { next }
		NR == FNR { t0[$1] = $2; next }
		{
			d = $2 - ($1 in t0 ? t0[$1] : 0); proc += d
			if ($1 == pid) main = d; else if (d > ex) ex = d
		}
		END {
			split(a, x, " "); split(b, y, " ")
			pc = 100 / (y[1] - x[1])
			printf "%s %s %.2f %.2f %.2f %.2f %.2f %s\n", wl, mode, proc * pc, main * pc,
				ex * pc, (proc - main - ex) * pc, (y[2] - x[2]) * pc, rate
		}' "$XS_WORK/cpu.a" "$XS_WORK/cpu.b" >>"$XS_WORK/cpu.tsv"
}

# cpu_mean WORKLOAD MODE: the mean of its rounds' fields 3..8.
cpu_mean() {
	awk -v w="$1" -v m="$2" '$1 == w && $2 == m { n++; for (i = 3; i <= 8; i++) s[i] += $i }
		END { for (i = 3; i <= 8; i++) printf "%.2f ", n ? s[i] / n : 0; print "" }' \
		"$XS_WORK/cpu.tsv"
}

scn_machine
echo "overhead: a single task, native vs xsched (CUDA shim + xschedd hpf) in the same run;" \
	"throughput of cu_load floods (groups of $group, 2 in flight), ${secs} s after" \
	"${warm_s} s warm-up, sizes $sizes us, $rounds round(s)"

# 1. throughput
printf 'size_us\tconfig\tround\tcmd_s\n' >"$XS_OUT/runs.tsv"
for ((r = 1; r <= rounds; r++)); do
	for size in ${sizes//,/ }; do
		run_flood "$size" native "$r"
		run_flood "$size" xsched "$r"
	done
	echo "  throughput: round $r/$rounds done"
done

# 3. CPU at ~10k commands/s (before the launch benchmarks, which fork many
# children)
: >"$XS_WORK/cpu.tsv"
for ((r = 1; r <= cpu_rounds; r++)); do
	for wl in flood tasks; do
		run_cpu "$wl" native
		run_cpu "$wl" xsched
	done
	echo "  cpu: round $r/$cpu_rounds done"
done

# 2. per-launch CPU
launch_rows=()
if ((launch)); then
	q=()
	((smoke)) && q=(--quick)
	scn_need "$BUILD_DIR/bench/bench_cuda_launch" "bench/bench_cuda_launch"
	"$BUILD_DIR/bench/bench_cuda_launch" "${q[@]}" >"$XS_OUT/launch_cuda.txt" 2>&1 ||
		scn_die "bench_cuda_launch failed: $(tail -3 "$XS_OUT/launch_cuda.txt")"
	read -r c16 c256 < <(sed -n 's/^summary: extra app-thread CPU per launch \([-0-9.]*\) ns in 16-launch tasks .*, \([-0-9.]*\) ns in 256-launch.*/\1 \2/p' \
		"$XS_OUT/launch_cuda.txt")
	[[ -n ${c256:-} ]] || scn_die "bench_cuda_launch: no summary line (launch_cuda.txt)"
	launch_rows+=("cuda-16 $c16" "cuda-256 $c256")
	if [[ -x $BUILD_DIR/bench/bench_cl_enqueue && -x $XS_CL_LOAD ]] &&
		"$XS_CL_LOAD" --calibrate --cmd-us 100 >/dev/null 2>&1; then
		"$BUILD_DIR/bench/bench_cl_enqueue" "${q[@]}" >"$XS_OUT/launch_cl.txt" 2>&1 ||
			scn_die "bench_cl_enqueue failed: $(tail -3 "$XS_OUT/launch_cl.txt")"
		read -r o16 o256 oev < <(sed -n 's/^summary: extra app-thread CPU per enqueue \([-0-9.]*\) ns in 16-enqueue tasks, \([-0-9.]*\) ns in 256-enqueue tasks, \([-0-9.]*\) ns with events.*/\1 \2 \3/p' \
			"$XS_OUT/launch_cl.txt")
		[[ -n ${oev:-} ]] || scn_die "bench_cl_enqueue: no summary line (launch_cl.txt)"
		launch_rows+=("opencl-16 $o16" "opencl-256 $o256" "opencl-events $oev")
	else
		echo "  launch: OpenCL part skipped (no bench_cl_enqueue or no OpenCL device)"
	fi
	echo "  launch: done"
fi

scn_tsv_header part param config value unit vs_native
for size in ${sizes//,/ }; do
	nat=$(awk -F'\t' -v s="$size" '$1 == s && $2 == "native" { n++; t += $4 }
		END { if (n) printf "%.1f\n", t / n }' "$XS_OUT/runs.tsv")
	xs=$(awk -F'\t' -v s="$size" '$1 == s && $2 == "xsched" { n++; t += $4 }
		END { if (n) printf "%.1f\n", t / n }' "$XS_OUT/runs.tsv")
	scn_tsv_row throughput "${size}us" native "$nat" cmd/s 1.000
	scn_tsv_row throughput "${size}us" xsched "$xs" cmd/s "$(scn_div "$xs" "$nat" %.4f)"
done
for row in "${launch_rows[@]}"; do
	read -r p v <<<"$row"
	scn_tsv_row launch_cpu "$p" xsched "$v" ns/call -
done
for wl in flood tasks; do
	read -r np nm ne no _ nr < <(cpu_mean "$wl" native)
	read -r xp xm xe xo xd xr < <(cpu_mean "$wl" xsched)
	cost=$(awk -v o="$xo" -v n="$no" -v d="$xd" 'BEGIN { printf "%.2f\n", o - n + d }')
	at10k=$(awk -v c="$cost" -v r="$xr" 'BEGIN { if (r > 0) printf "%.2f\n", c * 10000 / r; else print "-" }')
	for row in "native-process $np" "native-main $nm" "native-executor $ne" \
		"native-other $no" "xsched-process $xp" "xsched-main $xm" "xsched-executor $xe" \
		"xsched-other $xo" "daemon $xd" "xsched-cost $cost" "xsched-cost-at-10k $at10k"; do
		read -r p v <<<"$row"
		scn_tsv_row cpu "$wl" "$p" "$v" "%core" -
	done
	scn_tsv_row cpu "$wl" rate-native "$nr" cmd/s -
	scn_tsv_row cpu "$wl" rate-xsched "$xr" cmd/s "$(scn_div "$xr" "$nr" %.4f)"
done
echo
scn_table
echo
echo "goals: throughput xsched/native >= 0.99 for T >= 100 us; launch_cpu <= 250 ns/call;" \
	"xsched-cost-at-10k <= 3 %core (other threads' difference + daemon, from /proc schedstat)"
echo "results: $XS_OUT"
