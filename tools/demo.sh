#!/usr/bin/env bash
# The main job: a latency-critical foreground and a flooding background
# application sharing one device, natively and under xsched, side by side.
# Both are unmodified driver-API programs: bench/cu_load on the simulated
# XPU through the CUDA shim, then bench/cl_load on PoCL through the OpenCL
# shim when PoCL is installed; each configuration starts and stops its own
# xschedd (fixed-priority policy hpf). Prints a summary per device and
# draws the latency CDFs into a PNG (with gnuplot).
#   tools/demo.sh [--full]
# The default is the short version (about two minutes); --full runs the
# complete scenarios instead (bench/scenarios/run_all.sh: all of them, with
# every figure, tens of minutes). It installs what it needs first
# (tools/deps.sh --demo: the build's packages, PoCL, gnuplot).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --install --demo
build=${BUILD_DIR:-build}
# Ninja for a new build directory; an existing one keeps its generator.
gen=()
[ -e "$build/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
build=$(cd "$build" && pwd)

if [ "${1:-}" = "--full" ]; then
  exec env BUILD_DIR="$build" bench/scenarios/run_all.sh
fi

results=$build/demo
rm -rf "$results"
mkdir -p "$results/priority" "$results/priority_cl" "$results/llm"
export BUILD_DIR=$build XS_RESULTS=$results

# summary SCENARIO TITLE: one line per configuration from summary.tsv.
summary() {
  awk -F'\t' -v title="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["config"] == "bg-alone" { next }
    {
      c = $col["config"]; p99 = $col["p99_us"] / 1000
      if (c == "standalone") { std = sprintf("standalone %.1f ms", p99); next }
      line = line sprintf(", %s %.1f ms (%.2fx)", c, p99, $col["p99_norm"])
      if ($col["bg_norm"] != "-") bg = bg sprintf(", %s %.0f%%", c, 100 * $col["bg_norm"])
    }
    END {
      printf "%s: foreground P99: %s%s\n", title, std, line
      printf "%s: background throughput vs alone:%s\n", title, substr(bg, 2)
    }' "$results/$1/summary.tsv"
}

echo "=== Simulated XPU: CUDA driver-API programs under the CUDA shim"
bench/scenarios/priority.sh --sizes 500 --levels 1,3 --tasks 150 --warmup 10 --rounds 1 \
  | tee "$results/priority/output.txt"
sim_line=$(summary priority "simulated XPU")

echo
echo "=== LLM serving next to offline batch work on the simulated XPU"
bench/scenarios/llm.sh --requests 40 --rounds 1 --configs xsched-lv1,api-lv3 \
  | tee "$results/llm/output.txt"
llm_line=$(awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["config"] ~ /^(xsched-lv1|api-lv3)$/ {
    c = $col["config"]
    line = line sprintf("%s%s TTFT P99 %.2fx, TPOT P99 %.2fx, offline %.0f%%", sep, c,
                        $col["ttft_p99_norm"], $col["tpot_p99_norm"], 100 * $col["off_norm"])
    sep = "; "
  }
  END { printf "LLM serving (simulated XPU), vs standalone: %s\n", line }' \
  "$results/llm/summary.tsv")

cl_line=""
if [ -e /etc/OpenCL/vendors/pocl.icd ] && [ -x "$build/bench/cl_load" ]; then
  echo
  echo "=== PoCL (OpenCL on the CPU): OpenCL programs under the OpenCL shim"
  bench/scenarios/priority_cl.sh --tasks 100 --rounds 1 | tee "$results/priority_cl/output.txt"
  cl_line=$(summary priority_cl "PoCL")
else
  echo
  echo "PoCL or the OpenCL build missing (tools/deps.sh --install --demo, then rerun):" \
       "the OpenCL part is skipped"
fi

echo
echo "=== Summary (the configurations' P99 over standalone; xsched-lv1 is the CUDA shim," \
     "api-lv3 the same programs' queues at Lv3 through the xsched API)"
echo "$sim_line"
echo "$llm_line"
[ -n "$cl_line" ] && echo "$cl_line"
if command -v gnuplot >/dev/null; then
  tools/plots.sh --only priority,priority_cl --cdf-only "$results" "$results" \
    | sed 's/^/latency CDF: /'
else
  echo "gnuplot not installed (apt-get install gnuplot-nox): no latency CDF figure"
fi
