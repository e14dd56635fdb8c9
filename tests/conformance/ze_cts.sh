#!/usr/bin/env bash
# oneAPI's Level Zero conformance tests (level-zero-tests), nobody on this
# project wrote them, as a test input of the Level Zero shim's
# transparency: the conformance binaries that the simulated Level Zero
# driver (src/sim/ze/) can serve are built from the third-party tarball,
# and each of their gtest cases runs as a process of its own, natively on
# the simulated driver and under the shim (in-process scheduler, and/or a
# private xschedd); every case's verdict (pass, fail, skip, crash, hang)
# under the shim must be the native one. A case that fails natively is
# recorded as a native failure (the simulated driver's gap), not the
# shim's; what is compared is native against each mode.
#
#   tests/conformance/ze_cts.sh --build XSCHED_BUILD_DIR [--third-party DIR]
#       [--work DIR] [--set ci|full] [--modes "native shim daemon"]
#       [--timeout SECONDS] [--jobs N] [--filter GTEST_FILTER]
#       [--ze-include DIR] [--no-fetch] [--keep]
#
# --build: the project's build (the shim $BUILD/src/shim/ze/
# libxsched-levelzero.so, the driver $BUILD/src/sim/ze/
# libxsched-sim-ze.so, $BUILD/src/daemon/xschedd, $BUILD/tools/xschedctl).
# --third-party: where level-zero-tests-*.tar.gz is ($XSCHED_THIRD_PARTY,
# else ../shared/third_party beside the checkout). --work: unpacked
# sources, their build and the run logs (default $BUILD/ze-cts; the build
# is kept and reused).
# --set: which binaries (below). --modes: native always runs first; shim
# is XSCHED_SCHEDULER=local, daemon a private xschedd (global mode).
# --timeout: per case (default 30 s); a case still running then is a hang:
# its threads' stacks (gdb) go to its log, then it is killed. --jobs:
# cases run at once (default 1). --filter: a gtest filter on top of the
# set's.
# Exits 0 (no difference), 1 (a difference, or the tests did not build),
# 2 (usage) or 77 (skipped: no tarball, no loader, no driver, no headers).
# Output: a table per binary and mode, the differences with their log
# lines, and $WORK/verdicts.tsv (one line per case, one column per mode).
#
# Headers: the tests at this commit want the Level Zero API 1.16 headers;
# Debian 12 has 1.4 (libze-dev 1.8.12). They are built with 1.12 headers
# (--ze-include, else the system's if new enough, else Debian 13's
# libze-dev fetched with apt-get download into $WORK, never installed)
# plus tests/conformance/ze_cts_compat.h for the few 1.13-1.16 names they
# use, and link against the system loader; every function that loader
# does not export gets a generated stub answering
# ZE_RESULT_ERROR_UNSUPPORTED_FEATURE (in the test binary, so natively and
# under the shim alike). googletest is Debian's source (libgtest-dev),
# Boost 1.81's static libraries (the tests want >= 1.79).
#
# Suites. The simulated driver has one GPU device, no sub-devices, no
# images or samplers, no IPC, no virtual memory, no residency, no metrics
# or sysman, and runs only its built-in kernels: a module accepts any
# image, but a kernel of the tests' own SPIR-V (every kernel they launch)
# is not found. So:
#   ci    test_driver test_context test_fence test_event test_cmdqueue
#         (driver, context, fence and event objects, queues and
#         synchronisation: most cases pass natively; a few minutes)
#   full  ci + test_device test_barrier test_cmdlist test_copy
#         test_memory test_usm test_module (also append paths that
#         launch the tests' kernels, which fail natively and must fail
#         alike under the shim)
# Not built: test_image, test_sampler (no images), test_ipc,
# test_multiprocess (IPC), test_p2p, test_fabric (one device),
# test_residency, test_memory_overcommit (no residency, no
# overcommitment), test_mutable_cmdlist (extension absent),
# test_api_interop (Windows DirectX), test_multithread (kernels in every
# case), test_template (an example), tools/ and sysman/ (no zet/zes).
# Functions reached through trap look unreachable to shellcheck.
# shellcheck disable=SC2317
set -u

