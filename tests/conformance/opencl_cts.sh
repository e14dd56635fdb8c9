#!/usr/bin/env bash
# The Khronos OpenCL Conformance Test Suite (CTS) as a transparency test of
# the OpenCL shim: chosen CTS suites are built from the unmodified sources
# (a test input, never part of xsched: see the third-party directory's
# README.md) and each subtest runs natively and under the shim; every
# subtest's verdict under the shim must be the native one. Native is the
# reference, not an ideal: PoCL fails some subtests natively.
#
# Modes (each subtest is its own process, in a private working directory):
#   native   the ICD loader as linked (-lOpenCL)
#   guard    LD_PRELOAD=libxsched-opencl.so, XSCHED_SCHEDULER=local: the
#            in-process scheduler, the guardian (Lv2) on as by default
#   noguard  the same with XSCHED_OPENCL_LV2=0 (every queue at level 1)
#   daemon   the shim scheduled by a private xschedd started here
#            (XSCHED_SCHEDULER=global, its own sockets, default policy)
# Every mode gets POCL_MAX_WORK_GROUP_SIZE=512 (PoCL 3.1 crashes or hangs on
# some kernels with 1024-item groups) and one PoCL kernel cache private to
# the run (native runs first and fills it). Inherited XSCHED_* variables and
# LD_PRELOAD are dropped.
#
# Verdicts per subtest: pass, fail, skip (from the harness's results file,
# CL_CONFORMANCE_RESULTS_FILENAME; a "pass" with a failing exit status is a
# fail), crash (killed by a signal), hang (still running after the time-out:
# the stacks of all its threads go to its log, from gdb or else eu-stack,
# before its process group is killed; its output is line-buffered, so the
# log ends where it stopped). Each subtest gets -w (wimpy mode, which only
# some suites heed) and its suite's fixed arguments (suite_args below).
#
# Sources: the archives opencl-cts-*, opencl-headers-* and spirv-headers-*
# (.tar.gz) of the third-party directory, unpacked and built under the work
# directory (one build per CTS archive, reused; only the chosen suites are
# built, with cmake and the system's -lOpenCL, so a preloaded libOpenCL.so.1
# binds). test_compiler needs spirv-as (Debian spirv-tools) to build: it is
# left out, with a message, without it. The archive leaves out the CTS's
# spir directory, which its CMakeLists.txt still adds: the unpacked copy
# gets an empty one.
#
#   tests/conformance/opencl_cts.sh [--third-party DIR] [--work DIR]
#       [--build XSCHED_BUILD_DIR] [--shim PATH] [--xschedd PATH]
#       [--xschedctl PATH] [--set ci|full] [--suites "SPEC ..."]
#       [--modes "native guard noguard daemon"] [--timeout SECONDS]
#       [--jobs N] [--cts-build-type T] [--cts-build DIR] [--build-only]
#       [--verbose]
#
#   --third-party DIR  the archives (default $XSCHED_THIRD_PARTY, else
#                      ../shared/third_party beside the checkout)
#   --work DIR         sources, CTS build, results (default
#                      $XDG_CACHE_HOME/xsched-cts, ~/.cache/xsched-cts)
#   --build DIR        the xsched build holding src/shim/opencl/
#                      libxsched-opencl.so, src/daemon/xschedd and
#                      tools/xschedctl (default build/ of the checkout);
#                      --shim, --xschedd, --xschedctl name them one by one
#   --set NAME         ci (default): the suites and subtests that fit CI
#                      (ci_suites below); full: the 21 suites of
#                      all_suites, every subtest (hours)
#   --suites "SPEC..." instead of the set's: SPEC is SUITE or
#                      SUITE:PATTERN,... where a PATTERN (shell glob) picks
#                      subtests and -PATTERN drops some, e.g.
#                      "test_events:userevents test_api:-kernel_*"
#   --modes "M..."     the modes run (native always is; default all four)
#   --timeout S        per subtest (default 60 for ci, 600 for full: the
#                      slowest subtests take 5 minutes natively); under the
#                      shim at least three times the subtest's native time
#   --jobs N           build jobs (default: the CPUs)
#   --cts-build-type T the CTS's CMAKE_BUILD_TYPE (default Debug: -O0 -g
#                      compiles in about half the time of Release's -O3,
#                      and a hung subtest's stacks have lines)
#   --cts-build DIR    a CTS build tree, configured as this script does, to
#                      build the suites in instead of WORK/build/CTS-TYPE
#   --build-only       build the suites and list their subtests, run none
#   --verbose          a line per subtest run
#
# Output: per suite a table (per mode: pass, fail, skip, crash and hang
# counts, seconds), then every subtest whose verdict differs from native
# (suite, subtest, native verdict, mode's verdict, its log); the results
# directory (WORK/results/DATE-PID) holds results.tsv (suite, subtest, mode,
# verdict, seconds), summary.txt, table.md (the results as a Markdown table
# per suite, tests/conformance/cts_table.sh), and per subtest and mode a directory with
# its log, results file and the shim's XSCHED_OPENCL_STATS file. A shim mode
# in which no subtest of a suite scheduled a queue counts as a difference
# (the shim was not in the way), so does xschedd dying.
#
# Exit status: 0 no difference, 1 a difference (or a build failure),
# 2 bad usage (or a shim, xschedd or xschedctl not found), 77 skipped (no
# third-party archives, no build tools, or no OpenCL device natively).
#
# Measured on 2 cores shared with other work (PoCL 3.1, Debian 12): the 21
# suites build in about 2.5 minutes (Debug; Release about 7); the ci set
# (511 subtests) runs in about 25 minutes for the four modes when nothing
# hangs (native 8, guard 9 on a cold cache for the guardian's programs,
# noguard and daemon 4 each on a warm one; 23 minutes measured with PoCL's
# cache warm for native); each hang adds its time-out.
# The full set takes about 85 minutes natively, more than 3 hours for all
# four modes.
# Functions reached through trap look unreachable to shellcheck.
# shellcheck disable=SC2317
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

