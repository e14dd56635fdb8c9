#!/usr/bin/env bash
# `xschedctl cdi generate`: the Container Device Interface spec it writes
# validates against the CDI JSON schema (Debian's copy in
# golang-github-container-orchestrated-devices-container-device-interface-dev,
# and every directory of $XSCHED_CDI_SCHEMA_DIRS, each holding schema.json
# and defs.json) and against the specification's rules for kinds and device
# names, and holds what the [cdi] section of xschedd.conf asks for: the
# classes and levels with their hints, the shims bound read-only and named
# in LD_PRELOAD, the socket directory and XSCHED_SOCKET. Bad [cdi] keys are
# refused, with their line, by the verb and by `xschedd --check-config`
# alike. No daemon runs. Exits 77 when python3-jsonschema or every schema
# is missing.
#   tests/test_cdi.sh --ctl XSCHEDCTL --daemon XSCHEDD --shim-dir DIR
# DIR: a directory holding at least one built shim (libxsched-cuda.so).
set -u

ctl= daemon= shim_dir=
while [[ $# -gt 0 ]]; do
	case $1 in
	--ctl) ctl=$2 ;;
	--daemon) daemon=$2 ;;
	--shim-dir) shim_dir=$2 ;;
	*) echo "usage: $0 --ctl X --daemon X --shim-dir DIR" >&2; exit 2 ;;
	esac
	shift 2
done
for f in "$ctl" "$daemon" "$shim_dir/libxsched-cuda.so"; do
	[[ -n $f && -e $f ]] || { echo "FAIL: missing file '$f'"; exit 1; }
