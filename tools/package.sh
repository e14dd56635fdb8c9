#!/usr/bin/env bash
# Builds the Debian package xsched_VERSION_ARCH.deb with CPack, from a
# build configured for the distribution's layout (prefix /usr: /etc, the
# systemd unit directory), and checks it with lintian when installed.
# Installs what it needs first (tools/deps.sh --package).
#   tools/package.sh [cmake options...]
# Environment: BUILD_DIR (default build-deb), JOBS (default nproc).
# Prints the package's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --install --package
build=${BUILD_DIR:-build-deb}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$jobs"
rm -f "$build"/xsched_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/xsched_*.deb)
if command -v lintian >/dev/null; then
  # lintian warns when run as root; its findings go to stdout.
  lintian --tag-display-limit 0 "$deb" 2>/dev/null | sed 's/^/lintian: /' || true
fi
echo "$deb"
