#!/usr/bin/env bash
#
# plots.sh: the figures of the evaluation, drawn with gnuplot from what the
# scenario scripts (bench/scenarios/*.sh) leave in a results directory:
# each scenario's summary.tsv and raw latency files lat_*.txt, plus
# preempt/summary.tsv (bench_preempt's table as TSV, made by
# bench/scenarios/run_all.sh) and preempt_cl/ (bench_cl_preempt --out). The scripts are the only source of numbers:
# this file reads their columns and draws, it recomputes nothing but the
# empirical CDFs of the raw latencies. A scenario whose results are missing
# is skipped with a message; gnuplot missing is an error.
#
# The machine line comes from the scenario's own output when run_all.sh
# saved it (<scenario>/output.txt, its "machine:" line); summary.tsv does
# not record it. deadline's periods (its deadlines) also come from there.
#
# Figures (PNG, in OUT_DIR):
#   priority_cdf_<T>us.png      foreground latency CDF per configuration,
#                               one figure per command size T (api-lv2/3
#                               have no raw latencies: their P50/P90/P99
#                               are drawn as points)
#   priority_fg_norm.png        foreground P50/P90/P99 / standalone
#   priority_bg_norm.png        background throughput / bg-alone
#   priority_cl_cdf.png, priority_cl_fg_norm.png, priority_cl_bg_norm.png
#   preempt_cl_cdf_<K>ms.png    OpenCL preemption latency CDF at Lv1 and
#                               Lv2 for a K ms kernel (bench_cl_preempt
#                               --out; log x, the Lv2 goal of two
#                               work-groups dashed)
#   guardian_cost.png           throughput with the guardian vs without
#                               (%), per test (guardian_cost.sh; goal -2%)
#   graph_cdf.png               foreground latency CDF next to a background
#                               flooding CUDA graphs (sliced and unsliced);
#                               graph_fg_norm.png, graph_bg_norm.png
#   hostgap_cdf.png             foreground latency CDF of a foreground with
#                               host gaps inside its tasks (idle grace on
#                               and off); hostgap_fg_norm.png, hostgap_bg_norm.png
#   llm_ttft_cdf.png, llm_tpot_cdf.png  time to first token and time per
#                               output token of the LLM server per
#                               configuration (llm.sh; log x)
#   heterogeneous_cdf_<dir>.png (sim-fg, cl-fg), heterogeneous_fg_norm.png,
#   heterogeneous_bg_norm.png
#   deadline_cdf_frame.png, deadline_cdf_batch.png, deadline_missed.png
#   bandwidth_shares.png        target vs achieved share of A and B
#   bandwidth_total.png         total throughput / standalone
#   overhead_throughput.png     xsched / native throughput per size
#   overhead_cpu.png            xsched's CPU cost at ~10k commands/s (% of
#                               one core)
#   overhead_launch.png         extra application-thread CPU per call (ns)
#   scale_latency.png           daemon decision and wakeup P50/P99 per
#                               process count
#   preempt_latency.png         preemption latency vs command size, per
#                               level (P99 solid, P50 dashed)
#   preempt_overhead.png        Lv1 runtime overhead per command size
#
# Usage: plots.sh [--only NAME[,NAME...]] [--cdf-only] RESULTS_DIR OUT_DIR
#   --only      the scenarios to draw (priority, priority_cl, graph, hostgap,
#               llm, heterogeneous, deadline, bandwidth, overhead, scale,
#               preempt, preempt_cl, guardian_cost); RESULTS_DIR
#               may then also be one scenario's directory itself (e.g.
#               build/results/priority)
#   --cdf-only  only the latency CDFs
# Prints the path of each PNG written, one per line, on stdout; messages go
# to stderr. Exit status 0 when every present scenario was drawn (even if
# none was present), 1 on an error, 2 on bad usage.
#
# The plot_* functions are called by name (plot_$scenario): ShellCheck
# would call their code unreachable. Loops over $(awk ...) split words on
# purpose: configuration names and sizes are single words.
# shellcheck disable=SC2317,SC2013
set -euo pipefail

ALL=(priority priority_cl graph hostgap llm heterogeneous deadline bandwidth overhead scale
	preempt preempt_cl guardian_cost)
me=plots.sh

die() {
	echo "$me: $*" >&2
	exit 1
}
note() {
	echo "$me: $*" >&2
}
usage() {
	sed -n '/^# Usage: /,/^#   --cdf-only/s/^# \(Usage: \)\{0,1\}//p' "$0" >&2
	exit 2
}

only='' cdf_only=0
while (($#)); do
	case $1 in
	--only) [[ $# -ge 2 ]] || usage; only=$2; shift ;;
	--cdf-only) cdf_only=1 ;;
	-h | --help) usage ;;
	--*) usage ;;
	*) break ;;
	esac
	shift
