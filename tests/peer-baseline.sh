#!/bin/bash
# make peer-baseline: measure the peer suites (the kernel's own selftests,
# tests/guest/peer-suites.sh) on the stock kernel and on the patched tree
# built with CONFIG_COSCHEDULING=n (kernel/build.sh cosched-n), and record
# the results in tests/peer-baseline/stock.txt and cosched-n.txt, which
# the 7x-peer-* guest tests of make test compare against (so that make
# test never builds those two kernels).  Commit the files it writes.
#
#   PEER_BOOTS=3   boots per kernel, alternated stock, =n, stock, ...
#   PEER_REPORT=DIR  no builds or boots: write the files again from an
#                    earlier run's raw results ($COSCHED_CACHE/peer-baseline/*)
#   PEER_MERGE=DIR   also count the boots recorded in DIR/stock.txt and
#                    DIR/cosched-n.txt (an earlier baseline, e.g. from git):
#                    a test at the edge of its bound under TCG needs more
#                    boots than one run gives to show every result it has
#
# Every boot holds core scheduling on from boot (the guest runner's
# corehold, as in 70/71/72): cs_prctl_test would otherwise flip its static
# key many times, and multi-threaded TCG dies of that now and then.  A test
# whose result differs between boots of one kernel is recorded with every
# result seen ("fail|pass 1/3,2/3"); any of them matches later.  Exits
# non-zero if a boot gave no results or the =n results differ from stock.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
export COSCHED_CACHE=$CACHE
BOOTS=${PEER_BOOTS:-3}
DEST=${PEER_BASELINE_DIR:-$TOP/tests/peer-baseline}
RUN=${PEER_REPORT:-$CACHE/peer-baseline/$(date +%Y%m%d-%H%M%S)}
FLAVOURS="stock cosched-n"
mkdir -p "$RUN" "$DEST"
echo "peer-baseline: raw results in $RUN"

# boots FLAVOUR: the result folders of the boots kept (not the .tryN).
boots() { ls -d "$RUN/$1"-* 2>/dev/null | grep -v '\.try'; }

# prev_boots FLAVOUR FILE: the boots an earlier baseline FILE records, as
# result folders $RUN/FLAVOUR-prevN (its lines "SUITE TEST R1|R2 C1/N,C2/N"
# give R1 to the first C1 boots, R2 to the next C2; "missing": no line).
prev_boots() {
	local n
	rm -rf "$RUN/$1"-prev*
	n=$(sed -n 's/^# measured: .*, \([0-9]*\) boots per kernel.*/\1/p' "$2")
	[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "peer-baseline: $2 says no boot count" >&2; return 1; }
	for ((i = 1; i <= n; i++)); do mkdir -p "$RUN/$1-prev$i"; done
	awk -v dir="$RUN/$1-prev" '/^#/ { next }
	{ m = split($3, r, "|"); split($4, c, ","); b = 0
	  for (i = 1; i <= m; i++) { split(c[i], k, "/")
	    for (j = 0; j < k[1]; j++) { b++
	      if (r[i] != "missing") print $1, $2, r[i] > (dir b "/peer-results.txt") } } }' "$2"
	sed -n 's/^# measured: \([^,]*\),.*/\1/p' "$2" > "$RUN/$1-prev1/measured"
}

