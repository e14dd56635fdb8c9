#!/usr/bin/env bash
# The Kubernetes manifests of deploy/kubernetes/, offline (no cluster, no
# kubectl): every document parses (python3-yaml) and has the fields the
# API server requires of its kind; the DaemonSet runs in the host's pid
# namespace with the sockets, shim and CDI directories as hostPath volumes
# (every mount naming a declared volume, every selector matching its
# template), a liveness probe through `xschedctl status` and GPU-node
# placement; its image is the one the Containerfile's instructions tag,
# and its commands are the package's programs at their /usr paths with
# options they accept. Run for real here: the ConfigMap's xschedd.conf
# passes `xschedd --check-config`, the init container's `xschedctl cdi
# generate` line works against it (with this build's shims), and the
# example pods name a device of that spec and mount what it mounts.
#   tests/test_k8s.sh --dir DEPLOY_DIR --ctl XSCHEDCTL --daemon XSCHEDD
#                     --shim-dir DIR --version VERSION
# Exits 77 without python3-yaml.
set -u

dir= ctl= daemon= shim_dir= version=
while [[ $# -gt 0 ]]; do
	case $1 in
	--dir) dir=$2 ;;
	--ctl) ctl=$2 ;;
	--daemon) daemon=$2 ;;
	--shim-dir) shim_dir=$2 ;;
	--version) version=$2 ;;
	*) echo "usage: $0 --dir D --ctl X --daemon X --shim-dir DIR --version V" >&2; exit 2 ;;
	esac
	shift 2
done
for f in "$dir/xschedd.yaml" "$dir/example-pods.yaml" "$dir/Containerfile" "$ctl" "$daemon" \
	"$shim_dir/libxsched-cuda.so"; do
	[[ -n $f && -e $f ]] || { echo "FAIL: missing file '$f'"; exit 1; }
done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: needs python3-yaml"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset XSCHED_SOCKET XSCHED_CONTROL_SOCKET XSCHED_SHIM_DIR

/usr/bin/python3 - "$dir" "$version" "$tmp" <<'PY' || exit 1
import os, re, shlex, sys
import yaml

d, version, tmp = sys.argv[1:]
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)

def load(name):
    with open(os.path.join(d, name)) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]

ds_docs = load("xschedd.yaml")
pod_docs = load("example-pods.yaml")
kinds = {(doc.get("kind"), doc.get("metadata", {}).get("name")): doc for doc in ds_docs + pod_docs}

# What the API server requires of every object, and names it accepts.
dns1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
api = {"Namespace": "v1", "ConfigMap": "v1", "DaemonSet": "apps/v1", "Pod": "v1"}
for doc in ds_docs + pod_docs:
    k = doc.get("kind")
    check(k in api, f"unexpected kind {k}")
    check(doc.get("apiVersion") == api.get(k), f"{k}: apiVersion {doc.get('apiVersion')}")
    name = doc.get("metadata", {}).get("name", "")
    check(bool(dns1123.fullmatch(name)) and len(name) <= 253, f"{k}: bad name {name!r}")
    if k not in ("Namespace",):
        ns = doc["metadata"].get("namespace")
        if ns:
            check(("Namespace", ns) in kinds, f"{k} {name}: namespace {ns} not defined")

def pod_spec_checks(what, spec):
    """Containers have names and images, mounts name declared volumes."""
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    check(len(vols) == len(spec.get("volumes", [])), f"{what}: duplicate volume names")
    names = set()
    for c in spec.get("initContainers", []) + spec["containers"]:
        check(bool(c.get("name")) and c["name"] not in names, f"{what}: container name {c.get('name')}")
        names.add(c.get("name"))
        check(bool(c.get("image")), f"{what}/{c.get('name')}: no image")
        for m in c.get("volumeMounts", []):
            check(m["name"] in vols, f"{what}/{c['name']}: mount of undeclared volume {m['name']}")
            check(m["mountPath"].startswith("/"), f"{what}/{c['name']}: relative mountPath")
        for e in c.get("env", []):
            check(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", e["name"]) is not None and
                  isinstance(e.get("value"), str), f"{what}/{c['name']}: env {e}")
    for v in vols.values():
        if "hostPath" in v:
            check(v["hostPath"]["path"].startswith("/"), f"{what}: hostPath {v}")
            check(v["hostPath"].get("type") in ("Directory", "DirectoryOrCreate", "File"),
                  f"{what}: hostPath type {v}")
        if "configMap" in v:
            check(("ConfigMap", v["configMap"]["name"]) in kinds,
                  f"{what}: configMap {v['configMap']['name']} not defined")
    return vols