here=$(cd "$(dirname "$0")" && pwd)
third_party=${XSCHED_THIRD_PARTY:-$(cd "$here/../.." && pwd)/../shared/third_party}
work=
build=
set_name=ci
modes="native shim daemon"
limit=30
jobs=1
filter=
ze_include=
fetch=1
keep=0

usage() {
	sed -n '/^#   tests\/conformance\/ze_cts.sh/,/^#       \[--ze-include/p' "$0" >&2
	exit 2
}

while [[ $# -gt 0 ]]; do
	case $1 in
	--third-party) third_party=${2:-}; shift ;;
	--work) work=${2:-}; shift ;;
	--build) build=${2:-}; shift ;;
	--set) set_name=${2:-}; shift ;;
	--modes) modes=${2:-}; shift ;;
	--timeout) limit=${2:-}; shift ;;
	--jobs) jobs=${2:-}; shift ;;
	--filter) filter=${2:-}; shift ;;
	--ze-include) ze_include=${2:-}; shift ;;
	--no-fetch) fetch=0 ;;
	--keep) keep=1 ;;
	*) usage ;;
	esac
	shift
done
[[ -n $build && -d $build ]] || usage
[[ $limit =~ ^[0-9]+$ && $limit -gt 0 && $jobs =~ ^[0-9]+$ && $jobs -gt 0 ]] || usage
# A set: binaries, each with a gtest filter of its cases (default all).
# ci leaves out the cases that poll, for their whole time-out, on
# zeCommandListHostSynchronize (API 1.6; the loader answers
# ZE_RESULT_ERROR_UNSUPPORTED_FEATURE): they hang natively and alike
# under the shim, 30 s each.
declare -A bin_filter
case $set_name in
ci) bins="test_driver test_context test_fence test_event test_cmdqueue"
    bin_filter[test_cmdqueue]='-*ImmediateAppendCommandListsExp*'
    bin_filter[test_event]='-zeEventSignalingTests.GivenOneEventSignaledbyImmediateCommandListWhenQueryStatusOnHostThenVerifyOnlyOneEventDetected:zeEventSignalingTests.GivenEventsSignaledWhenResetOnImmediateCmdListThenQueryStatusReturnsNotReady' ;;
full) bins="test_driver test_context test_fence test_event test_cmdqueue test_device
	    test_barrier test_cmdlist test_copy test_memory test_usm test_module" ;;
*) usage ;;
esac
for m in $modes; do
	[[ $m == native || $m == shim || $m == daemon ]] || usage
done
read -ra m <<<"${modes//native/}"
modes="native${m[*]:+ ${m[*]}}"
build=$(realpath "$build")
work=${work:-$build/ze-cts}
mkdir -p "$work" && work=$(realpath "$work") || exit 1

skip() {
	echo "SKIP: $*"
	exit 77
}

shim=$build/src/shim/ze/libxsched-levelzero.so
driver=$build/src/sim/ze/libxsched-sim-ze.so
xschedd=$build/src/daemon/xschedd
xschedctl=$build/tools/xschedctl
[[ -f $driver ]] || skip "no simulated Level Zero driver ($driver)"
[[ $modes != *shim* && $modes != *daemon* || -f $shim ]] || skip "no Level Zero shim ($shim)"
[[ $modes != *daemon* || -x $xschedd ]] || skip "no xschedd ($xschedd)"
loader=$(ldconfig -p | awk '$1 == "libze_loader.so.1" && /x86-64|64bit/ { print $NF; exit }')
[[ -n $loader ]] || skip "no Level Zero loader (libze_loader.so.1)"
loader=$(realpath "$loader")
tarball=$(find "$third_party" -maxdepth 1 -name "level-zero-tests-*.tar.gz" 2>/dev/null | sort | tail -1)
[[ -n $tarball ]] || skip "no level-zero-tests-*.tar.gz in $third_party"
[[ -d /usr/src/googletest/googlemock ]] || skip "no googletest sources (libgtest-dev)"
for t in cmake ninja g++ gdb; do
	command -v $t >/dev/null || skip "$t not installed"
done

