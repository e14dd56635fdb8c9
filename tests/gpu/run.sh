#!/usr/bin/env bash
# GPU checks of the CUDA shim on a machine with an NVIDIA GPU and driver
# (the device tool's H200): builds the shim there (or takes an installed
# one), runs a <<<>>> program on the real driver, natively and under the
# shim, then a PyTorch experiment: a foreground model at about 20% load
# next to a background flood, standalone / native / xsched (daemon, hpf),
# foreground P50/P99. Prints a table. Exits 77 without a GPU. Budget: well
# under 8 minutes.
#   tests/gpu/run.sh [--build-only] [--prefix DIR] [BUILD_DIR]
# --build-only: runs every step that needs no GPU (configure and build,
# nvcc of the test program when there is an nvcc, the Python scripts'
# syntax) and stops before the first one that does: run it where the
# build is made, so that a GPU host's minutes are never lost to a step
# that could have failed anywhere. Exit 0 when they all passed.
# --prefix DIR: use an installed xsched instead of building one:
# DIR/<libdir>/xsched/libxsched-cuda.so and DIR/sbin/xschedd (the .deb:
# --prefix /usr; a build carried from another machine: docs/install.md,
# "Carrying a build to a GPU host").
# The build needs only a C compiler and CMake: without inih the daemon is
# not built, and the PyTorch experiment is skipped unless --prefix names
# a carried one.
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$(pwd)
build_only=0 prefix= build=build-gpu
while [ $# -gt 0 ]; do
  case $1 in
    --build-only) build_only=1 ;;
    --prefix) prefix=${2:?--prefix needs a directory}; shift ;;
    -*) echo "usage: $0 [--build-only] [--prefix DIR] [BUILD_DIR]" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
out=${OUT:-${TMPDIR:-/tmp}/xsched-gpu}
mkdir -p "$out"

if [ "$build_only" -eq 0 ]; then
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no NVIDIA GPU: skipped"; exit 77
  fi
  nvidia-smi -L
fi
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
py=${PYTHON:-python3}

step() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }
fail=0

shim= daemon=
if [ -n "$prefix" ]; then
  step "installed xsched under $prefix"
  for f in "$prefix"/lib/xsched/libxsched-cuda.so "$prefix"/lib*/*/xsched/libxsched-cuda.so \
           "$prefix"/lib64/xsched/libxsched-cuda.so; do
    [ -f "$f" ] && { shim=$f; break; }
  done
  [ -x "$prefix/sbin/xschedd" ] && daemon=$prefix/sbin/xschedd
  [ -n "$shim" ] || { echo "no libxsched-cuda.so under $prefix/lib*/"; exit 1; }
else
  step "build (a C compiler and CMake are enough)"
  if ! command -v cmake >/dev/null; then
    echo "cmake not found"; exit 1
  fi
  if ! cmake -S "$src" -B "$build" -DBUILD_TESTING=OFF >"$out/configure.log" 2>&1; then
    echo "configure failed:"; tail -20 "$out/configure.log"; exit 1
  fi
  grep '^-- xsched:' "$out/configure.log"
  targets=(--target xsched_cuda)
  grep -q '^-- xsched: daemon=ON' "$out/configure.log" && targets+=(--target xschedd)
  if ! cmake --build "$build" -j"$(nproc)" "${targets[@]}" >"$out/build.log" 2>&1; then
    echo "build failed:"; tail -20 "$out/build.log"; exit 1
  fi
  shim=$build/src/shim/cuda/libxsched-cuda.so
  [ -x "$build/src/daemon/xschedd" ] && daemon=$build/src/daemon/xschedd
fi
ls -l "$shim" ${daemon:+"$daemon"}
[ -n "$daemon" ] || echo "no xschedd (no inih here; see --prefix): the PyTorch experiment will be skipped"

step "driver-API program on the real driver, native vs shim"
cat > "$out/drv.cu" <<'CU'
#include <cstdio>
__global__ void inc(unsigned *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }
__global__ void scale(unsigned *p, int n, unsigned k) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= k; }
int main() {
  const int n = 1 << 20; unsigned *d, *h = new unsigned[n]; unsigned long long s = 0;
  cudaStream_t a, b; cudaEvent_t e;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  cudaMalloc(&d, n * 4); cudaMemsetAsync(d, 0, n * 4, a);
  for (int i = 0; i < 50; i++) { inc<<<n / 256, 256, 0, a>>>(d, n); scale<<<n / 256, 256, 0, a>>>(d, n, 3); }
  cudaEventRecord(e, a); cudaStreamWaitEvent(b, e, 0);
  inc<<<n / 256, 256, 0, b>>>(d, n); inc<<<n / 256, 256>>>(d, n);
  cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) s += h[i];
  printf("checksum %llu err %d\n", s, (int)cudaGetLastError());
  return 0;
}
CU
if [ -x "$nvcc" ]; then
  if "$nvcc" -O2 -o "$out/drv" "$out/drv.cu"; then
    echo "built $out/drv with $nvcc"
  else
    echo "nvcc failed"; fail=1
  fi