third_party=${XSCHED_THIRD_PARTY:-$repo/../shared/third_party}
work=${XDG_CACHE_HOME:-$HOME/.cache}/xsched-cts
xbuild=$repo/build
shim=''
xschedd=''
xschedctl=''
set_name=ci
suites=
modes="native guard noguard daemon"
limit=''
jobs=$(nproc 2>/dev/null || echo 2)
build_only=0
verbose=0
cts_build=''
cts_type=Debug

# usage [STATUS]: the usage lines of the header; exits STATUS (2: to
# stderr, after bad usage).
usage() {
	local st=${1:-2}
	sed -n '/^#   tests\/conformance\/opencl_cts.sh/,/^#   --verbose/p' "$0" |
		sed 's/^# \{0,1\}//' >&"$(((st == 0) ? 1 : 2))"
	exit "$st"
}

need_arg() {
	[[ $# -ge 2 && -n $2 ]] || { echo "$1 needs a value" >&2; usage; }
}

while [[ $# -gt 0 ]]; do
	case $1 in
	--third-party) need_arg "$@"; third_party=$2; shift ;;
	--work) need_arg "$@"; work=$2; shift ;;
	--build) need_arg "$@"; xbuild=$2; shift ;;
	--shim) need_arg "$@"; shim=$2; shift ;;
	--xschedd) need_arg "$@"; xschedd=$2; shift ;;
	--xschedctl) need_arg "$@"; xschedctl=$2; shift ;;
	--set) need_arg "$@"; set_name=$2; shift ;;
	--suites) need_arg "$@"; suites=$2; shift ;;
	--modes) need_arg "$@"; modes=$2; shift ;;
	--timeout) need_arg "$@"; limit=$2; shift ;;
	--jobs) need_arg "$@"; jobs=$2; shift ;;
	--cts-build) need_arg "$@"; cts_build=$(realpath "$2"); shift ;;
	--cts-build-type) need_arg "$@"; cts_type=$2; shift ;;
	--build-only) build_only=1 ;;
	--verbose | -v) verbose=1 ;;
	-h | --help) usage 0 ;;
	*) echo "unknown argument: $1" >&2; usage ;;
	esac
	shift
