# shellcheck shell=bash
#
# lib_cl.sh: what the OpenCL scenarios (priority_cl.sh, heterogeneous.sh)
# add to lib.sh: bench/cl_load on PoCL, natively or unchanged under the
# OpenCL shim (LD_PRELOAD) with the scenario's private xschedd. Sourced
# after lib.sh and xs_setup. Kept apart from lib.sh only because that file
# has another owner; the functions follow its conventions (XS_ENV arrays,
# xs_die), so they can move there as they are.
#
#   xs_cl_setup               XS_CL_LOAD, XS_CL_SHIM, PoCL's settings
#   xs_cl_require             exit 0 with "skipped: why" without OpenCL
#   xs_cl_calibrate US [W]    loop iterations for a US-long kernel on W items
#   xs_env_cl_native [V=X..]  env prefix: cl_load straight into the loader
#   xs_env_cl_shim [V=X..]    env prefix: cl_load under the OpenCL shim and
#                             the private daemon (hints as arguments)

# PoCL 3.1 can crash or hang with 1024-item work-groups on some kernels
# (shared/FACTS.md); cl_load uses one-item groups, this is for safety.
xs_cl_setup() {
	XS_CL_LOAD=$BUILD_DIR/bench/cl_load
	XS_CL_SHIM=$BUILD_DIR/src/shim/opencl/libxsched-opencl.so
	export POCL_MAX_WORK_GROUP_SIZE=${POCL_MAX_WORK_GROUP_SIZE:-512}
}

# xs_cl_require [shim]: OpenCL-only scenarios pass (exit 0, one "skipped"
# line) on machines without an OpenCL device, so that CI without PoCL
# passes; with "shim", the OpenCL shim must be built too.
xs_cl_require() {
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

# xs_cl_calibrate US [WIDTH]: the loop kernel's iteration count for an
# enqueue+finish round trip of about US microseconds on WIDTH work-items,
# measured now (run it while nothing else runs).
xs_cl_calibrate() {
	local line
	line=$("$XS_CL_LOAD" --calibrate --cmd-us "$1" --width "${2:-1}") ||
		xs_die "cl_load --calibrate failed"
	xs_field "$line" iters
}

# XS_ENV is read by the caller (lib.sh convention).
# shellcheck disable=SC2034
xs_env_cl_native() {
	XS_ENV=("POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE" "$@")
}

# shellcheck disable=SC2034
xs_env_cl_shim() {
	xs_need "$XS_CL_SHIM" "the OpenCL shim"
	[[ -n ${XS_DAEMON_PID:-} ]] || xs_die "xs_env_cl_shim before xs_daemon_start"
	XS_ENV=("POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE" "LD_PRELOAD=$XS_CL_SHIM"
		"XSCHED_SCHEDULER=global" "XSCHED_SOCKET=$XS_SOCK" "XSCHED_CONTROL_SOCKET=$XS_CTL"
		"$@")
}
