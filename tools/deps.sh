#!/usr/bin/env bash
# Checks (and, as root, installs with apt-get) what building and testing
# xsched needs on Debian 12. Sourced by demo.sh and test.sh; also run by CI.
#   tools/deps.sh [--install] [--optional] [--plots]
# --optional also installs PoCL/OpenCL, Level Zero, libbpf, clang and gnuplot,
# and the real OpenCL applications of tests/test_cl_apps.sh; --plots only
# gnuplot (the demo's figures).
set -euo pipefail

required=(build-essential cmake ninja-build pkg-config libcmocka-dev libinih-dev)
optional=(pocl-opencl-icd ocl-icd-opencl-dev opencl-headers libze-dev libze1
          libbpf-dev bpftool clang llvm libclang-rt-14-dev gnuplot-nox systemd passwd
          clinfo clpeak clblast-utils python3-pyopencl python-pyopencl-doc python3-pytest)

install=0
want=("${required[@]}")
for arg in "$@"; do
  case "$arg" in
    --install) install=1 ;;
    --optional) want+=("${optional[@]}") ;;
    --plots) want+=(gnuplot-nox) ;;
    *) echo "usage: $0 [--install] [--optional] [--plots]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$install" -eq 1 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
      echo "installing ${missing[*]} with sudo" >&2
    else
      sudo=(false)
    fi
  fi
  if [ "${sudo[0]:-}" != false ]; then
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    exit 0
  fi
fi
echo "xsched needs these Debian packages: ${missing[*]}" >&2
echo "install them with:  sudo apt-get install ${missing[*]}" >&2
exit 1
