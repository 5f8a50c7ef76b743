#!/bin/bash
# Runs peer suites (peer-suites.sh) and judges them against the recorded
# stock baseline (peer-compare.sh), with one rerun for a suite where a test
# differs.  Not a test by itself: 70-peer-suites and 71-peer-maxlevel call
# it.
#
#   peer-judge.sh OUT SUITE...
#
# Why the rerun: under multi-threaded TCG some selftests are timing
# sensitive (test_cgfreezer_ptrace failed once at cosched_max_level=1 with
# "isn't frozen" and passed in every other run, stock and patched), and
# the baseline holds only the boots make peer-baseline ran.  A suite with
# a difference runs once more; a differing test whose rerun gives a result
# stock gave counts as that result and is printed as "# flaky here: ..."
# (both results, and the stock one), so that it shows in the log.  A test
# that differs in both runs is a difference.  This is lenient on purpose
# for a regression that shows in less than half of the runs; the soak and
# the multi-boot baseline are what catch those.
#
# Prints the final comparison (peer-compare.sh's output: "# compare: ..."
# and "# differs: ..." lines) and exits as peer-compare.sh does; OUT holds
# the results judged (the rerun's line for a test judged by its rerun).
set -u

OUT=${1:?usage: peer-judge.sh OUT SUITE...}
shift
P=$(dirname "$0")

"$P/peer-suites.sh" "$OUT" "$@"
cmp=$("$P/peer-compare.sh" "$OUT") && { echo "$cmp"; exit 0; }
echo "$cmp" | sed 's/^/# first run: /'

# The suite names peer-suites.sh takes, of the suites with a difference.
# (Only SUITE/NAME lines: "peer-suites (cpus-online)" is not a suite.)
suites=$(sed -n 's/^# differs: \([a-z]*\/[^ ]*\) .*/\1/p' <<< "$cmp" |
	sed 's|^[a-z]*/||; s|\.sh$||' | sort -u)
echo "# rerun of $(echo $suites) (a difference in the first run)"
[ -n "$suites" ] || { "$P/peer-compare.sh" "$OUT"; exit; }
"$P/peer-suites.sh" "$OUT.rerun" $suites

# A differing test takes its rerun result where that is one stock gave
# (peer-compare.sh on the rerun says "same" for it).
rcmp=$("$P/peer-compare.sh" "$OUT.rerun")
keys=$(sed -n 's/^# differs: \([^ ]*\) \([^:]*\):.*/\1 \2/p' <<< "$cmp")
while read -r suite test; do
	[ -n "$suite" ] || continue
	again=$(awk -v s="$suite" -v t="$test" '$1 == s && $2 == t { print $NF }' <<< "$rcmp")
	[ "$again" = same ] || continue
	first=$(awk -v s="$suite" -v t="$test" '$1 == s && $2 == t { print $3 }' "$OUT")
	rerun=$(awk -v s="$suite" -v t="$test" '$1 == s && $2 == t { print $3 }' "$OUT.rerun")
	echo "# flaky here: $suite $test: first run ${first:-missing}, rerun $rerun (a result stock gave)"
	awk -v s="$suite" -v t="$test" -v r="$rerun" \
		'$1 == s && $2 == t { $3 = r; done = 1 } { print }
		END { if (!done) print s, t, r }' "$OUT" > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
done <<< "$keys"
"$P/peer-compare.sh" "$OUT"
