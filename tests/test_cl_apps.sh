#!/usr/bin/env bash
# Transparency of the OpenCL shim against real applications nobody here
# wrote: each one runs under LD_PRELOAD=libxsched-opencl.so and natively,
# and their normalised outputs (timings, bandwidths and other volatile
# figures removed; pass/fail verdicts, result checks and device listings
# kept) must be identical. The shim's $XSCHED_OPENCL_STATS file proves it
# scheduled the application's queues (a missing file = not intercepted).
#
# Applications (Debian packages; each absent one is skipped):
#   clinfo             the full device listing (creates no queue: no
#                      interception check)
#   clpeak             kernel launch latency and transfer bandwidth tests
#                      (20,000 launches; blocking and non-blocking
#                      reads/writes, map/unmap)
#   clblast-utils      five tuners on small problems and few configurations;
#                      each configuration is checked against a reference
#                      ("results match")
#   python3-pyopencl + python-pyopencl-doc
#                      pyopencl's own pytest suites (from the doc package's
#                      examples), a subset of a few seconds
#   hashcat            an MD5 mask attack (-a 3 ?l?l?l?l?l, 11.9 million
#                      candidates) on four hashes; the cracked list must be
#                      the same (and all four found)
#   python3-opencv + python3-onnx
#                      an inference framework: OpenCV's DNN module on its
#                      OpenCL target runs a small CNN written as an ONNX
#                      file from fixed weights (tests/opencl/cl_dnn.py);
#                      every output tensor must be the same bit for bit,
#                      and its layers must have gone through the shim's
#                      queues (at least 10 commands per inference)
#   ffmpeg             a video filter graph on OpenCL (avgblur, unsharp,
#                      convolution and sobel filters on 20 frames of a test
#                      pattern): every frame's MD5 must be the same
#   python3-simtk + libopenmm-plugins
#                      OpenMM's own installation test: forces of a test
#                      system on its platforms; Reference vs OpenCL must
#                      be the same (the CPU platform's figures vary from
#                      run to run: dropped)
#   piglit             piglit's OpenCL tests (tests/opencl/piglit_each.sh):
#                      the API tests, and cl-program-tester on its
#                      hand-written kernel tests (122 programs); each test's
#                      result and exit status must be the same
#
# The shim runs first, on a cold PoCL kernel cache private to this run, so
# PoCL's compiler and linker child processes run with the shim preloaded;
# the native run then reuses the cache (hashcat's and OpenCV's own caches
# too, which live under the run's private XDG directories). PoCL 3.1 crashes or hangs on some
# kernels with 1024-item work-groups: POCL_MAX_WORK_GROUP_SIZE=512 for both.
#
#   tests/test_cl_apps.sh --shim PATH [--daemon XSCHEDD [--ctl XSCHEDCTL]]
#                         [--no-stats-check] [--apps "clinfo clpeak ..."]
#                         [--keep]
# With --daemon, the shimmed runs are scheduled by a private xschedd
# (global mode, its default policy; --ctl then checks that the daemon saw
# queue events); without, by the in-process scheduler (XSCHED_SCHEDULER=local).
# --no-stats-check (or XSCHED_CL_APPS_STATS=0) turns the interception check
# into a warning. Environment defaults: XSCHED_CL_SHIM, XSCHED_CL_APPS.
# Exits 0 (all passed), 1 (a failure) or 77 (skipped: no application or no
# OpenCL platform could run natively).
# Functions reached through trap and "$norm" look unreachable to shellcheck.
# shellcheck disable=SC2317
set -u

shim=${XSCHED_CL_SHIM:-}
daemon=
ctl=
check_stats=${XSCHED_CL_APPS_STATS:-1}
apps=${XSCHED_CL_APPS:-"clinfo clpeak clblast pyopencl hashcat dnn ffmpeg openmm piglit"}
keep=0
py=/usr/bin/python3     # Debian's: a pyenv python3 first on PATH lacks pyopencl
pyopencl_examples=/usr/share/doc/python-pyopencl-doc/examples
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	sed -n '/^#   tests\/test_cl_apps.sh/,/^#                         \[--keep\]/p' "$0" >&2
	exit 2
}