done

[[ -z $limit || $limit =~ ^[1-9][0-9]*$ ]] || { echo "--timeout: a number of seconds" >&2; usage; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "--jobs: a number" >&2; usage; }

# --- sets -----------------------------------------------------------------------

# The suites this script knows; "full" runs them all, every subtest.
all_suites="test_basic test_api test_events test_compiler test_buffers test_profiling
	test_atomics test_commonfns test_relationals test_geometrics test_select
	test_vectors test_printf test_allocations test_mem_host_flags
	test_non_uniform_work_group test_c11_atomics test_device_partition
	test_thread_dimensions test_svm test_integer_ops"

# The CI set: breadth first. Every suite above, with the subtests that
# exercise the API whole (test_api, test_events, test_compiler, test_svm,
# test_mem_host_flags, ...) and, where a suite repeats one check per data
# type or function, a sample; left out are the subtests that compile
# hundreds of kernels (minutes each on PoCL: test_basic's astype, async
# copies, hiloeo, imagedim_*, vload/vstore; test_relationals' shuffles;
# test_vectors' vec_align_*struct*) and test_compiler's four slowest
# multi-file builds (multiple_files and multiple_libraries stand for them).
# About 10 minutes natively on 2 cores, 25 for all four modes.
ci_suites="
	test_basic:-astype,-async_copy_*,-async_strided_*,-bufferreadwriterect,-explicit_s2v,-hiloeo,-imagedim_*,-prefetch,-vector_creation,-vector_swizzle,-vload_*,-vstore_*,-sizeof,-arrayimagecopy3d,-imagearraycopy3d,-fpmath,-kernel_memory_alignment_constant,-kernel_memory_alignment_private
	test_api:-kernel_arg_multi_setup_random,-kernel_attributes
	test_events
	test_compiler:-compile_and_link_status_options_log,-multi_file_libraries,-multiple_embedded_headers,-multiple_files_multiple_libraries
	test_buffers:-*_uchar,-*_ushort,-*_uint,-*_ulong,-*_short,-*_long,-*_float
	test_profiling:-*_uchar,-*_ushort,-*_uint,-*_ulong,-*_short,-*_long,-*_float
	test_atomics:atomic_add,atomic_cmpxchg,atomic_xchg,atomic_inc,atomic_add_index_bin
	test_commonfns:clamp,mix,smoothstep,step,sign
	test_relationals:relational_any,relational_isequal,relational_select_signed
	test_geometrics:geom_cross,geom_dot,geom_normalize
	test_select:select_int_int,select_float_int,select_ulong_ulong,select_uchar_char
	test_vectors:vec_align_array
	test_printf:-mixed_format_random,-double*,-float_limits,-length_specifier
	test_allocations
	test_mem_host_flags
	test_non_uniform_work_group
	test_c11_atomics:atomic_init,svm_atomic_init,atomic_fetch_add
	test_device_partition
	test_thread_dimensions
	test_svm
	test_integer_ops:quick_int_*,integer_mad24,integer_mul24,integer_rotate,popcount"

case $set_name in
ci) default_suites=$ci_suites default_limit=60 ;;
full) default_suites=$all_suites default_limit=600 ;;
*) echo "--set: ci or full" >&2; usage ;;
esac
suites=${suites:-$default_suites}
limit=${limit:-$default_limit}

# suite_args SUITE: the arguments before the subtest name, into $args.
# test_non_uniform_work_group's parser drops argv[1] (it rebuilds argv
# without argv[0]): a placeholder goes first. test_compiler reads its
# SPIR-V binaries from the working directory unless told.
suite_args() {
	args=(-w)
	case $1 in
	test_non_uniform_work_group) args=("$1" -w) ;;
	test_compiler) args=(-w --spirv-binaries-path "$(dirname "$bin")/spirv_bin") ;;
	test_allocations) args=(-w single 1 5%) ;;
	esac
}