elif [ "$build_only" -eq 1 ]; then
  echo "SKIP: no nvcc here (the GPU host has one)"
else
  echo "nvcc not found"; fail=1
fi
if [ "$build_only" -eq 0 ] && [ -x "$out/drv" ]; then
  native=$("$out/drv"); shimmed=$(LD_PRELOAD=$shim "$out/drv")
  echo "native:  $native"; echo "shim:    $shimmed"
  [ "$native" = "$shimmed" ] || { echo "MISMATCH"; fail=1; }
  XSCHED_SCHEDULER=none LD_PRELOAD=$shim "$out/drv" >/dev/null || fail=1
fi

step "PyTorch: foreground at ~20% load next to a background flood"
cat > "$out/fg.py" <<'PY'
import sys, time, random, torch
n, load = int(sys.argv[1]), float(sys.argv[2])
x = torch.randn(4096, 4096, device="cuda"); w = torch.randn(4096, 4096, device="cuda")
def task():
    y = x
    for _ in range(8): y = torch.relu(y @ w)
    torch.cuda.synchronize()
for _ in range(10): task()
t = time.perf_counter(); [task() for _ in range(20)]; solo = (time.perf_counter() - t) / 20
lat = []
for _ in range(n):
    time.sleep(solo / load * random.uniform(0.5, 1.5) - solo if load < 1 else 0)
    t = time.perf_counter(); task(); lat.append(time.perf_counter() - t)
lat.sort(); print("p50_ms %.3f p99_ms %.3f" % (lat[len(lat)//2] * 1e3, lat[int(len(lat)*.99)] * 1e3))
PY
cat > "$out/bg.py" <<'PY'
import sys, time, torch
end = time.time() + float(sys.argv[1]); x = torch.randn(8192, 8192, device="cuda"); n = 0
while time.time() < end:
    for _ in range(4): x = torch.tanh(x @ x) / 8192
    torch.cuda.synchronize(); n += 1
print("iters", n)
PY
if command -v "$py" >/dev/null; then
  if "$py" -c 'import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]' \
    "$out/fg.py" "$out/bg.py"; then
    echo "the experiment's scripts parse"
  else
    echo "the experiment's scripts do not parse"; fail=1
  fi
elif [ "$build_only" -eq 1 ]; then
  echo "SKIP: no $py here to check the scripts"
fi
if [ "$build_only" -eq 1 ]; then
  echo; echo "build-only: every step before the GPU done in ${SECONDS}s, failures: $fail"
  exit $fail
fi
if [ -z "$daemon" ]; then
  echo "no xschedd: experiment skipped"
elif ! "$py" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "PyTorch with CUDA unavailable: experiment skipped"
else
  tasks=300
  solo=$("$py" "$out/fg.py" $tasks 0.2)
  "$py" "$out/bg.py" 60 >/dev/null & bg=$!; sleep 5
  native=$("$py" "$out/fg.py" $tasks 0.2); kill $bg 2>/dev/null; wait $bg 2>/dev/null
  sock=$out/xs.sock; ctl=$out/xsctl.sock
  "$daemon" --config /dev/null --socket "$sock" --control-socket "$ctl" --policy hpf \
    >"$out/daemon.log" 2>&1 & d=$!
  for _ in $(seq 100); do [ -S "$ctl" ] && break; sleep 0.1; done
  XSCHED_SOCKET=$sock XSCHED_PRIORITY=0 LD_PRELOAD=$shim "$py" "$out/bg.py" 60 >/dev/null & bg=$!; sleep 5
  xs=$(XSCHED_SOCKET=$sock XSCHED_PRIORITY=10 LD_PRELOAD=$shim "$py" "$out/fg.py" $tasks 0.2)
  kill $bg $d 2>/dev/null; wait 2>/dev/null
  printf '\n| run | foreground |\n|---|---|\n| standalone | %s |\n| native (with flood) | %s |\n| xsched hpf (with flood) | %s |\n' \
    "$solo" "$native" "$xs"
fi
echo; echo "done in ${SECONDS}s, failures: $fail"
exit $fail
