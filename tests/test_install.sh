#!/usr/bin/env bash
# The install layout: `cmake --install BUILD --prefix P` and
# `DESTDIR=D cmake --install BUILD` write every file under P (or D), as
# the install manifest says and the trees confirm, with each piece where
# docs/install.md says: programs, shims in <libdir>/xsched/, libxsched with
# its headers and pkg-config file (a program is compiled and run against the
# installed copy), man pages, bash completion, unit, sysusers entry and
# configuration. The unit installed under P names P's daemon and passes
# `systemd-analyze verify` without a single message; xschedctl from P
# finds P's shims; the uninstall script removes every installed file.
#   tests/test_install.sh BUILD_DIR LIBDIR
# LIBDIR: CMAKE_INSTALL_LIBDIR of the build (relative to the prefix).
# $XS_TEST_CFLAGS: extra flags for the program (a sanitized build's).
set -u

build=$(realpath "${1:?usage: test_install.sh BUILD_DIR LIBDIR}")
libdir=${2:?usage: test_install.sh BUILD_DIR LIBDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Installs of the same build must not interleave (the manifest is shared).
exec 9>"$build/.install-test.lock"
flock 9

# tree_matches ROOT MANIFEST [STRIP]: the files and links under ROOT are
# exactly the manifest's (each with ROOT in front when given STRIP=root).
tree_matches() {
	local root=$1 manifest=$2 mode=${3:-}
	if [[ $mode == root ]]; then
		sed "s|^|$root|" "$manifest" | sed 's|//*|/|g' | sort >"$tmp/want"
	else
		sed 's|//*|/|g' "$manifest" | sort >"$tmp/want"
	fi
	find "$root" \( -type f -o -type l \) | sort >"$tmp/have"
	if ! diff "$tmp/want" "$tmp/have" >"$tmp/diff"; then
		fail "files under $root differ from the manifest:"
		sed 's/^/  /' "$tmp/diff"
	fi
}

# expect_file ROOT GLOB WHAT: one installed file matches ROOT/GLOB.
expect_file() {
	local hits
	# shellcheck disable=SC2086 # the glob is meant to expand
	hits=$(compgen -G "$1/$2" | head -1)
	[[ -n $hits ]] || fail "no $3 at $1/$2"
}

# check_pc ROOT PCDIR [SYSROOT]: a program built with the flags of the
# installed xsched.pc (with pkg-config's sysroot when given) runs against
# the installed libxsched.
check_pc() {
	local root=$1 pcdir=$2 sysroot=${3:-} flags
	if ! command -v pkg-config >/dev/null || ! command -v cc >/dev/null; then
		echo "SKIP: pkg-config file check (no pkg-config or cc)"
		return
	fi
	cat >"$tmp/use.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <xsched/sim.h>
int main(void)
{
	int (*volatile kernel)(uint64_t, xs_cmd **) = xs_sim_kernel;

	return puts(xs_strerror(-EINVAL)) < 0 || !kernel;
}
C
	flags=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$sysroot pkg-config --cflags --libs xsched)
	# shellcheck disable=SC2086 # pkg-config's words
	# shellcheck disable=SC2086 # flags are words
	if cc ${XS_TEST_CFLAGS:-} -o "$tmp/use" "$tmp/use.c" $flags >"$tmp/cc.log" 2>&1 &&
		LD_LIBRARY_PATH=$root "$tmp/use" >"$tmp/use.out"; then
		LD_LIBRARY_PATH=$root ldd "$tmp/use" | grep -q "$root/libxsched.so" ||
			fail "the program did not load $root/libxsched.so"
		echo "ok: a program built with xsched.pc ($flags): $(cat "$tmp/use.out")"
	else
		fail "compiling against the installed libxsched ($flags):"
		sed 's/^/  /' "$tmp/cc.log"
	fi
}

# --- cmake --install --prefix P ------------------------------------------
p=$tmp/p
if ! cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1; then
	fail "cmake --install --prefix failed"
	sed 's/^/  /' "$tmp/install.log"
fi
cp "$build/install_manifest.txt" "$tmp/manifest.p"
outside=$(grep -v "^$p/" "$tmp/manifest.p")
[[ -z $outside ]] || fail "installed outside $p: $outside"
tree_matches "$p" "$tmp/manifest.p"

