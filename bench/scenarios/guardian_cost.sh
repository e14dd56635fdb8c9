#!/usr/bin/env bash
#
# guardian_cost.sh: what the OpenCL shim's guardian (Lv2: every work-group
# checks the queue's control word; src/shim/opencl/guard/cl_guard_rw.h) costs in
# kernel throughput, on PoCL, with real OpenCL applications:
#   gemm    CLBlast's SGEMM routine as CLBlast's own routine tuner
#           (clblast_tuner_routine_xgemm, package clblast-utils) times it:
#           the in-direct GEMM (pad/transpose kernels and the tuned Xgemm
#           kernel) for m=n=k from 64 up in steps of 64, the best of --runs
#           calls of each, reported as GFLOPS for 256..--gemm-max; stopped
#           once size --gemm-max is timed (the tuner would go on to 2048
#           and the direct kernel)
#   clpeak  clpeak's single-precision compute and global-memory bandwidth
#           tests (package clpeak), GFLOPS and GB/s per vector width, and
#           its kernel launch latency (us: the guarded launch's own cost)
# Both run unchanged under the production OpenCL shim with the in-process
# scheduler and nothing else on the device, so nothing preempts them: the
# guardian on (XSCHED_OPENCL_LV2=1, the default) against off (=0), the
# same shim and scheduler otherwise. The two alternate in --pairs pairs
# (on/off, then off/on, ...), so that a drifting machine hits both. Two
# estimates per figure: the median over the pairs of on / off, and best
# against best (each side's highest throughput over all its runs: on a
# shared 2-CPU machine a disturbance only ever slows a run down, and
# PoCL's throughput varies by up to 2x between identical runs). Goal
# (issue 17): throughput with the guardian >= 98% of without (a cost <=
# 2%).
#
# The guardian must really be on: the runs keep XSCHED_LOG=info, and a
# queue that falls back to level 1 (a kernel the rewriter left alone)
# says so there; clpeak's runs also write XSCHED_OPENCL_STATS (the guarded
# kernel launches). Both are printed with the table.
#
# Output: the table and $XS_OUT/summary.tsv
#   bench test unit pairs off on ratio diff_pct best_off best_on best_diff_pct
# (off/on: medians over the pairs; ratio: median of the pairs' on/off;
# diff_pct: (ratio - 1) x 100, negative = slower with the guardian; best_*:
# each side's best run and their difference; latency: 1/latency compared;
# the "all" row of a bench: the geometric mean over its tests, GEMM rows
# shown for multiples of 256 and --gemm-max only), and raw.tsv (every run's figures:
# pair config bench test value).
#
# Usage: guardian_cost.sh [--smoke] [--pairs N] [--runs N] [--gemm-max N]
#                         [--no-gemm] [--no-clpeak]
# --smoke: one pair, GEMM up to 128, clpeak's kernel-launch latency test
# only (seconds; proves the procedure, says nothing about the goal).
# Environment: BUILD_DIR (default build), XS_RESULTS (default
# $BUILD_DIR/results). Skipped (exit 0, "guardian_cost: skipped: why")
# without PoCL, the OpenCL shim, or both clpeak and the CLBlast tuner.
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib_extra.sh
. "$here/lib_extra.sh"

pairs=5 runs=10 gemm_max=768 gemm_min=256 do_gemm=1 do_clpeak=1 smoke=0
clpeak_tests=(--compute-sp --global-bandwidth --kernel-latency)
usage() {
	sed -n 's/^# Usage: //p; s/^#                         / /p' "$0" | head -2 >&2
	exit 2
}
while (($#)); do
	case $1 in
	--smoke) smoke=1 pairs=1 runs=2 gemm_max=128 gemm_min=64 clpeak_tests=(--kernel-latency) ;;
	--pairs) pairs=$2; shift ;;
	--runs) runs=$2; shift ;;
	--gemm-max) gemm_max=$2; shift ;;
	--no-gemm) do_gemm=0 ;;
	--no-clpeak) do_clpeak=0 ;;
	*) usage ;;
	esac
	shift
done
((pairs >= 1 && runs >= 1 && gemm_max >= 64)) || usage
((gemm_min <= gemm_max)) || gemm_min=$gemm_max
scn_setup guardian_cost
scn_cl_setup
scn_cl_require shim
gemm_bin=$(command -v clblast_tuner_routine_xgemm || true)
clpeak_bin=$(command -v clpeak || true)
((do_gemm)) && [[ -z $gemm_bin ]] && { echo "gemm: left out: clblast_tuner_routine_xgemm not installed (package clblast-utils)"; do_gemm=0; }
((do_clpeak)) && [[ -z $clpeak_bin ]] && { echo "clpeak: left out: clpeak not installed (package clpeak)"; do_clpeak=0; }
if ((!do_gemm && !do_clpeak)); then
	echo "guardian_cost: skipped: neither CLBlast's tuner nor clpeak to run (packages clblast-utils, clpeak)"
	exit 0
fi
command -v stdbuf >/dev/null || scn_die "stdbuf (coreutils) is missing"