while [[ $# -gt 0 ]]; do
	case $1 in
	--shim) shim=${2:-}; shift ;;
	--daemon) daemon=${2:-}; shift ;;
	--ctl) ctl=${2:-}; shift ;;
	--no-stats-check) check_stats=0 ;;
	--apps) apps=${2:-}; shift ;;
	--keep) keep=1 ;;
	*) usage ;;
	esac
	shift
done
[[ -n $shim ]] || usage
if [[ ! -f $shim ]]; then
	echo "FAIL: shim $shim not found"
	exit 1
fi
shim=$(realpath "$shim")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xs-cl-apps.XXXXXX") || exit 1
daemon_pid=
cleanup() {
	if [[ -n $daemon_pid ]]; then
		kill -TERM "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	if [[ $keep -eq 1 ]]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT        # ctest's timeout: still stop the daemon

# Same environment for both runs: private caches (PoCL's kernels, pyopencl's
# binaries), nothing inherited that changes the shim or the scheduler.
unset LD_PRELOAD XSCHED_DISABLE XSCHED_PRIORITY XSCHED_SHARE XSCHED_DEADLINE_US \
	XSCHED_LAXITY_US XSCHED_OPENCL_STATS XSCHED_SOCKET XSCHED_CONTROL_SOCKET \
	XSCHED_SCHEDULER XSCHED_POLICY
export POCL_MAX_WORK_GROUP_SIZE=512
export XDG_CACHE_HOME=$tmp/cache XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config
export POCL_CACHE_DIR=$tmp/cache/pocl
export PYOPENCL_NO_CACHE=1 PYTHONDONTWRITEBYTECODE=1
shim_env=(XSCHED_SCHEDULER=local)

failures=0
passed=0
queued=0    # passed applications under which the shim scheduled a queue
skipped=0
want_cmds=0     # the next check's least number of scheduled commands (then reset)

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

skip() {
	echo "SKIP: $*"
	skipped=$((skipped + 1))
}

start_daemon() {
	local i
	mkdir -p "$tmp/xsd"
	printf '[daemon]\n[policy]\n' >"$tmp/xsd/xschedd.conf"
	"$daemon" --config "$tmp/xsd/xschedd.conf" --socket "$tmp/xsd/c.sock" \
		--control-socket "$tmp/xsd/ctl.sock" 2>"$tmp/xsd/xschedd.log" &
	daemon_pid=$!
	# Bounded wait for the listening socket; the shim's agent is fail-open
	# and reconnects anyway, this only makes the first process count.
	for ((i = 0; i < 500; i++)); do
		[[ -S $tmp/xsd/c.sock ]] && break
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.02
	done
	if [[ ! -S $tmp/xsd/c.sock ]]; then
		fail "xschedd did not start ($(tail -3 "$tmp/xsd/xschedd.log"))"
		daemon_pid=
		return 1
	fi
	shim_env=(XSCHED_SCHEDULER=global "XSCHED_SOCKET=$tmp/xsd/c.sock")
	echo "scheduler: private xschedd (pid $daemon_pid)"
}

# run MODE DIR OUT TIMEOUT CMD...: runs CMD in DIR, natively or under the
# shim (MODE native|shim), stdout+stderr to OUT; returns its exit status.
run() {
	local mode=$1 dir=$2 out=$3 limit=$4
	shift 4
	mkdir -p "$dir"
	if [[ $mode == shim ]]; then
		(cd "$dir" && env LD_PRELOAD="$shim" XSCHED_OPENCL_STATS="$dir/stats" \
			"${shim_env[@]}" timeout -k 5 "$limit" "$@") >"$out" 2>&1 </dev/null
	else
		(cd "$dir" && timeout -k 5 "$limit" "$@") >"$out" 2>&1 </dev/null
	fi
}

# Sums the shim's stats lines ("pid P queues Q commands C proxies X") of
# every process of a run into "Q C"; nothing when there is no file.
stats_sum() {
	[[ -f $1 ]] || return 0
	awk '{ for (i = 1; i < NF; i++) { if ($i == "queues") q += $(i + 1);
	       if ($i == "commands") c += $(i + 1) } } END { print q + 0, c + 0 }' "$1"
}

# Indents a quoted output; also ends its last line (pytest's dots have none).
indent() {
	awk '{ print "    " $0 }'
}

describe_rc() {
	case $1 in
	0) echo "ok" ;;
	124 | 137) echo "timed out" ;;
	*) if (($1 > 128)); then echo "killed by signal $(($1 - 128))"; else echo "exit $1"; fi ;;
	esac
}