expect_file "$p" "bin/xschedctl" "xschedctl"
expect_file "$p" "$libdir/libxsched.so.[0-9]*" "libxsched"
expect_file "$p" "$libdir/pkgconfig/xsched.pc" "pkg-config file"
expect_file "$p" "include/xsched/xsched.h" "public header"
expect_file "$p" "include/xsched/sim.h" "simulated XPU header"
expect_file "$p" "include/xsched/policy.h" "policy header"
expect_file "$p" "share/man/man1/xschedctl.1" "xschedctl(1)"
expect_file "$p" "share/bash-completion/completions/xschedctl" "bash completion"
expect_file "$p" "share/doc/xsched/kubernetes/xschedd.yaml" "Kubernetes manifests"
expect_file "$p" "$libdir/xsched/libxsched-cuda.so" "CUDA shim"
[[ -e $build/src/shim/opencl/libxsched-opencl.so ]] &&
	expect_file "$p" "$libdir/xsched/libxsched-opencl.so" "OpenCL shim"
[[ -e $build/src/shim/ze/libxsched-levelzero.so ]] &&
	expect_file "$p" "$libdir/xsched/libxsched-levelzero.so" "Level Zero shim"
[[ -e $build/src/slurm/xsched_spank.so ]] &&
	expect_file "$p" "$libdir/slurm-wlm/xsched_spank.so" "SPANK plugin"
daemon=$(compgen -G "$p/*/xschedd" | head -1)
if [[ -e $build/src/daemon/xschedd ]]; then
	[[ -x $daemon ]] || fail "no xschedd installed"
	expect_file "$p" "share/man/man8/xschedd.8" "xschedd(8)"
	expect_file "$p" "etc/xsched/xschedd.conf" "configuration"
	expect_file "$p" "lib/sysusers.d/xsched.conf" "sysusers entry"
	unit=$(compgen -G "$p/lib/systemd/system/xschedd.service" | head -1)
	[[ -n $unit ]] || fail "no unit under $p/lib/systemd/system"
	"$daemon" --check-config --config "$p/etc/xsched/xschedd.conf" >"$tmp/check" 2>&1 ||
		fail "the installed daemon rejects the installed configuration: $(cat "$tmp/check")"
fi

# The unit names the daemon installed under P and verifies silently (man
# pages looked up in P).
if [[ -n ${unit:-} ]]; then
	grep -qx "ExecStart=$daemon --foreground" "$unit" ||
		fail "unit's $(grep ^ExecStart= "$unit") is not $daemon"
	if command -v systemd-analyze >/dev/null && command -v man >/dev/null; then
		MANPATH=$p/share/man systemd-analyze verify "$unit" >"$tmp/verify" 2>&1 ||
			fail "systemd-analyze verify failed"
		if [[ -s $tmp/verify ]]; then
			fail "systemd-analyze verify printed:"
			sed 's/^/  /' "$tmp/verify"
		fi
	else
		echo "SKIP: systemd-analyze verify (systemd-analyze or man missing)"
	fi
fi

# xschedctl from P preloads P's shims.
"$p/bin/xschedctl" run --dry-run >"$tmp/dry" 2>&1 || fail "P's xschedctl run: $(cat "$tmp/dry")"
grep -q "^LD_PRELOAD=$p/$libdir/xsched/libxsched-cuda.so" "$tmp/dry" ||
	fail "P's xschedctl would not preload P's shims: $(cat "$tmp/dry")"

# A relocatable xsched.pc (any prefix but /usr) works where it was put.
pc=$p/$libdir/pkgconfig/xsched.pc
if grep -q '^prefix=${pcfiledir}' "$pc"; then
	check_pc "$p/$libdir" "$p/$libdir/pkgconfig"
fi

# The uninstall script removes what the manifest lists.
cmake -DMANIFEST="$tmp/manifest.p" -P "$src/cmake/Uninstall.cmake" >"$tmp/uninstall.log" 2>&1 ||
	fail "uninstall failed: $(cat "$tmp/uninstall.log")"
left=$(find "$p" \( -type f -o -type l \))
[[ -z $left ]] || fail "left after uninstall: $left"

# --- DESTDIR=D cmake --install -------------------------------------------
d=$tmp/d
if ! DESTDIR=$d cmake --install "$build" >"$tmp/install.log" 2>&1; then
	fail "DESTDIR install failed"
	sed 's/^/  /' "$tmp/install.log"
fi
tree_matches "$d" "$build/install_manifest.txt" root
# A xsched.pc with the configured prefix works in DESTDIR's image of it.
pc=$(grep '/pkgconfig/xsched.pc$' "$build/install_manifest.txt")
if ! grep -q '^prefix=${pcfiledir}' "$d$pc"; then
	check_pc "$d$(dirname "$(dirname "$pc")")" "$d$(dirname "$pc")" "$d"
fi
if [[ -n ${unit:-} ]]; then
	dunit=$(find "$d" -name xschedd.service | head -1)
	exec_start=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$dunit")
	[[ -x $d$exec_start ]] || fail "DESTDIR unit's ExecStart $exec_start is not the installed daemon"
fi

[[ $failures == 0 ]] && echo "ok: install layout"
[[ $failures == 0 ]]
