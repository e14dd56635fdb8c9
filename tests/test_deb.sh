#!/usr/bin/env bash
# The Debian package on this machine: lintian finds no error in it; it
# holds what it should (programs, shims, libxsched, man pages, unit,
# sysusers entry, bash completion, the configuration as a conffile) and
# depends on no vendor library; `dpkg -i` works where PID 1 is not systemd,
# creates the group and enables the unit, which verifies without a
# message; the installed daemon checks its configuration and, started
# directly, schedules a program run under the installed `xschedctl run
# --priority 5` (tests/test_run.sh), and its `xschedctl cdi generate`
# mounts the installed shims; `dpkg --purge` leaves no file of the
# package behind.
# It installs and purges a package on this machine, so it runs only as root
# and when asked to (XSCHED_TEST_DEB=1, as CI does); else it exits 77.
#   tests/test_deb.sh DEB BUILD_DIR
# BUILD_DIR: a build of the same tree (cu_load and the simulated driver
# come from it).
set -u

deb=$(realpath "${1:?usage: test_deb.sh DEB BUILD_DIR}")
build=$(realpath "${2:?usage: test_deb.sh DEB BUILD_DIR}")
src=$(cd "$(dirname "$0")/.." && pwd)

skip() { echo "SKIP: $*"; exit 77; }
[[ ${XSCHED_TEST_DEB:-} == 1 ]] || skip "installs a package on this machine; set XSCHED_TEST_DEB=1"
[[ $(id -u) == 0 ]] || skip "needs root"
command -v dpkg >/dev/null || skip "no dpkg"
if dpkg-query -W -f='${Status}' xsched 2>/dev/null | grep -q installed; then
	skip "a package xsched is already installed here; not touching it"
fi

