# shellcheck shell=bash
#
# lib_extra.sh: what the scenarios priority_cl.sh, heterogeneous.sh and
# overhead.sh add to lib.sh. Sourced after lib.sh, used after scn_setup.
# Kept apart from lib.sh only because that file has another owner; the
# functions follow its conventions (XS_ENV arrays, scn_die, $XS_WORK), so
# they can move there as they are.
#
# OpenCL (bench/cl_load on PoCL, natively or under the OpenCL shim):
#   scn_cl_setup              XS_CL_LOAD, XS_CL_SHIM, PoCL's settings
#   scn_cl_require [shim]     exit 0 with "skipped: why" without OpenCL
#   scn_cl_calibrate US [W]   loop iterations for a US-long kernel on W items
#   scn_env_cl_native [V=X..] env prefix: cl_load straight into the loader
#   scn_env_cl_shim [V=X..]   env prefix: cl_load under the OpenCL shim and
#                             the private daemon (hints as arguments)
# A foreground next to a flooding background, results by configuration in
# $XS_WORK/<base>.lat (task latencies, us) and <base>.bg ("commands
# seconds" lines):
#   scn_run_pair BASE WHAT    runs XS_BG_CMD (none if empty; it must write
#                             --trace-file $XS_WORK/bg.trace) then XS_FG_CMD
#                             (--lat-file $XS_WORK/fg.lat) to its end
#   scn_bg_alone BASE WHAT    runs XS_BG_CMD (a flood with --duration-s)
#   scn_fg_summary BASE STD ALONE  "tasks p50 p90 p99 p50_norm p90_norm
#                             p99_norm bg_cmd_s bg_norm" of BASE against
#                             the standalone BASE STD and background ALONE
#   scn_fgbg_option OPT [VAL] the options such scenarios share

# PoCL 3.1 can crash or hang with 1024-item work-groups on some kernels
# (shared/FACTS.md); cl_load uses one-item groups, this is for safety.
scn_cl_setup() {
	XS_CL_LOAD=$BUILD_DIR/bench/cl_load
	XS_CL_SHIM=$BUILD_DIR/src/shim/opencl/libxsched-opencl.so
	export POCL_MAX_WORK_GROUP_SIZE=${POCL_MAX_WORK_GROUP_SIZE:-512}
}

# scn_cl_require [shim]: OpenCL-only scenarios pass (exit 0, one "skipped"
# line) on machines without an OpenCL device, so that CI without PoCL
# passes; with "shim", the OpenCL shim must be built too.
scn_cl_require() {
	local why=
	if [[ ! -x $XS_CL_LOAD ]]; then
		why="bench/cl_load not built (OpenCL headers and ICD loader missing at build time: ocl-icd-opencl-dev, opencl-headers)"
	elif ! "$XS_CL_LOAD" --calibrate --cmd-us 100 >/dev/null 2>"$XS_WORK/cl_probe.err"; then
		why="no usable OpenCL device (install pocl-opencl-icd): $(tail -1 "$XS_WORK/cl_probe.err")"
	elif [[ ${1:-} == shim && ! -e $XS_CL_SHIM ]]; then
		why="the OpenCL shim is not built ($XS_CL_SHIM)"
	fi
	if [[ -n $why ]]; then
		echo "$XS_NAME: skipped: $why"
		exit 0
	fi
}

# scn_cl_calibrate US [WIDTH]: the loop kernel's iteration count for an
# enqueue+finish round trip of about US microseconds on WIDTH work-items,
# measured now (run it while nothing else runs).
scn_cl_calibrate() {
	local line
	line=$("$XS_CL_LOAD" --calibrate --cmd-us "$1" --width "${2:-1}") ||
		scn_die "cl_load --calibrate failed"
	scn_field "$line" iters
}

# XS_ENV is read by the caller (lib.sh convention).
# shellcheck disable=SC2034
scn_env_cl_native() {
	XS_ENV=("POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE" "$@")
}

# shellcheck disable=SC2034
scn_env_cl_shim() {
	scn_need "$XS_CL_SHIM" "the OpenCL shim"
	[[ -n ${XS_DAEMON_PID:-} ]] || scn_die "scn_env_cl_shim before scn_daemon_start"
	XS_ENV=("POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE" "LD_PRELOAD=$XS_CL_SHIM"
		"XSCHED_SCHEDULER=global" "XSCHED_SOCKET=$XS_SOCK" "XSCHED_CONTROL_SOCKET=$XS_CTL"
		"$@")
}

