#!/usr/bin/env bash
# The results of a conformance run as a Markdown table, one row per suite:
# its subtests, then per mode the verdicts as pass/fail/skip/crash/hang
# counts, and the subtests whose verdict differs from native.
#
#   tests/conformance/cts_table.sh RESULTS.tsv
#
# RESULTS.tsv: what opencl_cts.sh writes (suite, subtest, mode, verdict,
# seconds; a header line first). Modes appear in the order first seen.
# Exits 2 on bad usage.
set -euo pipefail
if [[ $# -ne 1 || ! -r $1 ]]; then
	echo "usage: $0 RESULTS.tsv" >&2
	exit 2
fi
awk -F'\t' '
NR == 1 { next }
{
	s = $1; t = $2; m = $3; v = $4
	if (!(s in seen_s)) { seen_s[s] = 1; suites[++ns] = s }
	if (!(m in seen_m)) { seen_m[m] = 1; modes[++nm] = m }
	if (!((s, t) in seen_t)) { seen_t[s, t] = 1; nt[s]++ }
	n[s, m, v]++
	if (m == "native") native[s, t] = v
	else if ((s, t) in native && native[s, t] != v) diff[s]++
	secs[s, m] += $5
}
END {
	printf "| suite | subtests |"
	for (i = 1; i <= nm; i++) printf " %s |", modes[i]
	printf " differ |\n|---|---|"
	for (i = 1; i <= nm; i++) printf "---|"
	printf "---|\n"
	for (j = 1; j <= ns; j++) {
		s = suites[j]
		printf "| %s | %d |", s, nt[s]
		for (i = 1; i <= nm; i++) {
			m = modes[i]
			printf " %d/%d/%d/%d/%d (%.0f s) |", n[s, m, "pass"], n[s, m, "fail"],
				n[s, m, "skip"], n[s, m, "crash"], n[s, m, "hang"], secs[s, m]
			tot[m, "pass"] += n[s, m, "pass"]; tot[m, "fail"] += n[s, m, "fail"]
			tot[m, "skip"] += n[s, m, "skip"]; tot[m, "crash"] += n[s, m, "crash"]
			tot[m, "hang"] += n[s, m, "hang"]; tsecs[m] += secs[s, m]
		}
		printf " %d |\n", diff[s]
		all += nt[s]; alldiff += diff[s]
	}
	printf "| **all** | %d |", all
	for (i = 1; i <= nm; i++) {
		m = modes[i]
		printf " %d/%d/%d/%d/%d (%.0f s) |", tot[m, "pass"], tot[m, "fail"], tot[m, "skip"],
			tot[m, "crash"], tot[m, "hang"], tsecs[m]
	}
	printf " %d |\n", alldiff
}' "$1"