tmp=$(mktemp -d)
installed=0
cleanup() {
	[[ $installed == 1 ]] && dpkg --purge xsched >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
# A private simulated device: the machine's default one may be another
# build's, of another layout version, or busy with other work.
export XSCHED_SIM_DIR=$tmp
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

# --- the package as a file -----------------------------------------------
if command -v lintian >/dev/null; then
	lintian --tag-display-limit 0 "$deb" >"$tmp/lintian" 2>&1
	sed 's/^/  lintian: /' "$tmp/lintian"
	grep -q '^E: ' "$tmp/lintian" && fail "lintian reports errors"
else
	echo "SKIP: lintian not installed (apt-get install lintian)"
fi

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/contents"
for f in /usr/sbin/xschedd /usr/bin/xschedctl \
	"/usr/lib/$multiarch/xsched/libxsched-cuda.so" \
	"/usr/lib/$multiarch/xsched/libxsched-opencl.so" \
	"/usr/lib/$multiarch/xsched/libxsched-levelzero.so" \
	"/usr/lib/$multiarch/libxsched.so.0" "/usr/lib/$multiarch/pkgconfig/xsched.pc" \
	/usr/include/xsched/xsched.h /usr/include/xsched/sim.h /usr/share/man/man1/xschedctl.1.gz \
	/usr/share/man/man8/xschedd.8.gz /lib/systemd/system/xschedd.service \
	/usr/lib/sysusers.d/xsched.conf /etc/xsched/xschedd.conf \
	/usr/share/bash-completion/completions/xschedctl /usr/share/doc/xsched/copyright \
	/usr/share/doc/xsched/kubernetes/xschedd.yaml /usr/share/doc/xsched/kubernetes/example-pods.yaml \
	/usr/share/doc/xsched/kubernetes/Containerfile; do
	grep -qx -- "$f" "$tmp/contents" || fail "the package lacks $f"
done
# The SPANK plugin where Debian's Slurm keeps its plugins, when it was built.
if [[ -e $build/src/slurm/xsched_spank.so ]]; then
	grep -qx "/usr/lib/$multiarch/slurm-wlm/xsched_spank.so" "$tmp/contents" ||
		fail "the package lacks /usr/lib/$multiarch/slurm-wlm/xsched_spank.so"
fi
dpkg-deb -e "$deb" "$tmp/control"
grep -qx /etc/xsched/xschedd.conf "$tmp/control/conffiles" ||
	fail "/etc/xsched/xschedd.conf is not a conffile"
depends=$(dpkg-deb -f "$deb" Depends Pre-Depends Recommends)
echo "$depends" | grep -q 'libinih' || fail "no dependency on libinih: $depends"
if echo "$depends" | grep -qiE 'opencl|pocl|libze|cuda|nvidia'; then
	fail "a vendor library is a dependency: $depends"
fi

# --- install ------------------------------------------------------------
if ! dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then
	fail "dpkg -i failed"
	sed 's/^/  /' "$tmp/dpkg.log"
	exit 1
fi
installed=1
# The package's files and links (its directories may be shared).
dpkg -L xsched | while read -r f; do [[ -d $f ]] || echo "$f"; done >"$tmp/files"
[[ -s $tmp/files ]] || fail "dpkg -L xsched lists no file"
getent group xsched >/dev/null || fail "no group xsched after installation"
[[ -L /etc/systemd/system/multi-user.target.wants/xschedd.service ]] ||
	fail "xschedd.service not enabled"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify /lib/systemd/system/xschedd.service >"$tmp/verify" 2>&1 ||
		fail "systemd-analyze verify failed on the installed unit"
	[[ -s $tmp/verify ]] && fail "systemd-analyze verify printed: $(cat "$tmp/verify")"
fi

/usr/sbin/xschedd --check-config >"$tmp/check" 2>&1 ||
	fail "xschedd --check-config on the installed configuration: $(cat "$tmp/check")"
printf '[policy]\nname = nosuchpolicy\n' >"$tmp/bad.conf"
/usr/sbin/xschedd --check-config --config "$tmp/bad.conf" >"$tmp/check" 2>&1
[[ $? == 1 ]] || fail "xschedd --check-config accepted a bad configuration"

# The installed daemon (its installed configuration, private sockets) and
# the installed xschedctl, which finds the installed shims.
bash "$src/tests/test_run.sh" --ctl /usr/bin/xschedctl --daemon /usr/sbin/xschedd \
	--config /etc/xsched/xschedd.conf --load "$build/bench/cu_load" \
	--driver "$build/src/sim/cuda/libcuda.so.1" --shim-dir "/usr/lib/$multiarch/xsched" ||
	fail "a program under the installed xschedctl run did not register"

# The installed xschedctl's CDI spec mounts the installed shims.
/usr/bin/xschedctl cdi generate >"$tmp/cdi.json" 2>"$tmp/cdi.err" ||
	fail "the installed xschedctl cdi generate: $(cat "$tmp/cdi.err")"
grep -q "\"hostPath\":\"/usr/lib/$multiarch/xsched/libxsched-cuda.so\"" "$tmp/cdi.json" ||
	fail "the installed CDI spec does not mount /usr/lib/$multiarch/xsched/libxsched-cuda.so"

# --- purge --------------------------------------------------------------
if ! dpkg --purge xsched >"$tmp/dpkg.log" 2>&1; then
	fail "dpkg --purge failed"
	sed 's/^/  /' "$tmp/dpkg.log"
fi
installed=0
while read -r f; do
	if [[ -L $f || -f $f ]]; then
		fail "left after purge: $f"
	fi
done <"$tmp/files"
[[ ! -e /etc/xsched ]] || fail "/etc/xsched left after purge"
left=$(find /etc/systemd /var/lib/systemd/deb-systemd-helper-enabled \
	/var/lib/systemd/deb-systemd-helper-masked -name '*xschedd*' 2>/dev/null)
[[ -z $left ]] || fail "systemd state left after purge: $left"

[[ $failures == 0 ]] && echo "ok: Debian package"
[[ $failures == 0 ]]
