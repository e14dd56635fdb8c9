#!/usr/bin/env bash
# The bypass detector (src/daemon/observe.c, src/bpf/bypass.bpf.c) end to
# end: a private xschedd with [observe] bypass = yes and the simulated CUDA
# driver among the probed libraries, then
#  - cu_load on the simulated driver without the shim is listed by
#    `xschedctl bypass` within 2 s of its start, and gone after it exits;
#  - the same under the CUDA shim is seen (listed as scheduled by --all)
#    but never as a bypass;
#  - cl_load on PoCL without the OpenCL shim is listed, with it not;
#  - a process opening an accelerator device node (a character device named
#    renderD*, made here with mknod with /dev/null's numbers) is listed;
#  - 50 short-lived processes doing so at once leave the table at most
#    bypass_max entries (the rest counted as untracked), and empty once
#    they exited.
# Needs root and a kernel that loads the programs; exits 77 (skipped)
# otherwise, or when xsched was built without eBPF.
#   tests/test_bypass.sh   (paths come from the environment, set by CTest)
set -u

: "${XSD_BIN:?}" "${XSCTL_BIN:?}" "${XS_CU_LOAD:?}" "${XS_SIM_CUDA_DIR:?}" "${XS_CUDA_SHIM:?}"
XS_CL_LOAD=${XS_CL_LOAD:-}
XS_CL_SHIM=${XS_CL_SHIM:-}
XS_SAN_RT=${XS_SAN_RT:-}
XS_POCL_CACHE=${XS_POCL_CACHE:-}

