#!/bin/sh
# Runs every host test binary; each prints one PASS/FAIL line per test.
# Exit status is non-zero if any test failed or a binary crashed.
cd "$(dirname "$0")/.." || exit 1
status=0
for t in tests/test-*; do
        case "$t" in *.c|*.h|*.o|*.sh) continue ;; esac
        [ -x "$t" ] || continue
        "./$t" || status=1
done
for t in tests/test-*.sh; do
        [ -e "$t" ] || continue
        sh "$t" || status=1
done
if [ -x tests/fuzz-config ]; then
        ./tests/fuzz-config-run.sh || status=1
fi
exit $status
