#!/usr/bin/env bash
# Builds xsched and runs its test suite (the README's test command),
# after installing what building and testing every shim and tool needs
# (tools/deps.sh --test: PoCL, the OpenCL and Level Zero loaders, libbpf,
# clang ...), so that the OpenCL and Level Zero tests run too.
#   tools/test.sh [--apps] [cmake options...]
# --apps also installs the real OpenCL applications of test_cl_apps
# (clinfo, clpeak, CLBlast's tuners, pyopencl, hashcat, OpenCV, ffmpeg,
# OpenMM, piglit: a few minutes of installing, about ten of testing;
# without them that test is skipped, or runs those already installed).
# Environment: BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
groups=(--test)
if [ "${1:-}" = --apps ]; then
  groups+=(--apps)
  shift
fi
tools/deps.sh --install "${groups[@]}"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
# Ninja for a new build directory; an existing one keeps its generator.
gen=()
[ -e "$build/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
# In a build with AddressSanitizer, an abort() (a driver's own check, e.g.
# PoCL's on its locks) prints the stack that led to it: a rare failure in
# CI can be read from the log. Ignored by other builds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=1"
# The fuzzer runs on its own in CI (tests/fuzz/run.sh), not in the suite.
ctest -j "$jobs" --output-on-failure --timeout 300 -LE fuzz