done
(($# == 2)) || usage
res=$1 out=$2
[[ -d $res ]] || die "no results directory $res"

command -v gnuplot >/dev/null 2>&1 ||
	die "gnuplot is not installed (Debian: apt-get install -y gnuplot-nox)"
terms=$(gnuplot -e 'set terminal' 2>&1 || true)
if grep -q '^ *pngcairo ' <<<"$terms"; then
	term='pngcairo noenhanced font ",11" size'
elif grep -q '^ *png ' <<<"$terms"; then
	term='png noenhanced size'
else
	die "this gnuplot has neither the pngcairo nor the png terminal"
fi

scenarios=("${ALL[@]}")
if [[ -n $only ]]; then
	IFS=, read -r -a scenarios <<<"$only"
	for s in "${scenarios[@]}"; do
		[[ " ${ALL[*]} " == *" $s "* ]] || die "--only: unknown scenario '$s' (one of: ${ALL[*]})"
	done
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xs-plots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# scen_dir NAME: the directory holding NAME's results: RESULTS_DIR/NAME, or
# RESULTS_DIR itself when it is that scenario's directory (--only NAME).
scen_dir() {
	if [[ -f $res/$1/summary.tsv ]]; then
		echo "$res/$1"
	elif ((${#scenarios[@]} == 1)) && [[ -n $only && -f $res/summary.tsv ]]; then
		echo "$res"
	fi
}

# machine_of DIR: the machine line the scenario printed, if it was saved.
machine_of() {
	local m=''
	[[ -f $1/output.txt ]] && m=$(sed -n 's/^machine: //p' "$1/output.txt" | head -1)
	echo "${m:-machine not recorded (run through bench/scenarios/run_all.sh to keep it)}"
}

# col FILE NAME: the 1-based index of column NAME in FILE's header, 0 if none.
col() {
	awk -F'\t' -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) { print i; exit }
		print 0; exit }' "$1"
}

# need_cols FILE COL...: fails, naming them, when FILE lacks any column COL
# (a scenario's output changed under this script).
need_cols() {
	local f=$1 c miss=()
	shift
	for c in "$@"; do
		(($(col "$f" "$c"))) || miss+=("$c")
	done
	((${#miss[@]} == 0)) || die "$f: no column ${miss[*]} (has: $(head -1 "$f" | tr '\t' ' '))"
}

# gq STRING: STRING as a gnuplot double-quoted string.
gq() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# label CFG: the legend of a configuration (in scenario $sc, the main
# loop's).
label() {
	case ${sc:-}:$1 in
	priority_cl:xsched) echo "xsched Lv2 (OpenCL shim, guardian)"; return ;;
	priority_cl:xsched-lv1) echo "xsched Lv1 (OpenCL shim, guardian off)"; return ;;
	preempt_cl:lv1) echo "Lv1 (guardian off), host side"; return ;;
	preempt_cl:lv2) echo "Lv2 (guardian), host side"; return ;;
	esac
	case $1 in
	lv1) echo "Lv1 (guardian off)" ;;
	lv2) echo "Lv2 (guardian)" ;;
	lv1-dev) echo "Lv1 (guardian off), device side" ;;
	lv2-dev) echo "Lv2 (guardian), device side" ;;
	standalone) echo "standalone" ;;
	native) echo "native (round-robin)" ;;
	xsched-lv1) echo "xsched Lv1 (CUDA shim)" ;;
	xsched-lv1-unsliced) echo "xsched Lv1, graphs not sliced" ;;
	xsched-lv1-nograce) echo "xsched Lv1, no idle grace" ;;
	xsched-lv1-nofloor) echo "xsched Lv1, no run floors" ;;
	xsched-lv1-cap1) echo "xsched Lv1, preempt_cap 1" ;;
	xsched-lv1-graphs) echo "xsched Lv1, offline graphs" ;;
	api-lv3-cap1) echo "xsched Lv3 (API), preempt_cap 1" ;;
	server-alone) echo "standalone" ;;
	api-alone) echo "standalone (API)" ;;
	api-lv[0-9]) echo "xsched Lv${1#api-lv} (API)" ;;
	xsched) echo "xsched (shim)" ;;
	*) echo "$1" ;;
	esac
}