# env_of CFG: XS_ENV for the guardian on or off.
env_of() {
	XS_ENV=("POCL_MAX_WORK_GROUP_SIZE=$POCL_MAX_WORK_GROUP_SIZE" "LD_PRELOAD=$XS_CL_SHIM"
		"XSCHED_SCHEDULER=local" "XSCHED_LOG=info" "XSCHED_OPENCL_LV2=$([[ $1 == on ]] && echo 1 || echo 0)")
}

# note_levels CFG WHAT ERRFILE: a queue that fell to level 1 in a
# guardian-on run is worth saying (once per reason).
note_levels() {
	[[ $1 == on ]] || return 0
	{ grep -o 'OpenCL queue: level 1 (.*)' "$3" 2>/dev/null || true; } | sort -u | while IFS= read -r l; do
		grep -qxF "$2: $l" "$XS_WORK/levels" 2>/dev/null || echo "$2: $l" >>"$XS_WORK/levels"
	done
	return 0
}

# gemm_once CFG: one run of the routine tuner until size gemm_max is timed,
# its output in $XS_WORK/gemm.out; fails (with what it said) when it ended
# on its own before that.
gemm_once() {
	local out=$XS_WORK/gemm.out err=$XS_WORK/gemm.err pid i rc=0
	env_of "$1"
	# Its own directory: the tuner reads and writes JSON files there.
	mkdir -p "$XS_WORK/gemm" && cd "$XS_WORK/gemm"
	# Line-buffered, so that its table can be read as it grows; it runs on
	# after its output is closed (PoCL ignores SIGPIPE), hence the kill.
	env "${XS_ENV[@]}" stdbuf -oL "$gemm_bin" -runs "$runs" >"$out" 2>"$err" &
	pid=$!
	XS_PIDS+=("$pid")
	for ((i = 0; i < 6000; i++)); do
		grep -qE "^\| +$gemm_max \| +[0-9.]+ ms \|" "$out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || rc=$?
	cd "$XS_WORK"
	grep -qE "^\| +$gemm_max \| +[0-9.]+ ms \|" "$out" && return 0
	echo "gemm ($1): the tuner ended (status $rc) before size $gemm_max:" \
		"$(tail -2 "$out" | tr '\n' ' ') $(tail -3 "$err" | tr '\n' ' ')" >&2
	return 1
}

# gemm_run PAIR CFG: gemm_once (once more if it failed, saying so), its
# in-direct table's rows into raw.tsv as GFLOPS.
gemm_run() {
	local pair=$1 cfg=$2
	gemm_once "$cfg" || gemm_once "$cfg" || scn_die "gemm ($cfg): the tuner failed twice"
	awk -v p="$pair" -v c="$cfg" -v lo="$gemm_min" -v hi="$gemm_max" '
		/Testing the direct/ { exit }
		/^\| +[0-9]+ \| +[0-9.]+ ms \|/ { v = $2; t = $4
			if (v >= lo && v <= hi && t > 0) { printf "%d\t%s\tgemm\tn=%d\t%.3f\n", p, c, v, 2 * v * v * v / (t * 1e6); n++ } }
		END { exit !n }' "$XS_WORK/gemm.out" >>"$XS_WORK/raw.tsv" ||
		scn_die "gemm ($cfg): no timings in the tuner's output"
	note_levels "$cfg" gemm "$XS_WORK/gemm.err"
}

# clpeak_run PAIR CFG: clpeak's tests, each figure into raw.tsv.
clpeak_run() {
	local pair=$1 cfg=$2 out=$XS_WORK/clpeak.out err=$XS_WORK/clpeak.err
	env_of "$cfg"
	local try rc
	for try in 1 2; do
		rc=0
		env "${XS_ENV[@]}" "XSCHED_OPENCL_STATS=$XS_WORK/stats.$cfg" "$clpeak_bin" \
			"${clpeak_tests[@]}" >"$out" 2>"$err" || rc=$?
		((rc == 0)) && break
		echo "clpeak ($cfg) failed (status $rc): $(tail -3 "$err" | tr '\n' ' ')" >&2
		((try == 2)) && scn_die "clpeak ($cfg) failed twice"
	done
	awk -v p="$pair" -v c="$cfg" '
		/compute \(GFLOPS\)/ { sec = "compute-sp"; unit = "GFLOPS"; next }
		/bandwidth \(GBPS\)/ { sec = "bandwidth"; unit = "GB/s"; next }
		/Kernel launch latency/ { printf "%d\t%s\tclpeak\tlaunch-latency\t%s\n", p, c, $NF == "us" ? $(NF - 1) : $NF; n++; next }
		sec != "" && /^ +[a-z0-9]+ +: +[0-9.]+/ { printf "%d\t%s\tclpeak\t%s/%s\t%s\n", p, c, sec, $1, $3; n++ }
		/^ *$/ { sec = "" }
		END { exit !n }' "$out" >>"$XS_WORK/raw.tsv" ||
		scn_die "clpeak ($cfg): no figures in its output: $(tail -3 "$out")"
	note_levels "$cfg" clpeak "$err"
}

