#!/usr/bin/env bash
# Runs a set of piglit's OpenCL tests one after another and prints, per
# test, its name, piglit's result lines and its exit status: an output to
# compare between a native run and one under a shim (tests/test_cl_apps.sh).
#
#   tests/opencl/piglit_each.sh PIGLIT_DIR api|program
#
# api:     the API tests (cl-api-*) and the custom and program binaries that
#          need nothing but an OpenCL device
# program: cl-program-tester on the hand-written kernel tests of
#          tests/cl/program (build/, and execute/ but for builtin/, whose
#          kernels come from macros); the generated tests are left out
#          (ten minutes on two CPUs)
# Each test may take 120 s. Exits 0 once every test ran, 2 on bad usage.
set -u

dir=${1:-}
set=${2:-}
if [[ ! -x $dir/bin/cl-program-tester || ($set != api && $set != program) ]]; then
	echo "usage: $0 PIGLIT_DIR api|program" >&2
	exit 2
fi

one() {
	local name=$1 rc
	shift
	echo "TEST $name"
	timeout -k 5 120 "$@" 2>&1 | grep '^PIGLIT:'
	rc=${PIPESTATUS[0]}
	echo "exit $rc"
}

if [[ $set == api ]]; then
	for t in "$dir"/bin/cl-api-* "$dir"/bin/cl-custom-buffer-flags \
		"$dir"/bin/cl-custom-flush-after-enqueue-kernel "$dir"/bin/cl-custom-run-simple-kernel \
		"$dir"/bin/cl-custom-use-sub-buffer-in-kernel "$dir"/bin/cl-program-bitcoin-phatk \
		"$dir"/bin/cl-program-max-work-item-sizes "$dir"/bin/cl-program-predefined-macros; do
		[[ -x $t ]] && one "${t##*/}" "$t"
	done
	exit 0
fi
while IFS= read -r f; do
	one "${f#"$dir"/tests/cl/}" "$dir/bin/cl-program-tester" "$f"
done < <(find "$dir/tests/cl/program/build" "$dir/tests/cl/program/execute" \
	-path '*/execute/builtin' -prune -o \( -name '*.cl' -o -name '*.program_test' \) -print |
	LC_ALL=C sort)
exit 0