for m in $modes; do
	case $m in
	native | guard | noguard | daemon) ;;
	*) echo "--modes: native guard noguard daemon" >&2; usage ;;
	esac
done
run_modes=native
for m in guard noguard daemon; do
	[[ " $modes " == *" $m "* ]] && run_modes+=" $m"
done

# --- inputs ---------------------------------------------------------------------

# latest GLOB: the last archive (by name) matching GLOB in the third-party
# directory; nothing if none.
latest() {
	local f last=
	for f in "$third_party"/$1; do
		[[ -f $f ]] && last=$f
	done
	printf '%s' "$last"
}

cts_tar=$(latest 'opencl-cts-*.tar.gz')
hdr_tar=$(latest 'opencl-headers-*.tar.gz')
spv_tar=$(latest 'spirv-headers-*.tar.gz')
if [[ -z $cts_tar || -z $hdr_tar || -z $spv_tar ]]; then
	echo "SKIP: the CTS, OpenCL-Headers or SPIRV-Headers archive is not in $third_party" \
		"(--third-party, XSCHED_THIRD_PARTY)"
	exit 77
fi
for t in cmake cc c++ python3 tar; do
	if ! command -v "$t" >/dev/null; then
		echo "SKIP: $t not found (the CTS build needs cmake, a C and C++ compiler, python3)"
		exit 77
	fi
done
generator="Unix Makefiles"
command -v ninja >/dev/null && generator=Ninja

if [[ $build_only -eq 0 && $run_modes != native ]]; then
	shim=${shim:-$xbuild/src/shim/opencl/libxsched-opencl.so}
	if [[ ! -f $shim ]]; then
		echo "shim $shim not found (build target xsched_opencl, or --build/--shim)" >&2
		exit 2
	fi
	shim=$(realpath "$shim")
fi
if [[ $build_only -eq 0 && " $run_modes " == *" daemon "* ]]; then
	xschedd=${xschedd:-$xbuild/src/daemon/xschedd}
	xschedctl=${xschedctl:-$xbuild/tools/xschedctl}
	for f in "$xschedd" "$xschedctl"; do
		if [[ ! -x $f ]]; then
			echo "$f not found (build targets xschedd xschedctl, or --build/--xschedd/--xschedctl)" >&2
			exit 2
		fi
	done
	xschedd=$(realpath "$xschedd") xschedctl=$(realpath "$xschedctl")
fi

mkdir -p "$work" || exit 1
work=$(realpath "$work")

# --- build ----------------------------------------------------------------------

# unpack TAR: its top directory under $work/src/NAME (NAME: the archive's
# name without .tar.gz), once; echoes that top directory.
unpack() {
	local name dest top
	name=$(basename "$1" .tar.gz)
	dest=$work/src/$name
	if [[ ! -f $dest/.unpacked ]]; then
		rm -rf "$dest"
		mkdir -p "$dest"
		tar -xzf "$1" -C "$dest" || return 1
		: >"$dest/.unpacked"
	fi
	top=$(find "$dest" -mindepth 1 -maxdepth 1 -type d | head -1)
	printf '%s' "$top"
}

# Only one run builds in a work directory at a time.
exec 9>"$work/.lock"
flock 9

if ! cts_src=$(unpack "$cts_tar") || ! hdr_src=$(unpack "$hdr_tar") ||
	! spv_src=$(unpack "$spv_tar"); then
	echo "FAIL: unpacking the archives of $third_party"
	exit 1
fi
if [[ ! -e $cts_src/test_conformance/spir ]] &&
	grep -q 'add_subdirectory( *spir *)' "$cts_src/test_conformance/CMakeLists.txt"; then
	mkdir -p "$cts_src/test_conformance/spir"
	echo "# left out of the archive; empty here" >"$cts_src/test_conformance/spir/CMakeLists.txt"
