#!/usr/bin/env bash
#
# run_all.sh: the whole evaluation in one command. Runs every scenario of
# bench/scenarios in turn (their default configuration, or --smoke, the
# CI one: seconds each), collecting their results in one directory, then
# bench_preempt (preemption latency per level and command size), whose
# Markdown tables it converts to TSV, bench_cl_preempt (the OpenCL shim's
# preemption latency at Lv1 and Lv2 on PoCL, which writes its own TSV),
# and finally draws the figures with tools/plots.sh. Scenarios run one after another, never together: each
# measures timing on a machine the others would load.
#
# Results go to ${XS_RESULTS:-$BUILD_DIR/results} (--smoke:
# $BUILD_DIR/results-smoke, so a smoke run never overwrites a full one),
# one directory per scenario as the scenarios lay it out, plus in each
#   output.txt             what the scenario printed (stdout and stderr;
#                          plots.sh takes the machine line from it)
# and for bench_preempt, in preempt/:
#   output.txt             its full output
#   summary.tsv            level window size_us p50_us p99_us max_us
#                          xq_p99_us max_inflight (the latency table)
#   overhead.tsv           size_us native_ms xsched_ms overhead_pct
# and for bench_cl_preempt, in preempt_cl/: output.txt, summary.tsv and
# lat_lv<L>-<K>ms.txt (bench_cl_preempt --out; it says "skipped" without
# PoCL or the test build of the OpenCL shim, as the OpenCL scenarios do).
# Before a scenario runs, its previous summary.tsv, lat_*.txt and
# output.txt are removed, so a scenario that skips leaves no stale figure.
#
# A scenario that fails stops the run (exit 1); one that skips (the OpenCL
# ones without PoCL print "skipped") does not. The last lines say what ran,
# what skipped and what did not run.
#
# Figures go to --out (default docs/results in the source tree; with
# --smoke a new temporary directory, and only when gnuplot is installed:
# the full run needs it and checks before starting); with --only, only
# the figures of those steps.
#
# Usage: run_all.sh [--smoke] [--out DIR] [--only NAME[,NAME...]] [--no-plots]
#   NAME: priority, graph, hostgap, llm, bandwidth, deadline, priority_cl, dnn_cl,
#   heterogeneous, overhead, scale, preempt, preempt_cl, guardian_cost
#   (default: all, in this order)
# Environment: BUILD_DIR (default build), XS_RESULTS (see above).
set -euo pipefail

ALL=(priority graph hostgap llm bandwidth deadline priority_cl dnn_cl heterogeneous overhead scale preempt
	preempt_cl guardian_cost)
me=run_all.sh
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

die() {
	echo "$me: $*" >&2
	exit 1
}
usage() {
	sed -n '/^# Usage: /,/^# Environment: /s/^# \(Usage: \)\{0,1\}//p' "$0" >&2
	exit 2
}

