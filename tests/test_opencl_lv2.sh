#!/usr/bin/env bash
# Lv2 on PoCL through the guardian (src/shim/opencl/guard/cl_guard_rw.h): the
# corpus of tests/opencl/cl_lv2_prog.c runs natively, under the shim with
# the guardian, under the shim while a thread suspends and resumes its
# queue every few hundred microseconds (hundreds of times), both again
# with the control word and records in buffers and work-groups deciding by
# compare-and-swap (XSCHED_OPENCL_LV2=buffer,atomic: what a GPU without
# fine-grain SVM gets, e.g. NVIDIA's OpenCL; PoCL, a CPU device, gets a
# plain store otherwise), the preempted run once more with only the
# compare-and-swap (XSCHED_OPENCL_LV2=atomic), and with XSCHED_OPENCL_LV2=0. The preempted run also maps a buffer without
# blocking while its queue is suspended under a cut kernel (the map must
# see the whole kernel), and resumes its queue while a kernel issued behind
# a cut one is held on the device (it must not run ahead of the cut one's
# relaunch). Every run must check out against the host
# references and print the same hashes as the native run (bit for bit);
# the preempted runs must be at level 2, must have had launches cut and
# launched again, and the buffer one must have used buffers.
#   tests/test_opencl_lv2.sh SHIM PROG
# Exits 0, 1 (a failure) or 77 (no OpenCL platform runs natively).
set -u
# In a sanitized build the sanitizer's runtime must be preloaded first.
shim="${XS_SAN_RT:+$XS_SAN_RT }$1"
prog=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/xs-lv2.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export POCL_CACHE_DIR="$dir/pocl" XSCHED_SCHEDULER=local
fail=0

if ! "$prog" >"$dir/native" 2>"$dir/native.err"; then
	if grep -q "clGetPlatformIDs" "$dir/native.err"; then
		echo "SKIP: no OpenCL platform"
		exit 77
	fi
	echo "FAIL: native run"; cat "$dir/native.err"; exit 1
fi
run() { # name, env..., -- args
	local name=$1
	shift
	if ! env "$@" >"$dir/$name" 2>"$dir/$name.err"; then
		echo "FAIL: $name: exit status"; cat "$dir/$name.err"; fail=1; return
	fi
	if ! diff -u "$dir/native" "$dir/$name"; then
		echo "FAIL: $name: results differ from native"; fail=1; return
	fi
	echo "PASS: $name ($(wc -l <"$dir/$name") outputs identical)"
}
run guarded LD_PRELOAD="$shim" XSCHED_OPENCL_LV2=1 "$prog"
run preempted LD_PRELOAD="$shim" XSCHED_OPENCL_LV2=1 XSCHED_LOG=debug "$prog" preempt
run guarded-buffer LD_PRELOAD="$shim" XSCHED_OPENCL_LV2=buffer,atomic "$prog"
run preempted-buffer LD_PRELOAD="$shim" XSCHED_OPENCL_LV2=buffer,atomic "$prog" preempt
run preempted-atomic LD_PRELOAD="$shim" XSCHED_OPENCL_LV2=atomic XSCHED_LOG=debug "$prog" preempt
run off LD_PRELOAD="$shim" XSCHED_OPENCL_LV2=0 "$prog"
for name in preempted preempted-buffer preempted-atomic; do
	[[ -f $dir/$name.err ]] || continue
	read -r _ level _ toggles _ relaunches _ waited _ ctl < <(grep '^level' "$dir/$name.err")
	echo "$name: level ${level:-?} toggles ${toggles:-?} relaunches ${relaunches:-?}" \
		"maps that waited for a resume ${waited:-?} control word ${ctl:-?}"
	if [[ ${level:-0} != 2 ]]; then echo "FAIL: $name: queue not at level 2"; fail=1; fi
	if [[ ${toggles:-0} -lt 100 ]]; then echo "FAIL: $name: fewer than 100 suspensions"; fail=1; fi
	if [[ ${relaunches:-0} -lt 1 ]]; then echo "FAIL: $name: no launch was cut"; fail=1; fi
	# PoCL is a CPU device: a plain store unless told atomic.
	decide="a plain store"
	[[ $name == preempted-atomic ]] && decide="compare-and-swap"
	if [[ $name != *-buffer ]] && ! grep -q "work-groups deciding by $decide" "$dir/$name.err"; then
		echo "FAIL: $name: work-groups do not decide by $decide"; fail=1
	fi
	if [[ $name == *-buffer && ${ctl:-} != write ]]; then
		echo "FAIL: $name: control word in '${ctl:-?}', not in a buffer"; fail=1
	fi
done
exit $fail