fi
cts_build=${cts_build:-$work/build/$(basename "$cts_tar" .tar.gz)-${cts_type,,}}
libdir=$(dirname "$(cc -print-file-name=libOpenCL.so)")
if [[ ! -f $cts_build/CMakeCache.txt ]]; then
	echo "configuring the CTS in $cts_build"
	if ! nice -n 10 cmake -S "$cts_src" -B "$cts_build" -G "$generator" \
		-DCMAKE_BUILD_TYPE="$cts_type" -DCL_INCLUDE_DIR="$hdr_src" \
		-DSPIRV_INCLUDE_DIR="$spv_src" -DCL_LIB_DIR="$libdir" \
		-DOPENCL_LIBRARIES=OpenCL >"$work/configure.log" 2>&1; then
		echo "FAIL: configuring the CTS (log: $work/configure.log)"
		tail -20 "$work/configure.log"
		rm -f "$cts_build/CMakeCache.txt"
		exit 1
	fi
fi

probe=$work/cl_probe
if [[ ! -x $probe || $here/cl_probe.c -nt $probe ]]; then
	cc -O2 -I"$hdr_src" -o "$probe" "$here/cl_probe.c" -lOpenCL ||
		{ echo "FAIL: building $here/cl_probe.c"; exit 1; }
fi

# spec_suite SPEC: the suite of a SPEC (before ':'), its CMake target
# (lower case: test_SVM is test_svm).
spec_suite() {
	local s=${1%%:*}
	printf '%s' "${s,,}"
}

build_failures=0
failed_targets=""
declare -A bin_of
targets=()
for spec in $suites; do
	s=$(spec_suite "$spec")
	[[ " ${targets[*]} " == *" $s "* ]] && continue
	if [[ $s == test_compiler ]] && ! command -v spirv-as >/dev/null; then
		echo "SKIP: test_compiler: spirv-as not found (Debian package spirv-tools)"
		continue
	fi
	targets+=("$s")
done
# All targets in one build (the CPUs kept busy); after a failure, one by one
# to tell which failed (what was built is not built again).
t0=$EPOCHREALTIME
if ! nice -n 10 cmake --build "$cts_build" -j "$jobs" --target "${targets[@]}" \
	>"$work/build.log" 2>&1; then
	for s in "${targets[@]}"; do
		if ! nice -n 10 cmake --build "$cts_build" -j "$jobs" --target "$s" \
			>"$work/build-$s.log" 2>&1; then
			echo "FAIL: building $s (log: $work/build-$s.log)"
			grep -m 10 -E 'error|Error' "$work/build-$s.log"
			build_failures=$((build_failures + 1))
			failed_targets+=" $s"
		fi
	done
fi
awk -v n="${#targets[@]}" -v a="$t0" -v b="$EPOCHREALTIME" -v d="$cts_build" \
	'BEGIN { printf "CTS: %d suites built in %.0f s (%s)\n", n, b - a, d }'
suite_list=
for s in "${targets[@]}"; do
	[[ " ${failed_targets:-} " == *" $s "* ]] && continue
	b=$(find "$cts_build/test_conformance" -name "$s" -type f -perm -u+x | head -1)
	if [[ -z $b ]]; then
		echo "FAIL: $s built but not found under $cts_build/test_conformance"
		build_failures=$((build_failures + 1))
		continue
	fi
	bin_of[$s]=$b
	suite_list+=" $s"
done
flock -u 9

# --- subtests -------------------------------------------------------------------