smoke=0 out='' only='' plots=1
while (($#)); do
	case $1 in
	--smoke) smoke=1 ;;
	--out) [[ $# -ge 2 ]] || usage; out=$2; shift ;;
	--only) [[ $# -ge 2 ]] || usage; only=$2; shift ;;
	--no-plots) plots=0 ;;
	*) usage ;;
	esac
	shift
done

steps=("${ALL[@]}")
if [[ -n $only ]]; then
	IFS=, read -r -a steps <<<"$only"
	for s in "${steps[@]}"; do
		[[ " ${ALL[*]} " == *" $s "* ]] || die "--only: unknown step '$s' (one of: ${ALL[*]})"
	done
fi

BUILD_DIR=${BUILD_DIR:-$src/build}
[[ -d $BUILD_DIR ]] ||
	die "no build directory $BUILD_DIR (set BUILD_DIR, or: cmake -S . -B build -G Ninja && cmake --build build)"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
export BUILD_DIR
if ((smoke)); then
	res=${XS_RESULTS:-$BUILD_DIR/results-smoke}
else
	res=${XS_RESULTS:-$BUILD_DIR/results}
fi
mkdir -p "$res"
res=$(cd "$res" && pwd)
export XS_RESULTS=$res

have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1
if ((plots)); then
	if ((smoke)); then
		if [[ -z $out ]] && ((have_gnuplot)); then
			out=$(mktemp -d "${TMPDIR:-/tmp}/xs-plots.XXXXXX")
		fi
	else
		((have_gnuplot)) ||
			die "gnuplot is not installed (Debian: apt-get install -y gnuplot-nox), or pass --no-plots"
		out=${out:-$src/docs/results}
	fi
fi

ran=() skipped=() failed=''

# report: what ran, skipped, failed, and what never ran.
report() {
	local s rest=()
	for s in "${steps[@]}"; do
		[[ " ${ran[*]} ${skipped[*]} $failed " == *" $s "* ]] || rest+=("$s")
	done
	echo
	echo "run_all: ran: ${ran[*]:-none}"
	echo "run_all: skipped: ${skipped[*]:-none}"
	[[ -n $failed ]] && echo "run_all: FAILED: $failed"
	echo "run_all: not run: ${rest[*]:-none}"
	echo "run_all: results in $res"
}

# fail STEP MSG: the run stops here.
fail() {
	failed=$1
	echo "$me: $1: $2" >&2
	report
	exit 1
}

# preempt_tsv OUTPUT DIR: bench_preempt's two Markdown tables into
# DIR/summary.tsv and DIR/overhead.tsv. The rows are
#   | Lv1 | threshold 8 | 50.0 | P50 | P99 | max | XQueue P99 | max in flight |
#   | 10.0 us | native ms | xsched ms | +0.41% |
preempt_tsv() {
	awk -F'|' -v lat="$2/summary.tsv" -v ovh="$2/overhead.tsv" '
		function t(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
		BEGIN {
			print "level\twindow\tsize_us\tp50_us\tp99_us\tmax_us\txq_p99_us\tmax_inflight" > lat
			print "size_us\tnative_ms\txsched_ms\toverhead_pct" > ovh
		}
		/^\| Lv[0-9]+ \|/ && NF >= 10 {
			nl++
			print t($2) "\t" t($3) "\t" t($4) "\t" t($5) "\t" t($6) "\t" t($7) "\t" t($8) "\t" t($9) > lat
		}
		/^\| [0-9.]+ us \|/ && NF >= 6 {
			no++
			s = t($2); sub(/ us$/, "", s); o = t($5); sub(/%$/, "", o); sub(/^\+/, "", o)
			print s "\t" t($3) "\t" t($4) "\t" o > ovh
		}
		END { exit !(nl > 0) }' "$1"
}

run_preempt() {
	local bin=$BUILD_DIR/bench/bench_preempt dir=$res/preempt args=() rc=0
	[[ -x $bin ]] || fail preempt "bench/bench_preempt not built: $bin is missing (cmake --build $BUILD_DIR)"
	mkdir -p "$dir"
	rm -f "$dir/summary.tsv" "$dir/overhead.tsv" "$dir/output.txt"
	((smoke)) && args=(--samples 20 --reps 1)
	echo "== preempt: $bin ${args[*]}"
	# pipefail: the pipeline's status is bench_preempt's when tee succeeds.
	"$bin" "${args[@]}" 2>&1 | tee "$dir/output.txt" || rc=$?
	((rc == 0)) || fail preempt "bench_preempt failed (exit $rc), see $dir/output.txt"
	preempt_tsv "$dir/output.txt" "$dir" ||
		fail preempt "no latency table in bench_preempt's output ($dir/output.txt)"
	ran+=(preempt)
}

# bench_cl_preempt: OpenCL preemption latency; --quick for --smoke.
run_preempt_cl() {
	local bin=$BUILD_DIR/bench/bench_cl_preempt dir=$res/preempt_cl args=() rc=0
	mkdir -p "$dir"
	rm -f "$dir/summary.tsv" "$dir/output.txt" "$dir"/lat_*.txt
	if [[ ! -x $bin ]]; then
		echo "preempt_cl: skipped: bench/bench_cl_preempt not built (OpenCL headers and loader missing at build time)" |
			tee "$dir/output.txt"
		skipped+=(preempt_cl)
		return 0
	fi
	((smoke)) && args=(--quick)
	echo "== preempt_cl: $bin ${args[*]} --out $dir"
	"$bin" "${args[@]}" --out "$dir" 2>&1 | tee "$dir/output.txt" || rc=$?
	((rc == 0)) || fail preempt_cl "bench_cl_preempt failed (exit $rc), see $dir/output.txt"
	if grep -q "^bench_cl_preempt: skipped: " "$dir/output.txt"; then
		skipped+=(preempt_cl)
	else
		[[ -s $dir/summary.tsv ]] || fail preempt_cl "bench_cl_preempt wrote no $dir/summary.tsv"
		ran+=(preempt_cl)
	fi
}

run_scenario() {
	local sc=$1 dir=$res/$1 args=() rc=0 t0
	[[ -x $here/$sc.sh ]] || fail "$sc" "$here/$sc.sh is missing or not executable"
	mkdir -p "$dir"
	rm -f "$dir/summary.tsv" "$dir/output.txt" "$dir"/lat_*.txt
	((smoke)) && args=(--smoke)
	echo "== $sc: $sc.sh ${args[*]}"
	t0=$SECONDS
	"$here/$sc.sh" "${args[@]}" 2>&1 | tee "$dir/output.txt" || rc=$?
	((rc == 0)) || fail "$sc" "$sc.sh failed (exit $rc), see $dir/output.txt"
	if grep -q "^$sc: skipped: " "$dir/output.txt"; then
		skipped+=("$sc")
	else
		[[ -s $dir/summary.tsv ]] || fail "$sc" "$sc.sh succeeded but wrote no $dir/summary.tsv"
		ran+=("$sc")
	fi
	echo "== $sc: done in $((SECONDS - t0)) s"
}

echo "run_all: $( ((smoke)) && echo smoke || echo full) run, build $BUILD_DIR, results $res"
for s in "${steps[@]}"; do
	case $s in
	preempt) run_preempt ;;
	preempt_cl) run_preempt_cl ;;
	*) run_scenario "$s" ;;
	esac
done

if ((plots)) && [[ -n $out ]] && ((have_gnuplot)); then
	# With --only, only those steps' figures: the others' results, if any,
	# are from another run.
	pargs=()
	[[ -n $only ]] && pargs=(--only "$only")
	echo "== figures: tools/plots.sh ${pargs[*]} $res $out"
	"$src/tools/plots.sh" "${pargs[@]}" "$res" "$out" || fail plots "tools/plots.sh failed"
	echo "run_all: figures in $out"
elif ((plots)); then
	echo "run_all: figures skipped: gnuplot is not installed (apt-get install -y gnuplot-nox)"
fi
report