# ---- headers: API 1.12 or later ----
has_1_12() {
	grep -q 'ZE_API_VERSION_1_12' "$1/level_zero/ze_api.h" 2>/dev/null
}
if [[ -z $ze_include ]]; then
	if has_1_12 /usr/include; then
		ze_include=/usr/include
	elif has_1_12 "$work/ze-headers/usr/include"; then
		ze_include=$work/ze-headers/usr/include
	elif [[ $fetch -eq 1 ]]; then
		# Debian 13's libze-dev, by apt's own client with a private list
		# and cache: downloaded and unpacked here, never installed.
		a=$work/apt
		mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
		echo 'deb http://deb.debian.org/debian trixie main' >"$a/sources.list"
		opts=(-o "Dir::Etc::sourcelist=$a/sources.list" -o Dir::Etc::sourceparts=-
		      -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache"
		      -o APT::Sandbox::User=root)
		if apt-get "${opts[@]}" update >"$a/log" 2>&1 &&
		   (cd "$a" && apt-get "${opts[@]}" download libze-dev/trixie) >>"$a/log" 2>&1; then
			dpkg -x "$a"/libze-dev_*.deb "$work/ze-headers"
		fi
		has_1_12 "$work/ze-headers/usr/include" && ze_include=$work/ze-headers/usr/include
	fi
fi
if [[ -z $ze_include ]] || ! has_1_12 "$ze_include"; then
	skip "no Level Zero 1.12 headers (--ze-include DIR, or Debian 13's libze-dev)"
fi

# ---- sources, stubs, configuration, build ----
src=$work/src
tb=$work/build
stamp=$(basename "$tarball")
if [[ ! -f $src/.xsched-unpacked || $(cat "$src/.xsched-unpacked") != "$stamp" ]]; then
	rm -rf "$src" "$tb"
	mkdir -p "$src"
	tar -xzf "$tarball" -C "$src" --strip-components=1 || exit 1
	mkdir -p "$src/third_party"
	cp -r /usr/src/googletest "$src/third_party/googletest"
	# The harness library without its metric, debug, tracing and sysman
	# parts (no core test uses them; they want zet/zes of API 1.16).
	sed -i '/"\(tools\|sysman\)\/src\//d' "$src/utils/test_harness/CMakeLists.txt"
	echo "$stamp" >"$src/.xsched-unpacked"
fi

# Stubs of every API function the headers declare and the loader lacks.
mkdir -p "$tb"
{
	echo "/* Generated by ze_cts.sh: functions $loader does not export. */"
	nm -D --defined-only "$loader" | awk '{ print $NF }' | sort -u >"$tb/exports"
	# Every function of these headers returns ze_result_t.
	cat "$ze_include"/level_zero/{ze,zet,zes}_api.h "$here/ze_cts_compat.h" |
		grep -oE '^(ze_result_t )?(ze|zet|zes)[A-Z][A-Za-z0-9]*\(' |
		sed -e 's/^ze_result_t //' -e 's/($//' | sort -u | comm -23 - "$tb/exports" |
		awk '{ print "int " $1 "(void) { return 0x78000003; }" }'
} >"$tb/stubs.c"
cc -c -O1 -fPIC -o "$tb/stubs.o" "$tb/stubs.c" || exit 1

flags="-include $here/ze_cts_compat.h -w"
if [[ ! -f $tb/build.ninja || $(cat "$tb/.xsched-flags" 2>/dev/null) != "$ze_include $flags" ]]; then
	rm -rf "$tb/CMakeCache.txt" "$tb/CMakeFiles"
	nice cmake -S "$src" -B "$tb" -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DGROUP=/conformance_tests/core \
		-DLevelZero_INCLUDE_DIR="$ze_include" -DLevelZero_LIBRARY="$loader" \
		-DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_STANDARD_LIBRARIES="$tb/stubs.o" \
		>"$work/configure.log" 2>&1 || { echo "FAIL: configure (see $work/configure.log)"; tail -20 "$work/configure.log"; exit 1; }
	echo "$ze_include $flags" >"$tb/.xsched-flags"
