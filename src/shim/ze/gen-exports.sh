#!/bin/sh
# Regenerates ze_exports.def from the real Level Zero loader: every C
# function it exports (ze*, zel*, zes*, zet*). The loader's C++ internals
# (loader::*, ze_lib::*) are left out: they are not API, and the loader
# calls them on itself while it is being loaded.
# Usage: gen-exports.sh [path-to-libze_loader.so.1] > ze_exports.def
lib=${1:-/usr/lib/x86_64-linux-gnu/libze_loader.so.1}
echo "/* Every function the Level Zero loader exports, one per line, from the"
echo " * dynamic symbol table of $(basename "$lib") ($(basename "$(readlink -f "$lib")")), by gen-exports.sh."
echo " * XS_ZE_EXPORT(name) is defined by the includer. */"
nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^ze/ { print "XS_ZE_EXPORT(" $3 ")" }' | sort
