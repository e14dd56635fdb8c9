#!/usr/bin/env bash
# The CDI spec of `xschedctl cdi generate` in a real container runtime:
# podman (runc) applies it from /var/run/cdi, and unmodified CUDA programs
# (cu_load on the simulated driver, in an image made with `podman import`
# from a rootfs holding only the program and its libraries: no registry)
# run with `--device xsched.dev/sched=low|high` against a private xschedd
# on the host. Checked: each container's queue is registered with its
# class's priority, under the host pid of the container's process (its
# own pid, 1, beside it) and the container's id from its cgroup path; and
# while the high container floods the shared device, the low container's
# flood is suspended (its completed count stands still) and the high one
# completes commands.
#   tests/test_podman.sh --ctl XSCHEDCTL --daemon XSCHEDD --load CU_LOAD
#                        --driver LIBCUDA --shim-dir DIR
# Needs root (podman's rootful storage, /var/run/cdi). Exits 77 when not
# root or when podman cannot run a container here.
set -u

ctl= daemon= load= driver= shim_dir=
while [[ $# -gt 0 ]]; do
	case $1 in
	--ctl) ctl=$2 ;;
	--daemon) daemon=$2 ;;
	--load) load=$2 ;;
	--driver) driver=$2 ;;
	--shim-dir) shim_dir=$2 ;;
	*) echo "usage: $0 --ctl X --daemon X --load X --driver X --shim-dir DIR" >&2; exit 2 ;;
	esac
	shift 2
done
for f in "$ctl" "$daemon" "$load" "$driver" "$shim_dir/libxsched-cuda.so"; do
	[[ -n $f && -e $f ]] || { echo "FAIL: missing file '$f'"; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (rootful podman, /var/run/cdi)"; exit 77; }
command -v podman >/dev/null || { echo "SKIP: podman is not installed"; exit 77; }
command -v runc >/dev/null || { echo "SKIP: runc is not installed"; exit 77; }

# crun fails on hosts with hybrid cgroups; without systemd as init the
# cgroupfs manager; explicit limits (podman's defaults cannot be set here).
pod=(podman --runtime "$(command -v runc)" --cgroup-manager=cgroupfs --events-backend=file)
run_opts=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none)

# One run at a time on the machine: the spec's devices live in one
# directory, and two specs of one kind naming the same devices conflict.
exec 9>/run/lock/xsched-test-podman.lock
flock -w 600 9 || { echo "FAIL: another test_podman holds the lock"; exit 1; }

