# shellcheck shell=bash
#
# lib.sh: what every evaluation scenario script (bench/scenarios/*.sh)
# shares. A scenario starts real processes (workloads natively on the
# simulated XPU's drivers, or unchanged under a shim, with a private xschedd
# running the policy it studies), alternates its configurations in rounds
# so that the drift of a noisy machine hits them all, and writes
#   ${XS_RESULTS:-$BUILD_DIR/results}/<scenario>/summary.tsv
#       a header line, then one row per configuration (tab-separated)
#   ${XS_RESULTS:-$BUILD_DIR/results}/<scenario>/lat_<config>.txt
#       raw task latencies in us, one per line (for CDF plots)
# and prints the same table with the machine it ran on.
#
# Conventions: `--smoke` runs the shortest configuration (seconds, for CI:
# it proves the scenario works, it asserts no timing); no option runs what
# the docs report (a few minutes at most). Scripts use `set -euo pipefail`,
# source this file, call scn_setup first, and exit non-zero when anything
# fails (scn_die), saying what is missing.
#
# Everything runs in a private world: a work directory (mktemp -d), a
# simulated-device directory in /dev/shm (XSCHED_SIM_DIR), one new simulated
# device per configuration run (scn_device_new), daemons on sockets in the
# work directory. scn_setup installs an EXIT trap that stops every process
# started through scn_spawn or scn_daemon_start and removes both directories.
#
# The functions (stable; add new ones rather than changing these):
#   scn_setup NAME            paths, output dir, private dirs, trap
#   scn_die MSG               print "NAME: MSG" to stderr, exit 1
#   scn_machine               the machine line (CPUs, model, load, kernel)
#   scn_device_new            a fresh private simulated device
#   scn_daemon_start POLICY [KEY=VAL...]   private xschedd; extra [policy] keys (daemon.KEY: [daemon])
#   scn_daemon_stop
#   scn_env_native / scn_env_shim [VAR=VAL...]   env prefixes for cu_load
#   scn_env_api [VAR=VAL...]  env for public-API programs (xs_load) + daemon
#   scn_spawn OUT ERR CMD...  start in the background (XS_PID), tracked
#   scn_finish PID WHAT       wait for PID; fail with its stderr if it failed
#   scn_stop PID WHAT         SIGTERM, then scn_finish
#   scn_field LINE KEY        value of KEY= in a result line
#   scn_pct FILE P            nearest-rank percentile of a file of numbers
#   scn_lat_stats FILE [D]    "n p50 p90 p99 max missed" of a latency file
#   scn_count_window TRACE T0 T1  commands of a flood trace ending in [T0,T1]
#   scn_div A B [FMT]         A/B with awk ("-" when B is 0 or empty)
#   scn_tsv_header COL...     start summary.tsv
#   scn_tsv_row VAL...        append a row to summary.tsv
#   scn_table                 print summary.tsv as an aligned table
#   scn_now_ms                CLOCK_REALTIME in ms (cu_load --start-at-ms)

XS_NAME=${XS_NAME:-scenario}
XS_PIDS=()
XS_DAEMON_PID=
XS_DEV_SEQ=0

scn_die() {
	echo "$XS_NAME: $*" >&2
	exit 1
}

