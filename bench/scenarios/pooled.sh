#!/usr/bin/env bash
#
# pooled.sh: the foreground latencies of several runs of priority.sh or
# priority_cl.sh taken together.
# A P99 over 1000 tasks rests on its ten slowest, and on these VMs a
# millisecond-long stall of a vCPU (timers of an idle vCPU delivered late,
# kernel work on the CPU the simulated device spins on) lands on any
# configuration, the standalone one included, now and then; pooling runs
# that alternated their configurations the same way gives percentiles over
# N x 1000 tasks. Each run's own table stays the primary figure: pooled
# figures are reported beside them, never instead.
#
# For every lat_<config>-<tag>.txt found in all the given result
# directories (as the scenario wrote them: $XS_RESULTS/<scenario>; the tag
# is priority.sh's command size, e.g. 500us, "-" for priority_cl.sh), prints
# the pooled task count, P50/P90/P99 (us) and each over the pooled
# standalone's of the same tag.
#
# Usage: pooled.sh [--baseline CONFIG] DIR DIR...
#   CONFIG: the configuration to normalize by (default standalone)
set -euo pipefail
# shellcheck disable=SC2034 # lib.sh's scn_die prints it
XS_NAME=pooled.sh
. "$(dirname "$0")/lib.sh"

base=standalone
if [[ ${1:-} == --baseline ]]; then
	base=${2:?--baseline needs a configuration}
	shift 2
fi
(($# >= 1)) || { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }
for d in "$@"; do
	[[ -d $d ]] || scn_die "$d: no such results directory"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Configurations and tags present in the first directory, kept if every
# other directory has them too.
for f in "$1"/lat_*.txt; do
	[[ -e $f ]] || scn_die "$1: no lat_*.txt (not a latency scenario's results?)"
	name=${f##*/}
	for d in "$@"; do
		[[ -s $d/$name ]] || continue 2
		cat "$d/$name"
	done >"$tmp/$name"
done

printf '%-24s %-8s %6s %9s %9s %9s %6s %6s %6s\n' config tag tasks p50_us p90_us p99_us \
	p50_n p90_n p99_n
for f in "$tmp"/lat_*.txt; do
	[[ -e $f ]] || scn_die "no configuration is in every directory"
	name=${f##*/}
	name=${name#lat_}
	name=${name%.txt}
	if [[ $name =~ -([0-9]+us)$ ]]; then
		tag=${BASH_REMATCH[1]}
		cfg=${name%-*}
		b=$tmp/lat_$base-$tag.txt
	else
		tag=- cfg=$name
		b=$tmp/lat_$base.txt
	fi
	read -r n p50 p90 p99 _ _ < <(scn_lat_stats "$f")
	if [[ -s $b ]]; then
		read -r _ b50 b90 b99 _ _ < <(scn_lat_stats "$b")
	else
		b50=- b90=- b99=-
	fi
	printf '%-24s %-8s %6s %9.1f %9.1f %9.1f %6s %6s %6s\n' "$cfg" "$tag" "$n" "$p50" "$p90" \
		"$p99" "$(scn_div "$p50" "$b50")" "$(scn_div "$p90" "$b90")" "$(scn_div "$p99" "$b99")"
done