# check CASE NORMALISER QUEUES TIMEOUT CMD...: one application run, shim
# then native; NORMALISER filters stdin to the comparable output; QUEUES is
# 1 when the application creates command queues (interception check).
check() {
	local name=$1 norm=$2 want_queues=$3 limit=$4
	shift 4
	local d=$tmp/run/${name//\//_} t0 t1 t2 rc_s rc_n st min_cmds=$want_cmds
	want_cmds=0
	t0=$(date +%s.%N)
	run shim "$d/shim" "$d/shim.out" "$limit" "$@"
	rc_s=$?
	t1=$(date +%s.%N)
	run native "$d/native" "$d/native.out" "$limit" "$@"
	rc_n=$?
	t2=$(date +%s.%N)
	local times
	times=$(awk -v a="$t0" -v b="$t1" -v c="$t2" \
		'BEGIN { printf "shim %.1fs, native %.1fs", b - a, c - b }')
	if [[ $rc_n -ne 0 ]]; then
		skip "$name fails natively ($(describe_rc "$rc_n"); shim: $(describe_rc "$rc_s"))"
		tail -5 "$d/native.out" | indent
		return
	fi
	if [[ $rc_s -ne 0 ]]; then
		fail "$name under the shim: $(describe_rc "$rc_s") (natively ok) [$times]"
		tail -15 "$d/shim.out" | indent
		return
	fi
	"$norm" <"$d/native.out" >"$d/native.norm"
	"$norm" <"$d/shim.out" >"$d/shim.norm"
	if [[ ! -s $d/native.norm ]]; then
		fail "$name: nothing comparable in the native output"
		return
	fi
	if ! diff -u "$d/native.norm" "$d/shim.norm" >"$d/diff"; then
		fail "$name: output differs under the shim (- native, + shim) [$times]"
		head -40 "$d/diff" | indent
		return
	fi
	st=$(stats_sum "$d/shim/stats")
	if [[ $want_queues -eq 1 ]]; then
		if [[ -z $st || ${st%% *} -eq 0 ]]; then
			if [[ $check_stats -eq 1 ]]; then
				fail "$name: not intercepted (no queue in \$XSCHED_OPENCL_STATS) [$times]"
				return
			fi
			echo "WARN: $name: not intercepted (no queue in \$XSCHED_OPENCL_STATS)"
		fi
	fi
	local q c what
	read -r q c <<<"${st:-0 0}"
	if ((c < min_cmds)); then
		fail "$name: the shim scheduled $c commands, fewer than $min_cmds [$times]"
		return
	fi
	what="the shim scheduled $q queues, $c commands"
	[[ $want_queues -eq 1 ]] || what="no queue expected"
	echo "PASS: $name ($(wc -l <"$d/native.norm") lines compared; $what) [$times]"
	passed=$((passed + 1))
	((q > 0)) && queued=$((queued + 1))
}

# --- normalisers ---------------------------------------------------------------

# clinfo: PoCL sizes global memory (and what derives from it) from the
# memory available when the device is created.
norm_clinfo() {
	grep -Ev 'Global memory size|Max memory allocation|Max size for 1D images from buffer'
}

# clpeak: figures become N; the clock can be read from cpufreq.
norm_clpeak() {
	grep -v 'Clock frequency' | sed -E 's/[0-9]+(\.[0-9]+)?/N/g'
}

# CLBlast tuners: per configuration its id, parameters, work sizes and the
# reference check; compile times, run times and bandwidths dropped. The
# summary's best parameters depend on timings: dropped too.
norm_clblast() {
	sed 's/\x1b\[[0-9;]*m//g' | awk -F'|' '
		/^\| *(ref|[0-9]+) *\|/ {
			for (i = 1; i <= NF; i++) gsub(/^ +| +$/, "", $i)
			if ($3 == "-" || $3 ~ /^[0-9]+$/)
				print $2, $3, $4, $5, $6, $10
		}
		/^\* Found [0-9]+ configuration/ || /^\* Exploring/ { print }'
}

# pytest -rA: the summary's verdict line per test (with the skip and xfail
# reasons), sorted. (-v only shows, after a crash, which test was running.)
norm_pytest() {
	grep -E '^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) ' | sort
}

# hashcat's cracked list (hash:plain), sorted: the run prints it.
norm_sorted() {
	sort
}

# cl_dnn.py: every inference's class and output digest, OpenCL's use.
norm_dnn() {
	grep -E '^(infer|target|all) '
}

# ffmpeg -f framemd5: one line per frame with its MD5.
norm_framemd5() {
	grep -E '^[0-9]+, '
}

# OpenMM's testInstallation: the platforms, whether each computed its
# forces, and the differences that do not involve the CPU platform (the
# compiler's warning counts depend on the kernel cache: dropped).
norm_openmm() {
	grep -v ' generated\.$' |
		grep -E '^[0-9]+ [A-Za-z]+ |Successfully computed|rror|^Reference vs\. OpenCL'
}

# piglit_each.sh: each test's name, result lines and exit status.
norm_piglit() {
	grep -E '^(TEST |PIGLIT: |exit )'
}

# --- applications ---------------------------------------------------------------

have() { command -v "$1" >/dev/null 2>&1; }

app_clinfo() {
	if ! have clinfo; then
		skip "clinfo not installed (package clinfo)"
		return
	fi
	check clinfo norm_clinfo 0 60 clinfo
}

app_clpeak() {
	if ! have clpeak; then
		skip "clpeak not installed (package clpeak)"
		return
	fi
	check clpeak norm_clpeak 1 120 clpeak --kernel-latency --transfer-bandwidth
}

app_clblast() {
	local t
	if ! have clblast_tuner_xaxpy; then
		skip "CLBlast tuners not installed (package clblast-utils)"
		return
	fi
	# Small problems, few configurations (-fraction F explores 1/F of them,
	# a fixed pseudo-random subset). Larger n crash natively on PoCL with
	# xaxpy (heap corruption at n < 65536), xgemv and xgemm are too slow.
	for t in "xaxpy -n 65536 -fraction 8" "xdot -n 65536" "invert" \
		"transpose_fast -m 256 -n 256 -fraction 8" "xger -m 256 -n 256 -fraction 8"; do
		# shellcheck disable=SC2086
		check "clblast/${t%% *}" norm_clblast 1 120 clblast_tuner_$t -runs 1
	done
}

app_pyopencl() {
	local src=$tmp/pyopencl f
	if ! "$py" -c 'import pyopencl' 2>/dev/null; then
		skip "pyopencl not importable by $py (package python3-pyopencl)"
		return
	fi
	if [[ ! -f $pyopencl_examples/test_wrapper.py ]]; then
		skip "pyopencl's tests not found (package python-pyopencl-doc)"
		return
	fi
	if ! "$py" -c 'import pytest' 2>/dev/null; then
		skip "pytest not importable by $py (package python3-pytest)"
		return
	fi
	# The suites want their directory writable-free: a private copy (with
	# the header test_wrapper includes).
	mkdir -p "$src"
	for f in test_wrapper.py test_clrandom.py test_enqueue_copy.py \
		test_arrays_in_structs.py test_array.py empty-header.h; do
		cp "$pyopencl_examples/$f" "$src/" 2>/dev/null
	done
	check pyopencl/wrapper+clrandom+copy norm_pytest 1 180 \
		"$py" -m pytest -p no:cacheprovider -v -rA "$src/test_wrapper.py" \
		"$src/test_clrandom.py" "$src/test_enqueue_copy.py" "$src/test_arrays_in_structs.py"
	# Arrays on in-order and out-of-order queues, events, async transfers.
	check pyopencl/array norm_pytest 1 180 \
		"$py" -m pytest -p no:cacheprovider -v -rA "$src/test_array.py" -k \
		'outoforderqueue or event_management or get_async or map_to_host or test_copy or multi_put'
}

app_hashcat() {
	local w mode
	if ! have hashcat; then
		skip "hashcat not installed (package hashcat)"
		return
	fi
	# The hashes of four five-letter words, in each run's directory.
	for mode in shim native; do
		mkdir -p "$tmp/run/hashcat/$mode"
		for w in apple mango qwert zebra; do
			printf '%s' "$w" | md5sum | cut -d' ' -f1
		done >"$tmp/run/hashcat/$mode/h.txt"
	done
	# shellcheck disable=SC2016  # expanded by the inner shell
	check hashcat norm_sorted 1 300 bash -c \
		'hashcat -m 0 -a 3 -O -D 1 --quiet --potfile-disable --restore-disable \
			--logfile-disable --session t -o out.txt --outfile-format=1,2 h.txt \
			"?l?l?l?l?l" && test "$(wc -l <out.txt)" -eq 4 && cat out.txt'
}

app_dnn() {
	if ! "$py" -c 'import cv2, onnx' 2>/dev/null; then
		skip "OpenCV or onnx not importable by $py (packages python3-opencv python3-onnx)"
		return
	fi
	# PoCL is a CPU device, which OpenCV's OpenCL and DNN paths skip
	# unless told; OpenCV's own program cache off, so that both runs build
	# the same way.
	want_cmds=80
	check dnn/opencv norm_dnn 1 300 env OPENCV_OPENCL_DEVICE=:CPU: \
		OPENCV_DNN_OPENCL_ALLOW_ALL_DEVICES=1 OPENCV_OPENCL_CACHE_ENABLE=0 \
		"$py" "$here/opencl/cl_dnn.py" run 8
}

app_ffmpeg() {
	local f
	if ! have ffmpeg || ! ffmpeg -hide_banner -filters 2>/dev/null | grep -q avgblur_opencl; then
		skip "ffmpeg with OpenCL filters not installed (package ffmpeg)"
		return
	fi
	f='format=yuv420p,hwupload,avgblur_opencl=5,unsharp_opencl'
	f+=',convolution_opencl=0 1 0 1 -4 1 0 1 0:0 1 0 1 -4 1 0 1 0:0 1 0 1 -4 1 0 1 0'
	f+=':0 1 0 1 -4 1 0 1 0,sobel_opencl,hwdownload,format=yuv420p'
	want_cmds=20
	check ffmpeg norm_framemd5 1 120 ffmpeg -hide_banner -nostdin -loglevel error -nostats \
		-init_hw_device opencl=ocl:0.0 -filter_hw_device ocl \
		-f lavfi -i testsrc=size=320x240:rate=10 -frames:v 20 -vf "$f" -f framemd5 -
}

app_openmm() {
	if ! "$py" -c 'import openmm' 2>/dev/null; then
		skip "OpenMM not importable by $py (packages python3-simtk libopenmm-plugins)"
		return
	fi
	check openmm norm_openmm 1 300 "$py" -m openmm.testInstallation
}

app_piglit() {
	local d dir=
	for d in /usr/lib/*/piglit; do
		[[ -x $d/bin/cl-program-tester ]] && dir=$d
	done
	if [[ -z $dir ]]; then
		skip "piglit not installed (package piglit)"
		return
	fi
	check piglit/api norm_piglit 1 300 "$here/opencl/piglit_each.sh" "$dir" api
	check piglit/program norm_piglit 1 900 "$here/opencl/piglit_each.sh" "$dir" program
}

# --- main -------------------------------------------------------------------------

echo "shim: $shim"
if have clinfo && [[ $(clinfo -l 2>/dev/null | grep -c 'Platform') -eq 0 ]]; then
	echo "SKIP: no OpenCL platform (install pocl-opencl-icd)"
	exit 77
fi
if [[ -n $daemon ]]; then
	start_daemon || exit 1
fi
for app in $apps; do
	case $app in
	clinfo | clpeak | clblast | pyopencl | hashcat | dnn | ffmpeg | openmm | piglit) "app_$app" ;;
	*) fail "unknown application $app" ;;
	esac
done

if [[ -n $daemon_pid ]]; then
	if ! kill -0 "$daemon_pid" 2>/dev/null; then
		fail "xschedd died during the run (log: $(tail -3 "$tmp/xsd/xschedd.log"))"
		daemon_pid=
	elif [[ -n $ctl && $queued -gt 0 ]]; then
		# Only applications that made a queue (not clinfo) tell the daemon.
		ev=$("$ctl" --control "$tmp/xsd/ctl.sock" metrics 2>/dev/null |
			awk '$1 == "xsched_events_total" { print $2 }')
		if [[ -z $ev || $ev -eq 0 ]]; then
			fail "xschedd saw no queue event from the applications"
		else
			echo "xschedd handled $ev queue events"
		fi
	fi
fi

echo "applications: $passed passed, $failures failed, $skipped skipped"
if [[ $failures -gt 0 ]]; then
	exit 1
fi
if [[ $passed -eq 0 ]]; then
	exit 77
fi
exit 0
