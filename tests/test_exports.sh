#!/usr/bin/env bash
# A shim exports exactly what its table of entry points lists, and that is
# exactly the vendor library's API: every function of the vendor library
# matching the API's names, with its symbol version, and nothing else but
# the shim's own dlopen/dlsym hooks (the installed shim carries no test
# diagnostics). Reads the dynamic symbol tables with nm; exits 77 (skipped)
# where nm is missing, and where the vendor library is, once the exports
# outside the API were checked (the table was made from that library).
#   test_exports.sh NM SHIM VENDOR_LIB API_REGEX EXTRA_REGEX
#     NM: the nm program; SHIM: the shim's .so; VENDOR_LIB: the library it
#     stands for; API_REGEX: the API's function names (e.g. '^cu');
#     EXTRA_REGEX: the shim's exports outside the API.
set -uo pipefail
nm=$1 shim=$2 vendor=$3 api=$4 extra=$5

if ! command -v "$nm" >/dev/null; then
  echo "skipped: no $nm"
  exit 77
fi

# Defined functions, name@version (no version: the bare name).
exports() {
  "$nm" -D --defined-only --with-symbol-versions "$1" |
    awk '$2 == "T" || $2 == "W" || $2 == "i" { sub(/@@/, "@", $3); print $3 }' | sort -u
}

ours=$(exports "$shim") || exit 1
others=$(grep -vE "$api" <<<"$ours" | grep -vE "$extra")
if [ -n "$others" ]; then
  echo "$(basename "$shim") exports more than its API and its own hooks:"
  echo "$others" | sed 's/^/  /'
  exit 1
fi
if [ ! -e "$vendor" ]; then
  echo "$(basename "$shim"): nothing outside its API and hooks; skipped: no $vendor to compare with"
  exit 77
fi
theirs=$(exports "$vendor" | grep -E "$api") || exit 1
rc=0
missing=$(comm -13 <(grep -E "$api" <<<"$ours") <(echo "$theirs"))
if [ -n "$missing" ]; then
  echo "$(basename "$vendor") exports what $(basename "$shim") does not:"
  echo "$missing" | sed 's/^/  /'
  rc=1
fi
surplus=$(comm -23 <(grep -E "$api" <<<"$ours") <(echo "$theirs"))
if [ -n "$surplus" ]; then
  echo "$(basename "$shim") exports what $(basename "$vendor") does not:"
  echo "$surplus" | sed 's/^/  /'
  rc=1
fi
[ $rc -eq 0 ] && echo "$(basename "$shim"): $(grep -cE "$api" <<<"$ours") functions of $(basename "$vendor")"
exit $rc