fi
t0=$(date +%s)
# shellcheck disable=SC2086
if ! nice ninja -C "$tb" $bins >"$work/build.log" 2>&1; then
	echo "FAIL: building $bins (see $work/build.log)"
	grep -m 20 -E 'error|undefined reference' "$work/build.log"
	exit 1
fi
echo "built ${bins//[[:space:]]/ } in $(($(date +%s) - t0)) s ($(grep -c '^\[' "$work/build.log") steps)"

# ---- running ----
run=$work/run
rm -rf "$run" "$work/sim"
mkdir -p "$run/pids" "$work/sim"
daemon_pid=
cleanup() {
	local p

	# Cases still running (each leads a process group of its own).
	for p in "$run"/pids/*; do
		[[ -f $p ]] && kill -KILL -- "-${p##*/}" 2>/dev/null
	done
	if [[ -n $daemon_pid ]]; then
		kill -TERM "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$work/sim"
	[[ $keep -eq 1 ]] || rm -rf "$run"/*/*/*.out
}
trap cleanup EXIT
trap 'exit 143' TERM INT

unset LD_PRELOAD XSCHED_DISABLE XSCHED_PRIORITY XSCHED_SHARE XSCHED_DEADLINE_US \
	XSCHED_LAXITY_US XSCHED_SOCKET XSCHED_CONTROL_SOCKET XSCHED_SCHEDULER XSCHED_POLICY \
	XSCHED_ZE_SLICE XSCHED_ZE_LIB ZE_ENABLE_VALIDATION_LAYER ZE_AFFINITY_MASK
export ZE_ENABLE_ALT_DRIVERS=$driver XSCHED_SIM_DIR=$work/sim

