#!/usr/bin/env bash
# The SPANK plugin in a real single-node Slurm: a private munged,
# slurmctld and slurmd on this host (their own ports, state, logs and
# munge socket, nothing of a system Slurm touched), plugstack.conf naming
# xsched_spank.so with the build tree's shims and a private xschedd.
# Checked: `srun --xsched-priority=7 cu_load` (an unmodified CUDA program
# on the simulated driver) registers its queue with priority 7, preloaded
# by the plugin; class names map to their priorities and share/deadline
# reach the task's environment; without an option nothing is preloaded
# and no hint set; a bad value makes srun fail with the plugin's message
# before anything runs.
#   tests/test_slurm.sh --plugin XSCHED_SPANK_SO --ctl XSCHEDCTL
#                       --daemon XSCHEDD --load CU_LOAD --driver LIBCUDA
#                       --shim-dir DIR
# Needs root (slurmd runs tasks as their user). Exits 77 when not root,
# when Slurm or munge is not installed, or when the cluster does not come
# up (its logs are printed).
set -u

plugin= ctl= daemon= load= driver= shim_dir=
while [[ $# -gt 0 ]]; do
	case $1 in
	--plugin) plugin=$2 ;;
	--ctl) ctl=$2 ;;
	--daemon) daemon=$2 ;;
	--load) load=$2 ;;
	--driver) driver=$2 ;;
	--shim-dir) shim_dir=$2 ;;
	*) echo "usage: $0 --plugin SO --ctl X --daemon X --load X --driver X --shim-dir DIR" >&2
	   exit 2 ;;
	esac
	shift 2