# subtests SUITE: the subtests the specs name for SUITE, one per line:
# those its binary lists (--list) that match a pattern (all without one) and
# no -pattern.
subtests() {
	local s=$1 spec pats=() drops=() p name keep all
	all=$("${bin_of[$s]}" --list 2>/dev/null </dev/null | sed -n 's/^\t\([^ \t]\+\)$/\1/p')
	for spec in $suites; do
		[[ $(spec_suite "$spec") == "$s" && $spec == *:* ]] || continue
		IFS=, read -r -a p <<<"${spec#*:}"
		for name in "${p[@]}"; do
			if [[ $name == -* ]]; then drops+=("${name#-}"); else pats+=("$name"); fi
		done
	done
	while read -r name; do
		[[ -n $name ]] || continue
		keep=1
		if [[ ${#pats[@]} -gt 0 ]]; then
			keep=0
			for p in "${pats[@]}"; do
				# shellcheck disable=SC2053
				[[ $name == $p ]] && keep=1
			done
		fi
		for p in "${drops[@]}"; do
			# shellcheck disable=SC2053
			[[ $name == $p ]] && keep=0
		done
		[[ $keep -eq 1 ]] && echo "$name"
	done <<<"$all"
}

if [[ $build_only -eq 1 ]]; then
	for s in $suite_list; do
		n=$(subtests "$s" | wc -l)
		echo "$s: $n subtests ($(subtests "$s" | tr '\n' ' '))"
	done
	[[ $build_failures -eq 0 ]] || exit 1
	exit 0
fi

if ! probe_out=$("$probe" 2>&1); then
	echo "SKIP: no OpenCL device natively ($probe_out)"
	exit 77
fi

# --- running --------------------------------------------------------------------

res=$work/results/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$res" || exit 1
sock_dir=
daemon_pid=
test_pid=

cleanup() {
	if [[ -n $test_pid ]]; then
		kill -KILL -- "-$test_pid" 2>/dev/null
	fi
	if [[ -n $daemon_pid ]]; then
		kill -TERM "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	[[ -n $sock_dir ]] && rm -rf "$sock_dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

for v in $(compgen -e); do
	[[ $v == XSCHED_* ]] && unset "$v"
done
unset LD_PRELOAD
export POCL_MAX_WORK_GROUP_SIZE=512 POCL_CACHE_DIR=$res/pocl-cache

problems=0

# start_daemon: a private xschedd (sockets in a short temporary directory:
# a socket path has at most 107 bytes), ready once xschedctl status
# answers (at most 10 s).
start_daemon() {
	local i
	[[ -n $sock_dir ]] || sock_dir=$(mktemp -d "${TMPDIR:-/tmp}/xs-cts.XXXXXX") || return 1
	printf '[daemon]\n[policy]\n' >"$sock_dir/xschedd.conf"
	"$xschedd" --config "$sock_dir/xschedd.conf" --socket "$sock_dir/c.sock" \
		--control-socket "$sock_dir/ctl.sock" >>"$res/xschedd.log" 2>&1 &
	daemon_pid=$!
	for ((i = 0; i < 200; i++)); do
		"$xschedctl" --control "$sock_dir/ctl.sock" status >/dev/null 2>&1 && return 0
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: xschedd did not start ($(tail -3 "$res/xschedd.log"))"
	problems=$((problems + 1))
	daemon_pid=
	return 1
}

# daemon_events: the queue events xschedd has handled so far.
daemon_events() {
	"$xschedctl" --control "$sock_dir/ctl.sock" metrics 2>/dev/null |
		awk '$1 == "xsched_events_total" { print $2; f = 1 } END { if (!f) print 0 }'
}

# stacks PID: the stacks of all of PID's threads, on stdout.
stacks() {
	echo "=== time-out: stacks of pid $1 ($(cat "/proc/$1/comm" 2>/dev/null)), all threads ==="
	if command -v gdb >/dev/null; then
		timeout 120 gdb -q -n -batch -p "$1" -ex 'set pagination off' \
			-ex 'thread apply all bt' 2>&1 </dev/null | grep -v '^\[New LWP'
	elif command -v eu-stack >/dev/null; then
		timeout 120 eu-stack -p "$1" 2>&1
	else
		echo "(neither gdb nor eu-stack installed)"
	fi
	echo "=== end of stacks ==="
}

# watchdog SECONDS PID DIR: after SECONDS, marks DIR timed out, appends
# PID's stacks to DIR/log and kills PID's process group. Killed (TERM) when
# PID ends first.
watchdog() {
	local s
	sleep "$1" &
	s=$!
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	wait "$s"
	: >"$3/timed-out"
	stacks "$2" >>"$3/log"
	kill -KILL -- "-$2" 2>/dev/null
}

# time_limit SUITE SUBTEST MODE: the subtest's time-out in MODE: $limit
# natively; under the shim also at least three times the native run's (a
# cold kernel cache for the guardian's programs), unless native hung.
time_limit() {
	local n=${native_s[$1/$2]:-0}
	if [[ $3 == native || ${native_v[$1/$2]:-} == hang ]]; then
		echo "$limit"
	else
		awk -v l="$limit" -v n="$n" 'BEGIN { n = int(3 * n + 1); print (n > l) ? n : l }'
	fi
}

# run_one SUITE SUBTEST MODE: runs it in $res/SUITE/MODE/SUBTEST (its
# working directory: log, result.json, stats); sets verdict and secs.
run_one() {
	local s=$1 t=$2 m=$3 d rc wd t0 v env_m=()
	d=$res/$s/$m/$t
	mkdir -p "$d"
	case $m in
	guard) env_m=(LD_PRELOAD="$shim" XSCHED_SCHEDULER=local) ;;
	noguard) env_m=(LD_PRELOAD="$shim" XSCHED_SCHEDULER=local XSCHED_OPENCL_LV2=0) ;;
	daemon) env_m=(LD_PRELOAD="$shim" XSCHED_SCHEDULER=global "XSCHED_SOCKET=$sock_dir/c.sock"
		"XSCHED_CONTROL_SOCKET=$sock_dir/ctl.sock") ;;
	esac
	[[ $m == native ]] || env_m+=("XSCHED_OPENCL_STATS=$d/stats")
	bin=${bin_of[$s]}
	suite_args "$s"
	t0=$EPOCHREALTIME
	# setsid: the test leads a process group of its own (PoCL's compiler
	# children included), which a time-out kills whole. stdbuf: its output
	# line by line, so that a killed test's log ends where it stopped.
	(cd "$d" && exec setsid env "${env_m[@]}" CL_CONFORMANCE_RESULTS_FILENAME="$d/result.json" \
		stdbuf -oL "$bin" "${args[@]}" "$t") >"$d/log" 2>&1 </dev/null &
	test_pid=$!
	watchdog "$(time_limit "$s" "$t" "$m")" "$test_pid" "$d" &
	wd=$!
	wait "$test_pid" 2>/dev/null  # not bash's "Killed" notice
	rc=$?
	kill -TERM "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	kill -KILL -- "-$test_pid" 2>/dev/null  # what it left running
	test_pid=
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "exit status $rc" >>"$d/log"
	if [[ -f $d/timed-out && $rc -eq 137 ]]; then
		verdict=hang
	elif ((rc > 128 && rc <= 192)); then
		verdict=crash
		echo "killed by signal $((rc - 128)) ($(kill -l "$((rc - 128))" 2>/dev/null))" >>"$d/log"
	else
		v=
		[[ -f $d/result.json ]] &&
			v=$(awk -F'"' -v n="$t" '$2 == n { print $4; exit }' "$d/result.json")
		case $v in
		pass) if [[ $rc -eq 0 ]]; then verdict=pass; else verdict=fail; fi ;;
		fail | skip) verdict=$v ;;
		*) if [[ $rc -eq 0 ]]; then verdict=pass; else verdict=fail; fi ;;
		esac
	fi
	printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$t" "$m" "$verdict" "$secs" >>"$res/results.tsv"
	[[ $verbose -eq 1 ]] && printf '  %-8s %-50s %-6s %6s s\n' "$m" "$t" "$verdict" "$secs"
	return 0
}

