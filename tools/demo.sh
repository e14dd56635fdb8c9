#!/usr/bin/env bash
# The main job: latency-critical and background work sharing the simulated
# XPU, natively and under xsched, then the preemption-latency table, then
# the same on PoCL through the OpenCL shim when PoCL is installed.
#   tools/demo.sh [--full]
# --full runs the complete benchmarks (minutes) instead of the short demo.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --install
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
if [ "${1:-}" = "--full" ]; then
  "$build/bench/demo_priority" --tasks 1000
  "$build/bench/bench_preempt"
else
  "$build/bench/demo_priority"
  "$build/bench/bench_preempt" --samples 50 --reps 1
fi
# The same question on a real OpenCL driver (PoCL, on the CPU), when there.
if [ -x "$build/bench/bench_cl_priority" ] && [ -e /etc/OpenCL/vendors/pocl.icd ]; then
  echo
  echo "=== OpenCL on PoCL: foreground and background programs under the OpenCL shim"
  if [ "${1:-}" = "--full" ]; then
    "$build/bench/bench_cl_priority"
  else
    "$build/bench/bench_cl_priority" --samples 300
  fi
else
  echo
  echo "PoCL not installed (apt-get install pocl-opencl-icd ocl-icd-opencl-dev): OpenCL part skipped"
fi
