#!/usr/bin/env bash
# Builds xsched and runs its test suite (the README's test command).
#   tools/test.sh [cmake options...]
# Environment: BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --install
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
# The fuzzer runs on its own in CI (tests/fuzz/run.sh), not in the suite.
ctest -j "$jobs" --output-on-failure --timeout 300 -LE fuzz