# --- the DaemonSet --------------------------------------------------------
ds = kinds.get(("DaemonSet", "xschedd"))
check(ds is not None, "no DaemonSet xschedd")
cm = kinds.get(("ConfigMap", "xschedd-config"))
check(cm is not None and "xschedd.conf" in cm.get("data", {}), "no ConfigMap with xschedd.conf")
if ds and cm:
    spec = ds["spec"]
    tpl = spec["template"]
    sel = spec["selector"]["matchLabels"]
    check(all(tpl["metadata"]["labels"].get(k) == v for k, v in sel.items()),
          "selector does not match the template's labels")
    ps = tpl["spec"]
    check(ps.get("hostPID") is True, "the DaemonSet is not in the host's pid namespace")
    check(bool(ps.get("nodeSelector")), "no nodeSelector for GPU nodes")
    check(any(t.get("key") == "nvidia.com/gpu" for t in ps.get("tolerations", [])),
          "no toleration of the GPU taint")
    vols = pod_spec_checks("DaemonSet", ps)
    host = {n: v["hostPath"]["path"] for n, v in vols.items() if "hostPath" in v}
    daemon_c = ps["containers"][0]
    init_c = ps["initContainers"][0]
    image = f"xsched:{version}"
    for c in ps["containers"] + ps["initContainers"]:
        check(c["image"] == image, f"{c['name']}: image {c['image']}, expected {image}")
        r = c.get("resources", {})
        check("cpu" in r.get("requests", {}) and "memory" in r.get("requests", {}),
              f"{c['name']}: no resource requests")
        check("memory" in r.get("limits", {}), f"{c['name']}: no memory limit")
    # Mounts at the same paths as on the host (the spec names host paths).
    for c in (daemon_c, init_c):
        for m in c["volumeMounts"]:
            if m["name"] in host:
                check(m["mountPath"] == host[m["name"]],
                      f"{c['name']}: {m['name']} mounted at {m['mountPath']}, host {host[m['name']]}")
    check(daemon_c["command"][0] == "/usr/sbin/xschedd", f"daemon command {daemon_c['command']}")
    check("--foreground" in daemon_c["command"], "xschedd without --foreground")
    probe = daemon_c.get("livenessProbe", {}).get("exec", {}).get("command", [])
    check(probe[:1] == ["/usr/bin/xschedctl"] and probe[-1:] == ["status"],
          f"liveness probe {probe}")
    # Files the programs are given.
    conf_path = daemon_c["command"][daemon_c["command"].index("--config") + 1]
    mounts = {m["mountPath"]: m["name"] for c in (daemon_c,) for m in c["volumeMounts"]}
    check(os.path.dirname(conf_path) in mounts and
          vols[mounts[os.path.dirname(conf_path)]].get("configMap", {}).get("name") == "xschedd-config",
          f"--config {conf_path} is not the ConfigMap's file")
    conf = cm["data"]["xschedd.conf"]
    with open(os.path.join(tmp, "xschedd.conf"), "w") as f:
        f.write(conf)
    # The sockets' directories are the hostPath volumes, apart from each other.
    sock = re.search(r"^socket = (\S+)$", conf, re.M).group(1)
    ctl_sock = re.search(r"^control_socket = (\S+)$", conf, re.M).group(1)
    check(os.path.dirname(sock) != os.path.dirname(ctl_sock), "control socket beside the client socket")
    dm = {m["mountPath"] for m in daemon_c["volumeMounts"]}
    check(os.path.dirname(sock) in dm and os.path.dirname(ctl_sock) in dm,
          "the sockets' directories are not mounted in the daemon")
    check(probe[probe.index("--control") + 1] == ctl_sock if "--control" in probe else False,
          "the probe does not use the control socket")
    # The init container's script: copy the package's shims, generate the spec.
    script = init_c["command"][2]
    cmds = [shlex.split(part) for part in script.split("&&")]
    check(cmds[0][0] == "cp" and cmds[0][1] == "/usr/lib/x86_64-linux-gnu/xsched/libxsched-*.so",
          f"init: {cmds[0]}")
    gen = cmds[1]
    check(gen[:4] == ["exec", "/usr/bin/xschedctl", "cdi", "generate"], f"init: {gen}")
    shim_host = gen[gen.index("--shim-dir") + 1]
    out = gen[gen.index("--output") + 1]
    check(cmds[0][2].rstrip("/") == shim_host, "the shims are copied elsewhere than --shim-dir")
    check(shim_host in host.values() and os.path.dirname(out) in host.values(),
          "--shim-dir or --output not on a hostPath volume")
    check(out.startswith("/etc/cdi/") and out.endswith(".json"), f"--output {out}")
    check(gen[gen.index("--config") + 1] == conf_path, "init: another --config")
    with open(os.path.join(tmp, "generate.args"), "w") as f:
        f.write("\n".join(gen[2:]))
    with open(os.path.join(tmp, "probe.args"), "w") as f:
        f.write("\n".join(probe[1:]))
    with open(os.path.join(tmp, "daemon.args"), "w") as f:
        f.write("\n".join(daemon_c["command"][1:]))
    with open(os.path.join(tmp, "paths"), "w") as f:
        f.write(f"{shim_host}\n{conf_path}\n")