# color CFG: a fixed color per configuration, the same in every figure
# (OpenCL: Lv1 blue, Lv2 green, as the API levels of the CUDA figures).
color() {
	case ${sc:-}:$1 in
	priority_cl:xsched) echo "#2ca02c"; return ;;
	esac
	case $1 in
	lv1) echo "#1f77b4" ;;
	lv2) echo "#2ca02c" ;;
	lv1-dev) echo "#aec7e8" ;;
	lv2-dev) echo "#98df8a" ;;
	standalone) echo "#000000" ;;
	native) echo "#d62728" ;;
	xsched-lv1 | xsched | hhpf | edf) echo "#1f77b4" ;;
	api-lv2 | hpf | hpf-frame) echo "#2ca02c" ;;
	api-lv3 | laxity) echo "#9467bd" ;;
	hpf-batch | xsched-lv1-unsliced | xsched-lv1-nograce | xsched-lv1-cap1) echo "#ff7f0e" ;;
	server-alone) echo "#000000" ;;
	api-alone) echo "#555555" ;;
	xsched-lv1-nofloor) echo "#17becf" ;;
	api-lv3-cap1) echo "#e377c2" ;;
	*) echo "#7f7f7f" ;;
	esac
}

# gp PNG MACHINE [W,H]: runs the gnuplot commands on stdin into PNG (W x H
# pixels, default 960,600), with the terminal, the machine line at the
# bottom and TSV input; prints PNG.
gp() {
	local png=$1 machine=$2 size=${3:-960,600} log=$tmp/gnuplot.err
	{
		echo "set terminal $term $size"
		echo "set output $(gq "$png")"
		printf '%s\n' 'set datafile separator "\t"'
		echo "set datafile missing \"-\""
		echo "set grid"
		echo "set bmargin 5"
		echo "set label 999 $(gq "$machine") at screen 0.01, screen 0.02 left font \",8\""
		cat
		echo "unset output"
	} >"$tmp/fig.gp"
	gnuplot "$tmp/fig.gp" 2>"$log" || die "gnuplot failed on $png: $(tail -3 "$log")"
	[[ -s $png ]] || die "gnuplot wrote nothing to $png"
	echo "$png"
}

# cdf LATFILE DATAFILE: "latency_ms<TAB>fraction" of LATFILE (us), sorted,
# from (first, 0): the empirical CDF as steps.
cdf() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.4f\t0\n", v[1] / 1000
		for (i = 1; i <= NR; i++) printf "%.4f\t%.6f\n", v[i] / 1000, i / NR }' >"$2"
}

