#!/usr/bin/env bash
# `xschedctl run` end to end: a plain CUDA driver-API program (cu_load on
# the simulated driver, linked with nothing of xsched's) started under
# `xschedctl run --priority 5` registers its queues with a private xschedd
# (seen in `xschedctl list -o json`, with the hint), because run found the
# CUDA shim next to xschedctl and preloaded it. Used for the build tree
# (CTest) and for an installed xschedctl (tests/test_deb.sh).
#   tests/test_run.sh --ctl XSCHEDCTL --daemon XSCHEDD --load CU_LOAD
#                     --driver LIBCUDA [--shim-dir DIR] [--config FILE]
# --driver: the simulated libcuda.so.1 the shim forwards to; --shim-dir:
# where run must have found the shim (checked in the child's mappings);
# --config: the daemon's configuration (default /dev/null: built-in values).
set -u

ctl= daemon= load= driver= shim_dir= config=/dev/null
while [[ $# -gt 0 ]]; do
	case $1 in
	--ctl) ctl=$2 ;;
	--daemon) daemon=$2 ;;
	--load) load=$2 ;;
	--driver) driver=$2 ;;
	--shim-dir) shim_dir=$2 ;;
	--config) config=$2 ;;
	*) echo "usage: $0 --ctl X --daemon X --load X --driver X [--shim-dir DIR]" >&2; exit 2 ;;
	esac
	shift 2
done
for f in "$ctl" "$daemon" "$load" "$driver"; do
	[[ -n $f && -e $f ]] || { echo "FAIL: missing file '$f'"; exit 1; }
done

tmp=$(mktemp -d)
dpid= cpid=
cleanup() {
	[[ -n $cpid ]] && kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
	[[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# until_ok SECONDS CMD...: runs CMD every 50 ms until it succeeds.
until_ok() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.05
	done
}

export XSCHED_SIM_DIR=$tmp XSCHED_SIM_DEVICE=xs-run-test
unset LD_PRELOAD XSCHED_SHIM_DIR XSCHED_PRIORITY XSCHED_SCHEDULER XSCHED_DISABLE
"$daemon" --foreground --config "$config" --socket "$tmp/c.sock" \
	--control-socket "$tmp/ctl.sock" 2>"$tmp/daemon.log" &
dpid=$!
until_ok 20 test -S "$tmp/ctl.sock" || { fail "daemon not listening"; cat "$tmp/daemon.log"; exit 1; }

"$ctl" run --dry-run --api cuda >"$tmp/dry" 2>&1 || fail "run --dry-run: $(cat "$tmp/dry")"
echo "dry run: $(cat "$tmp/dry")"
if [[ -n $shim_dir ]] && ! grep -q "^LD_PRELOAD=$(realpath "$shim_dir")/libxsched-cuda.so$" "$tmp/dry"; then
	fail "run would not preload $shim_dir/libxsched-cuda.so"
fi

XSCHED_CUDA_LIB=$(realpath "$driver") "$ctl" --socket "$tmp/c.sock" run --priority 5 -- \
	"$load" --flood --cmd-us 1000 --duration-s 30 >"$tmp/load.out" 2>&1 &
cpid=$!

# registered: the child's queues are listed with priority 5.
registered() {
	"$ctl" --control "$tmp/ctl.sock" list -o json >"$tmp/list.json" 2>"$tmp/list.err" &&
	python3 - "$tmp/list.json" "$cpid" <<'PY'
import json, sys
qs = [q for q in json.load(open(sys.argv[1]))["queues"] if q["pid"] == int(sys.argv[2])]
sys.exit(0 if qs and all(q["priority"] == 5 for q in qs) else 1)
PY
}
if until_ok 20 registered; then
	echo "ok: pid $cpid registered: $(cat "$tmp/list.json")"
	grep -q 'libxsched-cuda.so' "/proc/$cpid/maps" || fail "the shim is not mapped in the child"
	if [[ -n $shim_dir ]] && ! grep -q " $(realpath "$shim_dir")/libxsched-cuda.so$" "/proc/$cpid/maps"; then
		fail "the child's shim is not the one in $shim_dir"
	fi
else
	fail "the child (pid $cpid) never showed up with priority 5"
	sed 's/^/  /' "$tmp/list.json" "$tmp/list.err" "$tmp/load.out" "$tmp/daemon.log" 2>/dev/null
fi

[[ $failures == 0 ]] && echo "ok: xschedctl run"
[[ $failures == 0 ]]