scn_run_pair() {
	local base=$1 what=$2 bgpid='' line t0 t1 n
	if ((${#XS_BG_CMD[@]})); then
		rm -f "$XS_WORK/bg.trace"
		scn_spawn "$XS_WORK/bg.out" "$XS_WORK/bg.err" "${XS_BG_CMD[@]}"
		bgpid=$XS_PID
		# Let the background reach its flood before the foreground starts
		# (its window is measured, so this only keeps the foreground's
		# first tasks from meeting a background still setting up).
		sleep 1
	fi
	line=$("${XS_FG_CMD[@]}" 2>"$XS_WORK/fg.err") ||
		scn_die "$what: foreground failed: $(tail -3 "$XS_WORK/fg.err")"
	cat "$XS_WORK/fg.lat" >>"$XS_WORK/$base.lat"
	[[ -n $bgpid ]] || return 0
	scn_stop "$bgpid" "$what: background" "$XS_WORK/bg.err"
	t0=$(scn_field "$line" t0_ns) t1=$(scn_field "$line" t1_ns)
	n=$(scn_count_window "$XS_WORK/bg.trace" "$t0" "$t1")
	awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { print n, (b - a) / 1e9 }' >>"$XS_WORK/$base.bg"
}

scn_bg_alone() {
	local line
	line=$("${XS_BG_CMD[@]}" 2>"$XS_WORK/bg.err") ||
		scn_die "$2: background failed: $(tail -3 "$XS_WORK/bg.err")"
	echo "$(scn_field "$line" commands) $(scn_div "$(scn_field "$line" elapsed_ms)" 1000 %.6f)" \
		>>"$XS_WORK/$1.bg"
}

# Commands per second over every "commands seconds" line of BASE.bg.
scn__bg_rate() {
	[[ -s $XS_WORK/$1.bg ]] || { echo "-"; return; }
	awk '{ n += $1; s += $2 } END { if (s > 0) printf "%.1f\n", n / s; else print "-" }' \
		"$XS_WORK/$1.bg"
}

scn_fg_summary() {
	local n p50 p90 p99 s50 s90 s99 b a _
	read -r n p50 p90 p99 _ _ < <(scn_lat_stats "$XS_WORK/$1.lat")
	read -r _ s50 s90 s99 _ _ < <(scn_lat_stats "$XS_WORK/$2.lat")
	b=$(scn__bg_rate "$1") a=$(scn__bg_rate "$3")
	echo "$n $p50 $p90 $p99 $(scn_div "$p50" "$s50") $(scn_div "$p90" "$s90")" \
		"$(scn_div "$p99" "$s99") $b $(scn_div "$b" "$a")"
}

# scn_period LOAD CU_LOAD_ARGS...: the standalone task time of cu_load with
# these arguments (back to back, natively, on a new device) into task_us,
# and the period that makes it LOAD percent of the time into period.
# shellcheck disable=SC2034
scn_period() {
	local load=$1 line
	shift
	scn_device_new
	scn_env_native
	line=$(env "${XS_ENV[@]}" "$XS_CU_LOAD" "$@" --tasks 30 --warmup 5 --period-us 0) ||
		scn_die "calibration failed"
	task_us=$(scn_field "$line" p50_us)
	period=$(awk -v t="$task_us" -v l="$load" 'BEGIN { printf "%d\n", t * 100 / l }')
	echo "standalone task ${task_us} us -> period ${period} us"
}

# scn_rounds ROUNDS CONFIG...: the caller's run_cfg for each configuration,
# ROUNDS times over.
scn_rounds() {
	local rounds=$1 r cfg
	shift
	for ((r = 1; r <= rounds; r++)); do
		for cfg in "$@"; do run_cfg "$cfg"; done
		echo "  round $r/$rounds done"
	done
}

# scn_fgbg_rows LABEL BASE CONFIG...: a table row per configuration of a
# foreground/background scenario (scn_fg_summary against standalone and
# bg-alone), its exact latencies copied to the results, and the background
# throughput over that of configuration BASE as the last but one column.
scn_fgbg_rows() {
	local label=$1 base=$2 cfg n p50 p90 p99 n50 n90 n99 bg bgn src bg_base _
	shift 2
	read -r _ _ _ _ _ _ _ bg_base _ < <(scn_fg_summary "$base" standalone bg-alone)
	for cfg in "$@"; do
		read -r n p50 p90 p99 n50 n90 n99 bg bgn < <(scn_fg_summary "$cfg" standalone bg-alone)
		src=-
		if [[ -s $XS_WORK/$cfg.lat ]]; then
			cp "$XS_WORK/$cfg.lat" "$XS_OUT/lat_$cfg.txt"
			src=exact
		fi
		[[ $cfg == standalone ]] && bg=- bgn=-
		[[ $cfg == bg-alone ]] && bgn=1.000
		scn_tsv_row "$label" "$cfg" "$n" "$p50" "$p90" "$p99" "$n50" "$n90" "$n99" \
			"$bg" "$bgn" "$(scn_div "$bg" "$bg_base")" "$src"
	done
}

# scn_fgbg_option OPT [VAL]: one of the options every foreground/background
# scenario takes, into the caller's variables: --tasks N (tasks), --warmup N
# (warmup), --rounds N (rounds), --cmds N (cmds), --cmd-us US (size),
# --load PCT (load), --bg-width N (bg_width), --bg-seconds S (bg_s). Sets
# XS_NARGS to the words it used (2), or 0 when OPT is none of them.
# shellcheck disable=SC2034
scn_fgbg_option() {
	XS_NARGS=2
	[[ $# -ge 2 ]] || { XS_NARGS=0; return 0; }
	case $1 in
	--tasks) tasks=$2 ;;
	--warmup) warmup=$2 ;;
	--rounds) rounds=$2 ;;
	--cmds) cmds=$2 ;;
	--cmd-us) size=$2 ;;
	--load) load=$2 ;;
	--bg-width) bg_width=$2 ;;
	--bg-seconds) bg_s=$2 ;;
	*) XS_NARGS=0 ;;
	esac
}