# scn_setup NAME: BUILD_DIR (absolute; env, default "build" in the source
# tree), the programs (XS_CU_LOAD, XS_XS_LOAD, XS_SIM_CUDA_DIR, XS_SHIM,
# XS_XSCHEDD, XS_XSCHEDCTL; missing ones are empty, scn_need checks), XS_OUT
# (created), XS_WORK and XSCHED_SIM_DIR (private, removed at exit).
scn_setup() {
	local src
	XS_NAME=$1
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	BUILD_DIR=${BUILD_DIR:-$src/build}
	[[ -d $BUILD_DIR ]] || scn_die "no build directory $BUILD_DIR (set BUILD_DIR, or: cmake -S . -B build -G Ninja && cmake --build build)"
	BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
	XS_CU_LOAD=$BUILD_DIR/bench/cu_load
	XS_XS_LOAD=$BUILD_DIR/bench/xs_load
	XS_SIM_CUDA_DIR=$BUILD_DIR/src/sim/cuda
	XS_SHIM=$BUILD_DIR/src/shim/cuda/libxsched-cuda.so
	XS_XSCHEDD=$BUILD_DIR/src/daemon/xschedd
	XS_XSCHEDCTL=$BUILD_DIR/tools/xschedctl
	XS_OUT=${XS_RESULTS:-$BUILD_DIR/results}/$XS_NAME
	mkdir -p "$XS_OUT"
	XS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/xs-$XS_NAME.XXXXXX")
	if [[ -d /dev/shm && -w /dev/shm ]]; then
		XSCHED_SIM_DIR=$(mktemp -d "/dev/shm/xs-$XS_NAME.XXXXXX")
	else
		XSCHED_SIM_DIR=$XS_WORK/shm
		mkdir -p "$XSCHED_SIM_DIR"
	fi
	export XSCHED_SIM_DIR
	XS_OUT=$(cd "$XS_OUT" && pwd)
	# Stray files of a scenario land in its work directory, not the caller's.
	cd "$XS_WORK" || scn_die "cannot enter $XS_WORK"
	# Nothing of the caller's xsched settings leaks into a configuration.
	unset LD_PRELOAD XSCHED_DISABLE XSCHED_SCHEDULER XSCHED_PRIORITY XSCHED_SHARE \
		XSCHED_DEADLINE_US XSCHED_LAXITY_US XSCHED_SOCKET XSCHED_CONTROL_SOCKET \
		XSCHED_SIM_DEVICE XSCHED_SIM_ARBITRATION XSCHED_SIM_LEVEL XSCHED_SIM_LV2
	trap scn_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# scn_need FILE WHAT: fails with how to get FILE when it is missing.
scn_need() {
	[[ -e $1 ]] || scn_die "$2 not built: $1 is missing (cmake --build $BUILD_DIR)"
}

scn_cleanup() {
	local rc=$? p
	trap - EXIT
	for p in "${XS_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${XS_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	scn_daemon_stop
	[[ -n ${XSCHED_SIM_DIR:-} && -d $XSCHED_SIM_DIR ]] && rm -rf "$XSCHED_SIM_DIR"
	[[ -n ${XS_WORK:-} && -d $XS_WORK ]] && rm -rf "$XS_WORK"
	exit "$rc"
}

scn_machine() {
	local model load
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "machine: $(nproc) online CPUs (${model:-unknown}), load average $load, kernel $(uname -r)"
}

# scn_device_new: XSCHED_SIM_DEVICE = a name never used in this run (the
# device is created, round-robin with all three levels, by the first
# process that opens it); the previous one's file is removed.
scn_device_new() {
	[[ -n ${XSCHED_SIM_DEVICE:-} ]] && rm -f "$XSCHED_SIM_DIR/$XSCHED_SIM_DEVICE"
	XS_DEV_SEQ=$((XS_DEV_SEQ + 1))
	export XSCHED_SIM_DEVICE=xs-$XS_NAME-$$-$XS_DEV_SEQ
}

# scn_daemon_start POLICY [KEY=VALUE...]: a private xschedd with POLICY and
# the given extra [policy] keys (e.g. slice_ms=10; daemon.KEY=VALUE: a
# [daemon] key, e.g. daemon.realtime_priority=1), on sockets in the work
# directory (XS_SOCK, XS_CTL); returns once it answers `xschedctl status`.
scn_daemon_start() {
	local policy=$1 dir kv i
	shift
	scn_need "$XS_XSCHEDD" xschedd
	scn_need "$XS_XSCHEDCTL" xschedctl
	scn_daemon_stop
	dir=$(mktemp -d "$XS_WORK/xsd.XXXXXX")
	XS_SOCK=$dir/c.sock
	XS_CTL=$dir/ctl.sock
	{
		printf '[policy]\nname = %s\n' "$policy"
		for kv in "$@"; do
			[[ $kv == daemon.* ]] || printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"
		done
		printf '[daemon]\n'
		for kv in "$@"; do
			[[ $kv == daemon.* ]] && kv=${kv#daemon.} &&
				printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"
		done
		printf '[limits]\npriority_ceiling = 100\n'
	} >"$dir/xschedd.conf"
	"$XS_XSCHEDD" --config "$dir/xschedd.conf" --socket "$XS_SOCK" \
		--control-socket "$XS_CTL" 2>"$dir/xschedd.log" &
	XS_DAEMON_PID=$!
	XS_DAEMON_LOG=$dir/xschedd.log
	for ((i = 0; i < 500; i++)); do
		if [[ -S $XS_CTL ]] && XSCHED_CONTROL_SOCKET=$XS_CTL XSCHED_SOCKET=$XS_SOCK \
			"$XS_XSCHEDCTL" status >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$XS_DAEMON_PID" 2>/dev/null || break
		sleep 0.02
	done
	scn_die "xschedd (policy $policy) did not start: $(tail -3 "$XS_DAEMON_LOG")"
}

scn_daemon_stop() {
	[[ -n ${XS_DAEMON_PID:-} ]] || return 0
	kill -TERM "$XS_DAEMON_PID" 2>/dev/null || true
	wait "$XS_DAEMON_PID" 2>/dev/null || true
	XS_DAEMON_PID=
}

# Environment prefixes (for `env "${XS_ENV[@]}" cmd`), in XS_ENV:
# scn_env_native: cu_load on the simulated CUDA driver, no xsched at all.
scn_env_native() {
	XS_ENV=("LD_LIBRARY_PATH=$XS_SIM_CUDA_DIR" "XSCHED_SIM_DEVICE=$XSCHED_SIM_DEVICE" "$@")
}

# scn_env_shim [VAR=VAL...]: the same binary under the CUDA shim, scheduled
# by the private daemon; hints (XSCHED_PRIORITY=...) as arguments.
scn_env_shim() {
	scn_need "$XS_SHIM" "the CUDA shim"
	[[ -n ${XS_DAEMON_PID:-} ]] || scn_die "scn_env_shim before scn_daemon_start"
	XS_ENV=("LD_LIBRARY_PATH=$XS_SIM_CUDA_DIR" "LD_PRELOAD=$XS_SHIM"
		"XSCHED_CUDA_LIB=$XS_SIM_CUDA_DIR/libcuda.so.1" "XSCHED_SCHEDULER=global"
		"XSCHED_SOCKET=$XS_SOCK" "XSCHED_CONTROL_SOCKET=$XS_CTL"
		"XSCHED_SIM_DEVICE=$XSCHED_SIM_DEVICE" "$@")
}

# scn_env_api [VAR=VAL...]: a public-API program (xs_load) under the daemon.
scn_env_api() {
	[[ -n ${XS_DAEMON_PID:-} ]] || scn_die "scn_env_api before scn_daemon_start"
	XS_ENV=("XSCHED_SCHEDULER=global" "XSCHED_SOCKET=$XS_SOCK"
		"XSCHED_CONTROL_SOCKET=$XS_CTL" "XSCHED_SIM_DEVICE=$XSCHED_SIM_DEVICE" "$@")
}

# scn_spawn OUT ERR CMD...: CMD in the background, stdout to OUT, stderr to
# ERR; its pid in XS_PID, stopped by the EXIT trap if still running.
scn_spawn() {
	local out=$1 err=$2
	shift 2
	"$@" >"$out" 2>"$err" &
	XS_PID=$!
	XS_PIDS+=("$XS_PID")
}

# scn_finish PID WHAT [ERR]: waits for PID; a failure ends the scenario with
# the tail of ERR.
scn_finish() {
	local rc=0
	wait "$1" || rc=$?
	if ((rc != 0)); then
		scn_die "$2 failed (exit $rc)${3:+: $(tail -5 "$3")}"
	fi
}

# scn_stop PID WHAT [ERR]: SIGTERM (the workloads finish cleanly), wait.
scn_stop() {
	kill -TERM "$1" 2>/dev/null || true
	scn_finish "$@"
}

# scn_field LINE KEY: the value of KEY=value in a result line ("" if absent).
scn_field() {
	local f
	for f in $1; do
		[[ $f == "$2="* ]] && { echo "${f#*=}"; return 0; }
	done
	echo ""
}

# scn_pct FILE P: nearest-rank P-th percentile (0 < P <= 100) of the numbers
# in FILE, one per line, as bench_pct() computes it; empty if none.
scn_pct() {
	sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
		if (!NR) exit
		r = int(p / 100 * NR + 0.999999); if (r < 1) r = 1; if (r > NR) r = NR
		print v[r] }'
}

# scn_lat_stats FILE [DEADLINE]: "n p50 p90 p99 max missed" of the numbers
# in FILE (latencies, us), missed = how many exceed DEADLINE (0 without);
# "0 - - - - 0" for an empty or missing file.
scn_lat_stats() {
	[[ -s $1 ]] || { echo "0 - - - - 0"; return 0; }
	sort -g "$1" | awk -v d="${2:-0}" '{ v[NR] = $1; if (d > 0 && $1 > d) m++ }
		function pct(p,  r) { r = int(p / 100 * NR + 0.999999); if (r < 1) r = 1
			if (r > NR) r = NR; return v[r] }
		END { print NR, pct(50), pct(90), pct(99), v[NR], m + 0 }'
}

# scn_count_window TRACE T0 T1: commands of a flood's --trace-file whose
# group ended inside [T0, T1] (CLOCK_REALTIME ns). Precision: awk's doubles
# round such times to ~256 ns, nothing at the scale of a command.
scn_count_window() {
	awk -v a="$2" -v b="$3" '$1 >= a + 0 && $1 <= b + 0 { n += $2 } END { print n + 0 }' "$1"
}

# scn_div A B [FMT]: A/B printed with FMT (default %.3f); "-" when A or B is
# not a number ("-", empty) or B is 0.
scn_div() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.3f}" 'BEGIN {
		num = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"
		if (a !~ num || b !~ num || b + 0 == 0) print "-"; else printf f "\n", a / b }'
}

scn_tsv_header() {
	local IFS=$'\t'
	echo "$*" >"$XS_OUT/summary.tsv"
}

scn_tsv_row() {
	local IFS=$'\t'
	echo "$*" >>"$XS_OUT/summary.tsv"
}

# scn_table: summary.tsv, columns aligned, to stdout.
scn_table() {
	awk -F'\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
		if (NF > nf) nf = NF }
		END { for (r = 1; r <= NR; r++) { s = ""
			for (i = 1; i <= nf; i++) s = s sprintf(i == 1 ? "%-*s" : "  %*s", w[i], c[r, i])
			print s } }' "$XS_OUT/summary.tsv"
}

scn_now_ms() {
	date +%s%3N
}