done
for f in "$plugin" "$ctl" "$daemon" "$load" "$driver" "$shim_dir/libxsched-cuda.so"; do
	[[ -n $f && -e $f ]] || { echo "FAIL: missing file '$f'"; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (slurmd)"; exit 77; }
for p in slurmctld slurmd munged srun sinfo scontrol; do
	command -v "$p" >/dev/null || { echo "SKIP: $p is not installed"; exit 77; }
done
[[ -r /etc/munge/munge.key ]] || { echo "SKIP: no munge key (/etc/munge/munge.key)"; exit 77; }
id munge >/dev/null 2>&1 || { echo "SKIP: no munge user"; exit 77; }

# One run at a time on the machine (ports are chosen free, but two
# slurmds of one node name would confuse each other's controller).
exec 9>/run/lock/xsched-test-slurm.lock
flock -w 600 9 || { echo "FAIL: another test_slurm holds the lock"; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
cleanup() {
	local p
	[[ -n ${SLURM_CONF:-} ]] && scancel --quiet -u root 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	# The daemons fork; their pid files name them.
	local daemons=()
	for f in "$tmp"/slurmctld.pid "$tmp"/slurmd.pid "$tmp"/munged.pid; do
		[[ -s $f ]] && daemons+=("$(cat "$f")")
	done
	for p in "${daemons[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	# They are not our children: wait until they are gone (10 s at most).
	for p in "${daemons[@]}"; do
		for _ in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/sh_util.sh"
logs() {
	for f in "$tmp"/*.log; do
		echo "--- $f"
		tail -15 "$f"
	done
}
skip_with_logs() {
	echo "SKIP: $*"
	logs
	exit 77
}

# --- munge, slurmctld, slurmd --------------------------------------------
mkdir -p "$tmp/munge"
chown munge: "$tmp/munge"
runuser -u munge -- munged --socket="$tmp/munge/munge.sock" --pid-file="$tmp/munge/munged.pid" \
	--log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/seed" --force ||
	skip_with_logs "munged does not start"
until_ok 10 test -S "$tmp/munge/munge.sock" || skip_with_logs "munged has no socket"
cp "$tmp/munge/munged.pid" "$tmp/munged.pid"

read -r port1 port2 < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/xs"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=xstest
SlurmctldHost=$host
SlurmctldPort=$port1
SlurmdPort=$port2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=xstest Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
# The line docs/clusters.md gives, with this build's shims and daemon.
echo "required $(realpath "$plugin") shim_dir=$(realpath "$shim_dir") socket=$tmp/xs/c.sock" \
	>"$tmp/plugstack.conf"
export SLURM_CONF=$tmp/slurm.conf
slurmctld -f "$SLURM_CONF" -i || skip_with_logs "slurmctld does not start"
slurmd -f "$SLURM_CONF" -N "$host" || skip_with_logs "slurmd does not start"
node_idle() { [[ $(sinfo -h -N -o %t 2>/dev/null) == idle ]]; }
until_ok 60 node_idle || skip_with_logs "the node never became idle: $(sinfo -N 2>&1)"
echo "ok: slurm up on $host (ports $port1, $port2)"

# --- a private xschedd ----------------------------------------------------
export XSCHED_SIM_DIR=$tmp/sim XSCHED_SIM_DEVICE=xs-slurm-test
export XSCHED_CUDA_LIB=$(realpath "$driver")
mkdir -p "$XSCHED_SIM_DIR"
unset LD_PRELOAD XSCHED_PRIORITY XSCHED_SHARE XSCHED_DEADLINE_US XSCHED_SOCKET
"$daemon" --foreground --config /dev/null --socket "$tmp/xs/c.sock" \
	--control-socket "$tmp/xs/ctl.sock" 2>"$tmp/xschedd.log" &
pids+=($!)
until_ok 20 test -S "$tmp/xs/ctl.sock" || { fail "xschedd not listening"; logs; exit 1; }

# --- without an option: nothing preloaded, no hint ------------------------
srun -N1 -n1 -t 1 /usr/bin/env >"$tmp/plain.env" 2>"$tmp/plain.err" ||
	{ fail "plain srun: $(cat "$tmp/plain.err")"; logs; exit 1; }
grep -Eq '^(LD_PRELOAD|XSCHED_PRIORITY|XSCHED_SHARE|XSCHED_DEADLINE_US|XSCHED_SOCKET)=' \
	"$tmp/plain.env" && fail "a step without options got: $(grep -E '^(LD_PRELOAD|XSCHED_)' "$tmp/plain.env")"
srun -N1 -n1 -t 1 /bin/cat /proc/self/maps >"$tmp/plain.maps" 2>&1
grep -q libxsched "$tmp/plain.maps" && fail "a shim is mapped in a step without options"
grep -q 'ld-linux\|libc' "$tmp/plain.maps" || fail "no maps read: $(head -3 "$tmp/plain.maps")"
echo "ok: without options nothing is preloaded"

# --- --xsched-priority=7: the queue registered with priority 7 ------------
srun -N1 -n1 -t 1 --xsched-priority=7 "$(realpath "$load")" --flood --cmd-us 1000 \
	--duration-s 30 >"$tmp/load.out" 2>&1 &
srun_pid=$!
registered() {
	"$ctl" --control "$tmp/xs/ctl.sock" list -o json >"$tmp/list.json" 2>/dev/null &&
	/usr/bin/python3 - "$tmp/list.json" <<'PY'
import json, sys
qs = [q for q in json.load(open(sys.argv[1]))["queues"] if q["command"] == "cu_load"]
sys.exit(0 if qs and all(q["priority"] == 7 for q in qs) else 1)
PY
}
if until_ok 30 registered; then
	pid=$(/usr/bin/python3 -c 'import json,sys; print([q["pid"] for q in json.load(open(sys.argv[1]))["queues"]][0])' "$tmp/list.json")
	grep -q "$(realpath "$shim_dir")/libxsched-cuda.so" "/proc/$pid/maps" ||
		fail "the task (pid $pid) does not map the build's shim"
	tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'XSCHED_PRIORITY=7' ||
		fail "the task's environment lacks XSCHED_PRIORITY=7"
	echo "ok: srun --xsched-priority=7: pid $pid registered with priority 7"
else
	fail "srun --xsched-priority=7 never registered a queue with priority 7"
	cat "$tmp/list.json" "$tmp/load.out"
	logs
fi
scancel --quiet -u root
wait "$srun_pid" 2>/dev/null

# --- names and the other options reach the task's environment -------------
env_of() {
	srun -N1 -n1 -t 1 "$@" /usr/bin/env >"$tmp/opt.env" 2>"$tmp/opt.err" ||
		{ fail "srun $*: $(cat "$tmp/opt.err")"; return 1; }
}
if env_of --xsched-priority=high --xsched-share=50 --xsched-deadline=20ms; then
	for want in XSCHED_PRIORITY=10 XSCHED_SHARE=50 XSCHED_DEADLINE_US=20000 \
		"XSCHED_SOCKET=$tmp/xs/c.sock"; do
		grep -qx "$want" "$tmp/opt.env" || fail "--xsched-priority=high ...: no $want"
	done
	grep -q "^LD_PRELOAD=$(realpath "$shim_dir")/libxsched-cuda.so" "$tmp/opt.env" ||
		fail "LD_PRELOAD: $(grep LD_PRELOAD "$tmp/opt.env")"
fi
env_of --xsched-priority=low && { grep -qx XSCHED_PRIORITY=-10 "$tmp/opt.env" || fail "low is not -10"; }
# An LD_PRELOAD of the job's own stays, after the shims.
if LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 env_of --xsched-share=1; then
	grep -q "^LD_PRELOAD=.*libxsched-cuda.so.*:/lib/x86_64-linux-gnu/libm.so.6$" "$tmp/opt.env" ||
		fail "the job's LD_PRELOAD was lost: $(grep LD_PRELOAD "$tmp/opt.env")"
	grep -q '^XSCHED_PRIORITY=' "$tmp/opt.env" && fail "--xsched-share alone set a priority"
fi
# sbatch takes the options too: its batch script's task gets them.
if sbatch --wait -t 1 -o "$tmp/batch.out" --xsched-priority=low --wrap /usr/bin/env \
	>"$tmp/sbatch.log" 2>&1; then
	grep -qx XSCHED_PRIORITY=-10 "$tmp/batch.out" ||
		fail "sbatch --xsched-priority=low: $(grep XSCHED "$tmp/batch.out")"
	grep -q "^LD_PRELOAD=.*libxsched-cuda.so" "$tmp/batch.out" || fail "sbatch: nothing preloaded"
else
	fail "sbatch --xsched-priority=low: $(cat "$tmp/sbatch.log")"
fi
echo "ok: classes, share, deadline, sbatch"

# --- bad values: srun fails with the plugin's message, nothing runs -------
bad() {
	local opt=$1 msg=$2
	if srun -N1 -n1 -t 1 "$opt" /usr/bin/touch "$tmp/ran" >"$tmp/bad.out" 2>&1; then
		fail "srun $opt succeeded"
	elif ! grep -q "xsched: $msg" "$tmp/bad.out"; then
		fail "srun $opt: expected 'xsched: $msg', got: $(cat "$tmp/bad.out")"
	fi
	[[ -e $tmp/ran ]] && fail "srun $opt ran the command"
	rm -f "$tmp/ran"
}
bad --xsched-priority=bogus "invalid --xsched-priority 'bogus'"
bad --xsched-priority=101 "invalid --xsched-priority '101'"
bad --xsched-share=-1 "invalid --xsched-share '-1'"
bad --xsched-deadline=5min "invalid --xsched-deadline '5min'"
echo "ok: bad values refused"

# --- no shim on the node: the task fails rather than run unscheduled -------
echo "required $(realpath "$plugin") shim_dir=$tmp/none" >"$tmp/plugstack.conf"
if srun -N1 -n1 -t 1 --xsched-priority=1 /usr/bin/touch "$tmp/ran" >"$tmp/noshim.out" 2>&1; then
	fail "a task without shims ran"
fi
[[ -e $tmp/ran ]] && fail "the command ran without its shim"
grep -q "xsched: no xsched shim" "$tmp/noshim.out" "$tmp/slurmd.log" ||
	fail "no message about the missing shim: $(cat "$tmp/noshim.out")"

# --- a node that enforces device access: every task gets the shims --------
# xschedd with [enforce] devices = audit (refuses nothing) writes the file
# that tells the plugin; a step without options is then preloaded.
echo "required $(realpath "$plugin") shim_dir=$(realpath "$shim_dir") socket=$tmp/xs/c.sock" \
	>"$tmp/plugstack.conf"
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null
findmnt -t bpf /sys/fs/bpf >/dev/null || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
printf '[enforce]\ndevices = audit\nuids = 4294967294\npin_path = /sys/fs/bpf/xsched-slurm-%s\n' $$ \
	>"$tmp/enforce.conf"
"$daemon" --foreground --config "$tmp/enforce.conf" --socket "$tmp/xs/c.sock" \
	--control-socket "$tmp/xs/ctl.sock" 2>>"$tmp/xschedd.log" &
pids+=($!)
if until_ok 10 test -e "$tmp/xs/c.sock.enforce"; then
	srun -N1 -n1 -t 1 /usr/bin/env >"$tmp/enf.env" 2>"$tmp/enf.err" ||
		fail "srun on an enforcing node: $(cat "$tmp/enf.err")"
	grep -q "^LD_PRELOAD=$(realpath "$shim_dir")/libxsched-cuda.so" "$tmp/enf.env" &&
		echo "ok: on a node that enforces, a step without options is preloaded" ||
		fail "enforcing node, no options: LD_PRELOAD: $(grep LD_PRELOAD "$tmp/enf.env")"
	grep -q '^XSCHED_PRIORITY=' "$tmp/enf.env" && fail "enforcing node: a hint was set"
else
	echo "note: the device gate does not load here ($(grep -o 'device enforcement.*' \
		"$tmp/xschedd.log" | head -n1)); the enforcing-node case is not run"
fi
rm -rf "/sys/fs/bpf/xsched-slurm-$$"

[[ $failures == 0 ]] && echo "ok: SPANK plugin in Slurm"
[[ $failures == 0 ]]