# --- the example pods -----------------------------------------------------
inf = kinds.get(("Pod", "inference"))
trn = kinds.get(("Pod", "training"))
check(inf is not None and trn is not None, "the example pods are missing")
if inf and trn:
    for p in (inf, trn):
        pod_spec_checks(p["metadata"]["name"], p["spec"])
        check(all(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu") == 1
                  for c in p["spec"]["containers"]), f"{p['metadata']['name']}: no GPU limit")
    ann = {k: v for k, v in inf["metadata"].get("annotations", {}).items() if k.startswith("cdi.k8s.io/")}
    check(len(ann) == 1, f"inference: CDI annotations {ann}")
    with open(os.path.join(tmp, "cdi.device"), "w") as f:
        f.write("".join(ann.values()))
    tc = trn["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in tc["env"]}
    mounts = {m["mountPath"]: m["name"] for m in tc["volumeMounts"]}
    tv = {v["name"]: v for v in trn["spec"]["volumes"]}
    with open(os.path.join(tmp, "training.json"), "w") as f:
        import json
        json.dump({"env": env, "mounts": {p: tv[n]["hostPath"]["path"] for p, n in mounts.items()}}, f)

# --- the Containerfile builds the image the manifests name ----------------
cf = open(os.path.join(d, "Containerfile")).read()
check(f"-t xsched:{version} " in cf, f"the Containerfile's instructions do not tag xsched:{version}")
check(f"xsched_{version}_amd64.deb" in cf, "the Containerfile installs another version's package")

for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
. "$(dirname "$0")/sh_util.sh"
echo "ok: the manifests parse and hold together"

# --- run what the manifests run, here --------------------------------------
"$daemon" --check-config --config "$tmp/xschedd.conf" >"$tmp/check.out" 2>&1 ||
	fail "the ConfigMap's xschedd.conf: $(cat "$tmp/check.out")"
mapfile -t daemon_args <"$tmp/daemon.args"
"$daemon" --help >"$tmp/dhelp" 2>&1
for o in "${daemon_args[@]}"; do
	[[ $o == --* ]] && ! grep -q -- "$o" "$tmp/dhelp" && fail "xschedd has no option $o"
done
mapfile -t probe_args <"$tmp/probe.args"
"$ctl" "${probe_args[@]:0:${#probe_args[@]}-1}" status --help >/dev/null 2>&1 ||
	fail "the liveness probe's command line is refused: ${probe_args[*]}"
# The init container's line with the ConfigMap and this build's shims
# standing for the ones it copies to the host.
mapfile -t gen <"$tmp/generate.args"
shim_host=$(sed -n 1p "$tmp/paths")
conf_path=$(sed -n 2p "$tmp/paths")
args=()
for ((i = 0; i < ${#gen[@]}; i++)); do
	case ${gen[i]} in
	--config) args+=(--config "$tmp/xschedd.conf"); ((i++)) ;;
	--shim-dir) args+=(--shim-dir "$(realpath "$shim_dir")"); ((i++)) ;;
	--output) args+=(--output "$tmp/xsched.json"); ((i++)) ;;
	*) args+=("${gen[i]}") ;;
	esac
done
"$ctl" "${args[@]}" 2>"$tmp/gen.err" || fail "the init container's cdi generate: $(cat "$tmp/gen.err")"
[[ -s $tmp/gen.err ]] && fail "cdi generate warned: $(cat "$tmp/gen.err")"
/usr/bin/python3 - "$tmp/xsched.json" "$(cat "$tmp/cdi.device")" "$tmp/training.json" \
	"$shim_host" "$(realpath "$shim_dir")" <<'PY' || fail "the example pods and the spec disagree"
import json, sys
spec = json.load(open(sys.argv[1]))
kind, _, dev = sys.argv[2].partition("=")
training = json.load(open(sys.argv[3]))
shim_host, build_shims = sys.argv[4], sys.argv[5]
assert kind == spec["kind"], (kind, spec["kind"])
assert dev in [d["name"] for d in spec["devices"]], dev
edits = spec["containerEdits"]
spec_env = dict(e.split("=", 1) for e in edits["env"])
# The by-hand pod mounts what the spec mounts (shim directory and socket
# directory) and names paths inside those mounts.
mounts = {m["containerPath"]: m["hostPath"].replace(build_shims, shim_host) for m in edits["mounts"]}
env = training["env"]
assert env["XSCHED_SOCKET"] == spec_env["XSCHED_SOCKET"], env
for p in env["LD_PRELOAD"].split(":"):
    assert p in mounts, p
    assert mounts[p].startswith(shim_host + "/"), mounts[p]
    d = p.rsplit("/", 1)[0]
    assert training["mounts"].get(d) == shim_host, (d, training["mounts"])
sockdir = spec_env["XSCHED_SOCKET"].rsplit("/", 1)[0]
assert training["mounts"].get(sockdir) == mounts[sockdir], training["mounts"]
prio = int(env["XSCHED_PRIORITY"])
assert -100 <= prio <= 100
print(f"ok: pods: inference asks for {sys.argv[2]}, training mounts {sorted(training['mounts'])}")
PY

[[ $failures == 0 ]] && echo "ok: Kubernetes manifests"
[[ $failures == 0 ]]