# merge FLAVOUR: one line per test, every result seen (a test absent from
# a boot's results is "missing" there), most frequent first, with counts.
merge() {
	local d files=()
	for d in $(boots "$1"); do [ ! -s "$d/peer-results.txt" ] || files+=("$d/peer-results.txt"); done
	[ ${#files[@]} -gt 0 ] || return 0
	awk -v n=${#files[@]} '
	FNR == 1 { f++ }
	{ key = $1 " " $2; if (!(key in seen)) { order[++k] = key; seen[key] = 1 }
	  got[f, key] = $3 }
	END {
		for (i = 1; i <= k; i++) {
			key = order[i]; m = 0; delete c
			for (j = 1; j <= n; j++) {
				r = ((j, key) in got) ? got[j, key] : "missing"
				if (!(r in c)) v[++m] = r
				c[r]++
			}
			for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++)
				if (c[v[b]] > c[v[a]]) { t = v[a]; v[a] = v[b]; v[b] = t }
			out = v[1]; cnt = c[v[1]] "/" n
			for (a = 2; a <= m; a++) { out = out "|" v[a]; cnt = cnt "," c[v[a]] "/" n }
			print key, out, cnt
		}
	}' "${files[@]}"
}

seconds() { # FLAVOUR: median duration of each suite over the boots
	local d all su
	all=$(for d in $(boots "$1"); do cat "$d/peer-results.txt.seconds" 2>/dev/null; done)
	for su in $(awk '{ print $1 }' <<< "$all" | sort -u); do
		awk -v s="$su" '$1 == s { print $3 }' <<< "$all" | sort -n |
		awk -v s="$su" '{ a[NR] = $1 } END { printf "%s %s s (median of %d)\n", s, a[int((NR + 1) / 2)], NR }'
	done
}

if [ -z "${PEER_REPORT:-}" ]; then
for fl in $FLAVOURS; do
	"$TOP/kernel/build.sh" "$fl" || { echo "peer-baseline: kernel $fl failed" >&2; exit 1; }
done
"$TOP/image/build.sh" || { echo "peer-baseline: image build failed" >&2; exit 1; }

t0=$(date +%s)
bad=0
for ((i = 1; i <= BOOTS; i++)); do
	for fl in $FLAVOURS; do
		dir=$RUN/$fl-$i
		for try in 1 2; do
			echo "peer-baseline: $fl boot $i$([ "$try" = 1 ] || echo " (again)")"
			TIMEOUT=1200 "$TOP/scripts/boot-guest.sh" test "$fl" "$dir" \
				cosched.tests=peer-measure
			# A guest that died before the runner started (the TCG
			# text-patching deaths run.sh retries too) or in the
			# middle of the suites is booted once more; say so.
			grep -qs '^peer-suites (cpus-online)' "$dir/peer-results.txt" && break
			echo "peer-baseline: $fl boot $i gave no complete results ($(cat "$dir/error" 2>/dev/null || echo 'no error file')); kept in $dir.try$try"
			echo "$fl boot $i try $try: $(cat "$dir/error" 2>/dev/null || echo incomplete)" >> "$RUN/died"
			mv "$dir" "$dir.try$try"
		done
	done
done
secs=$(($(date +%s) - t0))
echo "$secs" > "$RUN/seconds"
date -u +'%Y-%m-%d %H:%M UTC' > "$RUN/measured"
fi
secs=$(cat "$RUN/seconds")
if [ -n "${PEER_MERGE:-}" ]; then
	for fl in $FLAVOURS; do
		prev_boots "$fl" "$PEER_MERGE/$fl.txt" || exit 1
	done
fi
BOOTS=$(boots stock | wc -l)
bad=0
for fl in $FLAVOURS; do
	for d in $(boots "$fl"); do
		[ -e "$d/peer-results.txt" ] || bad=1
	done
done

for fl in $FLAVOURS; do
	kinfo=$(cat "$(boots "$fl" | head -1)/peer-kernel.txt" 2>/dev/null)
	{
		echo "# Peer-suite baseline (issue 12): the kernel's selftests on the $fl kernel,"
		echo "# recorded by make peer-baseline (tests/peer-baseline.sh); the 7x-peer-*"
		echo "# guest tests compare against stock.txt.  Lines: SUITE TEST RESULT COUNTS;"
		echo "# a test whose result varied between boots lists every result seen."
		echo "# measured: $(cat "$RUN/measured"), $BOOTS boots per kernel (stock and =n alternated), $secs s of boots in all"
		[ -e "$RUN/$fl-prev1/measured" ] && echo "# of them $(ls -d "$RUN/$fl"-prev* | wc -l) from the baseline measured $(cat "$RUN/$fl-prev1/measured") (PEER_MERGE)"
		echo "# $fl: $(sed -n 's/^release //p' <<< "$kinfo") $(sed -n 's/^version //p' <<< "$kinfo")"
		echo "# coscheduling option: $(sed -n 's/^coscheduling //p' <<< "$kinfo")"
		echo "# boot: $(sed -n 's/^cmdline //p' <<< "$kinfo" | sed 's/cosched.mode=[^ ]* //; s/cosched.tests=[^ ]* *//')"
		echo "# selftests: $(cat "$CACHE/out/selftests/key")"
		echo "# host: $(nproc) CPUs, QEMU TCG, 8 vCPUs (SMT pairs)"
		[ -s "$RUN/died" ] && sed 's/^/# boot died or gave no results: /' "$RUN/died" | grep -- "$fl"
		seconds "$fl" | sed 's/^/# duration: /'
		echo "# SUITE TEST RESULT COUNTS"
		merge "$fl"
	} > "$DEST/$fl.txt.tmp"
	mv "$DEST/$fl.txt.tmp" "$DEST/$fl.txt"
	echo "peer-baseline: wrote $DEST/$fl.txt"
done

# =n against stock, test by test (the same check the guest tests make).
# (a file, not a pipe: peer-compare.sh reads its input twice)
nres=$RUN/cosched-n.results
grep -v '^#' "$DEST/cosched-n.txt" | awk '{ split($3, r, "|"); print $1, $2, r[1] }' > "$nres"
cmp_out=$(COSCHED_PEER_BASELINE=$DEST "$TOP/tests/guest/peer-compare.sh" "$nres")
rc=$?
echo "$cmp_out"
# Both alternatives of a varying =n result must be among stock's.
if awk 'FNR == 1 { f++ } /^#/ { next }
	f == 1 { s[$1 " " $2] = $3; next }
	{ n = split($3, r, "|"); m = split(s[$1 " " $2], t, "|")
	  for (i = 1; i <= n; i++) { ok = 0; for (j = 1; j <= m; j++) if (r[i] == t[j]) ok = 1
	    if (!ok) { print "# =n gave " r[i] " for " $1 " " $2 ", stock never did"; bad = 1 } } }
	END { exit bad }' "$DEST/stock.txt" "$DEST/cosched-n.txt"; then
	[ $rc -eq 0 ] && echo "peer-baseline: CONFIG_COSCHEDULING=n identical to stock, test by test"
else
	rc=1
fi
[ $bad -eq 0 ] || { echo "peer-baseline: a kernel gave no results in some boot"; rc=1; }
echo "peer-baseline: $secs s of boots; commit $DEST/stock.txt and $DEST/cosched-n.txt"
exit $rc