tmp=$(mktemp -d)
tag=localhost/xsched-test:$$
spec=/var/run/cdi/xsched-test-$$.json
dpid=
cleanup() {
	"${pod[@]}" rm -f -t 0 xs-test-low-$$ xs-test-high-$$ >/dev/null 2>&1
	"${pod[@]}" rmi -f "$tag" >/dev/null 2>&1
	rm -f "$spec"
	[[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/sh_util.sh"

# --- the image: cu_load, the simulated libcuda.so.1, their libraries ------
root=$tmp/rootfs
mkdir -p "$root"/{bin,lib,lib64,tmp,sim,proc,sys,dev,run,etc}
cp "$load" "$root/bin/cu_load"
cp "$(realpath "$driver")" "$root/lib/libcuda.so.1"
for lib in $(ldd "$load" "$driver" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u); do
	[[ $(basename "$lib") == libcuda.so.1 ]] || cp -L "$lib" "$root/lib/"
done
interp=$(ldd "$load" | awk '$1 ~ /^\/.*ld-linux/ { print $1 }')
[[ -n $interp ]] && cp -L "$interp" "$root/lib64/"
tar -C "$root" -cf "$tmp/rootfs.tar" . || { fail "cannot pack the rootfs"; exit 1; }
if ! "${pod[@]}" import "$tmp/rootfs.tar" "$tag" >"$tmp/import.log" 2>&1; then
	echo "SKIP: podman import fails here: $(tail -3 "$tmp/import.log")"
	exit 77
fi
# podman must be able to run a container at all (usage error of cu_load: 2).
"${pod[@]}" run --rm "${run_opts[@]}" "$tag" /bin/cu_load --frob >"$tmp/probe.log" 2>&1
rc=$?
if [[ $rc != 2 ]]; then
	echo "SKIP: podman cannot run a container here (exit $rc): $(tail -3 "$tmp/probe.log")"
	exit 77
fi

# --- a private daemon and the spec ---------------------------------------
mkdir -p "$tmp/run" "$tmp/ctl" "$tmp/shared"
cat >"$tmp/xsd.conf" <<EOF
[policy]
name = hpf
# A suspended flood stays suspended (no starvation guard turns).
starvation_guard_pct = 0
EOF
"$daemon" --foreground --config "$tmp/xsd.conf" --socket "$tmp/run/c.sock" \
	--control-socket "$tmp/ctl/ctl.sock" 2>"$tmp/daemon.log" &
dpid=$!
until_ok 20 test -S "$tmp/ctl/ctl.sock" || { fail "daemon not listening"; cat "$tmp/daemon.log"; exit 1; }
mkdir -p /var/run/cdi
"$ctl" --socket "$tmp/run/c.sock" cdi generate --config "$tmp/xsd.conf" \
	--shim-dir "$(realpath "$shim_dir")" --output "$spec" 2>"$tmp/gen.err" ||
	{ fail "cdi generate: $(cat "$tmp/gen.err")"; exit 1; }

# start NAME CLASS [PODMAN OPTIONS] -- ARGS...: a detached container of
# class CLASS running cu_load ARGS.
start() {
	local name=$1 class=$2 opts=()
	shift 2
	while [[ $1 != -- ]]; do
		opts+=("$1")
		shift
	done
	shift
	"${pod[@]}" run -d --name "$name" "${run_opts[@]}" "${opts[@]}" --device "xsched.dev/sched=$class" \
		-v "$tmp/shared:/sim" -e XSCHED_SIM_DIR=/sim -e XSCHED_SIM_DEVICE=xs-podman-test \
		-e XSCHED_CUDA_LIB=/lib/libcuda.so.1 "$tag" /bin/cu_load "$@" >"$tmp/$name.id" \
		2>"$tmp/$name.err"
}
list() {
	"$ctl" --control "$tmp/ctl/ctl.sock" list -o json >"$tmp/list.json" 2>"$tmp/list.err"
}
# queue NAME FIELD: FIELD of the working queue (the most commands
# submitted; cu_load also holds an idle one) of container NAME in the last
# list, "" if none. Fields that are the process's (pid, nspid, priority,
# container_id) must agree across its queues, or "mismatch".
queue() {
	/usr/bin/python3 - "$tmp/list.json" "$(cat "$tmp/$1.id")" "$2" <<'PY'
import json, sys
qs = [q for q in json.load(open(sys.argv[1]))["queues"] if q["container_id"] == sys.argv[2]]
field = sys.argv[3]
if not qs:
    print("")
elif field in ("pid", "nspid", "priority", "container_id", "command") and \
        len({json.dumps(q[field]) for q in qs}) > 1:
    print("mismatch")
else:
    print(json.dumps(max(qs, key=lambda q: q["submitted"])[field]))
PY
}
registered() { list && [[ -n $(queue "$1" pid) ]]; }

# --- the low container alone: registered, with its identity ---------------
start xs-test-low-$$ low -- --flood --cmd-us 1000 --duration-s 60 ||
	{ fail "podman run (low): $(cat "$tmp/xs-test-low-$$.err") (specs: $(ls /etc/cdi /var/run/cdi 2>&1))"
	  exit 1; }
low=xs-test-low-$$
if until_ok 30 registered "$low"; then
	host_pid=$("${pod[@]}" inspect --format '{{.State.Pid}}' "$low")
	[[ $(queue "$low" priority) == -10 ]] || fail "low: priority $(queue "$low" priority), expected -10"
	[[ $(queue "$low" pid) == "$host_pid" ]] ||
		fail "low: pid $(queue "$low" pid), expected the host pid $host_pid"
	[[ $(queue "$low" nspid) == 1 ]] || fail "low: nspid $(queue "$low" nspid), expected 1"
	[[ $(queue "$low" command) == '"cu_load"' ]] || fail "low: command $(queue "$low" command)"
	echo "ok: low container $(cut -c1-12 "$tmp/$low.id"): host pid $host_pid, nspid 1, priority -10"
else
	fail "the low container's queue never registered"
	cat "$tmp/list.json" "$tmp/daemon.log"
	"${pod[@]}" logs "$low" 2>&1 | tail -5
	exit 1
fi
# The table shows the short container id.
"$ctl" --control "$tmp/ctl/ctl.sock" list >"$tmp/list.txt" 2>&1
grep -Eq " $(cut -c1-12 "$tmp/$low.id") +1\$" "$tmp/list.txt" ||
	fail "no short container id and nspid in the table: $(cat "$tmp/list.txt")"
# The shim reached the container through the spec's mount.
grep -q '/opt/xsched/lib/libxsched-cuda.so' "/proc/$host_pid/maps" ||
	fail "the shim is not mapped in the container's process"
low_running() { list && [[ $(queue "$low" running) == true && $(queue "$low" completed) -gt 0 ]]; }
until_ok 20 low_running || fail "the low flood does not run alone"

# --- the high container: the low flood is suspended while it works --------
# The simulated device tracks its users by pid, which works within one
# pid namespace: the high container joins the low one's (a GPU's driver
# needs no such thing). Both stay apart from the host's.
# Groups of 4 kernels, two in flight: the stream stays busy unless its
# launcher is held off the CPU for 4 ms (with 1 it idled after 1 ms of
# a loaded CI machine's scheduling delay, and the policy rightly resumed
# the low flood).
start xs-test-high-$$ high --pid "container:$low" -- --flood --cmds 4 --cmd-us 1000 --duration-s 60 ||
	{ fail "podman run (high): $(cat "$tmp/xs-test-high-$$.err")"; exit 1; }
high=xs-test-high-$$
until_ok 30 registered "$high" || { fail "the high container's queue never registered"; exit 1; }
[[ $(queue "$high" priority) == 10 ]] || fail "high: priority $(queue "$high" priority), expected 10"
high_nspid=$(queue "$high" nspid)
[[ $high_nspid =~ ^[0-9]+$ && $high_nspid -gt 1 ]] ||
	fail "high: nspid $high_nspid, expected a pid of the low container's namespace"
[[ $(queue "$high" container_id) == "\"$(cat "$tmp/$high.id")\"" ]] ||
	fail "high: container_id $(queue "$high" container_id)"
low_suspended() {
	list && [[ $(queue "$low" running) == false && $(queue "$high" running) == true &&
		$(queue "$high" completed) -gt 0 ]]
}
if until_ok 20 low_suspended; then
	low0=$(queue "$low" completed) high0=$(queue "$high" completed)
	pre0=$(queue "$low" preemptions)
	sleep 1
	list
	low1=$(queue "$low" completed) high1=$(queue "$high" completed)
	pre1=$(queue "$low" preemptions)
	resumed=$((pre1 - pre0))
	echo "over 1 s with both flooding: high completed $((high1 - high0)), low $((low1 - low0))," \
		"low suspended again $resumed times"
	[[ $(queue "$low" running) == false ]] || fail "the low flood was resumed while high floods"
	# Lv1: what low had launched (its window under the contention cap)
	# completes; nothing more. Should the high stream have idled (its
	# launcher off the CPU: a VM's vCPU stolen for some ms), the policy
	# rightly resumes low until high is back and suspends it again, which
	# low's preemption count shows; low then runs as long as high idled,
	# so only its share is bounded: without suspension it would be half.
	if ((resumed == 0)); then
		((low1 - low0 <= 2)) ||
			fail "the suspended low flood completed $((low1 - low0)) commands in 1 s"
	else
		((100 * (low1 - low0) <= 5 * (high1 - high0))) ||
			fail "low completed $((low1 - low0)) commands to high's $((high1 - high0)) ($resumed resumes)"
	fi
	((high1 - high0 >= 100)) || fail "the high flood completed only $((high1 - high0)) commands in 1 s"
else
	fail "the low flood was never suspended while the high one ran"
	cat "$tmp/list.json"
fi
# With high gone, low runs again.
"${pod[@]}" rm -f -t 0 "$high" >/dev/null 2>&1
low_back() { list && [[ -z $(queue "$high" pid) && $(queue "$low" running) == true ]]; }
until_ok 20 low_back || fail "the low flood did not resume after the high container stopped"

[[ $failures == 0 ]] && echo "ok: CDI in podman"
[[ $failures == 0 ]]