start_daemon() {
	local d=$work/xsd i
	mkdir -p "$d"
	rm -f "$d"/*.sock
	printf '[daemon]\n[policy]\n' >"$d/xschedd.conf"
	"$xschedd" --config "$d/xschedd.conf" --socket "$d/c.sock" \
		--control-socket "$d/ctl.sock" 2>"$d/xschedd.log" &
	daemon_pid=$!
	# Bounded wait for the socket (the shim is fail-open and reconnects).
	for ((i = 0; i < 500; i++)); do
		[[ -S $d/c.sock ]] && break
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.02
	done
	[[ -S $d/c.sock ]] || { echo "FAIL: xschedd did not start"; tail -3 "$d/xschedd.log"; exit 1; }
}

# The environment of MODE's processes, one VAR=VALUE a line; a simulated
# device for each of the --jobs cases that may run at once (SLOT).
mode_env() { # MODE SLOT
	echo "XSCHED_SIM_DEVICE=zects-$1-$2"
	case $1 in
	shim) echo "LD_PRELOAD=$shim"; echo XSCHED_SCHEDULER=local ;;
	daemon) echo "LD_PRELOAD=$shim"; echo XSCHED_SCHEDULER=global
		echo "XSCHED_SOCKET=$work/xsd/c.sock"; echo "XSCHED_CONTROL_SOCKET=$work/xsd/ctl.sock" ;;
	esac
}

# run_one MODE BIN INDEX TEST: one case in its own process group, in the
# binary's run directory; writes INDEX.out (output) and INDEX.v (verdict
# and seconds).
run_one() {
	local mode=$1 bin=$2 i=$3 test=$4 d=$run/$1/$2 pid spid hpid first rc=0 v t0
	local -a envs
	mapfile -t envs < <(mode_env "$mode" $((i % jobs)))
	t0=$(date +%s.%N)
	# A case's output stops at 16 MiB (a failing check in a polling loop
	# writes gigabytes); the rest is read and dropped, so it runs on.
	rm -f "$d/$i.fifo"
	mkfifo "$d/$i.fifo" || return
	{ head -c 16777216 >"$d/$i.out"; cat >/dev/null; } <"$d/$i.fifo" &
	hpid=$!
	(cd "$run/dir/$bin" && exec env "${envs[@]}" setsid "$tb/${bin_path_[$bin]}" \
		--gtest_filter="$test" --gtest_color=no </dev/null) >"$d/$i.fifo" 2>&1 &
	pid=$!
	: >"$run/pids/$pid"
	sleep "$limit" &
	spid=$!
	# (bash's "Segmentation fault" notices of the case go to /dev/null)
	{ wait -n -p first "$pid" "$spid"; } 2>/dev/null
	rc=$?
	if [[ $first == "$spid" ]]; then
		v=hang
		{
			echo "=== timed out after $limit s: threads of the test's processes"
			for p in $(pgrep -g "$pid"); do
				echo "--- pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
				timeout 60 gdb -batch -nx -ex 'thread apply all bt' -p "$p" 2>&1 |
					grep -E '^(Thread|#)'
			done
		} >"$d/$i.stacks"
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		wait "$hpid"
		cat "$d/$i.stacks" >>"$d/$i.out"
	else
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		wait "$hpid"
		# gtest's result line: "[  TAG  ] NAME (N ms)", or "NAME, where
		# GetParam() = ..." for a parameterised case.
		if grep -qF -e "[  SKIPPED ] $test (" -e "[  SKIPPED ] $test, " "$d/$i.out"; then
			v=skip
		elif [[ $rc -eq 0 ]] && grep -qF -e "[       OK ] $test (" -e "[       OK ] $test, " "$d/$i.out"; then
			v=pass
		elif [[ $rc -eq 1 ]] && grep -qF -e "[  FAILED  ] $test (" -e "[  FAILED  ] $test, " "$d/$i.out"; then
			v=fail
		else
			v=crash
		fi
	fi
	rm -f "$run/pids/$pid" "$d/$i.fifo" "$d/$i.stacks"
	awk -v v="$v" -v t0="$t0" -v t1="$(date +%s.%N)" -v rc="$rc" \
		'BEGIN { printf "%s\t%.2f\t%s\n", v, t1 - t0, rc }' >"$d/$i.v"
}

# The cases of a binary that gtest filter F selects, one full name a line
# (from --gtest_list_tests).
list_cases() { # BIN F
	(cd "$run/dir/$1" && env XSCHED_SIM_DEVICE=zects-list "$tb/${bin_path_[$1]}" \
		--gtest_list_tests --gtest_filter="$2" </dev/null 2>/dev/null) |
		awk '/^[^ ]/ { suite = $1; next } /^  [^ ]/ { print suite $1 }'
}

declare -A bin_path_
for b in $bins; do
	p=$(cd "$tb" && find conformance_tests -type f -name "$b" -perm -u+x | head -1)
	[[ -n $p ]] || { echo "FAIL: $b not built"; exit 1; }
	bin_path_[$b]=$p
	# Run directory: the binary's kernels and media, which it opens by
	# relative name.
	mkdir -p "$run/dir/$b"
	for f in "$src/conformance_tests/core/${b#test_}"/kernels/* \
		 "$src/conformance_tests/core/$b"/kernels/* "$src"/mediadata/internal/*/*; do
		[[ -f $f ]] && ln -sf "$f" "$run/dir/$b/"
	done
done

for b in $bins; do
	list_cases "$b" "${bin_filter[$b]:-*}" | sort >"$run/$b.cases"
	if [[ -n $filter ]]; then
		list_cases "$b" "$filter" | sort | comm -12 "$run/$b.cases" - >"$run/$b.sel"
		mv "$run/$b.sel" "$run/$b.cases"
	fi
done

for mode in $modes; do
	[[ $mode == daemon ]] && start_daemon
	t0=$(date +%s)
	for b in $bins; do
		mkdir -p "$run/$mode/$b"
		i=0
		running=()
		while read -r test; do
			# At most --jobs cases at once (xschedd is a child too).
			while ((${#running[@]} >= jobs)); do
				wait -n "${running[@]}"
				alive=()
				for p in "${running[@]}"; do
					kill -0 "$p" 2>/dev/null && alive+=("$p")
				done
				running=("${alive[@]}")
			done
			run_one "$mode" "$b" "$i" "$test" &
			running+=($!)
			i=$((i + 1))
		done <"$run/$b.cases"
		((${#running[@]} == 0)) || wait "${running[@]}"
	done
	echo "$mode: ran in $(($(date +%s) - t0)) s"
	if [[ $mode == daemon ]]; then
		[[ -x $xschedctl ]] && XSCHED_CONTROL_SOCKET=$work/xsd/ctl.sock "$xschedctl" metrics \
			>"$work/xsd/metrics.txt" 2>&1
		kill -TERM "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
		daemon_pid=
	fi
done

# ---- report ----
tsv=$work/verdicts.tsv
{
	printf 'binary\tcase'
	for m in $modes; do printf '\t%s' "$m"; done
	for m in $modes; do printf '\t%s_s' "$m"; done
	printf '\n'
	for b in $bins; do
		i=0
		while read -r test; do
			printf '%s\t%s' "$b" "$test"
			for m in $modes; do printf '\t%s' "$(cut -f1 "$run/$m/$b/$i.v" 2>/dev/null || echo none)"; done
			for m in $modes; do printf '\t%s' "$(cut -f2 "$run/$m/$b/$i.v" 2>/dev/null || echo -)"; done
			printf '\n'
			i=$((i + 1))
		done <"$run/$b.cases"
	done
} >"$tsv"

echo
printf '%-14s %6s' binary cases
for m in $modes; do printf '  %-24s' "$m pass/fail/skip/crash/hang"; done
printf '\n'
awk -F'\t' -v modes="$modes" '
	NR == 1 { for (c = 3; c <= NF; c++) col[$c] = c; next }
	{ n[$1]++; if (!($1 in seen)) { seen[$1] = 1; order[++nb] = $1 }
	  for (m in col) v[$1, m, $col[m]]++ }
	END {
		nm = split(modes, M, " ")
		for (k = 1; k <= nb; k++) {
			b = order[k]; printf "%-14s %6d", b, n[b]
			for (j = 1; j <= nm; j++) { m = M[j]
				printf "  %-24s", sprintf("%d/%d/%d/%d/%d", v[b, m, "pass"], v[b, m, "fail"],
				       v[b, m, "skip"], v[b, m, "crash"], v[b, m, "hang"]) }
			printf "\n"
		}
	}' "$tsv"

# Cases whose verdict is a race on this machine, natively and under the
# shims alike: which of several queues started together finishes first.
# The simulated device serves its queues round-robin, so natively a queue
# of high priority finishes first or not by timing (both seen here), and
# under the shims by timing too (1 of 6 runs failed, 2026-12-06). Their
# differences are printed (TIMING) and not counted; every other case is.
timing_dependent=(
	"test_cmdqueue CommandQueuePriorityTest.GivenConcurrentLogicalCommandQueuesWhenStartSynchronizedThenHighPriorityCompletesFirst"
)

ndiff=0
echo
for m in $modes; do
	[[ $m == native ]] && continue
	col=$(head -1 "$tsv" | tr '\t' '\n' | grep -nx "$m" | cut -d: -f1)
	while IFS=$'\t' read -r b test vn vm; do
		if [[ " ${timing_dependent[*]} " == *" $b $test "* ]]; then
			echo "TIMING (not compared): $b $test: native $vn, $m $vm"
			continue
		fi
		ndiff=$((ndiff + 1))
		i=$(grep -nxF "$test" "$run/$b.cases" | head -1 | cut -d: -f1)
		i=$((i - 1))
		echo "DIFF: $b $test: native $vn, $m $vm ($run/$m/$b/$i.out)"
		grep -E 'Failure|error|Expected|Which is|Value of|Actual|SKIPPED|ZE_RESULT|Thread|^#|signal|Abort|lookup' \
			"$run/$m/$b/$i.out" | head -25 | sed 's/^/    /'
	done < <(awk -F'\t' -v c="$col" 'NR > 1 && $3 != $c { print $1 "\t" $2 "\t" $3 "\t" $c }' "$tsv")
done
echo "verdicts: $tsv"
if [[ $ndiff -gt 0 ]]; then
	echo "FAIL: $ndiff difference(s) from native"
	exit 1
fi
echo "PASS: every mode's verdicts are the native ones ($(($(wc -l <"$tsv") - 1)) cases)"
exit 0
