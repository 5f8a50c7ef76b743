#!/bin/bash
# Compares one run of the peer suites (peer-suites.sh's result lines)
# with the recorded stock baseline, test by test, and prints them side by
# side with the recorded CONFIG_COSCHEDULING=n results.  Not a test by
# itself: the 7x-peer-* tests call it.
#
#   peer-compare.sh RESULTS [SUITE [AS]]
#
# Only SUITE's lines when given; AS: the baseline suite RESULTS' SUITE is
# judged against (cgroup/test_cpu_cosched against cgroup/test_cpu).
# PEER_EXEMPT: "TEST=why" lines: tests that cannot hold in this run; they
# are printed with their result and the reason, never judged.
# A baseline result "pass|fail" means stock gave both over its boots
# (counts in the file): either matches.  A test missing on one side is a
# difference; a suite this run did not run at all (no line of it) is not
# compared.  Prints the table, then "# compare: N same, N differ, N exempt"
# and one "# differs: ..." line per difference; exits 1 if any differ.
set -u

RES=${1:?usage: peer-compare.sh RESULTS [SUITE [AS]]}
SUITE=${2:-}
AS=${3:-$SUITE}
BASE=${COSCHED_PEER_BASELINE:-/usr/lib/cosched-tests/peer-baseline}

for f in "$BASE/stock.txt" "$BASE/cosched-n.txt"; do
	[ -r "$f" ] || { echo "# compare: baseline $f missing"; exit 1; }
done
sed -n 's/^# \(measured\|stock\|cosched-n\|selftests\|boot\): */# baseline \1: /p' "$BASE/stock.txt"

awk -v suite="$SUITE" -v as="$AS" -v exempt="${PEER_EXEMPT:-}" '
BEGIN {
	n = split(exempt, ex, "\n")
	for (i = 1; i <= n; i++) {
		if (ex[i] == "") continue
		k = ex[i]; sub(/=.*/, "", k); why = ex[i]; sub(/^[^=]*=/, "", why)
		exw[k] = why
	}
}
FNR == 1 { file++; if (file == 1) while ((getline l < ARGV[3]) > 0) { split(l, w, " "); ran[w[1]] = 1 } }
/^#/ || NF < 3 { next }
FILENAME == ARGV[1] && FNR == 1 { while ((getline l < ARGV[3]) > 0) { split(l, w, " "); ran[w[1]] = 1 } }
file == 1 { if ((suite == "" && ($1 in ran)) || $1 == as) { key = $1 " " $2; stock[key] = $3; runs[key] = $4; order[++nk] = key; known[key] = 1 } next }
file == 2 { if (suite == "" || $1 == as) n_[$1 " " $2] = $3 " " $4; next }
file == 3 {
	if (suite != "" && $1 != suite) next
	if ($2 == "(seconds)") next
	s = $1; if (suite != "" && s == suite) s = as
	key = s " " $2; got[key] = $3
	if (!(key in known)) { order[++nk] = key; known[key] = 1 }
}
END {
	printf "%-30s %-44s %-20s %-20s %s\n", "# suite", "test", "stock", "=n", "this run"
	same = differ = exd = 0
	for (i = 1; i <= nk; i++) {
		key = order[i]; split(key, kk, " ")
		b = (key in stock) ? stock[key] " " runs[key] : "missing"
		c = (key in n_) ? n_[key] : "missing"
		g = (key in got) ? got[key] : "missing"
		ok = 0
		if (key in stock) {
			m = split(stock[key], alt, "|")
			for (j = 1; j <= m; j++) if (alt[j] == g) ok = 1
		}
		tag = ok ? "same" : "DIFFERS"
		if (!ok && (kk[2] in exw)) { tag = "exempt (" exw[kk[2]] ")"; exd++ }
		else if (ok) same++
		else { differ++; diffs = diffs sprintf("# differs: %s %s: stock %s, this run %s\n", kk[1], kk[2], b, g) }
		printf "%-30s %-44s %-20s %-20s %-8s %s\n", kk[1], kk[2], b, c, g, tag
	}
	printf "# compare: %d same, %d differ, %d exempt\n", same, differ, exd
	printf "%s", diffs
	exit differ > 0
}' "$BASE/stock.txt" "$BASE/cosched-n.txt" "$RES"