# cdf_plot PNG TITLE MACHINE VLINE_MS SPEC...: a CDF figure, one line per
# SPEC "cfg|latfile" (or "cfg|@p50,p90,p99" for percentiles only, drawn as
# points); VLINE_MS, if not empty, a dashed vertical line labelled
# $cdf_vlabel (default "deadline"); $cdf_logx=1: a logarithmic x axis.
cdf_plot() {
	local png=$1 title=$2 machine=$3 vline=$4 spec cfg src n=0 plots=() d
	shift 4
	for spec in "$@"; do
		cfg=${spec%%|*} src=${spec#*|}
		n=$((n + 1))
		d=$tmp/cdf$n.tsv
		if [[ $src == @* ]]; then
			awk -v p="${src#@}" 'BEGIN { split(p, a, ","); f[1] = 0.5; f[2] = 0.9; f[3] = 0.99
				for (i = 1; i <= 3; i++) if (a[i] != "-" && a[i] != "") printf "%.4f\t%s\n", a[i] / 1000, f[i] }' >"$d"
			[[ -s $d ]] || continue
			plots+=("$(gq "$d") using 1:2 with points pt 7 ps 1.5 lc rgb $(gq "$(color "$cfg")") title $(gq "$(label "$cfg"): P50/90/99 only")")
		else
			cdf "$src" "$d"
			[[ -s $d ]] || continue
			plots+=("$(gq "$d") using 1:2 with steps lw 2 lc rgb $(gq "$(color "$cfg")") title $(gq "$(label "$cfg") (n=$(($(wc -l <"$d") - 1)))")")
		fi
	done
	((${#plots[@]})) || { note "$(basename "$png"): no latencies, skipped"; return 0; }
	{
		echo "set title $(gq "$title")"
		echo "set xlabel \"latency (ms)\""
		echo "set ylabel \"fraction of tasks with latency <= x\""
		echo "set yrange [0:1.02]"
		# The legend under the plot, where it hides no curve.
		echo "set bmargin 10"
		echo "set key at screen 0.5, screen 0.09 center center horizontal maxcols 2 width 1"
		[[ ${cdf_logx:-0} == 1 ]] && echo "set logscale x"
		if [[ -n $vline ]]; then
			echo "set arrow from $vline, graph 0 to $vline, graph 1 nohead dt 2 lw 2 lc rgb \"#555555\""
			echo "set label $(gq "${cdf_vlabel:-deadline}") at $vline, graph 0.97 left offset 0.5, 0"
		fi
		local IFS=,
		echo "plot ${plots[*]}"
	} | gp "$png" "$machine" 960,720
}

# bars PNG TITLE YLABEL MACHINE DATA [HLINE...]: clustered bars of DATA (TSV,
# header "label<TAB>series..."; "-" = no bar), horizontal reference lines.
bars() {
	local png=$1 title=$2 ylabel=$3 machine=$4 data=$5 ncol nrow h yr
	shift 5
	ncol=$(head -1 "$data" | awk -F'\t' '{ print NF }')
	nrow=$(($(wc -l <"$data") - 1))
	((nrow > 0)) || { note "$(basename "$png"): no rows, skipped"; return 0; }
	# The y range: 0, every bar and reference line (which autoscale
	# ignores), and some room.
	yr=$(awk -F'\t' -v h="$*" 'BEGIN { n = split(h, a, " "); for (i = 1; i <= n; i++) { if (a[i] > hi) hi = a[i]; if (a[i] < lo) lo = a[i] } }
		NR > 1 { for (i = 2; i <= NF; i++) if ($i != "-" && $i != "") { v = $i + 0; if (v > hi) hi = v; if (v < lo) lo = v } }
		END { if (hi <= 0 && lo >= 0) hi = 1; printf "%g:%g\n", lo * 1.1, hi * 1.1 }' "$data")
	{
		echo "set title $(gq "$title")"
		echo "set ylabel $(gq "$ylabel")"
		echo "set style data histograms"
		echo "set style histogram clustered gap 1"
		echo "set style fill solid 0.85 border -1"
		echo "set boxwidth 0.9"
		echo "set yrange [$yr]"
		echo "set xzeroaxis lt -1"
		echo "set xrange [-0.6:$nrow - 0.4]"
		echo "set grid noxtics ytics"
		# The legend between the x labels and the machine line.
		if ((nrow > 5)); then
			echo "set xtics nomirror rotate by -25 left"
			echo "set bmargin 9"
			echo "set key at screen 0.5, screen 0.06 center center horizontal"
		else
			echo "set xtics nomirror"
			echo "set bmargin 6"
			echo "set key at screen 0.5, screen 0.08 center center horizontal"
		fi
		for h in "$@"; do
			echo "set arrow from graph 0, first $h to graph 1, first $h nohead dt 2 lw 1.5 lc rgb \"#555555\""
		done
		echo "plot for [i=2:$ncol] $(gq "$data") using i:xtic(1) title columnheader(i)"
	} | gp "$png" "$machine"
}

# fgbg_bars DIR NAME KEYCOL MACHINE [UNIT]: the foreground/background bar
# figures of a priority-like summary (p*_norm, bg_norm); KEYCOL (with UNIT)
# is prefixed to the row label when it takes several values (size_us,
# direction).
fgbg_bars() {
	local name=$2 key=$3 machine=$4 s=$1/summary.tsv unit=${5:-}
	need_cols "$s" "$key" config p50_norm p90_norm p99_norm bg_norm
	awk -F'\t' -v kc="$(col "$s" "$key")" -v unit="$unit" \
		-v c="$(col "$s" config)" -v a="$(col "$s" p50_norm)" -v b="$(col "$s" p90_norm)" \
		-v e="$(col "$s" p99_norm)" -v g="$(col "$s" bg_norm)" -v fg="$tmp/fg.tsv" -v bg="$tmp/bg.tsv" '
		NR == 1 { next }
		{ k[NR] = $kc; if (!(($kc) in seen)) { seen[$kc] = 1; nk++ } row[NR] = $0 }
		END {
			print "configuration\tP50\tP90\tP99" > fg
			print "configuration\tbackground throughput / alone" > bg
			for (r = 2; r in row; r++) {
				split(row[r], f, "\t")
				l = f[c]; if (nk > 1) l = f[kc] unit " " l
				if (f[c] != "bg-alone" && f[e] != "-") print l "\t" f[a] "\t" f[b] "\t" f[e] > fg
				if (f[c] != "bg-alone" && f[c] != "standalone" && f[g] != "-") print l "\t" f[g] > bg
			}
		}' "$s"
	bars "$out/${name}_fg_norm.png" "$name: foreground latency percentiles / standalone's (lower is better)" \
		"latency / standalone (ratio)" "$machine" "$tmp/fg.tsv" 1
	bars "$out/${name}_bg_norm.png" "$name: background throughput during the foreground / background alone" \
		"throughput / alone (ratio)" "$machine" "$tmp/bg.tsv" 1
}

plot_priority() {
	local d=$1 s=$1/summary.tsv machine size specs cfg p50 p90 p99 src
	need_cols "$s" size_us config p50_us p90_us p99_us
	machine=$(machine_of "$d")
	for size in $(awk -F'\t' -v k="$(col "$s" size_us)" 'NR > 1 && !seen[$k]++ { print $k }' "$s"); do
		specs=()
		while IFS=$'\t' read -r cfg p50 p90 p99 src; do
			[[ $cfg == bg-alone ]] && continue
			if [[ -s $d/lat_$cfg-${size}us.txt ]]; then
				specs+=("$cfg|$d/lat_$cfg-${size}us.txt")
			elif [[ $src == round-mean ]]; then
				specs+=("$cfg|@$p50,$p90,$p99")
			fi
		done < <(awk -F'\t' -v k="$(col "$s" size_us)" -v z="$size" -v c="$(col "$s" config)" \
			-v a="$(col "$s" p50_us)" -v b="$(col "$s" p90_us)" -v e="$(col "$s" p99_us)" \
			-v l="$(col "$s" lat_source)" 'NR > 1 && $k == z { print $c "\t" $a "\t" $b "\t" $e "\t" (l ? $l : "-") }' "$s")
		cdf_plot "$out/priority_cdf_${size}us.png" \
			"priority (hpf): foreground task latency, ${size} us commands, background flooding at lower priority" \
			"$machine" "" "${specs[@]}"
	done
	((cdf_only)) || fgbg_bars "$d" priority size_us "$machine" us
}

plot_priority_cl() {
	local d=$1 s=$1/summary.tsv machine cfg specs=()
	need_cols "$s" config
	machine=$(machine_of "$d")
	for cfg in $(awk -F'\t' -v c="$(col "$s" config)" 'NR > 1 { print $c }' "$s"); do
		[[ -s $d/lat_$cfg.txt ]] && specs+=("$cfg|$d/lat_$cfg.txt")
	done
	cdf_plot "$out/priority_cl_cdf.png" \
		"priority_cl (hpf, OpenCL shim on PoCL): foreground task latency, background flooding at lower priority" \
		"$machine" "" "${specs[@]}"
	((cdf_only)) || fgbg_bars "$d" priority_cl size_us "$machine" us
}

plot_graph() {
	local d=$1 s=$1/summary.tsv machine cfg specs=() shape
	need_cols "$s" bg_graph config
	machine=$(machine_of "$d")
	shape=$(awk -F'\t' -v k="$(col "$s" bg_graph)" 'NR == 2 { print $k }' "$s")
	for cfg in $(awk -F'\t' -v c="$(col "$s" config)" 'NR > 1 { print $c }' "$s"); do
		[[ -s $d/lat_$cfg.txt ]] && specs+=("$cfg|$d/lat_$cfg.txt")
	done
	cdf_plot "$out/graph_cdf.png" \
		"graph (hpf): foreground task latency, background flooding CUDA graphs of $shape kernels at lower priority" \
		"$machine" "" "${specs[@]}"
	((cdf_only)) || fgbg_bars "$d" graph bg_graph "$machine"
}

plot_hostgap() {
	local d=$1 s=$1/summary.tsv machine cfg specs=() gaps
	need_cols "$s" gaps config
	machine=$(machine_of "$d")
	gaps=$(awk -F'\t' -v k="$(col "$s" gaps)" 'NR == 2 { print $k }' "$s")
	for cfg in $(awk -F'\t' -v c="$(col "$s" config)" 'NR > 1 { print $c }' "$s"); do
		[[ -s $d/lat_$cfg.txt ]] && specs+=("$cfg|$d/lat_$cfg.txt")
	done
	cdf_plot "$out/hostgap_cdf.png" \
		"hostgap (hpf): foreground with host gaps of $gaps between its kernels, background flooding at lower priority" \
		"$machine" "" "${specs[@]}"
	((cdf_only)) || fgbg_bars "$d" hostgap gaps "$machine"
}

plot_llm() {
	local d=$1 s=$1/summary.tsv machine cfg kind what specs
	need_cols "$s" config ttft_p99_us tpot_p99_us
	machine=$(machine_of "$d")
	for kind in ttft tpot; do
		specs=()
		for cfg in $(awk -F'\t' -v c="$(col "$s" config)" 'NR > 1 { print $c }' "$s"); do
			[[ -s $d/${kind}_$cfg.txt ]] && specs+=("$cfg|$d/${kind}_$cfg.txt")
		done
		what="time to first token"
		[[ $kind == tpot ]] && what="time per output token"
		cdf_logx=1 cdf_plot "$out/llm_${kind}_cdf.png" \
			"llm (hpf): LLM server's $what, offline batch work beside it at lower priority" \
			"$machine" "" "${specs[@]}"
	done
}

plot_heterogeneous() {
	local d=$1 s=$1/summary.tsv machine dir cfg fgd bgd specs
	need_cols "$s" direction fg_device bg_device config
	machine=$(machine_of "$d")
	while IFS=$'\t' read -r dir fgd bgd; do
		specs=()
		for cfg in $(awk -F'\t' -v k="$(col "$s" direction)" -v z="$dir" -v c="$(col "$s" config)" \
			'NR > 1 && $k == z { print $c }' "$s"); do
			[[ -s $d/lat_$dir-$cfg.txt ]] && specs+=("$cfg|$d/lat_$dir-$cfg.txt")
		done
		cdf_plot "$out/heterogeneous_cdf_$dir.png" \
			"heterogeneous ($dir): foreground latency on $fgd, background flooding $bgd" \
			"$machine" "" "${specs[@]}"
	done < <(awk -F'\t' -v k="$(col "$s" direction)" -v f="$(col "$s" fg_device)" \
		-v b="$(col "$s" bg_device)" 'NR > 1 && !seen[$k]++ { print $k "\t" $f "\t" $b }' "$s")
	((cdf_only)) || fgbg_bars "$d" heterogeneous direction "$machine"
}

plot_deadline() {
	local d=$1 s=$1/summary.tsv machine cfg kind specs fp='' bp='' vline
	need_cols "$s" config frame_missed_pct batch_missed_pct
	machine=$(machine_of "$d")
	# The periods (= deadlines) are only in the printed header line.
	if [[ -f $d/output.txt ]]; then
		read -r fp bp < <(sed -n 's/^deadline: frames of [0-9]* x [0-9]* us every \([0-9]*\) us.*batch jobs of [0-9]* x [0-9]* us every \([0-9]*\) us.*/\1 \2/p' \
			"$d/output.txt" | head -1) || true
	fi
	for kind in frame batch; do
		specs=()
		for cfg in $(awk -F'\t' -v c="$(col "$s" config)" 'NR > 1 { print $c }' "$s"); do
			[[ -s $d/lat_$cfg-$kind.txt ]] && specs+=("$cfg|$d/lat_$cfg-$kind.txt")
		done
		vline=''
		[[ $kind == frame && -n $fp ]] && vline=$(awk -v p="$fp" 'BEGIN { print p / 1000 }')
		[[ $kind == batch && -n $bp ]] && vline=$(awk -v p="$bp" 'BEGIN { print p / 1000 }')
		cdf_plot "$out/deadline_cdf_$kind.png" \
			"deadline: $kind latency (release to completion) per scheduling policy" \
			"$machine" "$vline" "${specs[@]}"
	done
	((cdf_only)) && return 0
	awk -F'\t' -v c="$(col "$s" config)" -v f="$(col "$s" frame_missed_pct)" \
		-v b="$(col "$s" batch_missed_pct)" 'NR == 1 { print "policy\tframes missed\tbatch jobs missed"; next }
		{ print $c "\t" $f "\t" $b }' "$s" >"$tmp/missed.tsv"
	bars "$out/deadline_missed.png" "deadline: deadlines missed per policy (lower is better)" \
		"missed (% of jobs)" "$machine" "$tmp/missed.tsv"
}

plot_bandwidth() {
	local d=$1 s=$1/summary.tsv machine
	((cdf_only)) && { note "bandwidth: no latencies (floods only), nothing to draw with --cdf-only"; return 0; }
	need_cols "$s" config share_a share_b achieved_a_pct achieved_b_pct total_norm
	machine=$(machine_of "$d")
	awk -F'\t' -v c="$(col "$s" config)" -v sa="$(col "$s" share_a)" -v sb="$(col "$s" share_b)" \
		-v aa="$(col "$s" achieved_a_pct)" -v ab="$(col "$s" achieved_b_pct)" '
		NR == 1 { print "configuration\tA target\tA achieved\tB target\tB achieved"; next }
		$aa != "-" { print $c "\t" $sa "\t" $aa "\t" $sb "\t" $ab }' "$s" >"$tmp/shares.tsv"
	bars "$out/bandwidth_shares.png" "bandwidth: share of the device, target (hint) vs achieved, A and B" \
		"share of commands completed (%)" "$machine" "$tmp/shares.tsv"
	awk -F'\t' -v c="$(col "$s" config)" -v t="$(col "$s" total_norm)" '
		NR == 1 { print "configuration\ttotal throughput / standalone"; next }
		{ print $c "\t" $t }' "$s" >"$tmp/total.tsv"
	bars "$out/bandwidth_total.png" "bandwidth: total throughput / one process alone, natively (goal >= 0.985, dashed)" \
		"throughput / standalone (ratio)" "$machine" "$tmp/total.tsv" 0.985
}

plot_overhead() {
	local d=$1 s=$1/summary.tsv machine
	((cdf_only)) && { note "overhead: no latencies, nothing to draw with --cdf-only"; return 0; }
	need_cols "$s" part param config value vs_native
	machine=$(machine_of "$d")
	awk -F'\t' -v p="$(col "$s" part)" -v q="$(col "$s" param)" -v c="$(col "$s" config)" \
		-v r="$(col "$s" vs_native)" '
		NR == 1 { print "command size\txsched / native"; next }
		$p == "throughput" && $c == "xsched" { print $q "\t" $r }' "$s" >"$tmp/thr.tsv"
	bars "$out/overhead_throughput.png" "overhead: throughput of one flooding task under xsched / natively (goal >= 0.99 for T >= 100 us)" \
		"throughput ratio" "$machine" "$tmp/thr.tsv" 0.99 1
	awk -F'\t' -v p="$(col "$s" part)" -v q="$(col "$s" param)" -v c="$(col "$s" config)" \
		-v v="$(col "$s" value)" -v lf="$tmp/launch.tsv" -v cf="$tmp/cost.tsv" '
		NR == 1 { print "benchmark\textra CPU per call (ns)" > lf; print "workload\txsched cost (% core)\tscaled to 10k cmd/s (% core)" > cf; next }
		$p == "launch_cpu" { print $q "\t" $v > lf }
		$p == "cpu" && $c == "xsched-cost" { cost[$q] = $v; if (!($q in seen)) { seen[$q] = 1; ord[++n] = $q } }
		$p == "cpu" && $c == "xsched-cost-at-10k" { k10[$q] = $v }
		END { for (i = 1; i <= n; i++) print ord[i] "\t" cost[ord[i]] "\t" (ord[i] in k10 ? k10[ord[i]] : "-") > cf }' "$s"
	bars "$out/overhead_cpu.png" "overhead: xsched's CPU (agent, launch worker, daemon) at ~10k commands/s (goal <= 3% of a core)" \
		"% of one core" "$machine" "$tmp/cost.tsv" 3
	bars "$out/overhead_launch.png" "overhead: extra application-thread CPU per intercepted call (goal <= 250 ns)" \
		"ns per call" "$machine" "$tmp/launch.tsv" 250
}

plot_scale() {
	local d=$1 s=$1/summary.tsv machine
	((cdf_only)) && { note "scale: no raw latencies (histograms only), nothing to draw with --cdf-only"; return 0; }
	need_cols "$s" procs queues decision_p50_us decision_p99_us wakeup_p50_us wakeup_p99_us
	machine=$(machine_of "$d")
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
		print "processes\tdecision P50\tdecision P99\twakeup P50\twakeup P99"; next }
		{ print $c["procs"] " procs, " $c["queues"] " queues\t" $c["decision_p50_us"] "\t" $c["decision_p99_us"] "\t" $c["wakeup_p50_us"] "\t" $c["wakeup_p99_us"] }' \
		"$s" >"$tmp/scale.tsv"
	bars "$out/scale_latency.png" "scale: one xschedd serving N processes x queues: event-to-decision and wakeup latency (goal: decision P99 <= 100 us)" \
		"latency (us)" "$machine" "$tmp/scale.tsv" 100
}

# preempt/summary.tsv: level window size_us p50_us p99_us max_us xq_p99_us
# max_inflight (run_all.sh); preempt/overhead.tsv: size_us native_ms
# xsched_ms overhead_pct.
plot_preempt() {
	local d=$1 s=$1/summary.tsv machine series plots=() n=0 f
	((cdf_only)) && { note "preempt: no latency CDFs (quantiles only), nothing to draw with --cdf-only"; return 0; }
	need_cols "$s" level window size_us p50_us p99_us
	machine=$(machine_of "$d")
	while IFS= read -r series; do
		n=$((n + 1))
		f=$tmp/pre$n.tsv
		awk -F'\t' -v z="$series" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$c["level"] " " $c["window"] == z { print $c["size_us"] "\t" $c["p50_us"] "\t" $c["p99_us"] }' "$s" |
			sort -g >"$f"
		plots+=("$(gq "$f") using 1:3 with linespoints lw 2 pt 7 lc $n title $(gq "$series: P99")"
			"$(gq "$f") using 1:2 with linespoints lw 1 dt 2 pt 6 lc $n title $(gq "$series: P50")")
	done < <(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		!seen[$c["level"] " " $c["window"]]++ { print $c["level"] " " $c["window"] }' "$s")
	if ((${#plots[@]})); then
		{
			echo "set title \"preemption latency on the sim XPU: suspend to device quiet, per level and in-flight window\""
			echo "set xlabel \"command size T (us)\""
			echo "set ylabel \"preemption latency (us)\""
			echo "set logscale xy"
			# x: the measured sizes, as tics, with some room.
			awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
				{ v = $c["size_us"] + 0; if (!lo || v < lo) lo = v; if (v > hi) hi = v; if (!(v in t)) { t[v] = 1; l = l sep v; sep = ", " } }
				END { printf "set xrange [%g:%g]\nset xtics (%s)\n", lo / 1.6, hi * 1.6, l }' "$s"
			echo "set bmargin 10"
			echo "set key at screen 0.5, screen 0.09 center center horizontal maxcols 2 width 1"
			local IFS=,
			echo "plot ${plots[*]}"
		} | gp "$out/preempt_latency.png" "$machine" 960,720
	fi
	if [[ -s $d/overhead.tsv ]]; then
		awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print "command size\tLv1 overhead (%)"; next }
			{ print $c["size_us"] " us\t" $c["overhead_pct"] }' "$d/overhead.tsv" >"$tmp/povh.tsv"
		bars "$out/preempt_overhead.png" "Lv1 runtime overhead of the XQueue (default settings) vs launching natively" \
			"time overhead (%)" "$machine" "$tmp/povh.tsv"
	fi
}

# preempt_cl/summary.tsv (bench_cl_preempt --out): level kernel_ms groups
# local depth samples done_before cut duration_ms group_us p50_us p99_us
# max_us device_samples device_p50_us device_p99_us device_max_us;
# lat_lv<L>-<K>ms.txt (host side: until the suspension returned) and
# dlat_lv<L>-<K>ms.txt (device side: until the device ran nothing more).
plot_preempt_cl() {
	local d=$1 s=$1/summary.tsv machine k g specs lv
	need_cols "$s" level kernel_ms groups local group_us
	machine=$(machine_of "$d")
	while IFS=$'\t' read -r k g; do
		specs=()
		for lv in lv1 lv2; do
			[[ -s $d/lat_$lv-${k}ms.txt ]] && specs+=("$lv|$d/lat_$lv-${k}ms.txt")
			[[ -s $d/dlat_$lv-${k}ms.txt ]] && specs+=("$lv-dev|$d/dlat_$lv-${k}ms.txt")
		done
		cdf_logx=1 cdf_vlabel="2 work-groups (Lv2 goal)" cdf_plot "$out/preempt_cl_cdf_${k}ms.png" \
			"OpenCL shim on PoCL: preemption latency (suspend to quiet: host / device side), ${k} ms kernel of $(awk -F'\t' -v c="$(col "$s" kernel_ms)" -v z="$k" -v gc="$(col "$s" groups)" -v lc="$(col "$s" local)" 'NR > 1 && $c == z { print $gc " groups x " $lc; exit }' "$s")" \
			"$machine" "$g" "${specs[@]}"
	done < <(awk -F'\t' -v c="$(col "$s" kernel_ms)" -v l="$(col "$s" level)" -v gu="$(col "$s" group_us)" \
		'NR > 1 && $l == "Lv2" { printf "%s\t%g\n", $c, 2 * $gu / 1000 }' "$s")
}

# guardian_cost/summary.tsv: bench test unit pairs off on ratio diff_pct
# best_off best_on best_diff_pct.
plot_guardian_cost() {
	local d=$1 s=$1/summary.tsv machine
	((cdf_only)) && { note "guardian_cost: no latencies, nothing to draw with --cdf-only"; return 0; }
	need_cols "$s" bench test diff_pct best_diff_pct
	machine=$(machine_of "$d")
	awk -F'\t' -v b="$(col "$s" bench)" -v t="$(col "$s" test)" -v r="$(col "$s" diff_pct)" \
		-v x="$(col "$s" best_diff_pct)" '
		NR == 1 { print "test\tmedian of the pairs (%)\tbest run against best run (%)"; next }
		{ print $b " " $t "\t" $r + 0 "\t" $x + 0 }' "$s" >"$tmp/gcost.tsv"
	bars "$out/guardian_cost.png" "OpenCL guardian (Lv2) on PoCL: throughput with it vs without, % (goal >= -2, dashed)" \
		"difference (%; latency: of 1/latency)" "$machine" "$tmp/gcost.tsv" -2
}

drawn=0
for sc in "${scenarios[@]}"; do
	d=$(scen_dir "$sc")
	if [[ -z $d ]]; then
		note "$sc: no results ($res/$sc/summary.tsv missing), skipped"
		continue
	fi
	(($(wc -l <"$d/summary.tsv") > 1)) || { note "$sc: summary.tsv has no rows, skipped"; continue; }
	"plot_$sc" "$d"
	drawn=$((drawn + 1))
done
((drawn)) || note "no scenario results under $res: nothing drawn"
exit 0