[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (eBPF)"; exit 77; }

# shellcheck source=sh_util.sh
. "$(dirname "$0")/sh_util.sh"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
max=16
private_daemon "[observe]
bypass = yes
bypass_grace_ms = 1000
bypass_max = $max
libraries = $XS_SIM_CUDA_DIR/libcuda.so.1" -v
"$XSCTL_BIN" bypass >"$tmp/out" 2>&1
rc=$?
if [[ $rc != 0 ]]; then
	if grep -qE 'without eBPF|could not load' "$tmp/out"; then
		echo "SKIP: $(cat "$tmp/out")"
		grep -i 'bypass' "$tmp/log"
		exit 77
	fi
	echo "FAIL: xschedctl bypass exited $rc: $(cat "$tmp/out")"
	cat "$tmp/log"
	exit 1
fi
grep -q 'bypass detection on' "$tmp/log" || fail "the daemon did not say the detector is on"

# state PID: the state `xschedctl bypass --all` gives PID, or "none".
state() {
	"$XSCTL_BIN" bypass --all -o json 2>/dev/null |
		grep -o "{\"pid\":$1,[^}]*" | grep -o '"state":"[a-z]*"' | cut -d'"' -f4 |
		grep . || echo none
}
# count: the processes in the table (of the whole node: the detector sees
# every process, other tests' too).
count() {
	"$XSCTL_BIN" bypass --all -o json 2>/dev/null | grep -o '{"pid":' | wc -l
}
# count_of PID...: how many of these are in the table.
count_of() {
	local pids
	pids=$(printf '%s|' "$@")
	"$XSCTL_BIN" bypass --all -o json 2>/dev/null | grep -oE "\{\"pid\":(${pids%|})," | wc -l
}
# wait_state PID STATE MS: true once PID has STATE, within MS.
wait_state() {
	local end=$(($(now_ms) + $3))
	while (($(now_ms) < end)); do
		[[ $(state "$1") == "$2" ]] && return 0
		sleep 0.05
	done
	[[ $(state "$1") == "$2" ]]
}
# never_bypass PID MS: PID is not a bypass during MS (and after: its state).
never_bypass() {
	local end=$(($(now_ms) + $2)) s
	while (($(now_ms) < end)); do
		s=$(state "$1")
		[[ $s == bypass ]] && return 1
		sleep 0.1
	done
	return 0
}
preload() { echo "${XS_SAN_RT:+$XS_SAN_RT }$1"; }

# --- CUDA without the shim: listed within 2 s, gone after its exit --------
t0=$(now_ms)
LD_LIBRARY_PATH=$XS_SIM_CUDA_DIR "$XS_CU_LOAD" --flood 4 >/dev/null 2>&1 &
pid=$!
kids+=("$pid")
if wait_state "$pid" bypass 2000; then
	echo "ok: cu_load without the shim listed after $(($(now_ms) - t0)) ms"
	"$XSCTL_BIN" bypass | grep -E "^ *$pid .*cuda +libcuda.so.1:cu" >/dev/null ||
		fail "the table does not show pid $pid using cuda: $("$XSCTL_BIN" bypass)"
	"$XSCTL_BIN" metrics | grep -q "^xsched_bypass_process_info{pid=\"$pid\"" ||
		fail "no xsched_bypass_process_info series for pid $pid"
	"$XSCTL_BIN" metrics | grep -qE '^xsched_bypass_processes [1-9]' ||
		fail "xsched_bypass_processes is not positive"
else
	fail "cu_load without the shim (pid $pid) not listed within 2 s: state $(state "$pid")"
fi
wait "$pid"
t0=$(now_ms)
wait_state "$pid" none 2000 || fail "pid $pid still listed 2 s after its exit"
grep -q "bypass: pid $pid (cu_load" "$tmp/log" || fail "no log line for pid $pid"

# --- CUDA under the shim: seen, never a bypass ------------------------------
LD_PRELOAD=$(preload "$XS_CUDA_SHIM") LD_LIBRARY_PATH=$XS_SIM_CUDA_DIR \
	"$XS_CU_LOAD" --flood 3 >/dev/null 2>&1 &
pid=$!
kids+=("$pid")
never_bypass "$pid" 2500 || fail "cu_load under the shim (pid $pid) listed as a bypass"
[[ $(state "$pid") == scheduled ]] ||
	fail "cu_load under the shim (pid $pid) not seen as scheduled: $(state "$pid")"
wait "$pid"

# --- OpenCL on PoCL ----------------------------------------------------------
if [[ -x $XS_CL_LOAD && -f $XS_CL_SHIM ]]; then
	export POCL_CACHE_DIR=${XS_POCL_CACHE:-$tmp/pocl}
	"$XS_CL_LOAD" --flood --duration-s 3 --iters 100 --cmd-us 100 >/dev/null 2>&1 &
	pid=$!
	kids+=("$pid")
	wait_state "$pid" bypass 2500 ||
		fail "cl_load without the shim (pid $pid) not listed: $(state "$pid")"
	wait "$pid"
	LD_PRELOAD=$(preload "$XS_CL_SHIM") \
		"$XS_CL_LOAD" --flood --duration-s 3 --iters 100 --cmd-us 100 >/dev/null 2>&1 &
	pid=$!
	kids+=("$pid")
	never_bypass "$pid" 2500 || fail "cl_load under the shim (pid $pid) listed as a bypass"
	[[ $(state "$pid") == scheduled ]] ||
		fail "cl_load under the shim (pid $pid) not seen as scheduled: $(state "$pid")"
	wait "$pid"
else
	echo "note: OpenCL cases skipped (no cl_load or OpenCL shim in this build)"
fi

# --- a device node ------------------------------------------------------------
mknod "$tmp/renderD250" c 1 3
(exec 3<"$tmp/renderD250"; exec sleep 3) &
pid=$!
kids+=("$pid")
if wait_state "$pid" bypass 2500; then
	"$XSCTL_BIN" bypass -o json | grep -o "{\"pid\":$pid,[^}]*" |
		grep -q '"uses":\["dri"\],"first_use":"renderD250"' ||
		fail "pid $pid: not shown opening renderD250: $("$XSCTL_BIN" bypass -o json)"
else
	fail "a process holding renderD250 (pid $pid) not listed: $(state "$pid")"
fi
kill "$pid"
wait "$pid" 2>/dev/null

# --- 50 short-lived processes: bounded, then empty --------------------------
wave=()
for _ in $(seq 50); do
	(exec 3<"$tmp/renderD250"; exec sleep 1.5) &
	wave+=($!)
done
kids+=("${wave[@]}")
most=0 ours=0
for _ in $(seq 10); do
	n=$(count)
	((n > most)) && most=$n
	n=$(count_of "${wave[@]}")
	((n > ours)) && ours=$n
	sleep 0.1
done
((most <= max)) || fail "the table held $most processes, more than bypass_max = $max"
((ours > 0)) || fail "none of the 50 processes was seen"
"$XSCTL_BIN" metrics | grep -qE '^xsched_bypass_untracked_total [1-9]' ||
	fail "the processes past bypass_max were not counted as untracked"
for p in "${wave[@]}"; do wait "$p" 2>/dev/null; done
end=$(($(now_ms) + 3000))
while (($(count_of "${wave[@]}") > 0 && $(now_ms) < end)); do sleep 0.1; done
n=$(count_of "${wave[@]}")
((n == 0)) || fail "$n of the 50 processes still listed 3 s after they exited"
echo "ok: 50 processes: at most $most in the table (bypass_max $max; $ours of them)," \
	"$n left after they exited"

if ((failures)); then
	echo "--- xschedd log"
	grep -v libbpf "$tmp/log"
	exit 1
fi
echo "PASS"