# queues_in DIR...: the number of DIRs whose stats file shows a queue.
queues_in() {
	local d n=0
	for d in "$@"; do
		[[ -f $d/stats ]] || continue
		awk '{ for (i = 1; i < NF; i++) if ($i == "queues") q += $(i + 1) }
		     END { exit !(q > 0) }' "$d/stats" && n=$((n + 1))
	done
	echo "$n"
}

echo "OpenCL: $probe_out"
echo "CTS: $(basename "$cts_tar" .tar.gz); modes: $run_modes; time-out ${limit} s per subtest" \
	"(under the shim at least 3 times native's)"
[[ -n $shim ]] && echo "shim: $shim"
echo "results: $res"
printf 'suite\tsubtest\tmode\tverdict\tseconds\n' >"$res/results.tsv"
: >"$res/differences.txt"
ln -sfn "$res" "$work/results/latest"

declare -A native_v native_s
total0=$EPOCHREALTIME
for s in $suite_list; do
	mapfile -t tests < <(subtests "$s")
	if [[ ${#tests[@]} -eq 0 ]]; then
		echo "$s: no subtest matches (--list gave none or the patterns match none)"
		problems=$((problems + 1))
		continue
	fi
	echo "== $s: ${#tests[@]} subtests"
	{
		echo "== $s: ${#tests[@]} subtests"
		printf '%-8s %5s %5s %5s %5s %5s %8s\n' mode pass fail skip crash hang seconds
	} >>"$res/summary.txt"
	for m in $run_modes; do
		declare -A count=([pass]=0 [fail]=0 [skip]=0 [crash]=0 [hang]=0)
		ev0=
		if [[ $m == daemon ]]; then
			if [[ -z $daemon_pid ]] || ! kill -0 "$daemon_pid" 2>/dev/null; then
				if [[ -n $daemon_pid ]]; then
					echo "FAIL: xschedd died (log: $res/xschedd.log); restarted"
					problems=$((problems + 1))
				fi
				start_daemon || continue
			fi
			ev0=$(daemon_events)
		fi
		m0=$EPOCHREALTIME
		for t in "${tests[@]}"; do
			run_one "$s" "$t" "$m"
			count[$verdict]=$((count[$verdict] + 1))
			if [[ $m == native ]]; then
				native_v[$s/$t]=$verdict
				native_s[$s/$t]=$secs
			elif [[ $verdict != "${native_v[$s/$t]}" ]]; then
				line=$(printf '%-28s %-44s %-6s %-8s %-6s %s' "$s" "$t" \
					"${native_v[$s/$t]}" "$m" "$verdict" "$res/$s/$m/$t/log")
				echo "DIFF: $line"
				echo "$line" >>"$res/differences.txt"
			fi
			if [[ $m == daemon ]] && ! kill -0 "$daemon_pid" 2>/dev/null; then
				echo "FAIL: xschedd died during $s $t (log: $res/xschedd.log)"
				problems=$((problems + 1))
				daemon_pid=
				start_daemon || break
			fi
		done
		m_secs=$(awk -v a="$m0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
		row=$(printf '%-8s %5d %5d %5d %5d %5d %8s' "$m" "${count[pass]}" "${count[fail]}" \
			"${count[skip]}" "${count[crash]}" "${count[hang]}" "$m_secs")
		echo "$row" >>"$res/summary.txt"
		extra=
		if [[ $m != native ]]; then
			nq=$(queues_in "$res/$s/$m"/*/)
			extra="; $nq of ${#tests[@]} scheduled a queue"
			if [[ $nq -eq 0 ]]; then
				echo "FAIL: $s $m: no subtest scheduled a queue (\$XSCHED_OPENCL_STATS): the shim was not in the way"
				problems=$((problems + 1))
			fi
		fi
		if [[ $m == daemon && -n $daemon_pid && -n $ev0 ]]; then
			extra+="; xschedd: $(($(daemon_events) - ev0)) queue events"
		fi
		echo "  $row$extra"
		unset count
	done
done
total=$(awk -v a="$total0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

echo
cat "$res/summary.txt"
ndiff=$(wc -l <"$res/differences.txt")
echo
echo "differences from native: $ndiff"
if [[ $ndiff -gt 0 ]]; then
	printf '%-28s %-44s %-6s %-8s %-6s %s\n' suite subtest native mode result log
	cat "$res/differences.txt"
fi
"$here/cts_table.sh" "$res/results.tsv" >"$res/table.md" 2>/dev/null
echo "run time: $total s; results: $res/results.tsv (as a table: $res/table.md)"
if [[ $ndiff -gt 0 || $problems -gt 0 || $build_failures -gt 0 ]]; then
	exit 1
fi
exit 0