done
shim_dir=$(realpath "$shim_dir")
py=/usr/bin/python3
debian_schema=/usr/share/gocode/src/github.com/container-orchestrated-devices/container-device-interface/schema
schemas=()
for d in "$debian_schema" ${XSCHED_CDI_SCHEMA_DIRS:+${XSCHED_CDI_SCHEMA_DIRS//:/ }}; do
	[[ -f $d/schema.json && -f $d/defs.json ]] && schemas+=("$d")
done
if ! "$py" -c 'import jsonschema' 2>/dev/null || [[ ${#schemas[@]} == 0 ]]; then
	echo "SKIP: needs python3-jsonschema and the CDI schema ($debian_schema)"
	exit 77
fi
echo "schemas: ${schemas[*]}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD XSCHED_SHIM_DIR XSCHED_SOCKET XSCHED_CONTROL_SOCKET JOURNAL_STREAM
. "$(dirname "$0")/sh_util.sh"

# check SPEC EXPECT.json: the schema, the naming rules and the content.
check() {
	"$py" - "$1" "$2" "${schemas[@]}" <<'PY'
import json, os, re, sys
import jsonschema

spec_path, want_path, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
spec = json.load(open(spec_path))
want = json.load(open(want_path))
bad = []
for d in dirs:
    schema = json.load(open(os.path.join(d, "schema.json")))
    resolver = jsonschema.RefResolver("file://" + os.path.abspath(d) + "/", schema)
    try:
        jsonschema.validate(spec, schema, resolver=resolver)
    except jsonschema.ValidationError as e:
        bad.append(f"{d}: {e.message} at {list(e.absolute_path)}")

# The specification's rules (SPEC.md, "CDI JSON Specification"): a kind is
# a DNS subdomain, '/', then a name of at most 63 characters of
# alphanumerics, '-', '_' and '.' beginning and ending with an
# alphanumeric; device names begin and end with an alphanumeric, with
# '-', '_', '.' and alphanumerics between (digits first from 0.5.0).
label = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
prefix, _, name = spec["kind"].partition("/")
if len(prefix) > 253 or not re.fullmatch(rf"{label}(\.{label})*", prefix):
    bad.append(f"kind prefix {prefix!r}")
if len(name) > 63 or not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?", name):
    bad.append(f"kind name {name!r}")
names = [d["name"] for d in spec["devices"]]
for n in names:
    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?", n):
        bad.append(f"device name {n!r}")
if len(set(names)) != len(names):
    bad.append(f"duplicate device names {names}")
if spec["cdiVersion"] != "0.5.0":
    bad.append(f"cdiVersion {spec['cdiVersion']}")
for env in spec["containerEdits"]["env"] + [e for d in spec["devices"]
                                            for e in d["containerEdits"]["env"]]:
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", env):
        bad.append(f"env {env!r}")
for m in spec["containerEdits"]["mounts"]:
    if not (os.path.isabs(m["hostPath"]) and os.path.isabs(m["containerPath"])):
        bad.append(f"relative mount {m}")
    if "ro" not in m["options"] or "bind" not in m["options"]:
        bad.append(f"mount not a read-only bind: {m}")

# What the configuration asked for.
got = {
    "kind": spec["kind"],
    "env": spec["containerEdits"]["env"],
    "mounts": [[m["hostPath"], m["containerPath"]] for m in spec["containerEdits"]["mounts"]],
    "devices": {d["name"]: d["containerEdits"]["env"] for d in spec["devices"]},
}
for k in want:
    if got[k] != want[k]:
        bad.append(f"{k}: got {got[k]}, expected {want[k]}")
if list(got["devices"]) != list(want["devices"]):
    bad.append(f"device order {list(got['devices'])}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# --- built-in classes, shims found next to xschedctl ---------------------
"$ctl" cdi generate --config /dev/null >"$tmp/default.json" 2>"$tmp/err" ||
	fail "generate with built-in values: $(cat "$tmp/err")"
grep -q 'control socket /run/xsched/xschedctl.sock is in the directory' "$tmp/err" ||
	fail "no warning about the control socket beside the client socket: $(cat "$tmp/err")"
"$py" - "$tmp/default.json" >"$tmp/default.want" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
levels = {str(n): [f"XSCHED_PRIORITY={n}"] for n in range(11)}
devices = {"high": ["XSCHED_PRIORITY=10"], "normal": ["XSCHED_PRIORITY=0"],
           "low": ["XSCHED_PRIORITY=-10"], **levels}
env = spec["containerEdits"]["env"]
json.dump({"kind": "xsched.dev/sched", "devices": devices,
           "env": [env[0], "XSCHED_SOCKET=/run/xsched/xschedd.sock"]}, sys.stdout)
PY
if check "$tmp/default.json" "$tmp/default.want"; then
	echo "ok: built-in classes validate"
else
	fail "built-in classes"
fi
# Every preloaded path is a mounted shim, mounted from a host file of the same name.
"$py" - "$tmp/default.json" <<'PY' || fail "LD_PRELOAD and the shim mounts disagree"
import json, os, sys
spec = json.load(open(sys.argv[1]))
pre = spec["containerEdits"]["env"][0].removeprefix("LD_PRELOAD=").split(":")
mounts = {m["containerPath"]: m["hostPath"] for m in spec["containerEdits"]["mounts"]}
assert pre and all(p.startswith("/opt/xsched/lib/libxsched-") for p in pre), pre
for p in pre:
    assert p in mounts and os.path.isfile(mounts[p]), p
    assert os.path.basename(mounts[p]) == os.path.basename(p), (p, mounts[p])
assert mounts.get("/run/xsched") == "/run/xsched", mounts
PY

# --- a configuration of its own ------------------------------------------
cat >"$tmp/xsd.conf" <<EOF
[daemon]
socket = $tmp/run/xs/c.sock
control_socket = $tmp/run/ctl/ctl.sock
[cdi]
class.low.share = 10
class.rt.priority = 20
class.rt.deadline_us = 5000
class.rt.memory_limit = 8G
class.batch-2.laxity_us = 7
levels = 5..7
shim_dir = $shim_dir/
container_dir = /usr/lib/xs
EOF
"$ctl" cdi generate --config "$tmp/xsd.conf" --output "$tmp/cdi/xsched.json" 2>"$tmp/err" &&
	fail "generate into a missing directory succeeded"
grep -q "cannot write $tmp/cdi/xsched.json" "$tmp/err" || fail "missing directory: $(cat "$tmp/err")"
mkdir -p "$tmp/cdi"
"$ctl" cdi generate --config "$tmp/xsd.conf" --output "$tmp/cdi/xsched.json" 2>"$tmp/err" ||
	fail "generate --output: $(cat "$tmp/err")"
[[ -s $tmp/err ]] && fail "a warning with the control socket elsewhere: $(cat "$tmp/err")"
[[ $(stat -c %a "$tmp/cdi/xsched.json" 2>/dev/null) == 644 ]] || fail "the spec is not mode 0644"
[[ $(ls "$tmp/cdi") == xsched.json ]] || fail "temporary files left: $(ls "$tmp/cdi")"
sockdir="$tmp/run/xs"
shim_env=
shim_mounts=
for s in cuda opencl levelzero; do
	[[ -f $shim_dir/libxsched-$s.so ]] || continue
	shim_env+="${shim_env:+:}/usr/lib/xs/libxsched-$s.so"
	shim_mounts+="[\"$shim_dir/libxsched-$s.so\", \"/usr/lib/xs/libxsched-$s.so\"],"
done
cat >"$tmp/own.want" <<EOF
{"kind": "xsched.dev/sched",
 "env": ["LD_PRELOAD=$shim_env", "XSCHED_SOCKET=$sockdir/c.sock"],
 "mounts": [$shim_mounts ["$sockdir", "$sockdir"]],
 "devices": {"high": ["XSCHED_PRIORITY=10"], "normal": ["XSCHED_PRIORITY=0"],
             "low": ["XSCHED_SHARE=10"],
             "rt": ["XSCHED_PRIORITY=20", "XSCHED_DEADLINE_US=5000",
                    "XSCHED_MEMORY_LIMIT=8589934592"],
             "batch-2": ["XSCHED_LAXITY_US=7"],
             "5": ["XSCHED_PRIORITY=5"], "6": ["XSCHED_PRIORITY=6"],
             "7": ["XSCHED_PRIORITY=7"]}}
EOF
if check "$tmp/cdi/xsched.json" "$tmp/own.want"; then
	echo "ok: configured classes, levels and directories"
else
	fail "configured classes"
fi
# --socket wins over the configuration's; --shim-dir over shim_dir; no levels.
printf '[cdi]\nlevels = none\nshim_dir = /nonexistent\n' >"$tmp/none.conf"
"$ctl" --socket /var/tmp/x/y.sock cdi generate --config "$tmp/none.conf" \
	--shim-dir "$shim_dir" >"$tmp/sock.json" 2>"$tmp/err" || fail "--socket: $(cat "$tmp/err")"
"$py" - "$tmp/sock.json" <<'PY' || fail "--socket, --shim-dir or levels = none not applied"
import json, sys
spec = json.load(open(sys.argv[1]))
assert "XSCHED_SOCKET=/var/tmp/x/y.sock" in spec["containerEdits"]["env"]
assert ["/var/tmp/x", "/var/tmp/x"] in [[m["hostPath"], m["containerPath"]]
                                        for m in spec["containerEdits"]["mounts"]]
assert [d["name"] for d in spec["devices"]] == ["high", "normal", "low"]
PY

# --- refused -------------------------------------------------------------
# bad KEY=VALUE MESSAGE: the verb and --check-config refuse it with its line.
bad() {
	printf '[cdi]\n%s\n' "$1" >"$tmp/bad.conf"
	if "$ctl" cdi generate --config "$tmp/bad.conf" >"$tmp/out" 2>"$tmp/err"; then
		fail "'$1' accepted"
	elif ! grep -q "bad.conf:2: .*$2" "$tmp/err"; then
		fail "'$1': expected '$2' with line 2, got: $(cat "$tmp/err")"
	fi
	[[ -s $tmp/out ]] && fail "'$1': a spec was written"
	"$daemon" --check-config --config "$tmp/bad.conf" >/dev/null 2>&1 &&
		fail "'$1' accepted by xschedd --check-config"
}
bad 'class.-x.priority = 1' 'begins and ends with a letter or digit'
bad 'class.x-.priority = 1' 'begins and ends with a letter or digit'
bad 'class.12.priority = 1' 'digits only'
bad 'class.a/b.priority = 1' "only letters, digits"
bad 'class.x.priority = 101' 'expected a priority'
bad 'class.x.share = -1' 'expected a share'
bad 'class.x.deadline_us = 3600000001' 'expected microseconds'
bad 'class.x.nice = 1' 'unknown key \[cdi\] class.x.nice'
bad 'class.x.memory_limit = lots' 'expected a size above zero'
bad 'class.x.memory_limit = 0' 'expected a size above zero'
bad 'levels = 3..1' 'expected LO..HI'
bad 'levels = -1..3' 'expected LO..HI'
bad 'levels = 0..101' 'expected LO..HI'
bad 'shim_dir = lib' 'not an absolute path'
bad 'container_dir = /a:b' "LD_PRELOAD cannot hold"
bad 'frob = 1' 'unknown key \[cdi\] frob'
printf '[cdi]\n' >"$tmp/many.conf"
for i in $(seq 1 33); do echo "class.c$i.priority = 1" >>"$tmp/many.conf"; done
"$ctl" cdi generate --config "$tmp/many.conf" >/dev/null 2>"$tmp/err" &&
	fail "33 classes accepted"
grep -q 'many.conf:34: .*at most 32' "$tmp/err" || fail "33 classes: $(cat "$tmp/err")"
# A good file passes the daemon's check.
"$daemon" --check-config --config "$tmp/xsd.conf" >/dev/null 2>"$tmp/err" ||
	fail "xschedd --check-config refuses the [cdi] section: $(cat "$tmp/err")"

mkdir -p "$tmp/empty"
"$ctl" cdi generate --config /dev/null --shim-dir "$tmp/empty" >"$tmp/out" 2>"$tmp/err" &&
	fail "a spec without shims was written"
grep -q "no xsched shim (libxsched-\*.so) in $tmp/empty" "$tmp/err" || fail "no shims: $(cat "$tmp/err")"
"$ctl" cdi generate --config "$tmp/nonexistent.conf" >/dev/null 2>"$tmp/err" &&
	fail "a missing --config accepted"
"$ctl" --socket /x.sock cdi generate --config /dev/null >/dev/null 2>"$tmp/err" &&
	fail "a socket in / accepted"
grep -q "cannot be /" "$tmp/err" || fail "socket in /: $(cat "$tmp/err")"
"$ctl" cdi generate --shim-dir rel >/dev/null 2>"$tmp/err" && fail "a relative --shim-dir accepted"
"$ctl" cdi >/dev/null 2>"$tmp/err" && fail "cdi without generate accepted"
grep -q "missing 'generate'" "$tmp/err" || fail "cdi alone: $(cat "$tmp/err")"
"$ctl" cdi generate extra >/dev/null 2>"$tmp/err" && fail "an extra argument accepted"

[[ $failures == 0 ]] && echo "ok: cdi generate"
[[ $failures == 0 ]]
