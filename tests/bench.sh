#!/bin/bash
# Benchmarks, side by side in one run: boots the stock and the patched
# kernel (same image, same guest script tests/guest/bench-gang.sh) and
# prints each rate with its ratios:
#   patched / stock           what the patches cost when nothing is
#                             coscheduled (cosched_max_level=1 booted)
#   gang / plain (patched)    what coscheduling a group changes
# Rates are per second, higher is better.  Not a test: under TCG on a
# shared 2-core host the numbers move by several percent between runs,
# so nothing is judged; read the ratios, and run it twice.
#   tests/bench.sh            (make bench)   BENCH_SECONDS=5 per rate
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
OUT=$CACHE/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"

"$TOP/scripts/deps.sh" >/dev/null || exit 1
for k in stock patched; do
	"$TOP/kernel/build.sh" $k > "$OUT/kernel-$k.out" 2>&1 || { tail -3 "$OUT/kernel-$k.out"; exit 1; }
done
"$TOP/image/build.sh" > "$OUT/image.out" 2>&1 || { tail -3 "$OUT/image.out"; exit 1; }

for k in stock patched; do
	echo "bench: booting $k"
	mkdir -p "$OUT/$k"
	# One more boot if the guest died early (a TCG quirk, see tests/run.sh).
	for try in 1 2; do
		TIMEOUT=400 "$TOP/scripts/boot-guest.sh" test $k "$OUT/$k" \
			cosched.tests=bench-gang "cosched.bench_seconds=${BENCH_SECONDS:-5}" > "$OUT/$k/boot.out" 2>&1
		grep -q '^bench ' "$OUT/$k/bench-gang.log" 2>/dev/null && break
		[ $try = 1 ] && echo "bench: the $k guest gave no results; booting it again"
	done
	if ! grep -q '^bench ' "$OUT/$k/bench-gang.log" 2>/dev/null; then
		echo "bench: no results from the $k kernel (see $OUT/$k)"; exit 1
	fi
done

rate() { awk -v k="$2" '$1 == "bench" && $2 == k { print $3 }' "$OUT/$1/bench-gang.log"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else printf "-" }'; }
printf '%-22s %14s %14s %14s %16s\n' rate/s stock patched patched/stock "gang/plain"
row() { # LABEL KEY [GANG_KEY]
	local s p g
	s=$(rate stock "$2"); p=$(rate patched "$2"); g=${3:+$(rate patched "$3")}
	printf '%-22s %14s %14s %14s %16s\n' "$1" "${s:--}" "${p:--}" "$(ratio "$p" "$s")" \
		"$( [ -n "${3:-}" ] && ratio "$g" "$p" || echo -)"
}
row "pingpong, one CPU" pingpong-1cpu
row "pingpong, SMT pair" pingpong-smt pingpong-smt-gang
row "barrier, group A" barrier-A-plain barrier-A-gang
row "barrier, group B" barrier-B-plain barrier-B-gang
echo "(gang/plain: the patched kernel with the group(s) coscheduled vs not; logs in $OUT)"