scn_machine
echo "device: $(clinfo 2>/dev/null | sed -n 's/^ *Device Name *//p' | head -1), $(clinfo 2>/dev/null | sed -n 's/^ *Driver Version *//p' | head -1 | sed 's/^/PoCL /')"
echo "guardian_cost: the OpenCL shim ($XS_CL_SHIM, XSCHED_SCHEDULER=local) with XSCHED_OPENCL_LV2=1 (on) vs 0 (off), $pairs pair(s), alternating"
((do_gemm)) && echo "gemm: $gemm_bin -runs $runs, in-direct SGEMM m=n=k $gemm_min..$gemm_max (step 64), best of $runs calls each"
((do_clpeak)) && echo "clpeak: $clpeak_bin ${clpeak_tests[*]}"
: >"$XS_WORK/raw.tsv"
for ((p = 1; p <= pairs; p++)); do
	if ((p % 2)); then order=(on off); else order=(off on); fi
	for cfg in "${order[@]}"; do
		((do_gemm)) && gemm_run "$p" "$cfg"
		((do_clpeak)) && clpeak_run "$p" "$cfg"
	done
	echo "  pair $p/$pairs done (load average $(cut -d' ' -f1-3 /proc/loadavg))"
done
{
	printf 'pair\tconfig\tbench\ttest\tvalue\n'
	cat "$XS_WORK/raw.tsv"
} >"$XS_OUT/raw.tsv"

scn_tsv_header bench test unit pairs off on ratio diff_pct best_off best_on best_diff_pct
# Per test: medians of each side, the pairs' on/off ratios (latency: off/on,
# so that > 1 is always "faster with the guardian"), each side's best; per
# bench, the geometric means of its tests' ratios (latency left out).
awk -F'\t' '
	function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ k = $3 SUBSEP $4; v[k, $2, $1] = $5; if (!(k in seen)) { seen[k] = 1; order[++nk] = k; b[k] = $3; t[k] = $4 }
		if ($1 > np) np = $1 }
	END {
		for (i = 1; i <= nk; i++) {
			k = order[i]; n = 0; no = 0; nf = 0; bo = ""; bf = ""
			lat = t[k] == "launch-latency"
			for (p = 1; p <= np; p++) {
				if ((k, "on", p) in v) { x = v[k, "on", p]; on[++no] = x
					if (bo == "" || (lat ? x < bo : x > bo)) bo = x }
				if ((k, "off", p) in v) { x = v[k, "off", p]; off[++nf] = x
					if (bf == "" || (lat ? x < bf : x > bf)) bf = x }
				if (((k, "on", p) in v) && ((k, "off", p) in v) && v[k, "on", p] > 0 && v[k, "off", p] > 0)
					rs[++n] = lat ? v[k, "off", p] / v[k, "on", p] : v[k, "on", p] / v[k, "off", p]
			}
			if (!n || bo <= 0 || bf <= 0) continue
			unit = b[k] == "gemm" ? "GFLOPS" : t[k] ~ /^compute/ ? "GFLOPS" : t[k] ~ /^bandwidth/ ? "GB/s" : "us"
			m = med(rs, n); br = lat ? bf / bo : bo / bf
			if (!lat) { lg[b[k]] += log(m); lb[b[k]] += log(br); ng[b[k]]++ }
			# GEMM: every size counts in "all", the table shows multiples of 256.
			if (b[k] == "gemm" && substr(t[k], 3) % 256 && substr(t[k], 3) != gmax) continue
			printf "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.4f\t%+.2f\t%.2f\t%.2f\t%+.2f\n", b[k], t[k], unit, n,
				med(off, nf), med(on, no), m, (m - 1) * 100, bf, bo, (br - 1) * 100
		}
		for (g in ng) { m = exp(lg[g] / ng[g]); br = exp(lb[g] / ng[g])
			printf "%s\tall\tgeomean\t-\t-\t-\t%.4f\t%+.2f\t-\t-\t%+.2f\n", g, m, (m - 1) * 100, (br - 1) * 100 }
	}' gmax="$gemm_max" "$XS_WORK/raw.tsv" >>"$XS_OUT/summary.tsv"
echo
scn_table
echo
if [[ -s $XS_WORK/levels ]]; then
	echo "guardian NOT on everywhere: queues that fell to level 1 with the guardian on:"
	sed 's/^/  /' "$XS_WORK/levels"
else
	echo "guardian on: no queue fell to level 1 in the runs with XSCHED_OPENCL_LV2=1 (XSCHED_LOG=info)"
fi
for cfg in on off; do
	[[ -s $XS_WORK/stats.$cfg ]] &&
		echo "clpeak, guardian $cfg, last run: $(grep -E '^pid [0-9]+ queues' "$XS_WORK/stats.$cfg" | tail -1 | cut -d' ' -f3-)"
done
echo "goal: throughput with the guardian >= 0.98 x without (diff_pct, best_diff_pct >= -2) for GEMM and clpeak's kernels"
echo "results: $XS_OUT"
