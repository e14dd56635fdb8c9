#!/usr/bin/env bash
# Regenerates src/shim/cuda/cu_exports.def, the list of every function the
# CUDA driver exports, from the dynamic symbol table of a libcuda (by
# default the toolkit's stub). Run by hand when a new CUDA release adds
# entry points; the build uses the committed file and never needs CUDA.
#   tools/gen-cuda-exports.sh [/path/to/libcuda.so]
set -euo pipefail
lib=${1:-/usr/local/cuda/lib64/stubs/libcuda.so}
out=$(dirname "$0")/../src/shim/cuda/cu_exports.def
{
  echo "/* Every function the CUDA driver exports, one per line, from the"
  echo " * dynamic symbol table of $(basename "$lib") (tools/gen-cuda-exports.sh)."
  echo " * XS_CU_EXPORT(name) is defined by the includer. */"
  nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | grep '^cu' | sort -u |
    sed 's/.*/XS_CU_EXPORT(&)/'
} > "$out"
echo "wrote $(grep -c XS_CU_EXPORT "$out") entries to $out"
