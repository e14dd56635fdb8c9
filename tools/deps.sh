#!/usr/bin/env bash
# Checks (and with --install installs, with apt-get) the Debian 12 packages
# xsched needs, by group. Used by test.sh, demo.sh, package.sh and CI.
#   tools/deps.sh [--install] [--test] [--apps] [--plots] [--demo] [--package]
#                 [--cluster] [--conformance] [--optional] [--list]
# Always: what the build needs. --test: everything needed to build and
# test every shim and tool (PoCL and the OpenCL loader, Level Zero,
# libbpf, bpftool, <sys/sdt.h>, clang and libFuzzer, systemd's tools); --apps: the real
# third-party OpenCL applications of tests/test_cl_apps.sh (slow to
# install, their test takes about ten minutes); --plots: gnuplot for figures;
# --demo: what tools/demo.sh runs (PoCL, gnuplot); --package: what building
# and checking the .deb needs; --cluster: the container runtime, Slurm and
# the CDI schema of the cluster tests (tests/test_cdi.sh, test_podman.sh,
# test_slurm.sh, test_k8s.sh) and spank.h for the Slurm plugin;
# --conformance: --test and what building the third-party conformance
# suites takes (tests/conformance/: the OpenCL CTS, the Level Zero tests);
# --optional: all of them. --list prints the
# packages chosen, one per line, and installs nothing.
# As root it installs directly; otherwise through sudo when there is one,
# else it prints the apt-get command to run and exits 1.
set -euo pipefail

# One package per line, so that adding one is a one-line change.
build=(
  build-essential
  cmake
  ninja-build
  pkg-config
  libcmocka-dev   # the tests
  libinih-dev     # xschedd's configuration parser
)
test=(
  pocl-opencl-icd     # OpenCL on the CPU: the OpenCL shim's tests
  ocl-icd-opencl-dev  # the ICD loader to link against
  opencl-headers
  libze-dev           # Level Zero loader and headers
  libze1
  libbpf-dev          # the eBPF tool
  bpftool
  systemtap-sdt-dev   # <sys/sdt.h>: USDT probes in libxsched
  clang               # eBPF programs, the IPC fuzzer
  llvm
  libclang-rt-14-dev  # libFuzzer
  python3             # helpers of the shell tests
  systemd             # systemd-analyze, systemd-sysusers (unit checks)
  man-db              # systemd-analyze verify checks the unit's man pages
  passwd
)
apps=(
  clinfo
  clpeak
  clblast-utils
  python3-pyopencl
  python-pyopencl-doc  # pyopencl's test files
  python3-pytest
  hashcat              # its MD5 mask attack
  python3-opencv       # OpenCV's DNN module on its OpenCL target
  python3-onnx         # writes the model it runs
  ffmpeg               # its OpenCL video filters
  python3-simtk        # OpenMM's installation test
  libopenmm-plugins    # OpenMM's OpenCL platform
  piglit               # its OpenCL API and kernel tests
)
plots=(
  gnuplot-nox
)
demo=(
  pocl-opencl-icd
  ocl-icd-opencl-dev
  opencl-headers
  gnuplot-nox
)
cluster=(
  python3-jsonschema  # the CDI spec against the CDI schema
  golang-github-container-orchestrated-devices-container-device-interface-dev  # that schema
  python3-yaml        # the Kubernetes manifests
  podman              # CDI in a real container runtime (runc: crun fails here)
  runc
  slurmctld           # a real single-node Slurm for the SPANK plugin
  slurmd
  slurm-client
  munge
  libslurm-dev        # spank.h
)
conformance=(
  g++                 # the OpenCL CTS and the Level Zero conformance tests are C++
  spirv-tools         # spirv-as: the CTS's test_compiler builds SPIR-V at build time
  gdb                 # the stacks of a hung subtest's threads
  libgtest-dev        # the Level Zero tests: googletest's sources
  libgmock-dev
  libboost-log1.81-dev
  libboost-program-options1.81-dev
  libboost-timer1.81-dev
  libboost-chrono1.81-dev
  libboost-system1.81-dev
  libboost-serialization1.81-dev
  libpng-dev
)
package=(
  dpkg-dev  # dpkg-shlibdeps, for the package's Depends
  file
  lintian
)

usage() {
  echo "usage: $0 [--install] [--test] [--apps] [--plots] [--demo] [--package] [--cluster] [--conformance] [--optional] [--list]" >&2
  exit 2
}

install=0
list=0
want=("${build[@]}")
for arg in "$@"; do
  case "$arg" in
    --install) install=1 ;;
    --list) list=1 ;;
    --test) want+=("${test[@]}") ;;
    --apps) want+=("${apps[@]}") ;;
    --plots) want+=("${plots[@]}") ;;
    --demo) want+=("${demo[@]}") ;;
    --package) want+=("${package[@]}") ;;
    --cluster) want+=("${cluster[@]}") ;;
    --conformance) want+=("${test[@]}" "${conformance[@]}") ;;
    --optional) want+=("${test[@]}" "${apps[@]}" "${plots[@]}" "${package[@]}" "${cluster[@]}"
                       "${conformance[@]}") ;;
    *) usage ;;
  esac
done
# Each package once, in the order given.
mapfile -t want < <(printf '%s\n' "${want[@]}" | awk '!seen[$0]++')
if [ "$list" -eq 1 ]; then
  printf '%s\n' "${want[@]}"
  exit 0
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$install" -eq 1 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null && sudo=(sudo) || sudo=(false)
  fi
  if [ "${sudo[0]:-}" != false ]; then
    echo "tools/deps.sh: installing ${missing[*]}${sudo:+ (with sudo)}" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    exit 0
  fi
fi
echo "xsched needs these Debian packages: ${missing[*]}" >&2
echo "install them with:  sudo apt-get install ${missing[*]}" >&2
exit 1
